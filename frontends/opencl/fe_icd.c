/*
 * fe_icd.c: how the ICD loader reaches the OpenCL front end.
 *
 * libpitrace_opencl.so is an OpenCL ICD (cl_khr_icd): the loader
 * (ocl-icd's or Khronos' libOpenCL.so.1) finds it through an .icd file,
 * asks clIcdGetPlatformIDsKHR for its platforms, and from then on calls
 * through the dispatch table every object starts with. The library exports
 * only the three ICD entry points and `pitrace_opencl_frontend`, the marker
 * by which pitrace's OpenCL plugin recognises (and skips) the front end when
 * it loads the real implementations, so the front end never sees itself.
 */
#include <string.h>

#include "fe.h"

#define FE_EXPORT __attribute__((visibility("default")))

/* The marker the OpenCL plugin looks for (plugins/opencl). */
FE_EXPORT const int pitrace_opencl_frontend = 1;

const struct _cl_icd_dispatch fe_dispatch = {
#define FE_ENTRY(name) .name = fe_##name,
    FE_CORE_FUNCTIONS(FE_ENTRY)
#undef FE_ENTRY
};

cl_int CL_API_CALL fe_clIcdGetPlatformIDsKHR(cl_uint num_entries,
                                             cl_platform_id *platforms,
                                             cl_uint *num_platforms)
{
  if ((num_entries == 0 && platforms) || (!platforms && !num_platforms))
    return CL_INVALID_VALUE;
  fe_platforms_init();
  if (num_platforms)
    *num_platforms = fe_nplatforms;
  for (cl_uint i = 0; platforms && i < num_entries && i < fe_nplatforms; i++)
    platforms[i] = fe_platforms[i];
  /* cl_khr_icd: with no platform the loader skips this ICD. */
  return fe_nplatforms ? CL_SUCCESS : CL_PLATFORM_NOT_FOUND_KHR;
}

cl_int CL_API_CALL fe_clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms,
                                       cl_uint *num_platforms)
{
  cl_int err = fe_clIcdGetPlatformIDsKHR(num_entries, platforms, num_platforms);
  return err == CL_PLATFORM_NOT_FOUND_KHR ? CL_SUCCESS : err;
}

static const struct {
  const char *name;
  void *fn;
} ext_functions[] = {
#define FE_EXT(name) {#name, (void *)fe_##name},
    FE_EXT_FUNCTIONS(FE_EXT)
#undef FE_EXT
};

void *CL_API_CALL fe_clGetExtensionFunctionAddress(const char *name)
{
  if (!name)
    return NULL;
  for (size_t i = 0; i < sizeof ext_functions / sizeof *ext_functions; i++)
    if (strcmp(ext_functions[i].name, name) == 0)
      return ext_functions[i].fn;
  return NULL;
}

void *CL_API_CALL fe_clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                              const char *name)
{
  if (!FE_IS(platform, FE_PLATFORM))
    return NULL;
  return fe_clGetExtensionFunctionAddress(name);
}

/* The core functions by name, for loaders only (see below). */
static const struct {
  const char *name;
  void *fn;
} core_functions[] = {
#define FE_CORE(name) {#name, (void *)fe_##name},
    FE_CORE_FUNCTIONS(FE_CORE)
#undef FE_CORE
};

/* The exported ICD entry points: the loader looks these up with dlsym. */
FE_EXPORT cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num_entries,
                                                    cl_platform_id *platforms,
                                                    cl_uint *num_platforms)
{
  return fe_clIcdGetPlatformIDsKHR(num_entries, platforms, num_platforms);
}

/* What the loader asks before it has a platform's dispatch table: ocl-icd
 * looks up clGetPlatformInfo this way (to read the ICD suffix), so the
 * exported lookup also knows the core functions. Applications reach the
 * dispatch table's fe_clGetExtensionFunctionAddress, which offers only
 * extension functions, as the specification asks. */
FE_EXPORT void *CL_API_CALL clGetExtensionFunctionAddress(const char *name)
{
  void *fn = fe_clGetExtensionFunctionAddress(name);
  for (size_t i = 0; !fn && name && i < sizeof core_functions / sizeof *core_functions; i++)
    if (strcmp(core_functions[i].name, name) == 0)
      fn = core_functions[i].fn;
  return fn;
}

FE_EXPORT void *CL_API_CALL clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                                     const char *name)
{
  return fe_clGetExtensionFunctionAddressForPlatform(platform, name);
}
