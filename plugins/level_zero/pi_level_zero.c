/*
 * pi_level_zero.c: the pitrace Level Zero plugin (libpi_level_zero.so).
 *
 * It implements the PI functions of shared/pi-api.txt on top of the oneAPI
 * Level Zero loader (libze_loader): each Level Zero driver is a PI platform,
 * its devices (and their sub-devices) are PI devices. Unlike the OpenCL
 * plugin, a PI handle here is a plugin object wrapping Level Zero handles,
 * because PI objects carry state Level Zero does not have:
 *
 *   - a queue is a Level Zero command queue fed one command list per command
 *     (or an immediate command list); in-order queues chain each command to
 *     the previous one with an event;
 *   - every command signals a host-visible event from a per-context event
 *     pool (with kernel timestamps on profiling queues);
 *   - a buffer is a device allocation (a host allocation when the context
 *     has several devices or PI_MEM_FLAGS_HOST_PTR_ALLOC asks for one);
 *   - a program keeps its SPIR-V and the specialization constants set with
 *     piextProgramSetSpecializationConstant until piProgramBuild (or
 *     piProgramLink) creates its modules, passing the constants natively in
 *     ze_module_constants_t; its build log is the module's build log;
 *   - a kernel remembers its Level Zero kernel per device, and its group
 *     size is set at launch (zeKernelSuggestGroupSize when the local size is
 *     NULL).
 *
 * When the loader finds no driver (zeInit fails or reports none) the plugin
 * still loads and reports zero platforms, so the runtime goes on with its
 * other plugins. What Level Zero cannot do (OpenCL C source, image fills,
 * host pipes, ...) fails with a PI error and a piPluginGetLastError message
 * naming the function and why.
 *
 * Threads: there is no global lock across calls. Platform discovery runs
 * once under its own mutex; contexts (event pools), queues (submission),
 * programs (constants, build), kernels (arguments, launch) and memory
 * objects (maps) each have a mutex; reference counts are atomic; the last
 * error is thread-local. Lock order: queue, then kernel, then context.
 */
#define _GNU_SOURCE /* strdup, strtok_r */
#include <level_zero/ze_api.h>

#include "pi/pi.h"
#include "plugin_common.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bumped with every behavioural change; the third part of PluginVersion. */
#define PLUGIN_REVISION "1"

/* The name of the PI function we are in: implementations are lz_<name>. */
#define FN (__func__ + sizeof("lz_") - 1)

#define SPIRV_MAGIC 0x07230203u
#define POOL_EVENTS 64 /* events per event pool (one uint64_t bitmap) */
#define FREE_LISTS 8   /* reset command lists a queue keeps for reuse */

/* ---- Errors --------------------------------------------------------------
 * Every failure goes through fail() (plugins/common), which keeps the code
 * and a message for piPluginGetLastError in thread-local storage. */

#define ZE_RESULTS(X)                                                          \
  X(ZE_RESULT_SUCCESS) X(ZE_RESULT_NOT_READY) X(ZE_RESULT_ERROR_DEVICE_LOST)   \
  X(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)                                        \
  X(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)                                      \
  X(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE)                                      \
  X(ZE_RESULT_ERROR_MODULE_LINK_FAILURE)                                       \
  X(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET)                                     \
  X(ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE)                                 \
  X(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS) X(ZE_RESULT_ERROR_NOT_AVAILABLE) \
  X(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE) X(ZE_RESULT_ERROR_UNINITIALIZED)   \
  X(ZE_RESULT_ERROR_UNSUPPORTED_VERSION)                                       \
  X(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) X(ZE_RESULT_ERROR_INVALID_ARGUMENT)   \
  X(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)                                       \
  X(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE)                                      \
  X(ZE_RESULT_ERROR_INVALID_NULL_POINTER) X(ZE_RESULT_ERROR_INVALID_SIZE)      \
  X(ZE_RESULT_ERROR_UNSUPPORTED_SIZE) X(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT) \
  X(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT)                            \
  X(ZE_RESULT_ERROR_INVALID_ENUMERATION)                                       \
  X(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION)                                   \
  X(ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT)                                  \
  X(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)                                     \
  X(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME) X(ZE_RESULT_ERROR_INVALID_KERNEL_NAME)\
  X(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME)                                     \
  X(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION)                              \
  X(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION)                            \
  X(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX)                             \
  X(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE)                              \
  X(ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE)                            \
  X(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED)                                   \
  X(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE)                                 \
  X(ZE_RESULT_ERROR_OVERLAPPING_REGIONS) X(ZE_RESULT_ERROR_UNKNOWN)

static const char *ze_result_name(ze_result_t r) {
  switch (r) {
#define X(name)                                                                \
  case name:                                                                   \
    return #name;
    ZE_RESULTS(X)
#undef X
  default:
    return "a Level Zero result this plugin does not know";
  }
}

/* The PI result for a Level Zero error. */
static pi_result pi_from_ze(ze_result_t r) {
  switch (r) {
  case ZE_RESULT_SUCCESS:
    return PI_SUCCESS;
  case ZE_RESULT_ERROR_DEVICE_LOST:
  case ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET:
  case ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE:
  case ZE_RESULT_ERROR_NOT_AVAILABLE:
    return PI_ERROR_DEVICE_NOT_AVAILABLE;
  case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
    return PI_ERROR_OUT_OF_HOST_MEMORY;
  case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
    return PI_ERROR_OUT_OF_RESOURCES;
  case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE:
    return PI_ERROR_BUILD_PROGRAM_FAILURE;
  case ZE_RESULT_ERROR_MODULE_LINK_FAILURE:
    return PI_ERROR_LINK_PROGRAM_FAILURE;
  case ZE_RESULT_ERROR_UNINITIALIZED:
    return PI_ERROR_UNINITIALIZED;
  case ZE_RESULT_ERROR_UNSUPPORTED_VERSION:
  case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
  case ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS:
  case ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE:
  case ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE:
    return PI_ERROR_INVALID_OPERATION;
  case ZE_RESULT_ERROR_INVALID_ARGUMENT:
  case ZE_RESULT_ERROR_INVALID_NULL_HANDLE:
  case ZE_RESULT_ERROR_INVALID_NULL_POINTER:
  case ZE_RESULT_ERROR_INVALID_SIZE:
  case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT:
  case ZE_RESULT_ERROR_INVALID_ENUMERATION:
  case ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION:
  case ZE_RESULT_ERROR_INVALID_GLOBAL_NAME:
  case ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE:
    return PI_ERROR_INVALID_VALUE;
  case ZE_RESULT_ERROR_UNSUPPORTED_SIZE:
    return PI_ERROR_INVALID_BUFFER_SIZE;
  case ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT:
    return PI_ERROR_INVALID_EVENT;
  case ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT:
    return PI_ERROR_IMAGE_FORMAT_NOT_SUPPORTED;
  case ZE_RESULT_ERROR_INVALID_NATIVE_BINARY:
    return PI_ERROR_INVALID_BINARY;
  case ZE_RESULT_ERROR_INVALID_KERNEL_NAME:
  case ZE_RESULT_ERROR_INVALID_FUNCTION_NAME:
    return PI_ERROR_INVALID_KERNEL_NAME;
  case ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION:
    return PI_ERROR_INVALID_WORK_GROUP_SIZE;
  case ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION:
    return PI_ERROR_INVALID_GLOBAL_WORK_SIZE;
  case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX:
    return PI_ERROR_INVALID_ARG_INDEX;
  case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE:
    return PI_ERROR_INVALID_ARG_SIZE;
  case ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED:
    return PI_ERROR_INVALID_PROGRAM_EXECUTABLE;
  case ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE:
    return PI_ERROR_INVALID_QUEUE;
  case ZE_RESULT_ERROR_OVERLAPPING_REGIONS:
    return PI_ERROR_MEM_COPY_OVERLAP;
  default:
    return PI_ERROR_UNKNOWN;
  }
}

/* PI_SUCCESS for ZE_RESULT_SUCCESS; otherwise the mapped PI error, with a
 * message naming the PI function and the Level Zero call that failed. */
static pi_result check_ze(const char *fn, const char *zefn, ze_result_t r) {
  if (r == ZE_RESULT_SUCCESS)
    return PI_SUCCESS;
  return fail(pi_from_ze(r), "%s: %s failed with %s (0x%x)", fn, zefn,
              ze_result_name(r), (unsigned)r);
}

/* Calls a Level Zero function and checks its result. */
#define ZE_CALL(zefn, ...) check_ze(FN, #zefn, zefn(__VA_ARGS__))

/* ---- Info queries ----------------------------------------------------------
 * An info_out names where a *GetInfo call puts its answer; put_*()
 * (plugins/common) write a value with the size checks OpenCL makes. */

static pi_result unknown_query(const struct info_out *o) {
  return put_unknown(o, "Level Zero");
}

/* ---- Objects ---------------------------------------------------------------- */

struct _pi_platform {
  ze_driver_handle_t ze;
  ze_api_version_t api_version;
  uint32_t driver_version;
  char *extensions; /* the driver's extensions, space-separated */
  bool global_offset; /* ZE_experimental_global_offset */
  /* zexDriverImportExternalPointer / zexDriverReleaseImportedPointer. */
  ze_result_t (*import_ptr)(ze_driver_handle_t, void *, size_t);
  ze_result_t (*release_ptr)(ze_driver_handle_t, void *);
  pi_uint32 ndevices;
  pi_device *devices; /* root devices */
};

struct _pi_device {
  ze_device_handle_t ze;
  pi_platform platform;
  pi_device parent; /* NULL for a root device */
  atomic_uint refs; /* reported only: devices live until piTearDown */
  ze_device_properties_t props;
  ze_device_compute_properties_t compute;
  ze_device_module_properties_t module;
  ze_device_memory_access_properties_t access;
  ze_device_image_properties_t image;
  uint64_t mem_size;     /* sum of the memory properties' totalSize */
  uint32_t mem_clock;    /* MHz, of the first memory */
  uint32_t mem_bus;      /* bits, of the first memory */
  uint64_t cache_size;   /* of the first cache */
  uint32_t ordinal;      /* the first command queue group that computes */
  uint32_t nqueues;      /* its number of queues */
  size_t max_fill;       /* its largest fill pattern */
  pthread_mutex_t lock;  /* guards the sub-devices */
  bool subs_known;
  pi_uint32 nsubs;
  pi_device *subs;
};

struct event_pool {
  ze_event_pool_handle_t ze;
  bool timestamps;
  uint64_t used; /* one bit per event */
  struct event_pool *next;
};

struct _pi_context {
  ze_context_handle_t ze;
  pi_platform platform;
  pi_uint32 ndevices;
  pi_device *devices;
  atomic_uint refs; /* PI references and those of the context's objects */
  bool owns_native;
  pthread_mutex_t lock; /* guards the pools and the deleter */
  struct event_pool *pools;
  pi_context_extended_deleter deleter;
  void *deleter_data;
};

struct submission {
  ze_command_list_handle_t list; /* NULL on an immediate list */
  pi_event event;                /* a reference, dropped when reaped */
  void *free_after;              /* host USM to free once complete */
};

struct _pi_queue {
  pi_context context;
  pi_device device;
  pi_queue_properties flags;
  ze_command_queue_handle_t zeq; /* NULL for an immediate command list */
  ze_command_list_handle_t imm;  /* the immediate command list */
  uint32_t ordinal, index;
  atomic_uint refs;  /* PI references */
  atomic_uint total; /* PI references plus one per event of the queue */
  bool owns_native;
  bool dead; /* the PI references are gone: Level Zero objects destroyed */
  pthread_mutex_t lock; /* guards everything below; held during submission */
  pi_event last;        /* the last command's event (in-order chaining) */
  struct submission *subs;
  size_t nsubs, cap;
  ze_command_list_handle_t free[FREE_LISTS];
  size_t nfree;
};

struct _pi_event {
  ze_event_handle_t ze;
  pi_context context;
  pi_queue queue; /* NULL for user events; holds queue->total */
  pi_command_type type;
  atomic_uint refs;
  bool timestamps;
  bool owns_native;
  uint64_t queued_ns; /* device time when the command was submitted */
  struct event_pool *pool;
  uint32_t slot;
};

enum mem_kind { MEM_BUFFER, MEM_SUB_BUFFER, MEM_IMAGE };

struct mapping {
  char *ptr;      /* what the map returned */
  size_t offset;  /* into the buffer */
  size_t size;
  pi_map_flags flags;
  bool staged;    /* ptr is a host allocation of ours, freed at unmap */
  bool direct;    /* ptr is the buffer's own (host-accessible) memory */
  struct mapping *next;
};

struct _pi_mem {
  enum mem_kind kind;
  pi_context context;
  atomic_uint refs;
  pi_mem_flags flags;
  size_t size;
  char *ptr;        /* the allocation (sub-buffers: parent's plus origin) */
  bool host_access; /* ptr is host or shared memory */
  bool owns_alloc;  /* free ptr (or destroy the image) at release */
  char *host_ptr;   /* PI_MEM_FLAGS_HOST_PTR_USE memory, where maps go */
  pi_mem parent;    /* sub-buffers */
  size_t origin;
  /* images */
  ze_image_handle_t image;
  pi_image_format format;
  pi_image_desc desc;
  size_t elem_size;
  pthread_mutex_t lock; /* guards the mappings */
  struct mapping *maps;
};

struct spec_const {
  uint32_t id;
  size_t size;
  uint64_t *value; /* zero-padded to 8-byte words */
};

enum program_state { PROG_IL, PROG_NATIVE, PROG_OBJECT, PROG_EXE };

/* A program on one device. */
struct prog_dev {
  pi_device device;
  const unsigned char *binary; /* a native binary given for this device */
  size_t binary_size;
  uint32_t nmodules;
  ze_module_handle_t *modules;
  ze_module_build_log_handle_t log; /* build or link log */
  pi_program_build_status status;
};

struct _pi_program {
  pi_context context;
  atomic_uint refs;
  bool owns_native;
  bool shared_module; /* made from a native module, shared by the devices */
  pthread_mutex_t lock; /* guards everything below */
  enum program_state state;
  unsigned char *il;
  size_t il_size;
  char *options;       /* compile or build options */
  struct spec_const *specs;
  size_t nspecs;
  pi_uint32 ndevs;
  struct prog_dev *devs;
};

struct _pi_kernel {
  pi_program program;
  atomic_uint refs;
  bool native; /* made from a native handle, shared by the devices */
  bool owns_native;
  char *name;
  pthread_mutex_t lock; /* held while arguments are set and at launch */
  pi_uint32 n;
  ze_kernel_handle_t *ze; /* one per program device */
  uint32_t group[3];      /* the group size last set (0: none yet) */
};

struct _pi_sampler {
  pi_context context;
  atomic_uint refs;
  ze_sampler_handle_t ze;
  pi_bool normalized;
  pi_sampler_addressing_mode addressing;
  pi_sampler_filter_mode filter;
};

/* ---- Platforms and devices ---------------------------------------------------
 * Discovered once, on the first piPlatformsGet; they live until piTearDown. */

static pthread_mutex_t platforms_lock = PTHREAD_MUTEX_INITIALIZER;
static bool platforms_known;
static pi_uint32 nplatforms;
static pi_platform *platforms;
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

static void platform_free(pi_platform p) {
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
static pi_result discover(const char *fn) {
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
static pi_result device_subs(const char *fn, pi_device d) {
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
static pi_device find_device(pi_platform plat, ze_device_handle_t z) {
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
static const char *dev_name(pi_device d) { return d ? d->props.name : "?"; }

/* Device time ticks to nanoseconds (timerResolution is in cycles/s). */
static uint64_t ticks_to_ns(pi_device d, uint64_t ticks) {
  uint64_t hz = d->props.timerResolution ? d->props.timerResolution : 1;
  return ticks / hz * 1000000000ull + ticks % hz * 1000000000ull / hz;
}

/* ---- Platform ------------------------------------------------------------- */

static pi_result lz_piPlatformsGet(pi_uint32 num_entries,
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

static pi_result lz_piPlatformGetInfo(pi_platform platform,
                                      pi_platform_info param_name,
                                      size_t param_value_size,
                                      void *param_value,
                                      size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  char buf[64];
  NEED(platform, PI_ERROR_INVALID_PLATFORM);
  switch (param_name) {
  case PI_PLATFORM_INFO_NAME:
    return put_str(&o, "Intel(R) Level-Zero");
  case PI_PLATFORM_INFO_VENDOR:
    return put_str(&o, "Intel(R) Corporation");
  case PI_PLATFORM_INFO_PROFILE:
    return put_str(&o, "FULL_PROFILE");
  case PI_PLATFORM_INFO_VERSION:
    snprintf(buf, sizeof buf, "%u.%u",
             (unsigned)ZE_MAJOR_VERSION(platform->api_version),
             (unsigned)ZE_MINOR_VERSION(platform->api_version));
    return put_str(&o, buf);
  case PI_PLATFORM_INFO_EXTENSIONS:
    return put_str(&o, platform->extensions);
  case PI_EXT_PLATFORM_INFO_BACKEND:
    return put_u32(&o, PI_EXT_PLATFORM_BACKEND_LEVEL_ZERO);
  default:
    return unknown_query(&o);
  }
}


static pi_result lz_piextPlatformGetNativeHandle(pi_platform platform,
                                                 pi_native_handle *nativeHandle) {
  NEED(platform, PI_ERROR_INVALID_PLATFORM);
  return native_of(FN, platform->ze, nativeHandle);
}

/* Platforms are the drivers the loader lists: a native driver handle maps
 * to the platform already made for it. */
static pi_result
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

/* ---- Devices -------------------------------------------------------------- */

static pi_device_type device_type(pi_device d) {
  switch (d->props.type) {
  case ZE_DEVICE_TYPE_GPU:
    return PI_DEVICE_TYPE_GPU;
  case ZE_DEVICE_TYPE_CPU:
    return PI_DEVICE_TYPE_CPU;
  case ZE_DEVICE_TYPE_FPGA:
    return PI_DEVICE_TYPE_ACC;
  default:
    return PI_DEVICE_TYPE_CUSTOM;
  }
}

static pi_result lz_piDevicesGet(pi_platform platform,
                                 pi_device_type device_type_wanted,
                                 pi_uint32 num_entries, pi_device *devices,
                                 pi_uint32 *num_devices) {
  NEED(platform, PI_ERROR_INVALID_PLATFORM);
  REQUIRE(devices || num_devices);
  REQUIRE(num_entries > 0 || !devices);
  pi_uint32 n = 0;
  for (pi_uint32 i = 0; i < platform->ndevices; ++i) {
    pi_device d = platform->devices[i];
    bool want = device_type_wanted == PI_DEVICE_TYPE_ALL ||
                device_type_wanted == PI_DEVICE_TYPE_DEFAULT ||
                (device_type(d) & device_type_wanted);
    if (!want)
      continue;
    if (devices && n < num_entries)
      devices[n] = d;
    ++n;
  }
  if (num_devices)
    *num_devices = n;
  return PI_SUCCESS;
}

/* Level Zero floating-point flags as PI's: the first six bits agree; Level
 * Zero's bit 6 is correctly rounded divide/sqrt and bit 7 soft float. */
static pi_device_fp_config fp_config(ze_device_fp_flags_t f, bool have) {
  if (!have)
    return 0;
  pi_device_fp_config c = f & 0x3f;
  if (f & ZE_DEVICE_FP_FLAG_ROUNDED_DIVIDE_SQRT)
    c |= PI_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT;
  if (f & ZE_DEVICE_FP_FLAG_SOFT_FLOAT)
    c |= PI_FP_SOFT_FLOAT;
  return c;
}

/* Level Zero memory access capabilities as PI USM capabilities (same bits). */
static pi_usm_capabilities usm_caps(ze_memory_access_cap_flags_t f) {
  pi_usm_capabilities c = 0;
  if (f & ZE_MEMORY_ACCESS_CAP_FLAG_RW)
    c |= PI_USM_ACCESS;
  if (f & ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC)
    c |= PI_USM_ATOMIC_ACCESS;
  if (f & ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT)
    c |= PI_USM_CONCURRENT_ACCESS;
  if (f & ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC)
    c |= PI_USM_CONCURRENT_ATOMIC_ACCESS;
  return c;
}

static pi_result no_ze_answer(const struct info_out *o, pi_device d,
                              const char *why) {
  return fail(PI_ERROR_INVALID_VALUE,
              "%s: query 0x%x has no Level Zero answer for device '%s': %s",
              o->fn, o->query, dev_name(d), why);
}

static pi_result lz_piDeviceGetInfo(pi_device device,
                                    pi_device_info param_name,
                                    size_t param_value_size, void *param_value,
                                    size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  NEED(device, PI_ERROR_INVALID_DEVICE);
  pi_device d = device;
  const ze_device_properties_t *p = &d->props;
  const ze_device_compute_properties_t *c = &d->compute;
  const ze_device_module_properties_t *m = &d->module;
  const ze_device_image_properties_t *im = &d->image;
  bool fp16 = m->flags & ZE_DEVICE_MODULE_FLAG_FP16;
  bool fp64 = m->flags & ZE_DEVICE_MODULE_FLAG_FP64;
  uint32_t eus = p->numSlices * p->numSubslicesPerSlice * p->numEUsPerSubslice;
  char buf[512];
  switch (param_name) {
  case PI_DEVICE_INFO_TYPE:
    return put_u64(&o, device_type(d));
  case PI_DEVICE_INFO_VENDOR_ID:
    return put_u32(&o, p->vendorId);
  case PI_DEVICE_INFO_DEVICE_ID:
    return put_u32(&o, p->deviceId);
  case PI_DEVICE_INFO_MAX_COMPUTE_UNITS:
  case PI_DEVICE_INFO_GPU_EU_COUNT:
    return put_u32(&o, eus);
  case PI_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS:
    return put_u32(&o, 3);
  case PI_DEVICE_INFO_MAX_WORK_ITEM_SIZES: {
    size_t s[3] = {c->maxGroupSizeX, c->maxGroupSizeY, c->maxGroupSizeZ};
    return put_info(&o, s, sizeof s);
  }
  case PI_DEVICE_INFO_MAX_WORK_GROUP_SIZE:
    return put_size(&o, c->maxTotalGroupSize);
  case PI_DEVICE_INFO_SINGLE_FP_CONFIG:
    return put_u64(&o, fp_config(m->fp32flags, true));
  case PI_DEVICE_INFO_HALF_FP_CONFIG:
    return put_u64(&o, fp_config(m->fp16flags, fp16));
  case PI_DEVICE_INFO_DOUBLE_FP_CONFIG:
    return put_u64(&o, fp_config(m->fp64flags, fp64));
  case PI_DEVICE_INFO_QUEUE_PROPERTIES: /* == QUEUE_ON_HOST_PROPERTIES */
    return put_u64(&o, PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE |
                           PI_QUEUE_FLAG_PROFILING_ENABLE);
  case PI_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES:
    return put_u64(&o, 0);
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_CHAR:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR:
    return put_u32(&o, 16);
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_SHORT:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT:
    return put_u32(&o, 8);
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_INT:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT:
    return put_u32(&o, 4);
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG:
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_FLOAT:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT:
    return put_u32(&o, 1);
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_DOUBLE:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE:
    return put_u32(&o, fp64 ? 1 : 0);
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_HALF:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF:
    return put_u32(&o, fp16 ? 8 : 0);
  case PI_DEVICE_INFO_MAX_CLOCK_FREQUENCY:
    return put_u32(&o, p->coreClockRate);
  case PI_DEVICE_INFO_ADDRESS_BITS:
    return put_u32(&o, 64);
  case PI_DEVICE_INFO_MAX_MEM_ALLOC_SIZE:
  case PI_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE:
    return put_u64(&o, p->maxMemAllocSize);
  case PI_DEVICE_INFO_IMAGE_SUPPORT:
    return put_bool(&o, im->maxImageDims2D > 0);
  case PI_DEVICE_INFO_MAX_READ_IMAGE_ARGS:
    return put_u32(&o, im->maxReadImageArgs);
  case PI_DEVICE_INFO_MAX_WRITE_IMAGE_ARGS:
    return put_u32(&o, im->maxWriteImageArgs);
  case PI_DEVICE_INFO_IMAGE2D_MAX_WIDTH:
  case PI_DEVICE_INFO_IMAGE2D_MAX_HEIGHT:
    return put_size(&o, im->maxImageDims2D);
  case PI_DEVICE_INFO_IMAGE3D_MAX_WIDTH:
  case PI_DEVICE_INFO_IMAGE3D_MAX_HEIGHT:
  case PI_DEVICE_INFO_IMAGE3D_MAX_DEPTH:
    return put_size(&o, im->maxImageDims3D);
  case PI_DEVICE_INFO_IMAGE_MAX_BUFFER_SIZE:
    return put_size(&o, (size_t)im->maxImageBufferSize);
  case PI_DEVICE_INFO_IMAGE_MAX_ARRAY_SIZE:
    return put_size(&o, im->maxImageArraySlices);
  case PI_DEVICE_INFO_MAX_SAMPLERS:
    return put_u32(&o, im->maxSamplers);
  case PI_DEVICE_INFO_MAX_PARAMETER_SIZE:
    return put_size(&o, m->maxArgumentsSize);
  case PI_DEVICE_INFO_MEM_BASE_ADDR_ALIGN:
    return put_u32(&o, 64 * 8); /* bits: buffers are 64-byte aligned */
  case PI_DEVICE_INFO_GLOBAL_MEM_CACHE_TYPE:
    return put_u32(&o, PI_DEVICE_MEM_CACHE_TYPE_READ_WRITE_CACHE);
  case PI_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE:
    /* Level Zero 1.4 has no query for it; every Intel GPU since Gen9 has
     * 64-byte cache lines. */
    return put_u32(&o, 64);
  case PI_DEVICE_INFO_GLOBAL_MEM_CACHE_SIZE:
    return put_u64(&o, d->cache_size);
  case PI_DEVICE_INFO_GLOBAL_MEM_SIZE:
    return put_u64(&o, d->mem_size);
  case PI_DEVICE_INFO_MAX_CONSTANT_ARGS:
    return put_u32(&o, 64);
  case PI_DEVICE_INFO_LOCAL_MEM_TYPE:
    return put_u32(&o, PI_DEVICE_LOCAL_MEM_TYPE_LOCAL);
  case PI_DEVICE_INFO_LOCAL_MEM_SIZE:
    return put_u64(&o, c->maxSharedLocalMemory);
  case PI_DEVICE_INFO_ERROR_CORRECTION_SUPPORT:
    return put_bool(&o, p->flags & ZE_DEVICE_PROPERTY_FLAG_ECC);
  case PI_DEVICE_INFO_HOST_UNIFIED_MEMORY:
    return put_bool(&o, p->flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED);
  case PI_DEVICE_INFO_PROFILING_TIMER_RESOLUTION: {
    uint64_t hz = p->timerResolution ? p->timerResolution : 1;
    size_t ns = (size_t)(1000000000ull / hz);
    return put_size(&o, ns ? ns : 1);
  }
  case PI_DEVICE_INFO_ENDIAN_LITTLE:
  case PI_DEVICE_INFO_COMPILER_AVAILABLE:
  case PI_DEVICE_INFO_LINKER_AVAILABLE:
  case PI_DEVICE_INFO_PREFERRED_INTEROP_USER_SYNC:
  case PI_DEVICE_INFO_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS:
    return put_bool(&o, 1);
  case PI_DEVICE_INFO_AVAILABLE:
    return put_bool(&o, zeDeviceGetStatus(d->ze) == ZE_RESULT_SUCCESS);
  case PI_DEVICE_INFO_EXECUTION_CAPABILITIES:
    return put_u64(&o, PI_DEVICE_EXEC_CAPABILITIES_KERNEL);
  case PI_DEVICE_INFO_BUILT_IN_KERNELS:
  case PI_DEVICE_INFO_OPENCL_C_VERSION: /* Level Zero takes no OpenCL C */
    return put_str(&o, "");
  case PI_DEVICE_INFO_PLATFORM:
    return put_ptr(&o, d->platform);
  case PI_DEVICE_INFO_REFERENCE_COUNT:
    return put_u32(&o, atomic_load(&d->refs));
  case PI_DEVICE_INFO_IL_VERSION:
    snprintf(buf, sizeof buf, "SPIR-V_%u.%u",
             (unsigned)ZE_MAJOR_VERSION(m->spirvVersionSupported),
             (unsigned)ZE_MINOR_VERSION(m->spirvVersionSupported));
    return put_str(&o, buf);
  case PI_DEVICE_INFO_NAME:
    return put_info(&o, p->name, strnlen(p->name, ZE_MAX_DEVICE_NAME) + 1);
  case PI_DEVICE_INFO_VENDOR:
    if (p->vendorId == 0x8086)
      return put_str(&o, "Intel(R) Corporation");
    snprintf(buf, sizeof buf, "PCI vendor 0x%04x", (unsigned)p->vendorId);
    return put_str(&o, buf);
  case PI_DEVICE_INFO_DRIVER_VERSION: {
    uint32_t v = d->platform->driver_version;
    snprintf(buf, sizeof buf, "%u.%u.%u", (unsigned)(v >> 24),
             (unsigned)((v >> 16) & 0xff), (unsigned)(v & 0xffff));
    return put_str(&o, buf);
  }
  case PI_DEVICE_INFO_PROFILE:
    return put_str(&o, "FULL_PROFILE");
  case PI_DEVICE_INFO_VERSION:
  case PI_DEVICE_INFO_BACKEND_VERSION:
    snprintf(buf, sizeof buf, "%u.%u",
             (unsigned)ZE_MAJOR_VERSION(d->platform->api_version),
             (unsigned)ZE_MINOR_VERSION(d->platform->api_version));
    return put_str(&o, buf);
  case PI_DEVICE_INFO_EXTENSIONS:
    /* The OpenCL names of what the device's SPIR-V consumer supports. */
    snprintf(buf, sizeof buf,
             "cl_khr_il_program cl_khr_global_int32_base_atomics "
             "cl_khr_global_int32_extended_atomics cl_intel_subgroups "
             "cl_intel_required_subgroup_size "
             "cl_intel_unified_shared_memory%s%s%s",
             fp16 ? " cl_khr_fp16" : "", fp64 ? " cl_khr_fp64" : "",
             (m->flags & ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS)
                 ? " cl_khr_int64_base_atomics cl_khr_int64_extended_atomics"
                 : "");
    return put_str(&o, buf);
  case PI_DEVICE_INFO_PRINTF_BUFFER_SIZE:
    return put_size(&o, m->printfBufferSize);
  case PI_DEVICE_INFO_PARENT_DEVICE:
    return put_ptr(&o, d->parent);
  case PI_DEVICE_INFO_PARTITION_PROPERTIES: {
    pi_result r = device_subs(FN, d);
    if (r != PI_SUCCESS)
      return r;
    pi_device_partition_property v[2] = {
        PI_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, 0};
    return d->nsubs ? put_info(&o, v, sizeof v[0])
                    : put_info(&o, &v[1], sizeof v[1]);
  }
  case PI_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES: {
    pi_result r = device_subs(FN, d);
    return r != PI_SUCCESS ? r : put_u32(&o, d->nsubs);
  }
  case PI_DEVICE_INFO_PARTITION_AFFINITY_DOMAIN: {
    pi_result r = device_subs(FN, d);
    if (r != PI_SUCCESS)
      return r;
    return put_u64(&o, d->nsubs ? PI_DEVICE_AFFINITY_DOMAIN_NUMA |
                                      PI_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE
                                : 0);
  }
  case PI_DEVICE_INFO_PARTITION_TYPE: {
    pi_device_partition_property v[3] = {
        PI_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
        PI_DEVICE_AFFINITY_DOMAIN_NUMA, 0};
    return d->parent ? put_info(&o, v, sizeof v)
                     : put_info(&o, &v[2], sizeof v[2]);
  }
  case PI_DEVICE_INFO_MAX_NUM_SUB_GROUPS: {
    uint32_t smallest = UINT32_MAX;
    for (uint32_t i = 0; i < c->numSubGroupSizes && i < ZE_SUBGROUPSIZE_COUNT;
         ++i)
      if (c->subGroupSizes[i] && c->subGroupSizes[i] < smallest)
        smallest = c->subGroupSizes[i];
    return put_u32(&o, smallest == UINT32_MAX
                           ? 1
                           : c->maxTotalGroupSize / smallest);
  }
  case PI_DEVICE_INFO_SUB_GROUP_SIZES_INTEL: {
    /* size_t[], as DPC++ and the OpenCL plugin return them. */
    size_t s[ZE_SUBGROUPSIZE_COUNT];
    uint32_t n = c->numSubGroupSizes < ZE_SUBGROUPSIZE_COUNT
                     ? c->numSubGroupSizes
                     : ZE_SUBGROUPSIZE_COUNT;
    for (uint32_t i = 0; i < n; ++i)
      s[i] = c->subGroupSizes[i];
    if (n == 0) {
      s[0] = 1;
      n = 1;
    }
    return put_info(&o, s, n * sizeof s[0]);
  }
  case PI_DEVICE_INFO_USM_HOST_SUPPORT:
    return put_u64(&o, usm_caps(d->access.hostAllocCapabilities));
  case PI_DEVICE_INFO_USM_DEVICE_SUPPORT:
    return put_u64(&o, usm_caps(d->access.deviceAllocCapabilities));
  case PI_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT:
    return put_u64(&o, usm_caps(d->access.sharedSingleDeviceAllocCapabilities));
  case PI_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT:
    return put_u64(&o, usm_caps(d->access.sharedCrossDeviceAllocCapabilities));
  case PI_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT:
    return put_u64(&o, usm_caps(d->access.sharedSystemAllocCapabilities));
  case PI_DEVICE_INFO_UUID:
    return put_info(&o, p->uuid.id, sizeof p->uuid.id);
  case PI_DEVICE_INFO_PCI_ADDRESS: {
    ze_pci_ext_properties_t pci = {.stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES};
    pi_result r = ZE_CALL(zeDevicePciGetPropertiesExt, d->ze, &pci);
    if (r != PI_SUCCESS)
      return r;
    snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", (unsigned)pci.address.domain,
             (unsigned)pci.address.bus, (unsigned)pci.address.device,
             (unsigned)pci.address.function);
    return put_str(&o, buf);
  }
  case PI_DEVICE_INFO_GPU_EU_SIMD_WIDTH:
    return put_u32(&o, p->physicalEUSimdWidth);
  case PI_DEVICE_INFO_GPU_SLICES:
    return put_u32(&o, p->numSlices);
  case PI_DEVICE_INFO_GPU_SUBSLICES_PER_SLICE:
    return put_u32(&o, p->numSubslicesPerSlice);
  case PI_DEVICE_INFO_GPU_EU_COUNT_PER_SUBSLICE:
    return put_u32(&o, p->numEUsPerSubslice);
  case PI_DEVICE_INFO_GPU_HW_THREADS_PER_EU:
    return put_u32(&o, p->numThreadsPerEU);
  case PI_EXT_INTEL_DEVICE_INFO_MEMORY_CLOCK_RATE:
    return put_u32(&o, d->mem_clock);
  case PI_EXT_INTEL_DEVICE_INFO_MEMORY_BUS_WIDTH:
    return put_u32(&o, d->mem_bus);
  case PI_EXT_INTEL_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES: {
    int32_t n = (int32_t)d->nqueues;
    return put_info(&o, &n, sizeof n);
  }
  case PI_DEVICE_INFO_ATOMIC_64:
    return put_bool(&o, m->flags & ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS);
  case PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
  case PI_EXT_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES:
    /* SPIR-V consumers of Level Zero take every memory order. */
    return put_u64(&o, PI_MEMORY_ORDER_RELAXED | PI_MEMORY_ORDER_ACQUIRE |
                           PI_MEMORY_ORDER_RELEASE | PI_MEMORY_ORDER_ACQ_REL |
                           PI_MEMORY_ORDER_SEQ_CST);
  case PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
  case PI_EXT_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES:
    return put_u64(&o, PI_MEMORY_SCOPE_WORK_ITEM | PI_MEMORY_SCOPE_SUB_GROUP |
                           PI_MEMORY_SCOPE_WORK_GROUP | PI_MEMORY_SCOPE_DEVICE |
                           PI_MEMORY_SCOPE_SYSTEM);
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_GLOBAL_WORK_GROUPS:
    return put_size(&o, (size_t)c->maxGroupCountX * c->maxGroupCountY *
                            c->maxGroupCountZ);
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_1D:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_2D:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_3D: {
    size_t s[3] = {c->maxGroupCountX, c->maxGroupCountY, c->maxGroupCountZ};
    size_t dims = param_name == PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_1D ? 1
                  : param_name == PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_2D
                      ? 2
                      : 3;
    return put_info(&o, s, dims * sizeof s[0]);
  }
  case PI_EXT_INTEL_DEVICE_INFO_ESIMD_SUPPORT:
    return put_bool(&o, p->vendorId == 0x8086 &&
                            p->type == ZE_DEVICE_TYPE_GPU);
  case PI_DEVICE_INFO_BUILD_ON_SUBDEVICE:
    /* A program built for a root device serves its sub-devices too. */
    return put_bool(&o, 0);
  case PI_DEVICE_INFO_IMAGE_SRGB:
  case PI_EXT_ONEAPI_DEVICE_INFO_BFLOAT16_MATH_FUNCTIONS:
  case PI_EXT_ONEAPI_DEVICE_INFO_CUDA_ASYNC_BARRIER:
  case PI_EXT_CODEPLAY_DEVICE_INFO_SUPPORTS_FUSION:
  case PI_EXT_INTEL_DEVICE_INFO_MEM_CHANNEL_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_BINDLESS_IMAGES_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_BINDLESS_IMAGES_SHARED_USM_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_BINDLESS_IMAGES_1D_USM_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_BINDLESS_IMAGES_2D_USM_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_MIPMAP_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_MIPMAP_ANISOTROPY_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_MIPMAP_LEVEL_REFERENCE_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_INTEROP_MEMORY_IMPORT_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_INTEROP_MEMORY_EXPORT_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_INTEROP_SEMAPHORE_IMPORT_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_INTEROP_SEMAPHORE_EXPORT_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_COMMAND_BUFFER_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_COMMAND_BUFFER_UPDATE_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_CUBEMAP_SUPPORT:
  case PI_EXT_ONEAPI_DEVICE_INFO_CUBEMAP_SEAMLESS_FILTERING_SUPPORT:
    return put_bool(&o, 0); /* features this plugin does not offer */
  case PI_EXT_ONEAPI_DEVICE_INFO_IP_VERSION:
    return no_ze_answer(&o, d, "the IP version needs ze_device_ip_version_ext_t "
                               "(Level Zero 1.5 headers; these are 1.4)");
  case PI_DEVICE_INFO_MAX_MEM_BANDWIDTH:
  case PI_EXT_INTEL_DEVICE_INFO_FREE_MEMORY:
    return no_ze_answer(&o, d, "it needs Sysman (zes), which this plugin does "
                               "not use");
  case PI_EXT_CODEPLAY_DEVICE_INFO_MAX_REGISTERS_PER_WORK_GROUP:
    return no_ze_answer(&o, d, "registers per work-group are a CUDA notion");
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_GROUP_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_SUB_GROUP_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_SUB_GROUP_PROGRESS_AT_WORK_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_ITEM_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_ITEM_PROGRESS_AT_WORK_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_ITEM_PROGRESS_AT_SUB_GROUP_LEVEL:
    return no_ze_answer(&o, d, "Level Zero states no forward-progress "
                               "guarantees");
  case PI_EXT_ONEAPI_DEVICE_INFO_IMAGE_PITCH_ALIGN:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_IMAGE_LINEAR_WIDTH:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_IMAGE_LINEAR_HEIGHT:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_IMAGE_LINEAR_PITCH:
  case PI_EXT_ONEAPI_DEVICE_INFO_MIPMAP_MAX_ANISOTROPY:
    return no_ze_answer(&o, d, "bindless images and mipmaps are not offered");
  case PI_EXT_ONEAPI_DEVICE_INFO_MATRIX_COMBINATIONS:
    return no_ze_answer(&o, d, "Level Zero does not list matrix combinations");
  /* Level Zero 1.4 has no composite devices: none has components, none is
   * part of one. */
  case PI_EXT_ONEAPI_DEVICE_INFO_COMPONENT_DEVICES:
    return put_info(&o, NULL, 0);
  case PI_EXT_ONEAPI_DEVICE_INFO_COMPOSITE_DEVICE:
    return put_ptr(&o, NULL);
  default:
    return unknown_query(&o);
  }
}

/* Level Zero partitions a device only into its sub-devices (one per tile):
 * by affinity domain NUMA or NEXT_PARTITIONABLE. */
static pi_result lz_piDevicePartition(
    pi_device device, const pi_device_partition_property *properties,
    pi_uint32 num_devices, pi_device *out_devices, pi_uint32 *out_num_devices) {
  NEED(device, PI_ERROR_INVALID_DEVICE);
  REQUIRE(properties != NULL);
  if (properties[0] != PI_DEVICE_PARTITION_BY_AFFINITY_DOMAIN ||
      (properties[1] != PI_DEVICE_AFFINITY_DOMAIN_NUMA &&
       properties[1] != PI_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: Level Zero devices split only into their sub-devices: use "
                "PI_DEVICE_PARTITION_BY_AFFINITY_DOMAIN with NUMA or "
                "NEXT_PARTITIONABLE (got property 0x%llx)",
                FN, (unsigned long long)properties[0]);
  pi_result r = device_subs(FN, device);
  if (r != PI_SUCCESS)
    return r;
  if (device->nsubs == 0)
    return fail(PI_ERROR_DEVICE_PARTITION_FAILED,
                "%s: device '%s' has no sub-devices", FN, dev_name(device));
  if (out_devices) {
    if (num_devices < device->nsubs)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: device '%s' has %u sub-devices but num_devices is %u",
                  FN, dev_name(device), (unsigned)device->nsubs,
                  (unsigned)num_devices);
    for (pi_uint32 i = 0; i < device->nsubs; ++i) {
      out_devices[i] = device->subs[i];
      ref_retain(&device->subs[i]->refs);
    }
  }
  if (out_num_devices)
    *out_num_devices = device->nsubs;
  return PI_SUCCESS;
}

/* Devices live as long as the plugin; the count is kept for queries. */
static pi_result lz_piDeviceRetain(pi_device device) {
  NEED(device, PI_ERROR_INVALID_DEVICE);
  if (device->parent)
    ref_retain(&device->refs);
  return PI_SUCCESS;
}

static pi_result lz_piDeviceRelease(pi_device device) {
  NEED(device, PI_ERROR_INVALID_DEVICE);
  if (device->parent) {
    unsigned n = atomic_load(&device->refs);
    while (n > 1 && !atomic_compare_exchange_weak(&device->refs, &n, n - 1))
      ;
  }
  return PI_SUCCESS;
}

static bool is_spirv(const unsigned char *b, size_t n) {
  uint32_t magic;
  if (!b || n < 20 || n % 4)
    return false;
  memcpy(&magic, b, sizeof magic);
  return magic == SPIRV_MAGIC || magic == __builtin_bswap32(SPIRV_MAGIC);
}

/* Picks a native image for the device's generation ("spir64_gen") first,
 * then SPIR-V ("spir64", or any image in SPIR-V format). OpenCL C source and
 * every other target are refused, listing what was offered. */
static pi_result lz_piextDeviceSelectBinary(pi_device device,
                                            pi_device_binary *binaries,
                                            pi_uint32 num_binaries,
                                            pi_uint32 *selected_binary_ind) {
  NEED(device, PI_ERROR_INVALID_DEVICE);
  REQUIRE(selected_binary_ind != NULL);
  REQUIRE(binaries != NULL || num_binaries == 0);
  *selected_binary_ind = UINT32_MAX;
  pi_uint32 native = UINT32_MAX, spirv = UINT32_MAX;
  for (pi_uint32 i = num_binaries; i-- > 0;) {
    const struct pi_device_binary_struct *b = binaries[i];
    if (!b)
      continue;
    const char *t = b->DeviceTargetSpec ? b->DeviceTargetSpec : "";
    if (strcmp(t, __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64_GEN) == 0 &&
        (b->Format == PI_DEVICE_BINARY_TYPE_NATIVE ||
         b->Format == PI_DEVICE_BINARY_TYPE_NONE))
      native = i;
    bool spirv_target =
        strcmp(t, __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64) == 0 ||
        strcmp(t, __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64_GEN) == 0;
    bool spirv_format =
        b->Format == PI_DEVICE_BINARY_TYPE_SPIRV ||
        (b->Format == PI_DEVICE_BINARY_TYPE_NONE && b->BinaryStart &&
         b->BinaryEnd > b->BinaryStart &&
         is_spirv(b->BinaryStart, (size_t)(b->BinaryEnd - b->BinaryStart)));
    if (spirv_target && spirv_format)
      spirv = i;
  }
  if (native != UINT32_MAX || spirv != UINT32_MAX) {
    *selected_binary_ind = native != UINT32_MAX ? native : spirv;
    return PI_SUCCESS;
  }
  char offered[512];
  return fail(PI_ERROR_INVALID_BINARY,
              "%s: no image fits Level Zero device '%s', which takes SPIR-V "
              "(target spir64 or spir64_gen, format SPIR-V) or native "
              "spir64_gen images, and no OpenCL C source; offered: %s",
              FN, dev_name(device),
              binaries_offered(binaries, num_binaries, offered,
                               sizeof offered));
}

static pi_result lz_piextDeviceGetNativeHandle(pi_device device,
                                               pi_native_handle *nativeHandle) {
  NEED(device, PI_ERROR_INVALID_DEVICE);
  return native_of(FN, device->ze, nativeHandle);
}

static pi_result lz_piextDeviceCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_platform platform, pi_device *device) {
  REQUIRE(nativeHandle != 0 && device != NULL);
  pi_result r = discover(FN);
  if (r != PI_SUCCESS)
    return r;
  pi_device d = find_device(platform, (ze_device_handle_t)nativeHandle);
  for (pi_uint32 p = 0; !d && p < nplatforms; ++p)
    for (pi_uint32 i = 0; !d && i < platforms[p]->ndevices; ++i)
      if ((!platform || platforms[p] == platform) &&
          device_subs(FN, platforms[p]->devices[i]) == PI_SUCCESS)
        d = find_device(platforms[p], (ze_device_handle_t)nativeHandle);
  if (!d)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: 0x%" PRIxPTR " is no device or sub-device of %s", FN,
                (uintptr_t)nativeHandle,
                platform ? "the platform" : "any Level Zero driver");
  *device = d;
  return PI_SUCCESS;
}

/* zeDeviceGetGlobalTimestamps: the host time is in nanoseconds, the device
 * time in timer ticks. */
static pi_result lz_piGetDeviceAndHostTimer(pi_device Device,
                                            uint64_t *DeviceTime,
                                            uint64_t *HostTime) {
  NEED(Device, PI_ERROR_INVALID_DEVICE);
  uint64_t host = 0, dev = 0;
  pi_result r = ZE_CALL(zeDeviceGetGlobalTimestamps, Device->ze, &host, &dev);
  if (r != PI_SUCCESS)
    return r;
  if (DeviceTime)
    *DeviceTime = ticks_to_ns(Device, dev);
  if (HostTime)
    *HostTime = host;
  return PI_SUCCESS;
}

/* ---- Contexts -------------------------------------------------------------- */

static pi_result context_check_devices(const char *fn, pi_uint32 n,
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

static void context_retain(pi_context c) { ref_retain(&c->refs); }

/* Drops a reference; the last one destroys the event pools and the Level
 * Zero context, then runs the extended deleter. */
static pi_result context_release(const char *fn, pi_context c) {
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
 * for them with zeContextCreateEx. No context properties are known. */
static pi_result lz_piContextCreate(
    const pi_context_properties *properties, pi_uint32 num_devices,
    const pi_device *devices,
    void (*pfn_notify)(const char *errinfo, const void *private_info,
                       size_t cb, void *user_data),
    void *user_data, pi_context *ret_context) {
  (void)pfn_notify; /* Level Zero reports errors by result, not callback */
  (void)user_data;
  REQUIRE(ret_context != NULL);
  *ret_context = NULL;
  if (properties && properties[0])
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: context property 0x%llx means nothing to Level Zero", FN,
                (unsigned long long)properties[0]);
  pi_result r = context_check_devices(FN, num_devices, devices);
  if (r != PI_SUCCESS)
    return r;
  ze_device_handle_t *zd = calloc(num_devices, sizeof *zd);
  if (!zd)
    return out_of_memory(FN);
  for (pi_uint32 i = 0; i < num_devices; ++i)
    zd[i] = devices[i]->ze;
  ze_context_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
  ze_context_handle_t ze = NULL;
  r = ZE_CALL(zeContextCreateEx, devices[0]->platform->ze, &desc, num_devices,
              zd, &ze);
  free(zd);
  if (r == PI_SUCCESS &&
      (r = context_new(FN, ze, num_devices, devices, true, ret_context)) !=
          PI_SUCCESS)
    zeContextDestroy(ze);
  return r;
}

/* Whether the context supports an atomic capability: what all its devices
 * have (every device reports the full sets, see piDeviceGetInfo). */
static pi_result lz_piContextGetInfo(pi_context context,
                                     pi_context_info param_name,
                                     size_t param_value_size,
                                     void *param_value,
                                     size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  pi_device_info q;
  switch (param_name) {
  case PI_CONTEXT_INFO_DEVICES:
    return put_info(&o, context->devices,
                    context->ndevices * sizeof *context->devices);
  case PI_CONTEXT_INFO_PLATFORM:
    return put_ptr(&o, context->platform);
  case PI_CONTEXT_INFO_NUM_DEVICES:
    return put_u32(&o, context->ndevices);
  case PI_CONTEXT_INFO_PROPERTIES:
    return put_info(&o, NULL, 0);
  case PI_CONTEXT_INFO_REFERENCE_COUNT:
    return put_u32(&o, atomic_load(&context->refs));
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_FILL2D_SUPPORT:
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_MEMSET2D_SUPPORT:
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT:
    return put_bool(&o, 1); /* region copies, row-by-row fills */
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
    return unknown_query(&o);
  }
  pi_bitfield all = ~(pi_bitfield)0;
  for (pi_uint32 i = 0; i < context->ndevices; ++i) {
    pi_bitfield caps = 0;
    pi_result r = lz_piDeviceGetInfo(context->devices[i], q, sizeof caps,
                                     &caps, NULL);
    if (r != PI_SUCCESS)
      return r;
    all &= caps;
  }
  return put_u64(&o, all);
}

static pi_result lz_piContextRetain(pi_context context) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  context_retain(context);
  return PI_SUCCESS;
}

static pi_result lz_piContextRelease(pi_context context) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  return context_release(FN, context);
}

/* Runs when the context is destroyed, after its Level Zero context. */
static pi_result lz_piextContextSetExtendedDeleter(
    pi_context context, pi_context_extended_deleter func, void *user_data) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(func != NULL);
  pthread_mutex_lock(&context->lock);
  context->deleter = func;
  context->deleter_data = user_data;
  pthread_mutex_unlock(&context->lock);
  return PI_SUCCESS;
}

static pi_result lz_piextContextGetNativeHandle(pi_context context,
                                                pi_native_handle *nativeHandle) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  return native_of(FN, context->ze, nativeHandle);
}

/* A Level Zero context does not know its devices: they must be given. */
static pi_result lz_piextContextCreateWithNativeHandle(
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

static bool context_has_device(pi_context c, pi_device d) {
  for (pi_uint32 i = 0; i < c->ndevices; ++i)
    if (c->devices[i] == d || c->devices[i] == d->parent)
      return true;
  return false;
}

/* ---- Events ------------------------------------------------------------------
 * Every event comes from a host-visible pool of its context; profiling
 * queues take theirs from pools with kernel timestamps. */

static pi_result event_new(const char *fn, pi_context c, pi_queue q,
                           pi_command_type type, bool timestamps,
                           pi_event *out) {
  pi_event e = calloc(1, sizeof *e);
  if (!e)
    return out_of_memory(fn);
  pthread_mutex_lock(&c->lock);
  struct event_pool *pool = c->pools;
  while (pool && (pool->timestamps != timestamps || pool->used == UINT64_MAX))
    pool = pool->next;
  pi_result r = PI_SUCCESS;
  if (!pool) {
    pool = calloc(1, sizeof *pool);
    ze_device_handle_t zd[64];
    uint32_t nd = c->ndevices < 64 ? c->ndevices : 64;
    for (uint32_t i = 0; i < nd; ++i)
      zd[i] = c->devices[i]->ze;
    ze_event_pool_desc_t desc = {
        .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
        .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE |
                 (timestamps ? ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP : 0),
        .count = POOL_EVENTS};
    r = pool ? check_ze(fn, "zeEventPoolCreate",
                        zeEventPoolCreate(c->ze, &desc, nd, zd, &pool->ze))
             : out_of_memory(fn);
    if (r == PI_SUCCESS) {
      pool->timestamps = timestamps;
      pool->next = c->pools;
      c->pools = pool;
    } else {
      free(pool);
      pool = NULL;
    }
  }
  uint32_t slot = 0;
  if (r == PI_SUCCESS) {
    while (pool->used & (1ull << slot))
      ++slot;
    pool->used |= 1ull << slot;
  }
  pthread_mutex_unlock(&c->lock);
  if (r == PI_SUCCESS) {
    ze_event_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                            .index = slot,
                            .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                            .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    r = check_ze(fn, "zeEventCreate", zeEventCreate(pool->ze, &desc, &e->ze));
    if (r != PI_SUCCESS) {
      pthread_mutex_lock(&c->lock);
      pool->used &= ~(1ull << slot);
      pthread_mutex_unlock(&c->lock);
    }
  }
  if (r != PI_SUCCESS) {
    free(e);
    return r;
  }
  e->context = c;
  e->queue = q;
  e->type = type;
  e->timestamps = timestamps;
  e->pool = pool;
  e->slot = slot;
  atomic_init(&e->refs, 1);
  context_retain(c);
  if (q)
    atomic_fetch_add(&q->total, 1);
  *out = e;
  return PI_SUCCESS;
}

static void queue_drop(pi_queue q);

static pi_result event_release(const char *fn, pi_event e) {
  if (!ref_release(&e->refs))
    return PI_SUCCESS;
  pi_result r = PI_SUCCESS;
  if (e->pool || e->owns_native)
    r = check_ze(fn, "zeEventDestroy", zeEventDestroy(e->ze));
  if (e->pool) {
    pthread_mutex_lock(&e->context->lock);
    e->pool->used &= ~(1ull << e->slot);
    pthread_mutex_unlock(&e->context->lock);
  }
  if (e->queue)
    queue_drop(e->queue);
  pi_result cr = context_release(fn, e->context);
  free(e);
  return r == PI_SUCCESS ? cr : r;
}

static void event_retain(pi_event e) { ref_retain(&e->refs); }

/* Waits for an event without end. */
static pi_result event_wait(const char *fn, pi_event e) {
  return check_ze(fn, "zeEventHostSynchronize",
                  zeEventHostSynchronize(e->ze, UINT64_MAX));
}

/* ---- Queues -------------------------------------------------------------------
 * A queue submits each command at once: on an immediate command list by
 * appending it, else as a command list of its own executed on the Level
 * Zero command queue. Each command signals a fresh event; in-order queues
 * make each command wait for the previous one's. The submissions are kept
 * until their events complete, then their command lists are reset for
 * reuse. */

static const pi_queue_properties known_queue_flags =
    PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE |
    PI_QUEUE_FLAG_PROFILING_ENABLE | PI_QUEUE_FLAG_ON_DEVICE |
    PI_QUEUE_FLAG_ON_DEVICE_DEFAULT | PI_EXT_ONEAPI_QUEUE_FLAG_DISCARD_EVENTS |
    PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW |
    PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_HIGH |
    PI_EXT_QUEUE_FLAG_SUBMISSION_NO_IMMEDIATE |
    PI_EXT_QUEUE_FLAG_SUBMISSION_IMMEDIATE;

static bool in_order(pi_queue q) {
  return !(q->flags & PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
}

/* Frees a submission's command list (or keeps it for reuse) and drops its
 * event; the caller holds the queue lock. */
static void submission_end(pi_queue q, struct submission *s) {
  if (s->list) {
    if (q->nfree < FREE_LISTS &&
        zeCommandListReset(s->list) == ZE_RESULT_SUCCESS)
      q->free[q->nfree++] = s->list;
    else
      zeCommandListDestroy(s->list);
  }
  if (s->free_after)
    zeMemFree(q->context->ze, s->free_after);
  event_release("piQueue", s->event);
}

/* Ends the submissions whose events completed (all of them after waiting
 * when `wait`); the caller holds the queue lock. */
static pi_result queue_reap(const char *fn, pi_queue q, bool wait) {
  pi_result r = PI_SUCCESS;
  size_t kept = 0;
  for (size_t i = 0; i < q->nsubs; ++i) {
    struct submission *s = &q->subs[i];
    ze_result_t zr = wait ? zeEventHostSynchronize(s->event->ze, UINT64_MAX)
                          : zeEventQueryStatus(s->event->ze);
    if (zr == ZE_RESULT_NOT_READY) {
      q->subs[kept++] = *s;
      continue;
    }
    if (zr != ZE_RESULT_SUCCESS && r == PI_SUCCESS)
      r = check_ze(fn, wait ? "zeEventHostSynchronize" : "zeEventQueryStatus",
                   zr);
    submission_end(q, s);
  }
  q->nsubs = kept;
  return r;
}

/* Destroys the Level Zero side of a queue whose PI references are gone. */
static pi_result queue_destroy(const char *fn, pi_queue q) {
  pthread_mutex_lock(&q->lock);
  pi_result r = PI_SUCCESS;
  if (q->zeq)
    r = check_ze(fn, "zeCommandQueueSynchronize",
                 zeCommandQueueSynchronize(q->zeq, UINT64_MAX));
  pi_result rr = queue_reap(fn, q, true);
  r = r == PI_SUCCESS ? rr : r;
  pi_event last = q->last;
  q->last = NULL;
  for (size_t i = 0; i < q->nfree; ++i)
    zeCommandListDestroy(q->free[i]);
  q->nfree = 0;
  if (q->owns_native) {
    if (q->zeq)
      rr = check_ze(fn, "zeCommandQueueDestroy", zeCommandQueueDestroy(q->zeq));
    if (q->imm)
      rr = check_ze(fn, "zeCommandListDestroy", zeCommandListDestroy(q->imm));
    r = r == PI_SUCCESS ? rr : r;
  }
  q->dead = true;
  pthread_mutex_unlock(&q->lock);
  if (last)
    event_release(fn, last);
  return r;
}

/* Drops one of the queue's total references; the last frees it. */
static void queue_drop(pi_queue q) {
  if (atomic_fetch_sub(&q->total, 1) != 1)
    return;
  pi_context c = q->context;
  free(q->subs);
  pthread_mutex_destroy(&q->lock);
  free(q);
  context_release("piQueueRelease", c);
}

static pi_result queue_new(const char *fn, pi_context context, pi_device device,
                           pi_queue_properties flags, pi_queue *out) {
  pi_queue q = calloc(1, sizeof *q);
  if (!q)
    return out_of_memory(fn);
  q->context = context;
  q->device = device;
  q->flags = flags;
  atomic_init(&q->refs, 1);
  atomic_init(&q->total, 1);
  pthread_mutex_init(&q->lock, NULL);
  context_retain(context);
  *out = q;
  return PI_SUCCESS;
}

static pi_result create_queue(const char *fn, pi_context context,
                              pi_device device, pi_queue_properties flags,
                              uint32_t index, pi_queue *queue) {
  if (!queue)
    return fail(PI_ERROR_INVALID_VALUE, "%s: queue is NULL", fn);
  *queue = NULL;
  if (!context)
    return fail(PI_ERROR_INVALID_CONTEXT, "%s: context is NULL", fn);
  if (!device)
    return fail(PI_ERROR_INVALID_DEVICE, "%s: device is NULL", fn);
  if (flags & ~known_queue_flags)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown queue flags 0x%llx", fn,
                (unsigned long long)(flags & ~known_queue_flags));
  if (flags & (PI_QUEUE_FLAG_ON_DEVICE | PI_QUEUE_FLAG_ON_DEVICE_DEFAULT))
    return fail(PI_ERROR_INVALID_QUEUE_PROPERTIES,
                "%s: Level Zero has no on-device queues", fn);
  if ((flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW) &&
      (flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_HIGH))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a queue cannot have both low and high priority", fn);
  if ((flags & PI_EXT_QUEUE_FLAG_SUBMISSION_IMMEDIATE) &&
      (flags & PI_EXT_QUEUE_FLAG_SUBMISSION_NO_IMMEDIATE))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a queue cannot both use and not use an immediate command "
                "list",
                fn);
  if (!context_has_device(context, device))
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: device '%s' is not in the context", fn, dev_name(device));
  if (index >= device->nqueues)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: compute index %u requested, but device '%s' has %u "
                "compute queue(s)",
                fn, (unsigned)index, dev_name(device),
                (unsigned)device->nqueues);
  ze_command_queue_desc_t desc = {
      .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
      .ordinal = device->ordinal,
      .index = index,
      .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
      .priority = (flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW)
                      ? ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_LOW
                  : (flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_HIGH)
                      ? ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH
                      : ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  pi_queue q;
  pi_result r = queue_new(fn, context, device, flags, &q);
  if (r != PI_SUCCESS)
    return r;
  q->ordinal = device->ordinal;
  q->index = index;
  q->owns_native = true;
  if (flags & PI_EXT_QUEUE_FLAG_SUBMISSION_IMMEDIATE)
    r = check_ze(fn, "zeCommandListCreateImmediate",
                 zeCommandListCreateImmediate(context->ze, device->ze, &desc,
                                              &q->imm));
  else
    r = check_ze(fn, "zeCommandQueueCreate",
                 zeCommandQueueCreate(context->ze, device->ze, &desc, &q->zeq));
  if (r != PI_SUCCESS) {
    q->owns_native = false;
    atomic_store(&q->refs, 0);
    queue_drop(q);
    return r;
  }
  *queue = q;
  return PI_SUCCESS;
}

static pi_result lz_piQueueCreate(pi_context context, pi_device device,
                                  pi_queue_properties properties,
                                  pi_queue *queue) {
  return create_queue(FN, context, device, properties, 0, queue);
}

/* Reads {PI_QUEUE_FLAGS, flags, PI_QUEUE_COMPUTE_INDEX, index, 0}. */
static pi_result queue_properties(const char *fn, const pi_queue_properties *p,
                                  pi_queue_properties *flags,
                                  uint32_t *index) {
  pi_queue_properties i;
  *index = 0;
  TRY(queue_properties_read(fn, p, flags, &i));
  if (i > UINT32_MAX)
    return fail(PI_ERROR_INVALID_VALUE, "%s: compute index %llu is too large",
                fn, (unsigned long long)i);
  *index = (uint32_t)i;
  return PI_SUCCESS;
}

static pi_result lz_piextQueueCreate(pi_context context, pi_device device,
                                     pi_queue_properties *properties,
                                     pi_queue *queue) {
  pi_queue_properties flags;
  uint32_t index;
  pi_result r = queue_properties(FN, properties, &flags, &index);
  return r != PI_SUCCESS ? r
                         : create_queue(FN, context, device, flags, index,
                                        queue);
}

static pi_result lz_piQueueGetInfo(pi_queue command_queue,
                                   pi_queue_info param_name,
                                   size_t param_value_size, void *param_value,
                                   size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  pi_queue q = command_queue;
  NEED(q, PI_ERROR_INVALID_QUEUE);
  switch (param_name) {
  case PI_QUEUE_INFO_CONTEXT:
    return put_ptr(&o, q->context);
  case PI_QUEUE_INFO_DEVICE:
    return put_ptr(&o, q->device);
  case PI_QUEUE_INFO_PROPERTIES:
    return put_u64(&o, q->flags);
  case PI_QUEUE_INFO_REFERENCE_COUNT:
    return put_u32(&o, atomic_load(&q->refs));
  case PI_QUEUE_INFO_DEVICE_DEFAULT:
  case PI_QUEUE_INFO_SIZE:
    return fail(PI_ERROR_INVALID_QUEUE,
                "%s: query 0x%x is about on-device queues, which Level Zero "
                "does not have",
                FN, (unsigned)param_name);
  case PI_EXT_ONEAPI_QUEUE_INFO_EMPTY: {
    pthread_mutex_lock(&q->lock);
    pi_result r = queue_reap(FN, q, false);
    bool empty = q->nsubs == 0;
    pthread_mutex_unlock(&q->lock);
    return r != PI_SUCCESS ? r : put_bool(&o, empty);
  }
  default:
    return unknown_query(&o);
  }
}

static pi_result lz_piQueueFinish(pi_queue command_queue) {
  pi_queue q = command_queue;
  NEED(q, PI_ERROR_INVALID_QUEUE);
  pthread_mutex_lock(&q->lock);
  pi_result r = PI_SUCCESS;
  if (q->zeq)
    r = ZE_CALL(zeCommandQueueSynchronize, q->zeq, UINT64_MAX);
  pi_result rr = queue_reap(FN, q, true);
  pthread_mutex_unlock(&q->lock);
  return r == PI_SUCCESS ? rr : r;
}

/* Every command is submitted when it is enqueued: there is nothing to
 * flush, but the finished submissions are reaped. */
static pi_result lz_piQueueFlush(pi_queue command_queue) {
  pi_queue q = command_queue;
  NEED(q, PI_ERROR_INVALID_QUEUE);
  pthread_mutex_lock(&q->lock);
  pi_result r = queue_reap(FN, q, false);
  pthread_mutex_unlock(&q->lock);
  return r;
}

static pi_result lz_piQueueRetain(pi_queue command_queue) {
  NEED(command_queue, PI_ERROR_INVALID_QUEUE);
  ref_retain(&command_queue->refs);
  atomic_fetch_add(&command_queue->total, 1);
  return PI_SUCCESS;
}

/* The last PI reference waits for the queue's commands and destroys its
 * Level Zero objects; the memory goes when its events are gone too. */
static pi_result lz_piQueueRelease(pi_queue command_queue) {
  pi_queue q = command_queue;
  NEED(q, PI_ERROR_INVALID_QUEUE);
  pi_result r = PI_SUCCESS;
  if (ref_release(&q->refs))
    r = queue_destroy(FN, q);
  queue_drop(q);
  return r;
}

/* nativeHandleDesc: 0 for a command queue, 1 for an immediate command
 * list (DPC++'s convention). */
static pi_result lz_piextQueueGetNativeHandle(pi_queue queue,
                                              pi_native_handle *nativeHandle,
                                              int32_t *nativeHandleDesc) {
  NEED(queue, PI_ERROR_INVALID_QUEUE);
  if (nativeHandleDesc)
    *nativeHandleDesc = queue->imm ? 1 : 0;
  return native_of(FN, queue->imm ? (void *)queue->imm : (void *)queue->zeq,
                   nativeHandle);
}

static pi_result lz_piextQueueCreateWithNativeHandle(
    pi_native_handle nativeHandle, int32_t nativeHandleDesc,
    pi_context context, pi_device device, bool pluginOwnsNativeHandle,
    pi_queue_properties *Properties, pi_queue *queue) {
  REQUIRE(nativeHandle != 0 && queue != NULL);
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  NEED(device, PI_ERROR_INVALID_DEVICE);
  if (nativeHandleDesc != 0 && nativeHandleDesc != 1)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: nativeHandleDesc %d is neither 0 (command queue) nor 1 "
                "(immediate command list)",
                FN, (int)nativeHandleDesc);
  pi_queue_properties flags;
  uint32_t index;
  pi_result r = queue_properties(FN, Properties, &flags, &index);
  if (r != PI_SUCCESS)
    return r;
  if (nativeHandleDesc == 1)
    flags |= PI_EXT_QUEUE_FLAG_SUBMISSION_IMMEDIATE;
  pi_queue q;
  if ((r = queue_new(FN, context, device, flags, &q)) != PI_SUCCESS)
    return r;
  q->ordinal = device->ordinal;
  q->index = index;
  q->owns_native = pluginOwnsNativeHandle;
  if (nativeHandleDesc == 1)
    q->imm = (ze_command_list_handle_t)nativeHandle;
  else
    q->zeq = (ze_command_queue_handle_t)nativeHandle;
  *queue = q;
  return PI_SUCCESS;
}

/* ---- Submission ----------------------------------------------------------- */

/* Where a command is appended, with the event it signals and those it
 * waits for. */
struct append {
  const char *fn;
  pi_queue q;
  ze_command_list_handle_t list;
  ze_event_handle_t signal;
  uint32_t nwait;
  ze_event_handle_t *wait;
};

typedef pi_result (*append_fn)(const struct append *a, void *op);

/* Enqueues one command on `q`: an event for it, the wait list (with the
 * previous command's event on in-order queues, and every pending command's
 * on out-of-order queues when `barrier`), a command list, the append, the
 * submission. `free_after` (host USM, may be NULL) is freed once the
 * command completed, or now if it cannot be enqueued. */
static pi_result enqueue(const char *fn, pi_queue q, pi_command_type type,
                         pi_uint32 nwait, const pi_event *wait, pi_event *out,
                         bool blocking, bool barrier, append_fn append,
                         void *op, void *free_after) {
  pi_result r = PI_SUCCESS;
  if (out)
    *out = NULL;
  if (!q)
    r = fail(PI_ERROR_INVALID_QUEUE, "%s: the queue is NULL", fn);
  else if (nwait && !wait)
    r = fail(PI_ERROR_INVALID_EVENT_WAIT_LIST,
             "%s: num_events_in_wait_list is %u but the list is NULL", fn,
             (unsigned)nwait);
  for (pi_uint32 i = 0; r == PI_SUCCESS && i < nwait; ++i)
    if (!wait[i])
      r = fail(PI_ERROR_INVALID_EVENT_WAIT_LIST,
               "%s: event %u of the wait list is NULL", fn, (unsigned)i);
    else if (wait[i]->context->platform != q->context->platform)
      r = fail(PI_ERROR_INVALID_EVENT_WAIT_LIST,
               "%s: event %u of the wait list belongs to another Level Zero "
               "driver",
               fn, (unsigned)i);
  if (r != PI_SUCCESS) {
    if (free_after && q)
      zeMemFree(q->context->ze, free_after);
    return r;
  }
  pthread_mutex_lock(&q->lock);
  pi_event ev = NULL;
  ze_command_list_handle_t list = NULL;
  ze_event_handle_t *zw = NULL;
  if (q->dead)
    r = fail(PI_ERROR_INVALID_QUEUE, "%s: the queue was released", fn);
  if (r == PI_SUCCESS)
    r = event_new(fn, q->context, q, type,
                  (q->flags & PI_QUEUE_FLAG_PROFILING_ENABLE) != 0, &ev);
  if (r == PI_SUCCESS && ev->timestamps) {
    uint64_t host = 0, dev = 0;
    if (zeDeviceGetGlobalTimestamps(q->device->ze, &host, &dev) ==
        ZE_RESULT_SUCCESS)
      ev->queued_ns = ticks_to_ns(q->device, dev);
  }
  size_t extra = in_order(q) ? (q->last != NULL) : (barrier ? q->nsubs : 0);
  if (r == PI_SUCCESS && !(zw = calloc(nwait + extra + 1, sizeof *zw)))
    r = out_of_memory(fn);
  uint32_t n = 0;
  for (pi_uint32 i = 0; r == PI_SUCCESS && i < nwait; ++i)
    zw[n++] = wait[i]->ze;
  if (r == PI_SUCCESS && in_order(q) && q->last)
    zw[n++] = q->last->ze;
  for (size_t i = 0; r == PI_SUCCESS && !in_order(q) && barrier && i < q->nsubs;
       ++i)
    zw[n++] = q->subs[i].event->ze;
  if (r == PI_SUCCESS && q->nsubs == q->cap) {
    size_t cap = q->cap ? 2 * q->cap : 16;
    struct submission *s = realloc(q->subs, cap * sizeof *s);
    if (!s)
      r = out_of_memory(fn);
    else {
      q->subs = s;
      q->cap = cap;
    }
  }
  if (r == PI_SUCCESS) {
    if (q->imm)
      list = q->imm;
    else if (q->nfree)
      list = q->free[--q->nfree];
    else {
      ze_command_list_desc_t desc = {
          .stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
          .commandQueueGroupOrdinal = q->ordinal};
      r = check_ze(fn, "zeCommandListCreate",
                   zeCommandListCreate(q->context->ze, q->device->ze, &desc,
                                       &list));
    }
  }
  if (r == PI_SUCCESS) {
    struct append a = {fn, q, list, ev->ze, n, n ? zw : NULL};
    r = append(&a, op);
  }
  if (r == PI_SUCCESS && !q->imm) {
    r = check_ze(fn, "zeCommandListClose", zeCommandListClose(list));
    if (r == PI_SUCCESS)
      r = check_ze(fn, "zeCommandQueueExecuteCommandLists",
                   zeCommandQueueExecuteCommandLists(q->zeq, 1, &list, NULL));
  }
  free(zw);
  if (r != PI_SUCCESS) {
    if (list && !q->imm) {
      if (q->nfree < FREE_LISTS &&
          zeCommandListReset(list) == ZE_RESULT_SUCCESS)
        q->free[q->nfree++] = list;
      else
        zeCommandListDestroy(list);
    }
    pthread_mutex_unlock(&q->lock);
    if (ev)
      event_release(fn, ev);
    if (free_after)
      zeMemFree(q->context->ze, free_after);
    return r;
  }
  event_retain(ev); /* the submission's reference */
  q->subs[q->nsubs++] =
      (struct submission){q->imm ? NULL : list, ev, free_after};
  pi_event old = NULL;
  if (in_order(q)) {
    old = q->last;
    event_retain(ev);
    q->last = ev;
  }
  queue_reap(fn, q, false); /* a failure here belongs to an older command */
  pthread_mutex_unlock(&q->lock);
  if (old)
    event_release(fn, old);
  if (blocking)
    r = event_wait(fn, ev);
  if (r == PI_SUCCESS && out)
    *out = ev;
  else
    event_release(fn, ev);
  return r;
}

/* Commands with no event parameters of their own: wait, do, signal. */
static pi_result append_wait(const struct append *a) {
  if (!a->nwait)
    return PI_SUCCESS;
  return check_ze(a->fn, "zeCommandListAppendWaitOnEvents",
                  zeCommandListAppendWaitOnEvents(a->list, a->nwait, a->wait));
}

static pi_result append_signal(const struct append *a) {
  return check_ze(a->fn, "zeCommandListAppendSignalEvent",
                  zeCommandListAppendSignalEvent(a->list, a->signal));
}

static pi_result append_barrier(const struct append *a, void *op) {
  (void)op;
  return check_ze(a->fn, "zeCommandListAppendBarrier",
                  zeCommandListAppendBarrier(a->list, a->signal, a->nwait,
                                             a->wait));
}

struct copy_op {
  void *dst;
  const void *src;
  size_t size;
};

static pi_result append_copy(const struct append *a, void *op) {
  struct copy_op *c = op;
  return check_ze(a->fn, "zeCommandListAppendMemoryCopy",
                  zeCommandListAppendMemoryCopy(a->list, c->dst, c->src,
                                                c->size, a->signal, a->nwait,
                                                a->wait));
}

/* A fill; patterns larger than the engine fills become copies from a host
 * buffer holding the pattern repeated (`staging`). */
struct fill_op {
  void *ptr;
  const void *pattern;
  size_t pattern_size, size;
  void *staging;
};

static pi_result append_fill(const struct append *a, void *op) {
  struct fill_op *f = op;
  if (f->staging)
    return check_ze(a->fn, "zeCommandListAppendMemoryCopy",
                    zeCommandListAppendMemoryCopy(a->list, f->ptr, f->staging,
                                                  f->size, a->signal, a->nwait,
                                                  a->wait));
  return check_ze(a->fn, "zeCommandListAppendMemoryFill",
                  zeCommandListAppendMemoryFill(a->list, f->ptr, f->pattern,
                                                f->pattern_size, f->size,
                                                a->signal, a->nwait, a->wait));
}

/* Fills `size` bytes at `ptr` with the pattern on queue `q`. */
static pi_result enqueue_fill(const char *fn, pi_queue q, pi_command_type type,
                              void *ptr, const void *pattern,
                              size_t pattern_size, size_t size,
                              pi_uint32 nwait, const pi_event *wait,
                              pi_event *event) {
  if (!q)
    return fail(PI_ERROR_INVALID_QUEUE, "%s: the queue is NULL", fn);
  if (!ptr || !pattern || pattern_size == 0 || size % pattern_size)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a fill needs a pointer, a pattern and a size (%zu) that "
                "is a multiple of the pattern size (%zu)",
                fn, size, pattern_size);
  if (pattern_size & (pattern_size - 1))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the pattern size (%zu) must be a power of two", fn,
                pattern_size);
  struct fill_op f = {ptr, pattern, pattern_size, size, NULL};
  if (pattern_size > q->device->max_fill) {
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    pi_result r = check_ze(fn, "zeMemAllocHost",
                           zeMemAllocHost(q->context->ze, &hd, size ? size : 1,
                                          64, &f.staging));
    if (r != PI_SUCCESS)
      return r;
    for (size_t off = 0; off < size; off += pattern_size)
      memcpy((char *)f.staging + off, pattern, pattern_size);
  }
  return enqueue(fn, q, type, nwait, wait, event, false, false, append_fill,
                 &f, f.staging);
}

/* A rectangular copy between two pitched regions (zeCommandListAppend-
 * MemoryCopyRegion). Origins and widths are in bytes. */
struct rect_op {
  void *dst;
  const void *src;
  ze_copy_region_t dst_region, src_region;
  uint32_t dst_pitch, dst_slice, src_pitch, src_slice;
};

static pi_result append_rect(const struct append *a, void *op) {
  struct rect_op *r = op;
  return check_ze(a->fn, "zeCommandListAppendMemoryCopyRegion",
                  zeCommandListAppendMemoryCopyRegion(
                      a->list, r->dst, &r->dst_region, r->dst_pitch,
                      r->dst_slice, r->src, &r->src_region, r->src_pitch,
                      r->src_slice, a->signal, a->nwait, a->wait));
}

static bool fits_u32(size_t v) { return v <= UINT32_MAX; }

/* Fills a rect_op from PI's origins, region and pitches (0 pitches default
 * to the region's row and slice). */
static pi_result rect_setup(const char *fn, struct rect_op *op, void *dst,
                            const size_t dorigin[3], size_t drow,
                            size_t dslice, const void *src,
                            const size_t sorigin[3], size_t srow,
                            size_t sslice, const size_t region[3]) {
  if (region[0] == 0 || region[1] == 0 || region[2] == 0)
    return fail(PI_ERROR_INVALID_VALUE, "%s: the region %zux%zux%zu is empty",
                fn, region[0], region[1], region[2]);
  drow = drow ? drow : region[0];
  dslice = dslice ? dslice : drow * region[1];
  srow = srow ? srow : region[0];
  sslice = sslice ? sslice : srow * region[1];
  if (drow < region[0] || srow < region[0] || dslice < drow * region[1] ||
      sslice < srow * region[1])
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a row or slice pitch is smaller than the region", fn);
  const size_t all[] = {dorigin[0], dorigin[1], dorigin[2], sorigin[0],
                        sorigin[1], sorigin[2], region[0],  region[1],
                        region[2],  drow,       dslice,     srow,
                        sslice};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    if (!fits_u32(all[i]))
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: Level Zero copy regions take 32-bit origins, sizes and "
                  "pitches; %zu is too large",
                  fn, all[i]);
  op->dst = dst;
  op->src = src;
  op->dst_region = (ze_copy_region_t){(uint32_t)dorigin[0], (uint32_t)dorigin[1],
                                      (uint32_t)dorigin[2], (uint32_t)region[0],
                                      (uint32_t)region[1], (uint32_t)region[2]};
  op->src_region = (ze_copy_region_t){(uint32_t)sorigin[0], (uint32_t)sorigin[1],
                                      (uint32_t)sorigin[2], (uint32_t)region[0],
                                      (uint32_t)region[1], (uint32_t)region[2]};
  op->dst_pitch = (uint32_t)drow;
  op->dst_slice = (uint32_t)dslice;
  op->src_pitch = (uint32_t)srow;
  op->src_slice = (uint32_t)sslice;
  return PI_SUCCESS;
}

/* ---- Memory -------------------------------------------------------------------
 * A buffer is device memory of the context's device, or host memory when
 * the context has several devices or PI_MEM_FLAGS_HOST_PTR_ALLOC asks for
 * it. PI_MEM_FLAGS_HOST_PTR_USE memory is copied in at creation and is
 * where maps of the buffer go. */

/* Copies `size` bytes synchronously with an immediate command list in
 * synchronous mode on `dev` (initial contents of buffers and images). */
static pi_result sync_copy(const char *fn, pi_context c, pi_device dev,
                           void *dst, const void *src, size_t size,
                           ze_image_handle_t image,
                           const ze_image_region_t *region) {
  ze_command_queue_desc_t desc = {
      .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
      .ordinal = dev->ordinal,
      .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS};
  ze_command_list_handle_t list;
  pi_result r = check_ze(fn, "zeCommandListCreateImmediate",
                         zeCommandListCreateImmediate(c->ze, dev->ze, &desc,
                                                      &list));
  if (r != PI_SUCCESS)
    return r;
  if (image)
    r = check_ze(fn, "zeCommandListAppendImageCopyFromMemory",
                 zeCommandListAppendImageCopyFromMemory(list, image, src,
                                                        region, NULL, 0, NULL));
  else
    r = check_ze(fn, "zeCommandListAppendMemoryCopy",
                 zeCommandListAppendMemoryCopy(list, dst, src, size, NULL, 0,
                                               NULL));
  pi_result dr = check_ze(fn, "zeCommandListDestroy", zeCommandListDestroy(list));
  return r == PI_SUCCESS ? dr : r;
}

static pi_mem mem_new(pi_context c, enum mem_kind kind, pi_mem_flags flags,
                      size_t size) {
  pi_mem m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->kind = kind;
  m->context = c;
  m->flags = flags;
  m->size = size;
  atomic_init(&m->refs, 1);
  pthread_mutex_init(&m->lock, NULL);
  context_retain(c);
  return m;
}

static pi_result mem_release(const char *fn, pi_mem m) {
  if (!ref_release(&m->refs))
    return PI_SUCCESS;
  pi_result r = PI_SUCCESS;
  if (m->owns_alloc && m->image)
    r = check_ze(fn, "zeImageDestroy", zeImageDestroy(m->image));
  else if (m->owns_alloc && m->ptr)
    r = check_ze(fn, "zeMemFree", zeMemFree(m->context->ze, m->ptr));
  while (m->maps) { /* mappings never unmapped */
    struct mapping *next = m->maps->next;
    if (m->maps->staged)
      zeMemFree(m->context->ze, m->maps->ptr);
    free(m->maps);
    m->maps = next;
  }
  if (m->parent) {
    pi_result pr = mem_release(fn, m->parent);
    r = r == PI_SUCCESS ? pr : r;
  }
  pi_result cr = context_release(fn, m->context);
  pthread_mutex_destroy(&m->lock);
  free(m);
  return r == PI_SUCCESS ? cr : r;
}

static pi_result mem_flags_check(const char *fn, pi_mem_flags flags,
                                 const void *host_ptr) {
  const pi_mem_flags known = PI_MEM_FLAGS_ACCESS_RW | PI_MEM_ACCESS_READ_ONLY |
                             PI_MEM_FLAGS_HOST_PTR_USE |
                             PI_MEM_FLAGS_HOST_PTR_COPY |
                             PI_MEM_FLAGS_HOST_PTR_ALLOC;
  if (flags & ~known)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown memory flags 0x%llx", fn,
                (unsigned long long)(flags & ~known));
  bool wants_ptr = flags & (PI_MEM_FLAGS_HOST_PTR_USE | PI_MEM_FLAGS_HOST_PTR_COPY);
  if (wants_ptr != (host_ptr != NULL))
    return fail(PI_ERROR_INVALID_HOST_PTR,
                "%s: host_ptr must be given exactly when "
                "PI_MEM_FLAGS_HOST_PTR_USE or _COPY is set",
                fn);
  if ((flags & PI_MEM_FLAGS_HOST_PTR_USE) && (flags & PI_MEM_FLAGS_HOST_PTR_COPY))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: PI_MEM_FLAGS_HOST_PTR_USE and _COPY exclude each other",
                fn);
  return PI_SUCCESS;
}

/* properties: {PI_MEM_PROPERTIES_CHANNEL, channel,
 * PI_MEM_PROPERTIES_ALLOC_BUFFER_LOCATION, location, 0}: FPGA placement
 * hints that mean nothing to Level Zero devices. */
static pi_result lz_piMemBufferCreate(pi_context context, pi_mem_flags flags,
                                      size_t size, void *host_ptr,
                                      pi_mem *ret_mem,
                                      const pi_mem_properties *properties) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(ret_mem != NULL);
  *ret_mem = NULL;
  if (size == 0)
    return fail(PI_ERROR_INVALID_BUFFER_SIZE, "%s: size is 0", FN);
  for (size_t i = 0; properties && properties[i]; i += 2)
    if (properties[i] != PI_MEM_PROPERTIES_CHANNEL &&
        properties[i] != PI_MEM_PROPERTIES_ALLOC_BUFFER_LOCATION)
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown buffer property 0x%llx",
                  FN, (unsigned long long)properties[i]);
  pi_result r = mem_flags_check(FN, flags, host_ptr);
  if (r != PI_SUCCESS)
    return r;
  pi_device dev = context->devices[0];
  if (size > dev->props.maxMemAllocSize)
    return fail(PI_ERROR_INVALID_BUFFER_SIZE,
                "%s: %zu bytes exceed the largest allocation of device '%s' "
                "(%llu bytes)",
                FN, size, dev_name(dev),
                (unsigned long long)dev->props.maxMemAllocSize);
  pi_mem m = mem_new(context, MEM_BUFFER, flags, size);
  if (!m)
    return out_of_memory(FN);
  m->owns_alloc = true;
  void *ptr = NULL;
  if ((flags & PI_MEM_FLAGS_HOST_PTR_ALLOC) || context->ndevices > 1) {
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    r = ZE_CALL(zeMemAllocHost, context->ze, &hd, size, 64, &ptr);
    m->host_access = true;
  } else {
    ze_device_mem_alloc_desc_t dd = {
        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    r = ZE_CALL(zeMemAllocDevice, context->ze, &dd, size, 64, dev->ze, &ptr);
  }
  m->ptr = ptr;
  if (r == PI_SUCCESS && host_ptr) {
    if (m->host_access)
      memcpy(ptr, host_ptr, size);
    else
      r = sync_copy(FN, context, dev, ptr, host_ptr, size, NULL, NULL);
    if (flags & PI_MEM_FLAGS_HOST_PTR_USE)
      m->host_ptr = host_ptr;
  }
  if (r != PI_SUCCESS) {
    mem_release(FN, m);
    return r;
  }
  *ret_mem = m;
  return PI_SUCCESS;
}

static pi_result lz_piMemGetInfo(pi_mem mem, pi_mem_info param_name,
                                 size_t param_value_size, void *param_value,
                                 size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  NEED(mem, PI_ERROR_INVALID_MEM_OBJECT);
  switch (param_name) {
  case PI_MEM_CONTEXT:
    return put_ptr(&o, mem->context);
  case PI_MEM_SIZE:
    return put_size(&o, mem->size);
  default:
    return unknown_query(&o);
  }
}

static pi_result lz_piMemRetain(pi_mem mem) {
  NEED(mem, PI_ERROR_INVALID_MEM_OBJECT);
  ref_retain(&mem->refs);
  return PI_SUCCESS;
}

static pi_result lz_piMemRelease(pi_mem mem) {
  NEED(mem, PI_ERROR_INVALID_MEM_OBJECT);
  return mem_release(FN, mem);
}

/* A sub-buffer is a window of its parent's allocation. */
static pi_result lz_piMemBufferPartition(pi_mem buffer, pi_mem_flags flags,
                                         pi_buffer_create_type buffer_create_type,
                                         void *buffer_create_info,
                                         pi_mem *ret_mem) {
  NEED(buffer, PI_ERROR_INVALID_MEM_OBJECT);
  REQUIRE(ret_mem != NULL && buffer_create_info != NULL);
  *ret_mem = NULL;
  if (buffer_create_type != PI_BUFFER_CREATE_TYPE_REGION)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown buffer create type 0x%x",
                FN, (unsigned)buffer_create_type);
  if (buffer->kind != MEM_BUFFER)
    return fail(PI_ERROR_INVALID_MEM_OBJECT,
                "%s: only buffers (not sub-buffers or images) can be "
                "partitioned",
                FN);
  pi_result r = mem_flags_check(FN, flags, NULL);
  if (r != PI_SUCCESS)
    return r;
  const struct pi_buffer_region_struct *region = buffer_create_info;
  if (region->size == 0 || region->origin > buffer->size ||
      region->size > buffer->size - region->origin)
    return fail(PI_ERROR_INVALID_BUFFER_SIZE,
                "%s: region %zu+%zu does not fit the %zu-byte buffer", FN,
                region->origin, region->size, buffer->size);
  pi_mem m = mem_new(buffer->context, MEM_SUB_BUFFER,
                     flags ? flags : buffer->flags, region->size);
  if (!m)
    return out_of_memory(FN);
  m->ptr = buffer->ptr + region->origin;
  m->host_access = buffer->host_access;
  m->host_ptr = buffer->host_ptr ? buffer->host_ptr + region->origin : NULL;
  m->parent = buffer;
  m->origin = region->origin;
  ref_retain(&buffer->refs);
  *ret_mem = m;
  return PI_SUCCESS;
}

/* The native handle of a buffer is its allocation; of an image, the Level
 * Zero image. */
static pi_result lz_piextMemGetNativeHandle(pi_mem mem, pi_device dev,
                                            pi_native_handle *nativeHandle) {
  (void)dev; /* one allocation serves every device of the context */
  NEED(mem, PI_ERROR_INVALID_MEM_OBJECT);
  return native_of(FN, mem->image ? (void *)mem->image : (void *)mem->ptr,
                   nativeHandle);
}

/* A buffer over an existing USM allocation (the native handle). */
static pi_result lz_piextMemCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, bool ownNativeHandle,
    pi_mem *mem) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(nativeHandle != 0 && mem != NULL);
  void *ptr = (void *)nativeHandle, *base = NULL;
  size_t size = 0;
  ze_memory_allocation_properties_t props = {
      .stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
  ze_device_handle_t zd = NULL;
  pi_result r = ZE_CALL(zeMemGetAllocProperties, context->ze, ptr, &props, &zd);
  if (r == PI_SUCCESS && props.type == ZE_MEMORY_TYPE_UNKNOWN)
    r = fail(PI_ERROR_INVALID_MEM_OBJECT,
             "%s: %p is no Level Zero allocation of the context", FN, ptr);
  if (r == PI_SUCCESS)
    r = ZE_CALL(zeMemGetAddressRange, context->ze, ptr, &base, &size);
  if (r != PI_SUCCESS)
    return r;
  size -= (size_t)((char *)ptr - (char *)base);
  pi_mem m = mem_new(context, MEM_BUFFER, PI_MEM_FLAGS_ACCESS_RW, size);
  if (!m)
    return out_of_memory(FN);
  m->ptr = ptr;
  m->host_access = props.type != ZE_MEMORY_TYPE_DEVICE;
  m->owns_alloc = ownNativeHandle && ptr == base;
  *mem = m;
  return PI_SUCCESS;
}

/* ---- Images ---------------------------------------------------------------- */

/* The Level Zero format and the element size of a PI image format. */
static pi_result image_format(const char *fn, const pi_image_format *f,
                              ze_image_format_t *ze, size_t *elem) {
  size_t chan_size = 0;
  unsigned channels = 0;
  ze_image_format_type_t type = ZE_IMAGE_FORMAT_TYPE_UINT;
  switch (f->image_channel_data_type) {
  case PI_IMAGE_CHANNEL_TYPE_SNORM_INT8:
    chan_size = 1, type = ZE_IMAGE_FORMAT_TYPE_SNORM;
    break;
  case PI_IMAGE_CHANNEL_TYPE_UNORM_INT8:
    chan_size = 1, type = ZE_IMAGE_FORMAT_TYPE_UNORM;
    break;
  case PI_IMAGE_CHANNEL_TYPE_SIGNED_INT8:
    chan_size = 1, type = ZE_IMAGE_FORMAT_TYPE_SINT;
    break;
  case PI_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8:
    chan_size = 1, type = ZE_IMAGE_FORMAT_TYPE_UINT;
    break;
  case PI_IMAGE_CHANNEL_TYPE_SNORM_INT16:
    chan_size = 2, type = ZE_IMAGE_FORMAT_TYPE_SNORM;
    break;
  case PI_IMAGE_CHANNEL_TYPE_UNORM_INT16:
    chan_size = 2, type = ZE_IMAGE_FORMAT_TYPE_UNORM;
    break;
  case PI_IMAGE_CHANNEL_TYPE_SIGNED_INT16:
    chan_size = 2, type = ZE_IMAGE_FORMAT_TYPE_SINT;
    break;
  case PI_IMAGE_CHANNEL_TYPE_UNSIGNED_INT16:
    chan_size = 2, type = ZE_IMAGE_FORMAT_TYPE_UINT;
    break;
  case PI_IMAGE_CHANNEL_TYPE_HALF_FLOAT:
    chan_size = 2, type = ZE_IMAGE_FORMAT_TYPE_FLOAT;
    break;
  case PI_IMAGE_CHANNEL_TYPE_SIGNED_INT32:
    chan_size = 4, type = ZE_IMAGE_FORMAT_TYPE_SINT;
    break;
  case PI_IMAGE_CHANNEL_TYPE_UNSIGNED_INT32:
    chan_size = 4, type = ZE_IMAGE_FORMAT_TYPE_UINT;
    break;
  case PI_IMAGE_CHANNEL_TYPE_FLOAT:
    chan_size = 4, type = ZE_IMAGE_FORMAT_TYPE_FLOAT;
    break;
  default:
    break;
  }
  ze_image_format_swizzle_t sw[4] = {
      ZE_IMAGE_FORMAT_SWIZZLE_R, ZE_IMAGE_FORMAT_SWIZZLE_G,
      ZE_IMAGE_FORMAT_SWIZZLE_B, ZE_IMAGE_FORMAT_SWIZZLE_A};
  switch (f->image_channel_order) {
  case PI_IMAGE_CHANNEL_ORDER_R:
  case PI_IMAGE_CHANNEL_ORDER_Rx:
    channels = 1;
    sw[1] = sw[2] = ZE_IMAGE_FORMAT_SWIZZLE_0;
    sw[3] = ZE_IMAGE_FORMAT_SWIZZLE_1;
    break;
  case PI_IMAGE_CHANNEL_ORDER_A:
    channels = 1;
    sw[0] = sw[1] = sw[2] = ZE_IMAGE_FORMAT_SWIZZLE_0;
    sw[3] = ZE_IMAGE_FORMAT_SWIZZLE_A;
    break;
  case PI_IMAGE_CHANNEL_ORDER_RG:
  case PI_IMAGE_CHANNEL_ORDER_RGx:
    channels = 2;
    sw[2] = ZE_IMAGE_FORMAT_SWIZZLE_0;
    sw[3] = ZE_IMAGE_FORMAT_SWIZZLE_1;
    break;
  case PI_IMAGE_CHANNEL_ORDER_RA:
    channels = 2;
    sw[1] = sw[2] = ZE_IMAGE_FORMAT_SWIZZLE_0;
    sw[3] = ZE_IMAGE_FORMAT_SWIZZLE_G;
    break;
  case PI_IMAGE_CHANNEL_ORDER_RGBA:
    channels = 4;
    break;
  case PI_IMAGE_CHANNEL_ORDER_BGRA:
    channels = 4;
    sw[0] = ZE_IMAGE_FORMAT_SWIZZLE_B;
    sw[2] = ZE_IMAGE_FORMAT_SWIZZLE_R;
    break;
  case PI_IMAGE_CHANNEL_ORDER_ARGB:
    channels = 4;
    sw[0] = ZE_IMAGE_FORMAT_SWIZZLE_A;
    sw[1] = ZE_IMAGE_FORMAT_SWIZZLE_R;
    sw[2] = ZE_IMAGE_FORMAT_SWIZZLE_G;
    sw[3] = ZE_IMAGE_FORMAT_SWIZZLE_B;
    break;
  case PI_IMAGE_CHANNEL_ORDER_ABGR:
    channels = 4;
    sw[0] = ZE_IMAGE_FORMAT_SWIZZLE_A;
    sw[1] = ZE_IMAGE_FORMAT_SWIZZLE_B;
    sw[2] = ZE_IMAGE_FORMAT_SWIZZLE_G;
    sw[3] = ZE_IMAGE_FORMAT_SWIZZLE_R;
    break;
  default:
    break;
  }
  static const ze_image_format_layout_t layouts[3][4] = {
      {ZE_IMAGE_FORMAT_LAYOUT_8, ZE_IMAGE_FORMAT_LAYOUT_8_8,
       ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8, ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8},
      {ZE_IMAGE_FORMAT_LAYOUT_16, ZE_IMAGE_FORMAT_LAYOUT_16_16,
       ZE_IMAGE_FORMAT_LAYOUT_16_16_16_16, ZE_IMAGE_FORMAT_LAYOUT_16_16_16_16},
      {ZE_IMAGE_FORMAT_LAYOUT_32, ZE_IMAGE_FORMAT_LAYOUT_32_32,
       ZE_IMAGE_FORMAT_LAYOUT_32_32_32_32, ZE_IMAGE_FORMAT_LAYOUT_32_32_32_32}};
  if (!chan_size || !channels)
    return fail(PI_ERROR_IMAGE_FORMAT_NOT_SUPPORTED,
                "%s: image format (order 0x%x, type 0x%x) has no Level Zero "
                "equivalent in this plugin; use R, RG, RA, A, RGBA, BGRA, ARGB "
                "or ABGR with 8, 16 or 32-bit channels",
                fn, (unsigned)f->image_channel_order,
                (unsigned)f->image_channel_data_type);
  ze->layout = layouts[chan_size == 1 ? 0 : chan_size == 2 ? 1 : 2][channels - 1];
  ze->type = type;
  ze->x = sw[0];
  ze->y = sw[1];
  ze->z = sw[2];
  ze->w = sw[3];
  *elem = chan_size * channels;
  return PI_SUCCESS;
}

static pi_result image_desc(const char *fn, const pi_image_desc *d,
                            ze_image_desc_t *ze) {
  ze_image_type_t type;
  switch (d->image_type) {
  case PI_MEM_TYPE_IMAGE1D:
    type = ZE_IMAGE_TYPE_1D;
    break;
  case PI_MEM_TYPE_IMAGE1D_ARRAY:
    type = ZE_IMAGE_TYPE_1DARRAY;
    break;
  case PI_MEM_TYPE_IMAGE2D:
    type = ZE_IMAGE_TYPE_2D;
    break;
  case PI_MEM_TYPE_IMAGE2D_ARRAY:
    type = ZE_IMAGE_TYPE_2DARRAY;
    break;
  case PI_MEM_TYPE_IMAGE3D:
    type = ZE_IMAGE_TYPE_3D;
    break;
  default:
    return fail(PI_ERROR_INVALID_IMAGE_DESCRIPTOR,
                "%s: image type 0x%x is not offered (1D buffer images have no "
                "Level Zero image)",
                fn, (unsigned)d->image_type);
  }
  if (d->num_mip_levels > 1 || d->num_samples > 1)
    return fail(PI_ERROR_INVALID_IMAGE_DESCRIPTOR,
                "%s: mipmapped and multisampled images are not offered", fn);
  if (!d->image_width || d->image_height > UINT32_MAX ||
      d->image_depth > UINT32_MAX || d->image_array_size > UINT32_MAX)
    return fail(PI_ERROR_INVALID_IMAGE_SIZE,
                "%s: image size %zux%zux%zu (array %zu) is empty or too large",
                fn, d->image_width, d->image_height, d->image_depth,
                d->image_array_size);
  ze->type = type;
  ze->width = d->image_width;
  ze->height = (uint32_t)(d->image_height ? d->image_height : 1);
  ze->depth = (uint32_t)(d->image_depth ? d->image_depth : 1);
  ze->arraylevels = (uint32_t)d->image_array_size;
  ze->miplevels = 0;
  return PI_SUCCESS;
}

static size_t image_rows(const pi_image_desc *d) {
  return d->image_type == PI_MEM_TYPE_IMAGE1D_ARRAY ? d->image_array_size
         : d->image_height                          ? d->image_height
                                                    : 1;
}

static size_t image_slices(const pi_image_desc *d) {
  return d->image_type == PI_MEM_TYPE_IMAGE2D_ARRAY ? d->image_array_size
         : d->image_type == PI_MEM_TYPE_IMAGE3D     ? d->image_depth
                                                    : 1;
}

static pi_result image_new(const char *fn, pi_context context,
                           pi_mem_flags flags, const pi_image_format *format,
                           const pi_image_desc *desc, size_t elem,
                           ze_image_handle_t ze, bool owns, pi_mem *out) {
  pi_mem m = mem_new(context, MEM_IMAGE, flags,
                     desc->image_width * elem * image_rows(desc) *
                         image_slices(desc));
  if (!m)
    return out_of_memory(fn);
  m->image = ze;
  m->owns_alloc = owns;
  m->format = *format;
  m->desc = *desc;
  m->elem_size = elem;
  *out = m;
  return PI_SUCCESS;
}

static pi_result lz_piMemImageCreate(pi_context context, pi_mem_flags flags,
                                     const pi_image_format *image_format_in,
                                     const pi_image_desc *image_desc_in,
                                     void *host_ptr, pi_mem *ret_mem) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(ret_mem != NULL);
  *ret_mem = NULL;
  if (!image_format_in)
    return fail(PI_ERROR_INVALID_IMAGE_FORMAT_DESCRIPTOR,
                "%s: image_format is NULL", FN);
  if (!image_desc_in)
    return fail(PI_ERROR_INVALID_IMAGE_DESCRIPTOR, "%s: image_desc is NULL",
                FN);
  pi_result r = mem_flags_check(FN, flags, host_ptr);
  if (r != PI_SUCCESS)
    return r;
  if (flags & PI_MEM_FLAGS_HOST_PTR_USE)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: Level Zero images cannot live in host memory "
                "(PI_MEM_FLAGS_HOST_PTR_USE); use PI_MEM_FLAGS_HOST_PTR_COPY",
                FN);
  ze_image_desc_t zd = {.stype = ZE_STRUCTURE_TYPE_IMAGE_DESC,
                        .flags = (flags & PI_MEM_ACCESS_READ_ONLY)
                                     ? 0
                                     : ZE_IMAGE_FLAG_KERNEL_WRITE};
  size_t elem;
  if ((r = image_format(FN, image_format_in, &zd.format, &elem)) !=
          PI_SUCCESS ||
      (r = image_desc(FN, image_desc_in, &zd)) != PI_SUCCESS)
    return r;
  pi_device dev = context->devices[0];
  ze_image_handle_t img;
  if ((r = ZE_CALL(zeImageCreate, context->ze, dev->ze, &zd, &img)) !=
      PI_SUCCESS)
    return r;
  pi_mem m;
  if ((r = image_new(FN, context, flags, image_format_in, image_desc_in, elem,
                     img, true, &m)) != PI_SUCCESS) {
    zeImageDestroy(img);
    return r;
  }
  if (host_ptr) {
    ze_image_region_t region = {0, 0, 0, (uint32_t)zd.width,
                                (uint32_t)image_rows(image_desc_in),
                                (uint32_t)image_slices(image_desc_in)};
    if (image_desc_in->image_row_pitch &&
        image_desc_in->image_row_pitch != image_desc_in->image_width * elem)
      r = fail(PI_ERROR_INVALID_IMAGE_DESCRIPTOR,
               "%s: host data with row pitch %zu (not width * element size) "
               "cannot be copied into a Level Zero image at creation; copy it "
               "with piEnqueueMemImageWrite",
               FN, image_desc_in->image_row_pitch);
    else
      r = sync_copy(FN, context, dev, NULL, host_ptr, 0, img, &region);
    if (r != PI_SUCCESS) {
      mem_release(FN, m);
      return r;
    }
  }
  *ret_mem = m;
  return PI_SUCCESS;
}

static pi_result lz_piMemImageGetInfo(pi_mem image, pi_image_info param_name,
                                      size_t param_value_size,
                                      void *param_value,
                                      size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  NEED(image, PI_ERROR_INVALID_MEM_OBJECT);
  if (image->kind != MEM_IMAGE)
    return fail(PI_ERROR_INVALID_MEM_OBJECT, "%s: the memory object is a "
                "buffer, not an image", FN);
  const pi_image_desc *d = &image->desc;
  size_t row = d->image_width * image->elem_size;
  switch (param_name) {
  case PI_IMAGE_INFO_FORMAT:
    return put_info(&o, &image->format, sizeof image->format);
  case PI_IMAGE_INFO_ELEMENT_SIZE:
    return put_size(&o, image->elem_size);
  case PI_IMAGE_INFO_ROW_PITCH:
    return put_size(&o, row);
  case PI_IMAGE_INFO_SLICE_PITCH:
    return put_size(&o, image_slices(d) > 1 || d->image_type ==
                                                   PI_MEM_TYPE_IMAGE3D
                            ? row * image_rows(d)
                            : 0);
  case PI_IMAGE_INFO_WIDTH:
    return put_size(&o, d->image_width);
  case PI_IMAGE_INFO_HEIGHT:
    return put_size(&o, d->image_height);
  case PI_IMAGE_INFO_DEPTH:
    return put_size(&o, d->image_depth);
  default:
    return unknown_query(&o);
  }
}

static pi_result lz_piextMemImageCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, bool ownNativeHandle,
    const pi_image_format *ImageFormat, const pi_image_desc *ImageDesc,
    pi_mem *img) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(nativeHandle != 0 && img != NULL);
  if (!ImageFormat || !ImageDesc)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a Level Zero image does not tell its format and shape: "
                "pass ImageFormat and ImageDesc",
                FN);
  ze_image_format_t zf;
  ze_image_desc_t zd;
  size_t elem;
  pi_result r = image_format(FN, ImageFormat, &zf, &elem);
  if (r == PI_SUCCESS)
    r = image_desc(FN, ImageDesc, &zd);
  if (r != PI_SUCCESS)
    return r;
  return image_new(FN, context, PI_MEM_FLAGS_ACCESS_RW, ImageFormat, ImageDesc,
                   elem, (ze_image_handle_t)nativeHandle, ownNativeHandle,
                   img);
}

/* ---- Buffer commands -------------------------------------------------------- */

/* Checks that bytes [offset, offset + size) lie in the buffer. */
static pi_result buffer_range(const char *fn, pi_mem m, size_t offset,
                              size_t size) {
  if (!m)
    return fail(PI_ERROR_INVALID_MEM_OBJECT, "%s: the buffer is NULL", fn);
  if (m->kind == MEM_IMAGE)
    return fail(PI_ERROR_INVALID_MEM_OBJECT,
                "%s: the memory object is an image; use the image commands",
                fn);
  if (offset > m->size || size > m->size - offset)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: bytes %zu..%zu are outside the %zu-byte buffer", fn,
                offset, offset + size, m->size);
  return PI_SUCCESS;
}

static pi_result lz_piEnqueueMemBufferRead(pi_queue queue, pi_mem buffer,
                                           pi_bool blocking_read,
                                           size_t offset, size_t size,
                                           void *ptr,
                                           pi_uint32 num_events_in_wait_list,
                                           const pi_event *event_wait_list,
                                           pi_event *event) {
  pi_result r = buffer_range(FN, buffer, offset, size);
  if (r != PI_SUCCESS)
    return r;
  REQUIRE(ptr != NULL);
  struct copy_op op = {ptr, buffer->ptr + offset, size};
  return enqueue(FN, queue, PI_COMMAND_TYPE_MEM_BUFFER_READ,
                 num_events_in_wait_list, event_wait_list, event,
                 blocking_read, false, append_copy, &op, NULL);
}

static pi_result lz_piEnqueueMemBufferWrite(
    pi_queue command_queue, pi_mem buffer, pi_bool blocking_write,
    size_t offset, size_t size, const void *ptr,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  pi_result r = buffer_range(FN, buffer, offset, size);
  if (r != PI_SUCCESS)
    return r;
  REQUIRE(ptr != NULL);
  struct copy_op op = {buffer->ptr + offset, ptr, size};
  return enqueue(FN, command_queue, PI_COMMAND_TYPE_MEM_BUFFER_WRITE,
                 num_events_in_wait_list, event_wait_list, event,
                 blocking_write, false, append_copy, &op, NULL);
}

static pi_result lz_piEnqueueMemBufferCopy(
    pi_queue command_queue, pi_mem src_buffer, pi_mem dst_buffer,
    size_t src_offset, size_t dst_offset, size_t size,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  pi_result r = buffer_range(FN, src_buffer, src_offset, size);
  if (r == PI_SUCCESS)
    r = buffer_range(FN, dst_buffer, dst_offset, size);
  if (r != PI_SUCCESS)
    return r;
  struct copy_op op = {dst_buffer->ptr + dst_offset,
                       src_buffer->ptr + src_offset, size};
  return enqueue(FN, command_queue, PI_COMMAND_TYPE_MEM_BUFFER_COPY,
                 num_events_in_wait_list, event_wait_list, event, false, false,
                 append_copy, &op, NULL);
}

#define XYZ(p, a, b, c)                                                        \
  { (p)->a, (p)->b, (p)->c }

/* The last byte a rectangle touches, to check it against a buffer. */
static size_t rect_end(const size_t origin[3], const size_t region[3],
                       size_t row, size_t slice) {
  row = row ? row : region[0];
  slice = slice ? slice : row * region[1];
  return origin[0] + origin[1] * row + origin[2] * slice +
         (region[2] - 1) * slice + (region[1] - 1) * row + region[0];
}

/* A rectangle between a buffer and host memory (`to_host`: a read). */
static pi_result buffer_rect(const char *fn, bool to_host, pi_queue q,
                             pi_mem buffer, pi_bool blocking,
                             pi_buff_rect_offset boff, pi_buff_rect_offset hoff,
                             pi_buff_rect_region reg, size_t brow,
                             size_t bslice, size_t hrow, size_t hslice,
                             void *ptr, pi_uint32 nwait, const pi_event *wait,
                             pi_event *event) {
  if (!boff || !hoff || !reg || !ptr)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the offsets, the region and ptr must not be NULL", fn);
  const size_t b[3] = XYZ(boff, x_bytes, y_scalar, z_scalar);
  const size_t h[3] = XYZ(hoff, x_bytes, y_scalar, z_scalar);
  const size_t r3[3] = XYZ(reg, width_bytes, height_scalar, depth_scalar);
  pi_result r = buffer_range(fn, buffer, 0, 0);
  if (r == PI_SUCCESS && r3[0] && r3[1] && r3[2] &&
      rect_end(b, r3, brow, bslice) > buffer->size)
    r = fail(PI_ERROR_INVALID_VALUE,
             "%s: the rectangle reaches byte %zu of the %zu-byte buffer", fn,
             rect_end(b, r3, brow, bslice), buffer->size);
  struct rect_op op;
  if (r == PI_SUCCESS)
    r = to_host ? rect_setup(fn, &op, ptr, h, hrow, hslice, buffer->ptr, b,
                             brow, bslice, r3)
                : rect_setup(fn, &op, buffer->ptr, b, brow, bslice, ptr, h,
                             hrow, hslice, r3);
  if (r != PI_SUCCESS)
    return r;
  return enqueue(fn, q,
                 to_host ? PI_COMMAND_TYPE_MEM_BUFFER_READ_RECT
                         : PI_COMMAND_TYPE_MEM_BUFFER_WRITE_RECT,
                 nwait, wait, event, blocking, false, append_rect, &op, NULL);
}

static pi_result lz_piEnqueueMemBufferReadRect(
    pi_queue command_queue, pi_mem buffer, pi_bool blocking_read,
    pi_buff_rect_offset buffer_offset, pi_buff_rect_offset host_offset,
    pi_buff_rect_region region, size_t buffer_row_pitch,
    size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
    void *ptr, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return buffer_rect(FN, true, command_queue, buffer, blocking_read,
                     buffer_offset, host_offset, region, buffer_row_pitch,
                     buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr,
                     num_events_in_wait_list, event_wait_list, event);
}

static pi_result lz_piEnqueueMemBufferWriteRect(
    pi_queue command_queue, pi_mem buffer, pi_bool blocking_write,
    pi_buff_rect_offset buffer_offset, pi_buff_rect_offset host_offset,
    pi_buff_rect_region region, size_t buffer_row_pitch,
    size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
    const void *ptr, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return buffer_rect(FN, false, command_queue, buffer, blocking_write,
                     buffer_offset, host_offset, region, buffer_row_pitch,
                     buffer_slice_pitch, host_row_pitch, host_slice_pitch,
                     (void *)ptr, num_events_in_wait_list, event_wait_list,
                     event);
}

static pi_result lz_piEnqueueMemBufferCopyRect(
    pi_queue command_queue, pi_mem src_buffer, pi_mem dst_buffer,
    pi_buff_rect_offset src_origin, pi_buff_rect_offset dst_origin,
    pi_buff_rect_region region, size_t src_row_pitch, size_t src_slice_pitch,
    size_t dst_row_pitch, size_t dst_slice_pitch,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  REQUIRE(src_origin && dst_origin && region);
  const size_t s[3] = XYZ(src_origin, x_bytes, y_scalar, z_scalar);
  const size_t d[3] = XYZ(dst_origin, x_bytes, y_scalar, z_scalar);
  const size_t r3[3] = XYZ(region, width_bytes, height_scalar, depth_scalar);
  pi_result r = buffer_range(FN, src_buffer, 0, 0);
  if (r == PI_SUCCESS)
    r = buffer_range(FN, dst_buffer, 0, 0);
  if (r == PI_SUCCESS && r3[0] && r3[1] && r3[2] &&
      (rect_end(s, r3, src_row_pitch, src_slice_pitch) > src_buffer->size ||
       rect_end(d, r3, dst_row_pitch, dst_slice_pitch) > dst_buffer->size))
    r = fail(PI_ERROR_INVALID_VALUE,
             "%s: the rectangle does not fit the source or the destination "
             "buffer",
             FN);
  struct rect_op op;
  if (r == PI_SUCCESS)
    r = rect_setup(FN, &op, dst_buffer->ptr, d, dst_row_pitch, dst_slice_pitch,
                   src_buffer->ptr, s, src_row_pitch, src_slice_pitch, r3);
  if (r != PI_SUCCESS)
    return r;
  return enqueue(FN, command_queue, PI_COMMAND_TYPE_MEM_BUFFER_COPY_RECT,
                 num_events_in_wait_list, event_wait_list, event, false, false,
                 append_rect, &op, NULL);
}

static pi_result lz_piEnqueueMemBufferFill(
    pi_queue command_queue, pi_mem buffer, const void *pattern,
    size_t pattern_size, size_t offset, size_t size,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  pi_result r = buffer_range(FN, buffer, offset, size);
  if (r != PI_SUCCESS)
    return r;
  return enqueue_fill(FN, command_queue, PI_COMMAND_TYPE_MEM_BUFFER_FILL,
                      buffer->ptr + offset, pattern, pattern_size, size,
                      num_events_in_wait_list, event_wait_list, event);
}

/* Maps go to the buffer's own memory when the host can reach it, to the
 * PI_MEM_FLAGS_HOST_PTR_USE memory when there is some, else to a host
 * allocation freed at unmap. The copy in is skipped for
 * PI_MAP_WRITE_INVALIDATE_REGION. */
static pi_result lz_piEnqueueMemBufferMap(
    pi_queue command_queue, pi_mem buffer, pi_bool blocking_map,
    pi_map_flags map_flags, size_t offset, size_t size,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event, void **ret_map) {
  const pi_map_flags known =
      PI_MAP_READ | PI_MAP_WRITE | PI_MAP_WRITE_INVALIDATE_REGION;
  REQUIRE(ret_map != NULL);
  *ret_map = NULL;
  NEED(command_queue, PI_ERROR_INVALID_QUEUE);
  pi_result r = buffer_range(FN, buffer, offset, size);
  if (r != PI_SUCCESS)
    return r;
  if (map_flags & ~known)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown map flags 0x%llx", FN,
                (unsigned long long)(map_flags & ~known));
  struct mapping *mp = calloc(1, sizeof *mp);
  if (!mp)
    return out_of_memory(FN);
  mp->offset = offset;
  mp->size = size;
  mp->flags = map_flags;
  bool copy_in = !(map_flags & PI_MAP_WRITE_INVALIDATE_REGION);
  if (buffer->host_ptr) {
    mp->ptr = buffer->host_ptr + offset;
  } else if (buffer->host_access) {
    mp->ptr = buffer->ptr + offset;
    mp->direct = true;
    copy_in = false;
  } else {
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *staging = NULL;
    r = ZE_CALL(zeMemAllocHost, buffer->context->ze, &hd, size ? size : 1, 64,
                &staging);
    if (r != PI_SUCCESS) {
      free(mp);
      return r;
    }
    mp->ptr = staging;
    mp->staged = true;
  }
  if (copy_in) {
    struct copy_op op = {mp->ptr, buffer->ptr + offset, size};
    r = enqueue(FN, command_queue, PI_COMMAND_TYPE_MEM_BUFFER_MAP,
                num_events_in_wait_list, event_wait_list, event, blocking_map,
                false, append_copy, &op, NULL);
  } else {
    r = enqueue(FN, command_queue, PI_COMMAND_TYPE_MEM_BUFFER_MAP,
                num_events_in_wait_list, event_wait_list, event, blocking_map,
                false, append_barrier, NULL, NULL);
  }
  if (r != PI_SUCCESS) {
    if (mp->staged)
      zeMemFree(buffer->context->ze, mp->ptr);
    free(mp);
    return r;
  }
  pthread_mutex_lock(&buffer->lock);
  mp->next = buffer->maps;
  buffer->maps = mp;
  pthread_mutex_unlock(&buffer->lock);
  *ret_map = mp->ptr;
  return PI_SUCCESS;
}

/* Writes a written mapping back; a staging allocation is freed once the
 * copy completed. */
static pi_result lz_piEnqueueMemUnmap(pi_queue command_queue, pi_mem memobj,
                                      void *mapped_ptr,
                                      pi_uint32 num_events_in_wait_list,
                                      const pi_event *event_wait_list,
                                      pi_event *event) {
  NEED(command_queue, PI_ERROR_INVALID_QUEUE);
  NEED(memobj, PI_ERROR_INVALID_MEM_OBJECT);
  pthread_mutex_lock(&memobj->lock);
  struct mapping **pp = &memobj->maps;
  while (*pp && (*pp)->ptr != mapped_ptr)
    pp = &(*pp)->next;
  struct mapping *mp = *pp;
  if (mp)
    *pp = mp->next;
  pthread_mutex_unlock(&memobj->lock);
  if (!mp)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: %p is not a mapping of this memory object", FN,
                mapped_ptr);
  bool write_back = !mp->direct && (mp->flags & (PI_MAP_WRITE |
                                                 PI_MAP_WRITE_INVALIDATE_REGION));
  pi_result r;
  if (write_back) {
    struct copy_op op = {memobj->ptr + mp->offset, mp->ptr, mp->size};
    r = enqueue(FN, command_queue, PI_COMMAND_TYPE_MEM_BUFFER_UNMAP,
                num_events_in_wait_list, event_wait_list, event, false, false,
                append_copy, &op, mp->staged ? mp->ptr : NULL);
  } else {
    r = enqueue(FN, command_queue, PI_COMMAND_TYPE_MEM_BUFFER_UNMAP,
                num_events_in_wait_list, event_wait_list, event, false, false,
                append_barrier, NULL, mp->staged ? mp->ptr : NULL);
  }
  free(mp); /* the staging memory went to the command (freed on failure) */
  return r;
}

/* ---- Image commands ------------------------------------------------------------ */

struct image_op {
  ze_image_handle_t image, src_image;
  void *ptr;
  ze_image_region_t region, src_region;
  uint32_t row, slice; /* host pitches in bytes; 0 when packed */
  bool to_host, image_to_image;
};

static pi_result append_image(const struct append *a, void *op) {
  struct image_op *i = op;
  if (i->image_to_image)
    return check_ze(a->fn, "zeCommandListAppendImageCopyRegion",
                    zeCommandListAppendImageCopyRegion(
                        a->list, i->image, i->src_image, &i->region,
                        &i->src_region, a->signal, a->nwait, a->wait));
  if (i->row || i->slice) {
    if (i->to_host)
      return check_ze(a->fn, "zeCommandListAppendImageCopyToMemoryExt",
                      zeCommandListAppendImageCopyToMemoryExt(
                          a->list, i->ptr, i->image, &i->region, i->row,
                          i->slice, a->signal, a->nwait, a->wait));
    return check_ze(a->fn, "zeCommandListAppendImageCopyFromMemoryExt",
                    zeCommandListAppendImageCopyFromMemoryExt(
                        a->list, i->image, i->ptr, &i->region, i->row,
                        i->slice, a->signal, a->nwait, a->wait));
  }
  if (i->to_host)
    return check_ze(a->fn, "zeCommandListAppendImageCopyToMemory",
                    zeCommandListAppendImageCopyToMemory(
                        a->list, i->ptr, i->image, &i->region, a->signal,
                        a->nwait, a->wait));
  return check_ze(a->fn, "zeCommandListAppendImageCopyFromMemory",
                  zeCommandListAppendImageCopyFromMemory(
                      a->list, i->image, i->ptr, &i->region, a->signal,
                      a->nwait, a->wait));
}

static pi_result image_region(const char *fn, pi_mem img, const size_t o[3],
                              const size_t r[3], ze_image_region_t *out) {
  if (!img || img->kind != MEM_IMAGE)
    return fail(PI_ERROR_INVALID_MEM_OBJECT, "%s: the memory object is no "
                "image", fn);
  const pi_image_desc *d = &img->desc;
  size_t dims[3] = {d->image_width, image_rows(d), image_slices(d)};
  for (int k = 0; k < 3; ++k)
    if (r[k] == 0 || o[k] > dims[k] || r[k] > dims[k] - o[k])
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: origin %zu,%zu,%zu region %zux%zux%zu is outside the "
                  "%zux%zux%zu image",
                  fn, o[0], o[1], o[2], r[0], r[1], r[2], dims[0], dims[1],
                  dims[2]);
  *out = (ze_image_region_t){(uint32_t)o[0], (uint32_t)o[1], (uint32_t)o[2],
                             (uint32_t)r[0], (uint32_t)r[1], (uint32_t)r[2]};
  return PI_SUCCESS;
}

static pi_result image_rw(const char *fn, bool to_host, pi_queue q,
                          pi_mem image, pi_bool blocking,
                          pi_image_offset origin, pi_image_region region,
                          size_t row_pitch, size_t slice_pitch, void *ptr,
                          pi_uint32 nwait, const pi_event *wait,
                          pi_event *event) {
  if (!origin || !region || !ptr)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the origin, the region and ptr must not be NULL", fn);
  const size_t o[3] = XYZ(origin, x, y, z);
  const size_t r3[3] = XYZ(region, width, height, depth);
  struct image_op op = {.ptr = ptr, .to_host = to_host};
  pi_result r = image_region(fn, image, o, r3, &op.region);
  if (r != PI_SUCCESS)
    return r;
  op.image = image->image;
  size_t packed = r3[0] * image->elem_size;
  if ((row_pitch && row_pitch != packed) ||
      (slice_pitch && slice_pitch != (row_pitch ? row_pitch : packed) * r3[1])) {
    if (!fits_u32(row_pitch) || !fits_u32(slice_pitch))
      return fail(PI_ERROR_INVALID_VALUE, "%s: pitches must fit 32 bits", fn);
    op.row = (uint32_t)(row_pitch ? row_pitch : packed);
    op.slice = (uint32_t)(slice_pitch ? slice_pitch : op.row * r3[1]);
  }
  return enqueue(fn, q,
                 to_host ? PI_COMMAND_TYPE_IMAGE_READ
                         : PI_COMMAND_TYPE_IMAGE_WRITE,
                 nwait, wait, event, blocking, false, append_image, &op, NULL);
}

static pi_result lz_piEnqueueMemImageRead(
    pi_queue command_queue, pi_mem image, pi_bool blocking_read,
    pi_image_offset origin, pi_image_region region, size_t row_pitch,
    size_t slice_pitch, void *ptr, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return image_rw(FN, true, command_queue, image, blocking_read, origin,
                  region, row_pitch, slice_pitch, ptr, num_events_in_wait_list,
                  event_wait_list, event);
}

static pi_result lz_piEnqueueMemImageWrite(
    pi_queue command_queue, pi_mem image, pi_bool blocking_write,
    pi_image_offset origin, pi_image_region region, size_t input_row_pitch,
    size_t input_slice_pitch, const void *ptr,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  return image_rw(FN, false, command_queue, image, blocking_write, origin,
                  region, input_row_pitch, input_slice_pitch, (void *)ptr,
                  num_events_in_wait_list, event_wait_list, event);
}

static pi_result lz_piEnqueueMemImageCopy(
    pi_queue command_queue, pi_mem src_image, pi_mem dst_image,
    pi_image_offset src_origin, pi_image_offset dst_origin,
    pi_image_region region, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  REQUIRE(src_origin && dst_origin && region);
  const size_t s[3] = XYZ(src_origin, x, y, z);
  const size_t d[3] = XYZ(dst_origin, x, y, z);
  const size_t r3[3] = XYZ(region, width, height, depth);
  struct image_op op = {.image_to_image = true};
  pi_result r = image_region(FN, src_image, s, r3, &op.src_region);
  if (r == PI_SUCCESS)
    r = image_region(FN, dst_image, d, r3, &op.region);
  if (r != PI_SUCCESS)
    return r;
  if (src_image->elem_size != dst_image->elem_size)
    return fail(PI_ERROR_IMAGE_FORMAT_MISMATCH,
                "%s: the images' elements differ in size (%zu and %zu bytes)",
                FN, src_image->elem_size, dst_image->elem_size);
  op.image = dst_image->image;
  op.src_image = src_image->image;
  return enqueue(FN, command_queue, PI_COMMAND_TYPE_IMAGE_COPY,
                 num_events_in_wait_list, event_wait_list, event, false, false,
                 append_image, &op, NULL);
}

static pi_result lz_piEnqueueMemImageFill(
    pi_queue command_queue, pi_mem image, const void *fill_color,
    const size_t *origin, const size_t *region,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  (void)command_queue;
  (void)image;
  (void)fill_color;
  (void)origin;
  (void)region;
  (void)num_events_in_wait_list;
  (void)event_wait_list;
  (void)event;
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: Level Zero has no image fill; write the color with "
              "piEnqueueMemImageWrite from a host buffer holding it",
              FN);
}

/* ---- USM ------------------------------------------------------------------------ */

enum usm_kind { USM_HOST, USM_DEVICE, USM_SHARED };

/* The Level Zero allocation flags for a PI property list:
 * {PI_MEM_ALLOC_FLAGS, bits, PI_MEM_USM_ALLOC_BUFFER_LOCATION, loc, 0}.
 * The read-only hint and buffer locations (FPGA) have no Level Zero flag. */
static pi_result usm_flags(const char *fn, const pi_usm_mem_properties *p,
                           ze_host_mem_alloc_flags_t *host,
                           ze_device_mem_alloc_flags_t *dev) {
  const pi_usm_mem_properties bits =
      PI_MEM_ALLOC_WRTITE_COMBINED | PI_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE |
      PI_MEM_ALLOC_INITIAL_PLACEMENT_HOST | PI_MEM_ALLOC_DEVICE_READ_ONLY;
  *host = 0;
  *dev = 0;
  for (size_t i = 0; p && p[i]; i += 2) {
    if (p[i] == PI_MEM_ALLOC_FLAGS) {
      if (p[i + 1] & ~bits)
        return fail(PI_ERROR_INVALID_VALUE,
                    "%s: unknown PI_MEM_ALLOC_FLAGS bits 0x%llx", fn,
                    (unsigned long long)(p[i + 1] & ~bits));
      if (p[i + 1] & PI_MEM_ALLOC_WRTITE_COMBINED)
        *host |= ZE_HOST_MEM_ALLOC_FLAG_BIAS_WRITE_COMBINED;
      if (p[i + 1] & PI_MEM_ALLOC_INITIAL_PLACEMENT_HOST)
        *host |= ZE_HOST_MEM_ALLOC_FLAG_BIAS_INITIAL_PLACEMENT;
      if (p[i + 1] & PI_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE)
        *dev |= ZE_DEVICE_MEM_ALLOC_FLAG_BIAS_INITIAL_PLACEMENT;
    } else if (p[i] != PI_MEM_USM_ALLOC_BUFFER_LOCATION) {
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown USM property 0x%llx",
                  fn, (unsigned long long)p[i]);
    }
  }
  return PI_SUCCESS;
}

static pi_result usm_alloc(const char *fn, enum usm_kind kind,
                           void **result_ptr, pi_context context,
                           pi_device device, pi_usm_mem_properties *properties,
                           size_t size, pi_uint32 alignment) {
  if (!result_ptr)
    return fail(PI_ERROR_INVALID_VALUE, "%s: result_ptr is NULL", fn);
  *result_ptr = NULL;
  if (!context)
    return fail(PI_ERROR_INVALID_CONTEXT, "%s: context is NULL", fn);
  if (kind != USM_HOST && !device)
    return fail(PI_ERROR_INVALID_DEVICE, "%s: device is NULL", fn);
  if (kind != USM_HOST && !context_has_device(context, device))
    return fail(PI_ERROR_INVALID_DEVICE, "%s: device '%s' is not in the "
                "context", fn, dev_name(device));
  if (alignment & (alignment - 1))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: alignment %u is not a power of two", fn,
                (unsigned)alignment);
  if (size == 0)
    return fail(PI_ERROR_INVALID_BUFFER_SIZE, "%s: size is 0", fn);
  ze_host_mem_alloc_flags_t hf;
  ze_device_mem_alloc_flags_t df;
  pi_result r = usm_flags(fn, properties, &hf, &df);
  if (r != PI_SUCCESS)
    return r;
  ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC,
                                 .flags = hf};
  ze_device_mem_alloc_desc_t dd = {
      .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, .flags = df};
  switch (kind) {
  case USM_HOST:
    return check_ze(fn, "zeMemAllocHost",
                    zeMemAllocHost(context->ze, &hd, size, alignment,
                                   result_ptr));
  case USM_DEVICE:
    return check_ze(fn, "zeMemAllocDevice",
                    zeMemAllocDevice(context->ze, &dd, size, alignment,
                                     device->ze, result_ptr));
  default:
    return check_ze(fn, "zeMemAllocShared",
                    zeMemAllocShared(context->ze, &dd, &hd, size, alignment,
                                     device->ze, result_ptr));
  }
}

static pi_result lz_piextUSMHostAlloc(void **result_ptr, pi_context context,
                                      pi_usm_mem_properties *properties,
                                      size_t size, pi_uint32 alignment) {
  return usm_alloc(FN, USM_HOST, result_ptr, context, NULL, properties, size,
                   alignment);
}

static pi_result lz_piextUSMDeviceAlloc(void **result_ptr, pi_context context,
                                        pi_device device,
                                        pi_usm_mem_properties *properties,
                                        size_t size, pi_uint32 alignment) {
  return usm_alloc(FN, USM_DEVICE, result_ptr, context, device, properties,
                   size, alignment);
}

static pi_result lz_piextUSMSharedAlloc(void **result_ptr, pi_context context,
                                        pi_device device,
                                        pi_usm_mem_properties *properties,
                                        size_t size, pi_uint32 alignment) {
  return usm_alloc(FN, USM_SHARED, result_ptr, context, device, properties,
                   size, alignment);
}

static pi_result lz_piextUSMFree(pi_context context, void *ptr) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  if (!ptr)
    return PI_SUCCESS;
  return ZE_CALL(zeMemFree, context->ze, ptr);
}

static pi_result lz_piextUSMEnqueueFill(pi_queue queue, void *ptr,
                                        const void *pattern,
                                        size_t patternSize, size_t count,
                                        pi_uint32 num_events_in_waitlist,
                                        const pi_event *events_waitlist,
                                        pi_event *event) {
  return enqueue_fill(FN, queue, PI_COMMAND_TYPE_SVM_MEMFILL, ptr, pattern,
                      patternSize, count, num_events_in_waitlist,
                      events_waitlist, event);
}

static pi_result lz_piextUSMEnqueueMemcpy(pi_queue queue, pi_bool blocking,
                                          void *dst_ptr, const void *src_ptr,
                                          size_t size,
                                          pi_uint32 num_events_in_waitlist,
                                          const pi_event *events_waitlist,
                                          pi_event *event) {
  REQUIRE(dst_ptr != NULL && src_ptr != NULL);
  struct copy_op op = {dst_ptr, src_ptr, size};
  return enqueue(FN, queue, PI_COMMAND_TYPE_SVM_MEMCPY, num_events_in_waitlist,
                 events_waitlist, event, blocking, false, append_copy, &op,
                 NULL);
}

struct hint_op {
  const void *ptr;
  size_t size;
  ze_memory_advice_t advice[4];
  size_t nadvice;
  bool prefetch;
};

static pi_result append_hint(const struct append *a, void *op) {
  struct hint_op *h = op;
  pi_result r = append_wait(a);
  if (r == PI_SUCCESS && h->prefetch)
    r = check_ze(a->fn, "zeCommandListAppendMemoryPrefetch",
                 zeCommandListAppendMemoryPrefetch(a->list, h->ptr, h->size));
  for (size_t i = 0; r == PI_SUCCESS && i < h->nadvice; ++i)
    r = check_ze(a->fn, "zeCommandListAppendMemAdvise",
                 zeCommandListAppendMemAdvise(a->list, a->q->device->ze,
                                              h->ptr, h->size, h->advice[i]));
  return r == PI_SUCCESS ? append_signal(a) : r;
}

static pi_result lz_piextUSMEnqueuePrefetch(pi_queue queue, const void *ptr,
                                            size_t size,
                                            pi_usm_migration_flags flags,
                                            pi_uint32 num_events_in_waitlist,
                                            const pi_event *events_waitlist,
                                            pi_event *event) {
  if (flags & ~PI_USM_MIGRATION_TBD0)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown migration flags 0x%llx",
                FN, (unsigned long long)flags);
  REQUIRE(ptr != NULL);
  struct hint_op op = {.ptr = ptr, .size = size, .prefetch = true};
  return enqueue(FN, queue, PI_COMMAND_TYPE_MIGRATE_MEM_OBJECTS,
                 num_events_in_waitlist, events_waitlist, event, false, false,
                 append_hint, &op, NULL);
}

/* PI's advice is CUDA's; read-mostly and preferred location map to Level
 * Zero advice, the rest has no Level Zero equivalent and is ignored with a
 * warning (PI_SUCCESS and a piPluginGetLastError message). */
static pi_result lz_piextUSMEnqueueMemAdvise(pi_queue queue, const void *ptr,
                                             size_t length,
                                             pi_mem_advice advice,
                                             pi_event *event) {
  REQUIRE(ptr != NULL);
  struct hint_op op = {.ptr = ptr, .size = length};
  unsigned a = (unsigned)advice, ignored = 0;
  if (advice == PI_MEM_ADVICE_RESET) {
    op.advice[op.nadvice++] = ZE_MEMORY_ADVICE_CLEAR_READ_MOSTLY;
    op.advice[op.nadvice++] = ZE_MEMORY_ADVICE_CLEAR_PREFERRED_LOCATION;
  } else if (advice == PI_MEM_ADVICE_UNKNOWN) {
    return fail(PI_ERROR_INVALID_VALUE, "%s: PI_MEM_ADVICE_UNKNOWN is no "
                "advice", FN);
  } else {
    if (a & PI_MEM_ADVICE_CUDA_SET_READ_MOSTLY)
      op.advice[op.nadvice++] = ZE_MEMORY_ADVICE_SET_READ_MOSTLY;
    if (a & PI_MEM_ADVICE_CUDA_UNSET_READ_MOSTLY)
      op.advice[op.nadvice++] = ZE_MEMORY_ADVICE_CLEAR_READ_MOSTLY;
    if (a & PI_MEM_ADVICE_CUDA_SET_PREFERRED_LOCATION)
      op.advice[op.nadvice++] = ZE_MEMORY_ADVICE_SET_PREFERRED_LOCATION;
    if (a & PI_MEM_ADVICE_CUDA_UNSET_PREFERRED_LOCATION)
      op.advice[op.nadvice++] = ZE_MEMORY_ADVICE_CLEAR_PREFERRED_LOCATION;
    ignored = a & ~0xfu;
  }
  pi_result r = enqueue(FN, queue, PI_COMMAND_TYPE_USER, 0, NULL, event, false,
                        false, append_hint, &op, NULL);
  if (r == PI_SUCCESS && ignored)
    fail(PI_SUCCESS,
         "%s: advice bits 0x%x have no Level Zero equivalent and were ignored",
         FN, ignored);
  return r;
}

static pi_result lz_piextUSMGetMemAllocInfo(pi_context context,
                                            const void *ptr,
                                            pi_mem_alloc_info param_name,
                                            size_t param_value_size,
                                            void *param_value,
                                            size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  ze_memory_allocation_properties_t props = {
      .stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
  ze_device_handle_t zd = NULL;
  void *base = NULL;
  size_t size = 0;
  pi_result r;
  switch (param_name) {
  case PI_MEM_ALLOC_TYPE:
  case PI_MEM_ALLOC_DEVICE:
    r = ZE_CALL(zeMemGetAllocProperties, context->ze, ptr, &props, &zd);
    if (r != PI_SUCCESS)
      return r;
    if (param_name == PI_MEM_ALLOC_DEVICE)
      return put_ptr(&o, zd ? find_device(context->platform, zd) : NULL);
    return put_u32(&o, props.type == ZE_MEMORY_TYPE_HOST     ? PI_MEM_TYPE_HOST
                       : props.type == ZE_MEMORY_TYPE_DEVICE ? PI_MEM_TYPE_DEVICE
                       : props.type == ZE_MEMORY_TYPE_SHARED ? PI_MEM_TYPE_SHARED
                                                             : PI_MEM_TYPE_UNKNOWN);
  case PI_MEM_ALLOC_BASE_PTR:
  case PI_MEM_ALLOC_SIZE:
    r = ZE_CALL(zeMemGetAddressRange, context->ze, ptr, &base, &size);
    if (r != PI_SUCCESS)
      return r;
    return param_name == PI_MEM_ALLOC_SIZE ? put_size(&o, size)
                                           : put_ptr(&o, base);
  default:
    return unknown_query(&o);
  }
}

/* Row-by-row fills in one command list: the first row waits, the last
 * signals. */
struct fill2d_op {
  char *ptr;
  size_t pitch, width, height;
  const void *pattern;
  size_t pattern_size;
};

static pi_result append_fill2d(const struct append *a, void *op) {
  struct fill2d_op *f = op;
  pi_result r = append_wait(a);
  for (size_t row = 0; r == PI_SUCCESS && row < f->height; ++row)
    r = check_ze(a->fn, "zeCommandListAppendMemoryFill",
                 zeCommandListAppendMemoryFill(
                     a->list, f->ptr + row * f->pitch, f->pattern,
                     f->pattern_size, f->width,
                     row + 1 == f->height ? a->signal : NULL, 0, NULL));
  if (r == PI_SUCCESS && f->height == 0)
    r = append_signal(a);
  return r;
}

static pi_result fill2d(const char *fn, pi_queue queue, void *ptr,
                        size_t pitch, const void *pattern, size_t pattern_size,
                        size_t width, size_t height, pi_uint32 nwait,
                        const pi_event *wait, pi_event *event) {
  if (!ptr || !pattern || !pattern_size || width % pattern_size ||
      pitch < width || (pattern_size & (pattern_size - 1)))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a 2D fill needs a pointer, a power-of-two pattern size "
                "(%zu) dividing the width (%zu), and a pitch (%zu) no smaller "
                "than the width",
                fn, pattern_size, width, pitch);
  if (queue && pattern_size > queue->device->max_fill)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: device '%s' fills patterns of up to %zu bytes, not %zu",
                fn, dev_name(queue->device), queue->device->max_fill,
                pattern_size);
  struct fill2d_op op = {ptr, pitch, width, height, pattern, pattern_size};
  return enqueue(fn, queue, PI_COMMAND_TYPE_SVM_MEMFILL, nwait, wait, event,
                 false, false, append_fill2d, &op, NULL);
}

static pi_result lz_piextUSMEnqueueFill2D(pi_queue queue, void *ptr,
                                          size_t pitch, size_t pattern_size,
                                          const void *pattern, size_t width,
                                          size_t height,
                                          pi_uint32 num_events_in_waitlist,
                                          const pi_event *events_waitlist,
                                          pi_event *event) {
  return fill2d(FN, queue, ptr, pitch, pattern, pattern_size, width, height,
                num_events_in_waitlist, events_waitlist, event);
}

static pi_result lz_piextUSMEnqueueMemset2D(pi_queue queue, void *ptr,
                                            size_t pitch, int value,
                                            size_t width, size_t height,
                                            pi_uint32 num_events_in_waitlist,
                                            const pi_event *events_waitlist,
                                            pi_event *event) {
  unsigned char byte = (unsigned char)value;
  return fill2d(FN, queue, ptr, pitch, &byte, 1, width, height,
                num_events_in_waitlist, events_waitlist, event);
}

/* One region copy with both pitches. */
static pi_result lz_piextUSMEnqueueMemcpy2D(
    pi_queue queue, pi_bool blocking, void *dst_ptr, size_t dst_pitch,
    const void *src_ptr, size_t src_pitch, size_t width, size_t height,
    pi_uint32 num_events_in_waitlist, const pi_event *events_waitlist,
    pi_event *event) {
  REQUIRE(dst_ptr != NULL && src_ptr != NULL);
  const size_t zero[3] = {0, 0, 0}, region[3] = {width, height, 1};
  struct rect_op op;
  pi_result r = rect_setup(FN, &op, dst_ptr, zero, dst_pitch, 0, src_ptr, zero,
                           src_pitch, 0, region);
  if (r != PI_SUCCESS)
    return r;
  return enqueue(FN, queue, PI_COMMAND_TYPE_SVM_MEMCPY, num_events_in_waitlist,
                 events_waitlist, event, blocking, false, append_rect, &op,
                 NULL);
}

/* Pins host memory for faster copies with zexDriverImportExternalPointer
 * where the driver offers it; elsewhere copies from unimported memory work
 * anyway, and the call succeeds with a warning. */
static pi_result lz_piextUSMImport(const void *ptr, size_t size,
                                   pi_context context) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(ptr != NULL && size != 0);
  pi_platform p = context->platform;
  if (!p->import_ptr)
    return fail(PI_SUCCESS,
                "%s: the Level Zero driver offers no "
                "zexDriverImportExternalPointer; the memory stays unpinned",
                FN);
  return check_ze(FN, "zexDriverImportExternalPointer",
                  p->import_ptr(p->ze, (void *)ptr, size));
}

static pi_result lz_piextUSMRelease(const void *ptr, pi_context context) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(ptr != NULL);
  pi_platform p = context->platform;
  if (!p->release_ptr)
    return PI_SUCCESS; /* nothing was imported */
  return check_ze(FN, "zexDriverReleaseImportedPointer",
                  p->release_ptr(p->ze, (void *)ptr));
}

/* ---- Programs ----------------------------------------------------------------------
 * A program holds SPIR-V (or native binaries per device) until it is built;
 * piProgramBuild creates one module per device, piProgramLink one per input
 * program and device, linked with zeModuleDynamicLink. The specialization
 * constants set on a program go to zeModuleCreate in ze_module_constants_t. */

static pi_result program_new(const char *fn, pi_context c,
                             enum program_state state, pi_uint32 n,
                             const pi_device *devices, pi_program *out) {
  pi_program p = calloc(1, sizeof *p);
  struct prog_dev *devs = calloc(n ? n : 1, sizeof *devs);
  if (!p || !devs) {
    free(p);
    free(devs);
    return out_of_memory(fn);
  }
  for (pi_uint32 i = 0; i < n; ++i) {
    devs[i].device = devices[i];
    devs[i].status = PI_PROGRAM_BUILD_STATUS_NONE;
  }
  p->context = c;
  p->state = state;
  p->ndevs = n;
  p->devs = devs;
  atomic_init(&p->refs, 1);
  pthread_mutex_init(&p->lock, NULL);
  context_retain(c);
  *out = p;
  return PI_SUCCESS;
}

/* Destroys the modules and logs of one device's build. */
static void prog_dev_clear(struct prog_dev *d, bool destroy_modules) {
  for (uint32_t m = 0; destroy_modules && m < d->nmodules; ++m)
    if (d->modules[m])
      zeModuleDestroy(d->modules[m]);
  free(d->modules);
  d->modules = NULL;
  d->nmodules = 0;
  if (d->log)
    zeModuleBuildLogDestroy(d->log);
  d->log = NULL;
}

static pi_result program_release(const char *fn, pi_program p) {
  if (!ref_release(&p->refs))
    return PI_SUCCESS;
  for (pi_uint32 i = 0; i < p->ndevs; ++i) {
    /* A program made from a native module shares it between its devices
     * and destroys it (once) only if it owns it. */
    bool destroy = p->shared_module ? p->owns_native && i == 0 : true;
    prog_dev_clear(&p->devs[i], destroy);
    free((void *)p->devs[i].binary);
  }
  for (size_t i = 0; i < p->nspecs; ++i)
    free(p->specs[i].value);
  free(p->specs);
  free(p->devs);
  free(p->il);
  free(p->options);
  pi_result r = context_release(fn, p->context);
  pthread_mutex_destroy(&p->lock);
  free(p);
  return r;
}

static pi_result lz_piProgramCreate(pi_context context, const void *il,
                                    size_t length, pi_program *res_program) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(res_program != NULL);
  *res_program = NULL;
  if (!is_spirv(il, length))
    return fail(PI_ERROR_INVALID_BINARY,
                "%s: the %zu bytes given are not SPIR-V (no 0x07230203 magic "
                "number, or not a whole number of 32-bit words, or shorter "
                "than a SPIR-V header); Level Zero takes SPIR-V",
                FN, length);
  pi_program p;
  pi_result r = program_new(FN, context, PROG_IL, context->ndevices,
                            context->devices, &p);
  if (r != PI_SUCCESS)
    return r;
  if (!(p->il = malloc(length))) {
    program_release(FN, p);
    return out_of_memory(FN);
  }
  memcpy(p->il, il, length);
  p->il_size = length;
  *res_program = p;
  return PI_SUCCESS;
}

static pi_result lz_piclProgramCreateWithSource(pi_context context,
                                                pi_uint32 count,
                                                const char **strings,
                                                const size_t *lengths,
                                                pi_program *ret_program) {
  (void)context;
  (void)count;
  (void)strings;
  (void)lengths;
  if (ret_program)
    *ret_program = NULL;
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: Level Zero compiles no OpenCL C source; give it SPIR-V "
              "(piProgramCreate) or a native binary",
              FN);
}

/* Native binaries per device; a binary that is SPIR-V makes an IL program.
 * The DPC++ metadata entries mean nothing to Level Zero. */
static pi_result lz_piProgramCreateWithBinary(
    pi_context context, pi_uint32 num_devices, const pi_device *device_list,
    const size_t *lengths, const unsigned char **binaries,
    size_t num_metadata_entries, const pi_device_binary_property *metadata,
    pi_int32 *binary_status, pi_program *ret_program) {
  (void)num_metadata_entries;
  (void)metadata;
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(ret_program != NULL);
  *ret_program = NULL;
  REQUIRE(num_devices > 0 && device_list && lengths && binaries);
  for (pi_uint32 i = 0; i < num_devices; ++i) {
    if (!device_list[i] || !context_has_device(context, device_list[i]))
      return fail(PI_ERROR_INVALID_DEVICE,
                  "%s: device %u is NULL or not in the context", FN,
                  (unsigned)i);
    if (!binaries[i] || !lengths[i]) {
      if (binary_status)
        binary_status[i] = PI_ERROR_INVALID_BINARY;
      return fail(PI_ERROR_INVALID_VALUE, "%s: binary %u is empty", FN,
                  (unsigned)i);
    }
  }
  if (is_spirv(binaries[0], lengths[0])) {
    pi_result r = lz_piProgramCreate(context, binaries[0], lengths[0],
                                     ret_program);
    for (pi_uint32 i = 0; binary_status && i < num_devices; ++i)
      binary_status[i] = r;
    return r;
  }
  pi_program p = NULL;
  pi_result r = program_new(FN, context, PROG_NATIVE, num_devices, device_list,
                            &p);
  for (pi_uint32 i = 0; r == PI_SUCCESS && i < num_devices; ++i) {
    unsigned char *copy = malloc(lengths[i]);
    if (!copy) {
      r = out_of_memory(FN);
      break;
    }
    memcpy(copy, binaries[i], lengths[i]);
    p->devs[i].binary = copy;
    p->devs[i].binary_size = lengths[i];
  }
  for (pi_uint32 i = 0; binary_status && i < num_devices; ++i)
    binary_status[i] = r;
  if (r != PI_SUCCESS) {
    if (p)
      program_release(FN, p);
    return r;
  }
  *ret_program = p;
  return PI_SUCCESS;
}

static struct prog_dev *prog_dev_of(pi_program p, pi_device d) {
  for (pi_uint32 i = 0; i < p->ndevs; ++i)
    if (p->devs[i].device == d)
      return &p->devs[i];
  for (pi_uint32 i = 0; d && d->parent && i < p->ndevs; ++i)
    if (p->devs[i].device == d->parent)
      return &p->devs[i];
  return NULL;
}

/* The build log of a module, appended to the last error message. */
static void append_log(ze_module_build_log_handle_t log) {
  size_t size = 0;
  if (!log || zeModuleBuildLogGetString(log, &size, NULL) != ZE_RESULT_SUCCESS ||
      size <= 1)
    return;
  char *s = malloc(size);
  if (s && zeModuleBuildLogGetString(log, &size, s) == ZE_RESULT_SUCCESS) {
    s[size - 1] = '\0';
    size_t used = strlen(last_message);
    snprintf(last_message + used, sizeof last_message - used,
             "; build log: %s", s);
  }
  free(s);
}

/* zeModuleCreate for one device, with the specialization constants. */
static pi_result module_create(const char *fn, pi_context c, pi_device dev,
                               bool native, const unsigned char *bin,
                               size_t size, const char *options,
                               const struct spec_const *specs, size_t nspecs,
                               ze_module_handle_t *module,
                               ze_module_build_log_handle_t *log) {
  uint32_t *ids = calloc(nspecs ? nspecs : 1, sizeof *ids);
  const void **values = calloc(nspecs ? nspecs : 1, sizeof *values);
  if (!ids || !values) {
    free(ids);
    free(values);
    return out_of_memory(fn);
  }
  for (size_t i = 0; i < nspecs; ++i) {
    ids[i] = specs[i].id;
    values[i] = specs[i].value;
  }
  ze_module_constants_t consts = {(uint32_t)nspecs, ids, values};
  ze_module_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                           .format = native ? ZE_MODULE_FORMAT_NATIVE
                                            : ZE_MODULE_FORMAT_IL_SPIRV,
                           .inputSize = size,
                           .pInputModule = bin,
                           .pBuildFlags = options ? options : "",
                           .pConstants = nspecs ? &consts : NULL};
  *module = NULL;
  *log = NULL;
  ze_result_t zr = zeModuleCreate(c->ze, dev->ze, &desc, module, log);
  free(ids);
  free(values);
  if (zr != ZE_RESULT_SUCCESS) {
    *module = NULL;
    pi_result r = fail(pi_from_ze(zr),
                       "%s: zeModuleCreate failed with %s (0x%x) on device "
                       "'%s'",
                       fn, ze_result_name(zr), (unsigned)zr, dev_name(dev));
    append_log(*log);
    return r;
  }
  return PI_SUCCESS;
}

static pi_result program_devices(const char *fn, pi_program p, pi_uint32 n,
                                 const pi_device *list, bool *want) {
  for (pi_uint32 i = 0; i < p->ndevs; ++i)
    want[i] = n == 0;
  for (pi_uint32 k = 0; k < n; ++k) {
    struct prog_dev *d = list ? prog_dev_of(p, list[k]) : NULL;
    if (!d)
      return fail(PI_ERROR_INVALID_DEVICE,
                  "%s: device %u is NULL or not a device of the program", fn,
                  (unsigned)k);
    want[d - p->devs] = true;
  }
  return PI_SUCCESS;
}

static char *strdup_or_empty(const char *s) { return strdup(s ? s : ""); }

static pi_result lz_piProgramBuild(pi_program program, pi_uint32 num_devices,
                                   const pi_device *device_list,
                                   const char *options,
                                   void (*pfn_notify)(pi_program program,
                                                      void *user_data),
                                   void *user_data) {
  pi_program p = program;
  NEED(p, PI_ERROR_INVALID_PROGRAM);
  bool want[64];
  if (p->ndevs > 64)
    return fail(PI_ERROR_INVALID_VALUE, "%s: programs of more than 64 devices "
                "are not supported", FN);
  pthread_mutex_lock(&p->lock);
  pi_result r = PI_SUCCESS;
  if (p->state != PROG_IL && p->state != PROG_NATIVE)
    r = fail(PI_ERROR_INVALID_OPERATION,
             "%s: the program is %s; only programs made from SPIR-V or native "
             "binaries are built (link compiled programs with piProgramLink)",
             FN, p->state == PROG_OBJECT ? "compiled" : "already built");
  if (r == PI_SUCCESS)
    r = program_devices(FN, p, num_devices, device_list, want);
  char *opts = r == PI_SUCCESS ? strdup_or_empty(options) : NULL;
  if (r == PI_SUCCESS && !opts)
    r = out_of_memory(FN);
  if (r == PI_SUCCESS) {
    free(p->options);
    p->options = opts;
  }
  bool any_failed = false;
  for (pi_uint32 i = 0; r == PI_SUCCESS && i < p->ndevs; ++i) {
    struct prog_dev *d = &p->devs[i];
    if (!want[i])
      continue;
    prog_dev_clear(d, true);
    bool native = p->state == PROG_NATIVE;
    ze_module_handle_t *mods = calloc(1, sizeof *mods);
    if (!mods) {
      r = out_of_memory(FN);
      break;
    }
    d->modules = mods;
    pi_result br = module_create(
        FN, p->context, d->device, native, native ? d->binary : p->il,
        native ? d->binary_size : p->il_size, p->options, p->specs, p->nspecs,
        &mods[0], &d->log);
    if (br == PI_SUCCESS) {
      d->nmodules = 1;
      d->status = PI_PROGRAM_BUILD_STATUS_SUCCESS;
    } else {
      d->status = PI_PROGRAM_BUILD_STATUS_ERROR;
      if (br != PI_ERROR_BUILD_PROGRAM_FAILURE && br != PI_ERROR_INVALID_BINARY)
        r = br;
      else if (!any_failed) {
        any_failed = true;
        r = PI_SUCCESS; /* the message stays; other devices still build */
      }
    }
  }
  char failure[sizeof last_message];
  if (any_failed)
    memcpy(failure, last_message, sizeof failure);
  if (r == PI_SUCCESS && !any_failed)
    p->state = PROG_EXE;
  else if (r == PI_SUCCESS)
    p->state = PROG_EXE; /* built where it could be: the log tells the rest */
  pthread_mutex_unlock(&p->lock);
  if (r == PI_SUCCESS && any_failed)
    r = fail(PI_ERROR_BUILD_PROGRAM_FAILURE, "%s", failure);
  if (pfn_notify && (r == PI_SUCCESS || r == PI_ERROR_BUILD_PROGRAM_FAILURE))
    pfn_notify(p, user_data);
  return r;
}

/* Level Zero compiles and links in zeModuleCreate: compiling records the
 * options, and piProgramLink creates the modules. */
static pi_result lz_piProgramCompile(
    pi_program program, pi_uint32 num_devices, const pi_device *device_list,
    const char *options, pi_uint32 num_input_headers,
    const pi_program *input_headers, const char **header_include_names,
    void (*pfn_notify)(pi_program program, void *user_data), void *user_data) {
  (void)input_headers;
  (void)header_include_names;
  pi_program p = program;
  NEED(p, PI_ERROR_INVALID_PROGRAM);
  if (num_input_headers)
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: headers are for OpenCL C source; Level Zero compiles "
                "SPIR-V, which has none",
                FN);
  bool want[64];
  if (p->ndevs > 64)
    return fail(PI_ERROR_INVALID_VALUE, "%s: programs of more than 64 devices "
                "are not supported", FN);
  pthread_mutex_lock(&p->lock);
  pi_result r = p->state == PROG_IL
                    ? program_devices(FN, p, num_devices, device_list, want)
                    : fail(PI_ERROR_INVALID_OPERATION,
                           "%s: only a program made from SPIR-V can be "
                           "compiled",
                           FN);
  char *opts = r == PI_SUCCESS ? strdup_or_empty(options) : NULL;
  if (r == PI_SUCCESS && !opts)
    r = out_of_memory(FN);
  if (r == PI_SUCCESS) {
    free(p->options);
    p->options = opts;
    p->state = PROG_OBJECT;
  }
  pthread_mutex_unlock(&p->lock);
  if (r == PI_SUCCESS && pfn_notify)
    pfn_notify(p, user_data);
  return r;
}

/* "compile options link options" for one input. */
static char *join_options(const char *a, const char *b) {
  a = a ? a : "";
  b = b ? b : "";
  size_t n = strlen(a) + strlen(b) + 2;
  char *s = malloc(n);
  if (s)
    snprintf(s, n, "%s%s%s", a, *a && *b ? " " : "", b);
  return s;
}

/* One module per input program and device, linked with zeModuleDynamicLink.
 * On a build or link failure *ret_program still holds the program: its
 * build log tells why. */
static pi_result lz_piProgramLink(
    pi_context context, pi_uint32 num_devices, const pi_device *device_list,
    const char *options, pi_uint32 num_input_programs,
    const pi_program *input_programs,
    void (*pfn_notify)(pi_program program, void *user_data), void *user_data,
    pi_program *ret_program) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(ret_program != NULL);
  *ret_program = NULL;
  if (num_input_programs == 0 || !input_programs)
    return fail(PI_ERROR_INVALID_VALUE, "%s: there are no programs to link",
                FN);
  for (pi_uint32 i = 0; i < num_input_programs; ++i) {
    pi_program in = input_programs[i];
    if (!in)
      return fail(PI_ERROR_INVALID_PROGRAM, "%s: input program %u is NULL", FN,
                  (unsigned)i);
    pthread_mutex_lock(&in->lock);
    bool ok = in->state == PROG_OBJECT || in->state == PROG_IL;
    pthread_mutex_unlock(&in->lock);
    if (!ok)
      return fail(PI_ERROR_INVALID_PROGRAM,
                  "%s: input program %u is neither compiled nor SPIR-V", FN,
                  (unsigned)i);
  }
  const pi_device *devs = num_devices ? device_list : context->devices;
  pi_uint32 ndevs = num_devices ? num_devices : context->ndevices;
  pi_result r = devs ? context_check_devices(FN, ndevs, devs)
                     : fail(PI_ERROR_INVALID_VALUE, "%s: device_list is NULL",
                            FN);
  pi_program p = NULL;
  if (r == PI_SUCCESS)
    r = program_new(FN, context, PROG_EXE, ndevs, devs, &p);
  if (r != PI_SUCCESS)
    return r;
  p->options = strdup_or_empty(options);
  bool failed = false;
  for (pi_uint32 i = 0; r == PI_SUCCESS && i < ndevs && !failed; ++i) {
    struct prog_dev *d = &p->devs[i];
    d->modules = calloc(num_input_programs, sizeof *d->modules);
    if (!d->modules || !p->options) {
      r = out_of_memory(FN);
      break;
    }
    for (pi_uint32 k = 0; r == PI_SUCCESS && k < num_input_programs; ++k) {
      pi_program in = input_programs[k];
      pthread_mutex_lock(&in->lock);
      char *opts = join_options(in->options, options);
      ze_module_build_log_handle_t log = NULL;
      pi_result mr = opts ? module_create(FN, context, d->device, false,
                                          in->il, in->il_size, opts, in->specs,
                                          in->nspecs, &d->modules[k], &log)
                          : out_of_memory(FN);
      pthread_mutex_unlock(&in->lock);
      free(opts);
      if (mr == PI_SUCCESS) {
        d->nmodules = k + 1;
        if (log)
          zeModuleBuildLogDestroy(log);
      } else if (mr == PI_ERROR_BUILD_PROGRAM_FAILURE) {
        d->log = log;
        d->status = PI_PROGRAM_BUILD_STATUS_ERROR;
        failed = true;
        break;
      } else {
        if (log)
          zeModuleBuildLogDestroy(log);
        r = mr;
      }
    }
    if (r != PI_SUCCESS || failed)
      break;
    ze_result_t zr = zeModuleDynamicLink(d->nmodules, d->modules, &d->log);
    if (zr == ZE_RESULT_SUCCESS) {
      d->status = PI_PROGRAM_BUILD_STATUS_SUCCESS;
    } else {
      d->status = PI_PROGRAM_BUILD_STATUS_ERROR;
      failed = true;
      fail(PI_ERROR_LINK_PROGRAM_FAILURE,
           "%s: zeModuleDynamicLink failed with %s (0x%x) on device '%s'", FN,
           ze_result_name(zr), (unsigned)zr, dev_name(d->device));
      append_log(d->log);
    }
  }
  if (r != PI_SUCCESS) {
    program_release(FN, p);
    return r;
  }
  *ret_program = p;
  if (failed) {
    char msg[sizeof last_message];
    memcpy(msg, last_message, sizeof msg);
    r = fail(PI_ERROR_LINK_PROGRAM_FAILURE, "%s", msg);
  }
  if (pfn_notify)
    pfn_notify(p, user_data);
  return r;
}

static pi_result lz_piProgramGetBuildInfo(pi_program program, pi_device device,
                                          pi_program_build_info param_name,
                                          size_t param_value_size,
                                          void *param_value,
                                          size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  pi_program p = program;
  NEED(p, PI_ERROR_INVALID_PROGRAM);
  NEED(device, PI_ERROR_INVALID_DEVICE);
  pthread_mutex_lock(&p->lock);
  struct prog_dev *d = prog_dev_of(p, device);
  pi_result r;
  if (!d) {
    r = fail(PI_ERROR_INVALID_DEVICE, "%s: device '%s' is not a device of the "
             "program", FN, dev_name(device));
  } else if (param_name == PI_PROGRAM_BUILD_INFO_STATUS) {
    int32_t s = p->state == PROG_OBJECT ? PI_PROGRAM_BUILD_STATUS_SUCCESS
                                        : (int32_t)d->status;
    r = put_info(&o, &s, sizeof s);
  } else if (param_name == PI_PROGRAM_BUILD_INFO_OPTIONS) {
    r = put_str(&o, p->options ? p->options : "");
  } else if (param_name == PI_PROGRAM_BUILD_INFO_BINARY_TYPE) {
    r = put_u32(&o, p->state == PROG_OBJECT ? PI_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
                    : d->nmodules           ? PI_PROGRAM_BINARY_TYPE_EXECUTABLE
                                            : PI_PROGRAM_BINARY_TYPE_NONE);
  } else if (param_name == PI_PROGRAM_BUILD_INFO_LOG) {
    size_t size = 0;
    if (!d->log) {
      r = put_str(&o, "");
    } else if ((r = ZE_CALL(zeModuleBuildLogGetString, d->log, &size, NULL)) ==
               PI_SUCCESS) {
      char *s = calloc(1, size + 1);
      if (!s)
        r = out_of_memory(FN);
      else if ((r = ZE_CALL(zeModuleBuildLogGetString, d->log, &size, s)) ==
               PI_SUCCESS)
        r = put_str(&o, s);
      free(s);
    }
  } else {
    r = unknown_query(&o);
  }
  pthread_mutex_unlock(&p->lock);
  return r;
}

/* The kernel names of a device's modules, ';'-separated (malloc'd). */
static pi_result kernel_names(const char *fn, struct prog_dev *d, char **out,
                              size_t *count) {
  size_t len = 1, n = 0;
  char *s = calloc(1, 1);
  for (uint32_t m = 0; s && m < d->nmodules; ++m) {
    uint32_t k = 0;
    pi_result r = check_ze(fn, "zeModuleGetKernelNames",
                           zeModuleGetKernelNames(d->modules[m], &k, NULL));
    const char **names = r == PI_SUCCESS ? calloc(k ? k : 1, sizeof *names)
                                         : NULL;
    if (r == PI_SUCCESS && names)
      r = check_ze(fn, "zeModuleGetKernelNames",
                   zeModuleGetKernelNames(d->modules[m], &k, names));
    for (uint32_t i = 0; r == PI_SUCCESS && names && i < k; ++i) {
      len += strlen(names[i]) + 1;
      char *ns = realloc(s, len);
      if (!ns) {
        free(s);
        s = NULL;
        break;
      }
      s = ns;
      if (n++)
        strcat(s, ";");
      strcat(s, names[i]);
    }
    free(names);
    if (r != PI_SUCCESS) {
      free(s);
      return r;
    }
  }
  if (!s)
    return out_of_memory(fn);
  *out = s;
  *count = n;
  return PI_SUCCESS;
}

/* The binary of one device: the native binary of its one module when
 * built, else the input (SPIR-V or native). */
static pi_result device_binary(const char *fn, pi_program p,
                               struct prog_dev *d, unsigned char *dst,
                               size_t *size) {
  if (d->nmodules == 1)
    return check_ze(fn, "zeModuleGetNativeBinary",
                    zeModuleGetNativeBinary(d->modules[0], size, dst));
  if (d->nmodules > 1)
    return fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE,
                "%s: a program linked from %u modules has no single binary",
                fn, (unsigned)d->nmodules);
  const unsigned char *src = p->state == PROG_NATIVE ? d->binary : p->il;
  size_t n = p->state == PROG_NATIVE ? d->binary_size : p->il_size;
  if (dst && src)
    memcpy(dst, src, n);
  *size = n;
  return PI_SUCCESS;
}

static pi_result lz_piProgramGetInfo(pi_program program,
                                     pi_program_info param_name,
                                     size_t param_value_size, void *param_value,
                                     size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  pi_program p = program;
  NEED(p, PI_ERROR_INVALID_PROGRAM);
  pthread_mutex_lock(&p->lock);
  pi_result r = PI_SUCCESS;
  switch (param_name) {
  case PI_PROGRAM_INFO_REFERENCE_COUNT:
    r = put_u32(&o, atomic_load(&p->refs));
    break;
  case PI_PROGRAM_INFO_CONTEXT:
    r = put_ptr(&o, p->context);
    break;
  case PI_PROGRAM_INFO_NUM_DEVICES:
    r = put_u32(&o, p->ndevs);
    break;
  case PI_PROGRAM_INFO_DEVICES: {
    pi_device devs[64];
    pi_uint32 n = p->ndevs < 64 ? p->ndevs : 64;
    for (pi_uint32 i = 0; i < n; ++i)
      devs[i] = p->devs[i].device;
    r = put_info(&o, devs, n * sizeof devs[0]);
    break;
  }
  case PI_PROGRAM_INFO_SOURCE:
    r = put_str(&o, ""); /* SPIR-V and binaries have no source */
    break;
  case PI_PROGRAM_INFO_BINARY_SIZES: {
    size_t sizes[64];
    pi_uint32 n = p->ndevs < 64 ? p->ndevs : 64;
    for (pi_uint32 i = 0; r == PI_SUCCESS && i < n; ++i)
      r = device_binary(FN, p, &p->devs[i], NULL, &sizes[i]);
    if (r == PI_SUCCESS)
      r = put_info(&o, sizes, n * sizeof sizes[0]);
    break;
  }
  case PI_PROGRAM_INFO_BINARIES: {
    /* param_value is an array of one buffer per device, each as large as
     * PI_PROGRAM_INFO_BINARY_SIZES said. */
    size_t need = p->ndevs * sizeof(unsigned char *);
    if (param_value && param_value_size < need) {
      r = fail(PI_ERROR_INVALID_VALUE,
               "%s: query 0x%x needs %zu bytes of pointers but "
               "param_value_size is %zu",
               FN, (unsigned)param_name, need, param_value_size);
      break;
    }
    unsigned char **bufs = param_value;
    for (pi_uint32 i = 0; bufs && r == PI_SUCCESS && i < p->ndevs; ++i) {
      size_t size = 0;
      if (bufs[i] && (r = device_binary(FN, p, &p->devs[i], NULL, &size)) ==
                         PI_SUCCESS)
        r = device_binary(FN, p, &p->devs[i], bufs[i], &size);
    }
    if (r == PI_SUCCESS && param_value_size_ret)
      *param_value_size_ret = need;
    break;
  }
  case PI_PROGRAM_INFO_NUM_KERNELS:
  case PI_PROGRAM_INFO_KERNEL_NAMES: {
    struct prog_dev *d = NULL;
    for (pi_uint32 i = 0; !d && i < p->ndevs; ++i)
      if (p->devs[i].nmodules)
        d = &p->devs[i];
    if (!d) {
      r = fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE,
               "%s: the program is not built for any device, so it has no "
               "kernels yet",
               FN);
      break;
    }
    char *names = NULL;
    size_t count = 0;
    if ((r = kernel_names(FN, d, &names, &count)) == PI_SUCCESS)
      r = param_name == PI_PROGRAM_INFO_NUM_KERNELS ? put_size(&o, count)
                                                    : put_str(&o, names);
    free(names);
    break;
  }
  default:
    r = unknown_query(&o);
  }
  pthread_mutex_unlock(&p->lock);
  return r;
}

static pi_result lz_piProgramRetain(pi_program program) {
  NEED(program, PI_ERROR_INVALID_PROGRAM);
  ref_retain(&program->refs);
  return PI_SUCCESS;
}

static pi_result lz_piProgramRelease(pi_program program) {
  NEED(program, PI_ERROR_INVALID_PROGRAM);
  return program_release(FN, program);
}

/* Records {id, value} for the next zeModuleCreate; setting an id again
 * replaces its value. The value is kept zero-padded to whole 64-bit words,
 * so a driver reading the SPIR-V width of the constant never reads past
 * it. */
static pi_result lz_piextProgramSetSpecializationConstant(
    pi_program prog, pi_uint32 spec_id, size_t spec_size,
    const void *spec_value) {
  NEED(prog, PI_ERROR_INVALID_PROGRAM);
  if (spec_size == 0 || !spec_value)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: specialization constant %u has no value", FN,
                (unsigned)spec_id);
  uint64_t *value = calloc((spec_size + 7) / 8, sizeof *value);
  if (!value)
    return out_of_memory(FN);
  memcpy(value, spec_value, spec_size);
  pthread_mutex_lock(&prog->lock);
  pi_result r = PI_SUCCESS;
  if (prog->state != PROG_IL && prog->state != PROG_OBJECT) {
    r = fail(PI_ERROR_INVALID_OPERATION,
             "%s: specialization constant %u: the program is %s; constants "
             "are set on SPIR-V programs before piProgramBuild or "
             "piProgramLink",
             FN, (unsigned)spec_id,
             prog->state == PROG_NATIVE ? "a native binary, whose constants "
                                          "are fixed"
                                        : "already built");
  } else {
    size_t i = 0;
    while (i < prog->nspecs && prog->specs[i].id != spec_id)
      ++i;
    if (i == prog->nspecs) {
      struct spec_const *s =
          realloc(prog->specs, (prog->nspecs + 1) * sizeof *s);
      if (!s)
        r = out_of_memory(FN);
      else {
        prog->specs = s;
        prog->specs[prog->nspecs++] = (struct spec_const){spec_id, 0, NULL};
      }
    }
    if (r == PI_SUCCESS) {
      free(prog->specs[i].value);
      prog->specs[i].size = spec_size;
      prog->specs[i].value = value;
      value = NULL;
    }
  }
  pthread_mutex_unlock(&prog->lock);
  free(value);
  return r;
}

static pi_result lz_piextProgramGetNativeHandle(pi_program program,
                                                pi_native_handle *nativeHandle) {
  NEED(program, PI_ERROR_INVALID_PROGRAM);
  pthread_mutex_lock(&program->lock);
  ze_module_handle_t m =
      program->ndevs && program->devs[0].nmodules == 1
          ? program->devs[0].modules[0]
          : NULL;
  pthread_mutex_unlock(&program->lock);
  if (!m)
    return fail(PI_ERROR_INVALID_PROGRAM,
                "%s: the program has no single Level Zero module (it is not "
                "built, or linked from several modules)",
                FN);
  return native_of(FN, m, nativeHandle);
}

/* A Level Zero module does not tell its device: the program is taken to
 * serve every device of the context. */
static pi_result lz_piextProgramCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context,
    bool pluginOwnsNativeHandle, pi_program *program) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(nativeHandle != 0 && program != NULL);
  pi_program p;
  pi_result r = program_new(FN, context, PROG_EXE, context->ndevices,
                            context->devices, &p);
  if (r != PI_SUCCESS)
    return r;
  p->owns_native = pluginOwnsNativeHandle;
  p->shared_module = true;
  for (pi_uint32 i = 0; i < p->ndevs; ++i) {
    if (!(p->devs[i].modules = calloc(1, sizeof(ze_module_handle_t)))) {
      p->owns_native = false;
      program_release(FN, p);
      return out_of_memory(FN);
    }
    p->devs[i].modules[0] = (ze_module_handle_t)nativeHandle;
    p->devs[i].nmodules = 1;
    p->devs[i].status = PI_PROGRAM_BUILD_STATUS_SUCCESS;
  }
  *program = p;
  return PI_SUCCESS;
}

/* The module of a program device that holds `name` as a global or function,
 * found with `lookup`. */
static ze_result_t find_in_modules(struct prog_dev *d, const char *name,
                                   size_t *size, void **ptr, bool function) {
  ze_result_t last = ZE_RESULT_ERROR_INVALID_GLOBAL_NAME;
  for (uint32_t m = 0; m < d->nmodules; ++m) {
    last = function ? zeModuleGetFunctionPointer(d->modules[m], name, ptr)
                    : zeModuleGetGlobalPointer(d->modules[m], name, size, ptr);
    if (last == ZE_RESULT_SUCCESS)
      return last;
  }
  return last;
}

static pi_result built_dev(const char *fn, pi_program p, pi_device dev,
                           struct prog_dev **out) {
  struct prog_dev *d = prog_dev_of(p, dev);
  if (!d || !d->nmodules)
    return fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE,
                "%s: the program is not built for device '%s'", fn,
                dev_name(dev));
  *out = d;
  return PI_SUCCESS;
}

/* zeModuleGetFunctionPointer. As in DPC++, a kernel whose address Level
 * Zero cannot give is PI_ERROR_FUNCTION_ADDRESS_IS_NOT_AVAILABLE; an
 * unknown name is PI_ERROR_INVALID_KERNEL_NAME. */
static pi_result lz_piextGetDeviceFunctionPointer(
    pi_device device, pi_program program, const char *function_name,
    pi_uint64 *function_pointer_ret) {
  NEED(device, PI_ERROR_INVALID_DEVICE);
  NEED(program, PI_ERROR_INVALID_PROGRAM);
  REQUIRE(function_name != NULL && function_pointer_ret != NULL);
  *function_pointer_ret = 0;
  pthread_mutex_lock(&program->lock);
  struct prog_dev *d = NULL;
  pi_result r = built_dev(FN, program, device, &d);
  void *ptr = NULL;
  ze_result_t zr = r == PI_SUCCESS
                       ? find_in_modules(d, function_name, NULL, &ptr, true)
                       : ZE_RESULT_SUCCESS;
  char *names = NULL;
  size_t count = 0;
  if (r == PI_SUCCESS && zr != ZE_RESULT_SUCCESS &&
      (r = kernel_names(FN, d, &names, &count)) == PI_SUCCESS) {
    bool kernel = false;
    for (char *s = names, *save = NULL, *t; (t = strtok_r(s, ";", &save));
         s = NULL)
      kernel |= strcmp(t, function_name) == 0;
    if (kernel)
      r = fail(PI_ERROR_FUNCTION_ADDRESS_IS_NOT_AVAILABLE,
               "%s: '%s' is a kernel of the program but Level Zero gives no "
               "address for it (%s)",
               FN, function_name, ze_result_name(zr));
    else
      r = fail(PI_ERROR_INVALID_KERNEL_NAME,
               "%s: the program has no function '%s' (%s)", FN, function_name,
               ze_result_name(zr));
  }
  free(names);
  pthread_mutex_unlock(&program->lock);
  if (r == PI_SUCCESS)
    *function_pointer_ret = (pi_uint64)(uintptr_t)ptr;
  return r;
}

static pi_result lz_piextGetGlobalVariablePointer(
    pi_device Device, pi_program Program, const char *GlobalVariableName,
    size_t *GlobalVariableSize, void **GlobalVariablePointerRet) {
  NEED(Device, PI_ERROR_INVALID_DEVICE);
  NEED(Program, PI_ERROR_INVALID_PROGRAM);
  REQUIRE(GlobalVariableName != NULL && GlobalVariablePointerRet != NULL);
  pthread_mutex_lock(&Program->lock);
  struct prog_dev *d = NULL;
  pi_result r = built_dev(FN, Program, Device, &d);
  size_t size = 0;
  void *ptr = NULL;
  if (r == PI_SUCCESS) {
    ze_result_t zr = find_in_modules(d, GlobalVariableName, &size, &ptr, false);
    if (zr != ZE_RESULT_SUCCESS)
      r = fail(pi_from_ze(zr),
               "%s: zeModuleGetGlobalPointer('%s') failed with %s (0x%x)", FN,
               GlobalVariableName, ze_result_name(zr), (unsigned)zr);
  }
  pthread_mutex_unlock(&Program->lock);
  if (r == PI_SUCCESS) {
    *GlobalVariablePointerRet = ptr;
    if (GlobalVariableSize)
      *GlobalVariableSize = size;
  }
  return r;
}

/* ---- Kernels ---------------------------------------------------------------------- */

static pi_result kernel_new(const char *fn, pi_program p, const char *name,
                            pi_kernel *out) {
  pi_kernel k = calloc(1, sizeof *k);
  ze_kernel_handle_t *ze = calloc(p->ndevs ? p->ndevs : 1, sizeof *ze);
  char *nm = strdup(name);
  if (!k || !ze || !nm) {
    free(k);
    free(ze);
    free(nm);
    return out_of_memory(fn);
  }
  k->program = p;
  k->name = nm;
  k->n = p->ndevs;
  k->ze = ze;
  atomic_init(&k->refs, 1);
  pthread_mutex_init(&k->lock, NULL);
  ref_retain(&p->refs);
  *out = k;
  return PI_SUCCESS;
}

static pi_result kernel_release(const char *fn, pi_kernel k) {
  if (!ref_release(&k->refs))
    return PI_SUCCESS;
  pi_result r = PI_SUCCESS;
  /* A kernel made from a native handle shares it between the devices and
   * destroys it (once) only if it owns it. */
  for (pi_uint32 i = 0; i < k->n; ++i)
    if (k->ze[i] && (k->native ? k->owns_native && i == 0 : true)) {
      pi_result kr = check_ze(fn, "zeKernelDestroy", zeKernelDestroy(k->ze[i]));
      r = r == PI_SUCCESS ? kr : r;
    }
  pi_result pr = program_release(fn, k->program);
  free(k->ze);
  free(k->name);
  pthread_mutex_destroy(&k->lock);
  free(k);
  return r == PI_SUCCESS ? pr : r;
}

/* One Level Zero kernel per device the program was built for. */
static pi_result lz_piKernelCreate(pi_program program, const char *kernel_name,
                                   pi_kernel *ret_kernel) {
  NEED(program, PI_ERROR_INVALID_PROGRAM);
  REQUIRE(kernel_name != NULL && ret_kernel != NULL);
  *ret_kernel = NULL;
  pi_program p = program;
  pthread_mutex_lock(&p->lock);
  pi_kernel k = NULL;
  pi_result r = p->state == PROG_EXE
                    ? kernel_new(FN, p, kernel_name, &k)
                    : fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE,
                           "%s: the program is not built", FN);
  ze_kernel_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
                           .pKernelName = kernel_name};
  pi_uint32 made = 0;
  for (pi_uint32 i = 0; r == PI_SUCCESS && i < p->ndevs; ++i) {
    struct prog_dev *d = &p->devs[i];
    ze_result_t zr = ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    for (uint32_t m = 0; m < d->nmodules && zr == ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
         ++m)
      zr = zeKernelCreate(d->modules[m], &desc, &k->ze[i]);
    if (zr == ZE_RESULT_SUCCESS) {
      ++made;
    } else {
      k->ze[i] = NULL;
      if (d->nmodules)
        r = fail(pi_from_ze(zr),
                 "%s: zeKernelCreate('%s') failed with %s (0x%x) on device "
                 "'%s'%s",
                 FN, kernel_name, ze_result_name(zr), (unsigned)zr,
                 dev_name(d->device),
                 zr == ZE_RESULT_ERROR_INVALID_KERNEL_NAME
                     ? ": the program has no such kernel"
                     : "");
    }
  }
  if (r == PI_SUCCESS && made == 0)
    r = fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE,
             "%s: the program built for none of its devices", FN);
  pthread_mutex_unlock(&p->lock);
  if (r != PI_SUCCESS) {
    if (k)
      kernel_release(FN, k);
    return r;
  }
  *ret_kernel = k;
  return PI_SUCCESS;
}

/* Sets an argument on every device's kernel. A NULL arg_value with a size
 * is a local-memory argument, as in Level Zero. */
static pi_result kernel_set(const char *fn, pi_kernel k, pi_uint32 index,
                            size_t size, const void *value) {
  if (!k)
    return fail(PI_ERROR_INVALID_KERNEL, "%s: the kernel is NULL", fn);
  pthread_mutex_lock(&k->lock);
  pi_result r = PI_SUCCESS;
  for (pi_uint32 i = 0; r == PI_SUCCESS && i < k->n; ++i)
    if (k->ze[i] && (i == 0 || k->ze[i] != k->ze[0])) {
      ze_result_t zr = zeKernelSetArgumentValue(k->ze[i], index, size, value);
      if (zr != ZE_RESULT_SUCCESS)
        r = fail(pi_from_ze(zr),
                 "%s: zeKernelSetArgumentValue(kernel '%s', argument %u, %zu "
                 "bytes) failed with %s (0x%x)",
                 fn, k->name, (unsigned)index, size, ze_result_name(zr),
                 (unsigned)zr);
    }
  pthread_mutex_unlock(&k->lock);
  return r;
}

static pi_result lz_piKernelSetArg(pi_kernel kernel, pi_uint32 arg_index,
                                   size_t arg_size, const void *arg_value) {
  return kernel_set(FN, kernel, arg_index, arg_size, arg_value);
}

/* A buffer argument is its device pointer; an image, its Level Zero image;
 * a NULL memory object, a null pointer. The access property is a hint. */
static pi_result lz_piextKernelSetArgMemObj(
    pi_kernel kernel, pi_uint32 arg_index,
    const pi_mem_obj_property *arg_properties, const pi_mem *arg_value) {
  (void)arg_properties;
  pi_mem m = arg_value ? *arg_value : NULL;
  if (m && m->kind == MEM_IMAGE)
    return kernel_set(FN, kernel, arg_index, sizeof m->image, &m->image);
  void *ptr = m ? m->ptr : NULL;
  return kernel_set(FN, kernel, arg_index, sizeof ptr, &ptr);
}

static pi_result lz_piextKernelSetArgSampler(pi_kernel kernel,
                                             pi_uint32 arg_index,
                                             const pi_sampler *arg_value) {
  REQUIRE(arg_value != NULL && *arg_value != NULL);
  return kernel_set(FN, kernel, arg_index, sizeof(ze_sampler_handle_t),
                    &(*arg_value)->ze);
}

/* arg_value points at the USM pointer, as in DPC++ (arg_size is its
 * size): Level Zero takes it as any by-value argument. */
static pi_result lz_piextKernelSetArgPointer(pi_kernel kernel,
                                             pi_uint32 arg_index,
                                             size_t arg_size,
                                             const void *arg_value) {
  REQUIRE(arg_value != NULL && arg_size == sizeof(void *));
  return kernel_set(FN, kernel, arg_index, arg_size, arg_value);
}

/* The Level Zero kernel of `k` for device `d` (or its parent). */
static ze_kernel_handle_t kernel_for(pi_kernel k, pi_device d) {
  struct prog_dev *pd = prog_dev_of(k->program, d);
  return pd ? k->ze[pd - k->program->devs] : NULL;
}

static pi_result kernel_props(const char *fn, pi_kernel k, pi_device d,
                              ze_kernel_properties_t *props,
                              ze_kernel_preferred_group_size_properties_t *pref) {
  ze_kernel_handle_t z = d ? kernel_for(k, d) : NULL;
  for (pi_uint32 i = 0; !z && !d && i < k->n; ++i)
    z = k->ze[i];
  if (!z)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: kernel '%s' was not built for device '%s'", fn, k->name,
                dev_name(d));
  *props = (ze_kernel_properties_t){.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES,
                                    .pNext = pref};
  if (pref)
    *pref = (ze_kernel_preferred_group_size_properties_t){
        .stype = ZE_STRUCTURE_TYPE_KERNEL_PREFERRED_GROUP_SIZE_PROPERTIES};
  return check_ze(fn, "zeKernelGetProperties", zeKernelGetProperties(z, props));
}

static pi_result lz_piKernelGetInfo(pi_kernel kernel, pi_kernel_info param_name,
                                    size_t param_value_size, void *param_value,
                                    size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  NEED(kernel, PI_ERROR_INVALID_KERNEL);
  ze_kernel_properties_t props;
  pi_result r;
  switch (param_name) {
  case PI_KERNEL_INFO_FUNCTION_NAME:
    return put_str(&o, kernel->name);
  case PI_KERNEL_INFO_NUM_ARGS:
    r = kernel_props(FN, kernel, NULL, &props, NULL);
    return r != PI_SUCCESS ? r : put_u32(&o, props.numKernelArgs);
  case PI_KERNEL_INFO_REFERENCE_COUNT:
    return put_u32(&o, atomic_load(&kernel->refs));
  case PI_KERNEL_INFO_CONTEXT:
    return put_ptr(&o, kernel->program->context);
  case PI_KERNEL_INFO_PROGRAM:
    return put_ptr(&o, kernel->program);
  case PI_KERNEL_INFO_ATTRIBUTES: {
    ze_kernel_handle_t z = NULL;
    for (pi_uint32 i = 0; !z && i < kernel->n; ++i)
      z = kernel->ze[i];
    if (!z)
      return fail(PI_ERROR_INVALID_KERNEL, "%s: kernel '%s' has no Level Zero "
                  "kernel on any device", FN, kernel->name);
    uint32_t size = 0;
    if ((r = ZE_CALL(zeKernelGetSourceAttributes, z, &size, NULL)) !=
        PI_SUCCESS)
      return r;
    /* Drivers copy into the buffer *pString points at (as Intel's does);
     * the 1.4 text also lets them point *pString at a string of their own.
     * Both work here: the buffer is freed, whatever s ends up as. */
    char *buf = calloc(1, (size_t)size + 1), *s = buf;
    if (!buf)
      return out_of_memory(FN);
    if ((r = ZE_CALL(zeKernelGetSourceAttributes, z, &size, &s)) ==
        PI_SUCCESS)
      r = put_str(&o, s ? s : "");
    free(buf);
    return r;
  }
  case PI_EXT_ONEAPI_KERNEL_INFO_WORK_GROUP_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_KERNEL_INFO_SUB_GROUP_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_KERNEL_INFO_SUB_GROUP_PROGRESS_AT_WORK_GROUP_LEVEL:
  case PI_EXT_ONEAPI_KERNEL_INFO_WORK_ITEM_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_KERNEL_INFO_WORK_ITEM_PROGRESS_AT_WORK_GROUP_LEVEL:
  case PI_EXT_ONEAPI_KERNEL_INFO_WORK_ITEM_PROGRESS_AT_SUB_GROUP_LEVEL:
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: query 0x%x: Level Zero states no forward-progress "
                "guarantees for kernel '%s'",
                FN, (unsigned)param_name, kernel->name);
  default:
    return unknown_query(&o);
  }
}

static pi_result lz_piKernelGetGroupInfo(pi_kernel kernel, pi_device device,
                                         pi_kernel_group_info param_name,
                                         size_t param_value_size,
                                         void *param_value,
                                         size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  NEED(kernel, PI_ERROR_INVALID_KERNEL);
  NEED(device, PI_ERROR_INVALID_DEVICE);
  const ze_device_compute_properties_t *c = &device->compute;
  ze_kernel_properties_t props;
  ze_kernel_preferred_group_size_properties_t pref;
  pi_result r = kernel_props(FN, kernel, device, &props, &pref);
  if (r != PI_SUCCESS)
    return r;
  switch (param_name) {
  case PI_KERNEL_GROUP_INFO_GLOBAL_WORK_SIZE: {
    size_t s[3] = {(size_t)c->maxGroupCountX * c->maxGroupSizeX,
                   (size_t)c->maxGroupCountY * c->maxGroupSizeY,
                   (size_t)c->maxGroupCountZ * c->maxGroupSizeZ};
    return put_info(&o, s, sizeof s);
  }
  case PI_KERNEL_GROUP_INFO_WORK_GROUP_SIZE:
    return put_size(&o, c->maxTotalGroupSize);
  case PI_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE: {
    size_t s[3] = {props.requiredGroupSizeX, props.requiredGroupSizeY,
                   props.requiredGroupSizeZ};
    return put_info(&o, s, sizeof s);
  }
  case PI_KERNEL_GROUP_INFO_LOCAL_MEM_SIZE:
    return put_u64(&o, props.localMemSize);
  case PI_KERNEL_GROUP_INFO_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
    return put_size(&o, pref.preferredMultiple ? pref.preferredMultiple
                                               : props.maxSubgroupSize);
  case PI_KERNEL_GROUP_INFO_PRIVATE_MEM_SIZE:
    return put_u64(&o, props.privateMemSize);
  case PI_KERNEL_GROUP_INFO_NUM_REGS:
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: Level Zero does not report the registers of kernel '%s'",
                FN, kernel->name);
  default:
    return unknown_query(&o);
  }
}

static pi_result lz_piKernelGetSubGroupInfo(
    pi_kernel kernel, pi_device device, pi_kernel_sub_group_info param_name,
    size_t input_value_size, const void *input_value, size_t param_value_size,
    void *param_value, size_t *param_value_size_ret) {
  (void)input_value_size; /* Level Zero's answers do not depend on the */
  (void)input_value;      /* local size */
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  NEED(kernel, PI_ERROR_INVALID_KERNEL);
  NEED(device, PI_ERROR_INVALID_DEVICE);
  ze_kernel_properties_t props;
  pi_result r = kernel_props(FN, kernel, device, &props, NULL);
  if (r != PI_SUCCESS)
    return r;
  switch (param_name) {
  case PI_KERNEL_MAX_SUB_GROUP_SIZE:
    return put_u32(&o, props.maxSubgroupSize);
  case PI_KERNEL_MAX_NUM_SUB_GROUPS:
    return put_u32(&o, props.maxNumSubgroups);
  case PI_KERNEL_COMPILE_NUM_SUB_GROUPS:
    return put_u32(&o, props.requiredNumSubGroups);
  case PI_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL:
    return put_u32(&o, props.requiredSubgroupSize);
  default:
    return unknown_query(&o);
  }
}

static pi_result lz_piKernelRetain(pi_kernel kernel) {
  NEED(kernel, PI_ERROR_INVALID_KERNEL);
  ref_retain(&kernel->refs);
  return PI_SUCCESS;
}

static pi_result lz_piKernelRelease(pi_kernel kernel) {
  NEED(kernel, PI_ERROR_INVALID_KERNEL);
  return kernel_release(FN, kernel);
}

/* PI_USM_INDIRECT_ACCESS: zeKernelSetIndirectAccess for host, device and
 * shared memory. PI_USM_PTRS lists what a kernel reaches indirectly, which
 * Level Zero does not need. The cache configuration maps to
 * zeKernelSetCacheConfig. */
static pi_result lz_piKernelSetExecInfo(pi_kernel kernel,
                                        pi_kernel_exec_info value_name,
                                        size_t param_value_size,
                                        const void *param_value) {
  NEED(kernel, PI_ERROR_INVALID_KERNEL);
  pi_result r = PI_SUCCESS;
  switch (value_name) {
  case PI_USM_INDIRECT_ACCESS: {
    REQUIRE(param_value != NULL && param_value_size >= sizeof(pi_bool));
    pi_bool on;
    memcpy(&on, param_value, sizeof on);
    ze_kernel_indirect_access_flags_t f =
        on ? ZE_KERNEL_INDIRECT_ACCESS_FLAG_HOST |
                 ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE |
                 ZE_KERNEL_INDIRECT_ACCESS_FLAG_SHARED
           : 0;
    pthread_mutex_lock(&kernel->lock);
    for (pi_uint32 i = 0; r == PI_SUCCESS && i < kernel->n; ++i)
      if (kernel->ze[i])
        r = ZE_CALL(zeKernelSetIndirectAccess, kernel->ze[i], f);
    pthread_mutex_unlock(&kernel->lock);
    return r;
  }
  case PI_USM_PTRS:
    return PI_SUCCESS;
  case PI_EXT_KERNEL_EXEC_INFO_CACHE_CONFIG: {
    REQUIRE(param_value != NULL &&
            param_value_size >= sizeof(pi_kernel_cache_config));
    pi_kernel_cache_config cfg;
    memcpy(&cfg, param_value, sizeof cfg);
    ze_cache_config_flags_t f =
        cfg == PI_EXT_KERNEL_EXEC_INFO_CACHE_LARGE_SLM    ? ZE_CACHE_CONFIG_FLAG_LARGE_SLM
        : cfg == PI_EXT_KERNEL_EXEC_INFO_CACHE_LARGE_DATA ? ZE_CACHE_CONFIG_FLAG_LARGE_DATA
                                                          : 0;
    pthread_mutex_lock(&kernel->lock);
    for (pi_uint32 i = 0; r == PI_SUCCESS && i < kernel->n; ++i)
      if (kernel->ze[i])
        r = ZE_CALL(zeKernelSetCacheConfig, kernel->ze[i], f);
    pthread_mutex_unlock(&kernel->lock);
    return r;
  }
  default:
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown kernel exec info 0x%x",
                FN, (unsigned)value_name);
  }
}

static pi_result lz_piextKernelGetNativeHandle(pi_kernel kernel,
                                               pi_native_handle *nativeHandle) {
  NEED(kernel, PI_ERROR_INVALID_KERNEL);
  ze_kernel_handle_t z = NULL;
  for (pi_uint32 i = 0; !z && i < kernel->n; ++i)
    z = kernel->ze[i];
  return native_of(FN, z, nativeHandle);
}

/* The kernel is taken to serve every device of the program. */
static pi_result lz_piextKernelCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, pi_program program,
    bool pluginOwnsNativeHandle, pi_kernel *kernel) {
  (void)context;
  NEED(program, PI_ERROR_INVALID_PROGRAM);
  REQUIRE(nativeHandle != 0 && kernel != NULL);
  ze_kernel_handle_t z = (ze_kernel_handle_t)nativeHandle;
  size_t size = 0;
  pi_result r = ZE_CALL(zeKernelGetName, z, &size, NULL);
  char *name = r == PI_SUCCESS ? calloc(1, size + 1) : NULL;
  if (r == PI_SUCCESS && !name)
    r = out_of_memory(FN);
  if (r == PI_SUCCESS)
    r = ZE_CALL(zeKernelGetName, z, &size, name);
  pi_kernel k = NULL;
  if (r == PI_SUCCESS)
    r = kernel_new(FN, program, name, &k);
  free(name);
  if (r != PI_SUCCESS)
    return r;
  for (pi_uint32 i = 0; i < k->n; ++i)
    k->ze[i] = z;
  k->native = true;
  k->owns_native = pluginOwnsNativeHandle;
  *kernel = k;
  return PI_SUCCESS;
}

/* ---- Launches ------------------------------------------------------------------- */

struct launch_op {
  pi_kernel k;
  ze_kernel_handle_t z;
  uint32_t group[3];
  ze_group_count_t count;
  uint32_t offset[3];
  bool set_offset;
  bool cooperative;
};

/* The group size and offset are kernel state in Level Zero, captured at
 * append: the kernel lock covers both. */
static pi_result append_launch(const struct append *a, void *op) {
  struct launch_op *l = op;
  pthread_mutex_lock(&l->k->lock);
  pi_result r = check_ze(a->fn, "zeKernelSetGroupSize",
                         zeKernelSetGroupSize(l->z, l->group[0], l->group[1],
                                              l->group[2]));
  if (r == PI_SUCCESS && l->set_offset)
    r = check_ze(a->fn, "zeKernelSetGlobalOffsetExp",
                 zeKernelSetGlobalOffsetExp(l->z, l->offset[0], l->offset[1],
                                            l->offset[2]));
  if (r == PI_SUCCESS && l->cooperative)
    r = check_ze(a->fn, "zeCommandListAppendLaunchCooperativeKernel",
                 zeCommandListAppendLaunchCooperativeKernel(
                     a->list, l->z, &l->count, a->signal, a->nwait, a->wait));
  else if (r == PI_SUCCESS)
    r = check_ze(a->fn, "zeCommandListAppendLaunchKernel",
                 zeCommandListAppendLaunchKernel(a->list, l->z, &l->count,
                                                 a->signal, a->nwait,
                                                 a->wait));
  pthread_mutex_unlock(&l->k->lock);
  return r;
}

static pi_result launch(const char *fn, bool cooperative, pi_queue q,
                        pi_kernel k, pi_uint32 dims, const size_t *offset,
                        const size_t *global, const size_t *local,
                        pi_uint32 nwait, const pi_event *wait,
                        pi_event *event) {
  if (!q)
    return fail(PI_ERROR_INVALID_QUEUE, "%s: the queue is NULL", fn);
  if (!k)
    return fail(PI_ERROR_INVALID_KERNEL, "%s: the kernel is NULL", fn);
  if (dims < 1 || dims > 3)
    return fail(PI_ERROR_INVALID_WORK_DIMENSION,
                "%s: kernel '%s': %u dimensions; use 1, 2 or 3", fn, k->name,
                (unsigned)dims);
  if (!global)
    return fail(PI_ERROR_INVALID_GLOBAL_WORK_SIZE,
                "%s: kernel '%s': global_work_size is NULL", fn, k->name);
  struct launch_op op = {.k = k, .cooperative = cooperative};
  op.z = kernel_for(k, q->device);
  if (!op.z)
    return fail(PI_ERROR_INVALID_KERNEL,
                "%s: kernel '%s' was not built for the queue's device '%s'",
                fn, k->name, dev_name(q->device));
  uint32_t g[3] = {1, 1, 1}, l[3] = {1, 1, 1};
  for (pi_uint32 d = 0; d < dims; ++d) {
    if (global[d] == 0 || !fits_u32(global[d]))
      return fail(PI_ERROR_INVALID_GLOBAL_WORK_SIZE,
                  "%s: kernel '%s': global size %zu in dimension %u is 0 or "
                  "does not fit 32 bits",
                  fn, k->name, global[d], (unsigned)d);
    g[d] = (uint32_t)global[d];
    if (offset && offset[d]) {
      if (!q->context->platform->global_offset)
        return fail(PI_ERROR_INVALID_GLOBAL_OFFSET,
                    "%s: kernel '%s': a global offset needs the Level Zero "
                    "extension " ZE_GLOBAL_OFFSET_EXP_NAME
                    ", which the driver does not offer",
                    fn, k->name);
      if (!fits_u32(offset[d]))
        return fail(PI_ERROR_INVALID_GLOBAL_OFFSET,
                    "%s: kernel '%s': offset %zu does not fit 32 bits", fn,
                    k->name, offset[d]);
      op.offset[d] = (uint32_t)offset[d];
    }
  }
  op.set_offset = q->context->platform->global_offset;
  if (local) {
    size_t total = 1;
    for (pi_uint32 d = 0; d < dims; ++d) {
      if (local[d] == 0 || global[d] % local[d])
        return fail(PI_ERROR_INVALID_WORK_GROUP_SIZE,
                    "%s: kernel '%s': global size %zu is not a multiple of "
                    "local size %zu in dimension %u",
                    fn, k->name, global[d], local[d], (unsigned)d);
      l[d] = (uint32_t)local[d];
      total *= local[d];
    }
    if (total > q->device->compute.maxTotalGroupSize)
      return fail(PI_ERROR_INVALID_WORK_GROUP_SIZE,
                  "%s: kernel '%s': a work-group of %zu work-items exceeds the "
                  "%u of device '%s'",
                  fn, k->name, total,
                  (unsigned)q->device->compute.maxTotalGroupSize,
                  dev_name(q->device));
  } else {
    pi_result r = check_ze(fn, "zeKernelSuggestGroupSize",
                           zeKernelSuggestGroupSize(op.z, g[0], g[1], g[2],
                                                    &l[0], &l[1], &l[2]));
    if (r != PI_SUCCESS)
      return r;
    for (int d = 0; d < 3; ++d)
      if (l[d] == 0 || g[d] % l[d])
        return fail(PI_ERROR_INVALID_WORK_GROUP_SIZE,
                    "%s: kernel '%s': zeKernelSuggestGroupSize suggested "
                    "%u,%u,%u, which does not divide the global size "
                    "%u,%u,%u",
                    fn, k->name, (unsigned)l[0], (unsigned)l[1],
                    (unsigned)l[2], (unsigned)g[0], (unsigned)g[1],
                    (unsigned)g[2]);
  }
  memcpy(op.group, l, sizeof l);
  op.count = (ze_group_count_t){g[0] / l[0], g[1] / l[1], g[2] / l[2]};
  return enqueue(fn, q, PI_COMMAND_TYPE_NDRANGE_KERNEL, nwait, wait, event,
                 false, false, append_launch, &op, NULL);
}

static pi_result lz_piEnqueueKernelLaunch(
    pi_queue queue, pi_kernel kernel, pi_uint32 work_dim,
    const size_t *global_work_offset, const size_t *global_work_size,
    const size_t *local_work_size, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return launch(FN, false, queue, kernel, work_dim, global_work_offset,
                global_work_size, local_work_size, num_events_in_wait_list,
                event_wait_list, event);
}

static pi_result lz_piextEnqueueCooperativeKernelLaunch(
    pi_queue queue, pi_kernel kernel, pi_uint32 work_dim,
    const size_t *global_work_offset, const size_t *global_work_size,
    const size_t *local_work_size, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return launch(FN, true, queue, kernel, work_dim, global_work_offset,
                global_work_size, local_work_size, num_events_in_wait_list,
                event_wait_list, event);
}

/* zeKernelSuggestMaxCooperativeGroupCount for a 1D group of
 * local_work_size; Level Zero takes local memory as kernel arguments, so
 * the dynamic size does not change its answer. */
static pi_result lz_piextKernelSuggestMaxCooperativeGroupCount(
    pi_kernel kernel, size_t local_work_size, size_t dynamic_shared_memory_size,
    pi_uint32 *group_count_ret) {
  (void)dynamic_shared_memory_size;
  NEED(kernel, PI_ERROR_INVALID_KERNEL);
  REQUIRE(group_count_ret != NULL && local_work_size > 0 &&
          fits_u32(local_work_size));
  ze_kernel_handle_t z = NULL;
  for (pi_uint32 i = 0; !z && i < kernel->n; ++i)
    z = kernel->ze[i];
  if (!z)
    return fail(PI_ERROR_INVALID_KERNEL, "%s: kernel '%s' has no Level Zero "
                "kernel on any device", FN, kernel->name);
  pthread_mutex_lock(&kernel->lock);
  pi_result r = ZE_CALL(zeKernelSetGroupSize, z, (uint32_t)local_work_size, 1, 1);
  uint32_t n = 0;
  if (r == PI_SUCCESS)
    r = ZE_CALL(zeKernelSuggestMaxCooperativeGroupCount, z, &n);
  pthread_mutex_unlock(&kernel->lock);
  if (r == PI_SUCCESS)
    *group_count_ret = n;
  return r;
}

static pi_result lz_piEnqueueEventsWait(pi_queue command_queue,
                                        pi_uint32 num_events_in_wait_list,
                                        const pi_event *event_wait_list,
                                        pi_event *event) {
  return enqueue(FN, command_queue, PI_COMMAND_TYPE_MARKER,
                 num_events_in_wait_list, event_wait_list, event, false,
                 num_events_in_wait_list == 0, append_barrier, NULL, NULL);
}

/* A barrier: on out-of-order queues it waits for every pending command. */
static pi_result lz_piEnqueueEventsWaitWithBarrier(
    pi_queue command_queue, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return enqueue(FN, command_queue, PI_COMMAND_TYPE_BARRIER,
                 num_events_in_wait_list, event_wait_list, event, false, true,
                 append_barrier, NULL, NULL);
}

/* ---- Events ------------------------------------------------------------------------ */

/* A user event, already complete (as PI asks, DPC++ PI 11.15). */
static pi_result lz_piEventCreate(pi_context context, pi_event *ret_event) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(ret_event != NULL);
  *ret_event = NULL;
  pi_event e;
  pi_result r = event_new(FN, context, NULL, PI_COMMAND_TYPE_USER, false, &e);
  if (r != PI_SUCCESS)
    return r;
  if ((r = ZE_CALL(zeEventHostSignal, e->ze)) != PI_SUCCESS) {
    event_release(FN, e);
    return r;
  }
  *ret_event = e;
  return PI_SUCCESS;
}

static pi_result lz_piEventGetInfo(pi_event event, pi_event_info param_name,
                                   size_t param_value_size, void *param_value,
                                   size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  NEED(event, PI_ERROR_INVALID_EVENT);
  switch (param_name) {
  case PI_EVENT_INFO_COMMAND_QUEUE:
    return put_ptr(&o, event->queue);
  case PI_EVENT_INFO_CONTEXT:
    return put_ptr(&o, event->context);
  case PI_EVENT_INFO_COMMAND_TYPE:
    return put_u32(&o, event->type);
  case PI_EVENT_INFO_REFERENCE_COUNT:
    return put_u32(&o, atomic_load(&event->refs));
  case PI_EVENT_INFO_COMMAND_EXECUTION_STATUS: {
    ze_result_t zr = zeEventQueryStatus(event->ze);
    int32_t s;
    if (zr == ZE_RESULT_SUCCESS)
      s = PI_EVENT_COMPLETE;
    else if (zr == ZE_RESULT_NOT_READY)
      s = PI_EVENT_SUBMITTED;
    else
      return check_ze(FN, "zeEventQueryStatus", zr);
    return put_info(&o, &s, sizeof s);
  }
  default:
    return unknown_query(&o);
  }
}

static pi_result lz_piEventGetProfilingInfo(pi_event event,
                                            pi_profiling_info param_name,
                                            size_t param_value_size,
                                            void *param_value,
                                            size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  NEED(event, PI_ERROR_INVALID_EVENT);
  if (!event->timestamps)
    return fail(PI_ERROR_PROFILING_INFO_NOT_AVAILABLE,
                "%s: the event does not come from a queue created with "
                "PI_QUEUE_FLAG_PROFILING_ENABLE",
                FN);
  ze_result_t zr = zeEventQueryStatus(event->ze);
  if (zr == ZE_RESULT_NOT_READY)
    return fail(PI_ERROR_PROFILING_INFO_NOT_AVAILABLE,
                "%s: the command has not completed yet", FN);
  if (zr != ZE_RESULT_SUCCESS)
    return check_ze(FN, "zeEventQueryStatus", zr);
  pi_device dev = event->queue->device;
  switch (param_name) {
  case PI_PROFILING_INFO_COMMAND_QUEUED:
  case PI_PROFILING_INFO_COMMAND_SUBMIT:
    return put_u64(&o, event->queued_ns);
  case PI_PROFILING_INFO_COMMAND_START:
  case PI_PROFILING_INFO_COMMAND_END: {
    ze_kernel_timestamp_result_t ts;
    pi_result r = ZE_CALL(zeEventQueryKernelTimestamp, event->ze, &ts);
    if (r != PI_SUCCESS)
      return r;
    uint64_t start = ts.global.kernelStart, end = ts.global.kernelEnd;
    uint32_t bits = dev->props.kernelTimestampValidBits;
    if (bits && bits < 64) {
      uint64_t mask = (1ull << bits) - 1;
      start &= mask;
      end &= mask;
      if (end < start) /* the counter wrapped */
        end += mask + 1;
    }
    return put_u64(&o, ticks_to_ns(dev, param_name ==
                                                PI_PROFILING_INFO_COMMAND_START
                                            ? start
                                            : end));
  }
  default:
    return unknown_query(&o);
  }
}

static pi_result lz_piEventsWait(pi_uint32 num_events,
                                 const pi_event *event_list) {
  if (num_events && !event_list)
    return fail(PI_ERROR_INVALID_EVENT, "%s: num_events is %u but the list "
                "is NULL", FN, (unsigned)num_events);
  for (pi_uint32 i = 0; i < num_events; ++i) {
    if (!event_list[i])
      return fail(PI_ERROR_INVALID_EVENT, "%s: event %u is NULL", FN,
                  (unsigned)i);
    pi_result r = event_wait(FN, event_list[i]);
    if (r != PI_SUCCESS)
      return r;
  }
  return PI_SUCCESS;
}

/* Level Zero has no event callbacks: a thread per callback waits for the
 * event (in short slices, so piTearDown can stop it) and calls it. */
struct callback {
  pthread_t thread;
  atomic_bool done;
  pi_event event;
  pi_int32 type;
  void (*fn)(pi_event, pi_int32, void *);
  void *user_data;
  struct callback *next;
};

static pthread_mutex_t callbacks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct callback *callbacks;
static atomic_bool stopping;

static void *callback_main(void *arg) {
  struct callback *cb = arg;
  pi_int32 status = cb->type;
  bool call = true;
  if (cb->type == PI_EVENT_COMPLETE) {
    ze_result_t zr;
    while ((zr = zeEventHostSynchronize(cb->event->ze, 10000000ull)) ==
               ZE_RESULT_NOT_READY &&
           !atomic_load(&stopping))
      ;
    call = zr != ZE_RESULT_NOT_READY;
    status = zr == ZE_RESULT_SUCCESS ? PI_EVENT_COMPLETE
                                     : (pi_int32)pi_from_ze(zr);
  }
  if (call)
    cb->fn(cb->event, status, cb->user_data);
  event_release("piEventSetCallback", cb->event);
  atomic_store(&cb->done, true);
  return NULL;
}

/* Joins the callback threads that ended (all of them when `all`). */
static void callbacks_join(bool all) {
  pthread_mutex_lock(&callbacks_lock);
  struct callback **pp = &callbacks;
  while (*pp) {
    struct callback *cb = *pp;
    if (all || atomic_load(&cb->done)) {
      pthread_join(cb->thread, NULL);
      *pp = cb->next;
      free(cb);
    } else {
      pp = &cb->next;
    }
  }
  pthread_mutex_unlock(&callbacks_lock);
}

static pi_result lz_piEventSetCallback(
    pi_event event, pi_int32 command_exec_callback_type,
    void (*pfn_notify)(pi_event event, pi_int32 event_command_status,
                       void *user_data),
    void *user_data) {
  NEED(event, PI_ERROR_INVALID_EVENT);
  REQUIRE(pfn_notify != NULL);
  if (command_exec_callback_type != PI_EVENT_COMPLETE &&
      command_exec_callback_type != PI_EVENT_RUNNING &&
      command_exec_callback_type != PI_EVENT_SUBMITTED)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: callbacks are for PI_EVENT_COMPLETE, _RUNNING or "
                "_SUBMITTED, not %d",
                FN, (int)command_exec_callback_type);
  callbacks_join(false);
  struct callback *cb = calloc(1, sizeof *cb);
  if (!cb)
    return out_of_memory(FN);
  cb->event = event;
  cb->type = command_exec_callback_type;
  cb->fn = pfn_notify;
  cb->user_data = user_data;
  event_retain(event);
  pthread_mutex_lock(&callbacks_lock);
  int err = pthread_create(&cb->thread, NULL, callback_main, cb);
  if (err == 0) {
    cb->next = callbacks;
    callbacks = cb;
  }
  pthread_mutex_unlock(&callbacks_lock);
  if (err) {
    event_release(FN, event);
    free(cb);
    return fail(PI_ERROR_OUT_OF_RESOURCES,
                "%s: cannot start the thread that waits for the event: %s", FN,
                strerror(err));
  }
  return PI_SUCCESS;
}

/* Completes a user event (zeEventHostSignal). */
static pi_result lz_piEventSetStatus(pi_event event,
                                     pi_int32 execution_status) {
  NEED(event, PI_ERROR_INVALID_EVENT);
  if (event->queue)
    return fail(PI_ERROR_INVALID_EVENT,
                "%s: only user events (piEventCreate) take a status; this one "
                "belongs to a command",
                FN);
  if (execution_status != PI_EVENT_COMPLETE)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a Level Zero event can only be signaled complete, not "
                "set to status %d",
                FN, (int)execution_status);
  return ZE_CALL(zeEventHostSignal, event->ze);
}

static pi_result lz_piEventRetain(pi_event event) {
  NEED(event, PI_ERROR_INVALID_EVENT);
  event_retain(event);
  return PI_SUCCESS;
}

static pi_result lz_piEventRelease(pi_event event) {
  NEED(event, PI_ERROR_INVALID_EVENT);
  return event_release(FN, event);
}

static pi_result lz_piextEventGetNativeHandle(pi_event event,
                                              pi_native_handle *nativeHandle) {
  NEED(event, PI_ERROR_INVALID_EVENT);
  return native_of(FN, event->ze, nativeHandle);
}

/* An event made elsewhere acts as a user event of the context. */
static pi_result lz_piextEventCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, bool ownNativeHandle,
    pi_event *event) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(nativeHandle != 0 && event != NULL);
  pi_event e = calloc(1, sizeof *e);
  if (!e)
    return out_of_memory(FN);
  e->ze = (ze_event_handle_t)nativeHandle;
  e->context = context;
  e->type = PI_COMMAND_TYPE_USER;
  e->owns_native = ownNativeHandle;
  atomic_init(&e->refs, 1);
  context_retain(context);
  *event = e;
  return PI_SUCCESS;
}

/* ---- Samplers ----------------------------------------------------------------------- */

static pi_result lz_piSamplerCreate(
    pi_context context, const pi_sampler_properties *sampler_properties,
    pi_sampler *result_sampler) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(result_sampler != NULL);
  *result_sampler = NULL;
  pi_bool normalized = PI_TRUE;
  pi_sampler_addressing_mode addressing = PI_SAMPLER_ADDRESSING_MODE_CLAMP;
  pi_sampler_filter_mode filter = PI_SAMPLER_FILTER_MODE_NEAREST;
  for (size_t i = 0; sampler_properties && sampler_properties[i]; i += 2) {
    pi_sampler_properties key = sampler_properties[i];
    pi_sampler_properties value = sampler_properties[i + 1];
    if (key == PI_SAMPLER_PROPERTIES_NORMALIZED_COORDS)
      normalized = value ? PI_TRUE : PI_FALSE;
    else if (key == PI_SAMPLER_PROPERTIES_ADDRESSING_MODE)
      addressing = (pi_sampler_addressing_mode)value;
    else if (key == PI_SAMPLER_PROPERTIES_FILTER_MODE)
      filter = (pi_sampler_filter_mode)value;
    else if (key == PI_SAMPLER_PROPERTIES_MIP_FILTER_MODE)
      return fail(PI_ERROR_INVALID_OPERATION,
                  "%s: Level Zero samplers have no mipmap filter; leave out "
                  "PI_SAMPLER_PROPERTIES_MIP_FILTER_MODE",
                  FN);
    else
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown sampler property 0x%llx",
                  FN, (unsigned long long)key);
  }
  ze_sampler_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_SAMPLER_DESC,
                            .isNormalized = normalized ? 1 : 0};
  switch (addressing) {
  case PI_SAMPLER_ADDRESSING_MODE_NONE:
    desc.addressMode = ZE_SAMPLER_ADDRESS_MODE_NONE;
    break;
  case PI_SAMPLER_ADDRESSING_MODE_REPEAT:
    desc.addressMode = ZE_SAMPLER_ADDRESS_MODE_REPEAT;
    break;
  case PI_SAMPLER_ADDRESSING_MODE_CLAMP:
    desc.addressMode = ZE_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER;
    break;
  case PI_SAMPLER_ADDRESSING_MODE_CLAMP_TO_EDGE:
    desc.addressMode = ZE_SAMPLER_ADDRESS_MODE_CLAMP;
    break;
  case PI_SAMPLER_ADDRESSING_MODE_MIRRORED_REPEAT:
    desc.addressMode = ZE_SAMPLER_ADDRESS_MODE_MIRROR;
    break;
  default:
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown addressing mode 0x%x", FN,
                (unsigned)addressing);
  }
  if (filter != PI_SAMPLER_FILTER_MODE_NEAREST &&
      filter != PI_SAMPLER_FILTER_MODE_LINEAR)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown filter mode 0x%x", FN,
                (unsigned)filter);
  desc.filterMode = filter == PI_SAMPLER_FILTER_MODE_LINEAR
                        ? ZE_SAMPLER_FILTER_MODE_LINEAR
                        : ZE_SAMPLER_FILTER_MODE_NEAREST;
  pi_sampler s = calloc(1, sizeof *s);
  if (!s)
    return out_of_memory(FN);
  pi_result r = ZE_CALL(zeSamplerCreate, context->ze, context->devices[0]->ze,
                        &desc, &s->ze);
  if (r != PI_SUCCESS) {
    free(s);
    return r;
  }
  s->context = context;
  s->normalized = normalized;
  s->addressing = addressing;
  s->filter = filter;
  atomic_init(&s->refs, 1);
  context_retain(context);
  *result_sampler = s;
  return PI_SUCCESS;
}

static pi_result lz_piSamplerGetInfo(pi_sampler sampler,
                                     pi_sampler_info param_name,
                                     size_t param_value_size, void *param_value,
                                     size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  NEED(sampler, PI_ERROR_INVALID_SAMPLER);
  switch (param_name) {
  case PI_SAMPLER_INFO_REFERENCE_COUNT:
    return put_u32(&o, atomic_load(&sampler->refs));
  case PI_SAMPLER_INFO_CONTEXT:
    return put_ptr(&o, sampler->context);
  case PI_SAMPLER_INFO_NORMALIZED_COORDS:
    return put_bool(&o, sampler->normalized);
  case PI_SAMPLER_INFO_ADDRESSING_MODE:
    return put_u32(&o, sampler->addressing);
  case PI_SAMPLER_INFO_FILTER_MODE:
    return put_u32(&o, sampler->filter);
  case PI_SAMPLER_INFO_MIP_FILTER_MODE:
  case PI_SAMPLER_INFO_LOD_MIN:
  case PI_SAMPLER_INFO_LOD_MAX:
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: query 0x%x is about mipmaps, which Level Zero samplers do "
                "not have",
                FN, (unsigned)param_name);
  default:
    return unknown_query(&o);
  }
}

static pi_result lz_piSamplerRetain(pi_sampler sampler) {
  NEED(sampler, PI_ERROR_INVALID_SAMPLER);
  ref_retain(&sampler->refs);
  return PI_SUCCESS;
}

static pi_result lz_piSamplerRelease(pi_sampler sampler) {
  NEED(sampler, PI_ERROR_INVALID_SAMPLER);
  if (!ref_release(&sampler->refs))
    return PI_SUCCESS;
  pi_result r = ZE_CALL(zeSamplerDestroy, sampler->ze);
  pi_result cr = context_release(FN, sampler->context);
  free(sampler);
  return r == PI_SUCCESS ? cr : r;
}

/* ---- Device globals and host pipes -------------------------------------------------- */

static pi_result global_copy(const char *fn, bool write, pi_queue q,
                             pi_program program, const char *name,
                             pi_bool blocking, size_t count, size_t offset,
                             void *host, pi_uint32 nwait, const pi_event *wait,
                             pi_event *event) {
  if (!q)
    return fail(PI_ERROR_INVALID_QUEUE, "%s: the queue is NULL", fn);
  if (!program)
    return fail(PI_ERROR_INVALID_PROGRAM, "%s: the program is NULL", fn);
  if (!name || !host)
    return fail(PI_ERROR_INVALID_VALUE, "%s: name and the host memory must "
                "not be NULL", fn);
  pthread_mutex_lock(&program->lock);
  struct prog_dev *d = NULL;
  pi_result r = built_dev(fn, program, q->device, &d);
  size_t size = 0;
  void *ptr = NULL;
  if (r == PI_SUCCESS) {
    ze_result_t zr = find_in_modules(d, name, &size, &ptr, false);
    if (zr != ZE_RESULT_SUCCESS)
      r = fail(pi_from_ze(zr),
               "%s: zeModuleGetGlobalPointer('%s') failed with %s (0x%x): the "
               "program has no such device global",
               fn, name, ze_result_name(zr), (unsigned)zr);
  }
  pthread_mutex_unlock(&program->lock);
  if (r != PI_SUCCESS)
    return r;
  if (offset > size || count > size - offset)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: bytes %zu..%zu are outside the %zu-byte device global "
                "'%s'",
                fn, offset, offset + count, size, name);
  struct copy_op op = {write ? (char *)ptr + offset : host,
                       write ? host : (char *)ptr + offset, count};
  return enqueue(fn, q,
                 write ? PI_COMMAND_TYPE_DEVICE_GLOBAL_VARIABLE_WRITE
                       : PI_COMMAND_TYPE_DEVICE_GLOBAL_VARIABLE_READ,
                 nwait, wait, event, blocking, false, append_copy, &op, NULL);
}

static pi_result lz_piextEnqueueDeviceGlobalVariableWrite(
    pi_queue queue, pi_program program, const char *name,
    pi_bool blocking_write, size_t count, size_t offset, const void *src,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  return global_copy(FN, true, queue, program, name, blocking_write, count,
                     offset, (void *)src, num_events_in_wait_list,
                     event_wait_list, event);
}

static pi_result lz_piextEnqueueDeviceGlobalVariableRead(
    pi_queue queue, pi_program program, const char *name,
    pi_bool blocking_read, size_t count, size_t offset, void *dst,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  return global_copy(FN, false, queue, program, name, blocking_read, count,
                     offset, dst, num_events_in_wait_list, event_wait_list,
                     event);
}

static pi_result no_host_pipes(const char *fn, const char *symbol) {
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: host pipe '%s': host pipes are an FPGA feature that Level "
              "Zero does not have",
              fn, symbol ? symbol : "?");
}

static pi_result lz_piextEnqueueReadHostPipe(
    pi_queue queue, pi_program program, const char *pipe_symbol,
    pi_bool blocking, void *ptr, size_t size, pi_uint32 num_events_in_waitlist,
    const pi_event *events_waitlist, pi_event *event) {
  (void)queue, (void)program, (void)blocking, (void)ptr, (void)size;
  (void)num_events_in_waitlist, (void)events_waitlist, (void)event;
  return no_host_pipes(FN, pipe_symbol);
}

static pi_result lz_piextEnqueueWriteHostPipe(
    pi_queue queue, pi_program program, const char *pipe_symbol,
    pi_bool blocking, void *ptr, size_t size, pi_uint32 num_events_in_waitlist,
    const pi_event *events_waitlist, pi_event *event) {
  (void)queue, (void)program, (void)blocking, (void)ptr, (void)size;
  (void)num_events_in_waitlist, (void)events_waitlist, (void)event;
  return no_host_pipes(FN, pipe_symbol);
}

/* ---- Peer access --------------------------------------------------------------------
 * Level Zero devices reach their peers' memory without being asked: enabling
 * and disabling succeed where zeDeviceCanAccessPeer says access exists. */

static pi_result peer_check(const char *fn, pi_device a, pi_device b,
                            ze_bool_t *can) {
  if (!a || !b)
    return fail(PI_ERROR_INVALID_DEVICE, "%s: a device is NULL", fn);
  return check_ze(fn, "zeDeviceCanAccessPeer",
                  zeDeviceCanAccessPeer(a->ze, b->ze, can));
}

static pi_result peer_access(const char *fn, pi_device a, pi_device b) {
  ze_bool_t can = 0;
  pi_result r = peer_check(fn, a, b, &can);
  if (r == PI_SUCCESS && !can)
    r = fail(PI_ERROR_INVALID_OPERATION,
             "%s: Level Zero reports no peer access from device '%s' to '%s'",
             fn, dev_name(a), dev_name(b));
  return r;
}

static pi_result lz_piextEnablePeerAccess(pi_device command_device,
                                          pi_device peer_device) {
  return peer_access(FN, command_device, peer_device);
}

static pi_result lz_piextDisablePeerAccess(pi_device command_device,
                                           pi_device peer_device) {
  return peer_access(FN, command_device, peer_device);
}

static pi_result lz_piextPeerAccessGetInfo(pi_device command_device,
                                           pi_device peer_device,
                                           pi_peer_attr attr,
                                           size_t param_value_size,
                                           void *param_value,
                                           size_t *param_value_size_ret) {
  struct info_out o = {FN, attr, param_value_size, param_value,
                       param_value_size_ret};
  ze_bool_t can = 0;
  pi_result r = peer_check(FN, command_device, peer_device, &can);
  if (r != PI_SUCCESS)
    return r;
  if (attr == PI_PEER_ACCESS_SUPPORTED)
    return put_u32(&o, can ? 1 : 0);
  if (attr != PI_PEER_ATOMICS_SUPPORTED)
    return unknown_query(&o);
  ze_device_p2p_properties_t p2p = {
      .stype = ZE_STRUCTURE_TYPE_DEVICE_P2P_PROPERTIES};
  r = ZE_CALL(zeDeviceGetP2PProperties, command_device->ze, peer_device->ze,
              &p2p);
  return r != PI_SUCCESS
             ? r
             : put_u32(&o, (p2p.flags & ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS) ? 1
                                                                              : 0);
}

/* ---- Plugin -------------------------------------------------------------------------- */

static pi_result lz_piextPluginGetOpaqueData(void *opaque_data_param,
                                             void **opaque_data_return) {
  (void)opaque_data_param;
  if (opaque_data_return)
    *opaque_data_return = NULL;
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: the Level Zero plugin has no opaque data (only host-compiled "
              "device plugins do)",
              FN);
}

/* The last message of this thread, and its code: PI_SUCCESS for a note. */
static pi_result lz_piPluginGetLastError(char **message) {
  return plugin_last_error(message);
}

/* Optimization levels as DPC++ maps them for Level Zero. */
static pi_result lz_piPluginGetBackendOption(pi_platform platform,
                                             const char *frontend_option,
                                             const char **backend_option) {
  (void)platform;
  REQUIRE(frontend_option != NULL && backend_option != NULL);
  if (!*frontend_option) {
    *backend_option = "";
    return PI_SUCCESS;
  }
  if (strcmp(frontend_option, "-O0") == 0) {
    *backend_option = "-ze-opt-disable";
    return PI_SUCCESS;
  }
  if (strcmp(frontend_option, "-O1") == 0 ||
      strcmp(frontend_option, "-O2") == 0) {
    *backend_option = "-ze-opt-level=1";
    return PI_SUCCESS;
  }
  if (strcmp(frontend_option, "-O3") == 0) {
    *backend_option = "-ze-opt-level=2";
    return PI_SUCCESS;
  }
  return fail(PI_ERROR_INVALID_VALUE,
              "%s: no Level Zero option for '%s'; the plugin maps -O0 to -O3",
              FN, frontend_option);
}

/* Stops the callback threads and frees the platforms; no PI call may
 * follow before piPluginInit. Objects the application still holds are its
 * own to release first. */
static pi_result lz_piTearDown(void *PluginParameter) {
  (void)PluginParameter;
  atomic_store(&stopping, true);
  callbacks_join(true);
  atomic_store(&stopping, false);
  pthread_mutex_lock(&platforms_lock);
  for (pi_uint32 i = 0; i < nplatforms; ++i)
    platform_free(platforms[i]);
  free(platforms);
  platforms = NULL;
  nplatforms = 0;
  platforms_known = false;
  pthread_mutex_unlock(&platforms_lock);
  return PI_SUCCESS;
}

/* Checks the runtime's PI major version, writes the plugin's version and
 * fills every entry of the function table. */
PI_PLUGIN_EXPORT pi_result piPluginInit(pi_plugin *plugin) {
  pi_result r = plugin_init_version(plugin, "Level Zero", PLUGIN_REVISION);
  if (r != PI_SUCCESS)
    return r;
#define X(name) plugin->PiFunctionTable.name = lz_##name;
  PI_FOR_EACH_API(X)
#undef X
  return PI_SUCCESS;
}
