/*
 * pi_opencl.c: the pitrace OpenCL plugin (libpi_opencl.so).
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
 * In order, the file holds: error reporting (the thread-local last error and
 * the CL -> PI result mapping), calling OpenCL through dispatch tables,
 * small OpenCL query helpers, discovery, the per-platform cache of extension
 * entry points, the PI functions group by group as shared/pi-api.txt lists
 * them, and the exported symbols: piPluginInit and pitrace_plugin_options.
 *
 * What OpenCL or a device cannot do (peer access, USM without
 * cl_intel_unified_shared_memory, device globals without
 * cl_intel_global_variable_access, ...) fails with a PI error and a
 * piPluginGetLastError message naming the function, the device and what to
 * use instead. No lock is held across OpenCL calls but during discovery
 * (which the first piPlatformsGet does under its own mutex); the platform
 * cache has its own mutex and the last error is per thread.
 */
#define _GNU_SOURCE /* dladdr, dlinfo, realpath */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue,             \
                                             clCreateSampler */
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>

#include "pi/pi.h"

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
#define PLUGIN_REVISION "2"

/* The name of the PI function we are in: implementations are ocl_<name>. */
#define FN (__func__ + sizeof("ocl_") - 1)

_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "extension entry points are looked up as void *");
_Static_assert(sizeof(pi_result) == sizeof(cl_int), "PI results are CL codes");

/* ---- Errors --------------------------------------------------------------
 * Every failure goes through fail(), which keeps the code and a message for
 * piPluginGetLastError in thread-local storage. */

static _Thread_local char last_message[4096];
static _Thread_local pi_result last_code = PI_SUCCESS;

/* Records `code` with a message for piPluginGetLastError and returns it. */
__attribute__((format(printf, 2, 3))) static pi_result
fail(pi_result code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_message, sizeof last_message, fmt, ap);
  va_end(ap);
  last_code = code;
  return code;
}

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

static const char *cl_error_name(cl_int err) {
  switch (err) {
  case ICD_MISSING_ENTRY:
    return "a NULL entry in the implementation's ICD dispatch table";
#define X(name)                                                                \
  case name:                                                                   \
    return #name;
    CL_ERROR_CODES(X)
#undef X
  default:
    return "an OpenCL error code this plugin does not know";
  }
}

/* The PI result for an OpenCL error code. PI took its codes from OpenCL, so
 * the shared ranges pass unchanged; the few CL codes PI lacks map to the
 * nearest PI code, and codes of unknown extensions to PI_ERROR_UNKNOWN. */
static pi_result pi_from_cl(cl_int err) {
  switch (err) {
  case ICD_MISSING_ENTRY:
    return PI_ERROR_INVALID_OPERATION;
  case CL_INVALID_PIPE_SIZE:
  case CL_INVALID_SPEC_ID:
    return PI_ERROR_INVALID_VALUE;
  case CL_INVALID_DEVICE_QUEUE:
    return PI_ERROR_INVALID_QUEUE;
  case CL_MAX_SIZE_RESTRICTION_EXCEEDED:
    return PI_ERROR_OUT_OF_RESOURCES;
  default:
    break;
  }
  if ((err <= 0 && err >= -19) || (err <= -30 && err >= -68) ||
      (err <= -1000 && err >= -1013) || (err <= -1057 && err >= -1059) ||
      (err <= -1092 && err >= -1102) || (err <= -1138 && err >= -1140))
    return (pi_result)err;
  return PI_ERROR_UNKNOWN;
}

/* Why the last call of this thread that met a NULL dispatch entry was not
 * made: "clFoo is NULL in the ICD dispatch table of platform ...". */
static _Thread_local char icd_missing[PATH_MAX + 1024];

/* PI_SUCCESS for CL_SUCCESS; otherwise the mapped PI error, with a message
 * naming the PI function and the OpenCL call that failed (or that could not
 * be made: ICD_MISSING_ENTRY). */
static pi_result check_cl(const char *fn, const char *clfn, cl_int err) {
  if (err == CL_SUCCESS)
    return PI_SUCCESS;
  if (err == ICD_MISSING_ENTRY)
    return fail(PI_ERROR_INVALID_OPERATION, "%s: %s", fn, icd_missing);
  return fail(pi_from_cl(err), "%s: %s failed with %s (%d)", fn, clfn,
              cl_error_name(err), (int)err);
}

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
/* clang-format on */

/* What the calling layer returns when it makes no call: the NULL-object
 * error, or ICD_MISSING_ENTRY. */
static _Thread_local cl_int icd_refusal;

static int icd_callable(const void *obj, size_t entry, const char *clfn,
                        cl_int null_error);

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
#define CL_CALL(clfn, ...) check_cl(FN, #clfn, ICD_CALL(clfn, __VA_ARGS__))
/* Checks the errcode_ret of an OpenCL function returning an object. */
#define CL_CHECK(clfn, err) check_cl(FN, #clfn, (err))
/* Calls an extension entry point of a platform state and checks it. */
#define EXT_CALL(ps, clfn, ...) check_cl(FN, #clfn, (ps)->ext.clfn(__VA_ARGS__))

/* The calls without an object argument. */

/* clCreateContext goes to the implementation of devices[0] (a context's
 * devices are all of one); no devices is CL_INVALID_VALUE, as in the ICD
 * loader. */
static cl_context icd_create_context(
    const cl_context_properties *properties, cl_uint num_devices,
    const cl_device_id *devices,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
    void *user_data, cl_int *errcode_ret) {
  cl_int ignored;
  if (!errcode_ret)
    errcode_ret = &ignored;
  if (!devices || num_devices == 0) {
    *errcode_ret = CL_INVALID_VALUE;
    return NULL;
  }
  if (!ICD_CAN_CALL(clCreateContext, devices[0])) {
    *errcode_ret = icd_refusal;
    return NULL;
  }
  return CL_DISPATCH(devices[0])
      ->clCreateContext(properties, num_devices, devices, pfn_notify, user_data,
                        errcode_ret);
}

/* clWaitForEvents goes to the implementation of events[0]. */
static cl_int icd_wait_for_events(cl_uint num_events,
                                  const cl_event *event_list) {
  if (num_events == 0 || !event_list)
    return CL_INVALID_VALUE;
  if (!ICD_CAN_CALL(clWaitForEvents, event_list[0]))
    return icd_refusal;
  return CL_DISPATCH(event_list[0])->clWaitForEvents(num_events, event_list);
}

/* An extension entry point of a platform, or NULL: its
 * clGetExtensionFunctionAddressForPlatform, else (before OpenCL 1.2) its
 * clGetExtensionFunctionAddress. */
static void *icd_extension_address(cl_platform_id platform, const char *name) {
  const struct _cl_icd_dispatch *d = platform ? CL_DISPATCH(platform) : NULL;
  if (d && d->clGetExtensionFunctionAddressForPlatform)
    return d->clGetExtensionFunctionAddressForPlatform(platform, name);
  if (d && d->clGetExtensionFunctionAddress)
    return d->clGetExtensionFunctionAddress(name);
  return NULL;
}
/* Fails with PI_ERROR_INVALID_VALUE when an argument check does not hold. */
#define REQUIRE(cond)                                                          \
  do {                                                                         \
    if (!(cond))                                                               \
      return fail(PI_ERROR_INVALID_VALUE, "%s: invalid argument: %s", FN,      \
                  #cond);                                                      \
  } while (0)
/* The trailing wait-list and event arguments of an enqueue call. */
#define WAIT_ARGS(n, list, ev)                                                 \
  (cl_uint)(n), (const cl_event *)(list), (cl_event *)(ev)

/* ---- Info queries ---------------------------------------------------------
 * An info_out names where a *GetInfo call puts its answer; put_*() write a
 * value the plugin computes with the size checks OpenCL makes. */

struct info_out {
  const char *fn;
  unsigned query;
  size_t size;
  void *value;
  size_t *size_ret;
};

static pi_result put_info(const struct info_out *o, const void *src, size_t n) {
  if (o->value) {
    if (o->size < n)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: query 0x%x returns %zu bytes but param_value_size is "
                  "%zu",
                  o->fn, o->query, n, o->size);
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

static pi_result put_str(const struct info_out *o, const char *s) {
  return put_info(o, s, strlen(s) + 1);
}

/* Checks the result of an info query passed through to OpenCL; an OpenCL
 * CL_INVALID_VALUE gets a message naming the query. */
static pi_result info_check(const struct info_out *o, const char *clfn,
                            cl_int err) {
  if (err == CL_INVALID_VALUE)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: query 0x%x was rejected by %s (CL_INVALID_VALUE): the "
                "query is unknown to this OpenCL implementation or "
                "param_value_size (%zu) is too small",
                o->fn, o->query, clfn, o->size);
  return check_cl(o->fn, clfn, err);
}

/* Passes an info query through to an OpenCL get-info function. */
#define INFO_PASS(o, clfn, obj)                                                \
  info_check(                                                                  \
      o, #clfn,                                                                \
      ICD_CALL(clfn, obj, (o)->query, (o)->size, (o)->value, (o)->size_ret))

/* ---- OpenCL helpers -------------------------------------------------------
 */

/* A malloc'd copy of a string query of a platform (when `plat` is not NULL)
 * or of a device, or NULL when the query fails. */
static char *info_string(cl_platform_id plat, cl_device_id dev, cl_uint param) {
  size_t n = 0;
  cl_int err = plat ? ICD_CALL(clGetPlatformInfo, plat, param, 0, NULL, &n)
                    : ICD_CALL(clGetDeviceInfo, dev, param, 0, NULL, &n);
  char *s = err == CL_SUCCESS ? malloc(n + 1) : NULL;
  if (!s)
    return NULL;
  err = plat ? ICD_CALL(clGetPlatformInfo, plat, param, n, s, NULL)
             : ICD_CALL(clGetDeviceInfo, dev, param, n, s, NULL);
  if (err != CL_SUCCESS) {
    free(s);
    return NULL;
  }
  s[n] = '\0';
  return s;
}

/* Whether a list of entries separated by `sep` holds `word` as one. */
static int has_entry(const char *list, const char *word, char sep) {
  size_t n = strlen(word);
  for (const char *p = list; p && (p = strstr(p, word)); p += n)
    if ((p == list || p[-1] == sep) && (p[n] == sep || p[n] == '\0'))
      return 1;
  return 0;
}

static int device_has_ext(cl_device_id dev, const char *ext) {
  char *exts = info_string(NULL, dev, CL_DEVICE_EXTENSIONS);
  int found = has_entry(exts, ext, ' ');
  free(exts);
  return found;
}

/* "OpenCL 3.0 ..." -> 30; 0 when the string does not parse. */
static int parse_version(const char *s) {
  int major = 0, minor = 0;
  if (!s || sscanf(s, "OpenCL %d.%d", &major, &minor) != 2)
    return 0;
  return major * 10 + minor;
}

static int device_version(cl_device_id dev) {
  char *s = info_string(NULL, dev, CL_DEVICE_VERSION);
  int v = parse_version(s);
  free(s);
  return v;
}

static cl_platform_id device_platform(cl_device_id dev) {
  cl_platform_id plat = NULL;
  if (ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_PLATFORM, sizeof plat, &plat,
               NULL) != CL_SUCCESS)
    return NULL;
  return plat;
}

/* "device 'NAME' (platform 'NAME')", for messages. */
static const char *describe_device(cl_device_id dev, char *buf, size_t n) {
  char *dname = info_string(NULL, dev, CL_DEVICE_NAME);
  cl_platform_id plat = device_platform(dev);
  char *pname = plat ? info_string(plat, NULL, CL_PLATFORM_NAME) : NULL;
  snprintf(buf, n, "device '%s' (platform '%s')", dname ? dname : "?",
           pname ? pname : "?");
  free(dname);
  free(pname);
  return buf;
}

/* The devices of a context, malloc'd. */
static pi_result context_devices(const char *fn, cl_context ctx,
                                 cl_device_id **devs, cl_uint *count) {
  cl_uint n = 0;
  cl_int err = ICD_CALL(clGetContextInfo, ctx, CL_CONTEXT_NUM_DEVICES, sizeof n,
                        &n, NULL);
  if (err != CL_SUCCESS)
    return check_cl(fn, "clGetContextInfo", err);
  *devs = calloc(n ? n : 1, sizeof **devs);
  if (!*devs)
    return fail(PI_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
  err = ICD_CALL(clGetContextInfo, ctx, CL_CONTEXT_DEVICES, n * sizeof **devs,
                 *devs, NULL);
  if (err != CL_SUCCESS) {
    free(*devs);
    *devs = NULL;
    return check_cl(fn, "clGetContextInfo", err);
  }
  *count = n;
  return PI_SUCCESS;
}

/* One device of a context: the first that lists `ext` (when not NULL), else
 * the first device. */
static pi_result context_device(const char *fn, cl_context ctx, const char *ext,
                                cl_device_id *dev) {
  cl_device_id *devs = NULL;
  cl_uint n = 0;
  pi_result r = context_devices(fn, ctx, &devs, &n);
  if (r != PI_SUCCESS)
    return r;
  if (n == 0) {
    free(devs);
    return fail(PI_ERROR_INVALID_CONTEXT, "%s: the context has no devices", fn);
  }
  *dev = devs[0];
  for (cl_uint i = 0; ext && i < n; ++i)
    if (device_has_ext(devs[i], ext)) {
      *dev = devs[i];
      break;
    }
  free(devs);
  return PI_SUCCESS;
}

static pi_result queue_device(const char *fn, cl_command_queue q,
                              cl_device_id *dev) {
  return check_cl(fn, "clGetCommandQueueInfo",
                  ICD_CALL(clGetCommandQueueInfo, q, CL_QUEUE_DEVICE,
                           sizeof *dev, dev, NULL));
}

static pi_result program_context(const char *fn, cl_program prog,
                                 cl_context *ctx) {
  return check_cl(fn, "clGetProgramInfo",
                  ICD_CALL(clGetProgramInfo, prog, CL_PROGRAM_CONTEXT,
                           sizeof *ctx, ctx, NULL));
}

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

static pthread_mutex_t discovery_lock = PTHREAD_MUTEX_INITIALIZER;
static int discovered;
static struct vendor *vendors;
static size_t nvendors;
static struct icd_platform *icd_platforms;
static cl_uint nicd_platforms;
static struct text discovery_sources; /* where the libraries came from */
static struct text discovery_notes;   /* each library skipped, and why */
static char *option_libraries;        /* libraries= of the plugins config */
static struct text option_notes;      /* options this plugin does not know */

static void text_vadd(struct text *t, const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  if (n >= 0 && t->len + (size_t)n + 1 > t->cap) {
    size_t cap = 2 * (t->len + (size_t)n + 1);
    char *grown = realloc(t->s, cap);
    if (grown) {
      t->s = grown;
      t->cap = cap;
    }
  }
  if (n >= 0 && t->len + (size_t)n + 1 <= t->cap) {
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, again);
    t->len += (size_t)n;
  }
  va_end(again);
}

__attribute__((format(printf, 2, 3))) static void
text_add(struct text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  text_vadd(t, fmt, ap);
  va_end(ap);
}

/* Appends to `t`, after "; " when it holds something already. */
__attribute__((format(printf, 2, 3))) static void
text_item(struct text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (t->len)
    text_add(t, "; ");
  text_vadd(t, fmt, ap);
  va_end(ap);
}

static void text_free(struct text *t) {
  free(t->s);
  *t = (struct text){NULL, 0, 0};
}

#define note(...) text_item(&discovery_notes, __VA_ARGS__)

/* The file a library handle is (the path the dynamic linker took for it,
 * symbolic links resolved). */
static void library_path(void *dl, const char *name, char path[PATH_MAX]) {
  struct link_map *lm = NULL;
  const char *file = name;
  if (dlinfo(dl, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name)
    file = lm->l_name;
  if (!realpath(file, path))
    snprintf(path, PATH_MAX, "%s", file);
}

/* `name` when the library itself defines it, not one it depends on: a
 * library linked with libOpenCL.so.1 must not hand over the loader's entry
 * points, which lead to the application's loader and so to the front end. */
static void *own_symbol(void *dl, const char *name) {
  void *sym = dlsym(dl, name);
  struct link_map *lm = NULL;
  Dl_info info;
  if (!sym || dlinfo(dl, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name)
    return sym;
  if (dladdr(sym, &info) && info.dli_fname &&
      strcmp(info.dli_fname, lm->l_name) != 0)
    return NULL;
  return sym;
}

/* A string query of a platform through its dispatch table, malloc'd. */
static char *platform_string(const struct _cl_icd_dispatch *d,
                             cl_platform_id id, cl_platform_info param) {
  size_t n = 0;
  char *s = NULL;
  if (d->clGetPlatformInfo(id, param, 0, NULL, &n) == CL_SUCCESS &&
      (s = malloc(n + 1)) != NULL &&
      d->clGetPlatformInfo(id, param, n, s, NULL) != CL_SUCCESS) {
    free(s);
    s = NULL;
  }
  if (s)
    s[n] = '\0';
  return s;
}

/* Keeps platform `id` of library `name` when it can serve: its dispatch
 * table has clGetPlatformInfo and it lists cl_khr_icd (the ICD loader's
 * checks). */
static void keep_platform(cl_platform_id id, size_t vendor, const char *origin,
                          const char *name) {
  const struct _cl_icd_dispatch *d = id ? CL_DISPATCH(id) : NULL;
  if (!d || !d->clGetPlatformInfo) {
    note("%s: %s: a platform skipped: its dispatch table has no "
         "clGetPlatformInfo",
         origin, name);
    return;
  }
  char *pname = platform_string(d, id, CL_PLATFORM_NAME);
  char *exts = platform_string(d, id, CL_PLATFORM_EXTENSIONS);
  int icd = exts && strstr(exts, "cl_khr_icd") != NULL;
  free(exts);
  if (!icd) {
    note("%s: %s: platform '%s' skipped: it does not list cl_khr_icd", origin,
         name, pname ? pname : "?");
    free(pname);
    return;
  }
  icd_platforms[nicd_platforms++] =
      (struct icd_platform){id, d, vendor, pname ? pname : strdup("?")};
}

/* Opens library `name` (listed by `origin`) and keeps its platforms. */
static enum vendor_outcome load_vendor(const char *name, const char *origin) {
  dlerror();
  void *dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    const char *why = dlerror();
    note("%s: %s cannot be loaded (%s)", origin, name,
         why ? why : "dlopen failed");
    return VENDOR_SKIPPED;
  }
  if (dlsym(dl, "pitrace_opencl_frontend")) {
    note("%s: %s skipped: it is pitrace's own OpenCL front end (it exports "
         "pitrace_opencl_frontend), whose platforms would call pitrace again",
         origin, name);
    dlclose(dl);
    return VENDOR_FRONT_END;
  }
  char path[PATH_MAX];
  library_path(dl, name, path);
  for (size_t i = 0; i < nvendors; ++i)
    if (strcmp(vendors[i].path, path) == 0) {
      note("%s: %s skipped: it is %s, already %s from %s", origin, name, path,
           vendors[i].dl ? "taken" : "tried", vendors[i].origin);
      dlclose(dl);
      return VENDOR_SKIPPED;
    }
  struct vendor *grown = realloc(vendors, (nvendors + 1) * sizeof *grown);
  char *origin_copy = strdup(origin), *path_copy = strdup(path);
  if (grown)
    vendors = grown;
  if (!grown || !origin_copy || !path_copy) {
    free(origin_copy);
    free(path_copy);
    note("%s: %s skipped: out of host memory", origin, name);
    dlclose(dl);
    return VENDOR_SKIPPED;
  }
  size_t v = nvendors++;
  vendors[v] = (struct vendor){origin_copy, path_copy, NULL};

  void *entry = own_symbol(dl, "clIcdGetPlatformIDsKHR");
  void *gx = entry ? NULL : own_symbol(dl, "clGetExtensionFunctionAddress");
  if (gx)
    entry = ((get_extension_address_fn)(uintptr_t)gx)("clIcdGetPlatformIDsKHR");
  if (!entry) {
    note("%s: %s (%s) skipped: it has no clIcdGetPlatformIDsKHR of its own, "
         "so it is no OpenCL ICD implementation",
         origin, name, path);
    dlclose(dl);
    return VENDOR_SKIPPED;
  }
  icd_get_platform_ids_fn get_ids = (icd_get_platform_ids_fn)(uintptr_t)entry;
  cl_uint n = 0;
  cl_int err = get_ids(0, NULL, &n);
  cl_platform_id *ids = err == CL_SUCCESS && n ? calloc(n, sizeof *ids) : NULL;
  struct icd_platform *more =
      ids ? realloc(icd_platforms, (nicd_platforms + n) * sizeof *more) : NULL;
  if (more)
    icd_platforms = more;
  if (more)
    err = get_ids(n, ids, NULL);
  cl_uint before = nicd_platforms;
  for (cl_uint i = 0; more && err == CL_SUCCESS && i < n; ++i)
    keep_platform(ids[i], v, origin, name);
  free(ids);
  if (nicd_platforms > before) {
    vendors[v].dl = dl; /* stays loaded, as the ICD loader leaves it */
    return VENDOR_USED;
  }
  if (err != CL_SUCCESS || n == 0)
    note("%s: %s (%s) has no platform (clIcdGetPlatformIDsKHR: %s)", origin,
         name, path, err != CL_SUCCESS ? cl_error_name(err) : "none");
  else if (!more)
    note("%s: %s skipped: out of host memory", origin, name);
  dlclose(dl);
  return VENDOR_SKIPPED;
}

static void count(struct counts *c, enum vendor_outcome outcome) {
  c->listed++;
  c->front_ends += outcome == VENDOR_FRONT_END;
}

/* A *.icd file: its first line names the library, as in ocl-icd. */
static void load_icd_file(const char *file, struct counts *c) {
  char line[PATH_MAX + 2];
  FILE *f = fopen(file, "re");
  int saved = errno;
  char *got = f ? fgets(line, sizeof line, f) : NULL;
  int failed = !f || ferror(f);
  if (f && failed)
    saved = errno;
  if (f)
    fclose(f);
  if (!got) {
    note("%s cannot be read (%s)", file,
         failed ? strerror(saved) : "it is empty");
    c->listed++;
    return;
  }
  char *name = line, *end = line + strlen(line);
  while (*name == ' ' || *name == '\t')
    name++;
  while (end > name && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' ||
                        end[-1] == '\t'))
    *--end = '\0';
  if (!*name) {
    note("%s names no library (its first line is empty)", file);
    c->listed++;
    return;
  }
  count(c, load_vendor(name, file));
}

static int icd_name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_icd_name(const char *name) {
  size_t n = strlen(name);
  return n > 4 && strcmp(name + n - 4, ".icd") == 0;
}

/* The *.icd files of a directory, in the order of their names. */
static void load_icd_dir(const char *dir, struct counts *c) {
  DIR *d = opendir(dir);
  if (!d) {
    note("the vendor directory %s cannot be read (%s)", dir, strerror(errno));
    return;
  }
  char **names = NULL;
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char **grown;
    if (!is_icd_name(e->d_name) ||
        !(grown = realloc(names, (n + 1) * sizeof *names)))
      continue;
    names = grown;
    if ((names[n] = strdup(e->d_name)) != NULL)
      n++;
  }
  closedir(d);
  if (n == 0)
    note("the vendor directory %s holds no *.icd file", dir);
  else
    qsort(names, n, sizeof *names, icd_name_cmp);
  for (size_t i = 0; i < n; ++i) {
    char file[PATH_MAX];
    if (snprintf(file, sizeof file, "%s/%s", dir, names[i]) < (int)sizeof file)
      load_icd_file(file, c);
    free(names[i]);
  }
  free(names);
}

/* OCL_ICD_VENDORS (or PITRACE_OCL_ICD_VENDORS) as ocl-icd reads it: a
 * directory of *.icd files; a *.icd file, a bare name being looked for in
 * the vendor directory first; else a library name or path. */
static void load_vendor_list(const char *var, const char *list,
                             const char *vendor_dir, struct counts *c) {
  struct stat st;
  char file[PATH_MAX];
  if (stat(list, &st) == 0 && S_ISDIR(st.st_mode))
    load_icd_dir(list, c);
  else if (is_icd_name(list) && !strchr(list, '/') &&
           snprintf(file, sizeof file, "%s/%s", vendor_dir, list) <
               (int)sizeof file &&
           access(file, R_OK) == 0)
    load_icd_file(file, c);
  else if (is_icd_name(list))
    load_icd_file(list, c);
  else
    count(c, load_vendor(list, var));
}

/* Libraries named outright, colon-separated. */
static void load_library_list(const char *origin, const char *list) {
  char *copy = strdup(list), *save = NULL;
  for (char *lib = copy ? strtok_r(copy, ":", &save) : NULL; lib;
       lib = strtok_r(NULL, ":", &save))
    load_vendor(lib, origin);
  free(copy);
}

/* The whole discovery; discovery_lock is held. */
static void discover(void) {
  const char *var = "PITRACE_OCL_ICD_VENDORS", *list = getenv(var);
  if (!list || !*list)
    list = getenv(var = "OCL_ICD_VENDORS");
  const char *dir = getenv("OPENCL_VENDOR_PATH");
  int dir_from_env = dir && *dir;
  if (!dir_from_env)
    dir = "/etc/OpenCL/vendors";
  if (option_notes.len)
    note("%s", option_notes.s);
  struct counts c = {0, 0};
  if (list && *list) {
    text_item(&discovery_sources, "%s=%s", var, list);
    load_vendor_list(var, list, dir, &c);
    if (c.front_ends && c.front_ends == c.listed) {
      note("%s names nothing but pitrace's front end, so it counts as unset",
           var);
      list = NULL;
    }
  }
  if (!list || !*list) {
    text_item(&discovery_sources, "%s%s",
              dir_from_env ? "OPENCL_VENDOR_PATH=" : "", dir);
    load_icd_dir(dir, &c);
  }
  const char *libs = getenv("PITRACE_OPENCL_LIBRARIES");
  if (libs && *libs) {
    text_item(&discovery_sources, "PITRACE_OPENCL_LIBRARIES=%s", libs);
    load_library_list("PITRACE_OPENCL_LIBRARIES", libs);
  }
  if (option_libraries && *option_libraries) {
    text_item(&discovery_sources, "libraries=%s", option_libraries);
    load_library_list("libraries= (plugins config)", option_libraries);
  }
  discovered = 1;
}

/* Forgets the discovery (piTearDown). The libraries that gave platforms stay
 * loaded: implementations may run threads of their own, and the ICD loader
 * never unloads them either. */
static void forget_discovery(void) {
  pthread_mutex_lock(&discovery_lock);
  for (size_t i = 0; i < nvendors; ++i) {
    free(vendors[i].origin);
    free(vendors[i].path);
  }
  for (cl_uint i = 0; i < nicd_platforms; ++i)
    free(icd_platforms[i].name);
  free(vendors);
  free(icd_platforms);
  vendors = NULL;
  icd_platforms = NULL;
  nvendors = 0;
  nicd_platforms = 0;
  text_free(&discovery_sources);
  text_free(&discovery_notes);
  text_free(&option_notes);
  free(option_libraries);
  option_libraries = NULL;
  discovered = 0;
  pthread_mutex_unlock(&discovery_lock);
}

/* Says which platform a dispatch table belongs to, for messages. */
static void describe_dispatch(const struct _cl_icd_dispatch *d, char *buf,
                              size_t n) {
  pthread_mutex_lock(&discovery_lock);
  cl_uint i = 0;
  while (i < nicd_platforms && icd_platforms[i].dispatch != d)
    ++i;
  if (i < nicd_platforms)
    snprintf(buf, n, "platform '%s' (%s)", icd_platforms[i].name,
             vendors[icd_platforms[i].vendor].path);
  else
    snprintf(buf, n,
             "the OpenCL implementation of this object (its dispatch "
             "table is no discovered platform's)");
  pthread_mutex_unlock(&discovery_lock);
}

static int icd_callable(const void *obj, size_t entry, const char *clfn,
                        cl_int null_error) {
  const struct _cl_icd_dispatch *d = obj ? CL_DISPATCH(obj) : NULL;
  void (*fn)(void) = NULL;
  if (!d) {
    icd_refusal = null_error;
    return 0;
  }
  memcpy(&fn, (const char *)d + entry, sizeof fn);
  if (fn)
    return 1;
  char where[PATH_MAX + 256];
  describe_dispatch(d, where, sizeof where);
  snprintf(icd_missing, sizeof icd_missing,
           "%s is NULL in the ICD dispatch table of %s: that OpenCL "
           "implementation does not provide it; use another platform or a "
           "newer version of the implementation",
           clfn, where);
  icd_refusal = ICD_MISSING_ENTRY;
  return 0;
}

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

static pthread_mutex_t platforms_lock = PTHREAD_MUTEX_INITIALIZER;
static struct platform_state *platforms;

/* The cached state of a platform, created on first use; NULL only when out
 * of memory. */
static const struct platform_state *platform_state(cl_platform_id id) {
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

static pi_result device_state(const char *fn, cl_device_id dev,
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
static pi_result need_feature(const char *fn, cl_device_id dev, const char *ext,
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

static const char USM_EXT[] = "cl_intel_unified_shared_memory";
static const char USM_HINT[] = "use buffers";

/* Sets `ps` to the platform state of `dev`, or returns from the calling PI
 * function with PI_ERROR_INVALID_OPERATION unless the device lists
 * cl_intel_unified_shared_memory and its platform exposes `entry`. */
#define NEED_USM(dev, ps, entry)                                               \
  do {                                                                         \
    pi_result need_r_ = device_state(FN, dev, &(ps));                          \
    if (need_r_ == PI_SUCCESS)                                                 \
      need_r_ = need_feature(FN, dev, USM_EXT, #entry,                         \
                             (ps)->ext.entry != NULL, USM_HINT);               \
    if (need_r_ != PI_SUCCESS)                                                 \
      return need_r_;                                                          \
  } while (0)

/* ---- Platforms ------------------------------------------------------------
 */

/* The platforms discovery found (see the top of the file), discovered on
 * the first call. What it skipped, and why, is the message of
 * piPluginGetLastError: a warning (PI_SUCCESS) when platforms were found,
 * the reason when none were. No platform at all is zero platforms, not an
 * error. */
static pi_result ocl_piPlatformsGet(pi_uint32 num_entries,
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

static pi_result ocl_piPlatformGetInfo(pi_platform platform,
                                       pi_platform_info param_name,
                                       size_t param_value_size,
                                       void *param_value,
                                       size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  if (param_name == PI_EXT_PLATFORM_INFO_BACKEND)
    return put_u32(&o, PI_EXT_PLATFORM_BACKEND_OPENCL);
  return INFO_PASS(&o, clGetPlatformInfo, (cl_platform_id)platform);
}

/* The native handle of any object: the OpenCL handle itself. */
static pi_result native_of(const char *fn, const void *obj,
                           pi_native_handle *native) {
  if (!native)
    return fail(PI_ERROR_INVALID_VALUE, "%s: nativeHandle is NULL", fn);
  *native = (pi_native_handle)obj;
  return PI_SUCCESS;
}

static pi_result
ocl_piextPlatformGetNativeHandle(pi_platform platform,
                                 pi_native_handle *nativeHandle) {
  return native_of(FN, platform, nativeHandle);
}

static pi_result
ocl_piextPlatformCreateWithNativeHandle(pi_native_handle nativeHandle,
                                        pi_platform *platform) {
  REQUIRE(nativeHandle != 0 && platform != NULL);
  *platform = (pi_platform)nativeHandle;
  return PI_SUCCESS;
}

/* ---- Devices --------------------------------------------------------------
 */

static pi_result ocl_piDevicesGet(pi_platform platform,
                                  pi_device_type device_type,
                                  pi_uint32 num_entries, pi_device *devices,
                                  pi_uint32 *num_devices) {
  cl_int err = ICD_CALL(clGetDeviceIDs, (cl_platform_id)platform, device_type,
                        num_entries, (cl_device_id *)devices, num_devices);
  if (err == CL_DEVICE_NOT_FOUND) {
    /* A platform without devices of this type has zero of them. */
    if (num_devices)
      *num_devices = 0;
    return PI_SUCCESS;
  }
  return CL_CHECK(clGetDeviceIDs, err);
}

/* The atomic capabilities of a device for one of the four PI atomic
 * queries, following the minimum each OpenCL version mandates. */
static pi_result atomic_capabilities(const char *fn, cl_device_id dev,
                                     unsigned query, pi_bitfield *out) {
  int fence = query == PI_EXT_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES ||
              query == PI_EXT_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES;
  int scope = query == PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES ||
              query == PI_EXT_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES;
  int version = device_version(dev);
  cl_device_atomic_capabilities caps =
      CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP |
      (fence ? CL_DEVICE_ATOMIC_ORDER_ACQ_REL : 0);
  if (version >= 30) {
    cl_int err = ICD_CALL(clGetDeviceInfo, dev,
                          fence ? CL_DEVICE_ATOMIC_FENCE_CAPABILITIES
                                : CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES,
                          sizeof caps, &caps, NULL);
    if (err != CL_SUCCESS)
      return check_cl(fn, "clGetDeviceInfo", err);
  } else if (version >= 20) {
    caps |= CL_DEVICE_ATOMIC_ORDER_ACQ_REL | CL_DEVICE_ATOMIC_ORDER_SEQ_CST |
            CL_DEVICE_ATOMIC_SCOPE_DEVICE | CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES;
  }
  pi_bitfield r;
  if (scope) {
    /* Work-item, sub-group and work-group scopes are always available. */
    r = PI_MEMORY_SCOPE_WORK_ITEM | PI_MEMORY_SCOPE_SUB_GROUP |
        PI_MEMORY_SCOPE_WORK_GROUP;
    if (caps & CL_DEVICE_ATOMIC_SCOPE_DEVICE)
      r |= PI_MEMORY_SCOPE_DEVICE;
    if (caps & CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES)
      r |= PI_MEMORY_SCOPE_SYSTEM;
  } else {
    /* Orders are hierarchical: seq_cst implies acq_rel, acquire, release. */
    r = PI_MEMORY_ORDER_RELAXED;
    if (caps &
        (CL_DEVICE_ATOMIC_ORDER_ACQ_REL | CL_DEVICE_ATOMIC_ORDER_SEQ_CST))
      r |= PI_MEMORY_ORDER_ACQUIRE | PI_MEMORY_ORDER_RELEASE |
           PI_MEMORY_ORDER_ACQ_REL;
    if (caps & CL_DEVICE_ATOMIC_ORDER_SEQ_CST)
      r |= PI_MEMORY_ORDER_SEQ_CST;
  }
  *out = r;
  return PI_SUCCESS;
}

/* Whether the device can read CL_sRGBA images: asks OpenCL for the image
 * formats of a throwaway context on the device. */
static int device_supports_srgb(cl_device_id dev) {
  cl_bool images = CL_FALSE;
  cl_int err;
  if (ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images,
               &images, NULL) != CL_SUCCESS ||
      !images)
    return 0;
  cl_context ctx = icd_create_context(NULL, 1, &dev, NULL, NULL, &err);
  if (!ctx)
    return 0;
  cl_uint n = 0;
  cl_image_format formats[256];
  int found = 0;
  if (ICD_CALL(clGetSupportedImageFormats, ctx, CL_MEM_READ_ONLY,
               CL_MEM_OBJECT_IMAGE2D, 256, formats, &n) == CL_SUCCESS)
    for (cl_uint i = 0; i < n && i < 256; ++i)
      found |= formats[i].image_channel_order == CL_sRGBA;
  ICD_CALL(clReleaseContext, ctx);
  return found;
}

/* The sub-group sizes of a device (size_t[], as OpenCL and DPC++ return
 * them). Without cl_intel_required_subgroup_size, a device without
 * sub-groups has the one size 1; one with sub-groups cannot tell. */
static pi_result sub_group_sizes(const struct info_out *o, cl_device_id dev) {
  if (device_has_ext(dev, "cl_intel_required_subgroup_size"))
    return INFO_PASS(o, clGetDeviceInfo, dev);
  cl_uint max_sub_groups = 0;
  if (device_version(dev) >= 21)
    ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_MAX_NUM_SUB_GROUPS,
             sizeof max_sub_groups, &max_sub_groups, NULL);
  if (max_sub_groups == 0) {
    size_t one = 1;
    return put_info(o, &one, sizeof one);
  }
  char what[512];
  return fail(PI_ERROR_INVALID_VALUE,
              "%s: %s has sub-groups but does not list "
              "cl_intel_required_subgroup_size, so OpenCL cannot tell its "
              "sub-group sizes (query 0x%x)",
              o->fn, describe_device(dev, what, sizeof what), o->query);
}

/* Fails a device query that OpenCL has no way to answer. */
static pi_result no_opencl_answer(const struct info_out *o, cl_device_id dev) {
  char what[512];
  return fail(PI_ERROR_INVALID_VALUE,
              "%s: query 0x%x has no OpenCL equivalent, so the OpenCL plugin "
              "cannot answer it for %s",
              o->fn, o->query, describe_device(dev, what, sizeof what));
}

static pi_result ocl_piDeviceGetInfo(pi_device device,
                                     pi_device_info param_name,
                                     size_t param_value_size, void *param_value,
                                     size_t *param_value_size_ret) {
  cl_device_id dev = (cl_device_id)device;
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  switch (param_name) {
  /* Level Zero and CUDA details that OpenCL does not report. */
  case PI_DEVICE_INFO_PCI_ADDRESS:
  case PI_DEVICE_INFO_GPU_EU_COUNT:
  case PI_DEVICE_INFO_GPU_EU_SIMD_WIDTH:
  case PI_DEVICE_INFO_GPU_SLICES:
  case PI_DEVICE_INFO_GPU_SUBSLICES_PER_SLICE:
  case PI_DEVICE_INFO_GPU_EU_COUNT_PER_SUBSLICE:
  case PI_DEVICE_INFO_GPU_HW_THREADS_PER_EU:
  case PI_DEVICE_INFO_MAX_MEM_BANDWIDTH:
  case PI_EXT_INTEL_DEVICE_INFO_FREE_MEMORY:
  case PI_EXT_INTEL_DEVICE_INFO_MEMORY_CLOCK_RATE:
  case PI_EXT_INTEL_DEVICE_INFO_MEMORY_BUS_WIDTH:
  case PI_EXT_CODEPLAY_DEVICE_INFO_MAX_REGISTERS_PER_WORK_GROUP:
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_GROUP_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_SUB_GROUP_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_SUB_GROUP_PROGRESS_AT_WORK_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_ITEM_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_ITEM_PROGRESS_AT_WORK_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_ITEM_PROGRESS_AT_SUB_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_IMAGE_PITCH_ALIGN:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_IMAGE_LINEAR_WIDTH:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_IMAGE_LINEAR_HEIGHT:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_IMAGE_LINEAR_PITCH:
  case PI_EXT_ONEAPI_DEVICE_INFO_MIPMAP_MAX_ANISOTROPY:
  case PI_EXT_ONEAPI_DEVICE_INFO_MATRIX_COMBINATIONS:
  case PI_EXT_ONEAPI_DEVICE_INFO_COMPONENT_DEVICES:
  case PI_EXT_ONEAPI_DEVICE_INFO_COMPOSITE_DEVICE:
    return no_opencl_answer(&o, dev);
  /* Features this plugin does not offer on any OpenCL device. */
  case PI_EXT_ONEAPI_DEVICE_INFO_BFLOAT16_MATH_FUNCTIONS:
  case PI_EXT_ONEAPI_DEVICE_INFO_CUDA_ASYNC_BARRIER:
  case PI_EXT_CODEPLAY_DEVICE_INFO_SUPPORTS_FUSION:
  case PI_EXT_INTEL_DEVICE_INFO_ESIMD_SUPPORT:
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
    return put_bool(&o, 0);
  case PI_DEVICE_INFO_IMAGE_SRGB:
    return put_bool(&o, device_supports_srgb(dev));
  case PI_DEVICE_INFO_BUILD_ON_SUBDEVICE: {
    /* A program built for a root GPU serves its sub-devices; CPU
     * sub-devices get their own build. */
    cl_device_type type = 0;
    ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    return put_bool(&o, type == CL_DEVICE_TYPE_GPU);
  }
  case PI_DEVICE_INFO_ATOMIC_64:
    return put_bool(&o,
                    device_has_ext(dev, "cl_khr_int64_base_atomics") &&
                        device_has_ext(dev, "cl_khr_int64_extended_atomics"));
  case PI_EXT_INTEL_DEVICE_INFO_MEM_CHANNEL_SUPPORT:
    return put_bool(&o, device_has_ext(dev, "cl_intel_mem_channel_property"));
  case PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
  case PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
  case PI_EXT_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES:
  case PI_EXT_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES: {
    pi_bitfield caps = 0;
    pi_result r = atomic_capabilities(FN, dev, param_name, &caps);
    return r != PI_SUCCESS ? r : put_u64(&o, caps);
  }
  case PI_EXT_INTEL_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES:
    return put_u32(&o, 1); /* OpenCL has no queue indices: one. */
  case PI_DEVICE_INFO_BACKEND_VERSION: {
    char version[16];
    int v = device_version(dev);
    snprintf(version, sizeof version, "%d.%d", v / 10, v % 10);
    return put_str(&o, version);
  }
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_GLOBAL_WORK_GROUPS:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_1D:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_2D:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_3D: {
    /* OpenCL bounds the number of work-groups only by size_t. */
    size_t max[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
    size_t dims = param_name == PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_2D ? 2
                  : param_name == PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_3D
                      ? 3
                      : 1;
    return put_info(&o, max, dims * sizeof max[0]);
  }
  case PI_DEVICE_INFO_MAX_NUM_SUB_GROUPS: {
    /* OpenCL before 2.1 cannot tell, and says 0 without sub-groups; SYCL's
     * minimum is 1. */
    cl_uint n = 0;
    if (device_version(dev) >= 21) {
      pi_result r = info_check(&o, "clGetDeviceInfo",
                               ICD_CALL(clGetDeviceInfo, dev,
                                        CL_DEVICE_MAX_NUM_SUB_GROUPS, sizeof n,
                                        &n, NULL));
      if (r != PI_SUCCESS)
        return r;
    }
    return put_u32(&o, n ? n : 1);
  }
  case PI_DEVICE_INFO_SUB_GROUP_SIZES_INTEL:
    return sub_group_sizes(&o, dev);
  case PI_DEVICE_INFO_USM_HOST_SUPPORT:
  case PI_DEVICE_INFO_USM_DEVICE_SUPPORT:
  case PI_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT:
  case PI_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT:
  case PI_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT:
    if (!device_has_ext(dev, USM_EXT))
      return put_u64(&o, 0); /* no USM capabilities at all */
    return INFO_PASS(&o, clGetDeviceInfo, dev);
  default:
    return INFO_PASS(&o, clGetDeviceInfo, dev);
  }
}

static pi_result ocl_piDevicePartition(
    pi_device device, const pi_device_partition_property *properties,
    pi_uint32 num_devices, pi_device *out_devices, pi_uint32 *out_num_devices) {
  if (properties && properties[0] == PI_EXT_INTEL_DEVICE_PARTITION_BY_CSLICE)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: partitioning by compute slice is Level Zero-only; use "
                "PI_DEVICE_PARTITION_BY_AFFINITY_DOMAIN or EQUALLY",
                FN);
  return CL_CALL(clCreateSubDevices, (cl_device_id)device,
                 (const cl_device_partition_property *)properties, num_devices,
                 (cl_device_id *)out_devices, out_num_devices);
}

static pi_result ocl_piDeviceRetain(pi_device device) {
  return CL_CALL(clRetainDevice, (cl_device_id)device);
}

static pi_result ocl_piDeviceRelease(pi_device device) {
  return CL_CALL(clReleaseDevice, (cl_device_id)device);
}

/* Whether the device takes SPIR-V: OpenCL 2.1's IL or cl_khr_il_program. */
static int device_takes_spirv(cl_device_id dev) {
  if (device_version(dev) < 21 && !device_has_ext(dev, "cl_khr_il_program"))
    return 0;
  char *il = info_string(NULL, dev, CL_DEVICE_IL_VERSION);
  int yes = il && strstr(il, "SPIR-V") != NULL;
  free(il);
  return yes;
}

static int is_spirv_image(const struct pi_device_binary_struct *b) {
  if (b->Format == PI_DEVICE_BINARY_TYPE_SPIRV)
    return 1;
  /* An image of undetermined format is SPIR-V when it starts with the
   * SPIR-V magic number. */
  uint32_t magic = 0;
  if (b->Format != PI_DEVICE_BINARY_TYPE_NONE || !b->BinaryStart ||
      b->BinaryEnd - b->BinaryStart < 4)
    return 0;
  memcpy(&magic, b->BinaryStart, sizeof magic);
  return magic == 0x07230203u;
}

static int target_is(const struct pi_device_binary_struct *b,
                     const char *target) {
  return b->DeviceTargetSpec && strcmp(b->DeviceTargetSpec, target) == 0;
}

/* Whether the image's target names SPIR-V for the device's address width. */
static int spirv_target_fits(const struct pi_device_binary_struct *b,
                             cl_uint address_bits) {
  const char *t = b->DeviceTargetSpec ? b->DeviceTargetSpec : "";
  if (address_bits == 32)
    return strcmp(t, __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV32) == 0;
  return strncmp(t, __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64,
                 strlen(__SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64)) == 0;
}

/* The target of an ahead-of-time image for a device of Intel's OpenCL
 * runtimes (the only ones that load such images), or NULL. */
static const char *intel_aot_target(cl_device_id dev) {
  cl_platform_id plat = device_platform(dev);
  char *vendor = plat ? info_string(plat, NULL, CL_PLATFORM_VENDOR) : NULL;
  int intel = vendor && strstr(vendor, "Intel") != NULL;
  free(vendor);
  cl_device_type type = 0;
  if (!intel || ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_TYPE, sizeof type,
                         &type, NULL) != CL_SUCCESS)
    return NULL;
  if (type & CL_DEVICE_TYPE_CPU)
    return __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64_X86_64;
  if (type & CL_DEVICE_TYPE_GPU)
    return __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64_GEN;
  if (type & CL_DEVICE_TYPE_ACCELERATOR)
    return __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64_FPGA;
  return NULL;
}

/* Picks, in order: an ahead-of-time image for the device (Intel runtimes
 * only), a SPIR-V image when the device takes SPIR-V, an OpenCL C source
 * image when the device has a compiler. Anything else fails, naming what
 * was offered. */
static pi_result ocl_piextDeviceSelectBinary(pi_device device,
                                             pi_device_binary *binaries,
                                             pi_uint32 num_binaries,
                                             pi_uint32 *selected_binary_ind) {
  cl_device_id dev = (cl_device_id)device;
  REQUIRE(selected_binary_ind != NULL);
  REQUIRE(binaries != NULL || num_binaries == 0);
  *selected_binary_ind = UINT32_MAX;
  cl_uint address_bits = 64;
  cl_bool compiler = CL_FALSE;
  cl_int err = ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_ADDRESS_BITS,
                        sizeof address_bits, &address_bits, NULL);
  if (err == CL_SUCCESS)
    err = ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_COMPILER_AVAILABLE,
                   sizeof compiler, &compiler, NULL);
  if (err != CL_SUCCESS)
    return CL_CHECK(clGetDeviceInfo, err);
  const char *aot = intel_aot_target(dev);
  int spirv = device_takes_spirv(dev);
  pi_uint32 choice[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
  for (pi_uint32 i = num_binaries; i-- > 0;) {
    const struct pi_device_binary_struct *b = binaries[i];
    if (!b)
      continue;
    if (aot && b->Format == PI_DEVICE_BINARY_TYPE_NATIVE && target_is(b, aot))
      choice[0] = i;
    if (spirv && is_spirv_image(b) && spirv_target_fits(b, address_bits))
      choice[1] = i;
    if (compiler && (b->Format == PI_DEVICE_BINARY_TYPE_OPENCL_C ||
                     target_is(b, __SYCL_PI_DEVICE_BINARY_TARGET_OPENCL_C)))
      choice[2] = i;
  }
  for (int k = 0; k < 3; ++k)
    if (choice[k] != UINT32_MAX) {
      *selected_binary_ind = choice[k];
      return PI_SUCCESS;
    }
  char offered[512] = "none", what[512];
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
              "%s: no image fits %s; it takes %s%s%s and was offered: %s", FN,
              describe_device(dev, what, sizeof what),
              aot ? "ahead-of-time images, " : "",
              spirv ? "SPIR-V" : "no SPIR-V (no IL support)",
              compiler ? ", OpenCL C source" : ", no OpenCL C (no compiler)",
              offered);
}

/* Whether `name` is one of the program's kernels. */
static int program_has_kernel(cl_program prog, const char *name) {
  size_t n = 0;
  if (ICD_CALL(clGetProgramInfo, prog, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &n) !=
      CL_SUCCESS)
    return 0;
  char *names = malloc(n + 1);
  int found = names &&
              ICD_CALL(clGetProgramInfo, prog, CL_PROGRAM_KERNEL_NAMES, n,
                       names, NULL) == CL_SUCCESS &&
              (names[n] = '\0', has_entry(names, name, ';'));
  free(names);
  return found;
}

/* Uses clGetDeviceFunctionPointerINTEL (cl_intel_function_pointers). As in
 * DPC++, a name the program knows as a kernel but whose address OpenCL cannot
 * give is PI_ERROR_FUNCTION_ADDRESS_IS_NOT_AVAILABLE; an unknown name is
 * PI_ERROR_INVALID_KERNEL_NAME. */
static pi_result
ocl_piextGetDeviceFunctionPointer(pi_device device, pi_program program,
                                  const char *function_name,
                                  pi_uint64 *function_pointer_ret) {
  cl_device_id dev = (cl_device_id)device;
  const struct platform_state *ps = NULL;
  REQUIRE(function_name != NULL && function_pointer_ret != NULL);
  *function_pointer_ret = 0;
  pi_result r = device_state(FN, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  if (ps->ext.clGetDeviceFunctionPointerINTEL) {
    cl_ulong address = 0;
    cl_int err = ps->ext.clGetDeviceFunctionPointerINTEL(
        dev, (cl_program)program, function_name, &address);
    if (err == CL_SUCCESS) {
      *function_pointer_ret = address;
      return PI_SUCCESS;
    }
    if (err != CL_INVALID_ARG_VALUE)
      return CL_CHECK(clGetDeviceFunctionPointerINTEL, err);
  }
  if (!program_has_kernel((cl_program)program, function_name))
    return fail(PI_ERROR_INVALID_KERNEL_NAME,
                "%s: the program has no function '%s'", FN, function_name);
  return fail(PI_ERROR_FUNCTION_ADDRESS_IS_NOT_AVAILABLE,
              "%s: '%s' exists but OpenCL cannot give its address (needs "
              "cl_intel_function_pointers)",
              FN, function_name);
}

static pi_result ocl_piextGetGlobalVariablePointer(
    pi_device Device, pi_program Program, const char *GlobalVariableName,
    size_t *GlobalVariableSize, void **GlobalVariablePointerRet) {
  cl_device_id dev = (cl_device_id)Device;
  const struct platform_state *ps = NULL;
  REQUIRE(GlobalVariableName != NULL && GlobalVariablePointerRet != NULL);
  pi_result r = device_state(FN, dev, &ps);
  if (r == PI_SUCCESS)
    r = need_feature(FN, dev, NULL, "clGetDeviceGlobalVariablePointerINTEL",
                     ps->ext.clGetDeviceGlobalVariablePointerINTEL != NULL,
                     "read and write device globals with "
                     "piextEnqueueDeviceGlobalVariableRead/Write");
  if (r != PI_SUCCESS)
    return r;
  size_t size = 0;
  r = EXT_CALL(ps, clGetDeviceGlobalVariablePointerINTEL, dev,
               (cl_program)Program, GlobalVariableName, &size,
               GlobalVariablePointerRet);
  if (r == PI_SUCCESS && GlobalVariableSize)
    *GlobalVariableSize = size;
  return r;
}

static pi_result
ocl_piextDeviceGetNativeHandle(pi_device device,
                               pi_native_handle *nativeHandle) {
  return native_of(FN, device, nativeHandle);
}

static pi_result
ocl_piextDeviceCreateWithNativeHandle(pi_native_handle nativeHandle,
                                      pi_platform platform, pi_device *device) {
  (void)platform; /* a cl_device_id knows its platform */
  REQUIRE(nativeHandle != 0 && device != NULL);
  *device = (pi_device)nativeHandle;
  return PI_SUCCESS;
}

/* clGetDeviceAndHostTimer and clGetHostTimer, OpenCL 2.1. */
static pi_result ocl_piGetDeviceAndHostTimer(pi_device Device,
                                             uint64_t *DeviceTime,
                                             uint64_t *HostTime) {
  cl_device_id dev = (cl_device_id)Device;
  const struct platform_state *ps = NULL;
  pi_result r = device_state(FN, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  if (ps->version < 21 || device_version(dev) < 21) {
    char what[512];
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: %s predates OpenCL 2.1, which added device timers; use "
                "event profiling instead",
                FN, describe_device(dev, what, sizeof what));
  }
  cl_ulong device_time = 0, host_time = 0, resolution = 0;
  cl_int err = CL_SUCCESS;
  if (DeviceTime)
    err = ICD_CALL(clGetDeviceAndHostTimer, dev, &device_time, &host_time);
  else if (HostTime)
    err = ICD_CALL(clGetHostTimer, dev, &host_time);
  if (err == CL_INVALID_OPERATION &&
      ICD_CALL(clGetPlatformInfo, ps->id, CL_PLATFORM_HOST_TIMER_RESOLUTION,
               sizeof resolution, &resolution, NULL) == CL_SUCCESS &&
      resolution == 0) {
    char what[512];
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the platform of %s has no device and host timers "
                "(CL_PLATFORM_HOST_TIMER_RESOLUTION is 0); use event "
                "profiling instead",
                FN, describe_device(dev, what, sizeof what));
  }
  r = DeviceTime ? CL_CHECK(clGetDeviceAndHostTimer, err)
                 : CL_CHECK(clGetHostTimer, err);
  if (r == PI_SUCCESS && DeviceTime)
    *DeviceTime = device_time;
  if (r == PI_SUCCESS && HostTime)
    *HostTime = host_time;
  return r;
}

/* ---- Contexts -------------------------------------------------------------
 */

static pi_result ocl_piContextCreate(
    const pi_context_properties *properties, pi_uint32 num_devices,
    const pi_device *devices,
    void (*pfn_notify)(const char *errinfo, const void *private_info, size_t cb,
                       void *user_data),
    void *user_data, pi_context *ret_context) {
  cl_int err;
  REQUIRE(ret_context != NULL);
  *ret_context = (pi_context)icd_create_context(
      (const cl_context_properties *)properties, num_devices,
      (const cl_device_id *)devices, pfn_notify, user_data, &err);
  return CL_CHECK(clCreateContext, err);
}

static pi_result ocl_piContextGetInfo(pi_context context,
                                      pi_context_info param_name,
                                      size_t param_value_size,
                                      void *param_value,
                                      size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  cl_device_id *devs = NULL;
  cl_uint n = 0;
  pi_result r;
  unsigned device_query;
  switch (param_name) {
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_FILL2D_SUPPORT:
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_MEMSET2D_SUPPORT:
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT: {
    /* The 2D USM calls work (row by row) where every device has USM. */
    if ((r = context_devices(FN, (cl_context)context, &devs, &n)) != PI_SUCCESS)
      return r;
    int all = n > 0;
    for (cl_uint i = 0; i < n; ++i)
      all &= device_has_ext(devs[i], USM_EXT);
    free(devs);
    return put_bool(&o, all);
  }
  case PI_EXT_CONTEXT_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
    device_query = PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES;
    break;
  case PI_EXT_CONTEXT_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
    device_query = PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES;
    break;
  case PI_EXT_CONTEXT_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES:
    device_query = PI_EXT_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES;
    break;
  case PI_EXT_CONTEXT_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES:
    device_query = PI_EXT_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES;
    break;
  default:
    return INFO_PASS(&o, clGetContextInfo, (cl_context)context);
  }
  /* A context's atomic capabilities: what all its devices have. */
  if ((r = context_devices(FN, (cl_context)context, &devs, &n)) != PI_SUCCESS)
    return r;
  pi_bitfield all = ~(pi_bitfield)0, caps = 0;
  for (cl_uint i = 0; i < n && r == PI_SUCCESS; ++i) {
    r = atomic_capabilities(FN, devs[i], device_query, &caps);
    all &= caps;
  }
  free(devs);
  return r != PI_SUCCESS ? r : put_u64(&o, n ? all : 0);
}

static pi_result ocl_piContextRetain(pi_context context) {
  return CL_CALL(clRetainContext, (cl_context)context);
}

static pi_result ocl_piContextRelease(pi_context context) {
  return CL_CALL(clReleaseContext, (cl_context)context);
}

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

static void CL_CALLBACK context_destroyed(cl_context ctx, void *data) {
  struct callback *cb = data;
  (void)ctx;
  cb->fn.deleter(cb->user_data);
  free(cb);
}

/* clSetContextDestructorCallback, OpenCL 3.0. */
static pi_result ocl_piextContextSetExtendedDeleter(
    pi_context context, pi_context_extended_deleter func, void *user_data) {
  cl_device_id dev = NULL;
  const struct platform_state *ps = NULL;
  REQUIRE(func != NULL);
  pi_result r = context_device(FN, (cl_context)context, NULL, &dev);
  if (r == PI_SUCCESS)
    r = device_state(FN, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  if (ps->version < 30) {
    char what[512];
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the platform of %s predates OpenCL 3.0, which added "
                "clSetContextDestructorCallback; release resources after "
                "piContextRelease instead",
                FN, describe_device(dev, what, sizeof what));
  }
  struct callback *cb = malloc(sizeof *cb);
  if (!cb)
    return fail(PI_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", FN);
  cb->fn.deleter = func;
  cb->user_data = user_data;
  r = CL_CALL(clSetContextDestructorCallback, (cl_context)context,
              context_destroyed, cb);
  if (r != PI_SUCCESS)
    free(cb);
  return r;
}

static pi_result
ocl_piextContextGetNativeHandle(pi_context context,
                                pi_native_handle *nativeHandle) {
  return native_of(FN, context, nativeHandle);
}

/* The objects a PI handle may adopt from a native handle. */
enum native_kind {
  NATIVE_CONTEXT,
  NATIVE_QUEUE,
  NATIVE_MEM,
  NATIVE_PROGRAM,
  NATIVE_KERNEL,
  NATIVE_EVENT
};

/* Checks a native handle and, when the plugin does not take ownership of it,
 * retains it: the PI object is the OpenCL object, and the runtime will
 * release it once. */
static pi_result adopt_native(const char *fn, enum native_kind kind,
                              pi_native_handle native, bool owns,
                              const void *out) {
  if (!native || !out)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the native handle and the output must not be NULL", fn);
  if (owns)
    return PI_SUCCESS;
  switch (kind) {
  case NATIVE_CONTEXT:
    return check_cl(fn, "clRetainContext",
                    ICD_CALL(clRetainContext, (cl_context)native));
  case NATIVE_QUEUE:
    return check_cl(fn, "clRetainCommandQueue",
                    ICD_CALL(clRetainCommandQueue, (cl_command_queue)native));
  case NATIVE_MEM:
    return check_cl(fn, "clRetainMemObject",
                    ICD_CALL(clRetainMemObject, (cl_mem)native));
  case NATIVE_PROGRAM:
    return check_cl(fn, "clRetainProgram",
                    ICD_CALL(clRetainProgram, (cl_program)native));
  case NATIVE_KERNEL:
    return check_cl(fn, "clRetainKernel",
                    ICD_CALL(clRetainKernel, (cl_kernel)native));
  case NATIVE_EVENT:
    return check_cl(fn, "clRetainEvent",
                    ICD_CALL(clRetainEvent, (cl_event)native));
  }
  return PI_SUCCESS;
}

static pi_result ocl_piextContextCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_uint32 numDevices,
    const pi_device *devices, bool pluginOwnsNativeHandle,
    pi_context *context) {
  (void)numDevices; /* a cl_context knows its devices */
  (void)devices;
  pi_result r = adopt_native(FN, NATIVE_CONTEXT, nativeHandle,
                             pluginOwnsNativeHandle, context);
  if (r == PI_SUCCESS)
    *context = (pi_context)nativeHandle;
  return r;
}

/* ---- Queues ---------------------------------------------------------------
 */

static pi_result create_queue(const char *fn, pi_context context,
                              pi_device device, pi_queue_properties flags,
                              pi_queue *queue) {
  const pi_queue_properties known =
      PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE |
      PI_QUEUE_FLAG_PROFILING_ENABLE | PI_QUEUE_FLAG_ON_DEVICE |
      PI_QUEUE_FLAG_ON_DEVICE_DEFAULT |
      PI_EXT_ONEAPI_QUEUE_FLAG_DISCARD_EVENTS |
      PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW |
      PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_HIGH |
      PI_EXT_QUEUE_FLAG_SUBMISSION_NO_IMMEDIATE |
      PI_EXT_QUEUE_FLAG_SUBMISSION_IMMEDIATE;
  cl_device_id dev = (cl_device_id)device;
  const struct platform_state *ps = NULL;
  cl_int err;
  if (!queue)
    return fail(PI_ERROR_INVALID_VALUE, "%s: queue is NULL", fn);
  *queue = NULL;
  if (flags & ~known)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown queue flags 0x%llx", fn,
                (unsigned long long)(flags & ~known));
  if ((flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW) &&
      (flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_HIGH))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a queue cannot have both low and high priority", fn);
  pi_result r = device_state(fn, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  cl_command_queue_properties cl_flags = 0;
  if (flags & PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    cl_flags |= CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
  if (flags & PI_QUEUE_FLAG_PROFILING_ENABLE)
    cl_flags |= CL_QUEUE_PROFILING_ENABLE;
  if (flags & PI_QUEUE_FLAG_ON_DEVICE)
    cl_flags |= CL_QUEUE_ON_DEVICE;
  if (flags & PI_QUEUE_FLAG_ON_DEVICE_DEFAULT)
    cl_flags |= CL_QUEUE_ON_DEVICE_DEFAULT;
  /* Discarding events and the submission mode are hints OpenCL has no use
   * for; priorities map to cl_khr_priority_hints where the device has it. */
  if (ps->version < 20) {
    *queue = (pi_queue)ICD_CREATE(clCreateCommandQueue, &err,
                                  (cl_context)context, dev, cl_flags);
    return check_cl(fn, "clCreateCommandQueue", err);
  }
  cl_queue_properties props[5] = {CL_QUEUE_PROPERTIES, cl_flags, 0, 0, 0};
  if ((flags & (PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW |
                PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_HIGH)) &&
      device_has_ext(dev, "cl_khr_priority_hints")) {
    props[2] = CL_QUEUE_PRIORITY_KHR;
    props[3] = (flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW)
                   ? CL_QUEUE_PRIORITY_LOW_KHR
                   : CL_QUEUE_PRIORITY_HIGH_KHR;
  }
  *queue = (pi_queue)ICD_CREATE(clCreateCommandQueueWithProperties, &err,
                                (cl_context)context, dev, props);
  return check_cl(fn, "clCreateCommandQueueWithProperties", err);
}

static pi_result ocl_piQueueCreate(pi_context context, pi_device device,
                                   pi_queue_properties properties,
                                   pi_queue *queue) {
  return create_queue(FN, context, device, properties, queue);
}

/* properties: {PI_QUEUE_FLAGS, flags, PI_QUEUE_COMPUTE_INDEX, index, 0}. */
static pi_result ocl_piextQueueCreate(pi_context context, pi_device device,
                                      pi_queue_properties *properties,
                                      pi_queue *queue) {
  pi_queue_properties flags = 0;
  for (size_t i = 0; properties && properties[i]; i += 2) {
    if (properties[i] == PI_QUEUE_FLAGS)
      flags = properties[i + 1];
    else if (properties[i] != PI_QUEUE_COMPUTE_INDEX)
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown queue property 0x%llx",
                  FN, (unsigned long long)properties[i]);
    else if (properties[i + 1] != 0)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: compute index %llu requested, but OpenCL devices have "
                  "one queue index (0)",
                  FN, (unsigned long long)properties[i + 1]);
  }
  return create_queue(FN, context, device, flags, queue);
}

static pi_result ocl_piQueueGetInfo(pi_queue command_queue,
                                    pi_queue_info param_name,
                                    size_t param_value_size, void *param_value,
                                    size_t *param_value_size_ret) {
  cl_command_queue q = (cl_command_queue)command_queue;
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  if (param_name != PI_EXT_ONEAPI_QUEUE_INFO_EMPTY)
    return INFO_PASS(&o, clGetCommandQueueInfo, q);
  /* OpenCL cannot ask a queue whether it is empty, but a marker completes
   * only after everything enqueued before it. On an idle queue a fresh
   * marker completes within microseconds, so it gets a millisecond; a queue
   * whose marker is still pending then is busy. */
  cl_event marker;
  cl_int status = CL_QUEUED;
  struct timespec start, now;
  pi_result r = CL_CALL(clEnqueueMarkerWithWaitList, q, 0, NULL, &marker);
  if (r != PI_SUCCESS)
    return r;
  ICD_CALL(clFlush, q);
  timespec_get(&start, TIME_UTC);
  do {
    r = CL_CALL(clGetEventInfo, marker, CL_EVENT_COMMAND_EXECUTION_STATUS,
                sizeof status, &status, NULL);
    timespec_get(&now, TIME_UTC);
  } while (r == PI_SUCCESS && status > CL_COMPLETE &&
           (now.tv_sec - start.tv_sec) * 1000000000L +
                   (now.tv_nsec - start.tv_nsec) <
               1000000L);
  ICD_CALL(clReleaseEvent, marker);
  /* A negative status: the marker ended with an error, nothing is pending. */
  return r != PI_SUCCESS ? r : put_bool(&o, status <= CL_COMPLETE);
}

static pi_result ocl_piQueueFinish(pi_queue command_queue) {
  return CL_CALL(clFinish, (cl_command_queue)command_queue);
}

static pi_result ocl_piQueueFlush(pi_queue command_queue) {
  return CL_CALL(clFlush, (cl_command_queue)command_queue);
}

static pi_result ocl_piQueueRetain(pi_queue command_queue) {
  return CL_CALL(clRetainCommandQueue, (cl_command_queue)command_queue);
}

static pi_result ocl_piQueueRelease(pi_queue command_queue) {
  return CL_CALL(clReleaseCommandQueue, (cl_command_queue)command_queue);
}

static pi_result ocl_piextQueueGetNativeHandle(pi_queue queue,
                                               pi_native_handle *nativeHandle,
                                               int32_t *nativeHandleDesc) {
  if (nativeHandleDesc)
    *nativeHandleDesc = 0; /* a plain cl_command_queue */
  return native_of(FN, queue, nativeHandle);
}

static pi_result ocl_piextQueueCreateWithNativeHandle(
    pi_native_handle nativeHandle, int32_t nativeHandleDesc, pi_context context,
    pi_device device, bool pluginOwnsNativeHandle,
    pi_queue_properties *Properties, pi_queue *queue) {
  (void)nativeHandleDesc; /* a cl_command_queue knows its context, device */
  (void)context;          /* and properties */
  (void)device;
  (void)Properties;
  pi_result r = adopt_native(FN, NATIVE_QUEUE, nativeHandle,
                             pluginOwnsNativeHandle, queue);
  if (r == PI_SUCCESS)
    *queue = (pi_queue)nativeHandle;
  return r;
}

/* ---- Memory ---------------------------------------------------------------
 */

/* The OpenCL flags for PI memory flags; unknown bits are an error. */
static pi_result mem_flags(const char *fn, pi_mem_flags flags,
                           cl_mem_flags *out) {
  static const struct {
    pi_mem_flags pi;
    cl_mem_flags cl;
  } map[] = {{PI_MEM_FLAGS_ACCESS_RW, CL_MEM_READ_WRITE},
             {PI_MEM_ACCESS_READ_ONLY, CL_MEM_READ_ONLY},
             {PI_MEM_FLAGS_HOST_PTR_USE, CL_MEM_USE_HOST_PTR},
             {PI_MEM_FLAGS_HOST_PTR_COPY, CL_MEM_COPY_HOST_PTR},
             {PI_MEM_FLAGS_HOST_PTR_ALLOC, CL_MEM_ALLOC_HOST_PTR}};
  *out = 0;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; ++i)
    if (flags & map[i].pi) {
      *out |= map[i].cl;
      flags &= ~map[i].pi;
    }
  if (flags)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown memory flags 0x%llx", fn,
                (unsigned long long)flags);
  return PI_SUCCESS;
}

/* properties: {PI_MEM_PROPERTIES_CHANNEL, channel,
 * PI_MEM_PROPERTIES_ALLOC_BUFFER_LOCATION, location, 0}. Both are placement
 * hints: they go to clCreateBufferWithPropertiesINTEL where the platform has
 * it and are dropped elsewhere. */
static pi_result ocl_piMemBufferCreate(pi_context context, pi_mem_flags flags,
                                       size_t size, void *host_ptr,
                                       pi_mem *ret_mem,
                                       const pi_mem_properties *properties) {
  cl_context ctx = (cl_context)context;
  cl_mem_flags cl_flags;
  cl_int err;
  REQUIRE(ret_mem != NULL);
  *ret_mem = NULL;
  pi_result r = mem_flags(FN, flags, &cl_flags);
  if (r != PI_SUCCESS)
    return r;
  cl_mem_properties_intel props[8] = {0};
  size_t n = 0;
  for (size_t i = 0; properties && properties[i]; i += 2) {
    if (properties[i] != PI_MEM_PROPERTIES_CHANNEL &&
        properties[i] != PI_MEM_PROPERTIES_ALLOC_BUFFER_LOCATION)
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown buffer property 0x%llx",
                  FN, (unsigned long long)properties[i]);
    if (n + 3 > sizeof props / sizeof props[0])
      return fail(PI_ERROR_INVALID_VALUE, "%s: too many buffer properties", FN);
    props[n++] = properties[i];
    props[n++] = properties[i + 1];
  }
  if (n) {
    cl_device_id dev = NULL;
    const struct platform_state *ps = NULL;
    if ((r = context_device(FN, ctx, NULL, &dev)) != PI_SUCCESS ||
        (r = device_state(FN, dev, &ps)) != PI_SUCCESS)
      return r;
    if (ps->ext.clCreateBufferWithPropertiesINTEL) {
      *ret_mem = (pi_mem)ps->ext.clCreateBufferWithPropertiesINTEL(
          ctx, props, cl_flags, size, host_ptr, &err);
      return CL_CHECK(clCreateBufferWithPropertiesINTEL, err);
    }
  }
  *ret_mem =
      (pi_mem)ICD_CREATE(clCreateBuffer, &err, ctx, cl_flags, size, host_ptr);
  return CL_CHECK(clCreateBuffer, err);
}

static void image_to_cl(const pi_image_format *format,
                        const pi_image_desc *desc, cl_image_format *cl_format,
                        cl_image_desc *cl_desc) {
  cl_format->image_channel_order = format->image_channel_order;
  cl_format->image_channel_data_type = format->image_channel_data_type;
  memset(cl_desc, 0, sizeof *cl_desc);
  cl_desc->image_type = desc->image_type;
  cl_desc->image_width = desc->image_width;
  cl_desc->image_height = desc->image_height;
  cl_desc->image_depth = desc->image_depth;
  cl_desc->image_array_size = desc->image_array_size;
  cl_desc->image_row_pitch = desc->image_row_pitch;
  cl_desc->image_slice_pitch = desc->image_slice_pitch;
  cl_desc->num_mip_levels = desc->num_mip_levels;
  cl_desc->num_samples = desc->num_samples;
  cl_desc->buffer = (cl_mem)desc->buffer;
}

static pi_result ocl_piMemImageCreate(pi_context context, pi_mem_flags flags,
                                      const pi_image_format *image_format,
                                      const pi_image_desc *image_desc,
                                      void *host_ptr, pi_mem *ret_mem) {
  cl_mem_flags cl_flags;
  cl_image_format format;
  cl_image_desc desc;
  cl_int err;
  REQUIRE(image_format != NULL && image_desc != NULL && ret_mem != NULL);
  *ret_mem = NULL;
  pi_result r = mem_flags(FN, flags, &cl_flags);
  if (r != PI_SUCCESS)
    return r;
  image_to_cl(image_format, image_desc, &format, &desc);
  *ret_mem = (pi_mem)ICD_CREATE(clCreateImage, &err, (cl_context)context,
                                cl_flags, &format, &desc, host_ptr);
  return CL_CHECK(clCreateImage, err);
}

static pi_result ocl_piMemGetInfo(pi_mem mem, pi_mem_info param_name,
                                  size_t param_value_size, void *param_value,
                                  size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  return INFO_PASS(&o, clGetMemObjectInfo, (cl_mem)mem);
}

/* PI_IMAGE_INFO_FORMAT returns a cl_image_format, which has the layout of a
 * pi_image_format. */
static pi_result ocl_piMemImageGetInfo(pi_mem image, pi_image_info param_name,
                                       size_t param_value_size,
                                       void *param_value,
                                       size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  return INFO_PASS(&o, clGetImageInfo, (cl_mem)image);
}

static pi_result ocl_piMemRetain(pi_mem mem) {
  return CL_CALL(clRetainMemObject, (cl_mem)mem);
}

static pi_result ocl_piMemRelease(pi_mem mem) {
  return CL_CALL(clReleaseMemObject, (cl_mem)mem);
}

static pi_result
ocl_piMemBufferPartition(pi_mem buffer, pi_mem_flags flags,
                         pi_buffer_create_type buffer_create_type,
                         void *buffer_create_info, pi_mem *ret_mem) {
  cl_mem_flags cl_flags;
  cl_int err;
  REQUIRE(ret_mem != NULL && buffer_create_info != NULL);
  *ret_mem = NULL;
  if (buffer_create_type != PI_BUFFER_CREATE_TYPE_REGION)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: buffer_create_type 0x%x is unknown; only "
                "PI_BUFFER_CREATE_TYPE_REGION exists",
                FN, (unsigned)buffer_create_type);
  pi_result r = mem_flags(FN, flags, &cl_flags);
  if (r != PI_SUCCESS)
    return r;
  const struct pi_buffer_region_struct *pi_region = buffer_create_info;
  cl_buffer_region region = {pi_region->origin, pi_region->size};
  *ret_mem =
      (pi_mem)ICD_CREATE(clCreateSubBuffer, &err, (cl_mem)buffer, cl_flags,
                         CL_BUFFER_CREATE_TYPE_REGION, &region);
  return CL_CHECK(clCreateSubBuffer, err);
}

static pi_result ocl_piextMemGetNativeHandle(pi_mem mem, pi_device dev,
                                             pi_native_handle *nativeHandle) {
  (void)dev; /* a cl_mem serves every device of its context */
  return native_of(FN, mem, nativeHandle);
}

static pi_result
ocl_piextMemCreateWithNativeHandle(pi_native_handle nativeHandle,
                                   pi_context context, bool ownNativeHandle,
                                   pi_mem *mem) {
  (void)context;
  pi_result r =
      adopt_native(FN, NATIVE_MEM, nativeHandle, ownNativeHandle, mem);
  if (r == PI_SUCCESS)
    *mem = (pi_mem)nativeHandle;
  return r;
}

static pi_result ocl_piextMemImageCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, bool ownNativeHandle,
    const pi_image_format *ImageFormat, const pi_image_desc *ImageDesc,
    pi_mem *img) {
  (void)context;
  (void)ImageFormat; /* a cl_mem image knows its format and shape */
  (void)ImageDesc;
  pi_result r =
      adopt_native(FN, NATIVE_MEM, nativeHandle, ownNativeHandle, img);
  if (r == PI_SUCCESS)
    *img = (pi_mem)nativeHandle;
  return r;
}

/* ---- Programs -------------------------------------------------------------
 */

/* Adds the build log of the first device whose build failed to the last
 * error message, so that piPluginGetLastError shows the compiler's words. */
static void append_build_log(cl_program prog) {
  cl_device_id devs[64];
  size_t n = 0;
  if (!prog || ICD_CALL(clGetProgramInfo, prog, CL_PROGRAM_DEVICES, sizeof devs,
                        devs, &n) != CL_SUCCESS)
    return;
  for (size_t i = 0; i < n / sizeof devs[0]; ++i) {
    cl_build_status status = CL_BUILD_NONE;
    size_t used = strlen(last_message), size = 0;
    ICD_CALL(clGetProgramBuildInfo, prog, devs[i], CL_PROGRAM_BUILD_STATUS,
             sizeof status, &status, NULL);
    if (status != CL_BUILD_ERROR ||
        ICD_CALL(clGetProgramBuildInfo, prog, devs[i], CL_PROGRAM_BUILD_LOG, 0,
                 NULL, &size) != CL_SUCCESS)
      continue;
    char *log = malloc(size + 1);
    if (log && ICD_CALL(clGetProgramBuildInfo, prog, devs[i],
                        CL_PROGRAM_BUILD_LOG, size, log, NULL) == CL_SUCCESS) {
      log[size] = '\0';
      snprintf(last_message + used, sizeof last_message - used,
               "; build log: %s", log);
    }
    free(log);
    return;
  }
}

/* Ends piProgramCompile, piProgramBuild and piProgramLink: OpenCL ran them
 * synchronously, so the PI callback (if any) runs now, once the work was
 * attempted, as OpenCL would have called it. */
static pi_result finish_build(pi_result r, pi_result build_failure,
                              cl_program prog,
                              void (*pfn_notify)(pi_program, void *),
                              void *user_data) {
  if (r == build_failure)
    append_build_log(prog);
  if (pfn_notify && prog && (r == PI_SUCCESS || r == build_failure))
    pfn_notify((pi_program)prog, user_data);
  return r;
}

/* clCreateProgramWithIL (OpenCL 2.1) or clCreateProgramWithILKHR. Devices
 * that take no SPIR-V fail with PI_ERROR_INVALID_OPERATION, the code OpenCL
 * itself gives (and DPC++'s plugin returns) when no device takes IL: the IL
 * may be fine, the device cannot consume it. */
static pi_result ocl_piProgramCreate(pi_context context, const void *il,
                                     size_t length, pi_program *res_program) {
  cl_context ctx = (cl_context)context;
  cl_device_id *devs = NULL;
  cl_uint n = 0;
  cl_int err;
  REQUIRE(res_program != NULL);
  *res_program = NULL;
  REQUIRE(il != NULL && length != 0);
  pi_result r = context_devices(FN, ctx, &devs, &n);
  if (r != PI_SUCCESS)
    return r;
  for (cl_uint i = 0; i < n; ++i)
    if (!device_takes_spirv(devs[i])) {
      char what[512];
      r = fail(PI_ERROR_INVALID_OPERATION,
               "%s: %s takes no SPIR-V (no SPIR-V in CL_DEVICE_IL_VERSION); "
               "use an OpenCL C source image (piclProgramCreateWithSource) "
               "or a native binary",
               FN, describe_device(devs[i], what, sizeof what));
      break;
    }
  const struct platform_state *ps = NULL;
  if (r == PI_SUCCESS && n)
    r = device_state(FN, devs[0], &ps);
  free(devs);
  if (r != PI_SUCCESS || !ps)
    return r;
  if (ps->version >= 21) {
    *res_program =
        (pi_program)ICD_CREATE(clCreateProgramWithIL, &err, ctx, il, length);
    return CL_CHECK(clCreateProgramWithIL, err);
  }
  if (!ps->ext.clCreateProgramWithILKHR)
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the platform lists cl_khr_il_program but does not expose "
                "clCreateProgramWithILKHR",
                FN);
  *res_program =
      (pi_program)ps->ext.clCreateProgramWithILKHR(ctx, il, length, &err);
  return CL_CHECK(clCreateProgramWithILKHR, err);
}

static pi_result ocl_piclProgramCreateWithSource(pi_context context,
                                                 pi_uint32 count,
                                                 const char **strings,
                                                 const size_t *lengths,
                                                 pi_program *ret_program) {
  cl_int err;
  REQUIRE(ret_program != NULL);
  *ret_program =
      (pi_program)ICD_CREATE(clCreateProgramWithSource, &err,
                             (cl_context)context, count, strings, lengths);
  return CL_CHECK(clCreateProgramWithSource, err);
}

/* The metadata entries (DPC++ program metadata) mean nothing to OpenCL. */
static pi_result ocl_piProgramCreateWithBinary(
    pi_context context, pi_uint32 num_devices, const pi_device *device_list,
    const size_t *lengths, const unsigned char **binaries,
    size_t num_metadata_entries, const pi_device_binary_property *metadata,
    pi_int32 *binary_status, pi_program *ret_program) {
  (void)num_metadata_entries;
  (void)metadata;
  cl_int err;
  REQUIRE(ret_program != NULL);
  *ret_program = (pi_program)ICD_CREATE(
      clCreateProgramWithBinary, &err, (cl_context)context, num_devices,
      (const cl_device_id *)device_list, lengths, binaries, binary_status);
  return CL_CHECK(clCreateProgramWithBinary, err);
}

static pi_result ocl_piProgramGetInfo(pi_program program,
                                      pi_program_info param_name,
                                      size_t param_value_size,
                                      void *param_value,
                                      size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  return INFO_PASS(&o, clGetProgramInfo, (cl_program)program);
}

static pi_result ocl_piProgramCompile(
    pi_program program, pi_uint32 num_devices, const pi_device *device_list,
    const char *options, pi_uint32 num_input_headers,
    const pi_program *input_headers, const char **header_include_names,
    void (*pfn_notify)(pi_program program, void *user_data), void *user_data) {
  pi_result r = CL_CALL(clCompileProgram, (cl_program)program, num_devices,
                        (const cl_device_id *)device_list, options,
                        num_input_headers, (const cl_program *)input_headers,
                        header_include_names, NULL, NULL);
  return finish_build(r, PI_ERROR_COMPILE_PROGRAM_FAILURE, (cl_program)program,
                      pfn_notify, user_data);
}

static pi_result
ocl_piProgramBuild(pi_program program, pi_uint32 num_devices,
                   const pi_device *device_list, const char *options,
                   void (*pfn_notify)(pi_program program, void *user_data),
                   void *user_data) {
  pi_result r = CL_CALL(clBuildProgram, (cl_program)program, num_devices,
                        (const cl_device_id *)device_list, options, NULL, NULL);
  return finish_build(r, PI_ERROR_BUILD_PROGRAM_FAILURE, (cl_program)program,
                      pfn_notify, user_data);
}

/* On a link failure *ret_program may still hold a program: its build log
 * tells why (it is added to the last error message). */
static pi_result
ocl_piProgramLink(pi_context context, pi_uint32 num_devices,
                  const pi_device *device_list, const char *options,
                  pi_uint32 num_input_programs,
                  const pi_program *input_programs,
                  void (*pfn_notify)(pi_program program, void *user_data),
                  void *user_data, pi_program *ret_program) {
  cl_int err;
  REQUIRE(ret_program != NULL);
  cl_program prog =
      ICD_CREATE(clLinkProgram, &err, (cl_context)context, num_devices,
                 (const cl_device_id *)device_list, options, num_input_programs,
                 (const cl_program *)input_programs, NULL, NULL);
  *ret_program = (pi_program)prog;
  return finish_build(CL_CHECK(clLinkProgram, err),
                      PI_ERROR_LINK_PROGRAM_FAILURE, prog, pfn_notify,
                      user_data);
}

static pi_result ocl_piProgramGetBuildInfo(pi_program program, pi_device device,
                                           pi_program_build_info param_name,
                                           size_t param_value_size,
                                           void *param_value,
                                           size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  return info_check(&o, "clGetProgramBuildInfo",
                    ICD_CALL(clGetProgramBuildInfo, (cl_program)program,
                             (cl_device_id)device, param_name, param_value_size,
                             param_value, param_value_size_ret));
}

static pi_result ocl_piProgramRetain(pi_program program) {
  return CL_CALL(clRetainProgram, (cl_program)program);
}

static pi_result ocl_piProgramRelease(pi_program program) {
  return CL_CALL(clReleaseProgram, (cl_program)program);
}

/* clSetProgramSpecializationConstant (OpenCL 2.2). OpenCL only honours it
 * for programs made from SPIR-V on devices that support it; every failure
 * keeps OpenCL's code, with a message. */
static pi_result
ocl_piextProgramSetSpecializationConstant(pi_program prog, pi_uint32 spec_id,
                                          size_t spec_size,
                                          const void *spec_value) {
  cl_context ctx = NULL;
  cl_device_id dev = NULL;
  const struct platform_state *ps = NULL;
  char what[512];
  pi_result r = program_context(FN, (cl_program)prog, &ctx);
  if (r == PI_SUCCESS)
    r = context_device(FN, ctx, NULL, &dev);
  if (r == PI_SUCCESS)
    r = device_state(FN, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  if (ps->version < 22)
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the platform of %s predates OpenCL 2.2, which added "
                "specialization constants; emulate them (pass the values as "
                "a kernel argument)",
                FN, describe_device(dev, what, sizeof what));
  cl_int err = ICD_CALL(clSetProgramSpecializationConstant, (cl_program)prog,
                        spec_id, spec_size, spec_value);
  if (err == CL_SUCCESS || err == ICD_MISSING_ENTRY)
    return check_cl(FN, "clSetProgramSpecializationConstant", err);
  return fail(pi_from_cl(err),
              "%s: clSetProgramSpecializationConstant(spec id %u) failed with "
              "%s (%d) on %s: OpenCL sets specialization constants only in "
              "programs made from SPIR-V on devices that support them; "
              "emulate them (pass the values as a kernel argument)",
              FN, (unsigned)spec_id, cl_error_name(err), (int)err,
              describe_device(dev, what, sizeof what));
}

static pi_result
ocl_piextProgramGetNativeHandle(pi_program program,
                                pi_native_handle *nativeHandle) {
  return native_of(FN, program, nativeHandle);
}

static pi_result ocl_piextProgramCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context,
    bool pluginOwnsNativeHandle, pi_program *program) {
  (void)context;
  pi_result r = adopt_native(FN, NATIVE_PROGRAM, nativeHandle,
                             pluginOwnsNativeHandle, program);
  if (r == PI_SUCCESS)
    *program = (pi_program)nativeHandle;
  return r;
}

/* ---- Kernels --------------------------------------------------------------
 */

static pi_result ocl_piKernelCreate(pi_program program, const char *kernel_name,
                                    pi_kernel *ret_kernel) {
  cl_int err;
  REQUIRE(ret_kernel != NULL);
  *ret_kernel = (pi_kernel)ICD_CREATE(clCreateKernel, &err, (cl_program)program,
                                      kernel_name);
  return CL_CHECK(clCreateKernel, err);
}

/* A NULL arg_value with a size sets a local-memory argument, as in OpenCL. */
static pi_result ocl_piKernelSetArg(pi_kernel kernel, pi_uint32 arg_index,
                                    size_t arg_size, const void *arg_value) {
  return CL_CALL(clSetKernelArg, (cl_kernel)kernel, arg_index, arg_size,
                 arg_value);
}

static pi_result ocl_piKernelGetInfo(pi_kernel kernel,
                                     pi_kernel_info param_name,
                                     size_t param_value_size, void *param_value,
                                     size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  return INFO_PASS(&o, clGetKernelInfo, (cl_kernel)kernel);
}

static pi_result ocl_piKernelGetGroupInfo(pi_kernel kernel, pi_device device,
                                          pi_kernel_group_info param_name,
                                          size_t param_value_size,
                                          void *param_value,
                                          size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  if (param_name == PI_KERNEL_GROUP_INFO_NUM_REGS)
    return no_opencl_answer(&o, (cl_device_id)device);
  return info_check(&o, "clGetKernelWorkGroupInfo",
                    ICD_CALL(clGetKernelWorkGroupInfo, (cl_kernel)kernel,
                             (cl_device_id)device, param_name, param_value_size,
                             param_value, param_value_size_ret));
}

/* The largest sub-group size of a device, 1 for devices without
 * sub-groups. */
static size_t max_sub_group_size(cl_device_id dev) {
  size_t sizes[64], n = 0, best = 1;
  if (device_has_ext(dev, "cl_intel_required_subgroup_size") &&
      ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_SUB_GROUP_SIZES_INTEL,
               sizeof sizes, sizes, &n) == CL_SUCCESS)
    for (size_t i = 0; i < n / sizeof sizes[0]; ++i)
      best = sizes[i] > best ? sizes[i] : best;
  return best;
}

/* Every value is a uint32_t in PI (a size_t in OpenCL). Devices without
 * sub-groups answer as DPC++ does: one sub-group per work-group, of the
 * device's largest sub-group size, none fixed by the kernel. */
static pi_result ocl_piKernelGetSubGroupInfo(
    pi_kernel kernel, pi_device device, pi_kernel_sub_group_info param_name,
    size_t input_value_size, const void *input_value, size_t param_value_size,
    void *param_value, size_t *param_value_size_ret) {
  cl_device_id dev = (cl_device_id)device;
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  const struct platform_state *ps = NULL;
  size_t local[16] = {0}, value = 0;
  pi_result r = device_state(FN, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  if (param_name == PI_KERNEL_MAX_SUB_GROUP_SIZE && !input_value) {
    /* OpenCL needs a local size: the device's largest, in one dimension. */
    cl_int err = ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_MAX_WORK_ITEM_SIZES,
                          sizeof local, local, NULL);
    if (err != CL_SUCCESS)
      return CL_CHECK(clGetDeviceInfo, err);
    input_value = local;
    input_value_size = sizeof local[0];
  }
  /* A kernel fixes its sub-group size only through the Intel extension. */
  int askable = param_name != PI_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL ||
                device_has_ext(dev, "cl_intel_required_subgroup_size");
  cl_int err = CL_INVALID_OPERATION; /* what OpenCL says without sub-groups */
  if (askable && ps->version >= 21 && device_version(dev) >= 21)
    err = ICD_CALL(clGetKernelSubGroupInfo, (cl_kernel)kernel, dev, param_name,
                   input_value_size, input_value, sizeof value, &value, NULL);
  else if (askable && ps->ext.clGetKernelSubGroupInfoKHR &&
           device_has_ext(dev, "cl_khr_subgroups"))
    err = ps->ext.clGetKernelSubGroupInfoKHR((cl_kernel)kernel, dev, param_name,
                                             input_value_size, input_value,
                                             sizeof value, &value, NULL);
  if (err == CL_INVALID_OPERATION) {
    err = CL_SUCCESS;
    value = param_name == PI_KERNEL_MAX_NUM_SUB_GROUPS ? 1
            : param_name == PI_KERNEL_MAX_SUB_GROUP_SIZE
                ? max_sub_group_size(dev)
                : 0;
  }
  if (err != CL_SUCCESS)
    return info_check(&o, "clGetKernelSubGroupInfo", err);
  return put_u32(&o, value > UINT32_MAX ? UINT32_MAX : (uint32_t)value);
}

static pi_result ocl_piKernelRetain(pi_kernel kernel) {
  return CL_CALL(clRetainKernel, (cl_kernel)kernel);
}

static pi_result ocl_piKernelRelease(pi_kernel kernel) {
  return CL_CALL(clReleaseKernel, (cl_kernel)kernel);
}

/* The device of a kernel's context that has `ext` (see context_device). */
static pi_result kernel_device(const char *fn, cl_kernel kernel,
                               const char *ext, cl_device_id *dev) {
  cl_context ctx = NULL;
  cl_int err = ICD_CALL(clGetKernelInfo, kernel, CL_KERNEL_CONTEXT, sizeof ctx,
                        &ctx, NULL);
  if (err != CL_SUCCESS)
    return check_cl(fn, "clGetKernelInfo", err);
  return context_device(fn, ctx, ext, dev);
}

/* arg_value points at the USM pointer, as in DPC++ (arg_size is its size). */
static pi_result ocl_piextKernelSetArgPointer(pi_kernel kernel,
                                              pi_uint32 arg_index,
                                              size_t arg_size,
                                              const void *arg_value) {
  cl_device_id dev = NULL;
  const struct platform_state *ps = NULL;
  void *ptr = NULL;
  (void)arg_size;
  pi_result r = kernel_device(FN, (cl_kernel)kernel, USM_EXT, &dev);
  if (r != PI_SUCCESS)
    return r;
  NEED_USM(dev, ps, clSetKernelArgMemPointerINTEL);
  if (arg_value)
    memcpy(&ptr, arg_value, sizeof ptr);
  return EXT_CALL(ps, clSetKernelArgMemPointerINTEL, (cl_kernel)kernel,
                  arg_index, ptr);
}

/* PI_USM_INDIRECT_ACCESS lets a kernel reach every USM allocation; without
 * USM there is nothing to reach, so it succeeds doing nothing.
 * PI_EXT_KERNEL_EXEC_INFO_CACHE_CONFIG is a hint OpenCL has no knob for. */
static pi_result ocl_piKernelSetExecInfo(pi_kernel kernel,
                                         pi_kernel_exec_info value_name,
                                         size_t param_value_size,
                                         const void *param_value) {
  cl_kernel k = (cl_kernel)kernel;
  cl_device_id dev = NULL;
  const struct platform_state *ps = NULL;
  pi_result r;
  switch (value_name) {
  case PI_USM_INDIRECT_ACCESS: {
    REQUIRE(param_value != NULL && param_value_size >= sizeof(pi_bool));
    pi_bool on;
    memcpy(&on, param_value, sizeof on);
    if ((r = kernel_device(FN, k, USM_EXT, &dev)) != PI_SUCCESS ||
        !device_has_ext(dev, USM_EXT))
      return r;
    static const cl_kernel_exec_info kinds[] = {
        CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL,
        CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL,
        CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL};
    cl_bool value = on ? CL_TRUE : CL_FALSE;
    for (size_t i = 0; i < 3 && r == PI_SUCCESS; ++i)
      r = CL_CALL(clSetKernelExecInfo, k, kinds[i], sizeof value, &value);
    return r;
  }
  case PI_USM_PTRS:
    if ((r = kernel_device(FN, k, USM_EXT, &dev)) != PI_SUCCESS)
      return r;
    NEED_USM(dev, ps, clSetKernelArgMemPointerINTEL);
    return CL_CALL(clSetKernelExecInfo, k, CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL,
                   param_value_size, param_value);
  case PI_EXT_KERNEL_EXEC_INFO_CACHE_CONFIG:
    return PI_SUCCESS;
  default:
    return CL_CALL(clSetKernelExecInfo, k, value_name, param_value_size,
                   param_value);
  }
}

static pi_result ocl_piextKernelCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, pi_program program,
    bool pluginOwnsNativeHandle, pi_kernel *kernel) {
  (void)context;
  (void)program;
  pi_result r = adopt_native(FN, NATIVE_KERNEL, nativeHandle,
                             pluginOwnsNativeHandle, kernel);
  if (r == PI_SUCCESS)
    *kernel = (pi_kernel)nativeHandle;
  return r;
}

static pi_result
ocl_piextKernelGetNativeHandle(pi_kernel kernel,
                               pi_native_handle *nativeHandle) {
  return native_of(FN, kernel, nativeHandle);
}

/* OpenCL promises nothing about work-groups running at the same time, so
 * the only cooperative group count that is always safe is 1 (0 when one
 * group of this size does not fit the device). A warning with PI_SUCCESS
 * says so through piPluginGetLastError. */
static pi_result ocl_piextKernelSuggestMaxCooperativeGroupCount(
    pi_kernel kernel, size_t local_work_size, size_t dynamic_shared_memory_size,
    pi_uint32 *group_count_ret) {
  cl_device_id dev = NULL;
  size_t max_group = 0;
  cl_ulong kernel_local = 0, device_local = 0;
  REQUIRE(group_count_ret != NULL);
  pi_result r = kernel_device(FN, (cl_kernel)kernel, NULL, &dev);
  if (r == PI_SUCCESS)
    r = CL_CALL(clGetKernelWorkGroupInfo, (cl_kernel)kernel, dev,
                CL_KERNEL_WORK_GROUP_SIZE, sizeof max_group, &max_group, NULL);
  if (r == PI_SUCCESS)
    r = CL_CALL(clGetKernelWorkGroupInfo, (cl_kernel)kernel, dev,
                CL_KERNEL_LOCAL_MEM_SIZE, sizeof kernel_local, &kernel_local,
                NULL);
  if (r == PI_SUCCESS)
    r = CL_CALL(clGetDeviceInfo, dev, CL_DEVICE_LOCAL_MEM_SIZE,
                sizeof device_local, &device_local, NULL);
  if (r != PI_SUCCESS)
    return r;
  int fits = local_work_size <= max_group &&
             kernel_local + dynamic_shared_memory_size <= device_local;
  *group_count_ret = fits ? 1 : 0;
  return fail(PI_SUCCESS,
              "%s: OpenCL does not guarantee concurrent work-groups; "
              "suggesting %u cooperative group(s)",
              FN, (unsigned)*group_count_ret);
}

/* The access property is a hint OpenCL takes from the kernel itself. */
static pi_result
ocl_piextKernelSetArgMemObj(pi_kernel kernel, pi_uint32 arg_index,
                            const pi_mem_obj_property *arg_properties,
                            const pi_mem *arg_value) {
  (void)arg_properties;
  return CL_CALL(clSetKernelArg, (cl_kernel)kernel, arg_index, sizeof(cl_mem),
                 arg_value);
}

static pi_result ocl_piextKernelSetArgSampler(pi_kernel kernel,
                                              pi_uint32 arg_index,
                                              const pi_sampler *arg_value) {
  return CL_CALL(clSetKernelArg, (cl_kernel)kernel, arg_index,
                 sizeof(cl_sampler), arg_value);
}

/* ---- Events ---------------------------------------------------------------
 */

/* A user event already complete, as PI asks (DPC++ PI 11.15). */
static pi_result ocl_piEventCreate(pi_context context, pi_event *ret_event) {
  cl_int err;
  REQUIRE(ret_event != NULL);
  cl_event ev = ICD_CREATE(clCreateUserEvent, &err, (cl_context)context);
  *ret_event = (pi_event)ev;
  pi_result r = CL_CHECK(clCreateUserEvent, err);
  if (r == PI_SUCCESS &&
      (r = CL_CALL(clSetUserEventStatus, ev, CL_COMPLETE)) != PI_SUCCESS) {
    ICD_CALL(clReleaseEvent, ev);
    *ret_event = NULL;
  }
  return r;
}

static pi_result ocl_piEventGetInfo(pi_event event, pi_event_info param_name,
                                    size_t param_value_size, void *param_value,
                                    size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  return INFO_PASS(&o, clGetEventInfo, (cl_event)event);
}

static pi_result ocl_piEventGetProfilingInfo(pi_event event,
                                             pi_profiling_info param_name,
                                             size_t param_value_size,
                                             void *param_value,
                                             size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  return INFO_PASS(&o, clGetEventProfilingInfo, (cl_event)event);
}

/* Waiting for no events is done at once (OpenCL calls it invalid). */
static pi_result ocl_piEventsWait(pi_uint32 num_events,
                                  const pi_event *event_list) {
  if (num_events == 0)
    return PI_SUCCESS;
  return check_cl(
      FN, "clWaitForEvents",
      icd_wait_for_events(num_events, (const cl_event *)event_list));
}

static void CL_CALLBACK event_reached(cl_event ev, cl_int status, void *data) {
  struct callback *cb = data;
  cb->fn.event((pi_event)ev, status, cb->user_data);
  free(cb);
}

static pi_result ocl_piEventSetCallback(
    pi_event event, pi_int32 command_exec_callback_type,
    void (*pfn_notify)(pi_event event, pi_int32 event_command_status,
                       void *user_data),
    void *user_data) {
  REQUIRE(pfn_notify != NULL);
  struct callback *cb = malloc(sizeof *cb);
  if (!cb)
    return fail(PI_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", FN);
  cb->fn.event = pfn_notify;
  cb->user_data = user_data;
  pi_result r = CL_CALL(clSetEventCallback, (cl_event)event,
                        command_exec_callback_type, event_reached, cb);
  if (r != PI_SUCCESS)
    free(cb);
  return r;
}

/* Setting PI_EVENT_COMPLETE on a user event that is already complete (as
 * piEventCreate makes them) succeeds; OpenCL would refuse it. */
static pi_result ocl_piEventSetStatus(pi_event event,
                                      pi_int32 execution_status) {
  cl_event ev = (cl_event)event;
  cl_int status = CL_QUEUED;
  cl_command_type type = 0;
  if (execution_status == CL_COMPLETE &&
      ICD_CALL(clGetEventInfo, ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
               sizeof status, &status, NULL) == CL_SUCCESS &&
      ICD_CALL(clGetEventInfo, ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type,
               NULL) == CL_SUCCESS &&
      status == CL_COMPLETE && type == CL_COMMAND_USER)
    return PI_SUCCESS;
  return CL_CALL(clSetUserEventStatus, ev, execution_status);
}

static pi_result ocl_piEventRetain(pi_event event) {
  return CL_CALL(clRetainEvent, (cl_event)event);
}

static pi_result ocl_piEventRelease(pi_event event) {
  return CL_CALL(clReleaseEvent, (cl_event)event);
}

static pi_result ocl_piextEventGetNativeHandle(pi_event event,
                                               pi_native_handle *nativeHandle) {
  return native_of(FN, event, nativeHandle);
}

static pi_result
ocl_piextEventCreateWithNativeHandle(pi_native_handle nativeHandle,
                                     pi_context context, bool ownNativeHandle,
                                     pi_event *event) {
  (void)context;
  pi_result r =
      adopt_native(FN, NATIVE_EVENT, nativeHandle, ownNativeHandle, event);
  if (r == PI_SUCCESS)
    *event = (pi_event)nativeHandle;
  return r;
}

/* ---- Samplers -------------------------------------------------------------
 */

/* Properties default as in OpenCL: normalized coordinates, clamp, nearest.
 * A mipmap filter mode needs cl_khr_mipmap_image and OpenCL 2.0. */
static pi_result
ocl_piSamplerCreate(pi_context context,
                    const pi_sampler_properties *sampler_properties,
                    pi_sampler *result_sampler) {
  cl_context ctx = (cl_context)context;
  cl_sampler_properties props[9] = {CL_SAMPLER_NORMALIZED_COORDS,
                                    CL_TRUE,
                                    CL_SAMPLER_ADDRESSING_MODE,
                                    CL_ADDRESS_CLAMP,
                                    CL_SAMPLER_FILTER_MODE,
                                    CL_FILTER_NEAREST,
                                    0,
                                    0,
                                    0};
  cl_int err;
  REQUIRE(result_sampler != NULL);
  *result_sampler = NULL;
  for (size_t i = 0; sampler_properties && sampler_properties[i]; i += 2) {
    pi_sampler_properties key = sampler_properties[i];
    cl_sampler_properties value = sampler_properties[i + 1];
    if (key == PI_SAMPLER_PROPERTIES_NORMALIZED_COORDS)
      props[1] = value ? CL_TRUE : CL_FALSE;
    else if (key == PI_SAMPLER_PROPERTIES_ADDRESSING_MODE)
      props[3] = value;
    else if (key == PI_SAMPLER_PROPERTIES_FILTER_MODE)
      props[5] = value;
    else if (key == PI_SAMPLER_PROPERTIES_MIP_FILTER_MODE) {
      props[6] = CL_SAMPLER_MIP_FILTER_MODE_KHR;
      props[7] = value;
    } else
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown sampler property 0x%llx",
                  FN, (unsigned long long)key);
  }
  cl_device_id dev = NULL;
  const struct platform_state *ps = NULL;
  pi_result r = context_device(FN, ctx, NULL, &dev);
  if (r == PI_SUCCESS)
    r = device_state(FN, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  if (props[6] &&
      (ps->version < 20 || !device_has_ext(dev, "cl_khr_mipmap_image"))) {
    char what[512];
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: %s has no mipmapped images (cl_khr_mipmap_image); leave "
                "out PI_SAMPLER_PROPERTIES_MIP_FILTER_MODE",
                FN, describe_device(dev, what, sizeof what));
  }
  if (ps->version >= 20) {
    *result_sampler =
        (pi_sampler)ICD_CREATE(clCreateSamplerWithProperties, &err, ctx, props);
    return CL_CHECK(clCreateSamplerWithProperties, err);
  }
  *result_sampler = (pi_sampler)ICD_CREATE(
      clCreateSampler, &err, ctx, (cl_bool)props[1],
      (cl_addressing_mode)props[3], (cl_filter_mode)props[5]);
  return CL_CHECK(clCreateSampler, err);
}

static pi_result ocl_piSamplerGetInfo(pi_sampler sampler,
                                      pi_sampler_info param_name,
                                      size_t param_value_size,
                                      void *param_value,
                                      size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  return INFO_PASS(&o, clGetSamplerInfo, (cl_sampler)sampler);
}

static pi_result ocl_piSamplerRetain(pi_sampler sampler) {
  return CL_CALL(clRetainSampler, (cl_sampler)sampler);
}

static pi_result ocl_piSamplerRelease(pi_sampler sampler) {
  return CL_CALL(clReleaseSampler, (cl_sampler)sampler);
}

/* ---- Enqueue --------------------------------------------------------------
 */

static pi_result launch(const char *fn, pi_queue queue, pi_kernel kernel,
                        pi_uint32 work_dim, const size_t *offset,
                        const size_t *global, const size_t *local,
                        pi_uint32 nwait, const pi_event *wait,
                        pi_event *event) {
  return check_cl(fn, "clEnqueueNDRangeKernel",
                  ICD_CALL(clEnqueueNDRangeKernel, (cl_command_queue)queue,
                           (cl_kernel)kernel, work_dim, offset, global, local,
                           WAIT_ARGS(nwait, wait, event)));
}

static pi_result ocl_piEnqueueKernelLaunch(
    pi_queue queue, pi_kernel kernel, pi_uint32 work_dim,
    const size_t *global_work_offset, const size_t *global_work_size,
    const size_t *local_work_size, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return launch(FN, queue, kernel, work_dim, global_work_offset,
                global_work_size, local_work_size, num_events_in_wait_list,
                event_wait_list, event);
}

/* An ordinary launch: OpenCL has no cooperative launch, and
 * piextKernelSuggestMaxCooperativeGroupCount suggests one work-group. */
static pi_result ocl_piextEnqueueCooperativeKernelLaunch(
    pi_queue queue, pi_kernel kernel, pi_uint32 work_dim,
    const size_t *global_work_offset, const size_t *global_work_size,
    const size_t *local_work_size, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return launch(FN, queue, kernel, work_dim, global_work_offset,
                global_work_size, local_work_size, num_events_in_wait_list,
                event_wait_list, event);
}

static pi_result ocl_piEnqueueEventsWait(pi_queue command_queue,
                                         pi_uint32 num_events_in_wait_list,
                                         const pi_event *event_wait_list,
                                         pi_event *event) {
  return CL_CALL(clEnqueueMarkerWithWaitList, (cl_command_queue)command_queue,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

static pi_result ocl_piEnqueueEventsWaitWithBarrier(
    pi_queue command_queue, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return CL_CALL(clEnqueueBarrierWithWaitList, (cl_command_queue)command_queue,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

static pi_result
ocl_piEnqueueMemBufferRead(pi_queue queue, pi_mem buffer, pi_bool blocking_read,
                           size_t offset, size_t size, void *ptr,
                           pi_uint32 num_events_in_wait_list,
                           const pi_event *event_wait_list, pi_event *event) {
  return CL_CALL(clEnqueueReadBuffer, (cl_command_queue)queue, (cl_mem)buffer,
                 blocking_read, offset, size, ptr,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

static pi_result
ocl_piEnqueueMemBufferWrite(pi_queue command_queue, pi_mem buffer,
                            pi_bool blocking_write, size_t offset, size_t size,
                            const void *ptr, pi_uint32 num_events_in_wait_list,
                            const pi_event *event_wait_list, pi_event *event) {
  return CL_CALL(clEnqueueWriteBuffer, (cl_command_queue)command_queue,
                 (cl_mem)buffer, blocking_write, offset, size, ptr,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

/* The three coordinates of a rectangle or image offset or region. */
#define XYZ(s, a, b, c)                                                        \
  { (s)->a, (s)->b, (s)->c }

/* clEnqueueReadBufferRect, or clEnqueueWriteBufferRect when `write` (then
 * `ptr` is only read). pitches: buffer row, buffer slice, host row, host
 * slice. */
static pi_result
buffer_rect(const char *fn, int write, pi_queue queue, pi_mem buffer,
            pi_bool blocking, pi_buff_rect_offset buffer_offset,
            pi_buff_rect_offset host_offset, pi_buff_rect_region region,
            const size_t pitches[4], void *ptr, pi_uint32 nwait,
            const pi_event *wait, pi_event *event) {
  if (!buffer_offset || !host_offset || !region)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the offsets and the region must not be NULL", fn);
  const size_t b[3] = XYZ(buffer_offset, x_bytes, y_scalar, z_scalar);
  const size_t h[3] = XYZ(host_offset, x_bytes, y_scalar, z_scalar);
  const size_t r[3] = XYZ(region, width_bytes, height_scalar, depth_scalar);
  cl_command_queue q = (cl_command_queue)queue;
  if (write)
    return check_cl(fn, "clEnqueueWriteBufferRect",
                    ICD_CALL(clEnqueueWriteBufferRect, q, (cl_mem)buffer,
                             blocking, b, h, r, pitches[0], pitches[1],
                             pitches[2], pitches[3], ptr,
                             WAIT_ARGS(nwait, wait, event)));
  return check_cl(fn, "clEnqueueReadBufferRect",
                  ICD_CALL(clEnqueueReadBufferRect, q, (cl_mem)buffer, blocking,
                           b, h, r, pitches[0], pitches[1], pitches[2],
                           pitches[3], ptr, WAIT_ARGS(nwait, wait, event)));
}

static pi_result ocl_piEnqueueMemBufferReadRect(
    pi_queue command_queue, pi_mem buffer, pi_bool blocking_read,
    pi_buff_rect_offset buffer_offset, pi_buff_rect_offset host_offset,
    pi_buff_rect_region region, size_t buffer_row_pitch,
    size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
    void *ptr, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  const size_t pitches[4] = {buffer_row_pitch, buffer_slice_pitch,
                             host_row_pitch, host_slice_pitch};
  return buffer_rect(FN, 0, command_queue, buffer, blocking_read, buffer_offset,
                     host_offset, region, pitches, ptr, num_events_in_wait_list,
                     event_wait_list, event);
}

static pi_result ocl_piEnqueueMemBufferWriteRect(
    pi_queue command_queue, pi_mem buffer, pi_bool blocking_write,
    pi_buff_rect_offset buffer_offset, pi_buff_rect_offset host_offset,
    pi_buff_rect_region region, size_t buffer_row_pitch,
    size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
    const void *ptr, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  const size_t pitches[4] = {buffer_row_pitch, buffer_slice_pitch,
                             host_row_pitch, host_slice_pitch};
  return buffer_rect(FN, 1, command_queue, buffer, blocking_write,
                     buffer_offset, host_offset, region, pitches, (void *)ptr,
                     num_events_in_wait_list, event_wait_list, event);
}

static pi_result
ocl_piEnqueueMemBufferCopy(pi_queue command_queue, pi_mem src_buffer,
                           pi_mem dst_buffer, size_t src_offset,
                           size_t dst_offset, size_t size,
                           pi_uint32 num_events_in_wait_list,
                           const pi_event *event_wait_list, pi_event *event) {
  return CL_CALL(clEnqueueCopyBuffer, (cl_command_queue)command_queue,
                 (cl_mem)src_buffer, (cl_mem)dst_buffer, src_offset, dst_offset,
                 size,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

static pi_result ocl_piEnqueueMemBufferCopyRect(
    pi_queue command_queue, pi_mem src_buffer, pi_mem dst_buffer,
    pi_buff_rect_offset src_origin, pi_buff_rect_offset dst_origin,
    pi_buff_rect_region region, size_t src_row_pitch, size_t src_slice_pitch,
    size_t dst_row_pitch, size_t dst_slice_pitch,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  REQUIRE(src_origin && dst_origin && region);
  const size_t s[3] = XYZ(src_origin, x_bytes, y_scalar, z_scalar);
  const size_t d[3] = XYZ(dst_origin, x_bytes, y_scalar, z_scalar);
  const size_t r[3] = XYZ(region, width_bytes, height_scalar, depth_scalar);
  return CL_CALL(clEnqueueCopyBufferRect, (cl_command_queue)command_queue,
                 (cl_mem)src_buffer, (cl_mem)dst_buffer, s, d, r, src_row_pitch,
                 src_slice_pitch, dst_row_pitch, dst_slice_pitch,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

static pi_result ocl_piEnqueueMemBufferFill(pi_queue command_queue,
                                            pi_mem buffer, const void *pattern,
                                            size_t pattern_size, size_t offset,
                                            size_t size,
                                            pi_uint32 num_events_in_wait_list,
                                            const pi_event *event_wait_list,
                                            pi_event *event) {
  return CL_CALL(clEnqueueFillBuffer, (cl_command_queue)command_queue,
                 (cl_mem)buffer, pattern, pattern_size, offset, size,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

/* clEnqueueReadImage, or clEnqueueWriteImage when `write` (then `ptr` is
 * only read). */
static pi_result image_rw(const char *fn, int write, pi_queue queue,
                          pi_mem image, pi_bool blocking,
                          pi_image_offset origin, pi_image_region region,
                          size_t row_pitch, size_t slice_pitch, void *ptr,
                          pi_uint32 nwait, const pi_event *wait,
                          pi_event *event) {
  if (!origin || !region)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the origin and the region must not be NULL", fn);
  const size_t o[3] = XYZ(origin, x, y, z);
  const size_t r[3] = XYZ(region, width, height, depth);
  cl_command_queue q = (cl_command_queue)queue;
  if (write)
    return check_cl(fn, "clEnqueueWriteImage",
                    ICD_CALL(clEnqueueWriteImage, q, (cl_mem)image, blocking, o,
                             r, row_pitch, slice_pitch, ptr,
                             WAIT_ARGS(nwait, wait, event)));
  return check_cl(fn, "clEnqueueReadImage",
                  ICD_CALL(clEnqueueReadImage, q, (cl_mem)image, blocking, o, r,
                           row_pitch, slice_pitch, ptr,
                           WAIT_ARGS(nwait, wait, event)));
}

static pi_result ocl_piEnqueueMemImageRead(
    pi_queue command_queue, pi_mem image, pi_bool blocking_read,
    pi_image_offset origin, pi_image_region region, size_t row_pitch,
    size_t slice_pitch, void *ptr, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return image_rw(FN, 0, command_queue, image, blocking_read, origin, region,
                  row_pitch, slice_pitch, ptr, num_events_in_wait_list,
                  event_wait_list, event);
}

static pi_result
ocl_piEnqueueMemImageWrite(pi_queue command_queue, pi_mem image,
                           pi_bool blocking_write, pi_image_offset origin,
                           pi_image_region region, size_t input_row_pitch,
                           size_t input_slice_pitch, const void *ptr,
                           pi_uint32 num_events_in_wait_list,
                           const pi_event *event_wait_list, pi_event *event) {
  return image_rw(FN, 1, command_queue, image, blocking_write, origin, region,
                  input_row_pitch, input_slice_pitch, (void *)ptr,
                  num_events_in_wait_list, event_wait_list, event);
}

static pi_result
ocl_piEnqueueMemImageCopy(pi_queue command_queue, pi_mem src_image,
                          pi_mem dst_image, pi_image_offset src_origin,
                          pi_image_offset dst_origin, pi_image_region region,
                          pi_uint32 num_events_in_wait_list,
                          const pi_event *event_wait_list, pi_event *event) {
  REQUIRE(src_origin && dst_origin && region);
  const size_t s[3] = XYZ(src_origin, x, y, z);
  const size_t d[3] = XYZ(dst_origin, x, y, z);
  const size_t r[3] = XYZ(region, width, height, depth);
  return CL_CALL(clEnqueueCopyImage, (cl_command_queue)command_queue,
                 (cl_mem)src_image, (cl_mem)dst_image, s, d, r,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

static pi_result ocl_piEnqueueMemImageFill(pi_queue command_queue, pi_mem image,
                                           const void *fill_color,
                                           const size_t *origin,
                                           const size_t *region,
                                           pi_uint32 num_events_in_wait_list,
                                           const pi_event *event_wait_list,
                                           pi_event *event) {
  return CL_CALL(clEnqueueFillImage, (cl_command_queue)command_queue,
                 (cl_mem)image, fill_color, origin, region,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

static pi_result ocl_piEnqueueMemBufferMap(pi_queue command_queue,
                                           pi_mem buffer, pi_bool blocking_map,
                                           pi_map_flags map_flags,
                                           size_t offset, size_t size,
                                           pi_uint32 num_events_in_wait_list,
                                           const pi_event *event_wait_list,
                                           pi_event *event, void **ret_map) {
  const pi_map_flags known =
      PI_MAP_READ | PI_MAP_WRITE | PI_MAP_WRITE_INVALIDATE_REGION;
  cl_map_flags cl_flags = 0;
  cl_int err;
  REQUIRE(ret_map != NULL);
  *ret_map = NULL;
  if (map_flags & ~known)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown map flags 0x%llx", FN,
                (unsigned long long)(map_flags & ~known));
  if (map_flags & PI_MAP_READ)
    cl_flags |= CL_MAP_READ;
  if (map_flags & PI_MAP_WRITE)
    cl_flags |= CL_MAP_WRITE;
  if (map_flags & PI_MAP_WRITE_INVALIDATE_REGION)
    cl_flags |= CL_MAP_WRITE_INVALIDATE_REGION;
  *ret_map =
      ICD_CREATE(clEnqueueMapBuffer, &err, (cl_command_queue)command_queue,
                 (cl_mem)buffer, blocking_map, cl_flags, offset, size,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
  return CL_CHECK(clEnqueueMapBuffer, err);
}

static pi_result ocl_piEnqueueMemUnmap(pi_queue command_queue, pi_mem memobj,
                                       void *mapped_ptr,
                                       pi_uint32 num_events_in_wait_list,
                                       const pi_event *event_wait_list,
                                       pi_event *event) {
  return CL_CALL(clEnqueueUnmapMemObject, (cl_command_queue)command_queue,
                 (cl_mem)memobj, mapped_ptr,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

/* ---- USM -------------------------------------------------------------------
 * Through cl_intel_unified_shared_memory, where the device lists it and its
 * platform exposes the entry points; elsewhere every USM call fails with
 * PI_ERROR_INVALID_OPERATION and a message saying to use buffers. */

enum usm_kind { USM_HOST, USM_DEVICE, USM_SHARED };

/* The OpenCL USM allocation properties for a PI list. PI_MEM_ALLOC_FLAGS
 * bits pass (the read-only hint has no OpenCL bit and is dropped); a buffer
 * location passes where the device has cl_intel_mem_alloc_buffer_location
 * and is dropped elsewhere, where it means nothing. */
static pi_result usm_properties(const char *fn, cl_device_id dev,
                                const pi_usm_mem_properties *in,
                                cl_mem_properties_intel out[5]) {
  const pi_usm_mem_properties flag_bits =
      PI_MEM_ALLOC_WRTITE_COMBINED | PI_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE |
      PI_MEM_ALLOC_INITIAL_PLACEMENT_HOST;
  size_t n = 0;
  for (size_t i = 0; in && in[i]; i += 2) {
    if (n > 2)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: a USM property appears more than once", fn);
    if (in[i] == PI_MEM_ALLOC_FLAGS) {
      if (in[i + 1] & ~(flag_bits | PI_MEM_ALLOC_DEVICE_READ_ONLY))
        return fail(PI_ERROR_INVALID_VALUE,
                    "%s: unknown PI_MEM_ALLOC_FLAGS bits 0x%llx", fn,
                    (unsigned long long)in[i + 1]);
      out[n++] = CL_MEM_ALLOC_FLAGS_INTEL;
      out[n++] = in[i + 1] & flag_bits;
    } else if (in[i] == PI_MEM_USM_ALLOC_BUFFER_LOCATION) {
      if (device_has_ext(dev, "cl_intel_mem_alloc_buffer_location")) {
        out[n++] = CL_MEM_ALLOC_BUFFER_LOCATION_INTEL;
        out[n++] = in[i + 1];
      }
    } else {
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown USM property 0x%llx", fn,
                  (unsigned long long)in[i]);
    }
  }
  out[n] = 0;
  return PI_SUCCESS;
}

static pi_result usm_alloc(const char *fn, enum usm_kind kind,
                           void **result_ptr, pi_context context,
                           pi_device device, pi_usm_mem_properties *properties,
                           size_t size, pi_uint32 alignment) {
  static const char *const entries[] = {
      "clHostMemAllocINTEL", "clDeviceMemAllocINTEL", "clSharedMemAllocINTEL"};
  cl_context ctx = (cl_context)context;
  cl_device_id dev = (cl_device_id)device;
  const struct platform_state *ps = NULL;
  cl_mem_properties_intel props[5];
  cl_int err = CL_SUCCESS;
  if (!result_ptr)
    return fail(PI_ERROR_INVALID_VALUE, "%s: result_ptr is NULL", fn);
  *result_ptr = NULL;
  pi_result r =
      kind == USM_HOST ? context_device(fn, ctx, USM_EXT, &dev) : PI_SUCCESS;
  if (r == PI_SUCCESS)
    r = device_state(fn, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  int present = kind == USM_HOST     ? ps->ext.clHostMemAllocINTEL != NULL
                : kind == USM_DEVICE ? ps->ext.clDeviceMemAllocINTEL != NULL
                                     : ps->ext.clSharedMemAllocINTEL != NULL;
  r = need_feature(fn, dev, USM_EXT, entries[kind], present, USM_HINT);
  if (r == PI_SUCCESS)
    r = usm_properties(fn, dev, properties, props);
  if (r != PI_SUCCESS)
    return r;
  if (kind == USM_HOST)
    *result_ptr =
        ps->ext.clHostMemAllocINTEL(ctx, props, size, alignment, &err);
  else if (kind == USM_DEVICE)
    *result_ptr =
        ps->ext.clDeviceMemAllocINTEL(ctx, dev, props, size, alignment, &err);
  else
    *result_ptr =
        ps->ext.clSharedMemAllocINTEL(ctx, dev, props, size, alignment, &err);
  return check_cl(fn, entries[kind], err);
}

static pi_result ocl_piextUSMHostAlloc(void **result_ptr, pi_context context,
                                       pi_usm_mem_properties *properties,
                                       size_t size, pi_uint32 alignment) {
  return usm_alloc(FN, USM_HOST, result_ptr, context, NULL, properties, size,
                   alignment);
}

static pi_result ocl_piextUSMDeviceAlloc(void **result_ptr, pi_context context,
                                         pi_device device,
                                         pi_usm_mem_properties *properties,
                                         size_t size, pi_uint32 alignment) {
  return usm_alloc(FN, USM_DEVICE, result_ptr, context, device, properties,
                   size, alignment);
}

static pi_result ocl_piextUSMSharedAlloc(void **result_ptr, pi_context context,
                                         pi_device device,
                                         pi_usm_mem_properties *properties,
                                         size_t size, pi_uint32 alignment) {
  return usm_alloc(FN, USM_SHARED, result_ptr, context, device, properties,
                   size, alignment);
}

/* The USM-capable device of a context, with its platform state. */
static pi_result context_usm(const char *fn, pi_context context,
                             cl_device_id *dev,
                             const struct platform_state **ps) {
  pi_result r = context_device(fn, (cl_context)context, USM_EXT, dev);
  if (r == PI_SUCCESS)
    r = device_state(fn, *dev, ps);
  return r;
}

/* A blocking free, so that no kernel still running can touch the memory. */
static pi_result ocl_piextUSMFree(pi_context context, void *ptr) {
  cl_device_id dev = NULL;
  const struct platform_state *ps = NULL;
  pi_result r = context_usm(FN, context, &dev, &ps);
  if (r == PI_SUCCESS)
    r = need_feature(FN, dev, USM_EXT, "clMemBlockingFreeINTEL",
                     ps->ext.clMemBlockingFreeINTEL || ps->ext.clMemFreeINTEL,
                     USM_HINT);
  if (r != PI_SUCCESS)
    return r;
  if (ps->ext.clMemBlockingFreeINTEL)
    return EXT_CALL(ps, clMemBlockingFreeINTEL, (cl_context)context, ptr);
  return EXT_CALL(ps, clMemFreeINTEL, (cl_context)context, ptr);
}

/* The device of a queue, with its platform state. */
static pi_result queue_state(const char *fn, pi_queue queue, cl_device_id *dev,
                             const struct platform_state **ps) {
  pi_result r = queue_device(fn, (cl_command_queue)queue, dev);
  if (r == PI_SUCCESS)
    r = device_state(fn, *dev, ps);
  return r;
}

/* The USM platform state of a queue's device, with the entry point `entry`. */
#define QUEUE_USM(queue, ps, entry)                                            \
  do {                                                                         \
    cl_device_id qdev_;                                                        \
    pi_result qr_ = queue_device(FN, (cl_command_queue)(queue), &qdev_);       \
    if (qr_ != PI_SUCCESS)                                                     \
      return qr_;                                                              \
    NEED_USM(qdev_, ps, entry);                                                \
  } while (0)

static pi_result ocl_piextUSMEnqueueFill(pi_queue queue, void *ptr,
                                         const void *pattern,
                                         size_t patternSize, size_t count,
                                         pi_uint32 num_events_in_waitlist,
                                         const pi_event *events_waitlist,
                                         pi_event *event) {
  const struct platform_state *ps = NULL;
  QUEUE_USM(queue, ps, clEnqueueMemFillINTEL);
  return EXT_CALL(ps, clEnqueueMemFillINTEL, (cl_command_queue)queue, ptr,
                  pattern, patternSize, count,
                  WAIT_ARGS(num_events_in_waitlist, events_waitlist, event));
}

static pi_result ocl_piextUSMEnqueueMemcpy(pi_queue queue, pi_bool blocking,
                                           void *dst_ptr, const void *src_ptr,
                                           size_t size,
                                           pi_uint32 num_events_in_waitlist,
                                           const pi_event *events_waitlist,
                                           pi_event *event) {
  const struct platform_state *ps = NULL;
  QUEUE_USM(queue, ps, clEnqueueMemcpyINTEL);
  return EXT_CALL(ps, clEnqueueMemcpyINTEL, (cl_command_queue)queue, blocking,
                  dst_ptr, src_ptr, size,
                  WAIT_ARGS(num_events_in_waitlist, events_waitlist, event));
}

/* A hint: clEnqueueMigrateMemINTEL where the platform has it, else a marker
 * standing for the (empty) migration. */
static pi_result ocl_piextUSMEnqueuePrefetch(pi_queue queue, const void *ptr,
                                             size_t size,
                                             pi_usm_migration_flags flags,
                                             pi_uint32 num_events_in_waitlist,
                                             const pi_event *events_waitlist,
                                             pi_event *event) {
  const struct platform_state *ps = NULL;
  if (flags & ~PI_USM_MIGRATION_TBD0)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown migration flags 0x%llx",
                FN, (unsigned long long)flags);
  QUEUE_USM(queue, ps, clEnqueueMemcpyINTEL); /* any USM entry: has USM */
  if (!ps->ext.clEnqueueMigrateMemINTEL)
    return CL_CALL(clEnqueueMarkerWithWaitList, (cl_command_queue)queue,
                   WAIT_ARGS(num_events_in_waitlist, events_waitlist, event));
  return EXT_CALL(ps, clEnqueueMigrateMemINTEL, (cl_command_queue)queue, ptr,
                  size, 0 /* to the queue's device */,
                  WAIT_ARGS(num_events_in_waitlist, events_waitlist, event));
}

/* PI's advice values are CUDA's and HIP's; cl_intel_unified_shared_memory
 * defines none, so the advice is a no-op that a marker stands for. */
static pi_result ocl_piextUSMEnqueueMemAdvise(pi_queue queue, const void *ptr,
                                              size_t length,
                                              pi_mem_advice advice,
                                              pi_event *event) {
  const struct platform_state *ps = NULL;
  (void)ptr;
  (void)length;
  QUEUE_USM(queue, ps, clEnqueueMemcpyINTEL); /* any USM entry: has USM */
  pi_result r = CL_CALL(clEnqueueMarkerWithWaitList, (cl_command_queue)queue,
                        WAIT_ARGS(0, NULL, event));
  if (r == PI_SUCCESS && advice != PI_MEM_ADVICE_RESET)
    fail(PI_SUCCESS, "%s: advice 0x%x has no OpenCL equivalent and was ignored",
         FN, (unsigned)advice);
  return r;
}

static pi_result ocl_piextUSMGetMemAllocInfo(
    pi_context context, const void *ptr, pi_mem_alloc_info param_name,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  cl_device_id dev = NULL;
  const struct platform_state *ps = NULL;
  pi_result r = context_usm(FN, context, &dev, &ps);
  if (r == PI_SUCCESS)
    r = need_feature(FN, dev, USM_EXT, "clGetMemAllocInfoINTEL",
                     ps->ext.clGetMemAllocInfoINTEL != NULL, USM_HINT);
  if (r != PI_SUCCESS)
    return r;
  return info_check(&o, "clGetMemAllocInfoINTEL",
                    ps->ext.clGetMemAllocInfoINTEL(
                        (cl_context)context, ptr, param_name, param_value_size,
                        param_value, param_value_size_ret));
}

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

static cl_int enqueue_row(cl_command_queue q, const struct rows *op, size_t row,
                          cl_uint nwait, const cl_event *wait, cl_event *ev) {
  char *dst = op->dst + row * op->dst_pitch;
  if (op->src)
    return op->ps->ext.clEnqueueMemcpyINTEL(q, CL_FALSE, dst,
                                            op->src + row * op->src_pitch,
                                            op->width, nwait, wait, ev);
  return op->ps->ext.clEnqueueMemFillINTEL(
      q, dst, op->pattern, op->pattern_size, op->width, nwait, wait, ev);
}

static pi_result enqueue_rows(const char *fn, pi_queue queue,
                              const struct rows *op, size_t height,
                              pi_bool blocking, pi_uint32 nwait,
                              const pi_event *wait, pi_event *event) {
  cl_command_queue q = (cl_command_queue)queue;
  if (op->dst_pitch < op->width || (op->src && op->src_pitch < op->width))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a pitch is smaller than the width (%zu bytes)", fn,
                op->width);
  cl_event *rows = calloc(height ? height : 1, sizeof *rows);
  if (!rows)
    return fail(PI_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
  cl_int err = CL_SUCCESS;
  size_t done = 0;
  for (; done < height && err == CL_SUCCESS; ++done)
    err = enqueue_row(q, op, done, nwait, (const cl_event *)wait, &rows[done]);
  if (err != CL_SUCCESS)
    --done; /* the failed row made no event */
  cl_event marker = NULL;
  if (err == CL_SUCCESS)
    err = height ? ICD_CALL(clEnqueueMarkerWithWaitList, q, (cl_uint)height,
                            rows, &marker)
                 : ICD_CALL(clEnqueueMarkerWithWaitList, q, nwait,
                            (const cl_event *)wait, &marker);
  for (size_t i = 0; i < done; ++i)
    ICD_CALL(clReleaseEvent, rows[i]);
  free(rows);
  if (err == CL_SUCCESS && blocking)
    err = icd_wait_for_events(1, &marker);
  if (marker && event && err == CL_SUCCESS)
    *event = (pi_event)marker;
  else if (marker)
    ICD_CALL(clReleaseEvent, marker);
  return check_cl(
      fn, op->src ? "clEnqueueMemcpyINTEL" : "clEnqueueMemFillINTEL", err);
}

static pi_result ocl_piextUSMEnqueueFill2D(pi_queue queue, void *ptr,
                                           size_t pitch, size_t pattern_size,
                                           const void *pattern, size_t width,
                                           size_t height,
                                           pi_uint32 num_events_in_waitlist,
                                           const pi_event *events_waitlist,
                                           pi_event *event) {
  struct rows op = {NULL, ptr, NULL, pitch, 0, width, pattern, pattern_size};
  QUEUE_USM(queue, op.ps, clEnqueueMemFillINTEL);
  return enqueue_rows(FN, queue, &op, height, PI_FALSE, num_events_in_waitlist,
                      events_waitlist, event);
}

static pi_result ocl_piextUSMEnqueueMemset2D(pi_queue queue, void *ptr,
                                             size_t pitch, int value,
                                             size_t width, size_t height,
                                             pi_uint32 num_events_in_waitlist,
                                             const pi_event *events_waitlist,
                                             pi_event *event) {
  unsigned char byte = (unsigned char)value;
  struct rows op = {NULL, ptr, NULL, pitch, 0, width, &byte, 1};
  QUEUE_USM(queue, op.ps, clEnqueueMemFillINTEL);
  return enqueue_rows(FN, queue, &op, height, PI_FALSE, num_events_in_waitlist,
                      events_waitlist, event);
}

static pi_result
ocl_piextUSMEnqueueMemcpy2D(pi_queue queue, pi_bool blocking, void *dst_ptr,
                            size_t dst_pitch, const void *src_ptr,
                            size_t src_pitch, size_t width, size_t height,
                            pi_uint32 num_events_in_waitlist,
                            const pi_event *events_waitlist, pi_event *event) {
  struct rows op = {NULL,      dst_ptr, src_ptr, dst_pitch,
                    src_pitch, width,   NULL,    0};
  REQUIRE(src_ptr != NULL);
  QUEUE_USM(queue, op.ps, clEnqueueMemcpyINTEL);
  return enqueue_rows(FN, queue, &op, height, blocking, num_events_in_waitlist,
                      events_waitlist, event);
}

/* Importing host memory only speeds up copies (pinning); OpenCL has no such
 * call, and copies from unimported memory still work. */
static pi_result ocl_piextUSMImport(const void *ptr, size_t size,
                                    pi_context context) {
  (void)ptr;
  (void)size;
  (void)context;
  return PI_SUCCESS;
}

static pi_result ocl_piextUSMRelease(const void *ptr, pi_context context) {
  (void)ptr;
  (void)context;
  return PI_SUCCESS;
}

/* ---- Device globals and host pipes ----------------------------------------
 */

static const char GLOBALS_HINT[] =
    "device globals need cl_intel_global_variable_access; keep the value in "
    "a buffer passed to the kernels instead";
static const char PIPES_HINT[] =
    "host pipes need cl_intel_program_scope_host_pipe";

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

static pi_result ocl_piextEnqueueDeviceGlobalVariableWrite(
    pi_queue queue, pi_program program, const char *name,
    pi_bool blocking_write, size_t count, size_t offset, const void *src,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  const struct platform_state *ps = NULL;
  QUEUE_FEATURE(queue, ps, clEnqueueWriteGlobalVariableINTEL, GLOBALS_HINT);
  return EXT_CALL(ps, clEnqueueWriteGlobalVariableINTEL,
                  (cl_command_queue)queue, (cl_program)program, name,
                  blocking_write, count, offset, src,
                  WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

static pi_result ocl_piextEnqueueDeviceGlobalVariableRead(
    pi_queue queue, pi_program program, const char *name, pi_bool blocking_read,
    size_t count, size_t offset, void *dst, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  const struct platform_state *ps = NULL;
  QUEUE_FEATURE(queue, ps, clEnqueueReadGlobalVariableINTEL, GLOBALS_HINT);
  return EXT_CALL(ps, clEnqueueReadGlobalVariableINTEL, (cl_command_queue)queue,
                  (cl_program)program, name, blocking_read, count, offset, dst,
                  WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

static pi_result ocl_piextEnqueueReadHostPipe(
    pi_queue queue, pi_program program, const char *pipe_symbol,
    pi_bool blocking, void *ptr, size_t size, pi_uint32 num_events_in_waitlist,
    const pi_event *events_waitlist, pi_event *event) {
  const struct platform_state *ps = NULL;
  QUEUE_FEATURE(queue, ps, clEnqueueReadHostPipeINTEL, PIPES_HINT);
  return EXT_CALL(ps, clEnqueueReadHostPipeINTEL, (cl_command_queue)queue,
                  (cl_program)program, pipe_symbol, blocking, ptr, size,
                  WAIT_ARGS(num_events_in_waitlist, events_waitlist, event));
}

static pi_result ocl_piextEnqueueWriteHostPipe(
    pi_queue queue, pi_program program, const char *pipe_symbol,
    pi_bool blocking, void *ptr, size_t size, pi_uint32 num_events_in_waitlist,
    const pi_event *events_waitlist, pi_event *event) {
  const struct platform_state *ps = NULL;
  QUEUE_FEATURE(queue, ps, clEnqueueWriteHostPipeINTEL, PIPES_HINT);
  return EXT_CALL(ps, clEnqueueWriteHostPipeINTEL, (cl_command_queue)queue,
                  (cl_program)program, pipe_symbol, blocking, ptr, size,
                  WAIT_ARGS(num_events_in_waitlist, events_waitlist, event));
}

/* ---- Peer access -----------------------------------------------------------
 * OpenCL has no peer-to-peer access between devices. */

static pi_result no_peer_access(const char *fn) {
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: OpenCL has no peer-to-peer access between devices; copy "
              "through the host or share a buffer in one context",
              fn);
}

static pi_result ocl_piextEnablePeerAccess(pi_device command_device,
                                           pi_device peer_device) {
  (void)command_device;
  (void)peer_device;
  return no_peer_access(FN);
}

static pi_result ocl_piextDisablePeerAccess(pi_device command_device,
                                            pi_device peer_device) {
  (void)command_device;
  (void)peer_device;
  return no_peer_access(FN);
}

static pi_result
ocl_piextPeerAccessGetInfo(pi_device command_device, pi_device peer_device,
                           pi_peer_attr attr, size_t param_value_size,
                           void *param_value, size_t *param_value_size_ret) {
  struct info_out o = {FN, attr, param_value_size, param_value,
                       param_value_size_ret};
  (void)command_device;
  (void)peer_device;
  if (attr != PI_PEER_ACCESS_SUPPORTED && attr != PI_PEER_ATOMICS_SUPPORTED)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown peer attribute 0x%x", FN,
                (unsigned)attr);
  return put_u32(&o, 0);
}

/* ---- Plugin ----------------------------------------------------------------
 */

static pi_result ocl_piextPluginGetOpaqueData(void *opaque_data_param,
                                              void **opaque_data_return) {
  (void)opaque_data_param;
  if (opaque_data_return)
    *opaque_data_return = NULL;
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: the OpenCL plugin has no opaque data (only host-compiled "
              "device plugins do)",
              FN);
}

/* The last message of this thread, and its code: PI_SUCCESS for a warning. */
static pi_result ocl_piPluginGetLastError(char **message) {
  if (message)
    *message = last_message;
  return last_code;
}

/* Optimization levels as DPC++ maps them for OpenCL: -O0 disables
 * optimization, -O1 to -O3 are OpenCL's default. */
static pi_result ocl_piPluginGetBackendOption(pi_platform platform,
                                              const char *frontend_option,
                                              const char **backend_option) {
  (void)platform;
  REQUIRE(frontend_option != NULL && backend_option != NULL);
  if (strcmp(frontend_option, "-O0") == 0) {
    *backend_option = "-cl-opt-disable";
    return PI_SUCCESS;
  }
  if (!*frontend_option || strcmp(frontend_option, "-O1") == 0 ||
      strcmp(frontend_option, "-O2") == 0 ||
      strcmp(frontend_option, "-O3") == 0) {
    *backend_option = "";
    return PI_SUCCESS;
  }
  return fail(PI_ERROR_INVALID_VALUE,
              "%s: no OpenCL option for '%s'; the plugin maps -O0 to -O3", FN,
              frontend_option);
}

/* Frees the platform cache and the discovery (and the options: the runtime
 * gives them again before the next piPluginInit); no PI call may follow
 * before piPluginInit. */
static pi_result ocl_piTearDown(void *PluginParameter) {
  (void)PluginParameter;
  pthread_mutex_lock(&platforms_lock);
  while (platforms) {
    struct platform_state *next = platforms->next;
    free(platforms);
    platforms = next;
  }
  pthread_mutex_unlock(&platforms_lock);
  forget_discovery();
  return PI_SUCCESS;
}

/* Checks the runtime's PI major version, writes the plugin's version and
 * fills every entry of the function table. */
PI_PLUGIN_EXPORT pi_result piPluginInit(pi_plugin *plugin) {
  char version[sizeof plugin->PiVersion + 1] = {0};
  char *end;
  if (!plugin)
    return fail(PI_ERROR_INVALID_VALUE, "piPluginInit: plugin is NULL");
  memcpy(version, plugin->PiVersion, sizeof plugin->PiVersion);
  long major = strtol(version, &end, 10);
  if (end == version || *end != '.' || major != _PI_H_VERSION_MAJOR)
    return fail(PI_ERROR_INVALID_OPERATION,
                "piPluginInit: the runtime speaks PI '%s' but the OpenCL "
                "plugin speaks PI " _PI_H_VERSION_STRING
                "; build both from the same pi.h",
                version);
  snprintf(plugin->PluginVersion, sizeof plugin->PluginVersion, "%s",
           _PI_H_VERSION_STRING "." PLUGIN_REVISION);
#define X(name) plugin->PiFunctionTable.name = ocl_##name;
  PI_FOR_EACH_API(X)
#undef X
  return PI_SUCCESS;
}

/* Takes the options of the plugin's line in the plugins config (the runtime
 * calls this before piPluginInit; "" when the line has none):
 * libraries=LIB[:LIB...] names OpenCL libraries to use besides the ICD
 * vendors, registered as ICDs or not. An option it does not know is named in
 * piPlatformsGet's message. Options given after discovery take effect at the
 * next discovery (after piTearDown). */
PI_PLUGIN_EXPORT void pitrace_plugin_options(const char *options) {
  static const char key[] = "libraries=";
  char *copy = strdup(options ? options : ""), *save = NULL;
  pthread_mutex_lock(&discovery_lock);
  free(option_libraries);
  option_libraries = NULL;
  text_free(&option_notes);
  for (char *opt = copy ? strtok_r(copy, " \t\n", &save) : NULL; opt;
       opt = strtok_r(NULL, " \t\n", &save)) {
    if (strncmp(opt, key, sizeof key - 1) != 0) {
      text_item(&option_notes,
                "plugins config: option '%s' is unknown to the OpenCL plugin "
                "and ignored (it takes libraries=LIB[:LIB...])",
                opt);
      continue;
    }
    const char *value = opt + sizeof key - 1; /* several join with ':' */
    size_t had = option_libraries ? strlen(option_libraries) + 1 : 0;
    char *joined = malloc(had + strlen(value) + 1);
    if (joined)
      sprintf(joined, "%s%s%s", had ? option_libraries : "", had ? ":" : "",
              value);
    free(option_libraries);
    option_libraries = joined;
  }
  pthread_mutex_unlock(&discovery_lock);
  free(copy);
}
