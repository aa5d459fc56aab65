/*
 * fe_usm.c: cl_intel_unified_shared_memory over PI's USM calls, offered
 * through clGetExtensionFunctionAddress (fe_icd.c). Allocation is
 * piextUSM{Host,Device,Shared}Alloc, freeing piextUSMFree, the queries
 * piextUSMGetMemAllocInfo, fill / memset / copy / migrate their
 * piextUSMEnqueue* calls. A device whose PI_DEVICE_INFO_USM_*_SUPPORT are
 * all 0 has no USM: the calls answer CL_INVALID_OPERATION there (the
 * queries answer for "not a USM pointer", as the extension says).
 *
 * PI cannot say two things the extension asks for: the allocation flags of
 * an allocation (CL_MEM_ALLOC_FLAGS_INTEL) and that a shared allocation was
 * made without a device (PI's shared allocation takes one). The front end
 * notes them for the allocations that have them, keyed by the pointer.
 */
#include <stdlib.h>
#include <string.h>

#include "fe_mem.h"

/* ---- Notes ------------------------------------------------------------------------ */

typedef struct usm_note {
  const void *base;
  cl_context ctx;
  cl_mem_alloc_flags_intel flags;
  bool nodev; /* a shared allocation made with device NULL */
  struct usm_note *next;
} usm_note;

static pthread_mutex_t notes_lock = PTHREAD_MUTEX_INITIALIZER;
static usm_note *notes;
static atomic_uint nnotes;

static void note_add(usm_note *n)
{
  pthread_mutex_lock(&notes_lock);
  n->next = notes;
  notes = n;
  atomic_fetch_add(&nnotes, 1);
  pthread_mutex_unlock(&notes_lock);
}

/* Takes the note of (ctx, base) out of the list; NULL when there is none. */
static usm_note *note_take(cl_context ctx, const void *base)
{
  if (!atomic_load(&nnotes))
    return NULL;
  pthread_mutex_lock(&notes_lock);
  usm_note *found = NULL;
  for (usm_note **p = &notes; *p; p = &(*p)->next)
    if ((*p)->base == base && (*p)->ctx == ctx) {
      found = *p;
      *p = found->next;
      atomic_fetch_sub(&nnotes, 1);
      break;
    }
  pthread_mutex_unlock(&notes_lock);
  return found;
}

/* A copy of the note of (ctx, base); false when there is none. */
static bool note_get(cl_context ctx, const void *base, usm_note *out)
{
  pthread_mutex_lock(&notes_lock);
  bool found = false;
  for (usm_note *n = notes; n && !found; n = n->next)
    if (n->base == base && n->ctx == ctx) {
      *out = *n;
      found = true;
    }
  pthread_mutex_unlock(&notes_lock);
  return found;
}

/* ---- Allocation ---------------------------------------------------------------------- */

enum usm_kind { USM_HOST, USM_DEVICE, USM_SHARED };

static bool usm_any(cl_device_id d)
{
  return fe_devcap_or0(d, FE_CAP_USM_HOST) || fe_devcap_or0(d, FE_CAP_USM_DEVICE) ||
         fe_devcap_or0(d, FE_CAP_USM_SHARED);
}

static bool ctx_usm(cl_context ctx)
{
  for (cl_uint i = 0; i < ctx->ndev; i++)
    if (usm_any(ctx->devices[i]))
      return true;
  return false;
}

/* The PI list for the allocation properties (CL_INVALID_PROPERTY for an
 * unknown or repeated name or a bad value); *flags gets the allocation
 * flags. `dev` is the device the allocation is for, NULL for all. */
static cl_int usm_props(cl_context ctx, cl_device_id dev, enum usm_kind kind,
                        const cl_mem_properties_intel *in, pi_usm_mem_properties out[5],
                        cl_mem_alloc_flags_intel *flags)
{
  const cl_mem_alloc_flags_intel place =
      CL_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE_INTEL | CL_MEM_ALLOC_INITIAL_PLACEMENT_HOST_INTEL;
  size_t n = 0;
  *flags = 0;
  for (size_t i = 0; in && in[i]; i += 2) {
    const cl_mem_properties_intel key = in[i], v = in[i + 1];
    for (size_t k = 0; k < i; k += 2)
      if (in[k] == key)
        return CL_INVALID_PROPERTY;
    if (key == CL_MEM_ALLOC_FLAGS_INTEL) {
      if ((v & ~(CL_MEM_ALLOC_WRITE_COMBINED_INTEL | place)) ||
          ((v & place) && kind != USM_SHARED) || (v & place) == place)
        return CL_INVALID_PROPERTY;
      *flags = (cl_mem_alloc_flags_intel)v;
      out[n++] = PI_MEM_ALLOC_FLAGS;
    } else if (key == CL_MEM_ALLOC_BUFFER_LOCATION_INTEL &&
               (dev ? fe_devcap_or0(dev, FE_CAP_BUF_LOCATION)
                    : fe_ctx_any(ctx, FE_CAP_BUF_LOCATION))) {
      out[n++] = PI_MEM_USM_ALLOC_BUFFER_LOCATION;
    } else {
      return CL_INVALID_PROPERTY;
    }
    out[n++] = (pi_usm_mem_properties)v;
  }
  out[n] = 0;
  return CL_SUCCESS;
}

/* CL_INVALID_BUFFER_SIZE for 0 or more than CL_DEVICE_MAX_MEM_ALLOC_SIZE of
 * `dev`, or (dev NULL) of any device of the context with USM of `cap`. */
static cl_int usm_size_ok(cl_context ctx, cl_device_id dev, fe_cap cap, size_t size)
{
  if (size == 0)
    return CL_INVALID_BUFFER_SIZE;
  for (cl_uint i = 0; i < ctx->ndev; i++) {
    cl_device_id d = ctx->devices[i];
    uint64_t max;
    if ((dev ? d == dev : fe_devcap_or0(d, cap) != 0) &&
        fe_devcap(d, FE_CAP_MAX_ALLOC, &max) && size > max)
      return CL_INVALID_BUFFER_SIZE;
  }
  return CL_SUCCESS;
}

static void *usm_alloc(enum usm_kind kind, cl_context ctx, cl_device_id dev,
                       const cl_mem_properties_intel *props, size_t size, cl_uint alignment,
                       cl_int *errcode_ret)
{
  static const fe_cap caps[] = {FE_CAP_USM_HOST, FE_CAP_USM_DEVICE, FE_CAP_USM_SHARED};
  const fe_cap cap = caps[kind];
  if (!FE_IS(ctx, FE_CONTEXT))
    FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
  if (dev && (!FE_IS(dev, FE_DEVICE) || !fe_context_has_device(ctx, dev)))
    FE_FAIL(errcode_ret, CL_INVALID_DEVICE);
  if (kind == USM_DEVICE && !dev)
    FE_FAIL(errcode_ret, CL_INVALID_DEVICE);
  /* The device PI allocates for: the one given, or for a shared
   * allocation without one the first that has shared USM. */
  cl_device_id target = dev;
  if (dev ? !fe_devcap_or0(dev, cap) : !fe_ctx_any(ctx, cap))
    FE_FAIL(errcode_ret, CL_INVALID_OPERATION);
  for (cl_uint i = 0; kind == USM_SHARED && !target && i < ctx->ndev; i++)
    if (fe_devcap_or0(ctx->devices[i], cap))
      target = ctx->devices[i];
  /* Alignment: 0 (the default) or a power of two no larger than the
   * largest OpenCL C type, 128 bytes (long16, double16). */
  if ((alignment & (alignment - 1)) || alignment > 128)
    FE_FAIL(errcode_ret, CL_INVALID_VALUE);
  pi_usm_mem_properties pi_props[5];
  cl_mem_alloc_flags_intel flags;
  cl_int err = usm_props(ctx, dev, kind, props, pi_props, &flags);
  if (err == CL_SUCCESS)
    err = usm_size_ok(ctx, dev, cap, size);
  if (err != CL_SUCCESS)
    FE_FAIL(errcode_ret, err);
  usm_note *note = NULL;
  if (flags || (kind == USM_SHARED && !dev)) {
    if (!(note = malloc(sizeof *note)))
      FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
    *note = (usm_note){NULL, ctx, flags, kind == USM_SHARED && !dev, NULL};
  }
  void *ptr = NULL;
  pi_usm_mem_properties *pp = pi_props[0] ? pi_props : NULL;
  const pirt_plugin *pl = ctx->o.pl;
  pi_result r = kind == USM_HOST
                    ? pirt_piextUSMHostAlloc(pl, &ptr, ctx->pi, pp, size, alignment)
                : kind == USM_DEVICE
                    ? pirt_piextUSMDeviceAlloc(pl, &ptr, ctx->pi, target->pi, pp, size, alignment)
                    : pirt_piextUSMSharedAlloc(pl, &ptr, ctx->pi, target->pi, pp, size, alignment);
  if (r != PI_SUCCESS || !ptr) {
    free(note);
    FE_FAIL(errcode_ret, r != PI_SUCCESS ? fe_err(r) : CL_OUT_OF_RESOURCES);
  }
  if (note) {
    note->base = ptr;
    note_add(note);
  }
  if (errcode_ret)
    *errcode_ret = CL_SUCCESS;
  return ptr;
}

/* piextUSMHostAlloc. */
void *CL_API_CALL fe_clHostMemAllocINTEL(cl_context ctx, const cl_mem_properties_intel *props,
                                         size_t size, cl_uint alignment, cl_int *errcode_ret)
{
  return usm_alloc(USM_HOST, ctx, NULL, props, size, alignment, errcode_ret);
}

/* piextUSMDeviceAlloc. */
void *CL_API_CALL fe_clDeviceMemAllocINTEL(cl_context ctx, cl_device_id dev,
                                           const cl_mem_properties_intel *props, size_t size,
                                           cl_uint alignment, cl_int *errcode_ret)
{
  return usm_alloc(USM_DEVICE, ctx, dev, props, size, alignment, errcode_ret);
}

/* piextUSMSharedAlloc (device NULL: the first with shared USM). */
void *CL_API_CALL fe_clSharedMemAllocINTEL(cl_context ctx, cl_device_id dev,
                                           const cl_mem_properties_intel *props, size_t size,
                                           cl_uint alignment, cl_int *errcode_ret)
{
  return usm_alloc(USM_SHARED, ctx, dev, props, size, alignment, errcode_ret);
}

/* Both frees are piextUSMFree, which waits for the commands that use the
 * memory: what clMemBlockingFreeINTEL promises, and a safe clMemFreeINTEL. */
static cl_int usm_free(cl_context ctx, void *ptr)
{
  FE_CHECK(ctx, FE_CONTEXT, CL_INVALID_CONTEXT);
  if (!ptr)
    return CL_SUCCESS;
  if (!ctx_usm(ctx))
    return CL_INVALID_VALUE; /* no allocation can have come from it */
  usm_note *note = note_take(ctx, ptr); /* before PI may hand the address out again */
  pi_result r = pirt_piextUSMFree(ctx->o.pl, ctx->pi, ptr);
  if (r != PI_SUCCESS && note)
    note_add(note);
  else
    free(note);
  return fe_err(r);
}

/* piextUSMFree. */
cl_int CL_API_CALL fe_clMemFreeINTEL(cl_context ctx, void *ptr) { return usm_free(ctx, ptr); }

/* piextUSMFree. */
cl_int CL_API_CALL fe_clMemBlockingFreeINTEL(cl_context ctx, void *ptr)
{
  return usm_free(ctx, ptr);
}

/* ---- Queries ----------------------------------------------------------------------------- */

typedef struct {
  cl_context ctx;
  const void *ptr;
} alloc_ref;

static pi_result alloc_getter(const void *obj, uint32_t q, size_t n, void *v, size_t *r)
{
  const alloc_ref *a = obj;
  return pirt_piextUSMGetMemAllocInfo(a->ctx->o.pl, a->ctx->pi, a->ptr, q, n, v, r);
}

/* The note of the allocation `ptr` points into, if it has one. */
static bool note_of(cl_context ctx, const void *ptr, usm_note *out)
{
  if (!atomic_load(&nnotes))
    return false;
  void *base = NULL;
  if (pirt_piextUSMGetMemAllocInfo(ctx->o.pl, ctx->pi, ptr, PI_MEM_ALLOC_BASE_PTR,
                                   sizeof base, &base, NULL) != PI_SUCCESS ||
      !base)
    return false;
  return note_get(ctx, base, out);
}

/* piextUSMGetMemAllocInfo; the flags and device-less allocations from
 * the notes. */
cl_int CL_API_CALL fe_clGetMemAllocInfoINTEL(cl_context ctx, const void *ptr,
                                             cl_mem_info_intel param, size_t size, void *value,
                                             size_t *size_ret)
{
  FE_CHECK(ctx, FE_CONTEXT, CL_INVALID_CONTEXT);
  const bool usm = ctx_usm(ctx);
  usm_note note;
  switch (param) {
  case CL_MEM_ALLOC_TYPE_INTEL:
    if (!usm) {
      cl_unified_shared_memory_type_intel t = CL_MEM_TYPE_UNKNOWN_INTEL;
      return FE_PUT_VAL(size, value, size_ret, t);
    }
    break;
  case CL_MEM_ALLOC_BASE_PTR_INTEL:
    if (!usm) {
      void *none = NULL;
      return FE_PUT_VAL(size, value, size_ret, none);
    }
    break;
  case CL_MEM_ALLOC_SIZE_INTEL:
    if (!usm) {
      size_t zero = 0;
      return FE_PUT_VAL(size, value, size_ret, zero);
    }
    break;
  case CL_MEM_ALLOC_DEVICE_INTEL:
    if (!usm || (note_of(ctx, ptr, &note) && note.nodev)) {
      cl_device_id none = NULL;
      return FE_PUT_VAL(size, value, size_ret, none);
    }
    break; /* PI's device handle, answered as our wrapper */
  case CL_MEM_ALLOC_FLAGS_INTEL: {
    cl_mem_alloc_flags_intel f = usm && note_of(ctx, ptr, &note) ? note.flags : 0;
    return FE_PUT_VAL(size, value, size_ret, f);
  }
  default:
    return CL_INVALID_VALUE;
  }
  alloc_ref a = {ctx, ptr};
  return fe_pi_info("pi_mem_alloc_info", alloc_getter, &a, param, size, value, size_ret);
}

/* ---- Commands ------------------------------------------------------------------------------ */

/* CL_INVALID_OPERATION when the queue's device has no USM at all. */
static cl_int queue_usm(cl_command_queue q)
{
  return usm_any(q->dev) ? CL_SUCCESS : CL_INVALID_OPERATION;
}

/* A fill (clEnqueueMemFillINTEL, clEnqueueMemsetINTEL): piextUSMEnqueueFill
 * with its own copy of the pattern. */
typedef struct {
  fe_cmd c;
  void *dst;
  unsigned char pattern[128];
  size_t pattern_size, size;
} usm_fill;

static pi_result fill_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                            const pi_event *wait, pi_event *ev)
{
  usm_fill *a = (usm_fill *)c;
  (void)blocking;
  return pirt_piextUSMEnqueueFill(q->o.pl, q->pi, a->dst, a->pattern, a->pattern_size, a->size,
                                  n, wait, ev);
}

/* piextUSMEnqueueFill. */
cl_int CL_API_CALL fe_clEnqueueMemFillINTEL(cl_command_queue q, void *dst, const void *pattern,
                                            size_t pattern_size, size_t size, cl_uint n,
                                            const cl_event *wait, cl_event *event)
{
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  cl_int err = queue_usm(q);
  if (err != CL_SUCCESS)
    return err;
  /* The pattern: a power of two up to the largest vector type (128 bytes);
   * the destination aligned to it, the size a multiple of it. */
  if (!dst || !pattern || !pattern_size || (pattern_size & (pattern_size - 1)) ||
      pattern_size > 128 || (uintptr_t)dst % pattern_size || size % pattern_size)
    return CL_INVALID_VALUE;
  usm_fill a = {{fill_issue, NULL, NULL}, dst, {0}, pattern_size, size};
  memcpy(a.pattern, pattern, pattern_size);
  return fe_enqueue(q, CL_COMMAND_MEMFILL_INTEL, n, wait, false, &a.c, sizeof a, event);
}

/* piextUSMEnqueueFill of one byte (the deprecated form of a fill). */
cl_int CL_API_CALL fe_clEnqueueMemsetINTEL(cl_command_queue q, void *dst, cl_int value,
                                           size_t size, cl_uint n, const cl_event *wait,
                                           cl_event *event)
{
  const cl_uchar byte = (cl_uchar)value;
  return fe_clEnqueueMemFillINTEL(q, dst, &byte, 1, size, n, wait, event);
}

typedef struct {
  fe_cmd c;
  void *dst;
  const void *src;
  size_t size;
} usm_copy;

static pi_result copy_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                            const pi_event *wait, pi_event *ev)
{
  usm_copy *a = (usm_copy *)c;
  return pirt_piextUSMEnqueueMemcpy(q->o.pl, q->pi, blocking, a->dst, a->src, a->size, n, wait,
                                    ev);
}

/* piextUSMEnqueueMemcpy. */
cl_int CL_API_CALL fe_clEnqueueMemcpyINTEL(cl_command_queue q, cl_bool blocking, void *dst,
                                           const void *src, size_t size, cl_uint n,
                                           const cl_event *wait, cl_event *event)
{
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  cl_int err = queue_usm(q);
  if (err != CL_SUCCESS)
    return err;
  if (!dst || !src)
    return CL_INVALID_VALUE;
  const uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
  if (size && d < s + size && s < d + size)
    return CL_MEM_COPY_OVERLAP;
  usm_copy a = {{copy_issue, NULL, NULL}, dst, src, size};
  return fe_enqueue(q, CL_COMMAND_MEMCPY_INTEL, n, wait, blocking != CL_FALSE, &a.c, sizeof a,
                    event);
}

/* A migration to the queue's device is piextUSMEnqueuePrefetch (content
 * that may be discarded is migrated all the same). PI cannot migrate to
 * the host: that hint is ignored, as the extension allows, and a marker
 * stands for the command. */
typedef struct {
  fe_cmd c;
  const void *ptr;
  size_t size;
  bool to_host;
} usm_migrate;

static pi_result migrate_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                               const pi_event *wait, pi_event *ev)
{
  usm_migrate *a = (usm_migrate *)c;
  (void)blocking;
  if (a->to_host)
    return pirt_piEnqueueEventsWait(q->o.pl, q->pi, n, wait, ev);
  return pirt_piextUSMEnqueuePrefetch(q->o.pl, q->pi, a->ptr, a->size, 0, n, wait, ev);
}

/* piextUSMEnqueuePrefetch, or a marker for a migration to the host. */
cl_int CL_API_CALL fe_clEnqueueMigrateMemINTEL(cl_command_queue q, const void *ptr, size_t size,
                                               cl_mem_migration_flags flags, cl_uint n,
                                               const cl_event *wait, cl_event *event)
{
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  cl_int err = queue_usm(q);
  if (err != CL_SUCCESS)
    return err;
  if (flags & ~(cl_mem_migration_flags)(CL_MIGRATE_MEM_OBJECT_HOST |
                                        CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED))
    return CL_INVALID_VALUE;
  usm_migrate a = {{migrate_issue, NULL, NULL}, ptr, size,
                   (flags & CL_MIGRATE_MEM_OBJECT_HOST) != 0};
  return fe_enqueue(q, CL_COMMAND_MIGRATEMEM_INTEL, n, wait, false, &a.c, sizeof a, event);
}

/* cl_intel_unified_shared_memory defines no advice values, and PI's are
 * CUDA's and HIP's, which an OpenCL application does not mean: every
 * advice is a hint this implementation does not support and ignores (the
 * extension allows it), and a marker stands for the command. */
static pi_result advise_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                              const pi_event *wait, pi_event *ev)
{
  (void)c;
  (void)blocking;
  return pirt_piEnqueueEventsWait(q->o.pl, q->pi, n, wait, ev);
}

/* A marker: no advice is supported (see above). */
cl_int CL_API_CALL fe_clEnqueueMemAdviseINTEL(cl_command_queue q, const void *ptr, size_t size,
                                              cl_mem_advice_intel advice, cl_uint n,
                                              const cl_event *wait, cl_event *event)
{
  (void)ptr;
  (void)size;
  (void)advice;
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  cl_int err = queue_usm(q);
  if (err != CL_SUCCESS)
    return err;
  fe_cmd c = {advise_issue, NULL, NULL};
  return fe_enqueue(q, CL_COMMAND_MEMADVISE_INTEL, n, wait, false, &c, sizeof c, event);
}
