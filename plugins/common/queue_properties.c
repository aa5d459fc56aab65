/*
 * queue_properties.c: reading the property lists of piextQueueCreate and
 * piextQueueCreateWithNativeHandle ({PI_QUEUE_FLAGS, flags,
 * PI_QUEUE_COMPUTE_INDEX, index, 0}).
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

pi_result queue_properties_flags(const char *fn, const pi_queue_properties *p,
                                 const char *backend,
                                 pi_queue_properties *flags) {
  *flags = 0;
  for (size_t i = 0; p && p[i]; i += 2) {
    if (p[i] == PI_QUEUE_FLAGS)
      *flags = p[i + 1];
    else if (p[i] != PI_QUEUE_COMPUTE_INDEX)
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown queue property 0x%llx",
                  fn, (unsigned long long)p[i]);
    else if (p[i + 1] != 0)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: compute index %llu requested, but %s devices have "
                  "one queue index (0)",
                  fn, (unsigned long long)p[i + 1], backend);
  }
  return PI_SUCCESS;
}
