/*
 * bench_replay: what `pitrace replay` costs.
 *
 *  1. Throughput, without device time: a session of N calls (default one
 *     million: piQueueFinish, piKernelSetArg with 4 bytes and a blocking
 *     piEnqueueMemBufferWrite of 16 bytes, in turn) recorded on the minimal
 *     plugin bench/pi_null.c through the recording shim, replayed onto the
 *     same plugin with `pitrace replay --plugin` (its --stats line gives
 *     the replay's own time, apart from loading the session).
 *  2. Wall time against the original run on real workloads (vadd and
 *     pipeline with large N on the OpenCL device): the application alone,
 *     then `pitrace replay` of its recording, each the median of 3 runs.
 *
 * Usage: bench_replay [--calls N]
 *        bench_replay --make-session PATH N   (just write the null session)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
 * Its stdout goes to `out` when given. */
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

/* The middle of three runs of cmd (negative when one failed). */
static double median3(const char *cmd)
{
  double a = timed(cmd, NULL, 0), b = timed(cmd, NULL, 0), c = timed(cmd, NULL, 0);
  if (a < 0 || b < 0 || c < 0)
    return -1;
  double lo = a < b ? a : b, hi = a < b ? b : a;
  return c < lo ? lo : c > hi ? hi : c;
}

static int failures; /* measurements that could not be made: exit status 1 */

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

static void throughput(long calls)
{
  char db[] = "/tmp/pitrace-bench-replay-XXXXXX", cmd[16384], out[8192] = "";
  close(mkstemp(db));
  unlink(db);
  snprintf(cmd, sizeof cmd, "'%s/bench_replay' --make-session %s %ld", bindir, db, calls);
  double rec = timed(cmd, NULL, 0);
  snprintf(cmd, sizeof cmd, "'%s/pitrace' replay --plugin '%s/libpi_null.so' --stats %s 2>&1",
           bindir, libdir, db);
  double wall = timed(cmd, out, sizeof out);
  const char *stats = strstr(out, "pitrace replay: ");
  double ms = 0, rate = 0, load = 0;
  unsigned long long n = 0;
  if (stats)
    sscanf(stats, "pitrace replay: %llu calls replayed in %lf ms (%lf calls/s); loading the "
           "session took %lf ms", &n, &ms, &rate, &load);
  printf("null plugin: %ld calls recorded in %.2f s; replay: %llu calls in %.1f ms = %.2f M "
         "calls/s (loading the session %.1f ms, whole command %.2f s)%s\n",
         calls, rec, n, ms, rate / 1e6, load, wall, rec < 0 || wall < 0 || !n ? " FAILED" : "");
  failures += rec < 0 || wall < 0 || !n;
  remove_db(db);
}

static void workload(const char *prog, const char *arg)
{
  char db[] = "/tmp/pitrace-bench-replay-XXXXXX", cmd[16384];
  close(mkstemp(db));
  unlink(db);
  snprintf(cmd, sizeof cmd, "'%s/%s' %s >/dev/null", bindir, prog, arg);
  double orig = median3(cmd);
  snprintf(cmd, sizeof cmd, "SYCL_PI_RECORD=%s '%s/%s' %s >/dev/null", db, bindir, prog, arg);
  double rec = timed(cmd, NULL, 0);
  snprintf(cmd, sizeof cmd, "'%s/pitrace' replay %s >/dev/null", bindir, db);
  double rep = median3(cmd);
  printf("%s %s: original run %.3f s, recorded run %.3f s, pitrace replay %.3f s (%.2fx the "
         "original)%s\n", prog, arg, orig, rec, rep, orig > 0 ? rep / orig : 0,
         orig < 0 || rec < 0 || rep < 0 ? " FAILED" : "");
  failures += orig < 0 || rec < 0 || rep < 0;
  remove_db(db);
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
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc && atol(argv[i + 1]) > 0) {
      calls = atol(argv[++i]);
    } else {
      fprintf(stderr, "usage: bench_replay [--calls N]\n");
      return 2;
    }
  }
  throughput(calls);
  workload("vadd", "4194304");
  workload("pipeline", "1048576");
  return failures ? 1 : 0;
}
