/*
 * viewer_stats.c: `pitrace stats`: per API the count, total, mean, p50, p99
 * and max time and the errors; per kernel the launches and their time; the
 * bytes moved each way. The report shows the same numbers (vw_stats_compute).
 * The calls are read once, in seq order, and not held (vw_iter).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "pitrace_viewer.h"
#include "viewer_common.h"

static const char usage[] =
    "usage: pitrace stats DB|DIR... [--session N]\n"
    "\n"
    "Summarises a session: per API the calls, total, mean, median (p50), p99 and\n"
    "longest time and the errors; per kernel (named by its piKernelCreate) the\n"
    "launches and the time spent launching; the bytes moved from host to device\n"
    "(writes, buffers created with host data, USM copies from the host, fills,\n"
    "maps for writing) and from device to host (reads, USM copies to the host,\n"
    "maps for reading). With device times (pitrace record --profile): per kernel\n"
    "the commands timed and their device time (total, mean, p50, p99, max), and\n"
    "per transfer API the commands, bytes, device time and GB/s.\n"
    "\n"
    "Given a directory (pitrace record -o DIR: every session of its *.db files) or\n"
    "several files (up to 4 arguments), it prints per process a\n"
    "heading (pid, command, session and label, start on the shared clock,\n"
    "duration) with that process's figures, then the figures over all processes.\n"
    "\n"
    "  --session N   the session (default: the file's last; one file only)\n";

/* Puts the element of rank k (from 0) of v[0..n) at v[k], the smaller ones
 * before it, the larger after (Hoare's selection, the median of three as
 * the pivot: equal values split evenly, so many equal durations cost no
 * more than distinct ones). A sort only for two percentiles cost a third
 * of `pitrace stats` on a million calls. */
static void select_rank(int64_t *v, size_t n, size_t k)
{
  size_t lo = 0, hi = n - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int64_t a = v[lo], b = v[mid], c = v[hi];
    int64_t pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
    size_t i = lo, j = hi;
    while (i <= j) {
      while (v[i] < pivot)
        i++;
      while (v[j] > pivot)
        j--;
      if (i <= j) {
        int64_t t = v[i];
        v[i] = v[j];
        v[j] = t;
        i++;
        if (j == 0)
          break;
        j--;
      }
    }
    if (k <= j)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      return; /* between the two parts: equal to the pivot */
  }
}

/* The nearest-rank percentile's rank (from 0) among n values. */
static size_t rank_of(size_t n, int pct)
{
  size_t rank = (n * (size_t)pct + 99) / 100;
  return rank ? rank - 1 : 0;
}

/* count, total, mean, p50 (nearest rank), p99 and max of v[0..n), which
 * it reorders. */
static void figures(int64_t *v, size_t n, vw_dev_stat *d)
{
  memset(d, 0, sizeof *d);
  if (!n)
    return;
  d->count = (int64_t)n;
  d->max = v[0];
  for (size_t k = 0; k < n; k++) {
    d->total = vw_add_ns(d->total, v[k]);
    if (v[k] > d->max)
      d->max = v[k];
  }
  d->mean = d->total / (int64_t)n;
  size_t r50 = rank_of(n, 50), r99 = rank_of(n, 99);
  select_rank(v, n, r50);
  d->p50 = v[r50];
  /* The ranks above r50 are in v[r50 + 1..n). */
  if (r99 > r50) {
    select_rank(v + r50 + 1, n - r50 - 1, r99 - r50 - 1);
    d->p99 = v[r99];
  } else {
    d->p99 = d->p50;
  }
}

static int cmp_api(const void *a, const void *b)
{
  const vw_api_stat *x = a, *y = b;
  return x->total > y->total ? -1 : x->total < y->total ? 1 : (x->api > y->api) - (x->api < y->api);
}

/* Durations of returned calls, grouped by API, and errors per API. */
typedef struct durations {
  int64_t *v[PI_API_COUNT];
  size_t n[PI_API_COUNT], cap[PI_API_COUNT];
  int64_t errors[PI_API_COUNT];
} durations;

static bool add_duration(durations *d, const pt_call *c)
{
  if (!c->returned || c->api >= PI_API_COUNT)
    return true;
  int64_t *v = pt_grow(d->v[c->api], &d->cap[c->api], d->n[c->api], sizeof *v);
  if (!v)
    return false;
  d->v[c->api] = v;
  v[d->n[c->api]++] = c->dur_ns;
  d->errors[c->api] += c->result != PI_SUCCESS;
  return true;
}

/* Per-API figures: each API's durations sorted, read off. */
static bool api_stats(durations *d, vw_stats *st)
{
  st->apis = calloc(PI_API_COUNT, sizeof *st->apis);
  if (!st->apis)
    return false;
  for (uint32_t a = 0; a < PI_API_COUNT; a++) {
    size_t n = d->n[a];
    if (!n)
      continue;
    vw_dev_stat f;
    figures(d->v[a], n, &f);
    st->apis[st->napis++] = (vw_api_stat){a, f.count, d->errors[a], f.total, f.mean, f.p50,
                                          f.p99, f.max};
  }
  return true;
}

static void count_call(const pt_call *c, vw_stats *st)
{
  st->calls++;
  st->unreturned += !c->returned;
  st->errors += c->returned && c->result != PI_SUCCESS;
  st->total_ns = vw_add_ns(st->total_ns, c->returned ? c->dur_ns : 0);
}

/* The kernel group of a launch: kernels of one name count together (across
 * sessions too); `by_kernel` maps the session's kernel ids to groups. */
static int64_t kernel_group(vw_stats *st, const vw_kernels *names, vw_map *by_kernel,
                            size_t *cap, const pt_call *c)
{
  int64_t g;
  if (vw_map_get(by_kernel, vw_arg_int(c, 1), &g))
    return g;
  const char *name = vw_kernel_of(names, c);
  for (size_t k = 0; name && k < st->nkernels; k++)
    if (st->kernels[k].name && strcmp(st->kernels[k].name, name) == 0) {
      vw_map_put(by_kernel, vw_arg_int(c, 1), (int64_t)k);
      return (int64_t)k;
    }
  vw_kernel_stat *v = pt_grow(st->kernels, cap, st->nkernels, sizeof *v);
  if (!v)
    return -1;
  st->kernels = v;
  st->kernels[st->nkernels] = (vw_kernel_stat){name ? strdup(name) : NULL, 0, 0,
                                               {0, 0, 0, 0, 0, 0}};
  vw_map_put(by_kernel, vw_arg_int(c, 1), (int64_t)st->nkernels);
  return (int64_t)st->nkernels++;
}


/* Device times, gathered over the sessions: each one's duration and its
 * group (a kernel group k >= 0, -2 - api for a transfer API, -1 none). */
typedef struct devtimes {
  int64_t *dur, *group;
  size_t n;
} devtimes;

/* The device times of the session up to call c (c included when c is
 * given) into d, grouped: launches by their kernel group, the rest by API
 * (their bytes added to st->transfers[api]); *next is the first not added. */
static void group_devtimes(const vw_session *s, size_t *next, const pt_call *c,
                           const vw_map *by_kernel, const vw_map *pixels, devtimes *d,
                           vw_stats *st)
{
  for (; *next < s->ndevtimes && (!c || s->devtimes[*next].seq <= c->seq); ++*next) {
    int64_t group = -1, g;
    if (c && c->seq == s->devtimes[*next].seq) {
      if (vw_is_launch(c->api)) {
        if (vw_map_get(by_kernel, vw_arg_int(c, 1), &g))
          group = g;
      } else if (c->api < PI_API_COUNT) {
        vw_transfer_stat *t = &st->transfers[c->api];
        int64_t bytes = vw_transfer_bytes(c, pixels), ns = s->devtimes[*next].dur_ns;
        group = -2 - (int64_t)c->api;
        t->bytes += bytes;
        if (ns >= VW_UNTIMED_NS) {
          t->timed_bytes += bytes;
          t->timed_ns = vw_add_ns(t->timed_ns, ns);
        }
      }
    }
    d->dur[d->n] = s->devtimes[*next].dur_ns;
    d->group[d->n++] = group;
    st->ndevtimes++;
    st->untimed += s->devtimes[*next].dur_ns < VW_UNTIMED_NS;
  }
}

/* Device-time figures per kernel group and per transfer API. */
static void device_stats(const devtimes *d, vw_stats *st)
{
  int64_t *v = d->dur + d->n; /* scratch: the arrays are twice as long */
  for (size_t k = 0; k < st->nkernels; k++) {
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
      if (d->group[i] == (int64_t)k)
        v[n++] = d->dur[i];
    figures(v, n, &st->kernels[k].dev);
  }
  for (uint32_t a = 0; a < PI_API_COUNT; a++) {
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
      if (d->group[i] == -2 - (int64_t)a)
        v[n++] = d->dur[i];
    if (!n)
      continue;
    vw_transfer_stat *t = &st->transfers[st->ntransfers++], sums = st->transfers[a];
    t->api = a;
    figures(v, n, &t->dev);
    t->bytes = sums.bytes;
    t->timed_bytes = sums.timed_bytes;
    t->timed_ns = sums.timed_ns;
  }
  /* Slots past ntransfers were only sums: clear them. */
  for (size_t k = st->ntransfers; k < PI_API_COUNT; k++)
    st->transfers[k].bytes = st->transfers[k].timed_bytes = st->transfers[k].timed_ns = 0;
}

/* A launch, counted for its kernel's name. */
static bool kernel_launch(const pt_call *c, const vw_kernels *names, vw_stats *st,
                          vw_map *by_kernel, size_t *cap)
{
  if (!vw_is_launch(c->api) || !c->returned)
    return true;
  int64_t g = kernel_group(st, names, by_kernel, cap, c);
  if (g < 0)
    return false;
  st->kernels[g].launches++;
  st->kernels[g].total = vw_add_ns(st->kernels[g].total, c->dur_ns);
  return true;
}

static void bytes_moved(const pt_call *c, const vw_map *pixels, vw_stats *st)
{
  int64_t up, down;
  vw_call_bytes(c, pixels, &up, &down);
  st->h2d += up;
  st->d2h += down;
  st->h2d_calls += up > 0;
  st->d2h_calls += down > 0;
}

/* One session's calls, read once, into the figures. */
static bool session_stats(const char *verb, const vw_session *s, vw_stats *st, durations *dur,
                          devtimes *d, size_t *cap)
{
  vw_iter it;
  if (!vw_iter_open(verb, s, &it))
    return false;
  /* Kernel ids are the session's own; their names join the groups. */
  vw_kernels names = {0};
  vw_map by_kernel = {0}, pixels = {0};
  size_t next_dev = 0;
  bool ok = true;
  const pt_call *c;
  while (ok && (c = vw_iter_next(&it))) {
    count_call(c, st);
    vw_kernels_note(&names, c);
    ok = add_duration(dur, c) && kernel_launch(c, &names, st, &by_kernel, cap);
    if (ok && d->dur)
      group_devtimes(s, &next_dev, c, &by_kernel, &pixels, d, st);
    vw_note_image(c, &pixels);
    bytes_moved(c, &pixels, st);
  }
  if (ok && d->dur)
    group_devtimes(s, &next_dev, NULL, &by_kernel, &pixels, d, st);
  if (!ok)
    pt_verb_error(verb, "out of memory reading %s", s->path);
  ok = vw_iter_close(verb, &it) && ok;
  vw_map_free(&by_kernel);
  vw_map_free(&pixels);
  vw_kernels_free(&names);
  return ok;
}

static int cmp_kernel(const void *a, const void *b)
{
  const vw_kernel_stat *x = a, *y = b;
  return x->total > y->total ? -1 : x->total < y->total;
}

static int cmp_transfer(const void *a, const void *b)
{
  const vw_transfer_stat *x = a, *y = b;
  return x->dev.total > y->dev.total ? -1 : x->dev.total < y->dev.total;
}

bool vw_stats_compute_all(const char *verb, const vw_session *ss, size_t ns, vw_stats *st)
{
  memset(st, 0, sizeof *st);
  size_t ndev = 0, cap = 0;
  for (size_t k = 0; k < ns; k++)
    ndev += ss[k].ndevtimes;
  devtimes d = {0};
  durations *dur = calloc(1, sizeof *dur);
  bool ok = dur != NULL;
  if (ok && ndev) {
    d.dur = malloc(2 * ndev * sizeof *d.dur);
    d.group = malloc(ndev * sizeof *d.group);
    st->transfers = calloc(PI_API_COUNT, sizeof *st->transfers);
    ok = d.dur && d.group && st->transfers;
  }
  if (!ok)
    pt_verb_error(verb, "out of memory");
  for (size_t k = 0; ok && k < ns; k++)
    ok = session_stats(verb, &ss[k], st, dur, &d, &cap);
  if (ok && !api_stats(dur, st)) {
    pt_verb_error(verb, "out of memory");
    ok = false;
  }
  if (ok && ndev)
    device_stats(&d, st);
  free(d.dur);
  free(d.group);
  for (uint32_t a = 0; dur && a < PI_API_COUNT; a++)
    free(dur->v[a]);
  free(dur);
  if (!ok) {
    vw_stats_free(st);
    return false;
  }
  qsort(st->apis, st->napis, sizeof *st->apis, cmp_api);
  if (st->nkernels)
    qsort(st->kernels, st->nkernels, sizeof *st->kernels, cmp_kernel);
  if (st->ntransfers)
    qsort(st->transfers, st->ntransfers, sizeof *st->transfers, cmp_transfer);
  return true;
}

bool vw_stats_compute(const char *verb, const vw_session *s, vw_stats *st)
{
  return vw_stats_compute_all(verb, s, 1, st);
}

void vw_stats_free(vw_stats *st)
{
  for (size_t k = 0; k < st->nkernels; k++)
    free(st->kernels[k].name);
  free(st->apis);
  free(st->kernels);
  free(st->transfers);
  memset(st, 0, sizeof *st);
}

/* ---- Printing ------------------------------------------------------------------------ */

static const char *bytes_text(char buf[48], int64_t n)
{
  if (n < 1024)
    snprintf(buf, 48, "%lld bytes", (long long)n);
  else if (n < (1 << 20))
    snprintf(buf, 48, "%lld bytes (%.1f KiB)", (long long)n, (double)n / 1024);
  else
    snprintf(buf, 48, "%lld bytes (%.1f MiB)", (long long)n, (double)n / (1 << 20));
  return buf;
}

static void print_apis(const vw_stats *st, const vw_colors *k)
{
  printf("%s%-38s %9s %11s %11s %11s %11s %11s %7s%s\n", k->bold, "API", "calls", "total",
         "mean", "p50", "p99", "max", "errors", k->off);
  for (size_t i = 0; i < st->napis; i++) {
    const vw_api_stat *a = &st->apis[i];
    char n[32], d[6][32];
    printf("%-38s %9lld %11s %11s %11s %11s %11s %s%7lld%s\n", vw_api_name(a->api, n),
           (long long)a->count, vw_dur(d[0], a->total), vw_dur(d[1], a->mean),
           vw_dur(d[2], a->p50), vw_dur(d[3], a->p99), vw_dur(d[4], a->max),
           a->errors ? k->red : "", (long long)a->errors, a->errors ? k->off : "");
  }
}

static void print_kernels(const vw_stats *st, const vw_colors *k, bool devtimes)
{
  if (devtimes)
    printf("\n%s%-38s %9s %11s %9s %11s %11s %11s %11s %11s%s\n", k->bold, "kernel", "launches",
           "enqueue", "timed", "device", "mean", "p50", "p99", "max", k->off);
  else
    printf("\n%s%-38s %9s %11s%s\n", k->bold, "kernel", "launches", "total", k->off);
  if (!st->nkernels)
    printf("(no kernel launches)\n");
  for (size_t i = 0; i < st->nkernels; i++) {
    char d[6][32];
    const vw_kernel_stat *s = &st->kernels[i];
    printf("%-38s %9lld %11s", s->name ? s->name : "(not made by piKernelCreate)",
           (long long)s->launches, vw_dur(d[0], s->total));
    if (devtimes && s->dev.count)
      printf(" %9lld %11s %11s %11s %11s %11s", (long long)s->dev.count,
             vw_dur(d[1], s->dev.total), vw_dur(d[2], s->dev.mean), vw_dur(d[3], s->dev.p50),
             vw_dur(d[4], s->dev.p99), vw_dur(d[5], s->dev.max));
    else if (devtimes)
      printf(" %9d %11s", 0, "-");
    printf("\n");
  }
}

static void print_transfers(const vw_stats *st, const vw_colors *k)
{
  printf("\n%s%-38s %9s %15s %11s %11s %11s %9s%s\n", k->bold, "transfer (device time)",
         "commands", "bytes", "device", "mean", "max", "GB/s", k->off);
  if (!st->ntransfers)
    printf("(no transfers timed)\n");
  for (size_t i = 0; i < st->ntransfers; i++) {
    const vw_transfer_stat *t = &st->transfers[i];
    char n[32], d[3][32], rate[32];
    if (t->timed_bytes && t->timed_ns > 0) /* placeholder times (rusticl's 1 ns) left out */
      snprintf(rate, sizeof rate, "%.2f", (double)t->timed_bytes / (double)t->timed_ns);
    else
      snprintf(rate, sizeof rate, "-");
    printf("%-38s %9lld %15lld %11s %11s %11s %9s\n", vw_api_name(t->api, n),
           (long long)t->dev.count, (long long)t->bytes, vw_dur(d[0], t->dev.total),
           vw_dur(d[1], t->dev.mean), vw_dur(d[2], t->dev.max), rate);
  }
}

/* The figures' tables: APIs, kernels, transfers (with device times), how
 * the device times were placed, bytes moved. */
static void print_body(const vw_stats *st, const vw_colors *k, bool devtimes,
                       const char *clock_text)
{
  char b1[48], b2[48];
  print_apis(st, k);
  print_kernels(st, k, devtimes);
  if (devtimes)
    print_transfers(st, k);
  if (devtimes && st->untimed)
    printf("\n%lld of %lld device times are under %d ns, shorter than any device command "
           "takes: the driver did not time those commands (no GB/s made from them)\n",
           (long long)st->untimed, (long long)st->ndevtimes, VW_UNTIMED_NS);
  if (clock_text)
    printf("\n%s\n", clock_text);
  printf("\n%sbytes moved%s\n", k->bold, k->off);
  printf("host to device  %s in %lld call%s\n", bytes_text(b1, st->h2d),
         (long long)st->h2d_calls, st->h2d_calls == 1 ? "" : "s");
  printf("device to host  %s in %lld call%s\n", bytes_text(b2, st->d2h),
         (long long)st->d2h_calls, st->d2h_calls == 1 ? "" : "s");
}

static int stats(vw_session *s)
{
  vw_stats st;
  if (!vw_stats_compute("stats", s, &st))
    return 2;
  vw_colors k = vw_colors_for(stdout);
  char d1[32], d2[32];
  bool at_least; /* still recording: ">=" the end of its last call stored */
  int64_t dur = vw_session_duration(s, &at_least);
  printf("session %lld of %s: %lld call%s, %s%s recorded, %s in PI calls; %lld failed, %lld "
         "never returned\n\n", (long long)s->id, s->path, (long long)st.calls,
         st.calls == 1 ? "" : "s", at_least && dur >= 0 ? ">=" : "",
         vw_dur(d1, dur), vw_dur(d2, st.total_ns), (long long)st.errors,
         (long long)st.unreturned);
  print_body(&st, &k, s->ndevtimes > 0, vw_devtime_clock_text(s));
  vw_stats_free(&st);
  return 0; /* what could not be written is main's to say (cli/pitrace.c) */
}

/* Several sessions (a record directory, several files): per process a
 * heading and its figures, then the figures over all of them. */
static int stats_set(vw_set *set)
{
  vw_colors k = vw_colors_for(stdout);
  bool devtimes = false, end_at_least = false; /* a session still recording */
  int64_t end = 0;
  for (size_t i = 0; i < set->n; i++) {
    vw_session *s = &set->s[i];
    vw_stats st;
    if (!vw_stats_compute("stats", s, &st))
      return 2;
    char d1[32], d2[32], d3[32], command[sizeof s->info.command], label[sizeof s->info.label];
    bool at_least;
    int64_t dur = vw_session_duration(s, &at_least);
    /* Each on its line, as sessions prints them (python3 -c "..." has newlines). */
    snprintf(command, sizeof command, "%s", s->info.command);
    snprintf(label, sizeof label, "%s", s->info.label);
    printf("%s%s== process %zu of %zu: pid %lld: %s%s\n", i ? "\n" : "", k.bold, i + 1, set->n,
           (long long)s->info.pid, pt_one_line(command), k.off);
    printf("session %lld of %s%s%s%s: starts at +%s, %s%s recorded; %lld call%s, %s in PI "
           "calls; %lld failed, %lld never returned\n\n", (long long)s->id, s->path,
           label[0] ? " (label " : "", pt_one_line(label), label[0] ? ")" : "",
           vw_dur(d1, set->offset_ns[i]), at_least && dur >= 0 ? ">=" : "", vw_dur(d2, dur),
           (long long)st.calls,
           st.calls == 1 ? "" : "s", vw_dur(d3, st.total_ns), (long long)st.errors,
           (long long)st.unreturned);
    print_body(&st, &k, s->ndevtimes > 0, vw_devtime_clock_text(s));
    vw_stats_free(&st);
    devtimes |= s->ndevtimes > 0;
    if (set->offset_ns[i] + dur > end)
      end = set->offset_ns[i] + dur;
    end_at_least |= at_least;
  }
  vw_stats st;
  if (!vw_stats_compute_all("stats", set->s, set->n, &st))
    return 2;
  char d1[32], d2[32];
  printf("\n%s== all %zu process%s%s\n", k.bold, set->n, set->n == 1 ? "" : "es", k.off);
  printf("%zu session%s over %s%s: %lld call%s, %s in PI calls; %lld failed, %lld never "
         "returned\n\n",
         set->n, set->n == 1 ? "" : "s", end_at_least ? ">=" : "", vw_dur(d1, end),
         (long long)st.calls,
         st.calls == 1 ? "" : "s", vw_dur(d2, st.total_ns), (long long)st.errors,
         (long long)st.unreturned);
  print_body(&st, &k, devtimes, NULL);
  vw_stats_free(&st);
  return 0; /* what could not be written is main's to say (cli/pitrace.c) */
}

int pt_stats(int argc, char **argv)
{
  int64_t session = -1;
  const pt_opt opts[] = {{"--session", PT_OPT_INT, &session}, {NULL, PT_OPT_FLAG, NULL}};
  pt_args a;
  int rc = pt_parse(argc, argv, usage, opts, 1, PT_ARGS_MAX, &a);
  if (rc)
    return rc == 1 ? 0 : 2;
  if (a.npos == 1 && !vw_is_dir(a.pos[0])) {
    vw_session s;
    if (!vw_session_open("stats", a.pos[0], session, VW_STREAM, &s))
      return 2;
    rc = stats(&s);
    vw_session_close(&s);
    return rc;
  }
  if (session >= 0) {
    pt_verb_error("stats", "--session picks a session of one file, and %s",
                  a.npos > 1 ? "several were given" : "a directory was given");
    return 2;
  }
  vw_set *set = calloc(1, sizeof *set);
  if (!set) {
    pt_verb_error("stats", "out of memory");
    return 2;
  }
  bool ok = vw_set_open_paths("stats", set, a.pos, (size_t)a.npos, VW_STREAM);
  rc = 2;
  if (ok) {
    vw_set_place(set);
    rc = stats_set(set);
  }
  vw_set_close(set);
  free(set);
  return rc;
}
