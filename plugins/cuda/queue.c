/*
 * queue.c: the PI queue functions of the CUDA plugin: a queue is a CUDA
 * stream (in order, profiling through CUevents); creation from PI flags and
 * property lists, queries, finish and flush, reference counts and native
 * handles.
 */
#include "cu_internal.h"

/* ---- Queues ---------------------------------------------------------------
 */

DEFINE_FACTS(queue, q, .refs = atomic_load(&q->refs), .context = q->ctx,
             .device = q->dev, .flags = q->props)

static pi_result queue_new(const char *fn, pi_context ctx, pi_device dev,
                           CUstream stream, pi_queue_properties props,
                           bool owns, pi_queue *out) {
  pi_queue q = calloc(1, sizeof *q);
  if (!q)
    return out_of_memory(fn);
  atomic_init(&q->refs, 1);
  q->ctx = ctx;
  q->dev = dev;
  q->stream = stream;
  q->props = props;
  q->owns = owns;
  if (props & PI_QUEUE_FLAG_PROFILING_ENABLE) {
    pi_result r = CUF(fn, cuEventCreate, &q->base, CU_EVENT_DEFAULT);
    if (r == PI_SUCCESS)
      r = CUF(fn, cuEventRecord, q->base, stream);
    if (r == PI_SUCCESS)
      r = CUF(fn, cuEventSynchronize, q->base);
    q->base_ns = now_ns();
    if (r != PI_SUCCESS) {
      if (q->base)
        drv.cuEventDestroy(q->base);
      free(q);
      return r;
    }
  }
  cu_piContextRetain(ctx);
  *out = q;
  return PI_SUCCESS;
}

/* A stream of the context's device. Commands run in submission order (an
 * out-of-order queue is a valid in-order one); the priority flags map to
 * the device's stream priorities. */
pi_result backend_queue_create(const char *fn, pi_context context,
                               pi_device device, pi_queue_properties flags,
                               pi_queue_properties index, pi_queue *queue) {
  TRY(queue_one_index(fn, index));
  if (!queue || !context)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: context and queue must not be NULL", fn);
  *queue = NULL;
  if (device && device != context->dev)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: the device is not the context's device", fn);
  TRY(queue_flags_check(fn, flags, "CUDA"));
  TRY(use_context(fn, context->cu));
  CUstream s = NULL;
  if (flags & (PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW |
               PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_HIGH)) {
    int least = 0, greatest = 0; /* numerically: greatest is the smallest */
    TRY(CUF(fn, cuCtxGetStreamPriorityRange, &least, &greatest));
    TRY(CUF(fn, cuStreamCreateWithPriority, &s, CU_STREAM_NON_BLOCKING,
            (flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW) ? least
                                                            : greatest));
  } else {
    TRY(CUF(fn, cuStreamCreate, &s, CU_STREAM_NON_BLOCKING));
  }
  pi_result r = queue_new(fn, context, context->dev, s, flags, true, queue);
  if (r != PI_SUCCESS)
    drv.cuStreamDestroy(s);
  return r;
}

pi_result backend_queue_info(pi_queue command_queue, const struct info_out *o) {
  pi_queue q = command_queue;
  switch (o->query) {
  case PI_QUEUE_INFO_DEVICE_DEFAULT:
    return put_ptr(o, NULL); /* no on-device queues */
  case PI_QUEUE_INFO_SIZE:
    return fail(PI_ERROR_INVALID_QUEUE,
                "%s: PI_QUEUE_INFO_SIZE is for on-device queues, which CUDA "
                "does not have",
                o->fn);
  case PI_EXT_ONEAPI_QUEUE_INFO_EMPTY: {
    TRY(use_context(o->fn, q->ctx->cu));
    CUresult err = drv.cuStreamQuery(q->stream);
    if (err != CUDA_SUCCESS && err != CUDA_ERROR_NOT_READY)
      return cu_check(o->fn, "cuStreamQuery", err);
    return put_bool(o, err == CUDA_SUCCESS);
  }
  default:
    return unknown_query(o);
  }
}

pi_result cu_piQueueFinish(pi_queue command_queue) {
  REQUIRE(command_queue != NULL);
  TRY(use_context(FN, command_queue->ctx->cu));
  return CU(cuStreamSynchronize, command_queue->stream);
}

/* The driver submits every command when it is enqueued. */
pi_result cu_piQueueFlush(pi_queue command_queue) {
  REQUIRE(command_queue != NULL);
  return PI_SUCCESS;
}

pi_result cu_piQueueRetain(pi_queue command_queue) {
  REQUIRE(command_queue != NULL);
  ref_retain(&command_queue->refs);
  return PI_SUCCESS;
}

/* The stream goes once its commands are done (cuStreamDestroy does not
 * wait, and the driver finishes the work). */
pi_result cu_piQueueRelease(pi_queue command_queue) {
  pi_queue q = command_queue;
  REQUIRE(q != NULL);
  if (!ref_release(&q->refs))
    return PI_SUCCESS;
  bool gone = driver_gone();
  pi_result r = gone ? PI_SUCCESS : use_context(FN, q->ctx->cu);
  if (q->base && !gone)
    drv.cuEventDestroy(q->base);
  if (r == PI_SUCCESS && q->owns && !gone)
    r = CU(cuStreamDestroy, q->stream);
  pi_context ctx = q->ctx;
  free(q);
  pi_result r2 = cu_piContextRelease(ctx);
  return r != PI_SUCCESS ? r : r2;
}

pi_result cu_piextQueueGetNativeHandle(pi_queue queue,
                                       pi_native_handle *nativeHandle,
                                       int32_t *nativeHandleDesc) {
  REQUIRE(queue != NULL && nativeHandle != NULL);
  if (nativeHandleDesc)
    *nativeHandleDesc = 0; /* a CUstream */
  *nativeHandle = (pi_native_handle)(uintptr_t)queue->stream;
  return PI_SUCCESS;
}

/* Wraps a CUstream of the context; with pluginOwnsNativeHandle the last
 * release destroys it. Properties: {PI_QUEUE_FLAGS, flags, 0} or NULL. */
pi_result cu_piextQueueCreateWithNativeHandle(
    pi_native_handle nativeHandle, int32_t nativeHandleDesc, pi_context context,
    pi_device device, bool pluginOwnsNativeHandle,
    pi_queue_properties *Properties, pi_queue *queue) {
  (void)nativeHandleDesc;
  REQUIRE(context != NULL && queue != NULL);
  pi_queue_properties flags = 0;
  for (size_t i = 0; Properties && Properties[i]; i += 2)
    if (Properties[i] == PI_QUEUE_FLAGS)
      flags = Properties[i + 1];
  if (device && device != context->dev)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: the device is not the context's device", FN);
  TRY(use_context(FN, context->cu));
  return queue_new(FN, context, context->dev, (CUstream)(uintptr_t)nativeHandle,
                   flags, pluginOwnsNativeHandle, queue);
}
