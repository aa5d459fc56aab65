/*
 * submission.c: how a command reaches a Level Zero queue: enqueue() takes a
 * command list, appends the waits, the command (an append_fn) and its
 * signal event, and submits it; and the appenders for barriers, copies,
 * fills and rectangular copies that the memory and USM commands share.
 */
#include "lz_internal.h"

/* Enqueues one command on `q`: an event for it, the wait list (with the
 * previous command's event on in-order queues, and every pending command's
 * on out-of-order queues when `barrier`), a command list, the append, the
 * submission. `free_after` (host USM, may be NULL) is freed once the
 * command completed, or now if it cannot be enqueued. */
pi_result enqueue(const char *fn, pi_queue q, pi_command_type type,
                  pi_uint32 nwait, const pi_event *wait, pi_event *out,
                  bool blocking, bool barrier, append_fn append,
                  void *op, void *free_after) {
  pi_result r = PI_SUCCESS;
  if (out)
    *out = NULL;
  if (!q)
    r = fail(PI_ERROR_INVALID_QUEUE, "%s: the queue is NULL", fn);
  else if (nwait && !wait)
    r = fail(PI_ERROR_INVALID_EVENT_WAIT_LIST,
             "%s: num_events_in_wait_list is %u but the list is NULL", fn,
             (unsigned)nwait);
  for (pi_uint32 i = 0; r == PI_SUCCESS && i < nwait; ++i)
    if (!wait[i])
      r = fail(PI_ERROR_INVALID_EVENT_WAIT_LIST,
               "%s: event %u of the wait list is NULL", fn, (unsigned)i);
    else if (wait[i]->context->platform != q->context->platform)
      r = fail(PI_ERROR_INVALID_EVENT_WAIT_LIST,
               "%s: event %u of the wait list belongs to another Level Zero "
               "driver",
               fn, (unsigned)i);
  if (r != PI_SUCCESS) {
    if (free_after && q)
      zeMemFree(q->context->ze, free_after);
    return r;
  }
  pthread_mutex_lock(&q->lock);
  pi_event ev = NULL;
  ze_command_list_handle_t list = NULL;
  ze_event_handle_t *zw = NULL;
  if (q->dead)
    r = fail(PI_ERROR_INVALID_QUEUE, "%s: the queue was released", fn);
  if (r == PI_SUCCESS)
    r = event_new(fn, q->context, q, type,
                  (q->flags & PI_QUEUE_FLAG_PROFILING_ENABLE) != 0, &ev);
  if (r == PI_SUCCESS && ev->timestamps) {
    uint64_t host = 0, dev = 0;
    if (zeDeviceGetGlobalTimestamps(q->device->ze, &host, &dev) ==
        ZE_RESULT_SUCCESS)
      ev->queued_ns = ticks_to_ns(q->device, dev);
  }
  size_t extra = in_order(q) ? (q->last != NULL) : (barrier ? q->nsubs : 0);
  if (r == PI_SUCCESS && !(zw = calloc(nwait + extra + 1, sizeof *zw)))
    r = out_of_memory(fn);
  uint32_t n = 0;
  for (pi_uint32 i = 0; r == PI_SUCCESS && i < nwait; ++i)
    zw[n++] = wait[i]->ze;
  if (r == PI_SUCCESS && in_order(q) && q->last)
    zw[n++] = q->last->ze;
  for (size_t i = 0; r == PI_SUCCESS && !in_order(q) && barrier && i < q->nsubs;
       ++i)
    zw[n++] = q->subs[i].event->ze;
  if (r == PI_SUCCESS && q->nsubs == q->cap) {
    size_t cap = q->cap ? 2 * q->cap : 16;
    struct submission *s = realloc(q->subs, cap * sizeof *s);
    if (!s)
      r = out_of_memory(fn);
    else {
      q->subs = s;
      q->cap = cap;
    }
  }
  if (r == PI_SUCCESS) {
    if (q->imm)
      list = q->imm;
    else if (q->nfree)
      list = q->free[--q->nfree];
    else {
      ze_command_list_desc_t desc = {
          .stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
          .commandQueueGroupOrdinal = q->ordinal};
      r = check_ze(fn, "zeCommandListCreate",
                   zeCommandListCreate(q->context->ze, q->device->ze, &desc,
                                       &list));
    }
  }
  if (r == PI_SUCCESS) {
    struct append a = {fn, q, list, ev->ze, n, n ? zw : NULL};
    r = append(&a, op);
  }
  if (r == PI_SUCCESS && !q->imm) {
    r = check_ze(fn, "zeCommandListClose", zeCommandListClose(list));
    if (r == PI_SUCCESS)
      r = check_ze(fn, "zeCommandQueueExecuteCommandLists",
                   zeCommandQueueExecuteCommandLists(q->zeq, 1, &list, NULL));
  }
  free(zw);
  if (r != PI_SUCCESS) {
    if (list && !q->imm) {
      if (q->nfree < FREE_LISTS &&
          zeCommandListReset(list) == ZE_RESULT_SUCCESS)
        q->free[q->nfree++] = list;
      else
        zeCommandListDestroy(list);
    }
    pthread_mutex_unlock(&q->lock);
    if (ev)
      event_release(fn, ev);
    if (free_after)
      zeMemFree(q->context->ze, free_after);
    return r;
  }
  event_retain(ev); /* the submission's reference */
  q->subs[q->nsubs++] =
      (struct submission){q->imm ? NULL : list, ev, free_after};
  pi_event old = NULL;
  if (in_order(q)) {
    old = q->last;
    event_retain(ev);
    q->last = ev;
  }
  queue_reap(fn, q, false); /* a failure here belongs to an older command */
  pthread_mutex_unlock(&q->lock);
  if (old)
    event_release(fn, old);
  if (blocking)
    r = event_wait(fn, ev);
  if (r == PI_SUCCESS && out)
    *out = ev;
  else
    event_release(fn, ev);
  return r;
}

/* Commands with no event parameters of their own: wait, do, signal. */
pi_result append_wait(const struct append *a) {
  if (!a->nwait)
    return PI_SUCCESS;
  return check_ze(a->fn, "zeCommandListAppendWaitOnEvents",
                  zeCommandListAppendWaitOnEvents(a->list, a->nwait, a->wait));
}

pi_result append_signal(const struct append *a) {
  return check_ze(a->fn, "zeCommandListAppendSignalEvent",
                  zeCommandListAppendSignalEvent(a->list, a->signal));
}

pi_result append_barrier(const struct append *a, void *op) {
  (void)op;
  return check_ze(a->fn, "zeCommandListAppendBarrier",
                  zeCommandListAppendBarrier(a->list, a->signal, a->nwait,
                                             a->wait));
}

pi_result append_copy(const struct append *a, void *op) {
  struct copy_op *c = op;
  return check_ze(a->fn, "zeCommandListAppendMemoryCopy",
                  zeCommandListAppendMemoryCopy(a->list, c->dst, c->src,
                                                c->size, a->signal, a->nwait,
                                                a->wait));
}

static pi_result append_fill(const struct append *a, void *op) {
  struct fill_op *f = op;
  if (f->staging)
    return check_ze(a->fn, "zeCommandListAppendMemoryCopy",
                    zeCommandListAppendMemoryCopy(a->list, f->ptr, f->staging,
                                                  f->size, a->signal, a->nwait,
                                                  a->wait));
  return check_ze(a->fn, "zeCommandListAppendMemoryFill",
                  zeCommandListAppendMemoryFill(a->list, f->ptr, f->pattern,
                                                f->pattern_size, f->size,
                                                a->signal, a->nwait, a->wait));
}

/* Fills `size` bytes at `ptr` with the pattern on queue `q`. */
pi_result enqueue_fill(const char *fn, pi_queue q, pi_command_type type,
                       void *ptr, const void *pattern,
                       size_t pattern_size, size_t size,
                       pi_uint32 nwait, const pi_event *wait,
                       pi_event *event) {
  if (!q)
    return fail(PI_ERROR_INVALID_QUEUE, "%s: the queue is NULL", fn);
  if (!ptr || !pattern || pattern_size == 0 || size % pattern_size)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a fill needs a pointer, a pattern and a size (%zu) that "
                "is a multiple of the pattern size (%zu)",
                fn, size, pattern_size);
  if (pattern_size & (pattern_size - 1))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the pattern size (%zu) must be a power of two", fn,
                pattern_size);
  struct fill_op f = {ptr, pattern, pattern_size, size, NULL};
  if (pattern_size > q->device->max_fill) {
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    pi_result r = check_ze(fn, "zeMemAllocHost",
                           zeMemAllocHost(q->context->ze, &hd, size ? size : 1,
                                          64, &f.staging));
    if (r != PI_SUCCESS)
      return r;
    for (size_t off = 0; off < size; off += pattern_size)
      memcpy((char *)f.staging + off, pattern, pattern_size);
  }
  return enqueue(fn, q, type, nwait, wait, event, false, false, append_fill,
                 &f, f.staging);
}

pi_result append_rect(const struct append *a, void *op) {
  struct rect_op *r = op;
  return check_ze(a->fn, "zeCommandListAppendMemoryCopyRegion",
                  zeCommandListAppendMemoryCopyRegion(
                      a->list, r->dst, &r->dst_region, r->dst_pitch,
                      r->dst_slice, r->src, &r->src_region, r->src_pitch,
                      r->src_slice, a->signal, a->nwait, a->wait));
}

bool fits_u32(size_t v) { return v <= UINT32_MAX; }

/* Fills a rect_op from PI's origins, region and pitches (0 pitches default
 * to the region's row and slice). */
pi_result rect_setup(const char *fn, struct rect_op *op, void *dst,
                     const size_t dorigin[3], size_t drow,
                     size_t dslice, const void *src,
                     const size_t sorigin[3], size_t srow,
                     size_t sslice, const size_t region[3]) {
  if (region[0] == 0 || region[1] == 0 || region[2] == 0)
    return fail(PI_ERROR_INVALID_VALUE, "%s: the region %zux%zux%zu is empty",
                fn, region[0], region[1], region[2]);
  drow = drow ? drow : region[0];
  dslice = dslice ? dslice : drow * region[1];
  srow = srow ? srow : region[0];
  sslice = sslice ? sslice : srow * region[1];
  if (drow < region[0] || srow < region[0] || dslice < drow * region[1] ||
      sslice < srow * region[1])
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a row or slice pitch is smaller than the region", fn);
  const size_t all[] = {dorigin[0], dorigin[1], dorigin[2], sorigin[0],
                        sorigin[1], sorigin[2], region[0],  region[1],
                        region[2],  drow,       dslice,     srow,
                        sslice};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    if (!fits_u32(all[i]))
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: Level Zero copy regions take 32-bit origins, sizes and "
                  "pitches; %zu is too large",
                  fn, all[i]);
  op->dst = dst;
  op->src = src;
  op->dst_region = (ze_copy_region_t){(uint32_t)dorigin[0], (uint32_t)dorigin[1],
                                      (uint32_t)dorigin[2], (uint32_t)region[0],
                                      (uint32_t)region[1], (uint32_t)region[2]};
  op->src_region = (ze_copy_region_t){(uint32_t)sorigin[0], (uint32_t)sorigin[1],
                                      (uint32_t)sorigin[2], (uint32_t)region[0],
                                      (uint32_t)region[1], (uint32_t)region[2]};
  op->dst_pitch = (uint32_t)drow;
  op->dst_slice = (uint32_t)dslice;
  op->src_pitch = (uint32_t)srow;
  op->src_slice = (uint32_t)sslice;
  return PI_SUCCESS;
}
