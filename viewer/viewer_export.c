/*
 * viewer_export.c: `pitrace export`: a session as Chrome trace-event JSON
 * (opens in Perfetto and chrome://tracing: a track per thread, a span per
 * call, kernel launches marked), as JSON Lines (one object per call) or as
 * CSV (one row per call). Calls stream from the session, none held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pitrace_viewer.h"
#include "viewer_common.h"

static const char usage[] =
    "usage: pitrace export DB|DIR... --format chrome|jsonl|csv [--session N] [-o FILE]\n"
    "\n"
    "Writes a session's calls for other tools:\n"
    "  chrome  Chrome trace-event JSON ({\"traceEvents\": [...]}) for Perfetto or\n"
    "          chrome://tracing: a track per thread, a span per call (microseconds),\n"
    "          kernel launches in category \"kernel\" with the kernel's name\n"
    "  jsonl   JSON Lines: one object per call (seq, thread, api, result, start_ns,\n"
    "          dur_ns, kernel, args by parameter name)\n"
    "  csv     one row per call with a header line\n"
    "\n"
    "Given a directory (pitrace record -o DIR: every session of its *.db files) or\n"
    "several files (up to 4 arguments), it writes one trace with the\n"
    "processes side by side on one clock: times from the earliest session's start\n"
    "(sessions.start_unix_ns). In chrome each process is a pid named \"PID command\"\n"
    "(its device tracks inside it); jsonl and csv lead with the process's pid,\n"
    "session file and session, and give start_ns on the shared clock.\n"
    "\n"
    "  --session N   the session (default: the file's last; one file only)\n"
    "  -o FILE       write there instead of standard output\n";

typedef struct exporter {
  vw_session *s;     /* the session being written */
  vw_kernels kernels;  /* its kernel names */
  FILE *out;
  pi_sbuf b, tmp;
  /* Several sessions (a record directory): each process its own Chrome pid
   * (the host's, its device tracks inside it), times on the shared clock
   * (offset_ns: where the session starts), JSON Lines and CSV with its pid
   * and session file. */
  bool multi;
  int64_t pid;     /* the Chrome pid of the session's calls (1 for one session) */
  int64_t dev_pid; /* and of its device tracks (2 for one session) */
  int64_t offset_ns;
  int64_t end_ns; /* where the session ends: a call that never returned lasts until then */
} exporter;

/* Device tracks inside a process: tids past any thread index. */
#define DEVICE_TID 1000000

/* Microseconds with three decimals, from nanoseconds. */
static void put_us(pi_sbuf *b, int64_t ns)
{
  if (ns < 0) {
    pi_sbuf_put(b, "-", 1);
    ns = -ns;
  }
  vw_put_i64(b, ns / 1000);
  char frac[5] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
                  (char)('0' + ns % 10), 0};
  pi_sbuf_put(b, frac, 4);
}

/* The call's arguments as one short string (in ex->tmp). */
static const char *args_string(exporter *ex, const pt_call *c)
{
  const pi_api_desc *api = pi_api_get(c->api);
  pi_sbuf_reset(&ex->tmp);
  pi_sbuf_put(&ex->tmp, "", 0);
  if (api)
    vw_args_text(&ex->tmp, NULL, api, c);
  return ex->tmp.p ? ex->tmp.p : "";
}

/* ---- Chrome trace events ------------------------------------------------------------ */

/* A device queue's track: its tid in the device's process. */
static int64_t queue_tid(const exporter *ex, int64_t queue)
{
  return ex->multi ? DEVICE_TID + queue : queue;
}

/* The process's names: session `index` of the trace (in start order). */
static void chrome_metadata(exporter *ex, size_t index)
{
  pi_sbuf *b = &ex->b;
  char name[1300];
  if (ex->multi)
    snprintf(name, sizeof name, "%lld %s", (long long)ex->s->info.pid, ex->s->info.command);
  else
    snprintf(name, sizeof name, "%s (session %lld)", ex->s->info.command, (long long)ex->s->id);
  pi_sbuf_puts(b, index == 0 ? "{\"traceEvents\":[\n" : ",\n");
  pi_sbuf_printf(b, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":0,"
                    "\"args\":{\"name\":", (long long)ex->pid);
  vw_put_json_str(b, name);
  pi_sbuf_puts(b, "}}");
  if (ex->multi) {
    pi_sbuf_printf(b, ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%lld,"
                      "\"tid\":0,\"args\":{\"sort_index\":%zu}}", (long long)ex->pid, index);
    pi_sbuf_printf(b, ",\n{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":%lld,"
                      "\"tid\":0,\"args\":{\"labels\":", (long long)ex->pid);
    vw_put_json_str(b, ex->s->path);
    pi_sbuf_puts(b, "}}");
  }
  size_t nt = 0;
  pt_thread *threads = pt_threads(vw_db(ex->s), ex->s->id, &nt);
  for (size_t i = 0; i < nt; i++)
    pi_sbuf_printf(b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":%d,"
                      "\"args\":{\"name\":\"thread %d (tid %lld)\"}}", (long long)ex->pid,
                   threads[i].idx, threads[i].idx, (long long)threads[i].tid);
  free(threads);
  /* Device times: a process of its own, a track per queue. */
  if (!ex->s->ndevtimes)
    return;
  if (!ex->multi) /* with several processes, each one's device tracks are in it */
    pi_sbuf_puts(b, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"tid\":0,"
                    "\"args\":{\"name\":\"device (commands by queue)\"}}");
  vw_map seen = {0};
  for (size_t i = 0; i < ex->s->ndevtimes; i++) {
    int64_t q = ex->s->devtimes[i].queue, dummy;
    if (vw_map_get(&seen, q, &dummy))
      continue;
    vw_map_put(&seen, q, 1);
    pi_sbuf_printf(b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":%lld,"
                      "\"args\":{\"name\":\"queue#%lld (device time%s)\"}}",
                   (long long)ex->dev_pid, (long long)queue_tid(ex, q), (long long)q,
                   ex->s->devtimes_estimated ? ", placement estimated" : "");
  }
  vw_map_free(&seen);
}

/* A flow's id: the call's seq, made unique across processes ("PID:SEQ"). */
static void put_flow_id(exporter *ex, const pt_call *c)
{
  if (ex->multi)
    pi_sbuf_printf(&ex->b, "\"%lld:%lld\"", (long long)ex->pid, (long long)c->seq);
  else
    vw_put_i64(&ex->b, c->seq);
}

/* The command's span on its queue's device track, and a flow arrow from
 * the enqueue call to it (ids: the call's seq). */
static void chrome_device(exporter *ex, const pt_call *c, const vw_devtime *d, const char *title)
{
  pi_sbuf *b = &ex->b;
  pi_sbuf_puts(b, ",\n{\"name\":");
  vw_put_json_str(b, title);
  pi_sbuf_puts(b, vw_is_launch(c->api) ? ",\"cat\":\"device,kernel\"" : ",\"cat\":\"device\"");
  pi_sbuf_printf(b, ",\"ph\":\"X\",\"pid\":%lld,\"tid\":", (long long)ex->dev_pid);
  vw_put_i64(b, queue_tid(ex, d->queue));
  pi_sbuf_puts(b, ",\"ts\":");
  put_us(b, ex->offset_ns + d->start_ns);
  pi_sbuf_puts(b, ",\"dur\":");
  put_us(b, d->dur_ns > 0 ? d->dur_ns : 0);
  pi_sbuf_puts(b, ",\"args\":{\"seq\":");
  vw_put_i64(b, c->seq);
  pi_sbuf_puts(b, ",\"device_ns\":");
  vw_put_i64(b, d->dur_ns);
  pi_sbuf_puts(b, ex->s->devtimes_estimated ? ",\"clock\":\"estimated\"}}"
                                            : ",\"clock\":\"session\"}}");
  pi_sbuf_printf(b, ",\n{\"name\":\"enqueue\",\"cat\":\"flow\",\"ph\":\"s\",\"pid\":%lld,"
                    "\"tid\":", (long long)ex->pid);
  vw_put_u64(b, c->thread);
  pi_sbuf_puts(b, ",\"ts\":");
  put_us(b, ex->offset_ns + c->start_ns);
  pi_sbuf_puts(b, ",\"id\":");
  put_flow_id(ex, c);
  pi_sbuf_puts(b, "}");
  pi_sbuf_printf(b, ",\n{\"name\":\"enqueue\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\","
                    "\"pid\":%lld,\"tid\":", (long long)ex->dev_pid);
  vw_put_i64(b, queue_tid(ex, d->queue));
  pi_sbuf_puts(b, ",\"ts\":");
  put_us(b, ex->offset_ns + d->start_ns);
  pi_sbuf_puts(b, ",\"id\":");
  put_flow_id(ex, c);
  pi_sbuf_puts(b, "}");
}

static void chrome_event(exporter *ex, const pt_call *c)
{
  pi_sbuf *b = &ex->b;
  char api[32], title[320];
  const char *kernel = vw_kernel_of(&ex->kernels, c);
  bool bad = !c->returned || c->result != PI_SUCCESS;
  int64_t dur = c->returned ? c->dur_ns : ex->end_ns - c->start_ns;
  snprintf(title, sizeof title, "%s%s%s", vw_api_name(c->api, api), kernel ? ": " : "",
           kernel ? kernel : "");
  pi_sbuf_puts(b, ",\n{\"name\":");
  vw_put_json_str(b, title);
  pi_sbuf_puts(b, vw_is_launch(c->api) ? ",\"cat\":\"kernel" : ",\"cat\":\"pi");
  pi_sbuf_puts(b, bad ? ",error\"" : "\"");
  pi_sbuf_printf(b, ",\"ph\":\"X\",\"pid\":%lld,\"tid\":", (long long)ex->pid);
  vw_put_u64(b, c->thread);
  pi_sbuf_puts(b, ",\"ts\":");
  put_us(b, ex->offset_ns + c->start_ns);
  pi_sbuf_puts(b, ",\"dur\":");
  put_us(b, dur > 0 ? dur : 0);
  pi_sbuf_puts(b, ",\"args\":{\"seq\":");
  vw_put_i64(b, c->seq);
  pi_sbuf_puts(b, ",\"result\":\"");
  pi_sbuf_puts(b, vw_result_name(c));
  pi_sbuf_puts(b, "\"");
  if (kernel) {
    pi_sbuf_puts(b, ",\"kernel\":");
    vw_put_json_str(b, kernel);
  }
  const vw_devtime *d = vw_devtime_of(ex->s, c->seq);
  if (d) {
    pi_sbuf_puts(b, ",\"device_ns\":");
    vw_put_i64(b, d->dur_ns);
  }
  pi_sbuf_puts(b, ",\"args\":");
  vw_put_json_str(b, args_string(ex, c));
  pi_sbuf_puts(b, "}}");
  if (d)
    chrome_device(ex, c, d, title);
}

/* ---- JSON Lines and CSV ------------------------------------------------------------- */

/* A plain number stays a number in JSON; everything else is readable text. */
static bool plain_number(const pi_param_desc *p, const pt_json *j)
{
  return p->kind == PI_PK_SCALAR && j && j->type == PJ_INT &&
         (p->vt == PI_VT_U32 || p->vt == PI_VT_U64 || p->vt == PI_VT_SIZE || p->vt == PI_VT_I32);
}

static void jsonl_args(exporter *ex, const pt_call *c)
{
  pi_sbuf *b = &ex->b;
  const pi_api_desc *api = pi_api_get(c->api);
  pi_sbuf_puts(b, ",\"args\":{");
  for (unsigned i = 0; api && i < api->nparams; i++) {
    const pt_json *j = pt_json_at(c->args, i);
    pi_sbuf_puts(b, i ? ",\"" : "\"");
    pi_sbuf_puts(b, api->params[i].name);
    pi_sbuf_puts(b, "\":");
    if (plain_number(&api->params[i], j)) {
      vw_put_i64(b, j->u.i);
      continue;
    }
    pi_sbuf_reset(&ex->tmp);
    pi_sbuf_put(&ex->tmp, "", 0);
    vw_arg_text(&ex->tmp, NULL, api, i, c);
    vw_put_json_str(b, ex->tmp.p ? ex->tmp.p : "");
  }
  pi_sbuf_puts(b, "}");
}

static void jsonl_line(exporter *ex, const pt_call *c)
{
  pi_sbuf *b = &ex->b;
  char api[32];
  const char *kernel = vw_kernel_of(&ex->kernels, c);
  pi_sbuf_puts(b, "{");
  if (ex->multi) {
    pi_sbuf_puts(b, "\"pid\":");
    vw_put_i64(b, ex->s->info.pid);
    pi_sbuf_puts(b, ",\"file\":");
    vw_put_json_str(b, ex->s->path);
    pi_sbuf_puts(b, ",\"session\":");
    vw_put_i64(b, ex->s->id);
    pi_sbuf_puts(b, ",");
  }
  pi_sbuf_puts(b, "\"seq\":");
  vw_put_i64(b, c->seq);
  pi_sbuf_puts(b, ",\"thread\":");
  vw_put_u64(b, c->thread);
  pi_sbuf_puts(b, ",\"api\":\"");
  pi_sbuf_puts(b, vw_api_name(c->api, api));
  pi_sbuf_puts(b, c->returned ? "\",\"result\":\"" : "\",\"result\":null");
  pi_sbuf_puts(b, c->returned ? pi_result_name(c->result) : "");
  pi_sbuf_puts(b, c->returned ? "\",\"start_ns\":" : ",\"start_ns\":");
  vw_put_i64(b, ex->offset_ns + c->start_ns);
  pi_sbuf_puts(b, ",\"dur_ns\":");
  if (c->returned)
    vw_put_i64(b, c->dur_ns);
  else
    pi_sbuf_puts(b, "null");
  if (kernel) {
    pi_sbuf_puts(b, ",\"kernel\":");
    vw_put_json_str(b, kernel);
  }
  jsonl_args(ex, c);
  pi_sbuf_puts(b, "}\n");
}

static void csv_line(exporter *ex, const pt_call *c)
{
  pi_sbuf *b = &ex->b;
  char api[32];
  const char *kernel = vw_kernel_of(&ex->kernels, c);
  if (ex->multi) {
    vw_put_i64(b, ex->s->info.pid);
    pi_sbuf_puts(b, ",");
    vw_put_csv(b, ex->s->path);
    pi_sbuf_puts(b, ",");
    vw_put_i64(b, ex->s->id);
    pi_sbuf_puts(b, ",");
  }
  vw_put_i64(b, c->seq);
  pi_sbuf_puts(b, ",");
  vw_put_u64(b, c->thread);
  pi_sbuf_puts(b, ",");
  pi_sbuf_puts(b, vw_api_name(c->api, api));
  pi_sbuf_puts(b, ",");
  pi_sbuf_puts(b, c->returned ? pi_result_name(c->result) : "");
  pi_sbuf_puts(b, ",");
  vw_put_i64(b, ex->offset_ns + c->start_ns);
  pi_sbuf_puts(b, ",");
  if (c->returned)
    vw_put_i64(b, c->dur_ns);
  pi_sbuf_puts(b, ",");
  vw_put_csv(b, kernel ? kernel : "");
  pi_sbuf_puts(b, ",");
  vw_put_csv(b, args_string(ex, c));
  pi_sbuf_puts(b, "\n");
}

/* ---- The verb ----------------------------------------------------------------------- */

typedef void (*line_fn)(exporter *, const pt_call *);

/* The session's calls, read once in seq order (a launch's kernel was named
 * by a piKernelCreate before it). */
static bool write_session(exporter *ex, vw_session *s, line_fn line)
{
  ex->s = s;
  bool at_least; /* still recording: its last call stored ends it */
  ex->end_ns = vw_session_duration(s, &at_least);
  memset(&ex->kernels, 0, sizeof ex->kernels);
  vw_iter it;
  if (!vw_iter_open("export", s, &it))
    return false;
  const pt_call *c;
  while ((c = vw_iter_next(&it))) {
    vw_kernels_note(&ex->kernels, c);
    line(ex, c);
    if (ex->b.len > (1u << 20))
      vw_flush(&ex->b, ex->out);
  }
  vw_kernels_free(&ex->kernels);
  return vw_iter_close("export", &it);
}

/* The Chrome pid of process i: its own pid, unless an earlier session took
 * it (two sessions of one process) or it is not known. */
static int64_t chrome_pid(const vw_set *set, size_t i, const int64_t *taken)
{
  int64_t pid = set->s[i].info.pid > 0 ? set->s[i].info.pid : 1;
  for (bool again = true; again;) {
    again = false;
    for (size_t j = 0; j < i; j++)
      if (taken[j] == pid) {
        pid += 1 << 22; /* past any Linux pid */
        again = true;
      }
  }
  return pid;
}

/* The sessions' calls into ex->out: 0, or 3 after saying what failed. */
static int export(exporter *ex, vw_set *set, const char *format)
{
  line_fn line = strcmp(format, "chrome") == 0  ? chrome_event
                 : strcmp(format, "jsonl") == 0 ? jsonl_line
                                                : csv_line;
  int64_t *pids = calloc(set->n + 1, sizeof *pids);
  if (!pids) {
    pt_verb_error("export", "out of memory exporting %zu sessions", set->n);
    return 3;
  }
  if (line == csv_line)
    pi_sbuf_puts(&ex->b, ex->multi ? "pid,file,session,seq,thread,api,result,start_ns,dur_ns,"
                                     "kernel,args\n"
                                   : "seq,thread,api,result,start_ns,dur_ns,kernel,args\n");
  for (size_t i = 0; i < set->n; i++) {
    ex->s = &set->s[i];
    ex->offset_ns = ex->multi ? set->offset_ns[i] : 0;
    ex->pid = ex->multi ? (pids[i] = chrome_pid(set, i, pids)) : 1;
    ex->dev_pid = ex->multi ? ex->pid : 2;
    if (line == chrome_event)
      chrome_metadata(ex, i);
    vw_session_rest(&set->s[i]); /* read again below */
  }
  for (size_t i = 0; i < set->n; i++) {
    ex->offset_ns = ex->multi ? set->offset_ns[i] : 0;
    ex->pid = ex->multi ? pids[i] : 1;
    ex->dev_pid = ex->multi ? ex->pid : 2;
    if (!write_session(ex, &set->s[i], line)) {
      free(pids);
      return 3; /* said */
    }
  }
  free(pids);
  if (line == chrome_event)
    pi_sbuf_puts(&ex->b, "\n],\"displayTimeUnit\":\"ns\"}\n");
  vw_flush(&ex->b, ex->out);
  return 0; /* whether it was written: pt_outfile_close */
}

int pt_export(int argc, char **argv)
{
  int64_t session = -1;
  const char *format = NULL, *path = NULL;
  const pt_opt opts[] = {{"--session", PT_OPT_INT, &session}, {"--format", PT_OPT_STR, &format},
                         {"-o", PT_OPT_STR, &path}, {"--output", PT_OPT_STR, &path},
                         {NULL, PT_OPT_FLAG, NULL}};
  pt_args a;
  int rc = pt_parse(argc, argv, usage, opts, 1, PT_ARGS_MAX, &a);
  if (rc)
    return rc == 1 ? 0 : 2;
  if (!format || (strcmp(format, "chrome") && strcmp(format, "jsonl") && strcmp(format, "csv"))) {
    bool given = format && *format;
    pt_verb_error("export", "--format must be chrome, jsonl or csv%s%s%s", given ? ", not '" : "",
                  given ? format : " (it is required)", given ? "'" : "");
    return 2;
  }
  if (pt_output_path_empty("export", path, "the file to write, or leave -o out for the "
                           "standard output"))
    return 2;
  bool multi = a.npos > 1 || vw_is_dir(a.pos[0]);
  if (multi && session >= 0) {
    pt_verb_error("export", "--session picks a session of one file, and %s",
                  a.npos > 1 ? "several were given" : "a directory was given");
    return 2;
  }
  vw_set *set = calloc(1, sizeof *set);
  if (!set) {
    pt_verb_error("export", "out of memory");
    return 2;
  }
  bool ok = multi ? vw_set_open_paths("export", set, a.pos, (size_t)a.npos, VW_STREAM | VW_WHOLE)
                  : vw_set_open_file("export", set, a.pos[0], session, VW_STREAM | VW_WHOLE, 0);
  exporter ex = {.multi = multi};
  pt_outfile out;
  if (ok) {
    vw_set_place(set);
    ok = pt_outfile_open("export", path, &a, &out);
  }
  if (!ok) {
    vw_set_close(set);
    free(set);
    return 2;
  }
  ex.out = out.f;
  pi_sbuf_init(&ex.b, NULL, 0);
  pi_sbuf_init(&ex.tmp, NULL, 0);
  rc = export(&ex, set, format);
  rc = pt_outfile_close("export", &out, rc == 0) ? 0 : 2;
  pi_sbuf_free(&ex.b);
  pi_sbuf_free(&ex.tmp);
  vw_set_close(set);
  free(set);
  return rc;
}
