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
#define _GNU_SOURCE /* pthread_timedjoin_np is not used; nanosleep, strdup */
#include <level_zero/ze_api.h>

#include "pi/pi.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Bumped with every behavioural change; the third part of PluginVersion. */
#define PLUGIN_REVISION "1"

/* The name of the PI function we are in: implementations are lz_<name>. */
#define FN (__func__ + sizeof("lz_") - 1)

#define SPIRV_MAGIC 0x07230203u
#define POOL_EVENTS 64 /* events per event pool (one uint64_t bitmap) */
#define FREE_LISTS 8   /* reset command lists a queue keeps for reuse */

/* ---- Errors --------------------------------------------------------------
 * Every failure goes through fail(), which keeps the code and a message for
 * piPluginGetLastError in thread-local storage. */

static _Thread_local char last_message[2048];
static _Thread_local pi_result last_code = PI_SUCCESS;

__attribute__((format(printf, 2, 3))) static pi_result fail(pi_result code,
                                                            const char *fmt,
                                                            ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_message, sizeof last_message, fmt, ap);
  va_end(ap);
  last_code = code;
  return code;
}

static pi_result out_of_memory(const char *fn) {
  return fail(PI_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
}

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
/* Fails with PI_ERROR_INVALID_VALUE when an argument check does not hold. */
#define REQUIRE(cond)                                                          \
  do {                                                                         \
    if (!(cond))                                                               \
      return fail(PI_ERROR_INVALID_VALUE, "%s: invalid argument: %s", FN,      \
                  #cond);                                                      \
  } while (0)
/* Fails with `code` when a handle argument is NULL. */
#define NEED(handle, code)                                                     \
  do {                                                                         \
    if (!(handle))                                                             \
      return fail(code, "%s: %s is NULL", FN, #handle);                        \
  } while (0)

/* ---- Info queries ----------------------------------------------------------
 * An info_out names where a *GetInfo call puts its answer; put_*() write a
 * value with the size checks OpenCL makes. */

struct info_out {
  const char *fn;
  unsigned query;
  size_t size;
  void *value;
  size_t *size_ret;
};

static pi_result put_info(const struct info_out *o, const void *src,
                          size_t n) {
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

static pi_result put_bool(const struct info_out *o, int b) {
  pi_bool v = b ? PI_TRUE : PI_FALSE;
  return put_info(o, &v, sizeof v);
}

static pi_result put_u32(const struct info_out *o, uint32_t v) {
  return put_info(o, &v, sizeof v);
}

static pi_result put_u64(const struct info_out *o, uint64_t v) {
  return put_info(o, &v, sizeof v);
}

static pi_result put_size(const struct info_out *o, size_t v) {
  return put_info(o, &v, sizeof v);
}

static pi_result put_ptr(const struct info_out *o, const void *p) {
  return put_info(o, &p, sizeof p);
}

static pi_result put_str(const struct info_out *o, const char *s) {
  return put_info(o, s, strlen(s) + 1);
}

static pi_result unknown_query(const struct info_out *o) {
  return fail(PI_ERROR_INVALID_VALUE,
              "%s: query 0x%x is unknown to the Level Zero plugin", o->fn,
              o->query);
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
