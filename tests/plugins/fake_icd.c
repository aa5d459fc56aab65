/*
 * Test doubles of OpenCL libraries, for the OpenCL plugin's own discovery
 * (tests/test_opencl_discovery.c). They stand for what this machine has no
 * real instance of; one source builds each, chosen by FAKE_ICD_KIND:
 *
 *   libfake_frontend_icd.so   a DOUBLE OF PITRACE'S OPENCL FRONT END (still
 *                             being written): an ICD exporting the marker
 *                             pitrace_opencl_frontend. The plugin must skip
 *                             it without calling it: every entry point here
 *                             aborts, saying so.
 *   libfake_sparse_icd.so     a DOUBLE OF AN OLD ICD: one platform with one
 *                             CPU device whose dispatch table fills only the
 *                             platform and device queries; every other entry
 *                             is NULL, as in an implementation older than
 *                             the functions. The plugin must fail those calls
 *                             with a message, never call them.
 *   libfake_loader_client.so  a library that is no ICD but links the ICD
 *                             loader (libOpenCL.so.1), whose
 *                             clGetExtensionFunctionAddress dlsym finds
 *                             through it: the plugin must not take the
 *                             loader's entry points for the library's own.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

#if FAKE_ICD_KIND == 1 /* libfake_frontend_icd.so */

EXPORT const int pitrace_opencl_frontend = 1;

static void called(const char *fn) {
  fprintf(stderr, "libfake_frontend_icd.so: %s was called: the OpenCL plugin "
                  "recursed into pitrace's front end\n",
          fn);
  abort();
}

EXPORT cl_int clIcdGetPlatformIDsKHR(cl_uint n, cl_platform_id *platforms,
                                     cl_uint *count) {
  (void)n;
  (void)platforms;
  (void)count;
  called("clIcdGetPlatformIDsKHR");
  return CL_INVALID_OPERATION;
}

EXPORT void *clGetExtensionFunctionAddress(const char *name) {
  called(name ? name : "clGetExtensionFunctionAddress");
  return NULL;
}

EXPORT void *clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                      const char *name) {
  (void)platform;
  called(name ? name : "clGetExtensionFunctionAddressForPlatform");
  return NULL;
}

#elif FAKE_ICD_KIND == 2 /* libfake_sparse_icd.so */

struct _cl_platform_id {
  const struct _cl_icd_dispatch *dispatch;
};
struct _cl_device_id {
  const struct _cl_icd_dispatch *dispatch;
};

static struct _cl_icd_dispatch table;
static struct _cl_platform_id platform = {&table};
static struct _cl_device_id device = {&table};

static cl_int answer(const void *value, size_t n, size_t size, void *out,
                     size_t *size_ret) {
  if (out && size < n)
    return CL_INVALID_VALUE;
  if (out)
    memcpy(out, value, n);
  if (size_ret)
    *size_ret = n;
  return CL_SUCCESS;
}

static cl_int CL_API_CALL get_platform_info(cl_platform_id p,
                                            cl_platform_info param,
                                            size_t size, void *out,
                                            size_t *size_ret) {
  const char *s = NULL;
  if (p != &platform)
    return CL_INVALID_PLATFORM;
  switch (param) {
  case CL_PLATFORM_NAME:
    s = "pitrace test double: sparse ICD";
    break;
  case CL_PLATFORM_VENDOR:
    s = "pitrace tests";
    break;
  case CL_PLATFORM_VERSION:
    s = "OpenCL 1.2 sparse";
    break;
  case CL_PLATFORM_PROFILE:
    s = "FULL_PROFILE";
    break;
  case CL_PLATFORM_EXTENSIONS:
    s = "cl_khr_icd";
    break;
  case CL_PLATFORM_ICD_SUFFIX_KHR:
    s = "SPARSE";
    break;
  default:
    return CL_INVALID_VALUE;
  }
  return answer(s, strlen(s) + 1, size, out, size_ret);
}

static cl_int CL_API_CALL get_device_ids(cl_platform_id p, cl_device_type type,
                                         cl_uint n, cl_device_id *devices,
                                         cl_uint *count) {
  if (p != &platform)
    return CL_INVALID_PLATFORM;
  if (!(type & (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_DEFAULT)))
    return CL_DEVICE_NOT_FOUND;
  if (devices && n)
    devices[0] = &device;
  if (count)
    *count = 1;
  return CL_SUCCESS;
}

static cl_int CL_API_CALL get_device_info(cl_device_id d, cl_device_info param,
                                          size_t size, void *out,
                                          size_t *size_ret) {
  const char *s = NULL;
  cl_device_type type = CL_DEVICE_TYPE_CPU;
  cl_platform_id plat = &platform;
  cl_bool yes = CL_TRUE;
  if (d != &device)
    return CL_INVALID_DEVICE;
  switch (param) {
  case CL_DEVICE_TYPE:
    return answer(&type, sizeof type, size, out, size_ret);
  case CL_DEVICE_PLATFORM:
    return answer(&plat, sizeof plat, size, out, size_ret);
  case CL_DEVICE_AVAILABLE:
  case CL_DEVICE_COMPILER_AVAILABLE:
    return answer(&yes, sizeof yes, size, out, size_ret);
  case CL_DEVICE_NAME:
    s = "sparse test device";
    break;
  case CL_DEVICE_VENDOR:
    s = "pitrace tests";
    break;
  case CL_DEVICE_VERSION:
    s = "OpenCL 1.2 sparse";
    break;
  case CL_DRIVER_VERSION:
    s = "1.0";
    break;
  case CL_DEVICE_EXTENSIONS:
    s = "";
    break;
  default:
    return CL_INVALID_VALUE;
  }
  return answer(s, strlen(s) + 1, size, out, size_ret);
}

static cl_int CL_API_CALL icd_get_platform_ids(cl_uint n,
                                               cl_platform_id *platforms,
                                               cl_uint *count) {
  table.clGetPlatformInfo = get_platform_info;
  table.clGetDeviceIDs = get_device_ids;
  table.clGetDeviceInfo = get_device_info;
  if (platforms && n)
    platforms[0] = &platform;
  if (count)
    *count = 1;
  return CL_SUCCESS;
}

/* The one export, as an ICD may have: the entry point comes from its
 * clGetExtensionFunctionAddress, as PoCL's does. */
EXPORT void *clGetExtensionFunctionAddress(const char *name) {
  if (name && strcmp(name, "clIcdGetPlatformIDsKHR") == 0)
    return (void *)icd_get_platform_ids;
  return NULL;
}

#else /* libfake_loader_client.so */

/* Something to link against libOpenCL.so.1 for. */
EXPORT cl_uint fake_loader_client_platform_count(void) {
  cl_uint n = 0;
  return clGetPlatformIDs(0, NULL, &n) == CL_SUCCESS ? n : 0;
}

#endif
