/*
 * info.c: the writers of info-query answers (put_info and its typed
 * forms), with the size checks OpenCL makes, native_of for the plugins
 * whose native handles are the backend's objects, and flags_map for the
 * flags a backend and PI name alike.
 */
#include "plugin_common.h"

#include <string.h>

pi_result put_info(const struct info_out *o, const void *src, size_t n) {
  if (o->value) {
    if (o->size < n)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: query 0x%x returns %zu bytes but param_value_size is "
                  "%zu",
                  o->fn, o->query, n, o->size);
    if (n)
      memcpy(o->value, src, n);
  }
  if (o->size_ret)
    *o->size_ret = n;
  return PI_SUCCESS;
}

pi_result put_bool(const struct info_out *o, int b) {
  pi_bool v = b ? PI_TRUE : PI_FALSE;
  return put_info(o, &v, sizeof v);
}

pi_result put_u32(const struct info_out *o, uint32_t v) {
  return put_info(o, &v, sizeof v);
}

pi_result put_i32(const struct info_out *o, int32_t v) {
  return put_info(o, &v, sizeof v);
}

pi_result put_u64(const struct info_out *o, uint64_t v) {
  return put_info(o, &v, sizeof v);
}

pi_result put_size(const struct info_out *o, size_t v) {
  return put_info(o, &v, sizeof v);
}

pi_result put_ptr(const struct info_out *o, const void *p) {
  return put_info(o, &p, sizeof p);
}

pi_result put_str(const struct info_out *o, const char *s) {
  return put_info(o, s, strlen(s) + 1);
}

pi_result put_unknown(const struct info_out *o, const char *backend) {
  return fail(PI_ERROR_INVALID_VALUE,
              "%s: query 0x%x is unknown to the %s plugin", o->fn, o->query,
              backend);
}

pi_result native_of(const char *fn, const void *obj, pi_native_handle *native) {
  if (!native)
    return fail(PI_ERROR_INVALID_VALUE, "%s: nativeHandle is NULL", fn);
  *native = (pi_native_handle)obj;
  return PI_SUCCESS;
}

pi_result put_max_work_groups(const struct info_out *o, const size_t max[3]) {
  size_t dims = o->query == PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_1D   ? 1
                : o->query == PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_2D ? 2
                                                                           : 3;
  return put_info(o, max, dims * sizeof max[0]);
}

uint64_t flags_map(uint64_t bits, const struct flag_pair *map, size_t n) {
  uint64_t out = 0;
  for (size_t i = 0; i < n; ++i)
    if (bits & map[i].from)
      out |= map[i].to;
  return out;
}

pi_result put_devices(const struct info_out *o, struct device_list d) {
  return put_info(o, d.list, d.n * sizeof *d.list);
}

pi_result put_device_count(const struct info_out *o, struct device_list d) {
  return put_u32(o, d.n);
}
