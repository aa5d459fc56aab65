/*
 * global.c: device globals (copies to and from a program's global
 * variables) and host pipes (which Level Zero lacks) in the Level Zero
 * plugin.
 */
#include "lz_internal.h"

/* ---- Device globals and host pipes -------------------------------------------------- */

pi_result backend_global_copy(const char *fn, bool write, pi_queue q,
                              pi_program program, const char *name,
                              pi_bool blocking, size_t count, size_t offset,
                              void *host, pi_uint32 nwait,
                              const pi_event *wait, pi_event *event) {
  if (!q)
    return fail(PI_ERROR_INVALID_QUEUE, "%s: the queue is NULL", fn);
  if (!program)
    return fail(PI_ERROR_INVALID_PROGRAM, "%s: the program is NULL", fn);
  if (!name || !host)
    return fail(PI_ERROR_INVALID_VALUE, "%s: name and the host memory must "
                "not be NULL", fn);
  pthread_mutex_lock(&program->lock);
  struct prog_dev *d = NULL;
  pi_result r = built_dev(fn, program, q->device, &d);
  size_t size = 0;
  void *ptr = NULL;
  if (r == PI_SUCCESS) {
    ze_result_t zr = find_in_modules(d, name, &size, &ptr, false);
    if (zr != ZE_RESULT_SUCCESS)
      r = fail(pi_from_ze(zr),
               "%s: zeModuleGetGlobalPointer('%s') failed with %s (0x%x): the "
               "program has no such device global",
               fn, name, ze_result_name(zr), (unsigned)zr);
  }
  pthread_mutex_unlock(&program->lock);
  if (r != PI_SUCCESS)
    return r;
  if (offset > size || count > size - offset)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: bytes %zu..%zu are outside the %zu-byte device global "
                "'%s'",
                fn, offset, offset + count, size, name);
  struct copy_op op = {write ? (char *)ptr + offset : host,
                       write ? host : (char *)ptr + offset, count};
  return enqueue(fn, q,
                 write ? PI_COMMAND_TYPE_DEVICE_GLOBAL_VARIABLE_WRITE
                       : PI_COMMAND_TYPE_DEVICE_GLOBAL_VARIABLE_READ,
                 nwait, wait, event, blocking, false, append_copy, &op, NULL);
}

static pi_result no_host_pipes(const char *fn, const char *symbol) {
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: host pipe '%s': host pipes are an FPGA feature that Level "
              "Zero does not have",
              fn, symbol ? symbol : "?");
}

/* Level Zero has no host pipes: both calls fail alike. */
UNUSED_PARAMETERS_BEGIN

pi_result lz_piextEnqueueReadHostPipe(
    pi_queue queue, pi_program program, const char *pipe_symbol,
    pi_bool blocking, void *ptr, size_t size, pi_uint32 num_events_in_waitlist,
    const pi_event *events_waitlist, pi_event *event) {
  return no_host_pipes(FN, pipe_symbol);
}

pi_result lz_piextEnqueueWriteHostPipe(
    pi_queue queue, pi_program program, const char *pipe_symbol,
    pi_bool blocking, void *ptr, size_t size, pi_uint32 num_events_in_waitlist,
    const pi_event *events_waitlist, pi_event *event) {
  return no_host_pipes(FN, pipe_symbol);
}

UNUSED_PARAMETERS_END
