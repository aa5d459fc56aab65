/*
 * driver.c: the CUDA driver as the plugin sees it: the table of its entry
 * points (drv) and their versioned symbols, opening libcuda.so.1 and looking
 * them up (piPluginInit), cuInit and the device list (the first
 * piPlatformsGet), and small helpers over it (the current context, device
 * attributes, a device's description, its primary context).
 */
#include "cu_internal.h"
struct driver drv;

/* ---- Driver set-up ---------------------------------------------------------
 * piPluginInit opens the driver; the first piPlatformsGet runs cuInit and
 * lists the devices. Both happen once, under init_lock, until piTearDown. */

pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
void *driver;             /* dlopen handle of libcuda.so.1 */
bool driver_initialized;  /* cuInit ran (and made the_platform) */
char driver_problem[768]; /* why there is no platform, if none */
struct _pi_platform *the_platform;

static const char DRIVER_LIB[] = "libcuda.so.1";

/* Opens the driver and resolves its entry points; with init_lock held. */
void load_driver(void) {
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
  snprintf(plat->version, sizeof plat->version, "CUDA %d.%d", version / 1000,
           version % 1000 / 10);
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
pi_platform get_platform(void) {
  pthread_mutex_lock(&init_lock);
  if (!driver_initialized)
    init_platform();
  pi_platform p = the_platform;
  pthread_mutex_unlock(&init_lock);
  return p;
}

/* ---- Small helpers --------------------------------------------------------
 */

uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

char *dup_str(const char *s) {
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
bool driver_gone(void) {
  CUcontext cur = NULL;
  return drv.cuCtxGetCurrent(&cur) == CUDA_ERROR_DEINITIALIZED;
}

/* Makes `c` the calling thread's current CUDA context. */
pi_result use_context(const char *fn, CUcontext c) {
  CUcontext cur = NULL;
  TRY(CUF(fn, cuCtxGetCurrent, &cur));
  if (cur != c)
    TRY(CUF(fn, cuCtxSetCurrent, c));
  return PI_SUCCESS;
}

pi_result device_attr(const char *fn, pi_device d, CUdevice_attribute a,
                      int *v) {
  *v = 0;
  return CUF(fn, cuDeviceGetAttribute, v, a, d->cu);
}

/* "device 0 'NVIDIA H100 80GB HBM3'", for messages. */
const char *describe(pi_device d, char *buf, size_t n) {
  snprintf(buf, n, "CUDA device %d '%s'", (int)d->cu, d->name);
  return buf;
}

/* Retains the device's primary context for the plugin's own use (timers,
 * peer access) until piTearDown. */
pi_result device_primary(const char *fn, pi_device d, CUcontext *c) {
  pi_result r = PI_SUCCESS;
  pthread_mutex_lock(&d->lock);
  if (!d->primary)
    r = CUF(fn, cuDevicePrimaryCtxRetain, &d->primary, d->cu);
  *c = d->primary;
  pthread_mutex_unlock(&d->lock);
  return r;
}
