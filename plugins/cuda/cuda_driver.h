/*
 * cuda_driver.h: the part of the CUDA driver API that the pitrace CUDA
 * plugin uses, declared here so that the plugin builds without a CUDA
 * toolkit.
 *
 * The plugin links no CUDA library: it opens libcuda.so.1 with dlopen and
 * looks every entry point up with dlsym. All it needs at build time is the
 * driver API's ABI: the types, the values of the enumerations and flags,
 * the layout of the structures it passes, and each function's signature
 * and versioned symbol. Those are stable (NVIDIA versions a symbol, as
 * cuMemAlloc_v2, whenever a signature or meaning changes, and keeps the old
 * one exported), so they are written down here, from the driver API's
 * documentation, the way run-time loaders such as Blender's cuew do.
 *
 * Only what the plugin uses is declared. Everything is written as lists
 * (X-macros), so that one list both declares it and drives
 * check_cuda_decls.c, which compares every entry against a toolkit's cuda.h
 * where one is installed: values, enumeration and structure sizes, member
 * offsets and types, signatures, and which versioned symbol cuda.h maps each
 * API name to. The lists match cuda.h of CUDA 13.0 (CUDRV_CHECKED_VERSION).
 *
 * With CUDRV_LISTS_ONLY defined, only the lists are defined (for the check,
 * which includes cuda.h too).
 */
#ifndef PITRACE_CUDA_DRIVER_H
#define PITRACE_CUDA_DRIVER_H

#include <stddef.h>

/* The CUDA version whose cuda.h the lists were checked against (1000 *
 * major + 10 * minor, as CUDA_VERSION). */
#define CUDRV_CHECKED_VERSION 13000

/* ---- Enumerations -----------------------------------------------------------
 * CUDRV_ENUMS lists E(type, tag, values); each values list is V(name,
 * value). Only the enumerators the plugin uses are listed. */

/* CUresult: what every driver function returns. */
#define CUDRV_RESULT_VALUES(V)                                                 \
  V(CUDA_SUCCESS, 0)                                                           \
  V(CUDA_ERROR_INVALID_VALUE, 1)                                               \
  V(CUDA_ERROR_OUT_OF_MEMORY, 2)                                               \
  V(CUDA_ERROR_NOT_INITIALIZED, 3)                                             \
  V(CUDA_ERROR_DEINITIALIZED, 4)                                               \
  V(CUDA_ERROR_STUB_LIBRARY, 34)                                               \
  V(CUDA_ERROR_DEVICE_UNAVAILABLE, 46)                                         \
  V(CUDA_ERROR_NO_DEVICE, 100)                                                 \
  V(CUDA_ERROR_INVALID_DEVICE, 101)                                            \
  V(CUDA_ERROR_INVALID_IMAGE, 200)                                             \
  V(CUDA_ERROR_INVALID_CONTEXT, 201)                                           \
  V(CUDA_ERROR_ALREADY_MAPPED, 208)                                            \
  V(CUDA_ERROR_NO_BINARY_FOR_GPU, 209)                                         \
  V(CUDA_ERROR_NOT_MAPPED, 211)                                                \
  V(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, 217)                                   \
  V(CUDA_ERROR_INVALID_PTX, 218)                                               \
  V(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 221)                                    \
  V(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222)                                   \
  V(CUDA_ERROR_JIT_COMPILATION_DISABLED, 223)                                  \
  V(CUDA_ERROR_OPERATING_SYSTEM, 304)                                          \
  V(CUDA_ERROR_INVALID_HANDLE, 400)                                            \
  V(CUDA_ERROR_NOT_FOUND, 500)                                                 \
  V(CUDA_ERROR_NOT_READY, 600)                                                 \
  V(CUDA_ERROR_ILLEGAL_ADDRESS, 700)                                           \
  V(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701)                                   \
  V(CUDA_ERROR_LAUNCH_TIMEOUT, 702)                                            \
  V(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, 704)                               \
  V(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, 705)                                   \
  V(CUDA_ERROR_CONTEXT_IS_DESTROYED, 709)                                      \
  V(CUDA_ERROR_ASSERT, 710)                                                    \
  V(CUDA_ERROR_TOO_MANY_PEERS, 711)                                            \
  V(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, 712)                            \
  V(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, 713)                                \
  V(CUDA_ERROR_HARDWARE_STACK_ERROR, 714)                                      \
  V(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715)                                       \
  V(CUDA_ERROR_MISALIGNED_ADDRESS, 716)                                        \
  V(CUDA_ERROR_INVALID_ADDRESS_SPACE, 717)                                     \
  V(CUDA_ERROR_INVALID_PC, 718)                                                \
  V(CUDA_ERROR_LAUNCH_FAILED, 719)                                             \
  V(CUDA_ERROR_NOT_PERMITTED, 800)                                             \
  V(CUDA_ERROR_NOT_SUPPORTED, 801)                                             \
  V(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)                                    \
  V(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804)                            \
  V(CUDA_ERROR_UNKNOWN, 999)

/* cuDeviceGetAttribute's queries. */
#define CUDRV_DEVICE_ATTRIBUTE_VALUES(V)                                       \
  V(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1)                              \
  V(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 2)                                    \
  V(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 3)                                    \
  V(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 4)                                    \
  V(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 5)                                     \
  V(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 6)                                     \
  V(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 7)                                     \
  V(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 9)                              \
  V(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 10)                                         \
  V(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 12)                           \
  V(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 13)                                        \
  V(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, 14)                                 \
  V(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16)                              \
  V(CU_DEVICE_ATTRIBUTE_INTEGRATED, 18)                                        \
  V(CU_DEVICE_ATTRIBUTE_ECC_ENABLED, 32)                                       \
  V(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 36)                                 \
  V(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 37)                           \
  V(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 38)                                     \
  V(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75)                          \
  V(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76)                          \
  V(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 83)                                    \
  V(CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED, 86)                      \
  V(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, 88)                            \
  V(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 89)                         \
  V(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 97)

/* cuDeviceGetP2PAttribute's queries. */
#define CUDRV_P2P_ATTRIBUTE_VALUES(V)                                          \
  V(CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 2)                               \
  V(CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, 3)

/* cuEventCreate's flags. */
#define CUDRV_EVENT_FLAGS_VALUES(V)                                            \
  V(CU_EVENT_DEFAULT, 0x0)                                                     \
  V(CU_EVENT_DISABLE_TIMING, 0x2)

/* cuStreamCreate's flags. */
#define CUDRV_STREAM_FLAGS_VALUES(V) V(CU_STREAM_NON_BLOCKING, 0x1)

/* cuMemAllocManaged's flags. */
#define CUDRV_MEM_ATTACH_FLAGS_VALUES(V) V(CU_MEM_ATTACH_GLOBAL, 0x1)

/* cuFuncGetAttribute's queries and cuFuncSetAttribute's settings. */
#define CUDRV_FUNCTION_ATTRIBUTE_VALUES(V)                                     \
  V(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0)                                \
  V(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 1)                                    \
  V(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, 3)                                     \
  V(CU_FUNC_ATTRIBUTE_NUM_REGS, 4)                                             \
  V(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8)

/* cuFuncSetCacheConfig's preferences. */
#define CUDRV_FUNC_CACHE_VALUES(V)                                             \
  V(CU_FUNC_CACHE_PREFER_NONE, 0x0)                                            \
  V(CU_FUNC_CACHE_PREFER_SHARED, 0x1)                                          \
  V(CU_FUNC_CACHE_PREFER_L1, 0x2)

/* Options of the JIT compiler and linker (cuModuleLoadDataEx, cuLink*). */
#define CUDRV_JIT_OPTION_VALUES(V)                                             \
  V(CU_JIT_MAX_REGISTERS, 0)                                                   \
  V(CU_JIT_INFO_LOG_BUFFER, 3)                                                 \
  V(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, 4)                                      \
  V(CU_JIT_ERROR_LOG_BUFFER, 5)                                                \
  V(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 6)                                     \
  V(CU_JIT_OPTIMIZATION_LEVEL, 7)                                              \
  V(CU_JIT_GENERATE_DEBUG_INFO, 11)                                            \
  V(CU_JIT_LOG_VERBOSE, 12)                                                    \
  V(CU_JIT_GENERATE_LINE_INFO, 13)

/* What cuLinkAddData is given. */
#define CUDRV_JIT_INPUT_TYPE_VALUES(V)                                         \
  V(CU_JIT_INPUT_CUBIN, 0)                                                     \
  V(CU_JIT_INPUT_PTX, 1)                                                       \
  V(CU_JIT_INPUT_FATBINARY, 2)

/* Memory types (CUDA_MEMCPY2D/3D, CU_POINTER_ATTRIBUTE_MEMORY_TYPE). */
#define CUDRV_MEMORYTYPE_VALUES(V)                                             \
  V(CU_MEMORYTYPE_HOST, 0x01)                                                  \
  V(CU_MEMORYTYPE_DEVICE, 0x02)                                                \
  V(CU_MEMORYTYPE_UNIFIED, 0x04)

/* cuMemAdvise's advice. */
#define CUDRV_MEM_ADVISE_VALUES(V)                                             \
  V(CU_MEM_ADVISE_SET_READ_MOSTLY, 1)                                          \
  V(CU_MEM_ADVISE_UNSET_READ_MOSTLY, 2)                                        \
  V(CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 3)                                   \
  V(CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, 4)                                 \
  V(CU_MEM_ADVISE_SET_ACCESSED_BY, 5)                                          \
  V(CU_MEM_ADVISE_UNSET_ACCESSED_BY, 6)

/* Where a CUmemLocation is. */
#define CUDRV_MEM_LOCATION_TYPE_VALUES(V)                                      \
  V(CU_MEM_LOCATION_TYPE_DEVICE, 0x1)                                          \
  V(CU_MEM_LOCATION_TYPE_HOST, 0x2)

/* cuPointerGetAttributes's queries. */
#define CUDRV_POINTER_ATTRIBUTE_VALUES(V)                                      \
  V(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 2)                                       \
  V(CU_POINTER_ATTRIBUTE_IS_MANAGED, 8)                                        \
  V(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, 9)                                    \
  V(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, 11)                                 \
  V(CU_POINTER_ATTRIBUTE_RANGE_SIZE, 12)

#define CUDRV_ENUMS(E)                                                         \
  E(CUresult, cudaError_enum, CUDRV_RESULT_VALUES)                             \
  E(CUdevice_attribute, CUdevice_attribute_enum,                               \
    CUDRV_DEVICE_ATTRIBUTE_VALUES)                                             \
  E(CUdevice_P2PAttribute, CUdevice_P2PAttribute_enum,                         \
    CUDRV_P2P_ATTRIBUTE_VALUES)                                                \
  E(CUevent_flags, CUevent_flags_enum, CUDRV_EVENT_FLAGS_VALUES)               \
  E(CUstream_flags, CUstream_flags_enum, CUDRV_STREAM_FLAGS_VALUES)            \
  E(CUmemAttach_flags, CUmemAttach_flags_enum, CUDRV_MEM_ATTACH_FLAGS_VALUES)  \
  E(CUfunction_attribute, CUfunction_attribute_enum,                           \
    CUDRV_FUNCTION_ATTRIBUTE_VALUES)                                           \
  E(CUfunc_cache, CUfunc_cache_enum, CUDRV_FUNC_CACHE_VALUES)                  \
  E(CUjit_option, CUjit_option_enum, CUDRV_JIT_OPTION_VALUES)                  \
  E(CUjitInputType, CUjitInputType_enum, CUDRV_JIT_INPUT_TYPE_VALUES)          \
  E(CUmemorytype, CUmemorytype_enum, CUDRV_MEMORYTYPE_VALUES)                  \
  E(CUmem_advise, CUmem_advise_enum, CUDRV_MEM_ADVISE_VALUES)                  \
  E(CUmemLocationType, CUmemLocationType_enum,                                 \
    CUDRV_MEM_LOCATION_TYPE_VALUES)                                            \
  E(CUpointer_attribute, CUpointer_attribute_enum,                             \
    CUDRV_POINTER_ATTRIBUTE_VALUES)

/* Constants that cuda.h defines as macros: V(name, value), enumerators
 * here. */
#define CUDRV_CONSTANTS(V)                                                     \
  V(CU_MEMHOSTALLOC_WRITECOMBINED, 0x04)                                       \
  V(CU_MEMHOSTREGISTER_PORTABLE, 0x01)                                         \
  V(CU_MEMHOSTREGISTER_DEVICEMAP, 0x02)                                        \
  V(CU_DEVICE_CPU, -1) /* a CUdevice: the host, for cuMemAdvise (v1) */

/* ---- Types ------------------------------------------------------------------
 * T(name, type). Handles are pointers to structures the driver never shows;
 * a device address is an integer as wide as a host pointer. */

#if defined(_WIN64) || defined(__LP64__)
#define CUDRV_DEVICEPTR_INTEGER unsigned long long
#else
#define CUDRV_DEVICEPTR_INTEGER unsigned int
#endif

#define CUDRV_TYPES(T)                                                         \
  T(CUdevice, int)                                                             \
  T(CUdeviceptr, CUDRV_DEVICEPTR_INTEGER)                                      \
  T(CUcontext, struct CUctx_st *)                                              \
  T(CUmodule, struct CUmod_st *)                                               \
  T(CUfunction, struct CUfunc_st *)                                            \
  T(CUarray, struct CUarray_st *)                                              \
  T(CUevent, struct CUevent_st *)                                              \
  T(CUstream, struct CUstream_st *)                                            \
  T(CUlinkState, struct CUlinkState_st *)

/* ---- Structures -------------------------------------------------------------
 * CUDRV_STRUCTS lists S(type, tag, members); each members list takes
 * (M, A, s) and names each member as M(s, type, name), or A(s, type, name,
 * count) for an array; s is passed through (the check uses it). Every member
 * is listed, in order: these structures go to the driver whole. */

/* A device's UUID (cuDeviceGetUuid). */
#define CUDRV_UUID_MEMBERS(M, A, s) A(s, char, bytes, 16)

/* A location in memory (cuMemAdvise, cuMemPrefetchAsync): a device ordinal,
 * or the host. */
#define CUDRV_MEM_LOCATION_MEMBERS(M, A, s)                                    \
  M(s, CUmemLocationType, type)                                                \
  M(s, int, id)

/* A 2D copy (cuMemcpy2DAsync). */
#define CUDRV_MEMCPY2D_MEMBERS(M, A, s)                                        \
  M(s, size_t, srcXInBytes)                                                    \
  M(s, size_t, srcY)                                                           \
  M(s, CUmemorytype, srcMemoryType)                                            \
  M(s, const void *, srcHost)                                                  \
  M(s, CUdeviceptr, srcDevice)                                                 \
  M(s, CUarray, srcArray)                                                      \
  M(s, size_t, srcPitch)                                                       \
  M(s, size_t, dstXInBytes)                                                    \
  M(s, size_t, dstY)                                                           \
  M(s, CUmemorytype, dstMemoryType)                                            \
  M(s, void *, dstHost)                                                        \
  M(s, CUdeviceptr, dstDevice)                                                 \
  M(s, CUarray, dstArray)                                                      \
  M(s, size_t, dstPitch)                                                       \
  M(s, size_t, WidthInBytes)                                                   \
  M(s, size_t, Height)

/* A 3D copy (cuMemcpy3DAsync); the reserved members must be NULL. */
#define CUDRV_MEMCPY3D_MEMBERS(M, A, s)                                        \
  M(s, size_t, srcXInBytes)                                                    \
  M(s, size_t, srcY)                                                           \
  M(s, size_t, srcZ)                                                           \
  M(s, size_t, srcLOD)                                                         \
  M(s, CUmemorytype, srcMemoryType)                                            \
  M(s, const void *, srcHost)                                                  \
  M(s, CUdeviceptr, srcDevice)                                                 \
  M(s, CUarray, srcArray)                                                      \
  M(s, void *, reserved0)                                                      \
  M(s, size_t, srcPitch)                                                       \
  M(s, size_t, srcHeight)                                                      \
  M(s, size_t, dstXInBytes)                                                    \
  M(s, size_t, dstY)                                                           \
  M(s, size_t, dstZ)                                                           \
  M(s, size_t, dstLOD)                                                         \
  M(s, CUmemorytype, dstMemoryType)                                            \
  M(s, void *, dstHost)                                                        \
  M(s, CUdeviceptr, dstDevice)                                                 \
  M(s, CUarray, dstArray)                                                      \
  M(s, void *, reserved1)                                                      \
  M(s, size_t, dstPitch)                                                       \
  M(s, size_t, dstHeight)                                                      \
  M(s, size_t, WidthInBytes)                                                   \
  M(s, size_t, Height)                                                         \
  M(s, size_t, Depth)

#define CUDRV_STRUCTS(S)                                                       \
  S(CUuuid, CUuuid_st, CUDRV_UUID_MEMBERS)                                     \
  S(CUmemLocation, CUmemLocation_st, CUDRV_MEM_LOCATION_MEMBERS)               \
  S(CUDA_MEMCPY2D, CUDA_MEMCPY2D_st, CUDRV_MEMCPY2D_MEMBERS)                   \
  S(CUDA_MEMCPY3D, CUDA_MEMCPY3D_st, CUDRV_MEMCPY3D_MEMBERS)

/* ---- Functions --------------------------------------------------------------
 * F(name, symbol, (parameters)): every driver function returns CUresult.
 * name is the API name (what cuda.h declares and the documentation uses),
 * symbol the entry point that cuda.h maps it to, which is the one to look
 * up: cuMemAlloc is cuMemAlloc_v2, whose size is a size_t. The default
 * stream is the legacy one (cuda.h without CUDA_API_PER_THREAD_DEFAULT_STREAM,
 * so no _ptsz/_ptds symbols). Each gets a function type name_fn. */
#define CUDRV_FUNCTIONS(F)                                                     \
  F(cuInit, cuInit, (unsigned int Flags))                                      \
  F(cuDriverGetVersion, cuDriverGetVersion, (int *driverVersion))              \
  F(cuGetErrorName, cuGetErrorName, (CUresult error, const char **pStr))       \
  F(cuGetErrorString, cuGetErrorString, (CUresult error, const char **pStr))   \
  F(cuDeviceGet, cuDeviceGet, (CUdevice *device, int ordinal))                 \
  F(cuDeviceGetCount, cuDeviceGetCount, (int *count))                          \
  F(cuDeviceGetName, cuDeviceGetName, (char *name, int len, CUdevice dev))     \
  F(cuDeviceGetAttribute, cuDeviceGetAttribute,                                \
    (int *pi, CUdevice_attribute attrib, CUdevice dev))                        \
  F(cuDeviceTotalMem, cuDeviceTotalMem_v2, (size_t *bytes, CUdevice dev))      \
  F(cuDeviceGetPCIBusId, cuDeviceGetPCIBusId,                                  \
    (char *pciBusId, int len, CUdevice dev))                                   \
  F(cuDeviceGetP2PAttribute, cuDeviceGetP2PAttribute,                          \
    (int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,             \
     CUdevice dstDevice))                                                      \
  F(cuDeviceGetUuid, cuDeviceGetUuid_v2, (CUuuid *uuid, CUdevice dev))         \
  F(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain,                        \
    (CUcontext *pctx, CUdevice dev))                                           \
  F(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, (CUdevice dev))   \
  F(cuCtxGetCurrent, cuCtxGetCurrent, (CUcontext *pctx))                       \
  F(cuCtxSetCurrent, cuCtxSetCurrent, (CUcontext ctx))                         \
  F(cuCtxGetDevice, cuCtxGetDevice, (CUdevice *device))                        \
  F(cuCtxGetStreamPriorityRange, cuCtxGetStreamPriorityRange,                  \
    (int *leastPriority, int *greatestPriority))                               \
  F(cuCtxEnablePeerAccess, cuCtxEnablePeerAccess,                              \
    (CUcontext peerContext, unsigned int Flags))                               \
  F(cuCtxDisablePeerAccess, cuCtxDisablePeerAccess, (CUcontext peerContext))   \
  F(cuCtxDestroy, cuCtxDestroy_v2, (CUcontext ctx))                            \
  F(cuStreamCreate, cuStreamCreate,                                            \
    (CUstream *phStream, unsigned int Flags))                                  \
  F(cuStreamCreateWithPriority, cuStreamCreateWithPriority,                    \
    (CUstream *phStream, unsigned int flags, int priority))                    \
  F(cuStreamDestroy, cuStreamDestroy_v2, (CUstream hStream))                   \
  F(cuStreamSynchronize, cuStreamSynchronize, (CUstream hStream))              \
  F(cuStreamQuery, cuStreamQuery, (CUstream hStream))                          \
  F(cuStreamWaitEvent, cuStreamWaitEvent,                                      \
    (CUstream hStream, CUevent hEvent, unsigned int Flags))                    \
  F(cuEventCreate, cuEventCreate, (CUevent *phEvent, unsigned int Flags))      \
  F(cuEventDestroy, cuEventDestroy_v2, (CUevent hEvent))                       \
  F(cuEventRecord, cuEventRecord, (CUevent hEvent, CUstream hStream))          \
  F(cuEventQuery, cuEventQuery, (CUevent hEvent))                              \
  F(cuEventSynchronize, cuEventSynchronize, (CUevent hEvent))                  \
  F(cuEventElapsedTime, cuEventElapsedTime_v2,                                 \
    (float *pMilliseconds, CUevent hStart, CUevent hEnd))                      \
  F(cuMemAlloc, cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize))           \
  F(cuMemFree, cuMemFree_v2, (CUdeviceptr dptr))                               \
  F(cuMemAllocHost, cuMemAllocHost_v2, (void **pp, size_t bytesize))           \
  F(cuMemHostAlloc, cuMemHostAlloc,                                            \
    (void **pp, size_t bytesize, unsigned int Flags))                          \
  F(cuMemFreeHost, cuMemFreeHost, (void *p))                                   \
  F(cuMemAllocManaged, cuMemAllocManaged,                                      \
    (CUdeviceptr *dptr, size_t bytesize, unsigned int flags))                  \
  F(cuMemHostRegister, cuMemHostRegister_v2,                                   \
    (void *p, size_t bytesize, unsigned int Flags))                            \
  F(cuMemHostUnregister, cuMemHostUnregister, (void *p))                       \
  F(cuMemHostGetDevicePointer, cuMemHostGetDevicePointer_v2,                   \
    (CUdeviceptr *pdptr, void *p, unsigned int Flags))                         \
  F(cuMemGetInfo, cuMemGetInfo_v2, (size_t *free, size_t *total))              \
  F(cuMemGetAddressRange, cuMemGetAddressRange_v2,                             \
    (CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr))                     \
  F(cuPointerGetAttributes, cuPointerGetAttributes,                            \
    (unsigned int numAttributes, CUpointer_attribute *attributes,              \
     void **data, CUdeviceptr ptr))                                            \
  F(cuMemAdvise, cuMemAdvise_v2,                                               \
    (CUdeviceptr devPtr, size_t count, CUmem_advise advice,                    \
     CUmemLocation location))                                                  \
  F(cuMemPrefetchAsync, cuMemPrefetchAsync_v2,                                 \
    (CUdeviceptr devPtr, size_t count, CUmemLocation location,                 \
     unsigned int flags, CUstream hStream))                                    \
  F(cuMemcpyAsync, cuMemcpyAsync,                                              \
    (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream))    \
  F(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2,                                   \
    (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,             \
     CUstream hStream))                                                        \
  F(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2,                                   \
    (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,                   \
     CUstream hStream))                                                        \
  F(cuMemcpyHtoD, cuMemcpyHtoD_v2,                                             \
    (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount))            \
  F(cuMemcpy2DAsync, cuMemcpy2DAsync_v2,                                       \
    (const CUDA_MEMCPY2D *pCopy, CUstream hStream))                            \
  F(cuMemcpy3DAsync, cuMemcpy3DAsync_v2,                                       \
    (const CUDA_MEMCPY3D *pCopy, CUstream hStream))                            \
  F(cuMemsetD8Async, cuMemsetD8Async,                                          \
    (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream))     \
  F(cuMemsetD16Async, cuMemsetD16Async,                                        \
    (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream))    \
  F(cuMemsetD32Async, cuMemsetD32Async,                                        \
    (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream))      \
  F(cuMemsetD2D8Async, cuMemsetD2D8Async,                                      \
    (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,   \
     size_t Height, CUstream hStream))                                         \
  F(cuMemsetD2D16Async, cuMemsetD2D16Async,                                    \
    (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,  \
     size_t Height, CUstream hStream))                                         \
  F(cuMemsetD2D32Async, cuMemsetD2D32Async,                                    \
    (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,    \
     size_t Height, CUstream hStream))                                         \
  F(cuModuleLoadData, cuModuleLoadData, (CUmodule *module, const void *image)) \
  F(cuModuleLoadDataEx, cuModuleLoadDataEx,                                    \
    (CUmodule *module, const void *image, unsigned int numOptions,             \
     CUjit_option *options, void **optionValues))                              \
  F(cuModuleUnload, cuModuleUnload, (CUmodule hmod))                           \
  F(cuModuleGetFunction, cuModuleGetFunction,                                  \
    (CUfunction *hfunc, CUmodule hmod, const char *name))                      \
  F(cuModuleGetGlobal, cuModuleGetGlobal_v2,                                   \
    (CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name))       \
  F(cuModuleGetFunctionCount, cuModuleGetFunctionCount,                        \
    (unsigned int *count, CUmodule mod))                                       \
  F(cuModuleEnumerateFunctions, cuModuleEnumerateFunctions,                    \
    (CUfunction *functions, unsigned int numFunctions, CUmodule mod))          \
  F(cuLinkCreate, cuLinkCreate_v2,                                             \
    (unsigned int numOptions, CUjit_option *options, void **optionValues,      \
     CUlinkState *stateOut))                                                   \
  F(cuLinkAddData, cuLinkAddData_v2,                                           \
    (CUlinkState state, CUjitInputType type, void *data, size_t size,          \
     const char *name, unsigned int numOptions, CUjit_option *options,         \
     void **optionValues))                                                     \
  F(cuLinkComplete, cuLinkComplete,                                            \
    (CUlinkState state, void **cubinOut, size_t *sizeOut))                     \
  F(cuLinkDestroy, cuLinkDestroy, (CUlinkState state))                         \
  F(cuFuncGetAttribute, cuFuncGetAttribute,                                    \
    (int *pi, CUfunction_attribute attrib, CUfunction hfunc))                  \
  F(cuFuncSetAttribute, cuFuncSetAttribute,                                    \
    (CUfunction hfunc, CUfunction_attribute attrib, int value))                \
  F(cuFuncSetCacheConfig, cuFuncSetCacheConfig,                                \
    (CUfunction hfunc, CUfunc_cache config))                                   \
  F(cuFuncGetParamInfo, cuFuncGetParamInfo,                                    \
    (CUfunction func, size_t paramIndex, size_t *paramOffset,                  \
     size_t *paramSize))                                                       \
  F(cuFuncGetName, cuFuncGetName, (const char **name, CUfunction hfunc))       \
  F(cuLaunchKernel, cuLaunchKernel,                                            \
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY,               \
     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,    \
     unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,    \
     void **kernelParams, void **extra))                                       \
  F(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel,                      \
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY,               \
     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,    \
     unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,    \
     void **kernelParams))                                                     \
  F(cuOccupancyMaxActiveBlocksPerMultiprocessor,                               \
    cuOccupancyMaxActiveBlocksPerMultiprocessor,                               \
    (int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize))

/* Older entry points, for drivers that lack the newer ones: F(name, symbol,
 * (parameters)), name being this header's name for the older version.
 * cuda.h (of CUDA 13) declares these only for the driver's own build
 * (__CUDA_API_VERSION_INTERNAL), under the unversioned name. */
#define CUDRV_LEGACY_FUNCTIONS(F)                                              \
  F(cuDeviceGetUuid_v1, cuDeviceGetUuid, (CUuuid *uuid, CUdevice dev))         \
  F(cuEventElapsedTime_v1, cuEventElapsedTime,                                 \
    (float *pMilliseconds, CUevent hStart, CUevent hEnd))                      \
  F(cuMemAdvise_v1, cuMemAdvise,                                               \
    (CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device))  \
  F(cuMemPrefetchAsync_v1, cuMemPrefetchAsync,                                 \
    (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream))

/* ---- The declarations ------------------------------------------------------
 */
#ifndef CUDRV_LISTS_ONLY

#define CUDRV_TYPEDEF_(name, type) typedef type name;
CUDRV_TYPES(CUDRV_TYPEDEF_)

#define CUDRV_ENUMERATOR_(name, value) name = value,
#define CUDRV_ENUM_(type, tag, values)                                         \
  typedef enum tag { values(CUDRV_ENUMERATOR_) } type;
CUDRV_ENUMS(CUDRV_ENUM_)
enum { CUDRV_CONSTANTS(CUDRV_ENUMERATOR_) };

#define CUDRV_MEMBER_(s, type, name) type name;
#define CUDRV_ARRAY_MEMBER_(s, type, name, count) type name[count];
#define CUDRV_STRUCT_(type, tag, members)                                      \
  typedef struct tag {                                                         \
    members(CUDRV_MEMBER_, CUDRV_ARRAY_MEMBER_, )                              \
  } type;
CUDRV_STRUCTS(CUDRV_STRUCT_)

#define CUDRV_FUNCTION_TYPE_(name, symbol, params)                             \
  typedef CUresult name##_fn params;
CUDRV_FUNCTIONS(CUDRV_FUNCTION_TYPE_)
CUDRV_LEGACY_FUNCTIONS(CUDRV_FUNCTION_TYPE_)

#undef CUDRV_TYPEDEF_
#undef CUDRV_ENUMERATOR_
#undef CUDRV_ENUM_
#undef CUDRV_MEMBER_
#undef CUDRV_ARRAY_MEMBER_
#undef CUDRV_STRUCT_
#undef CUDRV_FUNCTION_TYPE_

#endif /* CUDRV_LISTS_ONLY */
#endif /* PITRACE_CUDA_DRIVER_H */
