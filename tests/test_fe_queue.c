/*
 * test_fe_queue.c: the OpenCL front end's contexts, command-queues, events
 * and enqueues (frontends/opencl/fe_context.c, fe_queue.c, fe_event.c,
 * fe_enqueue.c), driven the way the ICD loader drives libpitrace_opencl.so,
 * on the real device the registration names (PoCL, or rusticl on llvmpipe):
 * context and queue properties and queries; buffer reads, writes, copies,
 * fills, rectangles and maps, each checked on the host, and the map count
 * of buffers and images through held and refused unmaps; markers, barriers,
 * migrations and profiling timestamps; event callbacks that get the
 * application's handle; user events that hold commands back (in queue
 * order, released from another thread, failing their dependents, keeping
 * the buffers they use after the application released them); a kernel
 * launch checked on the host, and one held for a user event that keeps the
 * arguments it was enqueued with and their buffers; and a sweep of bad
 * input for every function of the part (a buffer the application released
 * is refused even while a sub-buffer keeps it).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fe_testutil.h"

#define N 256

TestSuite(fe_queue, .init = fe_setup, .timeout = 120);

/* ---- Helpers ---------------------------------------------------------------- */

static cl_command_queue make_queue(cl_context ctx, cl_command_queue_properties props)
{
  cl_int err = -1;
  cl_command_queue q = D->clCreateCommandQueue(ctx, fe_dev, props, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateCommandQueue: %d", err);
  return q;
}

static cl_mem make_buffer(cl_context ctx, cl_mem_flags flags, size_t size, const void *init)
{
  cl_int err = -1;
  cl_mem m = D->clCreateBuffer(ctx, flags | (init ? CL_MEM_COPY_HOST_PTR : 0), size,
                               (void *)init, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateBuffer: %d", err);
  return m;
}

static void fill_bytes(unsigned char *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)(i * 7 + seed);
}

static cl_int status_of(cl_event e)
{
  cl_int s = 99;
  cr_assert_eq(D->clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL),
               CL_SUCCESS);
  return s;
}

static cl_command_type type_of(cl_event e)
{
  cl_command_type t = 0;
  cr_assert_eq(D->clGetEventInfo(e, CL_EVENT_COMMAND_TYPE, sizeof t, &t, NULL), CL_SUCCESS);
  return t;
}

static void sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static const char *vadd_src =
    "__kernel void vadd(__global const int *a, __global const int *b,\n"
    "                   __global int *c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = a[i] + b[i];\n"
    "}\n"
    "__kernel void setk(__global int *d, int k) {\n"
    "  d[get_global_id(0)] = k;\n"
    "}\n";

static cl_program build_vadd(cl_context ctx)
{
  cl_int err = -1;
  cl_program p = D->clCreateProgramWithSource(ctx, 1, &vadd_src, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateProgramWithSource: %d", err);
  err = D->clBuildProgram(p, 1, &fe_dev, "", NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[4096] = "";
    D->clGetProgramBuildInfo(p, fe_dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    cr_assert_fail("clBuildProgram: %d\n%s", err, log);
  }
  return p;
}

static cl_kernel make_kernel(cl_program p, const char *name)
{
  cl_int err = -1;
  cl_kernel k = D->clCreateKernel(p, name, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateKernel(%s): %d", name, err);
  return k;
}

/* ---- Contexts --------------------------------------------------------------- */

Test(fe_queue, context_properties_and_queries)
{
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)fe_plat,
                                   CL_CONTEXT_INTEROP_USER_SYNC, CL_TRUE, 0};
  cl_device_id twice[2] = {fe_dev, fe_dev};
  cl_int err = -1;
  cl_context ctx = D->clCreateContext(props, 2, twice, NULL, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateContext: %d", err);
  cl_uint n = 0, refs = 0;
  cr_assert_eq(D->clGetContextInfo(ctx, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL),
               CL_SUCCESS);
  cr_assert_eq(n, 1, "a device named twice counts once");
  cl_device_id dev = NULL;
  size_t sz = 0;
  cr_assert_eq(D->clGetContextInfo(ctx, CL_CONTEXT_DEVICES, 0, NULL, &sz), CL_SUCCESS);
  cr_assert_eq(sz, sizeof dev);
  cr_assert_eq(D->clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL),
               CL_SUCCESS);
  cr_assert_eq(dev, fe_dev);
  cl_context_properties got[5] = {0};
  cr_assert_eq(D->clGetContextInfo(ctx, CL_CONTEXT_PROPERTIES, sizeof got, got, &sz),
               CL_SUCCESS);
  cr_assert_eq(sz, sizeof props);
  cr_assert_arr_eq(got, props, sizeof props);
  cr_assert_eq(D->clGetContextInfo(ctx, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_SUCCESS);
  cr_assert_eq(refs, 1);
  cr_assert_eq(D->clRetainContext(ctx), CL_SUCCESS);
  D->clGetContextInfo(ctx, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL);
  cr_assert_eq(refs, 2);
  cr_assert_eq(D->clReleaseContext(ctx), CL_SUCCESS);
  /* A context without properties answers none. */
  cl_context plain = fe_context();
  cr_assert_eq(D->clGetContextInfo(plain, CL_CONTEXT_PROPERTIES, 0, NULL, &sz), CL_SUCCESS);
  cr_assert_eq(sz, 0);
  cr_assert_eq(D->clReleaseContext(plain), CL_SUCCESS);
  cr_assert_eq(D->clReleaseContext(ctx), CL_SUCCESS);
}

Test(fe_queue, context_from_type)
{
  cl_device_type type = 0;
  D->clGetDeviceInfo(fe_dev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)fe_plat, 0};
  const cl_device_type types[] = {CL_DEVICE_TYPE_DEFAULT, CL_DEVICE_TYPE_ALL, type};
  for (size_t i = 0; i < 3; i++) {
    cl_int err = -1;
    cl_context ctx = D->clCreateContextFromType(i ? props : NULL, types[i], NULL, NULL, &err);
    cr_assert_eq(err, CL_SUCCESS, "clCreateContextFromType(0x%llx): %d",
                 (unsigned long long)types[i], err);
    cl_uint n = 0;
    D->clGetContextInfo(ctx, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL);
    cr_assert_geq(n, 1);
    cr_assert_eq(D->clReleaseContext(ctx), CL_SUCCESS);
  }
  cl_int err = -1;
  cl_device_type other = type == CL_DEVICE_TYPE_ACCELERATOR ? CL_DEVICE_TYPE_CUSTOM
                                                             : CL_DEVICE_TYPE_ACCELERATOR;
  cr_assert_null(D->clCreateContextFromType(props, other, NULL, NULL, &err));
  cr_assert_eq(err, CL_DEVICE_NOT_FOUND);
  cr_assert_null(D->clCreateContextFromType(props, 1ull << 40, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_DEVICE_TYPE);
}

static int destructor_order[4], destructor_count;
static void CL_CALLBACK destructor(cl_context ctx, void *user)
{
  cl_uint n = 0;
  /* The handle is still the context while its destructors run. */
  cr_assert_eq(D->clGetContextInfo(ctx, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL),
               CL_SUCCESS);
  destructor_order[destructor_count++] = (int)(intptr_t)user;
}

Test(fe_queue, context_destructors_run_latest_first_after_its_objects)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  cr_assert_eq(D->clSetContextDestructorCallback(ctx, destructor, (void *)1), CL_SUCCESS);
  cr_assert_eq(D->clSetContextDestructorCallback(ctx, destructor, (void *)2), CL_SUCCESS);
  cr_assert_eq(D->clReleaseContext(ctx), CL_SUCCESS);
  cr_assert_eq(destructor_count, 0, "the queue still holds the context");
  cr_assert_eq(D->clReleaseCommandQueue(q), CL_SUCCESS);
  cr_assert_eq(destructor_count, 2);
  cr_assert_eq(destructor_order[0], 2);
  cr_assert_eq(destructor_order[1], 1);
}

Test(fe_queue, context_bad_input)
{
  cl_int err = 0;
  cl_context_properties unknown[] = {0x7777, 1, 0};
  cl_context_properties gl[] = {CL_GL_CONTEXT_KHR, 1, 0};
  cl_context_properties twice[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)fe_plat,
                                   CL_CONTEXT_PLATFORM, (cl_context_properties)fe_plat, 0};
  cl_context_properties bad_sync[] = {CL_CONTEXT_INTEROP_USER_SYNC, 7, 0};
  cl_context_properties not_platform[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)fe_dev,
                                          0};
  const cl_context_properties *props[] = {unknown, gl, twice, bad_sync, not_platform};
  const cl_int want[] = {CL_INVALID_PROPERTY, CL_INVALID_PROPERTY, CL_INVALID_PROPERTY,
                         CL_INVALID_PROPERTY, CL_INVALID_PLATFORM};
  for (size_t i = 0; i < 5; i++) {
    err = 0;
    cr_assert_null(D->clCreateContext(props[i], 1, &fe_dev, NULL, NULL, &err));
    cr_assert_eq(err, want[i], "properties %zu: %d", i, err);
    err = 0;
    cr_assert_null(
        D->clCreateContextFromType(props[i], CL_DEVICE_TYPE_ALL, NULL, NULL, &err));
    cr_assert_eq(err, want[i], "from type, properties %zu: %d", i, err);
  }
  cr_assert_null(D->clCreateContext(NULL, 0, &fe_dev, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateContext(NULL, 1, NULL, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateContext(NULL, 1, &fe_dev, NULL, &err, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "user data without a callback");
  cl_device_id not_dev = (cl_device_id)fe_plat;
  cr_assert_null(D->clCreateContext(NULL, 1, &not_dev, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_DEVICE);

  cl_context ctx = fe_context();
  cl_context wrong = (cl_context)fe_dev;
  cl_uint n;
  cr_assert_eq(D->clRetainContext(NULL), CL_INVALID_CONTEXT);
  cr_assert_eq(D->clReleaseContext(NULL), CL_INVALID_CONTEXT);
  cr_assert_eq(D->clGetContextInfo(NULL, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL),
               CL_INVALID_CONTEXT);
  cr_assert_eq(D->clGetContextInfo(wrong, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL),
               CL_INVALID_CONTEXT);
  cr_assert_eq(D->clGetContextInfo(ctx, 0x1084 /* a property, not a query */, sizeof n, &n,
                                   NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clGetContextInfo(ctx, CL_CONTEXT_NUM_DEVICES, 1, &n, NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clSetContextDestructorCallback(ctx, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clSetContextDestructorCallback(wrong, destructor, NULL), CL_INVALID_CONTEXT);
  cr_assert_eq(D->clReleaseContext(ctx), CL_SUCCESS);
}

/* ---- Queues ----------------------------------------------------------------- */

Test(fe_queue, queue_properties_and_queries)
{
  cl_context ctx = fe_context();
  cl_command_queue_properties supported = 0;
  D->clGetDeviceInfo(fe_dev, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, sizeof supported, &supported,
                     NULL);
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES,
                                 CL_QUEUE_PROFILING_ENABLE |
                                     (supported & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE),
                                 0};
  cl_int err = -1;
  cl_command_queue q = D->clCreateCommandQueueWithProperties(ctx, fe_dev, props, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateCommandQueueWithProperties: %d", err);
  cl_context c = NULL;
  cl_device_id d = NULL;
  cl_command_queue_properties p = 0;
  cl_uint refs = 0;
  cr_assert_eq(D->clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof c, &c, NULL), CL_SUCCESS);
  cr_assert_eq(c, ctx);
  cr_assert_eq(D->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL), CL_SUCCESS);
  cr_assert_eq(d, fe_dev);
  cr_assert_eq(D->clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof p, &p, NULL),
               CL_SUCCESS);
  cr_assert_eq(p, (cl_command_queue_properties)props[1]);
  cl_queue_properties got[3];
  size_t sz = 0;
  cr_assert_eq(D->clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, sizeof got, got, &sz),
               CL_SUCCESS);
  cr_assert_eq(sz, sizeof props);
  cr_assert_arr_eq(got, props, sizeof props);
  cr_assert_eq(D->clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_SUCCESS);
  cr_assert_eq(refs, 1);
  cr_assert_eq(D->clRetainCommandQueue(q), CL_SUCCESS);
  D->clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, NULL);
  cr_assert_eq(refs, 2);
  cr_assert_eq(D->clReleaseCommandQueue(q), CL_SUCCESS);
  cl_command_queue dflt = (cl_command_queue)1;
  cr_assert_eq(D->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE_DEFAULT, sizeof dflt, &dflt, NULL),
               CL_SUCCESS);
  cr_assert_null(dflt);
  cl_uint qsize;
  cr_assert_eq(D->clGetCommandQueueInfo(q, CL_QUEUE_SIZE, sizeof qsize, &qsize, NULL),
               CL_INVALID_COMMAND_QUEUE, "a host queue has no size");
  cr_assert_eq(D->clFlush(q), CL_SUCCESS);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  cr_assert_eq(D->clReleaseCommandQueue(q), CL_SUCCESS);

  /* clCreateCommandQueue: no properties array; NULL list: none either. */
  q = make_queue(ctx, CL_QUEUE_PROFILING_ENABLE);
  cr_assert_eq(D->clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, 0, NULL, &sz),
               CL_SUCCESS);
  cr_assert_eq(sz, 0);
  D->clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof p, &p, NULL);
  cr_assert_eq(p, CL_QUEUE_PROFILING_ENABLE);
  cr_assert_eq(D->clReleaseCommandQueue(q), CL_SUCCESS);
  q = D->clCreateCommandQueueWithProperties(ctx, fe_dev, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(D->clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, 0, NULL, &sz),
               CL_SUCCESS);
  cr_assert_eq(sz, 0);
  cr_assert_eq(D->clReleaseCommandQueue(q), CL_SUCCESS);
  cr_assert_eq(D->clReleaseContext(ctx), CL_SUCCESS);
}

/* A host property the device does not offer is refused by both creation
 * calls (rusticl offers no out-of-order queues; its
 * clCreateCommandQueueWithProperties, which the plugin calls, took one
 * anyway); one it offers is granted by both (PoCL). */
Test(fe_queue, queue_properties_the_device_lacks)
{
  cl_context ctx = fe_context();
  cl_command_queue_properties offered = 0;
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, sizeof offered,
                                  &offered, NULL),
               CL_SUCCESS);
  const cl_command_queue_properties each[] = {CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                                              CL_QUEUE_PROFILING_ENABLE};
  for (size_t i = 0; i < 2; i++) {
    const bool has = (offered & each[i]) != 0;
    const cl_int want = has ? CL_SUCCESS : CL_INVALID_QUEUE_PROPERTIES;
    cl_int err = 1;
    cl_command_queue q = D->clCreateCommandQueue(ctx, fe_dev, each[i], &err);
    cr_assert_eq(err, want, "clCreateCommandQueue(%#llx): %d", (unsigned long long)each[i], err);
    cr_assert_eq(q != NULL, has);
    if (q)
      cr_assert_eq(D->clReleaseCommandQueue(q), CL_SUCCESS);
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, each[i], 0};
    err = 1;
    q = D->clCreateCommandQueueWithProperties(ctx, fe_dev, props, &err);
    cr_assert_eq(err, want, "clCreateCommandQueueWithProperties(%#llx): %d",
                 (unsigned long long)each[i], err);
    cr_assert_eq(q != NULL, has);
    if (q)
      cr_assert_eq(D->clReleaseCommandQueue(q), CL_SUCCESS);
  }
  cr_assert_eq(D->clReleaseContext(ctx), CL_SUCCESS);
}

Test(fe_queue, queue_bad_input)
{
  cl_context ctx = fe_context();
  cl_int err = 0;
  cl_device_id not_dev = (cl_device_id)ctx;
  cr_assert_null(D->clCreateCommandQueue(NULL, fe_dev, 0, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clCreateCommandQueue(ctx, not_dev, 0, &err));
  cr_assert_eq(err, CL_INVALID_DEVICE);
  cr_assert_null(D->clCreateCommandQueue(ctx, fe_dev, 1ull << 20, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateCommandQueue(ctx, fe_dev, CL_QUEUE_ON_DEVICE, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "clCreateCommandQueue takes host properties only");
  struct {
    cl_queue_properties p[5];
    cl_int want;
  } cases[] = {
      {{CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0},
       CL_INVALID_QUEUE_PROPERTIES},
      {{CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE, 0}, CL_INVALID_VALUE},
      {{CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE_DEFAULT, 0}, CL_INVALID_VALUE},
      {{CL_QUEUE_SIZE, 1024, 0}, CL_INVALID_VALUE},
      {{CL_QUEUE_PROPERTIES, 1ull << 20, 0}, CL_INVALID_VALUE},
      {{CL_QUEUE_PROPERTIES, 0, CL_QUEUE_PROPERTIES, 0, 0}, CL_INVALID_VALUE},
      {{0x1096 /* CL_QUEUE_PRIORITY_KHR */, 1, 0}, CL_INVALID_VALUE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    err = 0;
    cr_assert_null(D->clCreateCommandQueueWithProperties(ctx, fe_dev, cases[i].p, &err));
    cr_assert_eq(err, cases[i].want, "case %zu: %d", i, err);
  }
  cl_command_queue q = make_queue(ctx, 0);
  cl_command_queue wrong = (cl_command_queue)ctx;
  cl_command_queue_properties old = 0;
  cr_assert_eq(D->clSetCommandQueueProperty(q, CL_QUEUE_PROFILING_ENABLE, CL_TRUE, &old),
               CL_INVALID_OPERATION);
  cr_assert_eq(D->clSetCommandQueueProperty(q, 1ull << 20, CL_TRUE, &old), CL_INVALID_VALUE);
  cr_assert_eq(D->clSetCommandQueueProperty(wrong, 0, CL_TRUE, &old),
               CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(D->clSetDefaultDeviceCommandQueue(ctx, fe_dev, q), CL_INVALID_OPERATION);
  cr_assert_eq(D->clSetDefaultDeviceCommandQueue(NULL, fe_dev, q), CL_INVALID_CONTEXT);
  cr_assert_eq(D->clSetDefaultDeviceCommandQueue(ctx, not_dev, q), CL_INVALID_DEVICE);
  cl_uint refs;
  cr_assert_eq(D->clGetCommandQueueInfo(wrong, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs,
                                        NULL),
               CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(D->clGetCommandQueueInfo(q, 0x7777, sizeof refs, &refs, NULL),
               CL_INVALID_VALUE);
  cl_context c;
  cr_assert_eq(D->clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, 1, &c, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clFlush(wrong), CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(D->clFinish(NULL), CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(D->clRetainCommandQueue(NULL), CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(D->clReleaseCommandQueue(wrong), CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(D->clReleaseCommandQueue(q), CL_SUCCESS);
  cr_assert_eq(D->clReleaseContext(ctx), CL_SUCCESS);
}

/* ---- Buffers ---------------------------------------------------------------- */

Test(fe_queue, buffer_read_write_round_trip)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  unsigned char src[N], dst[N], back[N];
  fill_bytes(src, N, 3);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  cr_assert_eq(D->clEnqueueWriteBuffer(q, m, CL_TRUE, 0, N, src, 0, NULL, NULL), CL_SUCCESS);
  /* A non-blocking partial write, then a read waiting for its event. */
  unsigned char part[16];
  memset(part, 0xab, sizeof part);
  cl_event w = NULL, r = NULL;
  cr_assert_eq(D->clEnqueueWriteBuffer(q, m, CL_FALSE, 100, sizeof part, part, 0, NULL, &w),
               CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_FALSE, 0, N, dst, 1, &w, &r), CL_SUCCESS);
  cr_assert_eq(D->clWaitForEvents(1, &r), CL_SUCCESS);
  cr_assert_eq(status_of(r), CL_COMPLETE);
  cr_assert_eq(type_of(w), CL_COMMAND_WRITE_BUFFER);
  cr_assert_eq(type_of(r), CL_COMMAND_READ_BUFFER);
  cl_command_queue eq = NULL;
  cl_context ec = NULL;
  D->clGetEventInfo(r, CL_EVENT_COMMAND_QUEUE, sizeof eq, &eq, NULL);
  D->clGetEventInfo(r, CL_EVENT_CONTEXT, sizeof ec, &ec, NULL);
  cr_assert_eq(eq, q);
  cr_assert_eq(ec, ctx);
  memcpy(back, src, N);
  memset(back + 100, 0xab, sizeof part);
  cr_assert_arr_eq(dst, back, N);
  /* A read at an offset. */
  unsigned char tail[8];
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, N - 8, 8, tail, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_arr_eq(tail, src + N - 8, 8);
  cr_assert_eq(D->clReleaseEvent(w), CL_SUCCESS);
  cr_assert_eq(D->clReleaseEvent(r), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(m), CL_SUCCESS);
  cr_assert_eq(D->clReleaseCommandQueue(q), CL_SUCCESS);
  cr_assert_eq(D->clReleaseContext(ctx), CL_SUCCESS);
}

Test(fe_queue, buffer_copy_and_overlap)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  unsigned char src[N], dst[N];
  fill_bytes(src, N, 11);
  cl_mem a = make_buffer(ctx, CL_MEM_READ_WRITE, N, src);
  cl_mem b = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  cl_event e = NULL;
  cr_assert_eq(D->clEnqueueCopyBuffer(q, a, b, 16, 0, N - 16, 0, NULL, &e), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadBuffer(q, b, CL_TRUE, 0, N - 16, dst, 1, &e, NULL), CL_SUCCESS);
  cr_assert_arr_eq(dst, src + 16, N - 16);
  cr_assert_eq(type_of(e), CL_COMMAND_COPY_BUFFER);
  D->clReleaseEvent(e);
  /* Within one buffer: apart is fine, overlapping is not. */
  cr_assert_eq(D->clEnqueueCopyBuffer(q, a, a, 0, 128, 64, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadBuffer(q, a, CL_TRUE, 128, 64, dst, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_arr_eq(dst, src, 64);
  cr_assert_eq(D->clEnqueueCopyBuffer(q, a, a, 0, 32, 64, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
  /* Sub-buffers of one buffer that overlap. */
  cl_uint align_bits = 0;
  D->clGetDeviceInfo(fe_dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits,
                     NULL);
  size_t align = align_bits / 8 ? align_bits / 8 : 1;
  cl_mem big = make_buffer(ctx, CL_MEM_READ_WRITE, 4 * align, NULL);
  cl_buffer_region r1 = {0, 2 * align}, r2 = {align, 2 * align};
  cl_int err = -1;
  cl_mem s1 = D->clCreateSubBuffer(big, 0, CL_BUFFER_CREATE_TYPE_REGION, &r1, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateSubBuffer: %d", err);
  cl_mem s2 = D->clCreateSubBuffer(big, 0, CL_BUFFER_CREATE_TYPE_REGION, &r2, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateSubBuffer: %d", err);
  cr_assert_eq(D->clEnqueueCopyBuffer(q, s1, s2, align, 0, align, 0, NULL, NULL),
               CL_MEM_COPY_OVERLAP, "the same bytes of the parent");
  cr_assert_eq(D->clEnqueueCopyBuffer(q, s1, s2, 0, align, align, 0, NULL, NULL), CL_SUCCESS,
               "[0, a) to [2a, 3a) of the parent");
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  D->clReleaseMemObject(s1);
  D->clReleaseMemObject(s2);
  D->clReleaseMemObject(big);
  D->clReleaseMemObject(a);
  D->clReleaseMemObject(b);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_queue, buffer_fill_patterns)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  enum { FILL = 512 };
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, FILL, NULL);
  unsigned char got[FILL];
  const size_t sizes[] = {1, 2, 4, 16, 128};
  for (size_t s = 0; s < 5; s++) {
    unsigned char pattern[128];
    fill_bytes(pattern, sizes[s], (unsigned)s * 29 + 1);
    cr_assert_eq(D->clEnqueueFillBuffer(q, m, pattern, 1, 0, FILL, 0, NULL, NULL), CL_SUCCESS);
    cl_event e = NULL;
    cr_assert_eq(D->clEnqueueFillBuffer(q, m, pattern, sizes[s], sizes[s], 2 * sizes[s], 0,
                                        NULL, &e),
                 CL_SUCCESS);
    memset(pattern, 0, sizeof pattern); /* the front end copied it */
    fill_bytes(pattern, sizes[s], (unsigned)s * 29 + 1);
    cr_assert_eq(type_of(e), CL_COMMAND_FILL_BUFFER);
    cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, FILL, got, 1, &e, NULL), CL_SUCCESS);
    for (size_t i = 0; i < FILL; i++) {
      unsigned char want = i >= sizes[s] && i < 3 * sizes[s] ? pattern[i % sizes[s]] : pattern[0];
      cr_assert_eq(got[i], want, "pattern %zu, byte %zu", sizes[s], i);
    }
    D->clReleaseEvent(e);
  }
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_queue, buffer_rectangles)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  /* The buffer: 4 slices of 6 rows of 16 bytes. */
  enum { W = 16, H = 6, S = 4 };
  unsigned char host[W * H * S], got[W * H * S];
  fill_bytes(host, sizeof host, 5);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, sizeof host, NULL);
  cr_assert_eq(D->clEnqueueFillBuffer(q, m, (unsigned char[]){0}, 1, 0, sizeof host, 0, NULL,
                                      NULL),
               CL_SUCCESS);
  /* Write a 5x3x2 box from host (1, 2, 1) to buffer (3, 1, 2). */
  const size_t bo[3] = {3, 1, 2}, ho[3] = {1, 2, 1}, region[3] = {5, 3, 2};
  cl_event e = NULL;
  cr_assert_eq(D->clEnqueueWriteBufferRect(q, m, CL_TRUE, bo, ho, region, W, W * H, W, W * H,
                                           host, 0, NULL, &e),
               CL_SUCCESS);
  cr_assert_eq(type_of(e), CL_COMMAND_WRITE_BUFFER_RECT);
  D->clReleaseEvent(e);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL),
               CL_SUCCESS);
  for (size_t z = 0; z < S; z++)
    for (size_t y = 0; y < H; y++)
      for (size_t x = 0; x < W; x++) {
        bool in = x >= 3 && x < 8 && y >= 1 && y < 4 && z >= 2 && z < 4;
        unsigned char want =
            in ? host[(z - 2 + 1) * W * H + (y - 1 + 2) * W + (x - 3 + 1)] : 0;
        cr_assert_eq(got[z * W * H + y * W + x], want, "(%zu, %zu, %zu)", x, y, z);
      }
  /* Read it back into a tight host box (pitches 0: computed). */
  unsigned char box[5 * 3 * 2];
  const size_t zero[3] = {0, 0, 0};
  cr_assert_eq(D->clEnqueueReadBufferRect(q, m, CL_TRUE, bo, zero, region, W, W * H, 0, 0, box,
                                          0, NULL, NULL),
               CL_SUCCESS);
  for (size_t z = 0; z < 2; z++)
    for (size_t y = 0; y < 3; y++)
      for (size_t x = 0; x < 5; x++)
        cr_assert_eq(box[z * 15 + y * 5 + x], host[(z + 1) * W * H + (y + 2) * W + x + 1]);
  /* Copy the box within the buffer to (9, 2, 0), apart from its source. */
  const size_t to[3] = {9, 2, 0};
  cr_assert_eq(D->clEnqueueCopyBufferRect(q, m, m, bo, to, region, W, W * H, W, W * H, 0,
                                          NULL, &e),
               CL_SUCCESS);
  cr_assert_eq(type_of(e), CL_COMMAND_COPY_BUFFER_RECT);
  D->clReleaseEvent(e);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL),
               CL_SUCCESS);
  for (size_t z = 0; z < 2; z++)
    for (size_t y = 0; y < 3; y++)
      for (size_t x = 0; x < 5; x++)
        cr_assert_eq(got[z * W * H + (y + 2) * W + x + 9], box[z * 15 + y * 5 + x]);
  /* Overlapping boxes in one buffer, and mismatched pitches. */
  const size_t near[3] = {5, 1, 2};
  cr_assert_eq(D->clEnqueueCopyBufferRect(q, m, m, bo, near, region, W, W * H, W, W * H, 0,
                                          NULL, NULL),
               CL_MEM_COPY_OVERLAP);
  cr_assert_eq(D->clEnqueueCopyBufferRect(q, m, m, bo, to, region, W, W * H, 2 * W, 2 * W * H,
                                          0, NULL, NULL),
               CL_INVALID_VALUE);
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_queue, buffer_map_and_unmap)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  unsigned char src[N], got[N];
  fill_bytes(src, N, 17);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, N, src);
  cl_int err = -1;
  cl_event e = NULL;
  unsigned char *p = D->clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 64, 64, 0,
                                           NULL, &e, &err);
  cr_assert_eq(err, CL_SUCCESS, "clEnqueueMapBuffer: %d", err);
  cr_assert_not_null(p);
  cr_assert_eq(type_of(e), CL_COMMAND_MAP_BUFFER);
  D->clReleaseEvent(e);
  cl_uint maps = 0;
  cr_assert_eq(D->clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof maps, &maps, NULL),
               CL_SUCCESS);
  cr_assert_eq(maps, 1);
  cr_assert_arr_eq(p, src + 64, 64);
  memset(p, 0x5a, 64);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, m, p, 0, NULL, &e), CL_SUCCESS);
  cr_assert_eq(type_of(e), CL_COMMAND_UNMAP_MEM_OBJECT);
  D->clReleaseEvent(e);
  cr_assert_eq(D->clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof maps, &maps, NULL),
               CL_SUCCESS);
  cr_assert_eq(maps, 0);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, N, got, 0, NULL, NULL), CL_SUCCESS);
  memset(src + 64, 0x5a, 64);
  cr_assert_arr_eq(got, src, N);
  /* A non-blocking map: the pointer is usable once its event completes. */
  p = D->clEnqueueMapBuffer(q, m, CL_FALSE, CL_MAP_READ, 0, N, 0, NULL, &e, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(D->clWaitForEvents(1, &e), CL_SUCCESS);
  cr_assert_arr_eq(p, src, N);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, m, p, 1, &e, NULL), CL_SUCCESS);
  D->clReleaseEvent(e);
  /* Bad maps. */
  cr_assert_null(D->clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ, 0, 0, 0, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "size 0");
  cr_assert_null(D->clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ, 8, N, 0, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "out of bounds");
  cr_assert_null(D->clEnqueueMapBuffer(q, m, CL_TRUE,
                                       CL_MAP_WRITE_INVALIDATE_REGION | CL_MAP_READ, 0, N, 0,
                                       NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "invalidate with read");
  cr_assert_null(D->clEnqueueMapBuffer(q, m, CL_TRUE, 1 << 7, 0, N, 0, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "unknown flag");
  cl_mem ro = make_buffer(ctx, CL_MEM_HOST_READ_ONLY, N, NULL);
  cr_assert_null(D->clEnqueueMapBuffer(q, ro, CL_TRUE, CL_MAP_WRITE, 0, N, 0, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_OPERATION);
  cr_assert_null(D->clEnqueueMapBuffer(NULL, m, CL_TRUE, CL_MAP_READ, 0, N, 0, NULL, NULL,
                                       &err));
  cr_assert_eq(err, CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, m, NULL, 0, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, (cl_mem)q, src, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  D->clReleaseMemObject(ro);
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

static cl_uint map_count(cl_mem m)
{
  cl_uint maps = 99;
  cr_assert_eq(D->clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof maps, &maps, NULL), CL_SUCCESS);
  return maps;
}

/* CL_MEM_MAP_COUNT is the number of mappings not unmapped: an unmap of a
 * pointer that is no mapping (or no longer one) is refused when it is
 * enqueued, held back or not, and counts nothing; an unmap that never ran
 * (its user event failed) leaves its mapping in place. */
/* A non-blocking map that has to wait for a user event (its own wait list
 * names a command held for it, or only the queue's order holds it) returns
 * a pointer at once, as OpenCL's does; the data is there once the map's
 * event completed, and what is written through a map for writing reaches
 * the buffer at the unmap. A CL_MEM_USE_HOST_PTR buffer's map points into
 * the application's memory. */
Test(fe_queue, a_non_blocking_map_held_for_a_user_event_returns_its_pointer)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  unsigned char want_a[N], init_b[N], new_b[N], host_c[N], got[N];
  fill_bytes(want_a, N, 1);
  fill_bytes(init_b, N, 2);
  fill_bytes(new_b, N, 3);
  fill_bytes(host_c, N, 4);
  cl_mem a = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  cl_mem b = make_buffer(ctx, CL_MEM_READ_WRITE, N, init_b);
  cl_int err = -1;
  cl_mem c = D->clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, N, host_c, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cl_event u = D->clCreateUserEvent(ctx, &err), wev = NULL, aev = NULL, bev = NULL, cev = NULL;
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(D->clEnqueueWriteBuffer(q, a, CL_FALSE, 0, N, want_a, 1, &u, &wev), CL_SUCCESS);
  unsigned char *pa = D->clEnqueueMapBuffer(q, a, CL_FALSE, CL_MAP_READ, 0, N, 1, &wev, &aev,
                                            &err);
  cr_assert_eq(err, CL_SUCCESS, "a map after the held write: %d", err);
  cr_assert_not_null(pa);
  unsigned char *pb = D->clEnqueueMapBuffer(q, b, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0, N, 0,
                                            NULL, &bev, &err);
  cr_assert_eq(err, CL_SUCCESS, "a map held by the queue's order only: %d", err);
  cr_assert_not_null(pb);
  unsigned char *pc = D->clEnqueueMapBuffer(q, c, CL_FALSE, CL_MAP_READ, 16, 32, 0, NULL, &cev,
                                            &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(pc, host_c + 16, "a CL_MEM_USE_HOST_PTR buffer's map is in its host memory");
  cl_uint maps = 0;
  cr_assert_eq(D->clGetMemObjectInfo(a, CL_MEM_MAP_COUNT, sizeof maps, &maps, NULL),
               CL_SUCCESS);
  cr_assert_eq(maps, 1);
  cr_assert_eq(status_of(aev), CL_QUEUED, "the map waits for the user event");
  cr_assert_eq(type_of(aev), CL_COMMAND_MAP_BUFFER);

  cr_assert_eq(D->clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  cr_assert_eq(D->clWaitForEvents(1, &aev), CL_SUCCESS);
  cr_assert_arr_eq(pa, want_a, N, "the held write's data, through the map");
  cr_assert_eq(D->clWaitForEvents(1, &bev), CL_SUCCESS);
  cr_assert_arr_eq(pb, init_b, N);
  cr_assert_eq(D->clWaitForEvents(1, &cev), CL_SUCCESS);
  memcpy(pb, new_b, N);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, b, pb, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, a, pa, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, c, pc, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadBuffer(q, b, CL_TRUE, 0, N, got, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_arr_eq(got, new_b, N, "written through the map, back at the unmap");
  cr_assert_eq(D->clGetMemObjectInfo(a, CL_MEM_MAP_COUNT, sizeof maps, &maps, NULL),
               CL_SUCCESS);
  cr_assert_eq(maps, 0);
  cl_event evs[] = {u, wev, aev, bev, cev};
  for (int i = 0; i < 5; i++)
    D->clReleaseEvent(evs[i]);
  D->clReleaseMemObject(a);
  D->clReleaseMemObject(b);
  D->clReleaseMemObject(c);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

/* An out-of-order queue orders its commands by their wait lists (and its
 * barriers) alone: a command held back for a user event holds back only
 * what follows it. The front end held every later command of the queue
 * behind it, as an in-order queue's: a thread that waited for its own
 * command, which waits for nothing, before another thread completed the
 * user event waited forever (PoCL runs it at once). */
struct own_wait {
  cl_event ev;
  atomic_int done; /* 1 complete, -1 failed */
};

static void *wait_for_own(void *p)
{
  struct own_wait *w = p;
  atomic_store(&w->done, D->clWaitForEvents(1, &w->ev) == CL_SUCCESS ? 1 : -1);
  return NULL;
}

Test(fe_queue, an_out_of_order_queue_holds_back_only_what_follows_a_user_event)
{
  cl_command_queue_properties offered = 0;
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, sizeof offered,
                                  &offered, NULL),
               CL_SUCCESS);
  if (!(offered & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
    cr_skip_test("the device has no out-of-order queues");
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  cl_mem a = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  cl_mem b = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  cl_int err = -1;
  cl_event u = D->clCreateUserEvent(ctx, &err), held, own, bar, after;
  cr_assert_eq(err, CL_SUCCESS);
  const int one = 1, two = 2, three = 3;
  cr_assert_eq(D->clEnqueueFillBuffer(q, a, &one, 4, 0, N, 1, &u, &held), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueFillBuffer(q, b, &two, 4, 0, N, 0, NULL, &own), CL_SUCCESS);
  cr_assert_eq(D->clFlush(q), CL_SUCCESS);
  struct own_wait w = {own, 0};
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, wait_for_own, &w), 0);
  struct timespec ms = {0, 1000000};
  for (int i = 0; i < 5000 && !atomic_load(&w.done); i++)
    nanosleep(&ms, NULL);
  const int done = atomic_load(&w.done);
  /* A barrier waits for the held command, and what follows it waits too. */
  cr_assert_eq(D->clEnqueueBarrierWithWaitList(q, 0, NULL, &bar), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueFillBuffer(q, a, &three, 4, 0, N, 0, NULL, &after), CL_SUCCESS);
  const cl_int bar_status = status_of(bar), after_status = status_of(after);
  cr_assert_eq(D->clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  pthread_join(t, NULL);
  cr_assert_eq(done, 1, "the command that waits for nothing did not run before the user "
                        "event completed (%d)", done);
  cr_assert_eq(bar_status, CL_QUEUED);
  cr_assert_eq(after_status, CL_QUEUED);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  int got[N / 4];
  cr_assert_eq(D->clEnqueueReadBuffer(q, a, CL_TRUE, 0, N, got, 0, NULL, NULL), CL_SUCCESS);
  for (int i = 0; i < N / 4; i++)
    cr_assert_eq(got[i], 3, "int %d: the fill after the barrier ran after the held one", i);
  cl_event evs[] = {u, held, own, bar, after};
  for (int i = 0; i < 5; i++)
    D->clReleaseEvent(evs[i]);
  D->clReleaseMemObject(a);
  D->clReleaseMemObject(b);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_queue, map_count_follows_maps_and_unmaps)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  unsigned char host[N];
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  cl_int err = -1;
  unsigned char *p1 = D->clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_WRITE, 0, 64, 0, NULL, NULL,
                                            &err);
  cr_assert_eq(err, CL_SUCCESS);
  unsigned char *p2 = D->clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_WRITE, 64, 64, 0, NULL, NULL,
                                            &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(map_count(m), 2);
  cl_event u = D->clCreateUserEvent(ctx, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, m, host, 1, &u, NULL), CL_INVALID_VALUE,
               "a held unmap of a pointer that is no mapping");
  cr_assert_eq(map_count(m), 2);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, m, p1, 1, &u, NULL), CL_SUCCESS);
  cr_assert_eq(map_count(m), 1);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, m, p1, 1, &u, NULL), CL_INVALID_VALUE,
               "a second unmap of one mapping");
  cr_assert_eq(map_count(m), 1);
  /* The held unmap fails with its user event: p1 is mapped still. */
  cr_assert_eq(D->clSetUserEventStatus(u, -7), CL_SUCCESS);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  cr_assert_eq(map_count(m), 2);
  memset(p1, 0x31, 64);
  memset(p2, 0x32, 64);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, m, p1, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, m, p2, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(map_count(m), 0);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, m, p2, 0, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(map_count(m), 0, "never below zero");
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, 128, host, 0, NULL, NULL), CL_SUCCESS);
  for (int i = 0; i < 128; i++)
    cr_assert_eq(host[i], i < 64 ? 0x31 : 0x32, "byte %d", i);
  D->clReleaseEvent(u);

  /* The same for an image, whose maps the front end stages. */
  cl_bool images = CL_FALSE;
  D->clGetDeviceInfo(fe_dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
  if (images) {
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 4,
                          .image_height = 4};
    cl_mem img = D->clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    cr_assert_eq(err, CL_SUCCESS);
    const size_t o[3] = {0, 0, 0}, r[3] = {4, 4, 1};
    size_t rp = 0;
    unsigned char *ip = D->clEnqueueMapImage(q, img, CL_TRUE, CL_MAP_WRITE, o, r, &rp, NULL, 0,
                                             NULL, NULL, &err);
    cr_assert_eq(err, CL_SUCCESS);
    cr_assert_eq(map_count(img), 1);
    u = D->clCreateUserEvent(ctx, &err);
    cr_assert_eq(D->clEnqueueUnmapMemObject(q, img, p1, 1, &u, NULL), CL_INVALID_VALUE);
    cr_assert_eq(D->clEnqueueUnmapMemObject(q, img, ip, 1, &u, NULL), CL_SUCCESS);
    cr_assert_eq(map_count(img), 0);
    cr_assert_eq(D->clSetUserEventStatus(u, -7), CL_SUCCESS);
    cr_assert_eq(D->clFinish(q), CL_SUCCESS);
    cr_assert_eq(map_count(img), 1, "its unmap never ran");
    cr_assert_eq(D->clEnqueueUnmapMemObject(q, img, ip, 0, NULL, NULL), CL_SUCCESS);
    cr_assert_eq(map_count(img), 0);
    cr_assert_eq(D->clEnqueueUnmapMemObject(q, img, ip, 0, NULL, NULL), CL_INVALID_VALUE);
    cr_assert_eq(map_count(img), 0);
    D->clReleaseEvent(u);
    D->clReleaseMemObject(img);
  }
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_queue, buffer_bad_input)
{
  cl_context ctx = fe_context(), other = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  unsigned char host[N];
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  cl_mem foreign = make_buffer(other, CL_MEM_READ_WRITE, N, NULL);
  cl_mem wo = make_buffer(ctx, CL_MEM_HOST_WRITE_ONLY, N, NULL);
  cl_mem none = make_buffer(ctx, CL_MEM_HOST_NO_ACCESS, N, NULL);
  cl_command_queue wrong_q = (cl_command_queue)m;
  cl_mem wrong_m = (cl_mem)q;

  cr_assert_eq(D->clEnqueueReadBuffer(wrong_q, m, CL_TRUE, 0, N, host, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(D->clEnqueueReadBuffer(q, wrong_m, CL_TRUE, 0, N, host, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clEnqueueReadBuffer(q, NULL, CL_TRUE, 0, N, host, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clEnqueueReadBuffer(q, foreign, CL_TRUE, 0, N, host, 0, NULL, NULL),
               CL_INVALID_CONTEXT);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 1, N, host, 0, NULL, NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, SIZE_MAX, 2, host, 0, NULL, NULL),
               CL_INVALID_VALUE, "offset + size wraps");
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, N, NULL, 0, NULL, NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueReadBuffer(q, wo, CL_TRUE, 0, N, host, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  cr_assert_eq(D->clEnqueueWriteBuffer(q, none, CL_TRUE, 0, N, host, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  cr_assert_eq(D->clEnqueueWriteBuffer(q, m, CL_TRUE, N, 1, host, 0, NULL, NULL),
               CL_INVALID_VALUE);
  /* Wait lists. */
  cl_event ev = NULL, fev = NULL;
  cl_int err;
  cr_assert_eq(D->clEnqueueMarkerWithWaitList(q, 0, NULL, &ev), CL_SUCCESS);
  cl_command_queue oq = make_queue(other, 0);
  cr_assert_eq(D->clEnqueueMarkerWithWaitList(oq, 0, NULL, &fev), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, N, host, 1, NULL, NULL),
               CL_INVALID_EVENT_WAIT_LIST);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, N, host, 0, &ev, NULL),
               CL_INVALID_EVENT_WAIT_LIST);
  cl_event not_event = (cl_event)m;
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, N, host, 1, &not_event, NULL),
               CL_INVALID_EVENT_WAIT_LIST);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, N, host, 1, &fev, NULL),
               CL_INVALID_CONTEXT);
  /* Copies and fills. */
  cr_assert_eq(D->clEnqueueCopyBuffer(q, m, foreign, 0, 0, 4, 0, NULL, NULL),
               CL_INVALID_CONTEXT);
  cr_assert_eq(D->clEnqueueCopyBuffer(q, m, wrong_m, 0, 0, 4, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clEnqueueCopyBuffer(q, m, wo, N - 3, 0, 4, 0, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueCopyBuffer(q, m, wo, 0, N - 3, 4, 0, NULL, NULL), CL_INVALID_VALUE);
  int pat = 7;
  cr_assert_eq(D->clEnqueueFillBuffer(q, m, NULL, 4, 0, N, 0, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueFillBuffer(q, m, &pat, 3, 0, 6, 0, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueFillBuffer(q, m, &pat, 0, 0, N, 0, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueFillBuffer(q, m, &pat, 256, 0, N, 0, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueFillBuffer(q, m, &pat, 4, 2, 8, 0, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueFillBuffer(q, m, &pat, 4, 0, 6, 0, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueFillBuffer(q, m, &pat, 4, N - 4, 8, 0, NULL, NULL),
               CL_INVALID_VALUE);
  /* Rectangles. */
  const size_t o[3] = {0, 0, 0}, reg[3] = {4, 4, 1}, zero_reg[3] = {4, 0, 1};
  const size_t too_far[3] = {0, 15, 0};
  cr_assert_eq(D->clEnqueueReadBufferRect(q, m, CL_TRUE, NULL, o, reg, 16, 0, 0, 0, host, 0,
                                          NULL, NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueReadBufferRect(q, m, CL_TRUE, o, o, zero_reg, 16, 0, 0, 0, host, 0,
                                          NULL, NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueReadBufferRect(q, m, CL_TRUE, o, o, reg, 2, 0, 0, 0, host, 0, NULL,
                                          NULL),
               CL_INVALID_VALUE, "row pitch below the width");
  cr_assert_eq(D->clEnqueueReadBufferRect(q, m, CL_TRUE, o, o, reg, 16, 66, 0, 0, host, 0,
                                          NULL, NULL),
               CL_INVALID_VALUE, "slice pitch not a multiple of the row pitch");
  cr_assert_eq(D->clEnqueueReadBufferRect(q, m, CL_TRUE, o, o, reg, 0, 0, 0, 8, host, 0, NULL,
                                          NULL),
               CL_INVALID_VALUE, "host slice pitch below height * row pitch");
  cr_assert_eq(D->clEnqueueReadBufferRect(q, m, CL_TRUE, too_far, o, reg, 16, 0, 0, 0, host,
                                          0, NULL, NULL),
               CL_INVALID_VALUE, "out of the buffer");
  cr_assert_eq(D->clEnqueueReadBufferRect(q, m, CL_TRUE, o, o, reg, 16, 0, 0, 0, NULL, 0, NULL,
                                          NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueWriteBufferRect(q, none, CL_TRUE, o, o, reg, 16, 0, 0, 0, host, 0,
                                           NULL, NULL),
               CL_INVALID_OPERATION);
  cr_assert_eq(D->clEnqueueCopyBufferRect(q, m, foreign, o, o, reg, 16, 0, 16, 0, 0, NULL,
                                          NULL),
               CL_INVALID_CONTEXT);
  cr_assert_eq(D->clEnqueueCopyBufferRect(q, m, wo, o, too_far, reg, 16, 0, 16, 0, 0, NULL,
                                          NULL),
               CL_INVALID_VALUE);
  /* Images are not buffers. */
  cl_bool images = CL_FALSE;
  D->clGetDeviceInfo(fe_dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
  if (images) {
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 4,
                          .image_height = 4};
    cl_mem img = D->clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    if (err == CL_SUCCESS) {
      cr_assert_eq(D->clEnqueueReadBuffer(q, img, CL_TRUE, 0, 16, host, 0, NULL, NULL),
                   CL_INVALID_MEM_OBJECT);
      cr_assert_eq(D->clEnqueueFillBuffer(q, img, &pat, 4, 0, 16, 0, NULL, NULL),
                   CL_INVALID_MEM_OBJECT);
      cr_assert_eq(D->clEnqueueCopyBuffer(q, m, img, 0, 0, 16, 0, NULL, NULL),
                   CL_INVALID_MEM_OBJECT);
      cr_assert_null(
          D->clEnqueueMapBuffer(q, img, CL_TRUE, CL_MAP_READ, 0, 16, 0, NULL, NULL, &err));
      cr_assert_eq(err, CL_INVALID_MEM_OBJECT);
      D->clReleaseMemObject(img);
    }
  }
  /* Migration. */
  cl_mem mems[2] = {m, foreign};
  cr_assert_eq(D->clEnqueueMigrateMemObjects(q, 0, mems, 0, 0, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueMigrateMemObjects(q, 1, NULL, 0, 0, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueMigrateMemObjects(q, 2, mems, 0, 0, NULL, NULL), CL_INVALID_CONTEXT);
  cr_assert_eq(D->clEnqueueMigrateMemObjects(q, 1, &wrong_m, 0, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clEnqueueMigrateMemObjects(q, 1, mems, 1 << 5, 0, NULL, NULL),
               CL_INVALID_VALUE);
  /* Markers, barriers and the 1.1 wait. */
  cr_assert_eq(D->clEnqueueMarker(q, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueMarker(wrong_q, &ev), CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(D->clEnqueueBarrier(wrong_q), CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(D->clEnqueueBarrierWithWaitList(q, 1, NULL, NULL), CL_INVALID_EVENT_WAIT_LIST);
  cr_assert_eq(D->clEnqueueMarkerWithWaitList(q, 1, &fev, NULL), CL_INVALID_CONTEXT);
  cr_assert_eq(D->clEnqueueWaitForEvents(q, 0, &ev), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueWaitForEvents(q, 1, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueWaitForEvents(q, 1, &not_event), CL_INVALID_EVENT);
  cr_assert_eq(D->clEnqueueWaitForEvents(q, 1, &fev), CL_INVALID_CONTEXT);
  /* Native kernels are not offered. */
  cr_assert_eq(D->clEnqueueNativeKernel(q, NULL, NULL, 0, 0, NULL, NULL, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  cr_assert_eq(D->clEnqueueNativeKernel(wrong_q, NULL, NULL, 0, 0, NULL, NULL, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  D->clReleaseEvent(ev);
  D->clReleaseEvent(fev);
  D->clReleaseMemObject(m);
  D->clReleaseMemObject(foreign);
  D->clReleaseMemObject(wo);
  D->clReleaseMemObject(none);
  D->clReleaseCommandQueue(q);
  D->clReleaseCommandQueue(oq);
  D->clReleaseContext(ctx);
  D->clReleaseContext(other);
}

/* A buffer the application released is no longer a valid memory object to
 * it while only a held command keeps the buffer itself alive. */
Test(fe_queue, a_released_buffer_only_a_held_command_keeps_is_invalid)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  unsigned char host[N] = {0};
  cl_mem keep = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  cl_int err = -1;
  unsigned char *p = D->clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ, 0, 16, 0, NULL, NULL,
                                           &err);
  cr_assert_eq(err, CL_SUCCESS);
  cl_event u = D->clCreateUserEvent(ctx, &err);
  cr_assert_eq(err, CL_SUCCESS);
  int pat = 1;
  cr_assert_eq(D->clEnqueueFillBuffer(q, m, &pat, 4, 0, 16, 1, &u, NULL), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(m), CL_SUCCESS);
  const size_t o[3] = {0, 0, 0}, reg[3] = {4, 4, 1};
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, 16, host, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clEnqueueWriteBuffer(q, m, CL_TRUE, 0, 16, host, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clEnqueueReadBufferRect(q, m, CL_TRUE, o, o, reg, 16, 0, 0, 0, host, 0,
                                          NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clEnqueueWriteBufferRect(q, m, CL_TRUE, o, o, reg, 16, 0, 0, 0, host, 0,
                                           NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clEnqueueCopyBuffer(q, m, keep, 0, 0, 16, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clEnqueueCopyBuffer(q, keep, m, 0, 0, 16, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clEnqueueCopyBufferRect(q, keep, m, o, o, reg, 16, 0, 16, 0, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clEnqueueFillBuffer(q, m, &pat, 4, 0, 16, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_null(D->clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ, 0, 16, 0, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, m, p, 0, NULL, NULL), CL_INVALID_MEM_OBJECT);
  cl_mem both[2] = {keep, m};
  cr_assert_eq(D->clEnqueueMigrateMemObjects(q, 2, both, 0, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cl_uint refs = 0;
  cr_assert_eq(D->clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clRetainMemObject(m), CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clReleaseMemObject(m), CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  D->clReleaseEvent(u);
  D->clReleaseMemObject(keep);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

/* A buffer the application released stays a memory object while a
 * sub-buffer made from it lives, as on OpenCL implementations: the handle
 * CL_MEM_ASSOCIATED_MEMOBJECT gives back answers, takes commands (here after
 * a kernel wrote through the sub-buffer, the program and context released
 * too) and may be retained again; the application cannot release a
 * reference it does not hold. */
Test(fe_queue, a_released_buffer_works_while_its_sub_buffer_lives)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  unsigned char init[N], host[N];
  fill_bytes(init, N, 11);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, N, init);
  cl_buffer_region r = {0, N / 2};
  cl_int err = -1;
  cl_mem sub = D->clCreateSubBuffer(m, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cl_program prog = build_vadd(ctx);
  cl_kernel k = make_kernel(prog, "setk");
  cr_assert_eq(D->clReleaseProgram(prog), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(m), CL_SUCCESS);
  cr_assert_eq(D->clReleaseContext(ctx), CL_SUCCESS);
  cl_int k7 = 7;
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof sub, &sub), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof k7, &k7), CL_SUCCESS);
  size_t global = N / 2 / sizeof(cl_int);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL),
               CL_SUCCESS);

  cl_mem parent = NULL;
  cr_assert_eq(D->clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent,
                                     NULL),
               CL_SUCCESS);
  cr_assert_eq(parent, m);
  size_t size = 0;
  cl_uint refs = 99;
  cr_assert_eq(D->clGetMemObjectInfo(parent, CL_MEM_SIZE, sizeof size, &size, NULL),
               CL_SUCCESS);
  cr_assert_eq(size, N);
  cr_assert_eq(D->clGetMemObjectInfo(parent, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_SUCCESS);
  cr_assert_eq(refs, 0, "the application holds none");
  cr_assert_eq(D->clEnqueueReadBuffer(q, parent, CL_TRUE, 0, N, host, 0, NULL, NULL),
               CL_SUCCESS);
  for (size_t i = 0; i < N / 2; i += sizeof(cl_int)) {
    cl_int v;
    memcpy(&v, host + i, sizeof v);
    cr_assert_eq(v, 7, "byte %zu: the kernel's value through the parent", i);
  }
  cr_assert_arr_eq(host + N / 2, init + N / 2, N / 2, "the rest as created");
  int pat = 0x01020304;
  cr_assert_eq(D->clEnqueueFillBuffer(q, parent, &pat, sizeof pat, N / 2, N / 2, 0, NULL, NULL),
               CL_SUCCESS);
  unsigned char *p = D->clEnqueueMapBuffer(q, parent, CL_TRUE, CL_MAP_READ, N / 2, 4, 0, NULL,
                                           NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(memcmp(p, &pat, 4), 0);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, parent, p, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof parent, &parent), CL_SUCCESS);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);

  cr_assert_eq(D->clReleaseMemObject(parent), CL_INVALID_MEM_OBJECT,
               "the sub-buffer's reference is not the application's");
  cr_assert_eq(D->clRetainMemObject(parent), CL_SUCCESS);
  cr_assert_eq(D->clGetMemObjectInfo(parent, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_SUCCESS);
  cr_assert_eq(refs, 1);
  cr_assert_eq(D->clReleaseMemObject(parent), CL_SUCCESS);
  cr_assert_eq(D->clReleaseKernel(k), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(sub), CL_SUCCESS);
  cr_assert_eq(D->clReleaseCommandQueue(q), CL_SUCCESS);
}

/* ---- Ordering and events ---------------------------------------------------- */

Test(fe_queue, markers_barriers_and_migrations)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  cl_event w = NULL, mk = NULL, mk2 = NULL, b = NULL, mig = NULL;
  unsigned char src[N];
  fill_bytes(src, N, 1);
  cr_assert_eq(D->clEnqueueWriteBuffer(q, m, CL_FALSE, 0, N, src, 0, NULL, &w), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueMarkerWithWaitList(q, 1, &w, &mk), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueMarker(q, &mk2), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueBarrierWithWaitList(q, 1, &mk, &b), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueBarrier(q), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueWaitForEvents(q, 1, &b), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueMigrateMemObjects(q, 1, &m, CL_MIGRATE_MEM_OBJECT_HOST, 1, &b, &mig),
               CL_SUCCESS);
  cr_assert_eq(D->clEnqueueMigrateMemObjects(q, 1, &m, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED,
                                             0, NULL, NULL),
               CL_SUCCESS);
  cl_event all[] = {w, mk, mk2, b, mig};
  cr_assert_eq(D->clWaitForEvents(5, all), CL_SUCCESS);
  cr_assert_eq(type_of(mk), CL_COMMAND_MARKER);
  cr_assert_eq(type_of(mk2), CL_COMMAND_MARKER);
  cr_assert_eq(type_of(b), CL_COMMAND_BARRIER);
  cr_assert_eq(type_of(mig), CL_COMMAND_MIGRATE_MEM_OBJECTS);
  for (int i = 0; i < 5; i++)
    cr_assert_eq(status_of(all[i]), CL_COMPLETE);
  /* Reference counts are the driver's (it may hold some itself). */
  cl_uint refs = 0, refs2 = 0;
  cr_assert_eq(D->clGetEventInfo(mk, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_SUCCESS);
  cr_assert_geq(refs, 1);
  cr_assert_eq(D->clRetainEvent(mk), CL_SUCCESS);
  D->clGetEventInfo(mk, CL_EVENT_REFERENCE_COUNT, sizeof refs2, &refs2, NULL);
  cr_assert_eq(refs2, refs + 1);
  cr_assert_eq(D->clReleaseEvent(mk), CL_SUCCESS);
  /* The migration kept the contents. */
  unsigned char got[N];
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, N, got, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_arr_eq(got, src, N);
  for (int i = 0; i < 5; i++)
    cr_assert_eq(D->clReleaseEvent(all[i]), CL_SUCCESS);
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_queue, profiling_timestamps_are_ordered)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, CL_QUEUE_PROFILING_ENABLE);
  cl_command_queue plain = make_queue(ctx, 0);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, 1 << 20, NULL);
  int pat = 3;
  cl_event e = NULL, e2 = NULL;
  cr_assert_eq(D->clEnqueueFillBuffer(q, m, &pat, 4, 0, 1 << 20, 0, NULL, &e), CL_SUCCESS);
  cr_assert_eq(D->clWaitForEvents(1, &e), CL_SUCCESS);
  cl_ulong t[5] = {0};
  for (int i = 0; i < 5; i++)
    cr_assert_eq(D->clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_QUEUED + (cl_uint)i,
                                            sizeof t[i], &t[i], NULL),
                 CL_SUCCESS, "query %d", i);
  cr_assert_leq(t[0], t[1]);
  cr_assert_leq(t[1], t[2]);
  cr_assert_leq(t[2], t[3]);
  cr_assert_eq(t[4], t[3], "no child commands: complete is end");
  cr_assert_gt(t[3], 0);
  cl_ulong v;
  cr_assert_eq(D->clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, 4, &v, NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clGetEventProfilingInfo(e, 0x7777, sizeof v, &v, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clGetEventProfilingInfo(NULL, CL_PROFILING_COMMAND_END, sizeof v, &v, NULL),
               CL_INVALID_EVENT);
  /* Not available without profiling, or for user events. */
  cr_assert_eq(D->clEnqueueFillBuffer(plain, m, &pat, 4, 0, 64, 0, NULL, &e2), CL_SUCCESS);
  cr_assert_eq(D->clWaitForEvents(1, &e2), CL_SUCCESS);
  cr_assert_eq(D->clGetEventProfilingInfo(e2, CL_PROFILING_COMMAND_END, sizeof v, &v, NULL),
               CL_PROFILING_INFO_NOT_AVAILABLE);
  cl_int err = -1;
  cl_event u = D->clCreateUserEvent(ctx, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(D->clGetEventProfilingInfo(u, CL_PROFILING_COMMAND_END, sizeof v, &v, NULL),
               CL_PROFILING_INFO_NOT_AVAILABLE);
  cr_assert_eq(D->clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  cr_assert_eq(D->clGetEventProfilingInfo(u, CL_PROFILING_COMMAND_END, sizeof v, &v, NULL),
               CL_PROFILING_INFO_NOT_AVAILABLE);
  D->clReleaseEvent(u);
  D->clReleaseEvent(e);
  D->clReleaseEvent(e2);
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
  D->clReleaseCommandQueue(plain);
  D->clReleaseContext(ctx);
}

static atomic_int cb_calls;
static cl_event cb_seen[8];
static cl_int cb_status[8];
static void CL_CALLBACK on_event(cl_event e, cl_int status, void *user)
{
  int i = atomic_fetch_add(&cb_calls, 1);
  if (i < 8) {
    cb_seen[i] = e;
    cb_status[i] = status;
  }
  (void)user;
}

static void wait_calls(int n)
{
  for (int i = 0; i < 5000 && atomic_load(&cb_calls) < n; i++)
    sleep_ms(1);
  cr_assert_eq(atomic_load(&cb_calls), n, "%d callbacks, %d expected", atomic_load(&cb_calls),
               n);
}

Test(fe_queue, event_callbacks_get_the_applications_handle)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  int pat = 1;
  cl_event e = NULL;
  cr_assert_eq(D->clEnqueueFillBuffer(q, m, &pat, 4, 0, N, 0, NULL, &e), CL_SUCCESS);
  cr_assert_eq(D->clSetEventCallback(e, CL_COMPLETE, on_event, NULL), CL_SUCCESS);
  cr_assert_eq(D->clSetEventCallback(e, CL_SUBMITTED, on_event, NULL), CL_SUCCESS);
  /* The application may release the event before the callbacks ran. */
  cr_assert_eq(D->clReleaseEvent(e), CL_SUCCESS);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  wait_calls(2);
  cr_assert_eq(cb_seen[0], e);
  cr_assert_eq(cb_seen[1], e);
  cr_assert(cb_status[0] == CL_COMPLETE || cb_status[1] == CL_COMPLETE);
  cr_assert_eq(D->clSetEventCallback(NULL, CL_COMPLETE, on_event, NULL), CL_INVALID_EVENT);
  cl_event e2 = NULL;
  cr_assert_eq(D->clEnqueueMarker(q, &e2), CL_SUCCESS);
  cr_assert_eq(D->clSetEventCallback(e2, CL_COMPLETE, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clSetEventCallback(e2, CL_QUEUED, on_event, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clSetEventCallback(e2, -5, on_event, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  D->clReleaseEvent(e2);
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

/* ---- User events ------------------------------------------------------------ */

Test(fe_queue, user_events_hold_commands_in_queue_order)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  unsigned char zero[N] = {0}, src[N], got[N], got2[N];
  fill_bytes(src, N, 9);
  cr_assert_eq(D->clEnqueueWriteBuffer(q, m, CL_TRUE, 0, N, zero, 0, NULL, NULL), CL_SUCCESS);
  cl_int err = -1;
  cl_event u = D->clCreateUserEvent(ctx, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(status_of(u), CL_SUBMITTED);
  cr_assert_eq(type_of(u), CL_COMMAND_USER);
  cl_command_queue uq = (cl_command_queue)1;
  D->clGetEventInfo(u, CL_EVENT_COMMAND_QUEUE, sizeof uq, &uq, NULL);
  cr_assert_null(uq);
  cr_assert_eq(D->clSetEventCallback(u, CL_COMPLETE, on_event, NULL), CL_SUCCESS);
  wait_calls(0);
  /* A write held for the user event; a read behind it in the queue, and a
   * marker waiting for the write. */
  cl_event w = NULL, r = NULL, mk = NULL;
  cr_assert_eq(D->clEnqueueWriteBuffer(q, m, CL_FALSE, 0, N, src, 1, &u, &w), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_FALSE, 0, N, got, 0, NULL, &r), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueMarkerWithWaitList(q, 1, &w, &mk), CL_SUCCESS);
  cr_assert_eq(D->clSetEventCallback(w, CL_COMPLETE, on_event, NULL), CL_SUCCESS);
  sleep_ms(50);
  cr_assert_eq(status_of(w), CL_QUEUED);
  cr_assert_eq(status_of(r), CL_QUEUED);
  cr_assert_eq(type_of(w), CL_COMMAND_WRITE_BUFFER);
  cr_assert_eq(D->clGetEventProfilingInfo(w, CL_PROFILING_COMMAND_END, 8, got2, NULL),
               CL_PROFILING_INFO_NOT_AVAILABLE);
  cr_assert_eq(D->clRetainEvent(w), CL_SUCCESS, "retained while held");
  cl_uint refs = 0;
  D->clGetEventInfo(w, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL);
  cr_assert_eq(refs, 2);
  cr_assert_eq(atomic_load(&cb_calls), 0, "nothing ran yet");
  cr_assert_eq(D->clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  cr_assert_eq(D->clSetUserEventStatus(u, CL_COMPLETE), CL_INVALID_OPERATION, "set twice");
  cl_event all[] = {w, r, mk, u};
  cr_assert_eq(D->clWaitForEvents(4, all), CL_SUCCESS);
  cr_assert_arr_eq(got, src, N, "the read ran after the held write");
  cr_assert_eq(status_of(u), CL_COMPLETE);
  cr_assert_eq(status_of(w), CL_COMPLETE);
  wait_calls(2);
  cr_assert(cb_seen[0] == u || cb_seen[1] == u);
  cr_assert(cb_seen[0] == w || cb_seen[1] == w);
  cl_ulong t = 0;
  cr_assert_eq(D->clGetEventProfilingInfo(w, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL),
               CL_PROFILING_INFO_NOT_AVAILABLE, "the queue does not profile");
  D->clGetEventInfo(w, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL);
  cr_assert_geq(refs, 2, "the held retain reached PI");
  cr_assert_eq(D->clReleaseEvent(w), CL_SUCCESS);
  /* Now nothing waits: a blocking read goes straight through. */
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, N, got2, 1, &u, NULL), CL_SUCCESS);
  cr_assert_arr_eq(got2, src, N);
  for (int i = 0; i < 4; i++)
    cr_assert_eq(D->clReleaseEvent(all[i]), CL_SUCCESS);
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

/* The application flushes the queue of a command held for a user event, as
 * OpenCL asks before another queue waits for it; the front end issues the
 * command later, and must flush it then: rusticl runs only flushed commands,
 * so the other queue's copy waited forever (clFinish never returned). */
Test(fe_queue, a_held_command_another_queue_waits_for_is_flushed_when_issued)
{
  cl_context ctx = fe_context();
  cl_command_queue qa = make_queue(ctx, 0), qb = make_queue(ctx, 0);
  unsigned char zero[N] = {0}, src[N], got[N];
  fill_bytes(src, N, 21);
  cl_mem a = make_buffer(ctx, CL_MEM_READ_WRITE, N, zero);
  cl_mem b = make_buffer(ctx, CL_MEM_READ_WRITE, N, zero);
  cl_int err = -1;
  cl_event u = D->clCreateUserEvent(ctx, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cl_event w = NULL, c = NULL;
  cr_assert_eq(D->clEnqueueWriteBuffer(qa, a, CL_FALSE, 0, N, src, 1, &u, &w), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueCopyBuffer(qb, a, b, 0, 0, N, 1, &w, &c), CL_SUCCESS);
  cr_assert_eq(D->clFlush(qa), CL_SUCCESS);
  cr_assert_eq(D->clFlush(qb), CL_SUCCESS);
  cr_assert_eq(D->clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  /* Without the flush, clFinish(qb) never returned: the copy is looked at
   * for up to 20 s first (it takes well under a millisecond). */
  for (int waited = 0; waited < 20000 && status_of(c) != CL_COMPLETE; waited++)
    sleep_ms(1);
  cr_assert_eq(status_of(c), CL_COMPLETE, "the copy did not run in 20 s: the held write it waits "
               "for was issued unflushed (status %d)", status_of(c));
  cr_assert_eq(D->clFinish(qb), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadBuffer(qb, b, CL_TRUE, 0, N, got, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_arr_eq(got, src, N, "the copy read what the held write wrote");
  cr_assert_eq(D->clFinish(qa), CL_SUCCESS);
  cl_event all[] = {u, w, c};
  for (int i = 0; i < 3; i++)
    cr_assert_eq(D->clReleaseEvent(all[i]), CL_SUCCESS);
  D->clReleaseMemObject(a);
  D->clReleaseMemObject(b);
  D->clReleaseCommandQueue(qa);
  D->clReleaseCommandQueue(qb);
  D->clReleaseContext(ctx);
}

Test(fe_queue, a_failed_user_event_ends_its_dependents)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  unsigned char zero[N] = {0}, src[N], got[N];
  fill_bytes(src, N, 4);
  cr_assert_eq(D->clEnqueueWriteBuffer(q, m, CL_TRUE, 0, N, zero, 0, NULL, NULL), CL_SUCCESS);
  cl_int err = -1;
  cl_event u = D->clCreateUserEvent(ctx, &err);
  cl_event w = NULL, after = NULL;
  cr_assert_eq(D->clEnqueueWriteBuffer(q, m, CL_FALSE, 0, N, src, 1, &u, &w), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueMarkerWithWaitList(q, 1, &w, &after), CL_SUCCESS);
  cr_assert_eq(D->clSetEventCallback(w, CL_COMPLETE, on_event, NULL), CL_SUCCESS);
  cr_assert_eq(D->clSetUserEventStatus(u, -1234), CL_SUCCESS);
  cr_assert_eq(status_of(u), -1234);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  cr_assert_eq(status_of(w), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  cr_assert_eq(status_of(after), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  wait_calls(1);
  cr_assert_eq(cb_seen[0], w);
  cr_assert_eq(cb_status[0], CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  cr_assert_eq(D->clWaitForEvents(1, &w), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  cr_assert_eq(D->clWaitForEvents(1, &u), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, N, got, 1, &u, NULL),
               CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "blocking on a failed event");
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, N, got, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_arr_eq(got, zero, N, "the write never ran");
  D->clReleaseEvent(after);
  D->clReleaseEvent(w);
  D->clReleaseEvent(u);
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

struct setter {
  cl_event u;
  long delay_ms;
};

static void *set_later(void *arg)
{
  struct setter *s = arg;
  sleep_ms(s->delay_ms);
  D->clSetUserEventStatus(s->u, CL_COMPLETE);
  return NULL;
}

Test(fe_queue, user_events_released_by_another_thread)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  unsigned char src[N], got[N];
  fill_bytes(src, N, 21);
  cl_int err = -1;
  /* clWaitForEvents on a user event. */
  cl_event u = D->clCreateUserEvent(ctx, &err);
  struct setter s = {u, 100};
  pthread_t t;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_create(&t, NULL, set_later, &s);
  cr_assert_eq(D->clWaitForEvents(1, &u), CL_SUCCESS);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  pthread_join(t, NULL);
  long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
  cr_assert_geq(ms, 80, "the wait returned after %ld ms", ms);
  D->clReleaseEvent(u);
  /* A blocking write held for a user event, then a blocking map and a
   * clFinish, each released by the other thread. */
  u = D->clCreateUserEvent(ctx, &err);
  s.u = u;
  pthread_create(&t, NULL, set_later, &s);
  cr_assert_eq(D->clEnqueueWriteBuffer(q, m, CL_TRUE, 0, N, src, 1, &u, NULL), CL_SUCCESS);
  pthread_join(t, NULL);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, N, got, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_arr_eq(got, src, N);
  D->clReleaseEvent(u);
  u = D->clCreateUserEvent(ctx, &err);
  s.u = u;
  pthread_create(&t, NULL, set_later, &s);
  unsigned char *p = D->clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ, 0, N, 1, &u, NULL, &err);
  pthread_join(t, NULL);
  cr_assert_eq(err, CL_SUCCESS, "held blocking map: %d", err);
  cr_assert_arr_eq(p, src, N);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, m, p, 0, NULL, NULL), CL_SUCCESS);
  D->clReleaseEvent(u);
  u = D->clCreateUserEvent(ctx, &err);
  s.u = u;
  int pat = 0x01010101;
  cr_assert_eq(D->clEnqueueFillBuffer(q, m, &pat, 4, 0, N, 1, &u, NULL), CL_SUCCESS);
  pthread_create(&t, NULL, set_later, &s);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  pthread_join(t, NULL);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, N, got, 0, NULL, NULL), CL_SUCCESS);
  for (int i = 0; i < N; i++)
    cr_assert_eq(got[i], 1);
  /* A non-blocking map waiting for a user event returns its pointer at
   * once; the data is there once its event completed. */
  cl_event u2 = D->clCreateUserEvent(ctx, &err), mev = NULL;
  p = D->clEnqueueMapBuffer(q, m, CL_FALSE, CL_MAP_READ, 0, N, 1, &u2, &mev, &err);
  cr_assert_eq(err, CL_SUCCESS, "held non-blocking map: %d", err);
  cr_assert_not_null(p);
  D->clSetUserEventStatus(u2, CL_COMPLETE);
  cr_assert_eq(D->clWaitForEvents(1, &mev), CL_SUCCESS);
  for (int i = 0; i < N; i++)
    cr_assert_eq(p[i], 1);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, m, p, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  D->clReleaseEvent(mev);
  D->clReleaseEvent(u2);
  D->clReleaseEvent(u);
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

/* Threads that enqueue commands held for user events on one in-order
 * queue, and threads that complete those events, all at once: every command
 * runs, once, in its queue's order. */
enum { THREADS = 4, ROUNDS = 40 };
struct stress {
  cl_context ctx;
  cl_command_queue q;
  cl_mem m;
  int id;
  cl_event users[ROUNDS];
  atomic_int ready;
};

static void *stress_enqueue(void *arg)
{
  struct stress *s = arg;
  for (int r = 0; r < ROUNDS; r++) {
    cl_int err = -1;
    cl_event u = D->clCreateUserEvent(s->ctx, &err);
    int v = s->id * 1000 + r;
    cl_event w = NULL;
    /* Each thread owns one int of the buffer; the last write wins. */
    err |= D->clEnqueueFillBuffer(s->q, s->m, &v, sizeof v, (size_t)s->id * sizeof v, sizeof v,
                                  1, &u, &w);
    err |= D->clSetEventCallback(w, CL_COMPLETE, on_event, NULL);
    err |= D->clReleaseEvent(w);
    if (err != CL_SUCCESS)
      return (void *)1;
    s->users[r] = u;
    atomic_store(&s->ready, r + 1);
  }
  return NULL;
}

static void *stress_complete(void *arg)
{
  struct stress *s = arg;
  for (int r = 0; r < ROUNDS; r++) {
    while (atomic_load(&s->ready) <= r)
      sched_yield();
    if (D->clSetUserEventStatus(s->users[r], CL_COMPLETE) != CL_SUCCESS ||
        D->clReleaseEvent(s->users[r]) != CL_SUCCESS)
      return (void *)1;
  }
  return NULL;
}

Test(fe_queue, threads_holding_and_releasing_commands)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, THREADS * sizeof(int), NULL);
  struct stress s[THREADS];
  pthread_t enq[THREADS], done[THREADS];
  for (int i = 0; i < THREADS; i++) {
    s[i] = (struct stress){.ctx = ctx, .q = q, .m = m, .id = i};
    atomic_init(&s[i].ready, 0);
    pthread_create(&enq[i], NULL, stress_enqueue, &s[i]);
    pthread_create(&done[i], NULL, stress_complete, &s[i]);
  }
  for (int i = 0; i < THREADS; i++) {
    void *r1, *r2;
    pthread_join(enq[i], &r1);
    pthread_join(done[i], &r2);
    cr_assert_null(r1, "enqueue thread %d", i);
    cr_assert_null(r2, "completing thread %d", i);
  }
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  wait_calls(THREADS * ROUNDS);
  int got[THREADS];
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL),
               CL_SUCCESS);
  for (int i = 0; i < THREADS; i++)
    cr_assert_eq(got[i], i * 1000 + ROUNDS - 1, "int %d: %d", i, got[i]);
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_queue, user_event_and_wait_bad_input)
{
  cl_context ctx = fe_context(), other = fe_context();
  cl_int err = 0;
  cr_assert_null(D->clCreateUserEvent(NULL, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clCreateUserEvent((cl_context)fe_dev, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cl_event u = D->clCreateUserEvent(ctx, &err);
  cl_event v = D->clCreateUserEvent(other, &err);
  cr_assert_eq(D->clSetUserEventStatus(u, CL_RUNNING), CL_INVALID_VALUE);
  cr_assert_eq(D->clSetUserEventStatus(u, CL_SUBMITTED), CL_INVALID_VALUE);
  cr_assert_eq(D->clSetUserEventStatus(NULL, CL_COMPLETE), CL_INVALID_EVENT);
  cl_command_queue q = make_queue(ctx, 0);
  cl_event mk = NULL;
  cr_assert_eq(D->clEnqueueMarker(q, &mk), CL_SUCCESS);
  cr_assert_eq(D->clSetUserEventStatus(mk, CL_COMPLETE), CL_INVALID_EVENT,
               "not a user event");
  cl_event both[2] = {u, v};
  cr_assert_eq(D->clWaitForEvents(0, both), CL_INVALID_VALUE);
  cr_assert_eq(D->clWaitForEvents(1, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clWaitForEvents(2, both), CL_INVALID_CONTEXT);
  cl_event bad[2] = {u, (cl_event)q};
  cr_assert_eq(D->clWaitForEvents(2, bad), CL_INVALID_EVENT);
  cl_int s;
  cr_assert_eq(D->clGetEventInfo(NULL, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL),
               CL_INVALID_EVENT);
  cr_assert_eq(D->clGetEventInfo(u, 0x7777, sizeof s, &s, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clGetEventInfo(u, CL_EVENT_COMMAND_TYPE, 1, &s, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clRetainEvent((cl_event)q), CL_INVALID_EVENT);
  cr_assert_eq(D->clReleaseEvent(NULL), CL_INVALID_EVENT);
  cr_assert_eq(D->clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  cr_assert_eq(D->clSetUserEventStatus(v, -5), CL_SUCCESS);
  cr_assert_eq(D->clSetUserEventStatus(v, CL_COMPLETE), CL_INVALID_OPERATION);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  D->clReleaseEvent(mk);
  D->clReleaseEvent(u);
  D->clReleaseEvent(v);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
  D->clReleaseContext(other);
}

/* ---- Kernels ---------------------------------------------------------------- */

Test(fe_queue, ndrange_vadd_checked_on_the_host)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, CL_QUEUE_PROFILING_ENABLE);
  int a[N], b[N], c[N];
  for (int i = 0; i < N; i++) {
    a[i] = i;
    b[i] = 1000 - 3 * i;
    c[i] = -1;
  }
  cl_mem ma = make_buffer(ctx, CL_MEM_READ_ONLY, sizeof a, a);
  cl_mem mb = make_buffer(ctx, CL_MEM_READ_ONLY, sizeof b, b);
  cl_mem mc = make_buffer(ctx, CL_MEM_WRITE_ONLY, sizeof c, c);
  cl_program p = build_vadd(ctx);
  cl_kernel k = make_kernel(p, "vadd");
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof ma, &ma), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof mb, &mb), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 2, sizeof mc, &mc), CL_SUCCESS);
  /* The first half, then the second through an offset. */
  size_t half = N / 2, off = N / 2, local = 8;
  cl_event e1 = NULL, e2 = NULL;
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, NULL, &half, &local, 0, NULL, &e1),
               CL_SUCCESS);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, &off, &half, NULL, 1, &e1, &e2), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadBuffer(q, mc, CL_TRUE, 0, sizeof c, c, 1, &e2, NULL),
               CL_SUCCESS);
  for (int i = 0; i < N; i++)
    cr_assert_eq(c[i], a[i] + b[i], "c[%d] = %d", i, c[i]);
  cr_assert_eq(type_of(e1), CL_COMMAND_NDRANGE_KERNEL);
  cl_ulong start = 0, end = 0;
  cr_assert_eq(D->clGetEventProfilingInfo(e2, CL_PROFILING_COMMAND_START, sizeof start, &start,
                                          NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clGetEventProfilingInfo(e2, CL_PROFILING_COMMAND_END, sizeof end, &end,
                                          NULL),
               CL_SUCCESS);
  cr_assert_leq(start, end);
  /* A task: one work-item. */
  cl_kernel setk = make_kernel(p, "setk");
  int k42 = 42;
  cr_assert_eq(D->clSetKernelArg(setk, 0, sizeof mc, &mc), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(setk, 1, sizeof k42, &k42), CL_SUCCESS);
  cl_event te = NULL;
  cr_assert_eq(D->clEnqueueTask(q, setk, 0, NULL, &te), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadBuffer(q, mc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_eq(c[0], 42);
  cr_assert_eq(c[1], a[1] + b[1]);
  cr_assert_eq(type_of(te), CL_COMMAND_TASK);
  /* No work-items (OpenCL 2.1): nothing runs, the event completes. */
  size_t none = 0;
  cl_event ze = NULL;
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, setk, 1, NULL, &none, NULL, 0, NULL, &ze),
               CL_SUCCESS);
  cr_assert_eq(D->clWaitForEvents(1, &ze), CL_SUCCESS);
  cr_assert_eq(type_of(ze), CL_COMMAND_NDRANGE_KERNEL);
  cr_assert_eq(D->clEnqueueReadBuffer(q, mc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_eq(c[0], 42);
  cr_assert_eq(c[1], a[1] + b[1]);
  cl_event evs[] = {e1, e2, te, ze};
  for (int i = 0; i < 4; i++)
    D->clReleaseEvent(evs[i]);
  D->clReleaseKernel(setk);
  D->clReleaseKernel(k);
  D->clReleaseProgram(p);
  D->clReleaseMemObject(ma);
  D->clReleaseMemObject(mb);
  D->clReleaseMemObject(mc);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_queue, a_held_launch_keeps_the_arguments_it_was_enqueued_with)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  int c[N];
  cl_mem m1 = make_buffer(ctx, CL_MEM_READ_WRITE, sizeof c, NULL);
  cl_mem m2 = make_buffer(ctx, CL_MEM_READ_WRITE, sizeof c, NULL);
  cl_program p = build_vadd(ctx);
  cl_kernel k = make_kernel(p, "setk");
  cl_int err = -1;
  cl_event u = D->clCreateUserEvent(ctx, &err);
  size_t n = N;
  int v = 7;
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof m1, &m1), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof v, &v), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 1, &u, NULL), CL_SUCCESS);
  v = 9;
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof m2, &m2), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof v, &v), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m1, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL),
               CL_SUCCESS);
  for (int i = 0; i < N; i++)
    cr_assert_eq(c[i], 7, "m1[%d] = %d", i, c[i]);
  cr_assert_eq(D->clEnqueueReadBuffer(q, m2, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL),
               CL_SUCCESS);
  for (int i = 0; i < N; i++)
    cr_assert_eq(c[i], 9, "m2[%d] = %d", i, c[i]);
  D->clReleaseEvent(u);
  D->clReleaseKernel(k);
  D->clReleaseProgram(p);
  D->clReleaseMemObject(m1);
  D->clReleaseMemObject(m2);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

/* Destructor callbacks counted per buffer (the user pointer is the slot). */
static atomic_int freed[8];
static void CL_CALLBACK on_freed(cl_mem m, void *user)
{
  (void)m;
  atomic_fetch_add(&freed[(intptr_t)user], 1);
}

static cl_mem watched(cl_context ctx, int slot, const void *init)
{
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, N, init);
  atomic_store(&freed[slot], 0);
  cr_assert_eq(D->clSetMemObjectDestructorCallback(m, on_freed, (void *)(intptr_t)slot),
               CL_SUCCESS);
  return m;
}

/* OpenCL keeps a command's memory objects until it is done with them: the
 * application may release a buffer right after the enqueue. A command held
 * back for a user event must keep every buffer it uses, not only its PI
 * handle's number. */
Test(fe_queue, held_commands_keep_the_buffers_they_use)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  unsigned char a_src[N], b_src[N], got_a[N], got_f[N], got_r[N], want[N];
  fill_bytes(a_src, N, 3);
  fill_bytes(b_src, N, 5);
  cl_int err = -1;
  cl_event u = D->clCreateUserEvent(ctx, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cl_mem a = watched(ctx, 0, a_src), b = watched(ctx, 1, NULL), f = watched(ctx, 2, NULL);
  cl_mem r = watched(ctx, 3, NULL), mp = watched(ctx, 4, a_src);
  cl_mem c = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  cl_mem d = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  cl_mem e = make_buffer(ctx, CL_MEM_READ_WRITE, N, NULL);
  unsigned char *p = D->clEnqueueMapBuffer(q, mp, CL_TRUE, CL_MAP_WRITE, 0, N, 0, NULL, NULL,
                                           &err);
  cr_assert_eq(err, CL_SUCCESS);
  memset(p, 0x77, N);
  /* All wait for u: a write, copies, a rectangle copy, a fill, reads and an
   * unmap, each of a buffer the application releases before u completes. */
  const size_t o[3] = {0, 0, 0}, reg[3] = {16, N / 16, 1};
  int pat = 0x0badf00d;
  cr_assert_eq(D->clEnqueueWriteBuffer(q, b, CL_FALSE, 0, N, b_src, 1, &u, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueCopyBuffer(q, b, c, 0, 0, N, 1, &u, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueCopyBufferRect(q, a, d, o, o, reg, 16, N, 16, N, 1, &u, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clEnqueueFillBuffer(q, f, &pat, sizeof pat, 0, N, 1, &u, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadBuffer(q, f, CL_FALSE, 0, N, got_f, 1, &u, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadBufferRect(q, a, CL_FALSE, o, o, reg, 16, N, 16, N, got_a, 1,
                                          &u, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clEnqueueWriteBufferRect(q, r, CL_FALSE, o, o, reg, 16, N, 16, N, b_src, 1,
                                           &u, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clEnqueueCopyBuffer(q, r, e, 0, 0, N, 1, &u, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, mp, p, 1, &u, NULL), CL_SUCCESS);
  cl_mem gone[] = {a, b, f, r, mp};
  for (int i = 0; i < 5; i++)
    cr_assert_eq(D->clReleaseMemObject(gone[i]), CL_SUCCESS);
  sleep_ms(20);
  for (int i = 0; i < 5; i++)
    cr_assert_eq(atomic_load(&freed[i]), 0, "buffer %d went while a held command used it", i);
  cr_assert_eq(D->clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  cr_assert_arr_eq(got_a, a_src, N, "read from a released buffer");
  for (int i = 0; i < N; i += 4)
    memcpy(want + i, &pat, 4);
  cr_assert_arr_eq(got_f, want, N, "fill, then read, of a released buffer");
  cr_assert_eq(D->clEnqueueReadBuffer(q, c, CL_TRUE, 0, N, got_r, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_arr_eq(got_r, b_src, N, "write, then copy, of a released buffer");
  cr_assert_eq(D->clEnqueueReadBuffer(q, d, CL_TRUE, 0, N, got_r, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_arr_eq(got_r, a_src, N, "rectangle copy of a released buffer");
  cr_assert_eq(D->clEnqueueReadBuffer(q, e, CL_TRUE, 0, N, got_r, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_arr_eq(got_r, b_src, N, "rectangle write, then copy, of a released buffer");
  for (int i = 0; i < 5; i++)
    cr_assert_eq(atomic_load(&freed[i]), 1, "buffer %d goes once its commands are done", i);
  D->clReleaseEvent(u);
  D->clReleaseMemObject(c);
  D->clReleaseMemObject(d);
  D->clReleaseMemObject(e);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

/* A held launch keeps the buffers its arguments name: the inputs may be
 * released while it waits, and go (their destructor callbacks run) once it
 * was issued. */
Test(fe_queue, a_held_launch_keeps_its_argument_buffers)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  int av[N], bv[N], cv[N];
  for (int i = 0; i < N; i++) {
    av[i] = i;
    bv[i] = 1000 * i;
  }
  cl_int err = -1;
  cl_mem a = make_buffer(ctx, CL_MEM_READ_ONLY, sizeof av, av);
  cl_mem b = make_buffer(ctx, CL_MEM_READ_ONLY, sizeof bv, bv);
  cl_mem c = make_buffer(ctx, CL_MEM_READ_WRITE, sizeof cv, NULL);
  for (intptr_t i = 0; i < 2; i++) {
    atomic_store(&freed[5 + i], 0);
    cr_assert_eq(D->clSetMemObjectDestructorCallback(i ? b : a, on_freed, (void *)(5 + i)),
                 CL_SUCCESS);
  }
  cl_program p = build_vadd(ctx);
  cl_kernel k = make_kernel(p, "vadd");
  cl_event u = D->clCreateUserEvent(ctx, &err);
  size_t n = N;
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof a, &a), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof b, &b), CL_SUCCESS);
  cr_assert_eq(D->clSetKernelArg(k, 2, sizeof c, &c), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 1, &u, NULL), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(a), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(b), CL_SUCCESS);
  cr_assert_eq(D->clReleaseKernel(k), CL_SUCCESS);
  /* Buffers made now may reuse what a and b were, if they were freed. */
  int junk[N];
  memset(junk, 0x55, sizeof junk);
  cl_mem j1 = make_buffer(ctx, CL_MEM_READ_WRITE, sizeof junk, junk);
  cl_mem j2 = make_buffer(ctx, CL_MEM_READ_WRITE, sizeof junk, junk);
  cr_assert_eq(atomic_load(&freed[5]) + atomic_load(&freed[6]), 0,
               "an argument's buffer went while the launch was held");
  cr_assert_eq(D->clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadBuffer(q, c, CL_TRUE, 0, sizeof cv, cv, 0, NULL, NULL),
               CL_SUCCESS);
  for (int i = 0; i < N; i++)
    cr_assert_eq(cv[i], 1001 * i, "c[%d] = %d", i, cv[i]);
  cr_assert_eq(atomic_load(&freed[5]), 1, "a goes once the launch was issued");
  cr_assert_eq(atomic_load(&freed[6]), 1, "b goes once the launch was issued");
  D->clReleaseMemObject(j1);
  D->clReleaseMemObject(j2);
  D->clReleaseEvent(u);
  D->clReleaseProgram(p);
  D->clReleaseMemObject(c);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

/* A launch of a kernel whose arguments are not all set is refused by the
 * enqueue (CL_INVALID_KERNEL_ARGS, as PoCL answers) also where the front
 * end does not hand it to PI at once: held back for a user event, it used
 * to be accepted and its event to end with the error; of no work-items, it
 * used to succeed. */
Test(fe_queue, a_launch_without_its_arguments_is_refused_even_when_held)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx, 0);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL);
  cl_program p = build_vadd(ctx);
  cl_kernel k = make_kernel(p, "setk");
  cr_assert_eq(D->clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS); /* argument 1 not set */
  cl_int err = -1;
  cl_event u = D->clCreateUserEvent(ctx, &err);
  cr_assert_eq(err, CL_SUCCESS);
  size_t g[1] = {N};
  cl_event ev = NULL;
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, NULL, g, NULL, 0, NULL, NULL),
               CL_INVALID_KERNEL_ARGS, "issued at once: PI refuses it");
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, NULL, g, NULL, 1, &u, &ev),
               CL_INVALID_KERNEL_ARGS, "held for a user event");
  cr_assert_null(ev, "no event for a refused launch");
  cr_assert_eq(D->clEnqueueTask(q, k, 1, &u, NULL), CL_INVALID_KERNEL_ARGS);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, NULL, NULL, NULL, 0, NULL, NULL),
               CL_INVALID_KERNEL_ARGS, "no work-items");
  /* With every argument set, the held launch is taken and runs. */
  int v = 5;
  cr_assert_eq(D->clSetKernelArg(k, 1, sizeof v, &v), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, NULL, g, NULL, 1, &u, &ev), CL_SUCCESS);
  cr_assert_not_null(ev);
  cr_assert_eq(D->clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  cr_assert_eq(D->clWaitForEvents(1, &ev), CL_SUCCESS);
  int out[N];
  cr_assert_eq(D->clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL),
               CL_SUCCESS);
  for (int i = 0; i < N; i++)
    cr_assert_eq(out[i], 5, "[%d]", i);
  D->clReleaseEvent(ev);
  D->clReleaseEvent(u);
  D->clReleaseKernel(k);
  D->clReleaseProgram(p);
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_queue, ndrange_bad_input)
{
  cl_context ctx = fe_context(), other = fe_context();
  cl_command_queue q = make_queue(ctx, 0), oq = make_queue(other, 0);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL);
  cl_program p = build_vadd(ctx);
  cl_kernel k = make_kernel(p, "setk");
  int v = 1;
  D->clSetKernelArg(k, 0, sizeof m, &m);
  D->clSetKernelArg(k, 1, sizeof v, &v);
  size_t g[3] = {N, 1, 1}, l[3] = {0, 1, 1}, off[3] = {SIZE_MAX, 0, 0};
  cr_assert_eq(D->clEnqueueNDRangeKernel(NULL, k, 1, NULL, g, NULL, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, NULL, 1, NULL, g, NULL, 0, NULL, NULL),
               CL_INVALID_KERNEL);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, (cl_kernel)m, 1, NULL, g, NULL, 0, NULL, NULL),
               CL_INVALID_KERNEL);
  cr_assert_eq(D->clEnqueueNDRangeKernel(oq, k, 1, NULL, g, NULL, 0, NULL, NULL),
               CL_INVALID_CONTEXT);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 0, NULL, g, NULL, 0, NULL, NULL),
               CL_INVALID_WORK_DIMENSION);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 4, NULL, g, NULL, 0, NULL, NULL),
               CL_INVALID_WORK_DIMENSION);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, NULL, g, l, 0, NULL, NULL),
               CL_INVALID_WORK_GROUP_SIZE);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, off, g, NULL, 0, NULL, NULL),
               CL_INVALID_GLOBAL_OFFSET);
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, NULL, NULL, NULL, 0, NULL, NULL), CL_SUCCESS,
               "no global size: no work-items (OpenCL 2.1)");
  cr_assert_eq(D->clEnqueueNDRangeKernel(q, k, 1, NULL, g, NULL, 1, NULL, NULL),
               CL_INVALID_EVENT_WAIT_LIST);
  cr_assert_eq(D->clEnqueueTask(q, NULL, 0, NULL, NULL), CL_INVALID_KERNEL);
  cr_assert_eq(D->clEnqueueTask(oq, k, 0, NULL, NULL), CL_INVALID_CONTEXT);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  D->clReleaseKernel(k);
  D->clReleaseProgram(p);
  D->clReleaseMemObject(m);
  D->clReleaseCommandQueue(q);
  D->clReleaseCommandQueue(oq);
  D->clReleaseContext(ctx);
  D->clReleaseContext(other);
}
