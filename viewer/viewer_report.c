/*
 * viewer_report.c: `pitrace report`: one self-contained HTML file (inline
 * CSS and script, nothing fetched) with the session summary, a timeline
 * that zooms and pans (a lane per thread and per queue), the details of a
 * call (its arguments as `pitrace show` prints them, result, data sizes,
 * backtrace), the statistics, a searchable call list, and the comparison
 * when given two sessions. The page is viewer_report.html, embedded by the
 * build; the sessions go into it as JSON, which its script renders.
 *
 * The JSON is compact so that a 100000-call report stays a few megabytes:
 * calls are columns of integers (sequence numbers and start times as
 * differences from the call before), and every text (API names, results,
 * short arguments, the lines of the `show` blocks, backtraces) is stored
 * once in a string table that the columns index; a call's `show` block is
 * a list of line numbers, itself stored once per distinct block.
 *
 * Given a directory, the report holds the sessions of its session files
 * (*.db, e.g. a `pitrace record -o DIR` run): they share one clock (each
 * placed by its start time, sessions.start_unix_ns), where separate files
 * each start at 0, to be compared.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pitrace_viewer.h"
#include "viewer_common.h"

/* viewer_report.html, embedded by viewer_sources.cmake. */
extern const unsigned char vw_report_page[];
extern const size_t vw_report_page_len;

#define MARKER "/*PITRACE_DATA*/"
#define MAX_CALLS 100000  /* calls a report holds (shared between its sessions) */

static const char usage[] =
    "usage: pitrace report DB|DIR [DB2] -o FILE.html [--session N] [--session-b N] [--no-info]\n"
    "                      [--tolerance X [--f64]]\n"
    "\n"
    "Writes one self-contained HTML file that works offline: the session's summary,\n"
    "a timeline that zooms and pans (mouse wheel, drag, the overview strip) with a\n"
    "lane per thread and per queue (its commands' device times where recorded, with\n"
    "pitrace record --profile), the details of the call clicked (arguments as\n"
    "pitrace show prints them, result, data sizes, backtrace), the statistics (as\n"
    "pitrace stats), the calls with a filter box (as pitrace show --compact), and\n"
    "with a second session the comparison of the two (as pitrace diff). Given a\n"
    "directory (pitrace record -o DIR), it shows the sessions of its *.db files side\n"
    "by side on one clock (and a second argument's beside them, not compared). The\n"
    "file holds at most 100000 calls.\n"
    "\n"
    "  -o FILE       the HTML file to write ('-': standard output)\n"
    "  --session N   the (first) session (default: the file's last)\n"
    "  --session-b N the second session, from DB2\n"
    "  --no-info     compare without info queries (as pitrace diff --no-info)\n"
    "  --tolerance X [--f64]  compare read-back data as floats (as pitrace diff)\n";

/* ---- Interning: each distinct byte string once, numbered in order ------------------- */

typedef struct intern_key {
  size_t off; /* where the key starts in bytes */
  uint32_t len;
} intern_key;

typedef struct intern {
  pi_sbuf bytes;    /* the keys, one after the other, each followed by a NUL */
  intern_key *keys;
  size_t n, cap;
  uint32_t *slot;   /* open addressing: key number + 1, 0 = empty */
  size_t nslot;
  bool oom;
} intern;

static uint64_t hash_bytes(const void *p, size_t n)
{
  const unsigned char *s = p;
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++)
    h = (h ^ s[i]) * 1099511628211ull;
  return h ^ (h >> 29);
}

static bool intern_rehash(intern *t)
{
  size_t nslot = t->nslot ? t->nslot * 2 : 1024;
  uint32_t *slot = calloc(nslot, sizeof *slot);
  if (!slot)
    return false;
  for (size_t i = 0; i < t->n; i++) {
    size_t h = (size_t)hash_bytes(t->bytes.p + t->keys[i].off, t->keys[i].len) & (nslot - 1);
    while (slot[h])
      h = (h + 1) & (nslot - 1);
    slot[h] = (uint32_t)i + 1;
  }
  free(t->slot);
  t->slot = slot;
  t->nslot = nslot;
  return true;
}

/* The number of the key (added when new); -1 when memory ran out. */
static int64_t intern_put(intern *t, const void *key, size_t n)
{
  if (t->oom || n > UINT32_MAX)
    return t->oom = true, -1;
  if ((t->n + 1) * 2 > t->nslot && !intern_rehash(t))
    return t->oom = true, -1;
  size_t h = (size_t)hash_bytes(key, n) & (t->nslot - 1);
  for (; t->slot[h]; h = (h + 1) & (t->nslot - 1)) {
    const intern_key *k = &t->keys[t->slot[h] - 1];
    if (k->len == n && memcmp(t->bytes.p + k->off, key, n) == 0)
      return t->slot[h] - 1;
  }
  intern_key *keys = pt_grow(t->keys, &t->cap, t->n, sizeof *keys);
  if (!keys)
    return t->oom = true, -1;
  t->keys = keys;
  size_t at = t->bytes.len;
  pi_sbuf_put(&t->bytes, n ? key : "", n);
  pi_sbuf_put(&t->bytes, "", 1);
  if (t->bytes.len != at + n + 1) /* the buffer could not grow */
    return t->oom = true, -1;
  t->keys[t->n] = (intern_key){at, (uint32_t)n};
  t->slot[h] = (uint32_t)t->n + 1;
  return (int64_t)t->n++;
}

static int64_t intern_str(intern *t, const char *s) { return intern_put(t, s, strlen(s)); }

static void intern_free(intern *t)
{
  pi_sbuf_free(&t->bytes);
  free(t->keys);
  free(t->slot);
}

/* ---- The report's state ----------------------------------------------------------- */

typedef struct report {
  vw_session *s;
  size_t n;
  const int *group;      /* per session: the argument it came from (one clock per group) */
  size_t *ncalls;        /* per session: its calls (counted by its statistics) */
  size_t *held;          /* per session: the calls the report holds */
  const int64_t *offset_ns; /* per session: where it starts on the timeline */
  intern strings;        /* every text the page shows */
  intern blocks;         /* show blocks: arrays of line numbers */
  int64_t api_index[PI_API_COUNT]; /* -1: not used yet */
  vw_map other_apis;     /* api ids this build does not know -> index */
  pi_sbuf apis;          /* [name, flags, [parameter names]] per API used */
  size_t napis;
  uint32_t *lines;       /* the line numbers of the block being made */
  size_t lines_cap;
  bool no_info, compare;
  double tolerance; /* as pitrace diff --tolerance; < 0: bitwise */
  bool f64;
  bool said;             /* an error was printed */
} report;

enum { API_LAUNCH = 1, API_ENQUEUE = 2 };

/* The parameter holding an enqueue call's queue, or -1 (not an enqueue). */
static int queue_param(const pi_api_desc *api)
{
  if (!strstr(api->name, "Enqueue"))
    return -1;
  for (unsigned i = 0; i < api->nparams; i++) {
    const pi_param_desc *p = &api->params[i];
    if (p->dir == PI_DIR_IN && p->kind == PI_PK_HANDLE && p->obj == PI_OBJ_QUEUE)
      return (int)i;
  }
  return -1;
}

/* The index of API `id` in the page's API table, added when new. */
static int64_t api_index(report *r, uint32_t id)
{
  int64_t v;
  if (id < PI_API_COUNT && r->api_index[id] >= 0)
    return r->api_index[id];
  if (id >= PI_API_COUNT && vw_map_get(&r->other_apis, id, &v))
    return v;
  const pi_api_desc *api = pi_api_get(id);
  char name[32];
  unsigned flags = 0;
  if (api && vw_is_launch(id))
    flags |= API_LAUNCH;
  if (api && queue_param(api) >= 0)
    flags |= API_ENQUEUE;
  pi_sbuf_printf(&r->apis, "%s[%lld,%u,[", r->napis ? "," : "",
                 (long long)intern_str(&r->strings, vw_api_name(id, name)), flags);
  for (unsigned i = 0; api && i < api->nparams; i++)
    pi_sbuf_printf(&r->apis, "%s%lld", i ? "," : "",
                   (long long)intern_str(&r->strings, api->params[i].name));
  pi_sbuf_puts(&r->apis, "]]");
  v = (int64_t)r->napis++;
  if (id < PI_API_COUNT)
    r->api_index[id] = v;
  else
    vw_map_put(&r->other_apis, id, v);
  return v;
}

/* ---- Columns ----------------------------------------------------------------------- */

enum { C_SEQ, C_THREAD, C_API, C_RES, C_START, C_DUR, C_QUEUE, C_KERNEL, C_ARGS, C_SHOW,
       C_STACK, C_DATA, C_COUNT };
static const char *const col_names[C_COUNT] = {"seq",   "thread", "api",  "res",
                                               "start", "dur",    "queue", "kernel",
                                               "args",  "show",   "stack", "data"};

typedef struct columns {
  pi_sbuf c[C_COUNT];
} columns;

static void put(columns *k, int col, int64_t v)
{
  pi_sbuf *b = &k->c[col];
  if (b->len)
    pi_sbuf_put(b, ",", 1);
  vw_put_i64(b, v);
}

/* The lines of a call's `pitrace show` block, as line numbers, stored once
 * per distinct block: returns the block's number. */
static int64_t show_block(report *r, vw_session *s, const pt_call *c, vw_pack *pk,
                          pi_sbuf *raw, pi_sbuf *text, const char *ended)
{
  const pi_api_desc *api = pi_api_get(c->api);
  pi_sbuf_reset(text);
  pi_sbuf_put(text, "", 0);
  if (!api) {
    pi_sbuf_printf(text, "---> api#%u( (a function this pitrace does not know)", c->api);
  } else {
    const uint64_t *argv = vw_pack_call(pk, s, c);
    pi_sbuf_reset(raw);
    pi_format_call_enter(raw, api, argv, NULL);
    if (c->returned)
      pi_format_call_exit(raw, api, argv, (pi_result)c->result, NULL);
    vw_pack_render(pk, raw->p, raw->len, text);
    if (c->returned)
      vw_pack_data_lines(s, c, text);
    else
      pi_sbuf_printf(text, ") ---> %s never returned (the session ended: %s)\n", api->name,
                     ended);
  }
  size_t nl = 0;
  for (char *p = text->p; *p;) {
    char *nlc = strchr(p, '\n');
    size_t len = nlc ? (size_t)(nlc - p) : strlen(p);
    int64_t id = intern_put(&r->strings, p, len);
    uint32_t *lines = pt_grow(r->lines, &r->lines_cap, nl, sizeof *lines);
    if (id < 0 || !lines)
      return r->strings.oom = true, -1;
    r->lines = lines;
    lines[nl++] = (uint32_t)id;
    p += len + (nlc != NULL);
  }
  return intern_put(&r->blocks, r->lines, nl * sizeof *r->lines);
}

typedef struct stack_ctx {
  report *r;
  vw_map *stacks;
} stack_ctx;

static void put_stack(void *ctx, int64_t id, const char *frames)
{
  stack_ctx *c = ctx;
  vw_map_put(c->stacks, id, intern_str(&c->r->strings, frames));
}

/* Stack id -> string number, for the session's stacks (backtraces). */
static bool load_stacks(report *r, vw_session *s, vw_map *stacks)
{
  char err[1024];
  stack_ctx c = {r, stacks};
  if (!pt_each_stack(vw_db(s), s->id, put_stack, &c, err, sizeof err)) {
    pt_verb_error("report", "%s", err);
    r->said = true;
    return false;
  }
  return true;
}

/* One payload of a call: [call (difference from the one before), position,
 * role (a string), element, size, stored, captured_seq (-1: none)]. */
static void put_payload(report *r, columns *k, int64_t *last, int64_t call, int64_t position,
                        const char *role, int64_t idx, int64_t size, int64_t stored,
                        int64_t captured)
{
  put(k, C_DATA, call - *last);
  *last = call;
  put(k, C_DATA, position);
  put(k, C_DATA, intern_str(&r->strings, role ? role : "?"));
  put(k, C_DATA, idx);
  put(k, C_DATA, size);
  put(k, C_DATA, stored);
  put(k, C_DATA, captured);
}

/* A payload kept inline in a held call (up to 64 bytes), saved as the
 * calls stream by (their JSON does not outlive the next call). */
typedef struct inline_payload {
  size_t call;
  int64_t position, idx, size, stored;
  char *role;
} inline_payload;

typedef struct held_calls {
  int64_t *seq; /* per held call */
  inline_payload *inl;
  size_t ninl, cap_inl;
  bool oom;
} held_calls;

static void hold_call(held_calls *h, size_t i, const pt_call *c)
{
  h->seq[i] = c->seq;
  for (uint32_t d = 0; c->data && c->data->type == PJ_ARRAY && d < c->data->n; d++) {
    const pt_json *e = pt_json_at(c->data, d), *role = pt_json_at(e, 1), *hex = pt_json_at(e, 4);
    inline_payload *v = pt_grow(h->inl, &h->cap_inl, h->ninl, sizeof *v);
    char *r = role && role->type == PJ_STRING ? strdup(role->u.s) : NULL;
    if (!v || (role && role->type == PJ_STRING && !r)) {
      free(r);
      h->oom = true;
      return;
    }
    h->inl = v;
    h->inl[h->ninl++] = (inline_payload){i, pt_json_int(pt_json_at(e, 0), 0),
                                         pt_json_int(pt_json_at(e, 2), 0),
                                         pt_json_int(pt_json_at(e, 3), 0),
                                         hex && hex->type == PJ_STRING ? (int64_t)hex->n / 2 : 0,
                                         r};
  }
}

static void held_free(held_calls *h)
{
  for (size_t i = 0; i < h->ninl; i++)
    free(h->inl[i].role);
  free(h->inl);
  free(h->seq);
}

/* The payloads of the held calls, in call order: those inline in the calls
 * merged with the stored rows. */
static bool payloads(report *r, vw_session *s, const held_calls *h, size_t held, columns *k)
{
  size_t nrows = 0, q = 0, p = 0;
  pt_payload_row *rows = pt_payload_rows(vw_db(s), s->id, &nrows);
  int64_t last = 0;
  for (size_t i = 0; i < held; i++) {
    for (; p < h->ninl && h->inl[p].call == i; p++) {
      const inline_payload *v = &h->inl[p];
      put_payload(r, k, &last, (int64_t)i, v->position, v->role, v->idx, v->size, v->stored, -1);
    }
    /* Rows of calls the report does not hold are skipped. */
    for (; q < nrows && rows[q].seq <= h->seq[i]; q++)
      if (rows[q].seq == h->seq[i])
        put_payload(r, k, &last, (int64_t)i, rows[q].position, rows[q].role, rows[q].idx,
                    rows[q].size, rows[q].stored, rows[q].captured_seq);
  }
  free(rows);
  return true;
}

/* The device times of the held calls (SYCL_PI_RECORD_PROFILE), 5 numbers
 * each: the call (difference from the one before), its start on the
 * session's clock (mapped or placed: difference from the one before), its
 * end minus its start, the duration the device measured, and that
 * duration as `pitrace show` prints it (a string). */
static bool devtimes(report *r, const vw_session *s, const int64_t *seqs, size_t held,
                     pi_sbuf *out)
{
  int64_t last_call = 0, last_start = 0;
  size_t ci = 0;
  for (size_t i = 0; i < s->ndevtimes; i++) {
    const vw_devtime *d = &s->devtimes[i];
    while (ci < held && seqs[ci] < d->seq)
      ci++;
    if (ci >= held)
      break;
    if (seqs[ci] != d->seq)
      continue;
    char text[32];
    int64_t str = intern_str(&r->strings, vw_dur(text, d->dur_ns));
    if (str < 0)
      return false;
    pi_sbuf_printf(out, "%s%lld,%lld,%lld,%lld,%lld", out->len ? "," : "",
                   (long long)((int64_t)ci - last_call), (long long)(d->start_ns - last_start),
                   (long long)(d->end_ns - d->start_ns), (long long)d->dur_ns, (long long)str);
    last_call = (int64_t)ci;
    last_start = d->start_ns;
  }
  return true;
}

/* Thread number -> the thread's id in the system, [[idx, tid], ...]. */
static void json_tids(pi_sbuf *b, vw_session *s)
{
  size_t n = 0;
  pt_thread *t = pt_threads(vw_db(s), s->id, &n);
  pi_sbuf_puts(b, "[");
  for (size_t i = 0; i < n; i++)
    pi_sbuf_printf(b, "%s[%lld,%lld]", i ? "," : "", (long long)t[i].idx, (long long)t[i].tid);
  pi_sbuf_puts(b, "]");
  free(t);
}

/* One session's first `held` calls as columns (see the page's decodeRun),
 * read one at a time: the report holds what it prints, not the session. */
static bool json_run(report *r, pi_sbuf *b, size_t si)
{
  vw_session *s = &r->s[si];
  size_t held = r->held[si];
  columns k;
  for (int i = 0; i < C_COUNT; i++)
    pi_sbuf_init(&k.c[i], NULL, 0);
  vw_kernels kn = {0};
  vw_map stacks = {0};
  vw_pack *pk = vw_pack_new();
  pi_sbuf raw, text, tmp, dev;
  pi_sbuf_init(&dev, NULL, 0);
  pi_sbuf_init(&raw, NULL, 0);
  pi_sbuf_init(&text, NULL, 0);
  pi_sbuf_init(&tmp, NULL, 0);
  held_calls h = {.seq = malloc((held ? held : 1) * sizeof *h.seq)};
  char ended[320];
  vw_ended_text(&s->info, s->incomplete_reason, ended, sizeof ended);
  vw_iter it;
  bool ok = pk && h.seq && load_stacks(r, s, &stacks);
  bool iter = ok && vw_iter_open("report", s, &it); /* says why when it cannot */
  if (ok && !iter) {
    r->said = true;
    ok = false;
  }
  int64_t seq = 0, start = 0;
  size_t n = 0;
  const pt_call *c;
  for (; ok && n < held && (c = vw_iter_next(&it)); n++) {
    const pi_api_desc *api = pi_api_get(c->api);
    vw_kernels_note(&kn, c); /* a kernel is made before it is launched */
    put(&k, C_SEQ, c->seq - seq);
    seq = c->seq;
    put(&k, C_THREAD, c->thread);
    put(&k, C_API, api_index(r, c->api));
    put(&k, C_RES, c->returned ? intern_str(&r->strings, pi_result_name(c->result)) : -1);
    put(&k, C_START, c->start_ns - start);
    start = c->start_ns;
    put(&k, C_DUR, c->returned ? c->dur_ns : -1);
    int qp = api ? queue_param(api) : -1;
    put(&k, C_QUEUE, qp >= 0 ? vw_arg_int(c, (unsigned)qp) : 0);
    const char *kernel = vw_kernel_of(&kn, c);
    put(&k, C_KERNEL, kernel ? intern_str(&r->strings, kernel) : -1);
    pi_sbuf_reset(&tmp);
    pi_sbuf_put(&tmp, "", 0);
    if (api)
      vw_args_text(&tmp, NULL, api, c);
    put(&k, C_ARGS, intern_str(&r->strings, tmp.p));
    put(&k, C_SHOW, show_block(r, s, c, pk, &raw, &text, ended));
    int64_t frames = -1;
    put(&k, C_STACK, c->stack >= 0 && vw_map_get(&stacks, c->stack, &frames) ? frames : -1);
    hold_call(&h, n, c);
  }
  if (iter && !vw_iter_close("report", &it)) {
    r->said = true;
    ok = false;
  }
  held = n; /* fewer when the session changed since it was counted */
  ok = ok && !h.oom && payloads(r, s, &h, held, &k);
  ok = ok && devtimes(r, s, h.seq, held, &dev);
  ok = ok && !r->strings.oom && !r->blocks.oom;
  if (ok) {
    pi_sbuf_printf(b, "{\"held\":%zu,\"offset_ns\":%lld,\"dev_clock\":\"%s\",\"dev\":[", held,
                   (long long)r->offset_ns[si],
                   !s->ndevtimes ? "none" : s->devtimes_estimated ? "estimated" : "session");
    pi_sbuf_put(b, dev.p ? dev.p : "", dev.len);
    pi_sbuf_puts(b, "],\"tids\":");
    json_tids(b, s);
    for (int i = 0; i < C_COUNT; i++) {
      pi_sbuf_printf(b, ",\"%s\":[", col_names[i]);
      pi_sbuf_put(b, k.c[i].p ? k.c[i].p : "", k.c[i].len);
      pi_sbuf_puts(b, "]");
    }
    pi_sbuf_puts(b, "}");
  }
  for (int i = 0; i < C_COUNT; i++)
    pi_sbuf_free(&k.c[i]);
  pi_sbuf_free(&dev);
  pi_sbuf_free(&raw);
  pi_sbuf_free(&text);
  pi_sbuf_free(&tmp);
  held_free(&h);
  vw_pack_free(pk);
  vw_map_free(&stacks);
  vw_kernels_free(&kn);
  return ok;
}

/* ---- Sessions, statistics, notes --------------------------------------------------- */

static void json_field_str(pi_sbuf *b, const char *key, const char *v)
{
  pi_sbuf_printf(b, ",\"%s\":", key);
  vw_put_json_str(b, v);
}

static void json_session(pi_sbuf *b, vw_session *s, size_t ncalls, int group)
{
  char backend[64], device[256], ended[320], err[256];
  /* Its calls were read already: unknown at worst. */
  vw_backend_device(vw_db(s), s->id, backend, sizeof backend, device, sizeof device, err,
                    sizeof err);
  vw_ended_text(&s->info, s->incomplete_reason, ended, sizeof ended);
  pi_sbuf_printf(b, "{\"id\":%lld,\"calls\":%zu,\"threads\":%u,\"duration_ns\":%lld,"
                    "\"pid\":%lld,\"start_unix_ns\":%lld,\"group\":%d",
                 (long long)s->id, ncalls, s->nthreads, (long long)s->info.duration_ns,
                 (long long)s->info.pid, (long long)s->info.start_unix_ns, group);
  json_field_str(b, "path", s->path);
  json_field_str(b, "label", s->info.label);
  json_field_str(b, "command", s->info.command);
  json_field_str(b, "host", s->info.host);
  json_field_str(b, "backend", backend);
  json_field_str(b, "device", device);
  json_field_str(b, "ended", ended);
  pi_sbuf_puts(b, "}");
}

/* The statistics of a session (one pass over its calls), and its calls
 * counted (*ncalls). */
static bool json_stats(pi_sbuf *b, const vw_session *s, size_t *ncalls)
{
  vw_stats st;
  if (!vw_stats_compute("report", s, &st))
    return false;
  *ncalls = (size_t)st.calls;
  pi_sbuf_printf(b, "{\"calls\":%lld,\"errors\":%lld,\"unreturned\":%lld,\"total_ns\":%lld,"
                    "\"h2d\":%lld,\"d2h\":%lld,\"h2d_calls\":%lld,\"d2h_calls\":%lld,\"apis\":[",
                 (long long)st.calls, (long long)st.errors, (long long)st.unreturned,
                 (long long)st.total_ns, (long long)st.h2d, (long long)st.d2h,
                 (long long)st.h2d_calls, (long long)st.d2h_calls);
  for (size_t i = 0; i < st.napis; i++) {
    const vw_api_stat *a = &st.apis[i];
    char name[32];
    pi_sbuf_printf(b, "%s[\"%s\",%lld,%lld,%lld,%lld,%lld,%lld,%lld]", i ? "," : "",
                   vw_api_name(a->api, name), (long long)a->count, (long long)a->total,
                   (long long)a->mean, (long long)a->p50, (long long)a->p99, (long long)a->max,
                   (long long)a->errors);
  }
  pi_sbuf_puts(b, "],\"kernels\":[");
  for (size_t i = 0; i < st.nkernels; i++) {
    pi_sbuf_puts(b, i ? ",[" : "[");
    vw_put_json_str(b, st.kernels[i].name ? st.kernels[i].name : "(not made by piKernelCreate)");
    pi_sbuf_printf(b, ",%lld,%lld]", (long long)st.kernels[i].launches,
                   (long long)st.kernels[i].total);
  }
  pi_sbuf_puts(b, "]}");
  vw_stats_free(&st);
  return true;
}

static void json_notes(pi_sbuf *b, const vw_session *s)
{
  pi_sbuf_puts(b, "[");
  for (size_t i = 0; i < s->nnotes; i++) {
    pi_sbuf_printf(b, "%s[%lld,", i ? "," : "", (long long)s->notes[i].seq);
    vw_put_json_str(b, s->notes[i].kind);
    pi_sbuf_puts(b, ",");
    vw_put_json_str(b, s->notes[i].text);
    pi_sbuf_puts(b, "]");
  }
  pi_sbuf_puts(b, "]");
}

/* ---- The page's data ---------------------------------------------------------------- */

/* Shares MAX_CALLS between the sessions: each gets what it has, up to an
 * even share of what the smaller ones leave. */
static void share_calls(report *r)
{
  size_t left = MAX_CALLS, todo = r->n;
  bool *done = calloc(r->n, sizeof *done);
  while (todo) {
    size_t share = left / todo, smallest = SIZE_MAX, at = 0;
    for (size_t i = 0; i < r->n; i++)
      if (!(done && done[i]) && r->ncalls[i] < smallest)
        smallest = r->ncalls[(at = i)];
    if (!done) { /* no memory for the bookkeeping: even shares */
      for (size_t i = 0; i < r->n; i++)
        r->held[i] = r->ncalls[i] < MAX_CALLS / r->n ? r->ncalls[i] : MAX_CALLS / r->n;
      return;
    }
    r->held[at] = smallest < share ? smallest : share;
    left -= r->held[at];
    done[at] = true;
    todo--;
  }
  free(done);
}

static void json_strings(pi_sbuf *b, const intern *t)
{
  pi_sbuf_puts(b, "[");
  for (size_t i = 0; i < t->n; i++) {
    pi_sbuf_puts(b, i ? ",\n" : "");
    vw_put_json_str(b, t->bytes.p + t->keys[i].off);
  }
  pi_sbuf_puts(b, "]");
}

/* Blocks flat: the number of lines, then the lines, block after block. */
static void json_blocks(pi_sbuf *b, const intern *t)
{
  pi_sbuf_puts(b, "[");
  for (size_t i = 0; i < t->n; i++) {
    const char *lines = t->bytes.p + t->keys[i].off;
    size_t n = t->keys[i].len / sizeof(uint32_t);
    pi_sbuf_printf(b, "%s%zu", i ? ",\n" : "", n);
    for (size_t l = 0; l < n; l++) {
      uint32_t v;
      memcpy(&v, lines + l * sizeof v, sizeof v); /* keys are not aligned in the arena */
      pi_sbuf_put(b, ",", 1);
      vw_put_u64(b, v);
    }
  }
  pi_sbuf_puts(b, "]");
}

/* Everything the page shows, as one JSON object. */
static bool page_data(pi_sbuf *b, report *r)
{
  /* The statistics first: they count the calls that the sessions' rows
   * and the sharing of the held calls need. */
  pi_sbuf stats;
  pi_sbuf_init(&stats, NULL, 0);
  bool ok = true;
  for (size_t i = 0; ok && i < r->n; i++) {
    pi_sbuf_puts(&stats, i ? "," : "");
    ok = json_stats(&stats, &r->s[i], &r->ncalls[i]);
    vw_session_rest(&r->s[i]); /* many sessions: only the one read is open */
  }
  if (!ok) {
    r->said = true; /* vw_stats_compute said why */
    pi_sbuf_free(&stats);
    return false;
  }
  share_calls(r);
  pi_sbuf_puts(b, "{\"sessions\":[");
  for (size_t i = 0; i < r->n; i++) {
    pi_sbuf_puts(b, i ? "," : "");
    json_session(b, &r->s[i], r->ncalls[i], r->group[i]);
    vw_session_rest(&r->s[i]);
  }
  pi_sbuf_puts(b, "],\"stats\":[");
  pi_sbuf_put(b, stats.p ? stats.p : "", stats.len);
  pi_sbuf_free(&stats);
  pi_sbuf_puts(b, "],\"notes\":[");
  for (size_t i = 0; i < r->n; i++) {
    pi_sbuf_puts(b, i ? "," : "");
    json_notes(b, &r->s[i]);
    vw_session_rest(&r->s[i]);
  }
  pi_sbuf_puts(b, "],\"runs\":[");
  for (size_t i = 0; ok && i < r->n; i++) {
    pi_sbuf_puts(b, i ? ",\n" : "");
    ok = json_run(r, b, i);
    vw_session_rest(&r->s[i]);
  }
  pi_sbuf_puts(b, "],\n\"apis\":[");
  pi_sbuf_put(b, r->apis.p ? r->apis.p : "", r->apis.len);
  pi_sbuf_puts(b, "],\n\"strings\":");
  json_strings(b, &r->strings);
  pi_sbuf_puts(b, ",\n\"blocks\":");
  json_blocks(b, &r->blocks);
  pi_sbuf_puts(b, ",\n\"diff\":");
  vw_diff d;
  bool compared = ok && r->compare;
  vw_diff_opts o = {.no_info = r->no_info, .tolerance = r->tolerance, .f64 = r->f64};
  if (compared && (ok = vw_diff_compute(&r->s[0], &r->s[1], &o, &d))) {
    vw_diff_json(b, &r->s[0], &r->s[1], &d, NULL);
    vw_diff_free(&d);
  } else {
    pi_sbuf_puts(b, "null");
    /* The comparison reads the files again: it can fail for more than
     * memory (a session changed or damaged since), and says why. */
    if (compared && !ok) {
      if (d.why[0])
        pt_verb_error("report", "%s", d.why);
      r->said = true; /* or vw_diff_compute said it */
    }
  }
  pi_sbuf_puts(b, "}");
  return ok;
}

/* The page with the session's data in place of its marker; whether the
 * compiled-in page has the marker (it is a fault of the build if not). */
static bool write_page(FILE *f, const pi_sbuf *data)
{
  const char *page = (const char *)vw_report_page;
  const char *m = strstr(page, MARKER);
  if (!m) {
    pt_verb_error("report", "the report page built into pitrace has no %s for the data: "
                  "rebuild pitrace", MARKER);
    return false;
  }
  fwrite(page, 1, (size_t)(m - page), f);
  fwrite(data->p, 1, data->len, f);
  fputs(m + strlen(MARKER), f);
  return true;
}

static int write_report(report *r, const char *path, const pt_args *inputs)
{
  pi_sbuf data;
  pi_sbuf_init(&data, NULL, 0);
  if (!page_data(&data, r)) {
    if (!r->said) /* what else fails is memory */
      pt_verb_error("report", "out of memory building the report");
    pi_sbuf_free(&data);
    return 2;
  }
  pt_outfile out;
  if (!pt_outfile_open("report", path, inputs, &out)) {
    pi_sbuf_free(&data);
    return 2;
  }
  bool made = write_page(out.f, &data);
  pi_sbuf_free(&data);
  return pt_outfile_close("report", &out, made) ? 0 : 2;
}

int pt_report(int argc, char **argv)
{
  int64_t sa = -1, sb = -1;
  const char *path = NULL;
  bool no_info = false, f64 = false;
  double tolerance = -1;
  const pt_opt opts[] = {{"-o", PT_OPT_STR, &path}, {"--output", PT_OPT_STR, &path},
                         {"--session", PT_OPT_INT, &sa}, {"--session-b", PT_OPT_INT, &sb},
                         {"--no-info", PT_OPT_FLAG, &no_info},
                         {"--tolerance", PT_OPT_REAL, &tolerance}, {"--f64", PT_OPT_FLAG, &f64},
                         {NULL, PT_OPT_FLAG, NULL}};
  pt_args a;
  int rc = pt_parse(argc, argv, usage, opts, 1, 2, &a);
  if (rc)
    return rc == 1 ? 0 : 2;
  if (f64 && tolerance < 0) {
    pt_verb_error("report", "--f64 says how --tolerance compares: give --tolerance X with it");
    return 2;
  }
  if (!path) {
    pt_verb_error("report", "say where to write the report with -o FILE.html");
    return 2;
  }
  if (pt_output_path_empty("report", path, "the file to write the report to (-o FILE.html), "
                           "or - for the standard output"))
    return 2;
  if (sb >= 0 && a.npos < 2) {
    pt_verb_error("report", "--session-b picks a session of the second file, and only one "
                            "was given");
    return 2;
  }
  /* The comparison's options without a comparison (one session, or a
   * directory: its sessions side by side) were taken and ignored. */
  bool compares = a.npos == 2 && !vw_is_dir(a.pos[0]) && !vw_is_dir(a.pos[1]);
  if (!compares && (tolerance >= 0 || no_info)) {
    pt_verb_error("report", "%s says how two sessions are compared, and %s: give two session "
                            "files", tolerance >= 0 ? "--tolerance" : "--no-info",
                  a.npos < 2 ? "only one was given"
                             : "a directory's sessions are shown side by side, not compared");
    return 2;
  }
  vw_set *o = calloc(1, sizeof *o);
  if (!o) {
    pt_verb_error("report", "out of memory");
    return 2;
  }
  bool ok = true, dirs = false;
  for (int i = 0; ok && i < a.npos; i++) {
    int64_t id = i ? sb : sa;
    if (vw_is_dir(a.pos[i])) {
      dirs = true;
      if (id >= 0) {
        pt_verb_error("report", "%s picks a session of a file, and %s is a directory",
                 i ? "--session-b" : "--session", a.pos[i]);
        ok = false;
      } else {
        ok = vw_set_open_dir("report", o, a.pos[i], VW_STREAM | VW_NOTES | VW_WHOLE, i);
      }
    } else {
      ok = vw_set_open_file("report", o, a.pos[i], id, VW_STREAM | VW_NOTES | VW_WHOLE, i);
    }
  }
  rc = 2;
  if (ok) {
    vw_set_place(o);
    report r = {.s = o->s, .n = o->n, .group = o->group, .offset_ns = o->offset_ns,
                .no_info = no_info, .tolerance = tolerance, .f64 = f64};
    r.compare = a.npos == 2 && !dirs;
    r.held = calloc(o->n, sizeof *r.held);
    r.ncalls = calloc(o->n, sizeof *r.ncalls);
    for (size_t i = 0; i < PI_API_COUNT; i++)
      r.api_index[i] = -1;
    pi_sbuf_init(&r.apis, NULL, 0);
    if (!r.held || !r.ncalls)
      pt_verb_error("report", "out of memory");
    else
      rc = write_report(&r, path, &a);
    free(r.held);
    free(r.ncalls);
    intern_free(&r.strings);
    intern_free(&r.blocks);
    free(r.lines);
    vw_map_free(&r.other_apis);
    pi_sbuf_free(&r.apis);
  }
  vw_set_close(o);
  free(o);
  return rc;
}
