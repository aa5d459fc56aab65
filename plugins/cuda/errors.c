/*
 * errors.c: the CUDA plugin's errors: the names and texts of driver
 * results, their PI results and cu_check (behind CU and CUF), the failures
 * of what the plugin does not support (images, samplers), and the answer to
 * an info query the plugin does not know.
 */
#include "cu_internal.h"

/* The name of a driver result the plugin knows; NULL for another. */
static const char *cu_known_name(CUresult err) {
  RETURN_CODE_NAME(err, CU_KNOWN_ERRORS, NULL);
}

/* "CUDA_ERROR_INVALID_VALUE (1): invalid argument" for a driver result. */
const char *cu_error_text(CUresult err, char *buf, size_t n) {
  const char *name = NULL, *text = NULL;
  if (!drv.cuGetErrorName || drv.cuGetErrorName(err, &name) != CUDA_SUCCESS)
    name = cu_known_name(err);
  if (drv.cuGetErrorString && drv.cuGetErrorString(err, &text) != CUDA_SUCCESS)
    text = NULL;
  snprintf(buf, n, "%s (%d)%s%s", name ? name : "CUDA error", (int)err,
           text ? ": " : "", text ? text : "");
  return buf;
}

/* The PI result closest to a driver error. */
pi_result pi_from_cu(CUresult err) {
  switch (err) {
  case CUDA_SUCCESS:
    return PI_SUCCESS;
  case CUDA_ERROR_INVALID_VALUE:
  case CUDA_ERROR_INVALID_HANDLE:
  case CUDA_ERROR_ALREADY_MAPPED:
  case CUDA_ERROR_NOT_MAPPED:
    return PI_ERROR_INVALID_VALUE;
  case CUDA_ERROR_OUT_OF_MEMORY:
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
  case CUDA_ERROR_TOO_MANY_PEERS:
    return PI_ERROR_OUT_OF_RESOURCES;
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_DEINITIALIZED:
    return PI_ERROR_UNINITIALIZED;
  case CUDA_ERROR_NO_DEVICE:
    return PI_ERROR_DEVICE_NOT_FOUND;
  case CUDA_ERROR_INVALID_DEVICE:
  case CUDA_ERROR_PEER_ACCESS_UNSUPPORTED:
    return PI_ERROR_INVALID_DEVICE;
  case CUDA_ERROR_INVALID_CONTEXT:
  case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    return PI_ERROR_INVALID_CONTEXT;
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
    return PI_ERROR_INVALID_BINARY;
  case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
  case CUDA_ERROR_JIT_COMPILATION_DISABLED:
    return PI_ERROR_COMPILER_NOT_AVAILABLE;
  case CUDA_ERROR_NOT_FOUND:
    return PI_ERROR_INVALID_KERNEL_NAME;
  case CUDA_ERROR_NOT_SUPPORTED:
  case CUDA_ERROR_NOT_PERMITTED:
  case CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED:
  case CUDA_ERROR_PEER_ACCESS_NOT_ENABLED:
  case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
  case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
    return PI_ERROR_INVALID_OPERATION;
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_ASSERT:
    return PI_ERROR_COMMAND_EXECUTION_FAILURE;
  default:
    return PI_ERROR_UNKNOWN;
  }
}

/* PI_SUCCESS for CUDA_SUCCESS; otherwise the mapped PI error, with a message
 * naming the PI function and the driver call that failed. */
pi_result cu_check(const char *fn, const char *cufn, CUresult err) {
  char text[256];
  if (err == CUDA_SUCCESS)
    return PI_SUCCESS;
  return fail(pi_from_cu(err), "%s: %s failed with %s", fn, cufn,
              cu_error_text(err, text, sizeof text));
}
static const char SAMPLERS_UNSUPPORTED[] =
    "samplers are not supported by the pitrace CUDA plugin (they only serve "
    "images, which it does not support)";

pi_result no_images(const char *fn) {
  return fail(PI_ERROR_INVALID_OPERATION, "%s: %s", fn, IMAGES_UNSUPPORTED);
}

pi_result no_samplers(const char *fn) {
  return fail(PI_ERROR_INVALID_OPERATION, "%s: %s", fn, SAMPLERS_UNSUPPORTED);
}

/* ---- Info queries -----------------------------------------------------------
 * An info_out names where a *GetInfo call puts its answer; put_*()
 * (plugins/common) write a value with the size checks OpenCL makes. */

pi_result unknown_query(const struct info_out *o) {
  return put_unknown(o, "CUDA");
}
