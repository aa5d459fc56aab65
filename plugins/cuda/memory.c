/*
 * memory.c: the PI buffer functions of the CUDA plugin: device allocations,
 * registered and pinned host memory, sub-buffers and native pointers;
 * creation, queries, reference counts and native handles; images, which
 * the plugin does not support.
 */
#include "cu_internal.h"

/* ---- Memory ---------------------------------------------------------------
 */

static pi_result mem_new(const char *fn, pi_context ctx, enum mem_kind kind,
                         CUdeviceptr ptr, size_t size, void *host,
                         pi_mem_flags flags, pi_mem *out) {
  pi_mem m = malloc(sizeof *m);
  if (!m)
    return out_of_memory(fn);
  *m = (struct _pi_mem){.ctx = ctx, .kind = kind, .ptr = ptr, .size = size,
                        .host = host, .flags = flags};
  atomic_init(&m->refs, 1);
  pthread_mutex_init(&m->lock, NULL);
  cu_piContextRetain(ctx);
  *out = m;
  return PI_SUCCESS;
}

/* Frees what a buffer holds of its own (not sub-buffers' parents). */
static pi_result mem_free_storage(const char *fn, pi_mem m) {
  switch (m->kind) {
  case MEM_DEVICE:
    return CUF(fn, cuMemFree, m->ptr);
  case MEM_PINNED:
    return CUF(fn, cuMemFreeHost, m->host);
  case MEM_REGISTERED:
    return m->owns ? CUF(fn, cuMemHostUnregister, m->host) : PI_SUCCESS;
  case MEM_NATIVE:
    return m->owns ? CUF(fn, cuMemFree, m->ptr) : PI_SUCCESS;
  case MEM_SUB:
    break;
  }
  return PI_SUCCESS;
}

/* Flags: read-write or read-only (a hint CUDA has no use for) and one of
 * PI_MEM_FLAGS_HOST_PTR_USE (the device works on the host memory, which
 * is registered with the driver), _COPY (device memory starting with a
 * copy) or _ALLOC (pinned host memory; with _COPY, a copy in it). */
pi_result cu_piMemBufferCreate(pi_context context, pi_mem_flags flags,
                               size_t size, void *host_ptr,
                               pi_mem *ret_mem,
                               const pi_mem_properties *properties) {
  const pi_mem_flags known = PI_MEM_FLAGS_ACCESS_RW | PI_MEM_ACCESS_READ_ONLY |
                             PI_MEM_FLAGS_HOST_PTR_USE |
                             PI_MEM_FLAGS_HOST_PTR_COPY |
                             PI_MEM_FLAGS_HOST_PTR_ALLOC;
  REQUIRE(context != NULL && ret_mem != NULL);
  *ret_mem = NULL;
  if (flags & ~known)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown memory flags 0x%llx", FN,
                (unsigned long long)(flags & ~known));
  if (size == 0)
    return fail(PI_ERROR_INVALID_BUFFER_SIZE, "%s: size is 0", FN);
  bool use = flags & PI_MEM_FLAGS_HOST_PTR_USE,
       copy = flags & PI_MEM_FLAGS_HOST_PTR_COPY,
       alloc = flags & PI_MEM_FLAGS_HOST_PTR_ALLOC;
  if ((use || copy) != (host_ptr != NULL))
    return fail(PI_ERROR_INVALID_HOST_PTR,
                "%s: host_ptr must be given exactly when "
                "PI_MEM_FLAGS_HOST_PTR_USE or _COPY is set",
                FN);
  if (use && (copy || alloc))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: PI_MEM_FLAGS_HOST_PTR_USE excludes _COPY and _ALLOC", FN);
  /* Channel and buffer location properties are FPGA placement hints. */
  for (size_t i = 0; properties && properties[i]; i += 2)
    if (properties[i] != PI_MEM_PROPERTIES_CHANNEL &&
        properties[i] != PI_MEM_PROPERTIES_ALLOC_BUFFER_LOCATION)
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown buffer property 0x%llx",
                  FN, (unsigned long long)properties[i]);
  TRY(use_context(FN, context->cu));
  CUdeviceptr ptr = 0;
  void *host = NULL;
  enum mem_kind kind = MEM_DEVICE;
  bool owns = true;
  if (use) {
    kind = MEM_REGISTERED;
    host = host_ptr;
    CUresult err =
        drv.cuMemHostRegister(host, size, CU_MEMHOSTREGISTER_DEVICEMAP);
    if (err == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
      owns = false; /* pinned already (cuMemAllocHost, another buffer) */
    else
      TRY(cu_check(FN, "cuMemHostRegister", err));
    pi_result r = CU(cuMemHostGetDevicePointer, &ptr, host, 0);
    if (r != PI_SUCCESS) {
      if (owns)
        drv.cuMemHostUnregister(host);
      return r;
    }
  } else if (alloc) {
    kind = MEM_PINNED;
    CUresult err = drv.cuMemAllocHost(&host, size);
    if (err == CUDA_ERROR_OUT_OF_MEMORY)
      return fail(PI_ERROR_MEM_OBJECT_ALLOCATION_FAILURE,
                  "%s: cuMemAllocHost cannot pin %zu bytes", FN, size);
    TRY(cu_check(FN, "cuMemAllocHost", err));
    pi_result r = CU(cuMemHostGetDevicePointer, &ptr, host, 0);
    if (r != PI_SUCCESS) {
      drv.cuMemFreeHost(host);
      return r;
    }
    if (copy)
      memcpy(host, host_ptr, size);
  } else {
    CUresult err = drv.cuMemAlloc(&ptr, size);
    if (err == CUDA_ERROR_OUT_OF_MEMORY) {
      char what[300];
      return fail(PI_ERROR_MEM_OBJECT_ALLOCATION_FAILURE,
                  "%s: cuMemAlloc cannot allocate %zu bytes on %s", FN, size,
                  describe(context->dev, what, sizeof what));
    }
    TRY(cu_check(FN, "cuMemAlloc", err));
    if (copy) {
      pi_result r = CU(cuMemcpyHtoD, ptr, host_ptr, size);
      if (r != PI_SUCCESS) {
        drv.cuMemFree(ptr);
        return r;
      }
    }
  }
  pi_result r = mem_new(FN, context, kind, ptr, size, host, flags, ret_mem);
  if (r != PI_SUCCESS) {
    struct _pi_mem storage;
    memset(&storage, 0, sizeof storage);
    storage.kind = kind;
    storage.ptr = ptr;
    storage.host = host;
    storage.owns = owns;
    mem_free_storage(FN, &storage);
    return r;
  }
  (*ret_mem)->owns = owns;
  return PI_SUCCESS;
}

pi_result cu_piMemImageCreate(pi_context context, pi_mem_flags flags,
                              const pi_image_format *image_format,
                              const pi_image_desc *image_desc,
                              void *host_ptr, pi_mem *ret_mem) {
  (void)context;
  (void)flags;
  (void)image_format;
  (void)image_desc;
  (void)host_ptr;
  if (ret_mem)
    *ret_mem = NULL;
  return no_images(FN);
}

/* The memory's facts answer every memory query. */
DEFINE_FACTS(mem, m, .context = m->ctx, .size = m->size)

pi_result backend_mem_info(pi_mem mem, const struct info_out *o) {
  (void)mem;
  return unknown_query(o);
}

pi_result backend_image_info(pi_mem image, const struct info_out *o) {
  (void)image;
  return no_images(o->fn);
}

pi_result cu_piMemRetain(pi_mem mem) {
  REQUIRE(mem != NULL);
  ref_retain(&mem->refs);
  return PI_SUCCESS;
}

/* The last release frees the memory (cuMemFree waits for the device to be
 * done with it) and any mapping's staging copy. */
pi_result cu_piMemRelease(pi_mem mem) {
  REQUIRE(mem != NULL);
  if (!ref_release(&mem->refs))
    return PI_SUCCESS;
  bool gone = driver_gone();
  pi_result r = gone ? PI_SUCCESS : use_context(FN, mem->ctx->cu);
  if (r == PI_SUCCESS && !gone)
    r = mem_free_storage(FN, mem);
  for (struct mapping *mp = mem->maps, *next; mp; mp = next) {
    next = mp->next;
    free(mp->ptr);
    free(mp);
  }
  pi_result r2 = mem->parent ? cu_piMemRelease(mem->parent) : PI_SUCCESS;
  pi_result r3 = cu_piContextRelease(mem->ctx);
  pthread_mutex_destroy(&mem->lock);
  free(mem);
  return r != PI_SUCCESS ? r : r2 != PI_SUCCESS ? r2 : r3;
}

/* A region of a buffer. Its origin must be aligned to
 * PI_DEVICE_INFO_MEM_BASE_ADDR_ALIGN, as in OpenCL. */
pi_result
cu_piMemBufferPartition(pi_mem buffer, pi_mem_flags flags,
                        pi_buffer_create_type buffer_create_type,
                        void *buffer_create_info, pi_mem *ret_mem) {
  REQUIRE(buffer != NULL && ret_mem != NULL && buffer_create_info != NULL);
  *ret_mem = NULL;
  if (buffer_create_type != PI_BUFFER_CREATE_TYPE_REGION)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: buffer_create_type 0x%x is unknown; only "
                "PI_BUFFER_CREATE_TYPE_REGION exists",
                FN, (unsigned)buffer_create_type);
  if (buffer->kind == MEM_SUB)
    return fail(PI_ERROR_INVALID_MEM_OBJECT,
                "%s: the buffer is itself a sub-buffer; partition its parent",
                FN);
  if (flags & (PI_MEM_FLAGS_HOST_PTR_USE | PI_MEM_FLAGS_HOST_PTR_COPY |
               PI_MEM_FLAGS_HOST_PTR_ALLOC))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: sub-buffers take no host pointer flags", FN);
  const struct pi_buffer_region_struct *region = buffer_create_info;
  if (region->size == 0 || region->origin > buffer->size ||
      region->size > buffer->size - region->origin)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: region %zu..%zu is outside the %zu-byte buffer", FN,
                region->origin, region->origin + region->size, buffer->size);
  int align = 0;
  TRY(device_attr(FN, buffer->ctx->dev, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT,
                  &align));
  if (align > 0 && region->origin % (size_t)align)
    return fail(PI_ERROR_MISALIGNED_SUB_BUFFER_OFFSET,
                "%s: origin %zu is not a multiple of %d bytes "
                "(PI_DEVICE_INFO_MEM_BASE_ADDR_ALIGN)",
                FN, region->origin, align);
  TRY(mem_new(FN, buffer->ctx, MEM_SUB, buffer->ptr + region->origin,
              region->size, buffer->host ? buffer->host + region->origin : NULL,
              flags ? flags : buffer->flags, ret_mem));
  cu_piMemRetain(buffer);
  (*ret_mem)->parent = buffer;
  return PI_SUCCESS;
}

/* The buffer's CUdeviceptr. */
pi_result cu_piextMemGetNativeHandle(pi_mem mem, pi_device dev,
                                     pi_native_handle *nativeHandle) {
  (void)dev; /* one device per context */
  REQUIRE(mem != NULL && nativeHandle != NULL);
  *nativeHandle = (pi_native_handle)mem->ptr;
  return PI_SUCCESS;
}

/* Wraps device memory (a CUdeviceptr from cuMemAlloc, the start of its
 * allocation); with ownNativeHandle the last release frees it. */
pi_result
cu_piextMemCreateWithNativeHandle(pi_native_handle nativeHandle,
                                  pi_context context, bool ownNativeHandle,
                                  pi_mem *mem) {
  REQUIRE(nativeHandle != 0 && context != NULL && mem != NULL);
  CUdeviceptr base = 0;
  size_t size = 0;
  TRY(use_context(FN, context->cu));
  TRY(CU(cuMemGetAddressRange, &base, &size, (CUdeviceptr)nativeHandle));
  if (base != (CUdeviceptr)nativeHandle)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: 0x%llx is inside an allocation, not its start (0x%llx)",
                FN, (unsigned long long)nativeHandle, (unsigned long long)base);
  TRY(mem_new(FN, context, MEM_NATIVE, base, size, NULL, PI_MEM_FLAGS_ACCESS_RW,
              mem));
  (*mem)->owns = ownNativeHandle;
  return PI_SUCCESS;
}

/* CUDA buffers only. */
UNUSED_PARAMETERS_BEGIN
pi_result cu_piextMemImageCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, bool ownNativeHandle,
    const pi_image_format *ImageFormat, const pi_image_desc *ImageDesc,
    pi_mem *img) {
  return no_images(FN);
}
UNUSED_PARAMETERS_END
