/*
 * bench_record: what recording costs, measured side by side in one run.
 *
 * For each workload it runs the same calls four ways, each in a fresh
 * process (the shim reads its settings once per process):
 *   direct     the plugin's own table
 *   shim       through the recording shim, this API filtered out
 *              (SYCL_PI_RECORD_FILTER): the wrapper passing through
 *   rec-nodata recorded, SYCL_PI_RECORD_DATA=none
 *   rec-data   recorded with data (SYCL_PI_RECORD_DATA=all)
 * and reports the median ns per call over batches of 1000 calls, the ns
 * added over direct, the sustained rate until the writer has stored every
 * call (calls / time from the first call until the session is closed), and
 * the database bytes per call. Workloads: a scalar-only call and a
 * piKernelSetArg with 4 bytes on a minimal plugin (bench/pi_null.c), and
 * real PoCL calls (piDeviceGetInfo, piKernelSetArg on a built kernel);
 * the scalar call also with 1, 2, 4 and 8 threads. With --cuda, real CUDA
 * calls instead of PoCL's (on a machine with an NVIDIA GPU): a cheap getter
 * (piDeviceGetInfo) and a launch (piKernelSetArg + piEnqueueKernelLaunch of
 * an empty kernel, with the launch's event released).
 *
 * Usage: bench_record [--calls N]   (N calls per thread, default 200000)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pi/pi.h"

#define BATCH 1000

typedef bool (*wrap_fn)(const pi_plugin *, const char *, const char *, const char *,
                        pi_plugin *);

static struct pi_function_table table;
static pi_queue queue;
static pi_device device;
static pi_kernel kernel;

/* An empty kernel for CUDA launches (PTX for sm_90, PTX ISA 7.8). */
static const char empty_ptx[] =
    ".version 7.8\n.target sm_90\n.address_size 64\n"
    ".visible .entry k(.param .u32 k_param_0, .param .u64 k_param_1)\n{\n\tret;\n}\n";
static const char *workload;
static long calls;
static long pace_ns; /* application work between calls (spin) */

static uint64_t now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void one_call(void)
{
  static const int value = 7;
  if (strcmp(workload, "null-scalar") == 0) {
    table.piQueueFinish(queue);
  } else if (strcmp(workload, "null-setarg") == 0 || strcmp(workload, "pocl-setarg") == 0) {
    table.piKernelSetArg(kernel, 0, sizeof value, &value);
  } else if (strcmp(workload, "cuda-launch") == 0) {
    static _Thread_local unsigned n;
    size_t one = 1;
    pi_event ev;
    table.piKernelSetArg(kernel, 0, sizeof value, &value);
    table.piEnqueueKernelLaunch(queue, kernel, 1, NULL, &one, NULL, 0, NULL, &ev);
    table.piEventRelease(ev);
    if (++n % 256 == 0)
      table.piQueueFinish(queue); /* keep the stream from growing without end */
  } else {
    pi_uint32 units;
    table.piDeviceGetInfo(device, PI_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
    (void)units;
  }
}

typedef struct {
  double *batch_ns; /* per-call ns of each batch */
  long nbatches;
} thread_result;

static void *run(void *arg)
{
  thread_result *r = arg;
  r->nbatches = calls / BATCH;
  r->batch_ns = malloc((size_t)r->nbatches * sizeof *r->batch_ns);
  for (long b = 0; b < r->nbatches; b++) {
    uint64_t t0 = now();
    for (int i = 0; i < BATCH; i++) {
      one_call();
      if (pace_ns) {
        uint64_t until = now() + (uint64_t)pace_ns;
        while (now() < until)
          ;
      }
    }
    r->batch_ns[b] = (double)(now() - t0) / BATCH;
  }
  return NULL;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void *load(const char *path, pi_plugin *p)
{
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    fprintf(stderr, "bench_record: %s\n", dlerror());
    exit(2);
  }
  pi_plugin_init_fn init = (pi_plugin_init_fn)(uintptr_t)dlsym(dl, "piPluginInit");
  memset(p, 0, sizeof *p);
  snprintf(p->PiVersion, sizeof p->PiVersion, "%s", _PI_H_VERSION_STRING);
  if (!init || init(p) != PI_SUCCESS) {
    fprintf(stderr, "bench_record: %s: piPluginInit failed\n", path);
    exit(2);
  }
  return dl;
}

/* The child: one workload, one mode, T threads. */
static int child(const char *libdir, const char *mode, int threads, const char *db)
{
  bool pocl = strncmp(workload, "pocl", 4) == 0, cuda = strncmp(workload, "cuda", 4) == 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", libdir,
           pocl ? "libpi_opencl.so" : cuda ? "libpi_cuda.so" : "libpi_null.so");
  pi_plugin target;
  void *dl = load(path, &target);
  table = target.PiFunctionTable;
  if (strcmp(mode, "direct") != 0) {
    setenv("SYCL_PI_RECORD", db, 1);
    setenv("SYCL_PI_RECORD_DATA", strcmp(mode, "rec-data") == 0 ? "all" : "none", 1);
    if (strcmp(mode, "shim") == 0)
      setenv("SYCL_PI_RECORD_FILTER", "-piQueueFinish,-piKernelSetArg,-piDeviceGetInfo", 1);
    snprintf(path, sizeof path, "%s/libpi_shim.so", libdir);
    void *shim = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    wrap_fn wrap = shim ? (wrap_fn)(uintptr_t)dlsym(shim, "pitrace_shim_wrap") : NULL;
    pi_plugin out;
    if (!wrap || !wrap(&target, "bench", path, "opencl", &out)) {
      fprintf(stderr, "bench_record: cannot wrap with the shim\n");
      return 2;
    }
    table = out.PiFunctionTable;
  }
  if (cuda) {
    pi_platform plat;
    pi_uint32 n = 0;
    pi_context ctx;
    pi_program prog;
    const unsigned char *bin = (const unsigned char *)empty_ptx;
    size_t len = sizeof empty_ptx - 1;
    if (table.piPlatformsGet(1, &plat, &n) != PI_SUCCESS || !n ||
        table.piDevicesGet(plat, PI_DEVICE_TYPE_ALL, 1, &device, NULL) != PI_SUCCESS ||
        table.piContextCreate(NULL, 1, &device, NULL, NULL, &ctx) != PI_SUCCESS ||
        table.piQueueCreate(ctx, device, 0, &queue) != PI_SUCCESS ||
        table.piProgramCreateWithBinary(ctx, 1, &device, &len, &bin, 0, NULL, NULL, &prog) !=
            PI_SUCCESS ||
        table.piProgramBuild(prog, 1, &device, NULL, NULL, NULL) != PI_SUCCESS ||
        table.piKernelCreate(prog, "k", &kernel) != PI_SUCCESS) {
      fprintf(stderr, "bench_record: no CUDA device (or the PTX did not build)\n");
      return 2;
    }
    uint64_t *zero = NULL;
    table.piKernelSetArg(kernel, 1, sizeof zero, &zero);
  } else if (pocl) {
    pi_platform plat;
    pi_uint32 n = 0;
    if (table.piPlatformsGet(1, &plat, &n) != PI_SUCCESS || !n ||
        table.piDevicesGet(plat, PI_DEVICE_TYPE_ALL, 1, &device, NULL) != PI_SUCCESS) {
      fprintf(stderr, "bench_record: no OpenCL device\n");
      return 2;
    }
    pi_context ctx;
    pi_program prog;
    const char *src = "__kernel void k(int v, __global int *o) { o[0] = v; }";
    size_t len = strlen(src);
    if (table.piContextCreate(NULL, 1, &device, NULL, NULL, &ctx) != PI_SUCCESS ||
        table.piclProgramCreateWithSource(ctx, 1, &src, &len, &prog) != PI_SUCCESS ||
        table.piProgramBuild(prog, 1, &device, NULL, NULL, NULL) != PI_SUCCESS ||
        table.piKernelCreate(prog, "k", &kernel) != PI_SUCCESS) {
      fprintf(stderr, "bench_record: cannot build the kernel\n");
      return 2;
    }
  } else {
    queue = ((pi_queue(*)(void))(uintptr_t)dlsym(dl, "pi_null_queue"))();
  }
  thread_result *res = calloc((size_t)threads, sizeof *res);
  pthread_t th[64];
  uint64_t t0 = now();
  for (int i = 0; i < threads; i++)
    pthread_create(&th[i], NULL, run, &res[i]);
  for (int i = 0; i < threads; i++)
    pthread_join(th[i], NULL);
  /* piTearDown closes the session once the writer has stored everything. */
  table.piTearDown(NULL);
  uint64_t t1 = now();
  long total = 0, nb = 0;
  for (int i = 0; i < threads; i++)
    nb += res[i].nbatches;
  double *all = malloc((size_t)nb * sizeof *all);
  for (int i = 0, k = 0; i < threads; i++)
    for (long b = 0; b < res[i].nbatches; b++)
      all[k++] = res[i].batch_ns[b];
  total = nb * BATCH;
  qsort(all, (size_t)nb, sizeof *all, cmp_double);
  struct stat st;
  double bytes = strcmp(mode, "direct") != 0 && stat(db, &st) == 0 ? (double)st.st_size : 0;
  printf("RESULT %.1f %.0f %.1f\n", all[nb / 2], (double)total * 1e9 / (double)(t1 - t0),
         bytes / (double)total);
  return 0;
}

/* Runs a child and parses its result. */
static int measure(const char *self, const char *libdir, const char *wl, const char *mode,
                   int threads, long pace, double *ns, double *rate, double *bytes)
{
  char db[] = "/tmp/pitrace-bench-XXXXXX";
  int fd = mkstemp(db);
  close(fd);
  unlink(db);
  char cmd[8192], tcount[16], ncalls[32];
  snprintf(tcount, sizeof tcount, "%d", threads);
  snprintf(ncalls, sizeof ncalls, "%ld", calls);
  snprintf(cmd, sizeof cmd, "'%s' --child '%s' %s %s %s %s %s %ld", self, libdir, wl, mode,
           tcount, ncalls, db, pace);
  FILE *p = popen(cmd, "r");
  char line[256];
  int ok = 0;
  while (p && fgets(line, sizeof line, p))
    if (sscanf(line, "RESULT %lf %lf %lf", ns, rate, bytes) == 3)
      ok = 1;
  if (p)
    pclose(p);
  char side[600];
  unlink(db);
  snprintf(side, sizeof side, "%s-wal", db);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", db);
  unlink(side);
  return ok;
}

int main(int argc, char **argv)
{
  calls = 200000;
  if (argc >= 9 && strcmp(argv[1], "--child") == 0) {
    workload = argv[3];
    calls = atol(argv[6]);
    pace_ns = atol(argv[8]);
    return child(argv[2], argv[4], atoi(argv[5]), argv[7]);
  }
  bool use_cuda = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
      calls = atol(argv[++i]);
    else if (strcmp(argv[i], "--cuda") == 0)
      use_cuda = true;
    else {
      fprintf(stderr, "usage: bench_record [--calls N] [--cuda]\n");
      return 2;
    }
  }
  if (calls < 1000) {
    fprintf(stderr, "bench_record: --calls must be at least 1000 (one batch)\n");
    return 2;
  }
  char self[4096], libdir[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return 2;
  self[n] = 0;
  snprintf(libdir, sizeof libdir, "%s", self);
  char *slash = strrchr(libdir, '/');
  *slash = 0;
  strcat(libdir, "/../lib");

  static const struct {
    const char *wl;
    int threads;
  } all_runs[] = {{"null-scalar", 1}, {"null-scalar", 2}, {"null-scalar", 4}, {"null-scalar", 8},
                  {"null-setarg", 1}, {"pocl-getinfo", 1}, {"pocl-setarg", 1}},
    cuda_runs[] = {{"cuda-getinfo", 1}, {"cuda-launch", 1}};
  const __typeof__(all_runs[0]) *runs = use_cuda ? cuda_runs : all_runs;
  size_t nruns = use_cuda ? sizeof cuda_runs / sizeof *cuda_runs
                          : sizeof all_runs / sizeof *all_runs;
  static const char *const modes[] = {"direct", "shim", "rec-nodata", "rec-data"};
  int failures = 0;
  /* Two passes: paced (2 us of application work between calls, so the
   * writer keeps up and what is measured is the cost on the calling
   * thread), then flooding (calls back to back: the writer's throughput,
   * and the producers wait for it). */
  for (int pass = 0; pass < 2; pass++) {
    long pace = pass == 0 ? 2000 : 0;
    if (pass == 0)
      printf("Paced: %ld calls per thread, 2 us of work between calls; median ns per call over "
             "batches of %d; added = over direct, in this run\n\n", calls / 4, BATCH);
    else
      printf("\nFlooding: %ld calls per thread back to back; calls/s until every call is "
             "stored (the session closed); database bytes per call\n\n", calls);
    printf("| workload | threads | mode | ns/call | added ns | calls/s until stored | "
           "bytes/call |\n|---|---|---|---|---|---|---|\n");
    for (size_t r = 0; r < nruns; r++) {
      if (pass == 0 && runs[r].threads > 1 && runs[r].threads != 8)
        continue;
      long saved = calls;
      if (pass == 0 || strncmp(runs[r].wl, "pocl", 4) == 0 || strncmp(runs[r].wl, "cuda", 4) == 0)
        calls = calls / 4 > BATCH ? calls / 4 : BATCH;
      double base = 0;
      for (size_t m = 0; m < 4; m++) {
        double ns = 0, rate = 0, bytes = 0;
        if (!measure(self, libdir, runs[r].wl, modes[m], runs[r].threads, pace, &ns, &rate,
                     &bytes)) {
          printf("| %s | %d | %s | failed | | | |\n", runs[r].wl, runs[r].threads, modes[m]);
          failures++;
          continue;
        }
        if (m == 0)
          base = ns;
        if (m < 2 || pass == 0)
          printf("| %s | %d | %s | %.1f | %.1f | | |\n", runs[r].wl, runs[r].threads,
                 modes[m], ns, ns - base);
        else
          printf("| %s | %d | %s | %.1f | %.1f | %.2f M | %.1f |\n", runs[r].wl,
                 runs[r].threads, modes[m], ns, ns - base, rate / 1e6, bytes);
        fflush(stdout);
      }
      calls = saved;
    }
  }
  return failures ? 1 : 0;
}
