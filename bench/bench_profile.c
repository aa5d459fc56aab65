/*
 * bench_profile.c: what collecting device times (SYCL_PI_RECORD_PROFILE=1,
 * pitrace record --profile) adds per kernel launch, against plain
 * recording, on the real device (PoCL by default).
 *
 *   bench_profile [--launches N] [--rounds R] [--finish-every K]
 *
 * Each round runs a child per mode, alternating (plain recording, recording
 * with device times; interleaved so that the machine's drift hits both),
 * each in a fresh process recording into a fresh database. A child launches
 * an empty-bodied kernel N times with no event (as most applications do;
 * the shim then makes and keeps one) and calls piQueueFinish every K
 * launches (the synchronisation at which the shim reads the device times).
 * It reports the wall time of the launch loop per launch; the figures are
 * the medians over the rounds. `--child MODE` is the child's own entry.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"
#include "pirt.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define TRY(x)                                                                          \
  do {                                                                                  \
    pi_result r_ = (x);                                                                 \
    if (r_ != PI_SUCCESS) {                                                             \
      fprintf(stderr, "bench_profile: %s failed: %s\n", #x, pirt_error_message());     \
      exit(2);                                                                          \
    }                                                                                   \
  } while (0)

static int child(long launches, long finish_every)
{
  pirt_device *dev;
  pirt_context *ctx;
  pirt_queue *q;
  pirt_program *prog;
  pirt_kernel *k;
  pirt_buffer *buf;
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_queue_create(ctx, 0, &q));
  TRY(pirt_program_create_source(
      ctx, "__kernel void touch(__global int *p) { if (get_global_id(0) == 0) p[0] += 1; }",
      NULL, &prog));
  TRY(pirt_kernel_create(prog, "touch", &k));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_WRITE, 64, NULL, &buf));
  TRY(pirt_kernel_set_buffer(k, 0, buf));
  size_t global = 1;
  for (int i = 0; i < 100; i++) /* warm up */
    TRY(pirt_launch(q, k, 1, &global, NULL, 0, NULL, NULL));
  TRY(pirt_queue_finish(q));
  double t0 = now_s();
  for (long i = 0; i < launches; i++) {
    TRY(pirt_launch(q, k, 1, &global, NULL, 0, NULL, NULL));
    if ((i + 1) % finish_every == 0)
      TRY(pirt_queue_finish(q));
  }
  TRY(pirt_queue_finish(q));
  double t = now_s() - t0;
  printf("%.1f\n", t * 1e9 / (double)launches);
  TRY(pirt_buffer_release(buf));
  TRY(pirt_kernel_release(k));
  TRY(pirt_program_release(prog));
  TRY(pirt_queue_release(q));
  TRY(pirt_context_release(ctx));
  return 0;
}

/* Runs this program as a child in `mode`; returns its ns per launch. */
static double run_child(const char *self, const char *mode, long launches, long finish_every)
{
  char db[] = "/tmp/bench_profile-XXXXXX";
  int fd = mkstemp(db);
  if (fd < 0) {
    perror("bench_profile: mkstemp");
    exit(2);
  }
  close(fd);
  unlink(db);
  char path[64], n[32], kk[32];
  snprintf(path, sizeof path, "%s.db", db);
  snprintf(n, sizeof n, "%ld", launches);
  snprintf(kk, sizeof kk, "%ld", finish_every);
  int p[2];
  if (pipe(p) != 0) {
    perror("bench_profile: pipe");
    exit(2);
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], 1);
    close(p[0]);
    setenv("SYCL_PI_RECORD", path, 1);
    if (strcmp(mode, "profile") == 0)
      setenv("SYCL_PI_RECORD_PROFILE", "1", 1);
    else
      unsetenv("SYCL_PI_RECORD_PROFILE");
    execl(self, self, "--child", mode, "--launches", n, "--finish-every", kk, (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  char out[64] = "";
  ssize_t got = read(p[0], out, sizeof out - 1);
  close(p[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  char side[96];
  unlink(path);
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", path);
  unlink(side);
  if (got <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "bench_profile: the %s child failed\n", mode);
    exit(2);
  }
  return atof(out);
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static long number(const char *opt, const char *v)
{
  return bench_positive("bench_profile", opt, v);
}

int main(int argc, char **argv)
{
  long launches = 20000, rounds = 5, finish_every = 100;
  const char *mode = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--launches") == 0)
      launches = number(argv[i], argv[i + 1]), i++;
    else if (strcmp(argv[i], "--rounds") == 0)
      rounds = number(argv[i], argv[i + 1]), i++;
    else if (strcmp(argv[i], "--finish-every") == 0)
      finish_every = number(argv[i], argv[i + 1]), i++;
    else if (strcmp(argv[i], "--child") == 0 && i + 1 < argc)
      mode = argv[++i];
    else {
      fprintf(stderr, "bench_profile: unknown argument '%s' (usage: bench_profile "
                      "[--launches N] [--rounds R] [--finish-every K])\n", argv[i]);
      return 2;
    }
  }
  if (mode)
    return child(launches, finish_every);
  const char *modes[2] = {"record", "profile"};
  double *v[2] = {calloc((size_t)rounds, sizeof(double)), calloc((size_t)rounds, sizeof(double))};
  for (long r = 0; r < rounds; r++)
    for (int m = 0; m < 2; m++) {
      int mm = (int)((r + m) % 2); /* alternate which goes first */
      v[mm][r] = run_child("/proc/self/exe", modes[mm], launches, finish_every);
    }
  printf("launch + finish every %ld, %ld launches, %ld rounds (median ns per launch; all "
         "rounds)\n", finish_every, launches, rounds);
  double med[2];
  for (int m = 0; m < 2; m++) {
    printf("  %-8s", m ? "profile" : "record");
    for (long r = 0; r < rounds; r++)
      printf(" %.0f", v[m][r]);
    qsort(v[m], (size_t)rounds, sizeof(double), cmp_d);
    med[m] = v[m][rounds / 2];
    printf("  -> median %.0f ns\n", med[m]);
  }
  printf("device times add %+.0f ns per launch (%+.1f%%)\n", med[1] - med[0],
         100.0 * (med[1] - med[0]) / med[0]);
  free(v[0]);
  free(v[1]);
  return 0;
}
