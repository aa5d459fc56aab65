/*
 * fe_kernel.c: OpenCL kernel objects over PI kernels.
 *
 * Creation, info queries, retain and release are the PI calls of the same
 * shape. clSetKernelArg, the hot path, becomes one PI call chosen by what
 * the argument is: a memory object -> piextKernelSetArgMemObj with its PI
 * handle, a sampler -> piextKernelSetArgSampler, local memory (no value,
 * a size) and plain values -> piKernelSetArg. PI has no query for an
 * argument's type, so the front end learns each argument's class from the
 * values the application passes, as ICD layers do: a value of
 * sizeof(cl_mem) bytes that holds a live cl_mem (or cl_sampler) of the
 * front end makes a memory (sampler) argument. The first such check of an
 * argument reads the candidate through process_vm_readv (a value that is
 * not a pointer cannot fault; a pipe where that call is not allowed); the
 * class is then cached in the kernel, so later calls cost a load and a
 * switch, and a later value of the wrong kind gets the specification's
 * CL_INVALID_MEM_OBJECT / CL_INVALID_SAMPLER / CL_INVALID_ARG_SIZE (a
 * local-memory argument, learnt from a size with no value, refuses a value
 * with CL_INVALID_ARG_VALUE). The kernel keeps each argument's last value
 * (a small record per argument, reused) for clCloneKernel, which PI lacks:
 * a clone is a new PI kernel of the same name with every argument and
 * execution setting applied again.
 *
 * What PI cannot answer: clGetKernelArgInfo (PI has no argument queries)
 * answers CL_KERNEL_ARG_INFO_NOT_AVAILABLE for every valid query, as the
 * specification allows; the sub-group queries PI does not describe
 * (CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_
 * COUNT) are refused with CL_INVALID_VALUE; SVM execution settings answer
 * CL_INVALID_OPERATION (no device of the front end offers SVM).
 *
 * Thread safety: OpenCL lets clSetKernelArg, clSetKernelExecInfo and
 * clCloneKernel race on one kernel only at the application's peril, so the
 * argument records take no lock.
 */
#define _GNU_SOURCE /* process_vm_readv */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fe_mem.h"

/* What an argument is, learnt from its values (fe_arg.cls). */
enum { ARG_UNKNOWN = 0, ARG_PLAIN, ARG_MEM, ARG_SAMPLER, ARG_LOCAL };
/* How an argument was last set (fe_arg.set), for clCloneKernel. */
enum { SET_NONE = 0, SET_VALUE, SET_LOCAL, SET_MEM, SET_SAMPLER, SET_USM, SET_LOST };

#define ARG_INLINE 16 /* values up to this size live in the record */

struct fe_arg {
  uint8_t cls;
  uint8_t set;
  uint32_t cap;     /* bytes at heap */
  size_t size;      /* the value's size (SET_VALUE, SET_LOCAL) */
  void *heap;       /* larger values */
  union {
    unsigned char bytes[ARG_INLINE];
    const void *handle; /* SET_MEM: pi_mem; SET_SAMPLER: pi_sampler; SET_USM: pointer */
  } v;
};


/* ---- Wrappers ----------------------------------------------------------------- */

/* Takes (hold) or drops references on the memory objects and samplers the
 * argument records of `k` name (fe_kernel_snapshot): a memory object the
 * application holds is kept whole (fe_mem_hold), anything else by its PI
 * handle. False when out of memory (nothing taken). */
static bool hold_args(cl_kernel k, bool hold)
{
  if (hold && k->nargs && !(k->held_mems = calloc(k->nargs, sizeof *k->held_mems)))
    return false;
  for (cl_uint i = 0; i < k->nargs; i++) {
    const struct fe_arg *a = &k->args[i];
    if (a->set == SET_MEM && a->v.handle) {
      pi_mem m = (pi_mem)(uintptr_t)a->v.handle;
      cl_mem w = hold ? fe_lookup(FE_MEM, m) : k->held_mems ? k->held_mems[i] : NULL;
      if (w && hold) {
        fe_mem_hold(w);
        k->held_mems[i] = w;
      } else if (w) {
        fe_mem_drop(w);
      } else if (hold) {
        pirt_piMemRetain(k->o.pl, m);
      } else {
        pirt_piMemRelease(k->o.pl, m);
      }
    } else if (a->set == SET_SAMPLER && a->v.handle) {
      pi_sampler s = (pi_sampler)(uintptr_t)a->v.handle;
      if (hold)
        pirt_piSamplerRetain(k->o.pl, s);
      else
        pirt_piSamplerRelease(k->o.pl, s);
    }
  }
  if (!hold) {
    free(k->held_mems);
    k->held_mems = NULL;
  }
  return true;
}

static void kernel_free(void *o)
{
  cl_kernel k = o;
  if (fe_lookup(FE_KERNEL, k->pi) == k)
    fe_map_remove(FE_KERNEL, k->pi);
  if (k->holds_args)
    hold_args(k, false);
  for (cl_uint i = 0; i < k->nargs; i++)
    free(k->args[i].heap);
  free(k->args);
  free(k->name);
  free(k->usm_ptrs);
  cl_program p = k->prog;
  atomic_fetch_sub(&p->kernels, 1);
  fe_unref(p, fe_program_free);
}

/* Wraps a new PI kernel `pk` named `name` of `p`; on failure the PI kernel
 * is released and NULL returned with *err set. */
static cl_kernel kernel_wrap(cl_program p, pi_kernel pk, const char *name, cl_int *err)
{
  pi_uint32 nargs = 0;
  pi_result r =
      pirt_piKernelGetInfo(p->o.pl, pk, PI_KERNEL_INFO_NUM_ARGS, sizeof nargs, &nargs, NULL);
  if (r != PI_SUCCESS) {
    pirt_piKernelRelease(p->o.pl, pk);
    *err = fe_err(r);
    return NULL;
  }
  cl_kernel k = fe_new(sizeof *k, FE_KERNEL, p->o.pl);
  char *n = strdup(name);
  struct fe_arg *args = calloc(nargs ? nargs : 1, sizeof *args);
  if (!k || !n || !args) {
    free(k);
    free(n);
    free(args);
    pirt_piKernelRelease(p->o.pl, pk);
    *err = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  k->pi = pk;
  k->prog = p;
  k->ctx = p->ctx;
  k->name = n;
  k->nargs = nargs;
  k->args = args;
  fe_ref(p);
  atomic_fetch_add(&p->kernels, 1);
  fe_map_add(FE_KERNEL, pk, k);
  *err = CL_SUCCESS;
  return k;
}

/* clCreateKernel: piKernelCreate, and its argument count. */
cl_kernel CL_API_CALL fe_clCreateKernel(cl_program program, const char *kernel_name,
                                        cl_int *errcode_ret)
{
  if (!FE_IS(program, FE_PROGRAM))
    FE_FAIL(errcode_ret, CL_INVALID_PROGRAM);
  if (!kernel_name)
    FE_FAIL(errcode_ret, CL_INVALID_VALUE);
  if (!program->pi)
    FE_FAIL(errcode_ret, CL_INVALID_PROGRAM_EXECUTABLE); /* never built */
  pi_kernel pk = NULL;
  pi_result r = pirt_piKernelCreate(program->o.pl, program->pi, kernel_name, &pk);
  /* No executable comes first (PoCL says "no such kernel" of a program
   * only compiled); asked of PI only when the name was refused. */
  if (r == PI_ERROR_INVALID_KERNEL_NAME && !fe_program_executable(program))
    r = PI_ERROR_INVALID_PROGRAM_EXECUTABLE;
  if (r != PI_SUCCESS)
    FE_FAIL(errcode_ret, fe_err(r));
  cl_int err;
  cl_kernel k = kernel_wrap(program, pk, kernel_name, &err);
  if (errcode_ret)
    *errcode_ret = err;
  return k;
}

/* clCreateKernelsInProgram: one piKernelCreate per name PI lists. */
cl_int CL_API_CALL fe_clCreateKernelsInProgram(cl_program program, cl_uint num_kernels,
                                               cl_kernel *kernels, cl_uint *num_kernels_ret)
{
  FE_CHECK(program, FE_PROGRAM, CL_INVALID_PROGRAM);
  if (!fe_program_executable(program))
    return CL_INVALID_PROGRAM_EXECUTABLE;
  const pirt_plugin *pl = program->o.pl;
  size_t n = 0;
  pi_result r = pirt_piProgramGetInfo(pl, program->pi, PI_PROGRAM_INFO_NUM_KERNELS, sizeof n,
                                      &n, NULL);
  if (r != PI_SUCCESS)
    return fe_err(r);
  if (kernels && num_kernels < n)
    return CL_INVALID_VALUE;
  if (kernels && n) {
    size_t len = 0;
    r = pirt_piProgramGetInfo(pl, program->pi, PI_PROGRAM_INFO_KERNEL_NAMES, 0, NULL, &len);
    char *names = r == PI_SUCCESS ? malloc(len + 1) : NULL;
    if (r == PI_SUCCESS && !names)
      return CL_OUT_OF_HOST_MEMORY;
    if (r == PI_SUCCESS)
      r = pirt_piProgramGetInfo(pl, program->pi, PI_PROGRAM_INFO_KERNEL_NAMES, len, names,
                                NULL);
    if (r != PI_SUCCESS) {
      free(names);
      return fe_err(r);
    }
    names[len] = 0;
    size_t made = 0;
    cl_int err = CL_SUCCESS;
    for (char *s = names, *save = NULL, *name; (name = strtok_r(s, ";", &save)); s = NULL) {
      if (made == n)
        break;
      pi_kernel pk = NULL;
      r = pirt_piKernelCreate(pl, program->pi, name, &pk);
      if (r == PI_ERROR_INVALID_KERNEL_DEFINITION)
        continue; /* not the same on every device: no kernel object for it */
      kernels[made] = r == PI_SUCCESS ? kernel_wrap(program, pk, name, &err) : NULL;
      if (r != PI_SUCCESS)
        err = fe_err(r);
      if (!kernels[made])
        break;
      made++;
    }
    free(names);
    if (err != CL_SUCCESS) {
      for (size_t i = 0; i < made; i++)
        fe_clReleaseKernel(kernels[i]);
      return err;
    }
    n = made;
  }
  if (num_kernels_ret)
    *num_kernels_ret = (cl_uint)n;
  return CL_SUCCESS;
}

/* clRetainKernel: piKernelRetain. */
cl_int CL_API_CALL fe_clRetainKernel(cl_kernel kernel)
{
  FE_CHECK(kernel, FE_KERNEL, CL_INVALID_KERNEL);
  pi_result r = pirt_piKernelRetain(kernel->o.pl, kernel->pi);
  if (r == PI_SUCCESS)
    fe_ref(kernel);
  return fe_err(r);
}

/* clReleaseKernel: piKernelRelease; the wrapper goes with the last one. */
cl_int CL_API_CALL fe_clReleaseKernel(cl_kernel kernel)
{
  FE_CHECK(kernel, FE_KERNEL, CL_INVALID_KERNEL);
  pi_result r = pirt_piKernelRelease(kernel->o.pl, kernel->pi);
  if (r == PI_SUCCESS)
    fe_unref(kernel, kernel_free);
  return fe_err(r);
}

/* ---- Arguments ---------------------------------------------------------------- */

static void keep_large(struct fe_arg *a, size_t size, const void *value);

/* Keeps a value for clCloneKernel. */
static inline void keep_value(struct fe_arg *a, size_t size, const void *value)
{
  a->size = size;
  a->set = SET_VALUE;
  /* The usual sizes as constants, so the copies are inlined. */
  if (size == 4) {
    memcpy(a->v.bytes, value, 4);
    return;
  }
  if (size == 8) {
    memcpy(a->v.bytes, value, 8);
    return;
  }
  if (size <= ARG_INLINE) {
    memcpy(a->v.bytes, value, size);
    return;
  }
  keep_large(a, size, value);
}

/* A value larger than a record holds: kept on the heap, reused. */
static __attribute__((noinline)) void keep_large(struct fe_arg *a, size_t size,
                                                 const void *value)
{
  if (a->cap < size) {
    void *h = size <= UINT32_MAX ? realloc(a->heap, size) : NULL;
    if (!h) {
      a->set = SET_LOST; /* a clone of this kernel fails for lack of memory */
      return;
    }
    a->heap = h;
    a->cap = (uint32_t)size;
  }
  memcpy(a->heap, value, size);
}

static inline void keep_handle(struct fe_arg *a, uint8_t set, const void *h)
{
  a->set = set;
  a->v.handle = h;
}

/* A plain value, or local memory when `value` is NULL. */
static inline cl_int set_plain(cl_kernel k, struct fe_arg *a, cl_uint i, size_t size,
                               const void *value)
{
  pi_result r = pirt_piKernelSetArg(k->o.pl, k->pi, i, size, value);
  if (r != PI_SUCCESS)
    return fe_err(r);
  if (value)
    keep_value(a, size, value);
  else {
    a->set = SET_LOCAL;
    a->size = size;
  }
  return CL_SUCCESS;
}

/* A memory object; NULL (no value, or a NULL cl_mem) for a NULL buffer. */
static inline cl_int set_mem(cl_kernel k, struct fe_arg *a, cl_uint i, size_t size,
                             const void *value)
{
  if (size != sizeof(cl_mem))
    return CL_INVALID_ARG_SIZE;
  cl_mem m = value ? *(const cl_mem *)value : NULL;
  pi_mem pm = NULL;
  if (m) {
    /* A wrapper only held commands keep alive is not the application's. */
    if (!fe_mem_live(m) || m->ctx != k->ctx)
      return CL_INVALID_MEM_OBJECT;
    pm = m->pi;
  }
  pi_result r = pirt_piextKernelSetArgMemObj(k->o.pl, k->pi, i, NULL, &pm);
  if (r != PI_SUCCESS)
    return fe_err(r);
  keep_handle(a, SET_MEM, pm);
  return CL_SUCCESS;
}

static inline cl_int set_sampler(cl_kernel k, struct fe_arg *a, cl_uint i, size_t size,
                                 const void *value)
{
  if (size != sizeof(cl_sampler))
    return CL_INVALID_ARG_SIZE;
  if (!value)
    return CL_INVALID_ARG_VALUE;
  cl_sampler s = *(const cl_sampler *)value;
  if (!FE_IS(s, FE_SAMPLER) || s->ctx != k->ctx ||
      !atomic_load_explicit(&s->apprefs, memory_order_relaxed))
    return CL_INVALID_SAMPLER;
  pi_sampler ps = s->pi;
  pi_result r = pirt_piextKernelSetArgSampler(k->o.pl, k->pi, i, &ps);
  if (r != PI_SUCCESS)
    return fe_err(r);
  keep_handle(a, SET_SAMPLER, ps);
  return CL_SUCCESS;
}

/* The fallback of safe_read where process_vm_readv is not allowed: a pipe
 * copies the bytes or fails with EFAULT. */
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static int probe_pipe[2] = {-1, -1};

/* Copies `n` bytes at `p` to `out` when they are readable, never faulting. */
static bool safe_read(const void *p, void *out, size_t n)
{
  int saved = errno;
  struct iovec local = {out, n}, remote = {(void *)(uintptr_t)p, n};
  ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  bool ok = got == (ssize_t)n;
  if (got < 0 && errno != EFAULT) {
    pthread_mutex_lock(&probe_lock);
    if (probe_pipe[1] < 0 && pipe2(probe_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
      probe_pipe[0] = probe_pipe[1] = -1;
    ok = probe_pipe[1] >= 0 && write(probe_pipe[1], p, n) == (ssize_t)n &&
         read(probe_pipe[0], out, n) == (ssize_t)n;
    pthread_mutex_unlock(&probe_lock);
  }
  errno = saved;
  return ok;
}

/* FE_MEM or FE_SAMPLER when `w` is a live memory object or sampler of the
 * front end, else 0. `w` is any 8 bytes an application passed: it is read
 * only through safe_read. */
static uint32_t object_kind(const void *w)
{
  if ((uintptr_t)w % _Alignof(max_align_t))
    return 0; /* wrappers come from calloc */
  fe_obj head;
  if (!safe_read(w, &head, sizeof head) || head.dispatch != &fe_dispatch)
    return 0;
  return head.kind == FE_MEM || head.kind == FE_SAMPLER ? head.kind : 0;
}

/* The first value of an argument whose class is not known yet (out of
 * line: the hot path stays small). */
static __attribute__((noinline)) cl_int set_first(cl_kernel k, struct fe_arg *a, cl_uint i,
                                                   size_t size, const void *value)
{
  cl_int err;
  if (!value) {
    /* Local memory, or (of pointer size) perhaps a NULL buffer. */
    if ((err = set_plain(k, a, i, size, NULL)) == CL_SUCCESS && size != sizeof(void *))
      a->cls = ARG_LOCAL;
    return err;
  }
  if (size == sizeof(void *)) {
    const void *w;
    memcpy(&w, value, sizeof w);
    if (!w)
      return set_plain(k, a, i, size, value); /* zeros: a NULL buffer or a 0 */
    switch (object_kind(w)) {
    case FE_MEM:
      if ((err = set_mem(k, a, i, size, value)) == CL_SUCCESS)
        a->cls = ARG_MEM;
      return err;
    case FE_SAMPLER:
      if ((err = set_sampler(k, a, i, size, value)) == CL_SUCCESS)
        a->cls = ARG_SAMPLER;
      return err;
    default:
      break;
    }
  }
  if ((err = set_plain(k, a, i, size, value)) == CL_SUCCESS)
    a->cls = ARG_PLAIN;
  return err;
}

/* clSetKernelArg, the hot path: the PI call of the argument's class. */
cl_int CL_API_CALL fe_clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                                     const void *arg_value)
{
  if (!FE_IS(kernel, FE_KERNEL))
    return CL_INVALID_KERNEL;
  if (arg_index >= kernel->nargs)
    return CL_INVALID_ARG_INDEX;
  struct fe_arg *a = &kernel->args[arg_index];
  switch (a->cls) {
  case ARG_PLAIN:
    return set_plain(kernel, a, arg_index, arg_size, arg_value);
  case ARG_MEM:
    return set_mem(kernel, a, arg_index, arg_size, arg_value);
  case ARG_SAMPLER:
    return set_sampler(kernel, a, arg_index, arg_size, arg_value);
  case ARG_LOCAL:
    if (arg_value)
      return CL_INVALID_ARG_VALUE; /* a local argument takes a size only */
    return set_plain(kernel, a, arg_index, arg_size, NULL);
  default:
    return set_first(kernel, a, arg_index, arg_size, arg_value);
  }
}

/* clSetKernelArgMemPointerINTEL: piextKernelSetArgPointer. */
cl_int CL_API_CALL fe_clSetKernelArgMemPointerINTEL(cl_kernel kernel, cl_uint arg_index,
                                                    const void *arg_value)
{
  if (!FE_IS(kernel, FE_KERNEL))
    return CL_INVALID_KERNEL;
  if (arg_index >= kernel->nargs)
    return CL_INVALID_ARG_INDEX;
  /* PI takes a pointer to the pointer, as DPC++ passes it. */
  pi_result r = pirt_piextKernelSetArgPointer(kernel->o.pl, kernel->pi, arg_index,
                                              sizeof arg_value, &arg_value);
  if (r != PI_SUCCESS)
    return fe_err(r);
  keep_handle(&kernel->args[arg_index], SET_USM, arg_value);
  return CL_SUCCESS;
}

/* ---- Execution settings -------------------------------------------------------- */

/* PI has one indirect-access switch for the three USM kinds: on while any
 * of them is. */
static pi_result set_indirect(cl_kernel k)
{
  pi_bool on = k->usm_indirect[0] || k->usm_indirect[1] || k->usm_indirect[2];
  return pirt_piKernelSetExecInfo(k->o.pl, k->pi, PI_USM_INDIRECT_ACCESS, sizeof on, &on);
}

/* clSetKernelExecInfo: piKernelSetExecInfo for the USM settings. */
cl_int CL_API_CALL fe_clSetKernelExecInfo(cl_kernel kernel, cl_kernel_exec_info param,
                                          size_t size, const void *value)
{
  FE_CHECK(kernel, FE_KERNEL, CL_INVALID_KERNEL);
  switch (param) {
  case CL_KERNEL_EXEC_INFO_SVM_PTRS:
  case CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM:
    return CL_INVALID_OPERATION; /* no device of the front end offers SVM */
  case CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL:
  case CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL:
  case CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL: {
    if (!value || size != sizeof(cl_bool))
      return CL_INVALID_VALUE;
    size_t which = param - CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL;
    cl_bool was = kernel->usm_indirect[which];
    kernel->usm_indirect[which] = *(const cl_bool *)value ? CL_TRUE : CL_FALSE;
    pi_result r = set_indirect(kernel);
    if (r != PI_SUCCESS)
      kernel->usm_indirect[which] = was;
    return fe_err(r);
  }
  case CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL: {
    if ((size && !value) || size % sizeof(void *))
      return CL_INVALID_VALUE;
    void **copy = size ? malloc(size) : NULL;
    if (size && !copy)
      return CL_OUT_OF_HOST_MEMORY;
    if (size)
      memcpy(copy, value, size);
    pi_result r = pirt_piKernelSetExecInfo(kernel->o.pl, kernel->pi, PI_USM_PTRS, size, value);
    if (r != PI_SUCCESS) {
      free(copy);
      return fe_err(r);
    }
    free(kernel->usm_ptrs);
    kernel->usm_ptrs = copy;
    kernel->nusm_ptrs = size / sizeof(void *);
    return CL_SUCCESS;
  }
  default:
    return CL_INVALID_VALUE;
  }
}

/* ---- Cloning ------------------------------------------------------------------- */

/* Applies the argument record `a` to argument `i` of `k`. */
static pi_result replay_arg(cl_kernel k, cl_uint i, const struct fe_arg *a)
{
  const pirt_plugin *pl = k->o.pl;
  switch (a->set) {
  case SET_VALUE:
    return pirt_piKernelSetArg(pl, k->pi, i, a->size,
                               a->size <= ARG_INLINE ? a->v.bytes : a->heap);
  case SET_LOCAL:
    return pirt_piKernelSetArg(pl, k->pi, i, a->size, NULL);
  case SET_MEM: {
    pi_mem m = (pi_mem)(uintptr_t)a->v.handle;
    return pirt_piextKernelSetArgMemObj(pl, k->pi, i, NULL, &m);
  }
  case SET_SAMPLER: {
    pi_sampler s = (pi_sampler)(uintptr_t)a->v.handle;
    return pirt_piextKernelSetArgSampler(pl, k->pi, i, &s);
  }
  case SET_USM: {
    const void *p = a->v.handle;
    return pirt_piextKernelSetArgPointer(pl, k->pi, i, sizeof p, &p);
  }
  case SET_LOST:
    return PI_ERROR_OUT_OF_HOST_MEMORY;
  default:
    return PI_SUCCESS; /* never set */
  }
}

/* clCloneKernel: a new PI kernel of the same name, given the source
 * kernel's arguments and execution settings. */
cl_kernel CL_API_CALL fe_clCloneKernel(cl_kernel source_kernel, cl_int *errcode_ret)
{
  if (!FE_IS(source_kernel, FE_KERNEL))
    FE_FAIL(errcode_ret, CL_INVALID_KERNEL);
  cl_kernel src = source_kernel;
  pi_kernel pk = NULL;
  pi_result r = pirt_piKernelCreate(src->o.pl, src->prog->pi, src->name, &pk);
  if (r != PI_SUCCESS)
    FE_FAIL(errcode_ret, fe_err(r));
  cl_int err;
  cl_kernel k = kernel_wrap(src->prog, pk, src->name, &err);
  if (!k)
    FE_FAIL(errcode_ret, err);
  for (cl_uint i = 0; i < k->nargs && i < src->nargs && r == PI_SUCCESS; i++) {
    const struct fe_arg *a = &src->args[i];
    r = replay_arg(k, i, a);
    if (r != PI_SUCCESS)
      break;
    k->args[i].cls = a->cls;
    if (a->set == SET_VALUE)
      keep_value(&k->args[i], a->size, a->size <= ARG_INLINE ? a->v.bytes : a->heap);
    else {
      k->args[i].set = a->set;
      k->args[i].size = a->size;
      k->args[i].v = a->v;
    }
  }
  if (r == PI_SUCCESS &&
      (src->usm_indirect[0] || src->usm_indirect[1] || src->usm_indirect[2])) {
    memcpy(k->usm_indirect, src->usm_indirect, sizeof k->usm_indirect);
    r = set_indirect(k);
  }
  if (r == PI_SUCCESS && src->usm_ptrs) {
    size_t n = src->nusm_ptrs * sizeof(void *);
    k->usm_ptrs = malloc(n);
    r = k->usm_ptrs ? pirt_piKernelSetExecInfo(k->o.pl, k->pi, PI_USM_PTRS, n, src->usm_ptrs)
                    : PI_ERROR_OUT_OF_HOST_MEMORY;
    if (k->usm_ptrs) {
      memcpy(k->usm_ptrs, src->usm_ptrs, n);
      k->nusm_ptrs = src->nusm_ptrs;
    }
  }
  if (r != PI_SUCCESS) {
    fe_clReleaseKernel(k);
    FE_FAIL(errcode_ret, fe_err(r));
  }
  if (errcode_ret)
    *errcode_ret = CL_SUCCESS;
  return k;
}

/* Every argument set (fe.h): a failed set leaves the record as it was. */
bool fe_kernel_args_set(cl_kernel k)
{
  for (cl_uint i = 0; i < k->nargs; i++)
    if (k->args[i].set == SET_NONE)
      return false;
  return true;
}

/* A clone that keeps its arguments' objects alive (fe.h). */
cl_kernel fe_kernel_snapshot(cl_kernel k, cl_int *err)
{
  cl_kernel c = fe_clCloneKernel(k, err);
  if (c && !hold_args(c, true)) {
    fe_clReleaseKernel(c);
    *err = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  if (c)
    c->holds_args = true;
  return c;
}

/* ---- Info queries -------------------------------------------------------------- */

static pi_result kernel_getter(const void *obj, uint32_t q, size_t n, void *v, size_t *r)
{
  const struct _cl_kernel *k = obj;
  return pirt_piKernelGetInfo(k->o.pl, k->pi, q, n, v, r);
}

/* clGetKernelInfo: the wrapper's answers; attributes from piKernelGetInfo. */
cl_int CL_API_CALL fe_clGetKernelInfo(cl_kernel kernel, cl_kernel_info param, size_t size,
                                      void *value, size_t *size_ret)
{
  FE_CHECK(kernel, FE_KERNEL, CL_INVALID_KERNEL);
  switch (param) {
  case CL_KERNEL_FUNCTION_NAME:
    return fe_put_str(size, value, size_ret, kernel->name);
  case CL_KERNEL_NUM_ARGS:
    return FE_PUT_VAL(size, value, size_ret, kernel->nargs);
  case CL_KERNEL_REFERENCE_COUNT: {
    cl_uint refs = atomic_load(&kernel->o.refs);
    return FE_PUT_VAL(size, value, size_ret, refs);
  }
  case CL_KERNEL_CONTEXT:
    return FE_PUT_VAL(size, value, size_ret, kernel->ctx);
  case CL_KERNEL_PROGRAM:
    return FE_PUT_VAL(size, value, size_ret, kernel->prog);
  case CL_KERNEL_ATTRIBUTES:
    return fe_pi_info("pi_kernel_info", kernel_getter, kernel, param, size, value, size_ret);
  default:
    return CL_INVALID_VALUE;
  }
}

/* The device a per-device kernel query is about: `dev`, which must be one of
 * the program's, or the program's only device when `dev` is NULL. */
static cl_int kernel_device(cl_kernel k, cl_device_id *dev)
{
  cl_program p = k->prog;
  if (!*dev) {
    if (p->ndev != 1)
      return CL_INVALID_DEVICE;
    *dev = p->devices[0];
    return CL_SUCCESS;
  }
  return fe_program_has_device(p, *dev) ? CL_SUCCESS : CL_INVALID_DEVICE;
}

/* piKernelGetGroupInfo bound to one device, for fe_pi_info. */
struct group_query {
  cl_kernel k;
  cl_device_id d;
};

static pi_result group_getter(const void *obj, uint32_t q, size_t n, void *v, size_t *r)
{
  const struct group_query *g = obj;
  return pirt_piKernelGetGroupInfo(g->k->o.pl, g->k->pi, g->d->pi, q, n, v, r);
}

/* clGetKernelWorkGroupInfo: piKernelGetGroupInfo. */
cl_int CL_API_CALL fe_clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
                                               cl_kernel_work_group_info param, size_t size,
                                               void *value, size_t *size_ret)
{
  FE_CHECK(kernel, FE_KERNEL, CL_INVALID_KERNEL);
  cl_int err = kernel_device(kernel, &device);
  if (err != CL_SUCCESS)
    return err;
  switch (param) {
  case CL_KERNEL_GLOBAL_WORK_SIZE:
    /* Only for custom devices and built-in kernels (PI has neither). */
    if (!(device->type & CL_DEVICE_TYPE_CUSTOM))
      return CL_INVALID_VALUE;
    break;
  case CL_KERNEL_WORK_GROUP_SIZE:
  case CL_KERNEL_COMPILE_WORK_GROUP_SIZE:
  case CL_KERNEL_LOCAL_MEM_SIZE:
  case CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
  case CL_KERNEL_PRIVATE_MEM_SIZE:
    break;
  default:
    return CL_INVALID_VALUE;
  }
  struct group_query g = {kernel, device};
  return fe_pi_info("pi_kernel_group_info", group_getter, &g, param, size, value, size_ret);
}

/* clGetKernelArgInfo: checked; PI cannot answer it. */
cl_int CL_API_CALL fe_clGetKernelArgInfo(cl_kernel kernel, cl_uint arg_index,
                                         cl_kernel_arg_info param, size_t size, void *value,
                                         size_t *size_ret)
{
  FE_CHECK(kernel, FE_KERNEL, CL_INVALID_KERNEL);
  (void)size;
  (void)value;
  (void)size_ret;
  if (arg_index >= kernel->nargs)
    return CL_INVALID_ARG_INDEX;
  switch (param) {
  case CL_KERNEL_ARG_ADDRESS_QUALIFIER:
  case CL_KERNEL_ARG_ACCESS_QUALIFIER:
  case CL_KERNEL_ARG_TYPE_NAME:
  case CL_KERNEL_ARG_TYPE_QUALIFIER:
  case CL_KERNEL_ARG_NAME:
    return CL_KERNEL_ARG_INFO_NOT_AVAILABLE; /* PI has no argument queries */
  default:
    return CL_INVALID_VALUE;
  }
}

/* clGetKernelSubGroupInfo and its KHR twin. PI answers a uint32_t where
 * OpenCL answers a size_t. */
static cl_int sub_group_info(cl_kernel kernel, cl_device_id device,
                             cl_kernel_sub_group_info param, size_t in_size,
                             const void *in_value, size_t size, void *value,
                             size_t *size_ret)
{
  FE_CHECK(kernel, FE_KERNEL, CL_INVALID_KERNEL);
  cl_int err = kernel_device(kernel, &device);
  if (err != CL_SUCCESS)
    return err;
  /* Sub-groups as the device reports them to the application. */
  cl_uint max_groups = 0;
  err = fe_clGetDeviceInfo(device, CL_DEVICE_MAX_NUM_SUB_GROUPS, sizeof max_groups,
                           &max_groups, NULL);
  if (err != CL_SUCCESS)
    return err;
  if (max_groups == 0)
    return CL_INVALID_OPERATION; /* the device has no sub-groups */
  switch (param) {
  case CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE:
    if (!in_value || in_size == 0 || in_size % sizeof(size_t) || in_size > 3 * sizeof(size_t))
      return CL_INVALID_VALUE;
    break;
  case CL_KERNEL_MAX_NUM_SUB_GROUPS:
  case CL_KERNEL_COMPILE_NUM_SUB_GROUPS:
  case CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL:
    in_size = 0;
    in_value = NULL;
    break;
  default:
    /* CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE and
     * CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT have no PI query. */
    return CL_INVALID_VALUE;
  }
  pi_uint32 v = 0;
  pi_result r = pirt_piKernelGetSubGroupInfo(kernel->o.pl, kernel->pi, device->pi, param, in_size,
                                   in_value, sizeof v, &v, NULL);
  if (r != PI_SUCCESS)
    return fe_err(r);
  size_t out = v;
  return FE_PUT_VAL(size, value, size_ret, out);
}

/* clGetKernelSubGroupInfo: piKernelGetSubGroupInfo. */
cl_int CL_API_CALL fe_clGetKernelSubGroupInfo(cl_kernel kernel, cl_device_id device,
                                              cl_kernel_sub_group_info param,
                                              size_t input_value_size, const void *input_value,
                                              size_t param_value_size, void *param_value,
                                              size_t *param_value_size_ret)
{
  return sub_group_info(kernel, device, param, input_value_size, input_value, param_value_size,
                        param_value, param_value_size_ret);
}

/* clGetKernelSubGroupInfoKHR (cl_khr_subgroups): as clGetKernelSubGroupInfo. */
cl_int CL_API_CALL fe_clGetKernelSubGroupInfoKHR(cl_kernel kernel, cl_device_id device,
                                                 cl_kernel_sub_group_info param,
                                                 size_t input_value_size,
                                                 const void *input_value,
                                                 size_t param_value_size, void *param_value,
                                                 size_t *param_value_size_ret)
{
  return sub_group_info(kernel, device, param, input_value_size, input_value, param_value_size,
                        param_value, param_value_size_ret);
}
