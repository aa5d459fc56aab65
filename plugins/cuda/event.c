/*
 * event.c: the CUDA plugin's events and commands: a command's event holds
 * CUevents recorded around it on its queue's stream; waiting on other
 * queues' events, finishing a command, and the PI event functions (user
 * events, queries and profiling, waits, callbacks, status, reference counts,
 * native handles).
 */
#include "cu_internal.h"

/* ---- Events and commands ---------------------------------------------------
 * A command's event holds an end CUevent recorded after the command (and,
 * on profiling queues, a start one before it). Commands make their stream
 * wait for the wait list's events of other queues; events of the same
 * queue are already ordered. */

static pi_result event_new(const char *fn, pi_context ctx, pi_queue q,
                           pi_command_type type, pi_event *out) {
  pi_event e = calloc(1, sizeof *e);
  if (!e)
    return out_of_memory(fn);
  atomic_init(&e->refs, 1);
  e->ctx = ctx;
  e->queue = q;
  e->type = type;
  e->queued_ns = now_ns();
  e->owns_end = true;
  if (q) {
    bool timed = (q->props & PI_QUEUE_FLAG_PROFILING_ENABLE) != 0;
    unsigned flags = timed ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING;
    pi_result r = CUF(fn, cuEventCreate, &e->end, flags);
    if (r == PI_SUCCESS && timed)
      r = CUF(fn, cuEventCreate, &e->start, flags);
    if (r != PI_SUCCESS) {
      if (e->end)
        drv.cuEventDestroy(e->end);
      free(e);
      return r;
    }
    cu_piQueueRetain(q);
  }
  cu_piContextRetain(ctx);
  *out = e;
  return PI_SUCCESS;
}

/* Starts a command on `q`: makes its context current, makes its stream wait
 * for the wait list and, when the caller wants an event, creates it and
 * records its start. */
pi_result cmd_start(const char *fn, pi_queue q, pi_uint32 nwait,
                    const pi_event *wait, pi_event *out,
                    pi_command_type type, pi_event *ev) {
  *ev = NULL;
  if (!q)
    return fail(PI_ERROR_INVALID_QUEUE, "%s: the queue is NULL", fn);
  if (nwait && !wait)
    return fail(PI_ERROR_INVALID_EVENT_WAIT_LIST,
                "%s: num_events_in_wait_list is %u but the list is NULL", fn,
                (unsigned)nwait);
  TRY(use_context(fn, q->ctx->cu));
  for (pi_uint32 i = 0; i < nwait; ++i) {
    if (!wait[i])
      return fail(PI_ERROR_INVALID_EVENT_WAIT_LIST,
                  "%s: event %u of the wait list is NULL", fn, (unsigned)i);
    if (wait[i]->end && wait[i]->queue != q)
      TRY(CUF(fn, cuStreamWaitEvent, q->stream, wait[i]->end, 0));
  }
  if (!out)
    return PI_SUCCESS;
  TRY(event_new(fn, q->ctx, q, type, ev));
  if ((*ev)->start) {
    pi_result r = CUF(fn, cuEventRecord, (*ev)->start, q->stream);
    if (r != PI_SUCCESS) {
      cu_piEventRelease(*ev);
      *ev = NULL;
      return r;
    }
  }
  return PI_SUCCESS;
}

/* Ends a command started with cmd_start: on success records the event's
 * end and hands it out, and waits for the stream when `blocking`; on
 * failure drops the event. Returns `r` or the first new error. */
pi_result cmd_finish(const char *fn, pi_queue q, pi_result r,
                     pi_event ev, pi_event *out, bool blocking) {
  if (r == PI_SUCCESS && ev)
    r = CUF(fn, cuEventRecord, ev->end, q->stream);
  if (r == PI_SUCCESS && blocking)
    r = CUF(fn, cuStreamSynchronize, q->stream);
  if (r != PI_SUCCESS) {
    if (ev) {
      char keep[sizeof last_message];
      pi_result code = last_code;
      memcpy(keep, last_message, sizeof keep);
      cu_piEventRelease(ev);
      memcpy(last_message, keep, sizeof keep);
      last_code = code;
    }
    return r;
  }
  if (out)
    *out = ev;
  return PI_SUCCESS;
}

/* A user event, complete from the start (PI 11.15, as DPC++ asks). */
pi_result cu_piEventCreate(pi_context context, pi_event *ret_event) {
  REQUIRE(context != NULL && ret_event != NULL);
  return event_new(FN, context, NULL, PI_COMMAND_TYPE_USER, ret_event);
}

/* The status of an event: complete, running (started on a profiling queue)
 * or submitted; a failed command's error as a negative status. */
static pi_result event_status(const char *fn, pi_event e, pi_int32 *status) {
  if (!e->end) {
    *status = PI_EVENT_COMPLETE;
    return PI_SUCCESS;
  }
  CUresult err = drv.cuEventQuery(e->end);
  if (err == CUDA_SUCCESS) {
    *status = PI_EVENT_COMPLETE;
    return PI_SUCCESS;
  }
  if (err != CUDA_ERROR_NOT_READY)
    return cu_check(fn, "cuEventQuery", err);
  *status = e->start && drv.cuEventQuery(e->start) == CUDA_SUCCESS
                ? PI_EVENT_RUNNING
                : PI_EVENT_SUBMITTED;
  return PI_SUCCESS;
}

DEFINE_FACTS(event, e, .refs = atomic_load(&e->refs), .context = e->ctx,
             .queue = e->queue, .type = e->type)

pi_result backend_event_info(pi_event event, const struct info_out *o) {
  switch (o->query) {
  case PI_EVENT_INFO_COMMAND_EXECUTION_STATUS: {
    pi_int32 status = PI_EVENT_QUEUED;
    TRY(use_context(o->fn, event->ctx->cu));
    TRY(event_status(o->fn, event, &status));
    return put_i32(o, status);
  }
  default:
    return unknown_query(o);
  }
}

/* Nanoseconds on the host's CLOCK_MONOTONIC time line: the queue's base
 * event was stamped with it, and event times are CUevent distances from
 * there. END is START plus the command's own duration, so that durations
 * keep the events' full precision. */
pi_result backend_profiling_info(pi_event event, const struct info_out *o) {
  pi_event e = event;
  if (o->query < PI_PROFILING_INFO_COMMAND_QUEUED ||
      o->query > PI_PROFILING_INFO_COMMAND_END)
    return unknown_query(o);
  if (!e->queue || !e->start)
    return fail(PI_ERROR_PROFILING_INFO_NOT_AVAILABLE, "%s: the event %s",
                o->fn,
                e->queue ? "comes from a queue without "
                           "PI_QUEUE_FLAG_PROFILING_ENABLE"
                         : "is no command's (a user or native event)");
  if (!drv.cuEventElapsedTime)
    return fail(PI_ERROR_PROFILING_INFO_NOT_AVAILABLE,
                "%s: the driver has no cuEventElapsedTime", o->fn);
  TRY(use_context(o->fn, e->ctx->cu));
  CUresult err = drv.cuEventQuery(e->end);
  if (err == CUDA_ERROR_NOT_READY)
    return fail(PI_ERROR_PROFILING_INFO_NOT_AVAILABLE,
                "%s: the command has not completed yet; wait for the event "
                "first",
                o->fn);
  TRY(cu_check(o->fn, "cuEventQuery", err));
  float to_start = 0, duration = 0;
  TRY(CUF(o->fn, cuEventElapsedTime, &to_start, e->queue->base, e->start));
  TRY(CUF(o->fn, cuEventElapsedTime, &duration, e->start, e->end));
  uint64_t start = e->queue->base_ns +
                   (uint64_t)(to_start > 0 ? (double)to_start * 1e6 : 0.0);
  uint64_t end =
      start + (uint64_t)(duration > 0 ? (double)duration * 1e6 : 0.0);
  uint64_t queued = e->queued_ns < start ? e->queued_ns : start;
  switch (o->query) {
  case PI_PROFILING_INFO_COMMAND_QUEUED:
  case PI_PROFILING_INFO_COMMAND_SUBMIT: /* submitted when enqueued */
    return put_u64(o, queued);
  case PI_PROFILING_INFO_COMMAND_START:
    return put_u64(o, start);
  default:
    return put_u64(o, end);
  }
}

pi_result cu_piEventsWait(pi_uint32 num_events,
                          const pi_event *event_list) {
  REQUIRE(num_events == 0 || event_list != NULL);
  for (pi_uint32 i = 0; i < num_events; ++i) {
    pi_event e = event_list[i];
    if (!e)
      return fail(PI_ERROR_INVALID_EVENT, "%s: event %u is NULL", FN,
                  (unsigned)i);
    if (!e->end)
      continue; /* user events are complete */
    TRY(use_context(FN, e->ctx->cu));
    TRY(CU(cuEventSynchronize, e->end));
  }
  return PI_SUCCESS;
}

/* Waits (for PI_EVENT_COMPLETE) and calls the callback, in its own thread
 * so that the callback may make PI calls. */
static void *callback_thread(void *arg) {
  struct event_callback *cb = arg;
  pi_int32 status = cb->type;
  if (cb->type == PI_EVENT_COMPLETE && cb->event->end) {
    CUresult err = drv.cuEventSynchronize(cb->event->end);
    if (err != CUDA_SUCCESS)
      status = pi_from_cu(err);
  }
  cb->fn(cb->event, status, cb->user_data);
  cu_piEventRelease(cb->event);
  free(cb);
  return NULL;
}

/* Commands are submitted when enqueued, so a callback for
 * PI_EVENT_SUBMITTED or PI_EVENT_RUNNING runs at once (in a thread);
 * one for PI_EVENT_COMPLETE runs when the command completes. */
pi_result cu_piEventSetCallback(
    pi_event event, pi_int32 command_exec_callback_type,
    void (*pfn_notify)(pi_event event, pi_int32 event_command_status,
                       void *user_data),
    void *user_data) {
  REQUIRE(event != NULL && pfn_notify != NULL);
  TRY(event_callback_type_check(FN, command_exec_callback_type));
  struct event_callback *cb = malloc(sizeof *cb);
  if (!cb)
    return out_of_memory(FN);
  *cb = (struct event_callback){event, command_exec_callback_type, pfn_notify,
                                user_data};
  cu_piEventRetain(event);
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int err = pthread_create(&t, &attr, callback_thread, cb);
  pthread_attr_destroy(&attr);
  if (err) {
    cu_piEventRelease(event);
    free(cb);
    return fail(PI_ERROR_OUT_OF_RESOURCES,
                "%s: cannot start the callback thread: %s", FN, strerror(err));
  }
  return PI_SUCCESS;
}

/* User events are complete from the start: setting PI_EVENT_COMPLETE on one
 * succeeds; nothing else can be set. */
pi_result cu_piEventSetStatus(pi_event event,
                              pi_int32 execution_status) {
  REQUIRE(event != NULL);
  if (event->type != PI_COMMAND_TYPE_USER || event->end)
    return fail(PI_ERROR_INVALID_EVENT,
                "%s: only user events (piEventCreate) take a status", FN);
  if (execution_status != PI_EVENT_COMPLETE)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: user events of the CUDA plugin are created complete; "
                "status %d cannot be set",
                FN, (int)execution_status);
  return PI_SUCCESS;
}

pi_result cu_piEventRetain(pi_event event) {
  REQUIRE(event != NULL);
  ref_retain(&event->refs);
  return PI_SUCCESS;
}

/* CUevents may go while pending: the driver frees them once they complete. */
pi_result cu_piEventRelease(pi_event event) {
  REQUIRE(event != NULL);
  if (!ref_release(&event->refs))
    return PI_SUCCESS;
  bool gone = driver_gone();
  pi_result r = gone ? PI_SUCCESS : use_context(FN, event->ctx->cu);
  if (event->start && !gone)
    drv.cuEventDestroy(event->start);
  if (event->end && event->owns_end && r == PI_SUCCESS && !gone)
    r = CU(cuEventDestroy, event->end);
  pi_result r2 = event->queue ? cu_piQueueRelease(event->queue) : PI_SUCCESS;
  pi_result r3 = cu_piContextRelease(event->ctx);
  free(event);
  return r != PI_SUCCESS ? r : r2 != PI_SUCCESS ? r2 : r3;
}

/* The event's end CUevent (NULL for user events). */
pi_result cu_piextEventGetNativeHandle(pi_event event,
                                       pi_native_handle *nativeHandle) {
  REQUIRE(event != NULL && nativeHandle != NULL);
  *nativeHandle = (pi_native_handle)(uintptr_t)event->end;
  return PI_SUCCESS;
}

/* Wraps a CUevent; commands can wait for it and piEventsWait waits for it.
 * With ownNativeHandle the last release destroys it. */
pi_result
cu_piextEventCreateWithNativeHandle(pi_native_handle nativeHandle,
                                    pi_context context, bool ownNativeHandle,
                                    pi_event *event) {
  REQUIRE(nativeHandle != 0 && context != NULL && event != NULL);
  TRY(event_new(FN, context, NULL, PI_COMMAND_TYPE_MARKER, event));
  (*event)->end = (CUevent)(uintptr_t)nativeHandle;
  (*event)->owns_end = ownNativeHandle;
  return PI_SUCCESS;
}
