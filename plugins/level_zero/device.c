/*
 * device.c: the PI device functions of the Level Zero plugin: piDevicesGet,
 * piDeviceGetInfo, partitioning into sub-devices, reference counts,
 * piextDeviceSelectBinary (native spir64_gen images, then SPIR-V), native
 * handles and the device and host timers.
 */
#include "lz_internal.h"

/* ---- Devices -------------------------------------------------------------- */

static pi_device_type device_type(pi_device d) {
  switch (d->props.type) {
  case ZE_DEVICE_TYPE_GPU:
    return PI_DEVICE_TYPE_GPU;
  case ZE_DEVICE_TYPE_CPU:
    return PI_DEVICE_TYPE_CPU;
  case ZE_DEVICE_TYPE_FPGA:
    return PI_DEVICE_TYPE_ACC;
  default:
    return PI_DEVICE_TYPE_CUSTOM;
  }
}

pi_result lz_piDevicesGet(pi_platform platform,
                          pi_device_type device_type_wanted,
                          pi_uint32 num_entries, pi_device *devices,
                          pi_uint32 *num_devices) {
  NEED(platform, PI_ERROR_INVALID_PLATFORM);
  REQUIRE(devices || num_devices);
  REQUIRE(num_entries > 0 || !devices);
  pi_uint32 n = 0;
  for (pi_uint32 i = 0; i < platform->ndevices; ++i) {
    pi_device d = platform->devices[i];
    bool want = device_type_wanted == PI_DEVICE_TYPE_ALL ||
                device_type_wanted == PI_DEVICE_TYPE_DEFAULT ||
                (device_type(d) & device_type_wanted);
    if (!want)
      continue;
    if (devices && n < num_entries)
      devices[n] = d;
    ++n;
  }
  if (num_devices)
    *num_devices = n;
  return PI_SUCCESS;
}

/* Level Zero floating-point flags as PI's: the first six bits agree; Level
 * Zero's bit 6 is correctly rounded divide/sqrt and bit 7 soft float. */
static pi_device_fp_config fp_config(ze_device_fp_flags_t f, bool have) {
  if (!have)
    return 0;
  pi_device_fp_config c = f & 0x3f;
  if (f & ZE_DEVICE_FP_FLAG_ROUNDED_DIVIDE_SQRT)
    c |= PI_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT;
  if (f & ZE_DEVICE_FP_FLAG_SOFT_FLOAT)
    c |= PI_FP_SOFT_FLOAT;
  return c;
}

/* Level Zero memory access capabilities as PI USM capabilities (same bits). */
static pi_usm_capabilities usm_caps(ze_memory_access_cap_flags_t f) {
  static const struct flag_pair map[] = {
      {ZE_MEMORY_ACCESS_CAP_FLAG_RW, PI_USM_ACCESS},
      {ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC, PI_USM_ATOMIC_ACCESS},
      {ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT, PI_USM_CONCURRENT_ACCESS},
      {ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC,
       PI_USM_CONCURRENT_ATOMIC_ACCESS}};
  return (pi_usm_capabilities)flags_map(f, map, sizeof map / sizeof *map);
}

static pi_result no_ze_answer(const struct info_out *o, pi_device d,
                              const char *why) {
  return fail(PI_ERROR_INVALID_VALUE,
              "%s: query 0x%x has no Level Zero answer for device '%s': %s",
              o->fn, o->query, dev_name(d), why);
}

pi_result backend_device_info(pi_device device, const struct info_out *o) {
  pi_device d = device;
  const ze_device_properties_t *p = &d->props;
  const ze_device_compute_properties_t *c = &d->compute;
  const ze_device_module_properties_t *m = &d->module;
  const ze_device_image_properties_t *im = &d->image;
  bool fp16 = m->flags & ZE_DEVICE_MODULE_FLAG_FP16;
  bool fp64 = m->flags & ZE_DEVICE_MODULE_FLAG_FP64;
  uint32_t eus = p->numSlices * p->numSubslicesPerSlice * p->numEUsPerSubslice;
  char buf[512];
  switch (o->query) {
  case PI_DEVICE_INFO_TYPE:
    return put_u64(o, device_type(d));
  case PI_DEVICE_INFO_VENDOR_ID:
    return put_u32(o, p->vendorId);
  case PI_DEVICE_INFO_DEVICE_ID:
    return put_u32(o, p->deviceId);
  case PI_DEVICE_INFO_MAX_COMPUTE_UNITS:
  case PI_DEVICE_INFO_GPU_EU_COUNT:
    return put_u32(o, eus);
  case PI_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS:
    return put_u32(o, 3);
  case PI_DEVICE_INFO_MAX_WORK_ITEM_SIZES: {
    size_t s[3] = {c->maxGroupSizeX, c->maxGroupSizeY, c->maxGroupSizeZ};
    return put_info(o, s, sizeof s);
  }
  case PI_DEVICE_INFO_MAX_WORK_GROUP_SIZE:
    return put_size(o, c->maxTotalGroupSize);
  case PI_DEVICE_INFO_SINGLE_FP_CONFIG:
    return put_u64(o, fp_config(m->fp32flags, true));
  case PI_DEVICE_INFO_HALF_FP_CONFIG:
    return put_u64(o, fp_config(m->fp16flags, fp16));
  case PI_DEVICE_INFO_DOUBLE_FP_CONFIG:
    return put_u64(o, fp_config(m->fp64flags, fp64));
  case PI_DEVICE_INFO_QUEUE_PROPERTIES:
  case PI_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES:
    return put_queue_support(o);
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_CHAR:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR:
    return put_u32(o, 16);
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_SHORT:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT:
    return put_u32(o, 8);
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_INT:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT:
    return put_u32(o, 4);
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG:
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_FLOAT:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT:
    return put_u32(o, 1);
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_DOUBLE:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE:
    return put_u32(o, fp64 ? 1 : 0);
  case PI_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_HALF:
  case PI_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF:
    return put_u32(o, fp16 ? 8 : 0);
  case PI_DEVICE_INFO_MAX_CLOCK_FREQUENCY:
    return put_u32(o, p->coreClockRate);
  case PI_DEVICE_INFO_ADDRESS_BITS:
    return put_u32(o, 64);
  case PI_DEVICE_INFO_MAX_MEM_ALLOC_SIZE:
  case PI_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE:
    return put_u64(o, p->maxMemAllocSize);
  case PI_DEVICE_INFO_IMAGE_SUPPORT:
    return put_bool(o, im->maxImageDims2D > 0);
  case PI_DEVICE_INFO_MAX_READ_IMAGE_ARGS:
    return put_u32(o, im->maxReadImageArgs);
  case PI_DEVICE_INFO_MAX_WRITE_IMAGE_ARGS:
    return put_u32(o, im->maxWriteImageArgs);
  case PI_DEVICE_INFO_IMAGE2D_MAX_WIDTH:
  case PI_DEVICE_INFO_IMAGE2D_MAX_HEIGHT:
    return put_size(o, im->maxImageDims2D);
  case PI_DEVICE_INFO_IMAGE3D_MAX_WIDTH:
  case PI_DEVICE_INFO_IMAGE3D_MAX_HEIGHT:
  case PI_DEVICE_INFO_IMAGE3D_MAX_DEPTH:
    return put_size(o, im->maxImageDims3D);
  case PI_DEVICE_INFO_IMAGE_MAX_BUFFER_SIZE:
    return put_size(o, (size_t)im->maxImageBufferSize);
  case PI_DEVICE_INFO_IMAGE_MAX_ARRAY_SIZE:
    return put_size(o, im->maxImageArraySlices);
  case PI_DEVICE_INFO_MAX_SAMPLERS:
    return put_u32(o, im->maxSamplers);
  case PI_DEVICE_INFO_MAX_PARAMETER_SIZE:
    return put_size(o, m->maxArgumentsSize);
  case PI_DEVICE_INFO_MEM_BASE_ADDR_ALIGN:
    return put_u32(o, 64 * 8); /* bits: buffers are 64-byte aligned */
  case PI_DEVICE_INFO_GLOBAL_MEM_CACHE_TYPE:
    return put_u32(o, PI_DEVICE_MEM_CACHE_TYPE_READ_WRITE_CACHE);
  case PI_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE:
    /* Level Zero 1.4 has no query for it; every Intel GPU since Gen9 has
     * 64-byte cache lines. */
    return put_u32(o, 64);
  case PI_DEVICE_INFO_GLOBAL_MEM_CACHE_SIZE:
    return put_u64(o, d->cache_size);
  case PI_DEVICE_INFO_GLOBAL_MEM_SIZE:
    return put_u64(o, d->mem_size);
  case PI_DEVICE_INFO_MAX_CONSTANT_ARGS:
    return put_u32(o, 64);
  case PI_DEVICE_INFO_LOCAL_MEM_TYPE:
    return put_u32(o, PI_DEVICE_LOCAL_MEM_TYPE_LOCAL);
  case PI_DEVICE_INFO_LOCAL_MEM_SIZE:
    return put_u64(o, c->maxSharedLocalMemory);
  case PI_DEVICE_INFO_ERROR_CORRECTION_SUPPORT:
    return put_bool(o, p->flags & ZE_DEVICE_PROPERTY_FLAG_ECC);
  case PI_DEVICE_INFO_HOST_UNIFIED_MEMORY:
    return put_bool(o, p->flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED);
  case PI_DEVICE_INFO_PROFILING_TIMER_RESOLUTION: {
    uint64_t hz = p->timerResolution ? p->timerResolution : 1;
    size_t ns = (size_t)(1000000000ull / hz);
    return put_size(o, ns ? ns : 1);
  }
  case PI_DEVICE_INFO_ENDIAN_LITTLE:
  case PI_DEVICE_INFO_COMPILER_AVAILABLE:
  case PI_DEVICE_INFO_LINKER_AVAILABLE:
  case PI_DEVICE_INFO_PREFERRED_INTEROP_USER_SYNC:
  case PI_DEVICE_INFO_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS:
    return put_bool(o, 1);
  case PI_DEVICE_INFO_AVAILABLE:
    return put_bool(o, zeDeviceGetStatus(d->ze) == ZE_RESULT_SUCCESS);
  case PI_DEVICE_INFO_EXECUTION_CAPABILITIES:
    return put_u64(o, PI_DEVICE_EXEC_CAPABILITIES_KERNEL);
  case PI_DEVICE_INFO_BUILT_IN_KERNELS:
  case PI_DEVICE_INFO_OPENCL_C_VERSION: /* Level Zero takes no OpenCL C */
    return put_str(o, "");
  case PI_DEVICE_INFO_PLATFORM:
    return put_ptr(o, d->platform);
  case PI_DEVICE_INFO_REFERENCE_COUNT:
    return put_u32(o, atomic_load(&d->refs));
  case PI_DEVICE_INFO_IL_VERSION:
    snprintf(buf, sizeof buf, "SPIR-V_%u.%u",
             (unsigned)ZE_MAJOR_VERSION(m->spirvVersionSupported),
             (unsigned)ZE_MINOR_VERSION(m->spirvVersionSupported));
    return put_str(o, buf);
  case PI_DEVICE_INFO_NAME:
    return put_info(o, p->name, strnlen(p->name, ZE_MAX_DEVICE_NAME) + 1);
  case PI_DEVICE_INFO_VENDOR:
    if (p->vendorId == 0x8086)
      return put_str(o, "Intel(R) Corporation");
    snprintf(buf, sizeof buf, "PCI vendor 0x%04x", (unsigned)p->vendorId);
    return put_str(o, buf);
  case PI_DEVICE_INFO_DRIVER_VERSION: {
    uint32_t v = d->platform->driver_version;
    snprintf(buf, sizeof buf, "%u.%u.%u", (unsigned)(v >> 24),
             (unsigned)((v >> 16) & 0xff), (unsigned)(v & 0xffff));
    return put_str(o, buf);
  }
  case PI_DEVICE_INFO_PROFILE:
    return put_str(o, "FULL_PROFILE");
  case PI_DEVICE_INFO_VERSION:
  case PI_DEVICE_INFO_BACKEND_VERSION:
    return put_str(o, d->platform->version);
  case PI_DEVICE_INFO_EXTENSIONS:
    /* The OpenCL names of what the device's SPIR-V consumer supports. */
    snprintf(buf, sizeof buf,
             "cl_khr_il_program cl_khr_global_int32_base_atomics "
             "cl_khr_global_int32_extended_atomics cl_intel_subgroups "
             "cl_intel_required_subgroup_size "
             "cl_intel_unified_shared_memory%s%s%s",
             fp16 ? " cl_khr_fp16" : "", fp64 ? " cl_khr_fp64" : "",
             (m->flags & ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS)
                 ? " cl_khr_int64_base_atomics cl_khr_int64_extended_atomics"
                 : "");
    return put_str(o, buf);
  case PI_DEVICE_INFO_PRINTF_BUFFER_SIZE:
    return put_size(o, m->printfBufferSize);
  case PI_DEVICE_INFO_PARENT_DEVICE:
    return put_ptr(o, d->parent);
  case PI_DEVICE_INFO_PARTITION_PROPERTIES: {
    pi_result r = device_subs(o->fn, d);
    if (r != PI_SUCCESS)
      return r;
    pi_device_partition_property v[2] = {
        PI_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, 0};
    return d->nsubs ? put_info(o, v, sizeof v[0])
                    : put_info(o, &v[1], sizeof v[1]);
  }
  case PI_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES: {
    pi_result r = device_subs(o->fn, d);
    return r != PI_SUCCESS ? r : put_u32(o, d->nsubs);
  }
  case PI_DEVICE_INFO_PARTITION_AFFINITY_DOMAIN: {
    pi_result r = device_subs(o->fn, d);
    if (r != PI_SUCCESS)
      return r;
    return put_u64(o, d->nsubs ? PI_DEVICE_AFFINITY_DOMAIN_NUMA |
                                      PI_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE
                                : 0);
  }
  case PI_DEVICE_INFO_PARTITION_TYPE: {
    pi_device_partition_property v[3] = {
        PI_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
        PI_DEVICE_AFFINITY_DOMAIN_NUMA, 0};
    return d->parent ? put_info(o, v, sizeof v)
                     : put_info(o, &v[2], sizeof v[2]);
  }
  case PI_DEVICE_INFO_MAX_NUM_SUB_GROUPS: {
    uint32_t smallest = UINT32_MAX;
    for (uint32_t i = 0; i < c->numSubGroupSizes && i < ZE_SUBGROUPSIZE_COUNT;
         ++i)
      if (c->subGroupSizes[i] && c->subGroupSizes[i] < smallest)
        smallest = c->subGroupSizes[i];
    return put_u32(o, smallest == UINT32_MAX
                           ? 1
                           : c->maxTotalGroupSize / smallest);
  }
  case PI_DEVICE_INFO_SUB_GROUP_SIZES_INTEL: {
    /* size_t[], as DPC++ and the OpenCL plugin return them. */
    size_t s[ZE_SUBGROUPSIZE_COUNT];
    uint32_t n = c->numSubGroupSizes < ZE_SUBGROUPSIZE_COUNT
                     ? c->numSubGroupSizes
                     : ZE_SUBGROUPSIZE_COUNT;
    for (uint32_t i = 0; i < n; ++i)
      s[i] = c->subGroupSizes[i];
    if (n == 0) {
      s[0] = 1;
      n = 1;
    }
    return put_info(o, s, n * sizeof s[0]);
  }
  case PI_DEVICE_INFO_USM_HOST_SUPPORT:
    return put_u64(o, usm_caps(d->access.hostAllocCapabilities));
  case PI_DEVICE_INFO_USM_DEVICE_SUPPORT:
    return put_u64(o, usm_caps(d->access.deviceAllocCapabilities));
  case PI_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT:
    return put_u64(o, usm_caps(d->access.sharedSingleDeviceAllocCapabilities));
  case PI_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT:
    return put_u64(o, usm_caps(d->access.sharedCrossDeviceAllocCapabilities));
  case PI_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT:
    return put_u64(o, usm_caps(d->access.sharedSystemAllocCapabilities));
  case PI_DEVICE_INFO_UUID:
    return put_info(o, p->uuid.id, sizeof p->uuid.id);
  case PI_DEVICE_INFO_PCI_ADDRESS: {
    ze_pci_ext_properties_t pci = {.stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES};
    pi_result r = ZE_CALL_IN(o->fn, zeDevicePciGetPropertiesExt, d->ze, &pci);
    if (r != PI_SUCCESS)
      return r;
    snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", (unsigned)pci.address.domain,
             (unsigned)pci.address.bus, (unsigned)pci.address.device,
             (unsigned)pci.address.function);
    return put_str(o, buf);
  }
  case PI_DEVICE_INFO_GPU_EU_SIMD_WIDTH:
    return put_u32(o, p->physicalEUSimdWidth);
  case PI_DEVICE_INFO_GPU_SLICES:
    return put_u32(o, p->numSlices);
  case PI_DEVICE_INFO_GPU_SUBSLICES_PER_SLICE:
    return put_u32(o, p->numSubslicesPerSlice);
  case PI_DEVICE_INFO_GPU_EU_COUNT_PER_SUBSLICE:
    return put_u32(o, p->numEUsPerSubslice);
  case PI_DEVICE_INFO_GPU_HW_THREADS_PER_EU:
    return put_u32(o, p->numThreadsPerEU);
  case PI_EXT_INTEL_DEVICE_INFO_MEMORY_CLOCK_RATE:
    return put_u32(o, d->mem_clock);
  case PI_EXT_INTEL_DEVICE_INFO_MEMORY_BUS_WIDTH:
    return put_u32(o, d->mem_bus);
  case PI_EXT_INTEL_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES: {
    int32_t n = (int32_t)d->nqueues;
    return put_info(o, &n, sizeof n);
  }
  case PI_DEVICE_INFO_ATOMIC_64:
    return put_bool(o, m->flags & ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS);
  case PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
  case PI_EXT_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES:
    /* SPIR-V consumers of Level Zero take every memory order. */
    return put_u64(o, PI_MEMORY_ORDER_RELAXED | PI_MEMORY_ORDER_ACQUIRE |
                           PI_MEMORY_ORDER_RELEASE | PI_MEMORY_ORDER_ACQ_REL |
                           PI_MEMORY_ORDER_SEQ_CST);
  case PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
  case PI_EXT_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES:
    return put_u64(o, PI_MEMORY_SCOPE_WORK_ITEM | PI_MEMORY_SCOPE_SUB_GROUP |
                           PI_MEMORY_SCOPE_WORK_GROUP | PI_MEMORY_SCOPE_DEVICE |
                           PI_MEMORY_SCOPE_SYSTEM);
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_GLOBAL_WORK_GROUPS:
    return put_size(o, (size_t)c->maxGroupCountX * c->maxGroupCountY *
                            c->maxGroupCountZ);
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_1D:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_2D:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_3D: {
    const size_t max[3] = {c->maxGroupCountX, c->maxGroupCountY,
                           c->maxGroupCountZ};
    return put_max_work_groups(o, max);
  }
  case PI_EXT_INTEL_DEVICE_INFO_ESIMD_SUPPORT:
    return put_bool(o, p->vendorId == 0x8086 &&
                            p->type == ZE_DEVICE_TYPE_GPU);
  case PI_DEVICE_INFO_BUILD_ON_SUBDEVICE:
    /* A program built for a root device serves its sub-devices too. */
    return put_bool(o, 0);
  case PI_DEVICE_INFO_IMAGE_SRGB:
  case PI_EXT_ONEAPI_DEVICE_INFO_BFLOAT16_MATH_FUNCTIONS:
  case PI_EXT_ONEAPI_DEVICE_INFO_CUDA_ASYNC_BARRIER:
  CASE_FEATURES_NOT_OFFERED
  case PI_EXT_INTEL_DEVICE_INFO_MEM_CHANNEL_SUPPORT:
    return put_bool(o, 0); /* features this plugin does not offer */
  case PI_EXT_ONEAPI_DEVICE_INFO_IP_VERSION:
    return no_ze_answer(o, d, "the IP version needs ze_device_ip_version_ext_t "
                               "(Level Zero 1.5 headers; these are 1.4)");
  case PI_DEVICE_INFO_MAX_MEM_BANDWIDTH:
  case PI_EXT_INTEL_DEVICE_INFO_FREE_MEMORY:
    return no_ze_answer(o, d, "it needs Sysman (zes), which this plugin does "
                               "not use");
  case PI_EXT_CODEPLAY_DEVICE_INFO_MAX_REGISTERS_PER_WORK_GROUP:
    return no_ze_answer(o, d, "registers per work-group are a CUDA notion");
  CASE_FORWARD_PROGRESS
    return no_ze_answer(o, d, "Level Zero states no forward-progress "
                               "guarantees");
  CASE_BINDLESS_IMAGE_LIMITS
    return no_ze_answer(o, d, "bindless images and mipmaps are not offered");
  case PI_EXT_ONEAPI_DEVICE_INFO_MATRIX_COMBINATIONS:
    return no_ze_answer(o, d, "Level Zero does not list matrix combinations");
  /* Level Zero 1.4 has no composite devices: none has components, none is
   * part of one. */
  case PI_EXT_ONEAPI_DEVICE_INFO_COMPONENT_DEVICES:
    return put_info(o, NULL, 0);
  case PI_EXT_ONEAPI_DEVICE_INFO_COMPOSITE_DEVICE:
    return put_ptr(o, NULL);
  default:
    return unknown_query(o);
  }
}

/* Level Zero partitions a device only into its sub-devices (one per tile):
 * by affinity domain NUMA or NEXT_PARTITIONABLE. */
pi_result lz_piDevicePartition(
    pi_device device, const pi_device_partition_property *properties,
    pi_uint32 num_devices, pi_device *out_devices, pi_uint32 *out_num_devices) {
  NEED(device, PI_ERROR_INVALID_DEVICE);
  REQUIRE(properties != NULL);
  if (properties[0] != PI_DEVICE_PARTITION_BY_AFFINITY_DOMAIN ||
      (properties[1] != PI_DEVICE_AFFINITY_DOMAIN_NUMA &&
       properties[1] != PI_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: Level Zero devices split only into their sub-devices: use "
                "PI_DEVICE_PARTITION_BY_AFFINITY_DOMAIN with NUMA or "
                "NEXT_PARTITIONABLE (got property 0x%llx)",
                FN, (unsigned long long)properties[0]);
  pi_result r = device_subs(FN, device);
  if (r != PI_SUCCESS)
    return r;
  if (device->nsubs == 0)
    return fail(PI_ERROR_DEVICE_PARTITION_FAILED,
                "%s: device '%s' has no sub-devices", FN, dev_name(device));
  if (out_devices) {
    if (num_devices < device->nsubs)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: device '%s' has %u sub-devices but num_devices is %u",
                  FN, dev_name(device), (unsigned)device->nsubs,
                  (unsigned)num_devices);
    for (pi_uint32 i = 0; i < device->nsubs; ++i) {
      out_devices[i] = device->subs[i];
      ref_retain(&device->subs[i]->refs);
    }
  }
  if (out_num_devices)
    *out_num_devices = device->nsubs;
  return PI_SUCCESS;
}

/* Devices live as long as the plugin; the count is kept for queries. */
pi_result lz_piDeviceRetain(pi_device device) {
  NEED(device, PI_ERROR_INVALID_DEVICE);
  if (device->parent)
    ref_retain(&device->refs);
  return PI_SUCCESS;
}

pi_result lz_piDeviceRelease(pi_device device) {
  NEED(device, PI_ERROR_INVALID_DEVICE);
  if (device->parent) {
    unsigned n = atomic_load(&device->refs);
    while (n > 1 && !atomic_compare_exchange_weak(&device->refs, &n, n - 1))
      ;
  }
  return PI_SUCCESS;
}

bool is_spirv(const unsigned char *b, size_t n) {
  uint32_t magic;
  if (!b || n < 20 || n % 4)
    return false;
  memcpy(&magic, b, sizeof magic);
  return magic == SPIRV_MAGIC || magic == __builtin_bswap32(SPIRV_MAGIC);
}

/* Picks a native image for the device's generation ("spir64_gen") first,
 * then SPIR-V ("spir64", or any image in SPIR-V format). OpenCL C source and
 * every other target are refused, listing what was offered. */
pi_result backend_binary_rank(const char *fn, pi_device device,
                              const struct pi_device_binary_struct *b,
                              int *rank) {
  (void)fn;
  (void)device;
  const char *t = b->DeviceTargetSpec ? b->DeviceTargetSpec : "";
  bool native = strcmp(t, __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64_GEN) == 0 &&
                (b->Format == PI_DEVICE_BINARY_TYPE_NATIVE ||
                 b->Format == PI_DEVICE_BINARY_TYPE_NONE);
  bool spirv_target =
      strcmp(t, __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64) == 0 ||
      strcmp(t, __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64_GEN) == 0;
  bool spirv_format =
      b->Format == PI_DEVICE_BINARY_TYPE_SPIRV ||
      (b->Format == PI_DEVICE_BINARY_TYPE_NONE && b->BinaryStart &&
       b->BinaryEnd > b->BinaryStart &&
       is_spirv(b->BinaryStart, (size_t)(b->BinaryEnd - b->BinaryStart)));
  *rank = native ? 0 : spirv_target && spirv_format ? 1 : -1;
  return PI_SUCCESS;
}

pi_result backend_no_binary(const char *fn, pi_device device,
                            pi_device_binary *binaries,
                            pi_uint32 num_binaries) {
  char offered[512];
  return fail(PI_ERROR_INVALID_BINARY,
              "%s: no image fits Level Zero device '%s', which takes SPIR-V "
              "(target spir64 or spir64_gen, format SPIR-V) or native "
              "spir64_gen images, and no OpenCL C source; offered: %s",
              fn, dev_name(device),
              binaries_offered(binaries, num_binaries, offered,
                               sizeof offered));
}

pi_result lz_piextDeviceGetNativeHandle(pi_device device,
                                        pi_native_handle *nativeHandle) {
  NEED(device, PI_ERROR_INVALID_DEVICE);
  return native_of(FN, device->ze, nativeHandle);
}

pi_result lz_piextDeviceCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_platform platform, pi_device *device) {
  REQUIRE(nativeHandle != 0 && device != NULL);
  pi_result r = discover(FN);
  if (r != PI_SUCCESS)
    return r;
  pi_device d = find_device(platform, (ze_device_handle_t)nativeHandle);
  for (pi_uint32 p = 0; !d && p < nplatforms; ++p)
    for (pi_uint32 i = 0; !d && i < platforms[p]->ndevices; ++i)
      if ((!platform || platforms[p] == platform) &&
          device_subs(FN, platforms[p]->devices[i]) == PI_SUCCESS)
        d = find_device(platforms[p], (ze_device_handle_t)nativeHandle);
  if (!d)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: 0x%" PRIxPTR " is no device or sub-device of %s", FN,
                (uintptr_t)nativeHandle,
                platform ? "the platform" : "any Level Zero driver");
  *device = d;
  return PI_SUCCESS;
}

/* zeDeviceGetGlobalTimestamps: the host time is in nanoseconds, the device
 * time in timer ticks. */
pi_result lz_piGetDeviceAndHostTimer(pi_device Device,
                                     uint64_t *DeviceTime,
                                     uint64_t *HostTime) {
  NEED(Device, PI_ERROR_INVALID_DEVICE);
  uint64_t host = 0, dev = 0;
  pi_result r = ZE_CALL(zeDeviceGetGlobalTimestamps, Device->ze, &host, &dev);
  if (r != PI_SUCCESS)
    return r;
  if (DeviceTime)
    *DeviceTime = ticks_to_ns(Device, dev);
  if (HostTime)
    *HostTime = host;
  return PI_SUCCESS;
}
