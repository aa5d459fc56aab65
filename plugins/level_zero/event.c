/*
 * event.c: the Level Zero plugin's events: each command signals a
 * host-visible event from its context's pools (event_new, release, wait),
 * and the PI event functions: user events, queries and profiling, waits,
 * callbacks (run by a thread per event), status, reference counts and native
 * handles.
 */
#include "lz_internal.h"

/* ---- Events ------------------------------------------------------------------
 * Every event comes from a host-visible pool of its context; profiling
 * queues take theirs from pools with kernel timestamps. */

pi_result event_new(const char *fn, pi_context c, pi_queue q,
                    pi_command_type type, bool timestamps,
                    pi_event *out) {
  pi_event e = calloc(1, sizeof *e);
  if (!e)
    return out_of_memory(fn);
  pthread_mutex_lock(&c->lock);
  struct event_pool *pool = c->pools;
  while (pool && (pool->timestamps != timestamps || pool->used == UINT64_MAX))
    pool = pool->next;
  pi_result r = PI_SUCCESS;
  if (!pool) {
    pool = calloc(1, sizeof *pool);
    ze_device_handle_t zd[64];
    uint32_t nd = c->ndevices < 64 ? c->ndevices : 64;
    for (uint32_t i = 0; i < nd; ++i)
      zd[i] = c->devices[i]->ze;
    ze_event_pool_desc_t desc = {
        .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
        .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE |
                 (timestamps ? ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP : 0),
        .count = POOL_EVENTS};
    r = pool ? check_ze(fn, "zeEventPoolCreate",
                        zeEventPoolCreate(c->ze, &desc, nd, zd, &pool->ze))
             : out_of_memory(fn);
    if (r == PI_SUCCESS) {
      pool->timestamps = timestamps;
      pool->next = c->pools;
      c->pools = pool;
    } else {
      free(pool);
      pool = NULL;
    }
  }
  uint32_t slot = 0;
  if (r == PI_SUCCESS) {
    while (pool->used & (1ull << slot))
      ++slot;
    pool->used |= 1ull << slot;
  }
  pthread_mutex_unlock(&c->lock);
  if (r == PI_SUCCESS) {
    ze_event_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                            .index = slot,
                            .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                            .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    r = check_ze(fn, "zeEventCreate", zeEventCreate(pool->ze, &desc, &e->ze));
    if (r != PI_SUCCESS) {
      pthread_mutex_lock(&c->lock);
      pool->used &= ~(1ull << slot);
      pthread_mutex_unlock(&c->lock);
    }
  }
  if (r != PI_SUCCESS) {
    free(e);
    return r;
  }
  e->context = c;
  e->queue = q;
  e->type = type;
  e->timestamps = timestamps;
  e->pool = pool;
  e->slot = slot;
  atomic_init(&e->refs, 1);
  context_retain(c);
  if (q)
    atomic_fetch_add(&q->total, 1);
  *out = e;
  return PI_SUCCESS;
}

pi_result event_release(const char *fn, pi_event e) {
  if (!ref_release(&e->refs))
    return PI_SUCCESS;
  pi_result r = PI_SUCCESS;
  if (e->pool || e->owns_native)
    r = check_ze(fn, "zeEventDestroy", zeEventDestroy(e->ze));
  if (e->pool) {
    pthread_mutex_lock(&e->context->lock);
    e->pool->used &= ~(1ull << e->slot);
    pthread_mutex_unlock(&e->context->lock);
  }
  if (e->queue)
    queue_drop(e->queue);
  pi_result cr = context_release(fn, e->context);
  free(e);
  return r == PI_SUCCESS ? cr : r;
}

void event_retain(pi_event e) { ref_retain(&e->refs); }

/* Waits for an event without end. */
pi_result event_wait(const char *fn, pi_event e) {
  return check_ze(fn, "zeEventHostSynchronize",
                  zeEventHostSynchronize(e->ze, UINT64_MAX));
}

/* ---- Events ------------------------------------------------------------------------ */

/* A user event, already complete (as PI asks, DPC++ PI 11.15). */
pi_result lz_piEventCreate(pi_context context, pi_event *ret_event) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(ret_event != NULL);
  *ret_event = NULL;
  pi_event e;
  pi_result r = event_new(FN, context, NULL, PI_COMMAND_TYPE_USER, false, &e);
  if (r != PI_SUCCESS)
    return r;
  if ((r = ZE_CALL(zeEventHostSignal, e->ze)) != PI_SUCCESS) {
    event_release(FN, e);
    return r;
  }
  *ret_event = e;
  return PI_SUCCESS;
}

DEFINE_FACTS(event, e, .refs = atomic_load(&e->refs),
             .context = e->context, .queue = e->queue, .type = e->type)

pi_result backend_event_info(pi_event event, const struct info_out *o) {
  switch (o->query) {
  case PI_EVENT_INFO_COMMAND_EXECUTION_STATUS: {
    ze_result_t zr = zeEventQueryStatus(event->ze);
    int32_t s;
    if (zr == ZE_RESULT_SUCCESS)
      s = PI_EVENT_COMPLETE;
    else if (zr == ZE_RESULT_NOT_READY)
      s = PI_EVENT_SUBMITTED;
    else
      return check_ze(o->fn, "zeEventQueryStatus", zr);
    return put_info(o, &s, sizeof s);
  }
  default:
    return unknown_query(o);
  }
}

pi_result backend_profiling_info(pi_event event, const struct info_out *o) {
  if (!event->timestamps)
    return fail(PI_ERROR_PROFILING_INFO_NOT_AVAILABLE,
                "%s: the event does not come from a queue created with "
                "PI_QUEUE_FLAG_PROFILING_ENABLE",
                o->fn);
  ze_result_t zr = zeEventQueryStatus(event->ze);
  if (zr == ZE_RESULT_NOT_READY)
    return fail(PI_ERROR_PROFILING_INFO_NOT_AVAILABLE,
                "%s: the command has not completed yet", o->fn);
  if (zr != ZE_RESULT_SUCCESS)
    return check_ze(o->fn, "zeEventQueryStatus", zr);
  pi_device dev = event->queue->device;
  switch (o->query) {
  case PI_PROFILING_INFO_COMMAND_QUEUED:
  case PI_PROFILING_INFO_COMMAND_SUBMIT:
    return put_u64(o, event->queued_ns);
  case PI_PROFILING_INFO_COMMAND_START:
  case PI_PROFILING_INFO_COMMAND_END: {
    ze_kernel_timestamp_result_t ts;
    pi_result r =
        ZE_CALL_IN(o->fn, zeEventQueryKernelTimestamp, event->ze, &ts);
    if (r != PI_SUCCESS)
      return r;
    uint64_t start = ts.global.kernelStart, end = ts.global.kernelEnd;
    uint32_t bits = dev->props.kernelTimestampValidBits;
    if (bits && bits < 64) {
      uint64_t mask = (1ull << bits) - 1;
      start &= mask;
      end &= mask;
      if (end < start) /* the counter wrapped */
        end += mask + 1;
    }
    return put_u64(o, ticks_to_ns(dev, o->query ==
                                                PI_PROFILING_INFO_COMMAND_START
                                            ? start
                                            : end));
  }
  default:
    return unknown_query(o);
  }
}

pi_result lz_piEventsWait(pi_uint32 num_events,
                          const pi_event *event_list) {
  if (num_events && !event_list)
    return fail(PI_ERROR_INVALID_EVENT, "%s: num_events is %u but the list "
                "is NULL", FN, (unsigned)num_events);
  for (pi_uint32 i = 0; i < num_events; ++i) {
    if (!event_list[i])
      return fail(PI_ERROR_INVALID_EVENT, "%s: event %u is NULL", FN,
                  (unsigned)i);
    pi_result r = event_wait(FN, event_list[i]);
    if (r != PI_SUCCESS)
      return r;
  }
  return PI_SUCCESS;
}

static pthread_mutex_t callbacks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct callback *callbacks;
atomic_bool stopping;

static void *callback_main(void *arg) {
  struct callback *cb = arg;
  const struct event_callback *c = &cb->call;
  pi_int32 status = c->type;
  bool call = true;
  if (c->type == PI_EVENT_COMPLETE) {
    ze_result_t zr;
    while ((zr = zeEventHostSynchronize(c->event->ze, 10000000ull)) ==
               ZE_RESULT_NOT_READY &&
           !atomic_load(&stopping))
      ;
    call = zr != ZE_RESULT_NOT_READY;
    status = zr == ZE_RESULT_SUCCESS ? PI_EVENT_COMPLETE
                                     : (pi_int32)pi_from_ze(zr);
  }
  if (call)
    c->fn(c->event, status, c->user_data);
  event_release("piEventSetCallback", c->event);
  atomic_store(&cb->done, true);
  return NULL;
}

/* Joins the callback threads that ended (all of them when `all`). */
void callbacks_join(bool all) {
  pthread_mutex_lock(&callbacks_lock);
  struct callback **pp = &callbacks;
  while (*pp) {
    struct callback *cb = *pp;
    if (all || atomic_load(&cb->done)) {
      pthread_join(cb->thread, NULL);
      *pp = cb->next;
      free(cb);
    } else {
      pp = &cb->next;
    }
  }
  pthread_mutex_unlock(&callbacks_lock);
}

pi_result lz_piEventSetCallback(
    pi_event event, pi_int32 command_exec_callback_type,
    void (*pfn_notify)(pi_event event, pi_int32 event_command_status,
                       void *user_data),
    void *user_data) {
  NEED(event, PI_ERROR_INVALID_EVENT);
  REQUIRE(pfn_notify != NULL);
  TRY(event_callback_type_check(FN, command_exec_callback_type));
  callbacks_join(false);
  struct callback *cb = calloc(1, sizeof *cb);
  if (!cb)
    return out_of_memory(FN);
  cb->call = (struct event_callback){event, command_exec_callback_type,
                                     pfn_notify, user_data};
  event_retain(event);
  pthread_mutex_lock(&callbacks_lock);
  int err = pthread_create(&cb->thread, NULL, callback_main, cb);
  if (err == 0) {
    cb->next = callbacks;
    callbacks = cb;
  }
  pthread_mutex_unlock(&callbacks_lock);
  if (err) {
    event_release(FN, event);
    free(cb);
    return fail(PI_ERROR_OUT_OF_RESOURCES,
                "%s: cannot start the thread that waits for the event: %s", FN,
                strerror(err));
  }
  return PI_SUCCESS;
}

/* Completes a user event (zeEventHostSignal). */
pi_result lz_piEventSetStatus(pi_event event,
                              pi_int32 execution_status) {
  NEED(event, PI_ERROR_INVALID_EVENT);
  if (event->queue)
    return fail(PI_ERROR_INVALID_EVENT,
                "%s: only user events (piEventCreate) take a status; this one "
                "belongs to a command",
                FN);
  if (execution_status != PI_EVENT_COMPLETE)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a Level Zero event can only be signaled complete, not "
                "set to status %d",
                FN, (int)execution_status);
  return ZE_CALL(zeEventHostSignal, event->ze);
}

pi_result lz_piEventRetain(pi_event event) {
  NEED(event, PI_ERROR_INVALID_EVENT);
  event_retain(event);
  return PI_SUCCESS;
}

pi_result lz_piEventRelease(pi_event event) {
  NEED(event, PI_ERROR_INVALID_EVENT);
  return event_release(FN, event);
}

pi_result lz_piextEventGetNativeHandle(pi_event event,
                                       pi_native_handle *nativeHandle) {
  NEED(event, PI_ERROR_INVALID_EVENT);
  return native_of(FN, event->ze, nativeHandle);
}

/* An event made elsewhere acts as a user event of the context. */
pi_result lz_piextEventCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, bool ownNativeHandle,
    pi_event *event) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(nativeHandle != 0 && event != NULL);
  pi_event e = calloc(1, sizeof *e);
  if (!e)
    return out_of_memory(FN);
  e->ze = (ze_event_handle_t)nativeHandle;
  e->context = context;
  e->type = PI_COMMAND_TYPE_USER;
  e->owns_native = ownNativeHandle;
  atomic_init(&e->refs, 1);
  context_retain(context);
  *event = e;
  return PI_SUCCESS;
}
