/*
 * test_api.c: the application API (pirt.h) on real kernels, on whichever
 * OpenCL implementation the environment enables (CTest runs it once on PoCL
 * and once on rusticl): buffers, transfers, fills, copies, maps, events,
 * local memory, profiling, program binaries, and the errors and messages
 * of bad input.
 */
#include <criterion/criterion.h>

#include "pirt.h"
#include "testutil.h"

#define TRY(call) cr_assert_eq((call), PI_SUCCESS, "%s", pirt_error_message())

static pirt_device *dev;
static pirt_context *ctx;
static pirt_queue *q;

static void setup(void)
{
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_queue_create(ctx, PIRT_QUEUE_PROFILING, &q));
}

static void teardown(void)
{
  TRY(pirt_queue_release(q));
  TRY(pirt_context_release(ctx));
}

TestSuite(api, .init = setup, .fini = teardown);

static const char *kernels =
    "__kernel void scale(__global float *x, float s) {\n"
    "  x[get_global_id(0)] *= s;\n"
    "}\n"
    "__kernel void sum2d(__global const int *in, __global int *out, uint w) {\n"
    "  size_t x = get_global_id(0), y = get_global_id(1);\n"
    "  out[y * w + x] = in[y * w + x] + (int)(x * 1000 + y);\n"
    "}\n"
    "__kernel void group_sum(__global const int *in, __local int *tmp,\n"
    "                        __global int *out) {\n"
    "  size_t l = get_local_id(0);\n"
    "  tmp[l] = in[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (l == 0) {\n"
    "    int s = 0;\n"
    "    for (size_t i = 0; i < get_local_size(0); i++) s += tmp[i];\n"
    "    out[get_group_id(0)] = s;\n"
    "  }\n"
    "}\n";

static pirt_program *build(void)
{
  pirt_program *p;
  TRY(pirt_program_create_source(ctx, kernels, NULL, &p));
  return p;
}

Test(api, device_info_and_queries)
{
  pirt_device_info info;
  TRY(pirt_device_get_info(dev, &info));
  cr_assert_str_eq(info.backend, "opencl");
  /* The type the device gives (CPU here, a GPU in gpu-check). */
  pi_device_type type = 0;
  TRY(pirt_device_query(dev, PI_DEVICE_INFO_TYPE, sizeof type, &type, NULL));
  int want = type == PI_DEVICE_TYPE_GPU ? PIRT_DEVICE_GPU
             : type == PI_DEVICE_TYPE_CPU ? PIRT_DEVICE_CPU
                                          : -1; /* neither here nor there */
  cr_assert_eq((int)info.type, want, "type %d, the device says 0x%llx", (int)info.type,
               (unsigned long long)type);
  cr_assert_gt(strlen(info.name), 0);
  cr_assert_gt(strlen(info.platform_name), 0);
  size_t n;
  TRY(pirt_device_count(&n));
  cr_assert_geq(n, 1);
  pi_uint32 units = 0;
  TRY(pirt_device_query(dev, PI_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof units, &units, NULL));
  cr_assert_gt(units, 0);
  cr_assert_eq(pirt_device_query(dev, (pi_device_info)0x7777, 4, &units, NULL),
               PI_ERROR_INVALID_VALUE);
  cr_assert(strstr(pirt_error_message(), "piDeviceGetInfo failed with PI_ERROR_INVALID_VALUE"),
            "%s", pirt_error_message());
  cr_assert_eq(pirt_device_get(n, &dev), PI_ERROR_DEVICE_NOT_FOUND);
}

Test(api, scalar_argument_and_blocking_transfers)
{
  pirt_program *p = build();
  pirt_kernel *k;
  pirt_buffer *b;
  float x[256], y[256];
  for (int i = 0; i < 256; i++)
    x[i] = (float)i;
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_WRITE, sizeof x, NULL, &b));
  TRY(pirt_write(q, b, true, 0, sizeof x, x, 0, NULL, NULL));
  TRY(pirt_kernel_create(p, "scale", &k));
  TRY(pirt_kernel_set_buffer(k, 0, b));
  float s = 2.5f;
  TRY(pirt_kernel_set_arg(k, 1, sizeof s, &s));
  size_t global = 256, local = 16;
  TRY(pirt_launch(q, k, 1, &global, &local, 0, NULL, NULL));
  TRY(pirt_read(q, b, true, 0, sizeof y, y, 0, NULL, NULL));
  for (int i = 0; i < 256; i++)
    cr_assert_float_eq(y[i], 2.5f * (float)i, 1e-6, "element %d", i);
  /* A partial read at an offset. */
  float part[4];
  TRY(pirt_read(q, b, true, 10 * sizeof(float), sizeof part, part, 0, NULL, NULL));
  cr_assert_float_eq(part[0], 25.0f, 1e-6);
  TRY(pirt_kernel_release(k));
  TRY(pirt_buffer_release(b));
  TRY(pirt_program_release(p));
}

/* A context released first: its program, kernel and buffer keep it (they
 * read a freed context before). */
Test(api, a_program_kernel_and_buffer_outlive_the_application_s_context)
{
  pirt_context *c;
  pirt_queue *cq;
  pirt_program *p;
  pirt_kernel *k;
  pirt_buffer *b;
  TRY(pirt_context_create(dev, &c));
  TRY(pirt_queue_create(c, 0, &cq));
  TRY(pirt_program_create_source(c, kernels, NULL, &p));
  TRY(pirt_kernel_create(p, "scale", &k));
  float x[16];
  for (int i = 0; i < 16; i++)
    x[i] = (float)i;
  TRY(pirt_buffer_create(c, PIRT_MEM_COPY_HOST, sizeof x, x, &b));
  TRY(pirt_context_release(c));
  TRY(pirt_program_release(p));
  TRY(pirt_kernel_set_buffer(k, 0, b));
  float s = 3.0f;
  TRY(pirt_kernel_set_arg(k, 1, sizeof s, &s));
  size_t global = 16;
  TRY(pirt_launch(cq, k, 1, &global, NULL, 0, NULL, NULL));
  TRY(pirt_read(cq, b, true, 0, sizeof x, x, 0, NULL, NULL));
  for (int i = 0; i < 16; i++)
    cr_assert_float_eq(x[i], 3.0f * (float)i, 1e-6, "element %d", i);
  TRY(pirt_queue_release(cq));
  TRY(pirt_kernel_release(k));
  TRY(pirt_buffer_release(b));
}

Test(api, two_dimensional_launch)
{
  pirt_program *p = build();
  pirt_kernel *k;
  pirt_buffer *in, *out;
  enum { W = 32, H = 8 };
  int src[W * H], dst[W * H];
  for (int i = 0; i < W * H; i++)
    src[i] = i;
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_ONLY | PIRT_MEM_COPY_HOST, sizeof src, src, &in));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_WRITE_ONLY, sizeof dst, NULL, &out));
  TRY(pirt_kernel_create(p, "sum2d", &k));
  TRY(pirt_kernel_set_buffer(k, 0, in));
  TRY(pirt_kernel_set_buffer(k, 1, out));
  unsigned w = W;
  TRY(pirt_kernel_set_arg(k, 2, sizeof w, &w));
  size_t global[2] = {W, H};
  TRY(pirt_launch(q, k, 2, global, NULL, 0, NULL, NULL));
  TRY(pirt_read(q, out, true, 0, sizeof dst, dst, 0, NULL, NULL));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      cr_assert_eq(dst[y * W + x], src[y * W + x] + x * 1000 + y);
  TRY(pirt_kernel_release(k));
  TRY(pirt_buffer_release(in));
  TRY(pirt_buffer_release(out));
  TRY(pirt_program_release(p));
}

Test(api, local_memory_fill_copy_map_and_events)
{
  pirt_program *p = build();
  pirt_kernel *k;
  pirt_buffer *in, *sums, *copy;
  enum { N = 1024, WG = 32 };
  TRY(pirt_buffer_create(ctx, 0, N * sizeof(int), NULL, &in));
  TRY(pirt_buffer_create(ctx, 0, N / WG * sizeof(int), NULL, &sums));
  TRY(pirt_buffer_create(ctx, 0, N / WG * sizeof(int), NULL, &copy));
  int three = 3;
  pirt_event *filled, *ran, *copied;
  TRY(pirt_fill(q, in, &three, sizeof three, 0, N * sizeof(int), 0, NULL, &filled));
  TRY(pirt_kernel_create(p, "group_sum", &k));
  TRY(pirt_kernel_set_buffer(k, 0, in));
  TRY(pirt_kernel_set_local(k, 1, WG * sizeof(int)));
  TRY(pirt_kernel_set_buffer(k, 2, sums));
  size_t global = N, local = WG;
  TRY(pirt_launch(q, k, 1, &global, &local, 1, &filled, &ran));
  TRY(pirt_copy(q, sums, copy, 0, 0, N / WG * sizeof(int), 1, &ran, &copied));
  TRY(pirt_event_wait(1, &copied));
  uint64_t start = 0, end = 0;
  TRY(pirt_event_times(ran, &start, &end));
  cr_assert_leq(start, end);
  cr_assert_gt(end, 0);
  int *m;
  TRY(pirt_map(q, copy, PIRT_MAP_READ | PIRT_MAP_WRITE, 0, N / WG * sizeof(int), (void **)&m));
  for (int g = 0; g < N / WG; g++)
    cr_assert_eq(m[g], 3 * WG, "group %d", g);
  m[0] = -7;
  TRY(pirt_unmap(q, copy, m, 0, NULL, NULL));
  int first;
  TRY(pirt_read(q, copy, true, 0, sizeof first, &first, 0, NULL, NULL));
  cr_assert_eq(first, -7, "a write through the map was lost");
  TRY(pirt_event_release(filled));
  TRY(pirt_event_release(ran));
  TRY(pirt_event_release(copied));
  TRY(pirt_kernel_release(k));
  TRY(pirt_buffer_release(in));
  TRY(pirt_buffer_release(sums));
  TRY(pirt_buffer_release(copy));
  TRY(pirt_program_release(p));
}

Test(api, non_blocking_write_then_dependent_read)
{
  pirt_buffer *b;
  int data[4096], back[4096];
  for (int i = 0; i < 4096; i++)
    data[i] = i * 7;
  TRY(pirt_buffer_create(ctx, 0, sizeof data, NULL, &b));
  pirt_event *w;
  TRY(pirt_write(q, b, false, 0, sizeof data, data, 0, NULL, &w));
  TRY(pirt_read(q, b, true, 0, sizeof back, back, 1, &w, NULL));
  cr_assert_arr_eq(data, back, sizeof data);
  TRY(pirt_event_release(w));
  TRY(pirt_buffer_release(b));
}

/* Its own program text: PoCL's binary of a program is every file of the
 * program's kernel cache directory, and a process building the same text
 * at once (this suite's other tests, which launch `scale` at other sizes,
 * or the same suite running recorded) may have a file there half written
 * (seen once on a fresh machine: pocl_binary.c, `len > 0`). */
Test(api, program_from_its_own_binary)
{
  pirt_program *p;
  TRY(pirt_program_create_source(ctx,
                                 "/* program_from_its_own_binary */\n"
                                 "__kernel void scale(__global float *x, float s) {\n"
                                 "  x[get_global_id(0)] *= s;\n"
                                 "}\n",
                                 NULL, &p));
  void *bin;
  size_t size;
  TRY(pirt_program_get_binary(p, &bin, &size));
  cr_assert_gt(size, 0);
  pirt_program *p2;
  TRY(pirt_program_create_binary(ctx, bin, size, false, NULL, &p2));
  pirt_kernel *k;
  pirt_buffer *b;
  float x[16];
  for (int i = 0; i < 16; i++)
    x[i] = 1.0f;
  TRY(pirt_buffer_create(ctx, PIRT_MEM_COPY_HOST, sizeof x, x, &b));
  TRY(pirt_kernel_create(p2, "scale", &k));
  TRY(pirt_kernel_set_buffer(k, 0, b));
  float s = -3.0f;
  TRY(pirt_kernel_set_arg(k, 1, sizeof s, &s));
  size_t global = 16;
  TRY(pirt_launch(q, k, 1, &global, NULL, 0, NULL, NULL));
  TRY(pirt_read(q, b, true, 0, sizeof x, x, 0, NULL, NULL));
  cr_assert_float_eq(x[15], -3.0f, 1e-6);
  free(bin);
  TRY(pirt_kernel_release(k));
  TRY(pirt_buffer_release(b));
  TRY(pirt_program_release(p2));
  TRY(pirt_program_release(p));
}

Test(api, build_failure_carries_the_build_log)
{
  pirt_program *p;
  pi_result r = pirt_program_create_source(
      ctx, "__kernel void broken(__global int *a) { a[0] = undeclared_name; }\n",
      NULL, &p);
  cr_assert_eq(r, PI_ERROR_BUILD_PROGRAM_FAILURE, "%s", pirt_result_name(r));
  cr_assert(strstr(pirt_error_message(), "piProgramBuild failed with "
                                         "PI_ERROR_BUILD_PROGRAM_FAILURE"),
            "%s", pirt_error_message());
  cr_assert(strstr(pirt_error_message(), "undeclared_name"),
            "the build log is missing: %s", pirt_error_message());
}

Test(api, bad_input_gets_clear_errors)
{
  pirt_buffer *b;
  TRY(pirt_buffer_create(ctx, 0, 64, NULL, &b));
  char buf[128];
  cr_assert_eq(pirt_read(q, b, true, 32, 64, buf, 0, NULL, NULL), PI_ERROR_INVALID_VALUE);
  cr_assert(strstr(pirt_error_message(), "pirt_read: bytes 32..96 are outside the 64-byte buffer"),
            "%s", pirt_error_message());
  cr_assert_eq(pirt_buffer_create(ctx, 0, 0, NULL, &b), PI_ERROR_INVALID_VALUE);
  cr_assert(strstr(pirt_error_message(), "size is 0"), "%s", pirt_error_message());
  cr_assert_eq(pirt_fill(q, b, buf, 3, 0, 63, 0, NULL, NULL), PI_ERROR_INVALID_VALUE);
  cr_assert(strstr(pirt_error_message(), "pattern size (3) must be a power of two"),
            "%s", pirt_error_message());
  /* USM fills follow the same rule, refused before any plugin sees them
   * (neither device here has USM: buf stands for the allocation). */
  cr_assert_eq(pirt_usm_fill(q, buf, buf, 4, 62, 0, NULL, NULL), PI_ERROR_INVALID_VALUE);
  cr_assert(strstr(pirt_error_message(), "pirt_usm_fill: the pattern size (4) must be a "
                                         "power of two up to 128 dividing the size (62)"),
            "%s", pirt_error_message());
  cr_assert_eq(pirt_usm_fill(q, buf, buf, 256, 512, 0, NULL, NULL), PI_ERROR_INVALID_VALUE);
  pirt_program *p = build();
  pirt_kernel *k;
  cr_assert_eq(pirt_kernel_create(p, "nope", &k), PI_ERROR_INVALID_KERNEL_NAME);
  cr_assert(strstr(pirt_error_message(), "no kernel 'nope' in the program"), "%s",
            pirt_error_message());
  TRY(pirt_kernel_create(p, "scale", &k));
  size_t g = 4;
  cr_assert_eq(pirt_launch(q, k, 4, &g, NULL, 0, NULL, NULL), PI_ERROR_INVALID_VALUE);
  cr_assert(strstr(pirt_error_message(), "kernel 'scale': 4 dimensions"), "%s",
            pirt_error_message());
  int big = 0;
  cr_assert_neq(pirt_kernel_set_arg(k, 9, sizeof big, &big), PI_SUCCESS);
  cr_assert(strstr(pirt_error_message(), "kernel 'scale' argument 9"), "%s",
            pirt_error_message());
  cr_assert_eq(pirt_buffer_release(NULL), PI_SUCCESS);
  cr_assert_eq(pirt_context_create(NULL, NULL), PI_ERROR_INVALID_VALUE);
  TRY(pirt_kernel_release(k));
  TRY(pirt_program_release(p));
  TRY(pirt_buffer_release(b));
}

/* A flag pirt_buffer_create does not know (a PI_MEM_* or PIRT_MAP_* value
 * passed by mistake) made a plain read-write buffer without a word. */
Test(api, buffer_with_unknown_flags_is_refused)
{
  pirt_buffer *b = NULL;
  cr_assert_eq(pirt_buffer_create(ctx, 1u << 5, 64, NULL, &b), PI_ERROR_INVALID_VALUE);
  cr_assert(strstr(pirt_error_message(), "pirt_buffer_create: unknown flags 0x20"), "%s",
            pirt_error_message());
  cr_assert_null(b);
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_ONLY | PIRT_MEM_COPY_HOST, 4, "abc", &b));
  TRY(pirt_buffer_release(b));
}

/* A NULL event in a wait list reached the plugin: PoCL ignored it and ran
 * the command, rusticl refused the list with its own words. */
Test(api, a_null_event_in_a_wait_list_is_refused)
{
  pirt_buffer *b;
  TRY(pirt_buffer_create(ctx, 0, 64, NULL, &b));
  char buf[64] = {0};
  pirt_event *ev = NULL;
  TRY(pirt_write(q, b, false, 0, sizeof buf, buf, 0, NULL, &ev));
  pirt_event *deps[2] = {ev, NULL};
  cr_assert_eq(pirt_read(q, b, true, 0, sizeof buf, buf, 2, deps, NULL),
               PI_ERROR_INVALID_EVENT_WAIT_LIST);
  cr_assert(strstr(pirt_error_message(), "piEnqueueMemBufferRead: deps[1] is NULL"), "%s",
            pirt_error_message());
  TRY(pirt_read(q, b, true, 0, sizeof buf, buf, 1, deps, NULL));
  TRY(pirt_event_release(ev));
  TRY(pirt_buffer_release(b));
}

/* pirt_note_emit returns nothing to fail with: a NULL note (read, a
 * crash) and one without text are dropped or printed empty. */
static int notes_seen;
static void count_note(const pirt_note *note, void *user)
{
  (void)note;
  (void)user;
  notes_seen++;
}

Test(api, note_emit_survives_a_null_note)
{
  TRY(pirt_add_note_hook(count_note, NULL));
  pirt_note_emit(NULL);
  cr_assert_eq(notes_seen, 0);
  pirt_note empty = {.kind = PIRT_NOTE_LINK};
  pirt_note_emit(&empty);
  cr_assert_eq(notes_seen, 1);
  TRY(pirt_remove_note_hook(count_note, NULL));
}

Test(api, usm_without_device_support_is_a_clear_error)
{
  void *ptr = NULL;
  pi_result r = pirt_usm_alloc(ctx, PIRT_USM_DEVICE, 1024, 0, &ptr);
  if (r == PI_SUCCESS) {
    /* A device with cl_intel_unified_shared_memory: USM must then work. */
    int v = 5, back = 0;
    TRY(pirt_usm_memcpy(q, true, ptr, &v, sizeof v, 0, NULL, NULL));
    TRY(pirt_usm_memcpy(q, true, &back, ptr, sizeof v, 0, NULL, NULL));
    cr_assert_eq(back, 5);
    TRY(pirt_usm_free(ctx, ptr));
    return;
  }
  cr_assert_eq(r, PI_ERROR_INVALID_OPERATION, "%s", pirt_result_name(r));
  cr_assert(strstr(pirt_error_message(), "cl_intel_unified_shared_memory"), "%s",
            pirt_error_message());
}

/* ---- The OpenCL plugin's PI calls, made directly (pirt_pi.h) ------------------- */

#include "pirt_pi.h"

/* The plugin and PI handles of the selected device. */
static const pirt_plugin *pl;
static pi_platform pi_plat;
static pi_device pi_dev;

static void plugin_setup(void)
{
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_device_plugin(dev, &pl, &pi_plat, &pi_dev, NULL));
}

TestSuite(plugin, .init = plugin_setup);

/* Each query answers a value of the type pi.api gives it. */
Test(plugin, max_global_work_groups_is_one_size_t)
{
  size_t size = 0, total = 0;
  TRY(pirt_piDeviceGetInfo(pl, pi_dev, PI_EXT_ONEAPI_DEVICE_INFO_MAX_GLOBAL_WORK_GROUPS, 0, NULL,
                           &size));
  cr_assert_eq(size, sizeof(size_t));
  TRY(pirt_piDeviceGetInfo(pl, pi_dev, PI_EXT_ONEAPI_DEVICE_INFO_MAX_GLOBAL_WORK_GROUPS,
                           sizeof total, &total, NULL));
  cr_assert_gt(total, 0);
  size_t three[3] = {0};
  TRY(pirt_piDeviceGetInfo(pl, pi_dev, PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_3D, 0, NULL,
                           &size));
  cr_assert_eq(size, sizeof three);
}

/* OpenCL has no clGetContextInfo query for the platform: the plugin answers
 * it from the context's device. */
Test(plugin, context_platform_is_its_devices)
{
  pi_context c = NULL;
  TRY(pirt_piContextCreate(pl, NULL, 1, &pi_dev, NULL, NULL, &c));
  pi_platform plat = NULL;
  size_t size = 0;
  TRY(pirt_piContextGetInfo(pl, c, PI_CONTEXT_INFO_PLATFORM, 0, NULL, &size));
  cr_assert_eq(size, sizeof plat);
  TRY(pirt_piContextGetInfo(pl, c, PI_CONTEXT_INFO_PLATFORM, sizeof plat, &plat, NULL));
  cr_assert_eq(plat, pi_plat);
  TRY(pirt_piContextRelease(pl, c));
}

/* A caller may leave param_value_size_ret NULL: PoCL 3.1 writes it anyway
 * for the properties of a context made without any, which crashed. */
Test(plugin, context_properties_without_size_ret)
{
  pi_context c = NULL;
  TRY(pirt_piContextCreate(pl, NULL, 1, &pi_dev, NULL, NULL, &c));
  pi_context_properties props[4] = {1, 1, 1, 1};
  TRY(pirt_piContextGetInfo(pl, c, PI_CONTEXT_INFO_PROPERTIES, sizeof props, props, NULL));
  size_t size = 1;
  TRY(pirt_piContextGetInfo(pl, c, PI_CONTEXT_INFO_PROPERTIES, 0, NULL, &size));
  /* No properties: an empty list, or one holding only its terminator. */
  cr_assert(size == 0 || (size == sizeof props[0] && props[0] == 0), "%zu", size);
  TRY(pirt_piContextRelease(pl, c));
}

/* An unknown sub-group query fails; it used to answer 0 on devices without
 * sub-groups, whose CL_INVALID_OPERATION the plugin turns into defaults. */
Test(plugin, unknown_sub_group_query_fails)
{
  pi_context c = NULL;
  pi_program p = NULL;
  pi_kernel k = NULL;
  const char *src = kernels;
  TRY(pirt_piContextCreate(pl, NULL, 1, &pi_dev, NULL, NULL, &c));
  TRY(pirt_piclProgramCreateWithSource(pl, c, 1, &src, NULL, &p));
  TRY(pirt_piProgramBuild(pl, p, 1, &pi_dev, "", NULL, NULL));
  TRY(pirt_piKernelCreate(pl, p, "scale", &k));
  pi_uint32 value = 7;
  cr_assert_eq(pirt_piKernelGetSubGroupInfo(pl, k, pi_dev, (pi_kernel_sub_group_info)0x7777, 0,
                                            NULL, sizeof value, &value, NULL),
               PI_ERROR_INVALID_VALUE);
  char *msg = NULL;
  pirt_piPluginGetLastError(pl, &msg);
  cr_assert(msg && strstr(msg, "unknown sub-group query 0x7777"), "%s", msg ? msg : "");
  TRY(pirt_piKernelGetSubGroupInfo(pl, k, pi_dev, PI_KERNEL_MAX_NUM_SUB_GROUPS, 0, NULL,
                                   sizeof value, &value, NULL));
  cr_assert_geq(value, 1);
  TRY(pirt_piKernelRelease(pl, k));
  TRY(pirt_piProgramRelease(pl, p));
  TRY(pirt_piContextRelease(pl, c));
}

/* A NULL kernel is PI_ERROR_INVALID_KERNEL; PoCL itself crashed on it. */
Test(plugin, launch_of_a_null_kernel_fails)
{
  pi_context c = NULL;
  pi_queue queue = NULL;
  TRY(pirt_piContextCreate(pl, NULL, 1, &pi_dev, NULL, NULL, &c));
  TRY(pirt_piQueueCreate(pl, c, pi_dev, 0, &queue));
  const size_t global = 1;
  cr_assert_eq(pirt_piEnqueueKernelLaunch(pl, queue, NULL, 1, NULL, &global, NULL, 0, NULL, NULL),
               PI_ERROR_INVALID_KERNEL);
  cr_assert_eq(pirt_piextEnqueueCooperativeKernelLaunch(pl, queue, NULL, 1, NULL, &global, NULL,
                                                        0, NULL, NULL),
               PI_ERROR_INVALID_KERNEL);
  TRY(pirt_piQueueRelease(pl, queue));
  TRY(pirt_piContextRelease(pl, c));
}

/* A NULL program to link is PI_ERROR_INVALID_PROGRAM; PoCL crashed on it. */
Test(plugin, link_of_a_null_program_fails)
{
  pi_context c = NULL;
  TRY(pirt_piContextCreate(pl, NULL, 1, &pi_dev, NULL, NULL, &c));
  const pi_program inputs[1] = {NULL};
  pi_program linked = (pi_program)1;
  cr_assert_eq(pirt_piProgramLink(pl, c, 1, &pi_dev, NULL, 1, inputs, NULL, NULL, &linked),
               PI_ERROR_INVALID_PROGRAM);
  cr_assert_null(linked);
  TRY(pirt_piContextRelease(pl, c));
}

/* PI_QUEUE_INFO_SIZE has an answer in OpenCL for on-device queues only;
 * its refusal said the queue was invalid. It says why now. */
Test(plugin, a_queue_size_query_says_why_it_has_no_answer)
{
  pi_context c = NULL;
  pi_queue queue = NULL;
  TRY(pirt_piContextCreate(pl, NULL, 1, &pi_dev, NULL, NULL, &c));
  TRY(pirt_piQueueCreate(pl, c, pi_dev, 0, &queue));
  pi_uint32 size = 0;
  cr_assert_eq(pirt_piQueueGetInfo(pl, queue, PI_QUEUE_INFO_SIZE, sizeof size, &size, NULL),
               PI_ERROR_INVALID_QUEUE);
  char *msg = NULL;
  pirt_piPluginGetLastError(pl, &msg);
  cr_assert(msg && strstr(msg, "PI_QUEUE_INFO_SIZE: OpenCL gives a queue's size only for an "
                               "on-device queue"), "%s", msg ? msg : "");
  TRY(pirt_piQueueRelease(pl, queue));
  TRY(pirt_piContextRelease(pl, c));
}

/* A USM property list that names a property twice is refused by every
 * plugin alike, before the device is asked (OpenCL's plugin passed it on,
 * unchecked, where the device has USM; neither here has). */
Test(plugin, a_usm_property_named_twice_is_refused)
{
  pi_context c = NULL;
  TRY(pirt_piContextCreate(pl, NULL, 1, &pi_dev, NULL, NULL, &c));
  pi_usm_mem_properties twice[] = {PI_MEM_ALLOC_FLAGS, PI_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE,
                                   PI_MEM_ALLOC_FLAGS, 0, 0};
  void *p = NULL;
  cr_assert_eq(pirt_piextUSMDeviceAlloc(pl, &p, c, pi_dev, twice, 64, 0),
               PI_ERROR_INVALID_VALUE);
  char *msg = NULL;
  pirt_piPluginGetLastError(pl, &msg);
  cr_assert(msg && strstr(msg, "USM property PI_MEM_ALLOC_FLAGS appears twice in the list"), "%s",
            msg ? msg : "");
  TRY(pirt_piContextRelease(pl, c));
}

/* Another implementation's binary, or damaged bytes: a PI error on every
 * device, at creation (PoCL, rusticl) or, where the implementation looks
 * at a binary only to build it (NVIDIA), at the build. rusticl 22
 * panicked on it and aborted the process; the plugin refuses it there
 * before rusticl sees it. */
Test(plugin, a_binary_the_device_did_not_make_is_an_error_not_an_abort)
{
  pi_context c = NULL;
  TRY(pirt_piContextCreate(pl, NULL, 1, &pi_dev, NULL, NULL, &c));
  static const unsigned char junk[64] = "abcd: no implementation made this binary";
  const unsigned char *bins[1] = {junk};
  size_t len = sizeof junk;
  pi_int32 status = 0;
  pi_program p = (pi_program)1;
  pi_result r = pirt_piProgramCreateWithBinary(pl, c, 1, &pi_dev, &len, bins, 0, NULL, &status,
                                               &p);
  const char *failed = "piProgramCreateWithBinary";
  if (r == PI_SUCCESS) {
    cr_assert_not_null(p);
    r = pirt_piProgramBuild(pl, p, 1, &pi_dev, "", NULL, NULL);
    failed = "piProgramBuild";
    cr_assert_neq(r, PI_SUCCESS, "a binary of junk was built");
    TRY(pirt_piProgramRelease(pl, p));
  } else {
    cr_assert_null(p);
  }
  char *msg = NULL;
  pirt_piPluginGetLastError(pl, &msg);
  cr_assert(msg && strstr(msg, failed), "%s", msg ? msg : "");
  TRY(pirt_piContextRelease(pl, c));
}
