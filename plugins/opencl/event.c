/*
 * event.c: the PI event functions of the OpenCL plugin (a pi_event is a
 * cl_event): user events, queries and profiling, waits, callbacks, status,
 * reference counts and native handles.
 */
#include "ocl_internal.h"

/* ---- Events ---------------------------------------------------------------
 */

/* A user event already complete, as PI asks (DPC++ PI 11.15). */
pi_result ocl_piEventCreate(pi_context context, pi_event *ret_event) {
  cl_int err;
  REQUIRE(ret_event != NULL);
  cl_event ev = ICD_CREATE(clCreateUserEvent, &err, (cl_context)context);
  *ret_event = (pi_event)ev;
  pi_result r = CL_CHECK(clCreateUserEvent, err);
  if (r == PI_SUCCESS &&
      (r = CL_CALL(clSetUserEventStatus, ev, CL_COMPLETE)) != PI_SUCCESS) {
    ICD_CALL(clReleaseEvent, ev);
    *ret_event = NULL;
  }
  return r;
}

pi_result backend_event_info(pi_event event, const struct info_out *o) {
  return INFO_PASS(o, clGetEventInfo, (cl_event)event);
}

pi_result backend_profiling_info(pi_event event, const struct info_out *o) {
  return INFO_PASS(o, clGetEventProfilingInfo, (cl_event)event);
}

/* Waiting for no events is done at once (OpenCL calls it invalid). */
pi_result ocl_piEventsWait(pi_uint32 num_events,
                           const pi_event *event_list) {
  if (num_events == 0)
    return PI_SUCCESS;
  return check_cl(
      FN, "clWaitForEvents",
      icd_wait_for_events(num_events, (const cl_event *)event_list));
}

static void CL_CALLBACK event_reached(cl_event ev, cl_int status, void *data) {
  struct callback *cb = data;
  cb->fn.event((pi_event)ev, status, cb->user_data);
  free(cb);
}

pi_result ocl_piEventSetCallback(
    pi_event event, pi_int32 command_exec_callback_type,
    void (*pfn_notify)(pi_event event, pi_int32 event_command_status,
                       void *user_data),
    void *user_data) {
  REQUIRE(pfn_notify != NULL);
  struct callback *cb = malloc(sizeof *cb);
  if (!cb)
    return fail(PI_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", FN);
  cb->fn.event = pfn_notify;
  cb->user_data = user_data;
  pi_result r = CL_CALL(clSetEventCallback, (cl_event)event,
                        command_exec_callback_type, event_reached, cb);
  if (r != PI_SUCCESS)
    free(cb);
  return r;
}

/* Setting PI_EVENT_COMPLETE on a user event that is already complete (as
 * piEventCreate makes them) succeeds; OpenCL would refuse it. */
pi_result ocl_piEventSetStatus(pi_event event,
                               pi_int32 execution_status) {
  cl_event ev = (cl_event)event;
  cl_int status = CL_QUEUED;
  cl_command_type type = 0;
  if (execution_status == CL_COMPLETE &&
      ICD_CALL(clGetEventInfo, ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
               sizeof status, &status, NULL) == CL_SUCCESS &&
      ICD_CALL(clGetEventInfo, ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type,
               NULL) == CL_SUCCESS &&
      status == CL_COMPLETE && type == CL_COMMAND_USER)
    return PI_SUCCESS;
  return CL_CALL(clSetUserEventStatus, ev, execution_status);
}

pi_result ocl_piEventRetain(pi_event event) {
  return CL_CALL(clRetainEvent, (cl_event)event);
}

pi_result ocl_piEventRelease(pi_event event) {
  return CL_CALL(clReleaseEvent, (cl_event)event);
}

pi_result ocl_piextEventGetNativeHandle(pi_event event,
                                        pi_native_handle *nativeHandle) {
  return native_of(FN, event, nativeHandle);
}

pi_result
ocl_piextEventCreateWithNativeHandle(pi_native_handle nativeHandle,
                                     pi_context context, bool ownNativeHandle,
                                     pi_event *event) {
  (void)context;
  pi_result r =
      adopt_native(FN, NATIVE_EVENT, nativeHandle, ownNativeHandle, event);
  if (r == PI_SUCCESS)
    *event = (pi_event)nativeHandle;
  return r;
}
