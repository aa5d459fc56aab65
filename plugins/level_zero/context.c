/*
 * context.c: the PI context functions of the Level Zero plugin: a context
 * wraps a Level Zero context and its event pools; creation, queries,
 * reference counts, extended deleters and native handles.
 */
#include "lz_internal.h"

/* ---- Contexts -------------------------------------------------------------- */

pi_result context_check_devices(const char *fn, pi_uint32 n,
                                const pi_device *devices) {
  if (n == 0 || !devices)
    return fail(PI_ERROR_INVALID_VALUE, "%s: a context needs devices", fn);
  for (pi_uint32 i = 0; i < n; ++i) {
    if (!devices[i])
      return fail(PI_ERROR_INVALID_DEVICE, "%s: device %u is NULL", fn,
                  (unsigned)i);
    if (devices[i]->platform != devices[0]->platform)
      return fail(PI_ERROR_INVALID_DEVICE,
                  "%s: devices '%s' and '%s' belong to different Level Zero "
                  "drivers; a context takes devices of one driver",
                  fn, dev_name(devices[0]), dev_name(devices[i]));
  }
  return PI_SUCCESS;
}

static pi_result context_new(const char *fn, ze_context_handle_t ze,
                             pi_uint32 n, const pi_device *devices, bool owns,
                             pi_context *out) {
  pi_context c = calloc(1, sizeof *c);
  pi_device *devs = calloc(n, sizeof *devs);
  if (!c || !devs) {
    free(c);
    free(devs);
    return out_of_memory(fn);
  }
  memcpy(devs, devices, n * sizeof *devs);
  c->ze = ze;
  c->platform = devices[0]->platform;
  c->ndevices = n;
  c->devices = devs;
  c->owns_native = owns;
  atomic_init(&c->refs, 1);
  pthread_mutex_init(&c->lock, NULL);
  *out = c;
  return PI_SUCCESS;
}

void context_retain(pi_context c) { ref_retain(&c->refs); }

/* Drops a reference; the last one destroys the event pools and the Level
 * Zero context, then runs the extended deleter. */
pi_result context_release(const char *fn, pi_context c) {
  if (!ref_release(&c->refs))
    return PI_SUCCESS;
  pi_result r = PI_SUCCESS;
  while (c->pools) {
    struct event_pool *next = c->pools->next;
    pi_result pr = check_ze(fn, "zeEventPoolDestroy",
                            zeEventPoolDestroy(c->pools->ze));
    r = r == PI_SUCCESS ? pr : r;
    free(c->pools);
    c->pools = next;
  }
  if (c->owns_native) {
    pi_result cr = check_ze(fn, "zeContextDestroy", zeContextDestroy(c->ze));
    r = r == PI_SUCCESS ? cr : r;
  }
  if (c->deleter)
    c->deleter(c->deleter_data);
  pthread_mutex_destroy(&c->lock);
  free(c->devices);
  free(c);
  return r;
}

/* The context's devices are those given; Level Zero's context is created
 * for them with zeContextCreateEx. No context properties are known, and
 * Level Zero reports errors by result, not by pfn_notify. */
pi_result backend_context_create(const char *fn,
                                 const struct context_create *in,
                                 pi_context *ret_context) {
  pi_uint32 n = in->num_devices;
  if (in->properties && in->properties[0])
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: context property 0x%llx means nothing to Level Zero", fn,
                (unsigned long long)in->properties[0]);
  pi_result r = context_check_devices(fn, n, in->devices);
  if (r != PI_SUCCESS)
    return r;
  ze_device_handle_t *zd = calloc(n, sizeof *zd);
  if (!zd)
    return out_of_memory(fn);
  for (pi_uint32 i = 0; i < n; ++i)
    zd[i] = in->devices[i]->ze;
  ze_context_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
  ze_context_handle_t ze = NULL;
  r = ZE_CALL_IN(fn, zeContextCreateEx, in->devices[0]->platform->ze, &desc, n,
                 zd, &ze);
  free(zd);
  if (r == PI_SUCCESS &&
      (r = context_new(fn, ze, n, in->devices, true, ret_context)) !=
          PI_SUCCESS)
    zeContextDestroy(ze);
  return r;
}

DEFINE_FACTS(context, c, .refs = atomic_load(&c->refs),
             .platform = c->platform, .devices = {c->devices, c->ndevices})

/* Whether the context supports an atomic capability: what all its devices
 * have (every device reports the full sets, see piDeviceGetInfo). */
pi_result backend_context_info(pi_context context, const struct info_out *o) {
  pi_device_info q;
  switch (o->query) {
  case PI_CONTEXT_INFO_PROPERTIES:
    return put_info(o, NULL, 0);
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_FILL2D_SUPPORT:
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_MEMSET2D_SUPPORT:
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT:
    return put_bool(o, 1); /* region copies, row-by-row fills */
  case PI_EXT_CONTEXT_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
    q = PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES;
    break;
  case PI_EXT_CONTEXT_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
    q = PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES;
    break;
  case PI_EXT_CONTEXT_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES:
    q = PI_EXT_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES;
    break;
  case PI_EXT_CONTEXT_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES:
    q = PI_EXT_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES;
    break;
  default:
    return unknown_query(o);
  }
  pi_bitfield all = ~(pi_bitfield)0;
  for (pi_uint32 i = 0; i < context->ndevices; ++i) {
    pi_bitfield caps = 0;
    pi_result r = common_piDeviceGetInfo(context->devices[i], q, sizeof caps,
                                         &caps, NULL);
    if (r != PI_SUCCESS)
      return r;
    all &= caps;
  }
  return put_u64(o, all);
}

pi_result lz_piContextRetain(pi_context context) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  context_retain(context);
  return PI_SUCCESS;
}

pi_result lz_piContextRelease(pi_context context) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  return context_release(FN, context);
}

/* Runs when the context is destroyed, after its Level Zero context. */
pi_result lz_piextContextSetExtendedDeleter(
    pi_context context, pi_context_extended_deleter func, void *user_data) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(func != NULL);
  pthread_mutex_lock(&context->lock);
  context->deleter = func;
  context->deleter_data = user_data;
  pthread_mutex_unlock(&context->lock);
  return PI_SUCCESS;
}

pi_result lz_piextContextGetNativeHandle(pi_context context,
                                         pi_native_handle *nativeHandle) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  return native_of(FN, context->ze, nativeHandle);
}

/* A Level Zero context does not know its devices: they must be given. */
pi_result lz_piextContextCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_uint32 numDevices,
    const pi_device *devices, bool pluginOwnsNativeHandle,
    pi_context *context) {
  REQUIRE(nativeHandle != 0 && context != NULL);
  if (numDevices == 0 || !devices)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a Level Zero context does not know its devices; pass "
                "them in devices",
                FN);
  pi_result r = context_check_devices(FN, numDevices, devices);
  if (r != PI_SUCCESS)
    return r;
  return context_new(FN, (ze_context_handle_t)nativeHandle, numDevices,
                     devices, pluginOwnsNativeHandle, context);
}

bool context_has_device(pi_context c, pi_device d) {
  for (pi_uint32 i = 0; i < c->ndevices; ++i)
    if (c->devices[i] == d || c->devices[i] == d->parent)
      return true;
  return false;
}
