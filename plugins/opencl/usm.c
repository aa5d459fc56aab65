/*
 * usm.c: unified shared memory in the OpenCL plugin, through
 * cl_intel_unified_shared_memory where the platform has it: allocations,
 * frees, fills, copies, prefetch and advice, 2D operations, allocation
 * queries, import and release. Without the extension each fails with a
 * message.
 */
#include "ocl_internal.h"

/* The OpenCL USM allocation properties for a PI list (checked by the
 * shared entry point: known properties and bits, each named once).
 * PI_MEM_ALLOC_FLAGS bits pass (the read-only hint has no OpenCL bit and
 * is dropped); a buffer location passes where the device has
 * cl_intel_mem_alloc_buffer_location and is dropped elsewhere, where it
 * means nothing. */
static void usm_properties(cl_device_id dev, const pi_usm_mem_properties *in,
                           cl_mem_properties_intel out[5]) {
  const pi_usm_mem_properties flag_bits =
      PI_MEM_ALLOC_WRTITE_COMBINED | PI_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE |
      PI_MEM_ALLOC_INITIAL_PLACEMENT_HOST;
  size_t n = 0;
  for (size_t i = 0; in && in[i]; i += 2) {
    if (in[i] == PI_MEM_ALLOC_FLAGS) {
      out[n++] = CL_MEM_ALLOC_FLAGS_INTEL;
      out[n++] = in[i + 1] & flag_bits;
    } else if (in[i] == PI_MEM_USM_ALLOC_BUFFER_LOCATION &&
               device_has_ext(dev, "cl_intel_mem_alloc_buffer_location")) {
      out[n++] = CL_MEM_ALLOC_BUFFER_LOCATION_INTEL;
      out[n++] = in[i + 1];
    }
  }
  out[n] = 0;
}

/* clHostMemAllocINTEL, clDeviceMemAllocINTEL or clSharedMemAllocINTEL. */
pi_result backend_usm_alloc(const char *fn, const struct usm_alloc *a,
                            void **result_ptr) {
  static const char *const entries[] = {
      "clHostMemAllocINTEL", "clDeviceMemAllocINTEL", "clSharedMemAllocINTEL"};
  cl_context ctx = (cl_context)a->context;
  cl_device_id dev = (cl_device_id)a->device;
  const struct platform_state *ps = NULL;
  cl_mem_properties_intel props[5];
  cl_int err = CL_SUCCESS;
  pi_result r =
      a->kind == USM_HOST ? context_device(fn, ctx, USM_EXT, &dev) : PI_SUCCESS;
  if (r == PI_SUCCESS)
    r = device_state(fn, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  int present = a->kind == USM_HOST     ? ps->ext.clHostMemAllocINTEL != NULL
                : a->kind == USM_DEVICE ? ps->ext.clDeviceMemAllocINTEL != NULL
                                     : ps->ext.clSharedMemAllocINTEL != NULL;
  r = need_feature(fn, dev, USM_EXT, entries[a->kind], present, USM_HINT);
  if (r != PI_SUCCESS)
    return r;
  usm_properties(dev, a->properties, props);
  if (a->kind == USM_HOST)
    *result_ptr =
        ps->ext.clHostMemAllocINTEL(ctx, props, a->size, a->alignment, &err);
  else if (a->kind == USM_DEVICE)
    *result_ptr = ps->ext.clDeviceMemAllocINTEL(ctx, dev, props, a->size,
                                                a->alignment, &err);
  else
    *result_ptr = ps->ext.clSharedMemAllocINTEL(ctx, dev, props, a->size,
                                                a->alignment, &err);
  return check_cl(fn, entries[a->kind], err);
}

/* The USM-capable device of a context, with its platform state. */
static pi_result context_usm(const char *fn, pi_context context,
                             cl_device_id *dev,
                             const struct platform_state **ps) {
  pi_result r = context_device(fn, (cl_context)context, USM_EXT, dev);
  if (r == PI_SUCCESS)
    r = device_state(fn, *dev, ps);
  return r;
}

/* A blocking free, so that no kernel still running can touch the memory. */
pi_result ocl_piextUSMFree(pi_context context, void *ptr) {
  cl_device_id dev = NULL;
  const struct platform_state *ps = NULL;
  pi_result r = context_usm(FN, context, &dev, &ps);
  if (r == PI_SUCCESS)
    r = need_feature(FN, dev, USM_EXT, "clMemBlockingFreeINTEL",
                     ps->ext.clMemBlockingFreeINTEL || ps->ext.clMemFreeINTEL,
                     USM_HINT);
  if (r != PI_SUCCESS)
    return r;
  if (ps->ext.clMemBlockingFreeINTEL)
    return EXT_CALL(ps, clMemBlockingFreeINTEL, (cl_context)context, ptr);
  return EXT_CALL(ps, clMemFreeINTEL, (cl_context)context, ptr);
}

/* The device of a queue, with its platform state. */
pi_result queue_state(const char *fn, pi_queue queue, cl_device_id *dev,
                      const struct platform_state **ps) {
  pi_result r = queue_device(fn, (cl_command_queue)queue, dev);
  if (r == PI_SUCCESS)
    r = device_state(fn, *dev, ps);
  return r;
}

pi_result backend_usm_fill(const struct command *c, void *ptr,
                           const void *pattern, size_t patternSize,
                           size_t count) {
  const struct platform_state *ps = NULL;
  QUEUE_USM_IN(c->fn, c->queue, ps, clEnqueueMemFillINTEL);
  return EXT_CALL_IN(c->fn, ps, clEnqueueMemFillINTEL,
                     (cl_command_queue)c->queue, ptr, pattern, patternSize,
                     count, WAIT_ARGS(c->nwait, c->wait, c->event));
}

pi_result backend_usm_memcpy(const struct command *c, pi_bool blocking,
                             void *dst_ptr, const void *src_ptr, size_t size) {
  const struct platform_state *ps = NULL;
  QUEUE_USM_IN(c->fn, c->queue, ps, clEnqueueMemcpyINTEL);
  return EXT_CALL_IN(c->fn, ps, clEnqueueMemcpyINTEL,
                     (cl_command_queue)c->queue, blocking, dst_ptr, src_ptr,
                     size, WAIT_ARGS(c->nwait, c->wait, c->event));
}

/* A hint: clEnqueueMigrateMemINTEL where the platform has it, else a marker
 * standing for the (empty) migration. */
pi_result backend_usm_prefetch(const struct command *c, const void *ptr,
                               size_t size) {
  const struct platform_state *ps = NULL;
  QUEUE_USM_IN(c->fn, c->queue, ps,
               clEnqueueMemcpyINTEL); /* any USM entry: has USM */
  if (!ps->ext.clEnqueueMigrateMemINTEL)
    return CL_CALL_IN(c->fn, clEnqueueMarkerWithWaitList,
                      (cl_command_queue)c->queue,
                      WAIT_ARGS(c->nwait, c->wait, c->event));
  return EXT_CALL_IN(c->fn, ps, clEnqueueMigrateMemINTEL,
                     (cl_command_queue)c->queue, ptr, size,
                     0 /* to the queue's device */,
                     WAIT_ARGS(c->nwait, c->wait, c->event));
}

/* PI's advice values are CUDA's and HIP's; cl_intel_unified_shared_memory
 * defines none, so the advice is a no-op that a marker stands for. */
pi_result ocl_piextUSMEnqueueMemAdvise(pi_queue queue, const void *ptr,
                                       size_t length,
                                       pi_mem_advice advice,
                                       pi_event *event) {
  const struct platform_state *ps = NULL;
  (void)ptr;
  (void)length;
  QUEUE_USM(queue, ps, clEnqueueMemcpyINTEL); /* any USM entry: has USM */
  pi_result r = CL_CALL(clEnqueueMarkerWithWaitList, (cl_command_queue)queue,
                        WAIT_ARGS(0, NULL, event));
  if (r == PI_SUCCESS && advice != PI_MEM_ADVICE_RESET)
    fail(PI_SUCCESS, "%s: advice 0x%x has no OpenCL equivalent and was ignored",
         FN, (unsigned)advice);
  return r;
}

pi_result ocl_piextUSMGetMemAllocInfo(
    pi_context context, const void *ptr, pi_mem_alloc_info param_name,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret) {
  struct info_out o = INFO_OUT(param_name);
  cl_device_id dev = NULL;
  const struct platform_state *ps = NULL;
  pi_result r = context_usm(FN, context, &dev, &ps);
  if (r == PI_SUCCESS)
    r = need_feature(FN, dev, USM_EXT, "clGetMemAllocInfoINTEL",
                     ps->ext.clGetMemAllocInfoINTEL != NULL, USM_HINT);
  if (r != PI_SUCCESS)
    return r;
  return info_check(&o, "clGetMemAllocInfoINTEL",
                    ps->ext.clGetMemAllocInfoINTEL(
                        (cl_context)context, ptr, param_name, param_value_size,
                        param_value, INFO_SIZE_RET(&o)));
}

static cl_int enqueue_row(cl_command_queue q, const struct rows *op, size_t row,
                          cl_uint nwait, const cl_event *wait, cl_event *ev) {
  char *dst = op->dst + row * op->dst_pitch;
  if (op->src)
    return op->ps->ext.clEnqueueMemcpyINTEL(q, CL_FALSE, dst,
                                            op->src + row * op->src_pitch,
                                            op->width, nwait, wait, ev);
  return op->ps->ext.clEnqueueMemFillINTEL(
      q, dst, op->pattern, op->pattern_size, op->width, nwait, wait, ev);
}

static pi_result enqueue_rows(const char *fn, pi_queue queue,
                              const struct rows *op, size_t height,
                              pi_bool blocking, pi_uint32 nwait,
                              const pi_event *wait, pi_event *event) {
  cl_command_queue q = (cl_command_queue)queue;
  if (op->dst_pitch < op->width || (op->src && op->src_pitch < op->width))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a pitch is smaller than the width (%zu bytes)", fn,
                op->width);
  cl_event *rows = calloc(height ? height : 1, sizeof *rows);
  if (!rows)
    return fail(PI_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
  cl_int err = CL_SUCCESS;
  size_t done = 0;
  for (; done < height && err == CL_SUCCESS; ++done)
    err = enqueue_row(q, op, done, nwait, (const cl_event *)wait, &rows[done]);
  if (err != CL_SUCCESS)
    --done; /* the failed row made no event */
  cl_event marker = NULL;
  if (err == CL_SUCCESS)
    err = height ? ICD_CALL(clEnqueueMarkerWithWaitList, q, (cl_uint)height,
                            rows, &marker)
                 : ICD_CALL(clEnqueueMarkerWithWaitList, q, nwait,
                            (const cl_event *)wait, &marker);
  for (size_t i = 0; i < done; ++i)
    ICD_CALL(clReleaseEvent, rows[i]);
  free(rows);
  if (err == CL_SUCCESS && blocking)
    err = icd_wait_for_events(1, &marker);
  if (marker && event && err == CL_SUCCESS)
    *event = (pi_event)marker;
  else if (marker)
    ICD_CALL(clReleaseEvent, marker);
  return check_cl(
      fn, op->src ? "clEnqueueMemcpyINTEL" : "clEnqueueMemFillINTEL", err);
}

pi_result backend_usm_fill2d(const struct command *c, void *ptr, size_t pitch,
                             size_t pattern_size, const void *pattern,
                             size_t width, size_t height) {
  struct rows op = {NULL, ptr, NULL, pitch, 0, width, pattern, pattern_size};
  QUEUE_USM_IN(c->fn, c->queue, op.ps, clEnqueueMemFillINTEL);
  return enqueue_rows(c->fn, c->queue, &op, height, PI_FALSE, c->nwait,
                      c->wait, c->event);
}

pi_result backend_usm_memset2d(const struct command *c, void *ptr, size_t pitch,
                               int value, size_t width, size_t height) {
  unsigned char byte = (unsigned char)value;
  struct rows op = {NULL, ptr, NULL, pitch, 0, width, &byte, 1};
  QUEUE_USM_IN(c->fn, c->queue, op.ps, clEnqueueMemFillINTEL);
  return enqueue_rows(c->fn, c->queue, &op, height, PI_FALSE, c->nwait,
                      c->wait, c->event);
}

pi_result backend_usm_memcpy2d(const struct command *c, pi_bool blocking,
                               void *dst_ptr, size_t dst_pitch,
                               const void *src_ptr, size_t src_pitch,
                               size_t width, size_t height) {
  struct rows op = {NULL,      dst_ptr, src_ptr, dst_pitch,
                    src_pitch, width,   NULL,    0};
  REQUIRE_IN(c->fn, src_ptr != NULL);
  QUEUE_USM_IN(c->fn, c->queue, op.ps, clEnqueueMemcpyINTEL);
  return enqueue_rows(c->fn, c->queue, &op, height, blocking, c->nwait,
                      c->wait, c->event);
}

/* Importing host memory only speeds up copies (pinning); OpenCL has no such
 * call, and copies from unimported memory still work. */
pi_result ocl_piextUSMImport(const void *ptr, size_t size,
                             pi_context context) {
  (void)ptr;
  (void)size;
  (void)context;
  return PI_SUCCESS;
}

pi_result ocl_piextUSMRelease(const void *ptr, pi_context context) {
  (void)ptr;
  (void)context;
  return PI_SUCCESS;
}
