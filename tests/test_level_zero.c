/*
 * test_level_zero.c: the Level Zero plugin (libpi_level_zero.so) on the
 * real Level Zero loader.
 *
 * No Level Zero device exists on this machine, so most cases run the plugin
 * over libze_pitrace_test_double.so, a TEST DOUBLE of a driver that the
 * loader loads through ZE_ENABLE_ALT_DRIVERS (tests/ze_test_driver): its
 * memory operations are real (host memory), kernel launches and module
 * creation are logged to PITRACE_ZE_TEST_LOG, and the cases check that log
 * for the calls the plugin made. Some cases go through the runtime (pirt.h,
 * with a plugins config naming only this plugin); others dlopen the plugin
 * and call its table directly, for what pirt.h does not reach.
 *
 * The "no_driver" cases use the bare loader, which finds no driver here:
 * the plugin must load, report no platform, and leave vadd to OpenCL.
 *
 * Criterion runs each case in its own process, so each sets its own
 * environment before the runtime or the plugin first loads.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>

#include "pirt.h"
#include "testutil.h"

#define BIN PITRACE_BIN_DIR
#define LIB PITRACE_LIB_DIR
#define PLUGIN LIB "/libpi_level_zero.so"
#define DOUBLE LIB "/libze_pitrace_test_double.so"
#define POCL "OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd"

#define TRY(call) cr_assert_eq((call), PI_SUCCESS, "%s", pirt_error_message())

/* ---- The test double's log --------------------------------------------------- */

static char *log_path, *config_path, *log_text;

/* The log so far (valid until the next call). */
static char *zlog(void)
{
  free(log_text);
  log_text = tu_read_file(log_path);
  cr_assert(log_text, "the test double wrote no log to %s", log_path);
  return log_text;
}

/* The first line of `text` at or after `from` holding every one of the
 * NULL-terminated needles; NULL when none does. */
static const char *line_with(const char *text, const char *from, ...)
{
  const char *needles[8];
  size_t n = 0;
  va_list ap;
  va_start(ap, from);
  for (const char *s; n < 8 && (s = va_arg(ap, const char *));)
    needles[n++] = s;
  va_end(ap);
  for (const char *line = from ? from : text; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    bool all = true;
    for (size_t i = 0; i < n && all; i++) {
      const char *p = line;
      const char *hit = NULL;
      while ((p = strstr(p, needles[i])) && p < line + len) {
        hit = p;
        break;
      }
      all = hit != NULL;
    }
    if (all)
      return line;
    line = end ? end + 1 : NULL;
  }
  return NULL;
}

static int count_lines_with(const char *text, const char *needle)
{
  int n = 0;
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    const char *hit = strstr(line, needle);
    n += hit && hit < line + len;
    line = end ? end + 1 : NULL;
  }
  return n;
}

/* The value after "key=" on a line, up to the next space or ']' (static). */
static const char *field(const char *line, const char *key)
{
  static char buf[256];
  char pat[64];
  snprintf(pat, sizeof pat, " %s=", key);
  const char *end = strchr(line, '\n');
  const char *p = strstr(line, pat);
  if (!p || (end && p > end))
    return "";
  p += strlen(pat);
  size_t n = strcspn(p, " ]\n");
  snprintf(buf, sizeof buf, "%.*s", (int)n, p);
  return buf;
}

/* A pointer as the double logs argument bytes: little-endian hex. */
static void ptr_hex(const void *p, char out[17])
{
  uintptr_t v = (uintptr_t)p;
  for (int i = 0; i < 8; i++)
    sprintf(out + 2 * i, "%02x", (unsigned)((v >> (8 * i)) & 0xff));
}

/* The double logs pointers with %p; turns one back into a pointer. */
static void *parse_ptr(const char *s) { return (void *)(uintptr_t)strtoull(s, NULL, 16); }

/* ---- SPIR-V for the double ----------------------------------------------------
 * The double reads OpEntryPoint names and counts each kernel's
 * OpFunctionParameter; nothing else of the module needs to be real. */

struct kdecl {
  const char *name;
  unsigned nargs;
};

static size_t make_spirv(uint32_t *w, size_t cap, const struct kdecl *k,
                         size_t nk)
{
  size_t n = 0;
  w[n++] = 0x07230203u;
  w[n++] = 0x00010200u;
  w[n++] = 0;
  w[n++] = 1000;
  w[n++] = 0;
  for (size_t i = 0; i < nk; i++) {
    size_t len = strlen(k[i].name) + 1, words = (len + 3) / 4;
    cr_assert(n + 3 + words < cap);
    w[n++] = (uint32_t)((3 + words) << 16 | 15); /* OpEntryPoint */
    w[n++] = 6;                                  /* Kernel */
    w[n++] = (uint32_t)(100 + i);
    memset(&w[n], 0, words * 4);
    memcpy(&w[n], k[i].name, len);
    n += words;
  }
  for (size_t i = 0; i < nk; i++) {
    cr_assert(n + 6 + 3 * k[i].nargs < cap);
    w[n++] = 5u << 16 | 54; /* OpFunction type id control fntype */
    w[n++] = 1;
    w[n++] = (uint32_t)(100 + i);
    w[n++] = 0;
    w[n++] = 2;
    for (unsigned a = 0; a < k[i].nargs; a++) {
      w[n++] = 3u << 16 | 55; /* OpFunctionParameter type id */
      w[n++] = 3;
      w[n++] = (uint32_t)(200 + 10 * i + a);
    }
    w[n++] = 1u << 16 | 56; /* OpFunctionEnd */
  }
  return n * 4;
}

static uint32_t spirv[256];
static size_t spirv_size;

static void make_default_spirv(void)
{
  const struct kdecl k[] = {{"vadd", 4}, {"scale", 2}};
  spirv_size = make_spirv(spirv, 256, k, 2);
}

/* ---- Environments --------------------------------------------------------------- */

/* The loader finds the test double, and the runtime binds only this plugin. */
static void use_double(void)
{
  log_path = tu_temp_path(".zelog");
  config_path = tu_write_temp(".conf", PLUGIN " level_zero\n");
  setenv("ZE_ENABLE_ALT_DRIVERS", DOUBLE, 1);
  setenv("PITRACE_ZE_TEST_LOG", log_path, 1);
  setenv("SYCL_PI_CONFIG", config_path, 1);
  unsetenv("SYCL_DEVICE_FILTER");
  unsetenv("SYCL_BE");
  unsetenv("SYCL_PI_TRACE");
  make_default_spirv();
}

static void drop_log(void)
{
  if (log_path)
    unlink(log_path);
  if (config_path)
    unlink(config_path);
  free(log_path);
  free(config_path);
  free(log_text);
  log_path = config_path = log_text = NULL;
}

/* ---- The plugin, called directly -------------------------------------------------- */

static void *plugin_dl;
static pi_plugin P;
#define PI(fn) P.PiFunctionTable.fn

static const char *plugin_message(void)
{
  char *m = NULL;
  if (PI(piPluginGetLastError))
    PI(piPluginGetLastError)(&m);
  return m ? m : "(no message)";
}

#define OK(call) cr_assert_eq((call), PI_SUCCESS, "%s: %s", #call, plugin_message())

static void plugin_load(void)
{
  plugin_dl = dlopen(PLUGIN, RTLD_NOW | RTLD_LOCAL);
  cr_assert(plugin_dl, "%s", dlerror());
  pi_plugin_init_fn init = (pi_plugin_init_fn)(uintptr_t)dlsym(plugin_dl, "piPluginInit");
  cr_assert(init, "the plugin exports no piPluginInit");
  memset(&P, 0, sizeof P);
  snprintf(P.PiVersion, sizeof P.PiVersion, "%s", _PI_H_VERSION_STRING);
  cr_assert_eq(init(&P), PI_SUCCESS);
}

static pi_platform plat;
static pi_device dev0;
static pi_context ctx0;
static pi_queue q0;

static pi_queue make_queue(pi_queue_properties flags)
{
  pi_queue_properties props[] = {PI_QUEUE_FLAGS, flags, 0};
  pi_queue q;
  OK(PI(piextQueueCreate)(ctx0, dev0, props, &q));
  return q;
}

/* The plugin over the double: its platform, device, a context and an
 * in-order queue. */
static void direct(void)
{
  use_double();
  plugin_load();
  pi_uint32 n = 0;
  OK(PI(piPlatformsGet)(1, &plat, &n));
  cr_assert_eq(n, 1, "the loader found %u Level Zero drivers", n);
  OK(PI(piDevicesGet)(plat, PI_DEVICE_TYPE_ALL, 1, &dev0, &n));
  cr_assert_eq(n, 1);
  OK(PI(piContextCreate)(NULL, 1, &dev0, NULL, NULL, &ctx0));
  q0 = make_queue(0);
}

static void direct_fini(void)
{
  if (q0)
    OK(PI(piQueueRelease)(q0));
  if (ctx0)
    OK(PI(piContextRelease)(ctx0));
  OK(PI(piTearDown)(NULL));
  drop_log();
}

static pi_program build_program(const char *options)
{
  pi_program p;
  OK(PI(piProgramCreate)(ctx0, spirv, spirv_size, &p));
  OK(PI(piProgramBuild)(p, 1, &dev0, options, NULL, NULL));
  return p;
}

/* ---- No driver ------------------------------------------------------------------- */

/* These cases need a loader that finds no driver; with Intel's GPU driver
 * installed it would find one. */
static void need_bare_loader(void)
{
  void *gpu = dlopen("libze_intel_gpu.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (gpu) {
    dlclose(gpu);
    cr_skip_test("a Level Zero GPU driver (libze_intel_gpu.so.1) is installed, so "
                 "the bare loader finds it");
  }
}

Test(no_driver, vadd_loads_the_plugin_sees_no_platform_and_verifies_on_opencl,
     .timeout = 120)
{
  need_bare_loader();
  const char *argv[] = {BIN "/vadd", NULL};
  const char *env[] = {"SYCL_PI_TRACE=1", POCL, "ZE_ENABLE_ALT_DRIVERS=",
                       "SYCL_PI_CONFIG=", "SYCL_DEVICE_FILTER=", "SYCL_BE=",
                       "LD_LIBRARY_PATH=", NULL};
  char *out;
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert(strstr(out, "Plugin found and successfully loaded: libpi_level_zero.so"),
            "%s", out);
  cr_assert(strstr(out, "Plugin libpi_level_zero.so: 0 platform(s): "), "%s", out);
  cr_assert(strstr(out, "Selected device: opencl:"), "%s", out);
  cr_assert(strstr(out, "result verified"), "%s", out);
  free(out);
}

Test(no_driver, zero_platforms_is_success_with_a_note)
{
  need_bare_loader();
  unsetenv("ZE_ENABLE_ALT_DRIVERS");
  plugin_load();
  pi_uint32 n = 99;
  cr_assert_eq(PI(piPlatformsGet)(0, NULL, &n), PI_SUCCESS, "%s", plugin_message());
  cr_assert_eq(n, 0);
  char *m = NULL;
  cr_assert_eq(PI(piPluginGetLastError)(&m), PI_SUCCESS, "a note, not an error");
  cr_assert(strstr(m, "piPlatformsGet: the Level Zero loader found no GPU driver"),
            "%s", m);
  OK(PI(piTearDown)(NULL));
}

/* SYCL_DEVICE_FILTER's device number counts a backend's devices whatever
 * their type, as DPC++ and sycl-ls number them: with the double's GPU
 * first and a CPU second, level_zero:cpu:1 is the CPU and level_zero:cpu:0
 * nothing (it counted per type before: level_zero:cpu:0 was the CPU). Two
 * types in one backend exist on no real device here. */
Test(numbering, a_device_number_counts_the_backends_devices_of_every_type, .timeout = 60)
{
  char *cfg = tu_write_temp(".conf", PLUGIN " level_zero\n"), *out, env_cfg[4200];
  snprintf(env_cfg, sizeof env_cfg, "SYCL_PI_CONFIG=%s", cfg);
  const char *argv[] = {BIN "/use_device", NULL};
  const char *cpu1[] = {"ZE_ENABLE_ALT_DRIVERS=" DOUBLE, "PITRACE_ZE_TEST_EXTRA_DEVICE=cpu",
                        env_cfg, "SYCL_PI_TRACE=1", "SYCL_DEVICE_FILTER=level_zero:cpu:1",
                        "SYCL_BE=", NULL};
  cr_assert_eq(tu_run(argv, cpu1, &out), 0, "%s", out);
  cr_assert(strstr(out, "Device level_zero:gpu:0 \"") && strstr(out, "Device level_zero:cpu:1 \""),
            "%s", out);
  cr_assert(strstr(out, "(level_zero:1)"), "the CPU, second of the backend: %s", out);
  const char *cpu0[] = {"ZE_ENABLE_ALT_DRIVERS=" DOUBLE, "PITRACE_ZE_TEST_EXTRA_DEVICE=cpu",
                        env_cfg, "SYCL_DEVICE_FILTER=level_zero:cpu:0", "SYCL_BE=", NULL};
  cr_assert_eq(tu_run(argv, cpu0, &out), 2, "no CPU is device 0 of level_zero: %s", out);
  const char *gpu0[] = {"ZE_ENABLE_ALT_DRIVERS=" DOUBLE, "PITRACE_ZE_TEST_EXTRA_DEVICE=cpu",
                        env_cfg, "SYCL_DEVICE_FILTER=level_zero:0", "SYCL_BE=", NULL};
  cr_assert_eq(tu_run(argv, gpu0, &out), 0, "%s", out);
  cr_assert(strstr(out, "(level_zero:0)"), "%s", out);
  unlink(cfg);
}

/* ---- Handshake --------------------------------------------------------------------- */

Test(handshake, another_major_version_is_refused_and_ours_is_accepted)
{
  void *dl = dlopen(PLUGIN, RTLD_NOW | RTLD_LOCAL);
  cr_assert(dl, "%s", dlerror());
  pi_plugin_init_fn init = (pi_plugin_init_fn)(uintptr_t)dlsym(dl, "piPluginInit");
  cr_assert(init);
  pi_plugin p;
  memset(&p, 0, sizeof p);
  snprintf(p.PiVersion, sizeof p.PiVersion, "2.0");
  cr_assert_eq(init(&p), PI_ERROR_INVALID_OPERATION);
  cr_assert_null(p.PiFunctionTable.piPlatformsGet, "a refused plugin fills no table");
  memset(&p, 0, sizeof p);
  snprintf(p.PiVersion, sizeof p.PiVersion, "%s", _PI_H_VERSION_STRING);
  cr_assert_eq(init(&p), PI_SUCCESS);
  unsigned major, minor, rev;
  char extra;
  cr_assert_eq(sscanf(p.PluginVersion, "%u.%u.%u%c", &major, &minor, &rev, &extra), 3,
               "PluginVersion '%s' is not MAJOR.MINOR.REV", p.PluginVersion);
  cr_assert_eq(major, _PI_H_VERSION_MAJOR);
  size_t missing = 0;
  void *const *slots = (void *const *)&p.PiFunctionTable;
  for (size_t i = 0; i < sizeof p.PiFunctionTable / sizeof(void *); i++)
    missing += slots[i] == NULL;
  cr_assert_eq(missing, 0, "%zu table entries are NULL", missing);
  dlclose(dl);
}

/* ---- Through the runtime ---------------------------------------------------------- */

static pirt_device *rdev;
static pirt_context *rctx;
static pirt_queue *rq;

static void runtime_setup(void)
{
  use_double();
  TRY(pirt_device_select(NULL, &rdev));
  TRY(pirt_context_create(rdev, &rctx));
  TRY(pirt_queue_create(rctx, 0, &rq));
}

static void runtime_fini(void)
{
  TRY(pirt_queue_release(rq));
  TRY(pirt_context_release(rctx));
  drop_log();
}

TestSuite(runtime, .init = runtime_setup, .fini = runtime_fini, .timeout = 60);

Test(runtime, the_device_is_the_test_double_gpu_on_level_zero)
{
  pirt_device_info info;
  TRY(pirt_device_get_info(rdev, &info));
  cr_assert_str_eq(info.backend, "level_zero");
  cr_assert_eq(info.type, PIRT_DEVICE_GPU);
  cr_assert(strstr(info.name, "TEST DOUBLE"), "%s", info.name);
  cr_assert_str_eq(info.platform_name, "Intel(R) Level-Zero");
  char *log = zlog();
  cr_assert(line_with(log, NULL, "zeInit flags=0x1", NULL), "zeInit(GPU_ONLY): %s", log);
  cr_assert(line_with(log, NULL, "zeContextCreateEx", "devices=1", NULL), "%s", log);
  cr_assert(line_with(log, NULL, "zeCommandQueueCreate", "ordinal=0 index=0", NULL),
            "%s", log);
}

Test(runtime, buffers_round_trip_through_device_memory)
{
  enum { N = 256 };
  uint32_t init[N], out[N], copy[N];
  for (unsigned i = 0; i < N; i++)
    init[i] = 0xa0000000u + i;
  pirt_buffer *a, *b;
  TRY(pirt_buffer_create(rctx, PIRT_MEM_COPY_HOST, sizeof init, init, &a));
  TRY(pirt_buffer_create(rctx, 0, sizeof init, NULL, &b));
  /* initial contents, then a read */
  memset(out, 0, sizeof out);
  TRY(pirt_read(rq, a, true, 0, sizeof out, out, 0, NULL, NULL));
  cr_assert_arr_eq(out, init, sizeof out);
  /* write part, copy to b, read b */
  uint32_t patch[4] = {1, 2, 3, 4};
  TRY(pirt_write(rq, a, false, 8 * sizeof(uint32_t), sizeof patch, patch, 0, NULL, NULL));
  TRY(pirt_copy(rq, a, b, 0, 0, sizeof init, 0, NULL, NULL));
  TRY(pirt_read(rq, b, true, 0, sizeof copy, copy, 0, NULL, NULL));
  memcpy(&init[8], patch, sizeof patch);
  cr_assert_arr_eq(copy, init, sizeof copy);
  /* a fill the copy engine takes, and one too wide for it (staged) */
  uint32_t four = 0x11223344u;
  TRY(pirt_fill(rq, b, &four, sizeof four, 0, 64, 0, NULL, NULL));
  unsigned char wide[32];
  for (unsigned i = 0; i < sizeof wide; i++)
    wide[i] = (unsigned char)(0x40 + i);
  TRY(pirt_fill(rq, b, wide, sizeof wide, 64, 128, 0, NULL, NULL));
  TRY(pirt_read(rq, b, true, 0, sizeof copy, copy, 0, NULL, NULL));
  for (unsigned i = 0; i < 16; i++)
    cr_assert_eq(copy[i], four, "word %u", i);
  for (unsigned i = 0; i < 128; i++)
    cr_assert_eq(((unsigned char *)copy)[64 + i], wide[i % 32], "byte %u", 64 + i);
  cr_assert_eq(copy[48], init[48]);
  /* map, change, unmap, read back */
  void *m;
  TRY(pirt_map(rq, b, PIRT_MAP_READ | PIRT_MAP_WRITE, 4, 16, &m));
  cr_assert_eq(memcmp(m, (char *)copy + 4, 16), 0, "the map shows the buffer");
  memset(m, 0xee, 16);
  TRY(pirt_unmap(rq, b, m, 0, NULL, NULL));
  TRY(pirt_read(rq, b, true, 0, sizeof out, out, 0, NULL, NULL));
  for (unsigned i = 4; i < 20; i++)
    cr_assert_eq(((unsigned char *)out)[i], 0xee, "byte %u", i);
  cr_assert_eq(out[0], four);
  TRY(pirt_buffer_release(a));
  TRY(pirt_buffer_release(b));

  char *log = zlog();
  cr_assert_eq(count_lines_with(log, "zeMemAllocDevice"), 2, "%s", log);
  cr_assert(line_with(log, NULL, "zeMemAllocDevice", "size=1024 align=64 device=D0", NULL),
            "%s", log);
  cr_assert(line_with(log, NULL, "zeCommandListCreateImmediate", "mode=1", NULL),
            "the initial contents go through a synchronous immediate list: %s", log);
  cr_assert(line_with(log, NULL, "exec list=", "fill ", "size=64 pattern=44332211",
                      NULL), "%s", log);
  cr_assert(line_with(log, NULL, "zeMemAllocHost", "size=128", NULL),
            "a 32-byte pattern is staged in host memory: %s", log);
  cr_assert(line_with(log, NULL, "exec list=", "copy ", "size=128", NULL), "%s", log);
  cr_assert(line_with(log, NULL, "zeCommandQueueExecuteCommandLists queue=Q", NULL),
            "%s", log);
  cr_assert_eq(count_lines_with(log, "zeMemFree"), count_lines_with(log, "zeMemAlloc"),
               "every allocation is freed: %s", log);
}

Test(runtime, usm_round_trips_through_device_host_and_shared_allocations)
{
  enum { N = 64 };
  void *d, *h, *s;
  TRY(pirt_usm_alloc(rctx, PIRT_USM_DEVICE, N, 128, &d));
  TRY(pirt_usm_alloc(rctx, PIRT_USM_HOST, N, 0, &h));
  TRY(pirt_usm_alloc(rctx, PIRT_USM_SHARED, N, 0, &s));
  cr_assert_eq((uintptr_t)d % 128, 0, "alignment 128");
  unsigned char src[N], dst[N];
  for (unsigned i = 0; i < N; i++)
    src[i] = (unsigned char)(3 * i + 1);
  TRY(pirt_usm_memcpy(rq, false, h, src, N, 0, NULL, NULL));
  TRY(pirt_usm_memcpy(rq, false, d, h, N, 0, NULL, NULL));
  TRY(pirt_usm_memcpy(rq, false, s, d, N, 0, NULL, NULL));
  memset(dst, 0, sizeof dst);
  TRY(pirt_usm_memcpy(rq, true, dst, s, N, 0, NULL, NULL));
  cr_assert_arr_eq(dst, src, N);
  uint16_t two = 0xbeef;
  TRY(pirt_usm_fill(rq, d, &two, sizeof two, 16, 0, NULL, NULL));
  TRY(pirt_usm_memcpy(rq, true, dst, d, N, 0, NULL, NULL));
  for (unsigned i = 0; i < 8; i++)
    cr_assert_eq(((uint16_t *)dst)[i], 0xbeef);
  cr_assert_eq(dst[16], src[16]);
  TRY(pirt_usm_free(rctx, d));
  TRY(pirt_usm_free(rctx, h));
  TRY(pirt_usm_free(rctx, s));

  char *log = zlog();
  char want[64];
  snprintf(want, sizeof want, "ptr=%p size=64 align=128 device=D0", d);
  cr_assert(line_with(log, NULL, "zeMemAllocDevice", want, NULL), "%s\n%s", want, log);
  snprintf(want, sizeof want, "ptr=%p size=64", h);
  cr_assert(line_with(log, NULL, "zeMemAllocHost", want, NULL), "%s", log);
  snprintf(want, sizeof want, "ptr=%p size=64", s);
  cr_assert(line_with(log, NULL, "zeMemAllocShared", want, "device=D0", NULL), "%s", log);
  snprintf(want, sizeof want, "dst=%p src=%p size=64", d, (void *)h);
  cr_assert(line_with(log, NULL, "exec list=", want, NULL), "%s", log);
  snprintf(want, sizeof want, "fill ptr=%p size=16 pattern=efbe", d);
  cr_assert(line_with(log, NULL, "exec list=", want, NULL), "%s", log);
  snprintf(want, sizeof want, "zeMemFree ptr=%p type=shared", s);
  cr_assert(line_with(log, NULL, want, NULL), "%s", log);
}

Test(runtime, a_launch_is_logged_with_its_group_counts_and_arguments)
{
  pirt_program *p;
  TRY(pirt_program_create_binary(rctx, spirv, spirv_size, true, "-ze-opt-level=1", &p));
  pirt_kernel *k;
  TRY(pirt_kernel_create(p, "vadd", &k));
  pirt_buffer *a, *b, *c;
  TRY(pirt_buffer_create(rctx, 0, 4096, NULL, &a));
  TRY(pirt_buffer_create(rctx, 0, 4096, NULL, &b));
  TRY(pirt_buffer_create(rctx, 0, 4096, NULL, &c));
  TRY(pirt_kernel_set_buffer(k, 0, a));
  TRY(pirt_kernel_set_buffer(k, 1, b));
  TRY(pirt_kernel_set_buffer(k, 2, c));
  uint32_t n = 1024;
  TRY(pirt_kernel_set_arg(k, 3, sizeof n, &n));
  size_t global = 1024, local = 64;
  TRY(pirt_launch(rq, k, 1, &global, &local, 0, NULL, NULL));
  TRY(pirt_launch(rq, k, 1, &global, NULL, 0, NULL, NULL));
  size_t g2[2] = {64, 8}, l2[2] = {16, 2};
  TRY(pirt_launch(rq, k, 2, g2, l2, 0, NULL, NULL));
  size_t bad = 48;
  cr_assert_eq(pirt_launch(rq, k, 1, &global, &bad, 0, NULL, NULL),
               PI_ERROR_INVALID_WORK_GROUP_SIZE);
  cr_assert(strstr(pirt_error_message(), "global size 1024 is not a multiple of local "
                                         "size 48"), "%s", pirt_error_message());
  TRY(pirt_queue_finish(rq));

  char *log = zlog();
  const char *mod = line_with(log, NULL, "zeModuleCreate", NULL);
  cr_assert(mod, "%s", log);
  char size[32];
  snprintf(size, sizeof size, "size=%zu", spirv_size);
  cr_assert(line_with(mod, mod, "format=spirv", size, "flags=\"-ze-opt-level=1\"",
                      "kernels=vadd/4,scale/2", NULL), "%s", log);
  /* the buffers' device pointers, in creation order */
  char hex[3][17];
  const char *l = log;
  for (int i = 0; i < 3; i++) {
    l = line_with(log, l, "zeMemAllocDevice", "size=4096", NULL);
    cr_assert(l, "%s", log);
    ptr_hex(parse_ptr(field(l, "ptr")), hex[i]);
    l = strchr(l, '\n') + 1;
  }
  char args[160];
  snprintf(args, sizeof args, "args=[0=%s,1=%s,2=%s,3=00040000]", hex[0], hex[1], hex[2]);
  const char *l1 = line_with(log, NULL, "exec list=", "launch kernel=vadd",
                             "groups=16,1,1 group_size=64,1,1", NULL);
  cr_assert(l1, "%s", log);
  cr_assert(line_with(l1, l1, args, "offset=0,0,0", NULL), "%s\n%s", args, log);
  cr_assert(line_with(log, NULL, "zeKernelSuggestGroupSize", "global=1024,1,1",
                      "suggested=32,1,1", NULL), "%s", log);
  cr_assert(line_with(log, NULL, "launch kernel=vadd", "groups=32,1,1 group_size=32,1,1",
                      args, NULL), "%s", log);
  cr_assert(line_with(log, NULL, "launch kernel=vadd", "groups=4,4,1 group_size=16,2,1",
                      NULL), "%s", log);
  cr_assert_eq(count_lines_with(log, "launch kernel=vadd"), 3,
               "the refused launch reached no command list: %s", log);
  TRY(pirt_kernel_release(k));
  TRY(pirt_program_release(p));
  TRY(pirt_buffer_release(a));
  TRY(pirt_buffer_release(b));
  TRY(pirt_buffer_release(c));
}

Test(runtime, usm_pointer_arguments_reach_the_kernel_as_pointers)
{
  pirt_program *p;
  TRY(pirt_program_create_binary(rctx, spirv, spirv_size, true, "", &p));
  pirt_kernel *k;
  TRY(pirt_kernel_create(p, "scale", &k));
  void *d;
  TRY(pirt_usm_alloc(rctx, PIRT_USM_DEVICE, 256, 0, &d));
  TRY(pirt_kernel_set_usm(k, 0, d));
  TRY(pirt_kernel_set_local(k, 1, 512));
  size_t global = 64;
  TRY(pirt_launch(rq, k, 1, &global, NULL, 0, NULL, NULL));
  TRY(pirt_queue_finish(rq));
  char hex[17], want[64];
  ptr_hex(d, hex);
  snprintf(want, sizeof want, "args=[0=%s,1=local:512]", hex);
  char *log = zlog();
  cr_assert(line_with(log, NULL, "launch kernel=scale", want, NULL), "%s\n%s", want, log);
  TRY(pirt_usm_free(rctx, d));
  TRY(pirt_kernel_release(k));
  TRY(pirt_program_release(p));
}

Test(runtime, the_build_log_is_the_module_build_log)
{
  pirt_program *p;
  TRY(pirt_program_create_binary(rctx, spirv, spirv_size, true, "-O2", &p));
  char *blog = NULL;
  TRY(pirt_program_build_log(p, &blog));
  char want[128];
  snprintf(want, sizeof want, "2 kernel(s) from %zu bytes of SPIR-V with flags '-O2'",
           spirv_size);
  cr_assert(strstr(blog, want), "%s", blog);
  free(blog);
  TRY(pirt_program_release(p));
  /* a failing build: the runtime puts the log into its message */
  cr_assert_eq(pirt_program_create_binary(rctx, spirv, spirv_size, true,
                                          "-pitrace-fail-build", &p),
               PI_ERROR_BUILD_PROGRAM_FAILURE);
  cr_assert(strstr(pirt_error_message(), "build failed as asked by -pitrace-fail-build"),
            "%s", pirt_error_message());
  char *log = zlog();
  cr_assert_geq(count_lines_with(log, "zeModuleBuildLogGetString"), 2, "%s", log);
  cr_assert(line_with(log, NULL, "zeModuleCreate", "result=build-failure", NULL), "%s",
            log);
}

Test(runtime, source_programs_are_refused_clearly)
{
  pirt_program *p;
  cr_assert_eq(pirt_program_create_source(rctx, "__kernel void k() {}", NULL, &p),
               PI_ERROR_INVALID_OPERATION);
  cr_assert(strstr(pirt_error_message(), "Level Zero compiles no OpenCL C source"), "%s",
            pirt_error_message());
  uint32_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  cr_assert_eq(pirt_program_create_binary(rctx, junk, sizeof junk, true, NULL, &p),
               PI_ERROR_INVALID_BINARY);
  cr_assert(strstr(pirt_error_message(), "not SPIR-V"), "%s", pirt_error_message());
}

Test(runtime, native_binaries_round_trip)
{
  pirt_program *p;
  TRY(pirt_program_create_binary(rctx, spirv, spirv_size, true, NULL, &p));
  void *bin;
  size_t size;
  TRY(pirt_program_get_binary(p, &bin, &size));
  cr_assert_eq(size, spirv_size + 8);
  cr_assert_eq(memcmp(bin, "PTZENATV", 8), 0);
  pirt_program *p2;
  TRY(pirt_program_create_binary(rctx, bin, size, false, NULL, &p2));
  pirt_kernel *k;
  TRY(pirt_kernel_create(p2, "scale", &k));
  TRY(pirt_kernel_release(k));
  cr_assert_neq(pirt_kernel_create(p2, "nothere", &k), PI_SUCCESS);
  cr_assert(strstr(pirt_error_message(), "the program has no such kernel"), "%s",
            pirt_error_message());
  char *log = zlog();
  cr_assert(line_with(log, NULL, "zeModuleCreate", "format=native", "kernels=vadd/4",
                      NULL), "%s", log);
  free(bin);
  TRY(pirt_program_release(p));
  TRY(pirt_program_release(p2));
}

/* Profiling events carry device times; the in-order queue chains each
 * command to the previous one's event. */
Test(runtime, events_chain_in_order_and_carry_times)
{
  pirt_queue *pq;
  TRY(pirt_queue_create(rctx, PIRT_QUEUE_PROFILING, &pq));
  pirt_buffer *b;
  TRY(pirt_buffer_create(rctx, 0, 64, NULL, &b));
  unsigned char data[64] = {7};
  pirt_event *e1, *e2;
  TRY(pirt_write(pq, b, false, 0, 64, data, 0, NULL, &e1));
  TRY(pirt_read(pq, b, false, 0, 64, data, 1, &e1, &e2));
  TRY(pirt_event_wait(1, &e2));
  uint64_t s1, t1, s2, t2;
  TRY(pirt_event_times(e1, &s1, &t1));
  TRY(pirt_event_times(e2, &s2, &t2));
  cr_assert(s1 > 0 && s1 <= t1 && t1 <= s2 && s2 <= t2, "%" PRIu64 " %" PRIu64
            " %" PRIu64 " %" PRIu64, s1, t1, s2, t2);
  TRY(pirt_event_release(e1));
  TRY(pirt_event_release(e2));
  TRY(pirt_buffer_release(b));
  TRY(pirt_queue_release(pq));

  char *log = zlog();
  cr_assert(line_with(log, NULL, "zeEventPoolCreate", "flags=0x5", NULL),
            "a host-visible pool with kernel timestamps: %s", log);
  const char *w = line_with(log, NULL, "exec list=", "copy ", "size=64", NULL);
  cr_assert(w, "%s", log);
  char sig[16], want[40];
  snprintf(sig, sizeof sig, "%s", field(w, "signal"));
  cr_assert(sig[0] == 'E', "%s", w);
  /* the read waits for the write twice over: its wait list and the chain */
  snprintf(want, sizeof want, "wait=[%s,%s]", sig, sig);
  cr_assert(line_with(log, strchr(w, '\n') + 1, "exec list=", "copy ", want, NULL),
            "%s\n%s", want, log);
}

/* ---- Spec constants through the program manager ----------------------------------- */

static uint32_t pm_spirv[128];
static uint32_t sc_a[3] = {3, 0, 4};
static uint32_t sc_pair[6] = {4, 0, 4, 5, 4, 4};
static struct _pi_device_binary_property_struct spec_props[] = {
    {"sc_a", sc_a, PI_PROPERTY_TYPE_BYTE_ARRAY, sizeof sc_a},
    {"sc_pair", sc_pair, PI_PROPERTY_TYPE_BYTE_ARRAY, sizeof sc_pair}};
static struct _pi_device_binary_property_set_struct spec_sets[] = {
    {__SYCL_PI_PROPERTY_SET_SPEC_CONST_MAP, spec_props, spec_props + 2}};
static struct _pi_offload_entry_struct pm_entries[] = {
    {NULL, "spec_kernel", 0, 0, 0}};
static const char ocl_src[] = "__kernel void spec_kernel(__global int *o) {}";
static struct pi_device_binary_struct pm_bins[2];
static struct pi_device_binaries_struct pm_desc;

static void register_spec_images(void)
{
  const struct kdecl k[] = {{"spec_kernel", 1}};
  size_t size = make_spirv(pm_spirv, 128, k, 1);
  /* an OpenCL C image first: the plugin must pick the SPIR-V one */
  pm_bins[0] = (struct pi_device_binary_struct){
      PI_DEVICE_BINARY_VERSION, PI_DEVICE_BINARY_OFFLOAD_KIND_SYCL,
      PI_DEVICE_BINARY_TYPE_OPENCL_C, __SYCL_PI_DEVICE_BINARY_TARGET_OPENCL_C, "",
      "", NULL, NULL, (const unsigned char *)ocl_src,
      (const unsigned char *)ocl_src + sizeof ocl_src - 1, pm_entries, pm_entries + 1,
      NULL, NULL};
  pm_bins[1] = (struct pi_device_binary_struct){
      PI_DEVICE_BINARY_VERSION, PI_DEVICE_BINARY_OFFLOAD_KIND_SYCL,
      PI_DEVICE_BINARY_TYPE_SPIRV, __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64, "-O3", "",
      NULL, NULL, (const unsigned char *)pm_spirv,
      (const unsigned char *)pm_spirv + size, pm_entries, pm_entries + 1, spec_sets,
      spec_sets + 1};
  pm_desc = (struct pi_device_binaries_struct){PI_DEVICE_BINARIES_VERSION, 2, pm_bins,
                                               NULL, NULL};
  pirt_register_images(&pm_desc);
}

/* spec_kernel of `bundle`, its argument a 16-byte device allocation (*d). */
static pirt_kernel *spec_kernel_with_usm(pirt_bundle *bundle, void **d)
{
  pirt_kernel *k;
  TRY(pirt_bundle_get_kernel(bundle, "spec_kernel", &k));
  TRY(pirt_usm_alloc(rctx, PIRT_USM_DEVICE, 16, 0, d));
  TRY(pirt_kernel_set_usm(k, 0, *d));
  return k;
}

/* What spec_kernel_with_usm made, and the bundle, released. */
static void release_spec_kernel(pirt_bundle *bundle, pirt_kernel *k, void *d)
{
  TRY(pirt_usm_free(rctx, d));
  TRY(pirt_kernel_release(k));
  TRY(pirt_bundle_release(bundle));
}

Test(runtime, spec_constants_reach_module_creation_through_the_program_manager)
{
  register_spec_images();
  pirt_bundle *bundle;
  TRY(pirt_bundle_create(rctx, &bundle));
  int32_t a = 42;
  int32_t pair[2] = {-1, 0x7f};
  TRY(pirt_bundle_set_spec_constant(bundle, "sc_a", &a, sizeof a));
  TRY(pirt_bundle_set_spec_constant(bundle, "sc_pair", pair, sizeof pair));
  void *d;
  pirt_kernel *k = spec_kernel_with_usm(bundle, &d);
  size_t one = 1;
  TRY(pirt_launch(rq, k, 1, &one, NULL, 0, NULL, NULL));
  int32_t other = 7;
  pirt_spec_value v = {"sc_a", &other, sizeof other};
  TRY(pirt_launch_spec(rq, k, 1, &one, NULL, 1, &v, 0, NULL, NULL));
  TRY(pirt_queue_finish(rq));

  char *log = zlog();
  const char *m1 = line_with(log, NULL, "zeModuleCreate", "kernels=spec_kernel/1", NULL);
  cr_assert(m1, "%s", log);
  cr_assert(line_with(m1, m1, "flags=\"-O3\"",
                      "constants=3 [3=0x2a 4=0xffffffff 5=0x7f]", NULL), "%s", log);
  const char *m2 = line_with(log, strchr(m1, '\n') + 1, "zeModuleCreate", NULL);
  cr_assert(m2, "a launch with another value builds again: %s", log);
  cr_assert(line_with(m2, m2, "constants=3 [3=0x7 4=0xffffffff 5=0x7f]", NULL), "%s",
            log);
  cr_assert_eq(count_lines_with(log, "launch kernel=spec_kernel"), 2, "%s", log);
  release_spec_kernel(bundle, k, d);
  pirt_unregister_images(&pm_desc);
}

/* Long compile options (many -D defines): the program cache's key held
 * only about 300 bytes, so the options were cut off there, and with them
 * the native spec-constant values that follow them in the key (written
 * past its end, too): a launch with another value hit the program built
 * with the first one. */
Test(runtime, long_options_do_not_hide_spec_values_from_the_cache)
{
  static char long_opts[600];
  size_t w = 0;
  for (int i = 0; w + 16 < sizeof long_opts; i++)
    w += (size_t)snprintf(long_opts + w, sizeof long_opts - w, "-DPAD%d=1 ", i);
  const struct kdecl kd[] = {{"spec_kernel", 1}};
  size_t size = make_spirv(pm_spirv, 128, kd, 1);
  static struct pi_device_binary_struct bin;
  static struct pi_device_binaries_struct desc;
  bin = (struct pi_device_binary_struct){
      PI_DEVICE_BINARY_VERSION, PI_DEVICE_BINARY_OFFLOAD_KIND_SYCL,
      PI_DEVICE_BINARY_TYPE_SPIRV, __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64, long_opts,
      "", NULL, NULL, (const unsigned char *)pm_spirv,
      (const unsigned char *)pm_spirv + size, pm_entries, pm_entries + 1, spec_sets,
      spec_sets + 1};
  desc = (struct pi_device_binaries_struct){PI_DEVICE_BINARIES_VERSION, 1, &bin, NULL,
                                            NULL};
  pirt_register_images(&desc);
  pirt_bundle *bundle;
  TRY(pirt_bundle_create(rctx, &bundle));
  int32_t a = 42;
  TRY(pirt_bundle_set_spec_constant(bundle, "sc_a", &a, sizeof a));
  void *d;
  pirt_kernel *k = spec_kernel_with_usm(bundle, &d);
  size_t one = 1;
  int32_t other = 7;
  pirt_spec_value v = {"sc_a", &other, sizeof other};
  TRY(pirt_launch_spec(rq, k, 1, &one, NULL, 1, &v, 0, NULL, NULL));
  TRY(pirt_queue_finish(rq));
  char *log = zlog();
  const char *m1 = line_with(log, NULL, "zeModuleCreate", "kernels=spec_kernel/1", NULL);
  cr_assert(m1, "%s", log);
  cr_assert(line_with(m1, m1, "constants=1 [3=0x2a]", NULL), "%s", log);
  const char *m2 = line_with(log, strchr(m1, '\n') + 1, "zeModuleCreate", NULL);
  cr_assert(m2, "the launch's value hit the program of the bundle's: %s", log);
  cr_assert(line_with(m2, m2, "constants=1 [3=0x7]", NULL), "%s", log);
  release_spec_kernel(bundle, k, d);
  pirt_unregister_images(&desc);
}

/* A bundle value for a spec constant the kernel does not declare (another
 * kernel's) took part in the kernel's program key: setting it built the
 * kernel again, the same module, at its next launch. */
Test(runtime, other_kernels_values_do_not_rebuild_a_kernel)
{
  register_spec_images();
  pirt_bundle *bundle;
  TRY(pirt_bundle_create(rctx, &bundle));
  int32_t a = 42, other = 1;
  TRY(pirt_bundle_set_spec_constant(bundle, "sc_a", &a, sizeof a));
  TRY(pirt_bundle_set_spec_constant(bundle, "sc_of_another_kernel", &other, sizeof other));
  void *d;
  pirt_kernel *k = spec_kernel_with_usm(bundle, &d);
  size_t one = 1;
  TRY(pirt_launch(rq, k, 1, &one, NULL, 0, NULL, NULL));
  other = 2;
  TRY(pirt_bundle_set_spec_constant(bundle, "sc_of_another_kernel", &other, sizeof other));
  TRY(pirt_launch(rq, k, 1, &one, NULL, 0, NULL, NULL));
  pirt_spec_value v = {"sc_of_another_kernel", &other, sizeof other};
  TRY(pirt_launch_spec(rq, k, 1, &one, NULL, 1, &v, 0, NULL, NULL));
  TRY(pirt_queue_finish(rq));
  char *log = zlog();
  cr_assert_eq(count_lines_with(log, "zeModuleCreate"), 1, "%s", log);
  cr_assert_eq(count_lines_with(log, "launch kernel=spec_kernel"), 3, "%s", log);
  release_spec_kernel(bundle, k, d);
  pirt_unregister_images(&pm_desc);
}

/* The same values set in another order are the same program: the key
 * followed the order of the bundle's calls, and built the module twice. */
Test(runtime, values_set_in_another_order_share_the_program)
{
  register_spec_images();
  int32_t a = 42;
  int32_t pair[2] = {-1, 0x7f};
  pirt_bundle *b1, *b2;
  TRY(pirt_bundle_create(rctx, &b1));
  TRY(pirt_bundle_create(rctx, &b2));
  TRY(pirt_bundle_set_spec_constant(b1, "sc_a", &a, sizeof a));
  TRY(pirt_bundle_set_spec_constant(b1, "sc_pair", pair, sizeof pair));
  TRY(pirt_bundle_set_spec_constant(b2, "sc_pair", pair, sizeof pair));
  TRY(pirt_bundle_set_spec_constant(b2, "sc_a", &a, sizeof a));
  pirt_kernel *k1, *k2;
  TRY(pirt_bundle_get_kernel(b1, "spec_kernel", &k1));
  TRY(pirt_bundle_get_kernel(b2, "spec_kernel", &k2));
  char *log = zlog();
  cr_assert_eq(count_lines_with(log, "zeModuleCreate"), 1, "%s", log);
  TRY(pirt_kernel_release(k1));
  TRY(pirt_kernel_release(k2));
  TRY(pirt_bundle_release(b1));
  TRY(pirt_bundle_release(b2));
  pirt_unregister_images(&pm_desc);
}

/* ---- The plugin's table, directly ---------------------------------------------------- */

TestSuite(direct, .init = direct, .fini = direct_fini, .timeout = 60);

Test(direct, spec_constants_are_passed_natively_at_module_creation)
{
  pi_program p;
  OK(PI(piProgramCreate)(ctx0, spirv, spirv_size, &p));
  int32_t v7 = 42;
  uint64_t v9 = 0x1122334455667788ull;
  unsigned char v11 = 1;
  OK(PI(piextProgramSetSpecializationConstant)(p, 7, sizeof v7, &v7));
  OK(PI(piextProgramSetSpecializationConstant)(p, 9, sizeof v9, &v9));
  OK(PI(piextProgramSetSpecializationConstant)(p, 11, sizeof v11, &v11));
  v7 = 43; /* setting an id again replaces its value */
  OK(PI(piextProgramSetSpecializationConstant)(p, 7, sizeof v7, &v7));
  OK(PI(piProgramBuild)(p, 0, NULL, "-g", NULL, NULL));
  char *log = zlog();
  cr_assert(line_with(log, NULL, "zeModuleCreate", "flags=\"-g\"",
                      "constants=3 [7=0x2b 9=0x1122334455667788 11=0x1]", NULL), "%s",
            log);
  cr_assert_eq(PI(piextProgramSetSpecializationConstant)(p, 7, sizeof v7, &v7),
               PI_ERROR_INVALID_OPERATION);
  cr_assert(strstr(plugin_message(), "already built"), "%s", plugin_message());
  pi_program_build_status st;
  OK(PI(piProgramGetBuildInfo)(p, dev0, PI_PROGRAM_BUILD_INFO_STATUS, sizeof st, &st,
                               NULL));
  cr_assert_eq(st, PI_PROGRAM_BUILD_STATUS_SUCCESS);
  char names[64];
  OK(PI(piProgramGetInfo)(p, PI_PROGRAM_INFO_KERNEL_NAMES, sizeof names, names, NULL));
  cr_assert_str_eq(names, "vadd;scale");
  OK(PI(piProgramRelease)(p));
}

Test(direct, compile_and_link_create_one_module_per_program)
{
  const struct kdecl ka[] = {{"first", 1}}, kb[] = {{"second", 2}};
  uint32_t wa[64], wb[64];
  size_t na = make_spirv(wa, 64, ka, 1), nb = make_spirv(wb, 64, kb, 1);
  pi_program a, b, linked;
  OK(PI(piProgramCreate)(ctx0, wa, na, &a));
  OK(PI(piProgramCreate)(ctx0, wb, nb, &b));
  uint32_t s = 5;
  OK(PI(piextProgramSetSpecializationConstant)(b, 2, sizeof s, &s));
  OK(PI(piProgramCompile)(a, 1, &dev0, "-DA", 0, NULL, NULL, NULL, NULL));
  OK(PI(piProgramCompile)(b, 1, &dev0, "-DB", 0, NULL, NULL, NULL, NULL));
  pi_program in[2] = {a, b};
  OK(PI(piProgramLink)(ctx0, 1, &dev0, "-link", 2, in, NULL, NULL, &linked));
  pi_kernel k1, k2;
  OK(PI(piKernelCreate)(linked, "first", &k1));
  OK(PI(piKernelCreate)(linked, "second", &k2));
  char *log = zlog();
  cr_assert(line_with(log, NULL, "zeModuleCreate", "flags=\"-DA -link\"", "constants=0",
                      NULL), "%s", log);
  cr_assert(line_with(log, NULL, "zeModuleCreate", "flags=\"-DB -link\"",
                      "constants=1 [2=0x5]", NULL), "%s", log);
  cr_assert(line_with(log, NULL, "zeModuleDynamicLink modules=M", ",M", NULL), "%s", log);
  char blog[256];
  OK(PI(piProgramGetBuildInfo)(linked, dev0, PI_PROGRAM_BUILD_INFO_LOG, sizeof blog,
                               blog, NULL));
  cr_assert(strstr(blog, "linked 2 module(s)"), "%s", blog);
  OK(PI(piKernelRelease)(k1));
  OK(PI(piKernelRelease)(k2));
  OK(PI(piProgramRelease)(linked));
  OK(PI(piProgramRelease)(a));
  OK(PI(piProgramRelease)(b));
}

Test(direct, select_binary_takes_spirv_and_refuses_opencl_c_listing_targets)
{
  struct pi_device_binary_struct ocl = {.Format = PI_DEVICE_BINARY_TYPE_OPENCL_C,
                                        .DeviceTargetSpec = "opencl_c"};
  struct pi_device_binary_struct spv = {.Format = PI_DEVICE_BINARY_TYPE_SPIRV,
                                        .DeviceTargetSpec = "spir64"};
  struct pi_device_binary_struct gen = {.Format = PI_DEVICE_BINARY_TYPE_NATIVE,
                                        .DeviceTargetSpec = "spir64_gen"};
  struct pi_device_binary_struct ptx = {.Format = PI_DEVICE_BINARY_TYPE_PTX,
                                        .DeviceTargetSpec = "nvptx64"};
  pi_uint32 idx = 99;
  pi_device_binary only_ocl[] = {&ocl, &ptx};
  cr_assert_eq(PI(piextDeviceSelectBinary)(dev0, only_ocl, 2, &idx),
               PI_ERROR_INVALID_BINARY);
  cr_assert(strstr(plugin_message(), "offered: opencl_c (format 4), nvptx64 (format 5)"),
            "%s", plugin_message());
  pi_device_binary both[] = {&ocl, &spv};
  OK(PI(piextDeviceSelectBinary)(dev0, both, 2, &idx));
  cr_assert_eq(idx, 1);
  pi_device_binary three[] = {&spv, &ocl, &gen};
  OK(PI(piextDeviceSelectBinary)(dev0, three, 3, &idx));
  cr_assert_eq(idx, 2, "a native spir64_gen image comes first");
}

Test(direct, platform_and_device_answer_from_level_zero)
{
  pi_platform_backend be = PI_EXT_PLATFORM_BACKEND_UNKNOWN;
  OK(PI(piPlatformGetInfo)(plat, PI_EXT_PLATFORM_INFO_BACKEND, sizeof be, &be, NULL));
  cr_assert_eq(be, PI_EXT_PLATFORM_BACKEND_LEVEL_ZERO);
  char s[256];
  static const struct {
    pi_platform_info query;
    const char *answer;
  } names[] = {{PI_PLATFORM_INFO_NAME, "Intel(R) Level-Zero"},
               {PI_PLATFORM_INFO_VENDOR, "Intel(R) Corporation"},
               {PI_PLATFORM_INFO_PROFILE, "FULL_PROFILE"},
               {PI_PLATFORM_INFO_VERSION, "1.4"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    OK(PI(piPlatformGetInfo)(plat, names[i].query, sizeof s, s, NULL));
    cr_assert_str_eq(s, names[i].answer);
  }
  OK(PI(piPlatformGetInfo)(plat, PI_PLATFORM_INFO_EXTENSIONS, sizeof s, s, NULL));
  cr_assert(strstr(s, "ZE_experimental_global_offset"), "%s", s);
  OK(PI(piDeviceGetInfo)(dev0, PI_DEVICE_INFO_IL_VERSION, sizeof s, s, NULL));
  cr_assert_str_eq(s, "SPIR-V_1.2");
  OK(PI(piDeviceGetInfo)(dev0, PI_DEVICE_INFO_PCI_ADDRESS, sizeof s, s, NULL));
  cr_assert_str_eq(s, "0000:42:00.0");
  OK(PI(piDeviceGetInfo)(dev0, PI_DEVICE_INFO_DRIVER_VERSION, sizeof s, s, NULL));
  cr_assert_str_eq(s, "1.2.3");
  OK(PI(piDeviceGetInfo)(dev0, PI_DEVICE_INFO_VERSION, sizeof s, s, NULL));
  cr_assert_str_eq(s, "1.4", "the device's version is the platform's API version");
  pi_uint32 cu = 0;
  OK(PI(piDeviceGetInfo)(dev0, PI_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL));
  cr_assert_eq(cu, 2 * 4 * 8);
  size_t sizes[8], n = 0;
  OK(PI(piDeviceGetInfo)(dev0, PI_DEVICE_INFO_SUB_GROUP_SIZES_INTEL, sizeof sizes, sizes,
                         &n));
  cr_assert_eq(n, 3 * sizeof(size_t));
  cr_assert(sizes[0] == 8 && sizes[1] == 16 && sizes[2] == 32);
  size_t res = 0;
  OK(PI(piDeviceGetInfo)(dev0, PI_DEVICE_INFO_PROFILING_TIMER_RESOLUTION, sizeof res,
                         &res, NULL));
  cr_assert_eq(res, 40, "the double's timer runs at 25 MHz");
  pi_usm_capabilities caps = 0;
  OK(PI(piDeviceGetInfo)(dev0, PI_DEVICE_INFO_USM_DEVICE_SUPPORT, sizeof caps, &caps,
                         NULL));
  cr_assert_eq(caps, PI_USM_ACCESS | PI_USM_ATOMIC_ACCESS);
  cr_assert_eq(PI(piDeviceGetInfo)(dev0, PI_EXT_INTEL_DEVICE_INFO_FREE_MEMORY, 8, s, NULL),
               PI_ERROR_INVALID_VALUE);
  cr_assert(strstr(plugin_message(), "it needs Sysman"), "%s", plugin_message());
  pi_native_handle nh = 0;
  OK(PI(piextDeviceGetNativeHandle)(dev0, &nh));
  pi_device again = NULL;
  OK(PI(piextDeviceCreateWithNativeHandle)(nh, plat, &again));
  cr_assert_eq(again, dev0);
  uint64_t dt = 0, ht = 0;
  OK(PI(piGetDeviceAndHostTimer)(dev0, &dt, &ht));
  cr_assert(dt > 0 && ht > 0);
}

Test(direct, sub_devices_come_from_partitioning_by_affinity_domain)
{
  pi_device_partition_property props[] = {PI_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
                                          PI_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE,
                                          0};
  pi_uint32 n = 0;
  OK(PI(piDevicePartition)(dev0, props, 0, NULL, &n));
  cr_assert_eq(n, 2);
  pi_device subs[2];
  OK(PI(piDevicePartition)(dev0, props, 2, subs, NULL));
  char name[256];
  OK(PI(piDeviceGetInfo)(subs[1], PI_DEVICE_INFO_NAME, sizeof name, name, NULL));
  cr_assert(strstr(name, "TEST DOUBLE tile 1"), "%s", name);
  pi_device parent = NULL;
  OK(PI(piDeviceGetInfo)(subs[0], PI_DEVICE_INFO_PARENT_DEVICE, sizeof parent, &parent,
                         NULL));
  cr_assert_eq(parent, dev0);
  pi_device_partition_property eq[] = {PI_DEVICE_PARTITION_EQUALLY, 4, 0};
  cr_assert_eq(PI(piDevicePartition)(dev0, eq, 0, NULL, &n), PI_ERROR_INVALID_VALUE);
  cr_assert(strstr(plugin_message(), "split only into their sub-devices"), "%s",
            plugin_message());
  /* a queue on a sub-device of the root's context */
  pi_queue sq;
  OK(PI(piQueueCreate)(ctx0, subs[0], 0, &sq));
  OK(PI(piQueueRelease)(sq));
  char *log = zlog();
  cr_assert(line_with(log, NULL, "zeCommandQueueCreate", "device=D1", NULL), "%s", log);
  OK(PI(piDeviceRelease)(subs[0]));
  OK(PI(piDeviceRelease)(subs[1]));
}

Test(direct, immediate_command_lists_run_commands_without_queue_submission)
{
  pi_queue iq = make_queue(PI_EXT_QUEUE_FLAG_SUBMISSION_IMMEDIATE);
  void *d;
  OK(PI(piextUSMDeviceAlloc)(&d, ctx0, dev0, NULL, 32, 0));
  char in[32] = "immediate command list", out[32] = {0};
  OK(PI(piextUSMEnqueueMemcpy)(iq, false, d, in, sizeof in, 0, NULL, NULL));
  OK(PI(piextUSMEnqueueMemcpy)(iq, true, out, d, sizeof out, 0, NULL, NULL));
  cr_assert_str_eq(out, in);
  pi_native_handle nh;
  int32_t desc = -1;
  OK(PI(piextQueueGetNativeHandle)(iq, &nh, &desc));
  cr_assert_eq(desc, 1);
  OK(PI(piQueueFinish)(iq));
  OK(PI(piQueueRelease)(iq));
  OK(PI(piextUSMFree)(ctx0, d));
  char *log = zlog();
  cr_assert(line_with(log, NULL, "zeCommandListCreateImmediate", "mode=2", NULL), "%s",
            log);
  cr_assert_eq(count_lines_with(log, "zeCommandQueueExecuteCommandLists"), 0, "%s", log);
  cr_assert_eq(count_lines_with(log, "exec list="), 2, "%s", log);
}

static atomic_int called;
static pi_int32 called_status = -1;
static pi_event called_event;

static void on_complete(pi_event e, pi_int32 status, void *user)
{
  called_event = e;
  called_status = status;
  atomic_store((atomic_int *)user, 1);
}

Test(direct, events_signal_wait_and_call_back)
{
  pi_event user;
  OK(PI(piEventCreate)(ctx0, &user));
  pi_int32 status = -1;
  OK(PI(piEventGetInfo)(user, PI_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof status,
                        &status, NULL));
  cr_assert_eq(status, PI_EVENT_COMPLETE, "user events are created complete");
  OK(PI(piEventSetStatus)(user, PI_EVENT_COMPLETE));
  cr_assert_eq(PI(piEventSetStatus)(user, PI_EVENT_RUNNING), PI_ERROR_INVALID_VALUE);
  /* a command waiting for it, on an out-of-order queue, then a barrier */
  pi_queue oq = make_queue(PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  void *h;
  OK(PI(piextUSMHostAlloc)(&h, ctx0, NULL, 64, 0));
  int one = 1;
  pi_event fill, barrier;
  OK(PI(piextUSMEnqueueFill)(oq, h, &one, sizeof one, 64, 1, &user, &fill));
  OK(PI(piEnqueueEventsWaitWithBarrier)(oq, 0, NULL, &barrier));
  OK(PI(piEventsWait)(1, &barrier));
  cr_assert_eq(((int *)h)[15], 1);
  pi_command_type type;
  OK(PI(piEventGetInfo)(fill, PI_EVENT_INFO_COMMAND_TYPE, sizeof type, &type, NULL));
  cr_assert_eq(type, PI_COMMAND_TYPE_SVM_MEMFILL);
  pi_queue owner = NULL;
  OK(PI(piEventGetInfo)(fill, PI_EVENT_INFO_COMMAND_QUEUE, sizeof owner, &owner, NULL));
  cr_assert_eq(owner, oq);
  cr_assert_eq(PI(piEventGetProfilingInfo)(fill, PI_PROFILING_INFO_COMMAND_START, 8, &one,
                                           NULL),
               PI_ERROR_PROFILING_INFO_NOT_AVAILABLE);
  cr_assert(strstr(plugin_message(), "PI_QUEUE_FLAG_PROFILING_ENABLE"), "%s",
            plugin_message());
  /* a callback on completion runs on another thread */
  atomic_store(&called, 0);
  OK(PI(piEventSetCallback)(fill, PI_EVENT_COMPLETE, on_complete, &called));
  for (int i = 0; i < 500 && atomic_load(&called) == 0; i++)
    usleep(10000);
  cr_assert_eq(atomic_load(&called), 1, "the callback did not run within 5 s");
  cr_assert_eq(called_status, PI_EVENT_COMPLETE);
  cr_assert_eq(called_event, fill);
  OK(PI(piQueueRelease)(oq));
  OK(PI(piEventRelease)(fill));
  OK(PI(piEventRelease)(barrier));
  OK(PI(piEventRelease)(user));
  OK(PI(piextUSMFree)(ctx0, h));
  char *log = zlog();
  const char *f = line_with(log, NULL, "exec list=", "fill ", NULL);
  cr_assert(f, "%s", log);
  /* the fill waited for the user event (signaled on the host, twice), and
   * the barrier signals an event of its own. The double runs commands when
   * they are submitted, so no command is pending when the barrier comes. */
  const char *sig = line_with(log, NULL, "zeEventHostSignal", NULL);
  cr_assert(sig, "%s", log);
  char user_id[16], want[32];
  snprintf(user_id, sizeof user_id, "%s", field(sig, "event"));
  snprintf(want, sizeof want, "wait=[%s]", user_id);
  cr_assert(line_with(f, f, want, NULL), "%s\n%s", want, log);
  const char *b = line_with(log, f, "exec list=", "barrier", NULL);
  cr_assert(b, "%s", log);
  char fill_sig[16];
  snprintf(fill_sig, sizeof fill_sig, "%s", field(f, "signal"));
  cr_assert(fill_sig[0] == 'E' && strcmp(field(b, "signal"), fill_sig) != 0, "%s", log);
}

Test(direct, rectangles_and_2d_copies_move_the_right_bytes)
{
  enum { W = 8, H = 6 };
  unsigned char host[H][W], back[H][W];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      host[y][x] = (unsigned char)(16 * y + x);
  pi_mem buf;
  OK(PI(piMemBufferCreate)(ctx0, PI_MEM_FLAGS_ACCESS_RW, W * H, NULL, &buf, NULL));
  unsigned char zero[W * H] = {0};
  OK(PI(piEnqueueMemBufferWrite)(q0, buf, true, 0, sizeof zero, zero, 0, NULL, NULL));
  /* a 3x2 rectangle from host (1,2) to buffer (4,1), pitch W on both sides */
  struct pi_buff_rect_offset_struct boff = {4, 1, 0}, hoff = {1, 2, 0};
  struct pi_buff_rect_region_struct reg = {3, 2, 1};
  OK(PI(piEnqueueMemBufferWriteRect)(q0, buf, true, &boff, &hoff, &reg, W, 0, W, 0, host,
                                     0, NULL, NULL));
  OK(PI(piEnqueueMemBufferRead)(q0, buf, true, 0, sizeof back, back, 0, NULL, NULL));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      bool in = y >= 1 && y < 3 && x >= 4 && x < 7;
      cr_assert_eq(back[y][x], in ? host[y + 1][x - 3] : 0, "(%d,%d)", x, y);
    }
  /* read the rectangle back into a pitch-4 host block */
  unsigned char small[2][4] = {{0}};
  struct pi_buff_rect_offset_struct zero_off = {0, 0, 0};
  OK(PI(piEnqueueMemBufferReadRect)(q0, buf, true, &boff, &zero_off, &reg, W, 0, 4, 0,
                                    small, 0, NULL, NULL));
  cr_assert_eq(small[1][2], host[3][3]);
  /* USM 2D: copy with different pitches, then fill and memset rows */
  void *d;
  OK(PI(piextUSMDeviceAlloc)(&d, ctx0, dev0, NULL, 16 * H, 0));
  OK(PI(piextUSMEnqueueMemcpy2D)(q0, true, d, 16, host, W, W, H, 0, NULL, NULL));
  uint16_t pat = 0xabcd;
  OK(PI(piextUSMEnqueueFill2D)(q0, (char *)d + 8, 16, sizeof pat, &pat, 4, 2, 0, NULL,
                               NULL));
  OK(PI(piextUSMEnqueueMemset2D)(q0, (char *)d + 12, 16, 0x5a, 2, H, 0, NULL, NULL));
  unsigned char flat[H][16];
  OK(PI(piextUSMEnqueueMemcpy)(q0, true, flat, d, sizeof flat, 0, NULL, NULL));
  cr_assert_eq(memcmp(flat[4], host[4], W), 0);
  cr_assert(flat[0][8] == 0xcd && flat[0][9] == 0xab && flat[1][10] == 0xcd);
  cr_assert(flat[5][12] == 0x5a && flat[5][13] == 0x5a && flat[2][8] != 0xcd);
  char *log = zlog();
  cr_assert(line_with(log, NULL, "copy_region", "origin=4,1,0 pitch=8,", "origin=1,2,0",
                      "region=3,2,1", NULL), "%s", log);
  cr_assert(line_with(log, NULL, "copy_region", "pitch=16,", "region=8,6,1", NULL),
            "USM 2D copies are one region copy: %s", log);
  OK(PI(piextUSMFree)(ctx0, d));
  OK(PI(piMemRelease)(buf));
}

Test(direct, sub_buffers_host_buffers_and_use_host_ptr_maps)
{
  char host[64];
  for (int i = 0; i < 64; i++)
    host[i] = (char)i;
  pi_mem use, sub;
  OK(PI(piMemBufferCreate)(ctx0, PI_MEM_FLAGS_HOST_PTR_USE, sizeof host, host, &use, NULL));
  struct pi_buffer_region_struct region = {16, 8};
  OK(PI(piMemBufferPartition)(use, PI_MEM_FLAGS_ACCESS_RW, PI_BUFFER_CREATE_TYPE_REGION,
                              &region, &sub));
  size_t size = 0;
  OK(PI(piMemGetInfo)(sub, PI_MEM_SIZE, sizeof size, &size, NULL));
  cr_assert_eq(size, 8);
  char x[8] = "ABCDEFG";
  OK(PI(piEnqueueMemBufferWrite)(q0, sub, true, 0, 8, x, 0, NULL, NULL));
  void *m;
  OK(PI(piEnqueueMemBufferMap)(q0, use, true, PI_MAP_READ, 0, 64, 0, NULL, NULL, &m));
  cr_assert_eq(m, (void *)host, "maps of PI_MEM_FLAGS_HOST_PTR_USE buffers go to host_ptr");
  cr_assert_str_eq(host + 16, "ABCDEFG");
  OK(PI(piEnqueueMemUnmap)(q0, use, m, 0, NULL, NULL));
  cr_assert_eq(PI(piEnqueueMemUnmap)(q0, use, m, 0, NULL, NULL), PI_ERROR_INVALID_VALUE);
  OK(PI(piMemRelease)(sub));
  OK(PI(piMemRelease)(use));
  /* a host allocation maps in place */
  pi_mem hb;
  OK(PI(piMemBufferCreate)(ctx0, PI_MEM_FLAGS_HOST_PTR_ALLOC, 32, NULL, &hb, NULL));
  pi_native_handle nh;
  OK(PI(piextMemGetNativeHandle)(hb, dev0, &nh));
  OK(PI(piEnqueueMemBufferMap)(q0, hb, true, PI_MAP_WRITE, 8, 8, 0, NULL, NULL, &m));
  cr_assert_eq((uintptr_t)m, (uintptr_t)nh + 8);
  OK(PI(piEnqueueMemUnmap)(q0, hb, m, 0, NULL, NULL));
  pi_mem_alloc_info q = PI_MEM_ALLOC_TYPE;
  pi_usm_type type = PI_MEM_TYPE_UNKNOWN;
  OK(PI(piextUSMGetMemAllocInfo)(ctx0, (void *)(nh + 4), q, sizeof type, &type, NULL));
  cr_assert_eq(type, PI_MEM_TYPE_HOST);
  void *base = NULL;
  OK(PI(piextUSMGetMemAllocInfo)(ctx0, (void *)(nh + 4), PI_MEM_ALLOC_BASE_PTR,
                                 sizeof base, &base, NULL));
  cr_assert_eq((uintptr_t)base, (uintptr_t)nh);
  OK(PI(piMemRelease)(hb));
  char *log = zlog();
  cr_assert(line_with(log, NULL, "zeMemAllocHost", "size=32", NULL), "%s", log);
}

Test(direct, images_round_trip_and_copy)
{
  pi_image_format fmt = {PI_IMAGE_CHANNEL_ORDER_RGBA, PI_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8};
  pi_image_desc desc = {.image_type = PI_MEM_TYPE_IMAGE2D, .image_width = 4,
                        .image_height = 3};
  uint32_t px[12], back[12];
  for (int i = 0; i < 12; i++)
    px[i] = 0x01020300u + (uint32_t)i;
  pi_mem img, img2;
  OK(PI(piMemImageCreate)(ctx0, PI_MEM_FLAGS_HOST_PTR_COPY, &fmt, &desc, px, &img));
  OK(PI(piMemImageCreate)(ctx0, PI_MEM_FLAGS_ACCESS_RW, &fmt, &desc, NULL, &img2));
  struct pi_image_offset_struct o = {0, 0, 0};
  struct pi_image_region_struct r = {4, 3, 1};
  OK(PI(piEnqueueMemImageCopy)(q0, img, img2, &o, &o, &r, 0, NULL, NULL));
  memset(back, 0, sizeof back);
  OK(PI(piEnqueueMemImageRead)(q0, img2, true, &o, &r, 0, 0, back, 0, NULL, NULL));
  cr_assert_arr_eq(back, px, sizeof px);
  /* one pixel written with a row pitch, read back */
  uint32_t one[2] = {0xdeadbeef, 0};
  struct pi_image_offset_struct o2 = {2, 1, 0};
  struct pi_image_region_struct r1 = {1, 1, 1};
  OK(PI(piEnqueueMemImageWrite)(q0, img2, true, &o2, &r1, 8, 0, one, 0, NULL, NULL));
  OK(PI(piEnqueueMemImageRead)(q0, img2, true, &o, &r, 0, 0, back, 0, NULL, NULL));
  cr_assert_eq(back[1 * 4 + 2], 0xdeadbeef);
  size_t elem = 0;
  OK(PI(piMemImageGetInfo)(img, PI_IMAGE_INFO_ELEMENT_SIZE, sizeof elem, &elem, NULL));
  cr_assert_eq(elem, 4);
  float color[4] = {0};
  size_t origin[3] = {0}, region[3] = {1, 1, 1};
  cr_assert_eq(PI(piEnqueueMemImageFill)(q0, img, color, origin, region, 0, NULL, NULL),
               PI_ERROR_INVALID_OPERATION);
  cr_assert(strstr(plugin_message(), "Level Zero has no image fill"), "%s",
            plugin_message());
  OK(PI(piMemRelease)(img));
  OK(PI(piMemRelease)(img2));
  char *log = zlog();
  cr_assert_eq(count_lines_with(log, "zeImageCreate"), 2, "%s", log);
  cr_assert(line_with(log, NULL, "image_copy", NULL), "%s", log);
}

Test(direct, device_globals_are_read_and_written_through_module_pointers)
{
  pi_program p = build_program("-pitrace-global=counter:16");
  uint64_t v[2] = {0x1111, 0x2222}, out[2] = {0};
  OK(PI(piextEnqueueDeviceGlobalVariableWrite)(q0, p, "counter", true, sizeof v, 0, v, 0,
                                               NULL, NULL));
  OK(PI(piextEnqueueDeviceGlobalVariableRead)(q0, p, "counter", true, 8, 8, out, 0, NULL,
                                              NULL));
  cr_assert_eq(out[0], 0x2222);
  size_t size = 0;
  void *ptr = NULL;
  OK(PI(piextGetGlobalVariablePointer)(dev0, p, "counter", &size, &ptr));
  cr_assert_eq(size, 16);
  cr_assert_eq(((uint64_t *)ptr)[0], 0x1111);
  cr_assert_eq(PI(piextEnqueueDeviceGlobalVariableRead)(q0, p, "counter", true, 16, 8,
                                                        out, 0, NULL, NULL),
               PI_ERROR_INVALID_VALUE);
  cr_assert_eq(PI(piextEnqueueDeviceGlobalVariableRead)(q0, p, "absent", true, 8, 0, out,
                                                        0, NULL, NULL),
               PI_ERROR_INVALID_VALUE);
  cr_assert(strstr(plugin_message(), "no such device global"), "%s", plugin_message());
  pi_uint64 fp = 1;
  cr_assert_eq(PI(piextGetDeviceFunctionPointer)(dev0, p, "vadd", &fp),
               PI_ERROR_FUNCTION_ADDRESS_IS_NOT_AVAILABLE);
  cr_assert_eq(PI(piextGetDeviceFunctionPointer)(dev0, p, "nothing", &fp),
               PI_ERROR_INVALID_KERNEL_NAME);
  cr_assert_eq(fp, 0);
  char c;
  cr_assert_eq(PI(piextEnqueueReadHostPipe)(q0, p, "pipe", true, &c, 1, 0, NULL, NULL),
               PI_ERROR_INVALID_OPERATION);
  cr_assert(strstr(plugin_message(), "host pipes are an FPGA feature"), "%s",
            plugin_message());
  OK(PI(piProgramRelease)(p));
}

Test(direct, kernel_queries_offsets_and_cooperative_launches)
{
  pi_program p = build_program("");
  pi_kernel k;
  OK(PI(piKernelCreate)(p, "scale", &k));
  pi_uint32 nargs = 0;
  OK(PI(piKernelGetInfo)(k, PI_KERNEL_INFO_NUM_ARGS, sizeof nargs, &nargs, NULL));
  cr_assert_eq(nargs, 2);
  char attrs[16] = "x";
  OK(PI(piKernelGetInfo)(k, PI_KERNEL_INFO_ATTRIBUTES, sizeof attrs, attrs, NULL));
  cr_assert_str_eq(attrs, "");
  size_t mult = 0;
  OK(PI(piKernelGetGroupInfo)(k, dev0, PI_KERNEL_GROUP_INFO_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                              sizeof mult, &mult, NULL));
  cr_assert_eq(mult, 16);
  pi_uint32 sg = 0;
  OK(PI(piKernelGetSubGroupInfo)(k, dev0, PI_KERNEL_MAX_SUB_GROUP_SIZE, 0, NULL,
                                 sizeof sg, &sg, NULL));
  cr_assert_eq(sg, 32);
  cr_assert_eq(PI(piKernelSetArg)(k, 2, 4, &sg), PI_ERROR_INVALID_ARG_INDEX);
  cr_assert(strstr(plugin_message(), "kernel 'scale', argument 2"), "%s",
            plugin_message());
  float f = 2.5f;
  OK(PI(piKernelSetArg)(k, 0, sizeof f, &f));
  OK(PI(piKernelSetArg)(k, 1, 64, NULL));
  pi_bool on = PI_TRUE;
  OK(PI(piKernelSetExecInfo)(k, PI_USM_INDIRECT_ACCESS, sizeof on, &on));
  size_t off[2] = {4, 2}, g[2] = {16, 4}, l[2] = {8, 2};
  OK(PI(piEnqueueKernelLaunch)(q0, k, 2, off, g, l, 0, NULL, NULL));
  pi_uint32 groups = 0;
  OK(PI(piextKernelSuggestMaxCooperativeGroupCount)(k, 64, 0, &groups));
  cr_assert_eq(groups, 256);
  size_t cg = 128, cl = 64;
  OK(PI(piextEnqueueCooperativeKernelLaunch)(q0, k, 1, NULL, &cg, &cl, 0, NULL, NULL));
  OK(PI(piQueueFinish)(q0));
  pi_bool empty = PI_FALSE;
  OK(PI(piQueueGetInfo)(q0, PI_EXT_ONEAPI_QUEUE_INFO_EMPTY, sizeof empty, &empty, NULL));
  cr_assert_eq(empty, PI_TRUE);
  char *log = zlog();
  cr_assert(line_with(log, NULL, "zeKernelSetIndirectAccess", "flags=0x7", NULL), "%s",
            log);
  cr_assert(line_with(log, NULL, "launch kernel=scale", "groups=2,2,1",
                      "group_size=8,2,1", "offset=4,2,0", "args=[0=00002040,1=local:64]",
                      NULL), "%s", log);
  cr_assert(line_with(log, NULL, "launch_cooperative kernel=scale", "groups=2,1,1",
                      "offset=0,0,0", NULL), "%s", log);
  pi_native_handle nh;
  OK(PI(piextKernelGetNativeHandle)(k, &nh));
  pi_kernel k2;
  OK(PI(piextKernelCreateWithNativeHandle)(nh, ctx0, p, false, &k2));
  char name[32];
  OK(PI(piKernelGetInfo)(k2, PI_KERNEL_INFO_FUNCTION_NAME, sizeof name, name, NULL));
  cr_assert_str_eq(name, "scale");
  OK(PI(piKernelRelease)(k2));
  OK(PI(piKernelRelease)(k));
  OK(PI(piProgramRelease)(p));
}

/* Asserts that `query` of handle h answers `want` (through pi<Kind>GetInfo,
 * in a value of want's type). */
#define EXPECT_ANSWER(Kind, h, query, want)                                              \
  do {                                                                                   \
    __typeof__(want) got_;                                                               \
    OK(PI(pi##Kind##GetInfo)((h), (query), sizeof got_, &got_, NULL));                   \
    cr_assert_eq(got_, (want), "%s", "pi" #Kind "GetInfo " #query);                      \
  } while (0)

/* A handle's relations and reference count come from the facts the plugin
 * keeps of it (plugin_common.h; a platform's names are checked above): each
 * query of each kind, and none of another kind's. */
Test(direct, relations_and_counts_are_answered_from_the_handles_facts)
{
  pi_uint32 one_ref = 1, two_refs = 2, one_device = 1;
  pi_queue_properties profiling = PI_QUEUE_FLAG_PROFILING_ENABLE;
  pi_queue_properties on_host = PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE | profiling;
  pi_queue_properties no_flags = 0;
  pi_command_type fill = PI_COMMAND_TYPE_MEM_BUFFER_FILL;
  size_t size = 96;
  pi_queue pq = make_queue(profiling);
  pi_mem b;
  OK(PI(piMemBufferCreate)(ctx0, PI_MEM_FLAGS_ACCESS_RW, size, NULL, &b, NULL));
  pi_program p = build_program("");
  pi_kernel k;
  OK(PI(piKernelCreate)(p, "scale", &k));
  pi_event e;
  int pattern = 1;
  OK(PI(piEnqueueMemBufferFill)(pq, b, &pattern, sizeof pattern, 0, size, 0, NULL, &e));
  pi_uint32 event_refs = 0, ctx_refs = 0;
  OK(PI(piEventGetInfo)(e, PI_EVENT_INFO_REFERENCE_COUNT, sizeof event_refs, &event_refs,
                        NULL));
  OK(PI(piEventRetain)(e));
  event_refs++;
  pi_sampler_properties sp[] = {PI_SAMPLER_PROPERTIES_ADDRESSING_MODE,
                                PI_SAMPLER_ADDRESSING_MODE_REPEAT, 0};
  pi_sampler sm;
  OK(PI(piSamplerCreate)(ctx0, sp, &sm));
  OK(PI(piContextGetInfo)(ctx0, PI_CONTEXT_INFO_REFERENCE_COUNT, sizeof ctx_refs,
                          &ctx_refs, NULL));
  OK(PI(piContextRetain)(ctx0));
  ctx_refs++;
  pi_device devs[2] = {NULL, NULL};
  size_t devs_size = 0;
  OK(PI(piContextGetInfo)(ctx0, PI_CONTEXT_INFO_DEVICES, sizeof devs, devs, &devs_size));
  cr_assert(devs_size == sizeof devs[0] && devs[0] == dev0);

  EXPECT_ANSWER(Context, ctx0, PI_CONTEXT_INFO_REFERENCE_COUNT, ctx_refs);
  EXPECT_ANSWER(Context, ctx0, PI_CONTEXT_INFO_PLATFORM, plat);
  EXPECT_ANSWER(Context, ctx0, PI_CONTEXT_INFO_NUM_DEVICES, one_device);
  EXPECT_ANSWER(Queue, pq, PI_QUEUE_INFO_CONTEXT, ctx0);
  EXPECT_ANSWER(Queue, pq, PI_QUEUE_INFO_DEVICE, dev0);
  EXPECT_ANSWER(Queue, pq, PI_QUEUE_INFO_PROPERTIES, profiling);
  EXPECT_ANSWER(Queue, pq, PI_QUEUE_INFO_REFERENCE_COUNT, one_ref);
  EXPECT_ANSWER(Mem, b, PI_MEM_CONTEXT, ctx0);
  EXPECT_ANSWER(Mem, b, PI_MEM_SIZE, size);
  EXPECT_ANSWER(Program, p, PI_PROGRAM_INFO_CONTEXT, ctx0);
  EXPECT_ANSWER(Program, p, PI_PROGRAM_INFO_NUM_DEVICES, one_device);
  EXPECT_ANSWER(Program, p, PI_PROGRAM_INFO_REFERENCE_COUNT, two_refs); /* k holds one */
  EXPECT_ANSWER(Kernel, k, PI_KERNEL_INFO_PROGRAM, p);
  EXPECT_ANSWER(Kernel, k, PI_KERNEL_INFO_CONTEXT, ctx0);
  EXPECT_ANSWER(Kernel, k, PI_KERNEL_INFO_REFERENCE_COUNT, one_ref);
  EXPECT_ANSWER(Event, e, PI_EVENT_INFO_COMMAND_QUEUE, pq);
  EXPECT_ANSWER(Event, e, PI_EVENT_INFO_CONTEXT, ctx0);
  EXPECT_ANSWER(Event, e, PI_EVENT_INFO_COMMAND_TYPE, fill);
  EXPECT_ANSWER(Event, e, PI_EVENT_INFO_REFERENCE_COUNT, event_refs);
  EXPECT_ANSWER(Sampler, sm, PI_SAMPLER_INFO_CONTEXT, ctx0);
  EXPECT_ANSWER(Sampler, sm, PI_SAMPLER_INFO_REFERENCE_COUNT, one_ref);
  EXPECT_ANSWER(Device, dev0, PI_DEVICE_INFO_QUEUE_PROPERTIES, on_host);
  EXPECT_ANSWER(Device, dev0, PI_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES, no_flags);

  /* a query of another kind is unknown, though its value is a fact's */
  pi_context pc;
  cr_assert_eq(PI(piEventGetInfo)(e, (pi_event_info)PI_KERNEL_INFO_CONTEXT, sizeof pc, &pc,
                                  NULL),
               PI_ERROR_INVALID_VALUE);
  cr_assert(strstr(plugin_message(), "unknown to the Level Zero plugin"), "%s",
            plugin_message());
  /* a value too small for the answer fails as OpenCL does */
  cr_assert_eq(PI(piEventGetInfo)(e, PI_EVENT_INFO_CONTEXT, 1, &pc, NULL),
               PI_ERROR_INVALID_VALUE);
  pi_context none;
  cr_assert_eq(PI(piContextCreate)(NULL, 0, NULL, NULL, NULL, &none),
               PI_ERROR_INVALID_VALUE);
  cr_assert(strstr(plugin_message(), "piContextCreate: a context needs devices"), "%s",
            plugin_message());

  OK(PI(piContextRelease)(ctx0));
  OK(PI(piSamplerRelease)(sm));
  OK(PI(piEventRelease)(e));
  OK(PI(piEventRelease)(e));
  OK(PI(piKernelRelease)(k));
  OK(PI(piProgramRelease)(p));
  OK(PI(piMemRelease)(b));
  OK(PI(piQueueFinish)(pq));
  OK(PI(piQueueRelease)(pq));
}

Test(direct, unsupported_calls_fail_with_a_clear_message)
{
  pi_program p;
  const char *src = "kernel void k() {}";
  size_t len = strlen(src);
  cr_assert_eq(PI(piclProgramCreateWithSource)(ctx0, 1, &src, &len, &p),
               PI_ERROR_INVALID_OPERATION);
  cr_assert(strstr(plugin_message(), "piclProgramCreateWithSource: Level Zero compiles no "
                                     "OpenCL C source"), "%s", plugin_message());
  void *opaque;
  cr_assert_eq(PI(piextPluginGetOpaqueData)(NULL, &opaque), PI_ERROR_INVALID_OPERATION);
  cr_assert(strstr(plugin_message(), "piextPluginGetOpaqueData:"), "%s", plugin_message());
  pi_sampler_properties sp[] = {PI_SAMPLER_PROPERTIES_MIP_FILTER_MODE,
                                PI_SAMPLER_FILTER_MODE_LINEAR, 0};
  pi_sampler s;
  cr_assert_eq(PI(piSamplerCreate)(ctx0, sp, &s), PI_ERROR_INVALID_OPERATION);
  cr_assert(strstr(plugin_message(), "no mipmap filter"), "%s", plugin_message());
  const char *opt = NULL;
  OK(PI(piPluginGetBackendOption)(plat, "-O0", &opt));
  cr_assert_str_eq(opt, "-ze-opt-disable");
  cr_assert_eq(PI(piPluginGetBackendOption)(plat, "-O9", &opt), PI_ERROR_INVALID_VALUE);
  pi_queue_properties bad[] = {PI_QUEUE_FLAGS, PI_QUEUE_FLAG_ON_DEVICE, 0};
  pi_queue q;
  cr_assert_eq(PI(piextQueueCreate)(ctx0, dev0, bad, &q), PI_ERROR_INVALID_QUEUE_PROPERTIES);
  pi_queue_properties idx[] = {PI_QUEUE_COMPUTE_INDEX, 5, 0};
  cr_assert_eq(PI(piextQueueCreate)(ctx0, dev0, idx, &q), PI_ERROR_INVALID_VALUE);
  cr_assert(strstr(plugin_message(), "compute index 5 requested"), "%s", plugin_message());
}

Test(direct, samplers_peers_and_native_handles)
{
  pi_sampler_properties sp[] = {PI_SAMPLER_PROPERTIES_ADDRESSING_MODE,
                                PI_SAMPLER_ADDRESSING_MODE_REPEAT, 0};
  pi_sampler s;
  OK(PI(piSamplerCreate)(ctx0, sp, &s));
  pi_sampler_addressing_mode am = 0;
  OK(PI(piSamplerGetInfo)(s, PI_SAMPLER_INFO_ADDRESSING_MODE, sizeof am, &am, NULL));
  cr_assert_eq(am, PI_SAMPLER_ADDRESSING_MODE_REPEAT);
  OK(PI(piSamplerRelease)(s));
  pi_uint32 can = 0;
  OK(PI(piextPeerAccessGetInfo)(dev0, dev0, PI_PEER_ACCESS_SUPPORTED, sizeof can, &can,
                                NULL));
  cr_assert_eq(can, 1);
  OK(PI(piextEnablePeerAccess)(dev0, dev0));
  pi_native_handle nc;
  OK(PI(piextContextGetNativeHandle)(ctx0, &nc));
  pi_context c2;
  cr_assert_eq(PI(piextContextCreateWithNativeHandle)(nc, 0, NULL, false, &c2),
               PI_ERROR_INVALID_VALUE);
  OK(PI(piextContextCreateWithNativeHandle)(nc, 1, &dev0, false, &c2));
  void *d;
  OK(PI(piextUSMSharedAlloc)(&d, c2, dev0, NULL, 8, 0));
  OK(PI(piextUSMFree)(c2, d));
  OK(PI(piContextRelease)(c2));
  pi_native_handle np;
  OK(PI(piextPlatformGetNativeHandle)(plat, &np));
  pi_platform p2;
  OK(PI(piextPlatformCreateWithNativeHandle)(np, &p2));
  cr_assert_eq(p2, plat);
  char *log = zlog();
  cr_assert_eq(count_lines_with(log, "zeContextDestroy"), 0,
               "a context the plugin does not own stays: %s", log);
}

/* Several threads on one context, each with its queue: the plugin keeps no
 * global lock, and nothing mixes up. */
struct worker {
  pi_queue q;
  int id;
  int errors;
};

static void *work(void *arg)
{
  struct worker *w = arg;
  for (int round = 0; round < 50; round++) {
    pi_mem b;
    int in[16], out[16];
    for (int i = 0; i < 16; i++)
      in[i] = w->id * 1000 + round * 16 + i;
    if (PI(piMemBufferCreate)(ctx0, PI_MEM_FLAGS_ACCESS_RW, sizeof in, NULL, &b, NULL) !=
        PI_SUCCESS) {
      w->errors++;
      continue;
    }
    pi_event e;
    if (PI(piEnqueueMemBufferWrite)(w->q, b, false, 0, sizeof in, in, 0, NULL, &e) !=
            PI_SUCCESS ||
        PI(piEnqueueMemBufferRead)(w->q, b, true, 0, sizeof out, out, 1, &e, NULL) !=
            PI_SUCCESS ||
        memcmp(in, out, sizeof in) != 0)
      w->errors++;
    PI(piEventRelease)(e);
    PI(piMemRelease)(b);
  }
  return NULL;
}

Test(direct, threads_share_a_context_without_mixing_up)
{
  enum { T = 6 };
  struct worker w[T];
  pthread_t t[T];
  for (int i = 0; i < T; i++) {
    w[i] = (struct worker){make_queue(i % 2 ? PI_EXT_QUEUE_FLAG_SUBMISSION_IMMEDIATE : 0),
                           i, 0};
    cr_assert_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < T; i++) {
    pthread_join(t[i], NULL);
    cr_assert_eq(w[i].errors, 0, "thread %d", i);
    OK(PI(piQueueRelease)(w[i].q));
  }
}

/* ---- Record and replay through the test double ------------------------------------ */

/* Runs the runtime suite's cases matching `filter` in a process of their
 * own, each recorded as a session into the directory it returns. */
static char *record_runtime_cases(const char *filter)
{
  char *dir = tu_temp_path(".sessions"), *record_env = NULL, *out;
  cr_assert_eq(mkdir(dir, 0700), 0);
  cr_assert_geq(asprintf(&record_env, "SYCL_PI_RECORD=%s", dir), 0);
  const char *rec[] = {BIN "/test_level_zero", "--filter", filter, NULL};
  /* BXFI_MAP tells a Criterion runner it is a test's sandbox: not this one. */
  const char *env[] = {record_env, "BXFI_MAP=", NULL};
  int st = tu_run(rec, env, &out);
  cr_assert_eq(st, 0, "recording %s: status %d: %s", filter, st, out);
  return dir;
}

/* The runtime suite's cases, each recorded in its own session, replay
 * against the test double: every session matches, and the double sees
 * during the replay every launch the sessions recorded and the modules with
 * the spec-constant values the recorded case set (its test checks them when
 * recorded). */
Test(replay, sessions_recorded_through_the_test_double_replay_against_it, .timeout = 300)
{
  use_double();
  char *dir = record_runtime_cases("runtime/*"), *out;
  DIR *d = opendir(dir);
  cr_assert(d);
  int sessions = 0;
  long launches = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (!strstr(e->d_name, ".db"))
      continue;
    char *db = NULL;
    cr_assert_geq(asprintf(&db, "%s/%s", dir, e->d_name), 0);
    const char *count[] = {"/usr/bin/sqlite3", "-cmd", TU_SQLITE_LOAD, db,
                           "SELECT count(*) FROM pi_calls WHERE api = 'piEnqueueKernelLaunch' "
                           "AND result = 'PI_SUCCESS'", NULL};
    cr_assert_eq(tu_run(count, NULL, &out), 0, "%s", out);
    launches += atol(out);
    const char *argv[] = {BIN "/pitrace", "replay", db, NULL};
    cr_assert_eq(tu_run(argv, NULL, &out), 0, "%s: %s", db, out);
    cr_assert(strstr(out, "matched: ") && strstr(out, "(level_zero)"), "%s", out);
    free(db);
    sessions++;
  }
  closedir(d);
  cr_assert_geq(sessions, 10, "%d sessions recorded", sessions);
  char *log = zlog();
  cr_assert(launches >= 3, "%ld launches recorded", launches);
  cr_assert_eq(count_lines_with(log, "launch kernel="), launches,
               "%ld launches recorded; the double saw during the replay:\n%s", launches, log);
  cr_assert(line_with(log, NULL, "zeModuleCreate", "kernels=spec_kernel/1",
                      "constants=3 [3=0x2a 4=0xffffffff 5=0x7f]", NULL), "%s", log);
  cr_assert(line_with(log, NULL, "zeModuleCreate", "kernels=spec_kernel/1",
                      "constants=3 [3=0x7 4=0xffffffff 5=0x7f]", NULL), "%s", log);
  drop_log();
}

/* A replay cut short (--to) releases what it made and the recording freed
 * only later: the USM allocations, through piextUSMFree with the context
 * they were made in, before the context. */
Test(replay, a_replay_cut_short_frees_its_usm_allocations_then_the_context, .timeout = 120)
{
  use_double();
  char *dir = record_runtime_cases("runtime/usm_round_trips*"), *db = NULL, *out;
  DIR *d = opendir(dir);
  cr_assert(d);
  for (struct dirent *e; (e = readdir(d));)
    if (strstr(e->d_name, ".db"))
      cr_assert_geq(asprintf(&db, "%s/%s", dir, e->d_name), 0);
  closedir(d);
  cr_assert(db, "no session recorded in %s", dir);
  const char *q[] = {"/usr/bin/sqlite3", "-cmd", TU_SQLITE_LOAD, db,
                     "SELECT min(seq) - 1 FROM pi_calls WHERE api = 'piextUSMFree'", NULL};
  cr_assert_eq(tu_run(q, NULL, &out), 0, "%s", out);
  out[strcspn(out, "\n")] = 0;
  const char *argv[] = {BIN "/pitrace", "replay", db, "--to", out, NULL};
  cr_assert_eq(tu_run(argv, NULL, &out), 0, "%s", out);
  char *log = zlog();
  cr_assert_eq(count_lines_with(log, "zeMemFree"), 3, "%s", log);
  const char *last_free = strstr(log, "zeMemFree ptr=");
  for (const char *p = last_free; p && (p = strstr(p + 1, "zeMemFree ptr="));)
    last_free = p;
  cr_assert(strstr(last_free, "zeContextDestroy"), "the context went before its memory: %s",
            log);
  drop_log();
}
