/*
 * viewer_show.c: `pitrace show`: a session's calls in the SYCL_PI_TRACE=2
 * format, printed by the live trace's own printer (pi_format_call_enter /
 * pi_format_call_exit over arguments rebuilt by viewer_pack.c), or one line
 * per call with --compact; filters by API, thread, sequence range, errors.
 * The runtime's notes (link decisions, spec-constant values) come just
 * before the call they belong to, as the live trace prints them. Calls
 * stream from the session (vw_iter): none is held once printed.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pitrace_viewer.h"
#include "viewer_common.h"

static const char usage[] =
    "usage: pitrace show DB [--session N] [--compact] [--api GLOBS] [--thread N]\n"
    "                    [--seq A..B] [--errors]\n"
    "\n"
    "Prints a recorded session's calls in the SYCL_PI_TRACE=2 format (the live\n"
    "trace's printer; handles as kind#id, pointers to recorded data as ptr, data\n"
    "previews from the recorded bytes), with the runtime's link decisions and\n"
    "spec-constant values where they happened.\n"
    "\n"
    "  --session N   the session (default: the file's last)\n"
    "  --compact     one line per call: seq, thread, API(arguments) = result, time\n"
    "  --api GLOBS   only APIs matching a pattern (piEnqueue*, *GetInfo), or one\n"
    "                of a comma-separated list (piEnqueue*,*Release)\n"
    "  --thread N    only calls of thread N (1 is the first)\n"
    "  --seq A..B    only calls A to B (A.., ..B, or one number)\n"
    "  --errors      only calls that failed or never returned\n";

typedef struct filter {
  const char *api_glob;
  int64_t thread, lo, hi;
  bool errors;
  bool *api_ok; /* per API id */
} filter;

/* A seq in s, up to `stop` (its end, or ".."): digits only, in range. */
static bool seq_number(const char *s, const char *stop, int64_t *v)
{
  char *end;
  errno = 0;
  long long n = strtoll(s, &end, 10);
  if (!isdigit((unsigned char)*s) || end != stop || errno)
    return false;
  *v = n;
  return true;
}

/* "A..B", "A..", "..B" or "N" (what --seq takes). */
static bool parse_range(const char *s, int64_t *lo, int64_t *hi)
{
  const char *dots = strstr(s, "..");
  *lo = 1;
  *hi = INT64_MAX;
  if (!dots) {
    bool ok = seq_number(s, s + strlen(s), lo);
    *hi = *lo;
    return ok;
  }
  if (dots != s && !seq_number(s, dots, lo))
    return false;
  if (dots[2] && !seq_number(dots + 2, dots + 2 + strlen(dots + 2), hi))
    return false;
  return *lo <= *hi;
}

static bool matches(const filter *f, const pt_call *c)
{
  if (f->api_glob && (c->api >= PI_API_COUNT || !f->api_ok[c->api]))
    return false;
  if (f->thread >= 0 && c->thread != f->thread)
    return false;
  if (c->seq < f->lo || c->seq > f->hi)
    return false;
  return !f->errors || !c->returned || c->result != PI_SUCCESS;
}

static void put_notes(pi_sbuf *b, const vw_session *s, const pt_call *c, bool compact,
                      const vw_colors *col)
{
  size_t n;
  const pt_note *notes = vw_notes_of(s, c->seq, &n);
  for (size_t i = 0; i < n; i++)
    pi_sbuf_printf(b, compact ? "%s        # %s%s\n" : "%sSYCL_PI_TRACE[basic]: %s%s\n",
                   col->dim, notes[i].text, col->off);
}

/* A sequence number right-aligned in 7 columns. */
static void put_seq(pi_sbuf *b, int64_t v)
{
  size_t at = b->len;
  vw_put_i64(b, v);
  size_t n = b->len - at;
  if (n < 7) {
    pi_sbuf_put(b, "       ", 7 - n);
    memmove(b->p + at + 7 - n, b->p + at, n);
    memset(b->p + at, ' ', 7 - n);
  }
}

static void compact_line(pi_sbuf *b, const vw_session *s, const pt_call *c,
                         const vw_colors *col)
{
  char name[32], dur[32];
  const pi_api_desc *api = pi_api_get(c->api);
  put_seq(b, c->seq);
  pi_sbuf_put(b, " T", 2);
  vw_put_u64(b, c->thread);
  pi_sbuf_put(b, " ", 1);
  pi_sbuf_puts(b, vw_api_name(c->api, name));
  pi_sbuf_put(b, "(", 1);
  if (api)
    vw_args_text(b, NULL, api, c);
  pi_sbuf_put(b, ") = ", 4);
  bool bad = !c->returned || c->result != PI_SUCCESS;
  pi_sbuf_puts(b, bad ? (c->returned ? col->red : col->yellow) : "");
  pi_sbuf_puts(b, vw_result_name(c));
  pi_sbuf_puts(b, bad ? col->off : "");
  if (c->returned && c->dur_ns < 1000) { /* most calls: no printf */
    pi_sbuf_put(b, "  ", 2);
    vw_put_i64(b, c->dur_ns);
    pi_sbuf_put(b, " ns", 3);
  } else if (c->returned) {
    pi_sbuf_put(b, "  ", 2);
    pi_sbuf_puts(b, vw_dur(dur, c->dur_ns));
  }
  const vw_devtime *d = s->ndevtimes ? vw_devtime_of(s, c->seq) : NULL;
  if (d) {
    pi_sbuf_puts(b, "  device ");
    pi_sbuf_puts(b, vw_dur(dur, d->dur_ns));
  }
  pi_sbuf_put(b, "\n", 1);
}

/* The live trace's blocks for one call. */
static void trace_block(pi_sbuf *b, pi_sbuf *raw, vw_pack *pk, vw_session *s, const pt_call *c,
                        const char *ended, const vw_colors *col)
{
  const pi_api_desc *api = pi_api_get(c->api);
  if (!api) {
    pi_sbuf_printf(b, "---> api#%u( (a function this pitrace does not know)\n\n", c->api);
    return;
  }
  char tag[48];
  snprintf(tag, sizeof tag, " [thread %u]", c->thread);
  const char *t = s->nthreads > 1 ? tag : NULL;
  const uint64_t *argv = vw_pack_call(pk, s, c);
  pi_sbuf_reset(raw);
  pi_format_call_enter(raw, api, argv, t);
  if (c->returned)
    pi_format_call_exit(raw, api, argv, (pi_result)c->result, t);
  vw_pack_render(pk, raw->p, raw->len, b);
  if (!c->returned) {
    pi_sbuf_printf(b, ") ---> %s%s %snever returned%s (the session ended: %s)\n", api->name,
                   t ? t : "", col->yellow, col->off, ended);
    pi_sbuf_puts(b, "\n");
    return;
  }
  vw_pack_data_lines(s, c, b);
  const vw_devtime *d = s->ndevtimes ? vw_devtime_of(s, c->seq) : NULL;
  if (d) {
    char dur[32], at[32];
    pi_sbuf_printf(b, "        device time: %s on queue#%lld, from %s%s\n", vw_dur(dur, d->dur_ns),
                   (long long)d->queue, vw_dur(at, d->start_ns),
                   s->devtimes_estimated ? " (estimated placement)" : "");
  }
  pi_sbuf_puts(b, "\n");
}

static int show(vw_session *s, const filter *f, bool compact)
{
  vw_colors col = vw_colors_for(stdout);
  char ended[320];
  vw_ended_text(&s->info, s->incomplete_reason, ended, sizeof ended);
  pi_sbuf out, raw;
  pi_sbuf_init(&out, NULL, 0);
  pi_sbuf_init(&raw, NULL, 0);
  vw_pack *pk = vw_pack_new();
  size_t shown = 0, n = 0;
  vw_iter it;
  bool ok = vw_iter_open("show", s, &it);
  const pt_call *c;
  while (ok && (c = vw_iter_next(&it))) {
    n++;
    if (!matches(f, c))
      continue;
    shown++;
    put_notes(&out, s, c, compact, &col);
    if (compact)
      compact_line(&out, s, c, &col);
    else
      trace_block(&out, &raw, pk, s, c, ended, &col);
    if (out.len > (1u << 20))
      vw_flush(&out, stdout);
  }
  vw_flush(&out, stdout);
  pi_sbuf_free(&out);
  pi_sbuf_free(&raw);
  vw_pack_free(pk);
  if (!ok || !vw_iter_close("show", &it))
    return 2;
  if (!shown && n)
    fprintf(stderr, "pitrace show: no call of the %zu matches the filters\n", n);
  return 0;
}

/* The functions a comma-separated list of patterns matches, into ok[]
 * (or'ed); false after a one-line error naming a pattern that matches
 * none (or an empty one). */
static bool api_list(const char *list, bool *ok)
{
  for (const char *p = list;; p++) {
    size_t len = strcspn(p, ",");
    char glob[256];
    bool match[PI_API_COUNT];
    if (!len || len >= sizeof glob) {
      pt_verb_error("show", "--api '%s': %s", list,
                    len ? "a pattern too long" : "an empty pattern (give GLOB or GLOB,GLOB)");
      return false;
    }
    snprintf(glob, sizeof glob, "%.*s", (int)len, p);
    if (!pi_api_glob(glob, match)) {
      pt_verb_error("show", "--api '%s' matches no PI function", glob);
      return false;
    }
    for (uint32_t a = 0; a < PI_API_COUNT; a++)
      ok[a] |= match[a];
    p += len;
    if (!*p)
      return true;
  }
}

/* Whether thread number `t` made calls in the session; the numbers it
 * has into `have` ("1-5", "2": a forked child's first thread is not 1). */
static bool has_thread(vw_session *s, int64_t t, char *have, size_t n_have)
{
  size_t n = 0, l = 0;
  pt_thread *v = pt_threads(vw_db(s), s->id, &n);
  bool found = false;
  *have = 0;
  for (size_t i = 0; i < n; i++) {
    size_t j = i; /* a run of numbers in a row: i..j */
    while (j + 1 < n && v[j + 1].idx == v[j].idx + 1)
      j++;
    found = found || (t >= v[i].idx && t <= v[j].idx);
    if (l < n_have && j > i)
      l += (size_t)snprintf(have + l, n_have - l, "%s%d-%d", i ? ", " : "", v[i].idx, v[j].idx);
    else if (l < n_have)
      l += (size_t)snprintf(have + l, n_have - l, "%s%d", i ? ", " : "", v[i].idx);
    i = j;
  }
  free(v);
  return found;
}

int pt_show(int argc, char **argv)
{
  int64_t session = -1;
  bool compact = false;
  const char *seq = NULL;
  filter f = {.thread = -1};
  const pt_opt opts[] = {{"--session", PT_OPT_INT, &session},
                         {"--compact", PT_OPT_FLAG, &compact},
                         {"--api", PT_OPT_STR, &f.api_glob},
                         {"--thread", PT_OPT_INT, &f.thread}, {"--seq", PT_OPT_STR, &seq},
                         {"--errors", PT_OPT_FLAG, &f.errors}, {NULL, PT_OPT_FLAG, NULL}};
  pt_args a;
  int rc = pt_parse(argc, argv, usage, opts, 1, 1, &a);
  if (rc)
    return rc == 1 ? 0 : 2;
  f.lo = 1;
  f.hi = INT64_MAX;
  if (seq && !parse_range(seq, &f.lo, &f.hi)) {
    pt_verb_error("show", "--seq wants A..B, A.., ..B or N, not '%s'", seq);
    return 2;
  }
  if (f.thread != -1 && f.thread < 1) {
    pt_verb_error("show", "--thread wants a thread's number, 1 or more (1 is the first), not %lld",
                  (long long)f.thread);
    return 2;
  }
  bool api_ok[PI_API_COUNT] = {false};
  f.api_ok = api_ok;
  if (f.api_glob && !api_list(f.api_glob, api_ok)) {
    return 2;
  }
  vw_session s;
  if (!vw_session_open("show", a.pos[0], session, VW_STREAM | VW_NOTES, &s))
    return 2;
  char have[256];
  if (f.thread > 0 && !has_thread(&s, f.thread, have, sizeof have)) {
    pt_verb_error("show", "--thread %lld: session %lld has no such thread (its threads: %s)",
                  (long long)f.thread, (long long)s.id, *have ? have : "none");
    vw_session_close(&s);
    return 2;
  }
  rc = show(&s, &f, compact);
  vw_session_close(&s);
  return rc;
}
