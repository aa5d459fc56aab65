/*
 * platform.c: the PI platform functions of the CUDA plugin: one platform
 * for the driver (piPlatformsGet, piPlatformGetInfo, native handles).
 */
#include "cu_internal.h"

/* ---- Platforms ------------------------------------------------------------
 */

/* Without a usable driver: zero platforms and PI_SUCCESS, with the reason
 * left as a warning for piPluginGetLastError. */
pi_result cu_piPlatformsGet(pi_uint32 num_entries,
                            pi_platform *platforms,
                            pi_uint32 *num_platforms) {
  if (platforms && num_entries == 0)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: platforms is not NULL but num_entries is 0", FN);
  REQUIRE(platforms != NULL || num_platforms != NULL);
  pi_platform p = get_platform();
  if (num_platforms)
    *num_platforms = p ? 1 : 0;
  if (!p) {
    pthread_mutex_lock(&init_lock);
    fail(PI_SUCCESS, "%s: no CUDA platform: %s", FN, driver_problem);
    pthread_mutex_unlock(&init_lock);
    return PI_SUCCESS;
  }
  if (platforms)
    platforms[0] = p;
  return PI_SUCCESS;
}

pi_result backend_platform_info(pi_platform platform,
                                const struct info_out *o) {
  char version[64];
  switch (o->query) {
  case PI_PLATFORM_INFO_NAME:
    return put_str(o, "NVIDIA CUDA BACKEND");
  case PI_PLATFORM_INFO_VENDOR:
    return put_str(o, "NVIDIA Corporation");
  case PI_PLATFORM_INFO_PROFILE:
    return put_str(o, "FULL PROFILE");
  case PI_PLATFORM_INFO_VERSION:
    snprintf(version, sizeof version, "CUDA %d.%d",
             platform->driver_version / 1000,
             platform->driver_version % 1000 / 10);
    return put_str(o, version);
  case PI_PLATFORM_INFO_EXTENSIONS:
    return put_str(o, "");
  case PI_EXT_PLATFORM_INFO_BACKEND:
    return put_u32(o, PI_EXT_PLATFORM_BACKEND_CUDA);
  default:
    return unknown_query(o);
  }
}

pi_result
cu_piextPlatformGetNativeHandle(pi_platform platform,
                                pi_native_handle *nativeHandle) {
  (void)platform;
  (void)nativeHandle;
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: CUDA has no platform object, so there is no native "
              "handle; use the devices' (CUdevice) instead",
              FN);
}

pi_result
cu_piextPlatformCreateWithNativeHandle(pi_native_handle nativeHandle,
                                       pi_platform *platform) {
  (void)nativeHandle;
  (void)platform;
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: CUDA has no platform object to make a PI platform from; "
              "use piPlatformsGet",
              FN);
}
