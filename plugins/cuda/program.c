/*
 * program.c: the PI program functions of the CUDA plugin: a program is a
 * module JIT-compiled or linked from PTX, or loaded from a cubin or
 * fatbin; creation, compile, build and link, build logs, queries, kernel
 * names, reference counts, native handles and device function pointers.
 */
#include "cu_internal.h"

/* ---- Programs --------------------------------------------------------------
 * A program holds an image: PTX text, or a cubin or fatbin. Build loads it
 * as a module (the driver JIT-compiles PTX); compile checks PTX through the
 * driver's linker; link runs the driver's linker over PTX, cubins and
 * fatbins (so PTX with extern functions links against device libraries)
 * and loads the result. The JIT's error and info logs are the build log. */

static const uint32_t FATBIN_MAGIC = 0xBA55ED50u;
static const uint32_t SPIRV_MAGIC = 0x07230203u;

static enum image_kind image_kind_of(const unsigned char *b, size_t n) {
  uint32_t magic = 0;
  if (n >= 4)
    memcpy(&magic, b, sizeof magic);
  if (n >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F')
    return IMAGE_CUBIN;
  if (n >= 4 && magic == FATBIN_MAGIC)
    return IMAGE_FATBIN;
  if (n >= 4 && magic == SPIRV_MAGIC)
    return IMAGE_NONE;
  /* PTX: text with a .version or .target directive. */
  if (memmem(b, n, ".version", 8) || memmem(b, n, ".target", 7))
    return IMAGE_PTX;
  return IMAGE_NONE;
}

/* Fails for an image that is no PTX, cubin or fatbin, saying what it is. */
static pi_result bad_image(const char *fn, const unsigned char *b, size_t n,
                           pi_result code) {
  uint32_t magic = 0;
  if (n >= 4)
    memcpy(&magic, b, sizeof magic);
  if (magic == SPIRV_MAGIC)
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the image is SPIR-V, which the CUDA driver cannot "
                "consume; give PTX (an nvptx64 image), a cubin or a fatbin",
                fn);
  return fail(code,
              "%s: the image (%zu bytes) is no PTX (no .version or .target "
              "directive), cubin (ELF) or fatbin",
              fn, n);
}

static pi_result program_new(const char *fn, pi_context ctx,
                             const unsigned char *image, size_t size,
                             enum image_kind kind, pi_program *out) {
  pi_program p = calloc(1, sizeof *p);
  if (!p)
    return out_of_memory(fn);
  if (image) {
    p->image = malloc(size + 1);
    if (!p->image) {
      free(p);
      return out_of_memory(fn);
    }
    memcpy(p->image, image, size);
    p->image[size] = 0; /* PTX must end in a NUL for the driver */
    p->image_size = size;
  }
  atomic_init(&p->refs, 1);
  p->ctx = ctx;
  p->kind = kind;
  p->status = PI_PROGRAM_BUILD_STATUS_NONE;
  p->binary_type = PI_PROGRAM_BINARY_TYPE_NONE;
  pthread_mutex_init(&p->lock, NULL);
  cu_piContextRetain(ctx);
  *out = p;
  return PI_SUCCESS;
}

/* Appends `name` to a ';'-separated list. */
static bool list_add(char **list, size_t *count, const char *name, size_t len) {
  size_t old = *list ? strlen(*list) : 0;
  char *n = realloc(*list, old + len + 2);
  if (!n)
    return false;
  if (old)
    n[old++] = ';';
  memcpy(n + old, name, len);
  n[old + len] = 0;
  *list = n;
  ++*count;
  return true;
}

/* Appends the kernels of a PTX text: the names its .entry directives give. */
static bool ptx_entries(const char *ptx, char **list, size_t *count) {
  static const char ws[] = " \t\r\n";
  for (const char *p = ptx; (p = strstr(p, ".entry")); p += 6) {
    const char *q = p + 6;
    if ((p > ptx && !strchr(ws, p[-1])) || !*q || !strchr(ws, *q))
      continue;
    q += strspn(q, ws);
    size_t len = strcspn(q, " \t\r\n(");
    if (len && !list_add(list, count, q, len))
      return false;
  }
  return true;
}

/* Lists a module's kernels through the driver (CUDA 12.4+). */
static pi_result module_entries(const char *fn, CUmodule m, char **list,
                                size_t *count) {
  unsigned n = 0;
  if (!drv.cuModuleGetFunctionCount || !drv.cuModuleEnumerateFunctions ||
      !drv.cuFuncGetName)
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the driver cannot list a module's kernels (it needs "
                "CUDA 12.4's cuModuleEnumerateFunctions)",
                fn);
  TRY(CUF(fn, cuModuleGetFunctionCount, &n, m));
  CUfunction *fns = calloc(n ? n : 1, sizeof *fns);
  if (!fns)
    return out_of_memory(fn);
  pi_result r = CUF(fn, cuModuleEnumerateFunctions, fns, n, m);
  for (unsigned i = 0; r == PI_SUCCESS && i < n; ++i) {
    const char *name = NULL;
    r = CUF(fn, cuFuncGetName, &name, fns[i]);
    if (r == PI_SUCCESS && name && !list_add(list, count, name, strlen(name)))
      r = out_of_memory(fn);
  }
  free(fns);
  return r;
}

static void jit_add(struct jit *j, CUjit_option key, uintptr_t value) {
  j->keys[j->n] = key;
  j->vals[j->n] = (void *)value;
  j->n++;
}

static void jit_init(struct jit *j) {
  j->n = 0;
  j->notes[0] = j->info[0] = j->error[0] = 0;
  jit_add(j, CU_JIT_INFO_LOG_BUFFER, (uintptr_t)j->info);
  jit_add(j, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, sizeof j->info);
  jit_add(j, CU_JIT_ERROR_LOG_BUFFER, (uintptr_t)j->error);
  jit_add(j, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, sizeof j->error);
  jit_add(j, CU_JIT_LOG_VERBOSE, 1);
}

/* Turns build options into JIT options: -O0..-O4 (optimization level),
 * -g, -lineinfo, -maxrregcount=N; OpenCL's -cl-* options mean nothing to
 * the PTX JIT and are noted in the log. Anything else fails with `bad`. */
static pi_result jit_options(const char *fn, const char *options, struct jit *j,
                             pi_result bad) {
  char opt[128];
  for (const char *p = options ? options : ""; *p;) {
    p += strspn(p, " \t\r\n");
    size_t len = strcspn(p, " \t\r\n");
    if (!len)
      break;
    snprintf(opt, sizeof opt, "%.*s", (int)len, p);
    p += len;
    unsigned long v = 0;
    char *end = NULL;
    if (j->n + 1 >= sizeof j->keys / sizeof j->keys[0])
      return fail(bad, "%s: too many options", fn);
    if (strlen(opt) == 3 && opt[0] == '-' && opt[1] == 'O' && opt[2] >= '0' &&
        opt[2] <= '4')
      jit_add(j, CU_JIT_OPTIMIZATION_LEVEL, (uintptr_t)(opt[2] - '0'));
    else if (strcmp(opt, "-g") == 0)
      jit_add(j, CU_JIT_GENERATE_DEBUG_INFO, 1);
    else if (strcmp(opt, "-lineinfo") == 0)
      jit_add(j, CU_JIT_GENERATE_LINE_INFO, 1);
    else if ((strncmp(opt, "-maxrregcount=", 14) == 0 ||
              strncmp(opt, "--maxrregcount=", 15) == 0) &&
             (v = strtoul(strchr(opt, '=') + 1, &end, 10)) > 0 && !*end)
      jit_add(j, CU_JIT_MAX_REGISTERS, (uintptr_t)v);
    else if (strncmp(opt, "-cl-", 4) == 0) {
      size_t used = strlen(j->notes);
      snprintf(j->notes + used, sizeof j->notes - used,
               "note: OpenCL option %s ignored by the PTX JIT\n", opt);
    } else
      return fail(bad,
                  "%s: option '%s' is unknown to the CUDA JIT; it takes "
                  "-O0..-O4, -g, -lineinfo and -maxrregcount=N",
                  fn, opt);
  }
  return PI_SUCCESS;
}

/* A JIT option list for `options` (failing with `bad` on options it does
 * not take), with the context `cu` current for the JIT; the caller frees
 * *out. */
static pi_result jit_start(const char *fn, const char *options, pi_result bad,
                           CUcontext cu, struct jit **out) {
  *out = NULL;
  struct jit *j = malloc(sizeof *j);
  if (!j)
    return out_of_memory(fn);
  jit_init(j);
  pi_result r = jit_options(fn, options, j, bad);
  if (r == PI_SUCCESS)
    r = use_context(fn, cu);
  if (r != PI_SUCCESS) {
    free(j);
    return r;
  }
  *out = j;
  return PI_SUCCESS;
}

/* The build log of a JIT run: notes, then errors, then information. */
static char *jit_log(const struct jit *j) {
  size_t n = strlen(j->notes) + strnlen(j->error, sizeof j->error - 1) +
             strnlen(j->info, sizeof j->info - 1) + 3;
  char *log = malloc(n);
  if (log)
    snprintf(log, n, "%s%.*s%s%.*s", j->notes, (int)(sizeof j->error - 1),
             j->error, j->error[0] && j->info[0] ? "\n" : "",
             (int)(sizeof j->info - 1), j->info);
  return log;
}

/* Fails with `code`, the driver's error and the start of the log. */
static pi_result jit_fail(const char *fn, pi_result code, const char *cufn,
                          CUresult err, const char *log) {
  char text[256];
  return fail(code, "%s: %s failed with %s; build log: %.600s", fn, cufn,
              cu_error_text(err, text, sizeof text),
              log && *log ? log : "(empty)");
}

/* The PI result of a failed JIT run: `failure` (build, compile or link
 * failure) unless the driver itself could not work. */
static pi_result jit_code(CUresult err, pi_result failure) {
  switch (err) {
  case CUDA_ERROR_OUT_OF_MEMORY:
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_DEINITIALIZED:
  case CUDA_ERROR_INVALID_CONTEXT:
  case CUDA_ERROR_CONTEXT_IS_DESTROYED:
  case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
  case CUDA_ERROR_JIT_COMPILATION_DISABLED:
    return pi_from_cu(err);
  default:
    return failure;
  }
}

static pi_result check_devices(const char *fn, pi_context ctx, pi_uint32 n,
                               const pi_device *devs) {
  if (n && !devs)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: num_devices is %u but "
                "device_list is NULL",
                fn, (unsigned)n);
  for (pi_uint32 i = 0; i < n; ++i)
    if (devs[i] != ctx->dev)
      return fail(PI_ERROR_INVALID_DEVICE,
                  "%s: device %u is not the program's context's device", fn,
                  (unsigned)i);
  return PI_SUCCESS;
}

/* PTX text (what piProgramCreate takes here: CUDA has no IL of its own). */
pi_result cu_piProgramCreate(pi_context context, const void *il,
                             size_t length, pi_program *res_program) {
  REQUIRE(context != NULL && res_program != NULL);
  *res_program = NULL;
  REQUIRE(il != NULL && length != 0);
  if (image_kind_of(il, length) != IMAGE_PTX)
    return bad_image(FN, il, length, PI_ERROR_INVALID_BINARY);
  return program_new(FN, context, il, length, IMAGE_PTX, res_program);
}

/* PTX text, a cubin or a fatbin for the context's device. */
pi_result backend_program_with_binary(const char *fn, pi_context context,
                                      const struct device_binaries *bins,
                                      pi_program *ret_program) {
  REQUIRE_IN(fn, context != NULL);
  if (bins->num_devices != 1)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: %u devices given; a CUDA context has one device", fn,
                (unsigned)bins->num_devices);
  if (!bins->binaries[0] || !bins->lengths[0])
    return fail(PI_ERROR_INVALID_VALUE, "%s: the binary is NULL or empty", fn);
  TRY(check_devices(fn, context, bins->num_devices, bins->device_list));
  enum image_kind kind = image_kind_of(bins->binaries[0], bins->lengths[0]);
  if (bins->binary_status)
    bins->binary_status[0] =
        kind == IMAGE_NONE ? PI_ERROR_INVALID_BINARY : PI_SUCCESS;
  if (kind == IMAGE_NONE)
    return bad_image(fn, bins->binaries[0], bins->lengths[0],
                     PI_ERROR_INVALID_BINARY);
  return program_new(fn, context, bins->binaries[0], bins->lengths[0], kind,
                     ret_program);
}

/* The module of a built program. */
pi_result program_module(const char *fn, pi_program p, CUmodule *m) {
  pthread_mutex_lock(&p->lock);
  *m = p->module;
  pthread_mutex_unlock(&p->lock);
  if (!*m)
    return fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE,
                "%s: the program is not built (piProgramBuild or "
                "piProgramLink first)",
                fn);
  return PI_SUCCESS;
}

/* A program has its context's one device. */
DEFINE_FACTS(program, p, .refs = atomic_load(&p->refs), .context = p->ctx,
             .devices.n = 1)

pi_result backend_program_info(pi_program program, const struct info_out *o) {
  pi_program p = program;
  pi_result r;
  pthread_mutex_lock(&p->lock);
  switch (o->query) {
  case PI_PROGRAM_INFO_DEVICES:
    r = put_ptr(o, p->ctx->dev);
    break;
  case PI_PROGRAM_INFO_SOURCE:
    r = put_str(o, p->kind == IMAGE_PTX ? (const char *)p->image : "");
    break;
  case PI_PROGRAM_INFO_BINARY_SIZES:
    r = put_size(o, p->image_size);
    break;
  case PI_PROGRAM_INFO_BINARIES: {
    /* An array of one pointer, to memory of BINARY_SIZES bytes. */
    unsigned char *dst = NULL;
    if (o->value && o->size < sizeof dst)
      r = fail(PI_ERROR_INVALID_VALUE,
               "%s: PI_PROGRAM_INFO_BINARIES needs room for one pointer",
               o->fn);
    else {
      if (o->value)
        memcpy(&dst, o->value, sizeof dst);
      if (dst && p->image)
        memcpy(dst, p->image, p->image_size);
      if (o->size_ret)
        *o->size_ret = sizeof dst;
      r = PI_SUCCESS;
    }
    break;
  }
  case PI_PROGRAM_INFO_NUM_KERNELS:
  case PI_PROGRAM_INFO_KERNEL_NAMES:
    if (!p->module)
      r = fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE,
               "%s: the program is not built, so it has no kernels yet", o->fn);
    else if (o->query == PI_PROGRAM_INFO_NUM_KERNELS)
      r = put_size(o, p->num_kernels);
    else
      r = put_str(o, p->kernel_names ? p->kernel_names : "");
    break;
  default:
    r = unknown_query(o);
    break;
  }
  pthread_mutex_unlock(&p->lock);
  return r;
}

/* Records a JIT run's outcome on a program (its lock held). */
static void program_record(pi_program p, const struct jit *j,
                           const char *options, bool ok,
                           pi_program_binary_type type) {
  free(p->log);
  p->log = jit_log(j);
  free(p->options);
  p->options = dup_str(options ? options : "");
  p->status =
      ok ? PI_PROGRAM_BUILD_STATUS_SUCCESS : PI_PROGRAM_BUILD_STATUS_ERROR;
  if (ok)
    p->binary_type = type;
}

/* Lists a module's kernels where the driver can; otherwise the names stay
 * unknown, with a warning (the kernels still work). */
static void module_kernels(const char *fn, CUmodule m, char **list,
                           size_t *count) {
  if (module_entries(fn, m, list, count) != PI_SUCCESS) {
    char why[sizeof last_message];
    memcpy(why, last_message, sizeof why);
    free(*list);
    *list = NULL;
    *count = 0;
    fail(PI_SUCCESS, "%s: the module's kernel names are unknown: %s", fn, why);
  }
}

/* Fills a built program's kernel list (its lock held): the .entry names of
 * its PTX, or what the driver lists of a module from a cubin or fatbin. */
static pi_result program_kernels(const char *fn, pi_program p) {
  free(p->kernel_names);
  p->kernel_names = NULL;
  p->num_kernels = 0;
  if (p->kind == IMAGE_PTX)
    return ptx_entries((const char *)p->image, &p->kernel_names,
                       &p->num_kernels)
               ? PI_SUCCESS
               : out_of_memory(fn);
  module_kernels(fn, p->module, &p->kernel_names, &p->num_kernels);
  return PI_SUCCESS;
}

/* Checks PTX through the driver's linker (a link state takes each PTX input
 * through ptxas when it is added); cubins and fatbins are compiled already. */
pi_result backend_program_compile(const char *fn, pi_program program,
                                  const struct program_compile *in) {
  pi_program p = program;
  TRY(check_devices(fn, p->ctx, in->num_devices, in->device_list));
  if (in->num_input_headers)
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: PTX has no #include, so input headers do not apply", fn);
  struct jit *j = NULL;
  TRY(jit_start(fn, in->options, PI_ERROR_INVALID_COMPILER_OPTIONS, p->ctx->cu,
                &j));
  pi_result r = PI_SUCCESS;
  pthread_mutex_lock(&p->lock);
  if (p->module || p->kind == IMAGE_NONE) {
    pthread_mutex_unlock(&p->lock);
    free(j);
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the program is %s; compile works on programs made from "
                "PTX",
                fn, p->module ? "built already" : "made from a native module");
  }
  CUresult err = CUDA_SUCCESS;
  const char *cufn = "cuLinkCreate";
  if (p->kind == IMAGE_PTX) {
    CUlinkState state = NULL;
    err = drv.cuLinkCreate(j->n, j->keys, j->vals, &state);
    if (err == CUDA_SUCCESS) {
      cufn = "cuLinkAddData";
      err = drv.cuLinkAddData(state, CU_JIT_INPUT_PTX, p->image,
                              p->image_size + 1, "program", 0, NULL, NULL);
      drv.cuLinkDestroy(state);
    }
  }
  program_record(p, j, in->options, err == CUDA_SUCCESS,
                 PI_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
  if (err != CUDA_SUCCESS)
    r = jit_fail(fn, jit_code(err, PI_ERROR_COMPILE_PROGRAM_FAILURE), cufn, err,
                 p->log);
  pthread_mutex_unlock(&p->lock);
  free(j);
  if (in->pfn_notify &&
      (r == PI_SUCCESS || r == PI_ERROR_COMPILE_PROGRAM_FAILURE))
    in->pfn_notify(p, in->user_data);
  return r;
}

/* Loads the image as a module: the driver JIT-compiles PTX for the device. */
pi_result
cu_piProgramBuild(pi_program program, pi_uint32 num_devices,
                  const pi_device *device_list, const char *options,
                  void (*pfn_notify)(pi_program program, void *user_data),
                  void *user_data) {
  pi_program p = program;
  REQUIRE(p != NULL);
  TRY(check_devices(FN, p->ctx, num_devices, device_list));
  struct jit *j = NULL;
  TRY(jit_start(FN, options, PI_ERROR_INVALID_BUILD_OPTIONS, p->ctx->cu,
                &j));
  pi_result r = PI_SUCCESS;
  pthread_mutex_lock(&p->lock);
  if (p->module || p->kind == IMAGE_NONE) {
    pthread_mutex_unlock(&p->lock);
    free(j);
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: the program is built already%s; make a new program to "
                "build again",
                FN, p->kind == IMAGE_NONE ? " (a native module)" : "");
  }
  CUmodule m = NULL;
  CUresult err = drv.cuModuleLoadDataEx(&m, p->image, j->n, j->keys, j->vals);
  program_record(p, j, options, err == CUDA_SUCCESS,
                 PI_PROGRAM_BINARY_TYPE_EXECUTABLE);
  if (err == CUDA_SUCCESS) {
    p->module = m;
    p->owns_module = true;
    r = program_kernels(FN, p);
  } else {
    r = jit_fail(FN, jit_code(err, PI_ERROR_BUILD_PROGRAM_FAILURE),
                 "cuModuleLoadDataEx", err, p->log);
  }
  pthread_mutex_unlock(&p->lock);
  free(j);
  if (pfn_notify && (r == PI_SUCCESS || r == PI_ERROR_BUILD_PROGRAM_FAILURE))
    pfn_notify(p, user_data);
  return r;
}

static CUjitInputType jit_input_type(enum image_kind k) {
  return k == IMAGE_CUBIN    ? CU_JIT_INPUT_CUBIN
         : k == IMAGE_FATBIN ? CU_JIT_INPUT_FATBINARY
                             : CU_JIT_INPUT_PTX;
}

/* Links the inputs with the driver's linker into a new executable program
 * (its binary is the linked cubin). On a link failure *ret_program still
 * gets a program, whose build log (piProgramGetBuildInfo) says why, as in
 * OpenCL; the message carries the log too. */
pi_result
cu_piProgramLink(pi_context context, pi_uint32 num_devices,
                 const pi_device *device_list, const char *options,
                 pi_uint32 num_input_programs, const pi_program *input_programs,
                 void (*pfn_notify)(pi_program program, void *user_data),
                 void *user_data, pi_program *ret_program) {
  REQUIRE(context != NULL && ret_program != NULL);
  *ret_program = NULL;
  REQUIRE(num_input_programs > 0 && input_programs != NULL);
  TRY(check_devices(FN, context, num_devices, device_list));
  for (pi_uint32 i = 0; i < num_input_programs; ++i)
    if (!input_programs[i] || input_programs[i]->ctx != context)
      return fail(PI_ERROR_INVALID_PROGRAM,
                  "%s: input program %u is NULL or of another context", FN,
                  (unsigned)i);
  if (options && (strstr(options, "-create-library") ||
                  strstr(options, "-enable-link-options")))
    return fail(PI_ERROR_INVALID_LINKER_OPTIONS,
                "%s: the CUDA driver's linker only makes executables; link "
                "the library's programs together with the kernels instead",
                FN);
  struct jit *j = NULL;
  TRY(jit_start(FN, options, PI_ERROR_INVALID_LINKER_OPTIONS, context->cu,
                &j));
  pi_result r = PI_SUCCESS;
  CUlinkState state = NULL;
  CUresult err = drv.cuLinkCreate(j->n, j->keys, j->vals, &state);
  const char *cufn = "cuLinkCreate";
  char *names = NULL;
  size_t num_names = 0;
  bool all_ptx = true;
  for (pi_uint32 i = 0; err == CUDA_SUCCESS && i < num_input_programs; ++i) {
    pi_program in = input_programs[i];
    char name[32];
    snprintf(name, sizeof name, "input program %u", (unsigned)i);
    pthread_mutex_lock(&in->lock);
    if (in->kind == IMAGE_NONE) {
      pthread_mutex_unlock(&in->lock);
      drv.cuLinkDestroy(state);
      free(names);
      free(j);
      return fail(PI_ERROR_INVALID_PROGRAM,
                  "%s: input program %u has no image to link (a native "
                  "module)",
                  FN, (unsigned)i);
    }
    cufn = "cuLinkAddData";
    err = drv.cuLinkAddData(state, jit_input_type(in->kind), in->image,
                            in->image_size + (in->kind == IMAGE_PTX), name, 0,
                            NULL, NULL);
    if (in->kind == IMAGE_PTX) {
      if (!ptx_entries((const char *)in->image, &names, &num_names))
        err = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      all_ptx = false;
    }
    pthread_mutex_unlock(&in->lock);
  }
  void *cubin = NULL;
  size_t cubin_size = 0;
  if (err == CUDA_SUCCESS) {
    cufn = "cuLinkComplete";
    err = drv.cuLinkComplete(state, &cubin, &cubin_size);
  }
  CUmodule m = NULL;
  if (err == CUDA_SUCCESS) {
    cufn = "cuModuleLoadData";
    err = drv.cuModuleLoadData(&m, cubin);
  }
  pi_program p = NULL;
  r = program_new(FN, context, err == CUDA_SUCCESS ? cubin : NULL,
                  err == CUDA_SUCCESS ? cubin_size : 0,
                  err == CUDA_SUCCESS ? IMAGE_CUBIN : IMAGE_NONE, &p);
  if (state)
    drv.cuLinkDestroy(state);
  if (r != PI_SUCCESS) {
    if (m)
      drv.cuModuleUnload(m);
    free(names);
    free(j);
    return r;
  }
  program_record(p, j, options, err == CUDA_SUCCESS,
                 PI_PROGRAM_BINARY_TYPE_EXECUTABLE);
  if (err == CUDA_SUCCESS) {
    p->module = m;
    p->owns_module = true;
    if (all_ptx) {
      p->kernel_names = names;
      p->num_kernels = num_names;
      names = NULL;
    } else {
      module_kernels(FN, m, &p->kernel_names, &p->num_kernels);
    }
  } else {
    r = jit_fail(FN, jit_code(err, PI_ERROR_LINK_PROGRAM_FAILURE), cufn, err,
                 p->log);
  }
  free(names);
  free(j);
  *ret_program = p;
  if (pfn_notify && (r == PI_SUCCESS || r == PI_ERROR_LINK_PROGRAM_FAILURE))
    pfn_notify(p, user_data);
  return r;
}

pi_result backend_program_build_info(pi_program program, pi_device device,
                                     const struct info_out *o) {
  pi_program p = program;
  pi_result r;
  if (device && device != p->ctx->dev)
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: the device is not the program's context's device", o->fn);
  pthread_mutex_lock(&p->lock);
  switch (o->query) {
  case PI_PROGRAM_BUILD_INFO_STATUS:
    r = put_i32(o, p->status);
    break;
  case PI_PROGRAM_BUILD_INFO_OPTIONS:
    r = put_str(o, p->options ? p->options : "");
    break;
  case PI_PROGRAM_BUILD_INFO_LOG:
    r = put_str(o, p->log ? p->log : "");
    break;
  case PI_PROGRAM_BUILD_INFO_BINARY_TYPE:
    r = put_u32(o, p->binary_type);
    break;
  default:
    r = unknown_query(o);
    break;
  }
  pthread_mutex_unlock(&p->lock);
  return r;
}

pi_result cu_piProgramRetain(pi_program program) {
  REQUIRE(program != NULL);
  ref_retain(&program->refs);
  return PI_SUCCESS;
}

pi_result cu_piProgramRelease(pi_program program) {
  pi_program p = program;
  REQUIRE(p != NULL);
  if (!ref_release(&p->refs))
    return PI_SUCCESS;
  pi_result r = PI_SUCCESS;
  if (p->module && p->owns_module && !driver_gone()) {
    r = use_context(FN, p->ctx->cu);
    if (r == PI_SUCCESS)
      r = CU(cuModuleUnload, p->module);
  }
  pi_result r2 = cu_piContextRelease(p->ctx);
  free(p->image);
  free(p->log);
  free(p->options);
  free(p->kernel_names);
  pthread_mutex_destroy(&p->lock);
  free(p);
  return r != PI_SUCCESS ? r : r2;
}

pi_result
cu_piextProgramSetSpecializationConstant(pi_program prog, pi_uint32 spec_id,
                                         size_t spec_size,
                                         const void *spec_value) {
  (void)prog;
  (void)spec_size;
  (void)spec_value;
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: CUDA has no native specialization constants (spec id %u); "
              "the runtime must emulate them: pass the values in a buffer "
              "kernel argument (the emulated spec-constant buffer)",
              FN, (unsigned)spec_id);
}

/* The program's CUmodule. */
pi_result
cu_piextProgramGetNativeHandle(pi_program program,
                               pi_native_handle *nativeHandle) {
  CUmodule m = NULL;
  REQUIRE(program != NULL && nativeHandle != NULL);
  TRY(program_module(FN, program, &m));
  *nativeHandle = (pi_native_handle)(uintptr_t)m;
  return PI_SUCCESS;
}

/* Wraps a loaded CUmodule as a built program (its kernel names come from
 * the driver where it can list them); with pluginOwnsNativeHandle the last
 * release unloads it. */
pi_result cu_piextProgramCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context,
    bool pluginOwnsNativeHandle, pi_program *program) {
  REQUIRE(nativeHandle != 0 && context != NULL && program != NULL);
  TRY(use_context(FN, context->cu));
  pi_program p = NULL;
  TRY(program_new(FN, context, NULL, 0, IMAGE_NONE, &p));
  p->module = (CUmodule)(uintptr_t)nativeHandle;
  p->owns_module = pluginOwnsNativeHandle;
  p->status = PI_PROGRAM_BUILD_STATUS_SUCCESS;
  p->binary_type = PI_PROGRAM_BINARY_TYPE_EXECUTABLE;
  module_kernels(FN, p->module, &p->kernel_names, &p->num_kernels);
  *program = p;
  return PI_SUCCESS;
}
