/*
 * bench_replay: what `pitrace replay` costs.
 *
 *  1. Throughput, without device time: a session of N calls (default one
 *     million: piQueueFinish, piKernelSetArg with 4 bytes and a blocking
 *     piEnqueueMemBufferWrite of 16 bytes, in turn) recorded on the minimal
 *     plugin bench/pi_null.c through the recording shim, replayed onto the
 *     same plugin with `pitrace replay --plugin` (its --stats line gives
 *     the replay's own time, apart from loading the session).
 *     Each round replays the same session once; min / median / max over
 *     the rounds.
 *  2. Wall time against the original run on real workloads (vadd and
 *     pipeline with large N, OpenCL C programs, on the device that
 *     SYCL_DEVICE_FILTER=opencl selects, --device to change it: on a GPU
 *     host the runtime's default is CUDA, where OpenCL C does not build).
 *     A first untimed run and recording (PoCL builds its kernel cache);
 *     then in each round the application alone, the application recorded
 *     (SYCL_PI_RECORD, data all) and `pitrace replay` of the first
 *     recording, in an order rotated from round to round; the ratios to the
 *     application alone are taken within a round.
 *
 * Usage: bench_replay [--calls N] [--rounds R] [--device FILTER]
 *                     [--vadd N] [--pipeline N]
 *        bench_replay --make-session PATH N   (just write the null session)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"
#include "pi/pi.h"

typedef bool (*wrap_fn)(const pi_plugin *, const char *, const char *, const char *,
                        pi_plugin *);

static char bindir[4096], libdir[4200];

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* libdir's plugin `name`, initialised into p (exits when it cannot be). */
static void *plugin_in_libdir(const char *name, pi_plugin *p, char *path, size_t pathn)
{
  snprintf(path, pathn, "%s/%s", libdir, name);
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  void *init = dl ? dlsym(dl, "piPluginInit") : NULL;
  *p = (pi_plugin){.PiVersion = _PI_H_VERSION_STRING};
  if (init && ((pi_plugin_init_fn)(uintptr_t)init)(p) == PI_SUCCESS)
    return dl;
  fprintf(stderr, "bench_replay: %s is not a usable plugin (%s)\n", path,
          dl ? "piPluginInit" : dlerror());
  exit(2);
}

/* Records n calls on pi_null into db (in this process: the shim reads
 * SYCL_PI_RECORD once). */
static int make_session(const char *db, long n)
{
  setenv("SYCL_PI_RECORD", db, 1);
  pi_plugin null, out;
  char path[8192];
  void *dl = plugin_in_libdir("libpi_null.so", &null, path, sizeof path);
  char shim_path[8192];
  snprintf(shim_path, sizeof shim_path, "%s/%s", libdir, "libpi_shim.so");
  void *shim = dlopen(shim_path, RTLD_LAZY | RTLD_LOCAL);
  void *sym = shim ? dlsym(shim, "pitrace_shim_wrap") : NULL;
  wrap_fn wrap = (wrap_fn)(uintptr_t)sym;
  if (!sym || !wrap(&null, "libpi_null.so", path, "opencl", &out)) {
    fprintf(stderr, "bench_replay: cannot wrap pi_null with the recording shim\n");
    return 2;
  }
  const struct pi_function_table *t = &out.PiFunctionTable;
  pi_queue q = ((pi_queue(*)(void))(uintptr_t)dlsym(dl, "pi_null_queue"))();
  pi_kernel k = (pi_kernel)(uintptr_t)0x1000;
  pi_mem m = (pi_mem)(uintptr_t)0x2000;
  static const int value = 7;
  static const unsigned char data[16] = {1, 2, 3};
  for (long i = 0; i < n; i++) {
    if (i % 3 == 0)
      t->piQueueFinish(q);
    else if (i % 3 == 1)
      t->piKernelSetArg(k, 0, sizeof value, &value);
    else
      t->piEnqueueMemBufferWrite(q, m, 1, 0, sizeof data, data, 0, NULL, NULL);
  }
  t->piTearDown(NULL); /* closes the session */
  return 0;
}

/* Runs a shell command; its wall time in seconds (negative on failure).
 * Its stdout (and stderr, when the command says 2>&1) goes to `out` when
 * given. */
static double timed(const char *cmd, char *out, size_t outn)
{
  double t0 = now_s();
  FILE *p = popen(cmd, "r");
  size_t len = 0;
  char buf[4096];
  while (p && fgets(buf, sizeof buf, p))
    if (out && len + strlen(buf) < outn)
      len += (size_t)snprintf(out + len, outn - len, "%s", buf);
  int st = p ? pclose(p) : -1;
  double t = now_s() - t0;
  return st == 0 ? t : -1;
}

static int failures; /* measurements that could not be made: exit status 1 */
static long rounds = 5;
static const char *filter = "opencl";

/* Removes a session database with SQLite's side files. */
static void remove_db(const char *db)
{
  static const char *const side[] = {"", "-wal", "-shm", "-journal"};
  for (size_t i = 0; i < sizeof side / sizeof *side; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s%s", db, side[i]);
    unlink(path);
  }
}

/* "min / median / max" of v[0..n) with fmt. */
static const char *mmm(double *v, size_t n, const char *fmt, char *out, size_t outn)
{
  if (!n)
    return "failed";
  double lo, med, hi;
  bench_mmm(v, n, &lo, &med, &hi);
  char a[32], b[32], c[32];
  snprintf(a, sizeof a, fmt, lo);
  snprintf(b, sizeof b, fmt, med);
  snprintf(c, sizeof c, fmt, hi);
  if (n == 1)
    snprintf(out, outn, "%s", b);
  else
    snprintf(out, outn, "%s / %s / %s", a, b, c);
  return out;
}

static void throughput(long calls)
{
  char db[] = "/tmp/pitrace-bench-replay-XXXXXX", cmd[16384], out[8192];
  close(mkstemp(db));
  unlink(db);
  snprintf(cmd, sizeof cmd, "'%s/bench_replay' --make-session %s %ld", bindir, db, calls);
  double rec = timed(cmd, NULL, 0);
  double *rate = calloc((size_t)rounds, sizeof *rate), *ms = calloc((size_t)rounds, sizeof *ms),
         *load = calloc((size_t)rounds, sizeof *load), *wall = calloc((size_t)rounds, sizeof *wall);
  size_t ok = 0;
  unsigned long long n = 0;
  for (long r = 0; rec >= 0 && r < rounds; r++) {
    snprintf(cmd, sizeof cmd,
             "'%s/pitrace' replay --plugin '%s/libpi_null.so' --stats %s 2>&1 >/dev/null", bindir,
             libdir, db);
    out[0] = 0;
    double w = timed(cmd, out, sizeof out);
    const char *stats = strstr(out, "pitrace replay: ");
    if (w < 0 || !stats ||
        sscanf(stats, "pitrace replay: %llu calls replayed in %lf ms (%lf calls/s); loading the "
               "session took %lf ms", &n, &ms[ok], &rate[ok], &load[ok]) != 4 || !n) {
      fprintf(stderr, "bench_replay: %s failed: %s\n", cmd, out);
      failures++;
      continue;
    }
    rate[ok] /= 1e6;
    wall[ok++] = w;
  }
  char c[4][128];
  printf("## Replay throughput, no device time\n\n"
         "%ld calls (piQueueFinish, piKernelSetArg 4 bytes, blocking 16-byte "
         "piEnqueueMemBufferWrite in turn) recorded through the shim on the stand-in plugin "
         "(bench/pi_null.c) in %.2f s, replayed onto it with `pitrace replay --plugin` once a "
         "round; min / median / max over %ld rounds:\n\n"
         "| calls replayed | replay M calls/s | replay ms | loading the session ms | whole "
         "command s |\n|---|---|---|---|---|\n| %llu | %s | %s | %s | %s |\n\n",
         calls, rec, rounds, n, mmm(rate, ok, "%.2f", c[0], sizeof c[0]),
         mmm(ms, ok, "%.1f", c[1], sizeof c[1]), mmm(load, ok, "%.1f", c[2], sizeof c[2]),
         mmm(wall, ok, "%.2f", c[3], sizeof c[3]));
  if (rec < 0) {
    fprintf(stderr, "bench_replay: recording the session failed\n");
    failures++;
  }
  free(rate);
  free(ms);
  free(load);
  free(wall);
  remove_db(db);
}

enum { ORIGINAL, RECORDED, REPLAY, NWAYS };

static void workload(const char *prog, const char *arg)
{
  char db[] = "/tmp/pitrace-bench-replay-XXXXXX", db2[] = "/tmp/pitrace-bench-replay-XXXXXX";
  char cmd[NWAYS][16384], first[16384], out[4096] = "";
  close(mkstemp(db));
  close(mkstemp(db2));
  unlink(db);
  unlink(db2);
  snprintf(cmd[ORIGINAL], sizeof cmd[0], "SYCL_DEVICE_FILTER='%s' '%s/%s' %s", filter, bindir,
           prog, arg);
  snprintf(cmd[RECORDED], sizeof cmd[0],
           "rm -f %s %s-wal %s-shm; SYCL_PI_RECORD=%s SYCL_DEVICE_FILTER='%s' '%s/%s' %s "
           ">/dev/null", db2, db2, db2, db2, filter, bindir, prog, arg);
  snprintf(cmd[REPLAY], sizeof cmd[0], "'%s/pitrace' replay %s >/dev/null", bindir, db);
  /* Untimed: the application once (its output names the device) and the
   * recording that every round replays. */
  snprintf(first, sizeof first, "SYCL_PI_RECORD=%s SYCL_DEVICE_FILTER='%s' '%s/%s' %s", db,
           filter, bindir, prog, arg);
  double warm = timed(first, out, sizeof out);
  double (*t)[NWAYS] = calloc((size_t)rounds, sizeof *t);
  for (long r = 0; warm >= 0 && r < rounds; r++)
    for (int k = 0; k < NWAYS; k++) {
      int w = (int)((k + r) % NWAYS);
      char full[16400];
      int len = snprintf(full, sizeof full, "%.16383s%s", cmd[w],
                         w == ORIGINAL ? " >/dev/null" : "");
      t[r][w] = len > 0 && (size_t)len < sizeof full ? timed(full, NULL, 0) : -1;
    }
  double ratio[2][1000], orig[1000];
  size_t nr[2] = {0, 0}, no = 0;
  for (long r = 0; warm >= 0 && r < rounds; r++) {
    if (t[r][ORIGINAL] > 0)
      orig[no++] = t[r][ORIGINAL];
    for (int w = RECORDED; w <= REPLAY; w++)
      if (t[r][ORIGINAL] > 0 && t[r][w] > 0)
        ratio[w - 1][nr[w - 1]++] = t[r][w] / t[r][ORIGINAL];
  }
  const char *dev = strstr(out, " on \"");
  char c[3][128];
  printf("| %s %s | %.*s | %s | %s | %s |\n", prog, arg,
         dev ? (int)strcspn(dev + 4, "\n") : 1, dev ? dev + 4 : "?",
         mmm(orig, no, "%.3f", c[0], sizeof c[0]), mmm(ratio[0], nr[0], "%.2fx", c[1], sizeof c[1]),
         mmm(ratio[1], nr[1], "%.2fx", c[2], sizeof c[2]));
  if (warm < 0 || no < (size_t)rounds || nr[0] < (size_t)rounds || nr[1] < (size_t)rounds) {
    fprintf(stderr, "bench_replay: %s %s: a run failed (%s)\n", prog, arg,
            warm < 0 ? first : "see above");
    failures++;
  }
  free(t);
  remove_db(db);
  remove_db(db2);
}

int main(int argc, char **argv)
{
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return 2;
  self[n] = 0;
  snprintf(bindir, sizeof bindir, "%s", self);
  *strrchr(bindir, '/') = 0;
  snprintf(libdir, sizeof libdir, "%s/../lib", bindir);
  if (argc == 4 && strcmp(argv[1], "--make-session") == 0)
    return make_session(argv[2], atol(argv[3]));
  long calls = 1000000;
  const char *vadd_n = "4194304", *pipeline_n = "1048576";
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v && strcmp(argv[i], "--calls") == 0 && atol(v) > 0)
      calls = atol(v), i++;
    else if (v && strcmp(argv[i], "--rounds") == 0 && atol(v) > 0 && atol(v) <= 1000)
      rounds = atol(v), i++;
    else if (v && strcmp(argv[i], "--device") == 0 && !strchr(v, '\''))
      filter = v, i++;
    else if (v && strcmp(argv[i], "--vadd") == 0 && strspn(v, "0123456789") == strlen(v))
      vadd_n = v, i++;
    else if (v && strcmp(argv[i], "--pipeline") == 0 && strspn(v, "0123456789") == strlen(v))
      pipeline_n = v, i++;
    else {
      fprintf(stderr, "usage: bench_replay [--calls N] [--rounds R (1..1000)] [--device FILTER]\n"
                      "                    [--vadd N] [--pipeline N]\n"
                      "  defaults: 1000000 calls, 5 rounds, --device opencl (SYCL_DEVICE_FILTER "
                      "syntax:\n  vadd and pipeline are OpenCL C programs), vadd 4194304, "
                      "pipeline 1048576\n");
      return 2;
    }
  }
  bench_print_machine("bench_replay");
  printf("rounds: %ld\n\n", rounds);
  fflush(stdout);
  throughput(calls);
  printf("## Replay against the original run\n\n"
         "Wall time of the application alone, and of the application recorded (data all) and of "
         "`pitrace replay` of its recording as ratios to the application alone in the same "
         "round (the ways' order rotated from round to round); SYCL_DEVICE_FILTER=%s; min / "
         "median / max over %ld rounds:\n\n"
         "| workload | device | application alone s | recorded / alone | pitrace replay / "
         "alone |\n|---|---|---|---|---|\n",
         filter, rounds);
  fflush(stdout);
  workload("vadd", vadd_n);
  workload("pipeline", pipeline_n);
  printf("\nload average %.2f at the end%s\n", bench_load(),
         failures ? "; SOME RUNS FAILED (above)" : "");
  return failures ? 1 : 0;
}
