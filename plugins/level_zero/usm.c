/*
 * usm.c: unified shared memory in the Level Zero plugin: host, device and
 * shared allocations, frees, fills, copies, prefetch and advice, 2D
 * operations, allocation queries, import and release.
 */
#include "lz_internal.h"

/* The Level Zero allocation flags for a PI property list. The read-only
 * hint and buffer locations (FPGA) have no Level Zero flag. */
static pi_result usm_flags(const char *fn, const pi_usm_mem_properties *p,
                           ze_host_mem_alloc_flags_t *host,
                           ze_device_mem_alloc_flags_t *dev) {
  pi_usm_mem_properties bits = 0;
  *host = 0;
  *dev = 0;
  TRY(usm_alloc_flags(fn, p, &bits));
  if (bits & PI_MEM_ALLOC_WRTITE_COMBINED)
    *host |= ZE_HOST_MEM_ALLOC_FLAG_BIAS_WRITE_COMBINED;
  if (bits & PI_MEM_ALLOC_INITIAL_PLACEMENT_HOST)
    *host |= ZE_HOST_MEM_ALLOC_FLAG_BIAS_INITIAL_PLACEMENT;
  if (bits & PI_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE)
    *dev |= ZE_DEVICE_MEM_ALLOC_FLAG_BIAS_INITIAL_PLACEMENT;
  return PI_SUCCESS;
}

/* zeMemAllocHost, zeMemAllocDevice or zeMemAllocShared. */
pi_result backend_usm_alloc(const char *fn, const struct usm_alloc *a,
                            void **result_ptr) {
  if (!a->context)
    return fail(PI_ERROR_INVALID_CONTEXT, "%s: context is NULL", fn);
  if (a->kind != USM_HOST && !a->device)
    return fail(PI_ERROR_INVALID_DEVICE, "%s: device is NULL", fn);
  if (a->kind != USM_HOST && !context_has_device(a->context, a->device))
    return fail(PI_ERROR_INVALID_DEVICE, "%s: device '%s' is not in the "
                "context", fn, dev_name(a->device));
  ze_host_mem_alloc_flags_t hf = 0;
  ze_device_mem_alloc_flags_t df = 0;
  pi_result r = usm_flags(fn, a->properties, &hf, &df);
  if (r != PI_SUCCESS)
    return r;
  ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC,
                                 .flags = hf};
  ze_device_mem_alloc_desc_t dd = {
      .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, .flags = df};
  switch (a->kind) {
  case USM_HOST:
    return check_ze(fn, "zeMemAllocHost",
                    zeMemAllocHost(a->context->ze, &hd, a->size, a->alignment,
                                   result_ptr));
  case USM_DEVICE:
    return check_ze(fn, "zeMemAllocDevice",
                    zeMemAllocDevice(a->context->ze, &dd, a->size, a->alignment,
                                     a->device->ze, result_ptr));
  default:
    return check_ze(fn, "zeMemAllocShared",
                    zeMemAllocShared(a->context->ze, &dd, &hd, a->size,
                                     a->alignment, a->device->ze, result_ptr));
  }
}

pi_result lz_piextUSMFree(pi_context context, void *ptr) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  if (!ptr)
    return PI_SUCCESS;
  return ZE_CALL(zeMemFree, context->ze, ptr);
}

pi_result backend_usm_fill(const struct command *c, void *ptr,
                           const void *pattern, size_t patternSize,
                           size_t count) {
  return enqueue_fill(c->fn, c->queue, PI_COMMAND_TYPE_SVM_MEMFILL, ptr,
                      pattern, patternSize, count, c->nwait, c->wait, c->event);
}

pi_result backend_usm_memcpy(const struct command *c, pi_bool blocking,
                             void *dst_ptr, const void *src_ptr, size_t size) {
  REQUIRE_IN(c->fn, dst_ptr != NULL && src_ptr != NULL);
  struct copy_op op = {dst_ptr, src_ptr, size};
  return enqueue(c->fn, c->queue, PI_COMMAND_TYPE_SVM_MEMCPY, c->nwait,
                 c->wait, c->event, blocking, false, append_copy, &op,
                 NULL);
}

static pi_result append_hint(const struct append *a, void *op) {
  struct hint_op *h = op;
  pi_result r = append_wait(a);
  if (r == PI_SUCCESS && h->prefetch)
    r = check_ze(a->fn, "zeCommandListAppendMemoryPrefetch",
                 zeCommandListAppendMemoryPrefetch(a->list, h->ptr, h->size));
  for (size_t i = 0; r == PI_SUCCESS && i < h->nadvice; ++i)
    r = check_ze(a->fn, "zeCommandListAppendMemAdvise",
                 zeCommandListAppendMemAdvise(a->list, a->q->device->ze,
                                              h->ptr, h->size, h->advice[i]));
  return r == PI_SUCCESS ? append_signal(a) : r;
}

pi_result backend_usm_prefetch(const struct command *c, const void *ptr,
                               size_t size) {
  REQUIRE_IN(c->fn, ptr != NULL);
  struct hint_op op = {.ptr = ptr, .size = size, .prefetch = true};
  return enqueue(c->fn, c->queue, PI_COMMAND_TYPE_MIGRATE_MEM_OBJECTS,
                 c->nwait, c->wait, c->event, false, false,
                 append_hint, &op, NULL);
}

/* PI's advice is CUDA's; read-mostly and preferred location map to Level
 * Zero advice, the rest has no Level Zero equivalent and is ignored with a
 * warning (PI_SUCCESS and a piPluginGetLastError message). */
pi_result lz_piextUSMEnqueueMemAdvise(pi_queue queue, const void *ptr,
                                      size_t length,
                                      pi_mem_advice advice,
                                      pi_event *event) {
  REQUIRE(ptr != NULL);
  struct hint_op op = {.ptr = ptr, .size = length};
  unsigned a = (unsigned)advice, ignored = 0;
  if (advice == PI_MEM_ADVICE_RESET) {
    op.advice[op.nadvice++] = ZE_MEMORY_ADVICE_CLEAR_READ_MOSTLY;
    op.advice[op.nadvice++] = ZE_MEMORY_ADVICE_CLEAR_PREFERRED_LOCATION;
  } else if (advice == PI_MEM_ADVICE_UNKNOWN) {
    return fail(PI_ERROR_INVALID_VALUE, "%s: PI_MEM_ADVICE_UNKNOWN is no "
                "advice", FN);
  } else {
    if (a & PI_MEM_ADVICE_CUDA_SET_READ_MOSTLY)
      op.advice[op.nadvice++] = ZE_MEMORY_ADVICE_SET_READ_MOSTLY;
    if (a & PI_MEM_ADVICE_CUDA_UNSET_READ_MOSTLY)
      op.advice[op.nadvice++] = ZE_MEMORY_ADVICE_CLEAR_READ_MOSTLY;
    if (a & PI_MEM_ADVICE_CUDA_SET_PREFERRED_LOCATION)
      op.advice[op.nadvice++] = ZE_MEMORY_ADVICE_SET_PREFERRED_LOCATION;
    if (a & PI_MEM_ADVICE_CUDA_UNSET_PREFERRED_LOCATION)
      op.advice[op.nadvice++] = ZE_MEMORY_ADVICE_CLEAR_PREFERRED_LOCATION;
    ignored = a & ~0xfu;
  }
  pi_result r = enqueue(FN, queue, PI_COMMAND_TYPE_USER, 0, NULL, event, false,
                        false, append_hint, &op, NULL);
  if (r == PI_SUCCESS && ignored)
    fail(PI_SUCCESS,
         "%s: advice bits 0x%x have no Level Zero equivalent and were ignored",
         FN, ignored);
  return r;
}

pi_result lz_piextUSMGetMemAllocInfo(pi_context context,
                                     const void *ptr,
                                     pi_mem_alloc_info param_name,
                                     size_t param_value_size,
                                     void *param_value,
                                     size_t *param_value_size_ret) {
  struct info_out o = INFO_OUT(param_name);
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  ze_memory_allocation_properties_t props = {
      .stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
  ze_device_handle_t zd = NULL;
  void *base = NULL;
  size_t size = 0;
  pi_result r;
  switch (param_name) {
  case PI_MEM_ALLOC_TYPE:
  case PI_MEM_ALLOC_DEVICE:
    r = ZE_CALL(zeMemGetAllocProperties, context->ze, ptr, &props, &zd);
    if (r != PI_SUCCESS)
      return r;
    if (param_name == PI_MEM_ALLOC_DEVICE)
      return put_ptr(&o, zd ? find_device(context->platform, zd) : NULL);
    return put_u32(&o,
                   props.type == ZE_MEMORY_TYPE_HOST     ? PI_MEM_TYPE_HOST
                   : props.type == ZE_MEMORY_TYPE_DEVICE ? PI_MEM_TYPE_DEVICE
                   : props.type == ZE_MEMORY_TYPE_SHARED ? PI_MEM_TYPE_SHARED
                                                         : PI_MEM_TYPE_UNKNOWN);
  case PI_MEM_ALLOC_BASE_PTR:
  case PI_MEM_ALLOC_SIZE:
    r = ZE_CALL(zeMemGetAddressRange, context->ze, ptr, &base, &size);
    if (r != PI_SUCCESS)
      return r;
    return param_name == PI_MEM_ALLOC_SIZE ? put_size(&o, size)
                                           : put_ptr(&o, base);
  default:
    return unknown_query(&o);
  }
}

static pi_result append_fill2d(const struct append *a, void *op) {
  struct fill2d_op *f = op;
  pi_result r = append_wait(a);
  for (size_t row = 0; r == PI_SUCCESS && row < f->height; ++row)
    r = check_ze(a->fn, "zeCommandListAppendMemoryFill",
                 zeCommandListAppendMemoryFill(
                     a->list, f->ptr + row * f->pitch, f->pattern,
                     f->pattern_size, f->width,
                     row + 1 == f->height ? a->signal : NULL, 0, NULL));
  if (r == PI_SUCCESS && f->height == 0)
    r = append_signal(a);
  return r;
}

static pi_result fill2d(const char *fn, pi_queue queue, void *ptr,
                        size_t pitch, const void *pattern, size_t pattern_size,
                        size_t width, size_t height, pi_uint32 nwait,
                        const pi_event *wait, pi_event *event) {
  if (!ptr || !pattern || !pattern_size || width % pattern_size ||
      pitch < width || (pattern_size & (pattern_size - 1)))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a 2D fill needs a pointer, a power-of-two pattern size "
                "(%zu) dividing the width (%zu), and a pitch (%zu) no smaller "
                "than the width",
                fn, pattern_size, width, pitch);
  if (queue && pattern_size > queue->device->max_fill)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: device '%s' fills patterns of up to %zu bytes, not %zu",
                fn, dev_name(queue->device), queue->device->max_fill,
                pattern_size);
  struct fill2d_op op = {ptr, pitch, width, height, pattern, pattern_size};
  return enqueue(fn, queue, PI_COMMAND_TYPE_SVM_MEMFILL, nwait, wait, event,
                 false, false, append_fill2d, &op, NULL);
}

pi_result backend_usm_fill2d(const struct command *c, void *ptr, size_t pitch,
                             size_t pattern_size, const void *pattern,
                             size_t width, size_t height) {
  return fill2d(c->fn, c->queue, ptr, pitch, pattern, pattern_size, width,
                height, c->nwait, c->wait, c->event);
}

pi_result backend_usm_memset2d(const struct command *c, void *ptr, size_t pitch,
                               int value, size_t width, size_t height) {
  unsigned char byte = (unsigned char)value;
  return fill2d(c->fn, c->queue, ptr, pitch, &byte, 1, width, height,
                c->nwait, c->wait, c->event);
}

/* One region copy with both pitches. */
pi_result backend_usm_memcpy2d(const struct command *c, pi_bool blocking,
                               void *dst_ptr, size_t dst_pitch,
                               const void *src_ptr, size_t src_pitch,
                               size_t width, size_t height) {
  REQUIRE_IN(c->fn, dst_ptr != NULL && src_ptr != NULL);
  const size_t zero[3] = {0, 0, 0}, region[3] = {width, height, 1};
  struct rect_op op;
  pi_result r = rect_setup(c->fn, &op, dst_ptr, zero, dst_pitch, 0, src_ptr,
                           zero, src_pitch, 0, region);
  if (r != PI_SUCCESS)
    return r;
  return enqueue(c->fn, c->queue, PI_COMMAND_TYPE_SVM_MEMCPY, c->nwait,
                 c->wait, c->event, blocking, false, append_rect, &op,
                 NULL);
}

/* Pins host memory for faster copies with zexDriverImportExternalPointer
 * where the driver offers it; elsewhere copies from unimported memory work
 * anyway, and the call succeeds with a warning. */
pi_result lz_piextUSMImport(const void *ptr, size_t size,
                            pi_context context) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(ptr != NULL && size != 0);
  pi_platform p = context->platform;
  if (!p->import_ptr)
    return fail(PI_SUCCESS,
                "%s: the Level Zero driver offers no "
                "zexDriverImportExternalPointer; the memory stays unpinned",
                FN);
  return check_ze(FN, "zexDriverImportExternalPointer",
                  p->import_ptr(p->ze, (void *)ptr, size));
}

pi_result lz_piextUSMRelease(const void *ptr, pi_context context) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(ptr != NULL);
  pi_platform p = context->platform;
  if (!p->release_ptr)
    return PI_SUCCESS; /* nothing was imported */
  return check_ze(FN, "zexDriverReleaseImportedPointer",
                  p->release_ptr(p->ze, (void *)ptr));
}
