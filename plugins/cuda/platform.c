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

/* The platform's facts answer every platform query. */
DEFINE_FACTS(platform, p, .name = "NVIDIA CUDA BACKEND",
             .vendor = "NVIDIA Corporation", .profile = "FULL PROFILE",
             .version = p->version, .extensions = "",
             .backend = PI_EXT_PLATFORM_BACKEND_CUDA)

pi_result backend_platform_info(pi_platform platform,
                                const struct info_out *o) {
  (void)platform;
  return unknown_query(o);
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
