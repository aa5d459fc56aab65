/*
 * queue_properties.c: reading the property lists of piextQueueCreate and
 * piextQueueCreateWithNativeHandle ({PI_QUEUE_FLAGS, flags,
 * PI_QUEUE_COMPUTE_INDEX, index, 0}), checking a queue's flags, and what
 * the queues of a plugin that makes its own support.
 */
#include "plugin_common.h"

pi_result queue_properties_read(const char *fn, const pi_queue_properties *p,
                                pi_queue_properties *flags,
                                pi_queue_properties *index) {
  *flags = 0;
  *index = 0;
  for (size_t i = 0; p && p[i]; i += 2) {
    if (p[i] == PI_QUEUE_FLAGS)
      *flags = p[i + 1];
    else if (p[i] == PI_QUEUE_COMPUTE_INDEX)
      *index = p[i + 1];
    else
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown queue property 0x%llx",
                  fn, (unsigned long long)p[i]);
  }
  return PI_SUCCESS;
}

pi_result queue_flags_check(const char *fn, pi_queue_properties flags,
                            const char *no_on_device) {
  if (flags & ~(pi_queue_properties)PI_QUEUE_FLAGS_KNOWN)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown queue flags 0x%llx", fn,
                (unsigned long long)(flags & ~(pi_queue_properties)
                                                 PI_QUEUE_FLAGS_KNOWN));
  if (no_on_device &&
      (flags & (PI_QUEUE_FLAG_ON_DEVICE | PI_QUEUE_FLAG_ON_DEVICE_DEFAULT)))
    return fail(PI_ERROR_INVALID_QUEUE_PROPERTIES,
                "%s: %s has no on-device queues", fn, no_on_device);
  if ((flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW) &&
      (flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_HIGH))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a queue cannot have both low and high priority", fn);
  return PI_SUCCESS;
}

pi_result queue_one_index(const char *fn, pi_queue_properties index) {
  if (index != 0)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: compute index %llu requested, but %s devices have one "
                "queue index (0)",
                fn, (unsigned long long)index, this_backend.name);
  return PI_SUCCESS;
}

pi_result put_queue_support(const struct info_out *o) {
  if (o->query == PI_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES)
    return put_u64(o, 0);
  return put_u64(o, PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE |
                        PI_QUEUE_FLAG_PROFILING_ENABLE);
}
