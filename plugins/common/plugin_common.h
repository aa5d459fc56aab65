/*
 * plugin_common.h: what every pitrace plugin needs, whatever its backend
 * (libpi_plugin_common.a, linked into libpi_opencl.so, libpi_level_zero.so
 * and libpi_cuda.so; its symbols stay hidden in each plugin).
 *
 *  - errors: fail() keeps a result code and a message for
 *    piPluginGetLastError in thread-local storage; REQUIRE, NEED and TRY
 *    check arguments and results in PI functions; RETURN_CODE_NAME names a
 *    backend's result codes;
 *  - info queries: an info_out names where a *GetInfo call puts its
 *    answer, and put_*() write a value with the size checks OpenCL makes;
 *  - the facts a plugin keeps of its own handles, from which the *GetInfo
 *    entry points answer what a handle holds and belongs to;
 *  - queue property lists ({PI_QUEUE_FLAGS, flags, PI_QUEUE_COMPUTE_INDEX,
 *    index, 0}), and what a plugin's own queues support;
 *  - rectangle and image coordinates;
 *  - USM allocation properties and migration flags;
 *  - event callbacks and their types;
 *  - reference counts of plugin-made handles;
 *  - parameters that entry points a plugin does not offer leave unused;
 *  - the backend-neutral parts of piextDeviceSelectBinary and piPluginInit;
 *  - the entry points defined here once for every plugin (entries.c), and
 *    the hooks each plugin defines for them.
 *
 * A plugin defines FN, the name of the PI function it is in, before it
 * uses REQUIRE or NEED (its implementations are <prefix>_<PI name>, so FN is
 * __func__ past the prefix).
 */
#ifndef PITRACE_PLUGIN_COMMON_H
#define PITRACE_PLUGIN_COMMON_H

#include "pi/pi.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Declared hidden: each plugin links its own copy and exports none of it. */
#pragma GCC visibility push(hidden)

/* ---- Errors ------------------------------------------------------------- */

/* The last message and code of this thread, for piPluginGetLastError;
 * PI_SUCCESS with a message is a warning. */
extern _Thread_local char last_message[4096];
extern _Thread_local pi_result last_code;

/* Keeps a printf-style message in last_message. */
__attribute__((format(printf, 1, 2))) void fail_message(const char *fmt, ...);
/* Keeps `code` as last_code and returns it. */
pi_result fail_code(pi_result code);

/* fail(code, fmt, ...) keeps the message and `code`, and is `code`. It is a
 * macro, not a variadic function, so that the compiler sees at every call
 * which code comes back: a variadic function is never inlined, so a helper's
 * `return fail(PI_ERROR_..., ...)` before it wrote its outputs looked as if it
 * could return PI_SUCCESS, and its callers' use of those outputs after a
 * PI_SUCCESS check as a use of uninitialized values (-Wmaybe-uninitialized
 * at -O3). */
#define fail(code, ...) (fail_message(__VA_ARGS__), fail_code(code))

/* PI_ERROR_OUT_OF_HOST_MEMORY, "<fn>: out of host memory". */
pi_result out_of_memory(const char *fn);

/* piPluginGetLastError: the last message of this thread, and its code. */
pi_result plugin_last_error(char **message);

/* Returns, in a function that names a backend's result codes, the name of
 * `code` from list(X), an X-macro of the backend's codes, or `other` for a
 * code the list lacks. */
#define RETURN_CODE_NAME(code, list, other)                                    \
  do {                                                                         \
    switch (code) {                                                            \
      list(RETURN_CODE_NAME_CASE_)                                             \
    default:                                                                   \
      return other;                                                            \
    }                                                                          \
  } while (0)
#define RETURN_CODE_NAME_CASE_(name)                                           \
  case name:                                                                   \
    return #name;

/* Fails with PI_ERROR_INVALID_VALUE when an argument check does not hold. */
#define REQUIRE(cond) REQUIRE_TEXT_(FN, (cond), #cond)
/* Fails with `code` when a handle argument is NULL. */
#define NEED(handle, code) NEED_TEXT_(FN, (handle), code, #handle)
/* The same in a hook or helper that is given the PI function's name, fn. */
#define REQUIRE_IN(fn, cond) REQUIRE_TEXT_(fn, (cond), #cond)
#define NEED_IN(fn, handle, code) NEED_TEXT_(fn, (handle), code, #handle)
#define REQUIRE_TEXT_(fn, ok, text)                                            \
  do {                                                                         \
    if (!ok)                                                                   \
      return fail(PI_ERROR_INVALID_VALUE, "%s: invalid argument: %s", (fn),    \
                  text);                                                       \
  } while (0)
#define NEED_TEXT_(fn, handle, code, text)                                     \
  do {                                                                         \
    if (!handle)                                                               \
      return fail(code, "%s: %s is NULL", (fn), text);                         \
  } while (0)
/* Returns a PI result other than PI_SUCCESS. */
#define TRY(expr)                                                              \
  do {                                                                         \
    pi_result try_r_ = (expr);                                                 \
    if (try_r_ != PI_SUCCESS)                                                  \
      return try_r_;                                                           \
  } while (0)

/* ---- Info queries --------------------------------------------------------
 * An info_out names where a *GetInfo call puts its answer; put_*() write a
 * value with the size checks OpenCL makes. */

struct info_out {
  const char *fn;
  unsigned query;
  size_t size;
  void *value;
  size_t *size_ret;
};

pi_result put_info(const struct info_out *o, const void *src, size_t n);
pi_result put_bool(const struct info_out *o, int b);
pi_result put_u32(const struct info_out *o, uint32_t v);
pi_result put_i32(const struct info_out *o, int32_t v);
pi_result put_u64(const struct info_out *o, uint64_t v);
pi_result put_size(const struct info_out *o, size_t v);
pi_result put_ptr(const struct info_out *o, const void *p);
pi_result put_str(const struct info_out *o, const char *s);
/* PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_{1,2,3}D: the first 1, 2 or 3
 * of the device's limits per dimension, as o->query asks. */
pi_result put_max_work_groups(const struct info_out *o, const size_t max[3]);
/* Fails: the query is unknown to the `backend` plugin ("CUDA", ...). */
pi_result put_unknown(const struct info_out *o, const char *backend);

/* The info_out of a *GetInfo function whose parameters have the API's
 * names (param_value_size, param_value, param_value_size_ret), in a PI
 * function (FN). */
#define INFO_OUT(query)                                                        \
  { FN, (query), param_value_size, param_value, param_value_size_ret }

/* *native = obj, for the *GetNativeHandle functions of plugins whose native
 * handle is the backend's own object. */
pi_result native_of(const char *fn, const void *obj, pi_native_handle *native);

/* ---- Facts of handles ----------------------------------------------------
 * A plugin that makes its own handles (CUDA's, Level Zero's) knows from its
 * own fields what they hold and belong to. The *GetInfo entry points answer
 * those queries from the facts the hook backend_<kind>_facts gives, alike
 * for every such plugin (entries.c); the hook of a plugin that keeps none
 * (OpenCL's, which asks the implementation) returns false. */

/* Devices: put_devices writes the list (PI_CONTEXT_INFO_DEVICES),
 * put_device_count their number. */
struct device_list {
  const pi_device *list;
  pi_uint32 n;
};
pi_result put_devices(const struct info_out *o, struct device_list d);
pi_result put_device_count(const struct info_out *o, struct device_list d);

/* What a kind's hook fills: the facts HANDLE_FACTS lists for that kind. */
struct handle_facts {
  pi_uint32 refs;       /* the reference count */
  pi_platform platform; /* a context's */
  pi_context context;   /* that of anything else but a platform */
  pi_device device;     /* a queue's */
  pi_queue queue;       /* an event's; NULL for user and native events */
  pi_program program;   /* a kernel's */
  /* A context's devices; a program's count only (the plugin gives the
   * list of a program's devices itself). */
  struct device_list devices;
  pi_queue_properties flags; /* a queue's, as it was made */
  pi_command_type type;      /* an event's */
  size_t size;               /* memory's */
  const char *name;          /* a kernel's or a platform's */
  /* A platform's. */
  const char *vendor, *profile, *version, *extensions;
  pi_platform_backend backend;
};

/* The queries that facts answer: X(kind of handle, query, how: put_<how>,
 * fact). */
#define HANDLE_FACTS(X)                                                        \
  X(platform, PI_PLATFORM_INFO_NAME, str, name)                                \
  X(platform, PI_PLATFORM_INFO_VENDOR, str, vendor)                            \
  X(platform, PI_PLATFORM_INFO_PROFILE, str, profile)                          \
  X(platform, PI_PLATFORM_INFO_VERSION, str, version)                          \
  X(platform, PI_PLATFORM_INFO_EXTENSIONS, str, extensions)                    \
  X(platform, PI_EXT_PLATFORM_INFO_BACKEND, u32, backend)                      \
  X(context, PI_CONTEXT_INFO_REFERENCE_COUNT, u32, refs)                       \
  X(context, PI_CONTEXT_INFO_PLATFORM, ptr, platform)                          \
  X(context, PI_CONTEXT_INFO_NUM_DEVICES, device_count, devices)               \
  X(context, PI_CONTEXT_INFO_DEVICES, devices, devices)                        \
  X(queue, PI_QUEUE_INFO_REFERENCE_COUNT, u32, refs)                           \
  X(queue, PI_QUEUE_INFO_CONTEXT, ptr, context)                                \
  X(queue, PI_QUEUE_INFO_DEVICE, ptr, device)                                  \
  X(queue, PI_QUEUE_INFO_PROPERTIES, u64, flags)                               \
  X(mem, PI_MEM_CONTEXT, ptr, context)                                         \
  X(mem, PI_MEM_SIZE, size, size)                                              \
  X(program, PI_PROGRAM_INFO_REFERENCE_COUNT, u32, refs)                       \
  X(program, PI_PROGRAM_INFO_CONTEXT, ptr, context)                            \
  X(program, PI_PROGRAM_INFO_NUM_DEVICES, device_count, devices)               \
  X(kernel, PI_KERNEL_INFO_REFERENCE_COUNT, u32, refs)                         \
  X(kernel, PI_KERNEL_INFO_CONTEXT, ptr, context)                              \
  X(kernel, PI_KERNEL_INFO_PROGRAM, ptr, program)                              \
  X(kernel, PI_KERNEL_INFO_FUNCTION_NAME, str, name)                           \
  X(event, PI_EVENT_INFO_REFERENCE_COUNT, u32, refs)                           \
  X(event, PI_EVENT_INFO_CONTEXT, ptr, context)                                \
  X(event, PI_EVENT_INFO_COMMAND_QUEUE, ptr, queue)                            \
  X(event, PI_EVENT_INFO_COMMAND_TYPE, u32, type)                              \
  X(sampler, PI_SAMPLER_INFO_REFERENCE_COUNT, u32, refs)                       \
  X(sampler, PI_SAMPLER_INFO_CONTEXT, ptr, context)

/* Defines backend_<kind>_facts: the facts of handle h, as designated
 * initializers of struct handle_facts over h. */
#define DEFINE_FACTS(kind, h, ...)                                             \
  bool backend_##kind##_facts(pi_##kind h, struct handle_facts *f) {          \
    *f = (struct handle_facts){__VA_ARGS__};                                   \
    return true;                                                               \
  }
/* Defines the hook of a plugin that keeps no facts of `kind`'s handles. */
#define DEFINE_NO_FACTS(kind)                                                  \
  bool backend_##kind##_facts(pi_##kind h, struct handle_facts *f) {          \
    (void)h;                                                                   \
    (void)f;                                                                   \
    return false;                                                              \
  }
/* Defines every kind's hook so, for a plugin that keeps no facts at all. */
#define DEFINE_NO_FACTS_AT_ALL PLUGIN_INFO_ENTRIES(NO_FACTS_ENTRY_)
#define NO_FACTS_ENTRY_(name, handle, query, what, facts)                      \
  NO_FACTS_ENTRY_##facts(query)
#define NO_FACTS_ENTRY_FACTS(query) DEFINE_NO_FACTS(query)
#define NO_FACTS_ENTRY_NO_FACTS(query)

/* ---- Flags -------------------------------------------------------------- */

/* One flag of a backend and the PI flag it stands for. */
struct flag_pair {
  uint64_t from, to;
};
/* The `to` flags of each pair whose `from` flag `bits` has. */
uint64_t flags_map(uint64_t bits, const struct flag_pair *map, size_t n);

/* ---- Device info queries -------------------------------------------------
 * Groups of piDeviceGetInfo queries that every plugin answers alike, as case
 * labels; a plugin may add its own cases to a group. */

/* Features no plugin offers: each answers false. */
#define CASE_FEATURES_NOT_OFFERED \
  case PI_EXT_CODEPLAY_DEVICE_INFO_SUPPORTS_FUSION: \
  case PI_EXT_ONEAPI_DEVICE_INFO_BINDLESS_IMAGES_SUPPORT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_BINDLESS_IMAGES_SHARED_USM_SUPPORT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_BINDLESS_IMAGES_1D_USM_SUPPORT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_BINDLESS_IMAGES_2D_USM_SUPPORT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_MIPMAP_SUPPORT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_MIPMAP_ANISOTROPY_SUPPORT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_MIPMAP_LEVEL_REFERENCE_SUPPORT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_INTEROP_MEMORY_IMPORT_SUPPORT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_INTEROP_MEMORY_EXPORT_SUPPORT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_INTEROP_SEMAPHORE_IMPORT_SUPPORT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_INTEROP_SEMAPHORE_EXPORT_SUPPORT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_COMMAND_BUFFER_SUPPORT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_COMMAND_BUFFER_UPDATE_SUPPORT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_CUBEMAP_SUPPORT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_CUBEMAP_SEAMLESS_FILTERING_SUPPORT:

/* The forward-progress guarantees of SYCL's root groups. */
#define CASE_FORWARD_PROGRESS \
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_GROUP_PROGRESS_AT_ROOT_GROUP_LEVEL: \
  case PI_EXT_ONEAPI_DEVICE_INFO_SUB_GROUP_PROGRESS_AT_ROOT_GROUP_LEVEL: \
  case PI_EXT_ONEAPI_DEVICE_INFO_SUB_GROUP_PROGRESS_AT_WORK_GROUP_LEVEL: \
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_ITEM_PROGRESS_AT_ROOT_GROUP_LEVEL: \
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_ITEM_PROGRESS_AT_WORK_GROUP_LEVEL: \
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_ITEM_PROGRESS_AT_SUB_GROUP_LEVEL:

/* The limits of bindless images, which no plugin offers. */
#define CASE_BINDLESS_IMAGE_LIMITS \
  case PI_EXT_ONEAPI_DEVICE_INFO_IMAGE_PITCH_ALIGN: \
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_IMAGE_LINEAR_WIDTH: \
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_IMAGE_LINEAR_HEIGHT: \
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_IMAGE_LINEAR_PITCH: \
  case PI_EXT_ONEAPI_DEVICE_INFO_MIPMAP_MAX_ANISOTROPY:

/* The execution units of Intel GPUs, which only Level Zero describes. */
#define CASE_INTEL_GPU_GEOMETRY \
  case PI_DEVICE_INFO_GPU_EU_COUNT: \
  case PI_DEVICE_INFO_GPU_EU_SIMD_WIDTH: \
  case PI_DEVICE_INFO_GPU_SLICES: \
  case PI_DEVICE_INFO_GPU_SUBSLICES_PER_SLICE: \
  case PI_DEVICE_INFO_GPU_EU_COUNT_PER_SUBSLICE: \
  case PI_DEVICE_INFO_GPU_HW_THREADS_PER_EU:

/* ---- Rectangles ---------------------------------------------------------- */

/* The three coordinates of a rectangle or image offset or region:
 * XYZ(region, width_bytes, height_scalar, depth_scalar). */
#define XYZ(s, a, b, c)                                                        \
  { (s)->a, (s)->b, (s)->c }

/* The source and destination origins and the region of a copy. */
struct copy_coords {
  size_t src[3], dst[3], region[3];
};

/* piEnqueueMemBufferCopyRect's origins and region (bytes, rows, slices);
 * fails where one is NULL. */
pi_result buffer_copy_coords(const char *fn, pi_buff_rect_offset src_origin,
                             pi_buff_rect_offset dst_origin,
                             pi_buff_rect_region region,
                             struct copy_coords *c);
/* piEnqueueMemImageCopy's origins and region (pixels, rows, slices);
 * fails where one is NULL. */
pi_result image_copy_coords(const char *fn, pi_image_offset src_origin,
                            pi_image_offset dst_origin, pi_image_region region,
                            struct copy_coords *c);

/* Fails where bytes offset..offset+size do not lie in a `total`-byte
 * buffer. */
pi_result buffer_bytes_check(const char *fn, size_t offset, size_t size,
                             size_t total);

/* ---- Queue property lists ------------------------------------------------ */

/* Reads {PI_QUEUE_FLAGS, flags, PI_QUEUE_COMPUTE_INDEX, index, 0}: flags
 * and index are 0 where the list does not give them; a property other than
 * these two fails. */
pi_result queue_properties_read(const char *fn, const pi_queue_properties *p,
                                pi_queue_properties *flags,
                                pi_queue_properties *index);

/* For backends with one queue index: an index other than 0 fails, naming
 * the backend. */
pi_result queue_one_index(const char *fn, pi_queue_properties index);

/* The queue flags PI defines. */
#define PI_QUEUE_FLAGS_KNOWN                                                   \
  (PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE |                               \
   PI_QUEUE_FLAG_PROFILING_ENABLE | PI_QUEUE_FLAG_ON_DEVICE |                  \
   PI_QUEUE_FLAG_ON_DEVICE_DEFAULT | PI_EXT_ONEAPI_QUEUE_FLAG_DISCARD_EVENTS | \
   PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW |                                     \
   PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_HIGH |                                    \
   PI_EXT_QUEUE_FLAG_SUBMISSION_NO_IMMEDIATE |                                 \
   PI_EXT_QUEUE_FLAG_SUBMISSION_IMMEDIATE)

/* PI_DEVICE_INFO_QUEUE_PROPERTIES (= QUEUE_ON_HOST_PROPERTIES) and
 * PI_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES for a plugin that makes its own
 * queues: out-of-order execution and profiling, on the host only. */
pi_result put_queue_support(const struct info_out *o);

/* Checks a queue's flags: none PI does not define, no on-device queue where
 * `no_on_device` names a backend that has none (NULL lets them through),
 * not both priorities. */
pi_result queue_flags_check(const char *fn, pi_queue_properties flags,
                            const char *no_on_device);

/* ---- USM ------------------------------------------------------------------ */

/* Reads a USM allocation property list {PI_MEM_ALLOC_FLAGS, bits,
 * PI_MEM_USM_ALLOC_BUFFER_LOCATION, location, 0}: *flags is the
 * PI_MEM_ALLOC_FLAGS bits (0 where none are). Unknown bits or properties,
 * and a property named twice, fail; a buffer location (FPGA) is passed
 * over. The shared entry points check every list with it before the
 * plugin sees it. */
pi_result usm_alloc_flags(const char *fn, const pi_usm_mem_properties *props,
                          pi_usm_mem_properties *flags);

/* Fails on piextUSMEnqueuePrefetch flags PI does not define. */
pi_result usm_migration_flags_check(const char *fn,
                                    pi_usm_migration_flags flags);

/* ---- Events ---------------------------------------------------------------- */

/* Fails on a piEventSetCallback type other than PI_EVENT_COMPLETE,
 * PI_EVENT_RUNNING and PI_EVENT_SUBMITTED. */
pi_result event_callback_type_check(const char *fn, pi_int32 type);

/* A piEventSetCallback call: fn(event, status, user_data) is due when the
 * event reaches status `type`. */
struct event_callback {
  pi_event event;
  pi_int32 type;
  void (*fn)(pi_event, pi_int32, void *);
  void *user_data;
};

/* ---- Reference counts ---------------------------------------------------- */

/* Counts a new reference to a handle. */
static inline void ref_retain(atomic_uint *refs) { atomic_fetch_add(refs, 1); }

/* Drops a reference; true when it was the last one (the handle is to be
 * freed). */
static inline bool ref_release(atomic_uint *refs) {
  return atomic_fetch_sub(refs, 1) == 1;
}

/* ---- Device images (piextDeviceSelectBinary) ----------------------------- */

/* Whether the image's DeviceTargetSpec is `target`. */
int target_is(const struct pi_device_binary_struct *b, const char *target);

/* "spir64 (format 4), nvptx64 (format 3)": what a piextDeviceSelectBinary
 * call was offered, for its message when no image fits; "none" for no
 * images. */
const char *binaries_offered(pi_device_binary *binaries, pi_uint32 n,
                             char *buf, size_t size);

/* ---- Entry points a plugin does not offer ------------------------------- */

/* Between UNUSED_PARAMETERS_BEGIN and UNUSED_PARAMETERS_END, functions may
 * leave parameters unused without a warning: for PI calls that a backend
 * does not offer, which fail alike whatever their arguments, instead of a
 * (void) cast of each parameter. gcc and clang both read these pragmas. */
#define UNUSED_PARAMETERS_BEGIN                                                \
  _Pragma("GCC diagnostic push")                                               \
      _Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")
#define UNUSED_PARAMETERS_END _Pragma("GCC diagnostic pop")

/* ---- Plugin ------------------------------------------------------------- */

/* What tells the plugins apart where their entry points are shared: each
 * plugin defines this_backend. */
struct backend {
  const char *name;     /* in messages: "OpenCL", "Level Zero", "CUDA" */
  const char *revision; /* the third part of PluginVersion, bumped with
                           every behavioural change */
  const char *compiler; /* whose options piPluginGetBackendOption gives */
  /* Those options for DPC++'s "", "-O0", "-O1", "-O2" and "-O3". */
  const char *const options[5];
  /* piclProgramCreateWithSource where the backend compiles OpenCL C; else
   * NULL, and no_source says why it does not and what to do instead. */
  pi_fn_piclProgramCreateWithSource program_with_source;
  const char *no_source;
};
extern const struct backend this_backend;

/* piPluginInit's part before the function table: checks the runtime's PI
 * major version and writes the plugin's version, _PI_H_VERSION_STRING
 * "." this_backend.revision. */
pi_result plugin_init_version(pi_plugin *plugin);


/* ---- Entry points defined once for every plugin ------------------------
 * Where every backend checks a PI call's arguments alike and only the work
 * differs, the entry point is defined here once, as common_<name>
 * (entries.c), and calls the hook below that each plugin defines (a
 * backend_* function) for the backend's part. COMMON_ENTRY_<name> marks
 * those entry points; a plugin's function table takes PLUGIN_ENTRY(prefix,
 * name) for PI function `name`: common_<name> where it is marked, the
 * plugin's own <prefix><name> where not. */

#define COMMON_ENTRY_piextPluginGetOpaqueData COMMON,
#define COMMON_ENTRY_piPluginGetLastError COMMON,
#define COMMON_ENTRY_piPluginGetBackendOption COMMON,
#define COMMON_ENTRY_piContextCreate COMMON,
#define COMMON_ENTRY_piQueueCreate COMMON,
#define COMMON_ENTRY_piextQueueCreate COMMON,
#define COMMON_ENTRY_piProgramCreateWithBinary COMMON,
#define COMMON_ENTRY_piEnqueueKernelLaunch COMMON,
#define COMMON_ENTRY_piextEnqueueCooperativeKernelLaunch COMMON,
#define COMMON_ENTRY_piEnqueueMemBufferReadRect COMMON,
#define COMMON_ENTRY_piEnqueueMemBufferWriteRect COMMON,
#define COMMON_ENTRY_piEnqueueMemBufferCopyRect COMMON,
#define COMMON_ENTRY_piextUSMHostAlloc COMMON,
#define COMMON_ENTRY_piextUSMDeviceAlloc COMMON,
#define COMMON_ENTRY_piextUSMSharedAlloc COMMON,
#define COMMON_ENTRY_piextEnqueueDeviceGlobalVariableWrite COMMON,
#define COMMON_ENTRY_piextEnqueueDeviceGlobalVariableRead COMMON,
#define COMMON_ENTRY_piPlatformGetInfo COMMON,
#define COMMON_ENTRY_piDeviceGetInfo COMMON,
#define COMMON_ENTRY_piContextGetInfo COMMON,
#define COMMON_ENTRY_piQueueGetInfo COMMON,
#define COMMON_ENTRY_piMemGetInfo COMMON,
#define COMMON_ENTRY_piMemImageGetInfo COMMON,
#define COMMON_ENTRY_piProgramGetInfo COMMON,
#define COMMON_ENTRY_piKernelGetInfo COMMON,
#define COMMON_ENTRY_piEventGetInfo COMMON,
#define COMMON_ENTRY_piEventGetProfilingInfo COMMON,
#define COMMON_ENTRY_piSamplerGetInfo COMMON,
#define COMMON_ENTRY_piProgramGetBuildInfo COMMON,
#define COMMON_ENTRY_piKernelGetGroupInfo COMMON,
#define COMMON_ENTRY_piKernelGetSubGroupInfo COMMON,
#define COMMON_ENTRY_piextUSMEnqueueFill COMMON,
#define COMMON_ENTRY_piextUSMEnqueueMemcpy COMMON,
#define COMMON_ENTRY_piextUSMEnqueuePrefetch COMMON,
#define COMMON_ENTRY_piextUSMEnqueueFill2D COMMON,
#define COMMON_ENTRY_piextUSMEnqueueMemset2D COMMON,
#define COMMON_ENTRY_piextUSMEnqueueMemcpy2D COMMON,
#define COMMON_ENTRY_piEnqueueMemBufferFill COMMON,
#define COMMON_ENTRY_piEnqueueMemImageRead COMMON,
#define COMMON_ENTRY_piEnqueueMemImageWrite COMMON,
#define COMMON_ENTRY_piEnqueueMemImageCopy COMMON,
#define COMMON_ENTRY_piEnqueueMemImageFill COMMON,
#define COMMON_ENTRY_piEnqueueMemUnmap COMMON,
#define COMMON_ENTRY_piclProgramCreateWithSource COMMON,
#define COMMON_ENTRY_piProgramCompile COMMON,
#define COMMON_ENTRY_piextDeviceSelectBinary COMMON,

/* A marked name turns the first argument into "COMMON, common_<name>", so
 * the second is common_<name>; an unmarked one leaves <prefix><name> second. */
#define PLUGIN_ENTRY(prefix, name)                                             \
  PLUGIN_ENTRY_PICK_(COMMON_ENTRY_##name common_##name, prefix##name, )
#define PLUGIN_ENTRY_PICK_(...) PLUGIN_ENTRY_SECOND_(__VA_ARGS__)
#define PLUGIN_ENTRY_SECOND_(first, second, ...) second

/* What a plugin's table takes for PI function `name`, the plugin's own
 * named PLUGIN_PREFIX<name> (each plugin defines PLUGIN_PREFIX: ocl_). */
#define PLUGIN_TABLE_ENTRY(name) PLUGIN_TABLE_ENTRY_(PLUGIN_PREFIX, name)
#define PLUGIN_TABLE_ENTRY_(prefix, name) PLUGIN_ENTRY(prefix, name)

/* piPluginInit's function table: every entry. */
#define PLUGIN_FILL_TABLE(plugin)                                              \
  do {                                                                         \
    pi_plugin *fill_ = (plugin);                                               \
    PI_FOR_EACH_API(PLUGIN_FILL_ENTRY_)                                        \
  } while (0)
#define PLUGIN_FILL_ENTRY_(name)                                               \
  fill_->PiFunctionTable.name = PLUGIN_TABLE_ENTRY(name);

/* Declares every PI function as the table takes it, each of the type
 * pi_gen.h gives it (pi_fn_<name>), so each definition is checked against
 * the API, and a plugin's own name for one defined here is undeclared (a
 * plugin defines PLUGIN_PREFIX before it includes this header; the library
 * itself declares its common_<name>). */
#ifdef PLUGIN_PREFIX
#define X(name) extern __typeof__(*(pi_fn_##name)0) PLUGIN_TABLE_ENTRY(name);
#else
#define X(name) extern __typeof__(*(pi_fn_##name)0) common_##name;
#endif
PI_FOR_EACH_API(X)
#undef X

/* piextUSMHostAlloc, piextUSMDeviceAlloc and piextUSMSharedAlloc, once
 * result_ptr, the size and the alignment are checked. */
enum usm_kind { USM_HOST, USM_DEVICE, USM_SHARED };
struct usm_alloc {
  enum usm_kind kind;
  pi_context context;
  pi_device device; /* NULL for host memory */
  pi_usm_mem_properties *properties;
  size_t size;
  pi_uint32 alignment;
};
pi_result backend_usm_alloc(const char *fn, const struct usm_alloc *a,
                            void **result_ptr);

/* What a command's entry point is given besides its own arguments: the PI
 * function, the queue (not NULL), the events to wait for and where the
 * command's event goes (NULL: nowhere). */
struct command {
  const char *fn;
  pi_queue queue;
  pi_uint32 nwait;
  const pi_event *wait;
  pi_event *event;
};

/* The USM commands: piextUSMEnqueueFill (count bytes of pattern),
 * piextUSMEnqueueMemcpy, piextUSMEnqueuePrefetch (its flags checked),
 * piextUSMEnqueueFill2D, piextUSMEnqueueMemset2D and
 * piextUSMEnqueueMemcpy2D. */
pi_result backend_usm_fill(const struct command *c, void *ptr,
                           const void *pattern, size_t patternSize,
                           size_t count);
pi_result backend_usm_memcpy(const struct command *c, pi_bool blocking,
                             void *dst_ptr, const void *src_ptr, size_t size);
pi_result backend_usm_prefetch(const struct command *c, const void *ptr,
                               size_t size);
pi_result backend_usm_fill2d(const struct command *c, void *ptr, size_t pitch,
                             size_t pattern_size, const void *pattern,
                             size_t width, size_t height);
pi_result backend_usm_memset2d(const struct command *c, void *ptr,
                               size_t pitch, int value, size_t width,
                               size_t height);
pi_result backend_usm_memcpy2d(const struct command *c, pi_bool blocking,
                               void *dst_ptr, size_t dst_pitch,
                               const void *src_ptr, size_t src_pitch,
                               size_t width, size_t height);

/* piEnqueueMemBufferFill and piEnqueueMemUnmap. */
pi_result backend_buffer_fill(const struct command *c, pi_mem buffer,
                              const void *pattern, size_t pattern_size,
                              size_t offset, size_t size);
pi_result backend_unmap(const struct command *c, pi_mem memobj,
                        void *mapped_ptr);

/* The image commands, their handles unchecked: piEnqueueMemImageRead
 * (`read`) and piEnqueueMemImageWrite (then `ptr` is only read), */
struct image_rw {
  bool read;
  pi_bool blocking;
  pi_mem image;
  pi_image_offset origin;
  pi_image_region region;
  size_t row_pitch, slice_pitch;
  void *ptr;
};
pi_result backend_image_rw(const struct command *c, const struct image_rw *rw);

/* piEnqueueMemImageCopy, its origins and region read (cc), and
 * piEnqueueMemImageFill. */
pi_result backend_image_copy(const struct command *c, pi_mem src_image,
                             pi_mem dst_image, const struct copy_coords *cc);
pi_result backend_image_fill(const struct command *c, pi_mem image,
                             const void *fill_color, const size_t *origin,
                             const size_t *region);

/* piEnqueueKernelLaunch, and piextEnqueueCooperativeKernelLaunch where
 * `cooperative`. */
pi_result backend_launch(const char *fn, bool cooperative, pi_queue queue,
                         pi_kernel kernel, pi_uint32 work_dim,
                         const size_t *offset, const size_t *global,
                         const size_t *local, pi_uint32 nwait,
                         const pi_event *wait, pi_event *event);

/* piEnqueueMemBufferReadRect (`read`) and piEnqueueMemBufferWriteRect
 * (then `ptr` is only read): a rectangle between a buffer and host memory. */
struct buffer_rect {
  bool read;
  pi_bool blocking;
  pi_mem buffer;
  pi_buff_rect_offset buffer_offset, host_offset;
  pi_buff_rect_region region;
  /* The buffer's row and slice pitches, then the host memory's. */
  size_t pitches[4];
  void *ptr;
};
pi_result backend_buffer_rect(const char *fn, pi_queue queue,
                              const struct buffer_rect *r, pi_uint32 nwait,
                              const pi_event *wait, pi_event *event);

/* piEnqueueMemBufferCopyRect, its origins and region read (c);
 * pitches[]: the source's row and slice pitches, then the destination's. */
pi_result backend_buffer_copy_rect(const char *fn, pi_queue queue,
                                   pi_mem src, pi_mem dst,
                                   const struct copy_coords *c,
                                   const size_t pitches[4], pi_uint32 nwait,
                                   const pi_event *wait, pi_event *event);

/* piextEnqueueDeviceGlobalVariableWrite (`write`: from host) and
 * piextEnqueueDeviceGlobalVariableRead (to host). */
pi_result backend_global_copy(const char *fn, bool write, pi_queue queue,
                              pi_program program, const char *name,
                              pi_bool blocking, size_t count, size_t offset,
                              void *host, pi_uint32 nwait,
                              const pi_event *wait, pi_event *event);

/* piContextCreate, once ret_context is checked (and set to NULL) and the
 * devices are given. */
struct context_create {
  const pi_context_properties *properties;
  pi_uint32 num_devices;
  const pi_device *devices; /* num_devices of them, not checked */
  void (*pfn_notify)(const char *errinfo, const void *private_info,
                     size_t cb, void *user_data);
  void *user_data;
};
pi_result backend_context_create(const char *fn,
                                 const struct context_create *in,
                                 pi_context *ret_context);

/* piQueueCreate and piextQueueCreate: flags and the compute index (0 from
 * piQueueCreate) as queue_properties_read() reads them. */
pi_result backend_queue_create(const char *fn, pi_context context,
                               pi_device device, pi_queue_properties flags,
                               pi_queue_properties index, pi_queue *queue);

/* piProgramCreateWithBinary, less DPC++'s metadata entries, which mean
 * nothing to a backend: a binary for each device. */
struct device_binaries {
  pi_uint32 num_devices;
  const pi_device *device_list;
  const size_t *lengths;
  const unsigned char **binaries;
  pi_int32 *binary_status; /* each binary's status, where not NULL */
};
pi_result backend_program_with_binary(const char *fn, pi_context context,
                                      const struct device_binaries *bins,
                                      pi_program *ret_program);

/* The *GetInfo entry points: each fails where the handle is NULL
 * (PI_ERROR_INVALID_<what>); where the handle's kind has FACTS, answers the
 * queries that HANDLE_FACTS lists from those the hook backend_<query>_facts
 * gives; and leaves the rest to the hook backend_<query>_info, which writes
 * the answer to o->query where `o` says. X(PI name, handle: pi_<handle>,
 * query: pi_<query>_info, what, FACTS or NO_FACTS). */
#define PLUGIN_INFO_ENTRIES(X)                                                 \
  X(piPlatformGetInfo, platform, platform, PLATFORM, FACTS)                    \
  X(piDeviceGetInfo, device, device, DEVICE, NO_FACTS)                         \
  X(piContextGetInfo, context, context, CONTEXT, FACTS)                        \
  X(piQueueGetInfo, queue, queue, QUEUE, FACTS)                                \
  X(piMemGetInfo, mem, mem, MEM_OBJECT, FACTS)                                 \
  X(piMemImageGetInfo, mem, image, MEM_OBJECT, NO_FACTS)                       \
  X(piProgramGetInfo, program, program, PROGRAM, FACTS)                        \
  X(piKernelGetInfo, kernel, kernel, KERNEL, FACTS)                            \
  X(piEventGetInfo, event, event, EVENT, FACTS)                                \
  X(piEventGetProfilingInfo, event, profiling, EVENT, NO_FACTS)                \
  X(piSamplerGetInfo, sampler, sampler, SAMPLER, FACTS)
#define X(name, handle, query, what, facts)                                    \
  DECLARE_##facts(handle, query)                                               \
  pi_result backend_##query##_info(pi_##handle handle,                         \
                                   const struct info_out *o);
#define DECLARE_FACTS(handle, query)                                           \
  bool backend_##query##_facts(pi_##handle handle, struct handle_facts *f);
#define DECLARE_NO_FACTS(handle, query)
PLUGIN_INFO_ENTRIES(X)
#undef X
#undef DECLARE_FACTS
#undef DECLARE_NO_FACTS

/* The same for those of a handle on a device (which may be NULL where the
 * backend allows it). */
#define PLUGIN_DEVICE_INFO_ENTRIES(X)                                          \
  X(piProgramGetBuildInfo, program, program_build, PROGRAM)                    \
  X(piKernelGetGroupInfo, kernel, kernel_group, KERNEL)
#define X(name, handle, query, what)                                           \
  pi_result backend_##query##_info(pi_##handle handle, pi_device device,       \
                                   const struct info_out *o);
PLUGIN_DEVICE_INFO_ENTRIES(X)
#undef X

/* piKernelGetSubGroupInfo: its input value is the local size some queries
 * depend on. */
pi_result backend_sub_group_info(pi_kernel kernel, pi_device device,
                                 const struct info_out *o, const void *input,
                                 size_t input_size);

/* piextDeviceSelectBinary: how much the device wants image b (*rank 0 most,
 * then 1, 2...; -1 when it cannot take it), and the failure when it takes
 * none of them, naming what it was offered (binaries_offered). */
pi_result backend_binary_rank(const char *fn, pi_device device,
                              const struct pi_device_binary_struct *b,
                              int *rank);
pi_result backend_no_binary(const char *fn, pi_device device,
                            pi_device_binary *binaries,
                            pi_uint32 num_binaries);

/* piProgramCompile, its program not NULL. */
struct program_compile {
  pi_uint32 num_devices;
  const pi_device *device_list;
  const char *options;
  pi_uint32 num_input_headers;
  const pi_program *input_headers;
  const char **header_include_names;
  void (*pfn_notify)(pi_program program, void *user_data);
  void *user_data;
};
pi_result backend_program_compile(const char *fn, pi_program program,
                                  const struct program_compile *in);

#pragma GCC visibility pop

#endif
