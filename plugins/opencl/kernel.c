/*
 * kernel.c: the PI kernel functions of the OpenCL plugin: creation,
 * arguments (values, memory objects, samplers, USM pointers), kernel, group
 * and sub-group queries, exec info, reference counts and native handles.
 */
#include "ocl_internal.h"

/* ---- Kernels --------------------------------------------------------------
 */

pi_result ocl_piKernelCreate(pi_program program, const char *kernel_name,
                             pi_kernel *ret_kernel) {
  cl_int err;
  REQUIRE(ret_kernel != NULL);
  *ret_kernel = (pi_kernel)ICD_CREATE(clCreateKernel, &err, (cl_program)program,
                                      kernel_name);
  return CL_CHECK(clCreateKernel, err);
}

/* A NULL arg_value with a size sets a local-memory argument, as in OpenCL. */
pi_result ocl_piKernelSetArg(pi_kernel kernel, pi_uint32 arg_index,
                             size_t arg_size, const void *arg_value) {
  return CL_CALL(clSetKernelArg, (cl_kernel)kernel, arg_index, arg_size,
                 arg_value);
}

pi_result backend_kernel_info(pi_kernel kernel, const struct info_out *o) {
  return INFO_PASS(o, clGetKernelInfo, (cl_kernel)kernel);
}

pi_result backend_kernel_group_info(pi_kernel kernel, pi_device device,
                                    const struct info_out *o) {
  if (o->query == PI_KERNEL_GROUP_INFO_NUM_REGS)
    return no_opencl_answer(o, (cl_device_id)device);
  return info_check(o, "clGetKernelWorkGroupInfo",
                    ICD_CALL(clGetKernelWorkGroupInfo, (cl_kernel)kernel,
                             (cl_device_id)device, o->query, o->size,
                             o->value, INFO_SIZE_RET(o)));
}

/* The largest sub-group size of a device, 1 for devices without
 * sub-groups. */
static size_t max_sub_group_size(cl_device_id dev) {
  size_t sizes[64], n = 0, best = 1;
  if (device_has_ext(dev, "cl_intel_required_subgroup_size") &&
      ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_SUB_GROUP_SIZES_INTEL,
               sizeof sizes, sizes, &n) == CL_SUCCESS)
    for (size_t i = 0; i < n / sizeof sizes[0]; ++i)
      best = sizes[i] > best ? sizes[i] : best;
  return best;
}

/* clGetKernelSubGroupInfo where the platform has it (OpenCL 2.1, or
 * cl_khr_subgroups); CL_INVALID_OPERATION, OpenCL's "no sub-groups",
 * elsewhere. */
static cl_int ask_sub_groups(cl_kernel kernel, cl_device_id dev,
                             const struct platform_state *ps, cl_uint query,
                             const void *input, size_t input_size,
                             size_t *value) {
  if (ps->version >= 21 && device_version(dev) >= 21)
    return ICD_CALL(clGetKernelSubGroupInfo, kernel, dev, query, input_size,
                    input, sizeof *value, value, NULL);
  if (ps->ext.clGetKernelSubGroupInfoKHR &&
      device_has_ext(dev, "cl_khr_subgroups"))
    return ps->ext.clGetKernelSubGroupInfoKHR(kernel, dev, query, input_size,
                                              input, sizeof *value, value,
                                              NULL);
  return CL_INVALID_OPERATION;
}

/* Every value is a uint32_t in PI (a size_t in OpenCL). Devices without
 * sub-groups answer as DPC++ does: one sub-group per work-group, of the
 * device's largest sub-group size, none fixed by the kernel. */
pi_result backend_sub_group_info(pi_kernel kernel, pi_device device,
                                 const struct info_out *o, const void *input,
                                 size_t input_size) {
  cl_device_id dev = (cl_device_id)device;
  const struct platform_state *ps = NULL;
  size_t local[16] = {0}, value = 0;
  /* Unknown queries fail here: below, OpenCL's CL_INVALID_OPERATION (a
   * device without sub-groups) becomes a default answer for any query. */
  if (o->query != PI_KERNEL_MAX_SUB_GROUP_SIZE &&
      o->query != PI_KERNEL_MAX_NUM_SUB_GROUPS &&
      o->query != PI_KERNEL_COMPILE_NUM_SUB_GROUPS &&
      o->query != PI_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown sub-group query 0x%x",
                o->fn, o->query);
  pi_result r = device_state(o->fn, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  if (o->query == PI_KERNEL_MAX_SUB_GROUP_SIZE && !input) {
    /* OpenCL needs a local size: the device's largest, in one dimension. */
    cl_int err = ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_MAX_WORK_ITEM_SIZES,
                          sizeof local, local, NULL);
    if (err != CL_SUCCESS)
      return check_cl(o->fn, "clGetDeviceInfo", err);
    input = local;
    input_size = sizeof local[0];
  }
  /* A kernel fixes its sub-group size only through the Intel extension. */
  int askable = o->query != PI_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL ||
                device_has_ext(dev, "cl_intel_required_subgroup_size");
  cl_int err = askable ? ask_sub_groups((cl_kernel)kernel, dev, ps, o->query,
                                        input, input_size, &value)
                       : CL_INVALID_OPERATION;
  /* PoCL 5.0 (with sub-groups of up to 64 work-items) answers 0 for a
   * kernel's largest number of sub-groups: no kernel runs in none. The
   * work-group size the kernel allows, in sub-groups of the size it runs
   * with then, is that number. */
  if (err == CL_SUCCESS && value == 0 &&
      o->query == PI_KERNEL_MAX_NUM_SUB_GROUPS) {
    size_t wg = 0, sg = 0;
    if (ICD_CALL(clGetKernelWorkGroupInfo, (cl_kernel)kernel, dev,
                 CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) == CL_SUCCESS &&
        wg && ask_sub_groups((cl_kernel)kernel, dev, ps, PI_KERNEL_MAX_SUB_GROUP_SIZE,
                             &wg, sizeof wg, &sg) == CL_SUCCESS && sg)
      value = (wg + sg - 1) / sg;
  }
  /* A size or number of 0 left means none, as CL_INVALID_OPERATION does. */
  bool none = err == CL_SUCCESS && value == 0 &&
              (o->query == PI_KERNEL_MAX_NUM_SUB_GROUPS ||
               o->query == PI_KERNEL_MAX_SUB_GROUP_SIZE);
  if (err == CL_INVALID_OPERATION || none) {
    err = CL_SUCCESS;
    value = o->query == PI_KERNEL_MAX_NUM_SUB_GROUPS ? 1
            : o->query == PI_KERNEL_MAX_SUB_GROUP_SIZE
                ? max_sub_group_size(dev)
                : 0;
  }
  if (err != CL_SUCCESS)
    return info_check(o, "clGetKernelSubGroupInfo", err);
  return put_u32(o, value > UINT32_MAX ? UINT32_MAX : (uint32_t)value);
}

pi_result ocl_piKernelRetain(pi_kernel kernel) {
  return CL_CALL(clRetainKernel, (cl_kernel)kernel);
}

pi_result ocl_piKernelRelease(pi_kernel kernel) {
  return CL_CALL(clReleaseKernel, (cl_kernel)kernel);
}

/* The device of a kernel's context that has `ext` (see context_device). */
static pi_result kernel_device(const char *fn, cl_kernel kernel,
                               const char *ext, cl_device_id *dev) {
  cl_context ctx = NULL;
  cl_int err = ICD_CALL(clGetKernelInfo, kernel, CL_KERNEL_CONTEXT, sizeof ctx,
                        &ctx, NULL);
  if (err != CL_SUCCESS)
    return check_cl(fn, "clGetKernelInfo", err);
  return context_device(fn, ctx, ext, dev);
}

/* arg_value points at the USM pointer, as in DPC++ (arg_size is its size). */
pi_result ocl_piextKernelSetArgPointer(pi_kernel kernel,
                                       pi_uint32 arg_index,
                                       size_t arg_size,
                                       const void *arg_value) {
  cl_device_id dev = NULL;
  const struct platform_state *ps = NULL;
  void *ptr = NULL;
  (void)arg_size;
  pi_result r = kernel_device(FN, (cl_kernel)kernel, USM_EXT, &dev);
  if (r != PI_SUCCESS)
    return r;
  NEED_USM(dev, ps, clSetKernelArgMemPointerINTEL);
  if (arg_value)
    memcpy(&ptr, arg_value, sizeof ptr);
  return EXT_CALL(ps, clSetKernelArgMemPointerINTEL, (cl_kernel)kernel,
                  arg_index, ptr);
}

/* PI_USM_INDIRECT_ACCESS lets a kernel reach every USM allocation; without
 * USM there is nothing to reach, so it succeeds doing nothing.
 * PI_EXT_KERNEL_EXEC_INFO_CACHE_CONFIG is a hint OpenCL has no knob for. */
pi_result ocl_piKernelSetExecInfo(pi_kernel kernel,
                                  pi_kernel_exec_info value_name,
                                  size_t param_value_size,
                                  const void *param_value) {
  cl_kernel k = (cl_kernel)kernel;
  cl_device_id dev = NULL;
  const struct platform_state *ps = NULL;
  pi_result r;
  switch (value_name) {
  case PI_USM_INDIRECT_ACCESS: {
    REQUIRE(param_value != NULL && param_value_size >= sizeof(pi_bool));
    pi_bool on;
    memcpy(&on, param_value, sizeof on);
    if ((r = kernel_device(FN, k, USM_EXT, &dev)) != PI_SUCCESS ||
        !device_has_ext(dev, USM_EXT))
      return r;
    static const cl_kernel_exec_info kinds[] = {
        CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL,
        CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL,
        CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL};
    cl_bool value = on ? CL_TRUE : CL_FALSE;
    for (size_t i = 0; i < 3 && r == PI_SUCCESS; ++i)
      r = CL_CALL(clSetKernelExecInfo, k, kinds[i], sizeof value, &value);
    return r;
  }
  case PI_USM_PTRS:
    if ((r = kernel_device(FN, k, USM_EXT, &dev)) != PI_SUCCESS)
      return r;
    NEED_USM(dev, ps, clSetKernelArgMemPointerINTEL);
    return CL_CALL(clSetKernelExecInfo, k, CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL,
                   param_value_size, param_value);
  case PI_EXT_KERNEL_EXEC_INFO_CACHE_CONFIG:
    return PI_SUCCESS;
  default:
    return CL_CALL(clSetKernelExecInfo, k, value_name, param_value_size,
                   param_value);
  }
}

pi_result ocl_piextKernelCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, pi_program program,
    bool pluginOwnsNativeHandle, pi_kernel *kernel) {
  (void)context;
  (void)program;
  pi_result r = adopt_native(FN, NATIVE_KERNEL, nativeHandle,
                             pluginOwnsNativeHandle, kernel);
  if (r == PI_SUCCESS)
    *kernel = (pi_kernel)nativeHandle;
  return r;
}

pi_result
ocl_piextKernelGetNativeHandle(pi_kernel kernel,
                               pi_native_handle *nativeHandle) {
  return native_of(FN, kernel, nativeHandle);
}

/* OpenCL promises nothing about work-groups running at the same time, so
 * the only cooperative group count that is always safe is 1 (0 when one
 * group of this size does not fit the device). A warning with PI_SUCCESS
 * says so through piPluginGetLastError. */
pi_result ocl_piextKernelSuggestMaxCooperativeGroupCount(
    pi_kernel kernel, size_t local_work_size, size_t dynamic_shared_memory_size,
    pi_uint32 *group_count_ret) {
  cl_device_id dev = NULL;
  size_t max_group = 0;
  cl_ulong kernel_local = 0, device_local = 0;
  REQUIRE(group_count_ret != NULL);
  pi_result r = kernel_device(FN, (cl_kernel)kernel, NULL, &dev);
  if (r == PI_SUCCESS)
    r = CL_CALL(clGetKernelWorkGroupInfo, (cl_kernel)kernel, dev,
                CL_KERNEL_WORK_GROUP_SIZE, sizeof max_group, &max_group, NULL);
  if (r == PI_SUCCESS)
    r = CL_CALL(clGetKernelWorkGroupInfo, (cl_kernel)kernel, dev,
                CL_KERNEL_LOCAL_MEM_SIZE, sizeof kernel_local, &kernel_local,
                NULL);
  if (r == PI_SUCCESS)
    r = CL_CALL(clGetDeviceInfo, dev, CL_DEVICE_LOCAL_MEM_SIZE,
                sizeof device_local, &device_local, NULL);
  if (r != PI_SUCCESS)
    return r;
  int fits = local_work_size <= max_group &&
             kernel_local + dynamic_shared_memory_size <= device_local;
  *group_count_ret = fits ? 1 : 0;
  return fail(PI_SUCCESS,
              "%s: OpenCL does not guarantee concurrent work-groups; "
              "suggesting %u cooperative group(s)",
              FN, (unsigned)*group_count_ret);
}

/* The access property is a hint OpenCL takes from the kernel itself. */
pi_result
ocl_piextKernelSetArgMemObj(pi_kernel kernel, pi_uint32 arg_index,
                            const pi_mem_obj_property *arg_properties,
                            const pi_mem *arg_value) {
  (void)arg_properties;
  return CL_CALL(clSetKernelArg, (cl_kernel)kernel, arg_index, sizeof(cl_mem),
                 arg_value);
}

pi_result ocl_piextKernelSetArgSampler(pi_kernel kernel,
                                       pi_uint32 arg_index,
                                       const pi_sampler *arg_value) {
  return CL_CALL(clSetKernelArg, (cl_kernel)kernel, arg_index,
                 sizeof(cl_sampler), arg_value);
}
