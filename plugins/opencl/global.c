/*
 * global.c: device globals (cl_intel_global_variable_access) and host pipes
 * (cl_intel_program_scope_host_pipe) in the OpenCL plugin.
 */
#include "ocl_internal.h"

/* ---- Device globals and host pipes ----------------------------------------
 */

static const char GLOBALS_HINT[] =
    "device globals need cl_intel_global_variable_access; keep the value in "
    "a buffer passed to the kernels instead";
static const char PIPES_HINT[] =
    "host pipes need cl_intel_program_scope_host_pipe";

pi_result ocl_piextEnqueueDeviceGlobalVariableWrite(
    pi_queue queue, pi_program program, const char *name,
    pi_bool blocking_write, size_t count, size_t offset, const void *src,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  const struct platform_state *ps = NULL;
  QUEUE_FEATURE(queue, ps, clEnqueueWriteGlobalVariableINTEL, GLOBALS_HINT);
  return EXT_CALL(ps, clEnqueueWriteGlobalVariableINTEL,
                  (cl_command_queue)queue, (cl_program)program, name,
                  blocking_write, count, offset, src,
                  WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

pi_result ocl_piextEnqueueDeviceGlobalVariableRead(
    pi_queue queue, pi_program program, const char *name, pi_bool blocking_read,
    size_t count, size_t offset, void *dst, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  const struct platform_state *ps = NULL;
  QUEUE_FEATURE(queue, ps, clEnqueueReadGlobalVariableINTEL, GLOBALS_HINT);
  return EXT_CALL(ps, clEnqueueReadGlobalVariableINTEL, (cl_command_queue)queue,
                  (cl_program)program, name, blocking_read, count, offset, dst,
                  WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

pi_result ocl_piextEnqueueReadHostPipe(
    pi_queue queue, pi_program program, const char *pipe_symbol,
    pi_bool blocking, void *ptr, size_t size, pi_uint32 num_events_in_waitlist,
    const pi_event *events_waitlist, pi_event *event) {
  const struct platform_state *ps = NULL;
  QUEUE_FEATURE(queue, ps, clEnqueueReadHostPipeINTEL, PIPES_HINT);
  return EXT_CALL(ps, clEnqueueReadHostPipeINTEL, (cl_command_queue)queue,
                  (cl_program)program, pipe_symbol, blocking, ptr, size,
                  WAIT_ARGS(num_events_in_waitlist, events_waitlist, event));
}

pi_result ocl_piextEnqueueWriteHostPipe(
    pi_queue queue, pi_program program, const char *pipe_symbol,
    pi_bool blocking, void *ptr, size_t size, pi_uint32 num_events_in_waitlist,
    const pi_event *events_waitlist, pi_event *event) {
  const struct platform_state *ps = NULL;
  QUEUE_FEATURE(queue, ps, clEnqueueWriteHostPipeINTEL, PIPES_HINT);
  return EXT_CALL(ps, clEnqueueWriteHostPipeINTEL, (cl_command_queue)queue,
                  (cl_program)program, pipe_symbol, blocking, ptr, size,
                  WAIT_ARGS(num_events_in_waitlist, events_waitlist, event));
}
