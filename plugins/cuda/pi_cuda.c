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
 * that says why. The driver API's types, values and signatures come from
 * cuda_driver.h, not from a toolkit: the plugin builds on any machine.
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
#include "cuda_driver.h"
#include "pi/pi.h"
#include "plugin_common.h"

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

/* Bumped with every behavioural change; the third part of PluginVersion. */
#define PLUGIN_REVISION "2"

/* The name of the PI function we are in: implementations are cu_<name>. */
#define FN (__func__ + sizeof("cu_") - 1)

/* ---- Driver entry points ---------------------------------------------------
 * Each X(name) names a driver function by its API name; cuda_driver.h gives
 * its type (name_fn) and the versioned symbol to look up (CU_SYM), the one
 * cuda.h maps the name to. */

/* clang-format off */
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

/* Newer entry points older drivers lack: without one, the feature that
 * needs it fails with a message. cuEventElapsedTime and cuDeviceGetUuid fall
 * back to their older versions of the same signature; cuMemAdvise and
 * cuMemPrefetchAsync to the CUDA 8 ones, which take a CUdevice where the
 * _v2 ones (CUDA 12.2) take a CUmemLocation. The older versions are
 * cuda_driver.h's CUDRV_LEGACY_FUNCTIONS, always looked up. */
#define CU_OPTIONAL(X)                                                         \
  X(cuEventElapsedTime) X(cuDeviceGetUuid) X(cuMemAdvise)                      \
  X(cuMemPrefetchAsync) X(cuFuncGetParamInfo) X(cuFuncGetName)                 \
  X(cuModuleGetFunctionCount) X(cuModuleEnumerateFunctions)
/* clang-format on */

struct driver {
#define X(name) name##_fn *name;
  CU_REQUIRED(X)
  CU_OPTIONAL(X)
#undef X
#define X(name, symbol, params) name##_fn *name;
  CUDRV_LEGACY_FUNCTIONS(X)
#undef X
};
static struct driver drv;

/* The symbol of each entry point, by name: cu_symbols.cuMemAlloc is
 * "cuMemAlloc_v2". */
struct cu_symbols {
#define X(name, symbol, params) const char *name;
  CUDRV_FUNCTIONS(X)
  CUDRV_LEGACY_FUNCTIONS(X)
#undef X
};
static const struct cu_symbols cu_symbols = {
#define X(name, symbol, params) #symbol,
    CUDRV_FUNCTIONS(X) CUDRV_LEGACY_FUNCTIONS(X)
#undef X
};
#define CU_SYM(name) (cu_symbols.name)

/* cuda_driver.h declares what the plugin uses, no more. */
#define X(...) +1
_Static_assert(0 CU_REQUIRED(X) CU_OPTIONAL(X) == 0 CUDRV_FUNCTIONS(X),
               "CU_REQUIRED and CU_OPTIONAL list other functions than "
               "cuda_driver.h's CUDRV_FUNCTIONS");
#undef X

/* ---- Errors --------------------------------------------------------------
 * Every failure goes through fail() (plugins/common), which keeps the code
 * and a message for piPluginGetLastError in thread-local storage.
 * fail(PI_SUCCESS, ...) leaves a warning. */

/* Names of the results the plugin meets before or without a working
 * driver (whose cuGetErrorName then may not answer). */
#define CU_KNOWN_ERRORS(X)                                                     \
  X(CUDA_ERROR_INVALID_VALUE)                                                  \
  X(CUDA_ERROR_OUT_OF_MEMORY)                                                  \
  X(CUDA_ERROR_NOT_INITIALIZED)                                                \
  X(CUDA_ERROR_DEINITIALIZED) X(CUDA_ERROR_STUB_LIBRARY)                       \
      X(CUDA_ERROR_DEVICE_UNAVAILABLE) X(CUDA_ERROR_NO_DEVICE)                 \
          X(CUDA_ERROR_INVALID_DEVICE) X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)    \
              X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)                     \
                  X(CUDA_ERROR_OPERATING_SYSTEM) X(CUDA_ERROR_UNKNOWN)

static const char *cu_known_name(CUresult err) {
  switch (err) {
#define X(name)                                                                \
  case name:                                                                   \
    return #name;
    CU_KNOWN_ERRORS(X)
#undef X
  default:
    return NULL;
  }
}

/* "CUDA_ERROR_INVALID_VALUE (1): invalid argument" for a driver result. */
static const char *cu_error_text(CUresult err, char *buf, size_t n) {
  const char *name = NULL, *text = NULL;
  if (!drv.cuGetErrorName || drv.cuGetErrorName(err, &name) != CUDA_SUCCESS)
    name = cu_known_name(err);
  if (drv.cuGetErrorString && drv.cuGetErrorString(err, &text) != CUDA_SUCCESS)
    text = NULL;
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
 * An info_out names where a *GetInfo call puts its answer; put_*()
 * (plugins/common) write a value with the size checks OpenCL makes. */

static pi_result unknown_query(const struct info_out *o) {
  return put_unknown(o, "CUDA");
}

/* ---- Objects ---------------------------------------------------------------
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
  MEM_DEVICE,     /* cuMemAlloc */
  MEM_REGISTERED, /* the user's host memory, cuMemHostRegister'ed */
  MEM_PINNED,     /* cuMemAllocHost (PI_MEM_FLAGS_HOST_PTR_ALLOC) */
  MEM_SUB,        /* a region of a parent buffer */
  MEM_NATIVE      /* a device pointer from piextMemCreateWithNativeHandle */
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
  char *host;    /* host address when the memory is host memory, else NULL */
  pi_mem parent; /* retained, for sub-buffers */
  pi_mem_flags flags;
  bool owns; /* MEM_NATIVE: free on release; MEM_REGISTERED: unregister */
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

/* ---- Driver set-up ---------------------------------------------------------
 * piPluginInit opens the driver; the first piPlatformsGet runs cuInit and
 * lists the devices. Both happen once, under init_lock, until piTearDown. */

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static void *driver;             /* dlopen handle of libcuda.so.1 */
static bool driver_initialized;  /* cuInit ran (and made the_platform) */
static char driver_problem[768]; /* why there is no platform, if none */
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
#define X(name)                                                                \
  p = dlsym(driver, CU_SYM(name));                                             \
  memcpy(&drv.name, &p, sizeof p);
  CU_OPTIONAL(X)
#undef X
#define X(name, symbol, params)                                                \
  p = dlsym(driver, CU_SYM(name));                                             \
  memcpy(&drv.name, &p, sizeof p);
  CUDRV_LEGACY_FUNCTIONS(X)
#undef X
  /* The same signature: the older version serves. */
  if (!drv.cuEventElapsedTime)
    drv.cuEventElapsedTime = drv.cuEventElapsedTime_v1;
  if (!drv.cuDeviceGetUuid)
    drv.cuDeviceGetUuid = drv.cuDeviceGetUuid_v1;
  if (missing) {
    Dl_info info;
    void *init = dlsym(driver, "cuInit");
    snprintf(driver_problem, sizeof driver_problem,
             "the CUDA driver %s lacks %s; it is too old for this plugin: "
             "update the NVIDIA driver",
             init && dladdr(init, &info) && info.dli_fname ? info.dli_fname
                                                           : DRIVER_LIB,
             missing);
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

/* ---- Small helpers --------------------------------------------------------
 */

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

/* True once the driver has shut down: at exit, libcuda's exit handlers run
 * before any ELF destructor (the runtime's included), and everything the
 * driver held went with it. A release then has only the plugin's own memory to free;
 * calling the driver would fail with CUDA_ERROR_DEINITIALIZED. */
static bool driver_gone(void) {
  CUcontext cur = NULL;
  return drv.cuCtxGetCurrent(&cur) == CUDA_ERROR_DEINITIALIZED;
}

/* Makes `c` the calling thread's current CUDA context. */
static pi_result use_context(const char *fn, CUcontext c) {
  CUcontext cur = NULL;
  TRY(CUF(fn, cuCtxGetCurrent, &cur));
  if (cur != c)
    TRY(CUF(fn, cuCtxSetCurrent, c));
  return PI_SUCCESS;
}

static pi_result device_attr(const char *fn, pi_device d, CUdevice_attribute a,
                             int *v) {
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

/* ---- Platforms ------------------------------------------------------------
 */

/* Without a usable driver: zero platforms and PI_SUCCESS, with the reason
 * left as a warning for piPluginGetLastError. */
static pi_result cu_piPlatformsGet(pi_uint32 num_entries,
                                   pi_platform *platforms,
                                   pi_uint32 *num_platforms) {
  if (platforms && num_entries == 0)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: platforms is not NULL but num_entries is 0", FN);
  REQUIRE(platforms != NULL || num_platforms != NULL);
  pi_platform p = get_platform();
  if (num_platforms)
    *num_platforms = p ? 1 : 0;
  if (!p) {
    pthread_mutex_lock(&init_lock);
    fail(PI_SUCCESS, "%s: no CUDA platform: %s", FN, driver_problem);
    pthread_mutex_unlock(&init_lock);
    return PI_SUCCESS;
  }
  if (platforms)
    platforms[0] = p;
  return PI_SUCCESS;
}

static pi_result cu_piPlatformGetInfo(pi_platform platform,
                                      pi_platform_info param_name,
                                      size_t param_value_size,
                                      void *param_value,
                                      size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  REQUIRE(platform != NULL);
  char version[64];
  switch (param_name) {
  case PI_PLATFORM_INFO_NAME:
    return put_str(&o, "NVIDIA CUDA BACKEND");
  case PI_PLATFORM_INFO_VENDOR:
    return put_str(&o, "NVIDIA Corporation");
  case PI_PLATFORM_INFO_PROFILE:
    return put_str(&o, "FULL PROFILE");
  case PI_PLATFORM_INFO_VERSION:
    snprintf(version, sizeof version, "CUDA %d.%d",
             platform->driver_version / 1000,
             platform->driver_version % 1000 / 10);
    return put_str(&o, version);
  case PI_PLATFORM_INFO_EXTENSIONS:
    return put_str(&o, "");
  case PI_EXT_PLATFORM_INFO_BACKEND:
    return put_u32(&o, PI_EXT_PLATFORM_BACKEND_CUDA);
  default:
    return unknown_query(&o);
  }
}

static pi_result
cu_piextPlatformGetNativeHandle(pi_platform platform,
                                pi_native_handle *nativeHandle) {
  (void)platform;
  (void)nativeHandle;
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: CUDA has no platform object, so there is no native "
              "handle; use the devices' (CUdevice) instead",
              FN);
}

static pi_result
cu_piextPlatformCreateWithNativeHandle(pi_native_handle nativeHandle,
                                       pi_platform *platform) {
  (void)nativeHandle;
  (void)platform;
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: CUDA has no platform object to make a PI platform from; "
              "use piPlatformsGet",
              FN);
}

/* ---- Devices --------------------------------------------------------------
 */

static pi_result cu_piDevicesGet(pi_platform platform,
                                 pi_device_type device_type,
                                 pi_uint32 num_entries, pi_device *devices,
                                 pi_uint32 *num_devices) {
  REQUIRE(platform != NULL);
  if (devices && num_entries == 0)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: devices is not NULL but num_entries is 0", FN);
  /* Every CUDA device is a GPU. */
  int wanted = (device_type & (PI_DEVICE_TYPE_GPU | PI_DEVICE_TYPE_DEFAULT)) ||
               device_type == PI_DEVICE_TYPE_ALL;
  pi_uint32 n = wanted ? platform->num_devices : 0;
  if (num_devices)
    *num_devices = n;
  for (pi_uint32 i = 0; devices && i < n && i < num_entries; ++i)
    devices[i] = &platform->devices[i];
  return PI_SUCCESS;
}

static pi_bitfield atomic_orders(pi_device d) {
  pi_bitfield r = PI_MEMORY_ORDER_RELAXED;
  if (d->cc_major >= 7) /* acquire/release semantics came with Volta */
    r |= PI_MEMORY_ORDER_ACQUIRE | PI_MEMORY_ORDER_RELEASE |
         PI_MEMORY_ORDER_ACQ_REL | PI_MEMORY_ORDER_SEQ_CST;
  return r;
}

static pi_bitfield atomic_scopes(pi_device d) {
  pi_bitfield r = PI_MEMORY_SCOPE_WORK_ITEM | PI_MEMORY_SCOPE_SUB_GROUP |
                  PI_MEMORY_SCOPE_WORK_GROUP | PI_MEMORY_SCOPE_DEVICE;
  if (d->cc_major >= 6) /* system-scope atomics came with Pascal */
    r |= PI_MEMORY_SCOPE_SYSTEM;
  return r;
}

/* Fails a device query that has no CUDA meaning. */
static pi_result no_cuda_answer(const struct info_out *o, pi_device d,
                                const char *why) {
  char what[300];
  return fail(PI_ERROR_INVALID_VALUE, "%s: query 0x%x has no answer for %s: %s",
              o->fn, o->query, describe(d, what, sizeof what), why);
}

/* The device's free memory: cuMemGetInfo in its primary context. */
static pi_result free_memory(const char *fn, pi_device d, uint64_t *out) {
  CUcontext primary = NULL, previous = NULL;
  size_t free_bytes = 0, total = 0;
  TRY(device_primary(fn, d, &primary));
  TRY(CUF(fn, cuCtxGetCurrent, &previous));
  TRY(CUF(fn, cuCtxSetCurrent, primary));
  pi_result r = CUF(fn, cuMemGetInfo, &free_bytes, &total);
  drv.cuCtxSetCurrent(previous);
  *out = free_bytes;
  return r;
}

/* The USM capabilities of a device for one of the five USM queries. */
static pi_result usm_capabilities(const char *fn, pi_device d, unsigned query,
                                  pi_bitfield *out) {
  const pi_bitfield all = PI_USM_ACCESS | PI_USM_ATOMIC_ACCESS |
                          PI_USM_CONCURRENT_ACCESS |
                          PI_USM_CONCURRENT_ATOMIC_ACCESS;
  int managed = 0, concurrent = 0, pageable = 0, host_atomics = 0;
  TRY(device_attr(fn, d, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, &managed));
  TRY(device_attr(fn, d, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
                  &concurrent));
  TRY(device_attr(fn, d, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS,
                  &pageable));
  TRY(device_attr(fn, d, CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED,
                  &host_atomics));
  switch (query) {
  case PI_DEVICE_INFO_USM_HOST_SUPPORT:
  case PI_DEVICE_INFO_USM_DEVICE_SUPPORT:
    *out = all;
    break;
  case PI_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT:
  case PI_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT:
    *out = !managed     ? 0
           : concurrent ? all
                        : PI_USM_ACCESS | PI_USM_ATOMIC_ACCESS;
    break;
  default: /* PI_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT */
    *out = !pageable      ? 0
           : host_atomics ? all
                          : PI_USM_ACCESS | PI_USM_CONCURRENT_ACCESS;
    break;
  }
  return PI_SUCCESS;
}

static pi_result cu_piDeviceGetInfo(pi_device device, pi_device_info param_name,
                                    size_t param_value_size, void *param_value,
                                    size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  pi_device d = device;
  int v = 0, v2 = 0, v3 = 0;
  char buf[128];
  REQUIRE(device != NULL);
#define ATTR(a, var) TRY(device_attr(FN, d, CU_DEVICE_ATTRIBUTE_##a, &(var)))
  switch (param_name) {
  case PI_DEVICE_INFO_TYPE:
    return put_u64(&o, PI_DEVICE_TYPE_GPU);
  case PI_DEVICE_INFO_VENDOR_ID:
    return put_u32(&o, 0x10de); /* NVIDIA's PCI vendor id */
  case PI_DEVICE_INFO_MAX_COMPUTE_UNITS:
    ATTR(MULTIPROCESSOR_COUNT, v);
    return put_u32(&o, (uint32_t)v);
  case PI_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS:
    return put_u32(&o, 3);
  case PI_DEVICE_INFO_MAX_WORK_ITEM_SIZES: {
    ATTR(MAX_BLOCK_DIM_X, v);
    ATTR(MAX_BLOCK_DIM_Y, v2);
    ATTR(MAX_BLOCK_DIM_Z, v3);
    size_t sizes[3] = {(size_t)v, (size_t)v2, (size_t)v3};
    return put_info(&o, sizes, sizeof sizes);
  }
  case PI_DEVICE_INFO_MAX_WORK_GROUP_SIZE:
    ATTR(MAX_THREADS_PER_BLOCK, v);
    return put_size(&o, (size_t)v);
  case PI_DEVICE_INFO_SINGLE_FP_CONFIG:
    return put_u64(&o, PI_FP_DENORM | PI_FP_INF_NAN | PI_FP_ROUND_TO_NEAREST |
                           PI_FP_ROUND_TO_ZERO | PI_FP_ROUND_TO_INF |
                           PI_FP_FMA | PI_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT);
  case PI_DEVICE_INFO_DOUBLE_FP_CONFIG:
    return put_u64(&o, PI_FP_DENORM | PI_FP_INF_NAN | PI_FP_ROUND_TO_NEAREST |
                           PI_FP_ROUND_TO_ZERO | PI_FP_ROUND_TO_INF |
                           PI_FP_FMA);
  case PI_DEVICE_INFO_HALF_FP_CONFIG: /* half arithmetic: sm_53 and later */
    return put_u64(&o, d->cc_major * 10 + d->cc_minor >= 53
                           ? PI_FP_DENORM | PI_FP_INF_NAN |
                                 PI_FP_ROUND_TO_NEAREST | PI_FP_ROUND_TO_ZERO |
                                 PI_FP_ROUND_TO_INF | PI_FP_FMA
                           : 0);
  case PI_DEVICE_INFO_QUEUE_PROPERTIES: /* = QUEUE_ON_HOST_PROPERTIES */
    return put_u64(&o, PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE |
                           PI_QUEUE_FLAG_PROFILING_ENABLE);
  case PI_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES:
    return put_u64(&o, 0);
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_CHAR:
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_SHORT:
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_INT:
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG:
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_FLOAT:
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_DOUBLE:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE:
    return put_u32(&o, 1); /* scalar per thread: SIMT */
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_HALF:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF:
    return put_u32(&o, d->cc_major * 10 + d->cc_minor >= 53 ? 2 : 0);
  case PI_DEVICE_INFO_MAX_CLOCK_FREQUENCY:
    ATTR(CLOCK_RATE, v); /* kHz */
    return put_u32(&o, (uint32_t)(v / 1000));
  case PI_DEVICE_INFO_ADDRESS_BITS:
    return put_u32(&o, 64);
  case PI_DEVICE_INFO_MAX_MEM_ALLOC_SIZE:
  case PI_DEVICE_INFO_GLOBAL_MEM_SIZE: {
    size_t total = 0;
    TRY(CU(cuDeviceTotalMem, &total, d->cu));
    return put_u64(&o, total);
  }
  case PI_DEVICE_INFO_IMAGE_SUPPORT:
  case PI_DEVICE_INFO_IMAGE_SRGB:
    return put_bool(&o, 0); /* IMAGES_UNSUPPORTED */
  case PI_DEVICE_INFO_MAX_READ_IMAGE_ARGS:
  case PI_DEVICE_INFO_MAX_WRITE_IMAGE_ARGS:
  case PI_DEVICE_INFO_MAX_SAMPLERS:
    return put_u32(&o, 0);
  case PI_DEVICE_INFO_IMAGE2D_MAX_WIDTH:
  case PI_DEVICE_INFO_IMAGE2D_MAX_HEIGHT:
  case PI_DEVICE_INFO_IMAGE3D_MAX_WIDTH:
  case PI_DEVICE_INFO_IMAGE3D_MAX_HEIGHT:
  case PI_DEVICE_INFO_IMAGE3D_MAX_DEPTH:
  case PI_DEVICE_INFO_IMAGE_MAX_BUFFER_SIZE:
  case PI_DEVICE_INFO_IMAGE_MAX_ARRAY_SIZE:
    return put_size(&o, 0);
  case PI_DEVICE_INFO_MAX_PARAMETER_SIZE:
    /* Kernel parameters: 4 KiB, 32764 bytes from CUDA 12.1 on Volta+. */
    return put_size(&o, d->platform->driver_version >= 12010 && d->cc_major >= 7
                            ? 32764
                            : 4096);
  case PI_DEVICE_INFO_MEM_BASE_ADDR_ALIGN:
    ATTR(TEXTURE_ALIGNMENT, v); /* bytes; the query wants bits */
    return put_u32(&o, (uint32_t)v * 8);
  case PI_DEVICE_INFO_GLOBAL_MEM_CACHE_TYPE:
    return put_u32(&o, PI_DEVICE_MEM_CACHE_TYPE_READ_WRITE_CACHE);
  case PI_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE:
    return put_u32(&o, 128); /* L2 line of every CUDA architecture */
  case PI_DEVICE_INFO_GLOBAL_MEM_CACHE_SIZE:
    ATTR(L2_CACHE_SIZE, v);
    return put_u64(&o, (uint64_t)v);
  case PI_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE:
    ATTR(TOTAL_CONSTANT_MEMORY, v);
    return put_u64(&o, (uint64_t)v);
  case PI_DEVICE_INFO_MAX_CONSTANT_ARGS:
    return put_u32(&o, 9); /* as DPC++'s CUDA plugin */
  case PI_DEVICE_INFO_LOCAL_MEM_TYPE:
    return put_u32(&o, PI_DEVICE_LOCAL_MEM_TYPE_LOCAL);
  case PI_DEVICE_INFO_LOCAL_MEM_SIZE:
    /* Launches opt in to it (cuFuncSetAttribute) when they need more than
     * the default 48 KiB. */
    ATTR(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, v);
    return put_u64(&o, (uint64_t)v);
  case PI_DEVICE_INFO_ERROR_CORRECTION_SUPPORT:
    ATTR(ECC_ENABLED, v);
    return put_bool(&o, v);
  case PI_DEVICE_INFO_HOST_UNIFIED_MEMORY:
    ATTR(INTEGRATED, v);
    return put_bool(&o, v);
  case PI_DEVICE_INFO_PROFILING_TIMER_RESOLUTION:
    return put_size(&o, 500); /* CUevent timing: about half a microsecond */
  case PI_DEVICE_INFO_ENDIAN_LITTLE:
  case PI_DEVICE_INFO_AVAILABLE:
  case PI_DEVICE_INFO_COMPILER_AVAILABLE: /* the driver's PTX JIT */
  case PI_DEVICE_INFO_LINKER_AVAILABLE:   /* and its linker */
  case PI_DEVICE_INFO_PREFERRED_INTEROP_USER_SYNC:
  case PI_DEVICE_INFO_ATOMIC_64:
  case PI_DEVICE_INFO_BUILD_ON_SUBDEVICE:
    return put_bool(&o, 1);
  case PI_DEVICE_INFO_EXECUTION_CAPABILITIES:
    return put_u64(&o, PI_DEVICE_EXEC_CAPABILITIES_KERNEL);
  case PI_DEVICE_INFO_BUILT_IN_KERNELS:
  case PI_DEVICE_INFO_IL_VERSION:       /* the driver takes no SPIR-V */
  case PI_DEVICE_INFO_OPENCL_C_VERSION: /* nor OpenCL C */
    return put_str(&o, "");
  case PI_DEVICE_INFO_PLATFORM:
    return put_ptr(&o, d->platform);
  case PI_DEVICE_INFO_REFERENCE_COUNT:
    return put_u32(&o, 1); /* root devices live as long as the plugin */
  case PI_DEVICE_INFO_NAME:
    return put_str(&o, d->name);
  case PI_DEVICE_INFO_VENDOR:
    return put_str(&o, "NVIDIA Corporation");
  case PI_DEVICE_INFO_DRIVER_VERSION:
    snprintf(buf, sizeof buf, "%d.%d", d->platform->driver_version / 1000,
             d->platform->driver_version % 1000 / 10);
    return put_str(&o, buf);
  case PI_DEVICE_INFO_PROFILE:
    return put_str(&o, "CUDA");
  case PI_DEVICE_INFO_VERSION:
  case PI_DEVICE_INFO_BACKEND_VERSION: /* the compute capability */
    snprintf(buf, sizeof buf, "%d.%d", d->cc_major, d->cc_minor);
    return put_str(&o, buf);
  case PI_DEVICE_INFO_EXTENSIONS:
    return put_str(&o, d->cc_major * 10 + d->cc_minor >= 53
                           ? "cl_khr_fp64 cl_khr_fp16 cl_khr_subgroups "
                             "cl_khr_int64_base_atomics "
                             "cl_khr_int64_extended_atomics"
                           : "cl_khr_fp64 cl_khr_subgroups "
                             "cl_khr_int64_base_atomics "
                             "cl_khr_int64_extended_atomics");
  case PI_DEVICE_INFO_PRINTF_BUFFER_SIZE:
    return put_size(&o, 1u << 20); /* the driver's default printf FIFO */
  case PI_DEVICE_INFO_PARENT_DEVICE:
    return put_ptr(&o, NULL);
  case PI_DEVICE_INFO_PARTITION_PROPERTIES:
  case PI_DEVICE_INFO_PARTITION_TYPE: {
    pi_device_partition_property none = 0; /* CUDA devices do not split */
    return put_info(&o, &none, sizeof none);
  }
  case PI_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES:
    return put_u32(&o, 0);
  case PI_DEVICE_INFO_PARTITION_AFFINITY_DOMAIN:
    return put_u64(&o, 0);
  case PI_DEVICE_INFO_MAX_NUM_SUB_GROUPS:
    ATTR(MAX_THREADS_PER_BLOCK, v);
    ATTR(WARP_SIZE, v2);
    return put_u32(&o, (uint32_t)(v / (v2 ? v2 : 32)));
  case PI_DEVICE_INFO_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS:
    return put_bool(&o, d->cc_major >= 7); /* Volta's thread scheduling */
  case PI_DEVICE_INFO_SUB_GROUP_SIZES_INTEL: {
    /* size_t[], as the OpenCL plugin and DPC++ return it: one, the warp. */
    ATTR(WARP_SIZE, v);
    size_t warp = (size_t)v;
    return put_info(&o, &warp, sizeof warp);
  }
  case PI_DEVICE_INFO_USM_HOST_SUPPORT:
  case PI_DEVICE_INFO_USM_DEVICE_SUPPORT:
  case PI_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT:
  case PI_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT:
  case PI_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT: {
    pi_bitfield caps = 0;
    TRY(usm_capabilities(FN, d, param_name, &caps));
    return put_u64(&o, caps);
  }
  case PI_DEVICE_INFO_UUID: {
    if (!drv.cuDeviceGetUuid)
      return no_cuda_answer(&o, d, "the driver has no cuDeviceGetUuid");
    CUuuid uuid;
    TRY(CU(cuDeviceGetUuid, &uuid, d->cu));
    return put_info(&o, uuid.bytes, sizeof uuid.bytes);
  }
  case PI_DEVICE_INFO_PCI_ADDRESS:
    TRY(CU(cuDeviceGetPCIBusId, buf, (int)sizeof buf, d->cu));
    return put_str(&o, buf);
  case PI_DEVICE_INFO_MAX_MEM_BANDWIDTH:
    /* Bytes per second: double data rate at the peak memory clock. */
    ATTR(MEMORY_CLOCK_RATE, v);        /* kHz */
    ATTR(GLOBAL_MEMORY_BUS_WIDTH, v2); /* bits */
    return put_u64(&o, (uint64_t)v * 1000u * 2u * (uint64_t)v2 / 8u);
  case PI_EXT_INTEL_DEVICE_INFO_FREE_MEMORY: {
    uint64_t free_bytes = 0;
    TRY(free_memory(FN, d, &free_bytes));
    return put_u64(&o, free_bytes);
  }
  case PI_EXT_INTEL_DEVICE_INFO_MEMORY_CLOCK_RATE:
    ATTR(MEMORY_CLOCK_RATE, v); /* kHz; the query wants MHz */
    return put_u32(&o, (uint32_t)(v / 1000));
  case PI_EXT_INTEL_DEVICE_INFO_MEMORY_BUS_WIDTH:
    ATTR(GLOBAL_MEMORY_BUS_WIDTH, v);
    return put_u32(&o, (uint32_t)v);
  case PI_EXT_INTEL_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES:
    return put_i32(&o, 1);
  case PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
  case PI_EXT_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES:
    return put_u64(&o, atomic_orders(d));
  case PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
  case PI_EXT_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES:
    return put_u64(&o, atomic_scopes(d));
  case PI_EXT_ONEAPI_DEVICE_INFO_BFLOAT16_MATH_FUNCTIONS:
  case PI_EXT_ONEAPI_DEVICE_INFO_CUDA_ASYNC_BARRIER:
    return put_bool(&o, d->cc_major >= 8); /* Ampere */
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_GLOBAL_WORK_GROUPS:
    return put_size(&o, (size_t)INT_MAX);
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_1D:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_2D:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_3D: {
    ATTR(MAX_GRID_DIM_X, v);
    ATTR(MAX_GRID_DIM_Y, v2);
    ATTR(MAX_GRID_DIM_Z, v3);
    size_t max[3] = {(size_t)v, (size_t)v2, (size_t)v3};
    size_t dims = param_name == PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_1D ? 1
                  : param_name == PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_2D
                      ? 2
                      : 3;
    return put_info(&o, max, dims * sizeof max[0]);
  }
  case PI_EXT_CODEPLAY_DEVICE_INFO_MAX_REGISTERS_PER_WORK_GROUP:
    ATTR(MAX_REGISTERS_PER_BLOCK, v);
    return put_u32(&o, (uint32_t)v);
  /* Features this plugin does not offer. */
  case PI_EXT_CODEPLAY_DEVICE_INFO_SUPPORTS_FUSION:
  case PI_EXT_INTEL_DEVICE_INFO_MEM_CHANNEL_SUPPORT:
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
  case PI_EXT_ONEAPI_DEVICE_INFO_IMAGE_PITCH_ALIGN:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_IMAGE_LINEAR_WIDTH:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_IMAGE_LINEAR_HEIGHT:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_IMAGE_LINEAR_PITCH:
  case PI_EXT_ONEAPI_DEVICE_INFO_MIPMAP_MAX_ANISOTROPY:
    return no_cuda_answer(&o, d, IMAGES_UNSUPPORTED);
  case PI_EXT_ONEAPI_DEVICE_INFO_IP_VERSION:
  case PI_DEVICE_INFO_DEVICE_ID:
  case PI_DEVICE_INFO_GPU_EU_COUNT:
  case PI_DEVICE_INFO_GPU_EU_SIMD_WIDTH:
  case PI_DEVICE_INFO_GPU_SLICES:
  case PI_DEVICE_INFO_GPU_SUBSLICES_PER_SLICE:
  case PI_DEVICE_INFO_GPU_EU_COUNT_PER_SUBSLICE:
  case PI_DEVICE_INFO_GPU_HW_THREADS_PER_EU:
    return no_cuda_answer(&o, d,
                          "it describes Intel GPUs; use "
                          "PI_DEVICE_INFO_VERSION (the compute "
                          "capability) and MAX_COMPUTE_UNITS (SMs)");
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_GROUP_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_SUB_GROUP_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_SUB_GROUP_PROGRESS_AT_WORK_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_ITEM_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_ITEM_PROGRESS_AT_WORK_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_WORK_ITEM_PROGRESS_AT_SUB_GROUP_LEVEL:
  case PI_EXT_ONEAPI_DEVICE_INFO_MATRIX_COMBINATIONS:
  case PI_EXT_ONEAPI_DEVICE_INFO_COMPONENT_DEVICES:
  case PI_EXT_ONEAPI_DEVICE_INFO_COMPOSITE_DEVICE:
    return no_cuda_answer(&o, d,
                          "the CUDA plugin does not implement this "
                          "oneAPI extension");
  default:
    return unknown_query(&o);
  }
#undef ATTR
}

static pi_result cu_piDevicePartition(
    pi_device device, const pi_device_partition_property *properties,
    pi_uint32 num_devices, pi_device *out_devices, pi_uint32 *out_num_devices) {
  char what[300];
  (void)properties;
  (void)num_devices;
  (void)out_devices;
  (void)out_num_devices;
  REQUIRE(device != NULL);
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: %s cannot be partitioned: CUDA has no sub-devices", FN,
              describe(device, what, sizeof what));
}

/* Root devices live until piTearDown: retain and release count nothing. */
static pi_result cu_piDeviceRetain(pi_device device) {
  REQUIRE(device != NULL);
  return PI_SUCCESS;
}

static pi_result cu_piDeviceRelease(pi_device device) {
  REQUIRE(device != NULL);
  return PI_SUCCESS;
}

/* Picks an image for the nvptx64 target (PTX, or a cubin/fatbin built for
 * it), else any image whose format is PTX. */
static pi_result cu_piextDeviceSelectBinary(pi_device device,
                                            pi_device_binary *binaries,
                                            pi_uint32 num_binaries,
                                            pi_uint32 *selected_binary_ind) {
  REQUIRE(device != NULL && selected_binary_ind != NULL);
  REQUIRE(binaries != NULL || num_binaries == 0);
  *selected_binary_ind = UINT32_MAX;
  pi_uint32 by_target = UINT32_MAX, by_format = UINT32_MAX;
  for (pi_uint32 i = num_binaries; i-- > 0;) {
    const struct pi_device_binary_struct *b = binaries[i];
    if (!b)
      continue;
    if (target_is(b, __SYCL_PI_DEVICE_BINARY_TARGET_NVPTX64) &&
        b->Format != PI_DEVICE_BINARY_TYPE_SPIRV &&
        b->Format != PI_DEVICE_BINARY_TYPE_OPENCL_C &&
        b->Format != PI_DEVICE_BINARY_TYPE_LLVMIR_BITCODE)
      by_target = i;
    if (b->Format == PI_DEVICE_BINARY_TYPE_PTX)
      by_format = i;
  }
  *selected_binary_ind = by_target != UINT32_MAX ? by_target : by_format;
  if (*selected_binary_ind != UINT32_MAX)
    return PI_SUCCESS;
  char offered[512], what[300];
  return fail(PI_ERROR_INVALID_BINARY,
              "%s: no image fits %s, which takes PTX (target nvptx64 or "
              "format PI_DEVICE_BINARY_TYPE_PTX); offered: %s",
              FN, describe(device, what, sizeof what),
              binaries_offered(binaries, num_binaries, offered,
                               sizeof offered));
}

/* Device functions and globals need a program: defined with programs. */
static pi_result program_module(const char *fn, pi_program p, CUmodule *m);

/* The kernel's CUfunction as a 64-bit value, or 0 with
 * PI_ERROR_INVALID_KERNEL_NAME when the program has no such kernel. */
static pi_result
cu_piextGetDeviceFunctionPointer(pi_device device, pi_program program,
                                 const char *function_name,
                                 pi_uint64 *function_pointer_ret) {
  CUmodule m = NULL;
  CUfunction f = NULL;
  REQUIRE(device != NULL && program != NULL && function_name != NULL &&
          function_pointer_ret != NULL);
  *function_pointer_ret = 0;
  TRY(program_module(FN, program, &m));
  TRY(use_context(FN, program->ctx->cu));
  CUresult err = drv.cuModuleGetFunction(&f, m, function_name);
  if (err == CUDA_ERROR_NOT_FOUND)
    return fail(PI_ERROR_INVALID_KERNEL_NAME,
                "%s: the program has no kernel '%s' (CUDA can only name "
                "kernels, not device functions)",
                FN, function_name);
  TRY(cu_check(FN, "cuModuleGetFunction", err));
  *function_pointer_ret = (pi_uint64)(uintptr_t)f;
  return PI_SUCCESS;
}

static pi_result cu_piextGetGlobalVariablePointer(
    pi_device Device, pi_program Program, const char *GlobalVariableName,
    size_t *GlobalVariableSize, void **GlobalVariablePointerRet) {
  CUmodule m = NULL;
  CUdeviceptr ptr = 0;
  size_t size = 0;
  REQUIRE(Device != NULL && Program != NULL && GlobalVariableName != NULL &&
          GlobalVariablePointerRet != NULL);
  TRY(program_module(FN, Program, &m));
  TRY(use_context(FN, Program->ctx->cu));
  CUresult err = drv.cuModuleGetGlobal(&ptr, &size, m, GlobalVariableName);
  if (err == CUDA_ERROR_NOT_FOUND)
    return fail(PI_ERROR_INVALID_VALUE, "%s: the program has no global '%s'",
                FN, GlobalVariableName);
  TRY(cu_check(FN, "cuModuleGetGlobal", err));
  *GlobalVariablePointerRet = (void *)(uintptr_t)ptr;
  if (GlobalVariableSize)
    *GlobalVariableSize = size;
  return PI_SUCCESS;
}

/* The native handle of a device is its CUdevice (an ordinal). */
static pi_result cu_piextDeviceGetNativeHandle(pi_device device,
                                               pi_native_handle *nativeHandle) {
  REQUIRE(device != NULL && nativeHandle != NULL);
  *nativeHandle = (pi_native_handle)device->cu;
  return PI_SUCCESS;
}

static pi_result
cu_piextDeviceCreateWithNativeHandle(pi_native_handle nativeHandle,
                                     pi_platform platform, pi_device *device) {
  REQUIRE(device != NULL);
  pi_platform p = platform ? platform : get_platform();
  if (!p)
    return fail(PI_ERROR_INVALID_OPERATION, "%s: no CUDA platform: %s", FN,
                driver_problem);
  for (pi_uint32 i = 0; i < p->num_devices; ++i)
    if ((pi_native_handle)p->devices[i].cu == nativeHandle) {
      *device = &p->devices[i];
      return PI_SUCCESS;
    }
  return fail(PI_ERROR_INVALID_DEVICE,
              "%s: CUdevice %llu is not one of the %u device(s) of the CUDA "
              "platform",
              FN, (unsigned long long)nativeHandle, (unsigned)p->num_devices);
}

/* Device time: a base event recorded once per device, synchronised and
 * stamped with the host clock; later events count from it. Host time:
 * CLOCK_MONOTONIC in nanoseconds, the clock event profiling also uses. */
static pi_result cu_piGetDeviceAndHostTimer(pi_device Device,
                                            uint64_t *DeviceTime,
                                            uint64_t *HostTime) {
  REQUIRE(Device != NULL);
  if (!DeviceTime) {
    if (HostTime)
      *HostTime = now_ns();
    return PI_SUCCESS;
  }
  pi_device d = Device;
  CUcontext primary = NULL;
  CUevent ev = NULL;
  float ms = 0;
  TRY(device_primary(FN, d, &primary));
  TRY(use_context(FN, primary));
  if (!drv.cuEventElapsedTime)
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the driver has no cuEventElapsedTime", FN);
  pthread_mutex_lock(&d->lock);
  pi_result r = PI_SUCCESS;
  if (!d->timer_base) {
    r = CU(cuEventCreate, &d->timer_base, CU_EVENT_DEFAULT);
    if (r == PI_SUCCESS)
      r = CU(cuEventRecord, d->timer_base, NULL);
    if (r == PI_SUCCESS)
      r = CU(cuEventSynchronize, d->timer_base);
    d->timer_base_ns = now_ns();
    if (r != PI_SUCCESS && d->timer_base) {
      drv.cuEventDestroy(d->timer_base);
      d->timer_base = NULL;
    }
  }
  CUevent base = d->timer_base;
  uint64_t base_ns = d->timer_base_ns;
  pthread_mutex_unlock(&d->lock);
  TRY(r);
  r = CU(cuEventCreate, &ev, CU_EVENT_DEFAULT);
  if (r == PI_SUCCESS)
    r = CU(cuEventRecord, ev, NULL);
  if (r == PI_SUCCESS)
    r = CU(cuEventSynchronize, ev);
  uint64_t host = now_ns();
  if (r == PI_SUCCESS)
    r = CU(cuEventElapsedTime, &ms, base, ev);
  if (ev)
    drv.cuEventDestroy(ev);
  TRY(r);
  *DeviceTime = base_ns + (uint64_t)((double)ms * 1e6);
  if (HostTime)
    *HostTime = host;
  return PI_SUCCESS;
}

/* ---- Contexts -------------------------------------------------------------
 */

static pi_result context_new(pi_device d, CUcontext cu, bool primary, bool owns,
                             pi_context *out) {
  pi_context c = calloc(1, sizeof *c);
  if (!c)
    return PI_ERROR_OUT_OF_HOST_MEMORY;
  atomic_init(&c->refs, 1);
  c->dev = d;
  c->cu = cu;
  c->primary = primary;
  c->owns = owns;
  pthread_mutex_init(&c->lock, NULL);
  *out = c;
  return PI_SUCCESS;
}

/* One device per context; the context is that device's primary context.
 * Properties: __SYCL_PI_CONTEXT_PROPERTIES_CUDA_PRIMARY (any value: the
 * primary context is always used). CUDA reports errors at calls, never
 * asynchronously, so pfn_notify is never called. */
static pi_result cu_piContextCreate(
    const pi_context_properties *properties, pi_uint32 num_devices,
    const pi_device *devices,
    void (*pfn_notify)(const char *errinfo, const void *private_info, size_t cb,
                       void *user_data),
    void *user_data, pi_context *ret_context) {
  (void)pfn_notify;
  (void)user_data;
  REQUIRE(ret_context != NULL && devices != NULL && devices[0] != NULL);
  *ret_context = NULL;
  if (num_devices != 1)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: %u devices given; a CUDA context holds exactly one "
                "device (make one context per device)",
                FN, (unsigned)num_devices);
  pi_context_properties props[3] = {0, 0, 0};
  size_t nprops = 0;
  for (size_t i = 0; properties && properties[i]; i += 2) {
    if (properties[i] != __SYCL_PI_CONTEXT_PROPERTIES_CUDA_PRIMARY || i > 0)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: unknown context property 0x%llx; the CUDA plugin "
                  "knows __SYCL_PI_CONTEXT_PROPERTIES_CUDA_PRIMARY",
                  FN, (unsigned long long)properties[i]);
    props[0] = properties[0];
    props[1] = properties[1];
    nprops = 3;
  }
  pi_device d = devices[0];
  CUcontext cu = NULL;
  TRY(CU(cuDevicePrimaryCtxRetain, &cu, d->cu));
  pi_context c = NULL;
  if (context_new(d, cu, true, false, &c) != PI_SUCCESS) {
    drv.cuDevicePrimaryCtxRelease(d->cu);
    return out_of_memory(FN);
  }
  memcpy(c->props, props, sizeof props);
  c->num_props = nprops;
  *ret_context = c;
  return PI_SUCCESS;
}

static pi_result cu_piContextGetInfo(pi_context context,
                                     pi_context_info param_name,
                                     size_t param_value_size, void *param_value,
                                     size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  REQUIRE(context != NULL);
  switch (param_name) {
  case PI_CONTEXT_INFO_DEVICES:
    return put_ptr(&o, context->dev);
  case PI_CONTEXT_INFO_PLATFORM:
    return put_ptr(&o, context->dev->platform);
  case PI_CONTEXT_INFO_NUM_DEVICES:
    return put_u32(&o, 1);
  case PI_CONTEXT_INFO_PROPERTIES:
    return put_info(&o, context->props,
                    context->num_props * sizeof context->props[0]);
  case PI_CONTEXT_INFO_REFERENCE_COUNT:
    return put_u32(&o, atomic_load(&context->refs));
  case PI_EXT_CONTEXT_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
  case PI_EXT_CONTEXT_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES:
    return put_u64(&o, atomic_orders(context->dev));
  case PI_EXT_CONTEXT_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
  case PI_EXT_CONTEXT_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES:
    return put_u64(&o, atomic_scopes(context->dev));
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_FILL2D_SUPPORT:
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_MEMSET2D_SUPPORT:
  case PI_EXT_ONEAPI_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT:
    return put_bool(&o, 1);
  default:
    return unknown_query(&o);
  }
}

static pi_result cu_piContextRetain(pi_context context) {
  REQUIRE(context != NULL);
  ref_retain(&context->refs);
  return PI_SUCCESS;
}

/* The last release runs the extended deleters, then lets the CUDA context
 * go (the primary context is released, an owned native one destroyed). */
static pi_result cu_piContextRelease(pi_context context) {
  REQUIRE(context != NULL);
  if (!ref_release(&context->refs))
    return PI_SUCCESS;
  for (struct deleter *dl = context->deleters, *next; dl; dl = next) {
    next = dl->next;
    dl->fn(dl->user_data);
    free(dl);
  }
  pi_result r = PI_SUCCESS;
  if (driver_gone())
    ; /* the context went with the driver */
  else if (context->primary)
    r = CU(cuDevicePrimaryCtxRelease, context->dev->cu);
  else if (context->owns)
    r = CU(cuCtxDestroy, context->cu);
  pthread_mutex_destroy(&context->lock);
  free(context);
  return r;
}

static pi_result cu_piextContextSetExtendedDeleter(
    pi_context context, pi_context_extended_deleter func, void *user_data) {
  REQUIRE(context != NULL && func != NULL);
  struct deleter *dl = malloc(sizeof *dl);
  if (!dl)
    return out_of_memory(FN);
  dl->fn = func;
  dl->user_data = user_data;
  pthread_mutex_lock(&context->lock);
  dl->next = context->deleters;
  context->deleters = dl;
  pthread_mutex_unlock(&context->lock);
  return PI_SUCCESS;
}

static pi_result
cu_piextContextGetNativeHandle(pi_context context,
                               pi_native_handle *nativeHandle) {
  REQUIRE(context != NULL && nativeHandle != NULL);
  *nativeHandle = (pi_native_handle)(uintptr_t)context->cu;
  return PI_SUCCESS;
}

/* Wraps a CUcontext of one of the platform's devices; with
 * pluginOwnsNativeHandle the last release destroys it (cuCtxDestroy). */
static pi_result cu_piextContextCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_uint32 numDevices,
    const pi_device *devices, bool pluginOwnsNativeHandle,
    pi_context *context) {
  (void)numDevices;
  (void)devices;
  REQUIRE(nativeHandle != 0 && context != NULL);
  CUcontext cu = (CUcontext)(uintptr_t)nativeHandle, previous = NULL;
  CUdevice cudev = 0;
  pi_device dev = NULL;
  TRY(CU(cuCtxGetCurrent, &previous));
  TRY(CU(cuCtxSetCurrent, cu));
  pi_result r = CU(cuCtxGetDevice, &cudev);
  drv.cuCtxSetCurrent(previous);
  TRY(r);
  TRY(cu_piextDeviceCreateWithNativeHandle((pi_native_handle)cudev, NULL,
                                           &dev));
  if (context_new(dev, cu, false, pluginOwnsNativeHandle, context) !=
      PI_SUCCESS)
    return out_of_memory(FN);
  return PI_SUCCESS;
}

/* ---- Queues ---------------------------------------------------------------
 */

static pi_result queue_new(const char *fn, pi_context ctx, pi_device dev,
                           CUstream stream, pi_queue_properties props,
                           bool owns, pi_queue *out) {
  pi_queue q = calloc(1, sizeof *q);
  if (!q)
    return out_of_memory(fn);
  atomic_init(&q->refs, 1);
  q->ctx = ctx;
  q->dev = dev;
  q->stream = stream;
  q->props = props;
  q->owns = owns;
  if (props & PI_QUEUE_FLAG_PROFILING_ENABLE) {
    pi_result r = CUF(fn, cuEventCreate, &q->base, CU_EVENT_DEFAULT);
    if (r == PI_SUCCESS)
      r = CUF(fn, cuEventRecord, q->base, stream);
    if (r == PI_SUCCESS)
      r = CUF(fn, cuEventSynchronize, q->base);
    q->base_ns = now_ns();
    if (r != PI_SUCCESS) {
      if (q->base)
        drv.cuEventDestroy(q->base);
      free(q);
      return r;
    }
  }
  cu_piContextRetain(ctx);
  *out = q;
  return PI_SUCCESS;
}

/* A stream of the context's device. Commands run in submission order (an
 * out-of-order queue is a valid in-order one); the priority flags map to
 * the device's stream priorities. */
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
  if (!queue || !context)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: context and queue must not be NULL", fn);
  *queue = NULL;
  if (device && device != context->dev)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: the device is not the context's device", fn);
  if (flags & ~known)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown queue flags 0x%llx", fn,
                (unsigned long long)(flags & ~known));
  if (flags & (PI_QUEUE_FLAG_ON_DEVICE | PI_QUEUE_FLAG_ON_DEVICE_DEFAULT))
    return fail(PI_ERROR_INVALID_QUEUE_PROPERTIES,
                "%s: CUDA has no on-device queues", fn);
  if ((flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW) &&
      (flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_HIGH))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a queue cannot have both low and high priority", fn);
  TRY(use_context(fn, context->cu));
  CUstream s = NULL;
  if (flags & (PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW |
               PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_HIGH)) {
    int least = 0, greatest = 0; /* numerically: greatest is the smallest */
    TRY(CUF(fn, cuCtxGetStreamPriorityRange, &least, &greatest));
    TRY(CUF(fn, cuStreamCreateWithPriority, &s, CU_STREAM_NON_BLOCKING,
            (flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW) ? least
                                                            : greatest));
  } else {
    TRY(CUF(fn, cuStreamCreate, &s, CU_STREAM_NON_BLOCKING));
  }
  pi_result r = queue_new(fn, context, context->dev, s, flags, true, queue);
  if (r != PI_SUCCESS)
    drv.cuStreamDestroy(s);
  return r;
}

static pi_result cu_piQueueCreate(pi_context context, pi_device device,
                                  pi_queue_properties properties,
                                  pi_queue *queue) {
  return create_queue(FN, context, device, properties, queue);
}

/* properties: {PI_QUEUE_FLAGS, flags, PI_QUEUE_COMPUTE_INDEX, 0, 0}. */
static pi_result cu_piextQueueCreate(pi_context context, pi_device device,
                                     pi_queue_properties *properties,
                                     pi_queue *queue) {
  pi_queue_properties flags;
  TRY(queue_properties_flags(FN, properties, "CUDA", &flags));
  return create_queue(FN, context, device, flags, queue);
}

static pi_result cu_piQueueGetInfo(pi_queue command_queue,
                                   pi_queue_info param_name,
                                   size_t param_value_size, void *param_value,
                                   size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  pi_queue q = command_queue;
  REQUIRE(q != NULL);
  switch (param_name) {
  case PI_QUEUE_INFO_CONTEXT:
    return put_ptr(&o, q->ctx);
  case PI_QUEUE_INFO_DEVICE:
    return put_ptr(&o, q->dev);
  case PI_QUEUE_INFO_DEVICE_DEFAULT:
    return put_ptr(&o, NULL); /* no on-device queues */
  case PI_QUEUE_INFO_PROPERTIES:
    return put_u64(&o, q->props);
  case PI_QUEUE_INFO_REFERENCE_COUNT:
    return put_u32(&o, atomic_load(&q->refs));
  case PI_QUEUE_INFO_SIZE:
    return fail(PI_ERROR_INVALID_QUEUE,
                "%s: PI_QUEUE_INFO_SIZE is for on-device queues, which CUDA "
                "does not have",
                FN);
  case PI_EXT_ONEAPI_QUEUE_INFO_EMPTY: {
    TRY(use_context(FN, q->ctx->cu));
    CUresult err = drv.cuStreamQuery(q->stream);
    if (err != CUDA_SUCCESS && err != CUDA_ERROR_NOT_READY)
      return cu_check(FN, "cuStreamQuery", err);
    return put_bool(&o, err == CUDA_SUCCESS);
  }
  default:
    return unknown_query(&o);
  }
}

static pi_result cu_piQueueFinish(pi_queue command_queue) {
  REQUIRE(command_queue != NULL);
  TRY(use_context(FN, command_queue->ctx->cu));
  return CU(cuStreamSynchronize, command_queue->stream);
}

/* The driver submits every command when it is enqueued. */
static pi_result cu_piQueueFlush(pi_queue command_queue) {
  REQUIRE(command_queue != NULL);
  return PI_SUCCESS;
}

static pi_result cu_piQueueRetain(pi_queue command_queue) {
  REQUIRE(command_queue != NULL);
  ref_retain(&command_queue->refs);
  return PI_SUCCESS;
}

/* The stream goes once its commands are done (cuStreamDestroy does not
 * wait, and the driver finishes the work). */
static pi_result cu_piQueueRelease(pi_queue command_queue) {
  pi_queue q = command_queue;
  REQUIRE(q != NULL);
  if (!ref_release(&q->refs))
    return PI_SUCCESS;
  bool gone = driver_gone();
  pi_result r = gone ? PI_SUCCESS : use_context(FN, q->ctx->cu);
  if (q->base && !gone)
    drv.cuEventDestroy(q->base);
  if (r == PI_SUCCESS && q->owns && !gone)
    r = CU(cuStreamDestroy, q->stream);
  pi_context ctx = q->ctx;
  free(q);
  pi_result r2 = cu_piContextRelease(ctx);
  return r != PI_SUCCESS ? r : r2;
}

static pi_result cu_piextQueueGetNativeHandle(pi_queue queue,
                                              pi_native_handle *nativeHandle,
                                              int32_t *nativeHandleDesc) {
  REQUIRE(queue != NULL && nativeHandle != NULL);
  if (nativeHandleDesc)
    *nativeHandleDesc = 0; /* a CUstream */
  *nativeHandle = (pi_native_handle)(uintptr_t)queue->stream;
  return PI_SUCCESS;
}

/* Wraps a CUstream of the context; with pluginOwnsNativeHandle the last
 * release destroys it. Properties: {PI_QUEUE_FLAGS, flags, 0} or NULL. */
static pi_result cu_piextQueueCreateWithNativeHandle(
    pi_native_handle nativeHandle, int32_t nativeHandleDesc, pi_context context,
    pi_device device, bool pluginOwnsNativeHandle,
    pi_queue_properties *Properties, pi_queue *queue) {
  (void)nativeHandleDesc;
  REQUIRE(context != NULL && queue != NULL);
  pi_queue_properties flags = 0;
  for (size_t i = 0; Properties && Properties[i]; i += 2)
    if (Properties[i] == PI_QUEUE_FLAGS)
      flags = Properties[i + 1];
  if (device && device != context->dev)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: the device is not the context's device", FN);
  TRY(use_context(FN, context->cu));
  return queue_new(FN, context, context->dev, (CUstream)(uintptr_t)nativeHandle,
                   flags, pluginOwnsNativeHandle, queue);
}

/* ---- Events and commands ---------------------------------------------------
 * A command's event holds an end CUevent recorded after the command (and,
 * on profiling queues, a start one before it). Commands make their stream
 * wait for the wait list's events of other queues; events of the same
 * queue are already ordered. */

static pi_result event_new(const char *fn, pi_context ctx, pi_queue q,
                           pi_command_type type, pi_event *out) {
  pi_event e = calloc(1, sizeof *e);
  if (!e)
    return out_of_memory(fn);
  atomic_init(&e->refs, 1);
  e->ctx = ctx;
  e->queue = q;
  e->type = type;
  e->queued_ns = now_ns();
  e->owns_end = true;
  if (q) {
    bool timed = (q->props & PI_QUEUE_FLAG_PROFILING_ENABLE) != 0;
    unsigned flags = timed ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING;
    pi_result r = CUF(fn, cuEventCreate, &e->end, flags);
    if (r == PI_SUCCESS && timed)
      r = CUF(fn, cuEventCreate, &e->start, flags);
    if (r != PI_SUCCESS) {
      if (e->end)
        drv.cuEventDestroy(e->end);
      free(e);
      return r;
    }
    cu_piQueueRetain(q);
  }
  cu_piContextRetain(ctx);
  *out = e;
  return PI_SUCCESS;
}

static pi_result cu_piEventRetain(pi_event event);
static pi_result cu_piEventRelease(pi_event event);

/* Starts a command on `q`: makes its context current, makes its stream wait
 * for the wait list and, when the caller wants an event, creates it and
 * records its start. */
static pi_result cmd_start(const char *fn, pi_queue q, pi_uint32 nwait,
                           const pi_event *wait, pi_event *out,
                           pi_command_type type, pi_event *ev) {
  *ev = NULL;
  if (!q)
    return fail(PI_ERROR_INVALID_QUEUE, "%s: the queue is NULL", fn);
  if (nwait && !wait)
    return fail(PI_ERROR_INVALID_EVENT_WAIT_LIST,
                "%s: num_events_in_wait_list is %u but the list is NULL", fn,
                (unsigned)nwait);
  TRY(use_context(fn, q->ctx->cu));
  for (pi_uint32 i = 0; i < nwait; ++i) {
    if (!wait[i])
      return fail(PI_ERROR_INVALID_EVENT_WAIT_LIST,
                  "%s: event %u of the wait list is NULL", fn, (unsigned)i);
    if (wait[i]->end && wait[i]->queue != q)
      TRY(CUF(fn, cuStreamWaitEvent, q->stream, wait[i]->end, 0));
  }
  if (!out)
    return PI_SUCCESS;
  TRY(event_new(fn, q->ctx, q, type, ev));
  if ((*ev)->start) {
    pi_result r = CUF(fn, cuEventRecord, (*ev)->start, q->stream);
    if (r != PI_SUCCESS) {
      cu_piEventRelease(*ev);
      *ev = NULL;
      return r;
    }
  }
  return PI_SUCCESS;
}

/* Ends a command started with cmd_start: on success records the event's
 * end and hands it out, and waits for the stream when `blocking`; on
 * failure drops the event. Returns `r` or the first new error. */
static pi_result cmd_finish(const char *fn, pi_queue q, pi_result r,
                            pi_event ev, pi_event *out, bool blocking) {
  if (r == PI_SUCCESS && ev)
    r = CUF(fn, cuEventRecord, ev->end, q->stream);
  if (r == PI_SUCCESS && blocking)
    r = CUF(fn, cuStreamSynchronize, q->stream);
  if (r != PI_SUCCESS) {
    if (ev) {
      char keep[sizeof last_message];
      pi_result code = last_code;
      memcpy(keep, last_message, sizeof keep);
      cu_piEventRelease(ev);
      memcpy(last_message, keep, sizeof keep);
      last_code = code;
    }
    return r;
  }
  if (out)
    *out = ev;
  return PI_SUCCESS;
}

/* A user event, complete from the start (PI 11.15, as DPC++ asks). */
static pi_result cu_piEventCreate(pi_context context, pi_event *ret_event) {
  REQUIRE(context != NULL && ret_event != NULL);
  return event_new(FN, context, NULL, PI_COMMAND_TYPE_USER, ret_event);
}

/* The status of an event: complete, running (started on a profiling queue)
 * or submitted; a failed command's error as a negative status. */
static pi_result event_status(const char *fn, pi_event e, pi_int32 *status) {
  if (!e->end) {
    *status = PI_EVENT_COMPLETE;
    return PI_SUCCESS;
  }
  CUresult err = drv.cuEventQuery(e->end);
  if (err == CUDA_SUCCESS) {
    *status = PI_EVENT_COMPLETE;
    return PI_SUCCESS;
  }
  if (err != CUDA_ERROR_NOT_READY)
    return cu_check(fn, "cuEventQuery", err);
  *status = e->start && drv.cuEventQuery(e->start) == CUDA_SUCCESS
                ? PI_EVENT_RUNNING
                : PI_EVENT_SUBMITTED;
  return PI_SUCCESS;
}

static pi_result cu_piEventGetInfo(pi_event event, pi_event_info param_name,
                                   size_t param_value_size, void *param_value,
                                   size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  REQUIRE(event != NULL);
  switch (param_name) {
  case PI_EVENT_INFO_COMMAND_QUEUE:
    return put_ptr(&o, event->queue);
  case PI_EVENT_INFO_CONTEXT:
    return put_ptr(&o, event->ctx);
  case PI_EVENT_INFO_COMMAND_TYPE:
    return put_u32(&o, event->type);
  case PI_EVENT_INFO_COMMAND_EXECUTION_STATUS: {
    pi_int32 status = PI_EVENT_QUEUED;
    TRY(use_context(FN, event->ctx->cu));
    TRY(event_status(FN, event, &status));
    return put_i32(&o, status);
  }
  case PI_EVENT_INFO_REFERENCE_COUNT:
    return put_u32(&o, atomic_load(&event->refs));
  default:
    return unknown_query(&o);
  }
}

/* Nanoseconds on the host's CLOCK_MONOTONIC time line: the queue's base
 * event was stamped with it, and event times are CUevent distances from
 * there. END is START plus the command's own duration, so that durations
 * keep the events' full precision. */
static pi_result cu_piEventGetProfilingInfo(pi_event event,
                                            pi_profiling_info param_name,
                                            size_t param_value_size,
                                            void *param_value,
                                            size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  pi_event e = event;
  REQUIRE(e != NULL);
  if (param_name < PI_PROFILING_INFO_COMMAND_QUEUED ||
      param_name > PI_PROFILING_INFO_COMMAND_END)
    return unknown_query(&o);
  if (!e->queue || !e->start)
    return fail(PI_ERROR_PROFILING_INFO_NOT_AVAILABLE, "%s: the event %s", FN,
                e->queue ? "comes from a queue without "
                           "PI_QUEUE_FLAG_PROFILING_ENABLE"
                         : "is no command's (a user or native event)");
  if (!drv.cuEventElapsedTime)
    return fail(PI_ERROR_PROFILING_INFO_NOT_AVAILABLE,
                "%s: the driver has no cuEventElapsedTime", FN);
  TRY(use_context(FN, e->ctx->cu));
  CUresult err = drv.cuEventQuery(e->end);
  if (err == CUDA_ERROR_NOT_READY)
    return fail(PI_ERROR_PROFILING_INFO_NOT_AVAILABLE,
                "%s: the command has not completed yet; wait for the event "
                "first",
                FN);
  TRY(cu_check(FN, "cuEventQuery", err));
  float to_start = 0, duration = 0;
  TRY(CU(cuEventElapsedTime, &to_start, e->queue->base, e->start));
  TRY(CU(cuEventElapsedTime, &duration, e->start, e->end));
  uint64_t start = e->queue->base_ns +
                   (uint64_t)(to_start > 0 ? (double)to_start * 1e6 : 0.0);
  uint64_t end =
      start + (uint64_t)(duration > 0 ? (double)duration * 1e6 : 0.0);
  uint64_t queued = e->queued_ns < start ? e->queued_ns : start;
  switch (param_name) {
  case PI_PROFILING_INFO_COMMAND_QUEUED:
  case PI_PROFILING_INFO_COMMAND_SUBMIT: /* submitted when enqueued */
    return put_u64(&o, queued);
  case PI_PROFILING_INFO_COMMAND_START:
    return put_u64(&o, start);
  default:
    return put_u64(&o, end);
  }
}

static pi_result cu_piEventsWait(pi_uint32 num_events,
                                 const pi_event *event_list) {
  REQUIRE(num_events == 0 || event_list != NULL);
  for (pi_uint32 i = 0; i < num_events; ++i) {
    pi_event e = event_list[i];
    if (!e)
      return fail(PI_ERROR_INVALID_EVENT, "%s: event %u is NULL", FN,
                  (unsigned)i);
    if (!e->end)
      continue; /* user events are complete */
    TRY(use_context(FN, e->ctx->cu));
    TRY(CU(cuEventSynchronize, e->end));
  }
  return PI_SUCCESS;
}

struct callback {
  pi_event event;
  pi_int32 status;
  void (*fn)(pi_event, pi_int32, void *);
  void *user_data;
};

/* Waits (for PI_EVENT_COMPLETE) and calls the callback, in its own thread
 * so that the callback may make PI calls. */
static void *callback_thread(void *arg) {
  struct callback *cb = arg;
  pi_int32 status = cb->status;
  if (cb->status == PI_EVENT_COMPLETE && cb->event->end) {
    CUresult err = drv.cuEventSynchronize(cb->event->end);
    if (err != CUDA_SUCCESS)
      status = pi_from_cu(err);
  }
  cb->fn(cb->event, status, cb->user_data);
  cu_piEventRelease(cb->event);
  free(cb);
  return NULL;
}

/* Commands are submitted when enqueued, so a callback for
 * PI_EVENT_SUBMITTED or PI_EVENT_RUNNING runs at once (in a thread);
 * one for PI_EVENT_COMPLETE runs when the command completes. */
static pi_result cu_piEventSetCallback(
    pi_event event, pi_int32 command_exec_callback_type,
    void (*pfn_notify)(pi_event event, pi_int32 event_command_status,
                       void *user_data),
    void *user_data) {
  REQUIRE(event != NULL && pfn_notify != NULL);
  if (command_exec_callback_type != PI_EVENT_COMPLETE &&
      command_exec_callback_type != PI_EVENT_RUNNING &&
      command_exec_callback_type != PI_EVENT_SUBMITTED)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: callback type %d is none of PI_EVENT_COMPLETE, "
                "PI_EVENT_RUNNING, PI_EVENT_SUBMITTED",
                FN, (int)command_exec_callback_type);
  struct callback *cb = malloc(sizeof *cb);
  if (!cb)
    return out_of_memory(FN);
  cb->event = event;
  cb->status = command_exec_callback_type;
  cb->fn = pfn_notify;
  cb->user_data = user_data;
  cu_piEventRetain(event);
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int err = pthread_create(&t, &attr, callback_thread, cb);
  pthread_attr_destroy(&attr);
  if (err) {
    cu_piEventRelease(event);
    free(cb);
    return fail(PI_ERROR_OUT_OF_RESOURCES,
                "%s: cannot start the callback thread: %s", FN, strerror(err));
  }
  return PI_SUCCESS;
}

/* User events are complete from the start: setting PI_EVENT_COMPLETE on one
 * succeeds; nothing else can be set. */
static pi_result cu_piEventSetStatus(pi_event event,
                                     pi_int32 execution_status) {
  REQUIRE(event != NULL);
  if (event->type != PI_COMMAND_TYPE_USER || event->end)
    return fail(PI_ERROR_INVALID_EVENT,
                "%s: only user events (piEventCreate) take a status", FN);
  if (execution_status != PI_EVENT_COMPLETE)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: user events of the CUDA plugin are created complete; "
                "status %d cannot be set",
                FN, (int)execution_status);
  return PI_SUCCESS;
}

static pi_result cu_piEventRetain(pi_event event) {
  REQUIRE(event != NULL);
  ref_retain(&event->refs);
  return PI_SUCCESS;
}

/* CUevents may go while pending: the driver frees them once they complete. */
static pi_result cu_piEventRelease(pi_event event) {
  REQUIRE(event != NULL);
  if (!ref_release(&event->refs))
    return PI_SUCCESS;
  bool gone = driver_gone();
  pi_result r = gone ? PI_SUCCESS : use_context(FN, event->ctx->cu);
  if (event->start && !gone)
    drv.cuEventDestroy(event->start);
  if (event->end && event->owns_end && r == PI_SUCCESS && !gone)
    r = CU(cuEventDestroy, event->end);
  pi_result r2 = event->queue ? cu_piQueueRelease(event->queue) : PI_SUCCESS;
  pi_result r3 = cu_piContextRelease(event->ctx);
  free(event);
  return r != PI_SUCCESS ? r : r2 != PI_SUCCESS ? r2 : r3;
}

/* The event's end CUevent (NULL for user events). */
static pi_result cu_piextEventGetNativeHandle(pi_event event,
                                              pi_native_handle *nativeHandle) {
  REQUIRE(event != NULL && nativeHandle != NULL);
  *nativeHandle = (pi_native_handle)(uintptr_t)event->end;
  return PI_SUCCESS;
}

/* Wraps a CUevent; commands can wait for it and piEventsWait waits for it.
 * With ownNativeHandle the last release destroys it. */
static pi_result
cu_piextEventCreateWithNativeHandle(pi_native_handle nativeHandle,
                                    pi_context context, bool ownNativeHandle,
                                    pi_event *event) {
  REQUIRE(nativeHandle != 0 && context != NULL && event != NULL);
  TRY(event_new(FN, context, NULL, PI_COMMAND_TYPE_MARKER, event));
  (*event)->end = (CUevent)(uintptr_t)nativeHandle;
  (*event)->owns_end = ownNativeHandle;
  return PI_SUCCESS;
}

/* ---- Memory ---------------------------------------------------------------
 */

static pi_result mem_new(const char *fn, pi_context ctx, enum mem_kind kind,
                         CUdeviceptr ptr, size_t size, void *host,
                         pi_mem_flags flags, pi_mem *out) {
  pi_mem m = calloc(1, sizeof *m);
  if (!m)
    return out_of_memory(fn);
  atomic_init(&m->refs, 1);
  m->ctx = ctx;
  m->kind = kind;
  m->ptr = ptr;
  m->size = size;
  m->host = host;
  m->flags = flags;
  pthread_mutex_init(&m->lock, NULL);
  cu_piContextRetain(ctx);
  *out = m;
  return PI_SUCCESS;
}

/* Frees what a buffer holds of its own (not sub-buffers' parents). */
static pi_result mem_free_storage(const char *fn, pi_mem m) {
  switch (m->kind) {
  case MEM_DEVICE:
    return CUF(fn, cuMemFree, m->ptr);
  case MEM_PINNED:
    return CUF(fn, cuMemFreeHost, m->host);
  case MEM_REGISTERED:
    return m->owns ? CUF(fn, cuMemHostUnregister, m->host) : PI_SUCCESS;
  case MEM_NATIVE:
    return m->owns ? CUF(fn, cuMemFree, m->ptr) : PI_SUCCESS;
  case MEM_SUB:
    break;
  }
  return PI_SUCCESS;
}

/* Flags: read-write or read-only (a hint CUDA has no use for) and one of
 * PI_MEM_FLAGS_HOST_PTR_USE (the device works on the host memory, which
 * is registered with the driver), _COPY (device memory starting with a
 * copy) or _ALLOC (pinned host memory; with _COPY, a copy in it). */
static pi_result cu_piMemBufferCreate(pi_context context, pi_mem_flags flags,
                                      size_t size, void *host_ptr,
                                      pi_mem *ret_mem,
                                      const pi_mem_properties *properties) {
  const pi_mem_flags known = PI_MEM_FLAGS_ACCESS_RW | PI_MEM_ACCESS_READ_ONLY |
                             PI_MEM_FLAGS_HOST_PTR_USE |
                             PI_MEM_FLAGS_HOST_PTR_COPY |
                             PI_MEM_FLAGS_HOST_PTR_ALLOC;
  REQUIRE(context != NULL && ret_mem != NULL);
  *ret_mem = NULL;
  if (flags & ~known)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown memory flags 0x%llx", FN,
                (unsigned long long)(flags & ~known));
  if (size == 0)
    return fail(PI_ERROR_INVALID_BUFFER_SIZE, "%s: size is 0", FN);
  bool use = flags & PI_MEM_FLAGS_HOST_PTR_USE,
       copy = flags & PI_MEM_FLAGS_HOST_PTR_COPY,
       alloc = flags & PI_MEM_FLAGS_HOST_PTR_ALLOC;
  if ((use || copy) != (host_ptr != NULL))
    return fail(PI_ERROR_INVALID_HOST_PTR,
                "%s: host_ptr must be given exactly when "
                "PI_MEM_FLAGS_HOST_PTR_USE or _COPY is set",
                FN);
  if (use && (copy || alloc))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: PI_MEM_FLAGS_HOST_PTR_USE excludes _COPY and _ALLOC", FN);
  /* Channel and buffer location properties are FPGA placement hints. */
  for (size_t i = 0; properties && properties[i]; i += 2)
    if (properties[i] != PI_MEM_PROPERTIES_CHANNEL &&
        properties[i] != PI_MEM_PROPERTIES_ALLOC_BUFFER_LOCATION)
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown buffer property 0x%llx",
                  FN, (unsigned long long)properties[i]);
  TRY(use_context(FN, context->cu));
  CUdeviceptr ptr = 0;
  void *host = NULL;
  enum mem_kind kind = MEM_DEVICE;
  bool owns = true;
  if (use) {
    kind = MEM_REGISTERED;
    host = host_ptr;
    CUresult err =
        drv.cuMemHostRegister(host, size, CU_MEMHOSTREGISTER_DEVICEMAP);
    if (err == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
      owns = false; /* pinned already (cuMemAllocHost, another buffer) */
    else
      TRY(cu_check(FN, "cuMemHostRegister", err));
    pi_result r = CU(cuMemHostGetDevicePointer, &ptr, host, 0);
    if (r != PI_SUCCESS) {
      if (owns)
        drv.cuMemHostUnregister(host);
      return r;
    }
  } else if (alloc) {
    kind = MEM_PINNED;
    CUresult err = drv.cuMemAllocHost(&host, size);
    if (err == CUDA_ERROR_OUT_OF_MEMORY)
      return fail(PI_ERROR_MEM_OBJECT_ALLOCATION_FAILURE,
                  "%s: cuMemAllocHost cannot pin %zu bytes", FN, size);
    TRY(cu_check(FN, "cuMemAllocHost", err));
    pi_result r = CU(cuMemHostGetDevicePointer, &ptr, host, 0);
    if (r != PI_SUCCESS) {
      drv.cuMemFreeHost(host);
      return r;
    }
    if (copy)
      memcpy(host, host_ptr, size);
  } else {
    CUresult err = drv.cuMemAlloc(&ptr, size);
    if (err == CUDA_ERROR_OUT_OF_MEMORY) {
      char what[300];
      return fail(PI_ERROR_MEM_OBJECT_ALLOCATION_FAILURE,
                  "%s: cuMemAlloc cannot allocate %zu bytes on %s", FN, size,
                  describe(context->dev, what, sizeof what));
    }
    TRY(cu_check(FN, "cuMemAlloc", err));
    if (copy) {
      pi_result r = CU(cuMemcpyHtoD, ptr, host_ptr, size);
      if (r != PI_SUCCESS) {
        drv.cuMemFree(ptr);
        return r;
      }
    }
  }
  pi_result r = mem_new(FN, context, kind, ptr, size, host, flags, ret_mem);
  if (r != PI_SUCCESS) {
    struct _pi_mem storage;
    memset(&storage, 0, sizeof storage);
    storage.kind = kind;
    storage.ptr = ptr;
    storage.host = host;
    storage.owns = owns;
    mem_free_storage(FN, &storage);
    return r;
  }
  (*ret_mem)->owns = owns;
  return PI_SUCCESS;
}

static pi_result cu_piMemImageCreate(pi_context context, pi_mem_flags flags,
                                     const pi_image_format *image_format,
                                     const pi_image_desc *image_desc,
                                     void *host_ptr, pi_mem *ret_mem) {
  (void)context;
  (void)flags;
  (void)image_format;
  (void)image_desc;
  (void)host_ptr;
  if (ret_mem)
    *ret_mem = NULL;
  return no_images(FN);
}

static pi_result cu_piMemGetInfo(pi_mem mem, pi_mem_info param_name,
                                 size_t param_value_size, void *param_value,
                                 size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  REQUIRE(mem != NULL);
  switch (param_name) {
  case PI_MEM_CONTEXT:
    return put_ptr(&o, mem->ctx);
  case PI_MEM_SIZE:
    return put_size(&o, mem->size);
  default:
    return unknown_query(&o);
  }
}

static pi_result cu_piMemImageGetInfo(pi_mem image, pi_image_info param_name,
                                      size_t param_value_size,
                                      void *param_value,
                                      size_t *param_value_size_ret) {
  (void)image;
  (void)param_name;
  (void)param_value_size;
  (void)param_value;
  (void)param_value_size_ret;
  return no_images(FN);
}

static pi_result cu_piMemRetain(pi_mem mem) {
  REQUIRE(mem != NULL);
  ref_retain(&mem->refs);
  return PI_SUCCESS;
}

/* The last release frees the memory (cuMemFree waits for the device to be
 * done with it) and any mapping's staging copy. */
static pi_result cu_piMemRelease(pi_mem mem) {
  REQUIRE(mem != NULL);
  if (!ref_release(&mem->refs))
    return PI_SUCCESS;
  bool gone = driver_gone();
  pi_result r = gone ? PI_SUCCESS : use_context(FN, mem->ctx->cu);
  if (r == PI_SUCCESS && !gone)
    r = mem_free_storage(FN, mem);
  for (struct mapping *mp = mem->maps, *next; mp; mp = next) {
    next = mp->next;
    free(mp->ptr);
    free(mp);
  }
  pi_result r2 = mem->parent ? cu_piMemRelease(mem->parent) : PI_SUCCESS;
  pi_result r3 = cu_piContextRelease(mem->ctx);
  pthread_mutex_destroy(&mem->lock);
  free(mem);
  return r != PI_SUCCESS ? r : r2 != PI_SUCCESS ? r2 : r3;
}

/* A region of a buffer. Its origin must be aligned to
 * PI_DEVICE_INFO_MEM_BASE_ADDR_ALIGN, as in OpenCL. */
static pi_result
cu_piMemBufferPartition(pi_mem buffer, pi_mem_flags flags,
                        pi_buffer_create_type buffer_create_type,
                        void *buffer_create_info, pi_mem *ret_mem) {
  REQUIRE(buffer != NULL && ret_mem != NULL && buffer_create_info != NULL);
  *ret_mem = NULL;
  if (buffer_create_type != PI_BUFFER_CREATE_TYPE_REGION)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: buffer_create_type 0x%x is unknown; only "
                "PI_BUFFER_CREATE_TYPE_REGION exists",
                FN, (unsigned)buffer_create_type);
  if (buffer->kind == MEM_SUB)
    return fail(PI_ERROR_INVALID_MEM_OBJECT,
                "%s: the buffer is itself a sub-buffer; partition its parent",
                FN);
  if (flags & (PI_MEM_FLAGS_HOST_PTR_USE | PI_MEM_FLAGS_HOST_PTR_COPY |
               PI_MEM_FLAGS_HOST_PTR_ALLOC))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: sub-buffers take no host pointer flags", FN);
  const struct pi_buffer_region_struct *region = buffer_create_info;
  if (region->size == 0 || region->origin > buffer->size ||
      region->size > buffer->size - region->origin)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: region %zu..%zu is outside the %zu-byte buffer", FN,
                region->origin, region->origin + region->size, buffer->size);
  int align = 0;
  TRY(device_attr(FN, buffer->ctx->dev, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT,
                  &align));
  if (align > 0 && region->origin % (size_t)align)
    return fail(PI_ERROR_MISALIGNED_SUB_BUFFER_OFFSET,
                "%s: origin %zu is not a multiple of %d bytes "
                "(PI_DEVICE_INFO_MEM_BASE_ADDR_ALIGN)",
                FN, region->origin, align);
  TRY(mem_new(FN, buffer->ctx, MEM_SUB, buffer->ptr + region->origin,
              region->size, buffer->host ? buffer->host + region->origin : NULL,
              flags ? flags : buffer->flags, ret_mem));
  cu_piMemRetain(buffer);
  (*ret_mem)->parent = buffer;
  return PI_SUCCESS;
}

/* The buffer's CUdeviceptr. */
static pi_result cu_piextMemGetNativeHandle(pi_mem mem, pi_device dev,
                                            pi_native_handle *nativeHandle) {
  (void)dev; /* one device per context */
  REQUIRE(mem != NULL && nativeHandle != NULL);
  *nativeHandle = (pi_native_handle)mem->ptr;
  return PI_SUCCESS;
}

/* Wraps device memory (a CUdeviceptr from cuMemAlloc, the start of its
 * allocation); with ownNativeHandle the last release frees it. */
static pi_result
cu_piextMemCreateWithNativeHandle(pi_native_handle nativeHandle,
                                  pi_context context, bool ownNativeHandle,
                                  pi_mem *mem) {
  REQUIRE(nativeHandle != 0 && context != NULL && mem != NULL);
  CUdeviceptr base = 0;
  size_t size = 0;
  TRY(use_context(FN, context->cu));
  TRY(CU(cuMemGetAddressRange, &base, &size, (CUdeviceptr)nativeHandle));
  if (base != (CUdeviceptr)nativeHandle)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: 0x%llx is inside an allocation, not its start (0x%llx)",
                FN, (unsigned long long)nativeHandle, (unsigned long long)base);
  TRY(mem_new(FN, context, MEM_NATIVE, base, size, NULL, PI_MEM_FLAGS_ACCESS_RW,
              mem));
  (*mem)->owns = ownNativeHandle;
  return PI_SUCCESS;
}

static pi_result cu_piextMemImageCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, bool ownNativeHandle,
    const pi_image_format *ImageFormat, const pi_image_desc *ImageDesc,
    pi_mem *img) {
  (void)nativeHandle;
  (void)context;
  (void)ownNativeHandle;
  (void)ImageFormat;
  (void)ImageDesc;
  (void)img;
  return no_images(FN);
}

/* ---- Programs --------------------------------------------------------------
 * A program holds an image: PTX text, or a cubin or fatbin. Build loads it
 * as a module (the driver JIT-compiles PTX); compile checks PTX through the
 * driver's linker; link runs the driver's linker over PTX, cubins and
 * fatbins (so PTX with extern functions links against device libraries)
 * and loads the result. The JIT's error and info logs are the build log. */

static const uint32_t FATBIN_MAGIC = 0xBA55ED50u;
static const uint32_t SPIRV_MAGIC = 0x07230203u;

static enum image_kind image_kind_of(const unsigned char *b, size_t n) {
  uint32_t magic = 0;
  if (n >= 4)
    memcpy(&magic, b, sizeof magic);
  if (n >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F')
    return IMAGE_CUBIN;
  if (n >= 4 && magic == FATBIN_MAGIC)
    return IMAGE_FATBIN;
  if (n >= 4 && magic == SPIRV_MAGIC)
    return IMAGE_NONE;
  /* PTX: text with a .version or .target directive. */
  if (memmem(b, n, ".version", 8) || memmem(b, n, ".target", 7))
    return IMAGE_PTX;
  return IMAGE_NONE;
}

/* Fails for an image that is no PTX, cubin or fatbin, saying what it is. */
static pi_result bad_image(const char *fn, const unsigned char *b, size_t n,
                           pi_result code) {
  uint32_t magic = 0;
  if (n >= 4)
    memcpy(&magic, b, sizeof magic);
  if (magic == SPIRV_MAGIC)
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the image is SPIR-V, which the CUDA driver cannot "
                "consume; give PTX (an nvptx64 image), a cubin or a fatbin",
                fn);
  return fail(code,
              "%s: the image (%zu bytes) is no PTX (no .version or .target "
              "directive), cubin (ELF) or fatbin",
              fn, n);
}

static pi_result program_new(const char *fn, pi_context ctx,
                             const unsigned char *image, size_t size,
                             enum image_kind kind, pi_program *out) {
  pi_program p = calloc(1, sizeof *p);
  if (!p)
    return out_of_memory(fn);
  if (image) {
    p->image = malloc(size + 1);
    if (!p->image) {
      free(p);
      return out_of_memory(fn);
    }
    memcpy(p->image, image, size);
    p->image[size] = 0; /* PTX must end in a NUL for the driver */
    p->image_size = size;
  }
  atomic_init(&p->refs, 1);
  p->ctx = ctx;
  p->kind = kind;
  p->status = PI_PROGRAM_BUILD_STATUS_NONE;
  p->binary_type = PI_PROGRAM_BINARY_TYPE_NONE;
  pthread_mutex_init(&p->lock, NULL);
  cu_piContextRetain(ctx);
  *out = p;
  return PI_SUCCESS;
}

/* Appends `name` to a ';'-separated list. */
static bool list_add(char **list, size_t *count, const char *name, size_t len) {
  size_t old = *list ? strlen(*list) : 0;
  char *n = realloc(*list, old + len + 2);
  if (!n)
    return false;
  if (old)
    n[old++] = ';';
  memcpy(n + old, name, len);
  n[old + len] = 0;
  *list = n;
  ++*count;
  return true;
}

/* Appends the kernels of a PTX text: the names its .entry directives give. */
static bool ptx_entries(const char *ptx, char **list, size_t *count) {
  static const char ws[] = " \t\r\n";
  for (const char *p = ptx; (p = strstr(p, ".entry")); p += 6) {
    const char *q = p + 6;
    if ((p > ptx && !strchr(ws, p[-1])) || !*q || !strchr(ws, *q))
      continue;
    q += strspn(q, ws);
    size_t len = strcspn(q, " \t\r\n(");
    if (len && !list_add(list, count, q, len))
      return false;
  }
  return true;
}

/* Lists a module's kernels through the driver (CUDA 12.4+). */
static pi_result module_entries(const char *fn, CUmodule m, char **list,
                                size_t *count) {
  unsigned n = 0;
  if (!drv.cuModuleGetFunctionCount || !drv.cuModuleEnumerateFunctions ||
      !drv.cuFuncGetName)
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the driver cannot list a module's kernels (it needs "
                "CUDA 12.4's cuModuleEnumerateFunctions)",
                fn);
  TRY(CUF(fn, cuModuleGetFunctionCount, &n, m));
  CUfunction *fns = calloc(n ? n : 1, sizeof *fns);
  if (!fns)
    return out_of_memory(fn);
  pi_result r = CUF(fn, cuModuleEnumerateFunctions, fns, n, m);
  for (unsigned i = 0; r == PI_SUCCESS && i < n; ++i) {
    const char *name = NULL;
    r = CUF(fn, cuFuncGetName, &name, fns[i]);
    if (r == PI_SUCCESS && name && !list_add(list, count, name, strlen(name)))
      r = out_of_memory(fn);
  }
  free(fns);
  return r;
}

/* JIT options with the error and info log buffers. */
struct jit {
  CUjit_option keys[16];
  void *vals[16];
  unsigned n;
  char notes[512];
  char info[16384], error[16384];
};

static void jit_add(struct jit *j, CUjit_option key, uintptr_t value) {
  j->keys[j->n] = key;
  j->vals[j->n] = (void *)value;
  j->n++;
}

static void jit_init(struct jit *j) {
  j->n = 0;
  j->notes[0] = j->info[0] = j->error[0] = 0;
  jit_add(j, CU_JIT_INFO_LOG_BUFFER, (uintptr_t)j->info);
  jit_add(j, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, sizeof j->info);
  jit_add(j, CU_JIT_ERROR_LOG_BUFFER, (uintptr_t)j->error);
  jit_add(j, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, sizeof j->error);
  jit_add(j, CU_JIT_LOG_VERBOSE, 1);
}

/* Turns build options into JIT options: -O0..-O4 (optimization level),
 * -g, -lineinfo, -maxrregcount=N; OpenCL's -cl-* options mean nothing to
 * the PTX JIT and are noted in the log. Anything else fails with `bad`. */
static pi_result jit_options(const char *fn, const char *options, struct jit *j,
                             pi_result bad) {
  char opt[128];
  for (const char *p = options ? options : ""; *p;) {
    p += strspn(p, " \t\r\n");
    size_t len = strcspn(p, " \t\r\n");
    if (!len)
      break;
    snprintf(opt, sizeof opt, "%.*s", (int)len, p);
    p += len;
    unsigned long v = 0;
    char *end = NULL;
    if (j->n + 1 >= sizeof j->keys / sizeof j->keys[0])
      return fail(bad, "%s: too many options", fn);
    if (strlen(opt) == 3 && opt[0] == '-' && opt[1] == 'O' && opt[2] >= '0' &&
        opt[2] <= '4')
      jit_add(j, CU_JIT_OPTIMIZATION_LEVEL, (uintptr_t)(opt[2] - '0'));
    else if (strcmp(opt, "-g") == 0)
      jit_add(j, CU_JIT_GENERATE_DEBUG_INFO, 1);
    else if (strcmp(opt, "-lineinfo") == 0)
      jit_add(j, CU_JIT_GENERATE_LINE_INFO, 1);
    else if ((strncmp(opt, "-maxrregcount=", 14) == 0 ||
              strncmp(opt, "--maxrregcount=", 15) == 0) &&
             (v = strtoul(strchr(opt, '=') + 1, &end, 10)) > 0 && !*end)
      jit_add(j, CU_JIT_MAX_REGISTERS, (uintptr_t)v);
    else if (strncmp(opt, "-cl-", 4) == 0) {
      size_t used = strlen(j->notes);
      snprintf(j->notes + used, sizeof j->notes - used,
               "note: OpenCL option %s ignored by the PTX JIT\n", opt);
    } else
      return fail(bad,
                  "%s: option '%s' is unknown to the CUDA JIT; it takes "
                  "-O0..-O4, -g, -lineinfo and -maxrregcount=N",
                  fn, opt);
  }
  return PI_SUCCESS;
}

/* The build log of a JIT run: notes, then errors, then information. */
static char *jit_log(const struct jit *j) {
  size_t n = strlen(j->notes) + strnlen(j->error, sizeof j->error - 1) +
             strnlen(j->info, sizeof j->info - 1) + 3;
  char *log = malloc(n);
  if (log)
    snprintf(log, n, "%s%.*s%s%.*s", j->notes, (int)(sizeof j->error - 1),
             j->error, j->error[0] && j->info[0] ? "\n" : "",
             (int)(sizeof j->info - 1), j->info);
  return log;
}

/* Fails with `code`, the driver's error and the start of the log. */
static pi_result jit_fail(const char *fn, pi_result code, const char *cufn,
                          CUresult err, const char *log) {
  char text[256];
  return fail(code, "%s: %s failed with %s; build log: %.600s", fn, cufn,
              cu_error_text(err, text, sizeof text),
              log && *log ? log : "(empty)");
}

/* The PI result of a failed JIT run: `failure` (build, compile or link
 * failure) unless the driver itself could not work. */
static pi_result jit_code(CUresult err, pi_result failure) {
  switch (err) {
  case CUDA_ERROR_OUT_OF_MEMORY:
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_DEINITIALIZED:
  case CUDA_ERROR_INVALID_CONTEXT:
  case CUDA_ERROR_CONTEXT_IS_DESTROYED:
  case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
  case CUDA_ERROR_JIT_COMPILATION_DISABLED:
    return pi_from_cu(err);
  default:
    return failure;
  }
}

static pi_result check_devices(const char *fn, pi_context ctx, pi_uint32 n,
                               const pi_device *devs) {
  if (n && !devs)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: num_devices is %u but "
                "device_list is NULL",
                fn, (unsigned)n);
  for (pi_uint32 i = 0; i < n; ++i)
    if (devs[i] != ctx->dev)
      return fail(PI_ERROR_INVALID_DEVICE,
                  "%s: device %u is not the program's context's device", fn,
                  (unsigned)i);
  return PI_SUCCESS;
}

/* PTX text (what piProgramCreate takes here: CUDA has no IL of its own). */
static pi_result cu_piProgramCreate(pi_context context, const void *il,
                                    size_t length, pi_program *res_program) {
  REQUIRE(context != NULL && res_program != NULL);
  *res_program = NULL;
  REQUIRE(il != NULL && length != 0);
  if (image_kind_of(il, length) != IMAGE_PTX)
    return bad_image(FN, il, length, PI_ERROR_INVALID_BINARY);
  return program_new(FN, context, il, length, IMAGE_PTX, res_program);
}

static pi_result cu_piclProgramCreateWithSource(pi_context context,
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
              "%s: the CUDA driver cannot compile OpenCL C source; compile "
              "the kernels to PTX (nvcc -ptx, clang --cuda-device-only) and "
              "use piProgramCreateWithBinary",
              FN);
}

/* PTX text, a cubin or a fatbin for the context's device. The metadata
 * (DPC++ program properties) mean nothing to the driver. */
static pi_result cu_piProgramCreateWithBinary(
    pi_context context, pi_uint32 num_devices, const pi_device *device_list,
    const size_t *lengths, const unsigned char **binaries,
    size_t num_metadata_entries, const pi_device_binary_property *metadata,
    pi_int32 *binary_status, pi_program *ret_program) {
  (void)num_metadata_entries;
  (void)metadata;
  REQUIRE(context != NULL && ret_program != NULL);
  *ret_program = NULL;
  if (num_devices != 1)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: %u devices given; a CUDA context has one device", FN,
                (unsigned)num_devices);
  REQUIRE(lengths != NULL && binaries != NULL && binaries[0] != NULL &&
          lengths[0] != 0);
  TRY(check_devices(FN, context, num_devices, device_list));
  enum image_kind kind = image_kind_of(binaries[0], lengths[0]);
  if (binary_status)
    binary_status[0] =
        kind == IMAGE_NONE ? PI_ERROR_INVALID_BINARY : PI_SUCCESS;
  if (kind == IMAGE_NONE)
    return bad_image(FN, binaries[0], lengths[0], PI_ERROR_INVALID_BINARY);
  return program_new(FN, context, binaries[0], lengths[0], kind, ret_program);
}

/* The module of a built program. */
static pi_result program_module(const char *fn, pi_program p, CUmodule *m) {
  pthread_mutex_lock(&p->lock);
  *m = p->module;
  pthread_mutex_unlock(&p->lock);
  if (!*m)
    return fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE,
                "%s: the program is not built (piProgramBuild or "
                "piProgramLink first)",
                fn);
  return PI_SUCCESS;
}

static pi_result cu_piProgramGetInfo(pi_program program,
                                     pi_program_info param_name,
                                     size_t param_value_size, void *param_value,
                                     size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  pi_program p = program;
  pi_result r;
  REQUIRE(p != NULL);
  pthread_mutex_lock(&p->lock);
  switch (param_name) {
  case PI_PROGRAM_INFO_REFERENCE_COUNT:
    r = put_u32(&o, atomic_load(&p->refs));
    break;
  case PI_PROGRAM_INFO_CONTEXT:
    r = put_ptr(&o, p->ctx);
    break;
  case PI_PROGRAM_INFO_NUM_DEVICES:
    r = put_u32(&o, 1);
    break;
  case PI_PROGRAM_INFO_DEVICES:
    r = put_ptr(&o, p->ctx->dev);
    break;
  case PI_PROGRAM_INFO_SOURCE:
    r = put_str(&o, p->kind == IMAGE_PTX ? (const char *)p->image : "");
    break;
  case PI_PROGRAM_INFO_BINARY_SIZES:
    r = put_size(&o, p->image_size);
    break;
  case PI_PROGRAM_INFO_BINARIES: {
    /* An array of one pointer, to memory of BINARY_SIZES bytes. */
    unsigned char *dst = NULL;
    if (param_value && param_value_size < sizeof dst)
      r = fail(PI_ERROR_INVALID_VALUE,
               "%s: PI_PROGRAM_INFO_BINARIES needs room for one pointer", FN);
    else {
      if (param_value)
        memcpy(&dst, param_value, sizeof dst);
      if (dst && p->image)
        memcpy(dst, p->image, p->image_size);
      if (param_value_size_ret)
        *param_value_size_ret = sizeof dst;
      r = PI_SUCCESS;
    }
    break;
  }
  case PI_PROGRAM_INFO_NUM_KERNELS:
  case PI_PROGRAM_INFO_KERNEL_NAMES:
    if (!p->module)
      r = fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE,
               "%s: the program is not built, so it has no kernels yet", FN);
    else if (param_name == PI_PROGRAM_INFO_NUM_KERNELS)
      r = put_size(&o, p->num_kernels);
    else
      r = put_str(&o, p->kernel_names ? p->kernel_names : "");
    break;
  default:
    r = unknown_query(&o);
    break;
  }
  pthread_mutex_unlock(&p->lock);
  return r;
}

/* Records a JIT run's outcome on a program (its lock held). */
static void program_record(pi_program p, const struct jit *j,
                           const char *options, bool ok,
                           pi_program_binary_type type) {
  free(p->log);
  p->log = jit_log(j);
  free(p->options);
  p->options = dup_str(options ? options : "");
  p->status =
      ok ? PI_PROGRAM_BUILD_STATUS_SUCCESS : PI_PROGRAM_BUILD_STATUS_ERROR;
  if (ok)
    p->binary_type = type;
}

/* Lists a module's kernels where the driver can; otherwise the names stay
 * unknown, with a warning (the kernels still work). */
static void module_kernels(const char *fn, CUmodule m, char **list,
                           size_t *count) {
  if (module_entries(fn, m, list, count) != PI_SUCCESS) {
    char why[sizeof last_message];
    memcpy(why, last_message, sizeof why);
    free(*list);
    *list = NULL;
    *count = 0;
    fail(PI_SUCCESS, "%s: the module's kernel names are unknown: %s", fn, why);
  }
}

/* Fills a built program's kernel list (its lock held): the .entry names of
 * its PTX, or what the driver lists of a module from a cubin or fatbin. */
static pi_result program_kernels(const char *fn, pi_program p) {
  free(p->kernel_names);
  p->kernel_names = NULL;
  p->num_kernels = 0;
  if (p->kind == IMAGE_PTX)
    return ptx_entries((const char *)p->image, &p->kernel_names,
                       &p->num_kernels)
               ? PI_SUCCESS
               : out_of_memory(fn);
  module_kernels(fn, p->module, &p->kernel_names, &p->num_kernels);
  return PI_SUCCESS;
}

/* Checks PTX through the driver's linker (a link state takes each PTX input
 * through ptxas when it is added); cubins and fatbins are compiled already. */
static pi_result cu_piProgramCompile(
    pi_program program, pi_uint32 num_devices, const pi_device *device_list,
    const char *options, pi_uint32 num_input_headers,
    const pi_program *input_headers, const char **header_include_names,
    void (*pfn_notify)(pi_program program, void *user_data), void *user_data) {
  (void)input_headers;
  (void)header_include_names;
  pi_program p = program;
  REQUIRE(p != NULL);
  TRY(check_devices(FN, p->ctx, num_devices, device_list));
  if (num_input_headers)
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: PTX has no #include, so input headers do not apply", FN);
  struct jit *j = malloc(sizeof *j);
  if (!j)
    return out_of_memory(FN);
  jit_init(j);
  pi_result r = jit_options(FN, options, j, PI_ERROR_INVALID_COMPILER_OPTIONS);
  if (r == PI_SUCCESS)
    r = use_context(FN, p->ctx->cu);
  if (r != PI_SUCCESS) {
    free(j);
    return r;
  }
  pthread_mutex_lock(&p->lock);
  if (p->module || p->kind == IMAGE_NONE) {
    pthread_mutex_unlock(&p->lock);
    free(j);
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the program is %s; compile works on programs made from "
                "PTX",
                FN, p->module ? "built already" : "made from a native module");
  }
  CUresult err = CUDA_SUCCESS;
  const char *cufn = "cuLinkCreate";
  if (p->kind == IMAGE_PTX) {
    CUlinkState state = NULL;
    err = drv.cuLinkCreate(j->n, j->keys, j->vals, &state);
    if (err == CUDA_SUCCESS) {
      cufn = "cuLinkAddData";
      err = drv.cuLinkAddData(state, CU_JIT_INPUT_PTX, p->image,
                              p->image_size + 1, "program", 0, NULL, NULL);
      drv.cuLinkDestroy(state);
    }
  }
  program_record(p, j, options, err == CUDA_SUCCESS,
                 PI_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
  if (err != CUDA_SUCCESS)
    r = jit_fail(FN, jit_code(err, PI_ERROR_COMPILE_PROGRAM_FAILURE), cufn, err,
                 p->log);
  pthread_mutex_unlock(&p->lock);
  free(j);
  if (pfn_notify && (r == PI_SUCCESS || r == PI_ERROR_COMPILE_PROGRAM_FAILURE))
    pfn_notify(p, user_data);
  return r;
}

/* Loads the image as a module: the driver JIT-compiles PTX for the device. */
static pi_result
cu_piProgramBuild(pi_program program, pi_uint32 num_devices,
                  const pi_device *device_list, const char *options,
                  void (*pfn_notify)(pi_program program, void *user_data),
                  void *user_data) {
  pi_program p = program;
  REQUIRE(p != NULL);
  TRY(check_devices(FN, p->ctx, num_devices, device_list));
  struct jit *j = malloc(sizeof *j);
  if (!j)
    return out_of_memory(FN);
  jit_init(j);
  pi_result r = jit_options(FN, options, j, PI_ERROR_INVALID_BUILD_OPTIONS);
  if (r == PI_SUCCESS)
    r = use_context(FN, p->ctx->cu);
  if (r != PI_SUCCESS) {
    free(j);
    return r;
  }
  pthread_mutex_lock(&p->lock);
  if (p->module || p->kind == IMAGE_NONE) {
    pthread_mutex_unlock(&p->lock);
    free(j);
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the program is built already%s; make a new program to "
                "build again",
                FN, p->kind == IMAGE_NONE ? " (a native module)" : "");
  }
  CUmodule m = NULL;
  CUresult err = drv.cuModuleLoadDataEx(&m, p->image, j->n, j->keys, j->vals);
  program_record(p, j, options, err == CUDA_SUCCESS,
                 PI_PROGRAM_BINARY_TYPE_EXECUTABLE);
  if (err == CUDA_SUCCESS) {
    p->module = m;
    p->owns_module = true;
    r = program_kernels(FN, p);
  } else {
    r = jit_fail(FN, jit_code(err, PI_ERROR_BUILD_PROGRAM_FAILURE),
                 "cuModuleLoadDataEx", err, p->log);
  }
  pthread_mutex_unlock(&p->lock);
  free(j);
  if (pfn_notify && (r == PI_SUCCESS || r == PI_ERROR_BUILD_PROGRAM_FAILURE))
    pfn_notify(p, user_data);
  return r;
}

static CUjitInputType jit_input_type(enum image_kind k) {
  return k == IMAGE_CUBIN    ? CU_JIT_INPUT_CUBIN
         : k == IMAGE_FATBIN ? CU_JIT_INPUT_FATBINARY
                             : CU_JIT_INPUT_PTX;
}

/* Links the inputs with the driver's linker into a new executable program
 * (its binary is the linked cubin). On a link failure *ret_program still
 * gets a program, whose build log (piProgramGetBuildInfo) says why, as in
 * OpenCL; the message carries the log too. */
static pi_result
cu_piProgramLink(pi_context context, pi_uint32 num_devices,
                 const pi_device *device_list, const char *options,
                 pi_uint32 num_input_programs, const pi_program *input_programs,
                 void (*pfn_notify)(pi_program program, void *user_data),
                 void *user_data, pi_program *ret_program) {
  REQUIRE(context != NULL && ret_program != NULL);
  *ret_program = NULL;
  REQUIRE(num_input_programs > 0 && input_programs != NULL);
  TRY(check_devices(FN, context, num_devices, device_list));
  for (pi_uint32 i = 0; i < num_input_programs; ++i)
    if (!input_programs[i] || input_programs[i]->ctx != context)
      return fail(PI_ERROR_INVALID_PROGRAM,
                  "%s: input program %u is NULL or of another context", FN,
                  (unsigned)i);
  if (options && (strstr(options, "-create-library") ||
                  strstr(options, "-enable-link-options")))
    return fail(PI_ERROR_INVALID_LINKER_OPTIONS,
                "%s: the CUDA driver's linker only makes executables; link "
                "the library's programs together with the kernels instead",
                FN);
  struct jit *j = malloc(sizeof *j);
  if (!j)
    return out_of_memory(FN);
  jit_init(j);
  pi_result r = jit_options(FN, options, j, PI_ERROR_INVALID_LINKER_OPTIONS);
  if (r == PI_SUCCESS)
    r = use_context(FN, context->cu);
  if (r != PI_SUCCESS) {
    free(j);
    return r;
  }
  CUlinkState state = NULL;
  CUresult err = drv.cuLinkCreate(j->n, j->keys, j->vals, &state);
  const char *cufn = "cuLinkCreate";
  char *names = NULL;
  size_t num_names = 0;
  bool all_ptx = true;
  for (pi_uint32 i = 0; err == CUDA_SUCCESS && i < num_input_programs; ++i) {
    pi_program in = input_programs[i];
    char name[32];
    snprintf(name, sizeof name, "input program %u", (unsigned)i);
    pthread_mutex_lock(&in->lock);
    if (in->kind == IMAGE_NONE) {
      pthread_mutex_unlock(&in->lock);
      drv.cuLinkDestroy(state);
      free(names);
      free(j);
      return fail(PI_ERROR_INVALID_PROGRAM,
                  "%s: input program %u has no image to link (a native "
                  "module)",
                  FN, (unsigned)i);
    }
    cufn = "cuLinkAddData";
    err = drv.cuLinkAddData(state, jit_input_type(in->kind), in->image,
                            in->image_size + (in->kind == IMAGE_PTX), name, 0,
                            NULL, NULL);
    if (in->kind == IMAGE_PTX) {
      if (!ptx_entries((const char *)in->image, &names, &num_names))
        err = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      all_ptx = false;
    }
    pthread_mutex_unlock(&in->lock);
  }
  void *cubin = NULL;
  size_t cubin_size = 0;
  if (err == CUDA_SUCCESS) {
    cufn = "cuLinkComplete";
    err = drv.cuLinkComplete(state, &cubin, &cubin_size);
  }
  CUmodule m = NULL;
  if (err == CUDA_SUCCESS) {
    cufn = "cuModuleLoadData";
    err = drv.cuModuleLoadData(&m, cubin);
  }
  pi_program p = NULL;
  r = program_new(FN, context, err == CUDA_SUCCESS ? cubin : NULL,
                  err == CUDA_SUCCESS ? cubin_size : 0,
                  err == CUDA_SUCCESS ? IMAGE_CUBIN : IMAGE_NONE, &p);
  if (state)
    drv.cuLinkDestroy(state);
  if (r != PI_SUCCESS) {
    if (m)
      drv.cuModuleUnload(m);
    free(names);
    free(j);
    return r;
  }
  program_record(p, j, options, err == CUDA_SUCCESS,
                 PI_PROGRAM_BINARY_TYPE_EXECUTABLE);
  if (err == CUDA_SUCCESS) {
    p->module = m;
    p->owns_module = true;
    if (all_ptx) {
      p->kernel_names = names;
      p->num_kernels = num_names;
      names = NULL;
    } else {
      module_kernels(FN, m, &p->kernel_names, &p->num_kernels);
    }
  } else {
    r = jit_fail(FN, jit_code(err, PI_ERROR_LINK_PROGRAM_FAILURE), cufn, err,
                 p->log);
  }
  free(names);
  free(j);
  *ret_program = p;
  if (pfn_notify && (r == PI_SUCCESS || r == PI_ERROR_LINK_PROGRAM_FAILURE))
    pfn_notify(p, user_data);
  return r;
}

static pi_result cu_piProgramGetBuildInfo(pi_program program, pi_device device,
                                          pi_program_build_info param_name,
                                          size_t param_value_size,
                                          void *param_value,
                                          size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  pi_program p = program;
  pi_result r;
  REQUIRE(p != NULL);
  if (device && device != p->ctx->dev)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: the device is not the program's context's device", FN);
  pthread_mutex_lock(&p->lock);
  switch (param_name) {
  case PI_PROGRAM_BUILD_INFO_STATUS:
    r = put_i32(&o, p->status);
    break;
  case PI_PROGRAM_BUILD_INFO_OPTIONS:
    r = put_str(&o, p->options ? p->options : "");
    break;
  case PI_PROGRAM_BUILD_INFO_LOG:
    r = put_str(&o, p->log ? p->log : "");
    break;
  case PI_PROGRAM_BUILD_INFO_BINARY_TYPE:
    r = put_u32(&o, p->binary_type);
    break;
  default:
    r = unknown_query(&o);
    break;
  }
  pthread_mutex_unlock(&p->lock);
  return r;
}

static pi_result cu_piProgramRetain(pi_program program) {
  REQUIRE(program != NULL);
  ref_retain(&program->refs);
  return PI_SUCCESS;
}

static pi_result cu_piProgramRelease(pi_program program) {
  pi_program p = program;
  REQUIRE(p != NULL);
  if (!ref_release(&p->refs))
    return PI_SUCCESS;
  pi_result r = PI_SUCCESS;
  if (p->module && p->owns_module && !driver_gone()) {
    r = use_context(FN, p->ctx->cu);
    if (r == PI_SUCCESS)
      r = CU(cuModuleUnload, p->module);
  }
  pi_result r2 = cu_piContextRelease(p->ctx);
  free(p->image);
  free(p->log);
  free(p->options);
  free(p->kernel_names);
  pthread_mutex_destroy(&p->lock);
  free(p);
  return r != PI_SUCCESS ? r : r2;
}

static pi_result
cu_piextProgramSetSpecializationConstant(pi_program prog, pi_uint32 spec_id,
                                         size_t spec_size,
                                         const void *spec_value) {
  (void)prog;
  (void)spec_size;
  (void)spec_value;
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: CUDA has no native specialization constants (spec id %u); "
              "the runtime must emulate them: pass the values in a buffer "
              "kernel argument (the emulated spec-constant buffer)",
              FN, (unsigned)spec_id);
}

/* The program's CUmodule. */
static pi_result
cu_piextProgramGetNativeHandle(pi_program program,
                               pi_native_handle *nativeHandle) {
  CUmodule m = NULL;
  REQUIRE(program != NULL && nativeHandle != NULL);
  TRY(program_module(FN, program, &m));
  *nativeHandle = (pi_native_handle)(uintptr_t)m;
  return PI_SUCCESS;
}

/* Wraps a loaded CUmodule as a built program (its kernel names come from
 * the driver where it can list them); with pluginOwnsNativeHandle the last
 * release unloads it. */
static pi_result cu_piextProgramCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context,
    bool pluginOwnsNativeHandle, pi_program *program) {
  REQUIRE(nativeHandle != 0 && context != NULL && program != NULL);
  TRY(use_context(FN, context->cu));
  pi_program p = NULL;
  TRY(program_new(FN, context, NULL, 0, IMAGE_NONE, &p));
  p->module = (CUmodule)(uintptr_t)nativeHandle;
  p->owns_module = pluginOwnsNativeHandle;
  p->status = PI_PROGRAM_BUILD_STATUS_SUCCESS;
  p->binary_type = PI_PROGRAM_BINARY_TYPE_EXECUTABLE;
  module_kernels(FN, p->module, &p->kernel_names, &p->num_kernels);
  *program = p;
  return PI_SUCCESS;
}

/* ---- Kernels ---------------------------------------------------------------
 * Arguments are kept per kernel until a launch copies them into the
 * driver's parameter list. Where the driver describes a kernel's
 * parameters (cuFuncGetParamInfo, CUDA 12.4), indices and sizes are checked
 * when set. */

static pi_result kernel_new(const char *fn, pi_program prog, CUfunction f,
                            const char *name, pi_kernel *out) {
  pi_kernel k = calloc(1, sizeof *k);
  if (!k || !(k->name = dup_str(name))) {
    free(k);
    return out_of_memory(fn);
  }
  atomic_init(&k->refs, 1);
  k->prog = prog;
  k->fn = f;
  k->num_params = SIZE_MAX;
  pthread_mutex_init(&k->lock, NULL);
  if (drv.cuFuncGetParamInfo) {
    size_t offset, size, n = 0, cap = 0;
    while (drv.cuFuncGetParamInfo(f, n, &offset, &size) == CUDA_SUCCESS) {
      if (n == cap) {
        size_t *grown =
            realloc(k->param_sizes, (cap = cap ? 2 * cap : 8) * sizeof *grown);
        if (!grown) {
          free(k->param_sizes);
          free(k->name);
          free(k);
          return out_of_memory(fn);
        }
        k->param_sizes = grown;
      }
      k->param_sizes[n++] = size;
    }
    k->num_params = n;
  }
  cu_piProgramRetain(prog);
  *out = k;
  return PI_SUCCESS;
}

static pi_result cu_piKernelCreate(pi_program program, const char *kernel_name,
                                   pi_kernel *ret_kernel) {
  CUmodule m = NULL;
  CUfunction f = NULL;
  REQUIRE(program != NULL && kernel_name != NULL && ret_kernel != NULL);
  *ret_kernel = NULL;
  TRY(program_module(FN, program, &m));
  TRY(use_context(FN, program->ctx->cu));
  CUresult err = drv.cuModuleGetFunction(&f, m, kernel_name);
  if (err == CUDA_ERROR_NOT_FOUND) {
    pthread_mutex_lock(&program->lock);
    fail(PI_ERROR_INVALID_KERNEL_NAME,
         "%s: the program has no kernel '%s'; its kernels: %.400s", FN,
         kernel_name,
         program->kernel_names && *program->kernel_names ? program->kernel_names
                                                         : "(none known)");
    pthread_mutex_unlock(&program->lock);
    return PI_ERROR_INVALID_KERNEL_NAME;
  }
  TRY(cu_check(FN, "cuModuleGetFunction", err));
  return kernel_new(FN, program, f, kernel_name, ret_kernel);
}

/* Stores argument `index`: `size` bytes at `value`, or, when `local`, a
 * local-memory argument of `size` bytes. */
static pi_result set_arg(const char *fn, pi_kernel k, pi_uint32 index,
                         size_t size, const void *value, bool local) {
  if (k->num_params != SIZE_MAX) {
    if (index >= k->num_params)
      return fail(PI_ERROR_INVALID_ARG_INDEX,
                  "%s: kernel '%s' has %zu parameter(s); there is no "
                  "argument %u",
                  fn, k->name, k->num_params, (unsigned)index);
    size_t want = k->param_sizes[index];
    if (local && want != 4 && want != 8)
      return fail(PI_ERROR_INVALID_ARG_SIZE,
                  "%s: argument %u of kernel '%s' is a %zu-byte parameter, "
                  "but a local-memory argument is passed as its offset (a 4- "
                  "or 8-byte integer)",
                  fn, (unsigned)index, k->name, want);
    if (!local && size != want)
      return fail(PI_ERROR_INVALID_ARG_SIZE,
                  "%s: argument %u of kernel '%s' is a %zu-byte parameter, "
                  "but %zu bytes were given",
                  fn, (unsigned)index, k->name, want, size);
  } else if (index >= 4096) {
    return fail(PI_ERROR_INVALID_ARG_INDEX,
                "%s: argument %u of kernel '%s' is beyond any kernel's "
                "parameters",
                fn, (unsigned)index, k->name);
  }
  if (local && size == 0)
    return fail(PI_ERROR_INVALID_ARG_SIZE,
                "%s: a local-memory argument needs a size", fn);
  unsigned char *copy = NULL;
  if (!local) {
    if (!(copy = malloc(size ? size : 1)))
      return out_of_memory(fn);
    memcpy(copy, value, size);
  }
  pthread_mutex_lock(&k->lock);
  if (index >= k->num_args) {
    struct karg *grown = realloc(k->args, (index + 1) * sizeof *grown);
    if (!grown) {
      pthread_mutex_unlock(&k->lock);
      free(copy);
      return out_of_memory(fn);
    }
    memset(grown + k->num_args, 0, (index + 1 - k->num_args) * sizeof *grown);
    k->args = grown;
    k->num_args = index + 1;
  }
  struct karg *a = &k->args[index];
  free(a->value);
  a->set = true;
  a->local = local;
  a->size = size;
  a->value = copy;
  pthread_mutex_unlock(&k->lock);
  return PI_SUCCESS;
}

/* A NULL arg_value with a size sets a local-memory argument: the bytes are
 * reserved in the launch's dynamic shared memory and the kernel gets their
 * offset there. */
static pi_result cu_piKernelSetArg(pi_kernel kernel, pi_uint32 arg_index,
                                   size_t arg_size, const void *arg_value) {
  REQUIRE(kernel != NULL);
  return set_arg(FN, kernel, arg_index, arg_size, arg_value, arg_value == NULL);
}

static pi_result cu_piKernelGetInfo(pi_kernel kernel, pi_kernel_info param_name,
                                    size_t param_value_size, void *param_value,
                                    size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  REQUIRE(kernel != NULL);
  switch (param_name) {
  case PI_KERNEL_INFO_FUNCTION_NAME:
    return put_str(&o, kernel->name);
  case PI_KERNEL_INFO_NUM_ARGS:
    if (kernel->num_params == SIZE_MAX)
      return fail(PI_ERROR_INVALID_OPERATION,
                  "%s: the driver cannot tell a kernel's parameters (it "
                  "needs CUDA 12.4's cuFuncGetParamInfo)",
                  FN);
    return put_u32(&o, (uint32_t)kernel->num_params);
  case PI_KERNEL_INFO_REFERENCE_COUNT:
    return put_u32(&o, atomic_load(&kernel->refs));
  case PI_KERNEL_INFO_CONTEXT:
    return put_ptr(&o, kernel->prog->ctx);
  case PI_KERNEL_INFO_PROGRAM:
    return put_ptr(&o, kernel->prog);
  case PI_KERNEL_INFO_ATTRIBUTES:
    return put_str(&o, "");
  default:
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: query 0x%x is unknown to the CUDA plugin or not "
                "implemented by it",
                FN, (unsigned)param_name);
  }
}

static pi_result func_attr(const char *fn, pi_kernel k, CUfunction_attribute a,
                           int *v) {
  *v = 0;
  return CUF(fn, cuFuncGetAttribute, v, a, k->fn);
}

/* The local memory a kernel's local-memory arguments ask for now. */
static size_t local_args_size(pi_kernel k) {
  size_t total = 0;
  pthread_mutex_lock(&k->lock);
  for (size_t i = 0; i < k->num_args; ++i)
    if (k->args[i].set && k->args[i].local)
      total += k->args[i].size;
  pthread_mutex_unlock(&k->lock);
  return total;
}

static pi_result cu_piKernelGetGroupInfo(pi_kernel kernel, pi_device device,
                                         pi_kernel_group_info param_name,
                                         size_t param_value_size,
                                         void *param_value,
                                         size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  pi_kernel k = kernel;
  int v = 0;
  REQUIRE(k != NULL);
  if (device && device != k->prog->ctx->dev)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: the device is not the kernel's context's device", FN);
  TRY(use_context(FN, k->prog->ctx->cu));
  switch (param_name) {
  case PI_KERNEL_GROUP_INFO_WORK_GROUP_SIZE:
    TRY(func_attr(FN, k, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &v));
    return put_size(&o, (size_t)v);
  case PI_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE: {
    /* PTX's .reqntid is not visible through the driver: {0, 0, 0} means
     * "not given", as in OpenCL. */
    size_t none[3] = {0, 0, 0};
    return put_info(&o, none, sizeof none);
  }
  case PI_KERNEL_GROUP_INFO_LOCAL_MEM_SIZE:
    TRY(func_attr(FN, k, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &v));
    return put_u64(&o, (uint64_t)v + local_args_size(k));
  case PI_KERNEL_GROUP_INFO_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
    TRY(device_attr(FN, k->prog->ctx->dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE, &v));
    return put_size(&o, (size_t)v);
  case PI_KERNEL_GROUP_INFO_PRIVATE_MEM_SIZE:
    TRY(func_attr(FN, k, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &v));
    return put_u64(&o, (uint64_t)v);
  case PI_KERNEL_GROUP_INFO_NUM_REGS:
    TRY(func_attr(FN, k, CU_FUNC_ATTRIBUTE_NUM_REGS, &v));
    return put_u32(&o, (uint32_t)v);
  case PI_KERNEL_GROUP_INFO_GLOBAL_WORK_SIZE:
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: PI_KERNEL_GROUP_INFO_GLOBAL_WORK_SIZE is for built-in "
                "kernels and custom devices only",
                FN);
  default:
    return unknown_query(&o);
  }
}

/* Sub-groups are warps. Every value is a uint32_t in PI. */
static pi_result cu_piKernelGetSubGroupInfo(
    pi_kernel kernel, pi_device device, pi_kernel_sub_group_info param_name,
    size_t input_value_size, const void *input_value, size_t param_value_size,
    void *param_value, size_t *param_value_size_ret) {
  (void)input_value_size;
  (void)input_value;
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  pi_kernel k = kernel;
  int warp = 0, threads = 0;
  REQUIRE(k != NULL);
  if (device && device != k->prog->ctx->dev)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: the device is not the kernel's context's device", FN);
  TRY(use_context(FN, k->prog->ctx->cu));
  TRY(device_attr(FN, k->prog->ctx->dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE, &warp));
  switch (param_name) {
  case PI_KERNEL_MAX_SUB_GROUP_SIZE:
    return put_u32(&o, (uint32_t)warp);
  case PI_KERNEL_MAX_NUM_SUB_GROUPS:
    TRY(func_attr(FN, k, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &threads));
    return put_u32(&o, (uint32_t)((threads + warp - 1) / (warp ? warp : 1)));
  case PI_KERNEL_COMPILE_NUM_SUB_GROUPS:
  case PI_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL:
    return put_u32(&o, 0); /* PTX fixes neither */
  default:
    return unknown_query(&o);
  }
}

static pi_result cu_piKernelRetain(pi_kernel kernel) {
  REQUIRE(kernel != NULL);
  ref_retain(&kernel->refs);
  return PI_SUCCESS;
}

static pi_result cu_piKernelRelease(pi_kernel kernel) {
  pi_kernel k = kernel;
  REQUIRE(k != NULL);
  if (!ref_release(&k->refs))
    return PI_SUCCESS;
  pi_program prog = k->prog;
  for (size_t i = 0; i < k->num_args; ++i)
    free(k->args[i].value);
  free(k->args);
  free(k->param_sizes);
  free(k->name);
  pthread_mutex_destroy(&k->lock);
  free(k);
  return cu_piProgramRelease(prog);
}

/* arg_value points at the USM pointer, as in DPC++ (arg_size is its size). */
static pi_result cu_piextKernelSetArgPointer(pi_kernel kernel,
                                             pi_uint32 arg_index,
                                             size_t arg_size,
                                             const void *arg_value) {
  void *null = NULL;
  REQUIRE(kernel != NULL);
  if (!arg_value)
    return set_arg(FN, kernel, arg_index, sizeof null, &null, false);
  return set_arg(FN, kernel, arg_index, arg_size, arg_value, false);
}

/* Every USM allocation is reachable from every kernel (unified addressing),
 * so the USM settings need nothing; the cache configuration maps to
 * cuFuncSetCacheConfig. */
static pi_result cu_piKernelSetExecInfo(pi_kernel kernel,
                                        pi_kernel_exec_info value_name,
                                        size_t param_value_size,
                                        const void *param_value) {
  REQUIRE(kernel != NULL);
  switch (value_name) {
  case PI_USM_INDIRECT_ACCESS:
  case PI_USM_PTRS:
    return PI_SUCCESS;
  case PI_EXT_KERNEL_EXEC_INFO_CACHE_CONFIG: {
    pi_kernel_cache_config config = PI_EXT_KERNEL_EXEC_INFO_CACHE_DEFAULT;
    REQUIRE(param_value != NULL && param_value_size >= sizeof config);
    memcpy(&config, param_value, sizeof config);
    CUfunc_cache cache = config == PI_EXT_KERNEL_EXEC_INFO_CACHE_LARGE_SLM
                             ? CU_FUNC_CACHE_PREFER_SHARED
                         : config == PI_EXT_KERNEL_EXEC_INFO_CACHE_LARGE_DATA
                             ? CU_FUNC_CACHE_PREFER_L1
                             : CU_FUNC_CACHE_PREFER_NONE;
    TRY(use_context(FN, kernel->prog->ctx->cu));
    return CU(cuFuncSetCacheConfig, kernel->fn, cache);
  }
  default:
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown setting 0x%x", FN,
                (unsigned)value_name);
  }
}

/* Wraps a CUfunction of the program's module. */
static pi_result cu_piextKernelCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, pi_program program,
    bool pluginOwnsNativeHandle, pi_kernel *kernel) {
  (void)pluginOwnsNativeHandle; /* CUfunctions belong to their module */
  REQUIRE(nativeHandle != 0 && program != NULL && kernel != NULL);
  if (context && context != program->ctx)
    return fail(PI_ERROR_INVALID_CONTEXT,
                "%s: the program is of another context", FN);
  CUfunction f = (CUfunction)(uintptr_t)nativeHandle;
  const char *name = NULL;
  TRY(use_context(FN, program->ctx->cu));
  if (drv.cuFuncGetName)
    TRY(CU(cuFuncGetName, &name, f));
  return kernel_new(FN, program, f, name ? name : "(native kernel)", kernel);
}

static pi_result cu_piextKernelGetNativeHandle(pi_kernel kernel,
                                               pi_native_handle *nativeHandle) {
  REQUIRE(kernel != NULL && nativeHandle != NULL);
  *nativeHandle = (pi_native_handle)(uintptr_t)kernel->fn;
  return PI_SUCCESS;
}

/* The blocks of this size that are resident at once on the whole device. */
static pi_result cu_piextKernelSuggestMaxCooperativeGroupCount(
    pi_kernel kernel, size_t local_work_size, size_t dynamic_shared_memory_size,
    pi_uint32 *group_count_ret) {
  int per_sm = 0, sms = 0;
  REQUIRE(kernel != NULL && group_count_ret != NULL && local_work_size > 0 &&
          local_work_size <= INT_MAX);
  TRY(use_context(FN, kernel->prog->ctx->cu));
  TRY(CU(cuOccupancyMaxActiveBlocksPerMultiprocessor, &per_sm, kernel->fn,
         (int)local_work_size,
         dynamic_shared_memory_size + local_args_size(kernel)));
  TRY(device_attr(FN, kernel->prog->ctx->dev,
                  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms));
  *group_count_ret = (pi_uint32)per_sm * (pi_uint32)sms;
  return PI_SUCCESS;
}

/* The buffer's device pointer; the access property is a hint. */
static pi_result
cu_piextKernelSetArgMemObj(pi_kernel kernel, pi_uint32 arg_index,
                           const pi_mem_obj_property *arg_properties,
                           const pi_mem *arg_value) {
  (void)arg_properties;
  REQUIRE(kernel != NULL);
  CUdeviceptr ptr = arg_value && *arg_value ? (*arg_value)->ptr : 0;
  return set_arg(FN, kernel, arg_index, sizeof ptr, &ptr, false);
}

static pi_result cu_piextKernelSetArgSampler(pi_kernel kernel,
                                             pi_uint32 arg_index,
                                             const pi_sampler *arg_value) {
  (void)kernel;
  (void)arg_index;
  (void)arg_value;
  return no_samplers(FN);
}

/* ---- Samplers -------------------------------------------------------------
 */

static pi_result
cu_piSamplerCreate(pi_context context,
                   const pi_sampler_properties *sampler_properties,
                   pi_sampler *result_sampler) {
  (void)context;
  (void)sampler_properties;
  if (result_sampler)
    *result_sampler = NULL;
  return no_samplers(FN);
}

static pi_result cu_piSamplerGetInfo(pi_sampler sampler,
                                     pi_sampler_info param_name,
                                     size_t param_value_size, void *param_value,
                                     size_t *param_value_size_ret) {
  (void)sampler;
  (void)param_name;
  (void)param_value_size;
  (void)param_value;
  (void)param_value_size_ret;
  return no_samplers(FN);
}

static pi_result cu_piSamplerRetain(pi_sampler sampler) {
  (void)sampler;
  return no_samplers(FN);
}

static pi_result cu_piSamplerRelease(pi_sampler sampler) {
  (void)sampler;
  return no_samplers(FN);
}

/* ---- Enqueue --------------------------------------------------------------
 */

/* The largest divisor of n that is at most max. */
static size_t divisor_at_most(size_t n, size_t max) {
  if (max >= n)
    return n;
  for (size_t d = max; d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

/* An ND-range as a grid of blocks: block = local size (chosen when NULL:
 * the largest divisors of the global size that fit the kernel), grid =
 * global / local. Local-memory arguments become dynamic shared memory. */
static pi_result launch(const char *fn, bool cooperative, pi_queue q,
                        pi_kernel k, pi_uint32 dims, const size_t *offset,
                        const size_t *global, const size_t *local,
                        pi_uint32 nwait, const pi_event *wait, pi_event *out) {
  if (!q || !k || !global)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the queue, the kernel and the global size must not be "
                "NULL",
                fn);
  if (dims < 1 || dims > 3)
    return fail(PI_ERROR_INVALID_WORK_DIMENSION,
                "%s: %u dimensions; use 1, 2 or 3", fn, (unsigned)dims);
  if (k->prog->ctx != q->ctx)
    return fail(PI_ERROR_INVALID_CONTEXT,
                "%s: the kernel and the queue are of different contexts", fn);
  for (pi_uint32 i = 0; offset && i < dims; ++i)
    if (offset[i])
      return fail(PI_ERROR_INVALID_GLOBAL_OFFSET,
                  "%s: global offset %zu in dimension %u: PTX kernels cannot "
                  "see a global offset; add it to the indices in the kernel",
                  fn, offset[i], (unsigned)i);
  pi_device d = q->dev;
  size_t g[3] = {1, 1, 1}, l[3] = {1, 1, 1}, grid[3];
  int block_max[3], grid_max[3], kernel_max = 0;
  static const CUdevice_attribute block_attr[3] = {
      CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
      CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z};
  static const CUdevice_attribute grid_attr[3] = {
      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
  bool empty = false;
  for (int i = 0; i < 3; ++i) {
    TRY(device_attr(fn, d, block_attr[i], &block_max[i]));
    TRY(device_attr(fn, d, grid_attr[i], &grid_max[i]));
    if ((pi_uint32)i < dims) {
      g[i] = global[i];
      empty |= g[i] == 0;
    }
  }
  TRY(use_context(fn, q->ctx->cu));
  TRY(func_attr(fn, k, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &kernel_max));
  if (local) {
    size_t threads = 1;
    for (pi_uint32 i = 0; i < dims; ++i) {
      l[i] = local[i];
      if (l[i] == 0 || (g[i] && g[i] % l[i]))
        return fail(PI_ERROR_INVALID_WORK_GROUP_SIZE,
                    "%s: kernel '%s': the global size %zu in dimension %u is "
                    "not a multiple of the local size %zu",
                    fn, k->name, g[i], (unsigned)i, l[i]);
      if (l[i] > (size_t)block_max[i])
        return fail(PI_ERROR_INVALID_WORK_ITEM_SIZE,
                    "%s: kernel '%s': local size %zu in dimension %u exceeds "
                    "the device's %d",
                    fn, k->name, l[i], (unsigned)i, block_max[i]);
      threads *= l[i];
    }
    if (threads > (size_t)kernel_max)
      return fail(PI_ERROR_INVALID_WORK_GROUP_SIZE,
                  "%s: kernel '%s': a work-group of %zu work-items exceeds "
                  "the kernel's limit of %d",
                  fn, k->name, threads, kernel_max);
  } else {
    size_t budget = (size_t)kernel_max;
    for (int i = 0; i < 3; ++i) {
      size_t cap =
          budget < (size_t)block_max[i] ? budget : (size_t)block_max[i];
      l[i] = g[i] ? divisor_at_most(g[i], cap ? cap : 1) : 1;
      budget /= l[i];
    }
  }
  for (int i = 0; i < 3; ++i) {
    grid[i] = g[i] / l[i];
    if (grid[i] > (size_t)grid_max[i])
      return fail(PI_ERROR_INVALID_GLOBAL_WORK_SIZE,
                  "%s: kernel '%s': %zu work-groups in dimension %d exceed "
                  "the device's %d",
                  fn, k->name, grid[i], i, grid_max[i]);
  }
  /* The parameter list, local-memory offsets included. */
  pthread_mutex_lock(&k->lock);
  size_t n = k->num_params != SIZE_MAX ? k->num_params : k->num_args;
  void **params = calloc(n ? n : 1, sizeof *params);
  uint64_t *offsets = calloc(n ? n : 1, sizeof *offsets);
  pi_result r = params && offsets ? PI_SUCCESS : out_of_memory(fn);
  size_t shared = 0;
  for (size_t i = 0; r == PI_SUCCESS && i < n; ++i) {
    struct karg *a = i < k->num_args ? &k->args[i] : NULL;
    if (!a || !a->set) {
      r = fail(PI_ERROR_INVALID_KERNEL_ARGS,
               "%s: argument %zu of kernel '%s' is not set", fn, i, k->name);
      break;
    }
    if (!a->local) {
      params[i] = a->value;
      continue;
    }
    /* Aligned to the largest power of two up to 128 that fits the size. */
    size_t align = 1;
    while (align < 128 && align * 2 <= a->size)
      align *= 2;
    shared = (shared + align - 1) / align * align;
    size_t width = k->num_params != SIZE_MAX ? k->param_sizes[i] : 8;
    if (width == 4) {
      uint32_t off32 = (uint32_t)shared;
      memcpy(&offsets[i], &off32, sizeof off32);
    } else {
      offsets[i] = shared;
    }
    params[i] = &offsets[i];
    shared += a->size;
  }
  pi_event ev = NULL;
  if (r == PI_SUCCESS)
    r = cmd_start(fn, q, nwait, wait, out, PI_COMMAND_TYPE_NDRANGE_KERNEL, &ev);
  if (r == PI_SUCCESS && shared > 48 * 1024)
    r = CUF(fn, cuFuncSetAttribute, k->fn,
            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared);
  if (r == PI_SUCCESS && !empty && cooperative)
    r = CUF(fn, cuLaunchCooperativeKernel, k->fn, (unsigned)grid[0],
            (unsigned)grid[1], (unsigned)grid[2], (unsigned)l[0],
            (unsigned)l[1], (unsigned)l[2], (unsigned)shared, q->stream,
            params);
  else if (r == PI_SUCCESS && !empty)
    r = CUF(fn, cuLaunchKernel, k->fn, (unsigned)grid[0], (unsigned)grid[1],
            (unsigned)grid[2], (unsigned)l[0], (unsigned)l[1], (unsigned)l[2],
            (unsigned)shared, q->stream, params, NULL);
  pthread_mutex_unlock(&k->lock);
  free(params);
  free(offsets);
  if (ev || r == PI_SUCCESS)
    r = cmd_finish(fn, q, r, ev, out, false);
  return r;
}

static pi_result cu_piEnqueueKernelLaunch(
    pi_queue queue, pi_kernel kernel, pi_uint32 work_dim,
    const size_t *global_work_offset, const size_t *global_work_size,
    const size_t *local_work_size, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return launch(FN, false, queue, kernel, work_dim, global_work_offset,
                global_work_size, local_work_size, num_events_in_wait_list,
                event_wait_list, event);
}

/* cuLaunchCooperativeKernel: all work-groups resident at once (at most
 * piextKernelSuggestMaxCooperativeGroupCount of them). */
static pi_result cu_piextEnqueueCooperativeKernelLaunch(
    pi_queue queue, pi_kernel kernel, pi_uint32 work_dim,
    const size_t *global_work_offset, const size_t *global_work_size,
    const size_t *local_work_size, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return launch(FN, true, queue, kernel, work_dim, global_work_offset,
                global_work_size, local_work_size, num_events_in_wait_list,
                event_wait_list, event);
}

/* A marker: in order, it completes after every earlier command of the
 * queue and after the wait list. */
static pi_result cu_piEnqueueEventsWait(pi_queue command_queue,
                                        pi_uint32 num_events_in_wait_list,
                                        const pi_event *event_wait_list,
                                        pi_event *event) {
  pi_event ev = NULL;
  pi_result r = cmd_start(FN, command_queue, num_events_in_wait_list,
                          event_wait_list, event, PI_COMMAND_TYPE_MARKER, &ev);
  return r != PI_SUCCESS ? r
                         : cmd_finish(FN, command_queue, r, ev, event, false);
}

/* A barrier: the stream is in order, so later commands wait for it. */
static pi_result cu_piEnqueueEventsWaitWithBarrier(
    pi_queue command_queue, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  pi_event ev = NULL;
  pi_result r = cmd_start(FN, command_queue, num_events_in_wait_list,
                          event_wait_list, event, PI_COMMAND_TYPE_BARRIER, &ev);
  return r != PI_SUCCESS ? r
                         : cmd_finish(FN, command_queue, r, ev, event, false);
}

static pi_result check_range(const char *fn, pi_mem m, size_t offset,
                             size_t size) {
  if (!m)
    return fail(PI_ERROR_INVALID_MEM_OBJECT, "%s: the buffer is NULL", fn);
  if (offset > m->size || size > m->size - offset)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: bytes %zu..%zu are outside the %zu-byte buffer", fn,
                offset, offset + size, m->size);
  return PI_SUCCESS;
}

static pi_result cu_piEnqueueMemBufferRead(pi_queue queue, pi_mem buffer,
                                           pi_bool blocking_read, size_t offset,
                                           size_t size, void *ptr,
                                           pi_uint32 num_events_in_wait_list,
                                           const pi_event *event_wait_list,
                                           pi_event *event) {
  pi_event ev = NULL;
  TRY(check_range(FN, buffer, offset, size));
  REQUIRE(ptr != NULL || size == 0);
  pi_result r = cmd_start(FN, queue, num_events_in_wait_list, event_wait_list,
                          event, PI_COMMAND_TYPE_MEM_BUFFER_READ, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (size)
    r = CU(cuMemcpyDtoHAsync, ptr, buffer->ptr + offset, size, queue->stream);
  return cmd_finish(FN, queue, r, ev, event, blocking_read);
}

static pi_result
cu_piEnqueueMemBufferWrite(pi_queue command_queue, pi_mem buffer,
                           pi_bool blocking_write, size_t offset, size_t size,
                           const void *ptr, pi_uint32 num_events_in_wait_list,
                           const pi_event *event_wait_list, pi_event *event) {
  pi_event ev = NULL;
  TRY(check_range(FN, buffer, offset, size));
  REQUIRE(ptr != NULL || size == 0);
  pi_result r =
      cmd_start(FN, command_queue, num_events_in_wait_list, event_wait_list,
                event, PI_COMMAND_TYPE_MEM_BUFFER_WRITE, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (size)
    r = CU(cuMemcpyHtoDAsync, buffer->ptr + offset, ptr, size,
           command_queue->stream);
  return cmd_finish(FN, command_queue, r, ev, event, blocking_write);
}

/* One side of a rectangular copy: a buffer (unified address) or host
 * memory, its origin and its pitches (0: tightly packed). */
struct rect_side {
  pi_mem mem;       /* NULL for host memory */
  const void *host; /* host memory */
  size_t x, y, z, row_pitch, slice_pitch;
};

/* Normalises a side's pitches and checks a buffer side's bounds. */
static pi_result rect_side_check(const char *fn, struct rect_side *s,
                                 const struct pi_buff_rect_region_struct *r) {
  if (!s->row_pitch)
    s->row_pitch = r->width_bytes;
  if (!s->slice_pitch)
    s->slice_pitch = s->row_pitch * r->height_scalar;
  if (s->row_pitch < r->width_bytes ||
      s->slice_pitch < s->row_pitch * r->height_scalar ||
      s->slice_pitch % s->row_pitch)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a row pitch (%zu) must hold the region's width (%zu) "
                "and a slice pitch (%zu) must be a multiple of the row pitch "
                "holding its height (%zu rows)",
                fn, s->row_pitch, r->width_bytes, s->slice_pitch,
                r->height_scalar);
  if (s->mem) {
    size_t end = (s->z + r->depth_scalar - 1) * s->slice_pitch +
                 (s->y + r->height_scalar - 1) * s->row_pitch + s->x +
                 r->width_bytes;
    if (end > s->mem->size)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: the rectangle reaches byte %zu of a %zu-byte buffer", fn,
                  end, s->mem->size);
  }
  return PI_SUCCESS;
}

/* A rectangular copy between two sides: cuMemcpy3DAsync. */
static pi_result rect_copy(const char *fn, pi_queue q, pi_bool blocking,
                           struct rect_side *src, struct rect_side *dst,
                           pi_buff_rect_region region, pi_command_type type,
                           pi_uint32 nwait, const pi_event *wait,
                           pi_event *out) {
  if (!region)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the offsets and the region must not be NULL", fn);
  if (!src->mem && !src->host)
    return fail(PI_ERROR_INVALID_VALUE, "%s: the host pointer is NULL", fn);
  TRY(rect_side_check(fn, src, region));
  TRY(rect_side_check(fn, dst, region));
  CUDA_MEMCPY3D c;
  memset(&c, 0, sizeof c);
  c.srcXInBytes = src->x;
  c.srcY = src->y;
  c.srcZ = src->z;
  c.srcPitch = src->row_pitch;
  c.srcHeight = src->slice_pitch / src->row_pitch;
  if (src->mem) {
    c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.srcDevice = src->mem->ptr;
  } else {
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src->host;
  }
  c.dstXInBytes = dst->x;
  c.dstY = dst->y;
  c.dstZ = dst->z;
  c.dstPitch = dst->row_pitch;
  c.dstHeight = dst->slice_pitch / dst->row_pitch;
  if (dst->mem) {
    c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.dstDevice = dst->mem->ptr;
  } else {
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = (void *)(uintptr_t)dst->host;
  }
  c.WidthInBytes = region->width_bytes;
  c.Height = region->height_scalar;
  c.Depth = region->depth_scalar;
  pi_event ev = NULL;
  pi_result r = cmd_start(fn, q, nwait, wait, out, type, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (c.WidthInBytes && c.Height && c.Depth)
    r = CUF(fn, cuMemcpy3DAsync, &c, q->stream);
  return cmd_finish(fn, q, r, ev, out, blocking);
}

static pi_result cu_piEnqueueMemBufferReadRect(
    pi_queue command_queue, pi_mem buffer, pi_bool blocking_read,
    pi_buff_rect_offset buffer_offset, pi_buff_rect_offset host_offset,
    pi_buff_rect_region region, size_t buffer_row_pitch,
    size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
    void *ptr, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  REQUIRE(buffer != NULL && buffer_offset != NULL && host_offset != NULL);
  struct rect_side src = {buffer,
                          NULL,
                          buffer_offset->x_bytes,
                          buffer_offset->y_scalar,
                          buffer_offset->z_scalar,
                          buffer_row_pitch,
                          buffer_slice_pitch};
  struct rect_side dst = {NULL,
                          ptr,
                          host_offset->x_bytes,
                          host_offset->y_scalar,
                          host_offset->z_scalar,
                          host_row_pitch,
                          host_slice_pitch};
  REQUIRE(ptr != NULL);
  return rect_copy(FN, command_queue, blocking_read, &src, &dst, region,
                   PI_COMMAND_TYPE_MEM_BUFFER_READ_RECT,
                   num_events_in_wait_list, event_wait_list, event);
}

static pi_result cu_piEnqueueMemBufferWriteRect(
    pi_queue command_queue, pi_mem buffer, pi_bool blocking_write,
    pi_buff_rect_offset buffer_offset, pi_buff_rect_offset host_offset,
    pi_buff_rect_region region, size_t buffer_row_pitch,
    size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
    const void *ptr, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  REQUIRE(buffer != NULL && buffer_offset != NULL && host_offset != NULL);
  struct rect_side src = {NULL,
                          ptr,
                          host_offset->x_bytes,
                          host_offset->y_scalar,
                          host_offset->z_scalar,
                          host_row_pitch,
                          host_slice_pitch};
  struct rect_side dst = {buffer,
                          NULL,
                          buffer_offset->x_bytes,
                          buffer_offset->y_scalar,
                          buffer_offset->z_scalar,
                          buffer_row_pitch,
                          buffer_slice_pitch};
  return rect_copy(FN, command_queue, blocking_write, &src, &dst, region,
                   PI_COMMAND_TYPE_MEM_BUFFER_WRITE_RECT,
                   num_events_in_wait_list, event_wait_list, event);
}

static pi_result cu_piEnqueueMemBufferCopy(pi_queue command_queue,
                                           pi_mem src_buffer, pi_mem dst_buffer,
                                           size_t src_offset, size_t dst_offset,
                                           size_t size,
                                           pi_uint32 num_events_in_wait_list,
                                           const pi_event *event_wait_list,
                                           pi_event *event) {
  TRY(check_range(FN, src_buffer, src_offset, size));
  TRY(check_range(FN, dst_buffer, dst_offset, size));
  CUdeviceptr s = src_buffer->ptr + src_offset,
              d = dst_buffer->ptr + dst_offset;
  if (size && s < d + size && d < s + size)
    return fail(PI_ERROR_MEM_COPY_OVERLAP,
                "%s: the source and destination regions overlap", FN);
  pi_event ev = NULL;
  pi_result r =
      cmd_start(FN, command_queue, num_events_in_wait_list, event_wait_list,
                event, PI_COMMAND_TYPE_MEM_BUFFER_COPY, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (size)
    r = CU(cuMemcpyAsync, d, s, size, command_queue->stream);
  return cmd_finish(FN, command_queue, r, ev, event, false);
}

static pi_result cu_piEnqueueMemBufferCopyRect(
    pi_queue command_queue, pi_mem src_buffer, pi_mem dst_buffer,
    pi_buff_rect_offset src_origin, pi_buff_rect_offset dst_origin,
    pi_buff_rect_region region, size_t src_row_pitch, size_t src_slice_pitch,
    size_t dst_row_pitch, size_t dst_slice_pitch,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  REQUIRE(src_buffer != NULL && dst_buffer != NULL && src_origin != NULL &&
          dst_origin != NULL);
  struct rect_side src = {src_buffer,           NULL,
                          src_origin->x_bytes,  src_origin->y_scalar,
                          src_origin->z_scalar, src_row_pitch,
                          src_slice_pitch};
  struct rect_side dst = {dst_buffer,           NULL,
                          dst_origin->x_bytes,  dst_origin->y_scalar,
                          dst_origin->z_scalar, dst_row_pitch,
                          dst_slice_pitch};
  return rect_copy(FN, command_queue, PI_FALSE, &src, &dst, region,
                   PI_COMMAND_TYPE_MEM_BUFFER_COPY_RECT,
                   num_events_in_wait_list, event_wait_list, event);
}

/* Fills `size` bytes at dst with a pattern, on the stream: patterns of 1, 2
 * and 4 bytes with one cuMemsetD8/16/32Async; longer ones as one 2D memset
 * per word of the pattern, whose rows are the pattern's repetitions (pitch
 * = the pattern size, width = one word). */
static pi_result fill(const char *fn, CUstream s, CUdeviceptr dst,
                      const void *pattern, size_t psize, size_t size) {
  if (!pattern || psize == 0 || size % psize)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the size (%zu) must be a multiple of the pattern size "
                "(%zu), and the pattern must not be NULL",
                fn, size, psize);
  size_t count = size / psize;
  if (!count)
    return PI_SUCCESS;
  const unsigned char *p = pattern;
  size_t w = psize % 4 == 0 && dst % 4 == 0   ? 4
             : psize % 2 == 0 && dst % 2 == 0 ? 2
                                              : 1;
  for (size_t j = 0; j < psize; j += w) {
    uint32_t v32 = 0;
    uint16_t v16 = 0;
    if (w == 4)
      memcpy(&v32, p + j, 4);
    else if (w == 2)
      memcpy(&v16, p + j, 2);
    pi_result r;
    if (psize == w)
      r = w == 4   ? CUF(fn, cuMemsetD32Async, dst, v32, count, s)
          : w == 2 ? CUF(fn, cuMemsetD16Async, dst, v16, count, s)
                   : CUF(fn, cuMemsetD8Async, dst, p[0], count, s);
    else
      r = w == 4 ? CUF(fn, cuMemsetD2D32Async, dst + j, psize, v32, 1, count, s)
          : w == 2
              ? CUF(fn, cuMemsetD2D16Async, dst + j, psize, v16, 1, count, s)
              : CUF(fn, cuMemsetD2D8Async, dst + j, psize, p[j], 1, count, s);
    TRY(r);
  }
  return PI_SUCCESS;
}

static pi_result cu_piEnqueueMemBufferFill(pi_queue command_queue,
                                           pi_mem buffer, const void *pattern,
                                           size_t pattern_size, size_t offset,
                                           size_t size,
                                           pi_uint32 num_events_in_wait_list,
                                           const pi_event *event_wait_list,
                                           pi_event *event) {
  TRY(check_range(FN, buffer, offset, size));
  REQUIRE(pattern != NULL && pattern_size > 0 && size % pattern_size == 0);
  pi_event ev = NULL;
  pi_result r =
      cmd_start(FN, command_queue, num_events_in_wait_list, event_wait_list,
                event, PI_COMMAND_TYPE_MEM_BUFFER_FILL, &ev);
  if (r != PI_SUCCESS)
    return r;
  r = fill(FN, command_queue->stream, buffer->ptr + offset, pattern,
           pattern_size, size);
  return cmd_finish(FN, command_queue, r, ev, event, false);
}

static pi_result cu_piEnqueueMemImageRead(
    pi_queue command_queue, pi_mem image, pi_bool blocking_read,
    pi_image_offset origin, pi_image_region region, size_t row_pitch,
    size_t slice_pitch, void *ptr, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  (void)command_queue, (void)image, (void)blocking_read, (void)origin;
  (void)region, (void)row_pitch, (void)slice_pitch, (void)ptr;
  (void)num_events_in_wait_list, (void)event_wait_list, (void)event;
  return no_images(FN);
}

static pi_result
cu_piEnqueueMemImageWrite(pi_queue command_queue, pi_mem image,
                          pi_bool blocking_write, pi_image_offset origin,
                          pi_image_region region, size_t input_row_pitch,
                          size_t input_slice_pitch, const void *ptr,
                          pi_uint32 num_events_in_wait_list,
                          const pi_event *event_wait_list, pi_event *event) {
  (void)command_queue, (void)image, (void)blocking_write, (void)origin;
  (void)region, (void)input_row_pitch, (void)input_slice_pitch, (void)ptr;
  (void)num_events_in_wait_list, (void)event_wait_list, (void)event;
  return no_images(FN);
}

static pi_result
cu_piEnqueueMemImageCopy(pi_queue command_queue, pi_mem src_image,
                         pi_mem dst_image, pi_image_offset src_origin,
                         pi_image_offset dst_origin, pi_image_region region,
                         pi_uint32 num_events_in_wait_list,
                         const pi_event *event_wait_list, pi_event *event) {
  (void)command_queue, (void)src_image, (void)dst_image, (void)src_origin;
  (void)dst_origin, (void)region, (void)num_events_in_wait_list;
  (void)event_wait_list, (void)event;
  return no_images(FN);
}

static pi_result cu_piEnqueueMemImageFill(pi_queue command_queue, pi_mem image,
                                          const void *fill_color,
                                          const size_t *origin,
                                          const size_t *region,
                                          pi_uint32 num_events_in_wait_list,
                                          const pi_event *event_wait_list,
                                          pi_event *event) {
  (void)command_queue, (void)image, (void)fill_color, (void)origin;
  (void)region, (void)num_events_in_wait_list, (void)event_wait_list;
  (void)event;
  return no_images(FN);
}

/* Buffers in host memory (PI_MEM_FLAGS_HOST_PTR_USE or _ALLOC) map to that
 * memory itself. Device memory maps to a host staging copy of the region
 * (not copied in for PI_MAP_WRITE_INVALIDATE_REGION); unmapping copies it
 * back when the map was for writing. */
static pi_result cu_piEnqueueMemBufferMap(pi_queue command_queue, pi_mem buffer,
                                          pi_bool blocking_map,
                                          pi_map_flags map_flags, size_t offset,
                                          size_t size,
                                          pi_uint32 num_events_in_wait_list,
                                          const pi_event *event_wait_list,
                                          pi_event *event, void **ret_map) {
  const pi_map_flags known =
      PI_MAP_READ | PI_MAP_WRITE | PI_MAP_WRITE_INVALIDATE_REGION;
  REQUIRE(ret_map != NULL);
  *ret_map = NULL;
  TRY(check_range(FN, buffer, offset, size));
  if (map_flags & ~known)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown map flags 0x%llx", FN,
                (unsigned long long)(map_flags & ~known));
  struct mapping *mp = NULL;
  if (!buffer->host) {
    mp = calloc(1, sizeof *mp);
    if (!mp || !(mp->ptr = malloc(size ? size : 1))) {
      free(mp);
      return out_of_memory(FN);
    }
    mp->offset = offset;
    mp->size = size;
    mp->flags = map_flags;
  }
  pi_event ev = NULL;
  pi_result r =
      cmd_start(FN, command_queue, num_events_in_wait_list, event_wait_list,
                event, PI_COMMAND_TYPE_MEM_BUFFER_MAP, &ev);
  /* A copy to pageable memory returns once it is done. */
  if (r == PI_SUCCESS && mp && size &&
      !(map_flags & PI_MAP_WRITE_INVALIDATE_REGION))
    r = CU(cuMemcpyDtoHAsync, mp->ptr, buffer->ptr + offset, size,
           command_queue->stream);
  if (ev || r == PI_SUCCESS)
    r = cmd_finish(FN, command_queue, r, ev, event, blocking_map);
  if (r != PI_SUCCESS) {
    if (mp)
      free(mp->ptr);
    free(mp);
    return r;
  }
  if (mp) {
    pthread_mutex_lock(&buffer->lock);
    mp->next = buffer->maps;
    buffer->maps = mp;
    pthread_mutex_unlock(&buffer->lock);
    *ret_map = mp->ptr;
  } else {
    *ret_map = buffer->host + offset;
  }
  return PI_SUCCESS;
}

static pi_result cu_piEnqueueMemUnmap(pi_queue command_queue, pi_mem memobj,
                                      void *mapped_ptr,
                                      pi_uint32 num_events_in_wait_list,
                                      const pi_event *event_wait_list,
                                      pi_event *event) {
  REQUIRE(memobj != NULL && mapped_ptr != NULL);
  struct mapping *mp = NULL;
  if (memobj->host) {
    char *p = mapped_ptr;
    if (p < memobj->host || p > memobj->host + memobj->size)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: the pointer is not a mapping of this buffer", FN);
  } else {
    pthread_mutex_lock(&memobj->lock);
    for (struct mapping **link = &memobj->maps; *link; link = &(*link)->next)
      if ((*link)->ptr == mapped_ptr) {
        mp = *link;
        *link = mp->next;
        break;
      }
    pthread_mutex_unlock(&memobj->lock);
    if (!mp)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: the pointer is not a mapping of this buffer", FN);
  }
  pi_event ev = NULL;
  pi_result r =
      cmd_start(FN, command_queue, num_events_in_wait_list, event_wait_list,
                event, PI_COMMAND_TYPE_MEM_BUFFER_UNMAP, &ev);
  /* A copy from pageable memory returns once the source is taken. */
  if (r == PI_SUCCESS && mp && mp->size &&
      (mp->flags & (PI_MAP_WRITE | PI_MAP_WRITE_INVALIDATE_REGION)))
    r = CU(cuMemcpyHtoDAsync, memobj->ptr + mp->offset, mp->ptr, mp->size,
           command_queue->stream);
  if (ev || r == PI_SUCCESS)
    r = cmd_finish(FN, command_queue, r, ev, event, false);
  if (r != PI_SUCCESS && mp) {
    /* Still mapped: put it back. */
    pthread_mutex_lock(&memobj->lock);
    mp->next = memobj->maps;
    memobj->maps = mp;
    pthread_mutex_unlock(&memobj->lock);
    return r;
  }
  if (mp) {
    free(mp->ptr);
    free(mp);
  }
  return r;
}

/* ---- USM -------------------------------------------------------------------
 * Device allocations are cuMemAlloc, host ones cuMemAllocHost (pinned,
 * reachable from every device through unified addressing), shared ones
 * cuMemAllocManaged, never larger than the device's free memory. */

enum usm_kind { USM_HOST, USM_DEVICE, USM_SHARED };

/* Checks a USM property list; returns the PI_MEM_ALLOC_FLAGS bits. The
 * placement and read-only bits are hints the driver decides better itself;
 * write-combining is honoured for host allocations. */
static pi_result usm_properties(const char *fn,
                                const pi_usm_mem_properties *props,
                                pi_usm_mem_properties *flags) {
  const pi_usm_mem_properties bits =
      PI_MEM_ALLOC_WRTITE_COMBINED | PI_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE |
      PI_MEM_ALLOC_INITIAL_PLACEMENT_HOST | PI_MEM_ALLOC_DEVICE_READ_ONLY;
  *flags = 0;
  for (size_t i = 0; props && props[i]; i += 2) {
    if (props[i] == PI_MEM_ALLOC_FLAGS) {
      if (props[i + 1] & ~bits)
        return fail(PI_ERROR_INVALID_VALUE,
                    "%s: unknown PI_MEM_ALLOC_FLAGS bits 0x%llx", fn,
                    (unsigned long long)(props[i + 1] & ~bits));
      *flags = props[i + 1];
    } else if (props[i] != PI_MEM_USM_ALLOC_BUFFER_LOCATION) {
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown USM property 0x%llx", fn,
                  (unsigned long long)props[i]);
    }
  }
  return PI_SUCCESS;
}

static pi_result usm_alloc(const char *fn, enum usm_kind kind,
                           void **result_ptr, pi_context context,
                           pi_device device, pi_usm_mem_properties *properties,
                           size_t size, pi_uint32 alignment) {
  if (!result_ptr || !context)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: result_ptr and context must not be NULL", fn);
  *result_ptr = NULL;
  if (device && device != context->dev)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: the device is not the context's device", fn);
  if (size == 0)
    return fail(PI_ERROR_INVALID_BUFFER_SIZE, "%s: size is 0", fn);
  if (alignment & (alignment - 1))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: alignment %u is not a power of two", fn,
                (unsigned)alignment);
  pi_usm_mem_properties flags;
  TRY(usm_properties(fn, properties, &flags));
  TRY(use_context(fn, context->cu));
  char what[300];
  CUresult err;
  void *ptr = NULL;
  CUdeviceptr dptr = 0;
  const char *cufn;
  if (kind == USM_HOST) {
    cufn = flags & PI_MEM_ALLOC_WRTITE_COMBINED ? "cuMemHostAlloc"
                                                : "cuMemAllocHost";
    err = flags & PI_MEM_ALLOC_WRTITE_COMBINED
              ? drv.cuMemHostAlloc(&ptr, size, CU_MEMHOSTALLOC_WRITECOMBINED)
              : drv.cuMemAllocHost(&ptr, size);
  } else if (kind == USM_DEVICE) {
    cufn = "cuMemAlloc";
    err = drv.cuMemAlloc(&dptr, size);
    ptr = (void *)(uintptr_t)dptr;
  } else {
    /* Never more managed memory than the device has free: oversubscribing
     * it can hang the GPU, not just this process. */
    size_t free_bytes = 0, total = 0;
    TRY(CUF(fn, cuMemGetInfo, &free_bytes, &total));
    if (size > free_bytes)
      return fail(PI_ERROR_OUT_OF_RESOURCES,
                  "%s: %zu bytes of shared memory asked for, but %s has only "
                  "%zu bytes free; the CUDA plugin never oversubscribes "
                  "managed memory",
                  fn, size, describe(context->dev, what, sizeof what),
                  free_bytes);
    cufn = "cuMemAllocManaged";
    err = drv.cuMemAllocManaged(&dptr, size, CU_MEM_ATTACH_GLOBAL);
    ptr = (void *)(uintptr_t)dptr;
  }
  if (err == CUDA_ERROR_OUT_OF_MEMORY)
    return fail(PI_ERROR_OUT_OF_RESOURCES,
                "%s: %s cannot allocate %zu bytes for %s", fn, cufn, size,
                describe(context->dev, what, sizeof what));
  TRY(cu_check(fn, cufn, err));
  if (alignment && (uintptr_t)ptr % alignment) {
    if (kind == USM_HOST)
      drv.cuMemFreeHost(ptr);
    else
      drv.cuMemFree((CUdeviceptr)(uintptr_t)ptr);
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: %s returned memory aligned to less than the %u bytes "
                "asked for; CUDA aligns allocations to 256 bytes (host ones "
                "to a page)",
                fn, cufn, (unsigned)alignment);
  }
  *result_ptr = ptr;
  return PI_SUCCESS;
}

static pi_result cu_piextUSMHostAlloc(void **result_ptr, pi_context context,
                                      pi_usm_mem_properties *properties,
                                      size_t size, pi_uint32 alignment) {
  return usm_alloc(FN, USM_HOST, result_ptr, context, NULL, properties, size,
                   alignment);
}

static pi_result cu_piextUSMDeviceAlloc(void **result_ptr, pi_context context,
                                        pi_device device,
                                        pi_usm_mem_properties *properties,
                                        size_t size, pi_uint32 alignment) {
  return usm_alloc(FN, USM_DEVICE, result_ptr, context, device, properties,
                   size, alignment);
}

static pi_result cu_piextUSMSharedAlloc(void **result_ptr, pi_context context,
                                        pi_device device,
                                        pi_usm_mem_properties *properties,
                                        size_t size, pi_uint32 alignment) {
  return usm_alloc(FN, USM_SHARED, result_ptr, context, device, properties,
                   size, alignment);
}

/* What the driver knows of a pointer; type PI_MEM_TYPE_UNKNOWN for memory
 * it does not know (pageable host memory). */
struct usm_info {
  pi_usm_type type;
  CUdeviceptr base;
  size_t size;
  int ordinal;
};

static pi_result usm_lookup(const char *fn, const void *ptr,
                            struct usm_info *out) {
  unsigned int memtype = 0, managed = 0;
  CUdeviceptr base = 0;
  size_t size = 0;
  int ordinal = -1;
  CUpointer_attribute attrs[5] = {
      CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
      CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void *data[5] = {&memtype, &managed, &base, &size, &ordinal};
  TRY(CUF(fn, cuPointerGetAttributes, 5, attrs, data,
          (CUdeviceptr)(uintptr_t)ptr));
  out->type = managed                           ? PI_MEM_TYPE_SHARED
              : memtype == CU_MEMORYTYPE_DEVICE ? PI_MEM_TYPE_DEVICE
              : memtype == CU_MEMORYTYPE_HOST   ? PI_MEM_TYPE_HOST
                                                : PI_MEM_TYPE_UNKNOWN;
  out->base = base;
  out->size = size;
  out->ordinal = ordinal;
  return PI_SUCCESS;
}

/* The driver frees memory only once the device is done with it. */
static pi_result cu_piextUSMFree(pi_context context, void *ptr) {
  struct usm_info info = {PI_MEM_TYPE_UNKNOWN, 0, 0, -1};
  REQUIRE(context != NULL);
  if (!ptr)
    return PI_SUCCESS;
  TRY(use_context(FN, context->cu));
  TRY(usm_lookup(FN, ptr, &info));
  if (info.type == PI_MEM_TYPE_UNKNOWN ||
      info.base != (CUdeviceptr)(uintptr_t)ptr)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: %p is not the start of a USM allocation", FN, ptr);
  if (info.type == PI_MEM_TYPE_HOST)
    return CU(cuMemFreeHost, ptr);
  return CU(cuMemFree, (CUdeviceptr)(uintptr_t)ptr);
}

static pi_result cu_piextUSMEnqueueFill(pi_queue queue, void *ptr,
                                        const void *pattern, size_t patternSize,
                                        size_t count,
                                        pi_uint32 num_events_in_waitlist,
                                        const pi_event *events_waitlist,
                                        pi_event *event) {
  REQUIRE(ptr != NULL && pattern != NULL && patternSize > 0);
  pi_event ev = NULL;
  pi_result r = cmd_start(FN, queue, num_events_in_waitlist, events_waitlist,
                          event, PI_COMMAND_TYPE_SVM_MEMFILL, &ev);
  if (r != PI_SUCCESS)
    return r;
  /* count is in bytes, as in DPC++'s USM fill. */
  r = fill(FN, queue->stream, (CUdeviceptr)(uintptr_t)ptr, pattern, patternSize,
           count);
  return cmd_finish(FN, queue, r, ev, event, false);
}

static pi_result cu_piextUSMEnqueueMemcpy(pi_queue queue, pi_bool blocking,
                                          void *dst_ptr, const void *src_ptr,
                                          size_t size,
                                          pi_uint32 num_events_in_waitlist,
                                          const pi_event *events_waitlist,
                                          pi_event *event) {
  REQUIRE(size == 0 || (dst_ptr != NULL && src_ptr != NULL));
  pi_event ev = NULL;
  pi_result r = cmd_start(FN, queue, num_events_in_waitlist, events_waitlist,
                          event, PI_COMMAND_TYPE_SVM_MEMCPY, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (size)
    r = CU(cuMemcpyAsync, (CUdeviceptr)(uintptr_t)dst_ptr,
           (CUdeviceptr)(uintptr_t)src_ptr, size, queue->stream);
  return cmd_finish(FN, queue, r, ev, event, blocking);
}

/* Migrates shared memory to the queue's device; for other memory there is
 * nothing to migrate (a warning says so) and the command is a marker. */
static pi_result cu_piextUSMEnqueuePrefetch(pi_queue queue, const void *ptr,
                                            size_t size,
                                            pi_usm_migration_flags flags,
                                            pi_uint32 num_events_in_waitlist,
                                            const pi_event *events_waitlist,
                                            pi_event *event) {
  struct usm_info info = {PI_MEM_TYPE_UNKNOWN, 0, 0, -1};
  int concurrent = 0;
  REQUIRE(queue != NULL && ptr != NULL);
  if (flags & ~PI_USM_MIGRATION_TBD0)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown migration flags 0x%llx",
                FN, (unsigned long long)flags);
  TRY(use_context(FN, queue->ctx->cu));
  TRY(usm_lookup(FN, ptr, &info));
  TRY(device_attr(FN, queue->dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
                  &concurrent));
  pi_event ev = NULL;
  pi_result r = cmd_start(FN, queue, num_events_in_waitlist, events_waitlist,
                          event, PI_COMMAND_TYPE_MIGRATE_MEM_OBJECTS, &ev);
  if (r != PI_SUCCESS)
    return r;
  bool migrate = info.type == PI_MEM_TYPE_SHARED && concurrent && size;
  if (migrate && drv.cuMemPrefetchAsync) {
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, (int)queue->dev->cu};
    r = CU(cuMemPrefetchAsync, (CUdeviceptr)(uintptr_t)ptr, size, loc, 0,
           queue->stream);
  } else if (migrate && drv.cuMemPrefetchAsync_v1) {
    r = cu_check(FN, "cuMemPrefetchAsync",
                 drv.cuMemPrefetchAsync_v1((CUdeviceptr)(uintptr_t)ptr, size,
                                           queue->dev->cu, queue->stream));
  }
  r = cmd_finish(FN, queue, r, ev, event, false);
  if (r == PI_SUCCESS && !migrate && size)
    fail(PI_SUCCESS, "%s: %s; the prefetch did nothing", FN,
         info.type != PI_MEM_TYPE_SHARED
             ? "the memory is not shared USM, so it does not migrate"
             : "the device cannot access managed memory concurrently");
  return r;
}

/* The advice bits map to cuMemAdvise for shared memory; other memory takes
 * no advice (a warning says so). The command is a marker. */
static pi_result cu_piextUSMEnqueueMemAdvise(pi_queue queue, const void *ptr,
                                             size_t length,
                                             pi_mem_advice advice,
                                             pi_event *event) {
  static const struct {
    pi_mem_advice pi;
    CUmem_advise cu;
    bool host;
  } map[] = {
      {PI_MEM_ADVICE_CUDA_SET_READ_MOSTLY, CU_MEM_ADVISE_SET_READ_MOSTLY, 0},
      {PI_MEM_ADVICE_CUDA_UNSET_READ_MOSTLY, CU_MEM_ADVISE_UNSET_READ_MOSTLY,
       0},
      {PI_MEM_ADVICE_CUDA_SET_PREFERRED_LOCATION,
       CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 0},
      {PI_MEM_ADVICE_CUDA_UNSET_PREFERRED_LOCATION,
       CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, 0},
      {PI_MEM_ADVICE_CUDA_SET_ACCESSED_BY, CU_MEM_ADVISE_SET_ACCESSED_BY, 0},
      {PI_MEM_ADVICE_CUDA_UNSET_ACCESSED_BY, CU_MEM_ADVISE_UNSET_ACCESSED_BY,
       0},
      {PI_MEM_ADVICE_CUDA_SET_PREFERRED_LOCATION_HOST,
       CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 1},
      {PI_MEM_ADVICE_CUDA_UNSET_PREFERRED_LOCATION_HOST,
       CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, 1},
      {PI_MEM_ADVICE_CUDA_SET_ACCESSED_BY_HOST, CU_MEM_ADVISE_SET_ACCESSED_BY,
       1},
      {PI_MEM_ADVICE_CUDA_UNSET_ACCESSED_BY_HOST,
       CU_MEM_ADVISE_UNSET_ACCESSED_BY, 1},
  };
  const pi_mem_advice known = 0x3ff;
  struct usm_info info = {PI_MEM_TYPE_UNKNOWN, 0, 0, -1};
  REQUIRE(queue != NULL && ptr != NULL);
  if (advice & ~known)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: advice 0x%x is not CUDA advice (the HIP coarse-grained "
                "bits and unknown bits have no CUDA meaning)",
                FN, (unsigned)advice);
  TRY(use_context(FN, queue->ctx->cu));
  TRY(usm_lookup(FN, ptr, &info));
  bool advise = info.type == PI_MEM_TYPE_SHARED && length;
  if (advise && (advice & (PI_MEM_ADVICE_CUDA_UNSET_READ_MOSTLY |
                           PI_MEM_ADVICE_CUDA_SET_READ_MOSTLY)) ==
                    (PI_MEM_ADVICE_CUDA_UNSET_READ_MOSTLY |
                     PI_MEM_ADVICE_CUDA_SET_READ_MOSTLY))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: advice sets and unsets read-mostly at once", FN);
  /* Advice applies at once; wait for earlier commands on the memory. */
  pi_event ev = NULL;
  pi_result r =
      cmd_start(FN, queue, 0, NULL, event, PI_COMMAND_TYPE_MARKER, &ev);
  if (r == PI_SUCCESS && advise)
    r = CU(cuStreamSynchronize, queue->stream);
  for (size_t i = 0; advise && r == PI_SUCCESS && i < sizeof map / sizeof *map;
       ++i) {
    if (!(advice & map[i].pi))
      continue;
    if (drv.cuMemAdvise) {
      CUmemLocation loc = {map[i].host ? CU_MEM_LOCATION_TYPE_HOST
                                       : CU_MEM_LOCATION_TYPE_DEVICE,
                           map[i].host ? 0 : (int)queue->dev->cu};
      r = CU(cuMemAdvise, (CUdeviceptr)(uintptr_t)ptr, length, map[i].cu, loc);
    } else if (drv.cuMemAdvise_v1) {
      r = cu_check(
          FN, "cuMemAdvise",
          drv.cuMemAdvise_v1((CUdeviceptr)(uintptr_t)ptr, length, map[i].cu,
                             map[i].host ? CU_DEVICE_CPU : queue->dev->cu));
    }
  }
  if (ev || r == PI_SUCCESS)
    r = cmd_finish(FN, queue, r, ev, event, false);
  if (r == PI_SUCCESS && !advise && advice != PI_MEM_ADVICE_RESET)
    fail(PI_SUCCESS,
         "%s: the memory is not shared USM; advice 0x%x was not applied", FN,
         (unsigned)advice);
  return r;
}

static pi_result cu_piextUSMGetMemAllocInfo(pi_context context, const void *ptr,
                                            pi_mem_alloc_info param_name,
                                            size_t param_value_size,
                                            void *param_value,
                                            size_t *param_value_size_ret) {
  struct info_out o = {FN, param_name, param_value_size, param_value,
                       param_value_size_ret};
  struct usm_info info = {PI_MEM_TYPE_UNKNOWN, 0, 0, -1};
  REQUIRE(context != NULL);
  TRY(use_context(FN, context->cu));
  TRY(usm_lookup(FN, ptr, &info));
  if (param_name == PI_MEM_ALLOC_TYPE)
    return put_u32(&o, info.type);
  if (info.type == PI_MEM_TYPE_UNKNOWN &&
      (param_name == PI_MEM_ALLOC_BASE_PTR || param_name == PI_MEM_ALLOC_SIZE ||
       param_name == PI_MEM_ALLOC_DEVICE))
    return fail(PI_ERROR_INVALID_VALUE, "%s: %p is not in a USM allocation", FN,
                ptr);
  switch (param_name) {
  case PI_MEM_ALLOC_BASE_PTR:
    return put_ptr(&o, (void *)(uintptr_t)info.base);
  case PI_MEM_ALLOC_SIZE:
    return put_size(&o, info.size);
  case PI_MEM_ALLOC_DEVICE: {
    /* Host allocations belong to no device. */
    pi_device d = NULL;
    pi_platform p = context->dev->platform;
    for (pi_uint32 i = 0; info.type != PI_MEM_TYPE_HOST && i < p->num_devices;
         ++i)
      if ((int)p->devices[i].cu == info.ordinal)
        d = &p->devices[i];
    return put_ptr(&o, d);
  }
  default:
    return unknown_query(&o);
  }
}

/* Memory types for a 2D copy: the driver's unified addressing for what it
 * knows, plain host memory for the rest. */
static pi_result copy_side(const char *fn, const void *ptr,
                           CUmemorytype *type) {
  struct usm_info info = {PI_MEM_TYPE_UNKNOWN, 0, 0, -1};
  TRY(usm_lookup(fn, ptr, &info));
  *type = info.type == PI_MEM_TYPE_UNKNOWN ? CU_MEMORYTYPE_HOST
                                           : CU_MEMORYTYPE_UNIFIED;
  return PI_SUCCESS;
}

/* A 2D fill: one 2D memset for patterns of 1, 2 or 4 bytes at aligned
 * addresses, else a fill per row. */
static pi_result
cu_piextUSMEnqueueFill2D(pi_queue queue, void *ptr, size_t pitch,
                         size_t pattern_size, const void *pattern, size_t width,
                         size_t height, pi_uint32 num_events_in_waitlist,
                         const pi_event *events_waitlist, pi_event *event) {
  REQUIRE(ptr != NULL && pattern != NULL && pattern_size > 0);
  if (pitch < width || width % pattern_size)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the width (%zu bytes) must be a multiple of the pattern "
                "size (%zu) and at most the pitch (%zu)",
                FN, width, pattern_size, pitch);
  pi_event ev = NULL;
  pi_result r = cmd_start(FN, queue, num_events_in_waitlist, events_waitlist,
                          event, PI_COMMAND_TYPE_SVM_MEMFILL, &ev);
  if (r != PI_SUCCESS)
    return r;
  CUdeviceptr dst = (CUdeviceptr)(uintptr_t)ptr;
  size_t ps = pattern_size;
  if ((ps == 1 || ps == 2 || ps == 4) && dst % ps == 0 && pitch % ps == 0 &&
      width && height) {
    uint32_t v32 = 0;
    uint16_t v16 = 0;
    unsigned char v8 = *(const unsigned char *)pattern;
    memcpy(ps == 4 ? (void *)&v32 : (void *)&v16, pattern, ps == 1 ? 0 : ps);
    r = ps == 4   ? CU(cuMemsetD2D32Async, dst, pitch, v32, width / 4, height,
                       queue->stream)
        : ps == 2 ? CU(cuMemsetD2D16Async, dst, pitch, v16, width / 2, height,
                       queue->stream)
                  : CU(cuMemsetD2D8Async, dst, pitch, v8, width, height,
                       queue->stream);
  } else {
    for (size_t row = 0; r == PI_SUCCESS && row < height; ++row)
      r = fill(FN, queue->stream, dst + row * pitch, pattern, ps, width);
  }
  return cmd_finish(FN, queue, r, ev, event, false);
}

static pi_result cu_piextUSMEnqueueMemset2D(pi_queue queue, void *ptr,
                                            size_t pitch, int value,
                                            size_t width, size_t height,
                                            pi_uint32 num_events_in_waitlist,
                                            const pi_event *events_waitlist,
                                            pi_event *event) {
  REQUIRE(ptr != NULL && pitch >= width);
  pi_event ev = NULL;
  pi_result r = cmd_start(FN, queue, num_events_in_waitlist, events_waitlist,
                          event, PI_COMMAND_TYPE_SVM_MEMFILL, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (width && height)
    r = CU(cuMemsetD2D8Async, (CUdeviceptr)(uintptr_t)ptr, pitch,
           (unsigned char)value, width, height, queue->stream);
  return cmd_finish(FN, queue, r, ev, event, false);
}

static pi_result
cu_piextUSMEnqueueMemcpy2D(pi_queue queue, pi_bool blocking, void *dst_ptr,
                           size_t dst_pitch, const void *src_ptr,
                           size_t src_pitch, size_t width, size_t height,
                           pi_uint32 num_events_in_waitlist,
                           const pi_event *events_waitlist, pi_event *event) {
  REQUIRE(queue != NULL && dst_ptr != NULL && src_ptr != NULL);
  if (dst_pitch < width || src_pitch < width)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a pitch is smaller than the width (%zu bytes)", FN, width);
  CUDA_MEMCPY2D c;
  memset(&c, 0, sizeof c);
  TRY(use_context(FN, queue->ctx->cu));
  TRY(copy_side(FN, src_ptr, &c.srcMemoryType));
  TRY(copy_side(FN, dst_ptr, &c.dstMemoryType));
  if (c.srcMemoryType == CU_MEMORYTYPE_HOST)
    c.srcHost = src_ptr;
  else
    c.srcDevice = (CUdeviceptr)(uintptr_t)src_ptr;
  if (c.dstMemoryType == CU_MEMORYTYPE_HOST)
    c.dstHost = dst_ptr;
  else
    c.dstDevice = (CUdeviceptr)(uintptr_t)dst_ptr;
  c.srcPitch = src_pitch;
  c.dstPitch = dst_pitch;
  c.WidthInBytes = width;
  c.Height = height;
  pi_event ev = NULL;
  pi_result r = cmd_start(FN, queue, num_events_in_waitlist, events_waitlist,
                          event, PI_COMMAND_TYPE_SVM_MEMCPY, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (width && height)
    r = CU(cuMemcpy2DAsync, &c, queue->stream);
  return cmd_finish(FN, queue, r, ev, event, blocking);
}

/* Pins host memory (cuMemHostRegister) so that copies from it are fast. */
static pi_result cu_piextUSMImport(const void *ptr, size_t size,
                                   pi_context context) {
  REQUIRE(ptr != NULL && size > 0 && context != NULL);
  TRY(use_context(FN, context->cu));
  return CU(cuMemHostRegister, (void *)(uintptr_t)ptr, size,
            CU_MEMHOSTREGISTER_PORTABLE);
}

static pi_result cu_piextUSMRelease(const void *ptr, pi_context context) {
  REQUIRE(ptr != NULL && context != NULL);
  TRY(use_context(FN, context->cu));
  return CU(cuMemHostUnregister, (void *)(uintptr_t)ptr);
}

/* ---- Device globals and host pipes ----------------------------------------
 */

/* The global's device pointer, checked against the range to access. */
static pi_result global_range(const char *fn, pi_queue q, pi_program prog,
                              const char *name, size_t count, size_t offset,
                              CUdeviceptr *ptr) {
  CUmodule m = NULL;
  size_t size = 0;
  if (!q || !prog || !name)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the queue, program and name must not be NULL", fn);
  TRY(program_module(fn, prog, &m));
  TRY(use_context(fn, q->ctx->cu));
  CUresult err = drv.cuModuleGetGlobal(ptr, &size, m, name);
  if (err == CUDA_ERROR_NOT_FOUND)
    return fail(PI_ERROR_INVALID_VALUE, "%s: the program has no global '%s'",
                fn, name);
  TRY(cu_check(fn, "cuModuleGetGlobal", err));
  if (offset > size || count > size - offset)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: bytes %zu..%zu are outside the %zu-byte global '%s'", fn,
                offset, offset + count, size, name);
  *ptr += offset;
  return PI_SUCCESS;
}

static pi_result cu_piextEnqueueDeviceGlobalVariableWrite(
    pi_queue queue, pi_program program, const char *name,
    pi_bool blocking_write, size_t count, size_t offset, const void *src,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  CUdeviceptr ptr = 0;
  REQUIRE(src != NULL || count == 0);
  TRY(global_range(FN, queue, program, name, count, offset, &ptr));
  pi_event ev = NULL;
  pi_result r =
      cmd_start(FN, queue, num_events_in_wait_list, event_wait_list, event,
                PI_COMMAND_TYPE_DEVICE_GLOBAL_VARIABLE_WRITE, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (count)
    r = CU(cuMemcpyHtoDAsync, ptr, src, count, queue->stream);
  return cmd_finish(FN, queue, r, ev, event, blocking_write);
}

static pi_result cu_piextEnqueueDeviceGlobalVariableRead(
    pi_queue queue, pi_program program, const char *name, pi_bool blocking_read,
    size_t count, size_t offset, void *dst, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  CUdeviceptr ptr = 0;
  REQUIRE(dst != NULL || count == 0);
  TRY(global_range(FN, queue, program, name, count, offset, &ptr));
  pi_event ev = NULL;
  pi_result r =
      cmd_start(FN, queue, num_events_in_wait_list, event_wait_list, event,
                PI_COMMAND_TYPE_DEVICE_GLOBAL_VARIABLE_READ, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (count)
    r = CU(cuMemcpyDtoHAsync, dst, ptr, count, queue->stream);
  return cmd_finish(FN, queue, r, ev, event, blocking_read);
}

static pi_result no_host_pipes(const char *fn) {
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: host pipes are an Intel FPGA feature; CUDA has none (use "
              "USM or a buffer to pass data)",
              fn);
}

static pi_result cu_piextEnqueueReadHostPipe(
    pi_queue queue, pi_program program, const char *pipe_symbol,
    pi_bool blocking, void *ptr, size_t size, pi_uint32 num_events_in_waitlist,
    const pi_event *events_waitlist, pi_event *event) {
  (void)queue, (void)program, (void)pipe_symbol, (void)blocking, (void)ptr;
  (void)size, (void)num_events_in_waitlist, (void)events_waitlist;
  (void)event;
  return no_host_pipes(FN);
}

static pi_result cu_piextEnqueueWriteHostPipe(
    pi_queue queue, pi_program program, const char *pipe_symbol,
    pi_bool blocking, void *ptr, size_t size, pi_uint32 num_events_in_waitlist,
    const pi_event *events_waitlist, pi_event *event) {
  (void)queue, (void)program, (void)pipe_symbol, (void)blocking, (void)ptr;
  (void)size, (void)num_events_in_waitlist, (void)events_waitlist;
  (void)event;
  return no_host_pipes(FN);
}

/* ---- Peer access
 * ------------------------------------------------------------- Between the
 * primary contexts of two devices. */

static pi_result peer_pair(const char *fn, pi_device a, pi_device b,
                           CUcontext *ca, CUcontext *cb) {
  if (!a || !b)
    return fail(PI_ERROR_INVALID_DEVICE, "%s: a device is NULL", fn);
  if (a == b)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a device reaches its own memory; peer access is between "
                "two devices",
                fn);
  TRY(device_primary(fn, a, ca));
  return device_primary(fn, b, cb);
}

static pi_result cu_piextEnablePeerAccess(pi_device command_device,
                                          pi_device peer_device) {
  CUcontext mine = NULL, peer = NULL;
  TRY(peer_pair(FN, command_device, peer_device, &mine, &peer));
  TRY(use_context(FN, mine));
  return CU(cuCtxEnablePeerAccess, peer, 0);
}

static pi_result cu_piextDisablePeerAccess(pi_device command_device,
                                           pi_device peer_device) {
  CUcontext mine = NULL, peer = NULL;
  TRY(peer_pair(FN, command_device, peer_device, &mine, &peer));
  TRY(use_context(FN, mine));
  return CU(cuCtxDisablePeerAccess, peer);
}

static pi_result
cu_piextPeerAccessGetInfo(pi_device command_device, pi_device peer_device,
                          pi_peer_attr attr, size_t param_value_size,
                          void *param_value, size_t *param_value_size_ret) {
  struct info_out o = {FN, attr, param_value_size, param_value,
                       param_value_size_ret};
  REQUIRE(command_device != NULL && peer_device != NULL);
  if (attr != PI_PEER_ACCESS_SUPPORTED && attr != PI_PEER_ATOMICS_SUPPORTED)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown peer attribute 0x%x", FN,
                (unsigned)attr);
  if (command_device == peer_device)
    return put_u32(&o, 1); /* a device's own memory */
  int v = 0;
  TRY(CU(cuDeviceGetP2PAttribute, &v,
         attr == PI_PEER_ACCESS_SUPPORTED
             ? CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED
             : CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED,
         command_device->cu, peer_device->cu));
  return put_u32(&o, (uint32_t)v);
}

/* ---- Plugin ----------------------------------------------------------------
 */

static pi_result cu_piextPluginGetOpaqueData(void *opaque_data_param,
                                             void **opaque_data_return) {
  (void)opaque_data_param;
  if (opaque_data_return)
    *opaque_data_return = NULL;
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: the CUDA plugin has no opaque data (only host-compiled "
              "device plugins do)",
              FN);
}

/* The last message of this thread, and its code: PI_SUCCESS for a warning. */
static pi_result cu_piPluginGetLastError(char **message) {
  return plugin_last_error(message);
}

/* -O0..-O3 pass to the JIT (piProgramBuild takes them), "" is the default. */
static pi_result cu_piPluginGetBackendOption(pi_platform platform,
                                             const char *frontend_option,
                                             const char **backend_option) {
  (void)platform;
  REQUIRE(frontend_option != NULL && backend_option != NULL);
  static const char *const levels[] = {"-O0", "-O1", "-O2", "-O3"};
  if (!*frontend_option) {
    *backend_option = "";
    return PI_SUCCESS;
  }
  for (size_t i = 0; i < sizeof levels / sizeof *levels; ++i)
    if (strcmp(frontend_option, levels[i]) == 0) {
      *backend_option = levels[i];
      return PI_SUCCESS;
    }
  return fail(PI_ERROR_INVALID_VALUE,
              "%s: no CUDA JIT option for '%s'; the plugin maps -O0 to -O3", FN,
              frontend_option);
}

/* Frees the platform and what the plugin holds of the driver (the devices'
 * primary contexts and timer events; errors are ignored: the driver may
 * be shutting down with the process). The driver library itself stays
 * loaded once cuInit has run: its threads outlive teardown, and unloading
 * it under them would crash. No PI call may follow before piPluginInit. */
static pi_result cu_piTearDown(void *PluginParameter) {
  (void)PluginParameter;
  pthread_mutex_lock(&init_lock);
  if (the_platform) {
    for (pi_uint32 i = 0; i < the_platform->num_devices; ++i) {
      struct _pi_device *d = &the_platform->devices[i];
      if (d->timer_base)
        drv.cuEventDestroy(d->timer_base);
      if (d->primary)
        drv.cuDevicePrimaryCtxRelease(d->cu);
      pthread_mutex_destroy(&d->lock);
    }
    free(the_platform->devices);
    free(the_platform);
    the_platform = NULL;
  }
  if (driver && !driver_initialized)
    dlclose(driver); /* never used: nothing of it runs */
  if (!driver_initialized || !driver)
    driver = NULL;
  driver_initialized = false;
  driver_problem[0] = 0;
  pthread_mutex_unlock(&init_lock);
  return PI_SUCCESS;
}

/* Checks the runtime's PI major version, writes the plugin's version, fills
 * every entry of the function table and opens the driver. Without a driver
 * it still succeeds: piPlatformsGet then reports no platform, and why. */
PI_PLUGIN_EXPORT pi_result piPluginInit(pi_plugin *plugin) {
  pi_result r = plugin_init_version(plugin, "CUDA", PLUGIN_REVISION);
  if (r != PI_SUCCESS)
    return r;
#define X(name) plugin->PiFunctionTable.name = cu_##name;
  PI_FOR_EACH_API(X)
#undef X
  pthread_mutex_lock(&init_lock);
  if (!driver && !driver_initialized && !driver_problem[0])
    load_driver();
  pthread_mutex_unlock(&init_lock);
  return PI_SUCCESS;
}
