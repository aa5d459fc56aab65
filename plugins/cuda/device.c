/*
 * device.c: the PI device functions of the CUDA plugin: piDevicesGet,
 * piDeviceGetInfo (from device attributes), partitioning (none), reference
 * counts, piextDeviceSelectBinary (PTX, cubin or fatbin for nvptx64),
 * global variable pointers, native handles and the device and host
 * timers.
 */
#include "cu_internal.h"

/* ---- Devices --------------------------------------------------------------
 */

pi_result cu_piDevicesGet(pi_platform platform,
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

pi_bitfield atomic_orders(pi_device d) {
  pi_bitfield r = PI_MEMORY_ORDER_RELAXED;
  if (d->cc_major >= 7) /* acquire/release semantics came with Volta */
    r |= PI_MEMORY_ORDER_ACQUIRE | PI_MEMORY_ORDER_RELEASE |
         PI_MEMORY_ORDER_ACQ_REL | PI_MEMORY_ORDER_SEQ_CST;
  return r;
}

pi_bitfield atomic_scopes(pi_device d) {
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

pi_result backend_device_info(pi_device device, const struct info_out *o) {
  pi_device d = device;
  int v = 0, v2 = 0, v3 = 0;
  char buf[128];
#define ATTR(a, var) TRY(device_attr(o->fn, d, CU_DEVICE_ATTRIBUTE_##a, &(var)))
  switch (o->query) {
  case PI_DEVICE_INFO_TYPE:
    return put_u64(o, PI_DEVICE_TYPE_GPU);
  case PI_DEVICE_INFO_VENDOR_ID:
    return put_u32(o, 0x10de); /* NVIDIA's PCI vendor id */
  case PI_DEVICE_INFO_MAX_COMPUTE_UNITS:
    ATTR(MULTIPROCESSOR_COUNT, v);
    return put_u32(o, (uint32_t)v);
  case PI_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS:
    return put_u32(o, 3);
  case PI_DEVICE_INFO_MAX_WORK_ITEM_SIZES: {
    ATTR(MAX_BLOCK_DIM_X, v);
    ATTR(MAX_BLOCK_DIM_Y, v2);
    ATTR(MAX_BLOCK_DIM_Z, v3);
    size_t sizes[3] = {(size_t)v, (size_t)v2, (size_t)v3};
    return put_info(o, sizes, sizeof sizes);
  }
  case PI_DEVICE_INFO_MAX_WORK_GROUP_SIZE:
    ATTR(MAX_THREADS_PER_BLOCK, v);
    return put_size(o, (size_t)v);
  case PI_DEVICE_INFO_SINGLE_FP_CONFIG:
    return put_u64(o, PI_FP_DENORM | PI_FP_INF_NAN | PI_FP_ROUND_TO_NEAREST |
                           PI_FP_ROUND_TO_ZERO | PI_FP_ROUND_TO_INF |
                           PI_FP_FMA | PI_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT);
  case PI_DEVICE_INFO_DOUBLE_FP_CONFIG:
    return put_u64(o, PI_FP_DENORM | PI_FP_INF_NAN | PI_FP_ROUND_TO_NEAREST |
                           PI_FP_ROUND_TO_ZERO | PI_FP_ROUND_TO_INF |
                           PI_FP_FMA);
  case PI_DEVICE_INFO_HALF_FP_CONFIG: /* half arithmetic: sm_53 and later */
    return put_u64(o, d->cc_major * 10 + d->cc_minor >= 53
                           ? PI_FP_DENORM | PI_FP_INF_NAN |
                                 PI_FP_ROUND_TO_NEAREST | PI_FP_ROUND_TO_ZERO |
                                 PI_FP_ROUND_TO_INF | PI_FP_FMA
                           : 0);
  case PI_DEVICE_INFO_QUEUE_PROPERTIES:
  case PI_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES:
    return put_queue_support(o);
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
    return put_u32(o, 1); /* scalar per thread: SIMT */
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_HALF:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF:
    return put_u32(o, d->cc_major * 10 + d->cc_minor >= 53 ? 2 : 0);
  case PI_DEVICE_INFO_MAX_CLOCK_FREQUENCY:
    ATTR(CLOCK_RATE, v); /* kHz */
    return put_u32(o, (uint32_t)(v / 1000));
  case PI_DEVICE_INFO_ADDRESS_BITS:
    return put_u32(o, 64);
  case PI_DEVICE_INFO_MAX_MEM_ALLOC_SIZE:
  case PI_DEVICE_INFO_GLOBAL_MEM_SIZE: {
    size_t total = 0;
    TRY(CUF(o->fn, cuDeviceTotalMem, &total, d->cu));
    return put_u64(o, total);
  }
  case PI_DEVICE_INFO_IMAGE_SUPPORT:
  case PI_DEVICE_INFO_IMAGE_SRGB:
    return put_bool(o, 0); /* IMAGES_UNSUPPORTED */
  case PI_DEVICE_INFO_MAX_READ_IMAGE_ARGS:
  case PI_DEVICE_INFO_MAX_WRITE_IMAGE_ARGS:
  case PI_DEVICE_INFO_MAX_SAMPLERS:
    return put_u32(o, 0);
  case PI_DEVICE_INFO_IMAGE2D_MAX_WIDTH:
  case PI_DEVICE_INFO_IMAGE2D_MAX_HEIGHT:
  case PI_DEVICE_INFO_IMAGE3D_MAX_WIDTH:
  case PI_DEVICE_INFO_IMAGE3D_MAX_HEIGHT:
  case PI_DEVICE_INFO_IMAGE3D_MAX_DEPTH:
  case PI_DEVICE_INFO_IMAGE_MAX_BUFFER_SIZE:
  case PI_DEVICE_INFO_IMAGE_MAX_ARRAY_SIZE:
    return put_size(o, 0);
  case PI_DEVICE_INFO_MAX_PARAMETER_SIZE:
    /* Kernel parameters: 4 KiB, 32764 bytes from CUDA 12.1 on Volta+. */
    return put_size(o, d->platform->driver_version >= 12010 && d->cc_major >= 7
                            ? 32764
                            : 4096);
  case PI_DEVICE_INFO_MEM_BASE_ADDR_ALIGN:
    ATTR(TEXTURE_ALIGNMENT, v); /* bytes; the query wants bits */
    return put_u32(o, (uint32_t)v * 8);
  case PI_DEVICE_INFO_GLOBAL_MEM_CACHE_TYPE:
    return put_u32(o, PI_DEVICE_MEM_CACHE_TYPE_READ_WRITE_CACHE);
  case PI_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE:
    return put_u32(o, 128); /* L2 line of every CUDA architecture */
  case PI_DEVICE_INFO_GLOBAL_MEM_CACHE_SIZE:
    ATTR(L2_CACHE_SIZE, v);
    return put_u64(o, (uint64_t)v);
  case PI_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE:
    ATTR(TOTAL_CONSTANT_MEMORY, v);
    return put_u64(o, (uint64_t)v);
  case PI_DEVICE_INFO_MAX_CONSTANT_ARGS:
    return put_u32(o, 9); /* as DPC++'s CUDA plugin */
  case PI_DEVICE_INFO_LOCAL_MEM_TYPE:
    return put_u32(o, PI_DEVICE_LOCAL_MEM_TYPE_LOCAL);
  case PI_DEVICE_INFO_LOCAL_MEM_SIZE:
    /* Launches opt in to it (cuFuncSetAttribute) when they need more than
     * the default 48 KiB. */
    ATTR(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, v);
    return put_u64(o, (uint64_t)v);
  case PI_DEVICE_INFO_ERROR_CORRECTION_SUPPORT:
    ATTR(ECC_ENABLED, v);
    return put_bool(o, v);
  case PI_DEVICE_INFO_HOST_UNIFIED_MEMORY:
    ATTR(INTEGRATED, v);
    return put_bool(o, v);
  case PI_DEVICE_INFO_PROFILING_TIMER_RESOLUTION:
    return put_size(o, 500); /* CUevent timing: about half a microsecond */
  case PI_DEVICE_INFO_ENDIAN_LITTLE:
  case PI_DEVICE_INFO_AVAILABLE:
  case PI_DEVICE_INFO_COMPILER_AVAILABLE: /* the driver's PTX JIT */
  case PI_DEVICE_INFO_LINKER_AVAILABLE:   /* and its linker */
  case PI_DEVICE_INFO_PREFERRED_INTEROP_USER_SYNC:
  case PI_DEVICE_INFO_ATOMIC_64:
  case PI_DEVICE_INFO_BUILD_ON_SUBDEVICE:
    return put_bool(o, 1);
  case PI_DEVICE_INFO_EXECUTION_CAPABILITIES:
    return put_u64(o, PI_DEVICE_EXEC_CAPABILITIES_KERNEL);
  case PI_DEVICE_INFO_BUILT_IN_KERNELS:
  case PI_DEVICE_INFO_IL_VERSION:       /* the driver takes no SPIR-V */
  case PI_DEVICE_INFO_OPENCL_C_VERSION: /* nor OpenCL C */
    return put_str(o, "");
  case PI_DEVICE_INFO_PLATFORM:
    return put_ptr(o, d->platform);
  case PI_DEVICE_INFO_REFERENCE_COUNT:
    return put_u32(o, 1); /* root devices live as long as the plugin */
  case PI_DEVICE_INFO_NAME:
    return put_str(o, d->name);
  case PI_DEVICE_INFO_VENDOR:
    return put_str(o, "NVIDIA Corporation");
  case PI_DEVICE_INFO_DRIVER_VERSION:
    snprintf(buf, sizeof buf, "%d.%d", d->platform->driver_version / 1000,
             d->platform->driver_version % 1000 / 10);
    return put_str(o, buf);
  case PI_DEVICE_INFO_PROFILE:
    return put_str(o, "CUDA");
  case PI_DEVICE_INFO_VERSION:
  case PI_DEVICE_INFO_BACKEND_VERSION: /* the compute capability */
    snprintf(buf, sizeof buf, "%d.%d", d->cc_major, d->cc_minor);
    return put_str(o, buf);
  case PI_DEVICE_INFO_EXTENSIONS:
    return put_str(o, d->cc_major * 10 + d->cc_minor >= 53
                           ? "cl_khr_fp64 cl_khr_fp16 cl_khr_subgroups "
                             "cl_khr_int64_base_atomics "
                             "cl_khr_int64_extended_atomics"
                           : "cl_khr_fp64 cl_khr_subgroups "
                             "cl_khr_int64_base_atomics "
                             "cl_khr_int64_extended_atomics");
  case PI_DEVICE_INFO_PRINTF_BUFFER_SIZE:
    return put_size(o, 1u << 20); /* the driver's default printf FIFO */
  case PI_DEVICE_INFO_PARENT_DEVICE:
    return put_ptr(o, NULL);
  case PI_DEVICE_INFO_PARTITION_PROPERTIES:
  case PI_DEVICE_INFO_PARTITION_TYPE: {
    pi_device_partition_property none = 0; /* CUDA devices do not split */
    return put_info(o, &none, sizeof none);
  }
  case PI_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES:
    return put_u32(o, 0);
  case PI_DEVICE_INFO_PARTITION_AFFINITY_DOMAIN:
    return put_u64(o, 0);
  case PI_DEVICE_INFO_MAX_NUM_SUB_GROUPS:
    ATTR(MAX_THREADS_PER_BLOCK, v);
    ATTR(WARP_SIZE, v2);
    return put_u32(o, (uint32_t)(v / (v2 ? v2 : 32)));
  case PI_DEVICE_INFO_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS:
    return put_bool(o, d->cc_major >= 7); /* Volta's thread scheduling */
  case PI_DEVICE_INFO_SUB_GROUP_SIZES_INTEL: {
    /* size_t[], as the OpenCL plugin and DPC++ return it: one, the warp. */
    ATTR(WARP_SIZE, v);
    size_t warp = (size_t)v;
    return put_info(o, &warp, sizeof warp);
  }
  case PI_DEVICE_INFO_USM_HOST_SUPPORT:
  case PI_DEVICE_INFO_USM_DEVICE_SUPPORT:
  case PI_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT:
  case PI_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT:
  case PI_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT: {
    pi_bitfield caps = 0;
    TRY(usm_capabilities(o->fn, d, o->query, &caps));
    return put_u64(o, caps);
  }
  case PI_DEVICE_INFO_UUID: {
    if (!drv.cuDeviceGetUuid)
      return no_cuda_answer(o, d, "the driver has no cuDeviceGetUuid");
    CUuuid uuid;
    TRY(CUF(o->fn, cuDeviceGetUuid, &uuid, d->cu));
    return put_info(o, uuid.bytes, sizeof uuid.bytes);
  }
  case PI_DEVICE_INFO_PCI_ADDRESS:
    TRY(CUF(o->fn, cuDeviceGetPCIBusId, buf, (int)sizeof buf, d->cu));
    return put_str(o, buf);
  case PI_DEVICE_INFO_MAX_MEM_BANDWIDTH:
    /* Bytes per second: double data rate at the peak memory clock. */
    ATTR(MEMORY_CLOCK_RATE, v);        /* kHz */
    ATTR(GLOBAL_MEMORY_BUS_WIDTH, v2); /* bits */
    return put_u64(o, (uint64_t)v * 1000u * 2u * (uint64_t)v2 / 8u);
  case PI_EXT_INTEL_DEVICE_INFO_FREE_MEMORY: {
    uint64_t free_bytes = 0;
    TRY(free_memory(o->fn, d, &free_bytes));
    return put_u64(o, free_bytes);
  }
  case PI_EXT_INTEL_DEVICE_INFO_MEMORY_CLOCK_RATE:
    ATTR(MEMORY_CLOCK_RATE, v); /* kHz; the query wants MHz */
    return put_u32(o, (uint32_t)(v / 1000));
  case PI_EXT_INTEL_DEVICE_INFO_MEMORY_BUS_WIDTH:
    ATTR(GLOBAL_MEMORY_BUS_WIDTH, v);
    return put_u32(o, (uint32_t)v);
  case PI_EXT_INTEL_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES:
    return put_i32(o, 1);
  case PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
  case PI_EXT_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES:
    return put_u64(o, atomic_orders(d));
  case PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
  case PI_EXT_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES:
    return put_u64(o, atomic_scopes(d));
  case PI_EXT_ONEAPI_DEVICE_INFO_BFLOAT16_MATH_FUNCTIONS:
  case PI_EXT_ONEAPI_DEVICE_INFO_CUDA_ASYNC_BARRIER:
    return put_bool(o, d->cc_major >= 8); /* Ampere */
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_GLOBAL_WORK_GROUPS:
    return put_size(o, (size_t)INT_MAX);
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_1D:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_2D:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_3D: {
    ATTR(MAX_GRID_DIM_X, v);
    ATTR(MAX_GRID_DIM_Y, v2);
    ATTR(MAX_GRID_DIM_Z, v3);
    const size_t max[3] = {(size_t)v, (size_t)v2, (size_t)v3};
    return put_max_work_groups(o, max);
  }
  case PI_EXT_CODEPLAY_DEVICE_INFO_MAX_REGISTERS_PER_WORK_GROUP:
    ATTR(MAX_REGISTERS_PER_BLOCK, v);
    return put_u32(o, (uint32_t)v);
  /* Features this plugin does not offer. */
  CASE_FEATURES_NOT_OFFERED
  case PI_EXT_INTEL_DEVICE_INFO_MEM_CHANNEL_SUPPORT:
  case PI_EXT_INTEL_DEVICE_INFO_ESIMD_SUPPORT:
    return put_bool(o, 0);
  CASE_BINDLESS_IMAGE_LIMITS
    return no_cuda_answer(o, d, IMAGES_UNSUPPORTED);
  case PI_EXT_ONEAPI_DEVICE_INFO_IP_VERSION:
  case PI_DEVICE_INFO_DEVICE_ID:
  CASE_INTEL_GPU_GEOMETRY
    return no_cuda_answer(o, d,
                          "it describes Intel GPUs; use "
                          "PI_DEVICE_INFO_VERSION (the compute "
                          "capability) and MAX_COMPUTE_UNITS (SMs)");
  CASE_FORWARD_PROGRESS
  case PI_EXT_ONEAPI_DEVICE_INFO_MATRIX_COMBINATIONS:
  case PI_EXT_ONEAPI_DEVICE_INFO_COMPONENT_DEVICES:
  case PI_EXT_ONEAPI_DEVICE_INFO_COMPOSITE_DEVICE:
    return no_cuda_answer(o, d,
                          "the CUDA plugin does not implement this "
                          "oneAPI extension");
  default:
    return unknown_query(o);
  }
#undef ATTR
}

pi_result cu_piDevicePartition(
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
pi_result cu_piDeviceRetain(pi_device device) {
  REQUIRE(device != NULL);
  return PI_SUCCESS;
}

pi_result cu_piDeviceRelease(pi_device device) {
  REQUIRE(device != NULL);
  return PI_SUCCESS;
}

/* Picks an image for the nvptx64 target (PTX, or a cubin/fatbin built for
 * it), else any image whose format is PTX. */
pi_result backend_binary_rank(const char *fn, pi_device device,
                              const struct pi_device_binary_struct *b,
                              int *rank) {
  (void)fn;
  (void)device;
  *rank = target_is(b, __SYCL_PI_DEVICE_BINARY_TARGET_NVPTX64) &&
                  b->Format != PI_DEVICE_BINARY_TYPE_SPIRV &&
                  b->Format != PI_DEVICE_BINARY_TYPE_OPENCL_C &&
                  b->Format != PI_DEVICE_BINARY_TYPE_LLVMIR_BITCODE
              ? 0
          : b->Format == PI_DEVICE_BINARY_TYPE_PTX ? 1
                                                    : -1;
  return PI_SUCCESS;
}

pi_result backend_no_binary(const char *fn, pi_device device,
                            pi_device_binary *binaries,
                            pi_uint32 num_binaries) {
  char offered[512], what[300];
  return fail(PI_ERROR_INVALID_BINARY,
              "%s: no image fits %s, which takes PTX (target nvptx64 or "
              "format PI_DEVICE_BINARY_TYPE_PTX); offered: %s",
              fn, describe(device, what, sizeof what),
              binaries_offered(binaries, num_binaries, offered,
                               sizeof offered));
}

/* The kernel's CUfunction as a 64-bit value, or 0 with
 * PI_ERROR_INVALID_KERNEL_NAME when the program has no such kernel. */
pi_result
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

pi_result cu_piextGetGlobalVariablePointer(
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
pi_result cu_piextDeviceGetNativeHandle(pi_device device,
                                        pi_native_handle *nativeHandle) {
  REQUIRE(device != NULL && nativeHandle != NULL);
  *nativeHandle = (pi_native_handle)device->cu;
  return PI_SUCCESS;
}

pi_result
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
pi_result cu_piGetDeviceAndHostTimer(pi_device Device,
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
