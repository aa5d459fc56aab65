/*
 * bench_fixed: what recording costs a process once, whatever its calls:
 * loading the shim and SQLite, creating the session database and the ring
 * file, the writer's threads, and storing everything at the end. For a
 * short program it is most of what recording adds (vadd 1024 on PoCL:
 * 60 ms, 39 calls), and it is what decides whether recording stays within
 * a few percent of a plain run.
 *
 *   bench_fixed [--rounds R] [--calls N] [--work MS] [--ways LIST] [--base LIBDIR]
 *
 * A child is a whole program: it selects the device through the runtime
 * (the null plugin, bench/pi_null.c, named by SYCL_PI_CONFIG: no driver's
 * start-up noise), makes N device info queries (default 40, about what
 * vadd makes) and ends; the runtime's teardown ends the session, as in any
 * application. --work MS: between the device's selection (the first
 * recorded call) and the queries, the child computes for MS ms on its
 * thread (a loop reading the clock), as a program does its own work
 * between calls: what the recorder does on its own threads meanwhile
 * (opening the database) is then off the program's path where a
 * processor is free. The parent times each child from fork to its exit (wall)
 * and its CPU time (user + system, every thread), the ways interleaved
 * round by round in a rotating order; what a way adds is its figure minus
 * plain's of the same round, reported as min / median / max over the
 * rounds. Ways:
 *   plain     the runtime and the plugin only
 *   rec-none  recorded (SYCL_PI_RECORD), SYCL_PI_RECORD_DATA=none
 *   rec-all   recorded, SYCL_PI_RECORD_DATA=all
 *   trace     SYCL_PI_TRACE=2 into a file
 * --base LIBDIR adds every way once more with another build's
 * runtime and shim (its lib/, through LD_LIBRARY_PATH), side by side with
 * this build's in every round: two recorders compared in one run.
 * Each recorded child writes a new database in a fresh directory under
 * $TMPDIR (default /tmp), removed afterwards. `--child N` is the child's
 * own entry.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"
#include "pirt.h"
#include "pirt_pi.h"

enum { PLAIN, REC_NONE, REC_ALL, TRACE, NWAYS };
static const char *const way_names[NWAYS] = {"plain", "rec-none", "rec-all", "trace"};

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* The program's own work: ms milliseconds of its processor. */
static void compute(long ms)
{
  double until = now_ms() + (double)ms;
  while (now_ms() < until)
    ;
}

static int child(long calls, long work_ms)
{
  pirt_device *dev;
  const pirt_plugin *pl;
  pi_platform plat;
  pi_device d;
  if (pirt_device_select(NULL, &dev) != PI_SUCCESS ||
      pirt_device_plugin(dev, &pl, &plat, &d, NULL) != PI_SUCCESS) {
    fprintf(stderr, "bench_fixed: no device through the runtime: %s\n", pirt_error_message());
    return 2;
  }
  compute(work_ms);
  for (long i = 0; i < calls; i++) {
    pi_uint32 units = 0;
    if (pirt_piDeviceGetInfo(pl, d, PI_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof units, &units,
                             NULL) != PI_SUCCESS) {
      fprintf(stderr, "bench_fixed: piDeviceGetInfo failed\n");
      return 2;
    }
  }
  return 0;
}

/* Removes a child's directory: the files it left (the session, its ring
 * file or journal if any, the trace, the plugins config), then itself. */
static void remove_dir(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  char path[4400];
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
  if (d)
    closedir(d);
  if (rmdir(dir) != 0)
    fprintf(stderr, "bench_fixed: could not remove %s: %s\n", dir, strerror(errno));
}

/* Runs one child the way `way` says (with the runtime of `base`'s lib/
 * when not NULL); its wall and CPU time in ms. */
static void run(const char *self, const char *libdir, const char *base, const char *tmp, int way,
                long calls, long work_ms, double *wall, double *cpu)
{
  char dir[4096], db[4200], conf[4200], trace[4200], n[32], work[32];
  snprintf(dir, sizeof dir, "%s/bench_fixed.XXXXXX", tmp);
  if (!mkdtemp(dir)) {
    fprintf(stderr, "bench_fixed: cannot make a directory in %s: %s\n", tmp, strerror(errno));
    exit(2);
  }
  snprintf(db, sizeof db, "%s/s.db", dir);
  snprintf(conf, sizeof conf, "%s/plugins.conf", dir);
  snprintf(trace, sizeof trace, "%s/trace.txt", dir);
  snprintf(n, sizeof n, "%ld", calls);
  snprintf(work, sizeof work, "%ld", work_ms);
  FILE *f = fopen(conf, "w");
  if (!f || fprintf(f, "%s/libpi_null.so\n", libdir) < 0 || fclose(f) != 0) {
    fprintf(stderr, "bench_fixed: cannot write %s\n", conf);
    exit(2);
  }
  double t0 = now_ms();
  pid_t pid = fork();
  if (pid == 0) {
    setenv("SYCL_PI_CONFIG", conf, 1);
    unsetenv("SYCL_DEVICE_FILTER");
    unsetenv("SYCL_PI_RECORD");
    unsetenv("SYCL_PI_TRACE");
    if (base)
      setenv("LD_LIBRARY_PATH", base, 1);
    if (way == REC_NONE || way == REC_ALL) {
      setenv("SYCL_PI_RECORD", db, 1);
      setenv("SYCL_PI_RECORD_DATA", way == REC_ALL ? "all" : "none", 1);
    } else if (way == TRACE) {
      setenv("SYCL_PI_TRACE", "2", 1);
      setenv("SYCL_PI_TRACE_FILE", trace, 1);
    }
    execl(self, self, "--child", n, work, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  if (pid < 0 || wait4(pid, &status, 0, &ru) != pid) {
    fprintf(stderr, "bench_fixed: cannot run a child: %s\n", strerror(errno));
    exit(2);
  }
  *wall = now_ms() - t0;
  *cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-3;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "bench_fixed: the %s child failed (status %d)\n", way_names[way], status);
    exit(1);
  }
  if ((way == REC_NONE || way == REC_ALL) && access(db, F_OK) != 0) {
    fprintf(stderr, "bench_fixed: the %s child left no session at %s\n", way_names[way], db);
    exit(1);
  }
  struct stat st;
  if (way == TRACE && (stat(trace, &st) != 0 || st.st_size == 0)) {
    fprintf(stderr, "bench_fixed: the trace child left no trace at %s\n", trace);
    exit(1);
  }
  remove_dir(dir);
}

static long number(const char *opt, const char *v)
{
  return bench_positive("bench_fixed", opt, v);
}

int main(int argc, char **argv)
{
  long rounds = 30, calls = 40, work_ms = 0;
  enum { MAX_ROUNDS = 100000 };
  const char *ways_arg = "plain,rec-none,rec-all,trace", *base = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--child") == 0 && i + 2 < argc)
      return child(number("--child", argv[i + 1]),
                   bench_number_from("bench_fixed", "--child", argv[i + 2], 0));
    if (strcmp(argv[i], "--rounds") == 0)
      rounds = number(argv[i], argv[i + 1]), i++;
    else if (strcmp(argv[i], "--calls") == 0)
      calls = number(argv[i], argv[i + 1]), i++;
    else if (strcmp(argv[i], "--work") == 0)
      work_ms = bench_number_from("bench_fixed", argv[i], argv[i + 1], 0), i++;
    else if (strcmp(argv[i], "--ways") == 0 && i + 1 < argc)
      ways_arg = argv[++i];
    else if (strcmp(argv[i], "--base") == 0 && i + 1 < argc)
      base = argv[++i];
    else {
      fprintf(stderr,
              "bench_fixed: unknown argument '%s' (usage: bench_fixed [--rounds R] "
              "[--calls N] [--work MS] [--ways plain,rec-none,rec-all,trace] [--base LIBDIR])\n", argv[i]);
      return 2;
    }
  }
  if (rounds > MAX_ROUNDS) {
    fprintf(stderr, "bench_fixed: --rounds %ld: at most %d\n", rounds, MAX_ROUNDS);
    return 2;
  }
  int ways[2 * NWAYS], nways = 0;
  const char *from[2 * NWAYS] = {NULL}; /* a way's lib/: NULL, this build's */
  ways[nways++] = PLAIN; /* every difference is taken against it */
  char *list = strdup(ways_arg);
  for (char *w = strtok(list, ","); w; w = strtok(NULL, ",")) {
    int k = 0;
    while (k < NWAYS && strcmp(w, way_names[k]) != 0)
      k++;
    if (k == NWAYS) {
      fprintf(stderr, "bench_fixed: unknown way '%s' (plain, rec-none, rec-all, trace)\n", w);
      return 2;
    }
    bool seen = false;
    for (int j = 0; j < nways; j++)
      seen = seen || ways[j] == k;
    if (!seen)
      ways[nways++] = k;
  }
  free(list);
  if (base) {
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/libpirt.so", base);
    if (access(probe, R_OK) != 0) {
      fprintf(stderr, "bench_fixed: --base %s: no libpirt.so there (give a build's lib/)\n",
              base);
      return 2;
    }
    for (int j = 0, n = nways; j < n; j++) {
      ways[nways] = ways[j];
      from[nways++] = base;
    }
  }
  char self[4096], libdir[4200];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) {
    fprintf(stderr, "bench_fixed: cannot find its own path\n");
    return 2;
  }
  self[len] = 0;
  char tmpself[4096];
  snprintf(tmpself, sizeof tmpself, "%s", self);
  snprintf(libdir, sizeof libdir, "%s/../lib", dirname(tmpself));
  const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

  bench_print_machine("bench_fixed");
  if (base)
    printf("base: the runtime and shim of %s\n", base);
  printf("a whole process: device selected through the runtime (null plugin), %ld ms of its "
         "own work, %ld info queries, the end; %ld rounds, the ways interleaved in a rotating "
         "order\n\n", work_ms, calls, rounds);
  size_t cells = (size_t)rounds * (size_t)nways;
  double *wall = calloc(cells, sizeof *wall);
  double *cpu = calloc(cells, sizeof *cpu);
  double *v = calloc((size_t)rounds, sizeof *v);
  if (!wall || !cpu || !v) {
    fprintf(stderr, "bench_fixed: out of memory for %ld rounds\n", rounds);
    return 2;
  }
  for (long r = 0; r < rounds; r++)
    for (int j = 0; j < nways; j++) {
      int k = (int)((j + r) % nways);
      run(self, libdir, from[k], tmp, ways[k], calls, work_ms, &wall[r * nways + k],
          &cpu[r * nways + k]);
    }
  printf("| way | wall ms (median) | added wall ms: min / median / max | CPU ms (median) | "
         "added CPU ms: min / median / max |\n|---|---|---|---|---|\n");
  for (int k = 0; k < nways; k++) {
    double mn, md, mx, amn = 0, amd = 0, amx = 0, cmd, cmn = 0, cmdd = 0, cmx = 0, x, y;
    for (long r = 0; r < rounds; r++)
      v[r] = wall[r * nways + k];
    bench_mmm(v, (size_t)rounds, &mn, &md, &mx);
    for (long r = 0; r < rounds; r++)
      v[r] = cpu[r * nways + k];
    bench_mmm(v, (size_t)rounds, &x, &cmd, &y);
    if (k) {
      for (long r = 0; r < rounds; r++)
        v[r] = wall[r * nways + k] - wall[r * nways];
      bench_mmm(v, (size_t)rounds, &amn, &amd, &amx);
      for (long r = 0; r < rounds; r++)
        v[r] = cpu[r * nways + k] - cpu[r * nways];
      bench_mmm(v, (size_t)rounds, &cmn, &cmdd, &cmx);
      printf("| %s%s | %.2f | %+.2f / %+.2f / %+.2f | %.2f | %+.2f / %+.2f / %+.2f |\n",
             way_names[ways[k]], from[k] ? " (base)" : "", md, amn, amd, amx, cmd, cmn, cmdd, cmx);
    } else {
      printf("| %s | %.2f | | %.2f | |\n", way_names[ways[k]], md, cmd);
    }
  }
  free(v);
  free(wall);
  free(cpu);
  return 0;
}
