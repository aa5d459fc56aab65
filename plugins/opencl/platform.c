/*
 * platform.c: the per-platform cache of extension entry points (looked up
 * once with clGetExtensionFunctionAddressForPlatform, kept until piTearDown),
 * the feature checks that use it, and the PI platform functions
 * (piPlatformsGet, piPlatformGetInfo, native handles).
 */
#include "ocl_internal.h"

pthread_mutex_t platforms_lock = PTHREAD_MUTEX_INITIALIZER;
struct platform_state *platforms;

/* The cached state of a platform, created on first use; NULL only when out
 * of memory. */
const struct platform_state *platform_state(cl_platform_id id) {
  pthread_mutex_lock(&platforms_lock);
  struct platform_state *ps = platforms;
  while (ps && ps->id != id)
    ps = ps->next;
  if (!ps && (ps = calloc(1, sizeof *ps))) {
    char *version = info_string(id, NULL, CL_PLATFORM_VERSION);
    ps->id = id;
    ps->version = parse_version(version);
    free(version);
#define X(name, type)                                                          \
  {                                                                            \
    void *entry = icd_extension_address(id, #name);                            \
    memcpy(&ps->ext.name, &entry, sizeof entry);                               \
  }
    EXT_FUNCTIONS(X)
#undef X
    /* The ICD loader answers for this one itself, from the dispatch table. */
    if (!ps->ext.clGetKernelSubGroupInfoKHR && id)
      ps->ext.clGetKernelSubGroupInfoKHR =
          CL_DISPATCH(id)->clGetKernelSubGroupInfoKHR;
    ps->next = platforms;
    platforms = ps;
  }
  pthread_mutex_unlock(&platforms_lock);
  return ps;
}

pi_result device_state(const char *fn, cl_device_id dev,
                       const struct platform_state **ps) {
  cl_platform_id plat = NULL;
  cl_int err = ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_PLATFORM, sizeof plat,
                        &plat, NULL);
  if (err != CL_SUCCESS)
    return check_cl(fn, "clGetDeviceInfo", err);
  if (!(*ps = platform_state(plat)))
    return fail(PI_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
  return PI_SUCCESS;
}

/* Succeeds when `dev` lists extension `ext` (if not NULL) and its platform
 * exposes the entry point `entry` (`present`); otherwise fails with
 * PI_ERROR_INVALID_OPERATION and a message ending in `hint`. */
pi_result need_feature(const char *fn, cl_device_id dev, const char *ext,
                       const char *entry, int present,
                       const char *hint) {
  char what[512];
  if (ext && !device_has_ext(dev, ext))
    return fail(PI_ERROR_INVALID_OPERATION, "%s: %s does not support %s; %s",
                fn, describe_device(dev, what, sizeof what), ext, hint);
  if (!present)
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the OpenCL platform of %s does not expose %s; %s", fn,
                describe_device(dev, what, sizeof what), entry, hint);
  return PI_SUCCESS;
}

/* ---- Platforms ------------------------------------------------------------
 */

/* The platforms discovery found (see the top of the file), discovered on
 * the first call. What it skipped, and why, is the message of
 * piPluginGetLastError: a warning (PI_SUCCESS) when platforms were found,
 * the reason when none were. No platform at all is zero platforms, not an
 * error. */
pi_result ocl_piPlatformsGet(pi_uint32 num_entries,
                             pi_platform *platforms_out,
                             pi_uint32 *num_platforms) {
  REQUIRE(platforms_out != NULL || num_platforms != NULL);
  REQUIRE(num_entries != 0 || platforms_out == NULL);
  pthread_mutex_lock(&discovery_lock);
  if (!discovered)
    discover();
  for (cl_uint i = 0; platforms_out && i < num_entries && i < nicd_platforms;
       ++i)
    platforms_out[i] = (pi_platform)icd_platforms[i].id;
  if (num_platforms)
    *num_platforms = nicd_platforms;
  const char *notes = discovery_notes.len ? discovery_notes.s : "";
  const char *sources = discovery_sources.len ? discovery_sources.s : "";
  if (nicd_platforms == 0)
    fail(PI_SUCCESS, "%s: no OpenCL platform (from %s)%s%s", FN, sources,
         *notes ? ": " : "", notes);
  else if (*notes)
    fail(PI_SUCCESS, "%s: %u OpenCL platform(s) (from %s); besides: %s", FN,
         (unsigned)nicd_platforms, sources, notes);
  pthread_mutex_unlock(&discovery_lock);
  return PI_SUCCESS;
}

pi_result backend_platform_info(pi_platform platform,
                                const struct info_out *o) {
  if (o->query == PI_EXT_PLATFORM_INFO_BACKEND)
    return put_u32(o, PI_EXT_PLATFORM_BACKEND_OPENCL);
  return INFO_PASS(o, clGetPlatformInfo, (cl_platform_id)platform);
}

/* The native handle of any object: the OpenCL handle itself. */

pi_result
ocl_piextPlatformGetNativeHandle(pi_platform platform,
                                 pi_native_handle *nativeHandle) {
  return native_of(FN, platform, nativeHandle);
}

pi_result
ocl_piextPlatformCreateWithNativeHandle(pi_native_handle nativeHandle,
                                        pi_platform *platform) {
  REQUIRE(nativeHandle != 0 && platform != NULL);
  *platform = (pi_platform)nativeHandle;
  return PI_SUCCESS;
}
