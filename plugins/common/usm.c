/*
 * usm.c: the USM arguments every plugin reads alike: the allocation
 * property list of piextUSM*Alloc and the migration flags of
 * piextUSMEnqueuePrefetch.
 */
#include "plugin_common.h"

pi_result usm_alloc_flags(const char *fn, const pi_usm_mem_properties *props,
                          pi_usm_mem_properties *flags) {
  const pi_usm_mem_properties bits =
      PI_MEM_ALLOC_WRTITE_COMBINED | PI_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE |
      PI_MEM_ALLOC_INITIAL_PLACEMENT_HOST | PI_MEM_ALLOC_DEVICE_READ_ONLY;
  bool seen_flags = false, seen_location = false;
  *flags = 0;
  for (size_t i = 0; props && props[i]; i += 2) {
    bool *seen;
    if (props[i] == PI_MEM_ALLOC_FLAGS) {
      if (props[i + 1] & ~bits)
        return fail(PI_ERROR_INVALID_VALUE,
                    "%s: unknown PI_MEM_ALLOC_FLAGS bits 0x%llx", fn,
                    (unsigned long long)(props[i + 1] & ~bits));
      *flags = props[i + 1];
      seen = &seen_flags;
    } else if (props[i] == PI_MEM_USM_ALLOC_BUFFER_LOCATION) {
      seen = &seen_location;
    } else {
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown USM property 0x%llx", fn,
                  (unsigned long long)props[i]);
    }
    /* As OpenCL refuses a property list that names one twice: which
     * would hold is anybody's guess. */
    if (*seen)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: USM property %s appears twice in the list", fn,
                  props[i] == PI_MEM_ALLOC_FLAGS
                      ? "PI_MEM_ALLOC_FLAGS"
                      : "PI_MEM_USM_ALLOC_BUFFER_LOCATION");
    *seen = true;
  }
  return PI_SUCCESS;
}

pi_result usm_migration_flags_check(const char *fn,
                                    pi_usm_migration_flags flags) {
  if (flags & ~PI_USM_MIGRATION_TBD0)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown migration flags 0x%llx",
                fn, (unsigned long long)flags);
  return PI_SUCCESS;
}
