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

static pi_result native_of(const char *fn, const void *ze,
                           pi_native_handle *native) {
  if (!native)
    return fail(PI_ERROR_INVALID_VALUE, "%s: nativeHandle is NULL", fn);
  *native = (pi_native_handle)ze;
  return PI_SUCCESS;
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
  case PI_EXT_ONEAPI_DEVICE_INFO_COMPONENT_DEVICES:
  case PI_EXT_ONEAPI_DEVICE_INFO_COMPOSITE_DEVICE:
    return no_ze_answer(&o, d, "composite devices need Level Zero 1.9");
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
      atomic_fetch_add(&device->subs[i]->refs, 1);
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
    atomic_fetch_add(&device->refs, 1);
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
  char offered[512] = "";
  size_t used = 0;
  for (pi_uint32 i = 0; i < num_binaries && used < sizeof offered; ++i) {
    const struct pi_device_binary_struct *b = binaries[i];
    int n = snprintf(offered + used, sizeof offered - used, "%s%s (format %u)",
                     i ? ", " : "",
                     b && b->DeviceTargetSpec ? b->DeviceTargetSpec : "?",
                     b ? (unsigned)b->Format : 0u);
    used += n > 0 ? (size_t)n : 0;
  }
  return fail(PI_ERROR_INVALID_BINARY,
              "%s: no image fits Level Zero device '%s', which takes SPIR-V "
              "(target spir64 or spir64_gen, format SPIR-V) or native "
              "spir64_gen images, and no OpenCL C source; offered: %s",
              FN, dev_name(device), num_binaries ? offered : "none");
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

static void context_retain(pi_context c) { atomic_fetch_add(&c->refs, 1); }

/* Drops a reference; the last one destroys the event pools and the Level
 * Zero context, then runs the extended deleter. */
static pi_result context_release(const char *fn, pi_context c) {
  if (atomic_fetch_sub(&c->refs, 1) != 1)
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
  if (atomic_fetch_sub(&e->refs, 1) != 1)
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

static void event_retain(pi_event e) { atomic_fetch_add(&e->refs, 1); }

/* Waits for an event without end. */
static pi_result event_wait(const char *fn, pi_event e) {
  return check_ze(fn, "zeEventHostSynchronize",
                  zeEventHostSynchronize(e->ze, UINT64_MAX));
}
