/*
 * test_cuda.c: the CUDA plugin (libpi_cuda.so) through its PI function
 * table, on a real GPU: device info, buffers and sub-buffers, PTX programs
 * and kernels (by-value, buffer, USM and local-memory arguments, 1D and 2D
 * ranges), fills, copies, rectangular copies, maps, USM of the three kinds,
 * events with profiling, compile + link of two PTX modules, device globals,
 * native handles, build failures and the errors of what CUDA cannot do.
 *
 * Where no CUDA device exists (no driver, the toolkit's stub, no GPU) every
 * test that needs one is skipped with "no CUDA device: <the plugin's
 * reason>"; the tests of the plugin's answers there run everywhere.
 *
 * Built twice: as a Criterion suite (CTest's `cuda`) and, with
 * -DPITRACE_PLAIN_TEST, as a plain program with the same checks
 * (`test_cuda_plain`), for GPU machines without Criterion. Both run each
 * test in its own process. The plugin is $PITRACE_CUDA_PLUGIN, else
 * ../lib/libpi_cuda.so next to the test, else the build's.
 *
 * The PTX below comes from the .cu files of plugins/cuda/kernels through
 * plugins/cuda/kernels/embed_ptx.py.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pi/pi.h"

#ifndef PITRACE_PLAIN_TEST
#include <criterion/criterion.h>
#include <criterion/logging.h>
#else
/* ---- A plain stand-in for the part of Criterion used here ----------------
 * Each test runs in a child process: a failed check exits with 1, a skip
 * with 77. Checks always carry a message. */
#include <stdarg.h>
#include <sys/wait.h>

struct plain_test {
  const char *suite, *name;
  void (*fn)(void);
};
static struct plain_test plain_tests[64];
static int plain_count;

static void plain_register(const char *suite, const char *name,
                           void (*fn)(void))
{
  if (plain_count < 64)
    plain_tests[plain_count++] = (struct plain_test){suite, name, fn};
}

#define Test(suite, name, ...)                                                 \
  static void suite##_##name(void);                                            \
  __attribute__((constructor)) static void reg_##suite##_##name(void)          \
  {                                                                            \
    plain_register(#suite, #name, suite##_##name);                             \
  }                                                                            \
  static void suite##_##name(void)

__attribute__((format(printf, 4, 5), noreturn)) static void
plain_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
  va_list ap;
  printf("%s:%d: Assertion failed: %s: ", file, line, expr);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  exit(1);
}

#define cr_assert(cond, ...)                                                   \
  do {                                                                         \
    if (!(cond))                                                               \
      plain_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                      \
  } while (0)
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b), __VA_ARGS__)
#define cr_skip_test(...)                                                      \
  do {                                                                         \
    printf("skipped: ");                                                       \
    printf(__VA_ARGS__);                                                       \
    printf("\n");                                                              \
    fflush(stdout);                                                            \
    exit(77);                                                                  \
  } while (0)
#define cr_log_info(...)                                                       \
  do {                                                                         \
    printf(__VA_ARGS__);                                                       \
    printf("\n");                                                              \
  } while (0)

/* Runs every test (or those whose name holds argv[1]) in its own process. */
int main(int argc, char **argv)
{
  int passed = 0, failed = 0, skipped = 0;
  for (int i = 0; i < plain_count; i++) {
    const struct plain_test *t = &plain_tests[i];
    if (argc > 1 && !strstr(t->name, argv[1]))
      continue;
    printf("[RUN ] %s::%s\n", t->suite, t->name);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      alarm(300);
      t->fn();
      fflush(stdout);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    const char *verdict;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
      verdict = "PASS", passed++;
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
      verdict = "SKIP", skipped++;
    else
      verdict = "FAIL", failed++;
    if (WIFSIGNALED(status))
      printf("%s::%s crashed with signal %d\n", t->suite, t->name,
             WTERMSIG(status));
    printf("[%s] %s::%s\n", verdict, t->suite, t->name);
    fflush(stdout);
  }
  printf("[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | "
         "Skipped: %d\n",
         passed + failed + skipped, passed, failed, skipped);
  return failed ? 1 : 0;
}
#endif

/* ---- The plugin ------------------------------------------------------------- */

static struct pi_function_table pi;
static pi_plugin info;
static void *plugin;

static const char *last_error(void)
{
  char *m = NULL;
  if (pi.piPluginGetLastError)
    pi.piPluginGetLastError(&m);
  return m && *m ? m : "(no message)";
}

#define TRY(call)                                                              \
  do {                                                                         \
    pi_result try_r_ = (call);                                                 \
    cr_assert_eq(try_r_, PI_SUCCESS, "%s returned %d: %s", #call,              \
                 (int)try_r_, last_error());                                   \
  } while (0)

/* A call that must fail with `code` and a message holding `text`. */
#define FAILS(call, code, text)                                                \
  do {                                                                         \
    pi_result fails_r_ = (call);                                               \
    cr_assert_eq(fails_r_, (code), "%s returned %d, not %s (%d): %s", #call,   \
                 (int)fails_r_, #code, (int)(code), last_error());             \
    cr_assert(strstr(last_error(), (text)) != NULL,                            \
              "%s: the message lacks \"%s\": %s", #call, (text),               \
              last_error());                                                   \
  } while (0)

static const char *plugin_path(void)
{
  static char buf[4096];
  const char *env = getenv("PITRACE_CUDA_PLUGIN");
  if (env && *env)
    return env;
  char exe[3072];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = 0;
      snprintf(buf, sizeof buf, "%s/../lib/libpi_cuda.so", exe);
      if (access(buf, R_OK) == 0)
        return buf;
    }
  }
#ifdef PITRACE_LIB_DIR
  return PITRACE_LIB_DIR "/libpi_cuda.so";
#else
  return "libpi_cuda.so";
#endif
}

static void load_plugin(void)
{
  const char *path = plugin_path();
  plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  cr_assert(plugin != NULL, "cannot load the CUDA plugin %s: %s", path,
            dlerror());
  void *sym = dlsym(plugin, "piPluginInit");
  cr_assert(sym != NULL, "%s exports no piPluginInit", path);
  pi_plugin_init_fn init;
  memcpy(&init, &sym, sizeof sym);
  memset(&info, 0, sizeof info);
  snprintf(info.PiVersion, sizeof info.PiVersion, "%s", _PI_H_VERSION_STRING);
  pi_result r = init(&info);
  pi = info.PiFunctionTable;
  cr_assert_eq(r, PI_SUCCESS, "piPluginInit returned %d: %s", (int)r,
               last_error());
}

static pi_platform plat;
static pi_device dev;
static pi_context ctx;
static pi_queue q; /* profiling */

/* Loads the plugin and sets up its first device, or skips the test. */
static void need_device(void)
{
  load_plugin();
  pi_uint32 n = 0;
  TRY(pi.piPlatformsGet(0, NULL, &n));
  if (n == 0)
    cr_skip_test("no CUDA device: %s", last_error());
  TRY(pi.piPlatformsGet(1, &plat, NULL));
  pi_uint32 devices = 0;
  TRY(pi.piDevicesGet(plat, PI_DEVICE_TYPE_ALL, 1, &dev, &devices));
  cr_assert(devices >= 1, "a CUDA platform without devices");
  TRY(pi.piContextCreate(NULL, 1, &dev, NULL, NULL, &ctx));
  TRY(pi.piQueueCreate(ctx, dev, PI_QUEUE_FLAG_PROFILING_ENABLE, &q));
}

static void done(void)
{
  TRY(pi.piQueueRelease(q));
  TRY(pi.piContextRelease(ctx));
  TRY(pi.piTearDown(NULL));
}

static pi_program create_ptx(const char *ptx)
{
  size_t len = strlen(ptx);
  const unsigned char *bin = (const unsigned char *)ptx;
  pi_int32 status = -1;
  pi_program p = NULL;
  TRY(pi.piProgramCreateWithBinary(ctx, 1, &dev, &len, &bin, 0, NULL, &status,
                                   &p));
  cr_assert_eq(status, PI_SUCCESS, "binary status %d", (int)status);
  return p;
}

static pi_program build_ptx(const char *ptx)
{
  pi_program p = create_ptx(ptx);
  TRY(pi.piProgramBuild(p, 1, &dev, NULL, NULL, NULL));
  return p;
}

static pi_kernel kernel(pi_program p, const char *name)
{
  pi_kernel k = NULL;
  TRY(pi.piKernelCreate(p, name, &k));
  return k;
}

static pi_mem buffer(pi_mem_flags flags, size_t size, void *host)
{
  pi_mem m = NULL;
  TRY(pi.piMemBufferCreate(ctx, flags, size, host, &m, NULL));
  return m;
}

static void set_mem(pi_kernel k, pi_uint32 index, pi_mem m)
{
  TRY(pi.piextKernelSetArgMemObj(k, index, NULL, &m));
}

static void set_usm(pi_kernel k, pi_uint32 index, void *ptr)
{
  TRY(pi.piextKernelSetArgPointer(k, index, sizeof ptr, &ptr));
}

static void launch1(pi_queue queue, pi_kernel k, size_t global,
                    const size_t *local, pi_event *ev)
{
  TRY(pi.piEnqueueKernelLaunch(queue, k, 1, NULL, &global, local, 0, NULL,
                               ev));
}

static void read_all(pi_mem m, void *dst, size_t size)
{
  TRY(pi.piEnqueueMemBufferRead(q, m, PI_TRUE, 0, size, dst, 0, NULL, NULL));
}

/* ---- Embedded PTX ------------------------------------------------------------ */

/* BEGIN PTX test_kernels (generated by plugins/cuda/kernels/embed_ptx.py from plugins/cuda/kernels/test_kernels.cu) */
static const char test_kernels_ptx[] =
    "//\n"
    "// Generated by NVIDIA NVVM Compiler\n"
    "//\n"
    "// Compiler Build ID: CL-36424714\n"
    "// Cuda compilation tools, release 13.0, V13.0.88\n"
    "// Based on NVVM 7.0.1\n"
    "//\n"
    "\n"
    ".version 7.8\n"
    ".target sm_90\n"
    ".address_size 64\n"
    "\n"
    "\t// .globl\tvadd\n"
    ".global .align 4 .u32 counter;\n"
    ".extern .shared .align 16 .b8 local_mem[];\n"
    "\n"
    ".visible .entry vadd(\n"
    "\t.param .u64 vadd_param_0,\n"
    "\t.param .u64 vadd_param_1,\n"
    "\t.param .u64 vadd_param_2,\n"
    "\t.param .u32 vadd_param_3\n"
    ")\n"
    "{\n"
    "\t.reg .pred \t%p<2>;\n"
    "\t.reg .f32 \t%f<4>;\n"
    "\t.reg .b32 \t%r<6>;\n"
    "\t.reg .b64 \t%rd<11>;\n"
    "\n"
    "\n"
    "\tld.param.u64 \t%rd1, [vadd_param_0];\n"
    "\tld.param.u64 \t%rd2, [vadd_param_1];\n"
    "\tld.param.u64 \t%rd3, [vadd_param_2];\n"
    "\tld.param.u32 \t%r2, [vadd_param_3];\n"
    "\tmov.u32 \t%r3, %ctaid.x;\n"
    "\tmov.u32 \t%r4, %ntid.x;\n"
    "\tmov.u32 \t%r5, %tid.x;\n"
    "\tmad.lo.s32 \t%r1, %r3, %r4, %r5;\n"
    "\tsetp.ge.u32 \t%p1, %r1, %r2;\n"
    "\t@%p1 bra \t$L__BB0_2;\n"
    "\n"
    "\tcvta.to.global.u64 \t%rd4, %rd1;\n"
    "\tmul.wide.u32 \t%rd5, %r1, 4;\n"
    "\tadd.s64 \t%rd6, %rd4, %rd5;\n"
    "\tcvta.to.global.u64 \t%rd7, %rd2;\n"
    "\tadd.s64 \t%rd8, %rd7, %rd5;\n"
    "\tld.global.f32 \t%f1, [%rd8];\n"
    "\tld.global.f32 \t%f2, [%rd6];\n"
    "\tadd.f32 \t%f3, %f2, %f1;\n"
    "\tcvta.to.global.u64 \t%rd9, %rd3;\n"
    "\tadd.s64 \t%rd10, %rd9, %rd5;\n"
    "\tst.global.f32 \t[%rd10], %f3;\n"
    "\n"
    "$L__BB0_2:\n"
    "\tret;\n"
    "\n"
    "}\n"
    "\t// .globl\tscale\n"
    ".visible .entry scale(\n"
    "\t.param .u64 scale_param_0,\n"
    "\t.param .f32 scale_param_1\n"
    ")\n"
    "{\n"
    "\t.reg .f32 \t%f<4>;\n"
    "\t.reg .b32 \t%r<5>;\n"
    "\t.reg .b64 \t%rd<5>;\n"
    "\n"
    "\n"
    "\tld.param.u64 \t%rd1, [scale_param_0];\n"
    "\tld.param.f32 \t%f1, [scale_param_1];\n"
    "\tcvta.to.global.u64 \t%rd2, %rd1;\n"
    "\tmov.u32 \t%r1, %ctaid.x;\n"
    "\tmov.u32 \t%r2, %ntid.x;\n"
    "\tmov.u32 \t%r3, %tid.x;\n"
    "\tmad.lo.s32 \t%r4, %r1, %r2, %r3;\n"
    "\tmul.wide.u32 \t%rd3, %r4, 4;\n"
    "\tadd.s64 \t%rd4, %rd2, %rd3;\n"
    "\tld.global.f32 \t%f2, [%rd4];\n"
    "\tmul.f32 \t%f3, %f2, %f1;\n"
    "\tst.global.f32 \t[%rd4], %f3;\n"
    "\tret;\n"
    "\n"
    "}\n"
    "\t// .globl\tsum2d\n"
    ".visible .entry sum2d(\n"
    "\t.param .u64 sum2d_param_0,\n"
    "\t.param .u64 sum2d_param_1,\n"
    "\t.param .u32 sum2d_param_2\n"
    ")\n"
    "{\n"
    "\t.reg .b32 \t%r<14>;\n"
    "\t.reg .b64 \t%rd<8>;\n"
    "\n"
    "\n"
    "\tld.param.u64 \t%rd1, [sum2d_param_0];\n"
    "\tld.param.u64 \t%rd2, [sum2d_param_1];\n"
    "\tld.param.u32 \t%r1, [sum2d_param_2];\n"
    "\tcvta.to.global.u64 \t%rd3, %rd2;\n"
    "\tcvta.to.global.u64 \t%rd4, %rd1;\n"
    "\tmov.u32 \t%r2, %ctaid.x;\n"
    "\tmov.u32 \t%r3, %ntid.x;\n"
    "\tmov.u32 \t%r4, %tid.x;\n"
    "\tmad.lo.s32 \t%r5, %r2, %r3, %r4;\n"
    "\tmov.u32 \t%r6, %ctaid.y;\n"
    "\tmov.u32 \t%r7, %ntid.y;\n"
    "\tmov.u32 \t%r8, %tid.y;\n"
    "\tmad.lo.s32 \t%r9, %r6, %r7, %r8;\n"
    "\tmad.lo.s32 \t%r10, %r9, %r1, %r5;\n"
    "\tmul.wide.u32 \t%rd5, %r10, 4;\n"
    "\tadd.s64 \t%rd6, %rd4, %rd5;\n"
    "\tld.global.u32 \t%r11, [%rd6];\n"
    "\tmad.lo.s32 \t%r12, %r5, 1000, %r9;\n"
    "\tadd.s32 \t%r13, %r12, %r11;\n"
    "\tadd.s64 \t%rd7, %rd3, %rd5;\n"
    "\tst.global.u32 \t[%rd7], %r13;\n"
    "\tret;\n"
    "\n"
    "}\n"
    "\t// .globl\tgroup_sums\n"
    ".visible .entry group_sums(\n"
    "\t.param .u64 group_sums_param_0,\n"
    "\t.param .u64 group_sums_param_1,\n"
    "\t.param .u64 group_sums_param_2,\n"
    "\t.param .u64 group_sums_param_3,\n"
    "\t.param .u64 group_sums_param_4\n"
    ")\n"
    "{\n"
    "\t.reg .pred \t%p<7>;\n"
    "\t.reg .b32 \t%r<79>;\n"
    "\t.reg .b64 \t%rd<38>;\n"
    "\n"
    "\n"
    "\tld.param.u64 \t%rd10, [group_sums_param_0];\n"
    "\tld.param.u64 \t%rd8, [group_sums_param_3];\n"
    "\tld.param.u64 \t%rd9, [group_sums_param_4];\n"
    "\tld.param.u32 \t%r1, [group_sums_param_1];\n"
    "\tmov.u32 \t%r33, local_mem;\n"
    "\tadd.s32 \t%r34, %r33, %r1;\n"
    "\tld.param.u32 \t%r2, [group_sums_param_2];\n"
    "\tadd.s32 \t%r35, %r33, %r2;\n"
    "\tmov.u32 \t%r3, %ntid.x;\n"
    "\tmov.u32 \t%r4, %ctaid.x;\n"
    "\tmov.u32 \t%r36, %tid.x;\n"
    "\tmad.lo.s32 \t%r37, %r4, %r3, %r36;\n"
    "\tcvta.to.global.u64 \t%rd11, %rd10;\n"
    "\tmul.wide.u32 \t%rd12, %r37, 4;\n"
    "\tadd.s64 \t%rd13, %rd11, %rd12;\n"
    "\tld.global.u32 \t%r38, [%rd13];\n"
    "\tshl.b32 \t%r39, %r36, 2;\n"
    "\tadd.s32 \t%r40, %r34, %r39;\n"
    "\tst.shared.u32 \t[%r40], %r38;\n"
    "\tmul.wide.s32 \t%rd14, %r38, %r38;\n"
    "\tshl.b32 \t%r41, %r36, 3;\n"
    "\tadd.s32 \t%r42, %r35, %r41;\n"
    "\tst.shared.u64 \t[%r42], %rd14;\n"
    "\tbar.sync \t0;\n"
    "\tsetp.ne.s32 \t%p1, %r36, 0;\n"
    "\t@%p1 bra \t$L__BB3_9;\n"
    "\n"
    "\tsetp.eq.s32 \t%p2, %r3, 0;\n"
    "\tmov.u64 \t%rd37, 0;\n"
    "\tmov.u32 \t%r78, 0;\n"
    "\t@%p2 bra \t$L__BB3_8;\n"
    "\n"
    "\tadd.s32 \t%r47, %r3, -1;\n"
    "\tand.b32  \t%r77, %r3, 3;\n"
    "\tsetp.lt.u32 \t%p3, %r47, 3;\n"
    "\tmov.u32 \t%r72, 0;\n"
    "\tmov.u64 \t%rd37, 0;\n"
    "\tmov.u32 \t%r78, %r72;\n"
    "\t@%p3 bra \t$L__BB3_5;\n"
    "\n"
    "\tsub.s32 \t%r70, %r3, %r77;\n"
    "\tadd.s32 \t%r67, %r35, 16;\n"
    "\tadd.s32 \t%r66, %r34, 8;\n"
    "\tmov.u32 \t%r72, 0;\n"
    "\tmov.u64 \t%rd37, 0;\n"
    "\n"
    "$L__BB3_4:\n"
    "\tld.shared.u32 \t%r53, [%r66+-8];\n"
    "\tadd.s32 \t%r54, %r53, %r78;\n"
    "\tld.shared.u64 \t%rd19, [%r67+-16];\n"
    "\tadd.s64 \t%rd20, %rd19, %rd37;\n"
    "\tld.shared.u32 \t%r55, [%r66+-4];\n"
    "\tadd.s32 \t%r56, %r55, %r54;\n"
    "\tld.shared.u64 \t%rd21, [%r67+-8];\n"
    "\tadd.s64 \t%rd22, %rd21, %rd20;\n"
    "\tld.shared.u32 \t%r57, [%r66];\n"
    "\tadd.s32 \t%r58, %r57, %r56;\n"
    "\tld.shared.u64 \t%rd23, [%r67];\n"
    "\tadd.s64 \t%rd24, %rd23, %rd22;\n"
    "\tld.shared.u32 \t%r59, [%r66+4];\n"
    "\tadd.s32 \t%r78, %r59, %r58;\n"
    "\tld.shared.u64 \t%rd25, [%r67+8];\n"
    "\tadd.s64 \t%rd37, %rd25, %rd24;\n"
    "\tadd.s32 \t%r72, %r72, 4;\n"
    "\tadd.s32 \t%r67, %r67, 32;\n"
    "\tadd.s32 \t%r66, %r66, 16;\n"
    "\tadd.s32 \t%r70, %r70, -4;\n"
    "\tsetp.ne.s32 \t%p4, %r70, 0;\n"
    "\t@%p4 bra \t$L__BB3_4;\n"
    "\n"
    "$L__BB3_5:\n"
    "\tsetp.eq.s32 \t%p5, %r77, 0;\n"
    "\t@%p5 bra \t$L__BB3_8;\n"
    "\n"
    "\tshl.b32 \t%r60, %r72, 3;\n"
    "\tadd.s32 \t%r61, %r60, %r2;\n"
    "\tadd.s32 \t%r75, %r33, %r61;\n"
    "\tshl.b32 \t%r63, %r72, 2;\n"
    "\tadd.s32 \t%r64, %r63, %r1;\n"
    "\tadd.s32 \t%r74, %r33, %r64;\n"
    "\n"
    "$L__BB3_7:\n"
    "\t.pragma \"nounroll\";\n"
    "\tld.shared.u32 \t%r65, [%r74];\n"
    "\tadd.s32 \t%r78, %r65, %r78;\n"
    "\tld.shared.u64 \t%rd26, [%r75];\n"
    "\tadd.s64 \t%rd37, %rd26, %rd37;\n"
    "\tadd.s32 \t%r75, %r75, 8;\n"
    "\tadd.s32 \t%r74, %r74, 4;\n"
    "\tadd.s32 \t%r77, %r77, -1;\n"
    "\tsetp.ne.s32 \t%p6, %r77, 0;\n"
    "\t@%p6 bra \t$L__BB3_7;\n"
    "\n"
    "$L__BB3_8:\n"
    "\tcvta.to.global.u64 \t%rd27, %rd8;\n"
    "\tmul.wide.u32 \t%rd28, %r4, 4;\n"
    "\tadd.s64 \t%rd29, %rd27, %rd28;\n"
    "\tst.global.u32 \t[%rd29], %r78;\n"
    "\tcvta.to.global.u64 \t%rd30, %rd9;\n"
    "\tmul.wide.u32 \t%rd31, %r4, 8;\n"
    "\tadd.s64 \t%rd32, %rd30, %rd31;\n"
    "\tst.global.u64 \t[%rd32], %rd37;\n"
    "\n"
    "$L__BB3_9:\n"
    "\tret;\n"
    "\n"
    "}\n"
    "\t// .globl\tadd_n\n"
    ".visible .entry add_n(\n"
    "\t.param .u64 add_n_param_0,\n"
    "\t.param .u32 add_n_param_1,\n"
    "\t.param .u32 add_n_param_2\n"
    ")\n"
    "{\n"
    "\t.reg .pred \t%p<2>;\n"
    "\t.reg .b32 \t%r<9>;\n"
    "\t.reg .b64 \t%rd<5>;\n"
    "\n"
    "\n"
    "\tld.param.u64 \t%rd1, [add_n_param_0];\n"
    "\tld.param.u32 \t%r2, [add_n_param_1];\n"
    "\tld.param.u32 \t%r3, [add_n_param_2];\n"
    "\tmov.u32 \t%r4, %ctaid.x;\n"
    "\tmov.u32 \t%r5, %ntid.x;\n"
    "\tmov.u32 \t%r6, %tid.x;\n"
    "\tmad.lo.s32 \t%r1, %r4, %r5, %r6;\n"
    "\tsetp.ge.u32 \t%p1, %r1, %r3;\n"
    "\t@%p1 bra \t$L__BB4_2;\n"
    "\n"
    "\tcvta.to.global.u64 \t%rd2, %rd1;\n"
    "\tmul.wide.u32 \t%rd3, %r1, 4;\n"
    "\tadd.s64 \t%rd4, %rd2, %rd3;\n"
    "\tld.global.u32 \t%r7, [%rd4];\n"
    "\tadd.s32 \t%r8, %r7, %r2;\n"
    "\tst.global.u32 \t[%rd4], %r8;\n"
    "\n"
    "$L__BB4_2:\n"
    "\tret;\n"
    "\n"
    "}\n"
    "\t// .globl\tspin\n"
    ".visible .entry spin(\n"
    "\t.param .u64 spin_param_0,\n"
    "\t.param .u64 spin_param_1\n"
    ")\n"
    "{\n"
    "\t.reg .pred \t%p<3>;\n"
    "\t.reg .b32 \t%r<2>;\n"
    "\t.reg .b64 \t%rd<8>;\n"
    "\n"
    "\n"
    "\tld.param.u64 \t%rd2, [spin_param_0];\n"
    "\tld.param.u64 \t%rd3, [spin_param_1];\n"
    "\t// begin inline asm\n"
    "\tmov.u64 %rd4, %globaltimer;\n"
    "\t// end inline asm\n"
    "\tsetp.eq.s64 \t%p1, %rd2, 0;\n"
    "\t@%p1 bra \t$L__BB5_2;\n"
    "\n"
    "$L__BB5_1:\n"
    "\t// begin inline asm\n"
    "\tmov.u64 %rd5, %globaltimer;\n"
    "\t// end inline asm\n"
    "\tsub.s64 \t%rd6, %rd5, %rd4;\n"
    "\tsetp.lt.u64 \t%p2, %rd6, %rd2;\n"
    "\t@%p2 bra \t$L__BB5_1;\n"
    "\n"
    "$L__BB5_2:\n"
    "\tcvta.to.global.u64 \t%rd7, %rd3;\n"
    "\tmov.u32 \t%r1, 1;\n"
    "\tst.global.u32 \t[%rd7], %r1;\n"
    "\tret;\n"
    "\n"
    "}\n"
    "\t// .globl\tbump\n"
    ".visible .entry bump(\n"
    "\t.param .u32 bump_param_0\n"
    ")\n"
    "{\n"
    "\t.reg .b32 \t%r<3>;\n"
    "\t.reg .b64 \t%rd<2>;\n"
    "\n"
    "\n"
    "\tld.param.u32 \t%r1, [bump_param_0];\n"
    "\tmov.u64 \t%rd1, counter;\n"
    "\tatom.global.add.u32 \t%r2, [%rd1], %r1;\n"
    "\tret;\n"
    "\n"
    "}\n";
/* END PTX test_kernels */

/* BEGIN PTX link_main (generated by plugins/cuda/kernels/embed_ptx.py from plugins/cuda/kernels/link_main.cu) */
static const char link_main_ptx[] =
    "//\n"
    "// Generated by NVIDIA NVVM Compiler\n"
    "//\n"
    "// Compiler Build ID: CL-36424714\n"
    "// Cuda compilation tools, release 13.0, V13.0.88\n"
    "// Based on NVVM 7.0.1\n"
    "//\n"
    "\n"
    ".version 7.8\n"
    ".target sm_90\n"
    ".address_size 64\n"
    "\n"
    "\t// .globl\tapply\n"
    ".extern .func  (.param .b32 func_retval0) twice_plus\n"
    "(\n"
    "\t.param .b32 twice_plus_param_0,\n"
    "\t.param .b32 twice_plus_param_1\n"
    ")\n"
    ";\n"
    "\n"
    ".visible .entry apply(\n"
    "\t.param .u64 apply_param_0,\n"
    "\t.param .f32 apply_param_1\n"
    ")\n"
    "{\n"
    "\t.reg .f32 \t%f<4>;\n"
    "\t.reg .b32 \t%r<5>;\n"
    "\t.reg .b64 \t%rd<5>;\n"
    "\n"
    "\n"
    "\tld.param.u64 \t%rd1, [apply_param_0];\n"
    "\tld.param.f32 \t%f1, [apply_param_1];\n"
    "\tcvta.to.global.u64 \t%rd2, %rd1;\n"
    "\tmov.u32 \t%r1, %ctaid.x;\n"
    "\tmov.u32 \t%r2, %ntid.x;\n"
    "\tmov.u32 \t%r3, %tid.x;\n"
    "\tmad.lo.s32 \t%r4, %r1, %r2, %r3;\n"
    "\tmul.wide.u32 \t%rd3, %r4, 4;\n"
    "\tadd.s64 \t%rd4, %rd2, %rd3;\n"
    "\tld.global.f32 \t%f2, [%rd4];\n"
    "\t{ // callseq 0, 0\n"
    "\t.reg .b32 temp_param_reg;\n"
    "\t.param .b32 param0;\n"
    "\tst.param.f32 \t[param0+0], %f2;\n"
    "\t.param .b32 param1;\n"
    "\tst.param.f32 \t[param1+0], %f1;\n"
    "\t.param .b32 retval0;\n"
    "\tcall.uni (retval0), \n"
    "\ttwice_plus, \n"
    "\t(\n"
    "\tparam0, \n"
    "\tparam1\n"
    "\t);\n"
    "\tld.param.f32 \t%f3, [retval0+0];\n"
    "\t} // callseq 0\n"
    "\tst.global.f32 \t[%rd4], %f3;\n"
    "\tret;\n"
    "\n"
    "}\n";
/* END PTX link_main */

/* BEGIN PTX link_lib (generated by plugins/cuda/kernels/embed_ptx.py from plugins/cuda/kernels/link_lib.cu) */
static const char link_lib_ptx[] =
    "//\n"
    "// Generated by NVIDIA NVVM Compiler\n"
    "//\n"
    "// Compiler Build ID: CL-36424714\n"
    "// Cuda compilation tools, release 13.0, V13.0.88\n"
    "// Based on NVVM 7.0.1\n"
    "//\n"
    "\n"
    ".version 7.8\n"
    ".target sm_90\n"
    ".address_size 64\n"
    "\n"
    "\t// .globl\ttwice_plus\n"
    "\n"
    ".visible .func  (.param .b32 func_retval0) twice_plus(\n"
    "\t.param .b32 twice_plus_param_0,\n"
    "\t.param .b32 twice_plus_param_1\n"
    ")\n"
    "{\n"
    "\t.reg .f32 \t%f<4>;\n"
    "\n"
    "\n"
    "\tld.param.f32 \t%f1, [twice_plus_param_0];\n"
    "\tld.param.f32 \t%f2, [twice_plus_param_1];\n"
    "\tfma.rn.f32 \t%f3, %f1, 0f40000000, %f2;\n"
    "\tst.param.f32 \t[func_retval0+0], %f3;\n"
    "\tret;\n"
    "\n"
    "}\n";
/* END PTX link_lib */

/* PTX that ptxas rejects: %rd1 is never declared. */
static const char broken_ptx[] = ".version 7.8\n"
                                 ".target sm_90\n"
                                 ".address_size 64\n"
                                 ".visible .entry broken(.param .u64 p)\n"
                                 "{\n"
                                 "  ld.param.u64 %rd1, [p];\n"
                                 "  ret;\n"
                                 "}\n";

/* ---- Tests that run everywhere ---------------------------------------------- */

/* The plugin initialises without a driver; piPlatformsGet then says why
 * there is no platform, with PI_SUCCESS. With a driver it has one. */
Test(cuda, init_and_platforms_with_or_without_a_driver)
{
  load_plugin();
  cr_assert(strncmp(info.PluginVersion, "1.", 2) == 0,
            "PluginVersion '%s' is not PI 1.x", info.PluginVersion);
#define CHECK_ENTRY(fn)                                                        \
  cr_assert(pi.fn != NULL, "the table leaves " #fn " NULL");
  PI_FOR_EACH_API(CHECK_ENTRY)
#undef CHECK_ENTRY
  pi_uint32 n = 99;
  TRY(pi.piPlatformsGet(0, NULL, &n));
  if (n == 0) {
    cr_assert(strstr(last_error(), "no CUDA platform") &&
                  (strstr(last_error(), "libcuda.so.1") ||
                   strstr(last_error(), "cuInit") ||
                   strstr(last_error(), "no devices")),
              "no platform, but the reason is unclear: %s", last_error());
    cr_log_info("no driver: %s", last_error());
  } else {
    cr_assert_eq(n, 1, "%u platforms; the CUDA plugin has one", n);
    pi_platform p;
    TRY(pi.piPlatformsGet(1, &p, NULL));
    pi_uint32 backend = 0;
    TRY(pi.piPlatformGetInfo(p, PI_EXT_PLATFORM_INFO_BACKEND, sizeof backend,
                             &backend, NULL));
    cr_assert_eq(backend, PI_EXT_PLATFORM_BACKEND_CUDA, "backend %u",
                 backend);
    char version[64];
    TRY(pi.piPlatformGetInfo(p, PI_PLATFORM_INFO_VERSION, sizeof version,
                             version, NULL));
    cr_assert(strncmp(version, "CUDA ", 5) == 0, "platform version '%s'",
              version);
  }
  /* Teardown and a second initialisation give the same answer. */
  TRY(pi.piTearDown(NULL));
  load_plugin();
  pi_uint32 again = 99;
  TRY(pi.piPlatformsGet(0, NULL, &again));
  cr_assert_eq(again, n, "%u platforms after re-initialisation, %u before",
               again, n);
  TRY(pi.piTearDown(NULL));
}

Test(cuda, another_pi_major_version_is_refused)
{
  void *dl = dlopen(plugin_path(), RTLD_NOW | RTLD_LOCAL);
  cr_assert(dl != NULL, "cannot load %s: %s", plugin_path(), dlerror());
  void *sym = dlsym(dl, "piPluginInit");
  pi_plugin_init_fn init;
  memcpy(&init, &sym, sizeof sym);
  pi_plugin p;
  memset(&p, 0, sizeof p);
  snprintf(p.PiVersion, sizeof p.PiVersion, "2.0");
  cr_assert_eq(init(&p), PI_ERROR_INVALID_OPERATION,
               "PI 2.0 was not refused");
  pi = p.PiFunctionTable;
  cr_assert(pi.piPluginGetLastError == NULL,
            "a refused init still filled the table");
}

/* What CUDA cannot do fails with PI_ERROR_INVALID_OPERATION and says so,
 * whatever the handles. */
Test(cuda, unsupported_features_are_clear_errors)
{
  load_plugin();
  pi_mem img = NULL;
  pi_image_format fmt = {PI_IMAGE_CHANNEL_ORDER_RGBA,
                         PI_IMAGE_CHANNEL_TYPE_FLOAT};
  pi_image_desc desc = {PI_MEM_TYPE_IMAGE2D, 4, 4, 1, 0, 0, 0, 0, 0, NULL};
  FAILS(pi.piMemImageCreate(NULL, 0, &fmt, &desc, NULL, &img),
        PI_ERROR_INVALID_OPERATION,
        "piMemImageCreate: images are not supported by the pitrace CUDA "
        "plugin");
  FAILS(pi.piEnqueueMemImageFill(NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL),
        PI_ERROR_INVALID_OPERATION, "images are not supported");
  pi_sampler s = NULL;
  FAILS(pi.piSamplerCreate(NULL, NULL, &s), PI_ERROR_INVALID_OPERATION,
        "samplers are not supported by the pitrace CUDA plugin");
  int v = 3;
  FAILS(pi.piextProgramSetSpecializationConstant(NULL, 7, sizeof v, &v),
        PI_ERROR_INVALID_OPERATION, "the runtime must emulate them");
  const char *src = "__kernel void k() {}";
  size_t len = strlen(src);
  pi_program prog = NULL;
  FAILS(pi.piclProgramCreateWithSource(NULL, 1, &src, &len, &prog),
        PI_ERROR_INVALID_OPERATION, "cannot compile OpenCL C source");
  FAILS(pi.piextEnqueueReadHostPipe(NULL, NULL, "p", PI_TRUE, &v, sizeof v,
                                    0, NULL, NULL),
        PI_ERROR_INVALID_OPERATION, "host pipes");
  pi_native_handle h;
  FAILS(pi.piextPlatformGetNativeHandle(NULL, &h), PI_ERROR_INVALID_OPERATION,
        "CUDA has no platform object");
  TRY(pi.piTearDown(NULL));
}

/* ---- Tests on the GPU ------------------------------------------------------- */

Test(cuda, device_info)
{
  need_device();
  char name[256], vendor[64], version[32], driver[32], pci[64];
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_NAME, sizeof name, name, NULL));
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_VENDOR, sizeof vendor, vendor,
                         NULL));
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_VERSION, sizeof version, version,
                         NULL));
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_DRIVER_VERSION, sizeof driver,
                         driver, NULL));
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_PCI_ADDRESS, sizeof pci, pci,
                         NULL));
  cr_assert(strlen(name) > 0, "empty device name");
  cr_assert(strcmp(vendor, "NVIDIA Corporation") == 0, "vendor '%s'", vendor);
  int major = 0, minor = 0;
  cr_assert(sscanf(version, "%d.%d", &major, &minor) == 2 && major >= 3,
            "version '%s' is no compute capability", version);
  cr_assert(strchr(driver, '.') != NULL, "driver version '%s'", driver);
  cr_assert(strchr(pci, ':') != NULL, "PCI address '%s'", pci);
  pi_device_type type = 0;
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_TYPE, sizeof type, &type, NULL));
  cr_assert_eq(type, PI_DEVICE_TYPE_GPU, "type 0x%llx",
               (unsigned long long)type);
  pi_uint32 units = 0, clock = 0, bits = 0, align = 0;
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof units,
                         &units, NULL));
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_MAX_CLOCK_FREQUENCY,
                         sizeof clock, &clock, NULL));
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_ADDRESS_BITS, sizeof bits, &bits,
                         NULL));
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_MEM_BASE_ADDR_ALIGN,
                         sizeof align, &align, NULL));
  cr_assert(units > 0 && clock > 0 && bits == 64 && align >= 8,
            "units %u clock %u bits %u align %u", units, clock, bits, align);
  size_t wg = 0, sizes[3] = {0};
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_MAX_WORK_GROUP_SIZE, sizeof wg,
                         &wg, NULL));
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_MAX_WORK_ITEM_SIZES,
                         sizeof sizes, sizes, NULL));
  cr_assert(wg >= 256 && sizes[0] >= 256 && sizes[1] >= 1 && sizes[2] >= 1,
            "work-group %zu, item sizes %zu %zu %zu", wg, sizes[0], sizes[1],
            sizes[2]);
  uint64_t global = 0, local = 0, cache = 0;
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_GLOBAL_MEM_SIZE, sizeof global,
                         &global, NULL));
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_LOCAL_MEM_SIZE, sizeof local,
                         &local, NULL));
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_GLOBAL_MEM_CACHE_SIZE,
                         sizeof cache, &cache, NULL));
  cr_assert(global > (1ull << 30) && local >= 48 * 1024 && cache > 0,
            "global %llu local %llu cache %llu", (unsigned long long)global,
            (unsigned long long)local, (unsigned long long)cache);
  uint64_t free_mem = 0;
  TRY(pi.piDeviceGetInfo(dev, PI_EXT_INTEL_DEVICE_INFO_FREE_MEMORY,
                         sizeof free_mem, &free_mem, NULL));
  cr_assert(free_mem > 0 && free_mem <= global, "free %llu of %llu",
            (unsigned long long)free_mem, (unsigned long long)global);
  pi_bool images = PI_TRUE;
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_IMAGE_SUPPORT, sizeof images,
                         &images, NULL));
  cr_assert_eq(images, PI_FALSE, "image support claimed");
  pi_bitfield usm_device = 0, usm_shared = 0;
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_USM_DEVICE_SUPPORT,
                         sizeof usm_device, &usm_device, NULL));
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT,
                         sizeof usm_shared, &usm_shared, NULL));
  cr_assert(usm_device & PI_USM_ACCESS, "no device USM access");
  unsigned char uuid[16];
  size_t uuid_size = 0;
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_UUID, sizeof uuid, uuid,
                         &uuid_size));
  cr_assert_eq(uuid_size, 16, "UUID of %zu bytes", uuid_size);
  pi_platform p = NULL;
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_PLATFORM, sizeof p, &p, NULL));
  cr_assert(p == plat, "the device's platform is not the platform");
  /* Queries CUDA has no answer to, and unknown ones, fail clearly. */
  FAILS(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_GPU_EU_COUNT, sizeof units,
                           &units, NULL),
        PI_ERROR_INVALID_VALUE, "Intel GPUs");
  FAILS(pi.piDeviceGetInfo(dev, (pi_device_info)0x7777, sizeof units, &units,
                           NULL),
        PI_ERROR_INVALID_VALUE, "query 0x7777 is unknown");
  FAILS(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_NAME, 2, name, NULL),
        PI_ERROR_INVALID_VALUE, "param_value_size is 2");
  FAILS(pi.piDevicePartition(dev, NULL, 0, NULL, NULL),
        PI_ERROR_INVALID_OPERATION, "CUDA has no sub-devices");
  cr_log_info("device: %s, compute capability %s, driver %s, PCI %s", name,
              version, driver, pci);
  cr_log_info("device: %u SMs at %u MHz, %llu MiB global (%llu MiB free), "
              "%llu KiB local, %llu KiB L2, work-group %zu (%zu x %zu x %zu), "
              "base align %u bits, USM device 0x%llx shared 0x%llx",
              units, clock, (unsigned long long)(global >> 20),
              (unsigned long long)(free_mem >> 20),
              (unsigned long long)(local >> 10),
              (unsigned long long)(cache >> 10), wg, sizes[0], sizes[1],
              sizes[2], align, (unsigned long long)usm_device,
              (unsigned long long)usm_shared);
  done();
}

Test(cuda, buffers_round_trip_and_sub_buffers)
{
  need_device();
  enum { N = 4096 };
  static int src[N], back[N], host[N];
  for (int i = 0; i < N; i++)
    src[i] = i * 3 + 1;
  pi_mem b = buffer(PI_MEM_FLAGS_ACCESS_RW | PI_MEM_FLAGS_HOST_PTR_COPY,
                    sizeof src, src);
  read_all(b, back, sizeof back);
  cr_assert(memcmp(src, back, sizeof src) == 0, "copy-host buffer differs");
  int patch[8] = {-1, -2, -3, -4, -5, -6, -7, -8};
  TRY(pi.piEnqueueMemBufferWrite(q, b, PI_TRUE, 100 * sizeof(int),
                                 sizeof patch, patch, 0, NULL, NULL));
  int part[10];
  TRY(pi.piEnqueueMemBufferRead(q, b, PI_TRUE, 99 * sizeof(int), sizeof part,
                                part, 0, NULL, NULL));
  cr_assert(part[0] == src[99] && part[1] == -1 && part[8] == -8 &&
                part[9] == src[108],
            "partial write/read: %d %d %d %d", part[0], part[1], part[8],
            part[9]);
  size_t size = 0;
  TRY(pi.piMemGetInfo(b, PI_MEM_SIZE, sizeof size, &size, NULL));
  cr_assert_eq(size, sizeof src, "PI_MEM_SIZE %zu", size);
  FAILS(pi.piEnqueueMemBufferRead(q, b, PI_TRUE, sizeof src - 4, 8, part, 0,
                                  NULL, NULL),
        PI_ERROR_INVALID_VALUE, "outside the 16384-byte buffer");

  /* A sub-buffer at an aligned origin sees the parent's bytes. */
  pi_uint32 align_bits = 0;
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_MEM_BASE_ADDR_ALIGN,
                         sizeof align_bits, &align_bits, NULL));
  size_t origin = align_bits / 8;
  struct pi_buffer_region_struct region = {origin, 64 * sizeof(int)};
  pi_mem sub = NULL;
  TRY(pi.piMemBufferPartition(b, PI_MEM_FLAGS_ACCESS_RW,
                              PI_BUFFER_CREATE_TYPE_REGION, &region, &sub));
  int first[64];
  TRY(pi.piEnqueueMemBufferRead(q, sub, PI_TRUE, 0, sizeof first, first, 0,
                                NULL, NULL));
  cr_assert(memcmp(first, (char *)src + origin, sizeof first) == 0,
            "the sub-buffer does not show its region");
  int seven = 7;
  TRY(pi.piEnqueueMemBufferFill(q, sub, &seven, sizeof seven, 0, sizeof first,
                                0, NULL, NULL));
  read_all(b, back, sizeof back);
  cr_assert(back[origin / sizeof(int)] == 7 &&
                back[origin / sizeof(int) + 63] == 7 &&
                back[origin / sizeof(int) + 64] ==
                    src[origin / sizeof(int) + 64],
            "a fill of the sub-buffer did not land in its region");
  struct pi_buffer_region_struct odd = {4, 16};
  pi_mem bad = NULL;
  FAILS(pi.piMemBufferPartition(b, PI_MEM_FLAGS_ACCESS_RW,
                                PI_BUFFER_CREATE_TYPE_REGION, &odd, &bad),
        PI_ERROR_MISALIGNED_SUB_BUFFER_OFFSET, "origin 4 is not a multiple");
  TRY(pi.piMemRelease(sub));
  TRY(pi.piMemRelease(b));

  /* The device works on PI_MEM_FLAGS_HOST_PTR_USE memory itself. */
  memcpy(host, src, sizeof host);
  pi_mem use = buffer(PI_MEM_FLAGS_ACCESS_RW | PI_MEM_FLAGS_HOST_PTR_USE,
                      sizeof host, host);
  TRY(pi.piEnqueueMemBufferWrite(q, use, PI_TRUE, 0, sizeof patch, patch, 0,
                                 NULL, NULL));
  cr_assert(host[0] == -1 && host[7] == -8 && host[8] == src[8],
            "a write to a host-pointer buffer did not reach the host memory");
  read_all(use, back, sizeof back);
  cr_assert(back[7] == -8 && back[N - 1] == src[N - 1],
            "host-pointer buffer read back wrong");
  TRY(pi.piMemRelease(use));
  pi_mem pinned = buffer(PI_MEM_FLAGS_ACCESS_RW | PI_MEM_FLAGS_HOST_PTR_ALLOC |
                             PI_MEM_FLAGS_HOST_PTR_COPY,
                         sizeof src, src);
  read_all(pinned, back, sizeof back);
  cr_assert(memcmp(src, back, sizeof src) == 0, "pinned buffer differs");
  TRY(pi.piMemRelease(pinned));
  done();
}

Test(cuda, ptx_vector_add_and_program_queries)
{
  need_device();
  pi_program p = build_ptx(test_kernels_ptx);
  pi_program_build_status status = PI_PROGRAM_BUILD_STATUS_NONE;
  pi_program_binary_type type = PI_PROGRAM_BINARY_TYPE_NONE;
  TRY(pi.piProgramGetBuildInfo(p, dev, PI_PROGRAM_BUILD_INFO_STATUS,
                               sizeof status, &status, NULL));
  TRY(pi.piProgramGetBuildInfo(p, dev, PI_PROGRAM_BUILD_INFO_BINARY_TYPE,
                               sizeof type, &type, NULL));
  cr_assert(status == PI_PROGRAM_BUILD_STATUS_SUCCESS &&
                type == PI_PROGRAM_BINARY_TYPE_EXECUTABLE,
            "status %d type %d", (int)status, (int)type);
  char names[512];
  size_t num = 0;
  TRY(pi.piProgramGetInfo(p, PI_PROGRAM_INFO_KERNEL_NAMES, sizeof names,
                          names, NULL));
  TRY(pi.piProgramGetInfo(p, PI_PROGRAM_INFO_NUM_KERNELS, sizeof num, &num,
                          NULL));
  cr_assert(strstr(names, "vadd") && strstr(names, "group_sums") && num == 7,
            "%zu kernels: %s", num, names);
  char log[4096];
  TRY(pi.piProgramGetBuildInfo(p, dev, PI_PROGRAM_BUILD_INFO_LOG, sizeof log,
                               log, NULL));
  cr_log_info("build log of the test kernels (JIT info log): %.300s", log);

  enum { N = 1000 };
  static float a[N], b[N], c[N];
  for (int i = 0; i < N; i++) {
    a[i] = (float)i;
    b[i] = 0.5f * (float)i + 2.0f;
  }
  pi_mem ba = buffer(PI_MEM_ACCESS_READ_ONLY | PI_MEM_FLAGS_HOST_PTR_COPY,
                     sizeof a, a);
  pi_mem bb = buffer(PI_MEM_ACCESS_READ_ONLY | PI_MEM_FLAGS_HOST_PTR_COPY,
                     sizeof b, b);
  pi_mem bc = buffer(PI_MEM_FLAGS_ACCESS_RW, sizeof c, NULL);
  pi_kernel k = kernel(p, "vadd");
  set_mem(k, 0, ba);
  set_mem(k, 1, bb);
  set_mem(k, 2, bc);
  unsigned n = N;
  TRY(pi.piKernelSetArg(k, 3, sizeof n, &n));
  pi_uint32 args = 0;
  TRY(pi.piKernelGetInfo(k, PI_KERNEL_INFO_NUM_ARGS, sizeof args, &args,
                         NULL));
  cr_assert_eq(args, 4, "vadd has %u arguments", args);
  /* No local size: the plugin picks one dividing 1000. */
  pi_event ev = NULL;
  launch1(q, k, N, NULL, &ev);
  TRY(pi.piEventsWait(1, &ev));
  read_all(bc, c, sizeof c);
  for (int i = 0; i < N; i++)
    cr_assert(c[i] == a[i] + b[i], "c[%d] = %g, not %g", i, c[i], a[i] + b[i]);
  TRY(pi.piEventRelease(ev));

  /* The same from piProgramCreate (PTX as IL) with a local size, and the
   * kernel's group queries. */
  pi_program p2 = NULL;
  TRY(pi.piProgramCreate(ctx, test_kernels_ptx, strlen(test_kernels_ptx),
                         &p2));
  TRY(pi.piProgramBuild(p2, 0, NULL, "-O3 -lineinfo", NULL, NULL));
  pi_kernel k2 = kernel(p2, "scale");
  float s = -2.0f;
  set_mem(k2, 0, bc);
  TRY(pi.piKernelSetArg(k2, 1, sizeof s, &s));
  size_t local = 8, wg = 0, multiple = 0;
  launch1(q, k2, N, &local, NULL);
  read_all(bc, c, sizeof c);
  for (int i = 0; i < N; i++)
    cr_assert(c[i] == -2.0f * (a[i] + b[i]), "scaled c[%d] = %g", i, c[i]);
  TRY(pi.piKernelGetGroupInfo(k2, dev, PI_KERNEL_GROUP_INFO_WORK_GROUP_SIZE,
                              sizeof wg, &wg, NULL));
  TRY(pi.piKernelGetGroupInfo(
      k2, dev, PI_KERNEL_GROUP_INFO_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
      sizeof multiple, &multiple, NULL));
  cr_assert(wg >= 256 && multiple == 32, "work-group %zu, multiple %zu", wg,
            multiple);
  /* The program's binary builds again (a cache round trip). */
  size_t bin_size = 0;
  TRY(pi.piProgramGetInfo(p2, PI_PROGRAM_INFO_BINARY_SIZES, sizeof bin_size,
                          &bin_size, NULL));
  unsigned char *bin = malloc(bin_size + 1);
  TRY(pi.piProgramGetInfo(p2, PI_PROGRAM_INFO_BINARIES, sizeof bin, &bin,
                          NULL));
  bin[bin_size] = 0;
  pi_program p3 = build_ptx((const char *)bin);
  free(bin);
  pi_kernel k3 = kernel(p3, "vadd");
  TRY(pi.piKernelRelease(k3));
  FAILS(pi.piKernelCreate(p3, "nope", &k3), PI_ERROR_INVALID_KERNEL_NAME,
        "the program has no kernel 'nope'");
  TRY(pi.piProgramRelease(p3));
  TRY(pi.piKernelRelease(k2));
  TRY(pi.piProgramRelease(p2));
  TRY(pi.piKernelRelease(k));
  TRY(pi.piProgramRelease(p));
  TRY(pi.piMemRelease(ba));
  TRY(pi.piMemRelease(bb));
  TRY(pi.piMemRelease(bc));
  done();
}

Test(cuda, two_dimensional_range_and_local_memory)
{
  need_device();
  pi_program p = build_ptx(test_kernels_ptx);
  enum { W = 64, H = 16 };
  static int in[W * H], out[W * H];
  for (int i = 0; i < W * H; i++)
    in[i] = i;
  pi_mem bin = buffer(PI_MEM_FLAGS_ACCESS_RW | PI_MEM_FLAGS_HOST_PTR_COPY,
                      sizeof in, in);
  pi_mem bout = buffer(PI_MEM_FLAGS_ACCESS_RW, sizeof out, NULL);
  pi_kernel k = kernel(p, "sum2d");
  set_mem(k, 0, bin);
  set_mem(k, 1, bout);
  unsigned w = W;
  TRY(pi.piKernelSetArg(k, 2, sizeof w, &w));
  size_t global[2] = {W, H}, local[2] = {16, 4};
  TRY(pi.piEnqueueKernelLaunch(q, k, 2, NULL, global, local, 0, NULL, NULL));
  read_all(bout, out, sizeof out);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      cr_assert_eq(out[y * W + x], in[y * W + x] + x * 1000 + y,
                   "out[%d][%d] = %d", y, x, out[y * W + x]);
  /* Again with the block chosen by the plugin. */
  TRY(pi.piEnqueueMemBufferFill(q, bout, &(int){0}, sizeof(int), 0,
                                sizeof out, 0, NULL, NULL));
  TRY(pi.piEnqueueKernelLaunch(q, k, 2, NULL, global, NULL, 0, NULL, NULL));
  read_all(bout, out, sizeof out);
  cr_assert_eq(out[W * H - 1], in[W * H - 1] + (W - 1) * 1000 + H - 1,
               "chosen block: last = %d", out[W * H - 1]);

  /* Two local-memory arguments: offsets into dynamic shared memory. */
  enum { N = 1024, WG = 128 };
  static int vals[N];
  int sums[N / WG];
  long long squares[N / WG];
  for (int i = 0; i < N; i++)
    vals[i] = i % 50 - 20;
  pi_mem bv = buffer(PI_MEM_FLAGS_ACCESS_RW | PI_MEM_FLAGS_HOST_PTR_COPY,
                     sizeof vals, vals);
  pi_mem bs = buffer(PI_MEM_FLAGS_ACCESS_RW, sizeof sums, NULL);
  pi_mem bq = buffer(PI_MEM_FLAGS_ACCESS_RW, sizeof squares, NULL);
  pi_kernel g = kernel(p, "group_sums");
  set_mem(g, 0, bv);
  TRY(pi.piKernelSetArg(g, 1, WG * sizeof(int), NULL));
  TRY(pi.piKernelSetArg(g, 2, WG * sizeof(long long), NULL));
  set_mem(g, 3, bs);
  set_mem(g, 4, bq);
  uint64_t lmem = 0;
  TRY(pi.piKernelGetGroupInfo(g, dev, PI_KERNEL_GROUP_INFO_LOCAL_MEM_SIZE,
                              sizeof lmem, &lmem, NULL));
  cr_assert(lmem >= WG * (sizeof(int) + sizeof(long long)),
            "local memory %llu", (unsigned long long)lmem);
  size_t wg = WG;
  launch1(q, g, N, &wg, NULL);
  read_all(bs, sums, sizeof sums);
  read_all(bq, squares, sizeof squares);
  for (int grp = 0; grp < N / WG; grp++) {
    long long s = 0, sq = 0;
    for (int i = grp * WG; i < (grp + 1) * WG; i++) {
      s += vals[i];
      sq += (long long)vals[i] * vals[i];
    }
    cr_assert(sums[grp] == s && squares[grp] == sq,
              "group %d: sum %d (want %lld), squares %lld (want %lld)", grp,
              sums[grp], s, squares[grp], sq);
  }
  TRY(pi.piKernelRelease(g));
  TRY(pi.piKernelRelease(k));
  TRY(pi.piProgramRelease(p));
  TRY(pi.piMemRelease(bin));
  TRY(pi.piMemRelease(bout));
  TRY(pi.piMemRelease(bv));
  TRY(pi.piMemRelease(bs));
  TRY(pi.piMemRelease(bq));
  done();
}

Test(cuda, kernel_argument_and_launch_errors)
{
  need_device();
  pi_program p = build_ptx(test_kernels_ptx);
  pi_kernel k = kernel(p, "vadd");
  pi_mem b = buffer(PI_MEM_FLAGS_ACCESS_RW, 64, NULL);
  short small = 1;
  FAILS(pi.piKernelSetArg(k, 3, sizeof small, &small),
        PI_ERROR_INVALID_ARG_SIZE, "argument 3 of kernel 'vadd' is a 4-byte");
  unsigned n = 16;
  FAILS(pi.piKernelSetArg(k, 4, sizeof n, &n), PI_ERROR_INVALID_ARG_INDEX,
        "kernel 'vadd' has 4 parameter(s)");
  set_mem(k, 0, b);
  set_mem(k, 1, b);
  TRY(pi.piKernelSetArg(k, 3, sizeof n, &n));
  size_t global = 16, local = 5, offset = 2;
  FAILS(pi.piEnqueueKernelLaunch(q, k, 1, NULL, &global, NULL, 0, NULL, NULL),
        PI_ERROR_INVALID_KERNEL_ARGS, "argument 2 of kernel 'vadd' is not set");
  set_mem(k, 2, b);
  FAILS(pi.piEnqueueKernelLaunch(q, k, 1, NULL, &global, &local, 0, NULL,
                                 NULL),
        PI_ERROR_INVALID_WORK_GROUP_SIZE, "not a multiple of the local size");
  FAILS(pi.piEnqueueKernelLaunch(q, k, 1, &offset, &global, NULL, 0, NULL,
                                 NULL),
        PI_ERROR_INVALID_GLOBAL_OFFSET, "cannot see a global offset");
  FAILS(pi.piEnqueueKernelLaunch(q, k, 4, NULL, &global, NULL, 0, NULL, NULL),
        PI_ERROR_INVALID_WORK_DIMENSION, "4 dimensions");
  size_t huge = 2048;
  FAILS(pi.piEnqueueKernelLaunch(q, k, 1, NULL, &huge, &huge, 0, NULL, NULL),
        PI_ERROR_INVALID_WORK_ITEM_SIZE, "exceeds the device's");
  TRY(pi.piEnqueueKernelLaunch(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
  TRY(pi.piQueueFinish(q));
  TRY(pi.piKernelRelease(k));
  TRY(pi.piProgramRelease(p));
  TRY(pi.piMemRelease(b));
  done();
}

/* Applies a fill to the host copy the way the device should. */
static void host_fill(unsigned char *mem, size_t offset, const void *pattern,
                      size_t psize, size_t size)
{
  for (size_t i = 0; i < size; i++)
    mem[offset + i] = ((const unsigned char *)pattern)[i % psize];
}

Test(cuda, fills_of_every_pattern_size)
{
  need_device();
  enum { SIZE = 8192 };
  static unsigned char expect[SIZE], got[SIZE];
  pi_mem b = buffer(PI_MEM_FLAGS_ACCESS_RW, SIZE, NULL);
  unsigned char zero = 0;
  TRY(pi.piEnqueueMemBufferFill(q, b, &zero, 1, 0, SIZE, 0, NULL, NULL));
  memset(expect, 0, sizeof expect);
  unsigned char pattern[128];
  for (int i = 0; i < 128; i++)
    pattern[i] = (unsigned char)(i * 7 + 3);
  static const struct {
    size_t psize, offset, size;
  } fills[] = {
      {1, 0, 100},     {2, 102, 200},   {4, 400, 400},   {8, 808, 800},
      {16, 1616, 320}, {32, 2048, 512}, {64, 2560, 640}, {128, 3328, 1280},
      {2, 4701, 100},  /* at an odd address: byte-wise */
      {8, 5002, 160},  /* 2-aligned: 16-bit words */
  };
  for (size_t i = 0; i < sizeof fills / sizeof *fills; i++) {
    TRY(pi.piEnqueueMemBufferFill(q, b, pattern, fills[i].psize,
                                  fills[i].offset, fills[i].size, 0, NULL,
                                  NULL));
    host_fill(expect, fills[i].offset, pattern, fills[i].psize,
              fills[i].size);
  }
  read_all(b, got, SIZE);
  for (size_t i = 0; i < SIZE; i++)
    cr_assert_eq(got[i], expect[i], "byte %zu: %u, not %u", i, got[i],
                 expect[i]);
  FAILS(pi.piEnqueueMemBufferFill(q, b, pattern, 4, 0, 6, 0, NULL, NULL),
        PI_ERROR_INVALID_VALUE, "size % pattern_size == 0");
  TRY(pi.piMemRelease(b));
  done();
}

Test(cuda, copies_and_rectangular_copies)
{
  need_device();
  enum { N = 1024 };
  static int src[N], back[N];
  for (int i = 0; i < N; i++)
    src[i] = i * i;
  pi_mem a = buffer(PI_MEM_FLAGS_ACCESS_RW | PI_MEM_FLAGS_HOST_PTR_COPY,
                    sizeof src, src);
  pi_mem b = buffer(PI_MEM_FLAGS_ACCESS_RW, sizeof src, NULL);
  TRY(pi.piEnqueueMemBufferFill(q, b, &(int){-1}, sizeof(int), 0, sizeof src,
                                0, NULL, NULL));
  TRY(pi.piEnqueueMemBufferCopy(q, a, b, 10 * sizeof(int), 500 * sizeof(int),
                                100 * sizeof(int), 0, NULL, NULL));
  read_all(b, back, sizeof back);
  cr_assert(back[499] == -1 && back[500] == src[10] && back[599] == src[109] &&
                back[600] == -1,
            "copy: %d %d %d %d", back[499], back[500], back[599], back[600]);
  FAILS(pi.piEnqueueMemBufferCopy(q, a, a, 0, 8, 64, 0, NULL, NULL),
        PI_ERROR_MEM_COPY_OVERLAP, "overlap");

  /* Host box (32 x 8 x 4 bytes) -> buffer box (64-byte rows, 10-row
   * slices, 5 slices): a 24 x 6 x 3 region between offset origins. */
  enum { HW = 32, HH = 8, HD = 4, BW = 64, BH = 10, BD = 5 };
  static unsigned char hostbox[HD][HH][HW], bufbox[BD][BH][BW], got[BD][BH][BW];
  for (int z = 0; z < HD; z++)
    for (int y = 0; y < HH; y++)
      for (int x = 0; x < HW; x++)
        hostbox[z][y][x] = (unsigned char)(z * 64 + y * 8 + x);
  memset(bufbox, 0xee, sizeof bufbox);
  pi_mem box = buffer(PI_MEM_FLAGS_ACCESS_RW | PI_MEM_FLAGS_HOST_PTR_COPY,
                      sizeof bufbox, bufbox);
  struct pi_buff_rect_offset_struct boff = {8, 2, 1}, hoff = {4, 1, 0};
  struct pi_buff_rect_region_struct reg = {24, 6, 3};
  TRY(pi.piEnqueueMemBufferWriteRect(q, box, PI_TRUE, &boff, &hoff, &reg, BW,
                                     BW * BH, HW, HW * HH, hostbox, 0, NULL,
                                     NULL));
  for (int z = 0; z < 3; z++)
    for (int y = 0; y < 6; y++)
      for (int x = 0; x < 24; x++)
        bufbox[1 + z][2 + y][8 + x] = hostbox[z][1 + y][4 + x];
  read_all(box, got, sizeof got);
  cr_assert(memcmp(got, bufbox, sizeof got) == 0,
            "the rectangle write landed wrong");
  /* Buffer box -> a packed 16 x 4 x 2 buffer -> host, with offsets. */
  pi_mem packed = buffer(PI_MEM_FLAGS_ACCESS_RW, 16 * 4 * 2, NULL);
  struct pi_buff_rect_offset_struct soff = {10, 3, 2}, zero = {0, 0, 0};
  struct pi_buff_rect_region_struct reg2 = {16, 4, 2};
  TRY(pi.piEnqueueMemBufferCopyRect(q, box, packed, &soff, &zero, &reg2, BW,
                                    BW * BH, 0, 0, 0, NULL, NULL));
  static unsigned char out[3][6][20];
  memset(out, 0, sizeof out);
  struct pi_buff_rect_offset_struct ooff = {2, 1, 1};
  TRY(pi.piEnqueueMemBufferReadRect(q, packed, PI_TRUE, &zero, &ooff, &reg2,
                                    16, 64, 20, 120, out, 0, NULL, NULL));
  for (int z = 0; z < 3; z++)
    for (int y = 0; y < 6; y++)
      for (int x = 0; x < 20; x++) {
        int inside = z >= 1 && y >= 1 && y < 5 && x >= 2 && x < 18;
        unsigned char want =
            inside ? bufbox[2 + z - 1][3 + y - 1][10 + x - 2] : 0;
        cr_assert_eq(out[z][y][x], want, "out[%d][%d][%d] = %u, not %u", z, y,
                     x, out[z][y][x], want);
      }
  FAILS(pi.piEnqueueMemBufferReadRect(q, packed, PI_TRUE, &soff, &zero, &reg2,
                                      16, 64, 0, 0, out, 0, NULL, NULL),
        PI_ERROR_INVALID_VALUE, "reaches byte");
  TRY(pi.piMemRelease(a));
  TRY(pi.piMemRelease(b));
  TRY(pi.piMemRelease(box));
  TRY(pi.piMemRelease(packed));
  done();
}

Test(cuda, map_and_unmap)
{
  need_device();
  enum { N = 1024 };
  static int src[N], back[N], host[N];
  for (int i = 0; i < N; i++)
    src[i] = i;
  pi_mem b = buffer(PI_MEM_FLAGS_ACCESS_RW | PI_MEM_FLAGS_HOST_PTR_COPY,
                    sizeof src, src);
  int *m = NULL;
  pi_event ev = NULL;
  TRY(pi.piEnqueueMemBufferMap(q, b, PI_TRUE, PI_MAP_READ | PI_MAP_WRITE,
                               256 * sizeof(int), 512 * sizeof(int), 0, NULL,
                               &ev, (void **)&m));
  TRY(pi.piEventRelease(ev));
  for (int i = 0; i < 512; i++)
    cr_assert_eq(m[i], 256 + i, "mapped[%d] = %d", i, m[i]);
  for (int i = 0; i < 512; i++)
    m[i] = -i;
  TRY(pi.piEnqueueMemUnmap(q, b, m, 0, NULL, NULL));
  read_all(b, back, sizeof back);
  cr_assert(back[255] == 255 && back[256] == 0 && back[300] == -44 &&
                back[768] == 768,
            "unmap did not write back: %d %d %d %d", back[255], back[256],
            back[300], back[768]);
  TRY(pi.piEnqueueMemBufferMap(q, b, PI_TRUE, PI_MAP_WRITE_INVALIDATE_REGION,
                               0, 16 * sizeof(int), 0, NULL, NULL,
                               (void **)&m));
  for (int i = 0; i < 16; i++)
    m[i] = 1000 + i;
  TRY(pi.piEnqueueMemUnmap(q, b, m, 0, NULL, NULL));
  read_all(b, back, sizeof back);
  cr_assert(back[0] == 1000 && back[15] == 1015 && back[16] == 16,
            "invalidating map: %d %d %d", back[0], back[15], back[16]);
  int stray;
  FAILS(pi.piEnqueueMemUnmap(q, b, &stray, 0, NULL, NULL),
        PI_ERROR_INVALID_VALUE, "not a mapping of this buffer");
  TRY(pi.piMemRelease(b));
  /* A host-pointer buffer maps to the host memory itself. */
  memcpy(host, src, sizeof host);
  pi_mem u = buffer(PI_MEM_FLAGS_ACCESS_RW | PI_MEM_FLAGS_HOST_PTR_USE,
                    sizeof host, host);
  TRY(pi.piEnqueueMemBufferMap(q, u, PI_TRUE, PI_MAP_READ, 40, 40, 0, NULL,
                               NULL, (void **)&m));
  cr_assert(m == (int *)((char *)host + 40), "mapped %p, host memory %p",
            (void *)m, (void *)((char *)host + 40));
  TRY(pi.piEnqueueMemUnmap(q, u, m, 0, NULL, NULL));
  TRY(pi.piMemRelease(u));
  done();
}

Test(cuda, usm_device_host_and_shared)
{
  need_device();
  pi_program p = build_ptx(test_kernels_ptx);
  pi_kernel k = kernel(p, "add_n");
  enum { N = 4096 };
  static int host[N], back[N];
  for (int i = 0; i < N; i++)
    host[i] = i;
  int *d = NULL, *h = NULL, *s = NULL;
  TRY(pi.piextUSMDeviceAlloc((void **)&d, ctx, dev, NULL, sizeof host, 0));
  TRY(pi.piextUSMHostAlloc((void **)&h, ctx, NULL, sizeof host, 64));
  TRY(pi.piextUSMSharedAlloc((void **)&s, ctx, dev, NULL, sizeof host, 0));
  cr_assert(d && h && s, "a USM allocation returned NULL");
  TRY(pi.piextUSMEnqueueMemcpy(q, PI_FALSE, d, host, sizeof host, 0, NULL,
                               NULL));
  memcpy(h, host, sizeof host);
  memcpy(s, host, sizeof host);
  TRY(pi.piextUSMEnqueuePrefetch(q, s, sizeof host, 0, 0, NULL, NULL));
  TRY(pi.piextUSMEnqueueMemAdvise(
      q, s, sizeof host, PI_MEM_ADVICE_CUDA_SET_PREFERRED_LOCATION, NULL));
  int *ptrs[3] = {d, h, s};
  unsigned count = N;
  for (int i = 0; i < 3; i++) {
    int add = 10 * (i + 1);
    set_usm(k, 0, ptrs[i]);
    TRY(pi.piKernelSetArg(k, 1, sizeof add, &add));
    TRY(pi.piKernelSetArg(k, 2, sizeof count, &count));
    size_t local = 256;
    launch1(q, k, N, &local, NULL);
  }
  TRY(pi.piextUSMEnqueueMemcpy(q, PI_TRUE, back, d, sizeof back, 0, NULL,
                               NULL));
  for (int i = 0; i < N; i++) {
    cr_assert_eq(back[i], i + 10, "device USM [%d] = %d", i, back[i]);
    cr_assert_eq(h[i], i + 20, "host USM [%d] = %d", i, h[i]);
    cr_assert_eq(s[i], i + 30, "shared USM [%d] = %d", i, s[i]);
  }
  /* What the driver knows of each pointer. */
  static const pi_usm_type types[3] = {PI_MEM_TYPE_DEVICE, PI_MEM_TYPE_HOST,
                                       PI_MEM_TYPE_SHARED};
  for (int i = 0; i < 3; i++) {
    pi_uint32 type = 0;
    void *base = NULL;
    size_t size = 0;
    TRY(pi.piextUSMGetMemAllocInfo(ctx, ptrs[i] + 100, PI_MEM_ALLOC_TYPE,
                                   sizeof type, &type, NULL));
    TRY(pi.piextUSMGetMemAllocInfo(ctx, ptrs[i] + 100, PI_MEM_ALLOC_BASE_PTR,
                                   sizeof base, &base, NULL));
    TRY(pi.piextUSMGetMemAllocInfo(ctx, ptrs[i], PI_MEM_ALLOC_SIZE,
                                   sizeof size, &size, NULL));
    cr_assert(type == (pi_uint32)types[i] && base == ptrs[i] &&
                  size >= sizeof host,
              "allocation %d: type 0x%x base %p size %zu", i, type, base,
              size);
  }
  pi_device owner = NULL;
  TRY(pi.piextUSMGetMemAllocInfo(ctx, d, PI_MEM_ALLOC_DEVICE, sizeof owner,
                                 &owner, NULL));
  cr_assert(owner == dev, "device USM belongs to %p, not %p", (void *)owner,
            (void *)dev);
  pi_uint32 unknown = 0;
  TRY(pi.piextUSMGetMemAllocInfo(ctx, back, PI_MEM_ALLOC_TYPE,
                                 sizeof unknown, &unknown, NULL));
  cr_assert_eq(unknown, PI_MEM_TYPE_UNKNOWN, "a stack array has type 0x%x",
               unknown);

  /* USM fills (a 3-byte pattern at an odd address too) and 2D operations. */
  unsigned char *bytes = (unsigned char *)d;
  static unsigned char got[1024], expect[1024];
  memset(expect, 0, sizeof expect);
  TRY(pi.piextUSMEnqueueFill(q, bytes, &(unsigned char){0}, 1, sizeof expect,
                             0, NULL, NULL));
  const unsigned char three[3] = {0x11, 0x22, 0x33};
  TRY(pi.piextUSMEnqueueFill(q, bytes + 1, three, 3, 300, 0, NULL, NULL));
  host_fill(expect, 1, three, 3, 300);
  const uint32_t word = 0xa1b2c3d4u;
  TRY(pi.piextUSMEnqueueFill(q, bytes + 512, &word, 4, 256, 0, NULL, NULL));
  host_fill(expect, 512, &word, 4, 256);
  TRY(pi.piextUSMEnqueueMemcpy(q, PI_TRUE, got, bytes, sizeof got, 0, NULL,
                               NULL));
  cr_assert(memcmp(got, expect, sizeof got) == 0, "USM fills differ");
  /* 2D: rows of 20 bytes, pitch 32, 6 rows. */
  TRY(pi.piextUSMEnqueueMemset2D(q, bytes, 32, 0x5a, 32, 8, 0, NULL, NULL));
  memset(expect, 0x5a, 256);
  TRY(pi.piextUSMEnqueueFill2D(q, bytes, 32, 4, &word, 20, 6, 0, NULL, NULL));
  for (int row = 0; row < 6; row++)
    host_fill(expect, (size_t)row * 32, &word, 4, 20);
  TRY(pi.piextUSMEnqueueFill2D(q, bytes + 160 + 1, 32, 3, three, 9, 2, 0,
                               NULL, NULL));
  for (int row = 0; row < 2; row++)
    host_fill(expect, 160 + 1 + (size_t)row * 32, three, 3, 9);
  unsigned char rows[8][24];
  memset(rows, 0, sizeof rows);
  TRY(pi.piextUSMEnqueueMemcpy2D(q, PI_TRUE, rows, 24, bytes, 32, 24, 8, 0,
                                 NULL, NULL));
  for (int row = 0; row < 8; row++)
    cr_assert(memcmp(rows[row], expect + row * 32, 24) == 0,
              "2D row %d differs", row);
  /* Host -> shared through a 2D copy. */
  TRY(pi.piextUSMEnqueueMemcpy2D(q, PI_TRUE, s, 64, rows, 24, 24, 8, 0, NULL,
                                 NULL));
  cr_assert(memcmp((unsigned char *)s + 64 * 7, rows[7], 24) == 0,
            "2D copy to shared memory differs");
  TRY(pi.piextUSMFree(ctx, d));
  TRY(pi.piextUSMFree(ctx, h));
  TRY(pi.piextUSMFree(ctx, s));
  FAILS(pi.piextUSMFree(ctx, back), PI_ERROR_INVALID_VALUE,
        "is not the start of a USM allocation");
  /* Never more managed memory than the device has free. */
  uint64_t global = 0;
  TRY(pi.piDeviceGetInfo(dev, PI_DEVICE_INFO_GLOBAL_MEM_SIZE, sizeof global,
                         &global, NULL));
  void *big = NULL;
  FAILS(pi.piextUSMSharedAlloc(&big, ctx, dev, NULL, (size_t)global * 2, 0),
        PI_ERROR_OUT_OF_RESOURCES, "never oversubscribes managed memory");
  TRY(pi.piKernelRelease(k));
  TRY(pi.piProgramRelease(p));
  done();
}

static atomic_int callback_status = -100;

static void on_complete(pi_event ev, pi_int32 status, void *user_data)
{
  (void)ev;
  (void)user_data;
  atomic_store(&callback_status, status);
}

Test(cuda, events_profiling_and_dependencies)
{
  need_device();
  pi_program p = build_ptx(test_kernels_ptx);
  pi_kernel spin = kernel(p, "spin");
  pi_mem flag = buffer(PI_MEM_FLAGS_ACCESS_RW, sizeof(int), NULL);
  int zero = 0, got = -1;
  TRY(pi.piEnqueueMemBufferWrite(q, flag, PI_TRUE, 0, sizeof zero, &zero, 0,
                                 NULL, NULL));
  unsigned long long ns = 20000000; /* 20 ms */
  TRY(pi.piKernelSetArg(spin, 0, sizeof ns, &ns));
  set_mem(spin, 1, flag);
  size_t one = 1;
  pi_event ran = NULL, read = NULL;
  TRY(pi.piEnqueueKernelLaunch(q, spin, 1, NULL, &one, &one, 0, NULL, &ran));
  TRY(pi.piEventSetCallback(ran, PI_EVENT_COMPLETE, on_complete, NULL));
  /* A second queue reads the flag after the kernel: only the wait list
   * orders them. */
  pi_queue q2 = NULL;
  TRY(pi.piQueueCreate(ctx, dev, 0, &q2));
  TRY(pi.piEnqueueMemBufferRead(q2, flag, PI_FALSE, 0, sizeof got, &got, 1,
                                &ran, &read));
  TRY(pi.piEventsWait(1, &read));
  cr_assert_eq(got, 1, "the read did not wait for the kernel (flag %d)", got);
  pi_int32 status = -1;
  TRY(pi.piEventGetInfo(ran, PI_EVENT_INFO_COMMAND_EXECUTION_STATUS,
                        sizeof status, &status, NULL));
  cr_assert_eq(status, PI_EVENT_COMPLETE, "status %d", (int)status);
  pi_uint32 type = 0;
  TRY(pi.piEventGetInfo(ran, PI_EVENT_INFO_COMMAND_TYPE, sizeof type, &type,
                        NULL));
  cr_assert_eq(type, PI_COMMAND_TYPE_NDRANGE_KERNEL, "command type 0x%x",
               type);
  uint64_t queued = 0, submit = 0, start = 0, end = 0;
  TRY(pi.piEventGetProfilingInfo(ran, PI_PROFILING_INFO_COMMAND_QUEUED,
                                 sizeof queued, &queued, NULL));
  TRY(pi.piEventGetProfilingInfo(ran, PI_PROFILING_INFO_COMMAND_SUBMIT,
                                 sizeof submit, &submit, NULL));
  TRY(pi.piEventGetProfilingInfo(ran, PI_PROFILING_INFO_COMMAND_START,
                                 sizeof start, &start, NULL));
  TRY(pi.piEventGetProfilingInfo(ran, PI_PROFILING_INFO_COMMAND_END,
                                 sizeof end, &end, NULL));
  cr_assert(queued <= submit && submit <= start && start < end,
            "queued %llu submit %llu start %llu end %llu",
            (unsigned long long)queued, (unsigned long long)submit,
            (unsigned long long)start, (unsigned long long)end);
  cr_assert(end - start >= 19000000 && end - start < 1000000000,
            "a 20 ms kernel took %llu ns", (unsigned long long)(end - start));
  cr_log_info("profiling: the 20 ms spin kernel ran %llu ns (start - queued: "
              "%llu ns)",
              (unsigned long long)(end - start),
              (unsigned long long)(start - queued));
  FAILS(pi.piEventGetProfilingInfo(read, PI_PROFILING_INFO_COMMAND_START,
                                   sizeof start, &start, NULL),
        PI_ERROR_PROFILING_INFO_NOT_AVAILABLE, "PI_QUEUE_FLAG_PROFILING_ENABLE");
  for (int i = 0; i < 5000 && atomic_load(&callback_status) == -100; i++)
    usleep(1000);
  cr_assert_eq(atomic_load(&callback_status), PI_EVENT_COMPLETE,
               "the completion callback got %d", atomic_load(&callback_status));
  /* Markers, barriers, user events, queue state and device timers. */
  pi_event user = NULL, marker = NULL, barrier = NULL;
  TRY(pi.piEventCreate(ctx, &user));
  TRY(pi.piEventSetStatus(user, PI_EVENT_COMPLETE));
  TRY(pi.piEnqueueEventsWait(q, 1, &user, &marker));
  TRY(pi.piEnqueueEventsWaitWithBarrier(q2, 1, &marker, &barrier));
  TRY(pi.piEventsWait(1, &barrier));
  TRY(pi.piQueueFinish(q));
  pi_bool empty = PI_FALSE;
  TRY(pi.piQueueGetInfo(q, PI_EXT_ONEAPI_QUEUE_INFO_EMPTY, sizeof empty,
                        &empty, NULL));
  cr_assert_eq(empty, PI_TRUE, "a finished queue is not empty");
  uint64_t d1 = 0, h1 = 0, d2 = 0, h2 = 0;
  TRY(pi.piGetDeviceAndHostTimer(dev, &d1, &h1));
  usleep(2000);
  TRY(pi.piGetDeviceAndHostTimer(dev, &d2, &h2));
  cr_assert(d2 > d1 && h2 > h1 && d2 - d1 >= 1000000,
            "timers: device %llu -> %llu, host %llu -> %llu",
            (unsigned long long)d1, (unsigned long long)d2,
            (unsigned long long)h1, (unsigned long long)h2);
  TRY(pi.piEventRelease(user));
  TRY(pi.piEventRelease(marker));
  TRY(pi.piEventRelease(barrier));
  TRY(pi.piEventRelease(ran));
  TRY(pi.piEventRelease(read));
  TRY(pi.piQueueRelease(q2));
  TRY(pi.piKernelRelease(spin));
  TRY(pi.piProgramRelease(p));
  TRY(pi.piMemRelease(flag));
  done();
}

/* link_main's kernel calls twice_plus, which only link_lib defines: each
 * compiles alone, only the link of both runs. */
Test(cuda, compile_and_link_two_ptx_modules)
{
  need_device();
  pi_program main_prog = create_ptx(link_main_ptx);
  pi_program lib = create_ptx(link_lib_ptx);
  TRY(pi.piProgramCompile(main_prog, 1, &dev, NULL, 0, NULL, NULL, NULL,
                          NULL));
  TRY(pi.piProgramCompile(lib, 1, &dev, "-O3", 0, NULL, NULL, NULL, NULL));
  pi_program_binary_type type = PI_PROGRAM_BINARY_TYPE_NONE;
  TRY(pi.piProgramGetBuildInfo(lib, dev, PI_PROGRAM_BUILD_INFO_BINARY_TYPE,
                               sizeof type, &type, NULL));
  cr_assert_eq(type, PI_PROGRAM_BINARY_TYPE_COMPILED_OBJECT,
               "binary type %d after compile", (int)type);
  pi_program inputs[2] = {main_prog, lib}, linked = NULL;
  TRY(pi.piProgramLink(ctx, 1, &dev, NULL, 2, inputs, NULL, NULL, &linked));
  char names[64];
  TRY(pi.piProgramGetInfo(linked, PI_PROGRAM_INFO_KERNEL_NAMES, sizeof names,
                          names, NULL));
  cr_assert(strcmp(names, "apply") == 0, "kernels '%s'", names);
  size_t bin_size = 0;
  TRY(pi.piProgramGetInfo(linked, PI_PROGRAM_INFO_BINARY_SIZES,
                          sizeof bin_size, &bin_size, NULL));
  unsigned char *bin = malloc(bin_size);
  TRY(pi.piProgramGetInfo(linked, PI_PROGRAM_INFO_BINARIES, sizeof bin, &bin,
                          NULL));
  cr_assert(bin_size > 4 && memcmp(bin, "\177ELF", 4) == 0,
            "the linked binary (%zu bytes) is no cubin", bin_size);
  float x[256];
  for (int i = 0; i < 256; i++)
    x[i] = (float)i;
  pi_mem b = buffer(PI_MEM_FLAGS_ACCESS_RW | PI_MEM_FLAGS_HOST_PTR_COPY,
                    sizeof x, x);
  pi_kernel k = kernel(linked, "apply");
  float y = 0.25f;
  set_mem(k, 0, b);
  TRY(pi.piKernelSetArg(k, 1, sizeof y, &y));
  launch1(q, k, 256, NULL, NULL);
  float out[256];
  read_all(b, out, sizeof out);
  for (int i = 0; i < 256; i++)
    cr_assert(out[i] == 2.0f * x[i] + y, "apply[%d] = %g", i, out[i]);
  TRY(pi.piKernelRelease(k));
  /* The linked cubin loads again (a cache round trip). */
  size_t len = bin_size;
  const unsigned char *cbin = bin;
  pi_program again = NULL;
  TRY(pi.piProgramCreateWithBinary(ctx, 1, &dev, &len, &cbin, 0, NULL, NULL,
                                   &again));
  TRY(pi.piProgramBuild(again, 1, &dev, NULL, NULL, NULL));
  TRY(pi.piProgramGetInfo(again, PI_PROGRAM_INFO_KERNEL_NAMES, sizeof names,
                          names, NULL));
  cr_assert(strcmp(names, "apply") == 0, "the cubin's kernels: '%s'", names);
  k = kernel(again, "apply");
  TRY(pi.piKernelRelease(k));
  TRY(pi.piProgramRelease(again));
  free(bin);
  /* Without the library: a link failure, whose log names the symbol. */
  pi_program alone = NULL;
  pi_result r =
      pi.piProgramLink(ctx, 1, &dev, NULL, 1, &main_prog, NULL, NULL, &alone);
  cr_assert_eq(r, PI_ERROR_LINK_PROGRAM_FAILURE, "link alone: %d: %s", (int)r,
               last_error());
  cr_assert(strstr(last_error(), "twice_plus"),
            "the link error does not name twice_plus: %s", last_error());
  cr_assert(alone != NULL, "a failed link gave no program to ask for its log");
  char log[2048];
  pi_program_build_status status = PI_PROGRAM_BUILD_STATUS_NONE;
  TRY(pi.piProgramGetBuildInfo(alone, dev, PI_PROGRAM_BUILD_INFO_LOG,
                               sizeof log, log, NULL));
  TRY(pi.piProgramGetBuildInfo(alone, dev, PI_PROGRAM_BUILD_INFO_STATUS,
                               sizeof status, &status, NULL));
  cr_assert(strstr(log, "twice_plus") &&
                status == PI_PROGRAM_BUILD_STATUS_ERROR,
            "status %d, log: %s", (int)status, log);
  cr_log_info("link without the library: %s", last_error());
  TRY(pi.piProgramRelease(alone));
  TRY(pi.piProgramRelease(linked));
  TRY(pi.piProgramRelease(main_prog));
  TRY(pi.piProgramRelease(lib));
  TRY(pi.piMemRelease(b));
  done();
}

Test(cuda, build_failure_log_and_bad_images)
{
  need_device();
  pi_program p = create_ptx(broken_ptx);
  pi_result r = pi.piProgramBuild(p, 1, &dev, NULL, NULL, NULL);
  cr_assert_eq(r, PI_ERROR_BUILD_PROGRAM_FAILURE, "build: %d: %s", (int)r,
               last_error());
  cr_assert(strstr(last_error(), "build log") && strstr(last_error(), "rd1"),
            "the message lacks the log: %s", last_error());
  char log[2048];
  pi_program_build_status status = PI_PROGRAM_BUILD_STATUS_NONE;
  TRY(pi.piProgramGetBuildInfo(p, dev, PI_PROGRAM_BUILD_INFO_LOG, sizeof log,
                               log, NULL));
  TRY(pi.piProgramGetBuildInfo(p, dev, PI_PROGRAM_BUILD_INFO_STATUS,
                               sizeof status, &status, NULL));
  cr_assert(strstr(log, "rd1") && status == PI_PROGRAM_BUILD_STATUS_ERROR,
            "status %d, log: %s", (int)status, log);
  cr_log_info("build log of the broken PTX: %s", log);
  pi_kernel k = NULL;
  FAILS(pi.piKernelCreate(p, "broken", &k),
        PI_ERROR_INVALID_PROGRAM_EXECUTABLE, "the program is not built");
  TRY(pi.piProgramRelease(p));
  p = create_ptx(test_kernels_ptx);
  FAILS(pi.piProgramBuild(p, 1, &dev, "-fast-math-please", NULL, NULL),
        PI_ERROR_INVALID_BUILD_OPTIONS, "'-fast-math-please' is unknown");
  TRY(pi.piProgramRelease(p));
  const unsigned char junk[] = "not a binary at all";
  const unsigned char *bin = junk;
  size_t len = sizeof junk;
  FAILS(pi.piProgramCreateWithBinary(ctx, 1, &dev, &len, &bin, 0, NULL, NULL,
                                     &p),
        PI_ERROR_INVALID_BINARY, "is no PTX");
  const uint32_t spirv[4] = {0x07230203u, 0x00010000u, 0, 0};
  FAILS(pi.piProgramCreate(ctx, spirv, sizeof spirv, &p),
        PI_ERROR_INVALID_OPERATION, "SPIR-V");
  done();
}

Test(cuda, device_globals_and_function_pointers)
{
  need_device();
  pi_program p = build_ptx(test_kernels_ptx);
  int ten = 10, got = 0;
  TRY(pi.piextEnqueueDeviceGlobalVariableWrite(q, p, "counter", PI_FALSE,
                                               sizeof ten, 0, &ten, 0, NULL,
                                               NULL));
  pi_kernel k = kernel(p, "bump");
  int five = 5;
  TRY(pi.piKernelSetArg(k, 0, sizeof five, &five));
  launch1(q, k, 4, NULL, NULL);
  TRY(pi.piextEnqueueDeviceGlobalVariableRead(q, p, "counter", PI_TRUE,
                                              sizeof got, 0, &got, 0, NULL,
                                              NULL));
  cr_assert_eq(got, 30, "counter = %d after 10 + 4 x 5", got);
  size_t size = 0;
  void *ptr = NULL;
  TRY(pi.piextGetGlobalVariablePointer(dev, p, "counter", &size, &ptr));
  cr_assert(size == sizeof(int) && ptr != NULL, "global of %zu bytes at %p",
            size, ptr);
  FAILS(pi.piextEnqueueDeviceGlobalVariableRead(q, p, "counter", PI_TRUE, 8,
                                                0, &got, 0, NULL, NULL),
        PI_ERROR_INVALID_VALUE, "outside the 4-byte global 'counter'");
  pi_uint64 fptr = 0;
  TRY(pi.piextGetDeviceFunctionPointer(dev, p, "vadd", &fptr));
  cr_assert(fptr != 0, "no address for vadd");
  FAILS(pi.piextGetDeviceFunctionPointer(dev, p, "missing", &fptr),
        PI_ERROR_INVALID_KERNEL_NAME, "no kernel 'missing'");
  TRY(pi.piKernelRelease(k));
  TRY(pi.piProgramRelease(p));
  done();
}

Test(cuda, select_binary_and_native_handles)
{
  need_device();
  struct pi_device_binary_struct spirv = {0}, ptx = {0}, anon = {0};
  spirv.Format = PI_DEVICE_BINARY_TYPE_SPIRV;
  spirv.DeviceTargetSpec = __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64;
  ptx.Format = PI_DEVICE_BINARY_TYPE_NONE;
  ptx.DeviceTargetSpec = __SYCL_PI_DEVICE_BINARY_TARGET_NVPTX64;
  anon.Format = PI_DEVICE_BINARY_TYPE_PTX;
  anon.DeviceTargetSpec = __SYCL_PI_DEVICE_BINARY_TARGET_UNKNOWN;
  pi_device_binary three[3] = {&spirv, &anon, &ptx};
  pi_uint32 chosen = 99;
  TRY(pi.piextDeviceSelectBinary(dev, three, 3, &chosen));
  cr_assert_eq(chosen, 2, "chose image %u, not the nvptx64 one", chosen);
  TRY(pi.piextDeviceSelectBinary(dev, three, 2, &chosen));
  cr_assert_eq(chosen, 1, "chose image %u, not the PTX one", chosen);
  FAILS(pi.piextDeviceSelectBinary(dev, three, 1, &chosen),
        PI_ERROR_INVALID_BINARY, "offered: spir64 (format 2)");

  pi_native_handle h = 0;
  pi_device dev2 = NULL;
  TRY(pi.piextDeviceGetNativeHandle(dev, &h));
  TRY(pi.piextDeviceCreateWithNativeHandle(h, plat, &dev2));
  cr_assert(dev2 == dev, "the native device came back as another device");
  pi_native_handle cu_ctx = 0, stream = 0;
  TRY(pi.piextContextGetNativeHandle(ctx, &cu_ctx));
  int32_t desc = -1;
  TRY(pi.piextQueueGetNativeHandle(q, &stream, &desc));
  cr_assert(cu_ctx != 0 && stream != 0 && desc == 0,
            "context %llx stream %llx desc %d", (unsigned long long)cu_ctx,
            (unsigned long long)stream, (int)desc);
  /* The same stream and memory through other PI objects. */
  pi_queue wrapped = NULL;
  TRY(pi.piextQueueCreateWithNativeHandle(stream, 0, ctx, dev, false, NULL,
                                          &wrapped));
  int vals[4] = {1, 2, 3, 4}, back[4] = {0};
  pi_mem m = buffer(PI_MEM_FLAGS_ACCESS_RW | PI_MEM_FLAGS_HOST_PTR_COPY,
                    sizeof vals, vals);
  pi_native_handle ptr = 0;
  TRY(pi.piextMemGetNativeHandle(m, dev, &ptr));
  pi_mem alias = NULL;
  TRY(pi.piextMemCreateWithNativeHandle(ptr, ctx, false, &alias));
  TRY(pi.piEnqueueMemBufferRead(wrapped, alias, PI_TRUE, 0, sizeof back, back,
                                0, NULL, NULL));
  cr_assert(memcmp(vals, back, sizeof vals) == 0,
            "the native buffer read through a native queue differs");
  pi_event ev = NULL, wrapped_ev = NULL;
  TRY(pi.piEnqueueEventsWait(q, 0, NULL, &ev));
  pi_native_handle cu_ev = 0;
  TRY(pi.piextEventGetNativeHandle(ev, &cu_ev));
  TRY(pi.piextEventCreateWithNativeHandle(cu_ev, ctx, false, &wrapped_ev));
  TRY(pi.piEventsWait(1, &wrapped_ev));
  TRY(pi.piEventRelease(wrapped_ev));
  TRY(pi.piEventRelease(ev));
  TRY(pi.piMemRelease(alias));
  TRY(pi.piMemRelease(m));
  TRY(pi.piQueueRelease(wrapped));
  done();
}

/* Four threads, each with its own queue and kernel, share one program. */
struct worker {
  pi_program prog;
  int id;
  char error[512];
};

static void *work(void *arg)
{
  struct worker *w = arg;
  enum { N = 4096 };
  float *a = malloc(N * sizeof *a), *c = malloc(N * sizeof *c);
  pi_queue wq = NULL;
  pi_kernel k = NULL;
  pi_mem ba = NULL, bc = NULL;
  pi_result r;
  unsigned n = N;
  for (int i = 0; i < N; i++)
    a[i] = (float)(i + w->id);
  size_t global = N;
#define STEP(call)                                                             \
  if ((r = (call)) != PI_SUCCESS) {                                            \
    snprintf(w->error, sizeof w->error, "%s: %d: %s", #call, (int)r,           \
             last_error());                                                    \
    goto out;                                                                  \
  }
  STEP(pi.piQueueCreate(ctx, dev, 0, &wq));
  STEP(pi.piKernelCreate(w->prog, "vadd", &k));
  STEP(pi.piMemBufferCreate(ctx, PI_MEM_FLAGS_ACCESS_RW | PI_MEM_FLAGS_HOST_PTR_COPY,
                            N * sizeof *a, a, &ba, NULL));
  STEP(pi.piMemBufferCreate(ctx, PI_MEM_FLAGS_ACCESS_RW, N * sizeof *c, NULL,
                            &bc, NULL));
  for (int round = 0; round < 20; round++) {
    STEP(pi.piextKernelSetArgMemObj(k, 0, NULL, &ba));
    STEP(pi.piextKernelSetArgMemObj(k, 1, NULL, &ba));
    STEP(pi.piextKernelSetArgMemObj(k, 2, NULL, &bc));
    STEP(pi.piKernelSetArg(k, 3, sizeof n, &n));
    STEP(pi.piEnqueueKernelLaunch(wq, k, 1, NULL, &global, NULL, 0, NULL,
                                  NULL));
    STEP(pi.piEnqueueMemBufferRead(wq, bc, PI_TRUE, 0, N * sizeof *c, c, 0,
                                   NULL, NULL));
    for (int i = 0; i < N; i++)
      if (c[i] != 2.0f * a[i]) {
        snprintf(w->error, sizeof w->error, "thread %d round %d: c[%d] = %g",
                 w->id, round, i, c[i]);
        goto out;
      }
  }
#undef STEP
out:
  if (ba)
    pi.piMemRelease(ba);
  if (bc)
    pi.piMemRelease(bc);
  if (k)
    pi.piKernelRelease(k);
  if (wq)
    pi.piQueueRelease(wq);
  free(a);
  free(c);
  return NULL;
}

/* ---- Releases after the driver shut down ------------------------------------
 * At exit, libcuda's exit handlers shut the driver down before any ELF
 * destructor runs, the runtime's included (it releases what the application
 * leaked, such as its program cache). A release then has nothing left in the
 * driver to free and must still succeed. The objects are leaked by a child
 * process; this executable's destructor releases them after exit() began. */
static struct {
  bool armed;
  pi_event event;
  pi_mem mem;
  pi_kernel kernel;
  pi_program program;
  pi_queue queue;
  pi_context context;
} leaked;

__attribute__((destructor)) static void release_leaked(void)
{
  if (!leaked.armed)
    return;
  /* The premise: the driver is gone by now (CUDA_ERROR_DEINITIALIZED = 4). */
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void *sym = cuda ? dlsym(cuda, "cuCtxGetCurrent") : NULL;
  int (*get_current)(void **);
  memcpy(&get_current, &sym, sizeof sym);
  void *cur = NULL;
  int gone = get_current && get_current(&cur) == 4;
  pi_result r[] = {pi.piEventRelease(leaked.event),    pi.piMemRelease(leaked.mem),
                   pi.piKernelRelease(leaked.kernel),  pi.piProgramRelease(leaked.program),
                   pi.piQueueRelease(leaked.queue),    pi.piContextRelease(leaked.context)};
  for (size_t i = 0; i < sizeof r / sizeof *r; i++)
    if (r[i] != PI_SUCCESS) {
      printf("release %zu after exit returned %d: %s\n", i, (int)r[i], last_error());
      fflush(stdout);
      _exit(3);
    }
  _exit(gone ? 0 : 4);
}

Test(cuda, releases_after_the_driver_shut_down_at_exit_succeed)
{
  /* CUDA cannot be used in a child forked after the parent initialized it:
   * the child does every CUDA call, the parent none until it is done. */
  fflush(stdout);
  pid_t pid = fork();
  cr_assert(pid >= 0, "fork failed");
  if (pid == 0) {
    load_plugin();
    pi_uint32 n = 0;
    if (pi.piPlatformsGet(0, NULL, &n) != PI_SUCCESS || n == 0)
      _exit(77); /* the parent skips, with the plugin's reason */
    need_device();
    float data[256] = {0};
    leaked.context = ctx;
    leaked.queue = q;
    leaked.program = build_ptx(test_kernels_ptx);
    leaked.kernel = kernel(leaked.program, "vadd");
    leaked.mem = buffer(PI_MEM_FLAGS_ACCESS_RW | PI_MEM_FLAGS_HOST_PTR_COPY, sizeof data, data);
    TRY(pi.piEnqueueMemBufferRead(q, leaked.mem, PI_FALSE, 0, sizeof data, data, 0, NULL,
                                  &leaked.event));
    TRY(pi.piEventsWait(1, &leaked.event));
    leaked.armed = true;
    exit(0); /* libcuda's exit handlers, then the destructor above */
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
    need_device(); /* skips, saying why */
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 4,
            "the driver was still up when the destructor ran: nothing was tested");
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "releasing objects after the driver shut down failed (status 0x%x)", status);
}

Test(cuda, threads_share_a_program)
{
  need_device();
  pi_program p = build_ptx(test_kernels_ptx);
  struct worker w[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (struct worker){p, i, ""};
    cr_assert_eq(pthread_create(&t[i], NULL, work, &w[i]), 0,
                 "pthread_create failed");
  }
  for (int i = 0; i < 4; i++)
    pthread_join(t[i], NULL);
  for (int i = 0; i < 4; i++)
    cr_assert(w[i].error[0] == 0, "%s", w[i].error);
  TRY(pi.piProgramRelease(p));
  done();
}
