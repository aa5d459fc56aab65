/*
 * ze_test_double.c: a TEST DOUBLE of a Level Zero driver, built as
 * libze_pitrace_test_double.so. IT IS NOT A DRIVER FOR ANY HARDWARE and
 * runs no kernel: it exists so that pitrace's Level Zero plugin can be
 * tested on machines without an Intel GPU.
 *
 * The real Level Zero loader (libze_loader) loads it when a test sets
 * ZE_ENABLE_ALT_DRIVERS=/path/to/libze_pitrace_test_double.so; it exports
 * the DDI table getters the loader asks every driver for (zeGet*ProcAddrTable
 * for the core, tools and sysman tables; only core functions the plugin
 * uses are filled in, the rest are NULL).
 *
 * What it does, on host memory:
 *   - one driver with one GPU-type device "pitrace Level Zero TEST DOUBLE"
 *     with two sub-devices; contexts, command queues (two compute queues in
 *     group 0, one copy queue in group 1), command lists and immediate
 *     command lists, event pools and host-visible events with kernel
 *     timestamps from CLOCK_MONOTONIC at 25 MHz;
 *   - memory: device, host and shared allocations are aligned_alloc; copies,
 *     region copies and fills really copy and fill (fill patterns are
 *     limited to 16 bytes, like a copy engine); images are linear host
 *     memory;
 *   - command lists run on the host when executed (regular lists) or when
 *     appended to (immediate lists), in order; a command first waits for
 *     its wait events (polling, giving up after 20 s with a log line), then
 *     runs, then signals its event;
 *   - kernel launches are LOGGED, NOT EXECUTED: the log line names the
 *     kernel, the group counts, the group size, the global offset and every
 *     argument's bytes as set;
 *   - modules: SPIR-V is recognised by its magic number; the kernels of a
 *     module are its OpEntryPoint instructions, each with as many arguments
 *     as its OpFunction has OpFunctionParameter (the rest of the SPIR-V is
 *     not looked at). zeModuleCreate logs the SPIR-V size, the build flags
 *     and every specialization constant given (id and value; values are
 *     read as 64 bits, so callers must pad them, as pitrace's plugin does).
 *     Build flags for tests: "-pitrace-fail-build" makes the build fail
 *     with a build log; "-pitrace-global=NAME:SIZE" gives the module a
 *     zero-filled device global. A module's native binary is "PTZENATV"
 *     followed by its SPIR-V, and is accepted back as ZE_MODULE_FORMAT_NATIVE.
 *
 * The log: one line per call of interest, appended with one write(2) to the
 * file named by PITRACE_ZE_TEST_LOG (no log when it is unset). Object ids
 * (C1, Q1, L1, P1, E1, M1, K1, B1, D0..D2) name contexts, queues, lists,
 * pools, events, modules, kernels, build logs and devices.
 *
 * It depends on nothing but the Level Zero headers and the C library.
 */
#define _GNU_SOURCE
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define TIMER_HZ 25000000ull /* device timer: 40 ns per tick */
#define MAX_FILL 16          /* largest fill pattern */
#define MAX_ARG 256          /* largest kernel argument kept */
#define GIVE_UP_NS 20000000000ull

/* ---- Log ------------------------------------------------------------------ */

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static int log_fd = -1;

static void log_open(void) {
  const char *path = getenv("PITRACE_ZE_TEST_LOG");
  if (path && *path)
    log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

__attribute__((format(printf, 1, 2))) static void zlog(const char *fmt, ...) {
  pthread_once(&log_once, log_open);
  if (log_fd < 0)
    return;
  char line[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n > sizeof line - 2)
    n = (int)sizeof line - 2;
  line[n++] = '\n';
  ssize_t w = write(log_fd, line, (size_t)n);
  (void)w;
}

/* A string builder for log lines. */
struct sb {
  char s[3072];
  size_t n;
};

__attribute__((format(printf, 2, 3))) static void sb_add(struct sb *b,
                                                         const char *fmt, ...) {
  if (b->n >= sizeof b->s - 1)
    return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
  va_end(ap);
  if (n > 0)
    b->n += (size_t)n < sizeof b->s - b->n ? (size_t)n : sizeof b->s - b->n - 1;
}

static void sb_hex(struct sb *b, const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    sb_add(b, "%02x", p[i]);
}

static atomic_uint next_id = 1;
static unsigned new_id(void) { return atomic_fetch_add(&next_id, 1); }

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ticks(void) { return now_ns() / (1000000000ull / TIMER_HZ); }

static void nap(void) {
  struct timespec ts = {0, 100000}; /* 0.1 ms */
  nanosleep(&ts, NULL);
}

/* ---- Objects ---------------------------------------------------------------- */

struct _ze_driver_handle_t {
  int unused;
};

struct _ze_device_handle_t {
  unsigned id;
  struct _ze_device_handle_t *parent;
  struct _ze_device_handle_t *subs[2];
  uint32_t nsubs;
  uint32_t subdevice_id;
};

struct _ze_context_handle_t {
  unsigned id;
};

struct _ze_command_queue_handle_t {
  unsigned id;
  ze_device_handle_t device;
};

struct _ze_event_pool_handle_t {
  unsigned id;
  ze_event_pool_flags_t flags;
  uint32_t count;
  pthread_mutex_t lock;
  bool *used;
};

struct _ze_event_handle_t {
  unsigned id;
  ze_event_pool_handle_t pool;
  uint32_t index;
  atomic_int signaled;
  uint64_t start, end; /* ticks of the last command that signaled it */
};

struct kernel_info {
  char *name;
  uint32_t nargs;
  uint32_t fn_id;
};

struct global_var {
  char *name;
  size_t size;
  void *ptr;
};

struct _ze_module_build_log_handle_t {
  unsigned id;
  char *text;
};

struct _ze_module_handle_t {
  unsigned id;
  ze_device_handle_t device;
  unsigned char *spirv;
  size_t spirv_size;
  uint32_t nkernels;
  struct kernel_info *kernels;
  uint32_t nglobals;
  struct global_var *globals;
};

struct arg {
  bool set;
  bool local;
  size_t size;
  unsigned char bytes[MAX_ARG];
};

struct _ze_kernel_handle_t {
  unsigned id;
  ze_module_handle_t module;
  const struct kernel_info *info;
  pthread_mutex_t lock;
  uint32_t group[3];
  uint32_t offset[3];
  struct arg *args;
};

struct _ze_image_handle_t {
  unsigned id;
  ze_image_desc_t desc;
  size_t elem, width, height, depth; /* depth: slices or array layers */
  unsigned char *data;
};

struct _ze_sampler_handle_t {
  unsigned id;
};

enum cmd_kind {
  CMD_COPY,
  CMD_FILL,
  CMD_REGION,
  CMD_LAUNCH,
  CMD_BARRIER,
  CMD_SIGNAL,
  CMD_WAIT,
  CMD_PREFETCH,
  CMD_ADVISE,
  CMD_IMAGE_FROM,
  CMD_IMAGE_TO,
  CMD_IMAGE_COPY
};

struct cmd {
  enum cmd_kind kind;
  ze_event_handle_t signal;
  uint32_t nwait;
  ze_event_handle_t *wait;
  void *dst;
  const void *src;
  size_t size;
  unsigned char pattern[MAX_FILL];
  size_t pattern_size;
  ze_copy_region_t dregion, sregion;
  uint32_t dpitch, dslice, spitch, sslice;
  ze_image_handle_t image, src_image;
  ze_image_region_t iregion, isregion;
  char *text; /* launches: the description, with the arguments as set */
};

struct _ze_command_list_handle_t {
  unsigned id;
  bool immediate;
  bool closed;
  pthread_mutex_t lock;
  struct cmd *cmds;
  size_t n, cap;
};

/* The one driver and its devices. */
static struct _ze_driver_handle_t the_driver;
static struct _ze_device_handle_t dev_root = {.id = 0, .nsubs = 2};
static struct _ze_device_handle_t dev_sub[2] = {
    {.id = 1, .parent = &dev_root, .subdevice_id = 0},
    {.id = 2, .parent = &dev_root, .subdevice_id = 1}};

/* A second root device, of another type, after the first, only with
 * PITRACE_ZE_TEST_EXTRA_DEVICE=cpu (or fpga): for device numbering across
 * types (SYCL_DEVICE_FILTER). */
static struct _ze_device_handle_t dev_extra = {.id = 3, .nsubs = 0};

static ze_device_type_t extra_type(void) {
  const char *t = getenv("PITRACE_ZE_TEST_EXTRA_DEVICE");
  return !t ? (ze_device_type_t)0
         : strcmp(t, "cpu") == 0  ? ZE_DEVICE_TYPE_CPU
         : strcmp(t, "fpga") == 0 ? ZE_DEVICE_TYPE_FPGA
                                  : (ze_device_type_t)0;
}

static ze_device_handle_t root_of(ze_device_handle_t d) {
  return d->parent ? d->parent : d;
}

static bool is_device(ze_device_handle_t d) {
  return d == &dev_root || d == &dev_sub[0] || d == &dev_sub[1] ||
         (d == &dev_extra && extra_type());
}

/* ---- Allocations ------------------------------------------------------------ */

struct alloc {
  void *ptr;
  size_t size;
  ze_memory_type_t type;
  ze_device_handle_t device;
  uint64_t id;
  struct alloc *next;
};

static pthread_mutex_t allocs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc *allocs;

static struct alloc *alloc_find(const void *p) {
  for (struct alloc *a = allocs; a; a = a->next)
    if ((const char *)p >= (const char *)a->ptr &&
        (const char *)p < (const char *)a->ptr + a->size)
      return a;
  return NULL;
}

static const char *type_name(ze_memory_type_t t) {
  return t == ZE_MEMORY_TYPE_HOST     ? "host"
         : t == ZE_MEMORY_TYPE_DEVICE ? "device"
         : t == ZE_MEMORY_TYPE_SHARED ? "shared"
                                      : "unknown";
}

static ze_result_t mem_alloc(const char *fn, ze_memory_type_t type,
                             size_t size, size_t align, ze_device_handle_t dev,
                             void **pptr) {
  if (!pptr)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0)
    return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  if (align & (align - 1))
    return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  if (type != ZE_MEMORY_TYPE_HOST && !is_device(dev))
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (align < 64)
    align = 64;
  struct alloc *a = calloc(1, sizeof *a);
  void *p = aligned_alloc(align, (size + align - 1) / align * align);
  if (!a || !p) {
    free(a);
    free(p);
    return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  memset(p, 0, size);
  a->ptr = p;
  a->size = size;
  a->type = type;
  a->device = type == ZE_MEMORY_TYPE_HOST ? NULL : dev;
  a->id = new_id();
  pthread_mutex_lock(&allocs_lock);
  a->next = allocs;
  allocs = a;
  pthread_mutex_unlock(&allocs_lock);
  *pptr = p;
  if (a->device)
    zlog("%s ptr=%p size=%zu align=%zu device=D%u", fn, p, size, align,
         dev->id);
  else
    zlog("%s ptr=%p size=%zu align=%zu", fn, p, size, align);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_MemAllocDevice(
    ze_context_handle_t ctx, const ze_device_mem_alloc_desc_t *desc,
    size_t size, size_t align, ze_device_handle_t dev, void **pptr) {
  if (!ctx || !desc)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return mem_alloc("zeMemAllocDevice", ZE_MEMORY_TYPE_DEVICE, size, align,
                   dev, pptr);
}

static ze_result_t ZE_APICALL d_MemAllocHost(ze_context_handle_t ctx,
                                             const ze_host_mem_alloc_desc_t *desc,
                                             size_t size, size_t align,
                                             void **pptr) {
  if (!ctx || !desc)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return mem_alloc("zeMemAllocHost", ZE_MEMORY_TYPE_HOST, size, align, NULL,
                   pptr);
}

static ze_result_t ZE_APICALL d_MemAllocShared(
    ze_context_handle_t ctx, const ze_device_mem_alloc_desc_t *ddesc,
    const ze_host_mem_alloc_desc_t *hdesc, size_t size, size_t align,
    ze_device_handle_t dev, void **pptr) {
  if (!ctx || !ddesc || !hdesc)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return mem_alloc("zeMemAllocShared", ZE_MEMORY_TYPE_SHARED, size, align,
                   dev ? dev : &dev_root, pptr);
}

static ze_result_t ZE_APICALL d_MemFree(ze_context_handle_t ctx, void *ptr) {
  if (!ctx)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  pthread_mutex_lock(&allocs_lock);
  struct alloc **pp = &allocs;
  while (*pp && (*pp)->ptr != ptr)
    pp = &(*pp)->next;
  struct alloc *a = *pp;
  if (a)
    *pp = a->next;
  pthread_mutex_unlock(&allocs_lock);
  if (!a)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  zlog("zeMemFree ptr=%p type=%s", ptr, type_name(a->type));
  free(a->ptr);
  free(a);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_MemGetAllocProperties(
    ze_context_handle_t ctx, const void *ptr,
    ze_memory_allocation_properties_t *props, ze_device_handle_t *pdev) {
  if (!ctx || !props)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  pthread_mutex_lock(&allocs_lock);
  struct alloc *a = alloc_find(ptr);
  props->type = a ? a->type : ZE_MEMORY_TYPE_UNKNOWN;
  props->id = a ? a->id : 0;
  props->pageSize = a ? 4096 : 0;
  if (pdev)
    *pdev = a ? a->device : NULL;
  pthread_mutex_unlock(&allocs_lock);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_MemGetAddressRange(ze_context_handle_t ctx,
                                                   const void *ptr,
                                                   void **pbase,
                                                   size_t *psize) {
  if (!ctx)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  pthread_mutex_lock(&allocs_lock);
  struct alloc *a = alloc_find(ptr);
  if (a && pbase)
    *pbase = a->ptr;
  if (a && psize)
    *psize = a->size;
  pthread_mutex_unlock(&allocs_lock);
  return a ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

/* ---- Driver ------------------------------------------------------------------ */

static ze_result_t ZE_APICALL d_Init(ze_init_flags_t flags) {
  zlog("zeInit flags=0x%x", (unsigned)flags);
  if (flags && !(flags & ZE_INIT_FLAG_GPU_ONLY))
    return ZE_RESULT_ERROR_UNINITIALIZED; /* the double has no VPU */
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DriverGet(uint32_t *pCount,
                                          ze_driver_handle_t *phDrivers) {
  if (!pCount)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*pCount && phDrivers)
    phDrivers[0] = &the_driver;
  *pCount = 1;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DriverGetApiVersion(ze_driver_handle_t drv,
                                                    ze_api_version_t *v) {
  if (drv != &the_driver || !v)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  *v = ZE_API_VERSION_1_4;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DriverGetProperties(ze_driver_handle_t drv,
                                                    ze_driver_properties_t *p) {
  if (drv != &the_driver || !p)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  memset(p->uuid.id, 0x5a, sizeof p->uuid.id);
  p->driverVersion = 0x01020003u; /* 1.2.3 */
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DriverGetExtensionProperties(
    ze_driver_handle_t drv, uint32_t *pCount,
    ze_driver_extension_properties_t *ext) {
  if (drv != &the_driver || !pCount)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (*pCount && ext) {
    snprintf(ext[0].name, sizeof ext[0].name, "%s", ZE_GLOBAL_OFFSET_EXP_NAME);
    ext[0].version = 1;
  }
  *pCount = 1;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL zex_import(ze_driver_handle_t drv, void *ptr,
                                         size_t size) {
  if (drv != &the_driver || !ptr)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  zlog("zexDriverImportExternalPointer ptr=%p size=%zu", ptr, size);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL zex_release(ze_driver_handle_t drv, void *ptr) {
  if (drv != &the_driver || !ptr)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  zlog("zexDriverReleaseImportedPointer ptr=%p", ptr);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DriverGetExtensionFunctionAddress(
    ze_driver_handle_t drv, const char *name, void **pf) {
  if (drv != &the_driver || !name || !pf)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (strcmp(name, "zexDriverImportExternalPointer") == 0) {
    ze_result_t(ZE_APICALL * f)(ze_driver_handle_t, void *, size_t) =
        zex_import;
    memcpy(pf, &f, sizeof f);
  } else if (strcmp(name, "zexDriverReleaseImportedPointer") == 0) {
    ze_result_t(ZE_APICALL * f)(ze_driver_handle_t, void *) = zex_release;
    memcpy(pf, &f, sizeof f);
  } else {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  return ZE_RESULT_SUCCESS;
}

/* ---- Devices ------------------------------------------------------------------ */

static ze_result_t ZE_APICALL d_DeviceGet(ze_driver_handle_t drv,
                                          uint32_t *pCount,
                                          ze_device_handle_t *phDevices) {
  if (drv != &the_driver || !pCount)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  uint32_t n = extra_type() ? 2 : 1;
  if (*pCount && phDevices)
    phDevices[0] = &dev_root;
  if (*pCount > 1 && phDevices && n > 1)
    phDevices[1] = &dev_extra;
  if (!*pCount || !phDevices || *pCount > n)
    *pCount = n;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DeviceGetSubDevices(ze_device_handle_t d,
                                                    uint32_t *pCount,
                                                    ze_device_handle_t *subs) {
  if (!is_device(d) || !pCount)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  uint32_t n = d->nsubs;
  for (uint32_t i = 0; subs && i < *pCount && i < n; ++i)
    subs[i] = &dev_sub[i];
  if (*pCount == 0 || !subs || *pCount > n)
    *pCount = n;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DeviceGetProperties(ze_device_handle_t d,
                                                    ze_device_properties_t *p) {
  if (!is_device(d) || !p)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  ze_structure_type_t stype = p->stype;
  void *next = p->pNext;
  memset(p, 0, sizeof *p);
  p->stype = stype;
  p->pNext = next;
  p->type = d == &dev_extra ? extra_type() : ZE_DEVICE_TYPE_GPU;
  p->vendorId = 0xffff; /* no vendor: this is no real device */
  p->deviceId = 0x0001;
  p->flags = d->parent ? ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE : 0;
  p->subdeviceId = d->subdevice_id;
  p->coreClockRate = 1000;
  p->maxMemAllocSize = 1ull << 30;
  p->maxHardwareContexts = 64;
  p->maxCommandQueuePriority = 2;
  p->numThreadsPerEU = 7;
  p->physicalEUSimdWidth = 8;
  p->numEUsPerSubslice = 8;
  p->numSubslicesPerSlice = 4;
  p->numSlices = d->parent ? 1 : 2;
  /* Cycles per second for ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2, else
   * nanoseconds per cycle. */
  p->timerResolution = stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2
                           ? TIMER_HZ
                           : 1000000000ull / TIMER_HZ;
  p->timestampValidBits = 64;
  p->kernelTimestampValidBits = 64;
  memset(p->uuid.id, 0, sizeof p->uuid.id);
  p->uuid.id[0] = 0x7e;
  p->uuid.id[1] = (uint8_t)d->id;
  snprintf(p->name, sizeof p->name, "pitrace Level Zero TEST DOUBLE%s",
           d->parent ? (d->subdevice_id ? " tile 1" : " tile 0") : "");
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DeviceGetComputeProperties(
    ze_device_handle_t d, ze_device_compute_properties_t *c) {
  if (!is_device(d) || !c)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  c->maxTotalGroupSize = 256;
  c->maxGroupSizeX = 256;
  c->maxGroupSizeY = 256;
  c->maxGroupSizeZ = 64;
  c->maxGroupCountX = c->maxGroupCountY = c->maxGroupCountZ = 65535;
  c->maxSharedLocalMemory = 65536;
  c->numSubGroupSizes = 3;
  c->subGroupSizes[0] = 8;
  c->subGroupSizes[1] = 16;
  c->subGroupSizes[2] = 32;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DeviceGetModuleProperties(
    ze_device_handle_t d, ze_device_module_properties_t *m) {
  if (!is_device(d) || !m)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const ze_device_fp_flags_t fp =
      ZE_DEVICE_FP_FLAG_DENORM | ZE_DEVICE_FP_FLAG_INF_NAN |
      ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_ROUND_TO_ZERO |
      ZE_DEVICE_FP_FLAG_ROUND_TO_INF | ZE_DEVICE_FP_FLAG_FMA;
  m->spirvVersionSupported = ZE_MAKE_VERSION(1, 2);
  m->flags = ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_FP64 |
             ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS;
  m->fp16flags = fp;
  m->fp32flags = fp | ZE_DEVICE_FP_FLAG_ROUNDED_DIVIDE_SQRT;
  m->fp64flags = fp;
  m->maxArgumentsSize = 2048;
  m->printfBufferSize = 4u << 20;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DeviceGetCommandQueueGroupProperties(
    ze_device_handle_t d, uint32_t *pCount,
    ze_command_queue_group_properties_t *g) {
  if (!is_device(d) || !pCount)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (*pCount && g) {
    g[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
                 ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY |
                 ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COOPERATIVE_KERNELS;
    g[0].maxMemoryFillPatternSize = MAX_FILL;
    g[0].numQueues = 2;
    if (*pCount > 1) {
      g[1].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
      g[1].maxMemoryFillPatternSize = MAX_FILL;
      g[1].numQueues = 1;
    }
  }
  if (*pCount == 0 || !g || *pCount > 2)
    *pCount = 2;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DeviceGetMemoryProperties(
    ze_device_handle_t d, uint32_t *pCount, ze_device_memory_properties_t *m) {
  if (!is_device(d) || !pCount)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (*pCount && m) {
    m[0].flags = 0;
    m[0].maxClockRate = 1600;
    m[0].maxBusWidth = 64;
    m[0].totalSize = 1ull << 30;
    snprintf(m[0].name, sizeof m[0].name, "host memory (test double)");
  }
  *pCount = 1;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DeviceGetMemoryAccessProperties(
    ze_device_handle_t d, ze_device_memory_access_properties_t *a) {
  if (!is_device(d) || !a)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const ze_memory_access_cap_flags_t rw =
      ZE_MEMORY_ACCESS_CAP_FLAG_RW | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC;
  a->hostAllocCapabilities = rw;
  a->deviceAllocCapabilities = rw;
  a->sharedSingleDeviceAllocCapabilities = rw;
  a->sharedCrossDeviceAllocCapabilities = ZE_MEMORY_ACCESS_CAP_FLAG_RW;
  a->sharedSystemAllocCapabilities = 0;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DeviceGetCacheProperties(
    ze_device_handle_t d, uint32_t *pCount, ze_device_cache_properties_t *c) {
  if (!is_device(d) || !pCount)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (*pCount && c) {
    c[0].flags = 0;
    c[0].cacheSize = 1u << 20;
  }
  *pCount = 1;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DeviceGetImageProperties(
    ze_device_handle_t d, ze_device_image_properties_t *i) {
  if (!is_device(d) || !i)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  i->maxImageDims1D = 16384;
  i->maxImageDims2D = 16384;
  i->maxImageDims3D = 2048;
  i->maxImageBufferSize = 1ull << 27;
  i->maxImageArraySlices = 2048;
  i->maxSamplers = 16;
  i->maxReadImageArgs = 128;
  i->maxWriteImageArgs = 64;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DeviceGetP2PProperties(
    ze_device_handle_t a, ze_device_handle_t b, ze_device_p2p_properties_t *p) {
  if (!is_device(a) || !is_device(b) || !p)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  p->flags = ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS |
             ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DeviceCanAccessPeer(ze_device_handle_t a,
                                                    ze_device_handle_t b,
                                                    ze_bool_t *can) {
  if (!is_device(a) || !is_device(b) || !can)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  *can = root_of(a) == root_of(b);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DeviceGetStatus(ze_device_handle_t d) {
  return is_device(d) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

static ze_result_t ZE_APICALL d_DeviceGetGlobalTimestamps(
    ze_device_handle_t d, uint64_t *host, uint64_t *dev) {
  if (!is_device(d) || !host || !dev)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  *host = now_ns();
  *dev = now_ticks();
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_DevicePciGetPropertiesExt(
    ze_device_handle_t d, ze_pci_ext_properties_t *p) {
  if (!is_device(d) || !p)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  p->address = (ze_pci_address_ext_t){0, 0x42, 0, 0};
  p->maxSpeed = (ze_pci_speed_ext_t){4, 16, -1};
  return ZE_RESULT_SUCCESS;
}

/* ---- Contexts, queues --------------------------------------------------------------- */

static ze_result_t context_create(const char *fn, uint32_t ndev,
                                  ze_device_handle_t *devs,
                                  ze_context_handle_t *out) {
  if (!out)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  for (uint32_t i = 0; i < ndev; ++i)
    if (!is_device(devs[i]))
      return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  ze_context_handle_t c = calloc(1, sizeof *c);
  if (!c)
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  c->id = new_id();
  *out = c;
  zlog("%s context=C%u devices=%u", fn, c->id, (unsigned)ndev);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_ContextCreate(ze_driver_handle_t drv,
                                              const ze_context_desc_t *desc,
                                              ze_context_handle_t *out) {
  if (drv != &the_driver || !desc)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  return context_create("zeContextCreate", 0, NULL, out);
}

static ze_result_t ZE_APICALL d_ContextCreateEx(ze_driver_handle_t drv,
                                                const ze_context_desc_t *desc,
                                                uint32_t ndev,
                                                ze_device_handle_t *devs,
                                                ze_context_handle_t *out) {
  if (drv != &the_driver || !desc || (ndev && !devs))
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  return context_create("zeContextCreateEx", ndev, devs, out);
}

static ze_result_t ZE_APICALL d_ContextDestroy(ze_context_handle_t c) {
  if (!c)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  zlog("zeContextDestroy context=C%u", c->id);
  free(c);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_CommandQueueCreate(
    ze_context_handle_t c, ze_device_handle_t d,
    const ze_command_queue_desc_t *desc, ze_command_queue_handle_t *out) {
  if (!c || !is_device(d) || !desc || !out)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (desc->ordinal > 1 || desc->index >= (desc->ordinal ? 1u : 2u))
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  ze_command_queue_handle_t q = calloc(1, sizeof *q);
  if (!q)
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  q->id = new_id();
  q->device = d;
  *out = q;
  zlog("zeCommandQueueCreate queue=Q%u device=D%u ordinal=%u index=%u "
       "mode=%u priority=%u",
       q->id, d->id, (unsigned)desc->ordinal, (unsigned)desc->index,
       (unsigned)desc->mode, (unsigned)desc->priority);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_CommandQueueDestroy(ze_command_queue_handle_t q) {
  if (!q)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  zlog("zeCommandQueueDestroy queue=Q%u", q->id);
  free(q);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_CommandQueueSynchronize(
    ze_command_queue_handle_t q, uint64_t timeout) {
  (void)timeout; /* everything ran when it was executed */
  return q ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

/* ---- Events -------------------------------------------------------------------------- */

static ze_result_t ZE_APICALL d_EventPoolCreate(ze_context_handle_t c,
                                                const ze_event_pool_desc_t *desc,
                                                uint32_t ndev,
                                                ze_device_handle_t *devs,
                                                ze_event_pool_handle_t *out) {
  (void)devs;
  if (!c || !desc || !out || desc->count == 0)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  ze_event_pool_handle_t p = calloc(1, sizeof *p);
  bool *used = calloc(desc->count, sizeof *used);
  if (!p || !used) {
    free(p);
    free(used);
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  p->id = new_id();
  p->flags = desc->flags;
  p->count = desc->count;
  p->used = used;
  pthread_mutex_init(&p->lock, NULL);
  *out = p;
  zlog("zeEventPoolCreate pool=P%u count=%u flags=0x%x devices=%u", p->id,
       (unsigned)p->count, (unsigned)p->flags, (unsigned)ndev);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_EventPoolDestroy(ze_event_pool_handle_t p) {
  if (!p)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  zlog("zeEventPoolDestroy pool=P%u", p->id);
  pthread_mutex_destroy(&p->lock);
  free(p->used);
  free(p);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_EventCreate(ze_event_pool_handle_t p,
                                            const ze_event_desc_t *desc,
                                            ze_event_handle_t *out) {
  if (!p || !desc || !out || desc->index >= p->count)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&p->lock);
  bool taken = p->used[desc->index];
  p->used[desc->index] = true;
  pthread_mutex_unlock(&p->lock);
  if (taken)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  ze_event_handle_t e = calloc(1, sizeof *e);
  if (!e)
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  e->id = new_id();
  e->pool = p;
  e->index = desc->index;
  atomic_init(&e->signaled, 0);
  *out = e;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_EventDestroy(ze_event_handle_t e) {
  if (!e)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  pthread_mutex_lock(&e->pool->lock);
  e->pool->used[e->index] = false;
  pthread_mutex_unlock(&e->pool->lock);
  free(e);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_EventHostSignal(ze_event_handle_t e) {
  if (!e)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  e->start = e->end = now_ticks();
  atomic_store(&e->signaled, 1);
  zlog("zeEventHostSignal event=E%u", e->id);
  return ZE_RESULT_SUCCESS;
}

/* Waits for an event; UINT64_MAX gives up after 20 s (a test would hang). */
static ze_result_t event_wait(ze_event_handle_t e, uint64_t timeout,
                              const char *who) {
  uint64_t start = now_ns();
  bool forever = timeout == UINT64_MAX;
  while (!atomic_load(&e->signaled)) {
    uint64_t waited = now_ns() - start;
    if (!forever && waited >= timeout)
      return ZE_RESULT_NOT_READY;
    if (forever && waited >= GIVE_UP_NS) {
      zlog("%s: gave up waiting for event E%u after 20 s (test double)", who,
           e->id);
      return ZE_RESULT_NOT_READY;
    }
    nap();
  }
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_EventHostSynchronize(ze_event_handle_t e,
                                                     uint64_t timeout) {
  if (!e)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return event_wait(e, timeout, "zeEventHostSynchronize");
}

static ze_result_t ZE_APICALL d_EventQueryStatus(ze_event_handle_t e) {
  if (!e)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return atomic_load(&e->signaled) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

static ze_result_t ZE_APICALL d_EventHostReset(ze_event_handle_t e) {
  if (!e)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  atomic_store(&e->signaled, 0);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_EventQueryKernelTimestamp(
    ze_event_handle_t e, ze_kernel_timestamp_result_t *ts) {
  if (!e || !ts)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!(e->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP))
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (!atomic_load(&e->signaled))
    return ZE_RESULT_NOT_READY;
  ts->global.kernelStart = ts->context.kernelStart = e->start;
  ts->global.kernelEnd = ts->context.kernelEnd = e->end;
  return ZE_RESULT_SUCCESS;
}

/* ---- Modules ---------------------------------------------------------------------- */

static const char native_magic[8] = {'P', 'T', 'Z', 'E', 'N', 'A', 'T', 'V'};

static ze_module_build_log_handle_t log_new(const char *text) {
  ze_module_build_log_handle_t b = calloc(1, sizeof *b);
  if (!b)
    return NULL;
  b->id = new_id();
  b->text = strdup(text);
  if (!b->text) {
    free(b);
    return NULL;
  }
  return b;
}

static void module_free(ze_module_handle_t m) {
  for (uint32_t i = 0; i < m->nkernels; ++i)
    free(m->kernels[i].name);
  for (uint32_t i = 0; i < m->nglobals; ++i) {
    free(m->globals[i].name);
    free(m->globals[i].ptr);
  }
  free(m->kernels);
  free(m->globals);
  free(m->spirv);
  free(m);
}

/* The kernels of SPIR-V words: its OpEntryPoint names, with the number of
 * OpFunctionParameter of their OpFunction. */
static bool parse_spirv(ze_module_handle_t m, const uint32_t *w, size_t nw) {
  for (size_t i = 5; i < nw;) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xffff;
    if (count == 0 || i + count > nw)
      return false;
    if (op == 15 && count >= 4) { /* OpEntryPoint model id name... */
      size_t maxlen = (count - 3) * 4;
      const char *name = (const char *)&w[i + 3];
      struct kernel_info *k =
          realloc(m->kernels, (m->nkernels + 1) * sizeof *k);
      if (!k)
        return false;
      m->kernels = k;
      k[m->nkernels].name = strndup(name, maxlen);
      k[m->nkernels].fn_id = w[i + 2];
      k[m->nkernels].nargs = 0;
      if (!k[m->nkernels].name)
        return false;
      m->nkernels++;
    } else if (op == 54 && count >= 3) { /* OpFunction type result ... */
      uint32_t fn = w[i + 2], nargs = 0;
      size_t j = i + count;
      while (j < nw && (w[j] & 0xffff) == 55 && (w[j] >> 16)) {
        ++nargs;
        j += w[j] >> 16;
      }
      for (uint32_t k = 0; k < m->nkernels; ++k)
        if (m->kernels[k].fn_id == fn)
          m->kernels[k].nargs = nargs;
    }
    i += count;
  }
  return true;
}

static bool add_global(ze_module_handle_t m, const char *spec, size_t len) {
  const char *colon = memchr(spec, ':', len);
  if (!colon)
    return false;
  size_t size = strtoul(colon + 1, NULL, 10);
  struct global_var *g = realloc(m->globals, (m->nglobals + 1) * sizeof *g);
  if (!g || !size)
    return g != NULL && (m->globals = g, false);
  m->globals = g;
  g[m->nglobals].name = strndup(spec, (size_t)(colon - spec));
  g[m->nglobals].size = size;
  g[m->nglobals].ptr = calloc(1, size);
  if (!g[m->nglobals].name || !g[m->nglobals].ptr) {
    free(g[m->nglobals].name);
    free(g[m->nglobals].ptr);
    return false;
  }
  m->nglobals++;
  return true;
}

static ze_result_t ZE_APICALL d_ModuleCreate(ze_context_handle_t c,
                                             ze_device_handle_t d,
                                             const ze_module_desc_t *desc,
                                             ze_module_handle_t *out,
                                             ze_module_build_log_handle_t *plog) {
  if (!c || !is_device(d) || !desc || !out || !desc->pInputModule)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const char *flags = desc->pBuildFlags ? desc->pBuildFlags : "";
  const unsigned char *in = desc->pInputModule;
  size_t size = desc->inputSize;
  const char *format = "spirv";
  if (desc->format == ZE_MODULE_FORMAT_NATIVE) {
    format = "native";
    if (size < sizeof native_magic + 20 ||
        memcmp(in, native_magic, sizeof native_magic) != 0) {
      zlog("zeModuleCreate device=D%u format=native size=%zu: not a native "
           "binary of the test double",
           d->id, size);
      return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    in += sizeof native_magic;
    size -= sizeof native_magic;
  }
  struct sb b = {.n = 0};
  sb_add(&b, "zeModuleCreate");
  ze_module_handle_t m = calloc(1, sizeof *m);
  if (!m)
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  m->id = new_id();
  m->device = d;
  sb_add(&b, " module=M%u device=D%u format=%s size=%zu flags=\"%s\"", m->id,
         d->id, format, size, flags);
  const ze_module_constants_t *k = desc->pConstants;
  uint32_t nconst = k ? k->numConstants : 0;
  sb_add(&b, " constants=%u [", (unsigned)nconst);
  for (uint32_t i = 0; i < nconst; ++i) {
    uint64_t v = 0;
    if (k->pConstantValues && k->pConstantValues[i])
      memcpy(&v, k->pConstantValues[i], sizeof v);
    sb_add(&b, "%s%u=0x%" PRIx64, i ? " " : "",
           k->pConstantIds ? (unsigned)k->pConstantIds[i] : 0u, v);
  }
  sb_add(&b, "]");
  uint32_t magic = 0;
  if (size >= 4)
    memcpy(&magic, in, 4);
  const char *error = NULL;
  if (size < 20 || size % 4 || magic != 0x07230203u)
    error = "the input is not little-endian SPIR-V (no 0x07230203 magic)";
  else if (strstr(flags, "-pitrace-fail-build"))
    error = "build failed as asked by -pitrace-fail-build";
  if (!error) {
    m->spirv = malloc(size);
    if (!m->spirv)
      error = "out of host memory";
    else {
      memcpy(m->spirv, in, size);
      m->spirv_size = size;
      uint32_t *words = malloc(size);
      if (!words || (memcpy(words, in, size), !parse_spirv(m, words, size / 4)))
        error = "malformed SPIR-V instruction stream";
      free(words);
    }
  }
  for (const char *f = flags; !error && (f = strstr(f, "-pitrace-global="));) {
    f += strlen("-pitrace-global=");
    size_t len = strcspn(f, " ");
    if (!add_global(m, f, len))
      error = "bad -pitrace-global=NAME:SIZE";
    f += len;
  }
  char text[512];
  if (error) {
    snprintf(text, sizeof text,
             "pitrace Level Zero test double: error: %s (flags '%s')", error,
             flags);
    sb_add(&b, " result=build-failure");
  } else {
    snprintf(text, sizeof text,
             "pitrace Level Zero test double: built module M%u: %u kernel(s) "
             "from %zu bytes of SPIR-V with flags '%s' and %u specialization "
             "constant(s)",
             m->id, (unsigned)m->nkernels, size, flags, (unsigned)nconst);
    sb_add(&b, " kernels=");
    for (uint32_t i = 0; i < m->nkernels; ++i)
      sb_add(&b, "%s%s/%u", i ? "," : "", m->kernels[i].name,
             (unsigned)m->kernels[i].nargs);
  }
  zlog("%s", b.s);
  if (plog)
    *plog = log_new(text);
  if (error) {
    module_free(m);
    return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  }
  *out = m;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_ModuleDestroy(ze_module_handle_t m) {
  if (!m)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  zlog("zeModuleDestroy module=M%u", m->id);
  module_free(m);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_ModuleDynamicLink(
    uint32_t n, ze_module_handle_t *mods, ze_module_build_log_handle_t *plog) {
  if (!n || !mods)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  struct sb b = {.n = 0};
  sb_add(&b, "zeModuleDynamicLink modules=");
  for (uint32_t i = 0; i < n; ++i)
    sb_add(&b, "%sM%u", i ? "," : "", mods[i] ? mods[i]->id : 0u);
  zlog("%s", b.s);
  if (plog) {
    char text[256];
    snprintf(text, sizeof text,
             "pitrace Level Zero test double: linked %u module(s)",
             (unsigned)n);
    *plog = log_new(text);
  }
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_ModuleGetNativeBinary(ze_module_handle_t m,
                                                      size_t *psize,
                                                      uint8_t *dst) {
  if (!m || !psize)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  size_t n = sizeof native_magic + m->spirv_size;
  if (dst) {
    if (*psize < n)
      return ZE_RESULT_ERROR_INVALID_SIZE;
    memcpy(dst, native_magic, sizeof native_magic);
    memcpy(dst + sizeof native_magic, m->spirv, m->spirv_size);
  }
  *psize = n;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_ModuleGetGlobalPointer(ze_module_handle_t m,
                                                       const char *name,
                                                       size_t *psize,
                                                       void **pptr) {
  if (!m || !name)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  for (uint32_t i = 0; i < m->nglobals; ++i)
    if (strcmp(m->globals[i].name, name) == 0) {
      if (psize)
        *psize = m->globals[i].size;
      if (pptr)
        *pptr = m->globals[i].ptr;
      return ZE_RESULT_SUCCESS;
    }
  return ZE_RESULT_ERROR_INVALID_GLOBAL_NAME;
}

static ze_result_t ZE_APICALL d_ModuleGetKernelNames(ze_module_handle_t m,
                                                     uint32_t *pCount,
                                                     const char **names) {
  if (!m || !pCount)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  for (uint32_t i = 0; names && i < *pCount && i < m->nkernels; ++i)
    names[i] = m->kernels[i].name;
  if (*pCount == 0 || !names || *pCount > m->nkernels)
    *pCount = m->nkernels;
  return ZE_RESULT_SUCCESS;
}

/* The double has no functions with addresses: kernels have none either. */
static ze_result_t ZE_APICALL d_ModuleGetFunctionPointer(ze_module_handle_t m,
                                                         const char *name,
                                                         void **pf) {
  if (!m || !name || !pf)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return ZE_RESULT_ERROR_INVALID_FUNCTION_NAME;
}

static ze_result_t ZE_APICALL d_ModuleBuildLogDestroy(
    ze_module_build_log_handle_t b) {
  if (!b)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  free(b->text);
  free(b);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_ModuleBuildLogGetString(
    ze_module_build_log_handle_t b, size_t *psize, char *log) {
  if (!b || !psize)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  size_t n = strlen(b->text) + 1;
  if (log) {
    if (*psize < n)
      return ZE_RESULT_ERROR_INVALID_SIZE;
    memcpy(log, b->text, n);
    zlog("zeModuleBuildLogGetString log=B%u size=%zu", b->id, n);
  }
  *psize = n;
  return ZE_RESULT_SUCCESS;
}

/* ---- Kernels ----------------------------------------------------------------------- */

static ze_result_t ZE_APICALL d_KernelCreate(ze_module_handle_t m,
                                             const ze_kernel_desc_t *desc,
                                             ze_kernel_handle_t *out) {
  if (!m || !desc || !desc->pKernelName || !out)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  const struct kernel_info *info = NULL;
  for (uint32_t i = 0; i < m->nkernels && !info; ++i)
    if (strcmp(m->kernels[i].name, desc->pKernelName) == 0)
      info = &m->kernels[i];
  if (!info)
    return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
  ze_kernel_handle_t k = calloc(1, sizeof *k);
  struct arg *args = calloc(info->nargs ? info->nargs : 1, sizeof *args);
  if (!k || !args) {
    free(k);
    free(args);
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  k->id = new_id();
  k->module = m;
  k->info = info;
  k->args = args;
  k->group[0] = k->group[1] = k->group[2] = 1;
  pthread_mutex_init(&k->lock, NULL);
  *out = k;
  zlog("zeKernelCreate kernel=K%u module=M%u name=%s args=%u", k->id, m->id,
       info->name, (unsigned)info->nargs);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_KernelDestroy(ze_kernel_handle_t k) {
  if (!k)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  pthread_mutex_destroy(&k->lock);
  free(k->args);
  free(k);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_KernelSetGroupSize(ze_kernel_handle_t k,
                                                   uint32_t x, uint32_t y,
                                                   uint32_t z) {
  if (!k)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!x || !y || !z || x > 256 || y > 256 || z > 64 ||
      (uint64_t)x * y * z > 256)
    return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
  pthread_mutex_lock(&k->lock);
  k->group[0] = x;
  k->group[1] = y;
  k->group[2] = z;
  pthread_mutex_unlock(&k->lock);
  return ZE_RESULT_SUCCESS;
}

/* The largest divisor of `global` no larger than `limit`. */
static uint32_t divisor(uint32_t global, uint32_t limit) {
  for (uint32_t d = limit < global ? limit : global; d > 1; --d)
    if (global % d == 0)
      return d;
  return 1;
}

/* Suggests the largest divisors within 32 x 4 x 2. */
static ze_result_t ZE_APICALL d_KernelSuggestGroupSize(
    ze_kernel_handle_t k, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t *x,
    uint32_t *y, uint32_t *z) {
  if (!k || !x || !y || !z)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!gx || !gy || !gz)
    return ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION;
  *x = divisor(gx, 32);
  *y = divisor(gy, 4);
  *z = divisor(gz, 2);
  zlog("zeKernelSuggestGroupSize kernel=K%u global=%u,%u,%u suggested=%u,%u,%u",
       k->id, (unsigned)gx, (unsigned)gy, (unsigned)gz, (unsigned)*x,
       (unsigned)*y, (unsigned)*z);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_KernelSuggestMaxCooperativeGroupCount(
    ze_kernel_handle_t k, uint32_t *count) {
  if (!k || !count)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  pthread_mutex_lock(&k->lock);
  uint32_t per_group = k->group[0] * k->group[1] * k->group[2];
  pthread_mutex_unlock(&k->lock);
  *count = (64u * 256u) / per_group; /* 64 EUs' worth of work-items */
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_KernelSetArgumentValue(ze_kernel_handle_t k,
                                                       uint32_t index,
                                                       size_t size,
                                                       const void *value) {
  if (!k)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (index >= k->info->nargs)
    return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
  if (size == 0 || (value && size > MAX_ARG))
    return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
  pthread_mutex_lock(&k->lock);
  struct arg *a = &k->args[index];
  a->set = true;
  a->local = value == NULL;
  a->size = size;
  if (value)
    memcpy(a->bytes, value, size);
  pthread_mutex_unlock(&k->lock);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_KernelSetIndirectAccess(
    ze_kernel_handle_t k, ze_kernel_indirect_access_flags_t f) {
  if (!k)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  zlog("zeKernelSetIndirectAccess kernel=K%u flags=0x%x", k->id, (unsigned)f);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_KernelSetCacheConfig(ze_kernel_handle_t k,
                                                     ze_cache_config_flags_t f) {
  if (!k)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  zlog("zeKernelSetCacheConfig kernel=K%u flags=0x%x", k->id, (unsigned)f);
  return ZE_RESULT_SUCCESS;
}

/* Copies the (empty) attributes into the caller's buffer, as Intel's
 * driver does. */
static ze_result_t ZE_APICALL d_KernelGetSourceAttributes(ze_kernel_handle_t k,
                                                          uint32_t *psize,
                                                          char **pstring) {
  if (!k || !psize)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  static const char attrs[] = "";
  if (pstring && *pstring && *psize >= sizeof attrs)
    memcpy(*pstring, attrs, sizeof attrs);
  *psize = sizeof attrs;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_KernelGetProperties(ze_kernel_handle_t k,
                                                    ze_kernel_properties_t *p) {
  if (!k || !p)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->numKernelArgs = k->info->nargs;
  p->requiredGroupSizeX = p->requiredGroupSizeY = p->requiredGroupSizeZ = 0;
  p->requiredNumSubGroups = 0;
  p->requiredSubgroupSize = 0;
  p->maxSubgroupSize = 32;
  p->maxNumSubgroups = 32;
  p->localMemSize = 0;
  p->privateMemSize = 0;
  p->spillMemSize = 0;
  memset(&p->uuid, 0, sizeof p->uuid);
  for (ze_base_properties_t *n = p->pNext; n; n = n->pNext)
    if (n->stype == ZE_STRUCTURE_TYPE_KERNEL_PREFERRED_GROUP_SIZE_PROPERTIES)
      ((ze_kernel_preferred_group_size_properties_t *)n)->preferredMultiple =
          16;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_KernelGetName(ze_kernel_handle_t k,
                                              size_t *psize, char *name) {
  if (!k || !psize)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  size_t n = strlen(k->info->name) + 1;
  if (name) {
    if (*psize < n)
      return ZE_RESULT_ERROR_INVALID_SIZE;
    memcpy(name, k->info->name, n);
  }
  *psize = n;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_KernelSetGlobalOffsetExp(ze_kernel_handle_t k,
                                                         uint32_t x, uint32_t y,
                                                         uint32_t z) {
  if (!k)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  pthread_mutex_lock(&k->lock);
  k->offset[0] = x;
  k->offset[1] = y;
  k->offset[2] = z;
  pthread_mutex_unlock(&k->lock);
  return ZE_RESULT_SUCCESS;
}

/* ---- Images, samplers --------------------------------------------------------------- */

static size_t layout_size(ze_image_format_layout_t l) {
  switch (l) {
  case ZE_IMAGE_FORMAT_LAYOUT_8:
    return 1;
  case ZE_IMAGE_FORMAT_LAYOUT_16:
  case ZE_IMAGE_FORMAT_LAYOUT_8_8:
    return 2;
  case ZE_IMAGE_FORMAT_LAYOUT_32:
  case ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8:
  case ZE_IMAGE_FORMAT_LAYOUT_16_16:
    return 4;
  case ZE_IMAGE_FORMAT_LAYOUT_16_16_16_16:
  case ZE_IMAGE_FORMAT_LAYOUT_32_32:
    return 8;
  case ZE_IMAGE_FORMAT_LAYOUT_32_32_32_32:
    return 16;
  default:
    return 0;
  }
}

static ze_result_t ZE_APICALL d_ImageCreate(ze_context_handle_t c,
                                            ze_device_handle_t d,
                                            const ze_image_desc_t *desc,
                                            ze_image_handle_t *out) {
  if (!c || !is_device(d) || !desc || !out)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  size_t elem = layout_size(desc->format.layout);
  if (!elem)
    return ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT;
  size_t w = (size_t)desc->width, h = desc->height ? desc->height : 1;
  size_t depth = desc->depth ? desc->depth : 1;
  if (desc->type == ZE_IMAGE_TYPE_1DARRAY) {
    h = desc->arraylevels;
    depth = 1;
  } else if (desc->type == ZE_IMAGE_TYPE_2DARRAY) {
    depth = desc->arraylevels;
  } else if (desc->type != ZE_IMAGE_TYPE_3D) {
    depth = 1;
  }
  if (desc->type == ZE_IMAGE_TYPE_1D)
    h = 1;
  if (!w || !h || !depth)
    return ZE_RESULT_ERROR_INVALID_SIZE;
  ze_image_handle_t i = calloc(1, sizeof *i);
  unsigned char *data = calloc(w * h * depth, elem);
  if (!i || !data) {
    free(i);
    free(data);
    return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  i->id = new_id();
  i->desc = *desc;
  i->elem = elem;
  i->width = w;
  i->height = h;
  i->depth = depth;
  i->data = data;
  *out = i;
  zlog("zeImageCreate image=I%u type=%u size=%zux%zux%zu element=%zu", i->id,
       (unsigned)desc->type, w, h, depth, elem);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_ImageDestroy(ze_image_handle_t i) {
  if (!i)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  free(i->data);
  free(i);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_SamplerCreate(ze_context_handle_t c,
                                              ze_device_handle_t d,
                                              const ze_sampler_desc_t *desc,
                                              ze_sampler_handle_t *out) {
  if (!c || !is_device(d) || !desc || !out)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  ze_sampler_handle_t s = calloc(1, sizeof *s);
  if (!s)
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  s->id = new_id();
  *out = s;
  zlog("zeSamplerCreate sampler=S%u address=%u filter=%u normalized=%u",
       s->id, (unsigned)desc->addressMode, (unsigned)desc->filterMode,
       (unsigned)desc->isNormalized);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_SamplerDestroy(ze_sampler_handle_t s) {
  if (!s)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  free(s);
  return ZE_RESULT_SUCCESS;
}

/* ---- Command lists ------------------------------------------------------------------ */

static ze_result_t list_create(ze_context_handle_t c, ze_device_handle_t d,
                               bool immediate, ze_command_list_handle_t *out) {
  if (!c || !is_device(d) || !out)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  ze_command_list_handle_t l = calloc(1, sizeof *l);
  if (!l)
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  l->id = new_id();
  l->immediate = immediate;
  pthread_mutex_init(&l->lock, NULL);
  *out = l;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_CommandListCreate(
    ze_context_handle_t c, ze_device_handle_t d,
    const ze_command_list_desc_t *desc, ze_command_list_handle_t *out) {
  if (!desc || desc->commandQueueGroupOrdinal > 1)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  ze_result_t r = list_create(c, d, false, out);
  if (r == ZE_RESULT_SUCCESS)
    zlog("zeCommandListCreate list=L%u device=D%u ordinal=%u", (*out)->id,
         d->id, (unsigned)desc->commandQueueGroupOrdinal);
  return r;
}

static ze_result_t ZE_APICALL d_CommandListCreateImmediate(
    ze_context_handle_t c, ze_device_handle_t d,
    const ze_command_queue_desc_t *desc, ze_command_list_handle_t *out) {
  if (!desc || desc->ordinal > 1)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  ze_result_t r = list_create(c, d, true, out);
  if (r == ZE_RESULT_SUCCESS)
    zlog("zeCommandListCreateImmediate list=L%u device=D%u ordinal=%u "
         "index=%u mode=%u",
         (*out)->id, d->id, (unsigned)desc->ordinal, (unsigned)desc->index,
         (unsigned)desc->mode);
  return r;
}

static void cmd_free(struct cmd *c) {
  free(c->wait);
  free(c->text);
}

static ze_result_t ZE_APICALL d_CommandListReset(ze_command_list_handle_t l) {
  if (!l)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  pthread_mutex_lock(&l->lock);
  for (size_t i = 0; i < l->n; ++i)
    cmd_free(&l->cmds[i]);
  l->n = 0;
  l->closed = false;
  pthread_mutex_unlock(&l->lock);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_CommandListDestroy(ze_command_list_handle_t l) {
  if (!l)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  d_CommandListReset(l);
  pthread_mutex_destroy(&l->lock);
  free(l->cmds);
  free(l);
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_CommandListClose(ze_command_list_handle_t l) {
  if (!l)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  pthread_mutex_lock(&l->lock);
  l->closed = true;
  pthread_mutex_unlock(&l->lock);
  return ZE_RESULT_SUCCESS;
}

/* The events of a command, for the log. */
static void sb_events(struct sb *b, const struct cmd *c) {
  sb_add(b, " wait=[");
  for (uint32_t i = 0; i < c->nwait; ++i)
    sb_add(b, "%sE%u", i ? "," : "", c->wait[i] ? c->wait[i]->id : 0u);
  sb_add(b, "] signal=");
  if (c->signal)
    sb_add(b, "E%u", c->signal->id);
  else
    sb_add(b, "none");
}

static void region_copy(unsigned char *dst, const ze_copy_region_t *dr,
                        size_t dp, size_t ds, const unsigned char *src,
                        const ze_copy_region_t *sr, size_t sp, size_t ss) {
  for (uint32_t z = 0; z < dr->depth; ++z)
    for (uint32_t y = 0; y < dr->height; ++y)
      memmove(dst + dr->originX + (dr->originY + y) * dp +
                  (dr->originZ + z) * ds,
              src + sr->originX + (sr->originY + y) * sp +
                  (sr->originZ + z) * ss,
              dr->width);
}

/* Image <-> linear memory with pitches (0: packed). */
static void image_xfer(ze_image_handle_t img, const ze_image_region_t *r,
                       unsigned char *mem, size_t row, size_t slice,
                       bool to_mem) {
  row = row ? row : r->width * img->elem;
  slice = slice ? slice : row * r->height;
  for (uint32_t z = 0; z < r->depth; ++z)
    for (uint32_t y = 0; y < r->height; ++y) {
      unsigned char *i =
          img->data + (((r->originZ + z) * img->height + r->originY + y) *
                           img->width +
                       r->originX) *
                          img->elem;
      unsigned char *m = mem + z * slice + y * row;
      if (to_mem)
        memcpy(m, i, r->width * img->elem);
      else
        memcpy(i, m, r->width * img->elem);
    }
}

/* Runs one command on the host and logs it. */
static void cmd_run(ze_command_list_handle_t l, struct cmd *c) {
  for (uint32_t i = 0; i < c->nwait; ++i)
    if (c->wait[i])
      event_wait(c->wait[i], UINT64_MAX, "command list");
  uint64_t start = now_ticks();
  struct sb b = {.n = 0};
  sb_add(&b, "exec list=L%u ", l->id);
  switch (c->kind) {
  case CMD_COPY:
    memmove(c->dst, c->src, c->size);
    sb_add(&b, "copy dst=%p src=%p size=%zu", c->dst, c->src, c->size);
    break;
  case CMD_FILL:
    for (size_t off = 0; off < c->size; off += c->pattern_size)
      memcpy((char *)c->dst + off, c->pattern, c->pattern_size);
    sb_add(&b, "fill ptr=%p size=%zu pattern=", c->dst, c->size);
    sb_hex(&b, c->pattern, c->pattern_size);
    break;
  case CMD_REGION:
    region_copy(c->dst, &c->dregion, c->dpitch, c->dslice, c->src,
                &c->sregion, c->spitch, c->sslice);
    sb_add(&b,
           "copy_region dst=%p origin=%u,%u,%u pitch=%u,%u src=%p "
           "origin=%u,%u,%u pitch=%u,%u region=%u,%u,%u",
           c->dst, (unsigned)c->dregion.originX, (unsigned)c->dregion.originY,
           (unsigned)c->dregion.originZ, (unsigned)c->dpitch,
           (unsigned)c->dslice, c->src, (unsigned)c->sregion.originX,
           (unsigned)c->sregion.originY, (unsigned)c->sregion.originZ,
           (unsigned)c->spitch, (unsigned)c->sslice,
           (unsigned)c->dregion.width, (unsigned)c->dregion.height,
           (unsigned)c->dregion.depth);
    break;
  case CMD_LAUNCH:
    sb_add(&b, "%s", c->text);
    break;
  case CMD_BARRIER:
    sb_add(&b, "barrier");
    break;
  case CMD_SIGNAL:
    sb_add(&b, "signal");
    break;
  case CMD_WAIT:
    sb_add(&b, "wait_on_events");
    break;
  case CMD_PREFETCH:
    sb_add(&b, "prefetch ptr=%p size=%zu", c->dst, c->size);
    break;
  case CMD_ADVISE:
    sb_add(&b, "mem_advise ptr=%p size=%zu advice=%zu", c->dst, c->size,
           c->pattern_size);
    break;
  case CMD_IMAGE_FROM:
    image_xfer(c->image, &c->iregion, c->dst, c->spitch, c->sslice, false);
    sb_add(&b, "image_from_memory image=I%u region=%u,%u,%u+%ux%ux%u",
           c->image->id, (unsigned)c->iregion.originX,
           (unsigned)c->iregion.originY, (unsigned)c->iregion.originZ,
           (unsigned)c->iregion.width, (unsigned)c->iregion.height,
           (unsigned)c->iregion.depth);
    break;
  case CMD_IMAGE_TO:
    image_xfer(c->image, &c->iregion, c->dst, c->spitch, c->sslice, true);
    sb_add(&b, "image_to_memory image=I%u region=%u,%u,%u+%ux%ux%u",
           c->image->id, (unsigned)c->iregion.originX,
           (unsigned)c->iregion.originY, (unsigned)c->iregion.originZ,
           (unsigned)c->iregion.width, (unsigned)c->iregion.height,
           (unsigned)c->iregion.depth);
    break;
  case CMD_IMAGE_COPY: {
    size_t n = (size_t)c->isregion.width * c->isregion.height *
               c->isregion.depth * c->src_image->elem;
    unsigned char *tmp = malloc(n ? n : 1);
    if (tmp) {
      image_xfer(c->src_image, &c->isregion, tmp, 0, 0, true);
      image_xfer(c->image, &c->iregion, tmp, 0, 0, false);
      free(tmp);
    }
    sb_add(&b, "image_copy dst=I%u src=I%u", c->image->id, c->src_image->id);
    break;
  }
  }
  sb_events(&b, c);
  zlog("%s", b.s);
  if (c->signal) {
    c->signal->start = start;
    c->signal->end = now_ticks();
    atomic_store(&c->signal->signaled, 1);
  }
}

/* Appends a command: immediate lists run it now, others keep it. */
static ze_result_t append(ze_command_list_handle_t l, struct cmd *c,
                          ze_event_handle_t signal, uint32_t nwait,
                          ze_event_handle_t *wait) {
  if (!l) {
    free(c->text);
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  if (nwait && !wait) {
    free(c->text);
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  c->signal = signal;
  c->nwait = nwait;
  c->wait = nwait ? calloc(nwait, sizeof *c->wait) : NULL;
  if (nwait && !c->wait) {
    free(c->text);
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  if (nwait)
    memcpy(c->wait, wait, nwait * sizeof *wait);
  if (signal)
    atomic_store(&signal->signaled, 0);
  if (l->immediate) {
    cmd_run(l, c);
    cmd_free(c);
    return ZE_RESULT_SUCCESS;
  }
  pthread_mutex_lock(&l->lock);
  ze_result_t r = ZE_RESULT_SUCCESS;
  if (l->closed) {
    r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
  } else if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 8;
    struct cmd *n = realloc(l->cmds, cap * sizeof *n);
    if (!n)
      r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    else {
      l->cmds = n;
      l->cap = cap;
    }
  }
  if (r == ZE_RESULT_SUCCESS)
    l->cmds[l->n++] = *c;
  else
    cmd_free(c);
  pthread_mutex_unlock(&l->lock);
  return r;
}

static ze_result_t ZE_APICALL d_CommandQueueExecuteCommandLists(
    ze_command_queue_handle_t q, uint32_t n, ze_command_list_handle_t *lists,
    ze_fence_handle_t fence) {
  if (!q || !n || !lists)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (fence)
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; /* the double has no fences */
  struct sb b = {.n = 0};
  sb_add(&b, "zeCommandQueueExecuteCommandLists queue=Q%u lists=", q->id);
  for (uint32_t i = 0; i < n; ++i) {
    if (!lists[i] || lists[i]->immediate || !lists[i]->closed)
      return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    sb_add(&b, "%sL%u", i ? "," : "", lists[i]->id);
  }
  zlog("%s", b.s);
  for (uint32_t i = 0; i < n; ++i) {
    pthread_mutex_lock(&lists[i]->lock);
    for (size_t k = 0; k < lists[i]->n; ++k)
      cmd_run(lists[i], &lists[i]->cmds[k]);
    pthread_mutex_unlock(&lists[i]->lock);
  }
  return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL d_AppendBarrier(ze_command_list_handle_t l,
                                              ze_event_handle_t signal,
                                              uint32_t nwait,
                                              ze_event_handle_t *wait) {
  struct cmd c = {.kind = CMD_BARRIER};
  return append(l, &c, signal, nwait, wait);
}

static ze_result_t ZE_APICALL d_AppendSignalEvent(ze_command_list_handle_t l,
                                                  ze_event_handle_t e) {
  if (!e)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  struct cmd c = {.kind = CMD_SIGNAL};
  return append(l, &c, e, 0, NULL);
}

static ze_result_t ZE_APICALL d_AppendWaitOnEvents(ze_command_list_handle_t l,
                                                   uint32_t n,
                                                   ze_event_handle_t *e) {
  struct cmd c = {.kind = CMD_WAIT};
  return append(l, &c, NULL, n, e);
}

static ze_result_t ZE_APICALL d_AppendMemoryCopy(
    ze_command_list_handle_t l, void *dst, const void *src, size_t size,
    ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *wait) {
  if (!dst || !src)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  struct cmd c = {.kind = CMD_COPY, .dst = dst, .src = src, .size = size};
  return append(l, &c, signal, nwait, wait);
}

static ze_result_t ZE_APICALL d_AppendMemoryFill(
    ze_command_list_handle_t l, void *ptr, const void *pattern,
    size_t pattern_size, size_t size, ze_event_handle_t signal, uint32_t nwait,
    ze_event_handle_t *wait) {
  if (!ptr || !pattern)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!pattern_size || pattern_size > MAX_FILL ||
      (pattern_size & (pattern_size - 1)) || size % pattern_size)
    return ZE_RESULT_ERROR_INVALID_SIZE;
  struct cmd c = {.kind = CMD_FILL, .dst = ptr, .size = size,
                  .pattern_size = pattern_size};
  memcpy(c.pattern, pattern, pattern_size);
  return append(l, &c, signal, nwait, wait);
}

static ze_result_t ZE_APICALL d_AppendMemoryCopyRegion(
    ze_command_list_handle_t l, void *dst, const ze_copy_region_t *dr,
    uint32_t dpitch, uint32_t dslice, const void *src,
    const ze_copy_region_t *sr, uint32_t spitch, uint32_t sslice,
    ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *wait) {
  if (!dst || !src || !dr || !sr)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (dr->width != sr->width || dr->height != sr->height ||
      dr->depth != sr->depth)
    return ZE_RESULT_ERROR_INVALID_SIZE;
  struct cmd c = {.kind = CMD_REGION, .dst = dst, .src = src,
                  .dregion = *dr, .sregion = *sr, .dpitch = dpitch,
                  .dslice = dslice, .spitch = spitch, .sslice = sslice};
  return append(l, &c, signal, nwait, wait);
}

static ze_result_t ZE_APICALL d_AppendMemoryPrefetch(ze_command_list_handle_t l,
                                                     const void *ptr,
                                                     size_t size) {
  if (!ptr)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  struct cmd c = {.kind = CMD_PREFETCH, .dst = (void *)ptr, .size = size};
  return append(l, &c, NULL, 0, NULL);
}

static ze_result_t ZE_APICALL d_AppendMemAdvise(ze_command_list_handle_t l,
                                                ze_device_handle_t d,
                                                const void *ptr, size_t size,
                                                ze_memory_advice_t advice) {
  if (!ptr || !is_device(d))
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  struct cmd c = {.kind = CMD_ADVISE, .dst = (void *)ptr, .size = size,
                  .pattern_size = (size_t)advice};
  return append(l, &c, NULL, 0, NULL);
}

static ze_result_t image_check(ze_image_handle_t i, const ze_image_region_t *r) {
  if (!i)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!r || (size_t)r->originX + r->width > i->width ||
      (size_t)r->originY + r->height > i->height ||
      (size_t)r->originZ + r->depth > i->depth)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t image_mem(ze_command_list_handle_t l, enum cmd_kind kind,
                             ze_image_handle_t img, void *mem,
                             const ze_image_region_t *r, uint32_t row,
                             uint32_t slice, ze_event_handle_t signal,
                             uint32_t nwait, ze_event_handle_t *wait) {
  ze_result_t res = image_check(img, r);
  if (res != ZE_RESULT_SUCCESS)
    return res;
  if (!mem)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  struct cmd c = {.kind = kind, .image = img, .dst = mem, .iregion = *r,
                  .spitch = row, .sslice = slice};
  return append(l, &c, signal, nwait, wait);
}

static ze_result_t ZE_APICALL d_AppendImageCopyFromMemory(
    ze_command_list_handle_t l, ze_image_handle_t img, const void *src,
    const ze_image_region_t *r, ze_event_handle_t signal, uint32_t nwait,
    ze_event_handle_t *wait) {
  ze_image_region_t all = {0, 0, 0, img ? (uint32_t)img->width : 0,
                           img ? (uint32_t)img->height : 0,
                           img ? (uint32_t)img->depth : 0};
  return image_mem(l, CMD_IMAGE_FROM, img, (void *)src, r ? r : &all, 0, 0,
                   signal, nwait, wait);
}

static ze_result_t ZE_APICALL d_AppendImageCopyToMemory(
    ze_command_list_handle_t l, void *dst, ze_image_handle_t img,
    const ze_image_region_t *r, ze_event_handle_t signal, uint32_t nwait,
    ze_event_handle_t *wait) {
  ze_image_region_t all = {0, 0, 0, img ? (uint32_t)img->width : 0,
                           img ? (uint32_t)img->height : 0,
                           img ? (uint32_t)img->depth : 0};
  return image_mem(l, CMD_IMAGE_TO, img, dst, r ? r : &all, 0, 0, signal,
                   nwait, wait);
}

static ze_result_t ZE_APICALL d_AppendImageCopyFromMemoryExt(
    ze_command_list_handle_t l, ze_image_handle_t img, const void *src,
    const ze_image_region_t *r, uint32_t row, uint32_t slice,
    ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *wait) {
  return image_mem(l, CMD_IMAGE_FROM, img, (void *)src, r, row, slice, signal,
                   nwait, wait);
}

static ze_result_t ZE_APICALL d_AppendImageCopyToMemoryExt(
    ze_command_list_handle_t l, void *dst, ze_image_handle_t img,
    const ze_image_region_t *r, uint32_t row, uint32_t slice,
    ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *wait) {
  return image_mem(l, CMD_IMAGE_TO, img, dst, r, row, slice, signal, nwait,
                   wait);
}

static ze_result_t ZE_APICALL d_AppendImageCopyRegion(
    ze_command_list_handle_t l, ze_image_handle_t dst, ze_image_handle_t src,
    const ze_image_region_t *dr, const ze_image_region_t *sr,
    ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *wait) {
  ze_result_t res = image_check(dst, dr);
  if (res == ZE_RESULT_SUCCESS)
    res = image_check(src, sr);
  if (res != ZE_RESULT_SUCCESS)
    return res;
  if (dst->elem != src->elem || dr->width != sr->width ||
      dr->height != sr->height || dr->depth != sr->depth)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  struct cmd c = {.kind = CMD_IMAGE_COPY, .image = dst, .src_image = src,
                  .iregion = *dr, .isregion = *sr};
  return append(l, &c, signal, nwait, wait);
}

/* A launch is logged with the kernel's state at append (as Level Zero
 * captures it), and never executed. */
static ze_result_t launch(ze_command_list_handle_t l, ze_kernel_handle_t k,
                          const ze_group_count_t *count, bool cooperative,
                          ze_event_handle_t signal, uint32_t nwait,
                          ze_event_handle_t *wait) {
  if (!k || !count)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!count->groupCountX || !count->groupCountY || !count->groupCountZ)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  struct sb b = {.n = 0};
  pthread_mutex_lock(&k->lock);
  sb_add(&b,
         "%s kernel=%s kernel_id=K%u groups=%u,%u,%u group_size=%u,%u,%u "
         "offset=%u,%u,%u args=[",
         cooperative ? "launch_cooperative" : "launch", k->info->name, k->id,
         (unsigned)count->groupCountX, (unsigned)count->groupCountY,
         (unsigned)count->groupCountZ, (unsigned)k->group[0],
         (unsigned)k->group[1], (unsigned)k->group[2], (unsigned)k->offset[0],
         (unsigned)k->offset[1], (unsigned)k->offset[2]);
  bool complete = true;
  for (uint32_t i = 0; i < k->info->nargs; ++i) {
    const struct arg *a = &k->args[i];
    sb_add(&b, "%s%u=", i ? "," : "", (unsigned)i);
    if (!a->set) {
      sb_add(&b, "unset");
      complete = false;
    } else if (a->local) {
      sb_add(&b, "local:%zu", a->size);
    } else {
      sb_hex(&b, a->bytes, a->size);
    }
  }
  sb_add(&b, "]");
  pthread_mutex_unlock(&k->lock);
  if (!complete) {
    zlog("zeCommandListAppendLaunchKernel: kernel %s has unset arguments: %s",
         k->info->name, b.s);
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  struct cmd c = {.kind = CMD_LAUNCH, .text = strdup(b.s)};
  if (!c.text)
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  return append(l, &c, signal, nwait, wait);
}

static ze_result_t ZE_APICALL d_AppendLaunchKernel(
    ze_command_list_handle_t l, ze_kernel_handle_t k,
    const ze_group_count_t *count, ze_event_handle_t signal, uint32_t nwait,
    ze_event_handle_t *wait) {
  return launch(l, k, count, false, signal, nwait, wait);
}

static ze_result_t ZE_APICALL d_AppendLaunchCooperativeKernel(
    ze_command_list_handle_t l, ze_kernel_handle_t k,
    const ze_group_count_t *count, ze_event_handle_t signal, uint32_t nwait,
    ze_event_handle_t *wait) {
  return launch(l, k, count, true, signal, nwait, wait);
}

/* ---- DDI tables ---------------------------------------------------------------------
 * The loader asks every driver for every table; a table the double leaves
 * empty holds NULL entries, which pitrace's plugin never calls. */

static ze_result_t version_ok(ze_api_version_t v) {
  return ZE_MAJOR_VERSION(v) == ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT)
             ? ZE_RESULT_SUCCESS
             : ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
}

#define GETTER(name, type, fill)                                               \
  EXPORT ze_result_t ZE_APICALL name(ze_api_version_t version, type *t) {      \
    if (!t)                                                                    \
      return ZE_RESULT_ERROR_INVALID_NULL_POINTER;                             \
    if (version_ok(version) != ZE_RESULT_SUCCESS)                              \
      return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;                              \
    memset(t, 0, sizeof *t);                                                   \
    fill;                                                                      \
    return ZE_RESULT_SUCCESS;                                                  \
  }

GETTER(zeGetGlobalProcAddrTable, ze_global_dditable_t, t->pfnInit = d_Init)
GETTER(zeGetDriverProcAddrTable, ze_driver_dditable_t, {
  t->pfnGet = d_DriverGet;
  t->pfnGetApiVersion = d_DriverGetApiVersion;
  t->pfnGetProperties = d_DriverGetProperties;
  t->pfnGetExtensionProperties = d_DriverGetExtensionProperties;
  t->pfnGetExtensionFunctionAddress = d_DriverGetExtensionFunctionAddress;
})
GETTER(zeGetDeviceProcAddrTable, ze_device_dditable_t, {
  t->pfnGet = d_DeviceGet;
  t->pfnGetSubDevices = d_DeviceGetSubDevices;
  t->pfnGetProperties = d_DeviceGetProperties;
  t->pfnGetComputeProperties = d_DeviceGetComputeProperties;
  t->pfnGetModuleProperties = d_DeviceGetModuleProperties;
  t->pfnGetCommandQueueGroupProperties = d_DeviceGetCommandQueueGroupProperties;
  t->pfnGetMemoryProperties = d_DeviceGetMemoryProperties;
  t->pfnGetMemoryAccessProperties = d_DeviceGetMemoryAccessProperties;
  t->pfnGetCacheProperties = d_DeviceGetCacheProperties;
  t->pfnGetImageProperties = d_DeviceGetImageProperties;
  t->pfnGetP2PProperties = d_DeviceGetP2PProperties;
  t->pfnCanAccessPeer = d_DeviceCanAccessPeer;
  t->pfnGetStatus = d_DeviceGetStatus;
  t->pfnGetGlobalTimestamps = d_DeviceGetGlobalTimestamps;
  t->pfnPciGetPropertiesExt = d_DevicePciGetPropertiesExt;
})
GETTER(zeGetContextProcAddrTable, ze_context_dditable_t, {
  t->pfnCreate = d_ContextCreate;
  t->pfnCreateEx = d_ContextCreateEx;
  t->pfnDestroy = d_ContextDestroy;
})
GETTER(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t, {
  t->pfnCreate = d_CommandQueueCreate;
  t->pfnDestroy = d_CommandQueueDestroy;
  t->pfnExecuteCommandLists = d_CommandQueueExecuteCommandLists;
  t->pfnSynchronize = d_CommandQueueSynchronize;
})
GETTER(zeGetCommandListProcAddrTable, ze_command_list_dditable_t, {
  t->pfnCreate = d_CommandListCreate;
  t->pfnCreateImmediate = d_CommandListCreateImmediate;
  t->pfnDestroy = d_CommandListDestroy;
  t->pfnClose = d_CommandListClose;
  t->pfnReset = d_CommandListReset;
  t->pfnAppendBarrier = d_AppendBarrier;
  t->pfnAppendMemoryCopy = d_AppendMemoryCopy;
  t->pfnAppendMemoryFill = d_AppendMemoryFill;
  t->pfnAppendMemoryCopyRegion = d_AppendMemoryCopyRegion;
  t->pfnAppendImageCopyRegion = d_AppendImageCopyRegion;
  t->pfnAppendImageCopyToMemory = d_AppendImageCopyToMemory;
  t->pfnAppendImageCopyFromMemory = d_AppendImageCopyFromMemory;
  t->pfnAppendMemoryPrefetch = d_AppendMemoryPrefetch;
  t->pfnAppendMemAdvise = d_AppendMemAdvise;
  t->pfnAppendSignalEvent = d_AppendSignalEvent;
  t->pfnAppendWaitOnEvents = d_AppendWaitOnEvents;
  t->pfnAppendLaunchKernel = d_AppendLaunchKernel;
  t->pfnAppendLaunchCooperativeKernel = d_AppendLaunchCooperativeKernel;
  t->pfnAppendImageCopyToMemoryExt = d_AppendImageCopyToMemoryExt;
  t->pfnAppendImageCopyFromMemoryExt = d_AppendImageCopyFromMemoryExt;
})
GETTER(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t, {
  t->pfnCreate = d_EventPoolCreate;
  t->pfnDestroy = d_EventPoolDestroy;
})
GETTER(zeGetEventProcAddrTable, ze_event_dditable_t, {
  t->pfnCreate = d_EventCreate;
  t->pfnDestroy = d_EventDestroy;
  t->pfnHostSignal = d_EventHostSignal;
  t->pfnHostSynchronize = d_EventHostSynchronize;
  t->pfnQueryStatus = d_EventQueryStatus;
  t->pfnHostReset = d_EventHostReset;
  t->pfnQueryKernelTimestamp = d_EventQueryKernelTimestamp;
})
GETTER(zeGetModuleProcAddrTable, ze_module_dditable_t, {
  t->pfnCreate = d_ModuleCreate;
  t->pfnDestroy = d_ModuleDestroy;
  t->pfnDynamicLink = d_ModuleDynamicLink;
  t->pfnGetNativeBinary = d_ModuleGetNativeBinary;
  t->pfnGetGlobalPointer = d_ModuleGetGlobalPointer;
  t->pfnGetKernelNames = d_ModuleGetKernelNames;
  t->pfnGetFunctionPointer = d_ModuleGetFunctionPointer;
})
GETTER(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t, {
  t->pfnDestroy = d_ModuleBuildLogDestroy;
  t->pfnGetString = d_ModuleBuildLogGetString;
})
GETTER(zeGetKernelProcAddrTable, ze_kernel_dditable_t, {
  t->pfnCreate = d_KernelCreate;
  t->pfnDestroy = d_KernelDestroy;
  t->pfnSetCacheConfig = d_KernelSetCacheConfig;
  t->pfnSetGroupSize = d_KernelSetGroupSize;
  t->pfnSuggestGroupSize = d_KernelSuggestGroupSize;
  t->pfnSuggestMaxCooperativeGroupCount = d_KernelSuggestMaxCooperativeGroupCount;
  t->pfnSetArgumentValue = d_KernelSetArgumentValue;
  t->pfnSetIndirectAccess = d_KernelSetIndirectAccess;
  t->pfnGetSourceAttributes = d_KernelGetSourceAttributes;
  t->pfnGetProperties = d_KernelGetProperties;
  t->pfnGetName = d_KernelGetName;
})
GETTER(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t,
       t->pfnSetGlobalOffsetExp = d_KernelSetGlobalOffsetExp)
GETTER(zeGetMemProcAddrTable, ze_mem_dditable_t, {
  t->pfnAllocShared = d_MemAllocShared;
  t->pfnAllocDevice = d_MemAllocDevice;
  t->pfnAllocHost = d_MemAllocHost;
  t->pfnFree = d_MemFree;
  t->pfnGetAllocProperties = d_MemGetAllocProperties;
  t->pfnGetAddressRange = d_MemGetAddressRange;
})
GETTER(zeGetImageProcAddrTable, ze_image_dditable_t, {
  t->pfnCreate = d_ImageCreate;
  t->pfnDestroy = d_ImageDestroy;
})
GETTER(zeGetSamplerProcAddrTable, ze_sampler_dditable_t, {
  t->pfnCreate = d_SamplerCreate;
  t->pfnDestroy = d_SamplerDestroy;
})

/* Tables the double leaves empty: the loader requires the getters. */
#define EMPTY(name, type) GETTER(name, type, (void)0)
EMPTY(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)
EMPTY(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)
EMPTY(zeGetFenceProcAddrTable, ze_fence_dditable_t)
EMPTY(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t)
EMPTY(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
EMPTY(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)
EMPTY(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)
EMPTY(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)
EMPTY(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
EMPTY(zetGetContextProcAddrTable, zet_context_dditable_t)
EMPTY(zetGetDebugProcAddrTable, zet_debug_dditable_t)
EMPTY(zetGetDeviceProcAddrTable, zet_device_dditable_t)
EMPTY(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
EMPTY(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)
EMPTY(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
EMPTY(zetGetMetricProcAddrTable, zet_metric_dditable_t)
EMPTY(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
EMPTY(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
EMPTY(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
EMPTY(zetGetModuleProcAddrTable, zet_module_dditable_t)
EMPTY(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)
EMPTY(zesGetDeviceProcAddrTable, zes_device_dditable_t)
EMPTY(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
EMPTY(zesGetDriverProcAddrTable, zes_driver_dditable_t)
EMPTY(zesGetEngineProcAddrTable, zes_engine_dditable_t)
EMPTY(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
EMPTY(zesGetFanProcAddrTable, zes_fan_dditable_t)
EMPTY(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
EMPTY(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
EMPTY(zesGetLedProcAddrTable, zes_led_dditable_t)
EMPTY(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
EMPTY(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
EMPTY(zesGetPowerProcAddrTable, zes_power_dditable_t)
EMPTY(zesGetPsuProcAddrTable, zes_psu_dditable_t)
EMPTY(zesGetRasProcAddrTable, zes_ras_dditable_t)
EMPTY(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
EMPTY(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
EMPTY(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
