/*
 * bench_frontend: what the OpenCL front end adds per call over calling the
 * same OpenCL implementation directly, measured side by side in one run.
 *
 * Three ways, each in a fresh process (the runtime and the shim read their
 * settings once per process), run round by round so that the machine's
 * drift hits every way alike; the difference is taken within a round:
 *   direct    the implementation's ICD (PoCL's by default), called through
 *             its dispatch table (dlopen'ed as the loader does; no loader on
 *             either side)
 *   frontend  libpitrace_opencl.so the same way: OpenCL -> PI -> the
 *             OpenCL plugin -> the same implementation (SYCL_DEVICE_FILTER=
 *             opencl, so that another plugin's device, CUDA's on a GPU
 *             host, is not the one measured)
 *   recorded  the front end with SYCL_PI_RECORD (data none)
 * Calls: clSetKernelArg (4 bytes), clGetDeviceInfo (an integer), and
 * clEnqueueNDRangeKernel of an empty one-work-item kernel (with a
 * clFinish every 256 launches, included in the time). Reports ns per call
 * for each way and the added ns (min / median / max over the rounds).
 *
 * Usage: bench_frontend [--calls N] [--rounds R] [--icd FILE]
 *   (defaults 200000, 5, /etc/OpenCL/vendors/pocl.icd: the vendor file of
 *   the implementation to compare with, e.g. NVIDIA's on a GPU host)
 * Run from the build tree: it finds libpitrace_opencl.so beside libpirt.so.
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_icd.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { OP_SETARG, OP_INFO, OP_LAUNCH, NOPS };
static const char *const op_names[NOPS] = {"clSetKernelArg", "clGetDeviceInfo",
                                           "clEnqueueNDRangeKernel"};
enum { WAY_DIRECT, WAY_FRONTEND, WAY_RECORDED, NWAYS };
static const char *const way_names[NWAYS] = {"direct", "frontend", "recorded"};

#define D(obj) (*(const struct _cl_icd_dispatch *const *)(obj))

static double now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int die(const char *what, cl_int err)
{
  fprintf(stderr, "bench_frontend: %s failed (%d)\n", what, err);
  exit(1);
}

/* Runs the three calls `calls` times each on the ICD library `lib`; prints
 * "ns ns ns" (per call) on stdout. */
static int child(const char *lib, long calls)
{
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "bench_frontend: %s\n", dlerror());
    return 1;
  }
  void *(*gea)(const char *) = (void *(*)(const char *))dlsym(h, "clGetExtensionFunctionAddress");
  cl_int (*icd_get)(cl_uint, cl_platform_id *, cl_uint *) =
      gea ? (cl_int(*)(cl_uint, cl_platform_id *, cl_uint *))gea("clIcdGetPlatformIDsKHR") : NULL;
  if (!icd_get) {
    fprintf(stderr, "bench_frontend: %s is not an OpenCL ICD\n", lib);
    return 1;
  }
  cl_platform_id p;
  cl_device_id dev;
  cl_int err = icd_get(1, &p, NULL);
  if (err)
    die("clIcdGetPlatformIDsKHR", err);
  if ((err = D(p)->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL)))
    die("clGetDeviceIDs", err);
  cl_context ctx = D(dev)->clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (err)
    die("clCreateContext", err);
  cl_command_queue q = D(ctx)->clCreateCommandQueue(ctx, dev, 0, &err);
  if (err)
    die("clCreateCommandQueue", err);
  const char *src = "__kernel void k(__global int *a, int b) { if (b < 0) a[0] = b; }";
  cl_program prog = D(ctx)->clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  if (err || (err = D(prog)->clBuildProgram(prog, 1, &dev, "", NULL, NULL)))
    die("building the kernel", err);
  cl_kernel k = D(prog)->clCreateKernel(prog, "k", &err);
  if (err)
    die("clCreateKernel", err);
  cl_mem buf = D(ctx)->clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
  if (err || (err = D(k)->clSetKernelArg(k, 0, sizeof buf, &buf)))
    die("the buffer argument", err);

  double ns[NOPS];
  int b = 1;
  double t = now_ns();
  for (long i = 0; i < calls; i++) {
    b = (int)i;
    D(k)->clSetKernelArg(k, 1, sizeof b, &b);
  }
  ns[OP_SETARG] = (now_ns() - t) / calls;
  cl_uint cu;
  t = now_ns();
  for (long i = 0; i < calls; i++)
    D(dev)->clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
  ns[OP_INFO] = (now_ns() - t) / calls;
  size_t one = 1;
  long launches = calls / 10; /* a launch costs microseconds on a CPU device */
  t = now_ns();
  for (long i = 0; i < launches; i++) {
    if ((err = D(q)->clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL, NULL)))
      die("clEnqueueNDRangeKernel", err);
    if (i % 256 == 255)
      D(q)->clFinish(q);
  }
  D(q)->clFinish(q);
  ns[OP_LAUNCH] = (now_ns() - t) / launches;
  printf("%.2f %.2f %.2f\n", ns[0], ns[1], ns[2]);
  D(k)->clReleaseKernel(k);
  D(prog)->clReleaseProgram(prog);
  D(buf)->clReleaseMemObject(buf);
  D(q)->clReleaseCommandQueue(q);
  D(ctx)->clReleaseContext(ctx);
  return 0;
}

/* The library paths: the implementation's from its .icd file, the front
 * end's beside this program's lib directory. */
static void paths(const char *icd, char *impl, char *fe, size_t n, size_t fen)
{
  FILE *f = fopen(icd, "r");
  if (!f || !fgets(impl, (int)n, f)) {
    fprintf(stderr, "bench_frontend: the vendor file %s is not readable (--icd FILE)\n", icd);
    if (f)
      fclose(f);
    exit(2);
  }
  fclose(f);
  impl[strcspn(impl, "\r\n")] = 0;
  char self[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len < 0)
    exit(2);
  self[len] = 0;
  *strrchr(self, '/') = 0;
  if ((size_t)snprintf(fe, fen, "%s/../lib/libpitrace_opencl.so", self) >= fen)
    exit(2);
}

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
  long calls = 200000, rounds = 5;
  const char *child_lib = NULL, *icd = "/etc/OpenCL/vendors/pocl.icd";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
      calls = atol(argv[++i]);
    else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = atol(argv[++i]);
    else if (strcmp(argv[i], "--icd") == 0 && i + 1 < argc)
      icd = argv[++i];
    else if (strcmp(argv[i], "--child") == 0 && i + 1 < argc)
      child_lib = argv[++i];
    else {
      fprintf(stderr, "usage: bench_frontend [--calls N] [--rounds R] [--icd FILE]\n");
      return 2;
    }
  }
  if (calls < 100 || rounds < 1) {
    fprintf(stderr, "bench_frontend: --calls must be >= 100 and --rounds >= 1\n");
    return 2;
  }
  if (child_lib)
    return child(child_lib, calls);

  if (strchr(icd, '\''))
    return fprintf(stderr, "bench_frontend: --icd: a path without quotes, please\n"), 2;
  char impl[PATH_MAX], fe[PATH_MAX + 64], rec[] = "/tmp/bench_frontend-XXXXXX";
  paths(icd, impl, fe, sizeof impl, sizeof fe);
  if (!mkdtemp(rec))
    return 1;
  double ns[64][NWAYS][NOPS];
  if (rounds > 64)
    rounds = 64;
  for (long r = 0; r < rounds; r++) {
    for (int w = 0; w < NWAYS; w++) {
      char full[4 * PATH_MAX];
      int pid = (int)getpid();
      if (w == WAY_RECORDED)
        snprintf(full, sizeof full,
                 "SYCL_PI_RECORD_DATA=none SYCL_PI_RECORD=%s/s%ld.db SYCL_DEVICE_FILTER=opencl "
                 "OCL_ICD_VENDORS='%s' /proc/%d/exe --child '%s' --calls %ld",
                 rec, r, icd, pid, fe, calls);
      else
        snprintf(full, sizeof full,
                 "SYCL_DEVICE_FILTER=opencl OCL_ICD_VENDORS='%s' /proc/%d/exe --child '%s' "
                 "--calls %ld", icd, pid, w == WAY_DIRECT ? impl : fe, calls);
      FILE *p = popen(full, "r");
      if (!p || fscanf(p, "%lf %lf %lf", &ns[r][w][0], &ns[r][w][1], &ns[r][w][2]) != 3) {
        fprintf(stderr, "bench_frontend: the %s run failed\n", way_names[w]);
        return 1;
      }
      if (pclose(p) != 0) {
        fprintf(stderr, "bench_frontend: the %s run failed\n", way_names[w]);
        return 1;
      }
    }
  }
  char rm[PATH_MAX];
  snprintf(rm, sizeof rm, "rm -rf '%s'", rec);
  if (system(rm) != 0)
    fprintf(stderr, "bench_frontend: could not remove %s\n", rec);

  printf("bench_frontend: %ld calls (launches: %ld) x %ld rounds on %s; ns per call,\n"
         "median over rounds; added = way - direct within a round (min / median / max)\n\n",
         calls, calls / 10, rounds, impl);
  printf("%-24s %9s %9s %9s   %-22s %-22s\n", "call", "direct", "frontend", "recorded",
         "frontend added", "recorded added");
  for (int o = 0; o < NOPS; o++) {
    double med[NWAYS], add[2][64];
    for (int w = 0; w < NWAYS; w++) {
      double v[64];
      for (long r = 0; r < rounds; r++)
        v[r] = ns[r][w][o];
      qsort(v, (size_t)rounds, sizeof *v, cmp);
      med[w] = v[rounds / 2];
    }
    for (int w = 1; w < NWAYS; w++) {
      for (long r = 0; r < rounds; r++)
        add[w - 1][r] = ns[r][w][o] - ns[r][WAY_DIRECT][o];
      qsort(add[w - 1], (size_t)rounds, sizeof **add, cmp);
    }
    char a[2][64];
    for (int w = 0; w < 2; w++)
      snprintf(a[w], sizeof a[w], "%+.1f/%+.1f/%+.1f", add[w][0], add[w][rounds / 2],
               add[w][rounds - 1]);
    printf("%-24s %9.1f %9.1f %9.1f   %-22s %-22s\n", op_names[o], med[0], med[1], med[2],
           a[0], a[1]);
  }
  return 0;
}
