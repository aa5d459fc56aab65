/*
 * platform.c: the Level Zero plugin's platforms: discovery (zeInit, each
 * driver a platform, its devices and sub-devices loaded with their
 * properties), and the PI platform functions (piPlatformsGet,
 * piPlatformGetInfo, native handles).
 */
#include "lz_internal.h"

/* ---- Platforms and devices ---------------------------------------------------
 * Discovered once, on the first piPlatformsGet; they live until piTearDown. */

pthread_mutex_t platforms_lock = PTHREAD_MUTEX_INITIALIZER;
bool platforms_known;
pi_uint32 nplatforms;
pi_platform *platforms;
static char discovery_note[512]; /* why there are no platforms */

static void device_free(pi_device d) {
  if (!d)
    return;
  for (pi_uint32 i = 0; i < d->nsubs; ++i)
    device_free(d->subs[i]);
  free(d->subs);
  pthread_mutex_destroy(&d->lock);
  free(d);
}

/* Queries everything the plugin keeps about a device. */
static pi_result device_load(const char *fn, pi_device d) {
  ze_device_handle_t z = d->ze;
  d->props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
  d->compute.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
  d->module.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
  d->access.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES;
  d->image.stype = ZE_STRUCTURE_TYPE_DEVICE_IMAGE_PROPERTIES;
  pi_result r;
  if ((r = check_ze(fn, "zeDeviceGetProperties",
                    zeDeviceGetProperties(z, &d->props))) != PI_SUCCESS ||
      (r = check_ze(fn, "zeDeviceGetComputeProperties",
                    zeDeviceGetComputeProperties(z, &d->compute))) !=
          PI_SUCCESS ||
      (r = check_ze(fn, "zeDeviceGetModuleProperties",
                    zeDeviceGetModuleProperties(z, &d->module))) !=
          PI_SUCCESS ||
      (r = check_ze(fn, "zeDeviceGetMemoryAccessProperties",
                    zeDeviceGetMemoryAccessProperties(z, &d->access))) !=
          PI_SUCCESS ||
      (r = check_ze(fn, "zeDeviceGetImageProperties",
                    zeDeviceGetImageProperties(z, &d->image))) != PI_SUCCESS)
    return r;
  ze_device_memory_properties_t mem[8];
  uint32_t n = 8;
  for (uint32_t i = 0; i < n; ++i)
    mem[i] = (ze_device_memory_properties_t){
        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES};
  if ((r = check_ze(fn, "zeDeviceGetMemoryProperties",
                    zeDeviceGetMemoryProperties(z, &n, mem))) != PI_SUCCESS)
    return r;
  for (uint32_t i = 0; i < n && i < 8; ++i)
    d->mem_size += mem[i].totalSize;
  d->mem_clock = n ? mem[0].maxClockRate : 0;
  d->mem_bus = n ? mem[0].maxBusWidth : 0;
  ze_device_cache_properties_t cache = {
      .stype = ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES};
  n = 1;
  if ((r = check_ze(fn, "zeDeviceGetCacheProperties",
                    zeDeviceGetCacheProperties(z, &n, &cache))) != PI_SUCCESS)
    return r;
  d->cache_size = n ? cache.cacheSize : 0;
  uint32_t ngroups = 0;
  if ((r = check_ze(fn, "zeDeviceGetCommandQueueGroupProperties",
                    zeDeviceGetCommandQueueGroupProperties(z, &ngroups,
                                                           NULL))) !=
      PI_SUCCESS)
    return r;
  ze_command_queue_group_properties_t *groups =
      calloc(ngroups ? ngroups : 1, sizeof *groups);
  if (!groups)
    return out_of_memory(fn);
  for (uint32_t i = 0; i < ngroups; ++i)
    groups[i].stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
  r = check_ze(fn, "zeDeviceGetCommandQueueGroupProperties",
               zeDeviceGetCommandQueueGroupProperties(z, &ngroups, groups));
  bool found = false;
  for (uint32_t i = 0; r == PI_SUCCESS && i < ngroups && !found; ++i)
    if (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
      found = true;
      d->ordinal = i;
      d->nqueues = groups[i].numQueues ? groups[i].numQueues : 1;
      d->max_fill = groups[i].maxMemoryFillPatternSize;
    }
  free(groups);
  if (r == PI_SUCCESS && !found)
    r = fail(PI_ERROR_DEVICE_NOT_AVAILABLE,
             "%s: Level Zero device '%s' has no command queue group that "
             "computes",
             fn, d->props.name);
  return r;
}

static pi_device device_new(pi_platform plat, pi_device parent,
                            ze_device_handle_t z) {
  pi_device d = calloc(1, sizeof *d);
  if (!d)
    return NULL;
  d->ze = z;
  d->platform = plat;
  d->parent = parent;
  atomic_init(&d->refs, 1);
  pthread_mutex_init(&d->lock, NULL);
  return d;
}

void platform_free(pi_platform p) {
  if (!p)
    return;
  for (pi_uint32 i = 0; i < p->ndevices; ++i)
    device_free(p->devices[i]);
  free(p->devices);
  free(p->extensions);
  free(p);
}

static bool has_word(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *s = list; s && (s = strstr(s, word)); s += n)
    if ((s == list || s[-1] == ' ') && (s[n] == ' ' || s[n] == '\0'))
      return true;
  return false;
}

/* A platform for one driver, with its root devices. */
static pi_result platform_load(const char *fn, ze_driver_handle_t drv,
                               pi_platform *out) {
  pi_platform p = calloc(1, sizeof *p);
  if (!p)
    return out_of_memory(fn);
  p->ze = drv;
  ze_driver_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
  uint32_t next = 0, ndev = 0;
  pi_result r = check_ze(fn, "zeDriverGetApiVersion",
                         zeDriverGetApiVersion(drv, &p->api_version));
  if (r == PI_SUCCESS)
    r = check_ze(fn, "zeDriverGetProperties", zeDriverGetProperties(drv, &dp));
  if (r == PI_SUCCESS)
    r = check_ze(fn, "zeDriverGetExtensionProperties",
                 zeDriverGetExtensionProperties(drv, &next, NULL));
  p->driver_version = dp.driverVersion;
  snprintf(p->version, sizeof p->version, "%u.%u",
           (unsigned)ZE_MAJOR_VERSION(p->api_version),
           (unsigned)ZE_MINOR_VERSION(p->api_version));
  ze_driver_extension_properties_t *ext =
      r == PI_SUCCESS ? calloc(next ? next : 1, sizeof *ext) : NULL;
  if (r == PI_SUCCESS && !ext)
    r = out_of_memory(fn);
  if (r == PI_SUCCESS)
    r = check_ze(fn, "zeDriverGetExtensionProperties",
                 zeDriverGetExtensionProperties(drv, &next, ext));
  if (r == PI_SUCCESS) {
    size_t len = 1;
    for (uint32_t i = 0; i < next; ++i)
      len += strnlen(ext[i].name, ZE_MAX_EXTENSION_NAME) + 1;
    if (!(p->extensions = calloc(1, len)))
      r = out_of_memory(fn);
    for (uint32_t i = 0; r == PI_SUCCESS && i < next; ++i) {
      size_t used = strlen(p->extensions);
      snprintf(p->extensions + used, len - used, "%s%.*s", i ? " " : "",
               (int)ZE_MAX_EXTENSION_NAME, ext[i].name);
    }
  }
  free(ext);
  if (r == PI_SUCCESS) {
    p->global_offset = has_word(p->extensions, ZE_GLOBAL_OFFSET_EXP_NAME);
    void *f = NULL;
    if (zeDriverGetExtensionFunctionAddress(
            drv, "zexDriverImportExternalPointer", &f) == ZE_RESULT_SUCCESS)
      memcpy(&p->import_ptr, &f, sizeof f);
    f = NULL;
    if (zeDriverGetExtensionFunctionAddress(
            drv, "zexDriverReleaseImportedPointer", &f) == ZE_RESULT_SUCCESS)
      memcpy(&p->release_ptr, &f, sizeof f);
    r = check_ze(fn, "zeDeviceGet", zeDeviceGet(drv, &ndev, NULL));
  }
  ze_device_handle_t *zd =
      r == PI_SUCCESS ? calloc(ndev ? ndev : 1, sizeof *zd) : NULL;
  if (r == PI_SUCCESS && !(zd && (p->devices = calloc(ndev ? ndev : 1,
                                                      sizeof *p->devices))))
    r = out_of_memory(fn);
  if (r == PI_SUCCESS)
    r = check_ze(fn, "zeDeviceGet", zeDeviceGet(drv, &ndev, zd));
  for (uint32_t i = 0; r == PI_SUCCESS && i < ndev; ++i) {
    pi_device d = device_new(p, NULL, zd[i]);
    if (!d) {
      r = out_of_memory(fn);
      break;
    }
    p->devices[p->ndevices++] = d;
    r = device_load(fn, d);
  }
  free(zd);
  if (r != PI_SUCCESS) {
    platform_free(p);
    return r;
  }
  *out = p;
  return PI_SUCCESS;
}

/* Runs zeInit and lists the drivers once. No driver is not an error: the
 * plugin then has zero platforms, and discovery_note says why. */
pi_result discover(const char *fn) {
  pthread_mutex_lock(&platforms_lock);
  if (platforms_known) {
    pthread_mutex_unlock(&platforms_lock);
    return PI_SUCCESS;
  }
  pi_result r = PI_SUCCESS;
  ze_result_t zr = zeInit(ZE_INIT_FLAG_GPU_ONLY);
  uint32_t n = 0;
  if (zr == ZE_RESULT_SUCCESS)
    zr = zeDriverGet(&n, NULL);
  if (zr != ZE_RESULT_SUCCESS || n == 0) {
    snprintf(discovery_note, sizeof discovery_note,
             "the Level Zero loader found no GPU driver (%s %s); the plugin "
             "has no platforms",
             zr != ZE_RESULT_SUCCESS ? "zeInit/zeDriverGet returned"
                                     : "zeDriverGet reported",
             zr != ZE_RESULT_SUCCESS ? ze_result_name(zr) : "0 drivers");
    platforms_known = true;
    pthread_mutex_unlock(&platforms_lock);
    return PI_SUCCESS;
  }
  ze_driver_handle_t *drv = calloc(n, sizeof *drv);
  pi_platform *list = calloc(n, sizeof *list);
  if (!drv || !list)
    r = out_of_memory(fn);
  if (r == PI_SUCCESS)
    r = check_ze(fn, "zeDriverGet", zeDriverGet(&n, drv));
  pi_uint32 got = 0;
  for (uint32_t i = 0; r == PI_SUCCESS && i < n; ++i)
    if ((r = platform_load(fn, drv[i], &list[got])) == PI_SUCCESS)
      ++got;
  free(drv);
  if (r != PI_SUCCESS) {
    for (pi_uint32 i = 0; i < got; ++i)
      platform_free(list[i]);
    free(list);
  } else {
    platforms = list;
    nplatforms = got;
    platforms_known = true;
  }
  pthread_mutex_unlock(&platforms_lock);
  return r;
}

/* The sub-devices of a device, listed once. */
pi_result device_subs(const char *fn, pi_device d) {
  pthread_mutex_lock(&d->lock);
  pi_result r = PI_SUCCESS;
  if (!d->subs_known) {
    uint32_t n = 0;
    r = check_ze(fn, "zeDeviceGetSubDevices",
                 zeDeviceGetSubDevices(d->ze, &n, NULL));
    ze_device_handle_t *zs =
        r == PI_SUCCESS ? calloc(n ? n : 1, sizeof *zs) : NULL;
    pi_device *subs = zs ? calloc(n ? n : 1, sizeof *subs) : NULL;
    if (r == PI_SUCCESS && !subs)
      r = out_of_memory(fn);
    if (r == PI_SUCCESS)
      r = check_ze(fn, "zeDeviceGetSubDevices",
                   zeDeviceGetSubDevices(d->ze, &n, zs));
    pi_uint32 got = 0;
    for (uint32_t i = 0; r == PI_SUCCESS && i < n; ++i) {
      pi_device s = device_new(d->platform, d, zs[i]);
      if (!s) {
        r = out_of_memory(fn);
        break;
      }
      subs[got++] = s;
      r = device_load(fn, s);
    }
    free(zs);
    if (r == PI_SUCCESS) {
      d->subs = subs;
      d->nsubs = got;
      d->subs_known = true;
    } else {
      for (pi_uint32 i = 0; i < got; ++i)
        device_free(subs[i]);
      free(subs);
    }
  }
  pthread_mutex_unlock(&d->lock);
  return r;
}

/* The PI device of a Level Zero device of `plat` (any platform when NULL),
 * among the root devices and the sub-devices already listed. */
pi_device find_device(pi_platform plat, ze_device_handle_t z) {
  for (pi_uint32 p = 0; p < nplatforms; ++p) {
    if (plat && platforms[p] != plat)
      continue;
    for (pi_uint32 i = 0; i < platforms[p]->ndevices; ++i) {
      pi_device d = platforms[p]->devices[i];
      if (d->ze == z)
        return d;
      pthread_mutex_lock(&d->lock);
      pi_device found = NULL;
      for (pi_uint32 s = 0; s < d->nsubs && !found; ++s)
        if (d->subs[s]->ze == z)
          found = d->subs[s];
      pthread_mutex_unlock(&d->lock);
      if (found)
        return found;
    }
  }
  return NULL;
}

/* "device 'NAME'", for messages. */
const char *dev_name(pi_device d) { return d ? d->props.name : "?"; }

/* Device time ticks to nanoseconds (timerResolution is in cycles/s). */
uint64_t ticks_to_ns(pi_device d, uint64_t ticks) {
  uint64_t hz = d->props.timerResolution ? d->props.timerResolution : 1;
  return ticks / hz * 1000000000ull + ticks % hz * 1000000000ull / hz;
}

/* ---- Platform ------------------------------------------------------------- */

pi_result lz_piPlatformsGet(pi_uint32 num_entries,
                            pi_platform *platforms_out,
                            pi_uint32 *num_platforms) {
  REQUIRE(platforms_out || num_platforms);
  REQUIRE(num_entries > 0 || !platforms_out);
  pi_result r = discover(FN);
  if (r != PI_SUCCESS)
    return r;
  for (pi_uint32 i = 0; platforms_out && i < num_entries && i < nplatforms;
       ++i)
    platforms_out[i] = platforms[i];
  if (num_platforms)
    *num_platforms = nplatforms;
  if (nplatforms == 0)
    fail(PI_SUCCESS, "%s: %s", FN, discovery_note); /* a note, not an error */
  return PI_SUCCESS;
}

/* The platform's facts answer every platform query; its version is the
 * driver's API version. */
DEFINE_FACTS(platform, p, .name = "Intel(R) Level-Zero",
             .vendor = "Intel(R) Corporation", .profile = "FULL_PROFILE",
             .version = p->version, .extensions = p->extensions,
             .backend = PI_EXT_PLATFORM_BACKEND_LEVEL_ZERO)

pi_result backend_platform_info(pi_platform platform,
                                const struct info_out *o) {
  (void)platform;
  return unknown_query(o);
}

pi_result lz_piextPlatformGetNativeHandle(pi_platform platform,
                                          pi_native_handle *nativeHandle) {
  NEED(platform, PI_ERROR_INVALID_PLATFORM);
  return native_of(FN, platform->ze, nativeHandle);
}

/* Platforms are the drivers the loader lists: a native driver handle maps
 * to the platform already made for it. */
pi_result
lz_piextPlatformCreateWithNativeHandle(pi_native_handle nativeHandle,
                                       pi_platform *platform) {
  REQUIRE(nativeHandle != 0 && platform != NULL);
  pi_result r = discover(FN);
  if (r != PI_SUCCESS)
    return r;
  for (pi_uint32 i = 0; i < nplatforms; ++i)
    if ((pi_native_handle)platforms[i]->ze == nativeHandle) {
      *platform = platforms[i];
      return PI_SUCCESS;
    }
  return fail(PI_ERROR_INVALID_PLATFORM,
              "%s: 0x%" PRIxPTR " is none of the %u Level Zero driver(s) the "
              "loader lists",
              FN, (uintptr_t)nativeHandle, (unsigned)nplatforms);
}
