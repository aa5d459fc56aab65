/*
 * queue.c: the PI queue functions of the Level Zero plugin: a queue is a
 * Level Zero command queue fed command lists (or an immediate command
 * list); creation from PI flags and property lists, reaping finished
 * submissions, queries, finish and flush, reference counts and native
 * handles.
 */
#include "lz_internal.h"

/* ---- Queues -------------------------------------------------------------------
 * A queue submits each command at once: on an immediate command list by
 * appending it, else as a command list of its own executed on the Level
 * Zero command queue. Each command signals a fresh event; in-order queues
 * make each command wait for the previous one's. The submissions are kept
 * until their events complete, then their command lists are reset for
 * reuse. */

bool in_order(pi_queue q) {
  return !(q->flags & PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE);
}

/* Frees a submission's command list (or keeps it for reuse) and drops its
 * event; the caller holds the queue lock. */
static void submission_end(pi_queue q, struct submission *s) {
  if (s->list) {
    if (q->nfree < FREE_LISTS &&
        zeCommandListReset(s->list) == ZE_RESULT_SUCCESS)
      q->free[q->nfree++] = s->list;
    else
      zeCommandListDestroy(s->list);
  }
  if (s->free_after)
    zeMemFree(q->context->ze, s->free_after);
  event_release("piQueue", s->event);
}

/* Ends the submissions whose events completed (all of them after waiting
 * when `wait`); the caller holds the queue lock. */
pi_result queue_reap(const char *fn, pi_queue q, bool wait) {
  pi_result r = PI_SUCCESS;
  size_t kept = 0;
  for (size_t i = 0; i < q->nsubs; ++i) {
    struct submission *s = &q->subs[i];
    ze_result_t zr = wait ? zeEventHostSynchronize(s->event->ze, UINT64_MAX)
                          : zeEventQueryStatus(s->event->ze);
    if (zr == ZE_RESULT_NOT_READY) {
      q->subs[kept++] = *s;
      continue;
    }
    if (zr != ZE_RESULT_SUCCESS && r == PI_SUCCESS)
      r = check_ze(fn, wait ? "zeEventHostSynchronize" : "zeEventQueryStatus",
                   zr);
    submission_end(q, s);
  }
  q->nsubs = kept;
  return r;
}

/* Destroys the Level Zero side of a queue whose PI references are gone. */
static pi_result queue_destroy(const char *fn, pi_queue q) {
  pthread_mutex_lock(&q->lock);
  pi_result r = PI_SUCCESS;
  if (q->zeq)
    r = check_ze(fn, "zeCommandQueueSynchronize",
                 zeCommandQueueSynchronize(q->zeq, UINT64_MAX));
  pi_result rr = queue_reap(fn, q, true);
  r = r == PI_SUCCESS ? rr : r;
  pi_event last = q->last;
  q->last = NULL;
  for (size_t i = 0; i < q->nfree; ++i)
    zeCommandListDestroy(q->free[i]);
  q->nfree = 0;
  if (q->owns_native) {
    if (q->zeq)
      rr = check_ze(fn, "zeCommandQueueDestroy", zeCommandQueueDestroy(q->zeq));
    if (q->imm)
      rr = check_ze(fn, "zeCommandListDestroy", zeCommandListDestroy(q->imm));
    r = r == PI_SUCCESS ? rr : r;
  }
  q->dead = true;
  pthread_mutex_unlock(&q->lock);
  if (last)
    event_release(fn, last);
  return r;
}

/* Drops one of the queue's total references; the last frees it. */
void queue_drop(pi_queue q) {
  if (atomic_fetch_sub(&q->total, 1) != 1)
    return;
  pi_context c = q->context;
  free(q->subs);
  pthread_mutex_destroy(&q->lock);
  free(q);
  context_release("piQueueRelease", c);
}

DEFINE_FACTS(queue, q, .refs = atomic_load(&q->refs), .context = q->context,
             .device = q->device, .flags = q->flags)

static pi_result queue_new(const char *fn, pi_context context, pi_device device,
                           pi_queue_properties flags, pi_queue *out) {
  pi_queue q = calloc(1, sizeof *q);
  if (!q)
    return out_of_memory(fn);
  q->context = context;
  q->device = device;
  q->flags = flags;
  atomic_init(&q->refs, 1);
  atomic_init(&q->total, 1);
  pthread_mutex_init(&q->lock, NULL);
  context_retain(context);
  *out = q;
  return PI_SUCCESS;
}

/* A compute index as Level Zero takes it. */
static pi_result queue_index(const char *fn, pi_queue_properties i,
                             uint32_t *index) {
  *index = 0;
  if (i > UINT32_MAX)
    return fail(PI_ERROR_INVALID_VALUE, "%s: compute index %llu is too large",
                fn, (unsigned long long)i);
  *index = (uint32_t)i;
  return PI_SUCCESS;
}

/* Reads {PI_QUEUE_FLAGS, flags, PI_QUEUE_COMPUTE_INDEX, index, 0}. */
static pi_result queue_properties(const char *fn, const pi_queue_properties *p,
                                  pi_queue_properties *flags,
                                  uint32_t *index) {
  pi_queue_properties i;
  *index = 0;
  TRY(queue_properties_read(fn, p, flags, &i));
  return queue_index(fn, i, index);
}

pi_result backend_queue_create(const char *fn, pi_context context,
                               pi_device device, pi_queue_properties flags,
                               pi_queue_properties compute_index,
                               pi_queue *queue) {
  uint32_t index;
  TRY(queue_index(fn, compute_index, &index));
  if (!queue)
    return fail(PI_ERROR_INVALID_VALUE, "%s: queue is NULL", fn);
  *queue = NULL;
  if (!context)
    return fail(PI_ERROR_INVALID_CONTEXT, "%s: context is NULL", fn);
  if (!device)
    return fail(PI_ERROR_INVALID_DEVICE, "%s: device is NULL", fn);
  TRY(queue_flags_check(fn, flags, "Level Zero"));
  if ((flags & PI_EXT_QUEUE_FLAG_SUBMISSION_IMMEDIATE) &&
      (flags & PI_EXT_QUEUE_FLAG_SUBMISSION_NO_IMMEDIATE))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a queue cannot both use and not use an immediate command "
                "list",
                fn);
  if (!context_has_device(context, device))
    return fail(PI_ERROR_INVALID_DEVICE,
                "%s: device '%s' is not in the context", fn, dev_name(device));
  if (index >= device->nqueues)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: compute index %u requested, but device '%s' has %u "
                "compute queue(s)",
                fn, (unsigned)index, dev_name(device),
                (unsigned)device->nqueues);
  ze_command_queue_desc_t desc = {
      .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
      .ordinal = device->ordinal,
      .index = index,
      .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
      .priority = (flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_LOW)
                      ? ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_LOW
                  : (flags & PI_EXT_ONEAPI_QUEUE_FLAG_PRIORITY_HIGH)
                      ? ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH
                      : ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  pi_queue q = NULL; /* set by queue_new on success; gcc -O3 cannot see that */
  pi_result r = queue_new(fn, context, device, flags, &q);
  if (r != PI_SUCCESS)
    return r;
  q->ordinal = device->ordinal;
  q->index = index;
  q->owns_native = true;
  if (flags & PI_EXT_QUEUE_FLAG_SUBMISSION_IMMEDIATE)
    r = check_ze(fn, "zeCommandListCreateImmediate",
                 zeCommandListCreateImmediate(context->ze, device->ze, &desc,
                                              &q->imm));
  else
    r = check_ze(fn, "zeCommandQueueCreate",
                 zeCommandQueueCreate(context->ze, device->ze, &desc, &q->zeq));
  if (r != PI_SUCCESS) {
    q->owns_native = false;
    atomic_store(&q->refs, 0);
    queue_drop(q);
    return r;
  }
  *queue = q;
  return PI_SUCCESS;
}

pi_result backend_queue_info(pi_queue command_queue, const struct info_out *o) {
  pi_queue q = command_queue;
  switch (o->query) {
  case PI_QUEUE_INFO_DEVICE_DEFAULT:
  case PI_QUEUE_INFO_SIZE:
    return fail(PI_ERROR_INVALID_QUEUE,
                "%s: query 0x%x is about on-device queues, which Level Zero "
                "does not have",
                o->fn, (unsigned)o->query);
  case PI_EXT_ONEAPI_QUEUE_INFO_EMPTY: {
    pthread_mutex_lock(&q->lock);
    pi_result r = queue_reap(o->fn, q, false);
    bool empty = q->nsubs == 0;
    pthread_mutex_unlock(&q->lock);
    return r != PI_SUCCESS ? r : put_bool(o, empty);
  }
  default:
    return unknown_query(o);
  }
}

pi_result lz_piQueueFinish(pi_queue command_queue) {
  pi_queue q = command_queue;
  NEED(q, PI_ERROR_INVALID_QUEUE);
  pthread_mutex_lock(&q->lock);
  pi_result r = PI_SUCCESS;
  if (q->zeq)
    r = ZE_CALL(zeCommandQueueSynchronize, q->zeq, UINT64_MAX);
  pi_result rr = queue_reap(FN, q, true);
  pthread_mutex_unlock(&q->lock);
  return r == PI_SUCCESS ? rr : r;
}

/* Every command is submitted when it is enqueued: there is nothing to
 * flush, but the finished submissions are reaped. */
pi_result lz_piQueueFlush(pi_queue command_queue) {
  pi_queue q = command_queue;
  NEED(q, PI_ERROR_INVALID_QUEUE);
  pthread_mutex_lock(&q->lock);
  pi_result r = queue_reap(FN, q, false);
  pthread_mutex_unlock(&q->lock);
  return r;
}

pi_result lz_piQueueRetain(pi_queue command_queue) {
  NEED(command_queue, PI_ERROR_INVALID_QUEUE);
  ref_retain(&command_queue->refs);
  atomic_fetch_add(&command_queue->total, 1);
  return PI_SUCCESS;
}

/* The last PI reference waits for the queue's commands and destroys its
 * Level Zero objects; the memory goes when its events are gone too. */
pi_result lz_piQueueRelease(pi_queue command_queue) {
  pi_queue q = command_queue;
  NEED(q, PI_ERROR_INVALID_QUEUE);
  pi_result r = PI_SUCCESS;
  if (ref_release(&q->refs))
    r = queue_destroy(FN, q);
  queue_drop(q);
  return r;
}

/* nativeHandleDesc: 0 for a command queue, 1 for an immediate command
 * list (DPC++'s convention). */
pi_result lz_piextQueueGetNativeHandle(pi_queue queue,
                                       pi_native_handle *nativeHandle,
                                       int32_t *nativeHandleDesc) {
  NEED(queue, PI_ERROR_INVALID_QUEUE);
  if (nativeHandleDesc)
    *nativeHandleDesc = queue->imm ? 1 : 0;
  return native_of(FN, queue->imm ? (void *)queue->imm : (void *)queue->zeq,
                   nativeHandle);
}

pi_result lz_piextQueueCreateWithNativeHandle(
    pi_native_handle nativeHandle, int32_t nativeHandleDesc,
    pi_context context, pi_device device, bool pluginOwnsNativeHandle,
    pi_queue_properties *Properties, pi_queue *queue) {
  REQUIRE(nativeHandle != 0 && queue != NULL);
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  NEED(device, PI_ERROR_INVALID_DEVICE);
  if (nativeHandleDesc != 0 && nativeHandleDesc != 1)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: nativeHandleDesc %d is neither 0 (command queue) nor 1 "
                "(immediate command list)",
                FN, (int)nativeHandleDesc);
  pi_queue_properties flags = 0;
  uint32_t index;
  pi_result r = queue_properties(FN, Properties, &flags, &index);
  if (r != PI_SUCCESS)
    return r;
  if (nativeHandleDesc == 1)
    flags |= PI_EXT_QUEUE_FLAG_SUBMISSION_IMMEDIATE;
  pi_queue q = NULL; /* set by queue_new on success; gcc -O3 cannot see that */
  if ((r = queue_new(FN, context, device, flags, &q)) != PI_SUCCESS)
    return r;
  q->ordinal = device->ordinal;
  q->index = index;
  q->owns_native = pluginOwnsNativeHandle;
  if (nativeHandleDesc == 1)
    q->imm = (ze_command_list_handle_t)nativeHandle;
  else
    q->zeq = (ze_command_queue_handle_t)nativeHandle;
  *queue = q;
  return PI_SUCCESS;
}
