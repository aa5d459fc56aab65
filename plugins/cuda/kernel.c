/*
 * kernel.c: the PI kernel functions of the CUDA plugin: a kernel is a
 * CUfunction with its arguments kept until the launch (local memory as
 * dynamic shared memory); creation, arguments, kernel, group and sub-group
 * queries, exec info, reference counts and native handles.
 */
#include "cu_internal.h"

/* ---- Kernels ---------------------------------------------------------------
 * Arguments are kept per kernel until a launch copies them into the
 * driver's parameter list. Where the driver describes a kernel's
 * parameters (cuFuncGetParamInfo, CUDA 12.4), indices and sizes are checked
 * when set. */

static pi_result kernel_new(const char *fn, pi_program prog, CUfunction f,
                            const char *name, pi_kernel *out) {
  pi_kernel k = calloc(1, sizeof *k);
  if (!k || !(k->name = dup_str(name))) {
    free(k);
    return out_of_memory(fn);
  }
  atomic_init(&k->refs, 1);
  k->prog = prog;
  k->fn = f;
  k->num_params = SIZE_MAX;
  pthread_mutex_init(&k->lock, NULL);
  if (drv.cuFuncGetParamInfo) {
    size_t offset, size, n = 0, cap = 0;
    while (drv.cuFuncGetParamInfo(f, n, &offset, &size) == CUDA_SUCCESS) {
      if (n == cap) {
        size_t *grown =
            realloc(k->param_sizes, (cap = cap ? 2 * cap : 8) * sizeof *grown);
        if (!grown) {
          free(k->param_sizes);
          free(k->name);
          free(k);
          return out_of_memory(fn);
        }
        k->param_sizes = grown;
      }
      k->param_sizes[n++] = size;
    }
    k->num_params = n;
  }
  cu_piProgramRetain(prog);
  *out = k;
  return PI_SUCCESS;
}

pi_result cu_piKernelCreate(pi_program program, const char *kernel_name,
                            pi_kernel *ret_kernel) {
  CUmodule m = NULL;
  CUfunction f = NULL;
  REQUIRE(program != NULL && kernel_name != NULL && ret_kernel != NULL);
  *ret_kernel = NULL;
  TRY(program_module(FN, program, &m));
  TRY(use_context(FN, program->ctx->cu));
  CUresult err = drv.cuModuleGetFunction(&f, m, kernel_name);
  if (err == CUDA_ERROR_NOT_FOUND) {
    pthread_mutex_lock(&program->lock);
    fail(PI_ERROR_INVALID_KERNEL_NAME,
         "%s: the program has no kernel '%s'; its kernels: %.400s", FN,
         kernel_name,
         program->kernel_names && *program->kernel_names ? program->kernel_names
                                                         : "(none known)");
    pthread_mutex_unlock(&program->lock);
    return PI_ERROR_INVALID_KERNEL_NAME;
  }
  TRY(cu_check(FN, "cuModuleGetFunction", err));
  return kernel_new(FN, program, f, kernel_name, ret_kernel);
}

/* Stores argument `index`: `size` bytes at `value`, or, when `local`, a
 * local-memory argument of `size` bytes. */
static pi_result set_arg(const char *fn, pi_kernel k, pi_uint32 index,
                         size_t size, const void *value, bool local) {
  if (k->num_params != SIZE_MAX) {
    if (index >= k->num_params)
      return fail(PI_ERROR_INVALID_ARG_INDEX,
                  "%s: kernel '%s' has %zu parameter(s); there is no "
                  "argument %u",
                  fn, k->name, k->num_params, (unsigned)index);
    size_t want = k->param_sizes[index];
    if (local && want != 4 && want != 8)
      return fail(PI_ERROR_INVALID_ARG_SIZE,
                  "%s: argument %u of kernel '%s' is a %zu-byte parameter, "
                  "but a local-memory argument is passed as its offset (a 4- "
                  "or 8-byte integer)",
                  fn, (unsigned)index, k->name, want);
    if (!local && size != want)
      return fail(PI_ERROR_INVALID_ARG_SIZE,
                  "%s: argument %u of kernel '%s' is a %zu-byte parameter, "
                  "but %zu bytes were given",
                  fn, (unsigned)index, k->name, want, size);
  } else if (index >= 4096) {
    return fail(PI_ERROR_INVALID_ARG_INDEX,
                "%s: argument %u of kernel '%s' is beyond any kernel's "
                "parameters",
                fn, (unsigned)index, k->name);
  }
  if (local && size == 0)
    return fail(PI_ERROR_INVALID_ARG_SIZE,
                "%s: a local-memory argument needs a size", fn);
  unsigned char *copy = NULL;
  if (!local) {
    if (!(copy = malloc(size ? size : 1)))
      return out_of_memory(fn);
    memcpy(copy, value, size);
  }
  pthread_mutex_lock(&k->lock);
  if (index >= k->num_args) {
    struct karg *grown = realloc(k->args, (index + 1) * sizeof *grown);
    if (!grown) {
      pthread_mutex_unlock(&k->lock);
      free(copy);
      return out_of_memory(fn);
    }
    memset(grown + k->num_args, 0, (index + 1 - k->num_args) * sizeof *grown);
    k->args = grown;
    k->num_args = index + 1;
  }
  struct karg *a = &k->args[index];
  free(a->value);
  a->set = true;
  a->local = local;
  a->size = size;
  a->value = copy;
  pthread_mutex_unlock(&k->lock);
  return PI_SUCCESS;
}

/* A NULL arg_value with a size sets a local-memory argument: the bytes are
 * reserved in the launch's dynamic shared memory and the kernel gets their
 * offset there. */
pi_result cu_piKernelSetArg(pi_kernel kernel, pi_uint32 arg_index,
                            size_t arg_size, const void *arg_value) {
  REQUIRE(kernel != NULL);
  return set_arg(FN, kernel, arg_index, arg_size, arg_value, arg_value == NULL);
}

DEFINE_FACTS(kernel, k, .refs = atomic_load(&k->refs),
             .context = k->prog->ctx, .program = k->prog, .name = k->name)

pi_result backend_kernel_info(pi_kernel kernel, const struct info_out *o) {
  switch (o->query) {
  case PI_KERNEL_INFO_NUM_ARGS:
    if (kernel->num_params == SIZE_MAX)
      return fail(PI_ERROR_INVALID_OPERATION,
                  "%s: the driver cannot tell a kernel's parameters (it "
                  "needs CUDA 12.4's cuFuncGetParamInfo)",
                  o->fn);
    return put_u32(o, (uint32_t)kernel->num_params);
  case PI_KERNEL_INFO_ATTRIBUTES:
    return put_str(o, "");
  default:
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: query 0x%x is unknown to the CUDA plugin or not "
                "implemented by it",
                o->fn, (unsigned)o->query);
  }
}

pi_result func_attr(const char *fn, pi_kernel k, CUfunction_attribute a,
                    int *v) {
  *v = 0;
  return CUF(fn, cuFuncGetAttribute, v, a, k->fn);
}

/* The local memory a kernel's local-memory arguments ask for now. */
static size_t local_args_size(pi_kernel k) {
  size_t total = 0;
  pthread_mutex_lock(&k->lock);
  for (size_t i = 0; i < k->num_args; ++i)
    if (k->args[i].set && k->args[i].local)
      total += k->args[i].size;
  pthread_mutex_unlock(&k->lock);
  return total;
}

pi_result backend_kernel_group_info(pi_kernel kernel, pi_device device,
                                    const struct info_out *o) {
  pi_kernel k = kernel;
  int v = 0;
  if (device && device != k->prog->ctx->dev)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: the device is not the kernel's context's device", o->fn);
  TRY(use_context(o->fn, k->prog->ctx->cu));
  switch (o->query) {
  case PI_KERNEL_GROUP_INFO_WORK_GROUP_SIZE:
    TRY(func_attr(o->fn, k, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &v));
    return put_size(o, (size_t)v);
  case PI_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE: {
    /* PTX's .reqntid is not visible through the driver: {0, 0, 0} means
     * "not given", as in OpenCL. */
    size_t none[3] = {0, 0, 0};
    return put_info(o, none, sizeof none);
  }
  case PI_KERNEL_GROUP_INFO_LOCAL_MEM_SIZE:
    TRY(func_attr(o->fn, k, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &v));
    return put_u64(o, (uint64_t)v + local_args_size(k));
  case PI_KERNEL_GROUP_INFO_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
    TRY(device_attr(o->fn, k->prog->ctx->dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE,
                    &v));
    return put_size(o, (size_t)v);
  case PI_KERNEL_GROUP_INFO_PRIVATE_MEM_SIZE:
    TRY(func_attr(o->fn, k, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &v));
    return put_u64(o, (uint64_t)v);
  case PI_KERNEL_GROUP_INFO_NUM_REGS:
    TRY(func_attr(o->fn, k, CU_FUNC_ATTRIBUTE_NUM_REGS, &v));
    return put_u32(o, (uint32_t)v);
  case PI_KERNEL_GROUP_INFO_GLOBAL_WORK_SIZE:
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: PI_KERNEL_GROUP_INFO_GLOBAL_WORK_SIZE is for built-in "
                "kernels and custom devices only",
                o->fn);
  default:
    return unknown_query(o);
  }
}

/* Sub-groups are warps. Every value is a uint32_t in PI. */
pi_result backend_sub_group_info(pi_kernel kernel, pi_device device,
                                 const struct info_out *o, const void *input,
                                 size_t input_size) {
  pi_kernel k = kernel;
  int warp = 0, threads = 0;
  (void)input_size; /* a warp's size is the kernel's own */
  (void)input;
  if (device && device != k->prog->ctx->dev)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: the device is not the kernel's context's device", o->fn);
  TRY(use_context(o->fn, k->prog->ctx->cu));
  TRY(device_attr(o->fn, k->prog->ctx->dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE,
                  &warp));
  switch (o->query) {
  case PI_KERNEL_MAX_SUB_GROUP_SIZE:
    return put_u32(o, (uint32_t)warp);
  case PI_KERNEL_MAX_NUM_SUB_GROUPS:
    TRY(func_attr(o->fn, k, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &threads));
    return put_u32(o, (uint32_t)((threads + warp - 1) / (warp ? warp : 1)));
  case PI_KERNEL_COMPILE_NUM_SUB_GROUPS:
  case PI_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL:
    return put_u32(o, 0); /* PTX fixes neither */
  default:
    return unknown_query(o);
  }
}

pi_result cu_piKernelRetain(pi_kernel kernel) {
  REQUIRE(kernel != NULL);
  ref_retain(&kernel->refs);
  return PI_SUCCESS;
}

pi_result cu_piKernelRelease(pi_kernel kernel) {
  pi_kernel k = kernel;
  REQUIRE(k != NULL);
  if (!ref_release(&k->refs))
    return PI_SUCCESS;
  pi_program prog = k->prog;
  for (size_t i = 0; i < k->num_args; ++i)
    free(k->args[i].value);
  free(k->args);
  free(k->param_sizes);
  free(k->name);
  pthread_mutex_destroy(&k->lock);
  free(k);
  return cu_piProgramRelease(prog);
}

/* arg_value points at the USM pointer, as in DPC++ (arg_size is its size). */
pi_result cu_piextKernelSetArgPointer(pi_kernel kernel,
                                      pi_uint32 arg_index,
                                      size_t arg_size,
                                      const void *arg_value) {
  void *null = NULL;
  REQUIRE(kernel != NULL);
  if (!arg_value)
    return set_arg(FN, kernel, arg_index, sizeof null, &null, false);
  return set_arg(FN, kernel, arg_index, arg_size, arg_value, false);
}

/* Every USM allocation is reachable from every kernel (unified addressing),
 * so the USM settings need nothing; the cache configuration maps to
 * cuFuncSetCacheConfig. */
pi_result cu_piKernelSetExecInfo(pi_kernel kernel,
                                 pi_kernel_exec_info value_name,
                                 size_t param_value_size,
                                 const void *param_value) {
  REQUIRE(kernel != NULL);
  switch (value_name) {
  case PI_USM_INDIRECT_ACCESS:
  case PI_USM_PTRS:
    return PI_SUCCESS;
  case PI_EXT_KERNEL_EXEC_INFO_CACHE_CONFIG: {
    pi_kernel_cache_config config = PI_EXT_KERNEL_EXEC_INFO_CACHE_DEFAULT;
    REQUIRE(param_value != NULL && param_value_size >= sizeof config);
    memcpy(&config, param_value, sizeof config);
    CUfunc_cache cache = config == PI_EXT_KERNEL_EXEC_INFO_CACHE_LARGE_SLM
                             ? CU_FUNC_CACHE_PREFER_SHARED
                         : config == PI_EXT_KERNEL_EXEC_INFO_CACHE_LARGE_DATA
                             ? CU_FUNC_CACHE_PREFER_L1
                             : CU_FUNC_CACHE_PREFER_NONE;
    TRY(use_context(FN, kernel->prog->ctx->cu));
    return CU(cuFuncSetCacheConfig, kernel->fn, cache);
  }
  default:
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown setting 0x%x", FN,
                (unsigned)value_name);
  }
}

/* Wraps a CUfunction of the program's module. */
pi_result cu_piextKernelCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, pi_program program,
    bool pluginOwnsNativeHandle, pi_kernel *kernel) {
  (void)pluginOwnsNativeHandle; /* CUfunctions belong to their module */
  REQUIRE(nativeHandle != 0 && program != NULL && kernel != NULL);
  if (context && context != program->ctx)
    return fail(PI_ERROR_INVALID_CONTEXT,
                "%s: the program is of another context", FN);
  CUfunction f = (CUfunction)(uintptr_t)nativeHandle;
  const char *name = NULL;
  TRY(use_context(FN, program->ctx->cu));
  if (drv.cuFuncGetName)
    TRY(CU(cuFuncGetName, &name, f));
  return kernel_new(FN, program, f, name ? name : "(native kernel)", kernel);
}

pi_result cu_piextKernelGetNativeHandle(pi_kernel kernel,
                                        pi_native_handle *nativeHandle) {
  REQUIRE(kernel != NULL && nativeHandle != NULL);
  *nativeHandle = (pi_native_handle)(uintptr_t)kernel->fn;
  return PI_SUCCESS;
}

/* The blocks of this size that are resident at once on the whole device. */
pi_result cu_piextKernelSuggestMaxCooperativeGroupCount(
    pi_kernel kernel, size_t local_work_size, size_t dynamic_shared_memory_size,
    pi_uint32 *group_count_ret) {
  int per_sm = 0, sms = 0;
  REQUIRE(kernel != NULL && group_count_ret != NULL && local_work_size > 0 &&
          local_work_size <= INT_MAX);
  TRY(use_context(FN, kernel->prog->ctx->cu));
  TRY(CU(cuOccupancyMaxActiveBlocksPerMultiprocessor, &per_sm, kernel->fn,
         (int)local_work_size,
         dynamic_shared_memory_size + local_args_size(kernel)));
  TRY(device_attr(FN, kernel->prog->ctx->dev,
                  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms));
  *group_count_ret = (pi_uint32)per_sm * (pi_uint32)sms;
  return PI_SUCCESS;
}

/* The buffer's device pointer; the access property is a hint. */
pi_result
cu_piextKernelSetArgMemObj(pi_kernel kernel, pi_uint32 arg_index,
                           const pi_mem_obj_property *arg_properties,
                           const pi_mem *arg_value) {
  (void)arg_properties;
  REQUIRE(kernel != NULL);
  CUdeviceptr ptr = arg_value && *arg_value ? (*arg_value)->ptr : 0;
  return set_arg(FN, kernel, arg_index, sizeof ptr, &ptr, false);
}

pi_result cu_piextKernelSetArgSampler(pi_kernel kernel,
                                      pi_uint32 arg_index,
                                      const pi_sampler *arg_value) {
  (void)kernel;
  (void)arg_index;
  (void)arg_value;
  return no_samplers(FN);
}
