/*
 * test_fe_memory.c: the OpenCL front end's memory objects, images,
 * samplers and USM (frontends/opencl/fe_memory.c, fe_image.c,
 * fe_sampler.c, fe_usm.c) and the features it refuses (fe_unsupported.c),
 * driven the way the ICD loader drives libpitrace_opencl.so, on the real
 * device the registration names (PoCL, or rusticl on llvmpipe): buffers
 * and sub-buffers with their data checked on the host, flag inheritance,
 * reference counts and destructor callbacks in order, image round trips
 * (read, write, copy, fill, copies to and from buffers, maps staged through
 * the host and their map count) and the formats the front end lists,
 * samplers, USM where the device has it (its refusal where not), a sweep of
 * bad input, and the error codes of SVM, pipes, GL and EGL sharing and
 * device fission.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fe_testutil.h"

TestSuite(fe_memory, .init = fe_setup, .timeout = 120);

/* ---- Helpers ---------------------------------------------------------------- */

static cl_command_queue make_queue(cl_context ctx)
{
  cl_int err = -1;
  cl_command_queue q = D->clCreateCommandQueueWithProperties(ctx, fe_dev, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateCommandQueueWithProperties: %d", err);
  return q;
}

static cl_mem make_buffer(cl_context ctx, cl_mem_flags flags, size_t size, void *host)
{
  cl_int err = -1;
  cl_mem m = D->clCreateBuffer(ctx, flags, size, host, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateBuffer: %d", err);
  cr_assert_not_null(m);
  return m;
}

static void write_buffer(cl_command_queue q, cl_mem m, size_t off, size_t size, const void *p)
{
  cl_int err = D->clEnqueueWriteBuffer(q, m, CL_TRUE, off, size, p, 0, NULL, NULL);
  cr_assert_eq(err, CL_SUCCESS, "clEnqueueWriteBuffer: %d", err);
}

static void read_buffer(cl_command_queue q, cl_mem m, size_t off, size_t size, void *p)
{
  cl_int err = D->clEnqueueReadBuffer(q, m, CL_TRUE, off, size, p, 0, NULL, NULL);
  cr_assert_eq(err, CL_SUCCESS, "clEnqueueReadBuffer: %d", err);
}

static cl_uint mem_refs(cl_mem m)
{
  cl_uint refs = 0;
  cr_assert_eq(D->clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_SUCCESS);
  return refs;
}

/* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes. */
static size_t base_align(void)
{
  cl_uint bits = 0;
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits,
                                  NULL),
               CL_SUCCESS);
  cr_assert_geq(bits, 8);
  return bits / 8;
}

static bool has_images(void)
{
  cl_bool images = CL_FALSE;
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL),
               CL_SUCCESS);
  return images != CL_FALSE;
}

/* ---- Buffers -------------------------------------------------------------------- */

Test(fe_memory, buffer_round_trip_and_info)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  enum { N = 256 };
  int data[N], back[N];
  for (int i = 0; i < N; i++)
    data[i] = i * 7 - 3;

  /* COPY_HOST_PTR: the contents at creation, the host memory free after. */
  cl_mem copy = make_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof data, data);
  memset(back, 0, sizeof back);
  read_buffer(q, copy, 0, sizeof back, back);
  cr_assert_arr_eq(back, data, sizeof data);

  cl_mem_object_type type = 0;
  cl_mem_flags flags = 0;
  size_t size = 0, off = 1;
  void *host = &off;
  cl_context c = NULL;
  cl_mem assoc = copy;
  cl_bool svm = CL_TRUE;
  cl_uint maps = 9;
  size_t ret = 0;
  cr_assert_eq(D->clGetMemObjectInfo(copy, CL_MEM_TYPE, sizeof type, &type, &ret), CL_SUCCESS);
  cr_assert_eq(type, CL_MEM_OBJECT_BUFFER);
  cr_assert_eq(ret, sizeof type);
  cr_assert_eq(D->clGetMemObjectInfo(copy, CL_MEM_FLAGS, sizeof flags, &flags, NULL), CL_SUCCESS);
  cr_assert_eq(flags, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR);
  cr_assert_eq(D->clGetMemObjectInfo(copy, CL_MEM_SIZE, sizeof size, &size, NULL), CL_SUCCESS);
  cr_assert_eq(size, sizeof data);
  cr_assert_eq(D->clGetMemObjectInfo(copy, CL_MEM_HOST_PTR, sizeof host, &host, NULL), CL_SUCCESS);
  cr_assert_null(host, "no host pointer without USE_HOST_PTR");
  cr_assert_eq(D->clGetMemObjectInfo(copy, CL_MEM_CONTEXT, sizeof c, &c, NULL), CL_SUCCESS);
  cr_assert_eq(c, ctx);
  cr_assert_eq(D->clGetMemObjectInfo(copy, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc,
                                     NULL),
               CL_SUCCESS);
  cr_assert_null(assoc);
  cr_assert_eq(D->clGetMemObjectInfo(copy, CL_MEM_OFFSET, sizeof off, &off, NULL), CL_SUCCESS);
  cr_assert_eq(off, 0);
  cr_assert_eq(D->clGetMemObjectInfo(copy, CL_MEM_USES_SVM_POINTER, sizeof svm, &svm, NULL),
               CL_SUCCESS);
  cr_assert_eq(svm, CL_FALSE);
  cr_assert_eq(D->clGetMemObjectInfo(copy, CL_MEM_MAP_COUNT, sizeof maps, &maps, NULL),
               CL_SUCCESS);
  cr_assert_eq(maps, 0);
  cr_assert_eq(D->clGetMemObjectInfo(copy, CL_MEM_PROPERTIES, 0, NULL, &ret), CL_SUCCESS);
  cr_assert_eq(ret, 0, "clCreateBuffer: no properties");
  cr_assert_eq(D->clGetMemObjectInfo(copy, CL_MEM_SIZE, 1, &size, NULL), CL_INVALID_VALUE,
               "a value too small for the answer");
  cr_assert_eq(D->clGetMemObjectInfo(copy, 0x7777, sizeof size, &size, NULL), CL_INVALID_VALUE);

  /* USE_HOST_PTR: the pointer is the application's; written data reaches
   * it once read back through OpenCL (a read synchronises it). */
  int *use = aligned_alloc(4096, (sizeof data + 4095) / 4096 * 4096);
  memcpy(use, data, sizeof data);
  cl_mem used = make_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, sizeof data, use);
  cr_assert_eq(D->clGetMemObjectInfo(used, CL_MEM_HOST_PTR, sizeof host, &host, NULL), CL_SUCCESS);
  cr_assert_eq(host, use);
  int twice[N];
  for (int i = 0; i < N; i++)
    twice[i] = 2 * data[i];
  write_buffer(q, used, 0, sizeof twice, twice);
  read_buffer(q, used, 0, sizeof back, back);
  cr_assert_arr_eq(back, twice, sizeof twice);

  /* clCreateBufferWithProperties with an empty list keeps it. */
  cl_int err = -1;
  const cl_mem_properties empty[] = {0};
  cl_mem withp =
      D->clCreateBufferWithProperties(ctx, empty, CL_MEM_WRITE_ONLY, 64, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cl_mem_properties got[2] = {7, 7};
  cr_assert_eq(D->clGetMemObjectInfo(withp, CL_MEM_PROPERTIES, sizeof got, got, &ret),
               CL_SUCCESS);
  cr_assert_eq(ret, sizeof(cl_mem_properties));
  cr_assert_eq(got[0], 0);
  /* A write-only buffer still takes host transfers. */
  write_buffer(q, withp, 0, 64, data);
  read_buffer(q, withp, 0, 64, back);
  cr_assert_arr_eq(back, data, 64);

  cr_assert_eq(D->clReleaseMemObject(copy), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(used), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(withp), CL_SUCCESS);
  cr_assert_eq(D->clReleaseCommandQueue(q), CL_SUCCESS);
  cr_assert_eq(D->clReleaseContext(ctx), CL_SUCCESS);
  free(use);
}

Test(fe_memory, host_access_flags)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  char buf[16] = {0};
  cl_mem wo = make_buffer(ctx, CL_MEM_HOST_WRITE_ONLY, 16, NULL);
  cl_mem ro = make_buffer(ctx, CL_MEM_HOST_READ_ONLY, 16, NULL);
  cl_mem none = make_buffer(ctx, CL_MEM_HOST_NO_ACCESS, 16, NULL);
  cr_assert_eq(D->clEnqueueWriteBuffer(q, wo, CL_TRUE, 0, 16, buf, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadBuffer(q, wo, CL_TRUE, 0, 16, buf, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  cr_assert_eq(D->clEnqueueWriteBuffer(q, ro, CL_TRUE, 0, 16, buf, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  cr_assert_eq(D->clEnqueueReadBuffer(q, none, CL_TRUE, 0, 16, buf, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  D->clReleaseMemObject(wo);
  D->clReleaseMemObject(ro);
  D->clReleaseMemObject(none);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_memory, sub_buffers)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  const size_t align = base_align(), size = 4 * align;
  unsigned char *host = aligned_alloc(4096, (size + 4095) / 4096 * 4096), *back = malloc(size);
  for (size_t i = 0; i < size; i++)
    host[i] = (unsigned char)i;
  cl_mem parent = make_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR |
                                       CL_MEM_HOST_READ_ONLY, size, host);
  cl_int err = -1;
  cl_buffer_region region = {align, 2 * align};

  /* Flags: the parent's host pointer and host access come along; an access
   * flag given stays. */
  cl_mem sub = D->clCreateSubBuffer(parent, CL_MEM_READ_ONLY, CL_BUFFER_CREATE_TYPE_REGION,
                                    &region, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateSubBuffer: %d", err);
  cl_mem_flags flags = 0;
  cr_assert_eq(D->clGetMemObjectInfo(sub, CL_MEM_FLAGS, sizeof flags, &flags, NULL), CL_SUCCESS);
  cr_assert_eq(flags, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR | CL_MEM_HOST_READ_ONLY);
  void *hp = NULL;
  size_t off = 0, sz = 0;
  cl_mem assoc = NULL;
  cr_assert_eq(D->clGetMemObjectInfo(sub, CL_MEM_HOST_PTR, sizeof hp, &hp, NULL), CL_SUCCESS);
  cr_assert_eq(hp, host + align, "the host pointer is host_ptr + origin");
  cr_assert_eq(D->clGetMemObjectInfo(sub, CL_MEM_OFFSET, sizeof off, &off, NULL), CL_SUCCESS);
  cr_assert_eq(off, align);
  cr_assert_eq(D->clGetMemObjectInfo(sub, CL_MEM_SIZE, sizeof sz, &sz, NULL), CL_SUCCESS);
  cr_assert_eq(sz, 2 * align);
  cr_assert_eq(D->clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc,
                                     NULL),
               CL_SUCCESS);
  cr_assert_eq(assoc, parent);

  /* The data: the sub-buffer shows the parent's bytes from the origin. */
  read_buffer(q, sub, 0, 2 * align, back);
  cr_assert_arr_eq(back, host + align, 2 * align);
  cr_assert_eq(D->clEnqueueWriteBuffer(q, sub, CL_TRUE, 0, 4, back, 0, NULL, NULL),
               CL_INVALID_OPERATION, "host read-only is inherited");

  /* A read-write sub-buffer of a read-write parent: written through the
   * sub-buffer, read through the parent. */
  cl_mem rw = make_buffer(ctx, CL_MEM_READ_WRITE, size, NULL);
  memset(back, 0, size);
  write_buffer(q, rw, 0, size, back);
  cl_mem rwsub = D->clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(D->clGetMemObjectInfo(rwsub, CL_MEM_FLAGS, sizeof flags, &flags, NULL),
               CL_SUCCESS);
  cr_assert_eq(flags, CL_MEM_READ_WRITE, "the access flag is inherited");
  unsigned char *pattern = malloc(2 * align);
  for (size_t i = 0; i < 2 * align; i++)
    pattern[i] = (unsigned char)(0xA0 ^ i);
  write_buffer(q, rwsub, 0, 2 * align, pattern);
  read_buffer(q, rw, 0, size, back);
  for (size_t i = 0; i < size; i++)
    cr_assert_eq(back[i], i >= align && i < 3 * align ? pattern[i - align] : 0, "byte %zu", i);

  /* The rules. */
  cr_assert_null(D->clCreateSubBuffer(sub, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err));
  cr_assert_eq(err, CL_INVALID_MEM_OBJECT, "no sub-buffer of a sub-buffer");
  cr_assert_null(
      D->clCreateSubBuffer(parent, CL_MEM_READ_WRITE | CL_MEM_READ_ONLY,
                           CL_BUFFER_CREATE_TYPE_REGION, &region, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "conflicting access flags");
  cr_assert_null(D->clCreateSubBuffer(parent, CL_MEM_HOST_WRITE_ONLY,
                                      CL_BUFFER_CREATE_TYPE_REGION, &region, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "host write-only under a host read-only parent");
  cr_assert_null(D->clCreateSubBuffer(parent, CL_MEM_COPY_HOST_PTR,
                                      CL_BUFFER_CREATE_TYPE_REGION, &region, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "no host pointer flags for a sub-buffer");
  cl_mem ro = make_buffer(ctx, CL_MEM_READ_ONLY, size, NULL);
  cr_assert_null(D->clCreateSubBuffer(ro, CL_MEM_WRITE_ONLY, CL_BUFFER_CREATE_TYPE_REGION,
                                      &region, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "write-only under a read-only parent");
  cr_assert_null(D->clCreateSubBuffer(rw, 0, 0x1221, &region, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "unknown creation type");
  cr_assert_null(D->clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cl_buffer_region out = {3 * align, 2 * align};
  cr_assert_null(D->clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, &out, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "out of bounds");
  cl_buffer_region wrap = {align, SIZE_MAX};
  cr_assert_null(D->clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, &wrap, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "a size that wraps around");
  cl_buffer_region empty = {align, 0};
  cr_assert_null(D->clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, &empty, &err));
  cr_assert_eq(err, CL_INVALID_BUFFER_SIZE);
  cl_buffer_region odd = {1, align};
  cr_assert_null(D->clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, &odd, &err));
  cr_assert_eq(err, CL_MISALIGNED_SUB_BUFFER_OFFSET);

  /* The parent lives while a sub-buffer does: released first, it still
   * serves the sub-buffer. */
  cr_assert_eq(D->clReleaseMemObject(rw), CL_SUCCESS);
  read_buffer(q, rwsub, 0, 2 * align, back);
  cr_assert_arr_eq(back, pattern, 2 * align);
  /* Its handle stays valid while the sub-buffer lives (as on OpenCL
   * implementations; CL_MEM_ASSOCIATED_MEMOBJECT gives it back). */
  assoc = NULL;
  cr_assert_eq(D->clGetMemObjectInfo(rwsub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc,
                                     NULL),
               CL_SUCCESS);
  cr_assert_eq(assoc, rw);
  cr_assert_eq(D->clGetMemObjectInfo(rw, CL_MEM_SIZE, sizeof sz, &sz, NULL), CL_SUCCESS,
               "released by the application, kept by its sub-buffer");
  cr_assert_eq(sz, size);

  cr_assert_eq(D->clReleaseMemObject(rwsub), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(sub), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(parent), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(ro), CL_SUCCESS);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
  free(host);
  free(back);
  free(pattern);
}

/* ---- References and destructor callbacks ---------------------------------------- */

struct calls {
  int order[8];
  int n;
  cl_mem seen[8];
};

static struct calls calls;

#define CALLBACK(k)                                                                    \
  static void CL_CALLBACK destroyed_##k(cl_mem m, void *user)                        \
  {                                                                                  \
    struct calls *c = user;                                                          \
    c->seen[c->n] = m;                                                               \
    c->order[c->n++] = k;                                                            \
  }
CALLBACK(1)
CALLBACK(2)
CALLBACK(3)
CALLBACK(4)

Test(fe_memory, references_and_destructors)
{
  cl_context ctx = fe_context();
  memset(&calls, 0, sizeof calls);
  cl_mem m = make_buffer(ctx, CL_MEM_READ_WRITE, 1024, NULL);
  cr_assert_eq(mem_refs(m), 1);
  cr_assert_eq(D->clRetainMemObject(m), CL_SUCCESS);
  cr_assert_eq(D->clRetainMemObject(m), CL_SUCCESS);
  cr_assert_eq(mem_refs(m), 3);
  cr_assert_eq(D->clSetMemObjectDestructorCallback(m, destroyed_1, &calls), CL_SUCCESS);
  cr_assert_eq(D->clSetMemObjectDestructorCallback(m, destroyed_2, &calls), CL_SUCCESS);
  cr_assert_eq(D->clSetMemObjectDestructorCallback(m, destroyed_3, &calls), CL_SUCCESS);
  cr_assert_eq(D->clSetMemObjectDestructorCallback(m, NULL, &calls), CL_INVALID_VALUE);
  cr_assert_eq(D->clReleaseMemObject(m), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(m), CL_SUCCESS);
  cr_assert_eq(calls.n, 0, "not while a reference is left");
  cr_assert_eq(mem_refs(m), 1);
  cr_assert_eq(D->clReleaseMemObject(m), CL_SUCCESS);
  cr_assert_eq(calls.n, 3);
  cr_assert_eq(calls.order[0], 3, "the last registered runs first");
  cr_assert_eq(calls.order[1], 2);
  cr_assert_eq(calls.order[2], 1);
  cr_assert_eq(calls.seen[0], m, "with the object as the application knew it");

  /* A parent with a sub-buffer: its callbacks wait for the sub-buffer. */
  memset(&calls, 0, sizeof calls);
  const size_t align = base_align();
  cl_mem parent = make_buffer(ctx, CL_MEM_READ_WRITE, 2 * align, NULL);
  cl_int err = -1;
  cl_buffer_region region = {align, align};
  cl_mem sub = D->clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(D->clSetMemObjectDestructorCallback(parent, destroyed_1, &calls), CL_SUCCESS);
  cr_assert_eq(D->clSetMemObjectDestructorCallback(sub, destroyed_4, &calls), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(parent), CL_SUCCESS);
  cr_assert_eq(calls.n, 0, "the sub-buffer keeps its parent");
  cr_assert_eq(D->clReleaseMemObject(sub), CL_SUCCESS);
  cr_assert_eq(calls.n, 2);
  cr_assert_eq(calls.order[0], 4);
  cr_assert_eq(calls.order[1], 1);

  /* Released more often than retained: refused, nothing freed twice. */
  cl_mem once = make_buffer(ctx, CL_MEM_READ_WRITE, 64, NULL);
  cl_mem keep = D->clCreateSubBuffer(once, 0, CL_BUFFER_CREATE_TYPE_REGION,
                                     &(cl_buffer_region){0, 64}, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(once), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(once), CL_INVALID_MEM_OBJECT);
  /* The sub-buffer keeps it a memory object: it may be retained again, and
   * released as often, never more. */
  cr_assert_eq(D->clRetainMemObject(once), CL_SUCCESS);
  cr_assert_eq(mem_refs(once), 1);
  cr_assert_eq(D->clReleaseMemObject(once), CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(once), CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clReleaseMemObject(keep), CL_SUCCESS);
  D->clReleaseContext(ctx);
}

/* ---- Images ----------------------------------------------------------------------- */

static cl_mem make_image(cl_context ctx, cl_mem_flags flags, cl_channel_order order,
                         cl_channel_type type, cl_mem_object_type itype, size_t w, size_t h,
                         size_t d, void *host)
{
  cl_image_format f = {order, type};
  cl_image_desc desc = {.image_type = itype, .image_width = w, .image_height = h};
  if (itype == CL_MEM_OBJECT_IMAGE3D)
    desc.image_depth = d;
  else if (itype == CL_MEM_OBJECT_IMAGE1D_ARRAY || itype == CL_MEM_OBJECT_IMAGE2D_ARRAY)
    desc.image_array_size = d;
  cl_int err = -1;
  cl_mem m = D->clCreateImage(ctx, flags, &f, &desc, host, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateImage: %d", err);
  return m;
}

Test(fe_memory, image_2d_round_trip_and_info)
{
  if (!has_images())
    cr_skip_test("the device has no images");
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  enum { W = 16, H = 8 };
  uint8_t px[H][W][4], back[H][W][4];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int c = 0; c < 4; c++)
        px[y][x][c] = (uint8_t)(x * 16 + y * 3 + c);
  cl_mem img = make_image(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, CL_RGBA, CL_UNORM_INT8,
                          CL_MEM_OBJECT_IMAGE2D, W, H, 0, px);
  const size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
  memset(back, 0, sizeof back);
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, origin, region, 0, 0, back, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_arr_eq(back, px, sizeof px, "COPY_HOST_PTR contents");

  /* A sub-rectangle written with a row pitch, read back whole. */
  uint8_t patch[3][8][4];
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 8; x++)
      for (int c = 0; c < 4; c++)
        patch[y][x][c] = (uint8_t)(200 + y + c);
  const size_t po[3] = {5, 2, 0}, pr[3] = {4, 3, 1};
  cl_event ev = NULL;
  cr_assert_eq(D->clEnqueueWriteImage(q, img, CL_FALSE, po, pr, sizeof patch[0], 0, patch, 0,
                                      NULL, &ev),
               CL_SUCCESS);
  cr_assert_not_null(ev);
  cl_command_type ct = 0;
  cr_assert_eq(D->clWaitForEvents(1, &ev), CL_SUCCESS);
  cr_assert_eq(D->clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof ct, &ct, NULL), CL_SUCCESS);
  cr_assert_eq(ct, CL_COMMAND_WRITE_IMAGE);
  D->clReleaseEvent(ev);
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, origin, region, 0, 0, back, 0, NULL, NULL),
               CL_SUCCESS);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      bool in = x >= 5 && x < 9 && y >= 2 && y < 5;
      for (int c = 0; c < 4; c++)
        cr_assert_eq(back[y][x][c], in ? patch[y - 2][x - 5][c] : px[y][x][c], "(%d,%d,%d)", x,
                     y, c);
    }

  /* Info: PI's answers and the front end's. */
  cl_image_format f = {0};
  size_t v = 0;
  cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_FORMAT, sizeof f, &f, NULL), CL_SUCCESS);
  cr_assert_eq(f.image_channel_order, CL_RGBA);
  cr_assert_eq(f.image_channel_data_type, CL_UNORM_INT8);
  cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_ELEMENT_SIZE, sizeof v, &v, NULL), CL_SUCCESS);
  cr_assert_eq(v, 4);
  cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_WIDTH, sizeof v, &v, NULL), CL_SUCCESS);
  cr_assert_eq(v, W);
  cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_HEIGHT, sizeof v, &v, NULL), CL_SUCCESS);
  cr_assert_eq(v, H);
  cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_DEPTH, sizeof v, &v, NULL), CL_SUCCESS);
  cr_assert_eq(v, 0);
  cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_ROW_PITCH, sizeof v, &v, NULL), CL_SUCCESS);
  cr_assert_geq(v, W * 4);
  cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_ARRAY_SIZE, sizeof v, &v, NULL), CL_SUCCESS);
  cr_assert_eq(v, 0);
  cl_uint u = 9;
  cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_NUM_MIP_LEVELS, sizeof u, &u, NULL), CL_SUCCESS);
  cr_assert_eq(u, 0);
  cl_mem ib = img;
  cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_BUFFER, sizeof ib, &ib, NULL), CL_SUCCESS);
  cr_assert_null(ib);
  cl_mem_object_type t = 0;
  cr_assert_eq(D->clGetMemObjectInfo(img, CL_MEM_TYPE, sizeof t, &t, NULL), CL_SUCCESS);
  cr_assert_eq(t, CL_MEM_OBJECT_IMAGE2D);
  cr_assert_eq(D->clGetMemObjectInfo(img, CL_MEM_SIZE, sizeof v, &v, NULL), CL_SUCCESS);
  cr_assert_geq(v, W * H * 4, "an image's storage size from PI");
  cr_assert_eq(D->clGetImageInfo(img, 0x7777, sizeof v, &v, NULL), CL_INVALID_VALUE);

  /* The legacy entry point makes the same image. */
  cl_int err = -1;
  cl_image_format rgba8 = {CL_RGBA, CL_UNORM_INT8};
  cl_mem legacy = D->clCreateImage2D(ctx, CL_MEM_COPY_HOST_PTR, &rgba8, W, H, 0, px, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateImage2D: %d", err);
  cr_assert_eq(D->clEnqueueReadImage(q, legacy, CL_TRUE, origin, region, 0, 0, back, 0, NULL,
                                     NULL),
               CL_SUCCESS);
  cr_assert_arr_eq(back, px, sizeof px);

  D->clReleaseMemObject(legacy);
  D->clReleaseMemObject(img);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_memory, image_copy_fill_and_buffers)
{
  if (!has_images())
    cr_skip_test("the device has no images");
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  enum { W = 8, H = 4, Z = 3 };
  uint32_t src[Z][H][W], back[Z][H][W];
  for (int z = 0; z < Z; z++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++)
        src[z][y][x] = (uint32_t)(z * 1000 + y * 100 + x);
  /* A 2D image array of single uint channels, and a 3D image. */
  cl_mem arr = make_image(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, CL_R, CL_UNSIGNED_INT32,
                          CL_MEM_OBJECT_IMAGE2D_ARRAY, W, H, Z, src);
  cl_mem vol = make_image(ctx, CL_MEM_READ_WRITE, CL_R, CL_UNSIGNED_INT32,
                          CL_MEM_OBJECT_IMAGE3D, W, H, Z, NULL);
  const size_t zero[3] = {0, 0, 0}, all[3] = {W, H, Z};
  cr_assert_eq(D->clEnqueueCopyImage(q, arr, vol, zero, zero, all, 0, NULL, NULL), CL_SUCCESS);
  memset(back, 0, sizeof back);
  cr_assert_eq(D->clEnqueueReadImage(q, vol, CL_TRUE, zero, all, 0, 0, back, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_arr_eq(back, src, sizeof src, "array to 3D copy");

  /* Fill a box of the 3D image with an unsigned integer color. */
  const cl_uint4 color = {{77, 0, 0, 0}};
  const size_t fo[3] = {2, 1, 1}, fr[3] = {3, 2, 2};
  cr_assert_eq(D->clEnqueueFillImage(q, vol, &color, fo, fr, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadImage(q, vol, CL_TRUE, zero, all, 0, 0, back, 0, NULL, NULL),
               CL_SUCCESS);
  for (int z = 0; z < Z; z++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        bool in = x >= 2 && x < 5 && y >= 1 && y < 3 && z >= 1 && z < 3;
        cr_assert_eq(back[z][y][x], in ? 77u : src[z][y][x], "(%d,%d,%d)", x, y, z);
      }

  /* Image to buffer and back: a 2x2x2 box, packed in the buffer. */
  cl_mem buf = make_buffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(uint32_t), NULL);
  const size_t bo[3] = {1, 1, 0}, br[3] = {2, 2, 2};
  cl_event ev = NULL;
  cr_assert_eq(D->clEnqueueCopyImageToBuffer(q, arr, buf, bo, br, 8, 0, NULL, &ev), CL_SUCCESS);
  cr_assert_eq(D->clWaitForEvents(1, &ev), CL_SUCCESS);
  cl_command_type ct = 0;
  cr_assert_eq(D->clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof ct, &ct, NULL), CL_SUCCESS);
  cr_assert_eq(ct, CL_COMMAND_COPY_IMAGE_TO_BUFFER);
  D->clReleaseEvent(ev);
  uint32_t packed[8];
  read_buffer(q, buf, 8, sizeof packed, packed);
  for (int i = 0; i < 8; i++) {
    int x = 1 + i % 2, y = 1 + (i / 2) % 2, z = i / 4;
    cr_assert_eq(packed[i], src[z][y][x], "packed[%d]", i);
  }
  for (int i = 0; i < 8; i++)
    packed[i] = 9000u + (uint32_t)i;
  write_buffer(q, buf, 0, sizeof packed, packed);
  cr_assert_eq(D->clEnqueueCopyBufferToImage(q, buf, vol, 0, zero, br, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadImage(q, vol, CL_TRUE, zero, br, 0, 0, back, 0, NULL, NULL),
               CL_SUCCESS);
  uint32_t *flat = &back[0][0][0];
  for (int i = 0; i < 8; i++)
    cr_assert_eq(flat[i], 9000u + (uint32_t)i, "box element %d", i);
  cr_assert_eq(D->clEnqueueCopyImageToBuffer(q, arr, buf, bo, br, 64 * 4 - 8, 0, NULL, NULL),
               CL_INVALID_VALUE, "the buffer is too small from that offset");

  /* Mapping a 3D image needs a slice pitch (maps: image_maps_staged_through_the_host). */
  cl_int err = -1;
  size_t rp = 0;
  cr_assert_null(D->clEnqueueMapImage(q, vol, CL_TRUE, CL_MAP_READ, zero, all, &rp, NULL, 0,
                                      NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "a 3D image needs a slice pitch");

  D->clReleaseMemObject(buf);
  D->clReleaseMemObject(arr);
  D->clReleaseMemObject(vol);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

static cl_uint map_count(cl_mem m)
{
  cl_uint maps = 99;
  cr_assert_eq(D->clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof maps, &maps, NULL), CL_SUCCESS);
  return maps;
}

static cl_command_type command_of(cl_event ev)
{
  cl_command_type t = 0;
  cr_assert_eq(D->clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof t, &t, NULL), CL_SUCCESS);
  return t;
}

/* PI maps only buffers: an image map is host memory the region is read
 * into, written back by the unmap when it was mapped for writing. */
Test(fe_memory, image_maps_staged_through_the_host)
{
  if (!has_images())
    cr_skip_test("the device has no images");
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  enum { W = 16, H = 8, Z = 4 };
  uint8_t px[H][W][4], back[H][W][4];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int c = 0; c < 4; c++)
        px[y][x][c] = (uint8_t)(x * 13 + y * 7 + c);
  cl_mem img = make_image(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, CL_RGBA, CL_UNSIGNED_INT8,
                          CL_MEM_OBJECT_IMAGE2D, W, H, 0, px);
  const size_t zero[3] = {0, 0, 0}, all[3] = {W, H, 1};

  /* A blocking map of a region for reading and writing. */
  const size_t mo[3] = {3, 2, 0}, mr[3] = {5, 4, 1};
  size_t rp = 0, sp = 77;
  cl_event ev = NULL;
  cl_int err = -1;
  uint8_t *p = D->clEnqueueMapImage(q, img, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, mo, mr, &rp, &sp,
                                    0, NULL, &ev, &err);
  cr_assert_eq(err, CL_SUCCESS, "clEnqueueMapImage: %d", err);
  cr_assert_not_null(p);
  cr_assert_geq(rp, 5 * 4);
  cr_assert_eq(sp, 0, "a 2D image has no slice pitch");
  cr_assert_eq(command_of(ev), CL_COMMAND_MAP_IMAGE);
  D->clReleaseEvent(ev);
  cr_assert_eq(map_count(img), 1);
  for (int y = 0; y < 4; y++)
    cr_assert_arr_eq(p + y * rp, px[2 + y][3], 5 * 4, "mapped row %d", y);
  for (int y = 0; y < 4; y++)
    memset(p + y * rp, 200 + y, 5 * 4);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, img, p, 0, NULL, &ev), CL_SUCCESS);
  cr_assert_eq(command_of(ev), CL_COMMAND_UNMAP_MEM_OBJECT);
  cr_assert_eq(D->clWaitForEvents(1, &ev), CL_SUCCESS);
  D->clReleaseEvent(ev);
  cr_assert_eq(map_count(img), 0);
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, zero, all, 0, 0, back, 0, NULL, NULL),
               CL_SUCCESS);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      bool in = x >= 3 && x < 8 && y >= 2 && y < 6;
      if (in)
        memset(px[y][x], 200 + y - 2, 4);
      cr_assert_arr_eq(back[y][x], px[y][x], 4, "(%d,%d) after the unmap", x, y);
    }

  /* A non-blocking map for reading, ordered by its event; two maps at once
   * count twice; an unmap of a read-only map writes nothing. */
  cl_event e1 = NULL;
  size_t rp1 = 0;
  uint8_t *r1 = D->clEnqueueMapImage(q, img, CL_FALSE, CL_MAP_READ, zero, all, &rp1, NULL, 0,
                                     NULL, &e1, &err);
  cr_assert_eq(err, CL_SUCCESS);
  uint8_t *r2 = D->clEnqueueMapImage(q, img, CL_TRUE, CL_MAP_READ, mo, mr, &rp, NULL, 1, &e1,
                                     NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(map_count(img), 2);
  cr_assert_eq(D->clWaitForEvents(1, &e1), CL_SUCCESS);
  for (int y = 0; y < H; y++)
    cr_assert_arr_eq(r1 + y * rp1, px[y], W * 4, "row %d of a whole-image map", y);
  r1[0] = 1; /* not written back: mapped for reading */
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, img, r1, 1, &e1, NULL), CL_SUCCESS);
  cr_assert_eq(map_count(img), 1);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, img, r1, 0, NULL, NULL), CL_INVALID_VALUE,
               "unmapped already");
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, img, px, 0, NULL, NULL), CL_INVALID_VALUE,
               "not a mapped pointer");
  cr_assert_eq(map_count(img), 1);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, img, r2, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(map_count(img), 0);
  D->clReleaseEvent(e1);

  /* Invalidating a region: nothing is read, everything is written back. */
  p = D->clEnqueueMapImage(q, img, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, zero, all, &rp, NULL,
                           0, NULL, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  for (int y = 0; y < H; y++)
    memset(p + y * rp, 9 + y, W * 4);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, img, p, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, zero, all, 0, 0, back, 0, NULL, NULL),
               CL_SUCCESS);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W * 4; x++)
      cr_assert_eq(back[y][x / 4][x % 4], 9 + y, "invalidated (%d,%d)", x / 4, y);

  /* A map held back for a user event: its pointer comes at once, its data
   * once the event completes; the unmap behind it writes back. */
  cl_event u = D->clCreateUserEvent(ctx, &err);
  cr_assert_eq(err, CL_SUCCESS);
  p = D->clEnqueueMapImage(q, img, CL_FALSE, CL_MAP_WRITE, mo, mr, &rp, NULL, 1, &u, &ev, &err);
  cr_assert_eq(err, CL_SUCCESS, "a held non-blocking map: %d", err);
  cr_assert_not_null(p);
  cl_int st = 0;
  cr_assert_eq(D->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL),
               CL_SUCCESS);
  cr_assert_eq(st, CL_QUEUED);
  cr_assert_eq(D->clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
  cr_assert_eq(D->clWaitForEvents(1, &ev), CL_SUCCESS);
  D->clReleaseEvent(ev);
  for (int y = 0; y < 4; y++)
    cr_assert_eq(p[y * rp], 9 + 2 + y, "held map row %d", y);
  p[0] = 250;
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, img, p, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, zero, all, 0, 0, back, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_eq(back[2][3][0], 250);
  cr_assert_eq(back[2][3][1], 9 + 2);
  D->clReleaseEvent(u);

  /* A 3D image and a 1D image array: slice pitches. */
  uint32_t vol[Z][H][W], vback[Z][H][W];
  for (int z = 0; z < Z; z++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++)
        vol[z][y][x] = (uint32_t)(z * 10000 + y * 100 + x);
  cl_mem v3 = make_image(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, CL_R, CL_UNSIGNED_INT32,
                         CL_MEM_OBJECT_IMAGE3D, W, H, Z, vol);
  const size_t bo[3] = {1, 2, 1}, br[3] = {3, 2, 2};
  p = D->clEnqueueMapImage(q, v3, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, bo, br, &rp, &sp, 0, NULL,
                           NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_geq(rp, 3 * 4);
  cr_assert_geq(sp, 2 * rp);
  for (int z = 0; z < 2; z++)
    for (int y = 0; y < 2; y++)
      for (int x = 0; x < 3; x++) {
        uint32_t *v = (uint32_t *)(p + z * sp + y * rp) + x;
        cr_assert_eq(*v, vol[1 + z][2 + y][1 + x], "3D (%d,%d,%d)", x, y, z);
        *v = 7u + (uint32_t)(z * 100 + y * 10 + x);
        vol[1 + z][2 + y][1 + x] = *v;
      }
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, v3, p, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadImage(q, v3, CL_TRUE, zero, (size_t[3]){W, H, Z}, 0, 0, vback, 0,
                                     NULL, NULL),
               CL_SUCCESS);
  cr_assert_arr_eq(vback, vol, sizeof vol, "3D image after the unmap");
  cl_mem a1 = make_image(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, CL_R, CL_UNSIGNED_INT32,
                         CL_MEM_OBJECT_IMAGE1D_ARRAY, W, 0, Z, vol);
  const size_t ao[3] = {2, 1, 0}, ar[3] = {4, 3, 1};
  p = D->clEnqueueMapImage(q, a1, CL_TRUE, CL_MAP_READ, ao, ar, &rp, &sp, 0, NULL, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_geq(sp, 4 * 4, "a 1D image array's slice pitch holds one image's row");
  for (int i = 0; i < 3; i++)
    cr_assert_arr_eq(p + i * sp, (uint32_t *)vol + (1 + i) * W + 2, 4 * 4, "array image %d", i);
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, a1, p, 0, NULL, NULL), CL_SUCCESS);

  /* CL_MEM_USE_HOST_PTR: the pointer lies in the application's memory. */
  static uint8_t host[H][W][4];
  memcpy(host, px, sizeof host);
  cl_mem uh = make_image(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, CL_RGBA, CL_UNSIGNED_INT8,
                         CL_MEM_OBJECT_IMAGE2D, W, H, 0, host);
  p = D->clEnqueueMapImage(q, uh, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, mo, mr, &rp, NULL, 0, NULL,
                           NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(p, &host[2][3][0], "derived from the host pointer");
  cr_assert_eq(rp, W * 4, "with the image's row pitch");
  p[0] = 33;
  cr_assert_eq(D->clEnqueueUnmapMemObject(q, uh, p, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(D->clEnqueueReadImage(q, uh, CL_TRUE, zero, all, 0, 0, back, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_eq(back[2][3][0], 33);

  /* Host access, and a map the application never unmaps before the
   * release. */
  cl_mem ro = make_image(ctx, CL_MEM_HOST_READ_ONLY, CL_RGBA, CL_UNSIGNED_INT8,
                         CL_MEM_OBJECT_IMAGE2D, W, H, 0, NULL);
  cl_mem wo = make_image(ctx, CL_MEM_HOST_WRITE_ONLY, CL_RGBA, CL_UNSIGNED_INT8,
                         CL_MEM_OBJECT_IMAGE2D, W, H, 0, NULL);
  cr_assert_null(D->clEnqueueMapImage(q, ro, CL_TRUE, CL_MAP_WRITE, zero, all, &rp, NULL, 0, NULL,
                                      NULL, &err));
  cr_assert_eq(err, CL_INVALID_OPERATION);
  cr_assert_null(D->clEnqueueMapImage(q, wo, CL_TRUE, CL_MAP_READ, zero, all, &rp, NULL, 0, NULL,
                                      NULL, &err));
  cr_assert_eq(err, CL_INVALID_OPERATION);
  cr_assert_not_null(D->clEnqueueMapImage(q, ro, CL_FALSE, CL_MAP_READ, zero, all, &rp, NULL, 0,
                                          NULL, NULL, &err));
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(D->clReleaseMemObject(ro), CL_SUCCESS);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);

  D->clReleaseMemObject(wo);
  D->clReleaseMemObject(uh);
  D->clReleaseMemObject(a1);
  D->clReleaseMemObject(v3);
  D->clReleaseMemObject(img);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_memory, image_from_buffer)
{
  if (!has_images())
    cr_skip_test("the device has no images");
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  enum { W = 32 };
  float data[W * 4];
  for (int i = 0; i < W * 4; i++)
    data[i] = (float)i * 0.25f;
  cl_mem buf = make_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof data, data);
  cl_image_format f = {CL_RGBA, CL_FLOAT};
  cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER, .image_width = W, .buffer = buf};
  cl_int err = -1;
  cl_mem img = D->clCreateImage(ctx, 0, &f, &d, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS, "a 1D image buffer: %d", err);
  cl_mem_flags flags = 0;
  cr_assert_eq(D->clGetMemObjectInfo(img, CL_MEM_FLAGS, sizeof flags, &flags, NULL), CL_SUCCESS);
  cr_assert_eq(flags, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, "inherited from the buffer");
  cl_mem assoc = NULL;
  cr_assert_eq(D->clGetMemObjectInfo(img, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc,
                                     NULL),
               CL_SUCCESS);
  cr_assert_eq(assoc, buf);
  cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_BUFFER, sizeof assoc, &assoc, NULL), CL_SUCCESS);
  cr_assert_eq(assoc, buf);
  float back[W * 4] = {0};
  const size_t o[3] = {0, 0, 0}, r[3] = {W, 1, 1};
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, o, r, 0, 0, back, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_arr_eq(back, data, sizeof data, "the buffer's data through the image");

  /* Its rules. */
  cr_assert_null(D->clCreateImage(ctx, CL_MEM_WRITE_ONLY, &f, &d, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "write-only from a read-only buffer");
  cr_assert_null(D->clCreateImage(ctx, CL_MEM_USE_HOST_PTR, &f, &d, data, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "no host pointer flags from a buffer");
  d.image_width = W + 1;
  cr_assert_null(D->clCreateImage(ctx, 0, &f, &d, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_SIZE, "wider than the buffer holds");
  d.image_width = W;
  d.buffer = NULL;
  cr_assert_null(D->clCreateImage(ctx, 0, &f, &d, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_DESCRIPTOR, "a 1D image buffer needs its buffer");
  cr_assert_eq(D->clEnqueueCopyImageToBuffer(q, img, buf, o, r, 0, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT, "not into the image's own buffer");

  /* The buffer outlives its release while the image uses it. */
  cr_assert_eq(D->clReleaseMemObject(buf), CL_SUCCESS);
  memset(back, 0, sizeof back);
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, o, r, 0, 0, back, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_arr_eq(back, data, sizeof data);
  /* And so does its handle: CL_IMAGE_BUFFER gives it back, and it works
   * while the image lives (as on OpenCL implementations). */
  cl_mem again = NULL;
  cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_BUFFER, sizeof again, &again, NULL), CL_SUCCESS);
  cr_assert_eq(again, buf);
  size_t size = 0;
  cr_assert_eq(D->clGetMemObjectInfo(again, CL_MEM_SIZE, sizeof size, &size, NULL), CL_SUCCESS,
               "the released buffer's handle answers");
  cr_assert_eq(size, sizeof data);
  memset(back, 0, sizeof back);
  cr_assert_eq(D->clEnqueueReadBuffer(q, again, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL),
               CL_SUCCESS);
  cr_assert_arr_eq(back, data, sizeof data);
  cr_assert_eq(D->clReleaseMemObject(again), CL_INVALID_MEM_OBJECT,
               "the image's reference is not the application's");
  D->clReleaseMemObject(img);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_memory, supported_image_formats)
{
  cl_context ctx = fe_context();
  cl_uint n = 0;
  const cl_mem_object_type types[] = {CL_MEM_OBJECT_IMAGE1D,       CL_MEM_OBJECT_IMAGE1D_BUFFER,
                                      CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_MEM_OBJECT_IMAGE2D,
                                      CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_MEM_OBJECT_IMAGE3D};
  const cl_mem_flags flags[] = {CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY, CL_MEM_READ_WRITE};
  cr_assert_eq(D->clGetSupportedImageFormats(ctx, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0,
                                             NULL, &n),
               CL_SUCCESS);
  if (!has_images()) {
    cr_assert_eq(n, 0, "no formats without images");
    D->clReleaseContext(ctx);
    return;
  }
  cr_assert_geq(n, 11, "the required RGBA and BGRA formats at least");
  /* Every format listed works: an image of each type is made. */
  for (size_t t = 0; t < sizeof types / sizeof *types; t++)
    for (size_t k = 0; k < sizeof flags / sizeof *flags; k++) {
      cl_image_format fmts[64];
      cr_assert_eq(D->clGetSupportedImageFormats(ctx, flags[k], types[t], 64, fmts, &n),
                   CL_SUCCESS);
      bool rgba8 = false;
      for (cl_uint i = 0; i < n && i < 64; i++) {
        rgba8 |= fmts[i].image_channel_order == CL_RGBA &&
                 fmts[i].image_channel_data_type == CL_UNORM_INT8;
        cl_int err = -1;
        cl_mem backing = NULL;
        cl_image_desc d = {.image_type = types[t], .image_width = 4, .image_height = 4,
                           .image_depth = 2, .image_array_size = 2};
        if (types[t] == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
          backing = make_buffer(ctx, CL_MEM_READ_WRITE, 4 * 16, NULL);
          d.buffer = backing;
        }
        cl_mem m = D->clCreateImage(ctx, flags[k], &fmts[i], &d, NULL, &err);
        cr_assert_eq(err, CL_SUCCESS, "type 0x%x flags 0x%x format 0x%x/0x%x: %d",
                     (unsigned)types[t], (unsigned)flags[k], fmts[i].image_channel_order,
                     fmts[i].image_channel_data_type, err);
        D->clReleaseMemObject(m);
        if (backing)
          D->clReleaseMemObject(backing);
      }
      if (types[t] != CL_MEM_OBJECT_IMAGE3D || flags[k] == CL_MEM_READ_ONLY)
        cr_assert(rgba8, "RGBA UNORM_INT8 is listed for type 0x%x flags 0x%x",
                  (unsigned)types[t], (unsigned)flags[k]);
    }
  cl_image_format one;
  cr_assert_eq(D->clGetSupportedImageFormats(ctx, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 1, &one,
                                             &n),
               CL_SUCCESS, "a short array takes the first");
  cr_assert_eq(D->clGetSupportedImageFormats(ctx, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, &one,
                                             &n),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clGetSupportedImageFormats(ctx, CL_MEM_READ_ONLY, CL_MEM_OBJECT_BUFFER, 0, NULL,
                                             &n),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clGetSupportedImageFormats(ctx, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
                                             CL_MEM_OBJECT_IMAGE2D, 0, NULL, &n),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clGetSupportedImageFormats(NULL, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0,
                                             NULL, &n),
               CL_INVALID_CONTEXT);
  D->clReleaseContext(ctx);
}

/* Through the front end an OpenCL implementation's context lists the
 * implementation's own formats (asked of it through the context's native
 * handle), not only the specification's minimum: on PoCL and rusticl the
 * same list as the implementation gives the application directly (the
 * system's loader, OCL_ICD_VENDORS), CL_R among them (ffmpeg's planes). */
Test(fe_memory, supported_image_formats_are_the_implementation_s)
{
  if (!has_images())
    cr_skip_test("the device has no images");
  void *loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(loader, "%s", dlerror());
  cl_int (*platforms)(cl_uint, cl_platform_id *, cl_uint *) = dlsym(loader, "clGetPlatformIDs");
  cl_int (*devices)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *) =
      dlsym(loader, "clGetDeviceIDs");
  cl_context (*create)(const cl_context_properties *, cl_uint, const cl_device_id *, void *,
                       void *, cl_int *) = (void *)dlsym(loader, "clCreateContext");
  cl_int (*formats)(cl_context, cl_mem_flags, cl_mem_object_type, cl_uint, cl_image_format *,
                    cl_uint *) = dlsym(loader, "clGetSupportedImageFormats");
  cr_assert(platforms && devices && create && formats);
  cl_platform_id p;
  cl_device_id d;
  cl_int err = -1;
  cr_assert_eq(platforms(1, &p, NULL), CL_SUCCESS);
  cr_assert_eq(devices(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL), CL_SUCCESS);
  cl_context direct = create(NULL, 1, &d, NULL, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cl_context ctx = fe_context();
  const cl_mem_object_type types[] = {CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE3D};
  const cl_mem_flags flags[] = {CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY, CL_MEM_READ_WRITE};
  for (size_t t = 0; t < 2; t++)
    for (size_t k = 0; k < 3; k++) {
      cl_image_format want[256], got[256];
      cl_uint nw = 0, ng = 0, known = 0;
      cr_assert_eq(formats(direct, flags[k], types[t], 256, want, &nw), CL_SUCCESS);
      cr_assert_eq(D->clGetSupportedImageFormats(ctx, flags[k], types[t], 256, got, &ng),
                   CL_SUCCESS);
      bool r8 = false;
      for (cl_uint i = 0; i < nw && i < 256; i++) {
        bool listed = false;
        for (cl_uint j = 0; j < ng && j < 256 && !listed; j++)
          listed = got[j].image_channel_order == want[i].image_channel_order &&
                   got[j].image_channel_data_type == want[i].image_channel_data_type;
        /* Formats of a pixel size the front end does not know are left out. */
        if (!listed)
          continue;
        known++;
        r8 |= want[i].image_channel_order == CL_R &&
              want[i].image_channel_data_type == CL_UNORM_INT8;
      }
      cr_assert_eq(known, ng, "type 0x%x flags 0x%x: %u of the front end's %u formats are the "
                   "implementation's (%u)", (unsigned)types[t], (unsigned)flags[k], known, ng, nw);
      cr_assert_eq(ng, nw, "type 0x%x flags 0x%x: the front end lists %u of %u",
                    (unsigned)types[t], (unsigned)flags[k], ng, nw);
      if (types[t] == CL_MEM_OBJECT_IMAGE2D)
        cr_assert(r8, "CL_R UNORM_INT8 listed for flags 0x%x", (unsigned)flags[k]);
    }
  D->clReleaseContext(ctx);
  dlclose(loader);
}

/* The pitches and extents clGetImageInfo gives follow the image's type, as
 * OpenCL defines them, whatever the implementation keeps: rusticl answers
 * row pitch x height for every slice pitch (a 2D image's whole size, and 0
 * for a 1D array made with no height) and gives back the descriptor's
 * height and depth for types that have none. */
Test(fe_memory, image_info_follows_the_type)
{
  if (!has_images())
    cr_skip_test("the device has no images");
  cl_context ctx = fe_context();
  const struct {
    cl_mem_object_type type;
    bool slices; /* an image array's slice pitch: each image's size */
    bool height, depth;
  } kinds[] = {
      {CL_MEM_OBJECT_IMAGE1D, false, false, false},
      {CL_MEM_OBJECT_IMAGE1D_ARRAY, true, false, false},
      {CL_MEM_OBJECT_IMAGE2D, false, true, false},
      {CL_MEM_OBJECT_IMAGE2D_ARRAY, true, true, false},
  };
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
    /* A height in every descriptor: the 1D types ignore it. */
    cl_mem img = make_image(ctx, CL_MEM_READ_WRITE, CL_RGBA, CL_UNORM_INT8, kinds[i].type, 16,
                            8, 3, NULL);
    size_t row = 0, slice = 99, height = 99, depth = 99;
    cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_ROW_PITCH, sizeof row, &row, NULL),
                 CL_SUCCESS);
    cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_SLICE_PITCH, sizeof slice, &slice, NULL),
                 CL_SUCCESS);
    cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_HEIGHT, sizeof height, &height, NULL),
                 CL_SUCCESS);
    cr_assert_eq(D->clGetImageInfo(img, CL_IMAGE_DEPTH, sizeof depth, &depth, NULL),
                 CL_SUCCESS);
    cr_assert_geq(row, 16 * 4, "type 0x%x", (unsigned)kinds[i].type);
    if (!kinds[i].slices)
      cr_assert_eq(slice, 0, "type 0x%x: no slices, slice pitch 0", (unsigned)kinds[i].type);
    else
      cr_assert_geq(slice, row * (kinds[i].height ? 8 : 1), "type 0x%x: each image's size",
                    (unsigned)kinds[i].type);
    cr_assert_eq(height, kinds[i].height ? 8 : 0, "type 0x%x", (unsigned)kinds[i].type);
    cr_assert_eq(depth, 0, "type 0x%x", (unsigned)kinds[i].type);
    D->clReleaseMemObject(img);
  }
  D->clReleaseContext(ctx);
}

Test(fe_memory, image_bad_input)
{
  if (!has_images())
    cr_skip_test("the device has no images");
  cl_context ctx = fe_context(), other = fe_context();
  cl_command_queue q = make_queue(ctx), oq = make_queue(other);
  cl_int err = -1;
  cl_image_format f = {CL_RGBA, CL_UNORM_INT8}, bad = {0x1234, CL_UNORM_INT8},
                  packed = {CL_RGBA, CL_UNORM_SHORT_565};
  cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 8, .image_height = 8};
  uint8_t host[8 * 64] = {0}; /* room for a 64-byte row pitch */

  cr_assert_null(D->clCreateImage(NULL, 0, &f, &d, NULL, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clCreateImage((cl_context)q, 0, &f, &d, NULL, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT, "a queue is not a context");
  cr_assert_null(D->clCreateImage(ctx, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, &f, &d, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateImage(ctx, CL_MEM_KERNEL_READ_AND_WRITE, &f, &d, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "only for clGetSupportedImageFormats");
  cr_assert_null(D->clCreateImage(ctx, 0, NULL, &d, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  cr_assert_null(D->clCreateImage(ctx, 0, &bad, &d, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  cr_assert_null(D->clCreateImage(ctx, 0, &packed, &d, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "565 is for RGB only");
  cr_assert_null(D->clCreateImage(ctx, 0, &f, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_DESCRIPTOR);
  cl_image_desc dd = d;
  dd.image_type = CL_MEM_OBJECT_BUFFER;
  cr_assert_null(D->clCreateImage(ctx, 0, &f, &dd, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_DESCRIPTOR);
  dd = d;
  dd.num_mip_levels = 2;
  cr_assert_null(D->clCreateImage(ctx, 0, &f, &dd, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_DESCRIPTOR);
  dd = d;
  dd.image_row_pitch = 64;
  cr_assert_null(D->clCreateImage(ctx, 0, &f, &dd, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_DESCRIPTOR, "a row pitch without host memory");
  cl_mem pitched = D->clCreateImage(ctx, CL_MEM_COPY_HOST_PTR, &f, &dd, host, &err);
  cr_assert_eq(err, CL_SUCCESS, "with host memory it may have one");
  D->clReleaseMemObject(pitched);
  dd.image_row_pitch = 30;
  cr_assert_null(D->clCreateImage(ctx, CL_MEM_COPY_HOST_PTR, &f, &dd, host, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_DESCRIPTOR, "a row pitch shorter than a row");
  /* A zero extent is a bad descriptor value for clCreateImage (the
   * legacy calls below call it a size error). */
  dd = d;
  dd.image_width = 0;
  cr_assert_null(D->clCreateImage(ctx, 0, &f, &dd, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_DESCRIPTOR, "a zero width");
  dd = d;
  dd.image_height = 0;
  cr_assert_null(D->clCreateImage(ctx, 0, &f, &dd, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_DESCRIPTOR, "a zero height");
  dd = d;
  dd.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY;
  dd.image_array_size = 0;
  cr_assert_null(D->clCreateImage(ctx, 0, &f, &dd, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_DESCRIPTOR, "a zero array size");
  dd = d;
  dd.image_type = CL_MEM_OBJECT_IMAGE3D;
  dd.image_depth = 0;
  cr_assert_null(D->clCreateImage(ctx, 0, &f, &dd, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_DESCRIPTOR, "a zero depth");
  dd = d;
  size_t maxw = 0;
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof maxw, &maxw, NULL),
               CL_SUCCESS);
  dd.image_width = maxw + 1;
  cr_assert_null(D->clCreateImage(ctx, 0, &f, &dd, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_SIZE);
  cr_assert_null(D->clCreateImage(ctx, CL_MEM_USE_HOST_PTR, &f, &d, NULL, &err));
  cr_assert_eq(err, CL_INVALID_HOST_PTR);
  cr_assert_null(D->clCreateImage(ctx, 0, &f, &d, host, &err));
  cr_assert_eq(err, CL_INVALID_HOST_PTR);
  const cl_mem_properties props[] = {0x4213, 1, 0};
  cr_assert_null(D->clCreateImageWithProperties(ctx, props, 0, &f, &d, NULL, &err));
  cr_assert_eq(err, CL_INVALID_PROPERTY);
  cr_assert_null(D->clCreateImage2D(ctx, 0, &f, 0, 8, 0, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_SIZE);
  cr_assert_null(D->clCreateImage2D(ctx, 0, &f, 8, 0, 0, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_SIZE, "clCreateImage2D: a zero height is a size error");
  cr_assert_null(D->clCreateImage2D(ctx, 0, &f, 8, 8, 64, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_SIZE, "clCreateImage2D's pitch errors are size errors");
  cr_assert_null(D->clCreateImage3D(ctx, 0, &f, 8, 8, 1, 0, 0, NULL, &err));
  cr_assert_eq(err, CL_INVALID_IMAGE_SIZE, "a 3D image is deeper than 1");

  /* Commands. */
  cl_mem img = make_image(ctx, CL_MEM_READ_WRITE, CL_RGBA, CL_UNORM_INT8, CL_MEM_OBJECT_IMAGE2D, 8,
                          8, 0, NULL);
  cl_mem img2 = make_image(ctx, CL_MEM_READ_WRITE, CL_RGBA, CL_UNSIGNED_INT8,
                           CL_MEM_OBJECT_IMAGE2D, 8, 8, 0, NULL);
  cl_mem buf = make_buffer(ctx, CL_MEM_READ_WRITE, 1024, NULL);
  cl_mem nohost = make_image(ctx, CL_MEM_HOST_NO_ACCESS, CL_RGBA, CL_UNORM_INT8,
                             CL_MEM_OBJECT_IMAGE2D, 8, 8, 0, NULL);
  cl_mem theirs = make_image(other, CL_MEM_READ_WRITE, CL_RGBA, CL_UNORM_INT8,
                             CL_MEM_OBJECT_IMAGE2D, 8, 8, 0, NULL);
  const size_t o[3] = {0, 0, 0}, r[3] = {8, 8, 1}, far[3] = {1, 0, 0}, z1[3] = {0, 0, 1},
               r0[3] = {0, 8, 1};
  cr_assert_eq(D->clEnqueueReadImage(NULL, img, CL_TRUE, o, r, 0, 0, host, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(D->clEnqueueReadImage(q, buf, CL_TRUE, o, r, 0, 0, host, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT, "a buffer is not an image");
  cr_assert_eq(D->clEnqueueReadImage(q, theirs, CL_TRUE, o, r, 0, 0, host, 0, NULL, NULL),
               CL_INVALID_CONTEXT);
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, NULL, r, 0, 0, host, 0, NULL, NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, far, r, 0, 0, host, 0, NULL, NULL),
               CL_INVALID_VALUE, "out of bounds");
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, z1, r, 0, 0, host, 0, NULL, NULL),
               CL_INVALID_VALUE, "origin[2] of a 2D image is 0");
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, o, r0, 0, 0, host, 0, NULL, NULL),
               CL_INVALID_VALUE, "an empty region");
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, o, r, 0, 0, NULL, 0, NULL, NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, o, r, 16, 0, host, 0, NULL, NULL),
               CL_INVALID_VALUE, "a row pitch shorter than the row");
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, o, r, 0, 256, host, 0, NULL, NULL),
               CL_INVALID_VALUE, "a slice pitch for a 2D image");
  cr_assert_eq(D->clEnqueueReadImage(q, nohost, CL_TRUE, o, r, 0, 0, host, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  cr_assert_eq(D->clEnqueueWriteImage(q, nohost, CL_TRUE, o, r, 0, 0, host, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  cr_assert_eq(D->clEnqueueReadImage(q, img, CL_TRUE, o, r, 0, 0, host, 1, NULL, NULL),
               CL_INVALID_EVENT_WAIT_LIST);
  cr_assert_eq(D->clEnqueueCopyImage(q, img, img2, o, o, r, 0, NULL, NULL),
               CL_IMAGE_FORMAT_MISMATCH);
  const size_t half[3] = {4, 4, 1}, at2[3] = {2, 2, 0};
  cr_assert_eq(D->clEnqueueCopyImage(q, img, img, o, at2, half, 0, NULL, NULL),
               CL_MEM_COPY_OVERLAP);
  cr_assert_eq(D->clEnqueueCopyImage(q, img, theirs, o, o, r, 0, NULL, NULL), CL_INVALID_CONTEXT);
  cr_assert_eq(D->clEnqueueFillImage(q, img, NULL, o, r, 0, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueFillImage(oq, img, host, o, r, 0, NULL, NULL), CL_INVALID_CONTEXT);
  cr_assert_eq(D->clEnqueueCopyBufferToImage(q, img, img2, 0, o, r, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT, "the source must be a buffer");
  cr_assert_eq(D->clGetImageInfo(buf, CL_IMAGE_WIDTH, sizeof(size_t), host, NULL),
               CL_INVALID_MEM_OBJECT);

  D->clReleaseMemObject(img);
  D->clReleaseMemObject(img2);
  D->clReleaseMemObject(buf);
  D->clReleaseMemObject(nohost);
  D->clReleaseMemObject(theirs);
  D->clReleaseCommandQueue(q);
  D->clReleaseCommandQueue(oq);
  D->clReleaseContext(ctx);
  D->clReleaseContext(other);
}

/* ---- Samplers ----------------------------------------------------------------------- */

Test(fe_memory, samplers)
{
  if (!has_images())
    cr_skip_test("the device has no images");
  cl_context ctx = fe_context();
  cl_int err = -1;
  cl_sampler s = D->clCreateSampler(ctx, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_LINEAR,
                                    &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateSampler: %d", err);
  cl_bool norm = CL_TRUE;
  cl_addressing_mode am = 0;
  cl_filter_mode fm = 0;
  cl_uint refs = 0;
  cl_context c = NULL;
  size_t ret = 9;
  cr_assert_eq(D->clGetSamplerInfo(s, CL_SAMPLER_NORMALIZED_COORDS, sizeof norm, &norm, NULL),
               CL_SUCCESS);
  cr_assert_eq(norm, CL_FALSE);
  cr_assert_eq(D->clGetSamplerInfo(s, CL_SAMPLER_ADDRESSING_MODE, sizeof am, &am, NULL),
               CL_SUCCESS);
  cr_assert_eq(am, CL_ADDRESS_CLAMP_TO_EDGE);
  cr_assert_eq(D->clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, sizeof fm, &fm, NULL), CL_SUCCESS);
  cr_assert_eq(fm, CL_FILTER_LINEAR);
  cr_assert_eq(D->clGetSamplerInfo(s, CL_SAMPLER_CONTEXT, sizeof c, &c, NULL), CL_SUCCESS);
  cr_assert_eq(c, ctx);
  cr_assert_eq(D->clGetSamplerInfo(s, CL_SAMPLER_PROPERTIES, 0, NULL, &ret), CL_SUCCESS);
  cr_assert_eq(ret, 0, "clCreateSampler: no properties");
  cr_assert_eq(D->clRetainSampler(s), CL_SUCCESS);
  cr_assert_eq(D->clGetSamplerInfo(s, CL_SAMPLER_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_SUCCESS);
  cr_assert_eq(refs, 2);
  cr_assert_eq(D->clReleaseSampler(s), CL_SUCCESS);
  cr_assert_eq(D->clGetSamplerInfo(s, CL_SAMPLER_REFERENCE_COUNT, sizeof refs, &refs, NULL),
               CL_SUCCESS);
  cr_assert_eq(refs, 1);
  cr_assert_eq(D->clReleaseSampler(s), CL_SUCCESS);

  const cl_sampler_properties props[] = {CL_SAMPLER_ADDRESSING_MODE, CL_ADDRESS_REPEAT, 0};
  s = D->clCreateSamplerWithProperties(ctx, props, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cl_sampler_properties got[4] = {0};
  cr_assert_eq(D->clGetSamplerInfo(s, CL_SAMPLER_PROPERTIES, sizeof got, got, &ret), CL_SUCCESS);
  cr_assert_eq(ret, sizeof props);
  cr_assert_arr_eq(got, props, sizeof props);
  cr_assert_eq(D->clGetSamplerInfo(s, CL_SAMPLER_NORMALIZED_COORDS, sizeof norm, &norm, NULL),
               CL_SUCCESS);
  cr_assert_eq(norm, CL_TRUE, "the default");
  cr_assert_eq(D->clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, sizeof fm, &fm, NULL), CL_SUCCESS);
  cr_assert_eq(fm, CL_FILTER_NEAREST, "the default");
  cr_assert_eq(D->clGetSamplerInfo(s, CL_SAMPLER_ADDRESSING_MODE, 1, &am, NULL),
               CL_INVALID_VALUE);
  cr_assert_eq(D->clReleaseSampler(s), CL_SUCCESS);
  s = D->clCreateSamplerWithProperties(ctx, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS, "all defaults");
  D->clReleaseSampler(s);

  /* Bad input. */
  cr_assert_null(D->clCreateSampler(NULL, CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clCreateSampler(ctx, CL_TRUE, 0x7777, CL_FILTER_NEAREST, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateSampler(ctx, CL_TRUE, CL_ADDRESS_CLAMP, 0x7777, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateSampler(ctx, 7, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  const cl_sampler_properties twice[] = {CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR,
                                         CL_SAMPLER_FILTER_MODE, CL_FILTER_NEAREST, 0};
  cr_assert_null(D->clCreateSamplerWithProperties(ctx, twice, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "a name twice");
  const cl_sampler_properties unknown[] = {0x7777, 1, 0};
  cr_assert_null(D->clCreateSamplerWithProperties(ctx, unknown, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_eq(D->clGetSamplerInfo(NULL, CL_SAMPLER_CONTEXT, sizeof c, &c, NULL),
               CL_INVALID_SAMPLER);
  cr_assert_eq(D->clGetSamplerInfo((cl_sampler)ctx, CL_SAMPLER_CONTEXT, sizeof c, &c, NULL),
               CL_INVALID_SAMPLER);
  cr_assert_eq(D->clRetainSampler(NULL), CL_INVALID_SAMPLER);
  D->clReleaseContext(ctx);
}

/* ---- USM ------------------------------------------------------------------------------ */

typedef void *(CL_API_CALL *host_alloc_fn)(cl_context, const cl_mem_properties_intel *, size_t,
                                           cl_uint, cl_int *);
typedef void *(CL_API_CALL *dev_alloc_fn)(cl_context, cl_device_id,
                                          const cl_mem_properties_intel *, size_t, cl_uint,
                                          cl_int *);
typedef cl_int(CL_API_CALL *free_fn)(cl_context, void *);
typedef cl_int(CL_API_CALL *info_fn)(cl_context, const void *, cl_mem_info_intel, size_t, void *,
                                     size_t *);
typedef cl_int(CL_API_CALL *memcpy_fn)(cl_command_queue, cl_bool, void *, const void *, size_t,
                                       cl_uint, const cl_event *, cl_event *);
typedef cl_int(CL_API_CALL *fill_fn)(cl_command_queue, void *, const void *, size_t, size_t,
                                     cl_uint, const cl_event *, cl_event *);

Test(fe_memory, usm)
{
  host_alloc_fn host_alloc = (host_alloc_fn)fe_ext("clHostMemAllocINTEL");
  dev_alloc_fn dev_alloc = (dev_alloc_fn)fe_ext("clDeviceMemAllocINTEL");
  dev_alloc_fn shared_alloc = (dev_alloc_fn)fe_ext("clSharedMemAllocINTEL");
  free_fn mem_free = (free_fn)fe_ext("clMemBlockingFreeINTEL");
  free_fn mem_free_nb = (free_fn)fe_ext("clMemFreeINTEL");
  info_fn info = (info_fn)fe_ext("clGetMemAllocInfoINTEL");
  memcpy_fn copy = (memcpy_fn)fe_ext("clEnqueueMemcpyINTEL");
  fill_fn fill = (fill_fn)fe_ext("clEnqueueMemFillINTEL");
  cr_assert(host_alloc && dev_alloc && shared_alloc && mem_free && mem_free_nb && info && copy &&
                fill,
            "the USM entry points are offered");
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  cl_device_unified_shared_memory_capabilities_intel dcaps = 0, hcaps = 0;
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL, sizeof dcaps,
                                  &dcaps, NULL),
               CL_SUCCESS);
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL, sizeof hcaps,
                                  &hcaps, NULL),
               CL_SUCCESS);
  cl_int err = -1;
  cr_assert_eq(mem_free(ctx, NULL), CL_SUCCESS, "freeing NULL does nothing");
  cr_assert_null(host_alloc(NULL, NULL, 64, 0, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(dev_alloc(ctx, NULL, NULL, 64, 0, &err));
  cr_assert_eq(err, CL_INVALID_DEVICE);
  int probe = 0;
  if (!dcaps) {
    /* No USM on this device: refused, honestly. */
    cr_assert_null(dev_alloc(ctx, fe_dev, NULL, 64, 0, &err));
    cr_assert_eq(err, CL_INVALID_OPERATION);
    if (!hcaps) {
      cr_assert_null(host_alloc(ctx, NULL, 64, 0, &err));
      cr_assert_eq(err, CL_INVALID_OPERATION);
    }
    cr_assert_eq(copy(q, CL_TRUE, &probe, &err, sizeof probe, 0, NULL, NULL),
                 CL_INVALID_OPERATION);
    cl_unified_shared_memory_type_intel t = 0;
    cr_assert_eq(info(ctx, &probe, CL_MEM_ALLOC_TYPE_INTEL, sizeof t, &t, NULL), CL_SUCCESS);
    cr_assert_eq(t, CL_MEM_TYPE_UNKNOWN_INTEL, "not a USM pointer");
    cl_device_id d = fe_dev;
    cr_assert_eq(info(ctx, &probe, CL_MEM_ALLOC_DEVICE_INTEL, sizeof d, &d, NULL), CL_SUCCESS);
    cr_assert_null(d);
    if (!hcaps)
      cr_assert_eq(mem_free(ctx, &probe), CL_INVALID_VALUE, "not from a USM allocation");
  } else {
    /* A device allocation: filled, copied to the host, freed. */
    enum { N = 64 };
    int *dev = dev_alloc(ctx, fe_dev, NULL, N * sizeof(int), 0, &err);
    cr_assert_eq(err, CL_SUCCESS, "clDeviceMemAllocINTEL: %d", err);
    const int pattern = 0x5a5a1234;
    cr_assert_eq(fill(q, dev, &pattern, sizeof pattern, N * sizeof(int), 0, NULL, NULL),
                 CL_SUCCESS);
    int back[N];
    cr_assert_eq(copy(q, CL_TRUE, back, dev, sizeof back, 0, NULL, NULL), CL_SUCCESS);
    for (int i = 0; i < N; i++)
      cr_assert_eq(back[i], pattern);
    cl_device_id d = NULL;
    cr_assert_eq(info(ctx, dev + 3, CL_MEM_ALLOC_DEVICE_INTEL, sizeof d, &d, NULL), CL_SUCCESS);
    cr_assert_eq(d, fe_dev, "the device as the application knows it");
    cl_unified_shared_memory_type_intel t = 0;
    cr_assert_eq(info(ctx, dev, CL_MEM_ALLOC_TYPE_INTEL, sizeof t, &t, NULL), CL_SUCCESS);
    cr_assert_eq(t, CL_MEM_TYPE_DEVICE_INTEL);
    cr_assert_eq(copy(q, CL_TRUE, dev + 1, dev, 8, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
    cr_assert_eq(mem_free(ctx, dev), CL_SUCCESS);
  }
  /* Checks that hold with or without USM. */
  cr_assert_eq(copy(NULL, CL_TRUE, &probe, &err, 4, 0, NULL, NULL), CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(info(NULL, &probe, CL_MEM_ALLOC_TYPE_INTEL, 4, &probe, NULL), CL_INVALID_CONTEXT);
  cr_assert_eq(info(ctx, &probe, 0x7777, 4, &probe, NULL), CL_INVALID_VALUE);
  cr_assert_eq(mem_free_nb(NULL, &probe), CL_INVALID_CONTEXT);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

/* ---- Bad input for buffers --------------------------------------------------------------- */

Test(fe_memory, buffer_bad_input)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  cl_int err = -1;
  char host[64];
  cr_assert_null(D->clCreateBuffer(NULL, 0, 64, NULL, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clCreateBuffer((cl_context)q, 0, 64, NULL, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY, 64, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateBuffer(ctx, CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS, 64, NULL,
                                   &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR, 64, host,
                                   &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR, 64, host,
                                   &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateBuffer(ctx, (cl_mem_flags)1 << 40, 64, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "an unknown flag");
  cr_assert_null(D->clCreateBuffer(ctx, CL_MEM_SVM_FINE_GRAIN_BUFFER, 64, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "an SVM flag");
  cr_assert_null(D->clCreateBuffer(ctx, 0, 0, NULL, &err));
  cr_assert_eq(err, CL_INVALID_BUFFER_SIZE);
  cl_ulong max = 0;
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max, &max, NULL),
               CL_SUCCESS);
  cr_assert_null(D->clCreateBuffer(ctx, 0, (size_t)max + 1, NULL, &err));
  cr_assert_eq(err, CL_INVALID_BUFFER_SIZE);
  cr_assert_null(D->clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, 64, NULL, &err));
  cr_assert_eq(err, CL_INVALID_HOST_PTR);
  cr_assert_null(D->clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, host, &err));
  cr_assert_eq(err, CL_INVALID_HOST_PTR);
  const cl_mem_properties unknown[] = {0x7777, 1, 0};
  cr_assert_null(D->clCreateBufferWithProperties(ctx, unknown, 0, 64, NULL, &err));
  cr_assert_eq(err, CL_INVALID_PROPERTY);
  cr_assert_null(D->clCreateSubBuffer(NULL, 0, CL_BUFFER_CREATE_TYPE_REGION,
                                      &(cl_buffer_region){0, 8}, &err));
  cr_assert_eq(err, CL_INVALID_MEM_OBJECT);
  cr_assert_null(D->clCreateSubBuffer((cl_mem)ctx, 0, CL_BUFFER_CREATE_TYPE_REGION,
                                      &(cl_buffer_region){0, 8}, &err));
  cr_assert_eq(err, CL_INVALID_MEM_OBJECT, "a context is not a buffer");
  if (has_images()) {
    cl_image_format f = {CL_RGBA, CL_UNORM_INT8};
    cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 4, .image_height = 4};
    cl_mem img = D->clCreateImage(ctx, 0, &f, &d, NULL, &err);
    cr_assert_eq(err, CL_SUCCESS);
    cr_assert_null(D->clCreateSubBuffer(img, 0, CL_BUFFER_CREATE_TYPE_REGION,
                                        &(cl_buffer_region){0, 8}, &err));
    cr_assert_eq(err, CL_INVALID_MEM_OBJECT, "an image is not a buffer");
    D->clReleaseMemObject(img);
  }
  cr_assert_eq(D->clRetainMemObject(NULL), CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clReleaseMemObject(NULL), CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clReleaseMemObject((cl_mem)q), CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clSetMemObjectDestructorCallback(NULL, destroyed_1, NULL),
               CL_INVALID_MEM_OBJECT);
  size_t sz;
  cr_assert_eq(D->clGetMemObjectInfo(NULL, CL_MEM_SIZE, sizeof sz, &sz, NULL),
               CL_INVALID_MEM_OBJECT);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

/* ---- What PI cannot express ---------------------------------------------------------------- */

Test(fe_memory, unsupported_features)
{
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  cl_int err = -1;
  int x = 0;
  void *ptrs[1] = {&x};
  /* SVM: none. */
  cr_assert_null(D->clSVMAlloc(ctx, CL_MEM_READ_WRITE, 64, 0));
  D->clSVMFree(ctx, NULL);
  cr_assert_eq(D->clEnqueueSVMFree(q, 1, ptrs, NULL, NULL, 0, NULL, NULL), CL_INVALID_OPERATION);
  cr_assert_eq(D->clEnqueueSVMFree(NULL, 1, ptrs, NULL, NULL, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
  cr_assert_eq(D->clEnqueueSVMMemcpy(q, CL_TRUE, &x, &err, 4, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  cr_assert_eq(D->clEnqueueSVMMemFill(q, &x, &err, 4, 4, 0, NULL, NULL), CL_INVALID_OPERATION);
  cr_assert_eq(D->clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, &x, 4, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  cr_assert_eq(D->clEnqueueSVMUnmap(q, &x, 0, NULL, NULL), CL_INVALID_OPERATION);
  const void *cptrs[1] = {&x};
  cr_assert_eq(D->clEnqueueSVMMigrateMem(q, 1, cptrs, NULL, 0, 0, NULL, NULL),
               CL_INVALID_OPERATION);
  cr_assert_eq(D->clSetKernelArgSVMPointer(NULL, 0, &x), CL_INVALID_KERNEL);
  /* Pipes: none. */
  cr_assert_null(D->clCreatePipe(ctx, 0, 4, 16, NULL, &err));
  cr_assert_eq(err, CL_INVALID_OPERATION);
  cr_assert_null(D->clCreatePipe(NULL, 0, 4, 16, NULL, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cl_mem buf = make_buffer(ctx, 0, 64, NULL);
  cl_uint u;
  cr_assert_eq(D->clGetPipeInfo(buf, CL_PIPE_PACKET_SIZE, sizeof u, &u, NULL),
               CL_INVALID_MEM_OBJECT, "a buffer is not a pipe");
  /* OpenGL: no context comes from one. */
  cr_assert_null(D->clCreateFromGLBuffer(ctx, CL_MEM_READ_WRITE, 1, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clCreateFromGLTexture(ctx, CL_MEM_READ_WRITE, 0x0DE1, 0, 1, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clCreateFromGLTexture2D(ctx, CL_MEM_READ_WRITE, 0x0DE1, 0, 1, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clCreateFromGLTexture3D(ctx, CL_MEM_READ_WRITE, 0x806F, 0, 1, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_null(D->clCreateFromGLRenderbuffer(ctx, CL_MEM_READ_WRITE, 1, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cl_gl_object_type gt;
  cl_GLuint gn;
  cr_assert_eq(D->clGetGLObjectInfo(buf, &gt, &gn), CL_INVALID_GL_OBJECT);
  cr_assert_eq(D->clGetGLObjectInfo(NULL, &gt, &gn), CL_INVALID_MEM_OBJECT);
  cr_assert_eq(D->clGetGLTextureInfo(buf, CL_GL_MIPMAP_LEVEL, sizeof u, &u, NULL),
               CL_INVALID_GL_OBJECT);
  cr_assert_eq(D->clEnqueueAcquireGLObjects(q, 1, &buf, 0, NULL, NULL), CL_INVALID_CONTEXT);
  cr_assert_eq(D->clEnqueueReleaseGLObjects(q, 1, &buf, 0, NULL, NULL), CL_INVALID_CONTEXT);
  cr_assert_eq(D->clEnqueueAcquireGLObjects(q, 0, NULL, 0, NULL, NULL), CL_SUCCESS,
               "an empty list does nothing");
  cr_assert_eq(D->clEnqueueAcquireGLObjects(q, 1, NULL, 0, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(D->clEnqueueAcquireGLObjects(NULL, 1, &buf, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
  const cl_context_properties glprops[] = {CL_GL_CONTEXT_KHR, 1, 0};
  cl_device_id gd;
  cr_assert_eq(D->clGetGLContextInfoKHR(glprops, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR, sizeof gd,
                                        &gd, NULL),
               CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR);
  cr_assert_eq(D->clGetGLContextInfoKHR(glprops, 0x7777, sizeof gd, &gd, NULL), CL_INVALID_VALUE);
  cr_assert_null(D->clCreateEventFromGLsyncKHR(ctx, NULL, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  /* EGL: likewise. */
  cr_assert_null(D->clCreateFromEGLImageKHR(ctx, NULL, NULL, CL_MEM_READ_ONLY, NULL, &err));
  cr_assert_eq(err, has_images() ? CL_IMAGE_FORMAT_NOT_SUPPORTED : CL_INVALID_OPERATION);
  cr_assert_null(D->clCreateFromEGLImageKHR(ctx, NULL, NULL, CL_MEM_USE_HOST_PTR, NULL, &err));
  cr_assert_eq(err, CL_INVALID_VALUE);
  cr_assert_null(D->clCreateFromEGLImageKHR(NULL, NULL, NULL, CL_MEM_READ_ONLY, NULL, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  cr_assert_eq(D->clEnqueueAcquireEGLObjectsKHR(q, 1, &buf, 0, NULL, NULL),
               CL_INVALID_EGL_OBJECT_KHR);
  cr_assert_eq(D->clEnqueueReleaseEGLObjectsKHR(q, 1, &buf, 0, NULL, NULL),
               CL_INVALID_EGL_OBJECT_KHR);
  cl_mem bogus = (cl_mem)ctx;
  cr_assert_eq(D->clEnqueueAcquireEGLObjectsKHR(q, 1, &bogus, 0, NULL, NULL),
               CL_INVALID_MEM_OBJECT);
  cr_assert_null(D->clCreateEventFromEGLSyncKHR(ctx, NULL, NULL, &err));
  cr_assert_eq(err, CL_INVALID_CONTEXT);
  /* Device fission's EXT entry points. */
  const cl_device_partition_property_ext eq[] = {CL_DEVICE_PARTITION_EQUALLY_EXT, 1,
                                                 CL_PROPERTIES_LIST_END_EXT};
  cr_assert_eq(D->clCreateSubDevicesEXT(fe_dev, eq, 0, NULL, &u), CL_INVALID_OPERATION);
  cr_assert_eq(D->clCreateSubDevicesEXT(NULL, eq, 0, NULL, &u), CL_INVALID_DEVICE);
  cr_assert_eq(D->clRetainDeviceEXT(fe_dev), CL_INVALID_OPERATION);
  cr_assert_eq(D->clReleaseDeviceEXT((cl_device_id)ctx), CL_INVALID_DEVICE);
  D->clReleaseMemObject(buf);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

/* ---- USM on a device that has it: Level Zero over its driver test double ------------------ */

TestSuite(fe_memory_ze, .init = fe_setup, .timeout = 120);

typedef cl_int(CL_API_CALL *memset_fn)(cl_command_queue, void *, cl_int, size_t, cl_uint,
                                       const cl_event *, cl_event *);
typedef cl_int(CL_API_CALL *migrate_fn)(cl_command_queue, const void *, size_t,
                                        cl_mem_migration_flags, cl_uint, const cl_event *,
                                        cl_event *);
typedef cl_int(CL_API_CALL *advise_fn)(cl_command_queue, const void *, size_t,
                                       cl_mem_advice_intel, cl_uint, const cl_event *,
                                       cl_event *);

static cl_command_type type_of(cl_event ev)
{
  cl_command_type t = 0;
  cr_assert_eq(D->clWaitForEvents(1, &ev), CL_SUCCESS);
  cr_assert_eq(D->clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof t, &t, NULL), CL_SUCCESS);
  D->clReleaseEvent(ev);
  return t;
}

Test(fe_memory_ze, usm_allocations_and_commands)
{
  host_alloc_fn host_alloc = (host_alloc_fn)fe_ext("clHostMemAllocINTEL");
  dev_alloc_fn shared_alloc = (dev_alloc_fn)fe_ext("clSharedMemAllocINTEL");
  dev_alloc_fn dev_alloc = (dev_alloc_fn)fe_ext("clDeviceMemAllocINTEL");
  free_fn blocking_free = (free_fn)fe_ext("clMemBlockingFreeINTEL");
  free_fn mem_free = (free_fn)fe_ext("clMemFreeINTEL");
  info_fn info = (info_fn)fe_ext("clGetMemAllocInfoINTEL");
  memcpy_fn copy = (memcpy_fn)fe_ext("clEnqueueMemcpyINTEL");
  fill_fn fill = (fill_fn)fe_ext("clEnqueueMemFillINTEL");
  memset_fn mset = (memset_fn)fe_ext("clEnqueueMemsetINTEL");
  migrate_fn migrate = (migrate_fn)fe_ext("clEnqueueMigrateMemINTEL");
  advise_fn advise = (advise_fn)fe_ext("clEnqueueMemAdviseINTEL");
  cl_context ctx = fe_context();
  cl_command_queue q = make_queue(ctx);
  cl_device_unified_shared_memory_capabilities_intel caps = 0;
  cr_assert_eq(D->clGetDeviceInfo(fe_dev, CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL, sizeof caps,
                                  &caps, NULL),
               CL_SUCCESS);
  cr_assert_neq(caps, 0, "the test double has USM");
  cl_int err = -1;

  /* A host allocation with flags: they are answered back. */
  const cl_mem_properties_intel wc[] = {CL_MEM_ALLOC_FLAGS_INTEL,
                                        CL_MEM_ALLOC_WRITE_COMBINED_INTEL, 0};
  unsigned char *h = host_alloc(ctx, wc, 256, 64, &err);
  cr_assert_eq(err, CL_SUCCESS, "clHostMemAllocINTEL: %d", err);
  cr_assert_eq((uintptr_t)h % 64, 0);
  cl_mem_alloc_flags_intel flags = 0;
  cr_assert_eq(info(ctx, h + 17, CL_MEM_ALLOC_FLAGS_INTEL, sizeof flags, &flags, NULL),
               CL_SUCCESS);
  cr_assert_eq(flags, CL_MEM_ALLOC_WRITE_COMBINED_INTEL);
  cl_unified_shared_memory_type_intel t = 0;
  cr_assert_eq(info(ctx, h, CL_MEM_ALLOC_TYPE_INTEL, sizeof t, &t, NULL), CL_SUCCESS);
  cr_assert_eq(t, CL_MEM_TYPE_HOST_INTEL);
  void *base = NULL;
  cr_assert_eq(info(ctx, h + 17, CL_MEM_ALLOC_BASE_PTR_INTEL, sizeof base, &base, NULL),
               CL_SUCCESS);
  cr_assert_eq(base, h);
  size_t size = 0;
  cr_assert_eq(info(ctx, h, CL_MEM_ALLOC_SIZE_INTEL, sizeof size, &size, NULL), CL_SUCCESS);
  cr_assert_geq(size, 256);
  cl_device_id d = fe_dev;
  cr_assert_eq(info(ctx, h, CL_MEM_ALLOC_DEVICE_INTEL, sizeof d, &d, NULL), CL_SUCCESS);
  cr_assert_null(d, "a host allocation has no device");

  /* Commands: memset, fill, copy, and their events. */
  memset(h, 0, 256);
  cl_event ev = NULL;
  cr_assert_eq(mset(q, h + 8, 0x33, 16, 0, NULL, &ev), CL_SUCCESS);
  cr_assert_eq(type_of(ev), CL_COMMAND_MEMFILL_INTEL);
  const uint16_t pat = 0xBEEF;
  cr_assert_eq(fill(q, h + 64, &pat, sizeof pat, 32, 0, NULL, NULL), CL_SUCCESS);
  unsigned char back[256];
  cr_assert_eq(copy(q, CL_TRUE, back, h, sizeof back, 0, NULL, &ev), CL_SUCCESS);
  cr_assert_eq(type_of(ev), CL_COMMAND_MEMCPY_INTEL);
  for (int i = 0; i < 256; i++) {
    unsigned char want = i >= 8 && i < 24 ? 0x33 : 0;
    if (i >= 64 && i < 96)
      want = (i % 2) ? 0xBE : 0xEF;
    cr_assert_eq(back[i], want, "byte %d", i);
  }

  /* Shared allocations: with a device, and without one (none is answered). */
  int *s = shared_alloc(ctx, fe_dev, NULL, 64, 0, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(info(ctx, s, CL_MEM_ALLOC_DEVICE_INTEL, sizeof d, &d, NULL), CL_SUCCESS);
  cr_assert_eq(d, fe_dev);
  const cl_mem_properties_intel place[] = {CL_MEM_ALLOC_FLAGS_INTEL,
                                           CL_MEM_ALLOC_INITIAL_PLACEMENT_HOST_INTEL, 0};
  int *anywhere = shared_alloc(ctx, NULL, place, 64, 0, &err);
  cr_assert_eq(err, CL_SUCCESS);
  d = fe_dev;
  cr_assert_eq(info(ctx, anywhere + 2, CL_MEM_ALLOC_DEVICE_INTEL, sizeof d, &d, NULL),
               CL_SUCCESS);
  cr_assert_null(d, "allocated without a device");
  cr_assert_eq(info(ctx, anywhere, CL_MEM_ALLOC_FLAGS_INTEL, sizeof flags, &flags, NULL),
               CL_SUCCESS);
  cr_assert_eq(flags, CL_MEM_ALLOC_INITIAL_PLACEMENT_HOST_INTEL);
  cr_assert_eq(migrate(q, s, 64, 0, 0, NULL, &ev), CL_SUCCESS);
  cr_assert_eq(type_of(ev), CL_COMMAND_MIGRATEMEM_INTEL);
  cr_assert_eq(migrate(q, s, 64, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL), CL_SUCCESS);
  cr_assert_eq(migrate(q, s, 64, 0x100, 0, NULL, NULL), CL_INVALID_VALUE);
  cr_assert_eq(advise(q, s, 64, 0, 0, NULL, &ev), CL_SUCCESS);
  cr_assert_eq(type_of(ev), CL_COMMAND_MEMADVISE_INTEL);
  cr_assert_eq(D->clFinish(q), CL_SUCCESS);

  /* Refusals. */
  const cl_mem_properties_intel both[] = {
      CL_MEM_ALLOC_FLAGS_INTEL,
      CL_MEM_ALLOC_INITIAL_PLACEMENT_HOST_INTEL | CL_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE_INTEL, 0};
  cr_assert_null(shared_alloc(ctx, fe_dev, both, 64, 0, &err));
  cr_assert_eq(err, CL_INVALID_PROPERTY);
  cr_assert_null(host_alloc(ctx, place, 64, 0, &err));
  cr_assert_eq(err, CL_INVALID_PROPERTY, "placement is for shared allocations");
  const cl_mem_properties_intel twice[] = {CL_MEM_ALLOC_FLAGS_INTEL, 0,
                                           CL_MEM_ALLOC_FLAGS_INTEL, 0, 0};
  cr_assert_null(dev_alloc(ctx, fe_dev, twice, 64, 0, &err));
  cr_assert_eq(err, CL_INVALID_PROPERTY);
  cr_assert_null(dev_alloc(ctx, fe_dev, NULL, 64, 3, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "an alignment that is not a power of two");
  cr_assert_null(dev_alloc(ctx, fe_dev, NULL, 64, 256, &err));
  cr_assert_eq(err, CL_INVALID_VALUE, "an alignment beyond the largest type");
  cr_assert_null(dev_alloc(ctx, fe_dev, NULL, 0, 0, &err));
  cr_assert_eq(err, CL_INVALID_BUFFER_SIZE);
  cr_assert_null(dev_alloc(ctx, (cl_device_id)ctx, NULL, 64, 0, &err));
  cr_assert_eq(err, CL_INVALID_DEVICE);
  cr_assert_eq(fill(q, h, &pat, 3, 30, 0, NULL, NULL), CL_INVALID_VALUE, "pattern size 3");
  cr_assert_eq(fill(q, h + 1, &pat, 2, 32, 0, NULL, NULL), CL_INVALID_VALUE, "misaligned");
  cr_assert_eq(fill(q, h, &pat, 2, 31, 0, NULL, NULL), CL_INVALID_VALUE, "not a multiple");
  cr_assert_eq(copy(q, CL_TRUE, h + 4, h, 16, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
  cr_assert_eq(copy(q, CL_TRUE, NULL, h, 16, 0, NULL, NULL), CL_INVALID_VALUE);

  cr_assert_eq(mem_free(ctx, anywhere), CL_SUCCESS);
  cr_assert_eq(blocking_free(ctx, s), CL_SUCCESS);
  cr_assert_eq(blocking_free(ctx, h), CL_SUCCESS);
  D->clReleaseCommandQueue(q);
  D->clReleaseContext(ctx);
}

Test(fe_memory_ze, no_image_formats_claimed)
{
  cl_context ctx = fe_context();
  cl_uint n = 99;
  cr_assert_eq(D->clGetSupportedImageFormats(ctx, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0,
                                             NULL, &n),
               CL_SUCCESS);
  cr_assert_eq(n, 0, "OpenCL's minimum list is not Level Zero's promise");
  D->clReleaseContext(ctx);
}
