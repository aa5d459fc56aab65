/*
 * extract.c: `pitrace extract SESSION.db --kernel N -o repro.db` cuts a
 * session down to what its N-th kernel launch needs (docs/replay.md): the
 * calls that created every object the launch uses, closed over what those
 * calls use in turn (context, queue, devices and their discovery, the
 * program with its build, compile, link and spec constants, the kernel
 * with its arguments as set at the launch, the buffers and images), their
 * contents at that moment as writes, the launch without its wait list,
 * and the reads of what it left in its buffers where the session read
 * them. The result is a new session database that replays on its own.
 *
 * With --inputs (or --from M) the repro also makes the earlier launches
 * that computed what the launch reads, and the copies that moved it (its
 * window, ex_slice): a launch of a pipeline whose inputs the application
 * never read back. --inputs starts the window at the launch a refusal
 * names, and tries again, until nothing is missing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex.h"
#include "pitrace_cli.h"
#include "pitrace_replay.h"

bool ex_fail(ex *x, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(x->err, sizeof x->err, fmt, ap);
  va_end(ap);
  return false;
}

static const pt_call *call_at(const ex *x, size_t i) { return &x->s->calls.v[i]; }

size_t ex_launch_index(const ex *x, int n)
{
  int seen = 0;
  size_t i = 0;
  while (i < x->s->calls.n && !(ex_is_launch(call_at(x, i)->api) && ++seen == n))
    i++;
  return i;
}

int ex_launch_number(const ex *x, size_t i)
{
  int n = 0;
  for (size_t k = 0; k <= i && k < x->s->calls.n; k++)
    n += ex_is_launch(call_at(x, k)->api);
  return n;
}

static bool find_launch(ex *x, int n)
{
  size_t i = ex_launch_index(x, n);
  if (i == x->s->calls.n) {
    int seen = ex_launch_number(x, i);
    return ex_fail(x, "%s has %d kernel launch%s; --kernel %d is not one of them", x->s->db.path,
                   seen, seen == 1 ? "" : "es", n);
  }
  const pt_call *c = call_at(x, i);
  if (!rp_call_ok(c))
    return ex_fail(x, "kernel launch %d (seq %lld) %s in the recording: nothing to extract", n,
                   (long long)c->seq, c->returned ? "failed" : "never returned");
  x->launch = i;
  x->queue = (uint64_t)rp_arg_int(c, 0, 0);
  x->kernel = (uint64_t)rp_arg_int(c, 1, 0);
  return true;
}

/* ---- Ids the calls name ------------------------------------------------------------ */

typedef bool (*id_fn)(ex *x, size_t i, uint8_t kind, uint64_t id);

/* The window's calls are made without their wait lists: what they
 * waited for is in the buffers' contents already, or done (each is
 * followed by a finish). */
static bool window_call(const ex *x, size_t i) { return i == x->launch || x->win[i]; }

static bool skipped(const ex *x, size_t i, const pi_param_desc *d)
{
  return window_call(x, i) && strncmp(d->name, "event_wait_list", 15) == 0;
}

/* fn for each object id one recorded parameter names. */
static bool ids_of(ex *x, size_t i, const pi_param_desc *d, const pt_json *j, id_fn fn)
{
  pt_ref r = pt_ref_of(j);
  switch (d->kind) {
  case PI_PK_HANDLE:
    return fn(x, i, d->obj, (uint64_t)pt_json_int(j, 0));
  case PI_PK_HANDLES:
    for (uint32_t k = 0; j && j->type == PJ_ARRAY && k < j->n; k++)
      if (!fn(x, i, d->obj, (uint64_t)pt_json_int(j->u.items[k], 0)))
        return false;
    return true;
  case PI_PK_IMAGE_DESC:
    return fn(x, i, PI_OBJ_MEM, (uint64_t)pt_json_int(pt_json_at(j, 9), 0));
  case PI_PK_SCALAR: case PI_PK_USMPTR: case PI_PK_USMREF:
    if (r.kind == PT_REF_OBJECT && (r.obj == PI_OBJ_USM || r.obj == PI_OBJ_MAPPED))
      return fn(x, i, r.obj, (uint64_t)r.id);
    return true;
  default:
    return true;
  }
}

/* fn for each id the in- (or out-) parameters of call i name. */
static bool each_id(ex *x, size_t i, bool out, id_fn fn)
{
  const pt_call *c = call_at(x, i);
  const pi_api_desc *api = rp_api(c);
  for (unsigned p = 0; api && p < api->nparams && p < c->args->n; p++) {
    const pi_param_desc *d = &api->params[p];
    if ((d->dir != PI_DIR_IN) == out && !skipped(x, i, d) &&
        !ids_of(x, i, d, c->args->u.items[p], fn))
      return false;
  }
  return true;
}

static bool created(ex *x, size_t i, uint8_t kind, uint64_t id)
{
  (void)kind;
  if (id && id < x->ncreator && !x->creator[id])
    x->creator[id] = i + 1;
  return true;
}

/* Ids are small and dense: the largest one in the handles table, or what
 * the calls name, bounds them. */
static bool index_creators(ex *x)
{
  int64_t max = 1 << 16, ids = pt_max_handle_id(&x->s->db, x->s->id);
  if (ids * 2 + 64 > max)
    max = ids * 2 + 64;
  x->ncreator = (size_t)max;
  x->creator = calloc(x->ncreator, sizeof *x->creator);
  x->need = calloc(x->s->calls.n + 1, sizeof *x->need);
  x->work = malloc((x->s->calls.n + 1) * sizeof *x->work);
  x->win = calloc(x->s->calls.n + 1, 1);
  if (!x->creator || !x->need || !x->work || !x->win)
    return ex_fail(x, "out of memory indexing %s", x->s->db.path);
  for (size_t i = 0; i < x->s->calls.n; i++) /* after the launch too: copies of its results */
    if (rp_call_ok(call_at(x, i)))
      each_id(x, i, true, created);
  return true;
}

/* ---- What the launch needs --------------------------------------------------------- */

static void need(ex *x, size_t i)
{
  if (!x->need[i]) {
    x->need[i] = true;
    x->work[x->nwork++] = i;
  }
}

static bool made_from_native(uint32_t api)
{
  const pi_api_desc *d = pi_api_get(api);
  return d && strstr(d->name, "CreateWithNativeHandle") != NULL;
}

/* The call that created id (and the count query before a discovery);
 * user is the index of the call naming it. */
static bool need_id(ex *x, size_t user, uint8_t kind, uint64_t id)
{
  const pt_call *u = call_at(x, user);
  const char *k = pi_object_kind_name(kind);
  if (kind == PI_OBJ_USM || kind == PI_OBJ_MAPPED)
    return ex_fail(x, "seq %lld %s uses %s memory (%s#%llu), which extract does not follow: "
                   "cannot extract", (long long)u->seq, rp_api(u)->name, k, k,
                   (unsigned long long)id);
  size_t c = ex_maker(x, id);
  if (!id)
    return true;
  if (!c || c - 1 >= user)
    return ex_fail(x, "%s#%llu, used by seq %lld %s, was not created by a recorded call before "
                   "it (a filtered recording?): cannot extract", k,
                   (unsigned long long)id, (long long)u->seq, rp_api(u)->name);
  const pt_call *cr = call_at(x, c - 1);
  if (made_from_native(cr->api))
    return ex_fail(x, "%s#%llu comes from seq %lld %s, which extract cannot reproduce (native "
                   "handles are not followed)", k, (unsigned long long)id,
                   (long long)cr->seq, rp_api(cr)->name);
  need(x, c - 1);
  bool discovery = rp_discovery_api(cr->api);
  if (discovery && c >= 2 && call_at(x, c - 2)->api == cr->api &&
      call_at(x, c - 2)->plugin == cr->plugin)
    need(x, c - 2);
  return true;
}

/* Calls before call `before` on object id with one of the given
 * functions (back to the object's creation); with `last_per_index`, only
 * the last one per argument index. */
static bool need_calls_on(ex *x, uint64_t id, const uint32_t *apis, size_t napis,
                          bool last_per_index, size_t before)
{
  size_t m = ex_maker(x, id), from = m ? m - 1 : 0;
  int64_t *seen = NULL;
  size_t nseen = 0, cap = 0;
  bool ok = true;
  for (size_t i = before; ok && i-- > from;) {
    const pt_call *c = call_at(x, i);
    bool match = false;
    for (size_t k = 0; k < napis; k++)
      match |= c->api == apis[k];
    if (!match || !rp_call_ok(c) || (uint64_t)rp_arg_int(c, 0, 0) != id)
      continue;
    if (last_per_index) { /* backwards: the first one seen of an index is its last */
      int64_t index = rp_arg_int(c, 1, -1);
      bool later = false;
      for (size_t k = 0; k < nseen && !later; k++)
        later = seen[k] == index;
      if (later)
        continue;
      ok = rp_push(&seen, &nseen, &cap, sizeof index, &index);
    }
    need(x, i);
  }
  free(seen);
  return ok || ex_fail(x, "out of memory");
}

/* What a launch of the window needs: its kernel's arguments as set at
 * that moment, and its execution settings. */
static bool need_launch(ex *x, size_t i)
{
  uint32_t args[PI_API_COUNT];
  size_t nargs = 0;
  for (uint32_t a = 0; a < PI_API_COUNT; a++)
    if (pi_api_flags(a) & PI_API_F_SETS_ARG)
      args[nargs++] = a;
  static const uint32_t exec[] = {PI_API_piKernelSetExecInfo};
  uint64_t kernel = (uint64_t)rp_arg_int(call_at(x, i), 1, 0);
  need(x, i);
  return need_calls_on(x, kernel, args, nargs, true, i) &&
         need_calls_on(x, kernel, exec, 1, false, i);
}

/* What the object a needed call created needs besides its creation: a
 * program's build, compile and spec constants. */
static bool need_setup(ex *x, size_t i)
{
  static const uint32_t program[] = {PI_API_piProgramBuild, PI_API_piProgramCompile,
                                     PI_API_piextProgramSetSpecializationConstant};
  const pt_call *c = call_at(x, i);
  const pi_api_desc *api = rp_api(c);
  for (unsigned p = 0; p < api->nparams && p < c->args->n; p++) {
    const pi_param_desc *d = &api->params[p];
    uint64_t id = (uint64_t)pt_json_int(c->args->u.items[p], 0);
    if (d->dir == PI_DIR_IN || d->kind != PI_PK_HANDLE || !id)
      continue;
    if (d->obj == PI_OBJ_PROGRAM && !need_calls_on(x, id, program, 3, false, x->launch))
      return false;
  }
  return true;
}

/* The runtime's queries of the needed devices and platforms before the
 * application's work: replay picks its device by the recorded name. */
static void need_discovery_info(ex *x)
{
  for (size_t i = 0; i < x->launch; i++) {
    const pt_call *c = call_at(x, i);
    if (c->api == PI_API_piContextCreate)
      return;
    uint64_t id = (uint64_t)rp_arg_int(c, 0, 0);
    size_t cr = ex_maker(x, id);
    if ((c->api == PI_API_piDeviceGetInfo || c->api == PI_API_piPlatformGetInfo) && cr &&
        x->need[cr - 1])
      need(x, i);
  }
}

static bool closure(ex *x)
{
  for (size_t i = x->from; i < x->s->calls.n; i++)
    if (window_call(x, i)) {
      if (!ex_is_launch(call_at(x, i)->api))
        need(x, i);
      else if (!need_launch(x, i))
        return false;
    }
  while (x->nwork) {
    size_t i = x->work[--x->nwork];
    if (!each_id(x, i, false, need_id) || !need_setup(x, i))
      return false;
  }
  need_discovery_info(x);
  return true;
}

/* ---- The repro's calls -------------------------------------------------------------- */

char *ex_window_args(const ex *x, size_t i)
{
  const pt_call *c = call_at(x, i);
  const pi_api_desc *api = rp_api(c);
  pi_sbuf b;
  pi_sbuf_init(&b, NULL, 0);
  pi_sbuf_puts(&b, "[");
  for (unsigned p = 0; p < api->nparams; p++) {
    const char *name = api->params[p].name;
    pi_sbuf_puts(&b, p ? "," : "");
    if (strncmp(name, "num_events_in_wait", 18) == 0)
      pi_sbuf_puts(&b, "0");
    else if (strncmp(name, "event_wait_list", 15) == 0)
      pi_sbuf_puts(&b, "null");
    else
      ex_json(&b, pt_json_at(c->args, p));
  }
  pi_sbuf_puts(&b, "]");
  return b.heap ? b.p : NULL;
}

static void ex_free(ex *x)
{
  for (size_t i = 0; i < x->nout; i++) {
    free(x->out[i].args);
    free(x->out[i].data);
  }
  free(x->out);
  free(x->creator);
  free(x->need);
  free(x->work);
  free(x->win);
  ex_state_free(x);
  ex_access_free(x);
}

/* Back to before the window was chosen (--inputs widens it). */
static void ex_restart(ex *x)
{
  for (size_t i = 0; i < x->nout; i++) {
    free(x->out[i].args);
    free(x->out[i].data);
  }
  x->nout = 0;
  memset(x->need, 0, (x->s->calls.n + 1) * sizeof *x->need);
  x->nwork = 0;
  ex_state_free(x);
  x->err[0] = 0;
  x->widen = 0;
}

/* ---- The verb -------------------------------------------------------------------------- */

static const char usage[] =
    "usage: pitrace extract SESSION.db --kernel N -o REPRO.db [--inputs | --from M]\n"
    "                       [--session S]\n\n"
    "Writes a new session database holding only what the N-th kernel launch (from 1)\n"
    "needs, with its buffers' contents at that moment; `pitrace replay REPRO.db`\n"
    "replays it on its own. REPRO.db is replaced if it exists.\n\n"
    "  --inputs   also the earlier launches that computed what launch N reads (and\n"
    "             the copies that moved it), where the application never read it\n"
    "             back: a pipeline's launch with the stages before it\n"
    "  --from M   the same, from launch M on only (refused if that is not enough)\n";

typedef struct ex_opts {
  const char *path, *out;
  int kernel, from;
  bool inputs;
  int64_t session;
} ex_opts;

static int parse_args(int argc, char **argv, ex_opts *o)
{
  int64_t n = 0, from = -1; /* -1: not given */
  const pt_opt opts[] = {{"--kernel", PT_OPT_INT, &n}, {"-o", PT_OPT_STR, &o->out},
                         {"--output", PT_OPT_STR, &o->out}, {"--session", PT_OPT_INT, &o->session},
                         {"--from", PT_OPT_INT, &from}, {"--inputs", PT_OPT_FLAG, &o->inputs},
                         {NULL, PT_OPT_FLAG, NULL}};
  pt_args a;
  int rc = pt_parse(argc, argv, usage, opts, 0, 1, &a);
  if (rc)
    return rc == 1 ? 0 : 2;
  o->path = a.npos ? a.pos[0] : NULL;
  if (n > INT_MAX || from > INT_MAX) { /* said as the clamped number before */
    pt_verb_error("extract", "%s %lld: launches are counted up to %d", n > INT_MAX ? "--kernel"
                  : "--from", (long long)(n > INT_MAX ? n : from), INT_MAX);
    return 2;
  }
  o->kernel = (int)n;
  o->from = from < 0 ? 0 : from > INT_MAX ? INT_MAX : (int)from;
  if (!o->path || !o->out || o->kernel < 1) {
    pt_verb_error("extract", "give SESSION.db, --kernel N (from 1) and -o REPRO.db "
                             "(pitrace extract --help)");
    return 2;
  }
  if (pt_output_path_empty("extract", o->out, "the session file to write the repro to "
                           "(-o REPRO.db)"))
    return 2;
  if (o->inputs && from >= 0) {
    pt_verb_error("extract", "give --inputs or --from M, not both (--inputs finds M)");
    return 2;
  }
  if (from >= 0 && (from < 1 || from > o->kernel)) {
    pt_verb_error("extract", "--from %lld is not a launch from 1 to --kernel %d: the window "
                             "runs from launch M to launch N", (long long)from, o->kernel);
    return 2;
  }
  return -1;
}

/* The repro's calls for the window from x->from; with --inputs, the window
 * starts at the launch a refusal names, until none is refused; each try
 * follows the session twice (which calls the window holds, then whether
 * their buffers' contents can be known), making no call of the repro.
 * After WIDENINGS tries the window starts at the first launch (the slice
 * still leaves out the launches it does not need). */
#define WIDENINGS 4

static bool cut(ex *x, bool inputs)
{
  for (unsigned tries = 0;; tries++) {
    bool ok = ex_slice(x);
    if (ok && inputs) { /* a window that may be refused: checked before its repro is made */
      x->dry = true;
      ok = ex_assemble(x);
      x->dry = false;
      ex_state_free(x);
    }
    if (ok && closure(x) && ex_assemble(x) && ex_emit_reads(x))
      return true;
    if (!inputs || !x->widen)
      return false;
    x->from = tries < WIDENINGS ? x->widen - 1 : 0;
    ex_restart(x);
  }
}

/* A window given by --from that was refused for an input an earlier
 * launch computed names that launch; the launch it starts from may itself
 * need one before it. The hint names where --inputs would start instead,
 * so that the second try works (the search runs after the refusal only). */
static void hint_the_whole_window(ex *x)
{
  char first[sizeof x->err], was[32];
  if (!x->widen)
    return;
  snprintf(first, sizeof first, "%s", x->err);
  snprintf(was, sizeof was, "or --from %d)", ex_launch_number(x, x->widen - 1));
  char *at = strstr(first, was);
  size_t widen = x->widen;
  ex_restart(x);
  x->from = widen - 1;
  bool found = cut(x, true);
  int from = ex_launch_number(x, x->from) + !ex_is_launch(call_at(x, x->from)->api);
  if (found && at)
    snprintf(x->err, sizeof x->err, "%.*sor --from %d)%s", (int)(at - first), first, from,
             at + strlen(was));
  else
    snprintf(x->err, sizeof x->err, "%s", first);
}

int pt_extract(int argc, char **argv)
{
  ex_opts o = {.session = -1};
  int r = parse_args(argc, argv, &o);
  if (r >= 0)
    return r;
  rp_session s;
  ex x = {.s = &s};
  if (!rp_session_open(&s, o.path, o.session, x.err, sizeof x.err)) {
    fprintf(stderr, "pitrace extract: %s\n", x.err);
    return 2;
  }
  bool ok = find_launch(&x, o.kernel) && index_creators(&x);
  if (ok) {
    x.from = o.from ? ex_launch_index(&x, o.from) : x.launch;
    ok = cut(&x, o.inputs);
    if (!ok && !o.inputs)
      hint_the_whole_window(&x);
    ok = ok && ex_write(&x, o.out, o.kernel);
  }
  if (ok) {
    size_t before = 0, first = x.launch;
    for (size_t i = x.from; i < x.launch; i++)
      if (x.win[i] && ex_is_launch(call_at(&x, i)->api) && !before++)
        first = i;
    printf("pitrace extract: kernel launch %d (seq %lld) of %s", o.kernel,
           (long long)call_at(&x, x.launch)->seq, o.path);
    if (before)
      printf(" with %zu launch%s before it (from launch %d)", before, before == 1 ? "" : "es",
             ex_launch_number(&x, first));
    /* Kept: recorded calls; made: the writes of the buffers' contents,
     * the reads after the launch and a finish after each launch of the
     * window (a long window can make more than the session had). */
    size_t kept = 0;
    for (size_t i = 0; i < x.nout; i++)
      kept += x.out[i].orig != NULL;
    printf(": %zu of %zu calls", kept, s.calls.n);
    if (x.nout > kept)
      printf(" and %zu made (contents, reads, finishes)", x.nout - kept);
    printf(" into %s\n", o.out);
  } else {
    fprintf(stderr, "pitrace extract: %s\n", x.err);
  }
  ex_free(&x);
  rp_session_close(&s);
  return ok ? 0 : 2;
}
