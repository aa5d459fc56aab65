/*
 * pi_cuda.c: the pitrace CUDA plugin (libpi_cuda.so).
 *
 * It implements the PI functions of shared/pi-api.txt over the CUDA driver
 * API. The driver (libcuda.so.1) is opened with dlopen when piPluginInit
 * runs and every cu* entry point is looked up with dlsym, under the
 * versioned name that cuda.h maps it to (cuMemAlloc_v2, cuLinkCreate_v2,
 * ...), so the plugin links no CUDA library: on a machine without a driver
 * (or with only the toolkit's stub) it still loads, and piPlatformsGet
 * answers 0 platforms with PI_SUCCESS and a piPluginGetLastError message
 * that says why.
 *
 * The mapping: one platform for the driver, one PI device per CUDA device,
 * a context is the device's primary context (made current in every call
 * that needs one), a queue is a CUDA stream (in order; profiling through
 * CUevents), buffers and USM are driver allocations, a program is a module
 * JIT-compiled or linked from PTX (or loaded from a cubin or fatbin), a
 * kernel is a CUfunction with its arguments kept here until the launch.
 * Local-memory arguments become dynamic shared memory: the argument the
 * kernel gets is the offset of its bytes there (as in DPC++'s CUDA plugin).
 *
 * What CUDA or this plugin cannot do (images, samplers, specialization
 * constants, host pipes, OpenCL C source) fails with a PI error and a
 * message naming the function and what to do instead.
 *
 * Threads: no lock is held across calls. The one-time driver set-up has a
 * mutex; programs, kernels and buffers have their own for their mutable
 * state; reference counts are atomic; the last error is per thread.
 */
#define _GNU_SOURCE /* dladdr */
#include <cuda.h>

#include "pi/pi.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if CUDA_VERSION < 12080
#error "pi_cuda.c needs cuda.h of CUDA 12.8 or later (it resolves the entry points that header names)"
#endif

/* Bumped with every behavioural change; the third part of PluginVersion. */
#define PLUGIN_REVISION "1"

/* The name of the PI function we are in: implementations are cu_<name>. */
#define FN (__func__ + sizeof("cu_") - 1)

/* ---- Driver entry points ---------------------------------------------------
 * Each X(name) names a driver function as cuda.h declares it; since name is
 * macro-expanded before use, the field, its type and the symbol looked up
 * are those of the versioned entry point the header maps it to. */

#define CU_REQUIRED(X)                                                         \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)       \
  X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName)                        \
  X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDeviceGetPCIBusId)           \
  X(cuDeviceGetP2PAttribute) X(cuDevicePrimaryCtxRetain)                       \
  X(cuDevicePrimaryCtxRelease) X(cuCtxGetCurrent) X(cuCtxSetCurrent)           \
  X(cuCtxGetDevice) X(cuCtxGetStreamPriorityRange) X(cuCtxEnablePeerAccess)    \
  X(cuCtxDisablePeerAccess) X(cuCtxDestroy) X(cuStreamCreate)                  \
  X(cuStreamCreateWithPriority) X(cuStreamDestroy) X(cuStreamSynchronize)      \
  X(cuStreamQuery) X(cuStreamWaitEvent) X(cuEventCreate) X(cuEventDestroy)     \
  X(cuEventRecord) X(cuEventQuery) X(cuEventSynchronize) X(cuMemAlloc)         \
  X(cuMemFree) X(cuMemAllocHost) X(cuMemHostAlloc) X(cuMemFreeHost)            \
  X(cuMemAllocManaged) X(cuMemHostRegister) X(cuMemHostUnregister)             \
  X(cuMemHostGetDevicePointer) X(cuMemGetInfo) X(cuMemGetAddressRange)         \
  X(cuPointerGetAttributes) X(cuMemcpyAsync) X(cuMemcpyHtoDAsync)              \
  X(cuMemcpyDtoHAsync) X(cuMemcpyHtoD) X(cuMemcpy2DAsync) X(cuMemcpy3DAsync)   \
  X(cuMemsetD8Async) X(cuMemsetD16Async) X(cuMemsetD32Async)                   \
  X(cuMemsetD2D8Async) X(cuMemsetD2D16Async) X(cuMemsetD2D32Async)             \
  X(cuModuleLoadDataEx) X(cuModuleLoadData) X(cuModuleUnload)                  \
  X(cuModuleGetFunction) X(cuModuleGetGlobal) X(cuLinkCreate)                  \
  X(cuLinkAddData) X(cuLinkComplete) X(cuLinkDestroy) X(cuFuncGetAttribute)    \
  X(cuFuncSetAttribute) X(cuFuncSetCacheConfig) X(cuLaunchKernel)              \
  X(cuLaunchCooperativeKernel) X(cuOccupancyMaxActiveBlocksPerMultiprocessor)

/* Newer entry points, with the older name of the same signature to fall
 * back to on older drivers ("" when there is none: then the feature that
 * needs it fails with a message). */
#define CU_OPTIONAL(X)                                                         \
  X(cuEventElapsedTime, "cuEventElapsedTime")                                  \
  X(cuDeviceGetUuid, "cuDeviceGetUuid")                                        \
  X(cuMemAdvise, "")                                                           \
  X(cuMemPrefetchAsync, "")                                                    \
  X(cuFuncGetParamInfo, "")                                                    \
  X(cuFuncGetName, "")                                                         \
  X(cuModuleGetFunctionCount, "")                                              \
  X(cuModuleEnumerateFunctions, "")

/* The CUDA 8 signatures of cuMemAdvise and cuMemPrefetchAsync, which drivers
 * before 12.2 export (the _v2 ones take a CUmemLocation). */
typedef CUresult (*cu_mem_advise_v1)(CUdeviceptr, size_t, CUmem_advise,
                                     CUdevice);
typedef CUresult (*cu_mem_prefetch_v1)(CUdeviceptr, size_t, CUdevice,
                                       CUstream);

#define CU_SYM_(x) #x
#define CU_SYM(name) CU_SYM_(name) /* the versioned symbol name */

static struct driver {
#define X(name) __typeof__(name) *name;
  CU_REQUIRED(X)
#undef X
#define X(name, fallback) __typeof__(name) *name;
  CU_OPTIONAL(X)
#undef X
  cu_mem_advise_v1 cuMemAdvise_v1;
  cu_mem_prefetch_v1 cuMemPrefetchAsync_v1;
} drv;

/* ---- Errors --------------------------------------------------------------
 * Every failure goes through fail(), which keeps the code and a message for
 * piPluginGetLastError in thread-local storage. fail(PI_SUCCESS, ...) leaves
 * a warning. */

static _Thread_local char last_message[1024];
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

/* "CUDA_ERROR_INVALID_VALUE (1): invalid argument" for a driver result. */
static const char *cu_error_text(CUresult err, char *buf, size_t n) {
  const char *name = NULL, *text = NULL;
  if (drv.cuGetErrorName)
    drv.cuGetErrorName(err, &name);
  if (drv.cuGetErrorString)
    drv.cuGetErrorString(err, &text);
  snprintf(buf, n, "%s (%d)%s%s", name ? name : "CUDA error", (int)err,
           text ? ": " : "", text ? text : "");
  return buf;
}

/* The PI result closest to a driver error. */
static pi_result pi_from_cu(CUresult err) {
  switch (err) {
  case CUDA_SUCCESS:
    return PI_SUCCESS;
  case CUDA_ERROR_INVALID_VALUE:
  case CUDA_ERROR_INVALID_HANDLE:
  case CUDA_ERROR_ALREADY_MAPPED:
  case CUDA_ERROR_NOT_MAPPED:
    return PI_ERROR_INVALID_VALUE;
  case CUDA_ERROR_OUT_OF_MEMORY:
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
  case CUDA_ERROR_TOO_MANY_PEERS:
    return PI_ERROR_OUT_OF_RESOURCES;
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_DEINITIALIZED:
    return PI_ERROR_UNINITIALIZED;
  case CUDA_ERROR_NO_DEVICE:
    return PI_ERROR_DEVICE_NOT_FOUND;
  case CUDA_ERROR_INVALID_DEVICE:
  case CUDA_ERROR_PEER_ACCESS_UNSUPPORTED:
    return PI_ERROR_INVALID_DEVICE;
  case CUDA_ERROR_INVALID_CONTEXT:
  case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    return PI_ERROR_INVALID_CONTEXT;
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
    return PI_ERROR_INVALID_BINARY;
  case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
  case CUDA_ERROR_JIT_COMPILATION_DISABLED:
    return PI_ERROR_COMPILER_NOT_AVAILABLE;
  case CUDA_ERROR_NOT_FOUND:
    return PI_ERROR_INVALID_KERNEL_NAME;
  case CUDA_ERROR_NOT_SUPPORTED:
  case CUDA_ERROR_NOT_PERMITTED:
  case CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED:
  case CUDA_ERROR_PEER_ACCESS_NOT_ENABLED:
  case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
  case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
    return PI_ERROR_INVALID_OPERATION;
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_ASSERT:
    return PI_ERROR_COMMAND_EXECUTION_FAILURE;
  default:
    return PI_ERROR_UNKNOWN;
  }
}

/* PI_SUCCESS for CUDA_SUCCESS; otherwise the mapped PI error, with a message
 * naming the PI function and the driver call that failed. */
static pi_result cu_check(const char *fn, const char *cufn, CUresult err) {
  char text[256];
  if (err == CUDA_SUCCESS)
    return PI_SUCCESS;
  return fail(pi_from_cu(err), "%s: %s failed with %s", fn, cufn,
              cu_error_text(err, text, sizeof text));
}

/* Calls a driver function and checks its result, in a PI function (CU) or
 * in a helper given the PI function's name (CUF). */
#define CUF(fn, name, ...) cu_check((fn), #name, drv.name(__VA_ARGS__))
#define CU(name, ...) CUF(FN, name, __VA_ARGS__)

/* Fails with PI_ERROR_INVALID_VALUE when an argument check does not hold. */
#define REQUIRE(cond)                                                          \
  do {                                                                         \
    if (!(cond))                                                               \
      return fail(PI_ERROR_INVALID_VALUE, "%s: invalid argument: %s", FN,      \
                  #cond);                                                      \
  } while (0)

#define TRY(expr)                                                              \
  do {                                                                         \
    pi_result try_r_ = (expr);                                                 \
    if (try_r_ != PI_SUCCESS)                                                  \
      return try_r_;                                                           \
  } while (0)

static pi_result no_memory(const char *fn) {
  return fail(PI_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
}

static const char IMAGES_UNSUPPORTED[] =
    "images are not supported by the pitrace CUDA plugin; use buffers or USM";
static const char SAMPLERS_UNSUPPORTED[] =
    "samplers are not supported by the pitrace CUDA plugin (they only serve "
    "images, which it does not support)";

static pi_result no_images(const char *fn) {
  return fail(PI_ERROR_INVALID_OPERATION, "%s: %s", fn, IMAGES_UNSUPPORTED);
}

static pi_result no_samplers(const char *fn) {
  return fail(PI_ERROR_INVALID_OPERATION, "%s: %s", fn, SAMPLERS_UNSUPPORTED);
}

/* ---- Info queries -----------------------------------------------------------
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

static pi_result put_i32(const struct info_out *o, int32_t v) {
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
              "%s: query 0x%x is unknown to the CUDA plugin", o->fn,
              o->query);
}

/* ---- Objects -----------------------------------------------------------------
 * Handles are pointers to these structures. Reference counts are atomic;
 * the rest is immutable after creation unless a lock says otherwise. */

struct _pi_platform {
  pi_uint32 num_devices;
  struct _pi_device *devices;
  int driver_version; /* cuDriverGetVersion: 1000 * major + 10 * minor */
};

struct _pi_device {
  pi_platform platform;
  CUdevice cu;
  char name[256];
  int cc_major, cc_minor;
  /* Set up on first use by piGetDeviceAndHostTimer and peer access: a
   * retained primary context and the timer's base event. */
  pthread_mutex_t lock;
  CUcontext primary;
  CUevent timer_base;
  uint64_t timer_base_ns;
};

struct deleter {
  pi_context_extended_deleter fn;
  void *user_data;
  struct deleter *next;
};

struct _pi_context {
  atomic_uint refs;
  pi_device dev;
  CUcontext cu;
  bool primary; /* the device's primary context, retained */
  bool owns;    /* a native context to destroy on release */
  pi_context_properties props[3];
  size_t num_props; /* entries of props, the terminating 0 included */
  pthread_mutex_t lock;
  struct deleter *deleters;
};

struct _pi_queue {
  atomic_uint refs;
  pi_context ctx;
  pi_device dev;
  CUstream stream;
  pi_queue_properties props;
  bool owns;
  /* Profiling: an event recorded when the queue was made and the host
   * time (CLOCK_MONOTONIC ns) it completed at; event times count from it. */
  CUevent base;
  uint64_t base_ns;
};

struct _pi_event {
  atomic_uint refs;
  pi_context ctx;
  pi_queue queue; /* retained; NULL for user and native events */
  pi_command_type type;
  CUevent start; /* recorded before the command (profiling queues) */
  CUevent end;   /* recorded after it; NULL for user events */
  uint64_t queued_ns;
  bool owns_end;
};

enum mem_kind {
  MEM_DEVICE,    /* cuMemAlloc */
  MEM_REGISTERED, /* the user's host memory, cuMemHostRegister'ed */
  MEM_PINNED,    /* cuMemAllocHost (PI_MEM_FLAGS_HOST_PTR_ALLOC) */
  MEM_SUB,       /* a region of a parent buffer */
  MEM_NATIVE     /* a device pointer from piextMemCreateWithNativeHandle */
};

/* A mapping of a device-memory buffer: a host staging copy of a region. */
struct mapping {
  void *ptr;
  size_t offset, size;
  pi_map_flags flags;
  struct mapping *next;
};

struct _pi_mem {
  atomic_uint refs;
  pi_context ctx;
  enum mem_kind kind;
  CUdeviceptr ptr;
  size_t size;
  char *host; /* host address when the memory is host memory, else NULL */
  pi_mem parent; /* retained, for sub-buffers */
  pi_mem_flags flags;
  bool owns;       /* MEM_NATIVE: free on release; MEM_REGISTERED: unregister */
  pthread_mutex_t lock;
  struct mapping *maps;
};

enum image_kind { IMAGE_NONE, IMAGE_PTX, IMAGE_CUBIN, IMAGE_FATBIN };

struct _pi_program {
  atomic_uint refs;
  pi_context ctx;
  pthread_mutex_t lock; /* everything below */
  unsigned char *image; /* PTX (NUL-terminated), cubin or fatbin */
  size_t image_size;    /* as given (a PTX image's NUL not counted) */
  enum image_kind kind;
  CUmodule module;
  bool owns_module;
  pi_program_build_status status;
  pi_program_binary_type binary_type;
  char *log, *options;
  char *kernel_names; /* ';'-separated */
  size_t num_kernels;
};

/* A kernel argument as set: its bytes, or a local-memory size. */
struct karg {
  bool set, local;
  size_t size;
  unsigned char *value;
};

struct _pi_kernel {
  atomic_uint refs;
  pi_program prog;
  CUfunction fn;
  char *name;
  size_t num_params; /* SIZE_MAX when the driver cannot tell */
  size_t *param_sizes;
  pthread_mutex_t lock; /* the arguments */
  size_t num_args;
  struct karg *args;
};

/* ---- Driver set-up -------------------------------------------------------------
 * piPluginInit opens the driver; the first piPlatformsGet runs cuInit and
 * lists the devices. Both happen once, under init_lock, until piTearDown. */

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static void *driver;             /* dlopen handle of libcuda.so.1 */
static bool driver_initialized;  /* cuInit ran (the platform below if it worked) */
static char driver_problem[768]; /* why there is no platform, when there is none */
static struct _pi_platform *the_platform;

static const char DRIVER_LIB[] = "libcuda.so.1";

/* Opens the driver and resolves its entry points; with init_lock held. */
static void load_driver(void) {
  memset(&drv, 0, sizeof drv);
  dlerror();
  driver = dlopen(DRIVER_LIB, RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    const char *why = dlerror();
    snprintf(driver_problem, sizeof driver_problem,
             "the CUDA driver (%s) cannot be loaded: %s; install the NVIDIA "
             "driver to use CUDA devices",
             DRIVER_LIB, why ? why : "dlopen failed");
    return;
  }
  const char *missing = NULL;
  void *p;
#define X(name)                                                                \
  p = dlsym(driver, CU_SYM(name));                                             \
  memcpy(&drv.name, &p, sizeof p);                                             \
  if (!p && !missing)                                                          \
    missing = CU_SYM(name);
  CU_REQUIRED(X)
#undef X
#define X(name, fallback)                                                      \
  p = dlsym(driver, CU_SYM(name));                                             \
  if (!p && *fallback)                                                         \
    p = dlsym(driver, fallback);                                               \
  memcpy(&drv.name, &p, sizeof p);
  CU_OPTIONAL(X)
#undef X
  p = dlsym(driver, "cuMemAdvise");
  memcpy(&drv.cuMemAdvise_v1, &p, sizeof p);
  p = dlsym(driver, "cuMemPrefetchAsync");
  memcpy(&drv.cuMemPrefetchAsync_v1, &p, sizeof p);
  if (missing) {
    Dl_info info;
    void *init = dlsym(driver, "cuInit");
    snprintf(driver_problem, sizeof driver_problem,
             "the CUDA driver %s lacks %s; it is too old for this plugin "
             "(built with CUDA %d.%d headers): update the NVIDIA driver",
             init && dladdr(init, &info) && info.dli_fname ? info.dli_fname
                                                           : DRIVER_LIB,
             missing, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
    dlclose(driver);
    driver = NULL;
    memset(&drv, 0, sizeof drv);
  }
}

/* The path the driver was loaded from, for messages. */
static const char *driver_path(void) {
  Dl_info info;
  void *sym;
  memcpy(&sym, &drv.cuInit, sizeof sym);
  return sym && dladdr(sym, &info) && info.dli_fname ? info.dli_fname
                                                     : DRIVER_LIB;
}

/* Runs cuInit and lists the devices; with init_lock held. */
static void init_platform(void) {
  char text[256];
  driver_initialized = true;
  if (!driver)
    return;
  CUresult err = drv.cuInit(0);
  if (err != CUDA_SUCCESS) {
    snprintf(driver_problem, sizeof driver_problem,
             "cuInit failed with %s (driver %s)%s",
             cu_error_text(err, text, sizeof text), driver_path(),
             err == CUDA_ERROR_STUB_LIBRARY
                 ? ": that is the CUDA toolkit's stub library, not a driver"
             : err == CUDA_ERROR_NO_DEVICE ? ": no CUDA device is visible"
                                           : "");
    /* Nothing of the driver is in use: let it go. */
    dlclose(driver);
    driver = NULL;
    memset(&drv, 0, sizeof drv);
    return;
  }
  int count = 0, version = 0;
  err = drv.cuDeviceGetCount(&count);
  if (err == CUDA_SUCCESS)
    err = drv.cuDriverGetVersion(&version);
  if (err != CUDA_SUCCESS || count <= 0) {
    snprintf(driver_problem, sizeof driver_problem, "%s%s",
             err != CUDA_SUCCESS ? "cuDeviceGetCount failed with "
                                 : "the CUDA driver lists no devices",
             err != CUDA_SUCCESS ? cu_error_text(err, text, sizeof text) : "");
    return;
  }
  struct _pi_platform *plat = calloc(1, sizeof *plat);
  struct _pi_device *devs = calloc((size_t)count, sizeof *devs);
  if (!plat || !devs) {
    free(plat);
    free(devs);
    snprintf(driver_problem, sizeof driver_problem,
             "out of host memory listing the CUDA devices");
    return;
  }
  plat->devices = devs;
  plat->driver_version = version;
  for (int i = 0; i < count; ++i) {
    struct _pi_device *d = &devs[plat->num_devices];
    memset(d, 0, sizeof *d);
    d->platform = plat;
    err = drv.cuDeviceGet(&d->cu, i);
    if (err == CUDA_SUCCESS)
      err = drv.cuDeviceGetName(d->name, (int)sizeof d->name - 1, d->cu);
    if (err == CUDA_SUCCESS)
      err = drv.cuDeviceGetAttribute(
          &d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->cu);
    if (err == CUDA_SUCCESS)
      err = drv.cuDeviceGetAttribute(
          &d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->cu);
    if (err != CUDA_SUCCESS)
      continue; /* a device the driver cannot describe is left out */
    pthread_mutex_init(&d->lock, NULL);
    plat->num_devices++;
  }
  if (plat->num_devices == 0) {
    snprintf(driver_problem, sizeof driver_problem,
             "the CUDA driver lists %d device(s) but describes none of them",
             count);
    free(devs);
    free(plat);
    return;
  }
  the_platform = plat;
}

/* The platform, set up on first call; NULL (with driver_problem) if none. */
static pi_platform get_platform(void) {
  pthread_mutex_lock(&init_lock);
  if (!driver_initialized)
    init_platform();
  pi_platform p = the_platform;
  pthread_mutex_unlock(&init_lock);
  return p;
}

/* ---- Small helpers ---------------------------------------------------------- */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d)
    memcpy(d, s, n);
  return d;
}

/* Makes `c` the calling thread's current CUDA context. */
static pi_result use_context(const char *fn, CUcontext c) {
  CUcontext cur = NULL;
  TRY(CUF(fn, cuCtxGetCurrent, &cur));
  if (cur != c)
    TRY(CUF(fn, cuCtxSetCurrent, c));
  return PI_SUCCESS;
}

static pi_result device_attr(const char *fn, pi_device d,
                             CUdevice_attribute a, int *v) {
  *v = 0;
  return CUF(fn, cuDeviceGetAttribute, v, a, d->cu);
}

/* "device 0 'NVIDIA H100 80GB HBM3'", for messages. */
static const char *describe(pi_device d, char *buf, size_t n) {
  snprintf(buf, n, "CUDA device %d '%s'", (int)d->cu, d->name);
  return buf;
}

/* Retains the device's primary context for the plugin's own use (timers,
 * peer access) until piTearDown. */
static pi_result device_primary(const char *fn, pi_device d, CUcontext *c) {
  pi_result r = PI_SUCCESS;
  pthread_mutex_lock(&d->lock);
  if (!d->primary)
    r = CUF(fn, cuDevicePrimaryCtxRetain, &d->primary, d->cu);
  *c = d->primary;
  pthread_mutex_unlock(&d->lock);
  return r;
}
