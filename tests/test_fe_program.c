/*
 * test_fe_program.c: the OpenCL front end's programs and kernels
 * (frontends/opencl/fe_program.c, fe_kernel.c), driven the way the ICD
 * loader drives libpitrace_opencl.so, on the real device the registration
 * names (PoCL, or rusticl on llvmpipe): programs built from source, from
 * the binaries they give back, and compiled and linked from two sources;
 * a build that fails with a readable log; kernel and work-group queries;
 * plain, memory and local-memory arguments and a cloned kernel, each
 * checked by launching the kernel and reading the results on the host; and
 * a sweep of bad input for every function of the part.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fe_testutil.h"

#define N 64

static const char *vadd_src =
    "__kernel void vadd(__global const float *a, __global const float *b,\n"
    "                   __global float *c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = a[i] + b[i];\n"
    "}\n";

static const char *misc_src =
    "__kernel void addl(__global long *out, long k) {\n"
    "  out[get_global_id(0)] += k;\n"
    "}\n"
    "__kernel void wgsum(__global const int *in, __global int *out,\n"
    "                    __local int *scratch) {\n"
    "  size_t l = get_local_id(0), n = get_local_size(0);\n"
    "  scratch[l] = in[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (l == 0) {\n"
    "    int s = 0;\n"
    "    for (size_t i = 0; i < n; i++) s += scratch[i];\n"
    "    out[get_group_id(0)] = s;\n"
    "  }\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(4, 1, 1)))\n"
    "void fixed(__global int *d) {\n"
    "  __local int tile[4];\n"
    "  tile[get_local_id(0)] = (int)get_local_size(0);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  d[get_global_id(0)] = tile[get_local_id(0)];\n"
    "}\n";

TestSuite(fe_program, .init = fe_setup, .timeout = 120);

/* ---- Helpers ---------------------------------------------------------------- */

static cl_command_queue make_queue(cl_context ctx)
{
  cl_int err = -1;
  cl_command_queue q = D->clCreateCommandQueueWithProperties(ctx, fe_dev, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateCommandQueueWithProperties: %d", err);
  return q;
}

static cl_mem make_buffer(cl_context ctx, size_t size, const void *init)
{
  cl_int err = -1;
  cl_mem m = D->clCreateBuffer(ctx, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0),
                               size, (void *)init, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateBuffer: %d", err);
  return m;
}

static void read_buffer(cl_command_queue q, cl_mem m, size_t size, void *out)
{
  cl_int err = D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, size, out, 0, NULL, NULL);
  cr_assert_eq(err, CL_SUCCESS, "clEnqueueReadBuffer: %d", err);
}

static void launch(cl_command_queue q, cl_kernel k, size_t global, const size_t *local)
{
  cl_int err = D->clEnqueueNDRangeKernel(q, k, 1, NULL, &global, local, 0, NULL, NULL);
  cr_assert_eq(err, CL_SUCCESS, "clEnqueueNDRangeKernel: %d", err);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
}

/* Whether the device is rusticl's (Mesa 22.3 here), for the two places
 * where it fails through its own bugs, whatever the ICD in front of it. */
static bool on_rusticl(void)
{
  char name[64] = "";
  D->clGetPlatformInfo(fe_plat, CL_PLATFORM_NAME, sizeof name, name, NULL);
  return strcmp(name, "rusticl") == 0;
}

/* A program from source, built; asserts success. */
static cl_program build_source(cl_context ctx, const char *src)
{
  cl_int err = -1;
  cl_program p = D->clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateProgramWithSource: %d", err);
  err = D->clBuildProgram(p, 0, NULL, "", NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[4096] = "";
    D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    cr_assert_fail("clBuildProgram: %d\n%s", err, log);
  }
  return p;
}

static cl_kernel kernel_of(cl_program p, const char *name)
{
  cl_int err = -1;
  cl_kernel k = D->clCreateKernel(p, name, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateKernel(%s): %d", name, err);
  return k;
}

/* Runs vadd of program `p` on a, b and checks c = a + b on the host. */
static void run_vadd(cl_context ctx, cl_command_queue q, cl_program p)
{
  float a[N], b[N], c[N];
  for (int i = 0; i < N; i++) {
    a[i] = (float)i;
    b[i] = 0.5f * (float)i + 1.0f;
    c[i] = -1.0f;
  }
  cl_mem ma = make_buffer(ctx, sizeof a, a), mb = make_buffer(ctx, sizeof b, b),
         mc = make_buffer(ctx, sizeof c, NULL);
  cl_kernel k = kernel_of(p, "vadd");
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof ma, &ma), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof mb, &mb), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 2, sizeof mc, &mc), CL_SUCCESS);
  launch(q, k, N, NULL);
  read_buffer(q, mc, sizeof c, c);
  for (int i = 0; i < N; i++)
    cr_assert_float_eq(c[i], a[i] + b[i], 1e-6f, "c[%d] = %f", i, (double)c[i]);
  cr_assert_eq(D->clReleaseKernel(k), CL_SUCCESS);
  D->clReleaseMemObject(ma);
  D->clReleaseMemObject(mb);
  D->clReleaseMemObject(mc);
}

struct notified {
  int calls;
  cl_program program;
  void *user;
};

static void CL_CALLBACK on_build(cl_program p, void *user)
{
  struct notified *n = user;
  n->calls++;
  n->program = p;
  n->user = user;
}

/* ---- Building and running ----------------------------------------------------- */

Test(fe_program, vadd_from_source)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  cl_int err = -1;
  /* Two strings, the second with an explicit length, concatenated. */
  const char *parts[2] = {vadd_src, "// tail comment, cut here: XXXX"};
  size_t lengths[2] = {0, strlen("// tail comment")};
  cl_program p = D->clCreateProgramWithSource(ctx, 2, parts, lengths, &err);
  cr_assert_eq(err, CL_SUCCESS);
  struct notified n = {0};
  cr_assert_eq(D->clBuildProgram(p, 1, &fe_dev, "-cl-mad-enable", on_build, &n), CL_SUCCESS);
  cr_assert_eq(n.calls, 1, "the build callback runs once");
  cr_assert_eq(n.program, p, "with the application's program object");

  char src[1024];
  size_t len = 0;
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_SOURCE, sizeof src, src, &len), CL_SUCCESS);
  cr_assert_eq(len, strlen(vadd_src) + strlen("// tail comment") + 1);
  cr_assert(strncmp(src, vadd_src, strlen(vadd_src)) == 0);
  cr_assert_str_eq(src + strlen(vadd_src), "// tail comment");

  cl_context pc = NULL;
  cl_uint nd = 0, refs = 0;
  cl_device_id pd = NULL;
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_CONTEXT, sizeof pc, &pc, NULL), CL_SUCCESS);
  cr_assert_eq(pc, ctx);
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof nd, &nd, NULL), CL_SUCCESS);
  cr_assert_eq(nd, 1);
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_DEVICES, sizeof pd, &pd, NULL), CL_SUCCESS);
  cr_assert_eq(pd, fe_dev);
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_SUCCESS);
  cr_assert_eq(refs, 1);
  size_t nk = 0;
  char names[256];
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL), CL_SUCCESS);
  cr_assert_eq(nk, 1);
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, NULL),
               CL_SUCCESS);
  cr_assert_str_eq(names, "vadd");
  len = 99;
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_IL, 0, NULL, &len), CL_SUCCESS);
  cr_assert_eq(len, 0, "no IL for a source program");
  cl_bool ctors = CL_TRUE;
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT, sizeof ctors,
                                   &ctors, NULL),
               CL_SUCCESS);
  cr_assert_eq(ctors, CL_FALSE);

  cl_build_status st = CL_BUILD_NONE;
  cl_program_binary_type bt = 0;
  char opts[64];
  size_t gvs = 1;
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_STATUS, sizeof st, &st,
                                        NULL),
               CL_SUCCESS);
  cr_assert_eq(st, CL_BUILD_SUCCESS);
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BINARY_TYPE, sizeof bt, &bt,
                                        NULL),
               CL_SUCCESS);
  cr_assert_eq(bt, CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_OPTIONS, sizeof opts, opts,
                                        NULL),
               CL_SUCCESS);
  cr_assert(strstr(opts, "-cl-mad-enable"), "options: %s", opts);
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
                                        sizeof gvs, &gvs, NULL),
               CL_SUCCESS);
  cr_assert_eq(gvs, 0);

  run_vadd(ctx, q, p);
  cr_assert_eq(D->clReleaseProgram(p), CL_SUCCESS);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_program, binary_round_trip)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  cl_program p = build_source(ctx, vadd_src);
  size_t size = 0;
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL),
               CL_SUCCESS);
  cr_assert_gt(size, 0);
  size_t ret = 0;
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_BINARIES, 0, NULL, &ret), CL_SUCCESS);
  cr_assert_eq(ret, sizeof(unsigned char *), "one pointer per device");
  /* A NULL entry skips the device. */
  unsigned char *skip = NULL;
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof skip, &skip, NULL),
               CL_SUCCESS);
  unsigned char *bin = malloc(size);
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, &ret),
               CL_SUCCESS);
  cr_assert_eq(ret, sizeof bin);
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin - 1, &bin, NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clReleaseProgram(p), CL_SUCCESS);

  cl_int status = -1, err = -1;
  const unsigned char *bins[1] = {bin};
  cl_program pb = D->clCreateProgramWithBinary(ctx, 1, &fe_dev, &size, bins, &status, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateProgramWithBinary: %d", err);
  cr_assert_eq(status, CL_SUCCESS);
  char src[8] = "x";
  size_t len = 0;
  cr_assert_eq(D->clGetProgramInfo(pb, CL_PROGRAM_SOURCE, sizeof src, src, &len), CL_SUCCESS);
  cr_assert_eq(len, 1);
  cr_assert_str_eq(src, "", "a binary program has no source");
  cr_assert_eq(D->clCompileProgram(pb, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL),
               CL_INVALID_OPERATION, "only source or IL compiles");
  cr_assert_eq(D->clBuildProgram(pb, 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  run_vadd(ctx, q, pb);
  cr_assert_eq(D->clReleaseProgram(pb), CL_SUCCESS);
  free(bin);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

/* A program for two devices (PoCL's CPU split in two): builds for one and
 * then all, binaries fetched with NULL entries skipping devices, per-device
 * kernel queries, and a binary for one of them. */
Test(fe_program, two_device_program)
{
  cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  cl_device_id subs[2];
  cl_uint n = 0;
  if (D->clGetDeviceInfo(fe_dev, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, sizeof n, &n, NULL) !=
          CL_SUCCESS ||
      n < 2)
    cr_skip_test("the device does not split in two");
  cr_assert_eq(D->clCreateSubDevices(fe_dev, props, 2, subs, &n), CL_SUCCESS);
  cr_assert_eq(n, 2);
  cl_int err = -1;
  cl_context ctx = D->clCreateContext(NULL, 2, subs, NULL, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cl_program p = D->clCreateProgramWithSource(ctx, 1, &vadd_src, NULL, &err);
  cr_assert_eq(D->clBuildProgram(p, 1, &subs[1], NULL, NULL, NULL), CL_SUCCESS);
  cl_build_status st[2] = {9, 9};
  for (int i = 0; i < 2; i++)
    cr_assert_eq(D->clGetProgramBuildInfo(p, subs[i], CL_PROGRAM_BUILD_STATUS, sizeof st[i],
                                          &st[i], NULL),
                 CL_SUCCESS);
  cr_assert_eq(st[1], CL_BUILD_SUCCESS, "status %d %d", st[0], st[1]);
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_STATUS, sizeof st[0], st,
                                        NULL),
               CL_INVALID_DEVICE, "the parent is not one of the program's devices");
  cr_assert_eq(D->clBuildProgram(p, 1, &fe_dev, NULL, NULL, NULL), CL_INVALID_DEVICE);
  cr_assert_eq(D->clBuildProgram(p, 0, NULL, NULL, NULL, NULL), CL_SUCCESS);

  size_t sizes[2] = {0, 0};
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof sizes, sizes, NULL),
               CL_SUCCESS);
  /* PoCL gives the binary of identical sub-devices for the first only. */
  int b = sizes[0] ? 0 : 1;
  cr_assert_gt(sizes[b], 0);
  unsigned char *all[2] = {malloc(sizes[0] + 1), malloc(sizes[1] + 1)};
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof all, all, NULL), CL_SUCCESS);
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof all[0], all, NULL),
               CL_INVALID_VALUE, "room for one pointer, two devices");
  for (int skip = 0; skip < 2; skip++) {
    unsigned char *one[2] = {NULL, NULL};
    one[!skip] = calloc(1, sizes[!skip] + 1);
    cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof one, one, NULL),
                 CL_SUCCESS, "device %d skipped", skip);
    cr_assert(memcmp(one[!skip], all[!skip], sizes[!skip]) == 0);
    free(one[!skip]);
  }

  cl_kernel k = kernel_of(p, "vadd");
  size_t wg = 0;
  cr_assert_eq(D->clGetKernelWorkGroupInfo(k, NULL, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg,
                                           NULL),
               CL_INVALID_DEVICE, "two devices: which one?");
  cr_assert_eq(D->clGetKernelWorkGroupInfo(k, subs[b], CL_KERNEL_WORK_GROUP_SIZE, sizeof wg,
                                           &wg, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clGetKernelWorkGroupInfo(k, fe_dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg,
                                           NULL),
               CL_INVALID_DEVICE);
  D->clReleaseKernel(k);

  const unsigned char *bins[1] = {all[b]};
  cl_int status = -1;
  cl_program pb = D->clCreateProgramWithBinary(ctx, 1, &subs[b], &sizes[b], bins, &status, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(status, CL_SUCCESS);
  cl_device_id pd[2] = {NULL, NULL};
  size_t len = 0;
  cr_assert_eq(D->clGetProgramInfo(pb, CL_PROGRAM_DEVICES, sizeof pd, pd, &len), CL_SUCCESS);
  cr_assert_eq(len, sizeof pd[0]);
  cr_assert_eq(pd[0], subs[b]);
  cr_assert_eq(D->clBuildProgram(pb, 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  cl_command_queue q = D->clCreateCommandQueueWithProperties(ctx, subs[b], NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  run_vadd(ctx, q, pb);
  D->clReleaseCommandQueue(q);
  D->clReleaseProgram(pb);
  D->clReleaseProgram(p);
  free(all[0]);
  free(all[1]);
  D->clReleaseContext(ctx);
  for (int i = 0; i < 2; i++)
    D->clReleaseDevice(subs[i]);
}

/* Compiles `src` with the one header "helper.h" (`hdr`) for the device,
 * with a callback; asserts success. */
static cl_program compile_with_header(cl_context ctx, const char *src, const char *hdr)
{
  cl_int err = -1;
  cl_program h = D->clCreateProgramWithSource(ctx, 1, &hdr, NULL, &err);
  cl_program p = D->clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  const char *names[1] = {"helper.h"};
  struct notified n = {0};
  err = D->clCompileProgram(p, 1, &fe_dev, "-DSCALE=3", 1, &h, names, on_build, &n);
  if (err != CL_SUCCESS) {
    char log[4096] = "";
    D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    cr_assert_fail("clCompileProgram: %d\n%s", err, log);
  }
  cr_assert_eq(n.calls, 1);
  cr_assert_eq(n.program, p, "the compile callback gets the program");
  cl_program_binary_type bt = 0;
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BINARY_TYPE, sizeof bt, &bt,
                                        NULL),
               CL_SUCCESS);
  cr_assert_eq(bt, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
  size_t nk = 0;
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL),
               CL_INVALID_PROGRAM_EXECUTABLE, "compiled, not linked");
  cr_assert_null(D->clCreateKernel(p, "use", &err));
  cr_assert_eq(err, CL_INVALID_PROGRAM_EXECUTABLE);
  D->clReleaseProgram(h);
  return p;
}

/* Runs kernel "use" of `linked` on d[i] = i - 7 and checks 3 * d + 1. */
static void run_use(cl_context ctx, cl_program linked)
{
  cl_command_queue q = make_queue(ctx);
  int d[N], out[N];
  for (int i = 0; i < N; i++)
    d[i] = i - 7;
  cl_mem m = make_buffer(ctx, sizeof d, d);
  cl_kernel k = kernel_of(linked, "use");
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
  launch(q, k, N, NULL);
  read_buffer(q, m, sizeof out, out);
  for (int i = 0; i < N; i++)
    cr_assert_eq(out[i], 3 * d[i] + 1, "out[%d] = %d", i, out[i]);
  D->clReleaseKernel(k);
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
}

/* One source calls a function the other defines: compiled apart (the
 * first with an embedded header), linked, run. Mesa 22.3's rusticl cannot
 * link two modules (its own linker rejects the SPIR-V versions of its own
 * modules, through the ICD loader just the same): there the link must fail
 * with a program whose log says so, and the header path is checked with a
 * single module instead. */
Test(fe_program, compile_with_header_and_link)
{
  cl_context ctx = fe_context();
  const char *use_src = "#include \"helper.h\"\n"
                        "__kernel void use(__global int *d) {\n"
                        "  size_t i = get_global_id(0);\n"
                        "  d[i] = helper(d[i]);\n"
                        "}\n";
  const char *lib_src = "int helper(int x) { return 3 * x + 1; }\n";
  cl_int err = -1;
  cl_program use = compile_with_header(ctx, use_src, "int helper(int x);\n");
  cl_program lib = D->clCreateProgramWithSource(ctx, 1, &lib_src, NULL, &err);
  cr_assert_eq(D->clCompileProgram(lib, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL), CL_SUCCESS);

  cl_program inputs[2] = {use, lib};
  struct notified ln = {0};
  cl_program linked = D->clLinkProgram(ctx, 0, NULL, NULL, 2, inputs, on_build, &ln, &err);
  if (on_rusticl()) {
    cr_assert_eq(err, CL_LINK_PROGRAM_FAILURE, "rusticl links two modules now (%d)", err);
    cr_assert_not_null(linked);
    cr_assert_eq(ln.calls, 1);
    cr_assert_eq(ln.program, linked);
    char log[1024] = "";
    cr_assert_eq(D->clGetProgramBuildInfo(linked, fe_dev, CL_PROGRAM_BUILD_LOG, sizeof log, log,
                                          NULL),
                 CL_SUCCESS);
    cr_assert(strstr(log, "SPIR-V"), "log: %s", log);
    D->clReleaseProgram(linked);
    cl_program one = compile_with_header(
        ctx, use_src, "int helper(int x) { return SCALE * x + 1; }\n");
    linked = D->clLinkProgram(ctx, 1, &fe_dev, NULL, 1, &one, NULL, NULL, &err);
    cr_assert_eq(err, CL_SUCCESS, "clLinkProgram: %d", err);
    D->clReleaseProgram(one);
  } else {
    cr_assert_eq(err, CL_SUCCESS, "clLinkProgram: %d", err);
    cr_assert_eq(ln.calls, 1);
    cr_assert_eq(ln.program, linked, "the link callback gets the new program");
  }
  cr_assert_not_null(linked);
  cr_assert_eq(D->clBuildProgram(linked, 0, NULL, NULL, NULL, NULL), CL_INVALID_OPERATION,
               "a linked program is not built again");
  cl_device_id pd = NULL;
  cr_assert_eq(D->clGetProgramInfo(linked, CL_PROGRAM_DEVICES, sizeof pd, &pd, NULL),
               CL_SUCCESS);
  cr_assert_eq(pd, fe_dev);
  cl_program_binary_type bt = 0;
  cr_assert_eq(D->clGetProgramBuildInfo(linked, fe_dev, CL_PROGRAM_BINARY_TYPE, sizeof bt, &bt,
                                        NULL),
               CL_SUCCESS);
  cr_assert_eq(bt, CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
  run_use(ctx, linked);
  cr_assert_eq(D->clReleaseProgram(use), CL_SUCCESS);
  cr_assert_eq(D->clReleaseProgram(lib), CL_SUCCESS);
  cr_assert_eq(D->clReleaseProgram(linked), CL_SUCCESS);
  D->clReleaseContext(ctx);
}

Test(fe_program, link_failure_returns_program_with_log)
{
  cl_context ctx = fe_context();
  const char *src = "int missing_fn(int x);\n"
                    "__kernel void k(__global int *d) { d[0] = missing_fn(d[0]); }\n";
  cl_int err = -1;
  cl_program p = D->clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  cr_assert_eq(D->clCompileProgram(p, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  cl_program linked = D->clLinkProgram(ctx, 1, &fe_dev, NULL, 1, &p, NULL, NULL, &err);
  cr_assert_eq(err, CL_LINK_PROGRAM_FAILURE, "clLinkProgram: %d", err);
  if (linked) {
    cl_build_status st = CL_BUILD_NONE;
    cr_assert_eq(D->clGetProgramBuildInfo(linked, fe_dev, CL_PROGRAM_BUILD_STATUS, sizeof st,
                                          &st, NULL),
                 CL_SUCCESS);
    cr_assert_eq(st, CL_BUILD_ERROR);
    cr_assert_eq(D->clReleaseProgram(linked), CL_SUCCESS);
  }
  D->clReleaseProgram(p);
  D->clReleaseContext(ctx);
}

Test(fe_program, build_failure_has_readable_log)
{
  cl_context ctx = fe_context();
  const char *src = "__kernel void bad(__global int *d) { d[0] = undefined_thing; }\n";
  cl_int err = -1;
  cl_program p = D->clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  struct notified n = {0};
  cr_assert_eq(D->clBuildProgram(p, 0, NULL, NULL, on_build, &n), CL_BUILD_PROGRAM_FAILURE);
  cr_assert_eq(n.calls, 1, "the callback runs for a failed build too");
  cl_build_status st = CL_BUILD_NONE;
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_STATUS, sizeof st, &st,
                                        NULL),
               CL_SUCCESS);
  cr_assert_eq(st, CL_BUILD_ERROR);
  size_t len = 0;
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &len),
               CL_SUCCESS);
  cr_assert_gt(len, 1);
  char *log = malloc(len);
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_LOG, len, log, NULL),
               CL_SUCCESS);
  cr_assert(strstr(log, "undefined_thing"), "the log names the error: %s", log);
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_LOG, 1, log, NULL),
               CL_INVALID_VALUE);
  free(log);
  size_t nk = 0;
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL),
               CL_INVALID_PROGRAM_EXECUTABLE);
  cr_assert_null(D->clCreateKernel(p, "bad", &err));
  cr_assert_eq(err, CL_INVALID_PROGRAM_EXECUTABLE);
  D->clReleaseProgram(p);
  D->clReleaseContext(ctx);
}

/* ---- Kernels -------------------------------------------------------------------- */

Test(fe_program, kernel_and_work_group_info)
{
  cl_context ctx = fe_context();
  cl_program p = build_source(ctx, misc_src);
  cl_kernel k = kernel_of(p, "fixed");
  char name[32];
  cl_uint nargs = 0, refs = 0;
  cl_context kc = NULL;
  cl_program kp = NULL;
  cr_assert_eq(D->clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL),
               CL_SUCCESS);
  cr_assert_str_eq(name, "fixed");
  cr_assert_eq(D->clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL),
               CL_SUCCESS);
  cr_assert_eq(nargs, 1);
  cr_assert_eq(D->clGetKernelInfo(k, CL_KERNEL_CONTEXT, sizeof kc, &kc, NULL), CL_SUCCESS);
  cr_assert_eq(kc, ctx);
  cr_assert_eq(D->clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof kp, &kp, NULL), CL_SUCCESS);
  cr_assert_eq(kp, p);
  cr_assert_eq(D->clRetainKernel(k), CL_SUCCESS);
  cr_assert_eq(D->clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_SUCCESS);
  cr_assert_eq(refs, 2);
  cr_assert_eq(D->clReleaseKernel(k), CL_SUCCESS);
  size_t alen = 0;
  cr_assert_eq(D->clGetKernelInfo(k, CL_KERNEL_ATTRIBUTES, 0, NULL, &alen), CL_SUCCESS);
  cr_assert_geq(alen, 1);

  size_t wg = 0, cwg[3] = {9, 9, 9}, mult = 0;
  cl_ulong lmem = 0, pmem = 0;
  cr_assert_eq(D->clGetKernelWorkGroupInfo(k, fe_dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg,
                                           NULL),
               CL_SUCCESS);
  cr_assert_geq(wg, 1);
  cr_assert_eq(D->clGetKernelWorkGroupInfo(k, NULL, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                           sizeof cwg, cwg, NULL),
               CL_SUCCESS, "a NULL device is the program's only one");
  cr_assert(cwg[0] == 4 && cwg[1] == 1 && cwg[2] == 1, "%zu %zu %zu", cwg[0], cwg[1], cwg[2]);
  cr_assert_eq(D->clGetKernelWorkGroupInfo(k, fe_dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lmem,
                                           &lmem, NULL),
               CL_SUCCESS);
  cr_assert_geq(lmem, 4 * sizeof(int), "the __local tile counts: %llu",
                (unsigned long long)lmem);
  cr_assert_eq(D->clGetKernelWorkGroupInfo(k, fe_dev,
                                           CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                           sizeof mult, &mult, NULL),
               CL_SUCCESS);
  cr_assert_geq(mult, 1);
  cr_assert_eq(D->clGetKernelWorkGroupInfo(k, fe_dev, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof pmem,
                                           &pmem, NULL),
               CL_SUCCESS);

  /* And it runs with its required work-group size. */
  cl_command_queue q = make_queue(ctx);
  int out[16];
  cl_mem m = make_buffer(ctx, sizeof out, NULL);
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
  size_t local = 4;
  launch(q, k, 16, &local);
  read_buffer(q, m, sizeof out, out);
  for (int i = 0; i < 16; i++)
    cr_assert_eq(out[i], 4);
  D->clReleaseMemObject(m);
  D->clReleaseKernel(k);
  D->clReleaseProgram(p);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_program, local_memory_argument)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  cl_program p = build_source(ctx, misc_src);
  cl_kernel k = kernel_of(p, "wgsum");
  enum { WG = 8, GROUPS = N / WG };
  int in[N], out[GROUPS];
  for (int i = 0; i < N; i++)
    in[i] = i * i - 3;
  cl_mem mi = make_buffer(ctx, sizeof in, in), mo = make_buffer(ctx, sizeof out, NULL);
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof mi, &mi), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof mo, &mo), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 2, 3 * sizeof(int), NULL), CL_SUCCESS);
  int x = 0;
  cr_assert_eq(D->clSetKernelArg(k, 2, sizeof x, &x), CL_INVALID_ARG_VALUE,
               "a local argument takes no value");
  cr_assert_eq(D->clSetKernelArg(k, 2, WG * sizeof(int), NULL), CL_SUCCESS);
  size_t local = WG;
  launch(q, k, N, &local);
  read_buffer(q, mo, sizeof out, out);
  for (int g = 0; g < GROUPS; g++) {
    int s = 0;
    for (int i = 0; i < WG; i++)
      s += in[g * WG + i];
    cr_assert_eq(out[g], s, "group %d: %d != %d", g, out[g], s);
  }
  D->clReleaseMemObject(mi);
  D->clReleaseMemObject(mo);
  D->clReleaseKernel(k);
  D->clReleaseProgram(p);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

/* 8-byte plain values that are not memory objects: small numbers, an
 * address that is not mapped, and a real heap address. Each is a fresh
 * kernel, so each is the value the argument's class is learnt from. */
Test(fe_program, eight_byte_plain_arguments)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  cl_program p = build_source(ctx, misc_src);
  long *heap = malloc(64);
  const cl_long values[] = {42, 0x10, (cl_long)(uintptr_t)heap, -5, 0};
  for (size_t v = 0; v < sizeof values / sizeof *values; v++) {
    cl_long init[N], out[N];
    for (int i = 0; i < N; i++)
      init[i] = i;
    cl_mem m = make_buffer(ctx, sizeof init, init);
    cl_kernel k = kernel_of(p, "addl");
    cr_assert_eq(D->clSetKernelArg(k, 1, sizeof values[v], &values[v]), CL_SUCCESS,
                 "value %zu", v);
    cr_assert_eq(D->clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
    launch(q, k, N, NULL);
    read_buffer(q, m, sizeof out, out);
    for (int i = 0; i < N; i++)
      cr_assert_eq(out[i], i + values[v], "value %zu, out[%d]", v, i);
    /* The classes are learnt: a plain argument stays plain, a memory
     * argument refuses what is not a memory object. */
    cr_assert_eq(D->clSetKernelArg(k, 1, sizeof values[0], &values[0]), CL_SUCCESS);
    cr_assert_eq(D->clSetKernelArg(k, 0, sizeof k, &k), CL_INVALID_MEM_OBJECT);
    cr_assert_eq(D->clSetKernelArg(k, 0, 4, &m), CL_INVALID_ARG_SIZE);
    cl_mem none = NULL;
    cr_assert_eq(D->clSetKernelArg(k, 0, sizeof none, &none), CL_SUCCESS,
                 "a NULL buffer is allowed");
    D->clReleaseKernel(k);
    D->clReleaseMemObject(m);
  }
  free(heap);
  D->clReleaseProgram(p);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

/* Image and sampler arguments: a 4x4 image read through a sampler, the
 * values checked on the host; then the sampler argument's rules. */
Test(fe_program, image_and_sampler_arguments)
{
  cl_bool images = CL_FALSE;
  D->clGetDeviceInfo(fe_dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
  if (!images)
    cr_skip_test("the device has no images");
  const char *src =
      "__kernel void samp(__read_only image2d_t img, sampler_t s, __global float *out) {\n"
      "  int x = get_global_id(0), y = get_global_id(1);\n"
      "  out[y * 4 + x] = read_imagef(img, s, (int2)(x, y)).x;\n"
      "}\n";
  cl_context ctx = fe_context(), other = fe_context();
  cl_command_queue q = make_queue(ctx);
  cl_program p = build_source(ctx, src);
  cl_kernel k = kernel_of(p, "samp");
  float data[16], out[16];
  for (int i = 0; i < 16; i++)
    data[i] = (float)i * 0.25f;
  cl_image_format fmt = {CL_R, CL_FLOAT};
  cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 4,
                        .image_height = 4};
  cl_int err = -1;
  cl_mem img = D->clCreateImage(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &fmt, &desc, data,
                                &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateImage: %d", err);
  cl_sampler smp = D->clCreateSampler(ctx, CL_FALSE, CL_ADDRESS_NONE, CL_FILTER_NEAREST, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateSampler: %d", err);
  cl_sampler smp_other =
      D->clCreateSampler(other, CL_FALSE, CL_ADDRESS_NONE, CL_FILTER_NEAREST, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cl_mem m = make_buffer(ctx, sizeof out, NULL);
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof smp_other, &smp_other), CL_INVALID_SAMPLER,
               "a sampler of another context");
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof img, &img), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof smp, &smp), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 2, sizeof m, &m), CL_SUCCESS);
  size_t global[2] = {4, 4};
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 2, NULL, global, NULL, 0, NULL, NULL),
               CL_SUCCESS);
  read_buffer(q, m, sizeof out, out);
  for (int i = 0; i < 16; i++)
    cr_assert_float_eq(out[i], data[i], 1e-6f, "out[%d] = %f", i, (double)out[i]);
  /* The sampler argument takes samplers only, of sizeof(cl_sampler). */
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof m, &m), CL_INVALID_SAMPLER);
  cr_assert_eq(D->clSetKernelArg(k, 1, 4, &smp), CL_INVALID_ARG_SIZE);
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof smp, NULL), CL_INVALID_ARG_VALUE);
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof smp_other, &smp_other), CL_INVALID_SAMPLER);
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof smp, &smp), CL_INVALID_MEM_OBJECT,
               "the image argument takes memory objects");
  /* A clone carries the image, the sampler and the buffer. */
  cl_kernel clone = D->clCloneKernel(k, &err);
  cr_assert_eq(err, CL_SUCCESS);
  float zero[16] = {0};
  cr_assert_eq(D->clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof zero, zero, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, clone, 2, NULL, global, NULL, 0, NULL, NULL),
               CL_SUCCESS);
  read_buffer(q, m, sizeof out, out);
  for (int i = 0; i < 16; i++)
    cr_assert_float_eq(out[i], data[i], 1e-6f);
  D->clReleaseKernel(clone);
  D->clReleaseKernel(k);
  D->clReleaseSampler(smp);
  D->clReleaseSampler(smp_other);
  D->clReleaseMemObject(img);
  D->clReleaseMemObject(m);
  D->clReleaseProgram(p);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
  D->clReleaseContext(other);
}

Test(fe_program, clone_and_kernels_in_program)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  cl_program p = build_source(ctx, misc_src);
  cl_uint nk = 0;
  cr_assert_eq(D->clCreateKernelsInProgram(p, 0, NULL, &nk), CL_SUCCESS);
  cr_assert_eq(nk, 3);
  cl_kernel ks[3];
  cr_assert_eq(D->clCreateKernelsInProgram(p, 2, ks, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clCreateKernelsInProgram(p, 3, ks, &nk), CL_SUCCESS);
  cl_kernel addl = NULL;
  for (int i = 0; i < 3; i++) {
    char name[32];
    cr_assert_eq(D->clGetKernelInfo(ks[i], CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL),
                 CL_SUCCESS);
    if (strcmp(name, "addl") == 0)
      addl = ks[i];
  }
  cr_assert_not_null(addl);
  cr_assert_eq(D->clBuildProgram(p, 0, NULL, NULL, NULL, NULL), CL_INVALID_OPERATION,
               "kernels are attached");

  cl_long init[N], out[N], k = 1000;
  for (int i = 0; i < N; i++)
    init[i] = 2 * i;
  cl_mem m = make_buffer(ctx, sizeof init, init);
  cr_assert_eq(D->clSetKernelArg(addl, 0, sizeof m, &m), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(addl, 1, sizeof k, &k), CL_SUCCESS);
  cl_int err = -1;
  cl_kernel clone = D->clCloneKernel(addl, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cl_uint refs = 0;
  cr_assert_eq(D->clGetKernelInfo(clone, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_SUCCESS);
  cr_assert_eq(refs, 1);
  for (int i = 0; i < 3; i++)
    cr_assert_eq(D->clReleaseKernel(ks[i]), CL_SUCCESS);
  /* The clone has the arguments, and keeps the program alive. */
  launch(q, clone, N, NULL);
  read_buffer(q, m, sizeof out, out);
  for (int i = 0; i < N; i++)
    cr_assert_eq(out[i], 2 * i + 1000);
  cr_assert_eq(D->clBuildProgram(p, 0, NULL, NULL, NULL, NULL), CL_INVALID_OPERATION,
               "the clone is attached too");
  cr_assert_eq(D->clReleaseProgram(p), CL_SUCCESS);
  cr_assert_eq(D->clReleaseProgram(p), CL_INVALID_PROGRAM,
               "the application holds no reference; the clone's stays");
  cl_program kp = NULL;
  cr_assert_eq(D->clGetKernelInfo(clone, CL_KERNEL_PROGRAM, sizeof kp, &kp, NULL), CL_SUCCESS);
  cr_assert_eq(kp, p);
  /* Given back by the kernel, it may be retained and released again. */
  cr_assert_eq(D->clRetainProgram(kp), CL_SUCCESS);
  char names[64];
  cr_assert_eq(D->clGetProgramInfo(kp, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clReleaseProgram(kp), CL_SUCCESS);
  launch(q, clone, N, NULL);
  read_buffer(q, m, sizeof out, out);
  for (int i = 0; i < N; i++)
    cr_assert_eq(out[i], 2 * i + 2000);
  cr_assert_eq(D->clReleaseKernel(clone), CL_SUCCESS);
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

static int release_order[4];
static int release_calls;

static void CL_CALLBACK on_release(cl_program p, void *user)
{
  (void)p;
  release_order[release_calls++] = (int)(intptr_t)user;
}

Test(fe_program, release_callbacks_run_newest_first_when_the_program_goes)
{
  cl_context ctx = fe_context();
  cl_program p = build_source(ctx, vadd_src);
  cr_assert_eq(D->clSetProgramReleaseCallback(p, on_release, (void *)1), CL_SUCCESS);
  cr_assert_eq(D->clSetProgramReleaseCallback(p, on_release, (void *)2), CL_SUCCESS);
  cl_kernel k = kernel_of(p, "vadd");
  cr_assert_eq(D->clReleaseProgram(p), CL_SUCCESS);
  cr_assert_eq(release_calls, 0, "its kernel still holds it");
  cr_assert_eq(D->clReleaseKernel(k), CL_SUCCESS);
  cr_assert_eq(release_calls, 2);
  cr_assert_eq(release_order[0], 2);
  cr_assert_eq(release_order[1], 1);
  D->clReleaseContext(ctx);
}

/* ---- Bad input -------------------------------------------------------------------- */

Test(fe_program, bad_input_programs)
{
  cl_context ctx = fe_context(), other = fe_context();
  cl_int err = 0;
  const char *src = vadd_src, *nulls[1] = {NULL};
  /* clCreateProgramWithSource */
  cr_assert_null(D->clCreateProgramWithSource(NULL, 1, &src, NULL, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clCreateProgramWithSource((cl_context)fe_dev, 1, &src, NULL, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT, "a device is not a context");
  cr_assert_null(D->clCreateProgramWithSource(ctx, 0, &src, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateProgramWithSource(ctx, 1, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateProgramWithSource(ctx, 1, nulls, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);

  /* clCreateProgramWithBinary */
  const unsigned char junk[16] = "not a binary";
  const unsigned char *bins[1] = {junk}, *nobins[1] = {NULL};
  size_t len = sizeof junk, zero = 0;
  cl_int status = 99;
  cr_assert_null(D->clCreateProgramWithBinary(NULL, 1, &fe_dev, &len, bins, NULL, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clCreateProgramWithBinary(ctx, 0, &fe_dev, &len, bins, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateProgramWithBinary(ctx, 1, NULL, &len, bins, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cl_device_id notdev = (cl_device_id)ctx;
  cr_assert_null(D->clCreateProgramWithBinary(ctx, 1, &notdev, &len, bins, NULL, &err));
  cr_assert_eq(err, CL_INVALID_DEVICE);
  cr_assert_null(D->clCreateProgramWithBinary(ctx, 1, &fe_dev, NULL, bins, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateProgramWithBinary(ctx, 1, &fe_dev, &len, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateProgramWithBinary(ctx, 1, &fe_dev, &zero, bins, &status, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_eq(status, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateProgramWithBinary(ctx, 1, &fe_dev, &len, nobins, &status, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  /* Junk where a binary belongs: rusticl 22.3 panics on it (a Rust panic
   * in clCreateProgramWithBinary, through the ICD loader as well), so only
   * PoCL is asked. */
  if (!on_rusticl()) {
    cr_assert_null(D->clCreateProgramWithBinary(ctx, 1, &fe_dev, &len, bins, &status, &err));
    cr_assert_eq(err, CL_INVALID_BINARY, "junk: %d", err);
    cr_assert_eq(status, CL_INVALID_BINARY);
  }

  /* clCreateProgramWithIL (neither device takes SPIR-V) and its KHR twin */
  const uint32_t spirv[5] = {0x07230203, 0x00010000, 0, 1, 0};
  cr_assert_null(D->clCreateProgramWithIL(NULL, spirv, sizeof spirv, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clCreateProgramWithIL(ctx, NULL, sizeof spirv, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateProgramWithIL(ctx, spirv, 0, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateProgramWithIL(ctx, spirv, sizeof spirv, &err));
  cr_assert_eq(err, CL_INVALID_OPERATION, "no device takes IL: %d", err);
  cl_program(CL_API_CALL * il_khr)(cl_context, const void *, size_t, cl_int *) =
      (cl_program(CL_API_CALL *)(cl_context, const void *, size_t, cl_int *))fe_ext(
          "clCreateProgramWithILKHR");
  cr_assert_not_null(il_khr);
  cr_assert_null(il_khr(ctx, spirv, sizeof spirv, &err));
  cr_assert_eq(err, CL_INVALID_OPERATION);

  /* clCreateProgramWithBuiltInKernels: PI makes none */
  cr_assert_null(D->clCreateProgramWithBuiltInKernels(NULL, 1, &fe_dev, "x", &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clCreateProgramWithBuiltInKernels(ctx, 0, NULL, "x", &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateProgramWithBuiltInKernels(ctx, 1, &notdev, "x", &err));
  cr_assert_eq(err, CL_INVALID_DEVICE);
  cr_assert_null(D->clCreateProgramWithBuiltInKernels(ctx, 1, &fe_dev, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateProgramWithBuiltInKernels(ctx, 1, &fe_dev, "no_such_kernel", &err));
  cr_assert_eq(err, CL_INVALID_VALUE);

  /* Build, compile, link */
  cl_program p = D->clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  cl_program po = D->clCreateProgramWithSource(other, 1, &src, NULL, &err);
  cr_assert_eq(D->clBuildProgram(NULL, 0, NULL, NULL, NULL, NULL), CL_INVALID_PROGRAM);
  cr_assert_eq(D->clBuildProgram((cl_program)ctx, 0, NULL, NULL, NULL, NULL),
               CL_INVALID_PROGRAM);
  cr_assert_eq(D->clBuildProgram(p, 1, NULL, NULL, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clBuildProgram(p, 0, &fe_dev, NULL, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clBuildProgram(p, 0, NULL, NULL, NULL, (void *)1), CL_INVALID_VALUE);
  cr_assert_eq(D->clBuildProgram(p, 1, &notdev, NULL, NULL, NULL), CL_INVALID_DEVICE);
  const char *hn[1] = {"h.h"};
  cl_program bad = (cl_program)ctx;
  cr_assert_eq(D->clCompileProgram(NULL, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL),
               CL_INVALID_PROGRAM);
  cr_assert_eq(D->clCompileProgram(p, 0, NULL, NULL, 1, NULL, hn, NULL, NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clCompileProgram(p, 0, NULL, NULL, 0, &p, NULL, NULL, NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clCompileProgram(p, 0, NULL, NULL, 1, &bad, hn, NULL, NULL),
               CL_INVALID_PROGRAM);
  cr_assert_eq(D->clCompileProgram(p, 0, NULL, NULL, 1, &po, hn, NULL, NULL),
               CL_INVALID_CONTEXT);
  cr_assert_eq(D->clCompileProgram(p, 1, &notdev, NULL, 0, NULL, NULL, NULL, NULL),
               CL_INVALID_DEVICE);
  cr_assert_eq(D->clCompileProgram(p, 0, NULL, NULL, 0, NULL, NULL, NULL, (void *)1),
               CL_INVALID_VALUE);
  cr_assert_null(D->clLinkProgram(NULL, 0, NULL, NULL, 1, &p, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clLinkProgram(ctx, 0, NULL, NULL, 0, NULL, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clLinkProgram(ctx, 0, NULL, NULL, 1, NULL, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clLinkProgram(ctx, 0, NULL, NULL, 1, &bad, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_PROGRAM);
  cr_assert_null(D->clLinkProgram(ctx, 0, NULL, NULL, 1, &po, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clLinkProgram(ctx, 1, &notdev, NULL, 1, &p, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_DEVICE);
  cr_assert_null(D->clLinkProgram(ctx, 0, NULL, NULL, 1, &p, NULL, (void *)1, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);

  /* Info queries */
  size_t size = 0;
  cl_uint refs = 0;
  cr_assert_eq(D->clGetProgramInfo(NULL, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_INVALID_PROGRAM);
  cr_assert_eq(D->clGetProgramInfo(p, 0x7777, sizeof refs, &refs, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, 1, &refs, NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof size, &size, NULL),
               CL_INVALID_PROGRAM_EXECUTABLE, "not built");
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &size),
               CL_INVALID_PROGRAM_EXECUTABLE);
  cl_build_status st = 5;
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_STATUS, sizeof st, &st,
                                        NULL),
               CL_SUCCESS);
  cr_assert_eq(st, CL_BUILD_NONE);
  cr_assert_eq(D->clGetProgramBuildInfo(NULL, fe_dev, CL_PROGRAM_BUILD_STATUS, sizeof st, &st,
                                        NULL),
               CL_INVALID_PROGRAM);
  cr_assert_eq(D->clGetProgramBuildInfo(p, NULL, CL_PROGRAM_BUILD_STATUS, sizeof st, &st, NULL),
               CL_INVALID_DEVICE);
  cr_assert_eq(D->clGetProgramBuildInfo(p, notdev, CL_PROGRAM_BUILD_STATUS, sizeof st, &st,
                                        NULL),
               CL_INVALID_DEVICE);
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, 0x7777, sizeof st, &st, NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_STATUS, 1, &st, NULL),
               CL_INVALID_VALUE);

  cl_program pb = D->clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  err = D->clBuildProgram(pb, 0, NULL, "-not-an-option", NULL, NULL);
  cr_assert(err == CL_INVALID_BUILD_OPTIONS || err == CL_BUILD_PROGRAM_FAILURE,
            "unknown option: %d", err);
  cr_assert_eq(D->clReleaseProgram(pb), CL_SUCCESS);

  /* Specialization constants, release callbacks, reference counts */
  int v = 1;
  cr_assert_eq(D->clSetProgramSpecializationConstant(NULL, 0, sizeof v, &v),
               CL_INVALID_PROGRAM);
  cr_assert_eq(D->clSetProgramSpecializationConstant(p, 0, sizeof v, &v), CL_INVALID_PROGRAM,
               "not a program made from IL");
  cr_assert_eq(D->clSetProgramReleaseCallback(NULL, on_release, NULL), CL_INVALID_PROGRAM);
  cr_assert_eq(D->clSetProgramReleaseCallback(p, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clRetainProgram(NULL), CL_INVALID_PROGRAM);
  cr_assert_eq(D->clReleaseProgram(NULL), CL_INVALID_PROGRAM);
  cr_assert_eq(D->clRetainProgram((cl_program)ctx), CL_INVALID_PROGRAM);
  cr_assert_eq(D->clRetainProgram(p), CL_SUCCESS);
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_SUCCESS);
  cr_assert_eq(refs, 2);
  cr_assert_eq(D->clReleaseProgram(p), CL_SUCCESS);
  cr_assert_eq(D->clReleaseProgram(p), CL_SUCCESS);
  cr_assert_eq(D->clReleaseProgram(po), CL_SUCCESS);
  D->clReleaseContext(ctx);
  D->clReleaseContext(other);
}

Test(fe_program, bad_input_kernels)
{
  cl_context ctx = fe_context(), other = fe_context();
  cl_program p = build_source(ctx, misc_src);
  cl_int err = 0;
  /* clCreateKernel, clCreateKernelsInProgram */
  cr_assert_null(D->clCreateKernel(NULL, "addl", &err));
  cr_assert_eq(err, CL_INVALID_PROGRAM);
  cr_assert_null(D->clCreateKernel((cl_program)ctx, "addl", &err));
  cr_assert_eq(err, CL_INVALID_PROGRAM);
  cr_assert_null(D->clCreateKernel(p, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateKernel(p, "no_such_kernel", &err));
  cr_assert_eq(err, CL_INVALID_KERNEL_NAME);
  const char *src = vadd_src;
  cl_program unbuilt = D->clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  cr_assert_null(D->clCreateKernel(unbuilt, "vadd", &err));
  cr_assert_eq(err, CL_INVALID_PROGRAM_EXECUTABLE);
  cl_uint nk = 0;
  cr_assert_eq(D->clCreateKernelsInProgram(NULL, 0, NULL, &nk), CL_INVALID_PROGRAM);
  cr_assert_eq(D->clCreateKernelsInProgram(unbuilt, 0, NULL, &nk),
               CL_INVALID_PROGRAM_EXECUTABLE);

  cl_kernel k = kernel_of(p, "wgsum");
  /* clSetKernelArg */
  cl_mem m = make_buffer(ctx, 256, NULL), mo = make_buffer(other, 256, NULL);
  cr_assert_eq(D->clSetKernelArg(NULL, 0, sizeof m, &m), CL_INVALID_KERNEL);
  cr_assert_eq(D->clSetKernelArg((cl_kernel)p, 0, sizeof m, &m), CL_INVALID_KERNEL);
  cr_assert_eq(D->clSetKernelArg(k, 3, sizeof m, &m), CL_INVALID_ARG_INDEX);
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof mo, &mo), CL_INVALID_MEM_OBJECT,
               "a buffer of another context");
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof p, &p), CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof mo, &mo), CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clSetKernelArg(k, 0, 2, &m), CL_INVALID_ARG_SIZE);
  cr_assert_eq(D->clSetKernelArg(k, 2, 0, NULL), CL_INVALID_ARG_SIZE, "local of 0 bytes");
  int x = 0;
  cr_assert_eq(D->clSetKernelArg(k, 2, sizeof x, &x), CL_INVALID_ARG_VALUE,
               "a local argument takes no value");
  cl_kernel ka = kernel_of(p, "addl");
  cr_assert_eq(D->clSetKernelArg(ka, 1, 4, &x), CL_INVALID_ARG_SIZE, "a long is 8 bytes");
  cl_int(CL_API_CALL * set_usm)(cl_kernel, cl_uint, const void *) =
      (cl_int(CL_API_CALL *)(cl_kernel, cl_uint, const void *))fe_ext(
          "clSetKernelArgMemPointerINTEL");
  cr_assert_not_null(set_usm);
  cr_assert_eq(set_usm(NULL, 0, NULL), CL_INVALID_KERNEL);
  cr_assert_eq(set_usm(k, 9, NULL), CL_INVALID_ARG_INDEX);

  /* clSetKernelExecInfo */
  cl_bool yes = CL_TRUE;
  void *ptrs[1] = {&x};
  cr_assert_eq(D->clSetKernelExecInfo(NULL, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof ptrs, ptrs),
               CL_INVALID_KERNEL);
  cr_assert_eq(D->clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof ptrs, ptrs),
               CL_INVALID_OPERATION);
  cr_assert_eq(D->clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, sizeof yes,
                                      &yes),
               CL_INVALID_OPERATION);
  cr_assert_eq(D->clSetKernelExecInfo(k, 0x7777, sizeof yes, &yes), CL_INVALID_VALUE);
  cr_assert_eq(D->clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL, 1,
                                      &yes),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL,
                                      sizeof yes, NULL),
               CL_INVALID_VALUE);

  /* Info queries */
  cl_uint nargs = 0;
  size_t wg = 0;
  char buf[64];
  cr_assert_eq(D->clGetKernelInfo(NULL, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL),
               CL_INVALID_KERNEL);
  cr_assert_eq(D->clGetKernelInfo(k, 0x7777, sizeof nargs, &nargs, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, 2, &nargs, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 3, buf, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clGetKernelWorkGroupInfo(NULL, fe_dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg,
                                           &wg, NULL),
               CL_INVALID_KERNEL);
  cr_assert_eq(D->clGetKernelWorkGroupInfo(k, (cl_device_id)ctx, CL_KERNEL_WORK_GROUP_SIZE,
                                           sizeof wg, &wg, NULL),
               CL_INVALID_DEVICE);
  cr_assert_eq(D->clGetKernelWorkGroupInfo(k, fe_dev, 0x7777, sizeof wg, &wg, NULL),
               CL_INVALID_VALUE);
  size_t gws[3];
  cr_assert_eq(D->clGetKernelWorkGroupInfo(k, fe_dev, CL_KERNEL_GLOBAL_WORK_SIZE, sizeof gws,
                                           gws, NULL),
               CL_INVALID_VALUE, "not a custom device or built-in kernel");
  cr_assert_eq(D->clGetKernelWorkGroupInfo(k, fe_dev, CL_KERNEL_WORK_GROUP_SIZE, 1, &wg, NULL),
               CL_INVALID_VALUE);
  cl_kernel_arg_address_qualifier aq = 0;
  cr_assert_eq(D->clGetKernelArgInfo(NULL, 0, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq,
                                     NULL),
               CL_INVALID_KERNEL);
  cr_assert_eq(D->clGetKernelArgInfo(k, 3, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq,
                                     NULL),
               CL_INVALID_ARG_INDEX);
  cr_assert_eq(D->clGetKernelArgInfo(k, 0, 0x7777, sizeof aq, &aq, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq,
                                     NULL),
               CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
  size_t local = 8, sg = 0;
  cr_assert_eq(D->clGetKernelSubGroupInfo(NULL, fe_dev, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                                          sizeof local, &local, sizeof sg, &sg, NULL),
               CL_INVALID_KERNEL);
  cr_assert_eq(D->clGetKernelSubGroupInfo(k, (cl_device_id)ctx,
                                          CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, sizeof local,
                                          &local, sizeof sg, &sg, NULL),
               CL_INVALID_DEVICE);
  /* As the device reports sub-groups: none -> CL_INVALID_OPERATION, else
   * PI's answers (the OpenCL plugin gives SYCL's minimum of one). */
  cl_uint max_sg = 0;
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_MAX_NUM_SUB_GROUPS, sizeof max_sg, &max_sg,
                                  NULL),
               CL_SUCCESS);
  if (max_sg == 0) {
    cr_assert_eq(D->clGetKernelSubGroupInfo(k, fe_dev, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                                            sizeof local, &local, sizeof sg, &sg, NULL),
                 CL_INVALID_OPERATION);
  } else {
    cr_assert_eq(D->clGetKernelSubGroupInfo(k, fe_dev, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                                            sizeof local, &local, sizeof sg, &sg, NULL),
                 CL_SUCCESS);
    cr_assert_geq(sg, 1);
    cr_assert_eq(D->clGetKernelSubGroupInfoKHR(k, NULL, CL_KERNEL_MAX_NUM_SUB_GROUPS, 0, NULL,
                                               sizeof sg, &sg, NULL),
                 CL_SUCCESS);
    cr_assert_geq(sg, 1);
    cr_assert_eq(D->clGetKernelSubGroupInfo(k, fe_dev, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                                            0, NULL, sizeof sg, &sg, NULL),
                 CL_INVALID_VALUE, "the local size is needed");
    cr_assert_eq(D->clGetKernelSubGroupInfo(k, fe_dev, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                                            sizeof local, &local, 1, &sg, NULL),
                 CL_INVALID_VALUE);
    cr_assert_eq(D->clGetKernelSubGroupInfo(k, fe_dev, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
                                            sizeof local, &local, sizeof sg, &sg, NULL),
                 CL_INVALID_VALUE, "PI has no such query");
    cr_assert_eq(D->clGetKernelSubGroupInfo(k, fe_dev, 0x7777, 0, NULL, sizeof sg, &sg, NULL),
                 CL_INVALID_VALUE);
  }

  /* Cloning, reference counts */
  cr_assert_null(D->clCloneKernel(NULL, &err));
  cr_assert_eq(err, CL_INVALID_KERNEL);
  cr_assert_null(D->clCloneKernel((cl_kernel)p, &err));
  cr_assert_eq(err, CL_INVALID_KERNEL);
  cr_assert_eq(D->clRetainKernel(NULL), CL_INVALID_KERNEL);
  cr_assert_eq(D->clReleaseKernel(NULL), CL_INVALID_KERNEL);
  cr_assert_eq(D->clReleaseKernel((cl_kernel)p), CL_INVALID_KERNEL);

  D->clReleaseKernel(ka);
  D->clReleaseKernel(k);
  D->clReleaseMemObject(m);
  D->clReleaseMemObject(mo);
  D->clReleaseProgram(unbuilt);
  D->clReleaseProgram(p);
  D->clReleaseContext(ctx);
  D->clReleaseContext(other);
}

/* ---- A plugin without OpenCL C: Level Zero over its test double -------------
 * The registration fe_program_level_zero runs only this suite, with the
 * runtime bound to the Level Zero plugin and the loader to
 * libze_pitrace_test_double.so (tests/ze_test_driver: a driver's test
 * double, kernels logged, not run). Level Zero compiles no OpenCL C: the
 * program made from source holds its source and building it answers
 * CL_COMPILER_NOT_AVAILABLE. IL programs go to the double. */

TestSuite(fe_program_ze, .init = fe_setup, .timeout = 60);

/* A SPIR-V module the double reads: one kernel `name` of `nargs`
 * parameters (the double reads OpEntryPoint and OpFunctionParameter). */
static size_t make_spirv(uint32_t *w, const char *name, unsigned nargs)
{
  size_t n = 0, len = strlen(name) + 1, words = (len + 3) / 4;
  w[n++] = 0x07230203u;
  w[n++] = 0x00010200u;
  w[n++] = 0;
  w[n++] = 1000;
  w[n++] = 0;
  w[n++] = (uint32_t)((3 + words) << 16 | 15); /* OpEntryPoint Kernel %100 name */
  w[n++] = 6;
  w[n++] = 100;
  memset(&w[n], 0, words * 4);
  memcpy(&w[n], name, len);
  n += words;
  w[n++] = 5u << 16 | 54; /* OpFunction */
  w[n++] = 1;
  w[n++] = 100;
  w[n++] = 0;
  w[n++] = 2;
  for (unsigned a = 0; a < nargs; a++) {
    w[n++] = 3u << 16 | 55; /* OpFunctionParameter */
    w[n++] = 3;
    w[n++] = 200 + a;
  }
  w[n++] = 1u << 16 | 56; /* OpFunctionEnd */
  return n * 4;
}

/* The front end's platform is an ICD's, whatever the plugin's platform lists
 * (the Level Zero and CUDA plugins list no cl_khr_icd; ocl-icd drops a
 * platform without it): cl_khr_icd once, and the suffix "pitrace". */
static void assert_icd_platform(void)
{
  char ext[4096] = "", suffix[32] = "";
  cr_assert_eq(D->clGetPlatformInfo(fe_plat, CL_PLATFORM_EXTENSIONS, sizeof ext, ext, NULL),
               CL_SUCCESS);
  const char *at = strstr(ext, "cl_khr_icd");
  cr_assert(at && (at == ext || at[-1] == ' ') && (at[10] == ' ' || at[10] == 0),
            "cl_khr_icd is listed: '%s'", ext);
  cr_assert_null(strstr(at + 10, "cl_khr_icd"), "cl_khr_icd is listed once: '%s'", ext);
  cr_assert_eq(D->clGetPlatformInfo(fe_plat, CL_PLATFORM_ICD_SUFFIX_KHR, sizeof suffix, suffix,
                                    NULL),
               CL_SUCCESS);
  cr_assert_str_eq(suffix, "pitrace");
}

Test(fe_program, the_platform_is_an_icd) { assert_icd_platform(); }

/* ---- Device queries the front end derives -------------------------------------- */

/* A cl_name_version query of fe_dev into out (at most max); the count. */
static size_t name_versions(cl_device_info q, cl_name_version *out, size_t max)
{
  size_t bytes = 0;
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, q, 0, NULL, &bytes), CL_SUCCESS, "query 0x%x",
               (unsigned)q);
  cr_assert_eq(bytes % sizeof *out, 0);
  cr_assert_leq(bytes / sizeof *out, max);
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, q, bytes, out, NULL), CL_SUCCESS);
  size_t n = bytes / sizeof *out;
  return n < max ? n : max; /* asserted above; said again for the compiler (-O3) */
}

__attribute__((noinline)) static bool listed(const cl_name_version *l, size_t n,
                                              const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(l[i].name, name) == 0)
      return true;
  return false;
}

/* Builds `src` for fe_dev with `options`; the build status. */
static cl_int try_build(cl_context ctx, const char *src, const char *options, char *log,
                        size_t logsize)
{
  cl_int err = -1;
  cl_program p = D->clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  err = D->clBuildProgram(p, 1, &fe_dev, options, NULL, NULL);
  log[0] = 0;
  D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_LOG, logsize, log, NULL);
  D->clReleaseProgram(p);
  return err;
}

/* The device's CL_DEVICE_NUMERIC_VERSION. */
static cl_version device_version(void)
{
  cl_version v = 0;
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_NUMERIC_VERSION, sizeof v, &v, NULL),
               CL_SUCCESS);
  return v;
}

/* An OpenCL 3.x device must accept OpenCL C of its own version, though its
 * CL_DEVICE_OPENCL_C_VERSION says 1.2 (PoCL and rusticl): the list has it,
 * and a program builds with it. */
Test(fe_program, opencl_c_versions_include_the_device_s_own)
{
  cl_version api = device_version();
  cl_name_version l[8];
  size_t n = name_versions(CL_DEVICE_OPENCL_C_ALL_VERSIONS, l, 8);
  bool has_api = false;
  for (size_t i = 0; i < n; i++) {
    cr_assert_str_eq(l[i].name, "OpenCL C");
    has_api |= CL_VERSION_MAJOR(l[i].version) == CL_VERSION_MAJOR(api) &&
               CL_VERSION_MINOR(l[i].version) == CL_VERSION_MINOR(api);
  }
  cr_assert(listed(l, n, "OpenCL C") && CL_VERSION_MAJOR(l[0].version) == 1,
            "the 1.x versions are there");
  if (CL_VERSION_MAJOR(api) < 3)
    return;
  cr_assert(has_api, "OpenCL C %u.%u is listed", CL_VERSION_MAJOR(api), CL_VERSION_MINOR(api));
  char options[32], log[4096];
  snprintf(options, sizeof options, "-cl-std=CL%u.%u", CL_VERSION_MAJOR(api),
           CL_VERSION_MINOR(api));
  cl_context ctx = fe_context();
  cr_assert_eq(try_build(ctx, vadd_src, options, log, sizeof log), CL_SUCCESS, "%s: %s",
               options, log);
  D->clReleaseContext(ctx);
}

/* memory_scope_work_item is for fences only: CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM
 * may be in the fence capabilities, never in the memory ones; both hold
 * OpenCL 3.0's minimum. */
Test(fe_program, atomic_capabilities_keep_work_item_scope_to_fences)
{
  cl_device_atomic_capabilities mem = 0, fence = 0;
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, sizeof mem, &mem,
                                  NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_ATOMIC_FENCE_CAPABILITIES, sizeof fence,
                                  &fence, NULL),
               CL_SUCCESS);
  cr_assert_eq(mem & CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM, 0, "memory capabilities 0x%llx",
               (unsigned long long)mem);
  const cl_device_atomic_capabilities mem_min =
      CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP;
  const cl_device_atomic_capabilities fence_min = mem_min | CL_DEVICE_ATOMIC_ORDER_ACQ_REL;
  cr_assert_eq(mem & mem_min, mem_min, "memory capabilities 0x%llx", (unsigned long long)mem);
  cr_assert_eq(fence & fence_min, fence_min, "fence capabilities 0x%llx",
               (unsigned long long)fence);
}

/* An optional feature PI cannot ask about is answered "not supported", not
 * refused. */
Test(fe_program, non_uniform_work_groups_are_not_promised)
{
  cl_bool b = 99;
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, sizeof b, &b,
                                  NULL),
               CL_SUCCESS);
  cr_assert_eq(b, CL_FALSE);
}

/* The OpenCL C features agree with the API queries the specification ties
 * them to, and the device's compiler defines every one listed. */
Test(fe_program, opencl_c_features_agree_with_the_device_queries)
{
  cl_version api = device_version();
  cl_name_version f[32];
  size_t n = name_versions(CL_DEVICE_OPENCL_C_FEATURES, f, 32);
  if (CL_VERSION_MAJOR(api) < 3) {
    cr_assert_eq(n, 0, "no OpenCL C 3.0, no features");
    return;
  }
  cl_bool images = CL_FALSE, pipes = CL_TRUE, generic = CL_TRUE;
  cl_device_fp_config fp64 = 0;
  cl_device_atomic_capabilities atomics = 0;
  cl_uint sub_groups = 0;
  char profile[64] = "";
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, sizeof atomics,
                                  &atomics, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_MAX_NUM_SUB_GROUPS, sizeof sub_groups,
                                  &sub_groups, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_PROFILE, sizeof profile, profile, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_PIPE_SUPPORT, sizeof pipes, &pipes, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT,
                                  sizeof generic, &generic, NULL),
               CL_SUCCESS);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(f[i].version, CL_MAKE_VERSION(3, 0, 0), "%s", f[i].name);
  cr_assert_eq(listed(f, n, "__opencl_c_images"), images != CL_FALSE);
  cr_assert_eq(listed(f, n, "__opencl_c_fp64"), fp64 != 0);
  cr_assert_eq(listed(f, n, "__opencl_c_atomic_order_acq_rel"),
               (atomics & CL_DEVICE_ATOMIC_ORDER_ACQ_REL) != 0);
  cr_assert_eq(listed(f, n, "__opencl_c_atomic_order_seq_cst"),
               (atomics & CL_DEVICE_ATOMIC_ORDER_SEQ_CST) != 0);
  cr_assert_eq(listed(f, n, "__opencl_c_atomic_scope_device"),
               (atomics & CL_DEVICE_ATOMIC_SCOPE_DEVICE) != 0);
  cr_assert_eq(listed(f, n, "__opencl_c_subgroups"), sub_groups != 0);
  cr_assert_eq(listed(f, n, "__opencl_c_pipes"), pipes != CL_FALSE);
  cr_assert_eq(listed(f, n, "__opencl_c_generic_address_space"), generic != CL_FALSE);
  if (strcmp(profile, "FULL_PROFILE") == 0)
    cr_assert(listed(f, n, "__opencl_c_int64"), "required of a FULL_PROFILE device");
  if (listed(f, n, "__opencl_c_3d_image_writes"))
    cr_assert(images, "3D image writes need images");
  /* One program that fails to build if a listed feature is not defined. */
  char src[4096] = "", log[4096];
  size_t at = 0;
  for (size_t i = 0; i < n; i++)
    at += (size_t)snprintf(src + at, sizeof src - at, "#ifndef %s\n#error %s\n#endif\n",
                           f[i].name, f[i].name);
  snprintf(src + at, sizeof src - at, "%s", vadd_src);
  cl_context ctx = fe_context();
  cr_assert_eq(try_build(ctx, src, "-cl-std=CL3.0", log, sizeof log), CL_SUCCESS,
               "a listed feature the compiler does not define: %s", log);
  D->clReleaseContext(ctx);
}

/* Whether the space-separated list `list` names `name`. */
static bool names(const char *list, const char *name)
{
  size_t n = strlen(name);
  for (const char *s = list; *s;) {
    while (*s == ' ')
      s++;
    size_t len = strcspn(s, " ");
    if (len == n && strncmp(s, name, n) == 0)
      return true;
    s += len;
  }
  return false;
}

/* An extension is listed only where its query answers: cl_khr_spir's
 * CL_DEVICE_SPIR_VERSIONS has no PI name, so cl_khr_spir (which PoCL has)
 * is not listed, in the string or the versioned list. */
Test(fe_program, an_extension_is_listed_only_with_its_query)
{
  char ext[8192] = "", spir[256];
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL),
               CL_SUCCESS);
  cl_name_version v[128];
  size_t n = name_versions(CL_DEVICE_EXTENSIONS_WITH_VERSION, v, 128);
  if (names(ext, "cl_khr_spir") || listed(v, n, "cl_khr_spir"))
    cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_SPIR_VERSIONS, sizeof spir, spir, NULL),
                 CL_SUCCESS, "cl_khr_spir is listed: its query answers");
}

/* CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE (OpenCL 1.0, deprecated, still asked
 * by clinfo) answers: the size of the largest built-in type, long16 on a
 * FULL_PROFILE device. */
Test(fe_program, min_data_type_align_size_is_the_largest_type_s)
{
  cl_uint bytes = 0, base_bits = 0;
  char profile[64] = "";
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE, sizeof bytes,
                                  &bytes, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof base_bits,
                                  &base_bits, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_PROFILE, sizeof profile, profile, NULL),
               CL_SUCCESS);
  if (strcmp(profile, "FULL_PROFILE") == 0)
    cr_assert_eq(bytes, 16 * sizeof(cl_long), "long16");
  else
    cr_assert(bytes == 16 * sizeof(cl_long) || bytes == 16 * sizeof(cl_int), "%u", bytes);
  cr_assert_leq(bytes * 8, base_bits, "a buffer's base is aligned for every type");
}

/* CL_PLATFORM_HOST_TIMER_RESOLUTION is 0 exactly where the platform has no
 * device and host timer synchronization, which is when clGetDeviceAndHostTimer
 * and clGetHostTimer return CL_INVALID_OPERATION (PoCL and rusticl have
 * none, and say 0 themselves). */
static void assert_timer_resolution(void)
{
  cl_ulong ns = 99, dev_ts = 0, host_ts = 0, host_only = 0;
  cr_assert_eq(D->clGetPlatformInfo(fe_plat, CL_PLATFORM_HOST_TIMER_RESOLUTION, sizeof ns, &ns,
                                    NULL),
               CL_SUCCESS);
  cl_int both = D->clGetDeviceAndHostTimer(fe_dev, &dev_ts, &host_ts);
  cl_int host = D->clGetHostTimer(fe_dev, &host_only);
  if (ns == 0) {
    cr_assert_eq(both, CL_INVALID_OPERATION, "resolution 0, clGetDeviceAndHostTimer: %d", both);
    cr_assert_eq(host, CL_INVALID_OPERATION, "resolution 0, clGetHostTimer: %d", host);
  } else {
    cr_assert_eq(both, CL_SUCCESS, "resolution %llu ns, clGetDeviceAndHostTimer: %d",
                 (unsigned long long)ns, both);
    cr_assert_eq(host, CL_SUCCESS, "resolution %llu ns, clGetHostTimer: %d",
                 (unsigned long long)ns, host);
    cr_assert_geq(host_only, host_ts, "the host timer does not go back");
  }
}

Test(fe_program, host_timer_resolution_matches_the_timers) { assert_timer_resolution(); }

/* The Level Zero double has the timers (zeDeviceGetGlobalTimestamps). */
Test(fe_program_ze, host_timer_resolution_matches_the_timers)
{
  assert_timer_resolution();
  cl_ulong ns = 0;
  cr_assert_eq(D->clGetPlatformInfo(fe_plat, CL_PLATFORM_HOST_TIMER_RESOLUTION, sizeof ns, &ns,
                                    NULL),
               CL_SUCCESS);
  cr_assert_neq(ns, 0, "the timers work: a resolution");
}

Test(fe_program_ze, the_platform_is_an_icd) { assert_icd_platform(); }

Test(fe_program_ze, source_without_a_compiler)
{
  char name[64] = "";
  D->clGetPlatformInfo(fe_plat, CL_PLATFORM_NAME, sizeof name, name, NULL);
  cr_assert(strstr(name, "Level-Zero"), "the Level Zero double serves: %s", name);
  cl_context ctx = fe_context();
  cl_int err = -1;
  cl_program p = D->clCreateProgramWithSource(ctx, 1, &vadd_src, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS, "a source program is made, as OpenCL allows");
  char src[512];
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_SOURCE, sizeof src, src, NULL), CL_SUCCESS);
  cr_assert_str_eq(src, vadd_src);
  struct notified n = {0};
  cr_assert_eq(D->clBuildProgram(p, 0, NULL, "-DX=1", on_build, &n), CL_COMPILER_NOT_AVAILABLE);
  cr_assert_eq(n.calls, 0, "no build began");
  cr_assert_eq(D->clCompileProgram(p, 1, &fe_dev, NULL, 0, NULL, NULL, NULL, NULL),
               CL_COMPILER_NOT_AVAILABLE);
  cr_assert_eq(D->clBuildProgram(p, 0, NULL, "-DX=2", NULL, NULL), CL_COMPILER_NOT_AVAILABLE);
  cl_build_status st = 0;
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_STATUS, sizeof st, &st,
                                        NULL),
               CL_SUCCESS);
  cr_assert_eq(st, CL_BUILD_ERROR);
  char text[128];
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_LOG, sizeof text, text,
                                        NULL),
               CL_SUCCESS);
  cr_assert(strstr(text, "compiler"), "log: %s", text);
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_OPTIONS, sizeof text, text,
                                        NULL),
               CL_SUCCESS);
  cr_assert_str_eq(text, "-DX=2");
  cl_program_binary_type bt = 9;
  cr_assert_eq(D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BINARY_TYPE, sizeof bt, &bt, NULL),
               CL_SUCCESS);
  cr_assert_eq(bt, CL_PROGRAM_BINARY_TYPE_NONE);
  size_t size = 9, nk = 0;
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL),
               CL_SUCCESS);
  cr_assert_eq(size, 0);
  unsigned char *bin = NULL;
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL), CL_SUCCESS);
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL),
               CL_INVALID_PROGRAM_EXECUTABLE);
  cr_assert_null(D->clCreateKernel(p, "vadd", &err));
  cr_assert_eq(err, CL_INVALID_PROGRAM_EXECUTABLE);
  cl_uint count = 0;
  cr_assert_eq(D->clCreateKernelsInProgram(p, 0, NULL, &count), CL_INVALID_PROGRAM_EXECUTABLE);
  cr_assert_null(D->clLinkProgram(ctx, 0, NULL, NULL, 1, &p, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_OPERATION, "nothing compiled to link");
  cr_assert_eq(D->clRetainProgram(p), CL_SUCCESS);
  cl_uint refs = 0;
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_SUCCESS);
  cr_assert_eq(refs, 2);
  cr_assert_eq(D->clReleaseProgram(p), CL_SUCCESS);
  cr_assert_eq(D->clReleaseProgram(p), CL_SUCCESS);
  D->clReleaseContext(ctx);
}

Test(fe_program_ze, il_program)
{
  cl_context ctx = fe_context();
  uint32_t spv[64];
  size_t len = make_spirv(spv, "scale", 2);
  cl_int err = -1;
  cl_program p = D->clCreateProgramWithIL(ctx, spv, len, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateProgramWithIL: %d", err);
  uint32_t back[64];
  size_t got = 0;
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_IL, sizeof back, back, &got), CL_SUCCESS);
  cr_assert_eq(got, len);
  cr_assert(memcmp(back, spv, len) == 0, "CL_PROGRAM_IL gives the IL back");
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_IL, len - 1, back, NULL), CL_INVALID_VALUE);
  char src[4] = "x";
  cr_assert_eq(D->clGetProgramInfo(p, CL_PROGRAM_SOURCE, sizeof src, src, NULL), CL_SUCCESS);
  cr_assert_str_eq(src, "");
  int v = 3;
  cr_assert_eq(D->clSetProgramSpecializationConstant(p, 1, sizeof v, &v), CL_SUCCESS);
  cr_assert_eq(D->clSetProgramSpecializationConstant(p, 1, sizeof v, NULL), CL_INVALID_VALUE);
  /* Headers mean nothing to IL: still checked for consistency, then ignored. */
  const char *hn[1] = {"h.h"};
  cr_assert_eq(D->clCompileProgram(p, 0, NULL, NULL, 1, NULL, hn, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clBuildProgram(p, 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  cl_kernel k = kernel_of(p, "scale");
  cl_uint nargs = 0;
  cr_assert_eq(D->clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL),
               CL_SUCCESS);
  cr_assert_eq(nargs, 2);
  cl_mem m = make_buffer(ctx, 64, NULL);
  float f = 2.0f;
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof f, &f), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof k, &k), CL_INVALID_MEM_OBJECT);
  cl_kernel clone = D->clCloneKernel(k, &err);
  cr_assert_eq(err, CL_SUCCESS);
  D->clReleaseKernel(clone);
  D->clReleaseKernel(k);
  D->clReleaseMemObject(m);
  cr_assert_eq(D->clReleaseProgram(p), CL_SUCCESS);
  D->clReleaseContext(ctx);
}

/* The launches the double logged since `from` bytes into its log. */
static char *ze_log_since(long from)
{
  const char *path = getenv("PITRACE_ZE_TEST_LOG");
  FILE *f = path ? fopen(path, "rb") : NULL;
  cr_assert_not_null(f, "PITRACE_ZE_TEST_LOG names the double's log");
  fseek(f, 0, SEEK_END);
  long end = ftell(f);
  char *text = calloc(1, (size_t)(end - from) + 1);
  fseek(f, from, SEEK_SET);
  cr_assert_eq(fread(text, 1, (size_t)(end - from), f), (size_t)(end - from));
  fclose(f);
  return text;
}

static long ze_log_size(void)
{
  const char *path = getenv("PITRACE_ZE_TEST_LOG");
  FILE *f = path ? fopen(path, "rb") : NULL;
  if (!f)
    return 0;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fclose(f);
  return n;
}

/* USM pointer arguments and execution settings, and a clone that launches
 * with the source kernel's arguments (the double logs each launch's
 * argument bytes). */
Test(fe_program_ze, usm_arguments_and_clone)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  uint32_t spv[64];
  size_t len = make_spirv(spv, "scale", 2);
  cl_int err = -1;
  cl_program p = D->clCreateProgramWithIL(ctx, spv, len, &err);
  cr_assert_eq(D->clBuildProgram(p, 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  cl_kernel k = kernel_of(p, "scale");
  void *(CL_API_CALL * dalloc)(cl_context, cl_device_id, const cl_mem_properties_intel *, size_t,
                               cl_uint, cl_int *) =
      (void *(CL_API_CALL *)(cl_context, cl_device_id, const cl_mem_properties_intel *, size_t,
                             cl_uint, cl_int *))fe_ext("clDeviceMemAllocINTEL");
  cl_int(CL_API_CALL * mfree)(cl_context, void *) =
      (cl_int(CL_API_CALL *)(cl_context, void *))fe_ext("clMemBlockingFreeINTEL");
  cl_int(CL_API_CALL * set_usm)(cl_kernel, cl_uint, const void *) =
      (cl_int(CL_API_CALL *)(cl_kernel, cl_uint, const void *))fe_ext(
          "clSetKernelArgMemPointerINTEL");
  cr_assert(dalloc && mfree && set_usm);
  void *d = dalloc(ctx, fe_dev, NULL, 256, 0, &err);
  cr_assert_eq(err, CL_SUCCESS, "clDeviceMemAllocINTEL: %d", err);
  cr_assert_eq(set_usm(k, 0, d), CL_SUCCESS);
  float a = 1.5f, b = 2.5f;
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof a, &a), CL_SUCCESS);
  cl_bool yes = CL_TRUE;
  void *ptrs[1] = {d};
  cr_assert_eq(D->clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL,
                                      sizeof yes, &yes),
               CL_SUCCESS);
  cr_assert_eq(D->clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL, sizeof ptrs, ptrs),
               CL_SUCCESS);
  cr_assert_eq(D->clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL, 3, ptrs),
               CL_INVALID_VALUE, "not a whole number of pointers");
  cl_kernel clone = D->clCloneKernel(k, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(clone, 1, sizeof b, &b), CL_SUCCESS, "its own from now on");

  long from = ze_log_size();
  size_t g = 4;
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, clone, 1, NULL, &g, NULL, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  char *log = ze_log_since(from);
  /* The pointer's bytes, little-endian, as the double logs them. */
  char ptr[17];
  for (int i = 0; i < 8; i++)
    sprintf(ptr + 2 * i, "%02x", (unsigned)(((uintptr_t)d >> (8 * i)) & 0xff));
  char want_k[64], want_c[64];
  snprintf(want_k, sizeof want_k, "args=[0=%s,1=0000c03f]", ptr); /* 1.5f */
  snprintf(want_c, sizeof want_c, "args=[0=%s,1=00002040]", ptr); /* 2.5f */
  char *first = strstr(log, "launch kernel=scale");
  cr_assert_not_null(first, "log: %s", log);
  char *second = strstr(first + 1, "launch kernel=scale");
  cr_assert_not_null(second, "log: %s", log);
  *second = 0;
  cr_assert(strstr(first, want_k), "the kernel's arguments (%s): %s", want_k, first);
  cr_assert(strstr(second + 1, want_c), "the clone's arguments (%s): %s", want_c,
            second + 1);
  free(log);
  D->clReleaseKernel(clone);
  D->clReleaseKernel(k);
  cr_assert_eq(mfree(ctx, d), CL_SUCCESS);
  D->clReleaseProgram(p);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}
