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

/* clEnqueueWriteGlobalVariableINTEL or clEnqueueReadGlobalVariableINTEL. */
pi_result backend_global_copy(const char *fn, bool write, pi_queue queue,
                              pi_program program, const char *name,
                              pi_bool blocking, size_t count, size_t offset,
                              void *host, pi_uint32 nwait,
                              const pi_event *wait, pi_event *event) {
  const char *entry = write ? "clEnqueueWriteGlobalVariableINTEL"
                            : "clEnqueueReadGlobalVariableINTEL";
  const struct platform_state *ps = NULL;
  cl_device_id dev;
  pi_result r = queue_state(fn, queue, &dev, &ps);
  if (r == PI_SUCCESS)
    r = need_feature(fn, dev, NULL, entry,
                     write ? ps->ext.clEnqueueWriteGlobalVariableINTEL != NULL
                           : ps->ext.clEnqueueReadGlobalVariableINTEL != NULL,
                     GLOBALS_HINT);
  if (r != PI_SUCCESS)
    return r;
  cl_command_queue q = (cl_command_queue)queue;
  cl_program p = (cl_program)program;
  cl_int err =
      write ? ps->ext.clEnqueueWriteGlobalVariableINTEL(
                  q, p, name, blocking, count, offset, host,
                  WAIT_ARGS(nwait, wait, event))
            : ps->ext.clEnqueueReadGlobalVariableINTEL(
                  q, p, name, blocking, count, offset, host,
                  WAIT_ARGS(nwait, wait, event));
  return check_cl(fn, entry, err);
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
