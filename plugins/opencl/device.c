/*
 * device.c: the PI device functions of the OpenCL plugin: piDevicesGet,
 * piDeviceGetInfo (passed through to clGetDeviceInfo where OpenCL has the
 * query, computed here where it does not), partitioning, reference counts,
 * piextDeviceSelectBinary (ahead-of-time, SPIR-V or OpenCL C images), device
 * function and global variable pointers, native handles and the device and
 * host timers.
 */
#include "ocl_internal.h"

/* ---- Devices --------------------------------------------------------------
 */

pi_result ocl_piDevicesGet(pi_platform platform,
                           pi_device_type device_type,
                           pi_uint32 num_entries, pi_device *devices,
                           pi_uint32 *num_devices) {
  cl_int err = ICD_CALL(clGetDeviceIDs, (cl_platform_id)platform, device_type,
                        num_entries, (cl_device_id *)devices, num_devices);
  if (err == CL_DEVICE_NOT_FOUND) {
    /* A platform without devices of this type has zero of them. */
    if (num_devices)
      *num_devices = 0;
    return PI_SUCCESS;
  }
  return CL_CHECK(clGetDeviceIDs, err);
}

/* The atomic capabilities of a device for one of the four PI atomic
 * queries, following the minimum each OpenCL version mandates. */
pi_result atomic_capabilities(const char *fn, cl_device_id dev,
                              unsigned query, pi_bitfield *out) {
  int fence = query == PI_EXT_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES ||
              query == PI_EXT_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES;
  int scope = query == PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES ||
              query == PI_EXT_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES;
  int version = device_version(dev);
  cl_device_atomic_capabilities caps =
      CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP |
      (fence ? CL_DEVICE_ATOMIC_ORDER_ACQ_REL : 0);
  if (version >= 30) {
    cl_int err = ICD_CALL(clGetDeviceInfo, dev,
                          fence ? CL_DEVICE_ATOMIC_FENCE_CAPABILITIES
                                : CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES,
                          sizeof caps, &caps, NULL);
    if (err != CL_SUCCESS)
      return check_cl(fn, "clGetDeviceInfo", err);
  } else if (version >= 20) {
    caps |= CL_DEVICE_ATOMIC_ORDER_ACQ_REL | CL_DEVICE_ATOMIC_ORDER_SEQ_CST |
            CL_DEVICE_ATOMIC_SCOPE_DEVICE | CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES;
  }
  pi_bitfield r;
  if (scope) {
    /* Work-item, sub-group and work-group scopes are always available. */
    r = PI_MEMORY_SCOPE_WORK_ITEM | PI_MEMORY_SCOPE_SUB_GROUP |
        PI_MEMORY_SCOPE_WORK_GROUP;
    if (caps & CL_DEVICE_ATOMIC_SCOPE_DEVICE)
      r |= PI_MEMORY_SCOPE_DEVICE;
    if (caps & CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES)
      r |= PI_MEMORY_SCOPE_SYSTEM;
  } else {
    /* Orders are hierarchical: seq_cst implies acq_rel, acquire, release. */
    r = PI_MEMORY_ORDER_RELAXED;
    if (caps &
        (CL_DEVICE_ATOMIC_ORDER_ACQ_REL | CL_DEVICE_ATOMIC_ORDER_SEQ_CST))
      r |= PI_MEMORY_ORDER_ACQUIRE | PI_MEMORY_ORDER_RELEASE |
           PI_MEMORY_ORDER_ACQ_REL;
    if (caps & CL_DEVICE_ATOMIC_ORDER_SEQ_CST)
      r |= PI_MEMORY_ORDER_SEQ_CST;
  }
  *out = r;
  return PI_SUCCESS;
}

/* Whether the device can read CL_sRGBA images: asks OpenCL for the image
 * formats of a throwaway context on the device. */
static int device_supports_srgb(cl_device_id dev) {
  cl_bool images = CL_FALSE;
  cl_int err;
  if (ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images,
               &images, NULL) != CL_SUCCESS ||
      !images)
    return 0;
  cl_context ctx = icd_create_context(NULL, 1, &dev, NULL, NULL, &err);
  if (!ctx)
    return 0;
  cl_uint n = 0;
  cl_image_format formats[256];
  int found = 0;
  if (ICD_CALL(clGetSupportedImageFormats, ctx, CL_MEM_READ_ONLY,
               CL_MEM_OBJECT_IMAGE2D, 256, formats, &n) == CL_SUCCESS)
    for (cl_uint i = 0; i < n && i < 256; ++i)
      found |= formats[i].image_channel_order == CL_sRGBA;
  ICD_CALL(clReleaseContext, ctx);
  return found;
}

/* The sub-group sizes of a device (size_t[], as OpenCL and DPC++ return
 * them). Without cl_intel_required_subgroup_size, a device without
 * sub-groups has the one size 1; one with sub-groups cannot tell. */
static pi_result sub_group_sizes(const struct info_out *o, cl_device_id dev) {
  if (device_has_ext(dev, "cl_intel_required_subgroup_size"))
    return INFO_PASS(o, clGetDeviceInfo, dev);
  cl_uint max_sub_groups = 0;
  if (device_version(dev) >= 21)
    ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_MAX_NUM_SUB_GROUPS,
             sizeof max_sub_groups, &max_sub_groups, NULL);
  if (max_sub_groups == 0) {
    size_t one = 1;
    return put_info(o, &one, sizeof one);
  }
  char what[512];
  return fail(PI_ERROR_INVALID_VALUE,
              "%s: %s has sub-groups but does not list "
              "cl_intel_required_subgroup_size, so OpenCL cannot tell its "
              "sub-group sizes (query 0x%x)",
              o->fn, describe_device(dev, what, sizeof what), o->query);
}

/* Fails a device query that OpenCL has no way to answer. */
pi_result no_opencl_answer(const struct info_out *o, cl_device_id dev) {
  char what[512];
  return fail(PI_ERROR_INVALID_VALUE,
              "%s: query 0x%x has no OpenCL equivalent, so the OpenCL plugin "
              "cannot answer it for %s",
              o->fn, o->query, describe_device(dev, what, sizeof what));
}

pi_result backend_device_info(pi_device device, const struct info_out *o) {
  cl_device_id dev = (cl_device_id)device;
  switch (o->query) {
  /* Level Zero and CUDA details that OpenCL does not report. */
  case PI_DEVICE_INFO_PCI_ADDRESS:
  CASE_INTEL_GPU_GEOMETRY
  case PI_DEVICE_INFO_MAX_MEM_BANDWIDTH:
  case PI_EXT_INTEL_DEVICE_INFO_FREE_MEMORY:
  case PI_EXT_INTEL_DEVICE_INFO_MEMORY_CLOCK_RATE:
  case PI_EXT_INTEL_DEVICE_INFO_MEMORY_BUS_WIDTH:
  case PI_EXT_CODEPLAY_DEVICE_INFO_MAX_REGISTERS_PER_WORK_GROUP:
  CASE_FORWARD_PROGRESS
  CASE_BINDLESS_IMAGE_LIMITS
  case PI_EXT_ONEAPI_DEVICE_INFO_MATRIX_COMBINATIONS:
  case PI_EXT_ONEAPI_DEVICE_INFO_COMPONENT_DEVICES:
  case PI_EXT_ONEAPI_DEVICE_INFO_COMPOSITE_DEVICE:
    return no_opencl_answer(o, dev);
  /* Features this plugin does not offer on any OpenCL device. */
  case PI_EXT_ONEAPI_DEVICE_INFO_BFLOAT16_MATH_FUNCTIONS:
  case PI_EXT_ONEAPI_DEVICE_INFO_CUDA_ASYNC_BARRIER:
  CASE_FEATURES_NOT_OFFERED
  case PI_EXT_INTEL_DEVICE_INFO_ESIMD_SUPPORT:
    return put_bool(o, 0);
  case PI_DEVICE_INFO_IMAGE_SRGB:
    return put_bool(o, device_supports_srgb(dev));
  case PI_DEVICE_INFO_BUILD_ON_SUBDEVICE: {
    /* A program built for a root GPU serves its sub-devices; CPU
     * sub-devices get their own build. */
    cl_device_type type = 0;
    ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    return put_bool(o, type == CL_DEVICE_TYPE_GPU);
  }
  case PI_DEVICE_INFO_ATOMIC_64:
    return put_bool(o,
                    device_has_ext(dev, "cl_khr_int64_base_atomics") &&
                        device_has_ext(dev, "cl_khr_int64_extended_atomics"));
  case PI_EXT_INTEL_DEVICE_INFO_MEM_CHANNEL_SUPPORT:
    return put_bool(o, device_has_ext(dev, "cl_intel_mem_channel_property"));
  case PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES:
  case PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES:
  case PI_EXT_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES:
  case PI_EXT_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES: {
    pi_bitfield caps = 0;
    pi_result r = atomic_capabilities(o->fn, dev, o->query, &caps);
    return r != PI_SUCCESS ? r : put_u64(o, caps);
  }
  case PI_EXT_INTEL_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES:
    return put_u32(o, 1); /* OpenCL has no queue indices: one. */
  case PI_DEVICE_INFO_BACKEND_VERSION: {
    char version[16];
    int v = device_version(dev);
    snprintf(version, sizeof version, "%d.%d", v / 10, v % 10);
    return put_str(o, version);
  }
  /* OpenCL bounds the number of work-groups only by size_t. The total is
   * one size_t; put_max_work_groups writes only the per-dimension arrays. */
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_GLOBAL_WORK_GROUPS:
    return put_size(o, SIZE_MAX);
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_1D:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_2D:
  case PI_EXT_ONEAPI_DEVICE_INFO_MAX_WORK_GROUPS_3D: {
    const size_t max[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
    return put_max_work_groups(o, max);
  }
  case PI_DEVICE_INFO_MAX_NUM_SUB_GROUPS: {
    /* OpenCL before 2.1 cannot tell, and says 0 without sub-groups; SYCL's
     * minimum is 1. */
    cl_uint n = 0;
    if (device_version(dev) >= 21) {
      pi_result r = info_check(o, "clGetDeviceInfo",
                               ICD_CALL(clGetDeviceInfo, dev,
                                        CL_DEVICE_MAX_NUM_SUB_GROUPS, sizeof n,
                                        &n, NULL));
      if (r != PI_SUCCESS)
        return r;
    }
    return put_u32(o, n ? n : 1);
  }
  case PI_DEVICE_INFO_SUB_GROUP_SIZES_INTEL:
    return sub_group_sizes(o, dev);
  case PI_DEVICE_INFO_USM_HOST_SUPPORT:
  case PI_DEVICE_INFO_USM_DEVICE_SUPPORT:
  case PI_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT:
  case PI_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT:
  case PI_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT:
    if (!device_has_ext(dev, USM_EXT))
      return put_u64(o, 0); /* no USM capabilities at all */
    return INFO_PASS(o, clGetDeviceInfo, dev);
  default:
    return INFO_PASS(o, clGetDeviceInfo, dev);
  }
}

pi_result ocl_piDevicePartition(
    pi_device device, const pi_device_partition_property *properties,
    pi_uint32 num_devices, pi_device *out_devices, pi_uint32 *out_num_devices) {
  if (properties && properties[0] == PI_EXT_INTEL_DEVICE_PARTITION_BY_CSLICE)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: partitioning by compute slice is Level Zero-only; use "
                "PI_DEVICE_PARTITION_BY_AFFINITY_DOMAIN or EQUALLY",
                FN);
  return CL_CALL(clCreateSubDevices, (cl_device_id)device,
                 (const cl_device_partition_property *)properties, num_devices,
                 (cl_device_id *)out_devices, out_num_devices);
}

pi_result ocl_piDeviceRetain(pi_device device) {
  return CL_CALL(clRetainDevice, (cl_device_id)device);
}

pi_result ocl_piDeviceRelease(pi_device device) {
  return CL_CALL(clReleaseDevice, (cl_device_id)device);
}

/* Whether the device takes SPIR-V: OpenCL 2.1's IL or cl_khr_il_program. */
int device_takes_spirv(cl_device_id dev) {
  if (device_version(dev) < 21 && !device_has_ext(dev, "cl_khr_il_program"))
    return 0;
  char *il = info_string(NULL, dev, CL_DEVICE_IL_VERSION);
  int yes = il && strstr(il, "SPIR-V") != NULL;
  free(il);
  return yes;
}

static int is_spirv_image(const struct pi_device_binary_struct *b) {
  if (b->Format == PI_DEVICE_BINARY_TYPE_SPIRV)
    return 1;
  /* An image of undetermined format is SPIR-V when it starts with the
   * SPIR-V magic number. */
  uint32_t magic = 0;
  if (b->Format != PI_DEVICE_BINARY_TYPE_NONE || !b->BinaryStart ||
      b->BinaryEnd - b->BinaryStart < 4)
    return 0;
  memcpy(&magic, b->BinaryStart, sizeof magic);
  return magic == 0x07230203u;
}

/* Whether the image's target names SPIR-V for the device's address width. */
static int spirv_target_fits(const struct pi_device_binary_struct *b,
                             cl_uint address_bits) {
  const char *t = b->DeviceTargetSpec ? b->DeviceTargetSpec : "";
  if (address_bits == 32)
    return strcmp(t, __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV32) == 0;
  return strncmp(t, __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64,
                 strlen(__SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64)) == 0;
}

/* The target of an ahead-of-time image for a device of Intel's OpenCL
 * runtimes (the only ones that load such images), or NULL. */
static const char *intel_aot_target(cl_device_id dev) {
  cl_platform_id plat = device_platform(dev);
  char *vendor = plat ? info_string(plat, NULL, CL_PLATFORM_VENDOR) : NULL;
  int intel = vendor && strstr(vendor, "Intel") != NULL;
  free(vendor);
  cl_device_type type = 0;
  if (!intel || ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_TYPE, sizeof type,
                         &type, NULL) != CL_SUCCESS)
    return NULL;
  if (type & CL_DEVICE_TYPE_CPU)
    return __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64_X86_64;
  if (type & CL_DEVICE_TYPE_GPU)
    return __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64_GEN;
  if (type & CL_DEVICE_TYPE_ACCELERATOR)
    return __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64_FPGA;
  return NULL;
}

/* Picks, in order: an ahead-of-time image for the device (Intel runtimes
 * only), a SPIR-V image when the device takes SPIR-V, an OpenCL C source
 * image when the device has a compiler. Anything else fails, naming what
 * was offered. */
/* What a device takes: its address bits and whether it has a compiler. */
static pi_result device_takes(const char *fn, cl_device_id dev,
                              cl_uint *address_bits, cl_bool *compiler) {
  *address_bits = 64;
  *compiler = CL_FALSE;
  cl_int err = ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_ADDRESS_BITS,
                        sizeof *address_bits, address_bits, NULL);
  if (err == CL_SUCCESS)
    err = ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_COMPILER_AVAILABLE,
                   sizeof *compiler, compiler, NULL);
  return err == CL_SUCCESS ? PI_SUCCESS
                           : check_cl(fn, "clGetDeviceInfo", err);
}

pi_result backend_binary_rank(const char *fn, pi_device device,
                              const struct pi_device_binary_struct *b,
                              int *rank) {
  cl_device_id dev = (cl_device_id)device;
  cl_uint address_bits;
  cl_bool compiler;
  TRY(device_takes(fn, dev, &address_bits, &compiler));
  const char *aot = intel_aot_target(dev);
  if (aot && b->Format == PI_DEVICE_BINARY_TYPE_NATIVE && target_is(b, aot))
    *rank = 0;
  else if (device_takes_spirv(dev) && is_spirv_image(b) &&
           spirv_target_fits(b, address_bits))
    *rank = 1;
  else if (compiler && (b->Format == PI_DEVICE_BINARY_TYPE_OPENCL_C ||
                        target_is(b, __SYCL_PI_DEVICE_BINARY_TARGET_OPENCL_C)))
    *rank = 2;
  else
    *rank = -1;
  return PI_SUCCESS;
}

pi_result backend_no_binary(const char *fn, pi_device device,
                            pi_device_binary *binaries,
                            pi_uint32 num_binaries) {
  cl_device_id dev = (cl_device_id)device;
  cl_uint address_bits;
  cl_bool compiler;
  TRY(device_takes(fn, dev, &address_bits, &compiler));
  const char *aot = intel_aot_target(dev);
  char offered[512], what[512];
  return fail(PI_ERROR_INVALID_BINARY,
              "%s: no image fits %s; it takes %s%s%s and was offered: %s", fn,
              describe_device(dev, what, sizeof what),
              aot ? "ahead-of-time images, " : "",
              device_takes_spirv(dev) ? "SPIR-V" : "no SPIR-V (no IL support)",
              compiler ? ", OpenCL C source" : ", no OpenCL C (no compiler)",
              binaries_offered(binaries, num_binaries, offered,
                               sizeof offered));
}

/* Whether `name` is one of the program's kernels. */
static int program_has_kernel(cl_program prog, const char *name) {
  size_t n = 0;
  if (ICD_CALL(clGetProgramInfo, prog, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &n) !=
      CL_SUCCESS)
    return 0;
  char *names = malloc(n + 1);
  int found = names &&
              ICD_CALL(clGetProgramInfo, prog, CL_PROGRAM_KERNEL_NAMES, n,
                       names, NULL) == CL_SUCCESS &&
              (names[n] = '\0', has_entry(names, name, ';'));
  free(names);
  return found;
}

/* Uses clGetDeviceFunctionPointerINTEL (cl_intel_function_pointers). As in
 * DPC++, a name the program knows as a kernel but whose address OpenCL cannot
 * give is PI_ERROR_FUNCTION_ADDRESS_IS_NOT_AVAILABLE; an unknown name is
 * PI_ERROR_INVALID_KERNEL_NAME. */
pi_result
ocl_piextGetDeviceFunctionPointer(pi_device device, pi_program program,
                                  const char *function_name,
                                  pi_uint64 *function_pointer_ret) {
  cl_device_id dev = (cl_device_id)device;
  const struct platform_state *ps = NULL;
  REQUIRE(function_name != NULL && function_pointer_ret != NULL);
  *function_pointer_ret = 0;
  pi_result r = device_state(FN, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  if (ps->ext.clGetDeviceFunctionPointerINTEL) {
    cl_ulong address = 0;
    cl_int err = ps->ext.clGetDeviceFunctionPointerINTEL(
        dev, (cl_program)program, function_name, &address);
    if (err == CL_SUCCESS) {
      *function_pointer_ret = address;
      return PI_SUCCESS;
    }
    if (err != CL_INVALID_ARG_VALUE)
      return CL_CHECK(clGetDeviceFunctionPointerINTEL, err);
  }
  if (!program_has_kernel((cl_program)program, function_name))
    return fail(PI_ERROR_INVALID_KERNEL_NAME,
                "%s: the program has no function '%s'", FN, function_name);
  return fail(PI_ERROR_FUNCTION_ADDRESS_IS_NOT_AVAILABLE,
              "%s: '%s' exists but OpenCL cannot give its address (needs "
              "cl_intel_function_pointers)",
              FN, function_name);
}

pi_result ocl_piextGetGlobalVariablePointer(
    pi_device Device, pi_program Program, const char *GlobalVariableName,
    size_t *GlobalVariableSize, void **GlobalVariablePointerRet) {
  cl_device_id dev = (cl_device_id)Device;
  const struct platform_state *ps = NULL;
  REQUIRE(GlobalVariableName != NULL && GlobalVariablePointerRet != NULL);
  pi_result r = device_state(FN, dev, &ps);
  if (r == PI_SUCCESS)
    r = need_feature(FN, dev, NULL, "clGetDeviceGlobalVariablePointerINTEL",
                     ps->ext.clGetDeviceGlobalVariablePointerINTEL != NULL,
                     "read and write device globals with "
                     "piextEnqueueDeviceGlobalVariableRead/Write");
  if (r != PI_SUCCESS)
    return r;
  size_t size = 0;
  r = EXT_CALL(ps, clGetDeviceGlobalVariablePointerINTEL, dev,
               (cl_program)Program, GlobalVariableName, &size,
               GlobalVariablePointerRet);
  if (r == PI_SUCCESS && GlobalVariableSize)
    *GlobalVariableSize = size;
  return r;
}

pi_result
ocl_piextDeviceGetNativeHandle(pi_device device,
                               pi_native_handle *nativeHandle) {
  return native_of(FN, device, nativeHandle);
}

pi_result
ocl_piextDeviceCreateWithNativeHandle(pi_native_handle nativeHandle,
                                      pi_platform platform, pi_device *device) {
  (void)platform; /* a cl_device_id knows its platform */
  REQUIRE(nativeHandle != 0 && device != NULL);
  *device = (pi_device)nativeHandle;
  return PI_SUCCESS;
}

/* clGetDeviceAndHostTimer and clGetHostTimer, OpenCL 2.1. */
pi_result ocl_piGetDeviceAndHostTimer(pi_device Device,
                                      uint64_t *DeviceTime,
                                      uint64_t *HostTime) {
  cl_device_id dev = (cl_device_id)Device;
  const struct platform_state *ps = NULL;
  pi_result r = device_state(FN, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  if (ps->version < 21 || device_version(dev) < 21) {
    char what[512];
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: %s predates OpenCL 2.1, which added device timers; use "
                "event profiling instead",
                FN, describe_device(dev, what, sizeof what));
  }
  cl_ulong device_time = 0, host_time = 0, resolution = 0;
  cl_int err = CL_SUCCESS;
  if (DeviceTime)
    err = ICD_CALL(clGetDeviceAndHostTimer, dev, &device_time, &host_time);
  else if (HostTime)
    err = ICD_CALL(clGetHostTimer, dev, &host_time);
  if (err == CL_INVALID_OPERATION &&
      ICD_CALL(clGetPlatformInfo, ps->id, CL_PLATFORM_HOST_TIMER_RESOLUTION,
               sizeof resolution, &resolution, NULL) == CL_SUCCESS &&
      resolution == 0) {
    char what[512];
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the platform of %s has no device and host timers "
                "(CL_PLATFORM_HOST_TIMER_RESOLUTION is 0); use event "
                "profiling instead",
                FN, describe_device(dev, what, sizeof what));
  }
  r = DeviceTime ? CL_CHECK(clGetDeviceAndHostTimer, err)
                 : CL_CHECK(clGetHostTimer, err);
  if (r == PI_SUCCESS && DeviceTime)
    *DeviceTime = device_time;
  if (r == PI_SUCCESS && HostTime)
    *HostTime = host_time;
  return r;
}
