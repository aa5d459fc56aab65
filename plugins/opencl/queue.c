/*
 * queue.c: the PI queue functions of the OpenCL plugin (a pi_queue is a
 * cl_command_queue): creation from PI queue flags and property lists,
 * queries, finish and flush, reference counts and native handles.
 */
#include "ocl_internal.h"

/* ---- Queues ---------------------------------------------------------------
 */

/* One queue index (0). */
pi_result backend_queue_create(const char *fn, pi_context context,
                               pi_device device, pi_queue_properties flags,
                               pi_queue_properties index, pi_queue *queue) {
  cl_device_id dev = (cl_device_id)device;
  const struct platform_state *ps = NULL;
  cl_int err;
  TRY(queue_one_index(fn, index));
  if (!queue)
    return fail(PI_ERROR_INVALID_VALUE, "%s: queue is NULL", fn);
  *queue = NULL;
  TRY(queue_flags_check(fn, flags, NULL));
  pi_result r = device_state(fn, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  static const struct flag_pair map[] = {
      {PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE,
       CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE},
      {PI_QUEUE_FLAG_PROFILING_ENABLE, CL_QUEUE_PROFILING_ENABLE},
      {PI_QUEUE_FLAG_ON_DEVICE, CL_QUEUE_ON_DEVICE},
      {PI_QUEUE_FLAG_ON_DEVICE_DEFAULT, CL_QUEUE_ON_DEVICE_DEFAULT}};
  cl_command_queue_properties cl_flags =
      flags_map(flags, map, sizeof map / sizeof *map);
  /* Discarding events and the submission mode are hints OpenCL has no use
   * for; priorities map to cl_khr_priority_hints where the device has it. */
  if (ps->version < 20) {
    *queue = (pi_queue)ICD_CREATE(clCreateCommandQueue, &err,
                                  (cl_context)context, dev, cl_flags);
    return check_cl(fn, "clCreateCommandQueue", err);
  }
  cl_queue_properties props[5] = {CL_QUEUE_PROPERTIES, cl_flags, 0, 0, 0};
  if ((flags & (PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW |
                PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_HIGH)) &&
      device_has_ext(dev, "cl_khr_priority_hints")) {
    props[2] = CL_QUEUE_PRIORITY_KHR;
    props[3] = (flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW)
                   ? CL_QUEUE_PRIORITY_LOW_KHR
                   : CL_QUEUE_PRIORITY_HIGH_KHR;
  }
  *queue = (pi_queue)ICD_CREATE(clCreateCommandQueueWithProperties, &err,
                                (cl_context)context, dev, props);
  return check_cl(fn, "clCreateCommandQueueWithProperties", err);
}

pi_result backend_queue_info(pi_queue command_queue, const struct info_out *o) {
  cl_command_queue q = (cl_command_queue)command_queue;
  if (o->query == PI_QUEUE_INFO_SIZE) {
    /* OpenCL answers CL_QUEUE_SIZE for on-device queues only, and
     * CL_INVALID_COMMAND_QUEUE otherwise, which reads as a bad queue. */
    pi_result r = INFO_PASS(o, clGetCommandQueueInfo, q);
    if (r == PI_ERROR_INVALID_QUEUE)
      return fail(r, "%s: PI_QUEUE_INFO_SIZE: OpenCL gives a queue's size only for an "
                  "on-device queue, which PI never makes (clGetCommandQueueInfo: "
                  "CL_INVALID_COMMAND_QUEUE)", o->fn);
    return r;
  }
  if (o->query != PI_EXT_ONEAPI_QUEUE_INFO_EMPTY)
    return INFO_PASS(o, clGetCommandQueueInfo, q);
  /* OpenCL cannot ask a queue whether it is empty, but a marker completes
   * only after everything enqueued before it. On an idle queue a fresh
   * marker completes within microseconds, so it gets a millisecond; a queue
   * whose marker is still pending then is busy. */
  cl_event marker;
  cl_int status = CL_QUEUED;
  struct timespec start, now;
  pi_result r =
      CL_CALL_IN(o->fn, clEnqueueMarkerWithWaitList, q, 0, NULL, &marker);
  if (r != PI_SUCCESS)
    return r;
  ICD_CALL(clFlush, q);
  timespec_get(&start, TIME_UTC);
  do {
    r = CL_CALL_IN(o->fn, clGetEventInfo, marker,
                   CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                   NULL);
    timespec_get(&now, TIME_UTC);
  } while (r == PI_SUCCESS && status > CL_COMPLETE &&
           (now.tv_sec - start.tv_sec) * 1000000000L +
                   (now.tv_nsec - start.tv_nsec) <
               1000000L);
  ICD_CALL(clReleaseEvent, marker);
  /* A negative status: the marker ended with an error, nothing is pending. */
  return r != PI_SUCCESS ? r : put_bool(o, status <= CL_COMPLETE);
}

pi_result ocl_piQueueFinish(pi_queue command_queue) {
  return CL_CALL(clFinish, (cl_command_queue)command_queue);
}

pi_result ocl_piQueueFlush(pi_queue command_queue) {
  return CL_CALL(clFlush, (cl_command_queue)command_queue);
}

pi_result ocl_piQueueRetain(pi_queue command_queue) {
  return CL_CALL(clRetainCommandQueue, (cl_command_queue)command_queue);
}

pi_result ocl_piQueueRelease(pi_queue command_queue) {
  return CL_CALL(clReleaseCommandQueue, (cl_command_queue)command_queue);
}

pi_result ocl_piextQueueGetNativeHandle(pi_queue queue,
                                        pi_native_handle *nativeHandle,
                                        int32_t *nativeHandleDesc) {
  if (nativeHandleDesc)
    *nativeHandleDesc = 0; /* a plain cl_command_queue */
  return native_of(FN, queue, nativeHandle);
}

pi_result ocl_piextQueueCreateWithNativeHandle(
    pi_native_handle nativeHandle, int32_t nativeHandleDesc, pi_context context,
    pi_device device, bool pluginOwnsNativeHandle,
    pi_queue_properties *Properties, pi_queue *queue) {
  (void)nativeHandleDesc; /* a cl_command_queue knows its context, device */
  (void)context;          /* and properties */
  (void)device;
  (void)Properties;
  pi_result r = adopt_native(FN, NATIVE_QUEUE, nativeHandle,
                             pluginOwnsNativeHandle, queue);
  if (r == PI_SUCCESS)
    *queue = (pi_queue)nativeHandle;
  return r;
}
