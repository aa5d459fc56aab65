/*
 * check_cuda_driver.c: cuda_driver.h against the NVIDIA driver itself.
 *
 * check_cuda_decls.c compares cuda_driver.h with a toolkit's cuda.h; this
 * program needs no toolkit, only the driver (libcuda.so.1), and checks what
 * the driver can tell:
 *
 *   - it exports every entry point of CUDRV_FUNCTIONS under the versioned
 *     symbol cuda_driver.h names (the older CUDRV_LEGACY_FUNCTIONS are
 *     listed, not required: a driver may have dropped them);
 *   - cuGetErrorName names each CUresult value of cuda_driver.h as
 *     cuda_driver.h does;
 *   - on each device, the attributes whose values every CUDA architecture
 *     shares have them (so the attribute numbers query what they should).
 *
 * Exit status: 0 when everything matched, 1 when something differs, 77 when
 * there is no driver to ask (the toolkit's stub library is none).
 */
#include "cuda_driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define COUNT(...) +1

static int failures;

static void differs(const char *what) {
  printf("DIFFERS: %s\n", what);
  failures++;
}

int main(void) {
  char line[512];
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("check_cuda_driver: no CUDA driver: %s\n", dlerror());
    return 77;
  }

  /* Entry points. */
  int found = 0, legacy = 0;
  void *p;
#define FIND(name, symbol, params)                                             \
  if ((p = dlsym(lib, #symbol)) != NULL)                                       \
    found++;                                                                   \
  else                                                                         \
    differs("the driver does not export " #symbol " (" #name ")");
  CUDRV_FUNCTIONS(FIND)
#undef FIND
  char absent[256] = "";
#define FIND(name, symbol, params)                                             \
  if (dlsym(lib, #symbol))                                                     \
    legacy++;                                                                  \
  else                                                                         \
    snprintf(absent + strlen(absent), sizeof absent - strlen(absent), " %s",   \
             #symbol);
  CUDRV_LEGACY_FUNCTIONS(FIND)
#undef FIND

  cuInit_fn *init;
  cuDriverGetVersion_fn *get_version;
  cuGetErrorName_fn *error_name;
  cuDeviceGetCount_fn *get_count;
  cuDeviceGet_fn *get_device;
  cuDeviceGetName_fn *get_name;
  cuDeviceGetAttribute_fn *get_attribute;
#define LOOK_UP(var, symbol)                                                   \
  p = dlsym(lib, symbol);                                                      \
  memcpy(&var, &p, sizeof p);                                                  \
  if (!var) {                                                                  \
    printf("check_cuda_driver: the driver has no %s\n", symbol);               \
    return 1;                                                                  \
  }
  LOOK_UP(init, "cuInit")
  LOOK_UP(get_version, "cuDriverGetVersion")
  LOOK_UP(error_name, "cuGetErrorName")
  LOOK_UP(get_count, "cuDeviceGetCount")
  LOOK_UP(get_device, "cuDeviceGet")
  LOOK_UP(get_name, "cuDeviceGetName")
  LOOK_UP(get_attribute, "cuDeviceGetAttribute")
  Dl_info info;
  const char *path =
      dladdr(p, &info) && info.dli_fname ? info.dli_fname : "libcuda.so.1";
  int version = 0;
  get_version(&version);
  printf("check_cuda_driver: %s, CUDA %d.%d\n", path, version / 1000,
         version % 1000 / 10);
  printf("  %d of %d entry points exported, and %d of %d older ones%s%s%s\n",
         found, 0 CUDRV_FUNCTIONS(COUNT), legacy,
         0 CUDRV_LEGACY_FUNCTIONS(COUNT), *absent ? " (absent:" : "", absent,
         *absent ? ")" : "");

  CUresult init_result = init(0);
  if (init_result == CUDA_ERROR_STUB_LIBRARY) {
    printf("check_cuda_driver: %s is the CUDA toolkit's stub library, not a "
           "driver\n",
           path);
    return 77;
  }

  /* Results: the driver's own names. */
  int named = 0;
#define NAME(name, value)                                                      \
  {                                                                            \
    const char *s = NULL;                                                      \
    if (error_name(name, &s) != CUDA_SUCCESS || !s) {                          \
      differs("cuGetErrorName does not know " #name " (" #value ")");          \
    } else if (strcmp(s, #name) != 0) {                                        \
      snprintf(line, sizeof line, "%s is %s to the driver",                    \
               #name " (" #value ")", s);                                      \
      differs(line);                                                           \
    } else {                                                                   \
      named++;                                                                 \
    }                                                                          \
  }
  CUDRV_RESULT_VALUES(NAME)
#undef NAME
  printf("  %d of %d CUresult values named alike by cuGetErrorName\n", named,
         0 CUDRV_RESULT_VALUES(COUNT));

  /* Devices: attributes with the same value on every architecture. */
  int count = 0;
  if (init_result != CUDA_SUCCESS || get_count(&count) != CUDA_SUCCESS)
    count = 0;
  if (init_result != CUDA_SUCCESS)
    printf("  no devices checked: cuInit failed with %d\n", (int)init_result);
  static const struct {
    CUdevice_attribute attr;
    const char *name;
    int min, max;
  } fixed[] = {
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, "WARP_SIZE", 32, 32},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK", 1024,
       1024},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, "MAX_BLOCK_DIM_X", 1024, 1024},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, "MAX_BLOCK_DIM_Y", 1024, 1024},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, "MAX_BLOCK_DIM_Z", 64, 64},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "MAX_GRID_DIM_X", 2147483647,
       2147483647},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, "MAX_GRID_DIM_Y", 65535, 65535},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, "MAX_GRID_DIM_Z", 65535, 65535},
      {CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, "TOTAL_CONSTANT_MEMORY",
       65536, 65536},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR",
       3, 99},
  };
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    char name[256] = "";
    if (get_device(&dev, i) != CUDA_SUCCESS ||
        get_name(name, (int)sizeof name - 1, dev) != CUDA_SUCCESS) {
      snprintf(line, sizeof line, "device %d cannot be described", i);
      differs(line);
      continue;
    }
    int ok = 0, n = (int)(sizeof fixed / sizeof *fixed);
    for (int j = 0; j < n; ++j) {
      int v = -1;
      CUresult r = get_attribute(&v, fixed[j].attr, dev);
      if (r != CUDA_SUCCESS || v < fixed[j].min || v > fixed[j].max) {
        snprintf(line, sizeof line,
                 "device %d: CU_DEVICE_ATTRIBUTE_%s (%d) is %d (result %d), "
                 "not %d..%d",
                 i, fixed[j].name, (int)fixed[j].attr, v, (int)r, fixed[j].min,
                 fixed[j].max);
        differs(line);
      } else {
        ok++;
      }
    }
    printf("  device %d \"%s\": %d of %d fixed attributes as expected\n", i,
           name, ok, n);
  }
  printf("check_cuda_driver: %s\n",
         failures ? "cuda_driver.h DIFFERS from the driver"
                  : "cuda_driver.h matches the driver");
  return failures ? 1 : 0;
}
