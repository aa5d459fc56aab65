/*
 * kernel.c: the PI kernel functions of the Level Zero plugin: a kernel keeps
 * its Level Zero kernel per device and its arguments; creation, arguments,
 * kernel, group and sub-group queries, exec info, reference counts and
 * native handles.
 */
#include "lz_internal.h"

/* ---- Kernels ---------------------------------------------------------------------- */

static pi_result kernel_new(const char *fn, pi_program p, const char *name,
                            pi_kernel *out) {
  pi_kernel k = calloc(1, sizeof *k);
  ze_kernel_handle_t *ze = calloc(p->ndevs ? p->ndevs : 1, sizeof *ze);
  char *nm = strdup(name);
  if (!k || !ze || !nm) {
    free(k);
    free(ze);
    free(nm);
    return out_of_memory(fn);
  }
  k->program = p;
  k->name = nm;
  k->n = p->ndevs;
  k->ze = ze;
  atomic_init(&k->refs, 1);
  pthread_mutex_init(&k->lock, NULL);
  ref_retain(&p->refs);
  *out = k;
  return PI_SUCCESS;
}

static pi_result kernel_release(const char *fn, pi_kernel k) {
  if (!ref_release(&k->refs))
    return PI_SUCCESS;
  pi_result r = PI_SUCCESS;
  /* A kernel made from a native handle shares it between the devices and
   * destroys it (once) only if it owns it. */
  for (pi_uint32 i = 0; i < k->n; ++i)
    if (k->ze[i] && (k->native ? k->owns_native && i == 0 : true)) {
      pi_result kr = check_ze(fn, "zeKernelDestroy", zeKernelDestroy(k->ze[i]));
      r = r == PI_SUCCESS ? kr : r;
    }
  pi_result pr = program_release(fn, k->program);
  free(k->ze);
  free(k->name);
  pthread_mutex_destroy(&k->lock);
  free(k);
  return r == PI_SUCCESS ? pr : r;
}

/* One Level Zero kernel per device the program was built for. */
pi_result lz_piKernelCreate(pi_program program, const char *kernel_name,
                            pi_kernel *ret_kernel) {
  NEED(program, PI_ERROR_INVALID_PROGRAM);
  REQUIRE(kernel_name != NULL && ret_kernel != NULL);
  *ret_kernel = NULL;
  pi_program p = program;
  pthread_mutex_lock(&p->lock);
  pi_kernel k = NULL;
  pi_result r = p->state == PROG_EXE
                    ? kernel_new(FN, p, kernel_name, &k)
                    : fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE,
                           "%s: the program is not built", FN);
  ze_kernel_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
                           .pKernelName = kernel_name};
  pi_uint32 made = 0;
  for (pi_uint32 i = 0; r == PI_SUCCESS && i < p->ndevs; ++i) {
    struct prog_dev *d = &p->devs[i];
    ze_result_t zr = ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    for (uint32_t m = 0; m < d->nmodules && zr == ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
         ++m)
      zr = zeKernelCreate(d->modules[m], &desc, &k->ze[i]);
    if (zr == ZE_RESULT_SUCCESS) {
      ++made;
    } else {
      k->ze[i] = NULL;
      if (d->nmodules)
        r = fail(pi_from_ze(zr),
                 "%s: zeKernelCreate('%s') failed with %s (0x%x) on device "
                 "'%s'%s",
                 FN, kernel_name, ze_result_name(zr), (unsigned)zr,
                 dev_name(d->device),
                 zr == ZE_RESULT_ERROR_INVALID_KERNEL_NAME
                     ? ": the program has no such kernel"
                     : "");
    }
  }
  if (r == PI_SUCCESS && made == 0)
    r = fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE,
             "%s: the program built for none of its devices", FN);
  pthread_mutex_unlock(&p->lock);
  if (r != PI_SUCCESS) {
    if (k)
      kernel_release(FN, k);
    return r;
  }
  *ret_kernel = k;
  return PI_SUCCESS;
}

/* Sets an argument on every device's kernel. A NULL arg_value with a size
 * is a local-memory argument, as in Level Zero. */
static pi_result kernel_set(const char *fn, pi_kernel k, pi_uint32 index,
                            size_t size, const void *value) {
  if (!k)
    return fail(PI_ERROR_INVALID_KERNEL, "%s: the kernel is NULL", fn);
  pthread_mutex_lock(&k->lock);
  pi_result r = PI_SUCCESS;
  for (pi_uint32 i = 0; r == PI_SUCCESS && i < k->n; ++i)
    if (k->ze[i] && (i == 0 || k->ze[i] != k->ze[0])) {
      ze_result_t zr = zeKernelSetArgumentValue(k->ze[i], index, size, value);
      if (zr != ZE_RESULT_SUCCESS)
        r = fail(pi_from_ze(zr),
                 "%s: zeKernelSetArgumentValue(kernel '%s', argument %u, %zu "
                 "bytes) failed with %s (0x%x)",
                 fn, k->name, (unsigned)index, size, ze_result_name(zr),
                 (unsigned)zr);
    }
  pthread_mutex_unlock(&k->lock);
  return r;
}

pi_result lz_piKernelSetArg(pi_kernel kernel, pi_uint32 arg_index,
                            size_t arg_size, const void *arg_value) {
  return kernel_set(FN, kernel, arg_index, arg_size, arg_value);
}

/* A buffer argument is its device pointer; an image, its Level Zero image;
 * a NULL memory object, a null pointer. The access property is a hint. */
pi_result lz_piextKernelSetArgMemObj(
    pi_kernel kernel, pi_uint32 arg_index,
    const pi_mem_obj_property *arg_properties, const pi_mem *arg_value) {
  (void)arg_properties;
  pi_mem m = arg_value ? *arg_value : NULL;
  if (m && m->kind == MEM_IMAGE)
    return kernel_set(FN, kernel, arg_index, sizeof m->image, &m->image);
  void *ptr = m ? m->ptr : NULL;
  return kernel_set(FN, kernel, arg_index, sizeof ptr, &ptr);
}

pi_result lz_piextKernelSetArgSampler(pi_kernel kernel,
                                      pi_uint32 arg_index,
                                      const pi_sampler *arg_value) {
  REQUIRE(arg_value != NULL && *arg_value != NULL);
  return kernel_set(FN, kernel, arg_index, sizeof(ze_sampler_handle_t),
                    &(*arg_value)->ze);
}

/* arg_value points at the USM pointer, as in DPC++ (arg_size is its
 * size): Level Zero takes it as any by-value argument. */
pi_result lz_piextKernelSetArgPointer(pi_kernel kernel,
                                      pi_uint32 arg_index,
                                      size_t arg_size,
                                      const void *arg_value) {
  REQUIRE(arg_value != NULL && arg_size == sizeof(void *));
  return kernel_set(FN, kernel, arg_index, arg_size, arg_value);
}

/* The Level Zero kernel of `k` for device `d` (or its parent). */
ze_kernel_handle_t kernel_for(pi_kernel k, pi_device d) {
  struct prog_dev *pd = prog_dev_of(k->program, d);
  return pd ? k->ze[pd - k->program->devs] : NULL;
}

static pi_result kernel_props(const char *fn, pi_kernel k, pi_device d,
                              ze_kernel_properties_t *props,
                              ze_kernel_preferred_group_size_properties_t *pref) {
  ze_kernel_handle_t z = d ? kernel_for(k, d) : NULL;
  for (pi_uint32 i = 0; !z && !d && i < k->n; ++i)
    z = k->ze[i];
  if (!z)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: kernel '%s' was not built for device '%s'", fn, k->name,
                dev_name(d));
  *props = (ze_kernel_properties_t){.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES,
                                    .pNext = pref};
  if (pref)
    *pref = (ze_kernel_preferred_group_size_properties_t){
        .stype = ZE_STRUCTURE_TYPE_KERNEL_PREFERRED_GROUP_SIZE_PROPERTIES};
  return check_ze(fn, "zeKernelGetProperties", zeKernelGetProperties(z, props));
}

DEFINE_FACTS(kernel, k, .refs = atomic_load(&k->refs),
             .context = k->program->context, .program = k->program,
             .name = k->name)

pi_result backend_kernel_info(pi_kernel kernel, const struct info_out *o) {
  ze_kernel_properties_t props;
  pi_result r;
  switch (o->query) {
  case PI_KERNEL_INFO_NUM_ARGS:
    r = kernel_props(o->fn, kernel, NULL, &props, NULL);
    return r != PI_SUCCESS ? r : put_u32(o, props.numKernelArgs);
  case PI_KERNEL_INFO_ATTRIBUTES: {
    ze_kernel_handle_t z = NULL;
    for (pi_uint32 i = 0; !z && i < kernel->n; ++i)
      z = kernel->ze[i];
    if (!z)
      return fail(PI_ERROR_INVALID_KERNEL, "%s: kernel '%s' has no Level Zero "
                  "kernel on any device", o->fn, kernel->name);
    uint32_t size = 0;
    if ((r = ZE_CALL_IN(o->fn, zeKernelGetSourceAttributes, z, &size, NULL)) !=
        PI_SUCCESS)
      return r;
    /* Drivers copy into the buffer *pString points at (as Intel's does);
     * the 1.4 text also lets them point *pString at a string of their own.
     * Both work here: the buffer is freed, whatever s ends up as. */
    char *buf = calloc(1, (size_t)size + 1), *s = buf;
    if (!buf)
      return out_of_memory(o->fn);
    if ((r = ZE_CALL_IN(o->fn, zeKernelGetSourceAttributes, z, &size, &s)) ==
        PI_SUCCESS)
      r = put_str(o, s ? s : "");
    free(buf);
    return r;
  }
  case PI_EXT_ONEAPI_KERNEL_INFO_WORK_GROUP_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_KERNEL_INFO_SUB_GROUP_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_KERNEL_INFO_SUB_GROUP_PROGRESS_AT_WORK_GROUP_LEVEL:
  case PI_EXT_ONEAPI_KERNEL_INFO_WORK_ITEM_PROGRESS_AT_ROOT_GROUP_LEVEL:
  case PI_EXT_ONEAPI_KERNEL_INFO_WORK_ITEM_PROGRESS_AT_WORK_GROUP_LEVEL:
  case PI_EXT_ONEAPI_KERNEL_INFO_WORK_ITEM_PROGRESS_AT_SUB_GROUP_LEVEL:
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: query 0x%x: Level Zero states no forward-progress "
                "guarantees for kernel '%s'",
                o->fn, (unsigned)o->query, kernel->name);
  default:
    return unknown_query(o);
  }
}

pi_result backend_kernel_group_info(pi_kernel kernel, pi_device device,
                                    const struct info_out *o) {
  NEED_IN(o->fn, device, PI_ERROR_INVALID_DEVICE);
  const ze_device_compute_properties_t *c = &device->compute;
  ze_kernel_properties_t props;
  ze_kernel_preferred_group_size_properties_t pref;
  pi_result r = kernel_props(o->fn, kernel, device, &props, &pref);
  if (r != PI_SUCCESS)
    return r;
  switch (o->query) {
  case PI_KERNEL_GROUP_INFO_GLOBAL_WORK_SIZE: {
    size_t s[3] = {(size_t)c->maxGroupCountX * c->maxGroupSizeX,
                   (size_t)c->maxGroupCountY * c->maxGroupSizeY,
                   (size_t)c->maxGroupCountZ * c->maxGroupSizeZ};
    return put_info(o, s, sizeof s);
  }
  case PI_KERNEL_GROUP_INFO_WORK_GROUP_SIZE:
    return put_size(o, c->maxTotalGroupSize);
  case PI_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE: {
    size_t s[3] = {props.requiredGroupSizeX, props.requiredGroupSizeY,
                   props.requiredGroupSizeZ};
    return put_info(o, s, sizeof s);
  }
  case PI_KERNEL_GROUP_INFO_LOCAL_MEM_SIZE:
    return put_u64(o, props.localMemSize);
  case PI_KERNEL_GROUP_INFO_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
    return put_size(o, pref.preferredMultiple ? pref.preferredMultiple
                                               : props.maxSubgroupSize);
  case PI_KERNEL_GROUP_INFO_PRIVATE_MEM_SIZE:
    return put_u64(o, props.privateMemSize);
  case PI_KERNEL_GROUP_INFO_NUM_REGS:
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: Level Zero does not report the registers of kernel '%s'",
                o->fn, kernel->name);
  default:
    return unknown_query(o);
  }
}

pi_result backend_sub_group_info(pi_kernel kernel, pi_device device,
                                 const struct info_out *o, const void *input,
                                 size_t input_size) {
  (void)input_size; /* Level Zero's answers do not depend on the */
  (void)input;      /* local size */
  NEED_IN(o->fn, device, PI_ERROR_INVALID_DEVICE);
  ze_kernel_properties_t props;
  pi_result r = kernel_props(o->fn, kernel, device, &props, NULL);
  if (r != PI_SUCCESS)
    return r;
  switch (o->query) {
  case PI_KERNEL_MAX_SUB_GROUP_SIZE:
    return put_u32(o, props.maxSubgroupSize);
  case PI_KERNEL_MAX_NUM_SUB_GROUPS:
    return put_u32(o, props.maxNumSubgroups);
  case PI_KERNEL_COMPILE_NUM_SUB_GROUPS:
    return put_u32(o, props.requiredNumSubGroups);
  case PI_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL:
    return put_u32(o, props.requiredSubgroupSize);
  default:
    return unknown_query(o);
  }
}

pi_result lz_piKernelRetain(pi_kernel kernel) {
  NEED(kernel, PI_ERROR_INVALID_KERNEL);
  ref_retain(&kernel->refs);
  return PI_SUCCESS;
}

pi_result lz_piKernelRelease(pi_kernel kernel) {
  NEED(kernel, PI_ERROR_INVALID_KERNEL);
  return kernel_release(FN, kernel);
}

/* PI_USM_INDIRECT_ACCESS: zeKernelSetIndirectAccess for host, device and
 * shared memory. PI_USM_PTRS lists what a kernel reaches indirectly, which
 * Level Zero does not need. The cache configuration maps to
 * zeKernelSetCacheConfig. */
pi_result lz_piKernelSetExecInfo(pi_kernel kernel,
                                 pi_kernel_exec_info value_name,
                                 size_t param_value_size,
                                 const void *param_value) {
  NEED(kernel, PI_ERROR_INVALID_KERNEL);
  pi_result r = PI_SUCCESS;
  switch (value_name) {
  case PI_USM_INDIRECT_ACCESS: {
    REQUIRE(param_value != NULL && param_value_size >= sizeof(pi_bool));
    pi_bool on;
    memcpy(&on, param_value, sizeof on);
    ze_kernel_indirect_access_flags_t f =
        on ? ZE_KERNEL_INDIRECT_ACCESS_FLAG_HOST |
                 ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE |
                 ZE_KERNEL_INDIRECT_ACCESS_FLAG_SHARED
           : 0;
    pthread_mutex_lock(&kernel->lock);
    for (pi_uint32 i = 0; r == PI_SUCCESS && i < kernel->n; ++i)
      if (kernel->ze[i])
        r = ZE_CALL(zeKernelSetIndirectAccess, kernel->ze[i], f);
    pthread_mutex_unlock(&kernel->lock);
    return r;
  }
  case PI_USM_PTRS:
    return PI_SUCCESS;
  case PI_EXT_KERNEL_EXEC_INFO_CACHE_CONFIG: {
    REQUIRE(param_value != NULL &&
            param_value_size >= sizeof(pi_kernel_cache_config));
    pi_kernel_cache_config cfg;
    memcpy(&cfg, param_value, sizeof cfg);
    ze_cache_config_flags_t f =
        cfg == PI_EXT_KERNEL_EXEC_INFO_CACHE_LARGE_SLM    ? ZE_CACHE_CONFIG_FLAG_LARGE_SLM
        : cfg == PI_EXT_KERNEL_EXEC_INFO_CACHE_LARGE_DATA ? ZE_CACHE_CONFIG_FLAG_LARGE_DATA
                                                          : 0;
    pthread_mutex_lock(&kernel->lock);
    for (pi_uint32 i = 0; r == PI_SUCCESS && i < kernel->n; ++i)
      if (kernel->ze[i])
        r = ZE_CALL(zeKernelSetCacheConfig, kernel->ze[i], f);
    pthread_mutex_unlock(&kernel->lock);
    return r;
  }
  default:
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown kernel exec info 0x%x",
                FN, (unsigned)value_name);
  }
}

pi_result lz_piextKernelGetNativeHandle(pi_kernel kernel,
                                        pi_native_handle *nativeHandle) {
  NEED(kernel, PI_ERROR_INVALID_KERNEL);
  ze_kernel_handle_t z = NULL;
  for (pi_uint32 i = 0; !z && i < kernel->n; ++i)
    z = kernel->ze[i];
  return native_of(FN, z, nativeHandle);
}

/* The kernel is taken to serve every device of the program. */
pi_result lz_piextKernelCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, pi_program program,
    bool pluginOwnsNativeHandle, pi_kernel *kernel) {
  (void)context;
  NEED(program, PI_ERROR_INVALID_PROGRAM);
  REQUIRE(nativeHandle != 0 && kernel != NULL);
  ze_kernel_handle_t z = (ze_kernel_handle_t)nativeHandle;
  size_t size = 0;
  pi_result r = ZE_CALL(zeKernelGetName, z, &size, NULL);
  char *name = r == PI_SUCCESS ? calloc(1, size + 1) : NULL;
  if (r == PI_SUCCESS && !name)
    r = out_of_memory(FN);
  if (r == PI_SUCCESS)
    r = ZE_CALL(zeKernelGetName, z, &size, name);
  pi_kernel k = NULL;
  if (r == PI_SUCCESS)
    r = kernel_new(FN, program, name, &k);
  free(name);
  if (r != PI_SUCCESS)
    return r;
  for (pi_uint32 i = 0; i < k->n; ++i)
    k->ze[i] = z;
  k->native = true;
  k->owns_native = pluginOwnsNativeHandle;
  *kernel = k;
  return PI_SUCCESS;
}
