/*
 * fe_image.c: OpenCL images: creation (clCreateImage[WithProperties],
 * clCreateImage2D/3D as piMemImageCreate, whose pi_image_format and
 * pi_image_desc mirror OpenCL's), clGetSupportedImageFormats,
 * clGetImageInfo, and the image commands (read, write, copy, fill as their
 * piEnqueueMemImage* calls; copies between images and buffers, and maps,
 * staged through the host: PI has no such copies and maps buffers only).
 *
 * Arguments are checked here the way the specification lists them, from
 * the format and descriptor the front end keeps and the device limits PI
 * answers (fe_devcap), so a bad call fails with the spec's code on every
 * backend before it reaches PI.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fe_mem.h"
#include "pi_api.h"

/* ---- Formats ------------------------------------------------------------------- */

/* Bytes per pixel of a format (fe_mem.h): the table PI's description
 * keeps, whose values are OpenCL's. */
size_t fe_image_element_size(const cl_image_format *f)
{
  return pi_image_element_size(f->image_channel_order, f->image_channel_data_type);
}

static bool same_format(const cl_image_format *a, const cl_image_format *b)
{
  return a->image_channel_order == b->image_channel_order &&
         a->image_channel_data_type == b->image_channel_data_type;
}

/* Orders a 2D image made from another may view it with (the spec's
 * Compatible Image Channel Orders table), besides its own. */
static bool orders_compatible(cl_channel_order view, cl_channel_order store)
{
  static const cl_channel_order pairs[][2] = {
      {CL_sBGRA, CL_BGRA}, {CL_BGRA, CL_sBGRA}, {CL_sRGBA, CL_RGBA}, {CL_RGBA, CL_sRGBA},
      {CL_sRGB, CL_RGB},   {CL_RGB, CL_sRGB},   {CL_sRGBx, CL_RGBx}, {CL_RGBx, CL_sRGBx},
      {CL_DEPTH, CL_R}};
  if (view == store)
    return true;
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
    if (pairs[i][0] == view && pairs[i][1] == store)
      return true;
  return false;
}

/* ---- Shapes ---------------------------------------------------------------------- */

static bool image_type_ok(cl_mem_object_type t)
{
  return t == CL_MEM_OBJECT_IMAGE1D || t == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
         t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D ||
         t == CL_MEM_OBJECT_IMAGE2D_ARRAY || t == CL_MEM_OBJECT_IMAGE3D;
}

/* The extent in pixels (x, y, z) an origin and region address in an image
 * of this type and descriptor: a 1D image array's images are its y, a 2D
 * image array's its z. */
static void extent(const cl_image_desc *d, size_t e[3])
{
  e[0] = d->image_width;
  e[1] = e[2] = 1;
  switch (d->image_type) {
  case CL_MEM_OBJECT_IMAGE1D_ARRAY:
    e[1] = d->image_array_size;
    break;
  case CL_MEM_OBJECT_IMAGE2D:
    e[1] = d->image_height;
    break;
  case CL_MEM_OBJECT_IMAGE2D_ARRAY:
    e[1] = d->image_height;
    e[2] = d->image_array_size;
    break;
  case CL_MEM_OBJECT_IMAGE3D:
    e[1] = d->image_height;
    e[2] = d->image_depth;
    break;
  default:
    break;
  }
}

/* Whether `d` fits the image limits of device `dev`. */
static bool fits_device(cl_device_id dev, const cl_image_desc *d)
{
  uint64_t w = 0, h = 0, z = 0, a = 0;
  size_t e[3];
  extent(d, e);
  switch (d->image_type) {
  case CL_MEM_OBJECT_IMAGE1D_BUFFER:
    return !fe_devcap(dev, FE_CAP_IMAGE_BUFFER, &w) || e[0] <= w;
  case CL_MEM_OBJECT_IMAGE3D:
    return (!fe_devcap(dev, FE_CAP_IMAGE3D_W, &w) || e[0] <= w) &&
           (!fe_devcap(dev, FE_CAP_IMAGE3D_H, &h) || e[1] <= h) &&
           (!fe_devcap(dev, FE_CAP_IMAGE3D_D, &z) || e[2] <= z);
  default:
    if (fe_devcap(dev, FE_CAP_IMAGE2D_W, &w) && e[0] > w)
      return false;
    if (d->image_type == CL_MEM_OBJECT_IMAGE2D || d->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY)
      if (fe_devcap(dev, FE_CAP_IMAGE2D_H, &h) && d->image_height > h)
        return false;
    if (d->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
        d->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY)
      if (fe_devcap(dev, FE_CAP_IMAGE_ARRAY, &a) && d->image_array_size > a)
        return false;
    return true;
  }
}

/* ---- Creation ---------------------------------------------------------------------- */

/* The descriptor checks of clCreateImage; `bad` is the code for a bad
 * descriptor value (CL_INVALID_IMAGE_DESCRIPTOR, or CL_INVALID_IMAGE_SIZE
 * for clCreateImage2D/3D, whose pitch errors are size errors). */
static cl_int desc_ok(cl_context ctx, const cl_image_format *fmt, const cl_image_desc *d,
                      const void *host_ptr, size_t es, cl_int bad)
{
  const cl_mem src = d->buffer;
  if (!image_type_ok(d->image_type) || d->num_mip_levels || d->num_samples)
    return bad;
  /* An image may be made from a buffer (1D image buffer, 2D image) or, for
   * a 2D image, from another 2D image. */
  if (src) {
    if (!fe_mem_live(src) || src->ctx != ctx)
      return bad;
    bool from_buffer = src->type == CL_MEM_OBJECT_BUFFER;
    if (d->image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER ? !from_buffer
        : d->image_type == CL_MEM_OBJECT_IMAGE2D
            ? !(from_buffer || src->type == CL_MEM_OBJECT_IMAGE2D)
            : true)
      return bad;
  } else if (d->image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
    return bad;
  }
  /* A zero width, height, depth or array size is a bad descriptor value
   * (each is "at least 1" in clCreateImage's image_desc); only the legacy
   * calls, which take the sizes as arguments, call it a size error. */
  size_t e[3];
  extent(d, e);
  if (!e[0] || !e[1] || !e[2])
    return bad;
  /* Pitches: none without host memory (a 2D image from a buffer may give a
   * row pitch); a row pitch holds a row, in whole pixels; a slice pitch a
   * slice, in whole rows. */
  bool from_buffer2d = src && src->type == CL_MEM_OBJECT_BUFFER &&
                       d->image_type == CL_MEM_OBJECT_IMAGE2D;
  if (!host_ptr && ((d->image_row_pitch && !from_buffer2d) || d->image_slice_pitch))
    return bad;
  size_t row = d->image_row_pitch ? d->image_row_pitch : e[0] * es;
  if (row < e[0] * es || row % es)
    return bad;
  bool slices = d->image_type == CL_MEM_OBJECT_IMAGE3D ||
                d->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                d->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  if (slices && d->image_slice_pitch) {
    size_t rows = d->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : d->image_height;
    if (d->image_slice_pitch < row * rows || d->image_slice_pitch % row)
      return bad;
  }
  if (src && src->type == CL_MEM_OBJECT_BUFFER) {
    size_t need = d->image_type == CL_MEM_OBJECT_IMAGE2D ? row * d->image_height : e[0] * es;
    if (need > src->size)
      return CL_INVALID_IMAGE_SIZE; /* the buffer cannot hold the image */
  }
  if (src && src->type == CL_MEM_OBJECT_IMAGE2D) {
    if (src->format.image_channel_data_type != fmt->image_channel_data_type ||
        !orders_compatible(fmt->image_channel_order, src->format.image_channel_order))
      return CL_INVALID_IMAGE_FORMAT_DESCRIPTOR;
    if (d->image_width != src->desc.image_width || d->image_height != src->desc.image_height ||
        d->image_row_pitch != src->desc.image_row_pitch)
      return bad;
  }
  /* The limits of the devices that support images: one must fit. */
  for (cl_uint i = 0; i < ctx->ndev; i++)
    if (fe_devcap_or0(ctx->devices[i], FE_CAP_IMAGES) && fits_device(ctx->devices[i], d))
      return CL_SUCCESS;
  return CL_INVALID_IMAGE_SIZE;
}

/* clCreateImageWithProperties, and the others through it; `legacy` for
 * clCreateImage2D/3D. */
static cl_mem image_create(cl_context ctx, const cl_mem_properties *props, cl_mem_flags flags,
                           const cl_image_format *fmt, const cl_image_desc *desc,
                           void *host_ptr, bool legacy, cl_int *errcode_ret)
{
  if (!FE_IS(ctx, FE_CONTEXT))
    FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
  if (!fe_ctx_any(ctx, FE_CAP_IMAGES))
    FE_FAIL(errcode_ret, CL_INVALID_OPERATION);
  pi_mem_properties pi_props[5];
  cl_mem_properties *propv = NULL;
  size_t npropv = 0;
  cl_int err = fe_mem_props(ctx, props, true, pi_props, &propv, &npropv);
  if (err == CL_SUCCESS)
    err = fe_mem_flags_valid(flags, 0);
  size_t es = 0;
  if (err == CL_SUCCESS && (!fmt || !(es = fe_image_element_size(fmt))))
    err = CL_INVALID_IMAGE_FORMAT_DESCRIPTOR;
  if (err == CL_SUCCESS && !desc)
    err = CL_INVALID_IMAGE_DESCRIPTOR;
  /* An image made from another object inherits its flags. */
  cl_mem src = desc && err == CL_SUCCESS ? desc->buffer : NULL;
  cl_mem_flags all = flags;
  if (err == CL_SUCCESS && src && fe_mem_live(src))
    err = fe_mem_flags_inherit(src, flags, &all);
  if (err == CL_SUCCESS)
    err = desc_ok(ctx, fmt, desc, host_ptr,
                  es, legacy ? CL_INVALID_IMAGE_SIZE : CL_INVALID_IMAGE_DESCRIPTOR);
  if (err == CL_SUCCESS &&
      !(flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)) != !host_ptr)
    err = CL_INVALID_HOST_PTR;
  if (err != CL_SUCCESS) {
    free(propv);
    FE_FAIL(errcode_ret, err);
  }
  pi_image_format pf = {(pi_image_channel_order)fmt->image_channel_order,
                        (pi_image_channel_type)fmt->image_channel_data_type};
  pi_image_desc pd = {(pi_mem_type)desc->image_type,
                      desc->image_width,
                      desc->image_height,
                      desc->image_depth,
                      desc->image_array_size,
                      desc->image_row_pitch,
                      desc->image_slice_pitch,
                      desc->num_mip_levels,
                      desc->num_samples,
                      src ? src->pi : NULL};
  /* PI gets the access asked for; one made from another object takes the
   * rest from it. */
  pi_mem_flags pflags = !src                         ? fe_mem_pi_flags(flags)
                        : (flags & CL_MEM_READ_ONLY) ? PI_MEM_ACCESS_READ_ONLY
                        : (flags & FE_ACCESS_FLAGS)  ? PI_MEM_FLAGS_ACCESS_RW
                                                     : 0;
  pi_mem pm = NULL;
  err = fe_err(pirt_piMemImageCreate(ctx->o.pl, ctx->pi, pflags, &pf, &pd, host_ptr, &pm));
  if (err != CL_SUCCESS) {
    free(propv);
    FE_FAIL(errcode_ret, err);
  }
  cl_mem m = fe_mem_wrap(ctx, pm, desc->image_type, all, 0,
                         (flags & CL_MEM_USE_HOST_PTR) ? host_ptr : NULL, src, propv, npropv);
  if (!m)
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  m->format = *fmt;
  m->desc = *desc;
  if (errcode_ret)
    *errcode_ret = CL_SUCCESS;
  return m;
}

/* piMemImageCreate (images take no properties). */
cl_mem CL_API_CALL fe_clCreateImageWithProperties(cl_context ctx,
                                                  const cl_mem_properties *props,
                                                  cl_mem_flags flags,
                                                  const cl_image_format *fmt,
                                                  const cl_image_desc *desc, void *host_ptr,
                                                  cl_int *errcode_ret)
{
  return image_create(ctx, props, flags, fmt, desc, host_ptr, false, errcode_ret);
}

/* piMemImageCreate. */
cl_mem CL_API_CALL fe_clCreateImage(cl_context ctx, cl_mem_flags flags,
                                    const cl_image_format *fmt, const cl_image_desc *desc,
                                    void *host_ptr, cl_int *errcode_ret)
{
  return image_create(ctx, NULL, flags, fmt, desc, host_ptr, false, errcode_ret);
}

/* piMemImageCreate of a 2D image (OpenCL 1.1). */
cl_mem CL_API_CALL fe_clCreateImage2D(cl_context ctx, cl_mem_flags flags,
                                      const cl_image_format *fmt, size_t width, size_t height,
                                      size_t row_pitch, void *host_ptr, cl_int *errcode_ret)
{
  cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE2D,
                     .image_width = width,
                     .image_height = height,
                     .image_row_pitch = row_pitch};
  return image_create(ctx, NULL, flags, fmt, &d, host_ptr, true, errcode_ret);
}

/* piMemImageCreate of a 3D image (OpenCL 1.1). */
cl_mem CL_API_CALL fe_clCreateImage3D(cl_context ctx, cl_mem_flags flags,
                                      const cl_image_format *fmt, size_t width, size_t height,
                                      size_t depth, size_t row_pitch, size_t slice_pitch,
                                      void *host_ptr, cl_int *errcode_ret)
{
  if (FE_IS(ctx, FE_CONTEXT) && depth <= 1 && fe_ctx_any(ctx, FE_CAP_IMAGES) &&
      fe_mem_flags_valid(flags, 0) == CL_SUCCESS && fmt && fe_image_element_size(fmt))
    FE_FAIL(errcode_ret, CL_INVALID_IMAGE_SIZE); /* a 3D image is deeper than 1 */
  cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE3D,
                     .image_width = width,
                     .image_height = height,
                     .image_depth = depth,
                     .image_row_pitch = row_pitch,
                     .image_slice_pitch = slice_pitch};
  return image_create(ctx, NULL, flags, fmt, &d, host_ptr, true, errcode_ret);
}

/* ---- Supported formats ------------------------------------------------------------------
 * PI has no query for the image formats a device supports. The front end
 * answers, for each device of the context that supports images
 * (CL_DEVICE_IMAGE_SUPPORT), the formats the OpenCL specification requires
 * of every such device (section 5.3.2.1, "Minimum List of Supported Image
 * Formats": the OpenCL 2.x full profile list, the 1.2 / 3.0 full profile
 * list, or the embedded profile list, by the device's version and profile),
 * so every format it lists does work; a device may support more, which the
 * application then does not see. Writes to 3D images count only where the
 * device has them (2.x, or cl_khr_3d_image_writes). Formats for reading and
 * writing in the same kernel (CL_MEM_KERNEL_READ_AND_WRITE) are required
 * only where CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS is not 0, which PI cannot
 * ask for OpenCL 3.0 devices: they are listed for 2.x devices only. The
 * answer is the union over the devices, as the specification says. Devices
 * of other backends (Level Zero, CUDA) owe nothing to OpenCL's list, and
 * PI cannot say which formats they take: none are listed for them.
 *
 * Where the context is an OpenCL implementation's (backend "opencl"), the
 * front end asks that implementation instead, through the context's
 * native handle (piextContextGetNativeHandle, in the trace like any PI
 * call): an OpenCL object begins with its implementation's dispatch table
 * (cl_khr_icd), whose clGetSupportedImageFormats answers exactly. The
 * minimum list lacks what applications rely on: ffmpeg's OpenCL filters
 * keep each plane of a YUV frame in a CL_R image, and refused to run
 * through pitrace when only RGBA and BGRA were listed. Formats whose pixel
 * size the front end does not know (pi_image_element_size) are left out.
 * The answer goes into a note (PIRT_NOTE_IMAGE_FORMATS), which a recording
 * keeps: under the replay plugin (SYCL_PI_REPLAY) the native handle is
 * none, and the front end answers what the recording's note says
 * (pirt_recall_note), or, where it has none, the minimum. */

static const cl_channel_type all12[] = {
    CL_UNORM_INT8,    CL_UNORM_INT16,   CL_SNORM_INT8,     CL_SNORM_INT16,
    CL_SIGNED_INT8,   CL_SIGNED_INT16,  CL_SIGNED_INT32,   CL_UNSIGNED_INT8,
    CL_UNSIGNED_INT16, CL_UNSIGNED_INT32, CL_HALF_FLOAT,   CL_FLOAT};
/* all12 without the SNORM types (the 1.2 / 3.0 and embedded RGBA list). */
static const cl_channel_type rgba10[] = {
    CL_UNORM_INT8,    CL_UNORM_INT16,   CL_SIGNED_INT8,    CL_SIGNED_INT16,
    CL_SIGNED_INT32,  CL_UNSIGNED_INT8, CL_UNSIGNED_INT16, CL_UNSIGNED_INT32,
    CL_HALF_FLOAT,    CL_FLOAT};
/* Reading and writing in the same kernel. */
static const cl_channel_type rw9[] = {
    CL_UNORM_INT8,     CL_SIGNED_INT8,    CL_SIGNED_INT16, CL_SIGNED_INT32, CL_UNSIGNED_INT8,
    CL_UNSIGNED_INT16, CL_UNSIGNED_INT32, CL_HALF_FLOAT,   CL_FLOAT};

struct format_list {
  cl_image_format f[256];
  size_t n;
};

static void add(struct format_list *l, cl_channel_order o, const cl_channel_type *t, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    cl_image_format f = {o, t[i]};
    bool seen = false;
    for (size_t k = 0; k < l->n && !seen; k++)
      seen = same_format(&l->f[k], &f);
    if (!seen && l->n < sizeof l->f / sizeof *l->f)
      l->f[l->n++] = f;
  }
}
#define ADD(l, o, types) add(l, o, types, sizeof types / sizeof *types)

/* The formats `dev` must support for `flags` and `type`. */
static void required_formats(cl_device_id dev, cl_mem_flags flags, cl_mem_object_type type,
                             struct format_list *l)
{
  static const cl_channel_type unorm8[] = {CL_UNORM_INT8};
  static const cl_channel_type depth[] = {CL_UNORM_INT16, CL_FLOAT};
  if (strcmp(dev->platform->backend, "opencl") != 0 || !fe_devcap_or0(dev, FE_CAP_IMAGES))
    return;
  uint64_t v = 0;
  fe_devcap(dev, FE_CAP_VERSION, &v);
  const bool cl2x = v >= 20 && v < 30, embedded = fe_devcap_or0(dev, FE_CAP_EMBEDDED);
  const bool two_d = type == CL_MEM_OBJECT_IMAGE2D || type == CL_MEM_OBJECT_IMAGE2D_ARRAY;
  if (flags & CL_MEM_KERNEL_READ_AND_WRITE) {
    if (cl2x && !embedded) {
      add(l, CL_R, rw9, sizeof rw9 / sizeof *rw9);
      add(l, CL_RGBA, rw9, sizeof rw9 / sizeof *rw9);
    }
    return;
  }
  /* Written by kernels: write-only, or read-write (the default). */
  const bool writes = (flags & CL_MEM_WRITE_ONLY) || !(flags & CL_MEM_READ_ONLY);
  if (type == CL_MEM_OBJECT_IMAGE3D && writes && !cl2x &&
      !fe_devcap_or0(dev, FE_CAP_3D_WRITES))
    return;
  if (embedded) {
    ADD(l, CL_RGBA, rgba10);
    return;
  }
  if (cl2x) {
    ADD(l, CL_R, all12);
    ADD(l, CL_RG, all12);
    ADD(l, CL_RGBA, all12);
  } else {
    ADD(l, CL_RGBA, rgba10);
  }
  ADD(l, CL_BGRA, unorm8);
  if (two_d && (cl2x || fe_devcap_or0(dev, FE_CAP_DEPTH)))
    ADD(l, CL_DEPTH, depth);
  if (cl2x && !writes && type != CL_MEM_OBJECT_IMAGE1D_BUFFER)
    ADD(l, CL_sRGBA, unorm8);
}

/* The formats the OpenCL implementation under ctx supports for flags and
 * type, into l (see above); false when it cannot be asked. */
static bool native_formats(cl_context ctx, cl_mem_flags flags, cl_mem_object_type type,
                           struct format_list *l)
{
  pi_native_handle h = 0;
  if (strcmp(ctx->platform->backend, "opencl") != 0 ||
      pirt_piextContextGetNativeHandle(ctx->o.pl, ctx->pi, &h) != PI_SUCCESS || !h)
    return false;
  cl_context native = (cl_context)(uintptr_t)h;
  const struct _cl_icd_dispatch *d = *(const struct _cl_icd_dispatch *const *)native;
  cl_uint n = 0;
  if (!d || !d->clGetSupportedImageFormats ||
      d->clGetSupportedImageFormats(native, flags, type, 0, NULL, &n) != CL_SUCCESS)
    return false;
  cl_image_format *f = calloc(n ? n : 1, sizeof *f);
  if (!f || d->clGetSupportedImageFormats(native, flags, type, n, f, &n) != CL_SUCCESS) {
    free(f);
    return false;
  }
  for (cl_uint i = 0; i < n; i++)
    if (fe_image_element_size(&f[i]))
      add(l, f[i].image_channel_order, &f[i].image_channel_data_type, 1);
  free(f);
  /* What PI does not show: a note, which a recording keeps (tied to this
   * thread's next PI call) and the replay plugin gives back (below). */
  char text[160];
  snprintf(text, sizeof text, "image formats of the OpenCL implementation for flags 0x%llx, "
           "type 0x%x: %zu", (unsigned long long)flags, (unsigned)type, l->n);
  pirt_note note = {.kind = PIRT_NOTE_IMAGE_FORMATS, .text = text, .value = l->f,
                    .size = l->n * sizeof *l->f};
  pirt_note_emit(&note);
  return true;
}

/* Under the replay plugin (SYCL_PI_REPLAY): the formats the implementation
 * answered when the application was recorded, into l; false when the
 * recording has none here (recorded before pitrace kept them, or not under
 * an OpenCL implementation). */
static bool recorded_formats(struct format_list *l)
{
  size_t bytes = pirt_recall_note(PIRT_NOTE_IMAGE_FORMATS, l->f, sizeof l->f);
  if (!bytes || bytes % sizeof *l->f || bytes > sizeof l->f)
    return false;
  l->n = bytes / sizeof *l->f;
  return true;
}

/* The formats the spec requires of the context's devices (see above). */
cl_int CL_API_CALL fe_clGetSupportedImageFormats(cl_context ctx, cl_mem_flags flags,
                                                 cl_mem_object_type type, cl_uint num_entries,
                                                 cl_image_format *formats,
                                                 cl_uint *num_formats)
{
  FE_CHECK(ctx, FE_CONTEXT, CL_INVALID_CONTEXT);
  if (fe_mem_flags_valid(flags, CL_MEM_KERNEL_READ_AND_WRITE) != CL_SUCCESS ||
      !image_type_ok(type) || (num_entries == 0 && formats))
    return CL_INVALID_VALUE;
  struct format_list *l = calloc(1, sizeof *l);
  if (!l)
    return CL_OUT_OF_HOST_MEMORY;
  /* The minimum first, always: its device queries are then the same
   * whether the implementation can be asked or not (under the replay
   * plugin it cannot: the native handle is none), so that a recording and
   * its replay make the same PI calls. */
  for (cl_uint i = 0; i < ctx->ndev; i++)
    required_formats(ctx->devices[i], flags, type, l);
  struct format_list *native = calloc(1, sizeof *native);
  if (native && (native_formats(ctx, flags, type, native) || recorded_formats(native))) {
    free(l);
    l = native;
  } else {
    free(native);
  }
  for (size_t i = 0; formats && i < l->n && i < num_entries; i++)
    formats[i] = l->f[i];
  if (num_formats)
    *num_formats = (cl_uint)l->n;
  free(l);
  return CL_SUCCESS;
}

/* ---- Info ---------------------------------------------------------------------------------- */

static pi_result image_getter(const void *obj, uint32_t q, size_t n, void *v, size_t *r)
{
  const struct _cl_mem *m = obj;
  return pirt_piMemImageGetInfo(m->o.pl, m->pi, q, n, v, r);
}

/* piMemImageGetInfo, or the descriptor the front end keeps. */
cl_int CL_API_CALL fe_clGetImageInfo(cl_mem image, cl_image_info param, size_t size,
                                     void *value, size_t *size_ret)
{
  if (!fe_mem_live(image) || !fe_is_image(image))
    return CL_INVALID_MEM_OBJECT;
  const cl_image_desc *d = &image->desc;
  switch (param) {
  case CL_IMAGE_ARRAY_SIZE: {
    size_t n = d->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
                       d->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY
                   ? d->image_array_size
                   : 0;
    return FE_PUT_VAL(size, value, size_ret, n);
  }
  case CL_IMAGE_BUFFER: {
    cl_mem b = d->image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER ? image->parent : NULL;
    return FE_PUT_VAL(size, value, size_ret, b);
  }
  case CL_IMAGE_NUM_MIP_LEVELS:
    return FE_PUT_VAL(size, value, size_ret, d->num_mip_levels);
  case CL_IMAGE_NUM_SAMPLES:
    return FE_PUT_VAL(size, value, size_ret, d->num_samples);
  /* What the image's type says, not what every implementation keeps:
   * rusticl gives back the descriptor's height and depth for types that
   * ignore them, and answers row pitch x height for every slice pitch (a
   * 2D image's whole size, 0 for a 1D array, which has no height). */
  case CL_IMAGE_HEIGHT:
  case CL_IMAGE_DEPTH: {
    bool has = param == CL_IMAGE_DEPTH ? d->image_type == CL_MEM_OBJECT_IMAGE3D
                                       : d->image_type == CL_MEM_OBJECT_IMAGE2D ||
                                             d->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                                             d->image_type == CL_MEM_OBJECT_IMAGE3D;
    if (has)
      break;
    size_t zero = 0;
    return FE_PUT_VAL(size, value, size_ret, zero);
  }
  case CL_IMAGE_SLICE_PITCH: {
    /* 0 without slices (1D, 1D buffer, 2D); a 1D array's each image's
     * size, at least one row. */
    size_t slice = 0, row = 0;
    if (d->image_type == CL_MEM_OBJECT_IMAGE1D || d->image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
        d->image_type == CL_MEM_OBJECT_IMAGE2D)
      return FE_PUT_VAL(size, value, size_ret, slice);
    if (d->image_type != CL_MEM_OBJECT_IMAGE1D_ARRAY)
      break;
    pi_result r = image_getter(image, PI_IMAGE_INFO_SLICE_PITCH, sizeof slice, &slice, NULL);
    if (r == PI_SUCCESS)
      r = image_getter(image, PI_IMAGE_INFO_ROW_PITCH, sizeof row, &row, NULL);
    if (r != PI_SUCCESS)
      return fe_err(r);
    if (slice < row)
      slice = row;
    return FE_PUT_VAL(size, value, size_ret, slice);
  }
  default: /* format, element size, row pitch, width */
    break;
  }
  return fe_pi_info("pi_image_info", image_getter, image, param, size, value, size_ret);
}

/* ---- Commands -------------------------------------------------------------------------------- */

/* CL_INVALID_VALUE unless origin and region (not NULL, no zero in the
 * region) lie within the image and follow the rules of its type (the
 * unused coordinates of a 1D or 2D image 0, their extents 1). */
static cl_int region_ok(cl_mem m, const size_t *origin, const size_t *region)
{
  if (!origin || !region)
    return CL_INVALID_VALUE;
  size_t e[3];
  extent(&m->desc, e);
  for (int i = 0; i < 3; i++)
    if (!region[i] || origin[i] > e[i] || region[i] > e[i] - origin[i])
      return CL_INVALID_VALUE;
  return CL_SUCCESS;
}

/* The checks every image command starts with: a valid queue, live images
 * of its context (CL_INVALID_MEM_OBJECT, CL_INVALID_CONTEXT). */
static cl_int image_of_queue(cl_command_queue q, cl_mem m)
{
  if (!fe_mem_live(m) || !fe_is_image(m))
    return CL_INVALID_MEM_OBJECT;
  return m->ctx == q->ctx ? CL_SUCCESS : CL_INVALID_CONTEXT;
}

/* CL_INVALID_OPERATION when the queue's device has no images. */
static cl_int queue_images(cl_command_queue q)
{
  return fe_devcap_or0(q->dev, FE_CAP_IMAGES) ? CL_SUCCESS : CL_INVALID_OPERATION;
}

static void to_pi(const size_t *o, const size_t *r, struct pi_image_offset_struct *po,
                  struct pi_image_region_struct *pr)
{
  if (po)
    *po = (struct pi_image_offset_struct){o[0], o[1], o[2]};
  if (pr)
    *pr = (struct pi_image_region_struct){r[0], r[1], r[2]};
}

/* A read or write: piEnqueueMemImageRead / piEnqueueMemImageWrite. */
typedef struct {
  fe_cmd c;
  cl_mem image;
  bool write;
  struct pi_image_offset_struct origin;
  struct pi_image_region_struct region;
  size_t row_pitch, slice_pitch;
  void *ptr;
} image_rw;

static pi_result rw_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                          const pi_event *wait, pi_event *ev)
{
  image_rw *a = (image_rw *)c;
  if (a->write)
    return pirt_piEnqueueMemImageWrite(q->o.pl, q->pi, a->image->pi, blocking, &a->origin,
                                       &a->region, a->row_pitch, a->slice_pitch, a->ptr, n,
                                       wait, ev);
  return pirt_piEnqueueMemImageRead(q->o.pl, q->pi, a->image->pi, blocking, &a->origin,
                                    &a->region, a->row_pitch, a->slice_pitch, a->ptr, n, wait,
                                    ev);
}

static cl_int rw_hold(fe_cmd *c)
{
  fe_mem_hold(((image_rw *)c)->image);
  return CL_SUCCESS;
}

static void rw_drop(fe_cmd *c) { fe_mem_drop(((image_rw *)c)->image); }

static cl_int image_transfer(cl_command_queue q, cl_mem image, bool write, cl_bool blocking,
                             const size_t *origin, const size_t *region, size_t row_pitch,
                             size_t slice_pitch, void *ptr, cl_uint n, const cl_event *wait,
                             cl_event *event)
{
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  cl_int err = image_of_queue(q, image);
  if (err != CL_SUCCESS)
    return err;
  if (region_ok(image, origin, region) != CL_SUCCESS || !ptr)
    return CL_INVALID_VALUE;
  /* Pitches of the host memory: a row holds the region's row; no slice
   * pitch for 1D and 2D images, else a slice holds the region's rows. */
  const size_t es = fe_image_element_size(&image->format);
  const cl_mem_object_type t = image->type;
  size_t row = row_pitch ? row_pitch : region[0] * es;
  if (row < region[0] * es)
    return CL_INVALID_VALUE;
  if (t == CL_MEM_OBJECT_IMAGE1D || t == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
      t == CL_MEM_OBJECT_IMAGE2D) {
    if (slice_pitch)
      return CL_INVALID_VALUE;
  } else if (slice_pitch &&
             slice_pitch < row * (t == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : region[1])) {
    return CL_INVALID_VALUE;
  }
  if ((err = queue_images(q)) != CL_SUCCESS)
    return err;
  const cl_mem_flags denied = CL_MEM_HOST_NO_ACCESS |
                              (write ? CL_MEM_HOST_READ_ONLY : CL_MEM_HOST_WRITE_ONLY);
  if (image->flags & denied)
    return CL_INVALID_OPERATION;
  image_rw a = {{rw_issue, rw_hold, rw_drop}, image, write, {0}, {0}, row_pitch,
                slice_pitch, ptr};
  to_pi(origin, region, &a.origin, &a.region);
  return fe_enqueue(q, write ? CL_COMMAND_WRITE_IMAGE : CL_COMMAND_READ_IMAGE, n, wait,
                    blocking != CL_FALSE, &a.c, sizeof a, event);
}

/* piEnqueueMemImageRead. */
cl_int CL_API_CALL fe_clEnqueueReadImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                         const size_t *origin, const size_t *region,
                                         size_t row_pitch, size_t slice_pitch, void *ptr,
                                         cl_uint n, const cl_event *wait, cl_event *event)
{
  return image_transfer(q, image, false, blocking, origin, region, row_pitch, slice_pitch, ptr,
                        n, wait, event);
}

/* piEnqueueMemImageWrite. */
cl_int CL_API_CALL fe_clEnqueueWriteImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                          const size_t *origin, const size_t *region,
                                          size_t row_pitch, size_t slice_pitch,
                                          const void *ptr, cl_uint n, const cl_event *wait,
                                          cl_event *event)
{
  return image_transfer(q, image, true, blocking, origin, region, row_pitch, slice_pitch,
                        (void *)ptr, n, wait, event);
}

/* A copy between images: piEnqueueMemImageCopy. */
typedef struct {
  fe_cmd c;
  cl_mem src, dst;
  struct pi_image_offset_struct src_origin, dst_origin;
  struct pi_image_region_struct region;
} image_copy;

static pi_result copy_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                            const pi_event *wait, pi_event *ev)
{
  image_copy *a = (image_copy *)c;
  (void)blocking;
  return pirt_piEnqueueMemImageCopy(q->o.pl, q->pi, a->src->pi, a->dst->pi, &a->src_origin,
                                    &a->dst_origin, &a->region, n, wait, ev);
}

static cl_int copy_hold(fe_cmd *c)
{
  fe_mem_hold(((image_copy *)c)->src);
  fe_mem_hold(((image_copy *)c)->dst);
  return CL_SUCCESS;
}

static void copy_drop(fe_cmd *c)
{
  fe_mem_drop(((image_copy *)c)->src);
  fe_mem_drop(((image_copy *)c)->dst);
}

/* Whether two boxes of the same size overlap. */
static bool boxes_overlap(const size_t *a, const size_t *b, const size_t *r)
{
  for (int i = 0; i < 3; i++)
    if (a[i] >= b[i] + r[i] || b[i] >= a[i] + r[i])
      return false;
  return true;
}

/* piEnqueueMemImageCopy. */
cl_int CL_API_CALL fe_clEnqueueCopyImage(cl_command_queue q, cl_mem src, cl_mem dst,
                                         const size_t *src_origin, const size_t *dst_origin,
                                         const size_t *region, cl_uint n, const cl_event *wait,
                                         cl_event *event)
{
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  cl_int err = image_of_queue(q, src);
  if (err == CL_SUCCESS)
    err = image_of_queue(q, dst);
  if (err != CL_SUCCESS)
    return err;
  if (!same_format(&src->format, &dst->format))
    return CL_IMAGE_FORMAT_MISMATCH;
  if (region_ok(src, src_origin, region) != CL_SUCCESS ||
      region_ok(dst, dst_origin, region) != CL_SUCCESS)
    return CL_INVALID_VALUE;
  if (src == dst && boxes_overlap(src_origin, dst_origin, region))
    return CL_MEM_COPY_OVERLAP;
  if ((err = queue_images(q)) != CL_SUCCESS)
    return err;
  image_copy a = {{copy_issue, copy_hold, copy_drop}, src, dst, {0}, {0}, {0}};
  to_pi(src_origin, region, &a.src_origin, &a.region);
  to_pi(dst_origin, NULL, &a.dst_origin, NULL);
  return fe_enqueue(q, CL_COMMAND_COPY_IMAGE, n, wait, false, &a.c, sizeof a, event);
}

/* A fill: piEnqueueMemImageFill, with its own copy of the color. */
typedef struct {
  fe_cmd c;
  cl_mem image;
  unsigned char color[16];
  size_t origin[3], region[3];
} image_fill;

static pi_result fill_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                            const pi_event *wait, pi_event *ev)
{
  image_fill *a = (image_fill *)c;
  (void)blocking;
  return pirt_piEnqueueMemImageFill(q->o.pl, q->pi, a->image->pi, a->color, a->origin,
                                    a->region, n, wait, ev);
}

static cl_int fill_hold(fe_cmd *c)
{
  fe_mem_hold(((image_fill *)c)->image);
  return CL_SUCCESS;
}

static void fill_drop(fe_cmd *c) { fe_mem_drop(((image_fill *)c)->image); }

/* piEnqueueMemImageFill. */
cl_int CL_API_CALL fe_clEnqueueFillImage(cl_command_queue q, cl_mem image,
                                         const void *fill_color, const size_t *origin,
                                         const size_t *region, cl_uint n,
                                         const cl_event *wait, cl_event *event)
{
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  cl_int err = image_of_queue(q, image);
  if (err != CL_SUCCESS)
    return err;
  if (!fill_color || region_ok(image, origin, region) != CL_SUCCESS)
    return CL_INVALID_VALUE;
  if ((err = queue_images(q)) != CL_SUCCESS)
    return err;
  image_fill a = {{fill_issue, fill_hold, fill_drop}, image, {0}, {0}, {0}};
  /* A depth image's color is one float; the others' four components. */
  memcpy(a.color, fill_color, image->format.image_channel_order == CL_DEPTH ? 4 : 16);
  memcpy(a.origin, origin, sizeof a.origin);
  memcpy(a.region, region, sizeof a.region);
  return fe_enqueue(q, CL_COMMAND_FILL_IMAGE, n, wait, false, &a.c, sizeof a, event);
}

/* A well-formed wait list of the queue's context, checked without waiting
 * (where the specification's later checks must not come first). */
static cl_int wait_list_shape(cl_command_queue q, cl_uint n, const cl_event *wait)
{
  if (!wait != !n)
    return CL_INVALID_EVENT_WAIT_LIST;
  for (cl_uint i = 0; i < n; i++) {
    if (!FE_IS(wait[i], FE_EVENT))
      return CL_INVALID_EVENT_WAIT_LIST;
    if (wait[i]->ctx != q->ctx)
      return CL_INVALID_CONTEXT;
  }
  return CL_SUCCESS;
}

/* ---- Maps ------------------------------------------------------------------------------------
 * PI maps buffers only, so an image map is staged through the host: the
 * map reads the region into host memory (piEnqueueMemImageRead, blocking or
 * ordered by its event as the application asked; nothing is read for
 * CL_MAP_WRITE_INVALIDATE_REGION, where the map is a marker of its wait
 * list) and the unmap writes it back (fe_enqueue.c's staged_unmap). The host memory is
 * the front end's, with the region's own pitches, except for an image made
 * with CL_MEM_USE_HOST_PTR: the specification has its maps point into the
 * application's memory, with the image's pitches. The mapping lives on the
 * image (fe_mem.h), counted in CL_MEM_MAP_COUNT. */

typedef struct {
  fe_cmd c;
  cl_mem image;
  fe_mapping *map;
} image_map;

static pi_result map_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                           const pi_event *wait, pi_event *ev)
{
  image_map *a = (image_map *)c;
  return fe_staged_map(a->image, a->map, q, blocking, n, wait, ev);
}

/* A map held back keeps its image and its mapping. */
static cl_int map_hold(fe_cmd *c)
{
  image_map *a = (image_map *)c;
  fe_mem_hold(a->image);
  pthread_mutex_lock(&a->image->lock);
  a->map->refs++;
  pthread_mutex_unlock(&a->image->lock);
  return CL_SUCCESS;
}

static void map_drop(fe_cmd *c)
{
  image_map *a = (image_map *)c;
  fe_mapping_unref(a->image, a->map);
  fe_mem_drop(a->image);
}

/* Staged through the host (see above). */
void *CL_API_CALL fe_clEnqueueMapImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                       cl_map_flags flags, const size_t *origin,
                                       const size_t *region, size_t *row_pitch,
                                       size_t *slice_pitch, cl_uint n, const cl_event *wait,
                                       cl_event *event, cl_int *errcode_ret)
{
  if (!FE_IS(q, FE_QUEUE))
    FE_FAIL(errcode_ret, CL_INVALID_COMMAND_QUEUE);
  cl_int err = image_of_queue(q, image);
  if (err != CL_SUCCESS)
    FE_FAIL(errcode_ret, err);
  const cl_map_flags known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
  const cl_mem_object_type t = image->type;
  const bool array1d = t == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  const bool slices = t == CL_MEM_OBJECT_IMAGE3D || t == CL_MEM_OBJECT_IMAGE2D_ARRAY || array1d;
  if (region_ok(image, origin, region) != CL_SUCCESS || (flags & ~known) ||
      ((flags & CL_MAP_WRITE_INVALIDATE_REGION) && (flags & (CL_MAP_READ | CL_MAP_WRITE))) ||
      !row_pitch || (!slice_pitch && slices))
    FE_FAIL(errcode_ret, CL_INVALID_VALUE);
  /* What the host does with the mapping; no flags read and write, as a
   * buffer's map does. */
  const bool reads = (flags & CL_MAP_READ) || !flags;
  const bool writes = (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) || !flags;
  if ((reads && (image->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS))) ||
      (writes && (image->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS))))
    FE_FAIL(errcode_ret, CL_INVALID_OPERATION);
  if ((err = queue_images(q)) != CL_SUCCESS)
    FE_FAIL(errcode_ret, err);
  fe_mapping *m = calloc(1, sizeof *m);
  if (!m)
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  const size_t es = fe_image_element_size(&image->format);
  if (image->host_ptr) {
    /* Into the application's memory, with the image's pitches (a 1D image
     * array's images are its slices). */
    const cl_image_desc *d = &image->desc;
    m->row = d->image_row_pitch ? d->image_row_pitch : d->image_width * es;
    m->slice = !slices                ? 0
               : d->image_slice_pitch ? d->image_slice_pitch
                                      : m->row * (array1d ? 1 : d->image_height);
    size_t at = origin[0] * es + (array1d ? origin[1] * m->slice
                                          : origin[1] * m->row + origin[2] * m->slice);
    m->ptr = (char *)image->host_ptr + at;
  } else {
    /* Host memory of the region, rows and slices packed. */
    size_t bytes;
    m->row = region[0] * es;
    m->slice = !slices ? 0 : array1d ? m->row : m->row * region[1];
    if (__builtin_mul_overflow(m->row, region[1], &bytes) ||
        __builtin_mul_overflow(bytes, region[2], &bytes) || !(m->staging = calloc(1, bytes))) {
      free(m);
      FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
    }
    m->ptr = m->staging;
  }
  m->write = writes;
  /* A map for writing reads the region too: the unmap writes all of it. */
  m->invalidate = (flags & CL_MAP_WRITE_INVALIDATE_REGION) != 0;
  m->refs = 1;
  to_pi(origin, region, &m->origin, &m->region);
  image_map a = {{map_issue, map_hold, map_drop}, image, m};
  err = fe_enqueue(q, CL_COMMAND_MAP_IMAGE, n, wait, blocking != CL_FALSE, &a.c, sizeof a, event);
  if (err != CL_SUCCESS) {
    fe_mapping_unref(image, m);
    FE_FAIL(errcode_ret, err);
  }
  *row_pitch = m->row;
  if (slice_pitch)
    *slice_pitch = m->slice;
  void *ptr = m->ptr;
  fe_mapping_add(image, m);
  if (errcode_ret)
    *errcode_ret = CL_SUCCESS;
  return ptr;
}

/* ---- Copies between images and buffers ------------------------------------------------------
 * PI has no such copies. They are staged through the host, correct for
 * every backend: the image region is read into host memory and written to
 * the buffer (or the other way round), both blocking, so the staging memory
 * can go when the command returns, and the event the application gets is
 * the second transfer's. The command is issued through fe_enqueue like any
 * other, so it still waits for its wait list (and is held back behind user
 * events), but it completes before clEnqueueCopy* returns. */

typedef struct {
  fe_cmd c;
  cl_mem image, buffer;
  bool to_buffer;
  struct pi_image_offset_struct origin;
  struct pi_image_region_struct region;
  size_t offset, bytes;
} image_buffer;

static pi_result staged_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                              const pi_event *wait, pi_event *ev)
{
  image_buffer *a = (image_buffer *)c;
  (void)blocking;
  void *tmp = malloc(a->bytes);
  if (!tmp)
    return PI_ERROR_OUT_OF_HOST_MEMORY;
  const pirt_plugin *pl = q->o.pl;
  pi_result r;
  if (a->to_buffer) {
    r = pirt_piEnqueueMemImageRead(pl, q->pi, a->image->pi, PI_TRUE, &a->origin, &a->region,
                                   0, 0, tmp, n, wait, NULL);
    if (r == PI_SUCCESS)
      r = pirt_piEnqueueMemBufferWrite(pl, q->pi, a->buffer->pi, PI_TRUE, a->offset, a->bytes,
                                       tmp, 0, NULL, ev);
  } else {
    r = pirt_piEnqueueMemBufferRead(pl, q->pi, a->buffer->pi, PI_TRUE, a->offset, a->bytes, tmp,
                                    n, wait, NULL);
    if (r == PI_SUCCESS)
      r = pirt_piEnqueueMemImageWrite(pl, q->pi, a->image->pi, PI_TRUE, &a->origin, &a->region,
                                      0, 0, tmp, 0, NULL, ev);
  }
  free(tmp);
  return r;
}

static cl_int staged_hold(fe_cmd *c)
{
  fe_mem_hold(((image_buffer *)c)->image);
  fe_mem_hold(((image_buffer *)c)->buffer);
  return CL_SUCCESS;
}

static void staged_drop(fe_cmd *c)
{
  fe_mem_drop(((image_buffer *)c)->image);
  fe_mem_drop(((image_buffer *)c)->buffer);
}

static cl_int image_buffer_copy(cl_command_queue q, cl_mem image, cl_mem buffer, bool to_buffer,
                                const size_t *origin, const size_t *region, size_t offset,
                                cl_uint n, const cl_event *wait, cl_event *event)
{
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  cl_int err = image_of_queue(q, image);
  if (err != CL_SUCCESS)
    return err;
  if (!fe_mem_live(buffer) || buffer->type != CL_MEM_OBJECT_BUFFER ||
      (image->type == CL_MEM_OBJECT_IMAGE1D_BUFFER && image->parent == buffer))
    return CL_INVALID_MEM_OBJECT;
  if (buffer->ctx != q->ctx)
    return CL_INVALID_CONTEXT;
  if (region_ok(image, origin, region) != CL_SUCCESS)
    return CL_INVALID_VALUE;
  const size_t bytes = region[0] * region[1] * region[2] * fe_image_element_size(&image->format);
  if (offset > buffer->size || bytes > buffer->size - offset)
    return CL_INVALID_VALUE;
  if ((err = wait_list_shape(q, n, wait)) != CL_SUCCESS)
    return err;
  uint64_t align_bits;
  if (buffer->parent && fe_devcap(q->dev, FE_CAP_BASE_ALIGN, &align_bits) && align_bits >= 8 &&
      buffer->offset % (align_bits / 8))
    return CL_MISALIGNED_SUB_BUFFER_OFFSET;
  if ((err = queue_images(q)) != CL_SUCCESS)
    return err;
  image_buffer a = {{staged_issue, staged_hold, staged_drop}, image, buffer, to_buffer, {0},
                    {0}, offset, bytes};
  to_pi(origin, region, &a.origin, &a.region);
  const cl_command_type type =
      to_buffer ? CL_COMMAND_COPY_IMAGE_TO_BUFFER : CL_COMMAND_COPY_BUFFER_TO_IMAGE;
  return fe_enqueue(q, type, n, wait, false, &a.c, sizeof a, event);
}

/* Staged through the host (see above). */
cl_int CL_API_CALL fe_clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem src, cl_mem dst,
                                                 const size_t *src_origin, const size_t *region,
                                                 size_t dst_offset, cl_uint n,
                                                 const cl_event *wait, cl_event *event)
{
  return image_buffer_copy(q, src, dst, true, src_origin, region, dst_offset, n, wait, event);
}

/* Staged through the host (see above). */
cl_int CL_API_CALL fe_clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem src, cl_mem dst,
                                                 size_t src_offset, const size_t *dst_origin,
                                                 const size_t *region, cl_uint n,
                                                 const cl_event *wait, cl_event *event)
{
  return image_buffer_copy(q, dst, src, false, dst_origin, region, src_offset, n, wait, event);
}
