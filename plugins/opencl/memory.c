/*
 * memory.c: the PI memory-object functions of the OpenCL plugin: buffers,
 * sub-buffers and images (PI flags and image formats to OpenCL's), their
 * queries, reference counts and native handles.
 */
#include "ocl_internal.h"

/* ---- Memory ---------------------------------------------------------------
 */

/* The OpenCL flags for PI memory flags; unknown bits are an error. */
static pi_result mem_flags(const char *fn, pi_mem_flags flags,
                           cl_mem_flags *out) {
  static const struct {
    pi_mem_flags pi;
    cl_mem_flags cl;
  } map[] = {{PI_MEM_FLAGS_ACCESS_RW, CL_MEM_READ_WRITE},
             {PI_MEM_ACCESS_READ_ONLY, CL_MEM_READ_ONLY},
             {PI_MEM_FLAGS_HOST_PTR_USE, CL_MEM_USE_HOST_PTR},
             {PI_MEM_FLAGS_HOST_PTR_COPY, CL_MEM_COPY_HOST_PTR},
             {PI_MEM_FLAGS_HOST_PTR_ALLOC, CL_MEM_ALLOC_HOST_PTR}};
  *out = 0;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; ++i)
    if (flags & map[i].pi) {
      *out |= map[i].cl;
      flags &= ~map[i].pi;
    }
  if (flags)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown memory flags 0x%llx", fn,
                (unsigned long long)flags);
  return PI_SUCCESS;
}

/* properties: {PI_MEM_PROPERTIES_CHANNEL, channel,
 * PI_MEM_PROPERTIES_ALLOC_BUFFER_LOCATION, location, 0}. Both are placement
 * hints: they go to clCreateBufferWithPropertiesINTEL where the platform has
 * it and are dropped elsewhere. */
pi_result ocl_piMemBufferCreate(pi_context context, pi_mem_flags flags,
                                size_t size, void *host_ptr,
                                pi_mem *ret_mem,
                                const pi_mem_properties *properties) {
  cl_context ctx = (cl_context)context;
  cl_mem_flags cl_flags;
  cl_int err;
  REQUIRE(ret_mem != NULL);
  *ret_mem = NULL;
  pi_result r = mem_flags(FN, flags, &cl_flags);
  if (r != PI_SUCCESS)
    return r;
  cl_mem_properties_intel props[8] = {0};
  size_t n = 0;
  for (size_t i = 0; properties && properties[i]; i += 2) {
    if (properties[i] != PI_MEM_PROPERTIES_CHANNEL &&
        properties[i] != PI_MEM_PROPERTIES_ALLOC_BUFFER_LOCATION)
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown buffer property 0x%llx",
                  FN, (unsigned long long)properties[i]);
    if (n + 3 > sizeof props / sizeof props[0])
      return fail(PI_ERROR_INVALID_VALUE, "%s: too many buffer properties", FN);
    props[n++] = properties[i];
    props[n++] = properties[i + 1];
  }
  if (n) {
    cl_device_id dev = NULL;
    const struct platform_state *ps = NULL;
    if ((r = context_device(FN, ctx, NULL, &dev)) != PI_SUCCESS ||
        (r = device_state(FN, dev, &ps)) != PI_SUCCESS)
      return r;
    if (ps->ext.clCreateBufferWithPropertiesINTEL) {
      *ret_mem = (pi_mem)ps->ext.clCreateBufferWithPropertiesINTEL(
          ctx, props, cl_flags, size, host_ptr, &err);
      return CL_CHECK(clCreateBufferWithPropertiesINTEL, err);
    }
  }
  *ret_mem =
      (pi_mem)ICD_CREATE(clCreateBuffer, &err, ctx, cl_flags, size, host_ptr);
  return CL_CHECK(clCreateBuffer, err);
}

static void image_to_cl(const pi_image_format *format,
                        const pi_image_desc *desc, cl_image_format *cl_format,
                        cl_image_desc *cl_desc) {
  cl_format->image_channel_order = format->image_channel_order;
  cl_format->image_channel_data_type = format->image_channel_data_type;
  memset(cl_desc, 0, sizeof *cl_desc);
  cl_desc->image_type = desc->image_type;
  cl_desc->image_width = desc->image_width;
  cl_desc->image_height = desc->image_height;
  cl_desc->image_depth = desc->image_depth;
  cl_desc->image_array_size = desc->image_array_size;
  cl_desc->image_row_pitch = desc->image_row_pitch;
  cl_desc->image_slice_pitch = desc->image_slice_pitch;
  cl_desc->num_mip_levels = desc->num_mip_levels;
  cl_desc->num_samples = desc->num_samples;
  cl_desc->buffer = (cl_mem)desc->buffer;
}

pi_result ocl_piMemImageCreate(pi_context context, pi_mem_flags flags,
                               const pi_image_format *image_format,
                               const pi_image_desc *image_desc,
                               void *host_ptr, pi_mem *ret_mem) {
  cl_mem_flags cl_flags;
  cl_image_format format;
  cl_image_desc desc;
  cl_int err;
  REQUIRE(image_format != NULL && image_desc != NULL && ret_mem != NULL);
  *ret_mem = NULL;
  pi_result r = mem_flags(FN, flags, &cl_flags);
  if (r != PI_SUCCESS)
    return r;
  image_to_cl(image_format, image_desc, &format, &desc);
  *ret_mem = (pi_mem)ICD_CREATE(clCreateImage, &err, (cl_context)context,
                                cl_flags, &format, &desc, host_ptr);
  return CL_CHECK(clCreateImage, err);
}

pi_result backend_mem_info(pi_mem mem, const struct info_out *o) {
  return INFO_PASS(o, clGetMemObjectInfo, (cl_mem)mem);
}

/* PI_IMAGE_INFO_FORMAT returns a cl_image_format, which has the layout of a
 * pi_image_format. */
pi_result backend_image_info(pi_mem image, const struct info_out *o) {
  return INFO_PASS(o, clGetImageInfo, (cl_mem)image);
}

pi_result ocl_piMemRetain(pi_mem mem) {
  return CL_CALL(clRetainMemObject, (cl_mem)mem);
}

pi_result ocl_piMemRelease(pi_mem mem) {
  return CL_CALL(clReleaseMemObject, (cl_mem)mem);
}

pi_result
ocl_piMemBufferPartition(pi_mem buffer, pi_mem_flags flags,
                         pi_buffer_create_type buffer_create_type,
                         void *buffer_create_info, pi_mem *ret_mem) {
  cl_mem_flags cl_flags;
  cl_int err;
  REQUIRE(ret_mem != NULL && buffer_create_info != NULL);
  *ret_mem = NULL;
  if (buffer_create_type != PI_BUFFER_CREATE_TYPE_REGION)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: buffer_create_type 0x%x is unknown; only "
                "PI_BUFFER_CREATE_TYPE_REGION exists",
                FN, (unsigned)buffer_create_type);
  pi_result r = mem_flags(FN, flags, &cl_flags);
  if (r != PI_SUCCESS)
    return r;
  const struct pi_buffer_region_struct *pi_region = buffer_create_info;
  cl_buffer_region region = {pi_region->origin, pi_region->size};
  *ret_mem =
      (pi_mem)ICD_CREATE(clCreateSubBuffer, &err, (cl_mem)buffer, cl_flags,
                         CL_BUFFER_CREATE_TYPE_REGION, &region);
  return CL_CHECK(clCreateSubBuffer, err);
}

pi_result ocl_piextMemGetNativeHandle(pi_mem mem, pi_device dev,
                                      pi_native_handle *nativeHandle) {
  (void)dev; /* a cl_mem serves every device of its context */
  return native_of(FN, mem, nativeHandle);
}

pi_result
ocl_piextMemCreateWithNativeHandle(pi_native_handle nativeHandle,
                                   pi_context context, bool ownNativeHandle,
                                   pi_mem *mem) {
  (void)context;
  pi_result r =
      adopt_native(FN, NATIVE_MEM, nativeHandle, ownNativeHandle, mem);
  if (r == PI_SUCCESS)
    *mem = (pi_mem)nativeHandle;
  return r;
}

pi_result ocl_piextMemImageCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, bool ownNativeHandle,
    const pi_image_format *ImageFormat, const pi_image_desc *ImageDesc,
    pi_mem *img) {
  (void)context;
  (void)ImageFormat; /* a cl_mem image knows its format and shape */
  (void)ImageDesc;
  pi_result r =
      adopt_native(FN, NATIVE_MEM, nativeHandle, ownNativeHandle, img);
  if (r == PI_SUCCESS)
    *img = (pi_mem)nativeHandle;
  return r;
}
