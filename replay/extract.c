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

static bool is_launch(uint32_t api) { return pi_api_flags(api) & PI_API_F_LAUNCH; }

static bool find_launch(ex *x, int n)
{
  int seen = 0;
  for (size_t i = 0; i < x->s->calls.n; i++) {
    const pt_call *c = call_at(x, i);
    if (!is_launch(c->api) || ++seen != n)
      continue;
    if (!c->returned || c->result != PI_SUCCESS)
      return ex_fail(x, "kernel launch %d (seq %lld) %s in the recording: nothing to extract", n,
                     (long long)c->seq, c->returned ? "failed" : "never returned");
    x->launch = i;
    x->queue = (uint64_t)rp_arg_int(c, 0, 0);
    x->kernel = (uint64_t)rp_arg_int(c, 1, 0);
    return true;
  }
  return ex_fail(x, "%s has %d kernel launch%s; --kernel %d is not one of them", x->s->db.path,
                 seen, seen == 1 ? "" : "es", n);
}

/* ---- Ids the calls name ------------------------------------------------------------ */

typedef bool (*id_fn)(ex *x, size_t i, uint8_t kind, uint64_t id);

/* The launch's wait list is left out: what it waited for is in the
 * buffers' contents already. */
static bool skipped(const ex *x, size_t i, const pi_param_desc *d)
{
  return i == x->launch && strncmp(d->name, "event_wait_list", 15) == 0;
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
  if (!x->creator || !x->need || !x->work)
    return ex_fail(x, "out of memory indexing %s", x->s->db.path);
  for (size_t i = 0; i < x->launch; i++)
    if (call_at(x, i)->returned && call_at(x, i)->result == PI_SUCCESS)
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
  size_t c = id && id < x->ncreator ? x->creator[id] : 0;
  if (!id)
    return true;
  if (!c)
    return ex_fail(x, "%s#%llu, used by seq %lld %s, was not created by a recorded call before "
                   "the launch (a filtered recording?): cannot extract", k,
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

/* Calls before the launch on object id with one of the given functions;
 * with `last_per_index`, only the last one per argument index. */
static void need_calls_on(ex *x, uint64_t id, const uint32_t *apis, size_t napis,
                          bool last_per_index)
{
  for (size_t i = 0; i < x->launch; i++) {
    const pt_call *c = call_at(x, i);
    bool match = false;
    for (size_t k = 0; k < napis; k++)
      match |= c->api == apis[k];
    if (!match || !c->returned || c->result != PI_SUCCESS || (uint64_t)rp_arg_int(c, 0, 0) != id)
      continue;
    bool later = false;
    for (size_t j = i + 1; last_per_index && j < x->launch && !later; j++) {
      const pt_call *d = call_at(x, j);
      for (size_t k = 0; k < napis; k++)
        later |= d->api == apis[k] && d->result == PI_SUCCESS &&
                 rp_arg_int(d, 0, 0) == rp_arg_int(c, 0, 0) &&
                 rp_arg_int(d, 1, -1) == rp_arg_int(c, 1, -2);
    }
    if (!later)
      need(x, i);
  }
}

/* What the object a needed call created needs besides its creation: a
 * program's build, compile and spec constants; the launched kernel's
 * arguments and execution settings. */
static void need_setup(ex *x, size_t i)
{
  static const uint32_t program[] = {PI_API_piProgramBuild, PI_API_piProgramCompile,
                                     PI_API_piextProgramSetSpecializationConstant};
  uint32_t args[PI_API_COUNT];
  size_t nargs = 0;
  for (uint32_t a = 0; a < PI_API_COUNT; a++)
    if (pi_api_flags(a) & PI_API_F_SETS_ARG)
      args[nargs++] = a;
  static const uint32_t exec[] = {PI_API_piKernelSetExecInfo};
  const pt_call *c = call_at(x, i);
  const pi_api_desc *api = rp_api(c);
  for (unsigned p = 0; p < api->nparams && p < c->args->n; p++) {
    const pi_param_desc *d = &api->params[p];
    uint64_t id = (uint64_t)pt_json_int(c->args->u.items[p], 0);
    if (d->dir == PI_DIR_IN || d->kind != PI_PK_HANDLE || !id)
      continue;
    if (d->obj == PI_OBJ_PROGRAM)
      need_calls_on(x, id, program, 3, false);
    if (d->obj == PI_OBJ_KERNEL && id == x->kernel) {
      need_calls_on(x, id, args, nargs, true);
      need_calls_on(x, id, exec, 1, false);
    }
  }
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
    size_t cr = id < x->ncreator ? x->creator[id] : 0;
    if ((c->api == PI_API_piDeviceGetInfo || c->api == PI_API_piPlatformGetInfo) && cr &&
        x->need[cr - 1])
      need(x, i);
  }
}

static bool closure(ex *x)
{
  need(x, x->launch);
  while (x->nwork) {
    size_t i = x->work[--x->nwork];
    if (!each_id(x, i, false, need_id))
      return false;
    need_setup(x, i);
  }
  need_discovery_info(x);
  return true;
}

/* ---- The repro's calls -------------------------------------------------------------- */

/* The launch as recorded, without its wait list. */
static char *launch_args(const ex *x)
{
  const pt_call *c = call_at(x, x->launch);
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

static bool assemble(ex *x)
{
  for (size_t i = 0; i < x->launch; i++) {
    ex_call c = {.orig = call_at(x, i), .api = call_at(x, i)->api};
    if (x->need[i] && !rp_push(&x->out, &x->nout, &x->cap_out, sizeof c, &c))
      return ex_fail(x, "out of memory");
  }
  if (!ex_emit_writes(x))
    return false;
  const pt_call *l = call_at(x, x->launch);
  ex_call c = {.orig = l, .api = l->api, .args = launch_args(x)};
  if (!c.args || !rp_push(&x->out, &x->nout, &x->cap_out, sizeof c, &c)) {
    free(c.args);
    return ex_fail(x, "out of memory");
  }
  return ex_emit_reads(x);
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
  ex_state_free(x);
}

/* ---- The verb -------------------------------------------------------------------------- */

static const char usage[] =
    "usage: pitrace extract SESSION.db --kernel N -o REPRO.db [--session S]\n\n"
    "Writes a new session database holding only what the N-th kernel launch (from 1)\n"
    "needs, with its buffers' contents at that moment; `pitrace replay REPRO.db`\n"
    "replays it on its own. REPRO.db is replaced if it exists.\n";

static int parse_args(int argc, char **argv, const char **path, const char **out, int *kernel,
                      int64_t *session)
{
  int64_t n = 0;
  const pt_opt opts[] = {{"--kernel", PT_OPT_INT, &n}, {"-o", PT_OPT_STR, out},
                         {"--output", PT_OPT_STR, out}, {"--session", PT_OPT_INT, session},
                         {NULL, PT_OPT_FLAG, NULL}};
  pt_args a;
  int rc = pt_parse(argc, argv, usage, opts, 0, 1, &a);
  if (rc)
    return rc == 1 ? 0 : 2;
  *path = a.npos ? a.pos[0] : NULL;
  *kernel = n > INT_MAX ? INT_MAX : (int)n;
  if (!*path || !*out || *kernel < 1) {
    pt_verb_error("extract", "give SESSION.db, --kernel N (from 1) and -o REPRO.db "
                             "(pitrace extract --help)");
    return 2;
  }
  return -1;
}

int pt_extract(int argc, char **argv)
{
  const char *path = NULL, *out = NULL;
  int kernel = 0;
  int64_t session = -1;
  int r = parse_args(argc, argv, &path, &out, &kernel, &session);
  if (r >= 0)
    return r;
  rp_session s;
  ex x = {.s = &s};
  if (!rp_session_open(&s, path, session, x.err, sizeof x.err)) {
    fprintf(stderr, "pitrace extract: %s\n", x.err);
    return 2;
  }
  bool ok = find_launch(&x, kernel) && index_creators(&x) && closure(&x) && ex_contents(&x) &&
            assemble(&x) && ex_write(&x, out, kernel);
  if (ok)
    printf("pitrace extract: kernel launch %d (seq %lld) of %s: %zu of %zu calls into %s\n",
           kernel, (long long)call_at(&x, x.launch)->seq, path, x.nout, s.calls.n, out);
  else
    fprintf(stderr, "pitrace extract: %s\n", x.err);
  ex_free(&x);
  rp_session_close(&s);
  return ok ? 0 : 2;
}
