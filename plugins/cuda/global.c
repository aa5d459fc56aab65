/*
 * global.c: device globals (copies to and from a module's globals) and host
 * pipes (which CUDA lacks) in the CUDA plugin.
 */
#include "cu_internal.h"

/* ---- Device globals and host pipes ----------------------------------------
 */

/* The global's device pointer, checked against the range to access. */
static pi_result global_range(const char *fn, pi_queue q, pi_program prog,
                              const char *name, size_t count, size_t offset,
                              CUdeviceptr *ptr) {
  CUmodule m = NULL;
  size_t size = 0;
  if (!q || !prog || !name)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the queue, program and name must not be NULL", fn);
  TRY(program_module(fn, prog, &m));
  TRY(use_context(fn, q->ctx->cu));
  CUresult err = drv.cuModuleGetGlobal(ptr, &size, m, name);
  if (err == CUDA_ERROR_NOT_FOUND)
    return fail(PI_ERROR_INVALID_VALUE, "%s: the program has no global '%s'",
                fn, name);
  TRY(cu_check(fn, "cuModuleGetGlobal", err));
  if (offset > size || count > size - offset)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: bytes %zu..%zu are outside the %zu-byte global '%s'", fn,
                offset, offset + count, size, name);
  *ptr += offset;
  return PI_SUCCESS;
}

/* A copy between host memory and a global, to the global where `write`. */
pi_result backend_global_copy(const char *fn, bool write, pi_queue queue,
                              pi_program program, const char *name,
                              pi_bool blocking, size_t count, size_t offset,
                              void *host, pi_uint32 nwait,
                              const pi_event *wait, pi_event *event) {
  CUdeviceptr ptr = 0;
  if (!host && count != 0)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: invalid argument: the host memory is NULL", fn);
  TRY(global_range(fn, queue, program, name, count, offset, &ptr));
  pi_event ev = NULL;
  pi_result r =
      cmd_start(fn, queue, nwait, wait, event,
                write ? PI_COMMAND_TYPE_DEVICE_GLOBAL_VARIABLE_WRITE
                      : PI_COMMAND_TYPE_DEVICE_GLOBAL_VARIABLE_READ,
                &ev);
  if (r != PI_SUCCESS)
    return r;
  if (count && write)
    r = CUF(fn, cuMemcpyHtoDAsync, ptr, host, count, queue->stream);
  else if (count)
    r = CUF(fn, cuMemcpyDtoHAsync, host, ptr, count, queue->stream);
  return cmd_finish(fn, queue, r, ev, event, blocking);
}

static pi_result no_host_pipes(const char *fn) {
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: host pipes are an Intel FPGA feature; CUDA has none (use "
              "USM or a buffer to pass data)",
              fn);
}

/* CUDA has no host pipes: both calls fail alike. */
UNUSED_PARAMETERS_BEGIN

pi_result cu_piextEnqueueReadHostPipe(
    pi_queue queue, pi_program program, const char *pipe_symbol,
    pi_bool blocking, void *ptr, size_t size, pi_uint32 num_events_in_waitlist,
    const pi_event *events_waitlist, pi_event *event) {
  return no_host_pipes(FN);
}

pi_result cu_piextEnqueueWriteHostPipe(
    pi_queue queue, pi_program program, const char *pipe_symbol,
    pi_bool blocking, void *ptr, size_t size, pi_uint32 num_events_in_waitlist,
    const pi_event *events_waitlist, pi_event *event) {
  return no_host_pipes(FN);
}

UNUSED_PARAMETERS_END
