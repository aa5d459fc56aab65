/*
 * program.c: the PI program functions of the Level Zero plugin: a program
 * keeps its SPIR-V and specialization constants until piProgramBuild (or
 * piProgramLink) creates its modules; creation, compile, build and link,
 * build logs, queries, specialization constants, reference counts, native
 * handles, and device function and global variable pointers.
 */
#include "lz_internal.h"

/* ---- Programs ----------------------------------------------------------------------
 * A program holds SPIR-V (or native binaries per device) until it is built;
 * piProgramBuild creates one module per device, piProgramLink one per input
 * program and device, linked with zeModuleDynamicLink. The specialization
 * constants set on a program go to zeModuleCreate in ze_module_constants_t. */

static pi_result program_new(const char *fn, pi_context c,
                             enum program_state state, pi_uint32 n,
                             const pi_device *devices, pi_program *out) {
  pi_program p = calloc(1, sizeof *p);
  struct prog_dev *devs = calloc(n ? n : 1, sizeof *devs);
  if (!p || !devs) {
    free(p);
    free(devs);
    return out_of_memory(fn);
  }
  for (pi_uint32 i = 0; i < n; ++i) {
    devs[i].device = devices[i];
    devs[i].status = PI_PROGRAM_BUILD_STATUS_NONE;
  }
  p->context = c;
  p->state = state;
  p->ndevs = n;
  p->devs = devs;
  atomic_init(&p->refs, 1);
  pthread_mutex_init(&p->lock, NULL);
  context_retain(c);
  *out = p;
  return PI_SUCCESS;
}

/* Destroys the modules and logs of one device's build. */
static void prog_dev_clear(struct prog_dev *d, bool destroy_modules) {
  for (uint32_t m = 0; destroy_modules && m < d->nmodules; ++m)
    if (d->modules[m])
      zeModuleDestroy(d->modules[m]);
  free(d->modules);
  d->modules = NULL;
  d->nmodules = 0;
  if (d->log)
    zeModuleBuildLogDestroy(d->log);
  d->log = NULL;
}

pi_result program_release(const char *fn, pi_program p) {
  if (!ref_release(&p->refs))
    return PI_SUCCESS;
  for (pi_uint32 i = 0; i < p->ndevs; ++i) {
    /* A program made from a native module shares it between its devices
     * and destroys it (once) only if it owns it. */
    bool destroy = p->shared_module ? p->owns_native && i == 0 : true;
    prog_dev_clear(&p->devs[i], destroy);
    free((void *)p->devs[i].binary);
  }
  for (size_t i = 0; i < p->nspecs; ++i)
    free(p->specs[i].value);
  free(p->specs);
  free(p->devs);
  free(p->il);
  free(p->options);
  pi_result r = context_release(fn, p->context);
  pthread_mutex_destroy(&p->lock);
  free(p);
  return r;
}

pi_result lz_piProgramCreate(pi_context context, const void *il,
                             size_t length, pi_program *res_program) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(res_program != NULL);
  *res_program = NULL;
  if (!is_spirv(il, length))
    return fail(PI_ERROR_INVALID_BINARY,
                "%s: the %zu bytes given are not SPIR-V (no 0x07230203 magic "
                "number, or not a whole number of 32-bit words, or shorter "
                "than a SPIR-V header); Level Zero takes SPIR-V",
                FN, length);
  pi_program p;
  pi_result r = program_new(FN, context, PROG_IL, context->ndevices,
                            context->devices, &p);
  if (r != PI_SUCCESS)
    return r;
  if (!(p->il = malloc(length))) {
    program_release(FN, p);
    return out_of_memory(FN);
  }
  memcpy(p->il, il, length);
  p->il_size = length;
  *res_program = p;
  return PI_SUCCESS;
}

/* Native binaries per device; a binary that is SPIR-V makes an IL program. */
pi_result backend_program_with_binary(const char *fn, pi_context context,
                                      const struct device_binaries *bins,
                                      pi_program *ret_program) {
  NEED_IN(fn, context, PI_ERROR_INVALID_CONTEXT);
  for (pi_uint32 i = 0; i < bins->num_devices; ++i) {
    if (!bins->device_list[i] ||
        !context_has_device(context, bins->device_list[i]))
      return fail(PI_ERROR_INVALID_DEVICE,
                  "%s: device %u is NULL or not in the context", fn,
                  (unsigned)i);
    if (!bins->binaries[i] || !bins->lengths[i]) {
      if (bins->binary_status)
        bins->binary_status[i] = PI_ERROR_INVALID_BINARY;
      return fail(PI_ERROR_INVALID_VALUE, "%s: binary %u is empty", fn,
                  (unsigned)i);
    }
  }
  if (is_spirv(bins->binaries[0], bins->lengths[0])) {
    pi_result r = lz_piProgramCreate(context, bins->binaries[0],
                                     bins->lengths[0], ret_program);
    for (pi_uint32 i = 0; bins->binary_status && i < bins->num_devices; ++i)
      bins->binary_status[i] = r;
    return r;
  }
  pi_program p = NULL;
  pi_result r = program_new(fn, context, PROG_NATIVE, bins->num_devices,
                            bins->device_list, &p);
  for (pi_uint32 i = 0; r == PI_SUCCESS && i < bins->num_devices; ++i) {
    unsigned char *copy = malloc(bins->lengths[i]);
    if (!copy) {
      r = out_of_memory(fn);
      break;
    }
    memcpy(copy, bins->binaries[i], bins->lengths[i]);
    p->devs[i].binary = copy;
    p->devs[i].binary_size = bins->lengths[i];
  }
  for (pi_uint32 i = 0; bins->binary_status && i < bins->num_devices; ++i)
    bins->binary_status[i] = r;
  if (r != PI_SUCCESS) {
    if (p)
      program_release(fn, p);
    return r;
  }
  *ret_program = p;
  return PI_SUCCESS;
}

struct prog_dev *prog_dev_of(pi_program p, pi_device d) {
  for (pi_uint32 i = 0; i < p->ndevs; ++i)
    if (p->devs[i].device == d)
      return &p->devs[i];
  for (pi_uint32 i = 0; d && d->parent && i < p->ndevs; ++i)
    if (p->devs[i].device == d->parent)
      return &p->devs[i];
  return NULL;
}

/* The build log of a module, appended to the last error message. */
static void append_log(ze_module_build_log_handle_t log) {
  size_t size = 0;
  if (!log || zeModuleBuildLogGetString(log, &size, NULL) != ZE_RESULT_SUCCESS ||
      size <= 1)
    return;
  char *s = malloc(size);
  if (s && zeModuleBuildLogGetString(log, &size, s) == ZE_RESULT_SUCCESS) {
    s[size - 1] = '\0';
    size_t used = strlen(last_message);
    snprintf(last_message + used, sizeof last_message - used,
             "; build log: %s", s);
  }
  free(s);
}

/* zeModuleCreate for one device, with the specialization constants. */
static pi_result module_create(const char *fn, pi_context c, pi_device dev,
                               bool native, const unsigned char *bin,
                               size_t size, const char *options,
                               const struct spec_const *specs, size_t nspecs,
                               ze_module_handle_t *module,
                               ze_module_build_log_handle_t *log) {
  uint32_t *ids = calloc(nspecs ? nspecs : 1, sizeof *ids);
  const void **values = calloc(nspecs ? nspecs : 1, sizeof *values);
  if (!ids || !values) {
    free(ids);
    free(values);
    return out_of_memory(fn);
  }
  for (size_t i = 0; i < nspecs; ++i) {
    ids[i] = specs[i].id;
    values[i] = specs[i].value;
  }
  ze_module_constants_t consts = {(uint32_t)nspecs, ids, values};
  ze_module_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                           .format = native ? ZE_MODULE_FORMAT_NATIVE
                                            : ZE_MODULE_FORMAT_IL_SPIRV,
                           .inputSize = size,
                           .pInputModule = bin,
                           .pBuildFlags = options ? options : "",
                           .pConstants = nspecs ? &consts : NULL};
  *module = NULL;
  *log = NULL;
  ze_result_t zr = zeModuleCreate(c->ze, dev->ze, &desc, module, log);
  free(ids);
  free(values);
  if (zr != ZE_RESULT_SUCCESS) {
    *module = NULL;
    pi_result r = fail(pi_from_ze(zr),
                       "%s: zeModuleCreate failed with %s (0x%x) on device "
                       "'%s'",
                       fn, ze_result_name(zr), (unsigned)zr, dev_name(dev));
    append_log(*log);
    return r;
  }
  return PI_SUCCESS;
}

static pi_result program_devices(const char *fn, pi_program p, pi_uint32 n,
                                 const pi_device *list, bool *want) {
  for (pi_uint32 i = 0; i < p->ndevs; ++i)
    want[i] = n == 0;
  for (pi_uint32 k = 0; k < n; ++k) {
    struct prog_dev *d = list ? prog_dev_of(p, list[k]) : NULL;
    if (!d)
      return fail(PI_ERROR_INVALID_DEVICE,
                  "%s: device %u is NULL or not a device of the program", fn,
                  (unsigned)k);
    want[d - p->devs] = true;
  }
  return PI_SUCCESS;
}

static char *strdup_or_empty(const char *s) { return strdup(s ? s : ""); }

pi_result lz_piProgramBuild(pi_program program, pi_uint32 num_devices,
                            const pi_device *device_list,
                            const char *options,
                            void (*pfn_notify)(pi_program program,
                                                      void *user_data),
                            void *user_data) {
  pi_program p = program;
  NEED(p, PI_ERROR_INVALID_PROGRAM);
  bool want[64];
  if (p->ndevs > 64)
    return fail(PI_ERROR_INVALID_VALUE, "%s: programs of more than 64 devices "
                "are not supported", FN);
  pthread_mutex_lock(&p->lock);
  pi_result r = PI_SUCCESS;
  if (p->state != PROG_IL && p->state != PROG_NATIVE)
    r = fail(PI_ERROR_INVALID_OPERATION,
             "%s: the program is %s; only programs made from SPIR-V or native "
             "binaries are built (link compiled programs with piProgramLink)",
             FN, p->state == PROG_OBJECT ? "compiled" : "already built");
  if (r == PI_SUCCESS)
    r = program_devices(FN, p, num_devices, device_list, want);
  char *opts = r == PI_SUCCESS ? strdup_or_empty(options) : NULL;
  if (r == PI_SUCCESS && !opts)
    r = out_of_memory(FN);
  if (r == PI_SUCCESS) {
    free(p->options);
    p->options = opts;
  }
  bool any_failed = false;
  for (pi_uint32 i = 0; r == PI_SUCCESS && i < p->ndevs; ++i) {
    struct prog_dev *d = &p->devs[i];
    if (!want[i])
      continue;
    prog_dev_clear(d, true);
    bool native = p->state == PROG_NATIVE;
    ze_module_handle_t *mods = calloc(1, sizeof *mods);
    if (!mods) {
      r = out_of_memory(FN);
      break;
    }
    d->modules = mods;
    pi_result br = module_create(
        FN, p->context, d->device, native, native ? d->binary : p->il,
        native ? d->binary_size : p->il_size, p->options, p->specs, p->nspecs,
        &mods[0], &d->log);
    if (br == PI_SUCCESS) {
      d->nmodules = 1;
      d->status = PI_PROGRAM_BUILD_STATUS_SUCCESS;
    } else {
      d->status = PI_PROGRAM_BUILD_STATUS_ERROR;
      if (br != PI_ERROR_BUILD_PROGRAM_FAILURE && br != PI_ERROR_INVALID_BINARY)
        r = br;
      else if (!any_failed) {
        any_failed = true;
        r = PI_SUCCESS; /* the message stays; other devices still build */
      }
    }
  }
  char failure[sizeof last_message];
  if (any_failed)
    memcpy(failure, last_message, sizeof failure);
  if (r == PI_SUCCESS && !any_failed)
    p->state = PROG_EXE;
  else if (r == PI_SUCCESS)
    p->state = PROG_EXE; /* built where it could be: the log tells the rest */
  pthread_mutex_unlock(&p->lock);
  if (r == PI_SUCCESS && any_failed)
    r = fail(PI_ERROR_BUILD_PROGRAM_FAILURE, "%s", failure);
  if (pfn_notify && (r == PI_SUCCESS || r == PI_ERROR_BUILD_PROGRAM_FAILURE))
    pfn_notify(p, user_data);
  return r;
}

/* Level Zero compiles and links in zeModuleCreate: compiling records the
 * options, and piProgramLink creates the modules. */
pi_result backend_program_compile(const char *fn, pi_program program,
                                  const struct program_compile *in) {
  pi_program p = program;
  if (in->num_input_headers)
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: headers are for OpenCL C source; Level Zero compiles "
                "SPIR-V, which has none",
                fn);
  bool want[64];
  if (p->ndevs > 64)
    return fail(PI_ERROR_INVALID_VALUE, "%s: programs of more than 64 devices "
                "are not supported", fn);
  pthread_mutex_lock(&p->lock);
  pi_result r =
      p->state == PROG_IL
          ? program_devices(fn, p, in->num_devices, in->device_list, want)
          : fail(PI_ERROR_INVALID_OPERATION,
                 "%s: only a program made from SPIR-V can be "
                 "compiled",
                 fn);
  char *opts = r == PI_SUCCESS ? strdup_or_empty(in->options) : NULL;
  if (r == PI_SUCCESS && !opts)
    r = out_of_memory(fn);
  if (r == PI_SUCCESS) {
    free(p->options);
    p->options = opts;
    p->state = PROG_OBJECT;
  }
  pthread_mutex_unlock(&p->lock);
  if (r == PI_SUCCESS && in->pfn_notify)
    in->pfn_notify(p, in->user_data);
  return r;
}

/* "compile options link options" for one input. */
static char *join_options(const char *a, const char *b) {
  a = a ? a : "";
  b = b ? b : "";
  size_t n = strlen(a) + strlen(b) + 2;
  char *s = malloc(n);
  if (s)
    snprintf(s, n, "%s%s%s", a, *a && *b ? " " : "", b);
  return s;
}

/* One module per input program and device, linked with zeModuleDynamicLink.
 * On a build or link failure *ret_program still holds the program: its
 * build log tells why. */
pi_result lz_piProgramLink(
    pi_context context, pi_uint32 num_devices, const pi_device *device_list,
    const char *options, pi_uint32 num_input_programs,
    const pi_program *input_programs,
    void (*pfn_notify)(pi_program program, void *user_data), void *user_data,
    pi_program *ret_program) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(ret_program != NULL);
  *ret_program = NULL;
  if (num_input_programs == 0 || !input_programs)
    return fail(PI_ERROR_INVALID_VALUE, "%s: there are no programs to link",
                FN);
  for (pi_uint32 i = 0; i < num_input_programs; ++i) {
    pi_program in = input_programs[i];
    if (!in)
      return fail(PI_ERROR_INVALID_PROGRAM, "%s: input program %u is NULL", FN,
                  (unsigned)i);
    pthread_mutex_lock(&in->lock);
    bool ok = in->state == PROG_OBJECT || in->state == PROG_IL;
    pthread_mutex_unlock(&in->lock);
    if (!ok)
      return fail(PI_ERROR_INVALID_PROGRAM,
                  "%s: input program %u is neither compiled nor SPIR-V", FN,
                  (unsigned)i);
  }
  const pi_device *devs = num_devices ? device_list : context->devices;
  pi_uint32 ndevs = num_devices ? num_devices : context->ndevices;
  pi_result r = devs ? context_check_devices(FN, ndevs, devs)
                     : fail(PI_ERROR_INVALID_VALUE, "%s: device_list is NULL",
                            FN);
  pi_program p = NULL;
  if (r == PI_SUCCESS)
    r = program_new(FN, context, PROG_EXE, ndevs, devs, &p);
  if (r != PI_SUCCESS)
    return r;
  p->options = strdup_or_empty(options);
  bool failed = false;
  for (pi_uint32 i = 0; r == PI_SUCCESS && i < ndevs && !failed; ++i) {
    struct prog_dev *d = &p->devs[i];
    d->modules = calloc(num_input_programs, sizeof *d->modules);
    if (!d->modules || !p->options) {
      r = out_of_memory(FN);
      break;
    }
    for (pi_uint32 k = 0; r == PI_SUCCESS && k < num_input_programs; ++k) {
      pi_program in = input_programs[k];
      pthread_mutex_lock(&in->lock);
      char *opts = join_options(in->options, options);
      ze_module_build_log_handle_t log = NULL;
      pi_result mr = opts ? module_create(FN, context, d->device, false,
                                          in->il, in->il_size, opts, in->specs,
                                          in->nspecs, &d->modules[k], &log)
                          : out_of_memory(FN);
      pthread_mutex_unlock(&in->lock);
      free(opts);
      if (mr == PI_SUCCESS) {
        d->nmodules = k + 1;
        if (log)
          zeModuleBuildLogDestroy(log);
      } else if (mr == PI_ERROR_BUILD_PROGRAM_FAILURE) {
        d->log = log;
        d->status = PI_PROGRAM_BUILD_STATUS_ERROR;
        failed = true;
        break;
      } else {
        if (log)
          zeModuleBuildLogDestroy(log);
        r = mr;
      }
    }
    if (r != PI_SUCCESS || failed)
      break;
    ze_result_t zr = zeModuleDynamicLink(d->nmodules, d->modules, &d->log);
    if (zr == ZE_RESULT_SUCCESS) {
      d->status = PI_PROGRAM_BUILD_STATUS_SUCCESS;
    } else {
      d->status = PI_PROGRAM_BUILD_STATUS_ERROR;
      failed = true;
      fail(PI_ERROR_LINK_PROGRAM_FAILURE,
           "%s: zeModuleDynamicLink failed with %s (0x%x) on device '%s'", FN,
           ze_result_name(zr), (unsigned)zr, dev_name(d->device));
      append_log(d->log);
    }
  }
  if (r != PI_SUCCESS) {
    program_release(FN, p);
    return r;
  }
  *ret_program = p;
  if (failed) {
    char msg[sizeof last_message];
    memcpy(msg, last_message, sizeof msg);
    r = fail(PI_ERROR_LINK_PROGRAM_FAILURE, "%s", msg);
  }
  if (pfn_notify)
    pfn_notify(p, user_data);
  return r;
}

pi_result backend_program_build_info(pi_program program, pi_device device,
                                     const struct info_out *o) {
  pi_program p = program;
  NEED_IN(o->fn, device, PI_ERROR_INVALID_DEVICE);
  pthread_mutex_lock(&p->lock);
  struct prog_dev *d = prog_dev_of(p, device);
  pi_result r;
  if (!d) {
    r = fail(PI_ERROR_INVALID_DEVICE, "%s: device '%s' is not a device of the "
             "program", o->fn, dev_name(device));
  } else if (o->query == PI_PROGRAM_BUILD_INFO_STATUS) {
    int32_t s = p->state == PROG_OBJECT ? PI_PROGRAM_BUILD_STATUS_SUCCESS
                                        : (int32_t)d->status;
    r = put_info(o, &s, sizeof s);
  } else if (o->query == PI_PROGRAM_BUILD_INFO_OPTIONS) {
    r = put_str(o, p->options ? p->options : "");
  } else if (o->query == PI_PROGRAM_BUILD_INFO_BINARY_TYPE) {
    r = put_u32(o, p->state == PROG_OBJECT
                       ? PI_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
                   : d->nmodules ? PI_PROGRAM_BINARY_TYPE_EXECUTABLE
                                 : PI_PROGRAM_BINARY_TYPE_NONE);
  } else if (o->query == PI_PROGRAM_BUILD_INFO_LOG) {
    size_t size = 0;
    if (!d->log) {
      r = put_str(o, "");
    } else if ((r = ZE_CALL_IN(o->fn, zeModuleBuildLogGetString, d->log, &size,
                               NULL)) == PI_SUCCESS) {
      char *s = calloc(1, size + 1);
      if (!s)
        r = out_of_memory(o->fn);
      else if ((r = ZE_CALL_IN(o->fn, zeModuleBuildLogGetString, d->log, &size,
                               s)) == PI_SUCCESS)
        r = put_str(o, s);
      free(s);
    }
  } else {
    r = unknown_query(o);
  }
  pthread_mutex_unlock(&p->lock);
  return r;
}

/* The kernel names of a device's modules, ';'-separated (malloc'd). */
static pi_result kernel_names(const char *fn, struct prog_dev *d, char **out,
                              size_t *count) {
  size_t len = 1, n = 0;
  char *s = calloc(1, 1);
  for (uint32_t m = 0; s && m < d->nmodules; ++m) {
    uint32_t k = 0;
    pi_result r = check_ze(fn, "zeModuleGetKernelNames",
                           zeModuleGetKernelNames(d->modules[m], &k, NULL));
    const char **names = r == PI_SUCCESS ? calloc(k ? k : 1, sizeof *names)
                                         : NULL;
    if (r == PI_SUCCESS && names)
      r = check_ze(fn, "zeModuleGetKernelNames",
                   zeModuleGetKernelNames(d->modules[m], &k, names));
    for (uint32_t i = 0; r == PI_SUCCESS && names && i < k; ++i) {
      len += strlen(names[i]) + 1;
      char *ns = realloc(s, len);
      if (!ns) {
        free(s);
        s = NULL;
        break;
      }
      s = ns;
      if (n++)
        strcat(s, ";");
      strcat(s, names[i]);
    }
    free(names);
    if (r != PI_SUCCESS) {
      free(s);
      return r;
    }
  }
  if (!s)
    return out_of_memory(fn);
  *out = s;
  *count = n;
  return PI_SUCCESS;
}

/* The binary of one device: the native binary of its one module when
 * built, else the input (SPIR-V or native). */
static pi_result device_binary(const char *fn, pi_program p,
                               struct prog_dev *d, unsigned char *dst,
                               size_t *size) {
  if (d->nmodules == 1)
    return check_ze(fn, "zeModuleGetNativeBinary",
                    zeModuleGetNativeBinary(d->modules[0], size, dst));
  if (d->nmodules > 1)
    return fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE,
                "%s: a program linked from %u modules has no single binary",
                fn, (unsigned)d->nmodules);
  const unsigned char *src = p->state == PROG_NATIVE ? d->binary : p->il;
  size_t n = p->state == PROG_NATIVE ? d->binary_size : p->il_size;
  if (dst && src)
    memcpy(dst, src, n);
  *size = n;
  return PI_SUCCESS;
}

/* A program's devices are fixed when it is made. */
DEFINE_FACTS(program, p, .refs = atomic_load(&p->refs),
             .context = p->context, .devices.n = p->ndevs)

pi_result backend_program_info(pi_program program, const struct info_out *o) {
  pi_program p = program;
  pthread_mutex_lock(&p->lock);
  pi_result r = PI_SUCCESS;
  switch (o->query) {
  case PI_PROGRAM_INFO_DEVICES: {
    pi_device devs[64];
    pi_uint32 n = p->ndevs < 64 ? p->ndevs : 64;
    for (pi_uint32 i = 0; i < n; ++i)
      devs[i] = p->devs[i].device;
    r = put_info(o, devs, n * sizeof devs[0]);
    break;
  }
  case PI_PROGRAM_INFO_SOURCE:
    r = put_str(o, ""); /* SPIR-V and binaries have no source */
    break;
  case PI_PROGRAM_INFO_BINARY_SIZES: {
    size_t sizes[64];
    pi_uint32 n = p->ndevs < 64 ? p->ndevs : 64;
    for (pi_uint32 i = 0; r == PI_SUCCESS && i < n; ++i)
      r = device_binary(o->fn, p, &p->devs[i], NULL, &sizes[i]);
    if (r == PI_SUCCESS)
      r = put_info(o, sizes, n * sizeof sizes[0]);
    break;
  }
  case PI_PROGRAM_INFO_BINARIES: {
    /* param_value is an array of one buffer per device, each as large as
     * PI_PROGRAM_INFO_BINARY_SIZES said. */
    size_t need = p->ndevs * sizeof(unsigned char *);
    if (o->value && o->size < need) {
      r = fail(PI_ERROR_INVALID_VALUE,
               "%s: query 0x%x needs %zu bytes of pointers but "
               "param_value_size is %zu",
               o->fn, (unsigned)o->query, need, o->size);
      break;
    }
    unsigned char **bufs = o->value;
    for (pi_uint32 i = 0; bufs && r == PI_SUCCESS && i < p->ndevs; ++i) {
      size_t size = 0;
      if (bufs[i] && (r = device_binary(o->fn, p, &p->devs[i], NULL, &size)) ==
                         PI_SUCCESS)
        r = device_binary(o->fn, p, &p->devs[i], bufs[i], &size);
    }
    if (r == PI_SUCCESS && o->size_ret)
      *o->size_ret = need;
    break;
  }
  case PI_PROGRAM_INFO_NUM_KERNELS:
  case PI_PROGRAM_INFO_KERNEL_NAMES: {
    struct prog_dev *d = NULL;
    for (pi_uint32 i = 0; !d && i < p->ndevs; ++i)
      if (p->devs[i].nmodules)
        d = &p->devs[i];
    if (!d) {
      r = fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE,
               "%s: the program is not built for any device, so it has no "
               "kernels yet",
               o->fn);
      break;
    }
    char *names = NULL;
    size_t count = 0;
    if ((r = kernel_names(o->fn, d, &names, &count)) == PI_SUCCESS)
      r = o->query == PI_PROGRAM_INFO_NUM_KERNELS ? put_size(o, count)
                                                    : put_str(o, names);
    free(names);
    break;
  }
  default:
    r = unknown_query(o);
  }
  pthread_mutex_unlock(&p->lock);
  return r;
}

pi_result lz_piProgramRetain(pi_program program) {
  NEED(program, PI_ERROR_INVALID_PROGRAM);
  ref_retain(&program->refs);
  return PI_SUCCESS;
}

pi_result lz_piProgramRelease(pi_program program) {
  NEED(program, PI_ERROR_INVALID_PROGRAM);
  return program_release(FN, program);
}

/* Records {id, value} for the next zeModuleCreate; setting an id again
 * replaces its value. The value is kept zero-padded to whole 64-bit words,
 * so a driver reading the SPIR-V width of the constant never reads past
 * it. */
pi_result lz_piextProgramSetSpecializationConstant(
    pi_program prog, pi_uint32 spec_id, size_t spec_size,
    const void *spec_value) {
  NEED(prog, PI_ERROR_INVALID_PROGRAM);
  if (spec_size == 0 || !spec_value)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: specialization constant %u has no value", FN,
                (unsigned)spec_id);
  uint64_t *value = calloc((spec_size + 7) / 8, sizeof *value);
  if (!value)
    return out_of_memory(FN);
  memcpy(value, spec_value, spec_size);
  pthread_mutex_lock(&prog->lock);
  pi_result r = PI_SUCCESS;
  if (prog->state != PROG_IL && prog->state != PROG_OBJECT) {
    r = fail(PI_ERROR_INVALID_OPERATION,
             "%s: specialization constant %u: the program is %s; constants "
             "are set on SPIR-V programs before piProgramBuild or "
             "piProgramLink",
             FN, (unsigned)spec_id,
             prog->state == PROG_NATIVE ? "a native binary, whose constants "
                                          "are fixed"
                                        : "already built");
  } else {
    size_t i = 0;
    while (i < prog->nspecs && prog->specs[i].id != spec_id)
      ++i;
    if (i == prog->nspecs) {
      struct spec_const *s =
          realloc(prog->specs, (prog->nspecs + 1) * sizeof *s);
      if (!s)
        r = out_of_memory(FN);
      else {
        prog->specs = s;
        prog->specs[prog->nspecs++] = (struct spec_const){spec_id, 0, NULL};
      }
    }
    if (r == PI_SUCCESS) {
      free(prog->specs[i].value);
      prog->specs[i].size = spec_size;
      prog->specs[i].value = value;
      value = NULL;
    }
  }
  pthread_mutex_unlock(&prog->lock);
  free(value);
  return r;
}

pi_result lz_piextProgramGetNativeHandle(pi_program program,
                                         pi_native_handle *nativeHandle) {
  NEED(program, PI_ERROR_INVALID_PROGRAM);
  pthread_mutex_lock(&program->lock);
  ze_module_handle_t m =
      program->ndevs && program->devs[0].nmodules == 1
          ? program->devs[0].modules[0]
          : NULL;
  pthread_mutex_unlock(&program->lock);
  if (!m)
    return fail(PI_ERROR_INVALID_PROGRAM,
                "%s: the program has no single Level Zero module (it is not "
                "built, or linked from several modules)",
                FN);
  return native_of(FN, m, nativeHandle);
}

/* A Level Zero module does not tell its device: the program is taken to
 * serve every device of the context. */
pi_result lz_piextProgramCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context,
    bool pluginOwnsNativeHandle, pi_program *program) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(nativeHandle != 0 && program != NULL);
  pi_program p;
  pi_result r = program_new(FN, context, PROG_EXE, context->ndevices,
                            context->devices, &p);
  if (r != PI_SUCCESS)
    return r;
  p->owns_native = pluginOwnsNativeHandle;
  p->shared_module = true;
  for (pi_uint32 i = 0; i < p->ndevs; ++i) {
    if (!(p->devs[i].modules = calloc(1, sizeof(ze_module_handle_t)))) {
      p->owns_native = false;
      program_release(FN, p);
      return out_of_memory(FN);
    }
    p->devs[i].modules[0] = (ze_module_handle_t)nativeHandle;
    p->devs[i].nmodules = 1;
    p->devs[i].status = PI_PROGRAM_BUILD_STATUS_SUCCESS;
  }
  *program = p;
  return PI_SUCCESS;
}

/* The module of a program device that holds `name` as a global or function,
 * found with `lookup`. */
ze_result_t find_in_modules(struct prog_dev *d, const char *name,
                            size_t *size, void **ptr, bool function) {
  ze_result_t last = ZE_RESULT_ERROR_INVALID_GLOBAL_NAME;
  for (uint32_t m = 0; m < d->nmodules; ++m) {
    last = function ? zeModuleGetFunctionPointer(d->modules[m], name, ptr)
                    : zeModuleGetGlobalPointer(d->modules[m], name, size, ptr);
    if (last == ZE_RESULT_SUCCESS)
      return last;
  }
  return last;
}

pi_result built_dev(const char *fn, pi_program p, pi_device dev,
                    struct prog_dev **out) {
  struct prog_dev *d = prog_dev_of(p, dev);
  if (!d || !d->nmodules)
    return fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE,
                "%s: the program is not built for device '%s'", fn,
                dev_name(dev));
  *out = d;
  return PI_SUCCESS;
}

/* zeModuleGetFunctionPointer. As in DPC++, a kernel whose address Level
 * Zero cannot give is PI_ERROR_FUNCTION_ADDRESS_IS_NOT_AVAILABLE; an
 * unknown name is PI_ERROR_INVALID_KERNEL_NAME. */
pi_result lz_piextGetDeviceFunctionPointer(
    pi_device device, pi_program program, const char *function_name,
    pi_uint64 *function_pointer_ret) {
  NEED(device, PI_ERROR_INVALID_DEVICE);
  NEED(program, PI_ERROR_INVALID_PROGRAM);
  REQUIRE(function_name != NULL && function_pointer_ret != NULL);
  *function_pointer_ret = 0;
  pthread_mutex_lock(&program->lock);
  struct prog_dev *d = NULL;
  pi_result r = built_dev(FN, program, device, &d);
  void *ptr = NULL;
  ze_result_t zr = r == PI_SUCCESS
                       ? find_in_modules(d, function_name, NULL, &ptr, true)
                       : ZE_RESULT_SUCCESS;
  char *names = NULL;
  size_t count = 0;
  if (r == PI_SUCCESS && zr != ZE_RESULT_SUCCESS &&
      (r = kernel_names(FN, d, &names, &count)) == PI_SUCCESS) {
    bool kernel = false;
    for (char *s = names, *save = NULL, *t; (t = strtok_r(s, ";", &save));
         s = NULL)
      kernel |= strcmp(t, function_name) == 0;
    if (kernel)
      r = fail(PI_ERROR_FUNCTION_ADDRESS_IS_NOT_AVAILABLE,
               "%s: '%s' is a kernel of the program but Level Zero gives no "
               "address for it (%s)",
               FN, function_name, ze_result_name(zr));
    else
      r = fail(PI_ERROR_INVALID_KERNEL_NAME,
               "%s: the program has no function '%s' (%s)", FN, function_name,
               ze_result_name(zr));
  }
  free(names);
  pthread_mutex_unlock(&program->lock);
  if (r == PI_SUCCESS)
    *function_pointer_ret = (pi_uint64)(uintptr_t)ptr;
  return r;
}

pi_result lz_piextGetGlobalVariablePointer(
    pi_device Device, pi_program Program, const char *GlobalVariableName,
    size_t *GlobalVariableSize, void **GlobalVariablePointerRet) {
  NEED(Device, PI_ERROR_INVALID_DEVICE);
  NEED(Program, PI_ERROR_INVALID_PROGRAM);
  REQUIRE(GlobalVariableName != NULL && GlobalVariablePointerRet != NULL);
  pthread_mutex_lock(&Program->lock);
  struct prog_dev *d = NULL;
  pi_result r = built_dev(FN, Program, Device, &d);
  size_t size = 0;
  void *ptr = NULL;
  if (r == PI_SUCCESS) {
    ze_result_t zr = find_in_modules(d, GlobalVariableName, &size, &ptr, false);
    if (zr != ZE_RESULT_SUCCESS)
      r = fail(pi_from_ze(zr),
               "%s: zeModuleGetGlobalPointer('%s') failed with %s (0x%x)", FN,
               GlobalVariableName, ze_result_name(zr), (unsigned)zr);
  }
  pthread_mutex_unlock(&Program->lock);
  if (r == PI_SUCCESS) {
    *GlobalVariablePointerRet = ptr;
    if (GlobalVariableSize)
      *GlobalVariableSize = size;
  }
  return r;
}
