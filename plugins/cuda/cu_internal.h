/*
 * cu_internal.h: what the files of the pitrace CUDA plugin (libpi_cuda.so)
 * share.
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
 * The plugin's files, one per PI object kind as in Unified Runtime's
 * adapters (each opens with what it holds): driver.c (the driver's entry
 * points, opening the driver, small helpers), errors.c (the CUDA -> PI
 * result mapping), platform.c, device.c, context.c, queue.c, event.c
 * (events and how a command is recorded on a stream), memory.c,
 * program.c, kernel.c, sampler.c, enqueue.c (kernel launches and memory
 * commands), usm.c, global.c (device globals and host pipes), peer.c and
 * plugin.c (piPluginInit and the plugin-wide PI functions). This header
 * holds what they share: the driver's entry-point table, the object
 * structures behind the PI handles, the macros, and the declarations of
 * the functions and variables used by more than one file. What every
 * plugin needs (fail(), info-query answers, queue property lists,
 * reference counts, ...) is plugins/common/plugin_common.h.
 *
 * Threads: no lock is held across calls. The one-time driver set-up has a
 * mutex; programs, kernels and buffers have their own for their mutable
 * state; reference counts are atomic; the last error is per thread.
 */
#ifndef PITRACE_CU_INTERNAL_H
#define PITRACE_CU_INTERNAL_H
#define _GNU_SOURCE /* dladdr */
#include "cuda_driver.h"
#include "pi/pi.h"

/* What the plugin's own PI functions are named: cu_<name> (plugin_common.h
 * declares them). */
#define PLUGIN_PREFIX cu_

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
#define PLUGIN_REVISION "4"

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

/* Calls a driver function and checks its result, in a PI function (CU) or
 * in a helper given the PI function's name (CUF). */
#define CUF(fn, name, ...) cu_check((fn), #name, drv.name(__VA_ARGS__))
#define CU(name, ...) CUF(FN, name, __VA_ARGS__)

static const char IMAGES_UNSUPPORTED[] =
    "images are not supported by the pitrace CUDA plugin; use buffers or USM";

/* ---- Objects ---------------------------------------------------------------
 * Handles are pointers to these structures. Reference counts are atomic;
 * the rest is immutable after creation unless a lock says otherwise. */

struct _pi_platform {
  pi_uint32 num_devices;
  struct _pi_device *devices;
  int driver_version; /* cuDriverGetVersion: 1000 * major + 10 * minor */
  char version[32];   /* "CUDA <major>.<minor>" */
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

/* JIT options with the error and info log buffers. */
struct jit {
  CUjit_option keys[16];
  void *vals[16];
  unsigned n;
  char notes[512];
  char info[16384], error[16384];
};

/* One side of a rectangular copy: a buffer (unified address) or host
 * memory, its origin and its pitches (0: tightly packed). */
struct rect_side {
  pi_mem mem;       /* NULL for host memory */
  const void *host; /* host memory */
  size_t x, y, z, row_pitch, slice_pitch;
};

/* ---- USM -------------------------------------------------------------------
 * Device allocations are cuMemAlloc, host ones cuMemAllocHost (pinned,
 * reachable from every device through unified addressing), shared ones
 * cuMemAllocManaged, never larger than the device's free memory. */

/* What the driver knows of a pointer; type PI_MEM_TYPE_UNKNOWN for memory
 * it does not know (pageable host memory). */
struct usm_info {
  pi_usm_type type;
  CUdeviceptr base;
  size_t size;
  int ordinal;
};


/* ---- driver.c -------------------------------------------------------------- */

extern struct driver drv;

extern pthread_mutex_t init_lock;

extern void *driver;

extern bool driver_initialized;

extern char driver_problem[768];

extern struct _pi_platform *the_platform;

void load_driver(void);

pi_platform get_platform(void);

uint64_t now_ns(void);

char *dup_str(const char *s);

bool driver_gone(void);

pi_result use_context(const char *fn, CUcontext c);

pi_result device_attr(const char *fn, pi_device d, CUdevice_attribute a,
                      int *v);

const char *describe(pi_device d, char *buf, size_t n);

pi_result device_primary(const char *fn, pi_device d, CUcontext *c);

/* ---- errors.c -------------------------------------------------------------- */

const char *cu_error_text(CUresult err, char *buf, size_t n);

pi_result pi_from_cu(CUresult err);

pi_result cu_check(const char *fn, const char *cufn, CUresult err);

pi_result no_images(const char *fn);

pi_result no_samplers(const char *fn);

pi_result unknown_query(const struct info_out *o);

/* ---- device.c -------------------------------------------------------------- */

pi_bitfield atomic_orders(pi_device d);

pi_bitfield atomic_scopes(pi_device d);

/* ---- event.c --------------------------------------------------------------- */

pi_result cmd_start(const char *fn, pi_queue q, pi_uint32 nwait,
                    const pi_event *wait, pi_event *out,
                    pi_command_type type, pi_event *ev);

pi_result cmd_finish(const char *fn, pi_queue q, pi_result r,
                     pi_event ev, pi_event *out, bool blocking);

/* ---- program.c ------------------------------------------------------------- */

pi_result program_module(const char *fn, pi_program p, CUmodule *m);

/* ---- kernel.c -------------------------------------------------------------- */

pi_result func_attr(const char *fn, pi_kernel k, CUfunction_attribute a,
                    int *v);

/* ---- enqueue.c ------------------------------------------------------------- */

pi_result fill(const char *fn, CUstream s, CUdeviceptr dst,
               const void *pattern, size_t psize, size_t size);

#endif
