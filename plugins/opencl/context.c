/*
 * context.c: the PI context functions of the OpenCL plugin (a pi_context
 * is a cl_context), with the extended deleters and native handles (and
 * adopt_native, which the other native-handle constructors share).
 */
#include "ocl_internal.h"

/* ---- Contexts -------------------------------------------------------------
 */

pi_result backend_context_create(const char *fn,
                                 const struct context_create *in,
                                 pi_context *ret_context) {
  cl_int err;
  *ret_context = (pi_context)icd_create_context(
      (const cl_context_properties *)in->properties, in->num_devices,
      (const cl_device_id *)in->devices, in->pfn_notify, in->user_data, &err);
  return check_cl(fn, "clCreateContext", err);
}

pi_result backend_context_info(pi_context context, const struct info_out *o) {
  cl_device_id *devs = NULL;
  cl_uint n = 0;
  pi_result r;
  unsigned device_query;
  switch (o->query) {
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_FILL2D_SUPPORT:
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_MEMSET2D_SUPPORT:
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT: {
    /* The 2D USM calls work (row by row) where every device has USM. */
    if ((r = context_devices(o->fn, (cl_context)context, &devs, &n)) !=
        PI_SUCCESS)
      return r;
    int all = n > 0;
    for (cl_uint i = 0; i < n; ++i)
      all &= device_has_ext(devs[i], USM_EXT);
    free(devs);
    return put_bool(o, all);
  }
  case PI_CONTEXT_INFO_PLATFORM: {
    /* clGetContextInfo has no platform query (CL_CONTEXT_PLATFORM is only a
     * property key, and every implementation rejects it as a query): the
     * platform of the context's devices, which all share one. */
    cl_device_id dev = NULL;
    if ((r = context_device(o->fn, (cl_context)context, NULL, &dev)) !=
        PI_SUCCESS)
      return r;
    cl_platform_id plat = device_platform(dev);
    if (!plat)
      return fail(PI_ERROR_INVALID_CONTEXT,
                  "%s: the platform of the context's device is unknown",
                  o->fn);
    return put_ptr(o, plat);
  }
  case PI_EXT_CONTEXT_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
    device_query = PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES;
    break;
  case PI_EXT_CONTEXT_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
    device_query = PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES;
    break;
  case PI_EXT_CONTEXT_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES:
    device_query = PI_EXT_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES;
    break;
  case PI_EXT_CONTEXT_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES:
    device_query = PI_EXT_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES;
    break;
  default:
    return INFO_PASS(o, clGetContextInfo, (cl_context)context);
  }
  /* A context's atomic capabilities: what all its devices have. */
  if ((r = context_devices(o->fn, (cl_context)context, &devs, &n)) !=
      PI_SUCCESS)
    return r;
  pi_bitfield all = ~(pi_bitfield)0, caps = 0;
  for (cl_uint i = 0; i < n && r == PI_SUCCESS; ++i) {
    r = atomic_capabilities(o->fn, devs[i], device_query, &caps);
    all &= caps;
  }
  free(devs);
  return r != PI_SUCCESS ? r : put_u64(o, n ? all : 0);
}

pi_result ocl_piContextRetain(pi_context context) {
  return CL_CALL(clRetainContext, (cl_context)context);
}

pi_result ocl_piContextRelease(pi_context context) {
  return CL_CALL(clReleaseContext, (cl_context)context);
}

static void CL_CALLBACK context_destroyed(cl_context ctx, void *data) {
  struct callback *cb = data;
  (void)ctx;
  cb->fn.deleter(cb->user_data);
  free(cb);
}

/* clSetContextDestructorCallback, OpenCL 3.0. */
pi_result ocl_piextContextSetExtendedDeleter(
    pi_context context, pi_context_extended_deleter func, void *user_data) {
  cl_device_id dev = NULL;
  const struct platform_state *ps = NULL;
  REQUIRE(func != NULL);
  pi_result r = context_device(FN, (cl_context)context, NULL, &dev);
  if (r == PI_SUCCESS)
    r = device_state(FN, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  if (ps->version < 30) {
    char what[512];
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the platform of %s predates OpenCL 3.0, which added "
                "clSetContextDestructorCallback; release resources after "
                "piContextRelease instead",
                FN, describe_device(dev, what, sizeof what));
  }
  struct callback *cb = malloc(sizeof *cb);
  if (!cb)
    return fail(PI_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", FN);
  cb->fn.deleter = func;
  cb->user_data = user_data;
  r = CL_CALL(clSetContextDestructorCallback, (cl_context)context,
              context_destroyed, cb);
  if (r != PI_SUCCESS)
    free(cb);
  return r;
}

pi_result
ocl_piextContextGetNativeHandle(pi_context context,
                                pi_native_handle *nativeHandle) {
  return native_of(FN, context, nativeHandle);
}

/* Checks a native handle and, when the plugin does not take ownership of it,
 * retains it: the PI object is the OpenCL object, and the runtime will
 * release it once. */
pi_result adopt_native(const char *fn, enum native_kind kind,
                       pi_native_handle native, bool owns,
                       const void *out) {
  if (!native || !out)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the native handle and the output must not be NULL", fn);
  if (owns)
    return PI_SUCCESS;
  switch (kind) {
  case NATIVE_CONTEXT:
    return check_cl(fn, "clRetainContext",
                    ICD_CALL(clRetainContext, (cl_context)native));
  case NATIVE_QUEUE:
    return check_cl(fn, "clRetainCommandQueue",
                    ICD_CALL(clRetainCommandQueue, (cl_command_queue)native));
  case NATIVE_MEM:
    return check_cl(fn, "clRetainMemObject",
                    ICD_CALL(clRetainMemObject, (cl_mem)native));
  case NATIVE_PROGRAM:
    return check_cl(fn, "clRetainProgram",
                    ICD_CALL(clRetainProgram, (cl_program)native));
  case NATIVE_KERNEL:
    return check_cl(fn, "clRetainKernel",
                    ICD_CALL(clRetainKernel, (cl_kernel)native));
  case NATIVE_EVENT:
    return check_cl(fn, "clRetainEvent",
                    ICD_CALL(clRetainEvent, (cl_event)native));
  }
  return PI_SUCCESS;
}

pi_result ocl_piextContextCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_uint32 numDevices,
    const pi_device *devices, bool pluginOwnsNativeHandle,
    pi_context *context) {
  (void)numDevices; /* a cl_context knows its devices */
  (void)devices;
  pi_result r = adopt_native(FN, NATIVE_CONTEXT, nativeHandle,
                             pluginOwnsNativeHandle, context);
  if (r == PI_SUCCESS)
    *context = (pi_context)nativeHandle;
  return r;
}
