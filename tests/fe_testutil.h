/*
 * fe_testutil.h: what the OpenCL front end's suites (test_fe_*.c) share:
 * libpitrace_opencl.so loaded the way the ICD loader loads it (dlopen, then
 * clIcdGetPlatformIDsKHR through the exported clGetExtensionFunctionAddress)
 * and every call made through the objects' dispatch table, as the loader
 * makes it. The library's path comes from the compile definition
 * PITRACE_FE_LIB; the devices from OCL_ICD_VENDORS (PoCL or rusticl) as the
 * test registration sets it.
 */
#ifndef PITRACE_FE_TESTUTIL_H
#define PITRACE_FE_TESTUTIL_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>

/* The front end: its library, the dispatch table every object shares, and
 * its first platform and that platform's first device. */
static void *fe_lib;
static const struct _cl_icd_dispatch *D;
static cl_platform_id fe_plat;
static cl_device_id fe_dev;

/* An extension function of the front end by name, or NULL. */
static inline void *fe_ext(const char *name)
{
  void *(*gea)(const char *) =
      fe_lib ? (void *(*)(const char *))dlsym(fe_lib, "clGetExtensionFunctionAddress") : NULL;
  return gea ? gea(name) : NULL;
}

/* Loads the front end and finds its first platform and device; false (with
 * nothing set) when the library or a device is missing. */
static inline bool fe_load(void)
{
  if (D)
    return true;
  fe_lib = dlopen(PITRACE_FE_LIB, RTLD_NOW | RTLD_LOCAL);
  if (!fe_lib)
    return false;
  cl_int(CL_API_CALL * get)(cl_uint, cl_platform_id *, cl_uint *) =
      (cl_int(CL_API_CALL *)(cl_uint, cl_platform_id *, cl_uint *))fe_ext(
          "clIcdGetPlatformIDsKHR");
  cl_uint n = 0;
  if (!get || get(1, &fe_plat, &n) != CL_SUCCESS || n == 0)
    return false;
  D = *(struct _cl_icd_dispatch *const *)fe_plat;
  if (D->clGetDeviceIDs(fe_plat, CL_DEVICE_TYPE_ALL, 1, &fe_dev, NULL) != CL_SUCCESS) {
    D = NULL;
    return false;
  }
  return true;
}

/* Every suite's .init: the front end loaded, with a device. */
static inline void fe_setup(void)
{
  cr_assert(fe_load(), "the front end loads and has a device (%s)", PITRACE_FE_LIB);
}

/* A context on the device; asserts success. */
static inline cl_context fe_context(void)
{
  cl_int err = -1;
  cl_context ctx = D->clCreateContext(NULL, 1, &fe_dev, NULL, NULL, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateContext: %d", err);
  return ctx;
}

#endif /* PITRACE_FE_TESTUTIL_H */
