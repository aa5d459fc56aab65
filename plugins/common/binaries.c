/*
 * binaries.c: the parts of piextDeviceSelectBinary that do not depend on
 * the backend: matching an image's target, and listing what was offered
 * for the message when no image fits.
 */
#include "plugin_common.h"

#include <stdio.h>
#include <string.h>

int target_is(const struct pi_device_binary_struct *b, const char *target) {
  return b->DeviceTargetSpec && strcmp(b->DeviceTargetSpec, target) == 0;
}

const char *binaries_offered(pi_device_binary *binaries, pi_uint32 n,
                             char *buf, size_t size) {
  size_t used = 0;
  if (n == 0 || size == 0)
    return "none";
  buf[0] = '\0';
  for (pi_uint32 i = 0; i < n && used < size; ++i) {
    const struct pi_device_binary_struct *b = binaries[i];
    int k = snprintf(buf + used, size - used, "%s%s (format %u)",
                     i ? ", " : "",
                     b && b->DeviceTargetSpec ? b->DeviceTargetSpec : "?",
                     b ? (unsigned)b->Format : 0u);
    used += k > 0 ? (size_t)k : 0;
  }
  return buf;
}
