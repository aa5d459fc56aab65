/*
 * errors.c: the Level Zero plugin's errors: the names of Level Zero
 * results, their PI results and check_ze (behind ZE_CALL), and the answer to
 * an info query the plugin does not know.
 */
#include "lz_internal.h"

const char *ze_result_name(ze_result_t r) {
  RETURN_CODE_NAME(r, ZE_RESULTS,
                   "a Level Zero result this plugin does not know");
}

/* The PI result for a Level Zero error. */
pi_result pi_from_ze(ze_result_t r) {
  switch (r) {
  case ZE_RESULT_SUCCESS:
    return PI_SUCCESS;
  case ZE_RESULT_ERROR_DEVICE_LOST:
  case ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET:
  case ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE:
  case ZE_RESULT_ERROR_NOT_AVAILABLE:
    return PI_ERROR_DEVICE_NOT_AVAILABLE;
  case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
    return PI_ERROR_OUT_OF_HOST_MEMORY;
  case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
    return PI_ERROR_OUT_OF_RESOURCES;
  case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE:
    return PI_ERROR_BUILD_PROGRAM_FAILURE;
  case ZE_RESULT_ERROR_MODULE_LINK_FAILURE:
    return PI_ERROR_LINK_PROGRAM_FAILURE;
  case ZE_RESULT_ERROR_UNINITIALIZED:
    return PI_ERROR_UNINITIALIZED;
  case ZE_RESULT_ERROR_UNSUPPORTED_VERSION:
  case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
  case ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS:
  case ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE:
  case ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE:
    return PI_ERROR_INVALID_OPERATION;
  case ZE_RESULT_ERROR_INVALID_ARGUMENT:
  case ZE_RESULT_ERROR_INVALID_NULL_HANDLE:
  case ZE_RESULT_ERROR_INVALID_NULL_POINTER:
  case ZE_RESULT_ERROR_INVALID_SIZE:
  case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT:
  case ZE_RESULT_ERROR_INVALID_ENUMERATION:
  case ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION:
  case ZE_RESULT_ERROR_INVALID_GLOBAL_NAME:
  case ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE:
    return PI_ERROR_INVALID_VALUE;
  case ZE_RESULT_ERROR_UNSUPPORTED_SIZE:
    return PI_ERROR_INVALID_BUFFER_SIZE;
  case ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT:
    return PI_ERROR_INVALID_EVENT;
  case ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT:
    return PI_ERROR_IMAGE_FORMAT_NOT_SUPPORTED;
  case ZE_RESULT_ERROR_INVALID_NATIVE_BINARY:
    return PI_ERROR_INVALID_BINARY;
  case ZE_RESULT_ERROR_INVALID_KERNEL_NAME:
  case ZE_RESULT_ERROR_INVALID_FUNCTION_NAME:
    return PI_ERROR_INVALID_KERNEL_NAME;
  case ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION:
    return PI_ERROR_INVALID_WORK_GROUP_SIZE;
  case ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION:
    return PI_ERROR_INVALID_GLOBAL_WORK_SIZE;
  case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX:
    return PI_ERROR_INVALID_ARG_INDEX;
  case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE:
    return PI_ERROR_INVALID_ARG_SIZE;
  case ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED:
    return PI_ERROR_INVALID_PROGRAM_EXECUTABLE;
  case ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE:
    return PI_ERROR_INVALID_QUEUE;
  case ZE_RESULT_ERROR_OVERLAPPING_REGIONS:
    return PI_ERROR_MEM_COPY_OVERLAP;
  default:
    return PI_ERROR_UNKNOWN;
  }
}

/* PI_SUCCESS for ZE_RESULT_SUCCESS; otherwise the mapped PI error, with a
 * message naming the PI function and the Level Zero call that failed. */
pi_result check_ze(const char *fn, const char *zefn, ze_result_t r) {
  if (r == ZE_RESULT_SUCCESS)
    return PI_SUCCESS;
  return fail(pi_from_ze(r), "%s: %s failed with %s (0x%x)", fn, zefn,
              ze_result_name(r), (unsigned)r);
}

/* ---- Info queries ----------------------------------------------------------
 * An info_out names where a *GetInfo call puts its answer; put_*()
 * (plugins/common) write a value with the size checks OpenCL makes. */

pi_result unknown_query(const struct info_out *o) {
  return put_unknown(o, "Level Zero");
}
