/*
 * ocl_internal.h: what the files of the pitrace OpenCL plugin
 * (libpi_opencl.so) share.
 *
 * It implements every PI function of shared/pi-api.txt on top of the OpenCL
 * implementations of the machine, which it finds and calls itself, the way
 * the ICD loader does, with no link to libOpenCL: pitrace's OpenCL front end
 * is an ICD that the application's loader may be pointed at, so a plugin
 * going through a loader could end up calling pitrace again. A PI handle is
 * the OpenCL handle itself (a pi_context is a cl_context), so native handles
 * cost nothing and most PI calls forward to one OpenCL call; where PI and
 * OpenCL share a value (result codes, info queries, flags) it passes
 * unchanged.
 *
 * Discovery (the "nested OpenCL implementation discovery" of design seed
 * 001), once, at the first piPlatformsGet; plugins/opencl/README.md says it
 * with examples:
 *  - ICD vendors: PITRACE_OCL_ICD_VENDORS if set (pitrace's launcher keeps
 *    the user's own OCL_ICD_VENDORS there), else OCL_ICD_VENDORS, as ocl-icd
 *    reads it: a directory of *.icd files, one *.icd file (a bare name is
 *    looked for in the vendor directory first), or a library name or path;
 *    else the *.icd files of OPENCL_VENDOR_PATH, else of /etc/OpenCL/vendors.
 *    A *.icd file holds one library name or path (its first line). A list
 *    that names nothing but the front end counts as unset.
 *  - then libraries named outright, registered as ICDs or not:
 *    PITRACE_OPENCL_LIBRARIES (colon-separated), then libraries= from the
 *    plugins config (pitrace_plugin_options).
 * Each library is opened with dlopen(RTLD_NOW | RTLD_LOCAL) and skipped,
 * with the reason kept, when it cannot be opened, when it exports
 * pitrace_opencl_frontend (the front end itself), when it is a file already
 * taken (same realpath), when it has no clIcdGetPlatformIDsKHR of its own
 * (exported, else given by its clGetExtensionFunctionAddress) or when it has
 * no platform; a platform is kept when its dispatch table has
 * clGetPlatformInfo and it lists cl_khr_icd. Platforms keep a stable order:
 * the *.icd files sorted by name, then the explicit libraries, each
 * library's platforms in its own order. What was skipped, and why, is
 * piPlatformsGet's piPluginGetLastError message (with PI_SUCCESS when
 * platforms were found; the runtime shows it at SYCL_PI_TRACE=1 when none
 * were). Libraries that gave platforms stay loaded for the life of the
 * process, as the ICD loader leaves them.
 *
 * Calls: every object of an ICD implementation starts with a pointer to its
 * dispatch table (struct _cl_icd_dispatch, CL/cl_icd.h), and every OpenCL
 * call goes through the table of its first object argument (ICD_CALL,
 * ICD_CREATE); the calls without one through the object that decides
 * (clCreateContext: devices[0]; clWaitForEvents: events[0]; extension
 * lookups: the platform). A NULL object fails as the ICD loader fails it
 * (CL_INVALID_DEVICE for a device, ...); a NULL entry in a vendor's table (an
 * implementation older than the function) fails with
 * PI_ERROR_INVALID_OPERATION and a message naming the function and the
 * platform, and is never called.
 *
 * The plugin's files, one per PI object kind as in Unified Runtime's
 * adapters (each opens with what it holds): icd.c (errors: the CL -> PI
 * result mapping; calling OpenCL through dispatch tables; small OpenCL
 * query helpers), discovery.c (finding the implementations), platform.c
 * (the per-platform cache of extension entry points; piPlatform*),
 * device.c, context.c, queue.c, memory.c (buffers and images), program.c,
 * kernel.c, event.c, sampler.c, enqueue.c (kernel launches and memory
 * commands), usm.c, global.c (device globals and host pipes), peer.c and
 * plugin.c (piPluginInit, pitrace_plugin_options and the plugin-wide PI
 * functions). This header holds what they share: the OpenCL and PI
 * headers, the macros that call OpenCL, the types, and the declarations of
 * the functions and variables used by more than one file. What every
 * plugin needs (fail(), info-query answers, queue property lists, ...) is
 * plugins/common/plugin_common.h.
 *
 * What OpenCL or a device cannot do (peer access, USM without
 * cl_intel_unified_shared_memory, device globals without
 * cl_intel_global_variable_access, ...) fails with a PI error and a
 * piPluginGetLastError message naming the function, the device and what to
 * use instead. No lock is held across OpenCL calls but during discovery
 * (which the first piPlatformsGet does under its own mutex); the platform
 * cache has its own mutex and the last error is per thread.
 */
#ifndef PITRACE_OCL_INTERNAL_H
#define PITRACE_OCL_INTERNAL_H
#define _GNU_SOURCE /* dladdr, dlinfo, realpath */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue,             \
                                             clCreateSampler */
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>

#include "pi/pi.h"

/* What the plugin's own PI functions are named: ocl_<name> (plugin_common.h
 * declares them). */
#define PLUGIN_PREFIX ocl_

#include "plugin_common.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Bumped with every behavioural change; the third part of PluginVersion. */
#define PLUGIN_REVISION "5"

/* The name of the PI function we are in: implementations are ocl_<name>. */
#define FN (__func__ + sizeof("ocl_") - 1)

_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "extension entry points are looked up as void *");
_Static_assert(sizeof(pi_result) == sizeof(cl_int), "PI results are CL codes");

/* ---- Errors --------------------------------------------------------------
 * Every failure goes through fail() (plugins/common), which keeps the code
 * and a message for piPluginGetLastError in thread-local storage. */

/* clang-format off */
#define CL_ERROR_CODES(X)                                                      \
  X(CL_SUCCESS) X(CL_DEVICE_NOT_FOUND) X(CL_DEVICE_NOT_AVAILABLE)              \
  X(CL_COMPILER_NOT_AVAILABLE) X(CL_MEM_OBJECT_ALLOCATION_FAILURE)             \
  X(CL_OUT_OF_RESOURCES) X(CL_OUT_OF_HOST_MEMORY)                              \
  X(CL_PROFILING_INFO_NOT_AVAILABLE) X(CL_MEM_COPY_OVERLAP)                    \
  X(CL_IMAGE_FORMAT_MISMATCH) X(CL_IMAGE_FORMAT_NOT_SUPPORTED)                 \
  X(CL_BUILD_PROGRAM_FAILURE) X(CL_MAP_FAILURE)                                \
  X(CL_MISALIGNED_SUB_BUFFER_OFFSET)                                           \
  X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)                              \
  X(CL_COMPILE_PROGRAM_FAILURE) X(CL_LINKER_NOT_AVAILABLE)                     \
  X(CL_LINK_PROGRAM_FAILURE) X(CL_DEVICE_PARTITION_FAILED)                     \
  X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) X(CL_INVALID_VALUE)                      \
  X(CL_INVALID_DEVICE_TYPE) X(CL_INVALID_PLATFORM) X(CL_INVALID_DEVICE)        \
  X(CL_INVALID_CONTEXT) X(CL_INVALID_QUEUE_PROPERTIES)                         \
  X(CL_INVALID_COMMAND_QUEUE) X(CL_INVALID_HOST_PTR) X(CL_INVALID_MEM_OBJECT)  \
  X(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) X(CL_INVALID_IMAGE_SIZE)               \
  X(CL_INVALID_SAMPLER) X(CL_INVALID_BINARY) X(CL_INVALID_BUILD_OPTIONS)       \
  X(CL_INVALID_PROGRAM) X(CL_INVALID_PROGRAM_EXECUTABLE)                       \
  X(CL_INVALID_KERNEL_NAME) X(CL_INVALID_KERNEL_DEFINITION)                    \
  X(CL_INVALID_KERNEL) X(CL_INVALID_ARG_INDEX) X(CL_INVALID_ARG_VALUE)         \
  X(CL_INVALID_ARG_SIZE) X(CL_INVALID_KERNEL_ARGS)                             \
  X(CL_INVALID_WORK_DIMENSION) X(CL_INVALID_WORK_GROUP_SIZE)                   \
  X(CL_INVALID_WORK_ITEM_SIZE) X(CL_INVALID_GLOBAL_OFFSET)                     \
  X(CL_INVALID_EVENT_WAIT_LIST) X(CL_INVALID_EVENT) X(CL_INVALID_OPERATION)    \
  X(CL_INVALID_GL_OBJECT) X(CL_INVALID_BUFFER_SIZE) X(CL_INVALID_MIP_LEVEL)    \
  X(CL_INVALID_GLOBAL_WORK_SIZE) X(CL_INVALID_PROPERTY)                        \
  X(CL_INVALID_IMAGE_DESCRIPTOR) X(CL_INVALID_COMPILER_OPTIONS)                \
  X(CL_INVALID_LINKER_OPTIONS) X(CL_INVALID_DEVICE_PARTITION_COUNT)            \
  X(CL_INVALID_PIPE_SIZE) X(CL_INVALID_DEVICE_QUEUE) X(CL_INVALID_SPEC_ID)     \
  X(CL_MAX_SIZE_RESTRICTION_EXCEEDED) X(CL_PLATFORM_NOT_FOUND_KHR)
/* clang-format on */

/* What the calling layer returns instead of calling a NULL dispatch entry:
 * positive, so no OpenCL error code (all negative) can be mistaken for it. */
#define ICD_MISSING_ENTRY ((cl_int)0x7ffff1cd)

/* ---- Calling OpenCL --------------------------------------------------------
 * No loader stands between the plugin and an implementation: each call goes
 * through the dispatch table its first object argument starts with
 * (cl_khr_icd), as the ICD loader's own entry points do. ICD_CALL is for the
 * functions returning a cl_int, ICD_CREATE for those returning an object or
 * a pointer through an errcode_ret last argument, which ICD_CREATE takes
 * first: ICD_CREATE(clCreateBuffer, &err, ctx, flags, size, host_ptr). The
 * first argument is evaluated more than once: keep it a plain expression. */

#define CL_DISPATCH(obj) (*(const struct _cl_icd_dispatch *const *)(obj))

/* The first of a macro's variable arguments (standard C: never none). */
#define FIRST_ARG(...) FIRST_ARG_(__VA_ARGS__, unused)
#define FIRST_ARG_(first, ...) first

/* The error the ICD loader gives for a NULL object of obj's type. A first
 * argument of any other type does not compile. */
/* clang-format off */
#define ICD_NULL_ERROR(obj)                                                    \
  _Generic((obj),                                                              \
      cl_platform_id: CL_INVALID_PLATFORM,                                     \
      cl_device_id: CL_INVALID_DEVICE,                                         \
      cl_context: CL_INVALID_CONTEXT,                                          \
      cl_command_queue: CL_INVALID_COMMAND_QUEUE,                              \
      cl_mem: CL_INVALID_MEM_OBJECT,                                           \
      cl_program: CL_INVALID_PROGRAM,                                          \
      cl_kernel: CL_INVALID_KERNEL,                                            \
      cl_event: CL_INVALID_EVENT,                                              \
      cl_sampler: CL_INVALID_SAMPLER)

#define ICD_CAN_CALL(clfn, obj)                                                \
  icd_callable((obj), offsetof(struct _cl_icd_dispatch, clfn), #clfn,          \
               ICD_NULL_ERROR(obj))

/* clfn(obj, ...) through obj's dispatch table: a cl_int. */
#define ICD_CALL(clfn, ...)                                                    \
  (ICD_CAN_CALL(clfn, FIRST_ARG(__VA_ARGS__))                                  \
       ? CL_DISPATCH(FIRST_ARG(__VA_ARGS__))->clfn(__VA_ARGS__)                \
       : icd_refusal)

/* clfn(obj, ..., errcode_ret) through obj's dispatch table: a void *. */
#define ICD_CREATE(clfn, errcode_ret, ...)                                     \
  (ICD_CAN_CALL(clfn, FIRST_ARG(__VA_ARGS__))                                  \
       ? (void *)CL_DISPATCH(FIRST_ARG(__VA_ARGS__))                           \
             ->clfn(__VA_ARGS__, errcode_ret)                                  \
       : (*(errcode_ret) = icd_refusal, (void *)NULL))

/* Calls an OpenCL function returning cl_int and checks its result. */
#define CL_CALL(clfn, ...) CL_CALL_IN(FN, clfn, __VA_ARGS__)
#define CL_CALL_IN(fn, clfn, ...)                                              \
  check_cl(fn, #clfn, ICD_CALL(clfn, __VA_ARGS__))
/* Checks the errcode_ret of an OpenCL function returning an object. */
#define CL_CHECK(clfn, err) check_cl(FN, #clfn, (err))
/* Calls an extension entry point of a platform state and checks it. */
#define EXT_CALL(ps, clfn, ...) EXT_CALL_IN(FN, ps, clfn, __VA_ARGS__)
#define EXT_CALL_IN(fn, ps, clfn, ...)                                         \
  check_cl(fn, #clfn, (ps)->ext.clfn(__VA_ARGS__))
/* The trailing wait-list and event arguments of an enqueue call. */
#define WAIT_ARGS(n, list, ev)                                                 \
  (cl_uint)(n), (const cl_event *)(list), (cl_event *)(ev)

/* Passes an info query through to an OpenCL get-info function. */
#define INFO_PASS(o, clfn, obj)                                                \
  info_check(o, #clfn,                                                         \
             ICD_CALL(clfn, obj, (o)->query, (o)->size, (o)->value,            \
                      INFO_SIZE_RET(o)))
/* The param_value_size_ret given to OpenCL: never NULL, since PoCL 3.1
 * writes it unconditionally for some queries (CL_CONTEXT_PROPERTIES of a
 * context made without properties) and a caller may leave it NULL. */
#define INFO_SIZE_RET(o) ((o)->size_ret ? (o)->size_ret : &info_size_unused)
extern _Thread_local size_t info_size_unused;

/* ---- Discovery -------------------------------------------------------------
 * Finds the OpenCL implementations as the top of the file says and keeps
 * their platforms. Written once under discovery_lock, read under it, freed
 * by piTearDown. No OpenCL call here goes through ICD_CALL: its error path
 * takes discovery_lock. */

typedef cl_int(CL_API_CALL *icd_get_platform_ids_fn)(cl_uint, cl_platform_id *,
                                                     cl_uint *);
typedef void *(CL_API_CALL *get_extension_address_fn)(const char *);

/* A library considered: where it was listed, the file it is, and its handle
 * when it gives platforms (NULL when skipped). */
struct vendor {
  char *origin; /* "/etc/OpenCL/vendors/pocl.icd", "PITRACE_OPENCL_LIBRARIES" */
  char *path;   /* the file (realpath) */
  void *dl;
};

struct icd_platform {
  cl_platform_id id;
  const struct _cl_icd_dispatch *dispatch;
  size_t vendor; /* its index in vendors */
  char *name;
};

/* A growing message. */
struct text {
  char *s;
  size_t len, cap;
};

/* How many libraries a vendor list named, and how many were the front end. */
struct counts {
  unsigned listed, front_ends;
};

enum vendor_outcome { VENDOR_USED, VENDOR_FRONT_END, VENDOR_SKIPPED };

#define note(...) text_item(&discovery_notes, __VA_ARGS__)

/* ---- Per-platform state ----------------------------------------------------
 * Extension entry points are looked up once per platform with
 * clGetExtensionFunctionAddressForPlatform and kept in a list guarded by a
 * mutex. Entries are immutable once published and live until piTearDown. */

/* Entry points no header of ours declares. */
typedef cl_int(CL_API_CALL *ext_get_function_pointer_fn)(cl_device_id,
                                                         cl_program,
                                                         const char *,
                                                         cl_ulong *);
typedef cl_int(CL_API_CALL *ext_get_global_variable_pointer_fn)(
    cl_device_id, cl_program, const char *, size_t *, void **);
typedef cl_int(CL_API_CALL *ext_write_global_variable_fn)(
    cl_command_queue, cl_program, const char *, cl_bool, size_t, size_t,
    const void *, cl_uint, const cl_event *, cl_event *);
typedef cl_int(CL_API_CALL *ext_read_global_variable_fn)(
    cl_command_queue, cl_program, const char *, cl_bool, size_t, size_t, void *,
    cl_uint, const cl_event *, cl_event *);
typedef cl_int(CL_API_CALL *ext_kernel_sub_group_info_fn)(
    cl_kernel, cl_device_id, cl_kernel_sub_group_info, size_t, const void *,
    size_t, void *, size_t *);
typedef cl_int(CL_API_CALL *ext_read_host_pipe_fn)(cl_command_queue, cl_program,
                                                   const char *, cl_bool,
                                                   void *, size_t, cl_uint,
                                                   const cl_event *,
                                                   cl_event *);
typedef cl_int(CL_API_CALL *ext_write_host_pipe_fn)(
    cl_command_queue, cl_program, const char *, cl_bool, const void *, size_t,
    cl_uint, const cl_event *, cl_event *);

#define EXT_FUNCTIONS(X)                                                       \
  X(clHostMemAllocINTEL, clHostMemAllocINTEL_fn)                               \
  X(clDeviceMemAllocINTEL, clDeviceMemAllocINTEL_fn)                           \
  X(clSharedMemAllocINTEL, clSharedMemAllocINTEL_fn)                           \
  X(clMemFreeINTEL, clMemFreeINTEL_fn)                                         \
  X(clMemBlockingFreeINTEL, clMemBlockingFreeINTEL_fn)                         \
  X(clGetMemAllocInfoINTEL, clGetMemAllocInfoINTEL_fn)                         \
  X(clSetKernelArgMemPointerINTEL, clSetKernelArgMemPointerINTEL_fn)           \
  X(clEnqueueMemFillINTEL, clEnqueueMemFillINTEL_fn)                           \
  X(clEnqueueMemcpyINTEL, clEnqueueMemcpyINTEL_fn)                             \
  X(clEnqueueMigrateMemINTEL, clEnqueueMigrateMemINTEL_fn)                     \
  X(clCreateBufferWithPropertiesINTEL, clCreateBufferWithPropertiesINTEL_fn)   \
  X(clCreateProgramWithILKHR, clCreateProgramWithILKHR_fn)                     \
  X(clGetKernelSubGroupInfoKHR, ext_kernel_sub_group_info_fn)                  \
  X(clGetDeviceFunctionPointerINTEL, ext_get_function_pointer_fn)              \
  X(clGetDeviceGlobalVariablePointerINTEL, ext_get_global_variable_pointer_fn) \
  X(clEnqueueWriteGlobalVariableINTEL, ext_write_global_variable_fn)           \
  X(clEnqueueReadGlobalVariableINTEL, ext_read_global_variable_fn)             \
  X(clEnqueueReadHostPipeINTEL, ext_read_host_pipe_fn)                         \
  X(clEnqueueWriteHostPipeINTEL, ext_write_host_pipe_fn)

struct ext_functions {
#define X(name, type) type name;
  EXT_FUNCTIONS(X)
#undef X
};

struct platform_state {
  cl_platform_id id;
  int version; /* major * 10 + minor */
  struct ext_functions ext;
  struct platform_state *next;
};

static const char USM_EXT[] = "cl_intel_unified_shared_memory";
static const char USM_HINT[] = "use buffers";

/* Sets `ps` to the platform state of `dev`, or returns from the calling PI
 * function with PI_ERROR_INVALID_OPERATION unless the device lists
 * cl_intel_unified_shared_memory and its platform exposes `entry`. */
#define NEED_USM(dev, ps, entry) NEED_USM_IN(FN, dev, ps, entry)
#define NEED_USM_IN(fn, dev, ps, entry)                                        \
  do {                                                                         \
    pi_result need_r_ = device_state(fn, dev, &(ps));                          \
    if (need_r_ == PI_SUCCESS)                                                 \
      need_r_ = need_feature(fn, dev, USM_EXT, #entry,                         \
                             (ps)->ext.entry != NULL, USM_HINT);               \
    if (need_r_ != PI_SUCCESS)                                                 \
      return need_r_;                                                          \
  } while (0)

/* A PI callback with its user data, for the OpenCL callbacks whose
 * signatures differ from PI's. Freed by the OpenCL callback, which OpenCL
 * calls exactly once. */
struct callback {
  union {
    pi_context_extended_deleter deleter;
    void (*event)(pi_event, pi_int32, void *);
  } fn;
  void *user_data;
};

/* The objects a PI handle may adopt from a native handle. */
enum native_kind {
  NATIVE_CONTEXT,
  NATIVE_QUEUE,
  NATIVE_MEM,
  NATIVE_PROGRAM,
  NATIVE_KERNEL,
  NATIVE_EVENT
};

/* ---- USM -------------------------------------------------------------------
 * Through cl_intel_unified_shared_memory, where the device lists it and its
 * platform exposes the entry points; elsewhere every USM call fails with
 * PI_ERROR_INVALID_OPERATION and a message saying to use buffers. */

/* The USM platform state of a queue's device, with the entry point `entry`. */
#define QUEUE_USM(queue, ps, entry) QUEUE_USM_IN(FN, queue, ps, entry)
#define QUEUE_USM_IN(fn, queue, ps, entry)                                     \
  do {                                                                         \
    cl_device_id qdev_;                                                        \
    pi_result qr_ = queue_device(fn, (cl_command_queue)(queue), &qdev_);       \
    if (qr_ != PI_SUCCESS)                                                     \
      return qr_;                                                              \
    NEED_USM_IN(fn, qdev_, ps, entry);                                         \
  } while (0)

/* The 2D operations run row by row: one USM fill or copy per row, then a
 * marker that waits for all rows and stands for the whole operation. */
struct rows {
  const struct platform_state *ps;
  char *dst;
  const char *src; /* NULL for a fill */
  size_t dst_pitch, src_pitch, width;
  const void *pattern;
  size_t pattern_size;
};

/* The platform state of a queue's device, with the entry point `entry` of a
 * program-scope extension. */
#define QUEUE_FEATURE(queue, ps, entry, hint)                                  \
  do {                                                                         \
    cl_device_id qdev_;                                                        \
    pi_result qr_ = queue_state(FN, queue, &qdev_, &(ps));                     \
    if (qr_ == PI_SUCCESS)                                                     \
      qr_ = need_feature(FN, qdev_, NULL, #entry, (ps)->ext.entry != NULL,     \
                         hint);                                                \
    if (qr_ != PI_SUCCESS)                                                     \
      return qr_;                                                              \
  } while (0)


/* ---- program.c ------------------------------------------------------------ */

/* piclProgramCreateWithSource (this_backend.program_with_source). */
extern __typeof__(*(pi_fn_piclProgramCreateWithSource)0)
    ocl_piclProgramCreateWithSource;

/* ---- icd.c ----------------------------------------------------------------- */

const char *cl_error_name(cl_int err);

pi_result pi_from_cl(cl_int err);

extern _Thread_local char icd_missing[PATH_MAX + 1024];

pi_result check_cl(const char *fn, const char *clfn, cl_int err);

extern _Thread_local cl_int icd_refusal;

cl_context icd_create_context(
    const cl_context_properties *properties, cl_uint num_devices,
    const cl_device_id *devices,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
    void *user_data, cl_int *errcode_ret);

cl_int icd_wait_for_events(cl_uint num_events,
                           const cl_event *event_list);

void *icd_extension_address(cl_platform_id platform, const char *name);

pi_result info_check(const struct info_out *o, const char *clfn,
                     cl_int err);

char *info_string(cl_platform_id plat, cl_device_id dev, cl_uint param);

int has_entry(const char *list, const char *word, char sep);

int device_has_ext(cl_device_id dev, const char *ext);

int parse_version(const char *s);

int device_version(cl_device_id dev);

cl_platform_id device_platform(cl_device_id dev);

const char *describe_device(cl_device_id dev, char *buf, size_t n);

pi_result context_devices(const char *fn, cl_context ctx,
                          cl_device_id **devs, cl_uint *count);

pi_result context_device(const char *fn, cl_context ctx, const char *ext,
                         cl_device_id *dev);

pi_result queue_device(const char *fn, cl_command_queue q,
                       cl_device_id *dev);

pi_result program_context(const char *fn, cl_program prog,
                          cl_context *ctx);

/* ---- discovery.c ----------------------------------------------------------- */

extern pthread_mutex_t discovery_lock;

extern int discovered;

extern struct icd_platform *icd_platforms;

extern cl_uint nicd_platforms;

extern struct text discovery_sources;

extern struct text discovery_notes;

extern char *option_libraries;

extern struct text option_notes;

__attribute__((format(printf, 2, 3))) void
text_item(struct text *t, const char *fmt, ...);

void text_free(struct text *t);

void count(struct counts *c, enum vendor_outcome outcome);

void discover(void);

void forget_discovery(void);

int icd_callable(const void *obj, size_t entry, const char *clfn,
                 cl_int null_error);

/* ---- platform.c ------------------------------------------------------------ */

extern pthread_mutex_t platforms_lock;

extern struct platform_state *platforms;

const struct platform_state *platform_state(cl_platform_id id);

pi_result device_state(const char *fn, cl_device_id dev,
                       const struct platform_state **ps);

pi_result need_feature(const char *fn, cl_device_id dev, const char *ext,
                       const char *entry, int present,
                       const char *hint);

/* ---- device.c -------------------------------------------------------------- */

pi_result atomic_capabilities(const char *fn, cl_device_id dev,
                              unsigned query, pi_bitfield *out);

pi_result no_opencl_answer(const struct info_out *o, cl_device_id dev);

int device_takes_spirv(cl_device_id dev);

/* ---- context.c ------------------------------------------------------------- */

pi_result adopt_native(const char *fn, enum native_kind kind,
                       pi_native_handle native, bool owns,
                       const void *out);

/* ---- usm.c ----------------------------------------------------------------- */

pi_result queue_state(const char *fn, pi_queue queue, cl_device_id *dev,
                      const struct platform_state **ps);

#endif
