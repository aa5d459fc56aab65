/*
 * api.c: the application API of pirt.h over the PI plugins.
 *
 * Each object pairs the PI handle with the plugin that made it, so every
 * call goes through the traced pirt_call_* wrappers of that plugin. A failed
 * PI call becomes the PI result plus a message naming the call, the object
 * and the plugin's own explanation (pirt_fail_call).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "pirt_internal.h"

#define CHECK_ARG(cond, ...)                                                   \
  do {                                                                         \
    if (PIRT_UNLIKELY(!(cond)))                                                \
      return pirt_fail(PI_ERROR_INVALID_VALUE, __VA_ARGS__);                   \
  } while (0)

/* Before an object is read: once the runtime has shut down (a destructor
 * or a thread running after it), its devices and plugins are freed, which
 * the object points to (a queue made from it read the freed device; a
 * failed call read the freed plugin for its last error). Releases need no
 * gate: their PI calls fail at the wrappers' own, and only free. */
#define LIVE(fn, object)                                                       \
  do {                                                                         \
    if (PIRT_UNLIKELY(pirt_gate_closed()) &&                                   \
        pirt_api_gate((fn), (object)) != PI_SUCCESS)                           \
      return PI_ERROR_UNINITIALIZED;                                           \
  } while (0)

/* Runs a PI call; on failure returns with the message naming `what`. */
#define PI_TRY(pl, what, call)                                                 \
  do {                                                                         \
    pi_result r_ = (call);                                                     \
    if (PIRT_UNLIKELY(r_ != PI_SUCCESS))                                       \
      return pirt_fail_call((pl), (what), r_);                                 \
  } while (0)

/* ---- Contexts and queues ---------------------------------------------------- */

pi_result pirt_context_create(pirt_device *device, pirt_context **out)
{
  CHECK_ARG(device && out, "pirt_context_create: device and context must not be NULL");
  if (!pirt_global_get()) /* counts the thread; no device read once shut down */
    return pirt_fail(PI_ERROR_UNINITIALIZED, "pirt_context_create: the runtime "
                     "has shut down");
  pirt_context *c = calloc(1, sizeof *c);
  if (!c)
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "pirt_context_create: out of memory");
  c->plugin = device->plugin;
  c->device = device;
  atomic_init(&c->refs, 1);
  pi_result r = pirt_call_piContextCreate(c->plugin, NULL, 1, &device->device,
                                          NULL, NULL, &c->ctx);
  if (r != PI_SUCCESS) {
    free(c);
    return pirt_fail_call(device->plugin, "piContextCreate", r);
  }
  *out = c;
  return PI_SUCCESS;
}

pi_result pirt_context_unref(pirt_context *c, pi_result r)
{
  if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
    return r;
  pm_context_released(c->ctx);
  pi_result rc = pirt_call_piContextRelease(c->plugin, c->ctx);
  free(c);
  if (r != PI_SUCCESS)
    return r;
  return rc == PI_SUCCESS ? rc : pirt_fail_call(NULL, "piContextRelease", rc);
}

pi_result pirt_context_release(pirt_context *c)
{
  return c ? pirt_context_unref(c, PI_SUCCESS) : PI_SUCCESS;
}

pirt_device *pirt_context_device(const pirt_context *c)
{
  return c ? c->device : NULL;
}

pi_result pirt_queue_create(pirt_context *c, unsigned flags, pirt_queue **out)
{
  CHECK_ARG(c && out, "pirt_queue_create: context and queue must not be NULL");
  CHECK_ARG(!(flags & ~(PIRT_QUEUE_PROFILING | PIRT_QUEUE_OUT_OF_ORDER)),
            "pirt_queue_create: unknown flags 0x%x", flags);
  LIVE("pirt_queue_create", "context");
  pirt_queue *q = calloc(1, sizeof *q);
  if (!q)
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "pirt_queue_create: out of memory");
  pi_queue_properties props[] = {
      PI_QUEUE_FLAGS,
      ((flags & PIRT_QUEUE_PROFILING) ? PI_QUEUE_FLAG_PROFILING_ENABLE : 0) |
          ((flags & PIRT_QUEUE_OUT_OF_ORDER)
               ? PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE
               : 0),
      0};
  pi_result r = pirt_call_piextQueueCreate(c->plugin, c->ctx, c->device->device,
                                           props, &q->q);
  if (r != PI_SUCCESS) {
    free(q);
    return pirt_fail_call(c->plugin, "piextQueueCreate", r);
  }
  q->context = pirt_context_ref(c);
  *out = q;
  return PI_SUCCESS;
}

pi_result pirt_queue_finish(pirt_queue *q)
{
  CHECK_ARG(q, "pirt_queue_finish: queue is NULL");
  LIVE("pirt_queue_finish", "queue");
  PI_TRY(q->context->plugin, "piQueueFinish",
         pirt_call_piQueueFinish(q->context->plugin, q->q));
  return PI_SUCCESS;
}

pi_result pirt_queue_flush(pirt_queue *q)
{
  CHECK_ARG(q, "pirt_queue_flush: queue is NULL");
  LIVE("pirt_queue_flush", "queue");
  PI_TRY(q->context->plugin, "piQueueFlush",
         pirt_call_piQueueFlush(q->context->plugin, q->q));
  return PI_SUCCESS;
}

pi_result pirt_queue_release(pirt_queue *q)
{
  if (!q)
    return PI_SUCCESS;
  pirt_context *c = q->context;
  pi_result r = pirt_call_piQueueRelease(c->plugin, q->q);
  free(q);
  if (r != PI_SUCCESS)
    pirt_fail_call(NULL, "piQueueRelease", r);
  return pirt_context_unref(c, r);
}

/* ---- Memory --------------------------------------------------------------------- */

pi_result pirt_buffer_create(pirt_context *c, unsigned flags, size_t size,
                             const void *host, pirt_buffer **out)
{
  CHECK_ARG(c && out, "pirt_buffer_create: context and buffer must not be NULL");
  CHECK_ARG(size > 0, "pirt_buffer_create: size is 0; a buffer needs at least one byte");
  /* An unknown bit was dropped without a word (a PIRT_MAP_* or PI_MEM_*
   * flag passed here by mistake made a plain read-write buffer). */
  CHECK_ARG(!(flags & ~(unsigned)(PIRT_MEM_READ_ONLY | PIRT_MEM_WRITE_ONLY | PIRT_MEM_COPY_HOST)),
            "pirt_buffer_create: unknown flags 0x%x; use PIRT_MEM_READ_ONLY, "
            "PIRT_MEM_WRITE_ONLY and PIRT_MEM_COPY_HOST", flags);
  CHECK_ARG(!(flags & PIRT_MEM_COPY_HOST) || host,
            "pirt_buffer_create: PIRT_MEM_COPY_HOST needs host_data");
  CHECK_ARG((flags & (PIRT_MEM_READ_ONLY | PIRT_MEM_WRITE_ONLY)) !=
                (PIRT_MEM_READ_ONLY | PIRT_MEM_WRITE_ONLY),
            "pirt_buffer_create: READ_ONLY and WRITE_ONLY exclude each other");
  LIVE("pirt_buffer_create", "context");
  /* PI has no write-only flag (DPC++ neither): write-only is read-write. */
  pi_mem_flags f = (flags & PIRT_MEM_READ_ONLY) ? PI_MEM_ACCESS_READ_ONLY
                                                : PI_MEM_FLAGS_ACCESS_RW;
  if (flags & PIRT_MEM_COPY_HOST)
    f |= PI_MEM_FLAGS_HOST_PTR_COPY;
  pirt_buffer *b = calloc(1, sizeof *b);
  if (!b)
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "pirt_buffer_create: out of memory");
  b->size = size;
  pi_result r = pirt_call_piMemBufferCreate(
      c->plugin, c->ctx, f, size,
      (flags & PIRT_MEM_COPY_HOST) ? (void *)(uintptr_t)host : NULL, &b->mem, NULL);
  if (r != PI_SUCCESS) {
    free(b);
    pirt_fail_call(c->plugin, "piMemBufferCreate", r);
    return pirt_fail(r, "pirt_buffer_create: %zu bytes on %s: %s", size,
                     c->device->name ? c->device->name : "the device",
                     pirt_error_message());
  }
  b->context = pirt_context_ref(c);
  *out = b;
  return PI_SUCCESS;
}

pi_result pirt_buffer_release(pirt_buffer *b)
{
  if (!b)
    return PI_SUCCESS;
  pirt_context *c = b->context;
  pi_result r = pirt_call_piMemRelease(c->plugin, b->mem);
  free(b);
  if (r != PI_SUCCESS)
    pirt_fail_call(NULL, "piMemRelease", r);
  return pirt_context_unref(c, r);
}

size_t pirt_buffer_size(const pirt_buffer *b) { return b ? b->size : 0; }

pi_result pirt_usm_alloc(pirt_context *c, pirt_usm_kind kind, size_t size,
                         size_t alignment, void **ptr)
{
  CHECK_ARG(c && ptr, "pirt_usm_alloc: context and ptr must not be NULL");
  CHECK_ARG(size > 0, "pirt_usm_alloc: size is 0");
  CHECK_ARG(alignment <= UINT32_MAX, "pirt_usm_alloc: alignment too large");
  LIVE("pirt_usm_alloc", "context");
  struct pirt_plugin *pl = c->plugin;
  pi_result r;
  const char *what;
  switch (kind) {
  case PIRT_USM_HOST:
    what = "piextUSMHostAlloc";
    r = pirt_call_piextUSMHostAlloc(pl, ptr, c->ctx, NULL, size, (pi_uint32)alignment);
    break;
  case PIRT_USM_DEVICE:
    what = "piextUSMDeviceAlloc";
    r = pirt_call_piextUSMDeviceAlloc(pl, ptr, c->ctx, c->device->device, NULL,
                                      size, (pi_uint32)alignment);
    break;
  case PIRT_USM_SHARED:
    what = "piextUSMSharedAlloc";
    r = pirt_call_piextUSMSharedAlloc(pl, ptr, c->ctx, c->device->device, NULL,
                                      size, (pi_uint32)alignment);
    break;
  default:
    return pirt_fail(PI_ERROR_INVALID_VALUE, "pirt_usm_alloc: unknown kind %d",
                     (int)kind);
  }
  if (r != PI_SUCCESS)
    return pirt_fail_call(pl, what, r);
  return PI_SUCCESS;
}

pi_result pirt_usm_free(pirt_context *c, void *ptr)
{
  CHECK_ARG(c, "pirt_usm_free: context is NULL");
  LIVE("pirt_usm_free", "context");
  if (!ptr)
    return PI_SUCCESS;
  PI_TRY(c->plugin, "piextUSMFree", pirt_call_piextUSMFree(c->plugin, c->ctx, ptr));
  return PI_SUCCESS;
}

/* ---- Programs and kernels ---------------------------------------------------- */

/* Builds `p` and, on failure, puts the build log into the message. */
static pi_result build(pirt_program *p, const char *options)
{
  struct pirt_plugin *pl = p->context->plugin;
  pi_device dev = p->context->device->device;
  pi_result r = pirt_call_piProgramBuild(pl, p->prog, 1, &dev, options, NULL, NULL);
  if (r == PI_SUCCESS)
    return r;
  char *log = NULL;
  pirt_program_build_log(p, &log);
  pirt_fail(r, "piProgramBuild failed with %s on %s%s%s", pi_result_name(r),
            p->context->device->name ? p->context->device->name : "the device",
            log && *log ? "; build log:\n" : " (no build log)", log ? log : "");
  free(log);
  return r;
}

pi_result pirt_program_create_source(pirt_context *c, const char *source,
                                     const char *options, pirt_program **out)
{
  CHECK_ARG(c && source && out,
            "pirt_program_create_source: context, source and program must not be NULL");
  LIVE("pirt_program_create_source", "context");
  pirt_program *p = calloc(1, sizeof *p);
  if (!p)
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  p->context = c;
  size_t len = strlen(source);
  pi_result r = pirt_call_piclProgramCreateWithSource(c->plugin, c->ctx, 1,
                                                      &source, &len, &p->prog);
  if (r != PI_SUCCESS) {
    free(p);
    return pirt_fail_call(c->plugin, "piclProgramCreateWithSource", r);
  }
  r = build(p, options);
  if (r != PI_SUCCESS) {
    pirt_call_piProgramRelease(c->plugin, p->prog);
    free(p);
    return r;
  }
  pirt_context_ref(c);
  *out = p;
  return PI_SUCCESS;
}

pi_result pirt_program_create_binary(pirt_context *c, const void *binary,
                                     size_t size, bool is_il,
                                     const char *options, pirt_program **out)
{
  CHECK_ARG(c && binary && size && out,
            "pirt_program_create_binary: context, binary (non-empty) and program "
            "must not be NULL");
  LIVE("pirt_program_create_binary", "context");
  pirt_program *p = calloc(1, sizeof *p);
  if (!p)
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  p->context = c;
  pi_result r;
  if (is_il) {
    r = pirt_call_piProgramCreate(c->plugin, c->ctx, binary, size, &p->prog);
  } else {
    const unsigned char *bin = binary;
    r = pirt_call_piProgramCreateWithBinary(c->plugin, c->ctx, 1,
                                            &c->device->device, &size, &bin, 0,
                                            NULL, NULL, &p->prog);
  }
  if (r != PI_SUCCESS) {
    free(p);
    return pirt_fail_call(c->plugin, is_il ? "piProgramCreate"
                                           : "piProgramCreateWithBinary", r);
  }
  r = build(p, options);
  if (r != PI_SUCCESS) {
    pirt_call_piProgramRelease(c->plugin, p->prog);
    free(p);
    return r;
  }
  pirt_context_ref(c);
  *out = p;
  return PI_SUCCESS;
}

pi_result pirt_program_build_log(pirt_program *p, char **log)
{
  CHECK_ARG(p && log, "pirt_program_build_log: program and log must not be NULL");
  LIVE("pirt_program_build_log", "program");
  struct pirt_plugin *pl = p->context->plugin;
  pi_device dev = p->context->device->device;
  size_t size = 0;
  *log = NULL;
  PI_TRY(pl, "piProgramGetBuildInfo",
         pirt_call_piProgramGetBuildInfo(pl, p->prog, dev, PI_PROGRAM_BUILD_INFO_LOG,
                                         0, NULL, &size));
  char *s = calloc(1, size + 1);
  if (!s)
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  pi_result r = pirt_call_piProgramGetBuildInfo(pl, p->prog, dev,
                                                PI_PROGRAM_BUILD_INFO_LOG, size, s, NULL);
  if (r != PI_SUCCESS) {
    free(s);
    return pirt_fail_call(pl, "piProgramGetBuildInfo", r);
  }
  *log = s;
  return PI_SUCCESS;
}

pi_result pirt_program_get_binary(pirt_program *p, void **binary, size_t *size)
{
  CHECK_ARG(p && binary && size, "pirt_program_get_binary: program, binary and "
            "size must not be NULL");
  LIVE("pirt_program_get_binary", "program");
  struct pirt_plugin *pl = p->context->plugin;
  size_t n = 0;
  PI_TRY(pl, "piProgramGetInfo(PI_PROGRAM_INFO_BINARY_SIZES)",
         pirt_call_piProgramGetInfo(pl, p->prog, PI_PROGRAM_INFO_BINARY_SIZES,
                                    sizeof n, &n, NULL));
  if (n == 0)
    return pirt_fail(PI_ERROR_INVALID_PROGRAM_EXECUTABLE, "pirt_program_get_binary: "
                     "the program has no binary for its device");
  unsigned char *bin = malloc(n);
  if (!bin)
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  pi_result r = pirt_call_piProgramGetInfo(pl, p->prog, PI_PROGRAM_INFO_BINARIES,
                                           sizeof bin, &bin, NULL);
  if (r != PI_SUCCESS) {
    free(bin);
    return pirt_fail_call(pl, "piProgramGetInfo(PI_PROGRAM_INFO_BINARIES)", r);
  }
  *binary = bin;
  *size = n;
  return PI_SUCCESS;
}

pi_result pirt_program_release(pirt_program *p)
{
  if (!p)
    return PI_SUCCESS;
  pirt_context *c = p->context;
  pi_result r = pirt_call_piProgramRelease(c->plugin, p->prog);
  free(p);
  if (r != PI_SUCCESS)
    pirt_fail_call(NULL, "piProgramRelease", r);
  return pirt_context_unref(c, r);
}

pi_result pirt_kernel_create(pirt_program *p, const char *name, pirt_kernel **out)
{
  CHECK_ARG(p && name && out, "pirt_kernel_create: program, name and kernel "
            "must not be NULL");
  LIVE("pirt_kernel_create", "program");
  pirt_kernel *k = calloc(1, sizeof *k);
  if (!k || !(k->name = strdup(name))) {
    free(k);
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  }
  k->program = p;
  k->context = p->context;
  pi_result r = pirt_call_piKernelCreate(p->context->plugin, p->prog, name, &k->k);
  if (r != PI_SUCCESS) {
    free(k->name);
    free(k);
    pirt_fail_call(p->context->plugin, "piKernelCreate", r);
    return pirt_fail(r, "no kernel '%s' in the program: %s", name,
                     pirt_error_message());
  }
  pirt_context_ref(k->context);
  *out = k;
  return PI_SUCCESS;
}

pi_result pirt_kernel_release(pirt_kernel *k)
{
  if (!k)
    return PI_SUCCESS;
  pirt_context *c = k->context;
  pi_result r = pirt_call_piKernelRelease(c->plugin, k->k);
  pm_kernel_free(k);
  free(k->name);
  free(k);
  if (r != PI_SUCCESS)
    pirt_fail_call(NULL, "piKernelRelease", r);
  return pirt_context_unref(c, r);
}

/* Names the kernel and argument in a failed set-arg call. */
static pi_result arg_failed(pirt_kernel *k, unsigned index, const char *what,
                            pi_result r)
{
  pirt_fail_call(k->context->plugin, what, r);
  return pirt_fail(r, "kernel '%s' argument %u: %s", k->name, index,
                   pirt_error_message());
}

pi_result pirt_kernel_set_arg(pirt_kernel *k, unsigned index, size_t size,
                              const void *value)
{
  CHECK_ARG(k && value && size, "pirt_kernel_set_arg: kernel, size and value "
            "must be given");
  LIVE("pirt_kernel_set_arg", "kernel");
  pi_result r = pirt_call_piKernelSetArg(k->context->plugin, k->k,
                                         index, size, value);
  if (r == PI_SUCCESS && k->pm)
    pm_record_arg(k, index, 0, size, value);
  return r == PI_SUCCESS ? r : arg_failed(k, index, "piKernelSetArg", r);
}

pi_result pirt_kernel_set_buffer(pirt_kernel *k, unsigned index, pirt_buffer *b)
{
  CHECK_ARG(k && b, "pirt_kernel_set_buffer: kernel and buffer must not be NULL");
  LIVE("pirt_kernel_set_buffer", "kernel");
  pi_result r = pirt_call_piextKernelSetArgMemObj(k->context->plugin,
                                                  k->k, index, NULL, &b->mem);
  if (r == PI_SUCCESS && k->pm)
    pm_record_arg(k, index, 1, sizeof b->mem, &b->mem);
  return r == PI_SUCCESS ? r : arg_failed(k, index, "piextKernelSetArgMemObj", r);
}

pi_result pirt_kernel_set_usm(pirt_kernel *k, unsigned index, const void *ptr)
{
  CHECK_ARG(k, "pirt_kernel_set_usm: kernel is NULL");
  LIVE("pirt_kernel_set_usm", "kernel");
  pi_result r = pirt_call_piextKernelSetArgPointer(
      k->context->plugin, k->k, index, sizeof ptr, &ptr);
  if (r == PI_SUCCESS && k->pm)
    pm_record_arg(k, index, 2, sizeof ptr, &ptr);
  return r == PI_SUCCESS ? r : arg_failed(k, index, "piextKernelSetArgPointer", r);
}

pi_result pirt_kernel_set_local(pirt_kernel *k, unsigned index, size_t size)
{
  CHECK_ARG(k && size, "pirt_kernel_set_local: kernel and a size are needed");
  LIVE("pirt_kernel_set_local", "kernel");
  pi_result r = pirt_call_piKernelSetArg(k->context->plugin, k->k,
                                         index, size, NULL);
  if (r == PI_SUCCESS && k->pm)
    pm_record_arg(k, index, 3, size, NULL);
  return r == PI_SUCCESS ? r : arg_failed(k, index, "piKernelSetArg", r);
}

/* ---- Commands ------------------------------------------------------------------ */

/* Whether every event of a wait list is one (a NULL entry reached the
 * plugin: PoCL ignored it, rusticl refused the whole list) and made by
 * the queue's plugin (another's handle means nothing to it); false with
 * the message set. */
static bool deps_usable(const char *what, const struct pirt_plugin *pl, unsigned n,
                        pirt_event *const *deps)
{
  for (unsigned i = 0; i < n; i++)
    if (!deps[i] || deps[i]->plugin != pl) {
      pirt_fail(PI_ERROR_INVALID_EVENT_WAIT_LIST, "%s: deps[%u] is %s; a wait list holds "
                "events of commands on the same plugin's queues", what, i,
                deps[i] ? "an event of another plugin's queue" : "NULL");
      return false;
    }
  return true;
}

/* The PI wait list of `deps`; `store` holds up to 16, more are malloc'd. */
static pi_event *wait_list(unsigned n, pirt_event *const *deps, pi_event *store)
{
  if (!n)
    return NULL;
  pi_event *list = n <= 16 ? store : malloc(n * sizeof *list);
  if (!list)
    return NULL;
  for (unsigned i = 0; i < n; i++)
    list[i] = deps[i] ? deps[i]->ev : NULL;
  return list;
}

/* Wraps a returned PI event, or releases it when the caller wants none. */
static pi_result finish_event(struct pirt_plugin *pl, pi_event ev,
                              pirt_event **out)
{
  if (!out) {
    if (ev)
      pirt_call_piEventRelease(pl, ev);
    return PI_SUCCESS;
  }
  pirt_event *e = calloc(1, sizeof *e);
  if (!e) {
    pirt_call_piEventRelease(pl, ev);
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  }
  e->plugin = pl;
  e->ev = ev;
  *out = e;
  return PI_SUCCESS;
}

/* The common tail of every enqueue: wait-list setup, the call, the event. */
#define ENQUEUE(q, what, num_deps, deps, out, call_expr)                        \
  do {                                                                          \
    CHECK_ARG((num_deps) == 0 || (deps), what ": num_deps > 0 but deps is NULL"); \
    struct pirt_plugin *pl = (q)->context->plugin;                              \
    if (!deps_usable(what, pl, (num_deps), (deps)))                             \
      return PI_ERROR_INVALID_EVENT_WAIT_LIST;                                  \
    pi_event store_[16];                                                        \
    pi_event *wl = wait_list((num_deps), (deps), store_);                       \
    if ((num_deps) && !wl)                                                      \
      return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");           \
    pi_event ev = NULL;                                                         \
    pi_result r = (call_expr);                                                  \
    if (wl != store_)                                                           \
      free(wl);                                                                 \
    if (r != PI_SUCCESS)                                                        \
      return pirt_fail_call(pl, what, r);                                       \
    return finish_event(pl, ev, (out));                                         \
  } while (0)

pi_result pirt_launch(pirt_queue *q, pirt_kernel *k, unsigned dims,
                      const size_t *global, const size_t *local,
                      unsigned num_deps, pirt_event *const *deps,
                      pirt_event **event)
{
  return pirt_launch_spec(q, k, dims, global, local, 0, NULL, num_deps, deps, event);
}

pi_result pirt_launch_spec(pirt_queue *q, pirt_kernel *k, unsigned dims,
                           const size_t *global, const size_t *local,
                           unsigned num_values, const pirt_spec_value *values,
                           unsigned num_deps, pirt_event *const *deps,
                           pirt_event **event)
{
  CHECK_ARG(q && k && global, "pirt_launch: queue, kernel and global size "
            "must not be NULL");
  CHECK_ARG(dims >= 1 && dims <= 3, "pirt_launch: kernel '%s': %u dimensions; "
            "use 1, 2 or 3", k->name, dims);
  CHECK_ARG(num_values == 0 || values, "pirt_launch_spec: num_values > 0 but "
            "values is NULL");
  LIVE("pirt_launch", "kernel");
  if (k->pm) {
    pi_result r = pm_prepare_launch(k, num_values, values);
    if (r != PI_SUCCESS)
      return r;
  } else {
    CHECK_ARG(num_values == 0, "pirt_launch_spec: kernel '%s' comes from a program "
              "built from source, which declares no spec constants; get it from a "
              "bundle (pirt_bundle_get_kernel)", k->name);
  }
  ENQUEUE(q, "piEnqueueKernelLaunch", num_deps, deps, event,
          pirt_call_piEnqueueKernelLaunch(pl, q->q, k->k, dims, NULL, global,
                                          local, num_deps, wl, &ev));
}

/* A transfer must stay inside the buffer. */
#define CHECK_RANGE(b, off, size, what)                                        \
  CHECK_ARG((off) <= (b)->size && (size) <= (b)->size - (off),                 \
            what ": bytes %zu..%zu are outside the %zu-byte buffer", (size_t)(off), \
            (size_t)(off) + (size_t)(size), (b)->size)

pi_result pirt_read(pirt_queue *q, pirt_buffer *b, bool blocking, size_t off,
                    size_t size, void *dst, unsigned num_deps,
                    pirt_event *const *deps, pirt_event **event)
{
  CHECK_ARG(q && b && dst, "pirt_read: queue, buffer and dst must not be NULL");
  CHECK_RANGE(b, off, size, "pirt_read");
  LIVE("pirt_read", "buffer");
  ENQUEUE(q, "piEnqueueMemBufferRead", num_deps, deps, event,
          pirt_call_piEnqueueMemBufferRead(pl, q->q, b->mem, blocking, off, size,
                                           dst, num_deps, wl, &ev));
}

pi_result pirt_write(pirt_queue *q, pirt_buffer *b, bool blocking, size_t off,
                     size_t size, const void *src, unsigned num_deps,
                     pirt_event *const *deps, pirt_event **event)
{
  CHECK_ARG(q && b && src, "pirt_write: queue, buffer and src must not be NULL");
  CHECK_RANGE(b, off, size, "pirt_write");
  LIVE("pirt_write", "buffer");
  ENQUEUE(q, "piEnqueueMemBufferWrite", num_deps, deps, event,
          pirt_call_piEnqueueMemBufferWrite(pl, q->q, b->mem, blocking, off, size,
                                            src, num_deps, wl, &ev));
}

pi_result pirt_copy(pirt_queue *q, pirt_buffer *src, pirt_buffer *dst,
                    size_t src_off, size_t dst_off, size_t size,
                    unsigned num_deps, pirt_event *const *deps,
                    pirt_event **event)
{
  CHECK_ARG(q && src && dst, "pirt_copy: queue, src and dst must not be NULL");
  CHECK_RANGE(src, src_off, size, "pirt_copy (source)");
  CHECK_RANGE(dst, dst_off, size, "pirt_copy (destination)");
  LIVE("pirt_copy", "buffer");
  ENQUEUE(q, "piEnqueueMemBufferCopy", num_deps, deps, event,
          pirt_call_piEnqueueMemBufferCopy(pl, q->q, src->mem, dst->mem, src_off,
                                           dst_off, size, num_deps, wl, &ev));
}

/* A fill's pattern: a power of two up to 128 bytes (OpenCL's and Level
 * Zero's rule, for buffers and USM alike) whose whole copies cover the
 * region. */
static bool pattern_fits(size_t pattern_size, size_t off, size_t size)
{
  return pattern_size && !(pattern_size & (pattern_size - 1)) && pattern_size <= 128 &&
         size % pattern_size == 0 && off % pattern_size == 0;
}

pi_result pirt_fill(pirt_queue *q, pirt_buffer *b, const void *pattern,
                    size_t pattern_size, size_t off, size_t size,
                    unsigned num_deps, pirt_event *const *deps,
                    pirt_event **event)
{
  CHECK_ARG(q && b && pattern, "pirt_fill: queue, buffer and pattern must not be NULL");
  CHECK_ARG(pattern_fits(pattern_size, off, size),
            "pirt_fill: the pattern size (%zu) must be a power of two up to 128 "
            "dividing the offset (%zu) and the size (%zu)", pattern_size, off, size);
  CHECK_RANGE(b, off, size, "pirt_fill");
  LIVE("pirt_fill", "buffer");
  ENQUEUE(q, "piEnqueueMemBufferFill", num_deps, deps, event,
          pirt_call_piEnqueueMemBufferFill(pl, q->q, b->mem, pattern, pattern_size,
                                           off, size, num_deps, wl, &ev));
}

pi_result pirt_map(pirt_queue *q, pirt_buffer *b, unsigned flags, size_t off,
                   size_t size, void **ptr)
{
  CHECK_ARG(q && b && ptr, "pirt_map: queue, buffer and ptr must not be NULL");
  CHECK_ARG(flags && !(flags & ~(PIRT_MAP_READ | PIRT_MAP_WRITE)),
            "pirt_map: flags must be PIRT_MAP_READ and/or PIRT_MAP_WRITE");
  CHECK_RANGE(b, off, size, "pirt_map");
  LIVE("pirt_map", "buffer");
  pi_map_flags mf = ((flags & PIRT_MAP_READ) ? PI_MAP_READ : 0) |
                    ((flags & PIRT_MAP_WRITE) ? PI_MAP_WRITE : 0);
  struct pirt_plugin *pl = q->context->plugin;
  pi_event ev = NULL;
  PI_TRY(pl, "piEnqueueMemBufferMap",
         pirt_call_piEnqueueMemBufferMap(pl, q->q, b->mem, PI_TRUE, mf, off, size,
                                         0, NULL, &ev, ptr));
  return finish_event(pl, ev, NULL);
}

pi_result pirt_unmap(pirt_queue *q, pirt_buffer *b, void *ptr, unsigned num_deps,
                     pirt_event *const *deps, pirt_event **event)
{
  CHECK_ARG(q && b && ptr, "pirt_unmap: queue, buffer and ptr must not be NULL");
  LIVE("pirt_unmap", "buffer");
  ENQUEUE(q, "piEnqueueMemUnmap", num_deps, deps, event,
          pirt_call_piEnqueueMemUnmap(pl, q->q, b->mem, ptr, num_deps, wl, &ev));
}

pi_result pirt_usm_memcpy(pirt_queue *q, bool blocking, void *dst,
                          const void *src, size_t size, unsigned num_deps,
                          pirt_event *const *deps, pirt_event **event)
{
  CHECK_ARG(q && dst && src, "pirt_usm_memcpy: queue, dst and src must not be NULL");
  LIVE("pirt_usm_memcpy", "queue");
  ENQUEUE(q, "piextUSMEnqueueMemcpy", num_deps, deps, event,
          pirt_call_piextUSMEnqueueMemcpy(pl, q->q, blocking, dst, src, size,
                                          num_deps, wl, &ev));
}

pi_result pirt_usm_fill(pirt_queue *q, void *ptr, const void *pattern,
                        size_t pattern_size, size_t size, unsigned num_deps,
                        pirt_event *const *deps, pirt_event **event)
{
  CHECK_ARG(q && ptr && pattern && pattern_size,
            "pirt_usm_fill: queue, ptr and a pattern are needed");
  CHECK_ARG(pattern_fits(pattern_size, 0, size),
            "pirt_usm_fill: the pattern size (%zu) must be a power of two up to 128 "
            "dividing the size (%zu)", pattern_size, size);
  LIVE("pirt_usm_fill", "queue");
  ENQUEUE(q, "piextUSMEnqueueFill", num_deps, deps, event,
          pirt_call_piextUSMEnqueueFill(pl, q->q, ptr, pattern, pattern_size, size,
                                        num_deps, wl, &ev));
}

/* ---- Events -------------------------------------------------------------------- */

pi_result pirt_event_wait(unsigned count, pirt_event *const *events)
{
  CHECK_ARG(count && events, "pirt_event_wait: no events given");
  for (unsigned i = 0; i < count; i++)
    CHECK_ARG(events[i] && events[i]->plugin == events[0]->plugin,
              "pirt_event_wait: event %u is NULL or from another plugin", i);
  LIVE("pirt_event_wait", "event");
  struct pirt_plugin *pl = events[0]->plugin;
  pi_event store[16];
  pi_event *wl = wait_list(count, events, store);
  if (!wl)
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  pi_result r = pirt_call_piEventsWait(pl, count, wl);
  if (wl != store)
    free(wl);
  return r == PI_SUCCESS ? r : pirt_fail_call(pl, "piEventsWait", r);
}

pi_result pirt_event_release(pirt_event *e)
{
  if (!e)
    return PI_SUCCESS;
  pi_result r = e->ev ? pirt_call_piEventRelease(e->plugin, e->ev) : PI_SUCCESS;
  free(e);
  return r == PI_SUCCESS ? r : pirt_fail_call(NULL, "piEventRelease", r);
}

pi_result pirt_event_times(pirt_event *e, uint64_t *start, uint64_t *end)
{
  CHECK_ARG(e && start && end, "pirt_event_times: event, start and end must not be NULL");
  LIVE("pirt_event_times", "event");
  PI_TRY(e->plugin, "piEventGetProfilingInfo(START)",
         pirt_call_piEventGetProfilingInfo(e->plugin, e->ev, PI_PROFILING_INFO_COMMAND_START,
                                           sizeof *start, start, NULL));
  PI_TRY(e->plugin, "piEventGetProfilingInfo(END)",
         pirt_call_piEventGetProfilingInfo(e->plugin, e->ev, PI_PROFILING_INFO_COMMAND_END,
                                           sizeof *end, end, NULL));
  return PI_SUCCESS;
}
