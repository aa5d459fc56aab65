/*
 * usm.c: unified shared memory in the CUDA plugin: host, device and shared
 * (managed) allocations, frees, fills, copies, prefetch and advice, 2D
 * operations, allocation queries, import and release.
 */
#include "cu_internal.h"

/* The placement and read-only bits of the USM properties are hints the
 * driver decides better itself; write-combining is honoured for host
 * allocations. */
pi_result backend_usm_alloc(const char *fn, const struct usm_alloc *a,
                            void **result_ptr) {
  if (!a->context)
    return fail(PI_ERROR_INVALID_VALUE, "%s: context must not be NULL", fn);
  if (a->device && a->device != a->context->dev)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: the device is not the context's device", fn);
  pi_usm_mem_properties flags = 0;
  TRY(usm_alloc_flags(fn, a->properties, &flags));
  TRY(use_context(fn, a->context->cu));
  char what[300];
  CUresult err;
  void *ptr = NULL;
  CUdeviceptr dptr = 0;
  const char *cufn;
  if (a->kind == USM_HOST) {
    cufn = flags & PI_MEM_ALLOC_WRTITE_COMBINED ? "cuMemHostAlloc"
                                                : "cuMemAllocHost";
    err = flags & PI_MEM_ALLOC_WRTITE_COMBINED
              ? drv.cuMemHostAlloc(&ptr, a->size, CU_MEMHOSTALLOC_WRITECOMBINED)
              : drv.cuMemAllocHost(&ptr, a->size);
  } else if (a->kind == USM_DEVICE) {
    cufn = "cuMemAlloc";
    err = drv.cuMemAlloc(&dptr, a->size);
    ptr = (void *)(uintptr_t)dptr;
  } else {
    /* Never more managed memory than the device has free: oversubscribing
     * it can hang the GPU, not just this process. */
    size_t free_bytes = 0, total = 0;
    TRY(CUF(fn, cuMemGetInfo, &free_bytes, &total));
    if (a->size > free_bytes)
      return fail(PI_ERROR_OUT_OF_RESOURCES,
                  "%s: %zu bytes of shared memory asked for, but %s has only "
                  "%zu bytes free; the CUDA plugin never oversubscribes "
                  "managed memory",
                  fn, a->size, describe(a->context->dev, what, sizeof what),
                  free_bytes);
    cufn = "cuMemAllocManaged";
    err = drv.cuMemAllocManaged(&dptr, a->size, CU_MEM_ATTACH_GLOBAL);
    ptr = (void *)(uintptr_t)dptr;
  }
  if (err == CUDA_ERROR_OUT_OF_MEMORY)
    return fail(PI_ERROR_OUT_OF_RESOURCES,
                "%s: %s cannot allocate %zu bytes for %s", fn, cufn, a->size,
                describe(a->context->dev, what, sizeof what));
  TRY(cu_check(fn, cufn, err));
  if (a->alignment && (uintptr_t)ptr % a->alignment) {
    if (a->kind == USM_HOST)
      drv.cuMemFreeHost(ptr);
    else
      drv.cuMemFree((CUdeviceptr)(uintptr_t)ptr);
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: %s returned memory aligned to less than the %u bytes "
                "asked for; CUDA aligns allocations to 256 bytes (host ones "
                "to a page)",
                fn, cufn, (unsigned)a->alignment);
  }
  *result_ptr = ptr;
  return PI_SUCCESS;
}

static pi_result usm_lookup(const char *fn, const void *ptr,
                            struct usm_info *out) {
  unsigned int memtype = 0, managed = 0;
  CUdeviceptr base = 0;
  size_t size = 0;
  int ordinal = -1;
  CUpointer_attribute attrs[5] = {
      CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
      CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void *data[5] = {&memtype, &managed, &base, &size, &ordinal};
  TRY(CUF(fn, cuPointerGetAttributes, 5, attrs, data,
          (CUdeviceptr)(uintptr_t)ptr));
  out->type = managed                           ? PI_MEM_TYPE_SHARED
              : memtype == CU_MEMORYTYPE_DEVICE ? PI_MEM_TYPE_DEVICE
              : memtype == CU_MEMORYTYPE_HOST   ? PI_MEM_TYPE_HOST
                                                : PI_MEM_TYPE_UNKNOWN;
  out->base = base;
  out->size = size;
  out->ordinal = ordinal;
  return PI_SUCCESS;
}

/* The driver frees memory only once the device is done with it. */
pi_result cu_piextUSMFree(pi_context context, void *ptr) {
  struct usm_info info = {PI_MEM_TYPE_UNKNOWN, 0, 0, -1};
  REQUIRE(context != NULL);
  if (!ptr)
    return PI_SUCCESS;
  TRY(use_context(FN, context->cu));
  TRY(usm_lookup(FN, ptr, &info));
  if (info.type == PI_MEM_TYPE_UNKNOWN ||
      info.base != (CUdeviceptr)(uintptr_t)ptr)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: %p is not the start of a USM allocation", FN, ptr);
  if (info.type == PI_MEM_TYPE_HOST)
    return CU(cuMemFreeHost, ptr);
  return CU(cuMemFree, (CUdeviceptr)(uintptr_t)ptr);
}

pi_result backend_usm_fill(const struct command *c, void *ptr,
                           const void *pattern, size_t patternSize,
                           size_t count) {
  REQUIRE_IN(c->fn, ptr != NULL && pattern != NULL && patternSize > 0);
  pi_event ev = NULL;
  pi_result r = cmd_start(c->fn, c->queue, c->nwait, c->wait,
                          c->event, PI_COMMAND_TYPE_SVM_MEMFILL, &ev);
  if (r != PI_SUCCESS)
    return r;
  /* count is in bytes, as in DPC++'s USM fill. */
  r = fill(c->fn, c->queue->stream, (CUdeviceptr)(uintptr_t)ptr, pattern,
           patternSize, count);
  return cmd_finish(c->fn, c->queue, r, ev, c->event, false);
}

pi_result backend_usm_memcpy(const struct command *c, pi_bool blocking,
                             void *dst_ptr, const void *src_ptr, size_t size) {
  REQUIRE_IN(c->fn, size == 0 || (dst_ptr != NULL && src_ptr != NULL));
  pi_event ev = NULL;
  pi_result r = cmd_start(c->fn, c->queue, c->nwait, c->wait,
                          c->event, PI_COMMAND_TYPE_SVM_MEMCPY, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (size)
    r = CUF(c->fn, cuMemcpyAsync, (CUdeviceptr)(uintptr_t)dst_ptr,
           (CUdeviceptr)(uintptr_t)src_ptr, size, c->queue->stream);
  return cmd_finish(c->fn, c->queue, r, ev, c->event, blocking);
}

/* Migrates shared memory to the queue's device; for other memory there is
 * nothing to migrate (a warning says so) and the command is a marker. */
pi_result backend_usm_prefetch(const struct command *c, const void *ptr,
                               size_t size) {
  struct usm_info info = {PI_MEM_TYPE_UNKNOWN, 0, 0, -1};
  int concurrent = 0;
  REQUIRE_IN(c->fn, ptr != NULL);
  TRY(use_context(c->fn, c->queue->ctx->cu));
  TRY(usm_lookup(c->fn, ptr, &info));
  TRY(device_attr(c->fn, c->queue->dev,
                  CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, &concurrent));
  pi_event ev = NULL;
  pi_result r = cmd_start(c->fn, c->queue, c->nwait, c->wait,
                          c->event, PI_COMMAND_TYPE_MIGRATE_MEM_OBJECTS, &ev);
  if (r != PI_SUCCESS)
    return r;
  bool migrate = info.type == PI_MEM_TYPE_SHARED && concurrent && size;
  if (migrate && drv.cuMemPrefetchAsync) {
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, (int)c->queue->dev->cu};
    r = CUF(c->fn, cuMemPrefetchAsync, (CUdeviceptr)(uintptr_t)ptr, size, loc,
            0, c->queue->stream);
  } else if (migrate && drv.cuMemPrefetchAsync_v1) {
    r = cu_check(c->fn, "cuMemPrefetchAsync",
                 drv.cuMemPrefetchAsync_v1((CUdeviceptr)(uintptr_t)ptr, size,
                                           c->queue->dev->cu,
                                           c->queue->stream));
  }
  r = cmd_finish(c->fn, c->queue, r, ev, c->event, false);
  if (r == PI_SUCCESS && !migrate && size)
    fail(PI_SUCCESS, "%s: %s; the prefetch did nothing", c->fn,
         info.type != PI_MEM_TYPE_SHARED
             ? "the memory is not shared USM, so it does not migrate"
             : "the device cannot access managed memory concurrently");
  return r;
}

/* The advice bits map to cuMemAdvise for shared memory; other memory takes
 * no advice (a warning says so). The command is a marker. */
pi_result cu_piextUSMEnqueueMemAdvise(pi_queue queue, const void *ptr,
                                      size_t length,
                                      pi_mem_advice advice,
                                      pi_event *event) {
  static const struct {
    pi_mem_advice pi;
    CUmem_advise cu;
    bool host;
  } map[] = {
      {PI_MEM_ADVICE_CUDA_SET_READ_MOSTLY, CU_MEM_ADVISE_SET_READ_MOSTLY, 0},
      {PI_MEM_ADVICE_CUDA_UNSET_READ_MOSTLY, CU_MEM_ADVISE_UNSET_READ_MOSTLY,
       0},
      {PI_MEM_ADVICE_CUDA_SET_PREFERRED_LOCATION,
       CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 0},
      {PI_MEM_ADVICE_CUDA_UNSET_PREFERRED_LOCATION,
       CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, 0},
      {PI_MEM_ADVICE_CUDA_SET_ACCESSED_BY, CU_MEM_ADVISE_SET_ACCESSED_BY, 0},
      {PI_MEM_ADVICE_CUDA_UNSET_ACCESSED_BY, CU_MEM_ADVISE_UNSET_ACCESSED_BY,
       0},
      {PI_MEM_ADVICE_CUDA_SET_PREFERRED_LOCATION_HOST,
       CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 1},
      {PI_MEM_ADVICE_CUDA_UNSET_PREFERRED_LOCATION_HOST,
       CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, 1},
      {PI_MEM_ADVICE_CUDA_SET_ACCESSED_BY_HOST, CU_MEM_ADVISE_SET_ACCESSED_BY,
       1},
      {PI_MEM_ADVICE_CUDA_UNSET_ACCESSED_BY_HOST,
       CU_MEM_ADVISE_UNSET_ACCESSED_BY, 1},
  };
  const pi_mem_advice known = 0x3ff;
  struct usm_info info = {PI_MEM_TYPE_UNKNOWN, 0, 0, -1};
  REQUIRE(queue != NULL && ptr != NULL);
  if (advice & ~known)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: advice 0x%x is not CUDA advice (the HIP coarse-grained "
                "bits and unknown bits have no CUDA meaning)",
                FN, (unsigned)advice);
  TRY(use_context(FN, queue->ctx->cu));
  TRY(usm_lookup(FN, ptr, &info));
  bool advise = info.type == PI_MEM_TYPE_SHARED && length;
  if (advise && (advice & (PI_MEM_ADVICE_CUDA_UNSET_READ_MOSTLY |
                           PI_MEM_ADVICE_CUDA_SET_READ_MOSTLY)) ==
                    (PI_MEM_ADVICE_CUDA_UNSET_READ_MOSTLY |
                     PI_MEM_ADVICE_CUDA_SET_READ_MOSTLY))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: advice sets and unsets read-mostly at once", FN);
  /* Advice applies at once; wait for earlier commands on the memory. */
  pi_event ev = NULL;
  pi_result r =
      cmd_start(FN, queue, 0, NULL, event, PI_COMMAND_TYPE_MARKER, &ev);
  if (r == PI_SUCCESS && advise)
    r = CU(cuStreamSynchronize, queue->stream);
  for (size_t i = 0; advise && r == PI_SUCCESS && i < sizeof map / sizeof *map;
       ++i) {
    if (!(advice & map[i].pi))
      continue;
    if (drv.cuMemAdvise) {
      CUmemLocation loc = {map[i].host ? CU_MEM_LOCATION_TYPE_HOST
                                       : CU_MEM_LOCATION_TYPE_DEVICE,
                           map[i].host ? 0 : (int)queue->dev->cu};
      r = CU(cuMemAdvise, (CUdeviceptr)(uintptr_t)ptr, length, map[i].cu, loc);
    } else if (drv.cuMemAdvise_v1) {
      r = cu_check(
          FN, "cuMemAdvise",
          drv.cuMemAdvise_v1((CUdeviceptr)(uintptr_t)ptr, length, map[i].cu,
                             map[i].host ? CU_DEVICE_CPU : queue->dev->cu));
    }
  }
  if (ev || r == PI_SUCCESS)
    r = cmd_finish(FN, queue, r, ev, event, false);
  if (r == PI_SUCCESS && !advise && advice != PI_MEM_ADVICE_RESET)
    fail(PI_SUCCESS,
         "%s: the memory is not shared USM; advice 0x%x was not applied", FN,
         (unsigned)advice);
  return r;
}

pi_result cu_piextUSMGetMemAllocInfo(pi_context context, const void *ptr,
                                     pi_mem_alloc_info param_name,
                                     size_t param_value_size,
                                     void *param_value,
                                     size_t *param_value_size_ret) {
  struct info_out o = INFO_OUT(param_name);
  struct usm_info info = {PI_MEM_TYPE_UNKNOWN, 0, 0, -1};
  REQUIRE(context != NULL);
  TRY(use_context(FN, context->cu));
  TRY(usm_lookup(FN, ptr, &info));
  if (param_name == PI_MEM_ALLOC_TYPE)
    return put_u32(&o, info.type);
  if (info.type == PI_MEM_TYPE_UNKNOWN &&
      (param_name == PI_MEM_ALLOC_BASE_PTR || param_name == PI_MEM_ALLOC_SIZE ||
       param_name == PI_MEM_ALLOC_DEVICE))
    return fail(PI_ERROR_INVALID_VALUE, "%s: %p is not in a USM allocation", FN,
                ptr);
  switch (param_name) {
  case PI_MEM_ALLOC_BASE_PTR:
    return put_ptr(&o, (void *)(uintptr_t)info.base);
  case PI_MEM_ALLOC_SIZE:
    return put_size(&o, info.size);
  case PI_MEM_ALLOC_DEVICE: {
    /* Host allocations belong to no device. */
    pi_device d = NULL;
    pi_platform p = context->dev->platform;
    for (pi_uint32 i = 0; info.type != PI_MEM_TYPE_HOST && i < p->num_devices;
         ++i)
      if ((int)p->devices[i].cu == info.ordinal)
        d = &p->devices[i];
    return put_ptr(&o, d);
  }
  default:
    return unknown_query(&o);
  }
}

/* Memory types for a 2D copy: the driver's unified addressing for what it
 * knows, plain host memory for the rest. */
static pi_result copy_side(const char *fn, const void *ptr,
                           CUmemorytype *type) {
  struct usm_info info = {PI_MEM_TYPE_UNKNOWN, 0, 0, -1};
  TRY(usm_lookup(fn, ptr, &info));
  *type = info.type == PI_MEM_TYPE_UNKNOWN ? CU_MEMORYTYPE_HOST
                                           : CU_MEMORYTYPE_UNIFIED;
  return PI_SUCCESS;
}

/* A 2D fill: one 2D memset for patterns of 1, 2 or 4 bytes at aligned
 * addresses, else a fill per row. */
pi_result backend_usm_fill2d(const struct command *c, void *ptr, size_t pitch,
                             size_t pattern_size, const void *pattern,
                             size_t width, size_t height) {
  REQUIRE_IN(c->fn, ptr != NULL && pattern != NULL && pattern_size > 0);
  if (pitch < width || width % pattern_size)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the width (%zu bytes) must be a multiple of the pattern "
                "size (%zu) and at most the pitch (%zu)",
                c->fn, width, pattern_size, pitch);
  pi_event ev = NULL;
  pi_result r = cmd_start(c->fn, c->queue, c->nwait, c->wait,
                          c->event, PI_COMMAND_TYPE_SVM_MEMFILL, &ev);
  if (r != PI_SUCCESS)
    return r;
  CUdeviceptr dst = (CUdeviceptr)(uintptr_t)ptr;
  size_t ps = pattern_size;
  if ((ps == 1 || ps == 2 || ps == 4) && dst % ps == 0 && pitch % ps == 0 &&
      width && height) {
    uint32_t v32 = 0;
    uint16_t v16 = 0;
    unsigned char v8 = *(const unsigned char *)pattern;
    memcpy(ps == 4 ? (void *)&v32 : (void *)&v16, pattern, ps == 1 ? 0 : ps);
    r = ps == 4   ? CUF(c->fn, cuMemsetD2D32Async, dst, pitch, v32, width / 4,
                        height, c->queue->stream)
        : ps == 2 ? CUF(c->fn, cuMemsetD2D16Async, dst, pitch, v16, width / 2,
                        height, c->queue->stream)
                  : CUF(c->fn, cuMemsetD2D8Async, dst, pitch, v8, width, height,
                        c->queue->stream);
  } else {
    for (size_t row = 0; r == PI_SUCCESS && row < height; ++row)
      r = fill(c->fn, c->queue->stream, dst + row * pitch, pattern, ps, width);
  }
  return cmd_finish(c->fn, c->queue, r, ev, c->event, false);
}

pi_result backend_usm_memset2d(const struct command *c, void *ptr, size_t pitch,
                               int value, size_t width, size_t height) {
  REQUIRE_IN(c->fn, ptr != NULL && pitch >= width);
  pi_event ev = NULL;
  pi_result r = cmd_start(c->fn, c->queue, c->nwait, c->wait,
                          c->event, PI_COMMAND_TYPE_SVM_MEMFILL, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (width && height)
    r = CUF(c->fn, cuMemsetD2D8Async, (CUdeviceptr)(uintptr_t)ptr, pitch,
           (unsigned char)value, width, height, c->queue->stream);
  return cmd_finish(c->fn, c->queue, r, ev, c->event, false);
}

pi_result backend_usm_memcpy2d(const struct command *c, pi_bool blocking,
                               void *dst_ptr, size_t dst_pitch,
                               const void *src_ptr, size_t src_pitch,
                               size_t width, size_t height) {
  REQUIRE_IN(c->fn, dst_ptr != NULL && src_ptr != NULL);
  if (dst_pitch < width || src_pitch < width)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a pitch is smaller than the width (%zu bytes)", c->fn,
                width);
  CUDA_MEMCPY2D cp;
  memset(&cp, 0, sizeof cp);
  TRY(use_context(c->fn, c->queue->ctx->cu));
  TRY(copy_side(c->fn, src_ptr, &cp.srcMemoryType));
  TRY(copy_side(c->fn, dst_ptr, &cp.dstMemoryType));
  if (cp.srcMemoryType == CU_MEMORYTYPE_HOST)
    cp.srcHost = src_ptr;
  else
    cp.srcDevice = (CUdeviceptr)(uintptr_t)src_ptr;
  if (cp.dstMemoryType == CU_MEMORYTYPE_HOST)
    cp.dstHost = dst_ptr;
  else
    cp.dstDevice = (CUdeviceptr)(uintptr_t)dst_ptr;
  cp.srcPitch = src_pitch;
  cp.dstPitch = dst_pitch;
  cp.WidthInBytes = width;
  cp.Height = height;
  pi_event ev = NULL;
  pi_result r = cmd_start(c->fn, c->queue, c->nwait, c->wait,
                          c->event, PI_COMMAND_TYPE_SVM_MEMCPY, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (width && height)
    r = CUF(c->fn, cuMemcpy2DAsync, &cp, c->queue->stream);
  return cmd_finish(c->fn, c->queue, r, ev, c->event, blocking);
}

/* Pins host memory (cuMemHostRegister) so that copies from it are fast. */
pi_result cu_piextUSMImport(const void *ptr, size_t size,
                            pi_context context) {
  REQUIRE(ptr != NULL && size > 0 && context != NULL);
  TRY(use_context(FN, context->cu));
  return CU(cuMemHostRegister, (void *)(uintptr_t)ptr, size,
            CU_MEMHOSTREGISTER_PORTABLE);
}

pi_result cu_piextUSMRelease(const void *ptr, pi_context context) {
  REQUIRE(ptr != NULL && context != NULL);
  TRY(use_context(FN, context->cu));
  return CU(cuMemHostUnregister, (void *)(uintptr_t)ptr);
}
