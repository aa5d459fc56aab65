/*
 * lz_internal.h: what the files of the pitrace Level Zero plugin
 * (libpi_level_zero.so) share.
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
 * The plugin's files, one per PI object kind as in Unified Runtime's
 * adapters (each opens with what it holds): errors.c (the Level Zero -> PI
 * result mapping), platform.c (discovery of drivers and devices;
 * piPlatform*), device.c, context.c, queue.c, submission.c (how a command
 * reaches a queue: command lists, events, waits), memory.c (buffers),
 * image.c, enqueue_mem.c (buffer and image commands), usm.c, program.c,
 * kernel.c, enqueue.c (kernel launches, waits and barriers), event.c,
 * sampler.c, global.c (device globals and host pipes), peer.c and plugin.c
 * (piPluginInit and the plugin-wide PI functions). This header holds what
 * they share: the object structures behind the PI handles, the macros, and
 * the declarations of the functions and variables used by more than one
 * file. What every plugin needs (fail(), info-query answers, queue property
 * lists, reference counts, ...) is plugins/common/plugin_common.h.
 *
 * Threads: there is no global lock across calls. Platform discovery runs
 * once under its own mutex; contexts (event pools), queues (submission),
 * programs (constants, build), kernels (arguments, launch) and memory
 * objects (maps) each have a mutex; reference counts are atomic; the last
 * error is thread-local. Lock order: queue, then kernel, then context.
 */
#ifndef PITRACE_LZ_INTERNAL_H
#define PITRACE_LZ_INTERNAL_H
#define _GNU_SOURCE /* strdup, strtok_r */
#include <level_zero/ze_api.h>

#include "pi/pi.h"

/* What the plugin's own PI functions are named: lz_<name> (plugin_common.h
 * declares them). */
#define PLUGIN_PREFIX lz_

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
#define PLUGIN_REVISION "3"

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

/* Calls a Level Zero function and checks its result. */
#define ZE_CALL(zefn, ...) ZE_CALL_IN(FN, zefn, __VA_ARGS__)
#define ZE_CALL_IN(fn, zefn, ...) check_ze(fn, #zefn, zefn(__VA_ARGS__))

/* ---- Objects ---------------------------------------------------------------- */

struct _pi_platform {
  ze_driver_handle_t ze;
  ze_api_version_t api_version;
  char version[32]; /* api_version as "<major>.<minor>" */
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

struct copy_op {
  void *dst;
  const void *src;
  size_t size;
};

/* A fill; patterns larger than the engine fills become copies from a host
 * buffer holding the pattern repeated (`staging`). */
struct fill_op {
  void *ptr;
  const void *pattern;
  size_t pattern_size, size;
  void *staging;
};

/* A rectangular copy between two pitched regions (zeCommandListAppend-
 * MemoryCopyRegion). Origins and widths are in bytes. */
struct rect_op {
  void *dst;
  const void *src;
  ze_copy_region_t dst_region, src_region;
  uint32_t dst_pitch, dst_slice, src_pitch, src_slice;
};

/* ---- Image commands ------------------------------------------------------------ */

struct image_op {
  ze_image_handle_t image, src_image;
  void *ptr;
  ze_image_region_t region, src_region;
  uint32_t row, slice; /* host pitches in bytes; 0 when packed */
  bool to_host, image_to_image;
};

/* ---- USM ------------------------------------------------------------------------ */

struct hint_op {
  const void *ptr;
  size_t size;
  ze_memory_advice_t advice[4];
  size_t nadvice;
  bool prefetch;
};

/* Row-by-row fills in one command list: the first row waits, the last
 * signals. */
struct fill2d_op {
  char *ptr;
  size_t pitch, width, height;
  const void *pattern;
  size_t pattern_size;
};

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

/* Level Zero has no event callbacks: a thread per callback waits for the
 * event (in short slices, so piTearDown can stop it) and calls it. */
struct callback {
  pthread_t thread;
  atomic_bool done;
  struct event_callback call;
  struct callback *next;
};


/* ---- errors.c -------------------------------------------------------------- */

const char *ze_result_name(ze_result_t r);

pi_result pi_from_ze(ze_result_t r);

pi_result check_ze(const char *fn, const char *zefn, ze_result_t r);

pi_result unknown_query(const struct info_out *o);

/* ---- platform.c ------------------------------------------------------------ */

extern pthread_mutex_t platforms_lock;

extern bool platforms_known;

extern pi_uint32 nplatforms;

extern pi_platform *platforms;

void platform_free(pi_platform p);

pi_result discover(const char *fn);

pi_result device_subs(const char *fn, pi_device d);

pi_device find_device(pi_platform plat, ze_device_handle_t z);

const char *dev_name(pi_device d);

uint64_t ticks_to_ns(pi_device d, uint64_t ticks);

/* ---- device.c -------------------------------------------------------------- */

bool is_spirv(const unsigned char *b, size_t n);

/* ---- context.c ------------------------------------------------------------- */

pi_result context_check_devices(const char *fn, pi_uint32 n,
                                const pi_device *devices);

void context_retain(pi_context c);

pi_result context_release(const char *fn, pi_context c);

bool context_has_device(pi_context c, pi_device d);

/* ---- event.c --------------------------------------------------------------- */

pi_result event_new(const char *fn, pi_context c, pi_queue q,
                    pi_command_type type, bool timestamps,
                    pi_event *out);

pi_result event_release(const char *fn, pi_event e);

void event_retain(pi_event e);

pi_result event_wait(const char *fn, pi_event e);

extern atomic_bool stopping;

void callbacks_join(bool all);

/* ---- queue.c --------------------------------------------------------------- */

bool in_order(pi_queue q);

pi_result queue_reap(const char *fn, pi_queue q, bool wait);

void queue_drop(pi_queue q);

/* ---- submission.c ---------------------------------------------------------- */

pi_result enqueue(const char *fn, pi_queue q, pi_command_type type,
                  pi_uint32 nwait, const pi_event *wait, pi_event *out,
                  bool blocking, bool barrier, append_fn append,
                  void *op, void *free_after);

pi_result append_wait(const struct append *a);

pi_result append_signal(const struct append *a);

pi_result append_barrier(const struct append *a, void *op);

pi_result append_copy(const struct append *a, void *op);

pi_result enqueue_fill(const char *fn, pi_queue q, pi_command_type type,
                       void *ptr, const void *pattern,
                       size_t pattern_size, size_t size,
                       pi_uint32 nwait, const pi_event *wait,
                       pi_event *event);

pi_result append_rect(const struct append *a, void *op);

bool fits_u32(size_t v);

pi_result rect_setup(const char *fn, struct rect_op *op, void *dst,
                     const size_t dorigin[3], size_t drow,
                     size_t dslice, const void *src,
                     const size_t sorigin[3], size_t srow,
                     size_t sslice, const size_t region[3]);

/* ---- memory.c -------------------------------------------------------------- */

pi_result sync_copy(const char *fn, pi_context c, pi_device dev,
                    void *dst, const void *src, size_t size,
                    ze_image_handle_t image,
                    const ze_image_region_t *region);

pi_mem mem_new(pi_context c, enum mem_kind kind, pi_mem_flags flags,
               size_t size);

pi_result mem_release(const char *fn, pi_mem m);

pi_result mem_flags_check(const char *fn, pi_mem_flags flags,
                          const void *host_ptr);

/* ---- image.c --------------------------------------------------------------- */

size_t image_rows(const pi_image_desc *d);

size_t image_slices(const pi_image_desc *d);

/* ---- program.c ------------------------------------------------------------- */

pi_result program_release(const char *fn, pi_program p);

struct prog_dev *prog_dev_of(pi_program p, pi_device d);

ze_result_t find_in_modules(struct prog_dev *d, const char *name,
                            size_t *size, void **ptr, bool function);

pi_result built_dev(const char *fn, pi_program p, pi_device dev,
                    struct prog_dev **out);

/* ---- kernel.c -------------------------------------------------------------- */

ze_kernel_handle_t kernel_for(pi_kernel k, pi_device d);

#endif
