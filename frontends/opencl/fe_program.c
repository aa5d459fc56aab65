/*
 * fe_program.c: OpenCL program objects over PI programs.
 *
 * Each creation, build, compile, link, info query, retain and release is
 * the one PI call of the same shape (piclProgramCreateWithSource,
 * piProgramCreateWithBinary, piProgramCreate, piProgramBuild,
 * piProgramCompile, piProgramLink, piProgramGetInfo, piProgramGetBuildInfo
 * ...), so a recording holds the application's calls. The wrapper keeps what
 * PI does not answer: the source text (CL_PROGRAM_SOURCE), the IL
 * (CL_PROGRAM_IL), the devices and context as the application named them,
 * how the program was made (which of build, compile and specialization
 * constants the specification allows on it), the kernels attached to it
 * (CL_INVALID_OPERATION for a rebuild), and the release callbacks.
 *
 * Build callbacks: the PI calls are made without one, so they finish before
 * they return (as PI promises when no callback is given); the application's
 * pfn_notify then runs with the front end's cl_program, once the build,
 * compile or link was attempted, as the specification allows.
 *
 * A plugin that cannot take OpenCL C at all (Level Zero, CUDA) refuses
 * piclProgramCreateWithSource with PI_ERROR_INVALID_OPERATION. The
 * specification lets clCreateProgramWithSource fail only for invalid
 * arguments or lack of memory: such a program is made without a PI program
 * (it holds its source), and building or compiling it answers
 * CL_COMPILER_NOT_AVAILABLE, as for any device whose
 * CL_DEVICE_COMPILER_AVAILABLE is false.
 *
 * clCreateProgramWithBuiltInKernels: PI has no built-in kernels, so no name
 * is a built-in kernel the front end can make; the call answers
 * CL_INVALID_VALUE, the specification's code for a name the devices do not
 * support, after checking the context and devices.
 *
 * clSetProgramReleaseCallback (deprecated by OpenCL 3.0) is supported: the
 * callbacks run, newest first, when the program object is destroyed (its
 * last reference, the application's or a kernel's, is gone).
 */
#define _POSIX_C_SOURCE 200809L /* strdup, strnlen */
#include <stdlib.h>
#include <string.h>

#include "fe.h"

/* How a program was made (struct _cl_program's origin). */
enum { FE_PROG_SOURCE = 1, FE_PROG_IL, FE_PROG_BINARY, FE_PROG_LINKED };

/* Device lists of up to this many entries go on the stack. */
#define SMALL 8

/* ---- Helpers ---------------------------------------------------------------- */

static bool in_list(cl_device_id d, cl_uint n, const cl_device_id *list)
{
  for (cl_uint i = 0; i < n; i++)
    if (list[i] == d)
      return true;
  return false;
}

/* Whether `d` is one of the program's devices (fe.h). */
bool fe_program_has_device(cl_program p, cl_device_id d)
{
  return FE_IS(d, FE_DEVICE) && in_list(d, p->ndev, p->devices);
}

/* An optional device list (build, compile, link): CL_INVALID_VALUE when the
 * count and the list disagree, CL_INVALID_DEVICE for an entry that is not
 * one of `allowed`. */
static cl_int check_devices(cl_uint n, const cl_device_id *list, cl_uint nallowed,
                            const cl_device_id *allowed)
{
  if ((list == NULL) != (n == 0))
    return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < n; i++)
    if (!FE_IS(list[i], FE_DEVICE) || !in_list(list[i], nallowed, allowed))
      return CL_INVALID_DEVICE;
  return CL_SUCCESS;
}

/* PI handles of a device list; `buf` holds SMALL. NULL only when out of
 * memory (or for an empty list). */
static pi_device *pi_devices(cl_uint n, const cl_device_id *list, pi_device *buf)
{
  if (n == 0)
    return NULL;
  pi_device *out = n <= SMALL ? buf : malloc(n * sizeof *out);
  if (out)
    fe_pi_devices(n, list, out);
  return out;
}

static void pi_devices_free(pi_device *list, pi_device *buf)
{
  if (list != buf)
    free(list);
}

/* A new wrapper for `pi` (may be NULL: a source no plugin compiles). */
static cl_program program_new(cl_context ctx, pi_program pi, cl_uint ndev,
                              const cl_device_id *devs, int origin)
{
  cl_program p = fe_new(sizeof *p, FE_PROGRAM, ctx->o.pl);
  cl_device_id *d = malloc((ndev ? ndev : 1) * sizeof *d);
  if (!p || !d) {
    free(p);
    free(d);
    return NULL;
  }
  memcpy(d, devs, ndev * sizeof *d);
  p->pi = pi;
  p->ctx = ctx;
  p->ndev = ndev;
  p->devices = d;
  p->origin = (uint8_t)origin;
  p->status = CL_BUILD_NONE;
  atomic_init(&p->kernels, 0);
  atomic_init(&p->building, false);
  atomic_init(&p->apprefs, 1);
  pthread_mutex_init(&p->lock, NULL);
  fe_ref(ctx);
  fe_map_add(FE_PROGRAM, pi, p);
  return p;
}

/* A program wrapper's on_free: release callbacks, then its memory (fe.h). */
void fe_program_free(void *o)
{
  cl_program p = o;
  /* Release callbacks, newest first (the list is a stack). */
  for (fe_callback *cb = p->destructors, *next; cb; cb = next) {
    next = cb->next;
    /* Called through the type it was registered with. */
    ((void(CL_CALLBACK *)(cl_program, void *))(void (*)(void))cb->fn)(p, cb->user);
    free(cb);
  }
  if (p->pi && fe_lookup(FE_PROGRAM, p->pi) == p)
    fe_map_remove(FE_PROGRAM, p->pi);
  free(p->devices);
  free(p->source);
  free(p->il);
  free(p->options);
  pthread_mutex_destroy(&p->lock);
  fe_context_unref(p->ctx);
}

/* The release of a PI program made for a wrapper that could not be. */
static void drop_pi(cl_context ctx, pi_program pi)
{
  if (pi)
    pirt_piProgramRelease(ctx->o.pl, pi);
}

/* ---- Creation ---------------------------------------------------------------- */

/* clCreateProgramWithSource: piclProgramCreateWithSource; the text is kept. */
cl_program CL_API_CALL fe_clCreateProgramWithSource(cl_context context, cl_uint count,
                                                    const char **strings,
                                                    const size_t *lengths,
                                                    cl_int *errcode_ret)
{
  if (!FE_IS(context, FE_CONTEXT))
    FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
  if (count == 0 || !strings)
    FE_FAIL(errcode_ret, CL_INVALID_VALUE);
  size_t total = 0;
  for (cl_uint i = 0; i < count; i++) {
    if (!strings[i])
      FE_FAIL(errcode_ret, CL_INVALID_VALUE);
    total += lengths && lengths[i] ? strnlen(strings[i], lengths[i]) : strlen(strings[i]);
  }
  /* CL_PROGRAM_SOURCE: the strings concatenated, as OpenCL answers it. */
  char *src = malloc(total + 1);
  if (!src)
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  size_t at = 0;
  for (cl_uint i = 0; i < count; i++) {
    size_t n = lengths && lengths[i] ? strnlen(strings[i], lengths[i]) : strlen(strings[i]);
    memcpy(src + at, strings[i], n);
    at += n;
  }
  src[at] = 0;

  pi_program pi = NULL;
  pi_result r = pirt_piclProgramCreateWithSource(context->o.pl, context->pi, count, strings,
                                                 lengths, &pi);
  if (r == PI_ERROR_INVALID_OPERATION)
    pi = NULL; /* the plugin compiles no OpenCL C: building says so */
  else if (r != PI_SUCCESS) {
    free(src);
    FE_FAIL(errcode_ret, fe_err(r));
  }
  cl_program p = program_new(context, pi, context->ndev, context->devices, FE_PROG_SOURCE);
  if (!p) {
    drop_pi(context, pi);
    free(src);
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  }
  p->source = src;
  if (errcode_ret)
    *errcode_ret = CL_SUCCESS;
  return p;
}

/* clCreateProgramWithBinary: piProgramCreateWithBinary, with binary_status. */
cl_program CL_API_CALL fe_clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                                    const cl_device_id *device_list,
                                                    const size_t *lengths,
                                                    const unsigned char **binaries,
                                                    cl_int *binary_status,
                                                    cl_int *errcode_ret)
{
  if (!FE_IS(context, FE_CONTEXT))
    FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
  if (!device_list || num_devices == 0)
    FE_FAIL(errcode_ret, CL_INVALID_VALUE);
  for (cl_uint i = 0; i < num_devices; i++)
    if (!FE_IS(device_list[i], FE_DEVICE) ||
        !in_list(device_list[i], context->ndev, context->devices))
      FE_FAIL(errcode_ret, CL_INVALID_DEVICE);
  if (!lengths || !binaries)
    FE_FAIL(errcode_ret, CL_INVALID_VALUE);
  /* binary_status gets CL_INVALID_VALUE for each empty entry. */
  bool empty = false;
  for (cl_uint i = 0; i < num_devices; i++) {
    bool e = lengths[i] == 0 || !binaries[i];
    if (binary_status)
      binary_status[i] = e ? CL_INVALID_VALUE : CL_SUCCESS;
    empty |= e;
  }
  if (empty)
    FE_FAIL(errcode_ret, CL_INVALID_VALUE);

  pi_device buf[SMALL];
  pi_device *devs = pi_devices(num_devices, device_list, buf);
  if (!devs)
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  pi_program pi = NULL;
  _Static_assert(sizeof(pi_int32) == sizeof(cl_int), "binary_status is shared");
  pi_result r = pirt_piProgramCreateWithBinary(context->o.pl, context->pi, num_devices, devs,
                                               lengths, binaries, 0, NULL,
                                               (pi_int32 *)binary_status, &pi);
  pi_devices_free(devs, buf);
  if (r != PI_SUCCESS)
    FE_FAIL(errcode_ret, fe_err(r));
  cl_program p = program_new(context, pi, num_devices, device_list, FE_PROG_BINARY);
  if (!p) {
    drop_pi(context, pi);
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  }
  if (errcode_ret)
    *errcode_ret = CL_SUCCESS;
  return p;
}

/* clCreateProgramWithIL: piProgramCreate; the IL is kept. */
cl_program CL_API_CALL fe_clCreateProgramWithIL(cl_context context, const void *il,
                                                size_t length, cl_int *errcode_ret)
{
  if (!FE_IS(context, FE_CONTEXT))
    FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
  if (!il || length == 0)
    FE_FAIL(errcode_ret, CL_INVALID_VALUE);
  void *copy = malloc(length);
  if (!copy)
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  memcpy(copy, il, length);
  pi_program pi = NULL;
  pi_result r = pirt_piProgramCreate(context->o.pl, context->pi, il, length, &pi);
  if (r != PI_SUCCESS) {
    free(copy);
    /* PI_ERROR_INVALID_OPERATION: no device takes the IL, OpenCL's code */
    FE_FAIL(errcode_ret, fe_err(r));
  }
  cl_program p = program_new(context, pi, context->ndev, context->devices, FE_PROG_IL);
  if (!p) {
    drop_pi(context, pi);
    free(copy);
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  }
  p->il = copy;
  p->il_size = length;
  if (errcode_ret)
    *errcode_ret = CL_SUCCESS;
  return p;
}

/* clCreateProgramWithILKHR (cl_khr_il_program): clCreateProgramWithIL. */
cl_program CL_API_CALL fe_clCreateProgramWithILKHR(cl_context context, const void *il,
                                                   size_t length, cl_int *errcode_ret)
{
  return fe_clCreateProgramWithIL(context, il, length, errcode_ret);
}

/* clCreateProgramWithBuiltInKernels: checked, then refused (no PI call). */
cl_program CL_API_CALL fe_clCreateProgramWithBuiltInKernels(cl_context context,
                                                            cl_uint num_devices,
                                                            const cl_device_id *device_list,
                                                            const char *kernel_names,
                                                            cl_int *errcode_ret)
{
  if (!FE_IS(context, FE_CONTEXT))
    FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
  if (!device_list || num_devices == 0)
    FE_FAIL(errcode_ret, CL_INVALID_VALUE);
  for (cl_uint i = 0; i < num_devices; i++)
    if (!FE_IS(device_list[i], FE_DEVICE) ||
        !in_list(device_list[i], context->ndev, context->devices))
      FE_FAIL(errcode_ret, CL_INVALID_DEVICE);
  /* NULL, or names none of which PI can make (see the file comment). */
  (void)kernel_names;
  FE_FAIL(errcode_ret, CL_INVALID_VALUE);
}

/* ---- Reference counts and callbacks ----------------------------------------- */

/* A program stays an object while its kernels hold it, even after the
 * application released its own references (CL_KERNEL_PROGRAM gives it
 * back, and it may be retained again); releasing more than the application
 * holds is refused, so the kernels' references are never taken. */
cl_int CL_API_CALL fe_clRetainProgram(cl_program program)
{
  FE_CHECK(program, FE_PROGRAM, CL_INVALID_PROGRAM);
  pi_result r = program->pi ? pirt_piProgramRetain(program->o.pl, program->pi) : PI_SUCCESS;
  if (r == PI_SUCCESS) {
    atomic_fetch_add(&program->apprefs, 1);
    fe_ref(program);
  }
  return fe_err(r);
}

/* clReleaseProgram: piProgramRelease; the wrapper goes with its last
 * reference (release callbacks run then). */
cl_int CL_API_CALL fe_clReleaseProgram(cl_program program)
{
  FE_CHECK(program, FE_PROGRAM, CL_INVALID_PROGRAM);
  unsigned n = atomic_load(&program->apprefs);
  do {
    if (n == 0)
      return CL_INVALID_PROGRAM; /* the application holds no reference */
  } while (!atomic_compare_exchange_weak(&program->apprefs, &n, n - 1));
  pi_result r = program->pi ? pirt_piProgramRelease(program->o.pl, program->pi) : PI_SUCCESS;
  if (r != PI_SUCCESS) {
    atomic_fetch_add(&program->apprefs, 1);
    return fe_err(r);
  }
  fe_unref(program, fe_program_free);
  return CL_SUCCESS;
}

/* clSetProgramReleaseCallback: pushed on the program's callback stack. */
cl_int CL_API_CALL fe_clSetProgramReleaseCallback(cl_program program,
                                                  void(CL_CALLBACK *pfn_notify)(cl_program,
                                                                                void *),
                                                  void *user_data)
{
  FE_CHECK(program, FE_PROGRAM, CL_INVALID_PROGRAM);
  if (!pfn_notify)
    return CL_INVALID_VALUE;
  fe_callback *cb = malloc(sizeof *cb);
  if (!cb)
    return CL_OUT_OF_HOST_MEMORY;
  cb->fn = (void(CL_CALLBACK *)(void *, void *))(void (*)(void))pfn_notify;
  cb->obj = program;
  cb->user = user_data;
  pthread_mutex_lock(&program->lock);
  cb->next = program->destructors;
  program->destructors = cb;
  pthread_mutex_unlock(&program->lock);
  return CL_SUCCESS;
}

/* ---- Build, compile, link ----------------------------------------------------- */

/* CL_COMPILER_NOT_AVAILABLE when one of the devices (all the program's when
 * none are named) has no compiler. */
static bool compiler_missing(cl_program p, cl_uint n, const cl_device_id *list)
{
  if (!p->pi)
    return true;
  if (!list) {
    n = p->ndev;
    list = p->devices;
  }
  for (cl_uint i = 0; i < n; i++)
    if (!list[i]->compiler)
      return true;
  return false;
}

/* What a build or compile of a program without a PI program leaves: an
 * error status, its options, and a log saying why. */
static cl_int no_compiler(cl_program p, const char *options)
{
  if (p->pi)
    return CL_COMPILER_NOT_AVAILABLE; /* PI keeps the status */
  char *copy = strdup(options ? options : "");
  pthread_mutex_lock(&p->lock);
  free(p->options);
  p->options = copy;
  p->status = CL_BUILD_ERROR;
  pthread_mutex_unlock(&p->lock);
  return CL_COMPILER_NOT_AVAILABLE;
}

/* clBuildProgram: piProgramBuild, then the application's callback. */
cl_int CL_API_CALL fe_clBuildProgram(cl_program program, cl_uint num_devices,
                                     const cl_device_id *device_list, const char *options,
                                     void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                     void *user_data)
{
  FE_CHECK(program, FE_PROGRAM, CL_INVALID_PROGRAM);
  if ((device_list == NULL) != (num_devices == 0) || (!pfn_notify && user_data))
    return CL_INVALID_VALUE;
  cl_int err = check_devices(num_devices, device_list, program->ndev, program->devices);
  if (err != CL_SUCCESS)
    return err;
  if (program->origin == FE_PROG_LINKED || atomic_load(&program->kernels))
    return CL_INVALID_OPERATION;
  if (program->origin != FE_PROG_BINARY && compiler_missing(program, num_devices, device_list))
    return no_compiler(program, options);
  if (atomic_exchange(&program->building, true))
    return CL_INVALID_OPERATION; /* another thread's build has not completed */
  pi_device buf[SMALL];
  pi_device *devs = pi_devices(num_devices, device_list, buf);
  pi_result r = num_devices && !devs
                    ? PI_ERROR_OUT_OF_HOST_MEMORY
                    : pirt_piProgramBuild(program->o.pl, program->pi, num_devices, devs,
                                          options, NULL, NULL);
  pi_devices_free(devs, buf);
  atomic_store(&program->building, false);
  if (pfn_notify && (r == PI_SUCCESS || r == PI_ERROR_BUILD_PROGRAM_FAILURE))
    pfn_notify(program, user_data);
  return fe_err(r);
}

/* clCompileProgram: piProgramCompile with the headers' PI programs, then
 * the application's callback. */
cl_int CL_API_CALL fe_clCompileProgram(cl_program program, cl_uint num_devices,
                                       const cl_device_id *device_list, const char *options,
                                       cl_uint num_input_headers,
                                       const cl_program *input_headers,
                                       const char **header_include_names,
                                       void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                       void *user_data)
{
  FE_CHECK(program, FE_PROGRAM, CL_INVALID_PROGRAM);
  if ((device_list == NULL) != (num_devices == 0) || (!pfn_notify && user_data))
    return CL_INVALID_VALUE;
  if (num_input_headers == 0 ? (input_headers || header_include_names)
                             : (!input_headers || !header_include_names))
    return CL_INVALID_VALUE;
  cl_int err = check_devices(num_devices, device_list, program->ndev, program->devices);
  if (err != CL_SUCCESS)
    return err;
  if ((program->origin != FE_PROG_SOURCE && program->origin != FE_PROG_IL) ||
      atomic_load(&program->kernels))
    return CL_INVALID_OPERATION;
  /* Headers count only for OpenCL C; an IL program ignores them. */
  if (program->origin == FE_PROG_IL)
    num_input_headers = 0;
  for (cl_uint i = 0; i < num_input_headers; i++) {
    if (!FE_IS(input_headers[i], FE_PROGRAM))
      return CL_INVALID_PROGRAM;
    if (input_headers[i]->ctx != program->ctx)
      return CL_INVALID_CONTEXT;
    if (input_headers[i]->origin != FE_PROG_SOURCE)
      return CL_INVALID_OPERATION; /* a header is a program made from source */
    if (!header_include_names[i])
      return CL_INVALID_VALUE;
  }
  if (compiler_missing(program, num_devices, device_list))
    return no_compiler(program, options);
  pi_program hbuf[SMALL], *headers = hbuf;
  if (num_input_headers > SMALL && !(headers = malloc(num_input_headers * sizeof *headers)))
    return CL_OUT_OF_HOST_MEMORY;
  for (cl_uint i = 0; i < num_input_headers; i++)
    headers[i] = input_headers[i]->pi;
  if (atomic_exchange(&program->building, true)) {
    if (headers != hbuf)
      free(headers);
    return CL_INVALID_OPERATION;
  }
  pi_device buf[SMALL];
  pi_device *devs = pi_devices(num_devices, device_list, buf);
  pi_result r = num_devices && !devs
                    ? PI_ERROR_OUT_OF_HOST_MEMORY
                    : pirt_piProgramCompile(program->o.pl, program->pi, num_devices, devs,
                                            options, num_input_headers,
                                            num_input_headers ? headers : NULL,
                                            num_input_headers ? header_include_names : NULL,
                                            NULL, NULL);
  pi_devices_free(devs, buf);
  if (headers != hbuf)
    free(headers);
  atomic_store(&program->building, false);
  if (pfn_notify && (r == PI_SUCCESS || r == PI_ERROR_COMPILE_PROGRAM_FAILURE))
    pfn_notify(program, user_data);
  return fe_err(r);
}

/* clLinkProgram: piProgramLink; the new program (also on a link failure
 * that gives one) goes to the application's callback. */
cl_program CL_API_CALL fe_clLinkProgram(cl_context context, cl_uint num_devices,
                                        const cl_device_id *device_list, const char *options,
                                        cl_uint num_input_programs,
                                        const cl_program *input_programs,
                                        void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                        void *user_data, cl_int *errcode_ret)
{
  if (!FE_IS(context, FE_CONTEXT))
    FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
  if ((device_list == NULL) != (num_devices == 0) || num_input_programs == 0 ||
      !input_programs || (!pfn_notify && user_data))
    FE_FAIL(errcode_ret, CL_INVALID_VALUE);
  for (cl_uint i = 0; i < num_input_programs; i++) {
    cl_program in = input_programs[i];
    if (!FE_IS(in, FE_PROGRAM))
      FE_FAIL(errcode_ret, CL_INVALID_PROGRAM);
    if (in->ctx != context)
      FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
    /* Still compiling, or never compiled (no compiler): not linkable. */
    if (atomic_load(&in->building) || !in->pi)
      FE_FAIL(errcode_ret, CL_INVALID_OPERATION);
  }
  cl_int err = check_devices(num_devices, device_list, context->ndev, context->devices);
  if (err != CL_SUCCESS)
    FE_FAIL(errcode_ret, err);
  cl_uint ndev = num_devices ? num_devices : context->ndev;
  const cl_device_id *targets = num_devices ? device_list : context->devices;
  for (cl_uint i = 0; i < ndev; i++) {
    pi_bool linker = PI_FALSE;
    pi_result r = pirt_piDeviceGetInfo(targets[i]->o.pl, targets[i]->pi,
                                       PI_DEVICE_INFO_LINKER_AVAILABLE, sizeof linker, &linker,
                                       NULL);
    if (r != PI_SUCCESS)
      FE_FAIL(errcode_ret, fe_err(r));
    if (!linker)
      FE_FAIL(errcode_ret, CL_LINKER_NOT_AVAILABLE);
  }

  pi_program ibuf[SMALL], *inputs = ibuf;
  if (num_input_programs > SMALL && !(inputs = malloc(num_input_programs * sizeof *inputs)))
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  for (cl_uint i = 0; i < num_input_programs; i++)
    inputs[i] = input_programs[i]->pi;
  pi_device buf[SMALL];
  pi_device *devs = pi_devices(num_devices, device_list, buf);
  pi_program pi = NULL;
  pi_result r = num_devices && !devs
                    ? PI_ERROR_OUT_OF_HOST_MEMORY
                    : pirt_piProgramLink(context->o.pl, context->pi, num_devices, devs, options,
                                         num_input_programs, inputs, NULL, NULL, &pi);
  pi_devices_free(devs, buf);
  if (inputs != ibuf)
    free(inputs);
  /* A failed link may still give a program: its build log says why, and
   * OpenCL returns it with CL_LINK_PROGRAM_FAILURE. */
  if (!pi || (r != PI_SUCCESS && r != PI_ERROR_LINK_PROGRAM_FAILURE)) {
    drop_pi(context, pi);
    FE_FAIL(errcode_ret, r != PI_SUCCESS ? fe_err(r) : CL_OUT_OF_RESOURCES);
  }
  cl_program p = program_new(context, pi, ndev, targets, FE_PROG_LINKED);
  if (!p) {
    drop_pi(context, pi);
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  }
  if (pfn_notify)
    pfn_notify(p, user_data);
  if (errcode_ret)
    *errcode_ret = fe_err(r);
  return p;
}

/* ---- Specialization constants ------------------------------------------------ */

/* clSetProgramSpecializationConstant: piextProgramSetSpecializationConstant. */
cl_int CL_API_CALL fe_clSetProgramSpecializationConstant(cl_program program, cl_uint spec_id,
                                                         size_t spec_size,
                                                         const void *spec_value)
{
  FE_CHECK(program, FE_PROGRAM, CL_INVALID_PROGRAM);
  /* The specification's code for a program not made from IL. */
  if (program->origin != FE_PROG_IL)
    return CL_INVALID_PROGRAM;
  if (!spec_value)
    return CL_INVALID_VALUE;
  return fe_err(pirt_piextProgramSetSpecializationConstant(program->o.pl, program->pi,
                                                           spec_id, spec_size, spec_value));
}

/* ---- Info queries ------------------------------------------------------------ */

/* Whether PI reports an executable built for one of the devices (fe.h). */
bool fe_program_executable(cl_program p)
{
  if (!p->pi)
    return false;
  for (cl_uint i = 0; i < p->ndev; i++) {
    pi_program_build_status st = PI_PROGRAM_BUILD_STATUS_NONE;
    pi_program_binary_type bt = PI_PROGRAM_BINARY_TYPE_NONE;
    if (pirt_piProgramGetBuildInfo(p->o.pl, p->pi, p->devices[i]->pi,
                                   PI_PROGRAM_BUILD_INFO_STATUS, sizeof st, &st,
                                   NULL) == PI_SUCCESS &&
        st == PI_PROGRAM_BUILD_STATUS_SUCCESS &&
        pirt_piProgramGetBuildInfo(p->o.pl, p->pi, p->devices[i]->pi,
                                   PI_PROGRAM_BUILD_INFO_BINARY_TYPE, sizeof bt, &bt,
                                   NULL) == PI_SUCCESS &&
        bt == PI_PROGRAM_BINARY_TYPE_EXECUTABLE)
      return true;
  }
  return false;
}

/* CL_PROGRAM_BINARIES where the application's array skips some devices
 * with NULL entries: not every implementation honours those (PoCL writes
 * through them), so PI gets a copy of the array whose NULL entries point at
 * scratch room of the binary's size. */
static cl_int binaries_skipping(cl_program p, unsigned char **want)
{
  size_t *sizes = calloc(p->ndev, sizeof *sizes);
  unsigned char **bins = calloc(p->ndev, sizeof *bins);
  bool *scratch = calloc(p->ndev, sizeof *scratch);
  pi_result r = sizes && bins && scratch ? PI_SUCCESS : PI_ERROR_OUT_OF_HOST_MEMORY;
  if (r == PI_SUCCESS)
    r = pirt_piProgramGetInfo(p->o.pl, p->pi, PI_PROGRAM_INFO_BINARY_SIZES,
                              p->ndev * sizeof *sizes, sizes, NULL);
  for (cl_uint i = 0; r == PI_SUCCESS && i < p->ndev; i++) {
    bins[i] = want[i];
    if (!bins[i]) {
      scratch[i] = true;
      if (!(bins[i] = malloc(sizes[i] ? sizes[i] : 1)))
        r = PI_ERROR_OUT_OF_HOST_MEMORY;
    }
  }
  if (r == PI_SUCCESS)
    r = pirt_piProgramGetInfo(p->o.pl, p->pi, PI_PROGRAM_INFO_BINARIES,
                              p->ndev * sizeof *bins, bins, NULL);
  for (cl_uint i = 0; bins && scratch && i < p->ndev; i++)
    if (scratch[i])
      free(bins[i]);
  free(sizes);
  free(bins);
  free(scratch);
  return fe_err(r);
}

static pi_result program_getter(const void *obj, uint32_t q, size_t n, void *v, size_t *r)
{
  const struct _cl_program *p = obj;
  return pirt_piProgramGetInfo(p->o.pl, p->pi, q, n, v, r);
}

/* clGetProgramInfo: the wrapper's answers, or piProgramGetInfo. */
cl_int CL_API_CALL fe_clGetProgramInfo(cl_program program, cl_program_info param, size_t size,
                                       void *value, size_t *size_ret)
{
  FE_CHECK(program, FE_PROGRAM, CL_INVALID_PROGRAM);
  switch (param) {
  case CL_PROGRAM_REFERENCE_COUNT: {
    cl_uint refs = atomic_load(&program->o.refs);
    return FE_PUT_VAL(size, value, size_ret, refs);
  }
  case CL_PROGRAM_CONTEXT:
    return FE_PUT_VAL(size, value, size_ret, program->ctx);
  case CL_PROGRAM_NUM_DEVICES:
    return FE_PUT_VAL(size, value, size_ret, program->ndev);
  case CL_PROGRAM_DEVICES:
    return fe_put(size, value, size_ret, program->devices,
                  program->ndev * sizeof *program->devices);
  case CL_PROGRAM_SOURCE:
    return fe_put_str(size, value, size_ret, program->source);
  case CL_PROGRAM_IL:
    return fe_put(size, value, size_ret, program->il, program->il ? program->il_size : 0);
  case CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT:
  case CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT: {
    cl_bool no = CL_FALSE; /* no device offers program-scope constructors */
    return FE_PUT_VAL(size, value, size_ret, no);
  }
  case CL_PROGRAM_BINARY_SIZES:
    if (!program->pi) {
      /* No binary for any device: zeros. */
      size_t n = program->ndev * sizeof(size_t);
      if (value && size < n)
        return CL_INVALID_VALUE;
      if (value)
        memset(value, 0, n);
      if (size_ret)
        *size_ret = n;
      return CL_SUCCESS;
    }
    return fe_pi_info("pi_program_info", program_getter, program, param, size, value,
                      size_ret);
  case CL_PROGRAM_BINARIES: {
    /* `value` is the application's array of one pointer per device, each
     * to room for that device's CL_PROGRAM_BINARY_SIZES bytes (NULL skips
     * the device); PI fills it the same way. */
    size_t n = program->ndev * sizeof(unsigned char *);
    if (value && size < n)
      return CL_INVALID_VALUE;
    if (size_ret)
      *size_ret = n;
    unsigned char **want = value;
    cl_uint skipped = 0;
    for (cl_uint i = 0; value && i < program->ndev; i++)
      skipped += want[i] == NULL;
    if (!program->pi || !value || skipped == program->ndev)
      return CL_SUCCESS;
    if (!skipped)
      return fe_err(pirt_piProgramGetInfo(program->o.pl, program->pi,
                                          PI_PROGRAM_INFO_BINARIES, n, value, NULL));
    return binaries_skipping(program, want);
  }
  case CL_PROGRAM_NUM_KERNELS:
  case CL_PROGRAM_KERNEL_NAMES:
    /* Asked of PI first: not every implementation refuses these queries
     * before a build (rusticl answers 0 kernels). */
    if (!fe_program_executable(program))
      return CL_INVALID_PROGRAM_EXECUTABLE;
    return fe_pi_info("pi_program_info", program_getter, program, param, size, value,
                      size_ret);
  default:
    return CL_INVALID_VALUE;
  }
}

/* piProgramGetBuildInfo bound to one device, for fe_pi_info. */
struct build_query {
  cl_program p;
  cl_device_id d;
};

static pi_result build_getter(const void *obj, uint32_t q, size_t n, void *v, size_t *r)
{
  const struct build_query *b = obj;
  return pirt_piProgramGetBuildInfo(b->p->o.pl, b->p->pi, b->d->pi, q, n, v, r);
}

/* clGetProgramBuildInfo: piProgramGetBuildInfo (the wrapper's answers for a
 * source no plugin compiles). */
cl_int CL_API_CALL fe_clGetProgramBuildInfo(cl_program program, cl_device_id device,
                                            cl_program_build_info param, size_t size,
                                            void *value, size_t *size_ret)
{
  FE_CHECK(program, FE_PROGRAM, CL_INVALID_PROGRAM);
  if (!fe_program_has_device(program, device))
    return CL_INVALID_DEVICE;
  switch (param) {
  case CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE: {
    size_t none = 0; /* no device offers program-scope variables */
    return FE_PUT_VAL(size, value, size_ret, none);
  }
  case CL_PROGRAM_BUILD_STATUS:
  case CL_PROGRAM_BUILD_OPTIONS:
  case CL_PROGRAM_BUILD_LOG:
  case CL_PROGRAM_BINARY_TYPE:
    break;
  default:
    return CL_INVALID_VALUE;
  }
  if (program->pi) {
    struct build_query b = {program, device};
    return fe_pi_info("pi_program_build_info", build_getter, &b, param, size, value,
                      size_ret);
  }
  /* A source no plugin compiles: what its last build attempt left. */
  cl_int err;
  pthread_mutex_lock(&program->lock);
  switch (param) {
  case CL_PROGRAM_BUILD_STATUS:
    err = FE_PUT_VAL(size, value, size_ret, program->status);
    break;
  case CL_PROGRAM_BUILD_OPTIONS:
    err = fe_put_str(size, value, size_ret, program->options);
    break;
  case CL_PROGRAM_BUILD_LOG:
    err = fe_put_str(size, value, size_ret,
                     program->status == CL_BUILD_ERROR
                         ? "no OpenCL C compiler is available for this device"
                         : "");
    break;
  default: {
    cl_program_binary_type none = CL_PROGRAM_BINARY_TYPE_NONE;
    err = FE_PUT_VAL(size, value, size_ret, none);
    break;
  }
  }
  pthread_mutex_unlock(&program->lock);
  return err;
}
