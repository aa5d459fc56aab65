/*
 * context.c: the PI context functions of the CUDA plugin: a context is the
 * device's primary context (or a native one); creation, queries, reference
 * counts, extended deleters and native handles.
 */
#include "cu_internal.h"

/* ---- Contexts -------------------------------------------------------------
 */

static pi_result context_new(pi_device d, CUcontext cu, bool primary, bool owns,
                             pi_context *out) {
  pi_context c = calloc(1, sizeof *c);
  if (!c)
    return PI_ERROR_OUT_OF_HOST_MEMORY;
  atomic_init(&c->refs, 1);
  c->dev = d;
  c->cu = cu;
  c->primary = primary;
  c->owns = owns;
  pthread_mutex_init(&c->lock, NULL);
  *out = c;
  return PI_SUCCESS;
}

/* One device per context; the context is that device's primary context.
 * Properties: __SYCL_PI_CONTEXT_PROPERTIES_CUDA_PRIMARY (any value: the
 * primary context is always used). CUDA reports errors at calls, never
 * asynchronously, so pfn_notify is never called. */
pi_result backend_context_create(const char *fn,
                                 const struct context_create *in,
                                 pi_context *ret_context) {
  const pi_context_properties *properties = in->properties;
  if (!in->devices[0])
    return fail(PI_ERROR_INVALID_VALUE, "%s: devices[0] is NULL", fn);
  if (in->num_devices != 1)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: %u devices given; a CUDA context holds exactly one "
                "device (make one context per device)",
                fn, (unsigned)in->num_devices);
  pi_context_properties props[3] = {0, 0, 0};
  size_t nprops = 0;
  for (size_t i = 0; properties && properties[i]; i += 2) {
    if (properties[i] != __SYCL_PI_CONTEXT_PROPERTIES_CUDA_PRIMARY || i > 0)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: unknown context property 0x%llx; the CUDA plugin "
                  "knows __SYCL_PI_CONTEXT_PROPERTIES_CUDA_PRIMARY",
                  fn, (unsigned long long)properties[i]);
    props[0] = properties[0];
    props[1] = properties[1];
    nprops = 3;
  }
  pi_device d = in->devices[0];
  CUcontext cu = NULL;
  TRY(CUF(fn, cuDevicePrimaryCtxRetain, &cu, d->cu));
  pi_context c = NULL;
  if (context_new(d, cu, true, false, &c) != PI_SUCCESS) {
    drv.cuDevicePrimaryCtxRelease(d->cu);
    return out_of_memory(fn);
  }
  memcpy(c->props, props, sizeof props);
  c->num_props = nprops;
  *ret_context = c;
  return PI_SUCCESS;
}

/* A context holds one device. */
DEFINE_FACTS(context, c, .refs = atomic_load(&c->refs),
             .platform = c->dev->platform, .devices = {&c->dev, 1})

pi_result backend_context_info(pi_context context, const struct info_out *o) {
  switch (o->query) {
  case PI_CONTEXT_INFO_PROPERTIES:
    return put_info(o, context->props,
                    context->num_props * sizeof context->props[0]);
  case PI_EXT_CONTEXT_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
  case PI_EXT_CONTEXT_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES:
    return put_u64(o, atomic_orders(context->dev));
  case PI_EXT_CONTEXT_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
  case PI_EXT_CONTEXT_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES:
    return put_u64(o, atomic_scopes(context->dev));
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_FILL2D_SUPPORT:
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_MEMSET2D_SUPPORT:
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT:
    return put_bool(o, 1);
  default:
    return unknown_query(o);
  }
}

pi_result cu_piContextRetain(pi_context context) {
  REQUIRE(context != NULL);
  ref_retain(&context->refs);
  return PI_SUCCESS;
}

/* The last release runs the extended deleters, then lets the CUDA context
 * go (the primary context is released, an owned native one destroyed). */
pi_result cu_piContextRelease(pi_context context) {
  REQUIRE(context != NULL);
  if (!ref_release(&context->refs))
    return PI_SUCCESS;
  for (struct deleter *dl = context->deleters, *next; dl; dl = next) {
    next = dl->next;
    dl->fn(dl->user_data);
    free(dl);
  }
  pi_result r = PI_SUCCESS;
  if (driver_gone())
    ; /* the context went with the driver */
  else if (context->primary)
    r = CU(cuDevicePrimaryCtxRelease, context->dev->cu);
  else if (context->owns)
    r = CU(cuCtxDestroy, context->cu);
  pthread_mutex_destroy(&context->lock);
  free(context);
  return r;
}

pi_result cu_piextContextSetExtendedDeleter(
    pi_context context, pi_context_extended_deleter func, void *user_data) {
  REQUIRE(context != NULL && func != NULL);
  struct deleter *dl = malloc(sizeof *dl);
  if (!dl)
    return out_of_memory(FN);
  dl->fn = func;
  dl->user_data = user_data;
  pthread_mutex_lock(&context->lock);
  dl->next = context->deleters;
  context->deleters = dl;
  pthread_mutex_unlock(&context->lock);
  return PI_SUCCESS;
}

pi_result
cu_piextContextGetNativeHandle(pi_context context,
                               pi_native_handle *nativeHandle) {
  REQUIRE(context != NULL && nativeHandle != NULL);
  *nativeHandle = (pi_native_handle)(uintptr_t)context->cu;
  return PI_SUCCESS;
}

/* Wraps a CUcontext of one of the platform's devices; with
 * pluginOwnsNativeHandle the last release destroys it (cuCtxDestroy). */
pi_result cu_piextContextCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_uint32 numDevices,
    const pi_device *devices, bool pluginOwnsNativeHandle,
    pi_context *context) {
  (void)numDevices;
  (void)devices;
  REQUIRE(nativeHandle != 0 && context != NULL);
  CUcontext cu = (CUcontext)(uintptr_t)nativeHandle, previous = NULL;
  CUdevice cudev = 0;
  pi_device dev = NULL;
  TRY(CU(cuCtxGetCurrent, &previous));
  TRY(CU(cuCtxSetCurrent, cu));
  pi_result r = CU(cuCtxGetDevice, &cudev);
  drv.cuCtxSetCurrent(previous);
  TRY(r);
  TRY(cu_piextDeviceCreateWithNativeHandle((pi_native_handle)cudev, NULL,
                                           &dev));
  if (context_new(dev, cu, false, pluginOwnsNativeHandle, context) !=
      PI_SUCCESS)
    return out_of_memory(FN);
  return PI_SUCCESS;
}
