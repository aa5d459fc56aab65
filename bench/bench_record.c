/*
 * bench_record: what recording, and the SYCL_PI_TRACE=2 trace, add to each
 * PI call, every way measured side by side in one run.
 *
 * Ways (modes), each run in a fresh process (the shim and the runtime read
 * their settings once per process):
 *   direct    the plugin's own function table
 *   shim      through the recording shim with the measured API filtered
 *             out (SYCL_PI_RECORD_FILTER): the wrapper alone
 *   rec-none  recorded, SYCL_PI_RECORD_DATA=none
 *   rec-all   recorded, SYCL_PI_RECORD_DATA=all
 *   trace     through the runtime (pirt_piXxx, as a front end calls) with
 *             SYCL_PI_TRACE=2 and SYCL_PI_TRACE_FILE: every call formatted
 *             and written to a file
 *   write     the trace's floor: each call direct, then as many bytes as
 *             the trace writes for it (learnt from a short trace run of
 *             the same workload and threads before the rounds) copied into
 *             a 64 KiB buffer per thread, written to one O_APPEND file when
 *             full, as the trace's blocks are: the file's cost without the
 *             formatting
 * Rounds: in each round every workload, thread count and way runs once, the
 * ways in an order that rotates from round to round; what a way adds is its
 * figure minus direct's *of the same round*, and the report gives min /
 * median / max of those differences over the rounds (a spread that covers
 * zero says the machine's noise is larger than the cost).
 *
 * Two passes of each:
 *   paced     2 us of spinning (application work) between calls, only the
 *             calls timed (two clock reads around each, the same in every
 *             way): the mean ns per call on the calling thread, every call
 *             counted, waits for the writer included
 *   flooding  calls back to back: ns per call = each thread's whole loop
 *             time / its calls (every wait for the writer included); calls
 *             per second until stored = all threads' calls / the time from
 *             the first call until the session is closed (piTearDown
 *             returned: the writer has stored every call); bytes per call =
 *             the database's (trace: the trace file's) size / calls;
 *             recorder CPU per call = the CPU time of the process's other
 *             threads (the writer's merge and encoder threads) / calls
 *             stored: the process's CPU time less the calling threads' and
 *             the main thread's own, so that a loaded machine, which
 *             stretches every wall-clock figure, changes it little
 *
 * Workloads: see `workloads` below (--list prints them).
 *
 * Usage: bench_record [--rounds R] [--calls N] [--paced-calls N] [--pace NS]
 *                     [--threads LIST] [--workloads LIST] [--modes LIST]
 *                     [--cuda] [--icd FILE] [--list]
 * Run it from the build tree (it finds the plugins, the shim and the runtime
 * in ../lib beside it) or from build-gpu/ (scripts/gpu-pack.sh).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"
#include "pi/pi.h"
#include "pirt_pi.h"

#define MAX_THREADS 64
#define WARMUP 200 /* untimed calls per thread before the timed ones */

typedef bool (*wrap_fn)(const pi_plugin *, const char *, const char *, const char *,
                        pi_plugin *);

/* ---- What is measured ------------------------------------------------------------ */

enum { MODE_DIRECT, MODE_SHIM, MODE_REC_NONE, MODE_REC_ALL, MODE_TRACE, MODE_WRITE, NMODES };
static const char *const mode_names[NMODES] = {"direct", "shim",  "rec-none",
                                               "rec-all", "trace", "write"};
static const char *const mode_what[NMODES] = {
    "the plugin's own function table",
    "through the recording shim, the measured API filtered out (SYCL_PI_RECORD_FILTER): the "
    "wrapper alone",
    "recorded, SYCL_PI_RECORD_DATA=none",
    "recorded, SYCL_PI_RECORD_DATA=all",
    "through the runtime (pirt_piXxx) with SYCL_PI_TRACE=2 written to a file "
    "(SYCL_PI_TRACE_FILE)",
    "direct, then the trace's bytes for the call (a short trace run's bytes/call) into a 64 KiB "
    "buffer per thread, written to one O_APPEND file when full: the trace's floor"};

enum plugin_kind { PL_NULL, PL_OPENCL, PL_CUDA };
static const char *const plugin_libs[] = {"libpi_null.so", "libpi_opencl.so", "libpi_cuda.so"};
static const char *const plugin_backends[] = {"", "opencl", "cuda"};

enum op { OP_FINISH, OP_SETARG, OP_INFO_INT, OP_INFO_NAME, OP_LAUNCH };

typedef struct {
  const char *name;
  enum plugin_kind plugin;
  enum op op;
  const char *what;
} workload;

static const workload workloads[] = {
    {"null-scalar", PL_NULL, OP_FINISH,
     "piQueueFinish on the stand-in plugin (bench/pi_null.c, no work): scalar arguments only"},
    {"null-setarg", PL_NULL, OP_SETARG, "piKernelSetArg with a 4-byte value, stand-in plugin"},
    {"null-info-int", PL_NULL, OP_INFO_INT,
     "piDeviceGetInfo(MAX_COMPUTE_UNITS), an integer, stand-in plugin"},
    {"null-info-name", PL_NULL, OP_INFO_NAME,
     "piDeviceGetInfo(NAME) into 256 bytes with its size returned, a string, stand-in plugin"},
    {"ocl-info-int", PL_OPENCL, OP_INFO_INT,
     "piDeviceGetInfo(MAX_COMPUTE_UNITS) on the OpenCL device (--icd)"},
    {"ocl-info-name", PL_OPENCL, OP_INFO_NAME,
     "piDeviceGetInfo(NAME) into 256 bytes with its size returned, on the OpenCL device"},
    {"ocl-setarg", PL_OPENCL, OP_SETARG,
     "piKernelSetArg with 4 bytes on a built kernel (one per thread), on the OpenCL device"},
    {"cuda-info-int", PL_CUDA, OP_INFO_INT, "piDeviceGetInfo(MAX_COMPUTE_UNITS) on CUDA device 0"},
    {"cuda-info-name", PL_CUDA, OP_INFO_NAME,
     "piDeviceGetInfo(NAME) into 256 bytes with its size returned, on CUDA device 0"},
    {"cuda-launch", PL_CUDA, OP_LAUNCH,
     "one iteration = piKernelSetArg + piEnqueueKernelLaunch of an empty kernel + "
     "piEventRelease, piQueueFinish every 256 (a kernel and a queue per thread), CUDA device 0"},
};
#define NWORKLOADS (sizeof workloads / sizeof *workloads)
static const char default_workloads[] =
    "null-scalar,null-setarg,null-info-int,null-info-name,ocl-info-int,ocl-info-name,ocl-setarg";
static const char cuda_workloads[] = "cuda-info-int,cuda-info-name,cuda-launch";

/* ---- The child: one workload, one way, T threads --------------------------------- */

static struct pi_function_table table;
static enum op op;
static pi_device device;
static pi_queue queues[MAX_THREADS];
static pi_kernel kernels[MAX_THREADS];
static long calls, pace_ns;
static _Atomic int call_failed; /* a measured call returned an error */
/* Mode write: the bytes a call appends (BENCH_WRITE_BYTES), the file. */
static size_t write_bytes;
static int write_fd = -1;
#define WRITE_BLOCK (64u << 10) /* as the trace's blocks (runtime/src/trace.c) */
static pthread_barrier_t start_line;

/* An empty kernel for CUDA launches (PTX for sm_90, PTX ISA 7.8). */
static const char empty_ptx[] =
    ".version 7.8\n.target sm_90\n.address_size 64\n"
    ".visible .entry k(.param .u32 k_param_0, .param .u64 k_param_1)\n{\n\tret;\n}\n";

static uint64_t now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void one_call(int t, unsigned long i)
{
  static const int value = 7;
  pi_result r = PI_SUCCESS;
  switch (op) {
  case OP_FINISH:
    r = table.piQueueFinish(queues[t]);
    break;
  case OP_SETARG:
    r = table.piKernelSetArg(kernels[t], 0, sizeof value, &value);
    break;
  case OP_INFO_INT: {
    pi_uint32 units;
    r = table.piDeviceGetInfo(device, PI_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof units, &units,
                              NULL);
    break;
  }
  case OP_INFO_NAME: {
    char name[256];
    size_t size;
    r = table.piDeviceGetInfo(device, PI_DEVICE_INFO_NAME, sizeof name, name, &size);
    break;
  }
  case OP_LAUNCH: {
    size_t one = 1;
    pi_event ev;
    r = table.piKernelSetArg(kernels[t], 0, sizeof value, &value);
    if (r == PI_SUCCESS)
      r = table.piEnqueueKernelLaunch(queues[t], kernels[t], 1, NULL, &one, NULL, 0, NULL, &ev);
    if (r == PI_SUCCESS)
      r = table.piEventRelease(ev);
    if (r == PI_SUCCESS && i % 256 == 255)
      r = table.piQueueFinish(queues[t]); /* keep the stream from growing without end */
    break;
  }
  }
  if (r != PI_SUCCESS)
    atomic_store(&call_failed, (int)r);
}

typedef struct {
  int index;
  uint64_t start; /* when its first timed call began */
  uint64_t ns;    /* paced: the calls' own time; flooding: the whole loop's */
  uint64_t cpu;   /* the thread's CPU time, all of it */
} thread_result;

static uint64_t cpu_now(clockid_t clock)
{
  struct timespec t;
  clock_gettime(clock, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* ---- The recorder's threads' CPU time, by name ------------------------------------
 * The writer names its threads (session/writer.c): "pitrace-merge" merges
 * the rings, "pitrace-enc" encodes chunks. They end inside piTearDown,
 * after which the kernel keeps no time of theirs apart: a sampler thread
 * reads each one's CPU clock every 10 ms while the calls run and every
 * 0.2 ms while the session closes, keeping the last reading. */

enum { ROLE_MERGE, ROLE_ENC, NROLES };
#define MAX_SAMPLED 256

typedef struct {
  pid_t tid;
  int role; /* -1: not (yet) named as one of the recorder's */
  uint64_t cpu;
} sampled_thread;

static sampled_thread sampled[MAX_SAMPLED];
static int nsampled;
static pid_t main_tid;
static _Atomic int sampler_fast, sampler_stop;

/* A thread's CPU clock by its id (what pthread_getcpuclockid builds:
 * ~tid << 3 | 6, the shift written as a product, a negative's shift being
 * undefined). */
static bool thread_cpu(pid_t tid, uint64_t *ns)
{
  struct timespec t;
  if (clock_gettime(~(clockid_t)tid * 8 | 6, &t) != 0)
    return false;
  *ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
  return true;
}

static int role_of(pid_t tid)
{
  char path[64], name[32] = "";
  snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
  FILE *f = fopen(path, "r");
  if (f) {
    if (!fgets(name, sizeof name, f))
      name[0] = 0;
    fclose(f);
  }
  name[strcspn(name, "\n")] = 0;
  return strcmp(name, "pitrace-merge") == 0 ? ROLE_MERGE
         : strcmp(name, "pitrace-enc") == 0 ? ROLE_ENC
                                            : -1;
}

static void sample_threads(pid_t self)
{
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  while (d && (e = readdir(d))) {
    pid_t tid = (pid_t)atoi(e->d_name);
    if (tid <= 0 || tid == self || tid == main_tid)
      continue;
    int i = 0;
    while (i < nsampled && sampled[i].tid != tid)
      i++;
    if (i == nsampled) {
      if (nsampled == MAX_SAMPLED)
        continue;
      sampled[nsampled++] = (sampled_thread){tid, -1, 0};
    }
    /* A thread names itself once it runs; until then an encoder has the
     * name of the merge thread, which made it (found first: its id is
     * lower, and it ran before the calls). */
    if (sampled[i].role < 0) {
      sampled[i].role = role_of(tid);
      for (int j = 0; j < i && sampled[i].role == ROLE_MERGE; j++)
        if (sampled[j].role == ROLE_MERGE)
          sampled[i].role = -1;
    }
    uint64_t ns;
    if (sampled[i].role >= 0 && thread_cpu(tid, &ns))
      sampled[i].cpu = ns;
  }
  if (d)
    closedir(d);
}

static void *sampler(void *arg)
{
  uint64_t *own = arg;
  pid_t self = gettid();
  while (!atomic_load(&sampler_stop)) {
    sample_threads(self);
    struct timespec nap = {0, atomic_load(&sampler_fast) ? 200000 : 10000000};
    nanosleep(&nap, NULL);
  }
  sample_threads(self);
  *own = cpu_now(CLOCK_THREAD_CPUTIME_ID);
  return NULL;
}

/* Mode write: a thread's block being filled, and the lines it copies. */
typedef struct {
  char data[WRITE_BLOCK];
  size_t len;
} write_buf;

static void write_block(write_buf *b)
{
  for (size_t at = 0; at < b->len;) {
    ssize_t w = write(write_fd, b->data + at, b->len - at);
    if (w <= 0) {
      atomic_store(&call_failed, -1);
      break;
    }
    at += (size_t)w;
  }
  b->len = 0;
}

static inline void write_after(write_buf *b)
{
  static const char line[] = "\tsome trace text, as many bytes as the trace writes a call\n";
  size_t n = write_bytes;
  if (b->len + n > WRITE_BLOCK)
    write_block(b);
  while (n) {
    size_t k = n < sizeof line - 1 ? n : sizeof line - 1;
    memcpy(b->data + b->len, line, k);
    b->len += k;
    n -= k;
  }
}

/* One measured call (and in mode write, its bytes after it). */
static inline void call_and_write(int t, unsigned long i, write_buf *b)
{
  one_call(t, i);
  if (b)
    write_after(b);
}

static void *run(void *arg)
{
  thread_result *res = arg;
  int t = res->index;
  write_buf *b = write_bytes ? malloc(sizeof *b) : NULL;
  if (b)
    b->len = 0;
  else if (write_bytes)
    atomic_store(&call_failed, -1); /* no block: the run would measure nothing */
  /* Untimed: what happens once per process or thread (the shim's ring for
   * this thread, the writer's start, the trace's thread tag). */
  for (long i = 0; i < WARMUP; i++)
    call_and_write(t, (unsigned long)i, b);
  pthread_barrier_wait(&start_line);
  res->start = now();
  if (pace_ns) {
    uint64_t sum = 0;
    for (long i = 0; i < calls; i++) {
      uint64_t t0 = now();
      call_and_write(t, (unsigned long)i, b);
      uint64_t t1 = now();
      sum += t1 - t0;
      while (now() < t1 + (uint64_t)pace_ns)
        ; /* the application's work */
    }
    res->ns = sum;
  } else {
    uint64_t t0 = now();
    for (long i = 0; i < calls; i++)
      call_and_write(t, (unsigned long)i, b);
    res->ns = now() - t0;
  }
  if (b) { /* the last block, as the trace's thread exit writes its own */
    write_block(b);
    free(b);
  }
  res->cpu = cpu_now(CLOCK_THREAD_CPUTIME_ID);
  return NULL;
}

static void *load_plugin(const char *path, pi_plugin *p)
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

/* Trace mode: the measured calls go through the runtime's pirt_piXxx. */
static const pirt_plugin *trace_plugin;
static void (*rt_trace_flush)(void); /* absent from runtimes that do not buffer */
static __typeof__(pirt_piQueueFinish) *rt_finish;
static __typeof__(pirt_piKernelSetArg) *rt_setarg;
static __typeof__(pirt_piDeviceGetInfo) *rt_getinfo;
static __typeof__(pirt_piEnqueueKernelLaunch) *rt_launch;
static __typeof__(pirt_piEventRelease) *rt_evrelease;

static pi_result tr_finish(pi_queue q) { return rt_finish(trace_plugin, q); }
static pi_result tr_setarg(pi_kernel k, pi_uint32 i, size_t n, const void *v)
{
  return rt_setarg(trace_plugin, k, i, n, v);
}
static pi_result tr_getinfo(pi_device d, pi_device_info p, size_t n, void *v, size_t *r)
{
  return rt_getinfo(trace_plugin, d, p, n, v, r);
}
static pi_result tr_launch(pi_queue q, pi_kernel k, pi_uint32 dim, const size_t *off,
                           const size_t *gws, const size_t *lws, pi_uint32 nev,
                           const pi_event *wait, pi_event *ev)
{
  return rt_launch(trace_plugin, q, k, dim, off, gws, lws, nev, wait, ev);
}
static pi_result tr_evrelease(pi_event e) { return rt_evrelease(trace_plugin, e); }

/* Binds the plugin through the runtime (SYCL_PI_CONFIG naming only it) with
 * SYCL_PI_TRACE=2 into `trace_file`; the plugin's own table into *target. */
static void *bind_through_runtime(const char *libdir, const char *plugin_path,
                                  enum plugin_kind kind, const char *trace_file,
                                  pi_plugin *target)
{
  char conf[4200], path[4200];
  snprintf(conf, sizeof conf, "%s.conf", trace_file);
  FILE *f = fopen(conf, "w");
  if (!f || fprintf(f, "%s %s\n", plugin_path, plugin_backends[kind]) < 0 || fclose(f) != 0) {
    fprintf(stderr, "bench_record: cannot write %s\n", conf);
    exit(2);
  }
  setenv("SYCL_PI_CONFIG", conf, 1);
  setenv("SYCL_PI_TRACE", "2", 1);
  setenv("SYCL_PI_TRACE_FILE", trace_file, 1);
  unsetenv("SYCL_DEVICE_FILTER");
  unsetenv("SYCL_PI_RECORD");
  snprintf(path, sizeof path, "%s/libpirt.so", libdir);
  void *rt = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!rt) {
    fprintf(stderr, "bench_record: %s\n", dlerror());
    exit(2);
  }
  __typeof__(pirt_device_select) *select = (__typeof__(pirt_device_select) *)(uintptr_t)dlsym(
      rt, "pirt_device_select");
  __typeof__(pirt_device_plugin) *plugin_of =
      (__typeof__(pirt_device_plugin) *)(uintptr_t)dlsym(rt, "pirt_device_plugin");
  __typeof__(pirt_device_pi) *pi_of =
      (__typeof__(pirt_device_pi) *)(uintptr_t)dlsym(rt, "pirt_device_pi");
  __typeof__(pirt_error_message) *message =
      (__typeof__(pirt_error_message) *)(uintptr_t)dlsym(rt, "pirt_error_message");
  rt_finish = (__typeof__(rt_finish))(uintptr_t)dlsym(rt, "pirt_piQueueFinish");
  rt_setarg = (__typeof__(rt_setarg))(uintptr_t)dlsym(rt, "pirt_piKernelSetArg");
  rt_getinfo = (__typeof__(rt_getinfo))(uintptr_t)dlsym(rt, "pirt_piDeviceGetInfo");
  rt_launch = (__typeof__(rt_launch))(uintptr_t)dlsym(rt, "pirt_piEnqueueKernelLaunch");
  rt_evrelease = (__typeof__(rt_evrelease))(uintptr_t)dlsym(rt, "pirt_piEventRelease");
  rt_trace_flush = (void (*)(void))(uintptr_t)dlsym(rt, "pirt_trace_flush");
  pirt_device *dev;
  const struct pi_function_table *t;
  pi_platform plat;
  pi_device pidev;
  if (!select || !plugin_of || !pi_of || !message || !rt_finish || !rt_setarg || !rt_getinfo ||
      !rt_launch || !rt_evrelease) {
    fprintf(stderr, "bench_record: %s lacks the runtime's functions\n", path);
    exit(2);
  }
  if (select(NULL, &dev) != PI_SUCCESS || plugin_of(dev, &trace_plugin, &plat, &pidev, NULL) != PI_SUCCESS ||
      pi_of(dev, &t, &plat, &pidev) != PI_SUCCESS) {
    fprintf(stderr, "bench_record: the runtime found no device of %s: %s\n", plugin_path,
            message());
    exit(2);
  }
  memset(target, 0, sizeof *target);
  target->PiFunctionTable = *t;
  return rt;
}

/* Sets up the device, queues and kernels the workload calls on. */
static int set_up(enum plugin_kind kind, void *dl, int threads)
{
  if (kind == PL_NULL) {
    void *q = dlsym(dl, "pi_null_queue");
    pi_platform plat;
    if (!q || table.piPlatformsGet(1, &plat, NULL) != PI_SUCCESS ||
        table.piDevicesGet(plat, PI_DEVICE_TYPE_ALL, 1, &device, NULL) != PI_SUCCESS) {
      fprintf(stderr, "bench_record: the stand-in plugin has no device\n");
      return 2;
    }
    for (int t = 0; t < threads; t++) {
      queues[t] = ((pi_queue(*)(void))(uintptr_t)q)();
      kernels[t] = (pi_kernel)(uintptr_t)(0x1000 + 16 * t); /* any handle will do */
    }
    return 0;
  }
  pi_platform plat;
  pi_uint32 n = 0;
  pi_context ctx;
  pi_program prog = NULL;
  if (table.piPlatformsGet(1, &plat, &n) != PI_SUCCESS || !n ||
      table.piDevicesGet(plat, PI_DEVICE_TYPE_ALL, 1, &device, NULL) != PI_SUCCESS ||
      table.piContextCreate(NULL, 1, &device, NULL, NULL, &ctx) != PI_SUCCESS) {
    fprintf(stderr, "bench_record: no %s device\n", kind == PL_CUDA ? "CUDA" : "OpenCL");
    return 2;
  }
  char pname[256] = "?", dname[256] = "?";
  table.piPlatformGetInfo(plat, PI_PLATFORM_INFO_NAME, sizeof pname, pname, NULL);
  table.piDeviceGetInfo(device, PI_DEVICE_INFO_NAME, sizeof dname, dname, NULL);
  printf("DEVICE %s: \"%s\" on \"%s\"\n", plugin_backends[kind], dname, pname);
  if (op == OP_SETARG || op == OP_LAUNCH) {
    pi_result r;
    if (kind == PL_CUDA) {
      const unsigned char *bin = (const unsigned char *)empty_ptx;
      size_t len = sizeof empty_ptx - 1;
      r = table.piProgramCreateWithBinary(ctx, 1, &device, &len, &bin, 0, NULL, NULL, &prog);
    } else {
      const char *src = "__kernel void k(int v, __global int *o) { if (v < 0) o[0] = v; }";
      size_t len = strlen(src);
      r = table.piclProgramCreateWithSource(ctx, 1, &src, &len, &prog);
    }
    if (r != PI_SUCCESS || table.piProgramBuild(prog, 1, &device, NULL, NULL, NULL) != PI_SUCCESS) {
      fprintf(stderr, "bench_record: cannot build the kernel on \"%s\"\n", dname);
      return 2;
    }
  }
  for (int t = 0; t < threads; t++) {
    if (prog) {
      uint64_t *zero = NULL;
      if (table.piKernelCreate(prog, "k", &kernels[t]) != PI_SUCCESS ||
          table.piKernelSetArg(kernels[t], 1, sizeof zero, &zero) != PI_SUCCESS) {
        fprintf(stderr, "bench_record: cannot create the kernel\n");
        return 2;
      }
    }
    if (op == OP_LAUNCH && table.piQueueCreate(ctx, device, 0, &queues[t]) != PI_SUCCESS) {
      fprintf(stderr, "bench_record: cannot create a queue\n");
      return 2;
    }
  }
  return 0;
}

/* Prints "RESULT ns_per_call calls_per_s_until_stored bytes_per_call
 * recorder_cpu_ns_per_call merge_cpu_ns_per_call encoders_cpu_ns_per_call". */
static int child(const char *libdir, const char *wl_name, int mode, int threads,
                 const char *out)
{
  const workload *wl = NULL;
  for (size_t i = 0; i < NWORKLOADS; i++)
    if (strcmp(workloads[i].name, wl_name) == 0)
      wl = &workloads[i];
  if (!wl)
    return 2;
  op = wl->op;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", libdir, plugin_libs[wl->plugin]);
  pi_plugin target;
  void *dl = mode == MODE_TRACE ? bind_through_runtime(libdir, path, wl->plugin, out, &target)
                                : load_plugin(path, &target);
  if (mode == MODE_TRACE)
    dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD); /* the runtime's instance */
  table = target.PiFunctionTable;
  if (mode == MODE_WRITE) {
    const char *b = getenv("BENCH_WRITE_BYTES");
    write_bytes = b ? strtoul(b, NULL, 10) : 0;
    write_fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (!write_bytes || write_bytes > WRITE_BLOCK || write_fd < 0) {
      fprintf(stderr, "bench_record: write: no byte count from a trace run, or %s: %s\n", out,
              strerror(errno));
      return 2;
    }
  } else if (mode != MODE_DIRECT && mode != MODE_TRACE) {
    setenv("SYCL_PI_RECORD", out, 1);
    setenv("SYCL_PI_RECORD_DATA", mode == MODE_REC_ALL ? "all" : "none", 1);
    if (mode == MODE_SHIM)
      setenv("SYCL_PI_RECORD_FILTER",
             "-piQueueFinish,-piKernelSetArg,-piDeviceGetInfo,-piEnqueueKernelLaunch,"
             "-piEventRelease",
             1);
    snprintf(path, sizeof path, "%s/libpi_shim.so", libdir);
    void *shim = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    wrap_fn wrap = shim ? (wrap_fn)(uintptr_t)dlsym(shim, "pitrace_shim_wrap") : NULL;
    pi_plugin wrapped;
    if (!wrap || !wrap(&target, "bench", path, plugin_backends[wl->plugin], &wrapped)) {
      fprintf(stderr, "bench_record: cannot wrap with the shim %s\n", path);
      return 2;
    }
    table = wrapped.PiFunctionTable;
  }
  int st = set_up(wl->plugin, dl, threads);
  if (st)
    return st;
  if (mode == MODE_TRACE) {
    /* The measured calls through the runtime; what discovery and set-up
     * traced is cut from the file, which the runtime appends to. */
    table.piQueueFinish = tr_finish;
    table.piKernelSetArg = tr_setarg;
    table.piDeviceGetInfo = tr_getinfo;
    table.piEnqueueKernelLaunch = tr_launch;
    table.piEventRelease = tr_evrelease;
    /* A runtime that buffers the trace file writes set-up's blocks first. */
    if (rt_trace_flush)
      rt_trace_flush();
    if (truncate(out, 0) != 0) {
      fprintf(stderr, "bench_record: %s: %s\n", out, strerror(errno));
      return 2;
    }
  }
  thread_result res[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  uint64_t cpu0 = cpu_now(CLOCK_PROCESS_CPUTIME_ID), main0 = cpu_now(CLOCK_THREAD_CPUTIME_ID);
  bool recorded = mode == MODE_REC_NONE || mode == MODE_REC_ALL;
  pthread_t sampler_th;
  uint64_t sampler_cpu = 0;
  main_tid = gettid();
  if (recorded && pthread_create(&sampler_th, NULL, sampler, &sampler_cpu) != 0) {
    fprintf(stderr, "bench_record: cannot start the sampler thread\n");
    return 2;
  }
  pthread_barrier_init(&start_line, NULL, (unsigned)threads + 1);
  for (int i = 0; i < threads; i++) {
    res[i] = (thread_result){.index = i};
    if (pthread_create(&th[i], NULL, run, &res[i]) != 0) {
      fprintf(stderr, "bench_record: cannot start thread %d\n", i);
      return 2;
    }
  }
  pthread_barrier_wait(&start_line);
  for (int i = 0; i < threads; i++)
    pthread_join(th[i], NULL);
  uint64_t t0 = res[0].start;
  for (int i = 1; i < threads; i++)
    t0 = res[i].start < t0 ? res[i].start : t0;
  /* Recorded: piTearDown closes the session once the writer has stored
   * every call. Traced: every call was written (write(2)) as it returned. */
  atomic_store(&sampler_fast, 1);
  if (mode != MODE_TRACE)
    table.piTearDown(NULL);
  uint64_t t1 = now();
  if (recorded) {
    atomic_store(&sampler_stop, 1);
    pthread_join(sampler_th, NULL);
  }
  /* Every other thread's CPU time: the writer's (exited threads count). */
  uint64_t other = cpu_now(CLOCK_PROCESS_CPUTIME_ID) - cpu0 -
                   (cpu_now(CLOCK_THREAD_CPUTIME_ID) - main0);
  if (atomic_load(&call_failed)) {
    fprintf(stderr, "bench_record: %s: a measured call failed (%d)\n", wl_name,
            atomic_load(&call_failed));
    return 1;
  }
  uint64_t sum = 0;
  for (int i = 0; i < threads; i++) {
    sum += res[i].ns;
    other -= res[i].cpu < other ? res[i].cpu : other;
  }
  other -= sampler_cpu < other ? sampler_cpu : other;
  /* The encoders' as sampled; the merge thread's the rest (its last
   * moments, the session's close, go unsampled otherwise). */
  uint64_t enc = 0;
  for (int i = 0; i < nsampled; i++)
    if (sampled[i].role == ROLE_ENC)
      enc += sampled[i].cpu;
  enc = enc < other ? enc : other;
  double total = (double)calls * threads, stored = (double)(calls + WARMUP) * threads, bytes = 0;
  if (mode != MODE_DIRECT && mode != MODE_SHIM) {
    static const char *const side[] = {"", "-wal"};
    for (size_t i = 0; i < (mode == MODE_TRACE || mode == MODE_WRITE ? 1 : 2); i++) {
      struct stat s;
      snprintf(path, sizeof path, "%s%s", out, side[i]);
      if (stat(path, &s) == 0)
        bytes += (double)s.st_size;
    }
  }
  printf("RESULT %.3f %.1f %.2f %.1f %.1f %.1f\n", (double)sum / total,
         total * 1e9 / (double)(t1 - t0), bytes / stored, (double)other / stored,
         (double)(other - enc) / stored, (double)enc / stored);
  return 0;
}

/* ---- The parent: rounds of children, then the tables --------------------------- */

typedef struct {
  double ns, rate, bytes, cpu, merge_cpu, enc_cpu;
  bool ok;
} sample;

enum { PACED, FLOODING };

/* Removes what a child left in dir. */
static void empty_dir(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  char path[4400];
  while (d && (e = readdir(d)))
    if (e->d_name[0] != '.') {
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
  if (d)
    closedir(d);
}

static char device_line[3][512]; /* per plugin kind, from the first child */

static bool measure(const char *self, const char *libdir, const char *dir, const char *wl,
                    enum plugin_kind kind, int mode, int threads, long n, long pace, sample *s)
{
  char out[4200], cmd[16384];
  snprintf(out, sizeof out, "%s/%s", dir,
           mode == MODE_TRACE || mode == MODE_WRITE ? "trace.txt" : "session.db");
  snprintf(cmd, sizeof cmd, "'%s' --child '%s' %s %s %d %ld %ld '%s'", self, libdir, wl,
           mode_names[mode], threads, n, pace, out);
  FILE *p = popen(cmd, "r");
  char line[1024];
  s->ok = false;
  while (p && fgets(line, sizeof line, p)) {
    if (sscanf(line, "RESULT %lf %lf %lf %lf %lf %lf", &s->ns, &s->rate, &s->bytes, &s->cpu,
               &s->merge_cpu, &s->enc_cpu) == 6)
      s->ok = true;
    else if (strncmp(line, "DEVICE ", 7) == 0 && !device_line[kind][0])
      snprintf(device_line[kind], sizeof device_line[kind], "%.*s", (int)strcspn(line + 7, "\n"),
               line + 7);
  }
  if (!p || pclose(p) != 0)
    s->ok = false;
  empty_dir(dir);
  return s->ok;
}

/* "min / median / max" of v (n values), each printed with fmt. */
static void mmm_cell(char *out, size_t outn, double *v, size_t n, const char *fmt, double scale)
{
  if (n == 0) {
    snprintf(out, outn, "failed");
    return;
  }
  double lo, med, hi;
  bench_mmm(v, n, &lo, &med, &hi);
  char a[32], b[32], c[32];
  snprintf(a, sizeof a, fmt, lo / scale);
  snprintf(b, sizeof b, fmt, med / scale);
  snprintf(c, sizeof c, fmt, hi / scale);
  if (n == 1)
    snprintf(out, outn, "%s", b);
  else
    snprintf(out, outn, "%s / %s / %s", a, b, c);
}

static int parse_list(const char *s, const char *what, char items[][32], int max)
{
  int n = 0;
  char *copy = strdup(s), *save = NULL;
  for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    if (n == max) {
      fprintf(stderr, "bench_record: too many %s\n", what);
      exit(2);
    }
    snprintf(items[n++], 32, "%s", w);
  }
  free(copy);
  return n;
}

static void usage(void)
{
  fprintf(stderr,
          "usage: bench_record [--rounds R] [--calls N] [--paced-calls N] [--pace NS]\n"
          "                    [--threads LIST] [--workloads LIST] [--modes LIST] [--cuda]\n"
          "                    [--icd FILE] [--list]\n"
          "  --rounds R         rounds, the ways interleaved within each (default 5)\n"
          "  --calls N          flooding: calls per thread (default 100000)\n"
          "  --paced-calls N    paced: calls per thread (default --calls / 4)\n"
          "  --pace NS          paced: ns of application work between calls (default 2000)\n"
          "  --threads LIST     thread counts, each workload at each (default 1,2,4,8)\n"
          "  --workloads LIST   (default %s;\n"
          "                     --list lists them)\n"
          "  --modes LIST       ways besides direct (default shim,rec-none,rec-all,trace;\n"
          "                     write: the trace's bytes written without formatting them)\n"
          "  --cuda             the CUDA workloads (%s) instead\n"
          "  --icd FILE         the OpenCL implementation for ocl-* (OCL_ICD_VENDORS; default\n"
          "                     /etc/OpenCL/vendors/pocl.icd where it exists)\n",
          default_workloads, cuda_workloads);
}

int main(int argc, char **argv)
{
  if (argc == 9 && strcmp(argv[1], "--child") == 0) {
    int mode = -1;
    for (int m = 0; m < NMODES; m++)
      if (strcmp(argv[4], mode_names[m]) == 0)
        mode = m;
    int threads = atoi(argv[5]);
    calls = atol(argv[6]);
    pace_ns = atol(argv[7]);
    if (mode < 0 || threads < 1 || threads > MAX_THREADS || calls < 1)
      return 2;
    return child(argv[2], argv[3], mode, threads, argv[8]);
  }
  long rounds = 5, pace = 2000, paced_calls = -1;
  calls = 100000;
  const char *wl_list = default_workloads, *thr_list = "1,2,4,8",
             *mode_list = "shim,rec-none,rec-all,trace", *icd = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--list") == 0) {
      for (size_t w = 0; w < NWORKLOADS; w++)
        printf("%-15s %s\n", workloads[w].name, workloads[w].what);
      return 0;
    } else if (strcmp(a, "--cuda") == 0) {
      wl_list = cuda_workloads;
    } else if (!v) {
      usage();
      return 2;
    } else if (strcmp(a, "--rounds") == 0) {
      rounds = atol(v), i++;
    } else if (strcmp(a, "--calls") == 0) {
      calls = atol(v), i++;
    } else if (strcmp(a, "--paced-calls") == 0) {
      paced_calls = atol(v), i++;
    } else if (strcmp(a, "--pace") == 0) {
      pace = atol(v), i++;
    } else if (strcmp(a, "--threads") == 0) {
      thr_list = v, i++;
    } else if (strcmp(a, "--workloads") == 0) {
      wl_list = v, i++;
    } else if (strcmp(a, "--modes") == 0) {
      mode_list = v, i++;
    } else if (strcmp(a, "--icd") == 0) {
      icd = v, i++;
    } else {
      usage();
      return 2;
    }
  }
  if (paced_calls < 0)
    paced_calls = calls / 4;
  if (rounds < 1 || rounds > 1000 || calls < 1 || paced_calls < 1 || pace < 1) {
    fprintf(stderr, "bench_record: --rounds (1..1000), --calls, --paced-calls and --pace must "
                    "be positive\n");
    return 2;
  }
  char names[64][32];
  int nwl = parse_list(wl_list, "workloads", names, 64), wl_idx[64];
  for (int w = 0; w < nwl; w++) {
    wl_idx[w] = -1;
    for (size_t k = 0; k < NWORKLOADS; k++)
      if (strcmp(names[w], workloads[k].name) == 0)
        wl_idx[w] = (int)k;
    if (wl_idx[w] < 0) {
      fprintf(stderr, "bench_record: unknown workload '%s' (--list lists them)\n", names[w]);
      return 2;
    }
  }
  int nthr = parse_list(thr_list, "thread counts", names, 64), thr[64];
  for (int t = 0; t < nthr; t++) {
    thr[t] = atoi(names[t]);
    if (thr[t] < 1 || thr[t] > MAX_THREADS) {
      fprintf(stderr, "bench_record: thread counts are 1 to %d\n", MAX_THREADS);
      return 2;
    }
  }
  int nm = parse_list(mode_list, "modes", names, 64), modes[NMODES] = {MODE_DIRECT};
  int nmodes = 1;
  for (int m = 0; m < nm; m++) {
    int found = -1;
    for (int k = 1; k < NMODES; k++)
      if (strcmp(names[m], mode_names[k]) == 0)
        found = k;
    if (found < 0) {
      fprintf(stderr, "bench_record: unknown mode '%s' (shim, rec-none, rec-all, trace, write)\n",
              names[m]);
      return 2;
    }
    bool dup = false;
    for (int k = 0; k < nmodes; k++)
      dup |= modes[k] == found;
    if (!dup)
      modes[nmodes++] = found;
  }
  if (!icd && access("/etc/OpenCL/vendors/pocl.icd", R_OK) == 0)
    icd = "/etc/OpenCL/vendors/pocl.icd";
  if (icd)
    setenv("OCL_ICD_VENDORS", icd, 1);

  char self[4096], libdir[4200], dir[] = "/tmp/bench_record-XXXXXX";
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return 2;
  self[n] = 0;
  snprintf(libdir, sizeof libdir, "%s", self);
  *strrchr(libdir, '/') = 0;
  strcat(libdir, "/../lib");
  if (!mkdtemp(dir)) {
    fprintf(stderr, "bench_record: cannot make a directory in /tmp: %s\n", strerror(errno));
    return 2;
  }

  /* samples[((w * nthr + t) * 2 + pass) * NMODES + mode][round] */
  size_t ncells = (size_t)nwl * (size_t)nthr * 2 * NMODES;
  sample *samples = calloc(ncells * (size_t)rounds, sizeof *samples);
#define CELL(w, t, pass, m) (((((size_t)(w) * (size_t)nthr + (size_t)(t)) * 2 + (pass)) * NMODES + \
                              (size_t)(m)) * (size_t)rounds)
  bench_print_machine("bench_record");
  printf("rounds: %ld; in each, every workload x threads x way runs once in a fresh process, the\n"
         "ways in an order rotated from round to round; \"added\" = the way's figure minus\n"
         "direct's in the same round; min / median / max over the rounds\n",
         rounds);
  printf("each thread first makes %d untimed calls (the shim's ring for the thread, the writer's\n"
         "  start: once per thread or process), then the timed ones\n", WARMUP);
  printf("paced: %ld calls per thread, %ld ns of spinning between calls; ns/call = the calls' "
         "own\n  time (two clock reads around each), mean over every call\n",
         paced_calls, pace);
  printf("flooding: %ld calls per thread back to back; ns/call = each thread's loop time / its\n"
         "  calls, every wait for the writer included; calls/s until stored = all calls / (first\n"
         "  call .. session closed); bytes/call = database (trace: file) size / calls;\n"
         "  recorder CPU ns/call = CPU time of the process's threads other than the calling\n"
         "  and main ones (the writer's) / calls stored; of it, encoders = the encoder\n"
         "  threads' (\"pitrace-enc\", sampled every 0.2 ms as the session closes), merge =\n"
         "  the rest: the merge thread's (\"pitrace-merge\")\n",
         calls);
  printf("ways:\n");
  for (int k = 0; k < nmodes; k++)
    printf("  %-9s %s\n", mode_names[modes[k]], mode_what[modes[k]]);
  printf("workloads:\n");
  for (int w = 0; w < nwl; w++)
    printf("  %-15s %s\n", workloads[wl_idx[w]].name, workloads[wl_idx[w]].what);
  fflush(stdout);
  int failures = 0;
  uint64_t started = now();
  /* Mode write copies the trace's bytes a call: learnt here, from a short
   * trace run of each workload and thread count (the thread tags of
   * several threads make lines longer). */
  double *write_probe = calloc((size_t)nwl * (size_t)nthr, sizeof *write_probe);
  bool any_write = false;
  for (int k = 0; k < nmodes; k++)
    any_write |= modes[k] == MODE_WRITE;
  for (int w = 0; any_write && w < nwl; w++)
    for (int t = 0; t < nthr; t++) {
      sample s;
      if (!measure(self, libdir, dir, workloads[wl_idx[w]].name, workloads[wl_idx[w]].plugin,
                   MODE_TRACE, thr[t], 2000, 0, &s) ||
          s.bytes < 1) {
        fprintf(stderr, "bench_record: %s, %d thread(s): the trace run for mode write failed\n",
                workloads[wl_idx[w]].name, thr[t]);
        return 1;
      }
      write_probe[w * nthr + t] = s.bytes;
    }
  for (long r = 0; r < rounds; r++) {
    for (int w = 0; w < nwl; w++) {
      const workload *wl = &workloads[wl_idx[w]];
      for (int t = 0; t < nthr; t++) {
        fprintf(stderr, "\rbench_record: round %ld of %ld, %s with %d thread(s)...%20s", r + 1,
                rounds, wl->name, thr[t], "");
        for (int pass = 0; pass < 2; pass++)
          for (int k = 0; k < nmodes; k++) {
            int m = modes[(k + r) % nmodes];
            sample *s = &samples[CELL(w, t, pass, m) + (size_t)r];
            if (m == MODE_WRITE) {
              char b[32];
              snprintf(b, sizeof b, "%.0f", write_probe[w * nthr + t]);
              setenv("BENCH_WRITE_BYTES", b, 1);
            }
            if (!measure(self, libdir, dir, wl->name, wl->plugin, m, thr[t],
                         pass == PACED ? paced_calls : calls, pass == PACED ? pace : 0, s)) {
              fprintf(stderr, "\nbench_record: %s, %d thread(s), %s, %s: the run failed\n",
                      wl->name, thr[t], pass == PACED ? "paced" : "flooding", mode_names[m]);
              failures++;
            }
          }
      }
    }
  }
  fprintf(stderr, "\rbench_record: done in %.0f s.%60s\n", (double)(now() - started) / 1e9, "");
  rmdir(dir);

  bool any_ocl = false;
  for (int w = 0; w < nwl; w++)
    any_ocl |= workloads[wl_idx[w]].plugin != PL_NULL;
  for (int k = 1; k < 3; k++)
    if (device_line[k][0])
      printf("device: %s%s%s\n", device_line[k], k == PL_OPENCL && icd ? ", OCL_ICD_VENDORS=" : "",
             k == PL_OPENCL && icd ? icd : "");
  if (any_ocl && !device_line[1][0] && !device_line[2][0])
    printf("device: none answered\n");
  printf("\n| workload | threads | way | paced ns/call | paced added ns | flooding ns/call | "
         "flooding added ns | calls/s until stored | recorder CPU ns/call | merge | encoders | "
         "bytes/call |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  double *v = malloc((size_t)rounds * sizeof *v);
  for (int w = 0; w < nwl; w++)
    for (int t = 0; t < nthr; t++)
      for (int k = 0; k < nmodes; k++) {
        int m = modes[k];
        char cells[9][128];
        for (int pass = 0; pass < 2; pass++) {
          const sample *s = &samples[CELL(w, t, pass, m)], *d = &samples[CELL(w, t, pass, 0)];
          size_t nv = 0;
          for (long r = 0; r < rounds; r++)
            if (s[r].ok)
              v[nv++] = s[r].ns;
          if (nv) {
            double lo, med, hi;
            bench_mmm(v, nv, &lo, &med, &hi);
            snprintf(cells[pass * 2], sizeof cells[0], "%.1f", med);
          } else
            snprintf(cells[pass * 2], sizeof cells[0], "failed");
          nv = 0;
          for (long r = 0; r < rounds; r++)
            if (s[r].ok && d[r].ok)
              v[nv++] = s[r].ns - d[r].ns;
          if (m == MODE_DIRECT)
            snprintf(cells[pass * 2 + 1], sizeof cells[0], "-");
          else
            mmm_cell(cells[pass * 2 + 1], sizeof cells[0], v, nv, "%+.1f", 1);
        }
        const sample *s = &samples[CELL(w, t, FLOODING, m)];
        size_t nv = 0;
        for (long r = 0; r < rounds; r++)
          if (s[r].ok)
            v[nv++] = s[r].rate;
        mmm_cell(cells[4], sizeof cells[0], v, nv, "%.2f M", 1e6);
        nv = 0;
        for (long r = 0; r < rounds; r++)
          if (s[r].ok)
            v[nv++] = s[r].bytes;
        if (m == MODE_DIRECT || m == MODE_SHIM)
          snprintf(cells[5], sizeof cells[5], "-");
        else if (nv) {
          double lo, med, hi;
          bench_mmm(v, nv, &lo, &med, &hi);
          snprintf(cells[5], sizeof cells[5], "%.1f", med);
        } else
          snprintf(cells[5], sizeof cells[5], "failed");
        for (int part = 0; part < 3; part++) { /* the recorder's, merge thread's, encoders' */
          nv = 0;
          for (long r = 0; r < rounds; r++)
            if (s[r].ok)
              v[nv++] = part == 0 ? s[r].cpu : part == 1 ? s[r].merge_cpu : s[r].enc_cpu;
          if (m == MODE_REC_NONE || m == MODE_REC_ALL)
            mmm_cell(cells[6 + part], sizeof cells[0], v, nv, "%.1f", 1);
          else
            snprintf(cells[6 + part], sizeof cells[0], "-");
        }
        printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
               k == 0 ? workloads[wl_idx[w]].name : "", thr[t], mode_names[m], cells[0],
               cells[1], cells[2], cells[3], cells[4], cells[6], cells[7], cells[8], cells[5]);
      }
  printf("\nns/call and bytes/call: median over the rounds. calls/s for direct and shim: the "
         "calls' own rate.\n%.0f s in all; load average %.2f at the end%s\n",
         (double)(now() - started) / 1e9, bench_load(),
         failures ? "; SOME RUNS FAILED (above)" : "");
  free(v);
  free(samples);
  free(write_probe);
  return failures ? 1 : 0;
}
