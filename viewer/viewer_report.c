/*
 * viewer_report.c: `pitrace report`: one self-contained HTML file (inline
 * CSS and script, nothing fetched) with the session summary, a timeline,
 * the statistics, a searchable call list, and the comparison when given two
 * sessions. The page is viewer_report.html, embedded by the build; the
 * sessions go into it as JSON, which its script renders.
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
#define MAX_CALLS 100000 /* calls a report holds (split between two sessions) */

static const char usage[] =
    "usage: pitrace report DB [DB2] -o FILE.html [--session N] [--session-b N] [--no-info]\n"
    "\n"
    "Writes one self-contained HTML file that works offline: the session's summary,\n"
    "a timeline of the calls per thread, the statistics (as pitrace stats), the\n"
    "calls with a filter box (as pitrace show --compact), and with a second\n"
    "session the comparison of the two (as pitrace diff). The file holds at most\n"
    "100000 calls.\n"
    "\n"
    "  -o FILE       the HTML file to write ('-': standard output)\n"
    "  --session N   the (first) session (default: the file's last)\n"
    "  --session-b N the second session, from DB2\n"
    "  --no-info     compare without info queries (as pitrace diff --no-info)\n";

static void json_field_str(pi_sbuf *b, const char *key, const char *v)
{
  pi_sbuf_printf(b, ",\"%s\":", key);
  vw_put_json_str(b, v);
}

static void json_session(pi_sbuf *b, vw_session *s)
{
  char backend[64], device[256], ended[320];
  vw_backend_device(&s->db, s->id, backend, sizeof backend, device, sizeof device);
  vw_ended_text(&s->info, s->incomplete_reason, ended, sizeof ended);
  pi_sbuf_printf(b, "{\"id\":%lld,\"calls\":%zu,\"threads\":%u,\"duration_ns\":%lld",
                 (long long)s->id, s->calls.n, s->nthreads, (long long)s->info.duration_ns);
  json_field_str(b, "path", s->path);
  json_field_str(b, "label", s->info.label);
  json_field_str(b, "command", s->info.command);
  json_field_str(b, "host", s->info.host);
  json_field_str(b, "backend", backend);
  json_field_str(b, "device", device);
  json_field_str(b, "ended", ended);
  pi_sbuf_puts(b, "}");
}

static bool json_stats(pi_sbuf *b, const vw_session *s)
{
  vw_stats st;
  if (!vw_stats_compute(s, &st))
    return false;
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

/* [seq, thread, api, result, start_ns, dur_ns, args, kernel] per call. */
static void json_calls(pi_sbuf *b, pi_sbuf *tmp, const vw_session *s, size_t max)
{
  vw_kernels k;
  vw_kernels_build(&s->calls, &k);
  pi_sbuf_puts(b, "[");
  for (size_t i = 0; i < s->calls.n && i < max; i++) {
    const pt_call *c = &s->calls.v[i];
    const pi_api_desc *api = pi_api_get(c->api);
    const char *kernel = vw_kernel_of(&k, c);
    char name[32];
    pi_sbuf_printf(b, "%s[%lld,%u,\"%s\",", i ? ",\n" : "", (long long)c->seq, c->thread,
                   vw_api_name(c->api, name));
    if (c->returned)
      pi_sbuf_printf(b, "\"%s\",%lld,%lld,", pi_result_name(c->result), (long long)c->start_ns,
                     (long long)c->dur_ns);
    else
      pi_sbuf_printf(b, "null,%lld,null,", (long long)c->start_ns);
    pi_sbuf_reset(tmp);
    pi_sbuf_put(tmp, "", 0);
    if (api)
      vw_args_text(tmp, NULL, api, c);
    vw_put_json_str(b, tmp->p);
    pi_sbuf_puts(b, ",");
    if (kernel)
      vw_put_json_str(b, kernel);
    else
      pi_sbuf_puts(b, "null");
    pi_sbuf_puts(b, "]");
  }
  pi_sbuf_puts(b, "]");
  vw_kernels_free(&k);
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

/* Everything the page shows, as one JSON object. */
static bool page_data(pi_sbuf *b, vw_session *s, size_t n, bool no_info)
{
  pi_sbuf tmp;
  pi_sbuf_init(&tmp, NULL, 0);
  const char *parts[] = {"{\"sessions\":[", "],\"stats\":[", "],\"calls\":[", "],\"notes\":["};
  bool ok = true;
  for (int part = 0; ok && part < 4; part++) {
    pi_sbuf_puts(b, parts[part]);
    for (size_t i = 0; ok && i < n; i++) {
      pi_sbuf_puts(b, i ? "," : "");
      if (part == 0)
        json_session(b, &s[i]);
      else if (part == 1)
        ok = json_stats(b, &s[i]);
      else if (part == 2)
        json_calls(b, &tmp, &s[i], MAX_CALLS / n);
      else
        json_notes(b, &s[i]);
    }
  }
  pi_sbuf_free(&tmp);
  pi_sbuf_puts(b, "],\"diff\":");
  vw_diff d;
  if (ok && n == 2 && (ok = vw_diff_compute(&s[0], &s[1], no_info, &d))) {
    vw_diff_json(b, &s[0], &s[1], &d);
    vw_diff_free(&d);
  } else {
    pi_sbuf_puts(b, "null");
  }
  pi_sbuf_puts(b, "}");
  return ok;
}

static bool write_page(FILE *f, const pi_sbuf *data)
{
  const char *page = (const char *)vw_report_page;
  const char *m = strstr(page, MARKER);
  if (!m)
    return false;
  fwrite(page, 1, (size_t)(m - page), f);
  fwrite(data->p, 1, data->len, f);
  fputs(m + strlen(MARKER), f);
  return !ferror(f);
}

static int report(vw_session *s, size_t n, const char *path, bool no_info)
{
  pi_sbuf data;
  pi_sbuf_init(&data, NULL, 0);
  if (!page_data(&data, s, n, no_info)) {
    pt_verb_error("report", "out of memory building the report");
    pi_sbuf_free(&data);
    return 2;
  }
  bool to_stdout = strcmp(path, "-") == 0;
  FILE *f = to_stdout ? stdout : fopen(path, "w");
  if (!f) {
    pt_verb_error("report", "cannot write %s: %s", path, strerror(errno));
    pi_sbuf_free(&data);
    return 2;
  }
  bool ok = write_page(f, &data);
  ok = (to_stdout ? fflush(f) : fclose(f)) == 0 && ok;
  pi_sbuf_free(&data);
  if (!ok)
    pt_verb_error("report", "writing %s failed", to_stdout ? "the standard output" : path);
  return ok ? 0 : 2;
}

int pt_report(int argc, char **argv)
{
  int64_t sa = -1, sb = -1;
  const char *path = NULL;
  bool no_info = false;
  const pt_opt opts[] = {{"-o", PT_OPT_STR, &path}, {"--output", PT_OPT_STR, &path},
                         {"--session", PT_OPT_INT, &sa}, {"--session-b", PT_OPT_INT, &sb},
                         {"--no-info", PT_OPT_FLAG, &no_info}, {NULL, PT_OPT_FLAG, NULL}};
  pt_args a;
  int rc = pt_parse(argc, argv, usage, opts, 1, 2, &a);
  if (rc)
    return rc == 1 ? 0 : 2;
  if (!path) {
    pt_verb_error("report", "say where to write the report with -o FILE.html");
    return 2;
  }
  vw_session s[2];
  size_t n = 0;
  for (; n < (size_t)a.npos; n++)
    if (!vw_session_open("report", a.pos[n], n ? sb : sa, VW_CALLS | VW_NOTES, &s[n]))
      break;
  rc = n == (size_t)a.npos ? report(s, n, path, no_info) : 2;
  while (n)
    vw_session_close(&s[--n]);
  return rc;
}
