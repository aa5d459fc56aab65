/*
 * program.c: the PI program functions of the OpenCL plugin: creation from
 * SPIR-V, OpenCL C source and binaries, compile, build and link (with the
 * build log in the last error), queries, specialization constants,
 * reference counts and native handles.
 */
#include "ocl_internal.h"

/* ---- Programs -------------------------------------------------------------
 */

/* Adds the build log of the first device whose build failed to the last
 * error message, so that piPluginGetLastError shows the compiler's words. */
static void append_build_log(cl_program prog) {
  cl_device_id devs[64];
  size_t n = 0;
  if (!prog || ICD_CALL(clGetProgramInfo, prog, CL_PROGRAM_DEVICES, sizeof devs,
                        devs, &n) != CL_SUCCESS)
    return;
  for (size_t i = 0; i < n / sizeof devs[0]; ++i) {
    cl_build_status status = CL_BUILD_NONE;
    size_t used = strlen(last_message), size = 0;
    ICD_CALL(clGetProgramBuildInfo, prog, devs[i], CL_PROGRAM_BUILD_STATUS,
             sizeof status, &status, NULL);
    if (status != CL_BUILD_ERROR ||
        ICD_CALL(clGetProgramBuildInfo, prog, devs[i], CL_PROGRAM_BUILD_LOG, 0,
                 NULL, &size) != CL_SUCCESS)
      continue;
    char *log = malloc(size + 1);
    if (log && ICD_CALL(clGetProgramBuildInfo, prog, devs[i],
                        CL_PROGRAM_BUILD_LOG, size, log, NULL) == CL_SUCCESS) {
      log[size] = '\0';
      snprintf(last_message + used, sizeof last_message - used,
               "; build log: %s", log);
    }
    free(log);
    return;
  }
}

/* Ends piProgramCompile, piProgramBuild and piProgramLink: OpenCL ran them
 * synchronously, so the PI callback (if any) runs now, once the work was
 * attempted, as OpenCL would have called it. */
static pi_result finish_build(pi_result r, pi_result build_failure,
                              cl_program prog,
                              void (*pfn_notify)(pi_program, void *),
                              void *user_data) {
  if (r == build_failure)
    append_build_log(prog);
  if (pfn_notify && prog && (r == PI_SUCCESS || r == build_failure))
    pfn_notify((pi_program)prog, user_data);
  return r;
}

/* clCreateProgramWithIL (OpenCL 2.1) or clCreateProgramWithILKHR. Devices
 * that take no SPIR-V fail with PI_ERROR_INVALID_OPERATION, the code OpenCL
 * itself gives (and DPC++'s plugin returns) when no device takes IL: the IL
 * may be fine, the device cannot consume it. */
pi_result ocl_piProgramCreate(pi_context context, const void *il,
                              size_t length, pi_program *res_program) {
  cl_context ctx = (cl_context)context;
  cl_device_id *devs = NULL;
  cl_uint n = 0;
  cl_int err;
  REQUIRE(res_program != NULL);
  *res_program = NULL;
  REQUIRE(il != NULL && length != 0);
  pi_result r = context_devices(FN, ctx, &devs, &n);
  if (r != PI_SUCCESS)
    return r;
  for (cl_uint i = 0; i < n; ++i)
    if (!device_takes_spirv(devs[i])) {
      char what[512];
      r = fail(PI_ERROR_INVALID_OPERATION,
               "%s: %s takes no SPIR-V (no SPIR-V in CL_DEVICE_IL_VERSION); "
               "use an OpenCL C source image (piclProgramCreateWithSource) "
               "or a native binary",
               FN, describe_device(devs[i], what, sizeof what));
      break;
    }
  const struct platform_state *ps = NULL;
  if (r == PI_SUCCESS && n)
    r = device_state(FN, devs[0], &ps);
  free(devs);
  if (r != PI_SUCCESS || !ps)
    return r;
  if (ps->version >= 21) {
    *res_program =
        (pi_program)ICD_CREATE(clCreateProgramWithIL, &err, ctx, il, length);
    return CL_CHECK(clCreateProgramWithIL, err);
  }
  if (!ps->ext.clCreateProgramWithILKHR)
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the platform lists cl_khr_il_program but does not expose "
                "clCreateProgramWithILKHR",
                FN);
  *res_program =
      (pi_program)ps->ext.clCreateProgramWithILKHR(ctx, il, length, &err);
  return CL_CHECK(clCreateProgramWithILKHR, err);
}

pi_result ocl_piclProgramCreateWithSource(pi_context context,
                                          pi_uint32 count,
                                          const char **strings,
                                          const size_t *lengths,
                                          pi_program *ret_program) {
  cl_int err;
  REQUIRE(ret_program != NULL);
  *ret_program =
      (pi_program)ICD_CREATE(clCreateProgramWithSource, &err,
                             (cl_context)context, count, strings, lengths);
  return CL_CHECK(clCreateProgramWithSource, err);
}

/* Whether `dev` is Mesa 22's rusticl (Debian 12's), which panics and
 * aborts the whole process on a binary whose first word is not the one
 * version of its format it knows (1): another implementation's binary, a
 * cross-device replay of one, or damaged bytes. */
static bool rusticl_22(cl_device_id dev) {
  cl_platform_id plat = device_platform(dev);
  char *pname = plat ? info_string(plat, NULL, CL_PLATFORM_NAME) : NULL;
  char *driver = pname && strcmp(pname, "rusticl") == 0
                     ? info_string(NULL, dev, CL_DRIVER_VERSION)
                     : NULL;
  bool is = driver && strncmp(driver, "22.", 3) == 0;
  free(pname);
  free(driver);
  return is;
}

pi_result backend_program_with_binary(const char *fn, pi_context context,
                                      const struct device_binaries *bins,
                                      pi_program *ret_program) {
  cl_int err;
  *ret_program = NULL;
  for (pi_uint32 i = 0; i < bins->num_devices; ++i) {
    uint32_t word = 0;
    if (bins->lengths[i] >= sizeof word)
      memcpy(&word, bins->binaries[i], sizeof word);
    if (word == 1 || !rusticl_22((cl_device_id)bins->device_list[i]))
      continue;
    if (bins->binary_status)
      bins->binary_status[i] = PI_ERROR_INVALID_BINARY;
    return fail(PI_ERROR_INVALID_BINARY,
                "%s: binary %u is not one rusticl made (its first word is %u, where "
                "rusticl's begin with 1: another implementation's, or damaged); "
                "rusticl 22 aborts the process on it, so it is refused here. Build "
                "the program from source or IL for this device",
                fn, (unsigned)i, (unsigned)word);
  }
  *ret_program = (pi_program)ICD_CREATE(
      clCreateProgramWithBinary, &err, (cl_context)context, bins->num_devices,
      (const cl_device_id *)bins->device_list, bins->lengths, bins->binaries,
      bins->binary_status);
  return check_cl(fn, "clCreateProgramWithBinary", err);
}

pi_result backend_program_info(pi_program program, const struct info_out *o) {
  return INFO_PASS(o, clGetProgramInfo, (cl_program)program);
}

pi_result backend_program_compile(const char *fn, pi_program program,
                                  const struct program_compile *in) {
  pi_result r =
      CL_CALL_IN(fn, clCompileProgram, (cl_program)program, in->num_devices,
                 (const cl_device_id *)in->device_list, in->options,
                 in->num_input_headers, (const cl_program *)in->input_headers,
                 in->header_include_names, NULL, NULL);
  return finish_build(r, PI_ERROR_COMPILE_PROGRAM_FAILURE, (cl_program)program,
                      in->pfn_notify, in->user_data);
}

pi_result
ocl_piProgramBuild(pi_program program, pi_uint32 num_devices,
                   const pi_device *device_list, const char *options,
                   void (*pfn_notify)(pi_program program, void *user_data),
                   void *user_data) {
  pi_result r = CL_CALL(clBuildProgram, (cl_program)program, num_devices,
                        (const cl_device_id *)device_list, options, NULL, NULL);
  return finish_build(r, PI_ERROR_BUILD_PROGRAM_FAILURE, (cl_program)program,
                      pfn_notify, user_data);
}

/* On a link failure *ret_program may still hold a program: its build log
 * tells why (it is added to the last error message). */
pi_result
ocl_piProgramLink(pi_context context, pi_uint32 num_devices,
                  const pi_device *device_list, const char *options,
                  pi_uint32 num_input_programs,
                  const pi_program *input_programs,
                  void (*pfn_notify)(pi_program program, void *user_data),
                  void *user_data, pi_program *ret_program) {
  cl_int err;
  REQUIRE(ret_program != NULL);
  *ret_program = NULL;
  /* The call goes through the context's implementation, and PoCL 3.1
   * dereferences a NULL input program instead of refusing it. */
  for (pi_uint32 i = 0; input_programs && i < num_input_programs; ++i)
    if (!input_programs[i])
      return fail(PI_ERROR_INVALID_PROGRAM, "%s: input program %u is NULL",
                  FN, (unsigned)i);
  cl_program prog =
      ICD_CREATE(clLinkProgram, &err, (cl_context)context, num_devices,
                 (const cl_device_id *)device_list, options, num_input_programs,
                 (const cl_program *)input_programs, NULL, NULL);
  *ret_program = (pi_program)prog;
  return finish_build(CL_CHECK(clLinkProgram, err),
                      PI_ERROR_LINK_PROGRAM_FAILURE, prog, pfn_notify,
                      user_data);
}

pi_result backend_program_build_info(pi_program program, pi_device device,
                                     const struct info_out *o) {
  return info_check(o, "clGetProgramBuildInfo",
                    ICD_CALL(clGetProgramBuildInfo, (cl_program)program,
                             (cl_device_id)device, o->query, o->size,
                             o->value, INFO_SIZE_RET(o)));
}

pi_result ocl_piProgramRetain(pi_program program) {
  return CL_CALL(clRetainProgram, (cl_program)program);
}

pi_result ocl_piProgramRelease(pi_program program) {
  return CL_CALL(clReleaseProgram, (cl_program)program);
}

/* clSetProgramSpecializationConstant (OpenCL 2.2). OpenCL only honours it
 * for programs made from SPIR-V on devices that support it; every failure
 * keeps OpenCL's code, with a message. */
pi_result
ocl_piextProgramSetSpecializationConstant(pi_program prog, pi_uint32 spec_id,
                                          size_t spec_size,
                                          const void *spec_value) {
  cl_context ctx = NULL;
  cl_device_id dev = NULL;
  const struct platform_state *ps = NULL;
  char what[512];
  pi_result r = program_context(FN, (cl_program)prog, &ctx);
  if (r == PI_SUCCESS)
    r = context_device(FN, ctx, NULL, &dev);
  if (r == PI_SUCCESS)
    r = device_state(FN, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  if (ps->version < 22)
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the platform of %s predates OpenCL 2.2, which added "
                "specialization constants; emulate them (pass the values as "
                "a kernel argument)",
                FN, describe_device(dev, what, sizeof what));
  cl_int err = ICD_CALL(clSetProgramSpecializationConstant, (cl_program)prog,
                        spec_id, spec_size, spec_value);
  if (err == CL_SUCCESS || err == ICD_MISSING_ENTRY)
    return check_cl(FN, "clSetProgramSpecializationConstant", err);
  return fail(pi_from_cl(err),
              "%s: clSetProgramSpecializationConstant(spec id %u) failed with "
              "%s (%d) on %s: OpenCL sets specialization constants only in "
              "programs made from SPIR-V on devices that support them; "
              "emulate them (pass the values as a kernel argument)",
              FN, (unsigned)spec_id, cl_error_name(err), (int)err,
              describe_device(dev, what, sizeof what));
}

pi_result
ocl_piextProgramGetNativeHandle(pi_program program,
                                pi_native_handle *nativeHandle) {
  return native_of(FN, program, nativeHandle);
}

pi_result ocl_piextProgramCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context,
    bool pluginOwnsNativeHandle, pi_program *program) {
  (void)context;
  pi_result r = adopt_native(FN, NATIVE_PROGRAM, nativeHandle,
                             pluginOwnsNativeHandle, program);
  if (r == PI_SUCCESS)
    *program = (pi_program)nativeHandle;
  return r;
}
