/*
 * fe_event.c: OpenCL events over PI events, the wait lists of every
 * enqueue, and the commands held back for user events.
 *
 * An event the application gets from an enqueue wraps the PI event of that
 * enqueue; its status, profiling and callbacks come from PI. PI's user
 * events (piEventCreate) are complete from creation on every plugin, so
 * PI cannot make a command wait for an OpenCL user event. The front end
 * keeps a user event's status itself, and a command whose wait list names
 * one that is not complete yet is held: fe_enqueue keeps a copy of it, and
 * the clSetUserEventStatus that completes its last user event issues it to
 * PI (with the PI events of its wait list, in the order of its queue). The
 * application gets the command's event at once; its PI event exists once
 * the command is issued. A command waiting for a user event that failed
 * never runs: its event ends with CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST.
 * Commands that wait for nothing held (the normal case) go to PI from the
 * enqueue itself, with one check per wait-list event.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fe.h"

/* A clSetEventCallback registration; the event keeps a wrapper reference
 * until the callback ran, so the application gets its handle, alive. */
struct fe_event_cb {
  void(CL_CALLBACK *fn)(cl_event, cl_int, void *);
  void *user;
  cl_int type;
  cl_event ev;
  struct fe_event_cb *next;
};

/* A command held back (fe_enqueue), in its context's list. */
struct fe_held {
  struct fe_held *next;
  cl_command_queue q;      /* wrapper reference */
  cl_event ev;             /* its event, or NULL; wrapper reference */
  cl_uint n;
  cl_event *wait;          /* wrapper references; held_uses counted */
  fe_cmd *cmd;             /* the copy */
  cl_int status;           /* once taken out: FE_BY_PI (issued) or the error */
  pi_event pe;             /* issued: its PI event */
  unsigned releases;       /* piQueueReleases that waited for the queue */
  bool flush;              /* issued after the application flushed its queue */
  bool barrier;            /* what its queue takes later waits for it (follows) */
  bool after_all;          /* it waits for all its queue took before (follows) */
};

/* Every change of a status the front end keeps (user events, held
 * commands) wakes the threads waiting for one on the host. */
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;

static void wake_all(void)
{
  pthread_mutex_lock(&wake_lock);
  pthread_cond_broadcast(&wake);
  pthread_mutex_unlock(&wake_lock);
}

/* ---- Event wrappers --------------------------------------------------------- */

static void event_free(void *o)
{
  cl_event e = o;
  pthread_mutex_destroy(&e->lock);
  if (e->queue)
    fe_queue_unref(e->queue);
  else
    fe_context_unref(e->ctx);
}

static void event_unref(cl_event e) { fe_unref(e, event_free); }

/* A new event of `q` (or a user event of `ctx` when q is NULL). Events are
 * not entered in the handle map: no PI info query answers an event. */
static cl_event event_new(cl_context ctx, cl_command_queue q, cl_command_type type,
                          pi_event pi, int status)
{
  cl_event e = fe_new(sizeof *e, FE_EVENT, ctx->o.pl);
  if (!e)
    return NULL;
  e->pi = pi;
  e->ctx = ctx;
  e->queue = q;
  e->type = type;
  pthread_mutex_init(&e->lock, NULL);
  atomic_init(&e->status, status);
  fe_ref(q ? (void *)q : (void *)ctx);
  return e;
}

/* Wraps an enqueue's PI event (fe.h). */
cl_int fe_event_out(cl_command_queue q, cl_command_type type, pi_event ev, cl_event *out)
{
  if (!out) {
    if (ev)
      pirt_piEventRelease(q->o.pl, ev);
    return CL_SUCCESS;
  }
  cl_event e = event_new(q->ctx, q, type, ev, FE_BY_PI);
  if (!e) {
    if (ev)
      pirt_piEventRelease(q->o.pl, ev);
    return CL_OUT_OF_HOST_MEMORY;
  }
  *out = e;
  return CL_SUCCESS;
}

/* Gives PI the retains and releases it was owed; e->lock held. */
static void flush_refs(cl_event e)
{
  for (; e->held_refs > 0; e->held_refs--)
    pirt_piEventRetain(e->o.pl, e->pi);
  for (; e->held_refs < 0; e->held_refs++)
    pirt_piEventRelease(e->o.pl, e->pi);
}

/* One clRetainEvent (+1) or clReleaseEvent (-1) at the PI level: now, or
 * once the event's PI event exists and no held command still needs it. */
static cl_int pi_ref(cl_event e, int delta)
{
  pthread_mutex_lock(&e->lock);
  if (!e->pi || e->held_uses || e->held_refs) {
    e->held_refs += delta;
    pthread_mutex_unlock(&e->lock);
    return CL_SUCCESS;
  }
  pthread_mutex_unlock(&e->lock);
  return fe_err(delta > 0 ? pirt_piEventRetain(e->o.pl, e->pi)
                          : pirt_piEventRelease(e->o.pl, e->pi));
}

/* Drops a reference the front end itself holds at both levels. */
static void event_release(cl_event e)
{
  pi_ref(e, -1);
  event_unref(e);
}

/* ---- Wait lists ------------------------------------------------------------- */

enum { READY, WAITING, FAILED }; /* worst first wins: FAILED > WAITING > READY */

/* Whether PI may be given the event's PI event now. A complete user event
 * passes (its PI event is complete). */
static inline int ev_state(cl_event e, int *status)
{
  int s = atomic_load_explicit(&e->status, memory_order_acquire);
  if (status)
    *status = s;
  if (s == FE_BY_PI || s == CL_COMPLETE)
    return READY;
  return s < 0 ? FAILED : WAITING;
}

/* Checks a wait list and gathers its PI events; *state gets the worst
 * event's state (PI events of events not READY are left NULL). */
static cl_int check_list(cl_context ctx, cl_uint n, const cl_event *list, pi_event *buf,
                         size_t small, pi_event **out, int *state)
{
  *out = NULL;
  *state = READY;
  if ((n == 0) != (list == NULL))
    return CL_INVALID_EVENT_WAIT_LIST;
  if (n == 0)
    return CL_SUCCESS;
  pi_event *pis = buf;
  if (n > small && !(pis = malloc(n * sizeof *pis)))
    return CL_OUT_OF_HOST_MEMORY;
  for (cl_uint i = 0; i < n; i++) {
    cl_event e = list[i];
    cl_int err = !FE_IS(e, FE_EVENT) ? CL_INVALID_EVENT_WAIT_LIST
                 : e->ctx != ctx     ? CL_INVALID_CONTEXT
                                     : CL_SUCCESS;
    if (err) {
      fe_wait_list_free(pis, buf);
      return err;
    }
    int s = ev_state(e, NULL);
    pis[i] = s == READY ? e->pi : NULL;
    if (s > *state)
      *state = s;
  }
  *out = pis;
  return CL_SUCCESS;
}

/* Waits on the host until `e` is no longer WAITING. */
static void wait_ready(cl_event e)
{
  pthread_mutex_lock(&wake_lock);
  while (ev_state(e, NULL) == WAITING)
    pthread_cond_wait(&wake, &wake_lock);
  pthread_mutex_unlock(&wake_lock);
}

/* A wait list's PI events, waiting on the host for held ones (fe.h). */
cl_int fe_wait_list(cl_context ctx, cl_uint n, const cl_event *list, pi_event *buf,
                    size_t small, pi_event **out)
{
  int state;
  cl_int err = check_list(ctx, n, list, buf, small, out, &state);
  if (err || state == READY)
    return err;
  for (cl_uint i = 0; i < n; i++) {
    wait_ready(list[i]);
    if (ev_state(list[i], NULL) == FAILED) {
      fe_wait_list_free(*out, buf);
      *out = NULL;
      return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    }
    (*out)[i] = list[i]->pi;
  }
  return CL_SUCCESS;
}

/* Frees what fe_wait_list allocated. */
void fe_wait_list_free(pi_event *list, pi_event *buf)
{
  if (list != buf)
    free(list);
}

/* ---- Callbacks -------------------------------------------------------------- */

static void run_callback(struct fe_event_cb *cb, cl_int status)
{
  cl_event e = cb->ev;
  cb->fn(e, status, cb->user);
  free(cb);
  event_unref(e);
}

/* PI's callback: the application's, with the wrapper. It begins with a
 * note: when it ran decided what the application did next (OpenCV lets a
 * kernel's buffers go once it has), and the replay plugin runs it again
 * where the recording says it began. */
static void pi_callback(pi_event pe, pi_int32 status, void *data)
{
  if (!pirt_note_wanted()) {
    run_callback(data, status);
    return;
  }
  char text[96];
  snprintf(text, sizeof text, "callback of event %p (status %d) begins", (void *)pe, (int)status);
  uint64_t value[2] = {(uint64_t)(uintptr_t)data, 0};
  pirt_note note = {.kind = PIRT_NOTE_CALLBACK, .text = text, .value = value, .size = sizeof value};
  pirt_note_emit(&note);
  run_callback(data, status);
}

/* Gives PI the callbacks registered while the event's command was held. */
static void give_callbacks(cl_event e, struct fe_event_cb *cbs)
{
  while (cbs) {
    struct fe_event_cb *next = cbs->next;
    pi_result r = pirt_piEventSetCallback(e->o.pl, e->pi, cbs->type, pi_callback, cbs);
    if (r != PI_SUCCESS) {
      fe_context_notify(e->ctx, "pitrace: piEventSetCallback failed for a callback "
                                "registered while its command was held back; it is "
                                "called now with the error");
      run_callback(cbs, fe_err(r));
    }
    cbs = next;
  }
}

/* ---- Held commands ---------------------------------------------------------- */

/* How a command orders against the others of its queue. An in-order
 * queue runs each after all it took before. On an out-of-order queue only
 * a marker or barrier without a wait list waits for all before it
 * (after_all), and only a barrier is waited for by all that follow
 * (barrier); others wait for their wait lists alone, so one held back for
 * a user event holds back nothing else (a program may wait for a command
 * of such a queue before it completes the user event: PoCL runs it). */
static void follows(cl_command_queue q, cl_command_type type, cl_uint n, bool *barrier,
                    bool *after_all)
{
  bool ooo = q->props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
  *barrier = !ooo || type == CL_COMMAND_BARRIER;
  *after_all = !ooo || (n == 0 && (type == CL_COMMAND_BARRIER || type == CL_COMMAND_MARKER));
}

/* Whether a command that follows (above) has to be held back for the
 * commands of its queue held back now. */
static bool behind_held(cl_command_queue q, bool after_all)
{
  return atomic_load_explicit(after_all ? &q->held : &q->held_barriers,
                              memory_order_acquire) != 0;
}

/* Issues (or fails) every held command of `ctx` that can go, in order;
 * commands of one queue go in the order they were enqueued. */
static void hold_run(cl_context ctx)
{
  struct fe_held *done = NULL, **done_tail = &done;
  pthread_mutex_lock(&ctx->hold_lock);
  unsigned pass = ++ctx->hold_pass;
  struct fe_held *prev = NULL;
  for (struct fe_held *h = ctx->held, *next; h; h = next) {
    next = h->next;
    int state = READY;
    if (h->after_all ? h->q->hold_pass == pass : h->q->barrier_pass == pass)
      state = WAITING; /* an earlier command it follows is still held */
    for (cl_uint i = 0; i < h->n && state != WAITING; i++) {
      int s = ev_state(h->wait[i], NULL);
      if (s > state)
        state = s;
    }
    if (state == WAITING) {
      h->q->hold_pass = pass;
      if (h->barrier)
        h->q->barrier_pass = pass;
      prev = h;
      continue;
    }
    if (prev)
      prev->next = next;
    else
      ctx->held = next;
    if (ctx->held_tail == h)
      ctx->held_tail = prev;
    h->next = NULL;
    h->status = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    if (state == READY) {
      pi_event small[16], *pis = small;
      if (h->n > 16 && !(pis = malloc(h->n * sizeof *pis)))
        h->status = CL_OUT_OF_HOST_MEMORY;
      else {
        for (cl_uint i = 0; i < h->n; i++)
          pis[i] = h->wait[i]->pi;
        pi_result r = h->cmd->issue(h->cmd, h->q, PI_FALSE, h->n, h->n ? pis : NULL,
                                    h->ev ? &h->pe : NULL);
        h->status = r == PI_SUCCESS ? FE_BY_PI : fe_err(r);
        h->flush = h->status == FE_BY_PI && h->q->held_flush;
        fe_wait_list_free(pis, small);
      }
    }
    if (h->ev) {
      pthread_mutex_lock(&h->ev->lock);
      if (h->status == FE_BY_PI)
        h->ev->pi = h->pe;
      atomic_store_explicit(&h->ev->status, h->status, memory_order_release);
      pthread_mutex_unlock(&h->ev->lock);
    }
    if (h->barrier)
      atomic_fetch_sub(&h->q->held_barriers, 1);
    if (atomic_fetch_sub(&h->q->held, 1) == 1) {
      h->releases = h->q->held_releases;
      h->q->held_releases = 0;
      h->q->held_flush = false;
    }
    *done_tail = h;
    done_tail = &h->next;
  }
  pthread_mutex_unlock(&ctx->hold_lock);

  for (struct fe_held *h = done, *next; h; h = next) {
    next = h->next;
    if (h->status != FE_BY_PI && h->status != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
      fe_context_notify(ctx, "pitrace: a command held back for a user event failed "
                             "when it was issued; its event has the error");
    if (h->ev) {
      pthread_mutex_lock(&h->ev->lock);
      struct fe_event_cb *cbs = h->ev->callbacks;
      h->ev->callbacks = NULL;
      pthread_mutex_unlock(&h->ev->lock);
      if (h->status == FE_BY_PI)
        give_callbacks(h->ev, cbs);
      else
        for (struct fe_event_cb *cb = cbs, *n2; cb; cb = n2) {
          n2 = cb->next;
          run_callback(cb, h->status);
        }
      /* Only now may the application's releases reach PI. */
      pthread_mutex_lock(&h->ev->lock);
      if (--h->ev->held_uses == 0 && h->ev->pi)
        flush_refs(h->ev);
      pthread_mutex_unlock(&h->ev->lock);
      event_unref(h->ev);
    }
    for (cl_uint i = 0; i < h->n; i++) {
      cl_event w = h->wait[i];
      pthread_mutex_lock(&w->lock);
      if (--w->held_uses == 0 && w->pi)
        flush_refs(w);
      pthread_mutex_unlock(&w->lock);
      event_unref(w);
    }
    /* The application's flush came while the command was held: without
     * one now, a command of another queue that waits for it would wait
     * forever on an implementation that runs only flushed commands
     * (rusticl). Once per run of the queue's commands. */
    if (h->flush && !(next && next->q == h->q && next->flush))
      (void)pirt_piQueueFlush(h->q->o.pl, h->q->pi);
    if (h->cmd->drop)
      h->cmd->drop(h->cmd);
    for (; h->releases; h->releases--)
      pirt_piQueueRelease(h->q->o.pl, h->q->pi);
    fe_queue_unref(h->q);
    free(h->cmd);
    free(h->wait);
    free(h);
  }
  if (done)
    wake_all();
}

/* Holds `c` back until the events it waits for allow it to go. */
static cl_int hold(cl_command_queue q, cl_command_type type, cl_uint n, const cl_event *wait,
                   bool blocking, fe_cmd *c, size_t size, cl_event *event)
{
  struct fe_held *h = calloc(1, sizeof *h);
  fe_cmd *copy = malloc(size);
  cl_event *w = n ? malloc(n * sizeof *w) : NULL;
  if (!h || !copy || (n && !w)) {
    free(h);
    free(copy);
    free(w);
    return CL_OUT_OF_HOST_MEMORY;
  }
  memcpy(copy, c, size);
  cl_int err = copy->hold ? copy->hold(copy) : CL_SUCCESS;
  cl_event ev = NULL;
  if (err == CL_SUCCESS && (event || blocking) &&
      !(ev = event_new(q->ctx, q, type, NULL, CL_QUEUED))) {
    if (copy->drop)
      copy->drop(copy);
    err = CL_OUT_OF_HOST_MEMORY;
  }
  if (err != CL_SUCCESS) {
    free(h);
    free(copy);
    free(w);
    return err;
  }
  for (cl_uint i = 0; i < n; i++) {
    w[i] = wait[i];
    fe_ref(w[i]);
    pthread_mutex_lock(&w[i]->lock);
    w[i]->held_uses++;
    pthread_mutex_unlock(&w[i]->lock);
  }
  h->q = q;
  fe_ref(q);
  h->ev = ev;
  if (ev) {
    fe_ref(ev);
    ev->held_uses = 1; /* the record's, until it handed the PI event on */
  }
  h->n = n;
  h->wait = w;
  h->cmd = copy;
  follows(q, type, n, &h->barrier, &h->after_all);

  cl_context ctx = q->ctx;
  pthread_mutex_lock(&ctx->hold_lock);
  if (h->barrier)
    atomic_fetch_add(&q->held_barriers, 1);
  atomic_fetch_add(&q->held, 1);
  if (ctx->held_tail)
    ctx->held_tail->next = h;
  else
    ctx->held = h;
  ctx->held_tail = h;
  pthread_mutex_unlock(&ctx->hold_lock);
  hold_run(ctx); /* the user events may have completed meanwhile */

  if (!blocking) {
    if (event)
      *event = ev;
    return CL_SUCCESS;
  }
  /* A blocking command: wait for it to be issued, then for PI. */
  int s;
  pthread_mutex_lock(&wake_lock);
  while (ev_state(ev, &s) == WAITING)
    pthread_cond_wait(&wake, &wake_lock);
  pthread_mutex_unlock(&wake_lock);
  err = s == FE_BY_PI ? fe_err(pirt_piEventsWait(q->o.pl, 1, &ev->pi)) : s;
  if (event)
    *event = ev;
  else
    event_release(ev);
  return err;
}

/* Issues a command, or holds it back (fe.h). */
cl_int fe_enqueue(cl_command_queue q, cl_command_type type, cl_uint n, const cl_event *wait,
                  bool blocking, fe_cmd *c, size_t size, cl_event *event)
{
  bool barrier, after_all;
  follows(q, type, n, &barrier, &after_all);
  if (n == 0 && !wait && !behind_held(q, after_all)) {
    /* The common case: nothing to wait for. */
    pi_event pe = NULL;
    pi_result r = c->issue(c, q, blocking ? PI_TRUE : PI_FALSE, 0, NULL, event ? &pe : NULL);
    if (r != PI_SUCCESS)
      return fe_err(r);
    return event ? fe_event_out(q, type, pe, event) : CL_SUCCESS;
  }
  pi_event buf[16], *pis;
  int state;
  cl_int err = check_list(q->ctx, n, wait, buf, 16, &pis, &state);
  if (err)
    return err;
  if (state == READY && !behind_held(q, after_all)) {
    pi_event pe = NULL;
    pi_result r = c->issue(c, q, blocking ? PI_TRUE : PI_FALSE, n, pis, event ? &pe : NULL);
    fe_wait_list_free(pis, buf);
    if (r != PI_SUCCESS)
      return fe_err(r);
    return event ? fe_event_out(q, type, pe, event) : CL_SUCCESS;
  }
  fe_wait_list_free(pis, buf);
  if (state == FAILED && blocking)
    return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  return hold(q, type, n, wait, blocking, c, size, event);
}

/* Waits until no command of `q` is held back. */
void fe_hold_drain(cl_command_queue q)
{
  pthread_mutex_lock(&wake_lock);
  while (atomic_load(&q->held))
    pthread_cond_wait(&wake, &wake_lock);
  pthread_mutex_unlock(&wake_lock);
}

/* Defers a queue's piQueueRelease while commands of it are held. */
bool fe_hold_release(cl_command_queue q)
{
  bool later = false;
  pthread_mutex_lock(&q->ctx->hold_lock);
  if (atomic_load(&q->held)) {
    q->held_releases++;
    later = true;
  }
  pthread_mutex_unlock(&q->ctx->hold_lock);
  return later;
}

/* Notes the flush for the commands held back (fe.h). */
void fe_hold_flush(cl_command_queue q)
{
  pthread_mutex_lock(&q->ctx->hold_lock);
  if (atomic_load(&q->held))
    q->held_flush = true;
  pthread_mutex_unlock(&q->ctx->hold_lock);
}

/* ---- User events ------------------------------------------------------------ */

/* piEventCreate; the front end keeps the status (CL_SUBMITTED). */
cl_event CL_API_CALL fe_clCreateUserEvent(cl_context context, cl_int *errcode_ret)
{
  if (!FE_IS(context, FE_CONTEXT))
    FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
  pi_event pe = NULL;
  pi_result r = pirt_piEventCreate(context->o.pl, context->pi, &pe);
  if (r != PI_SUCCESS)
    FE_FAIL(errcode_ret, fe_err(r));
  cl_event e = event_new(context, NULL, CL_COMMAND_USER, pe, CL_SUBMITTED);
  if (!e) {
    pirt_piEventRelease(context->o.pl, pe);
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  }
  if (errcode_ret)
    *errcode_ret = CL_SUCCESS;
  return e;
}

/* Completes (or fails) a user event and issues what it held back. */
cl_int CL_API_CALL fe_clSetUserEventStatus(cl_event event, cl_int execution_status)
{
  FE_CHECK(event, FE_EVENT, CL_INVALID_EVENT);
  if (event->queue || event->type != CL_COMMAND_USER)
    return CL_INVALID_EVENT;
  if (execution_status > CL_COMPLETE)
    return CL_INVALID_VALUE;
  pthread_mutex_lock(&event->lock);
  if (atomic_load(&event->status) != CL_SUBMITTED) {
    pthread_mutex_unlock(&event->lock);
    return CL_INVALID_OPERATION;
  }
  /* PI's user event is complete already; PI_EVENT_COMPLETE is the status PI
   * can set on it (the plugins refuse an error status on one). */
  if (execution_status == CL_COMPLETE) {
    pi_result r = pirt_piEventSetStatus(event->o.pl, event->pi, PI_EVENT_COMPLETE);
    if (r != PI_SUCCESS) {
      pthread_mutex_unlock(&event->lock);
      return fe_err(r);
    }
  }
  atomic_store_explicit(&event->status, execution_status, memory_order_release);
  struct fe_event_cb *cbs = event->callbacks;
  event->callbacks = NULL;
  pthread_mutex_unlock(&event->lock);
  wake_all();
  hold_run(event->ctx);
  for (struct fe_event_cb *cb = cbs, *next; cb; cb = next) {
    next = cb->next;
    run_callback(cb, execution_status == CL_COMPLETE ? cb->type : execution_status);
  }
  return CL_SUCCESS;
}

/* ---- Waiting and queries ---------------------------------------------------- */

/* Waits on the host for held commands and user events, then piEventsWait. */
cl_int CL_API_CALL fe_clWaitForEvents(cl_uint num_events, const cl_event *event_list)
{
  if (num_events == 0 || !event_list)
    return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < num_events; i++)
    FE_CHECK(event_list[i], FE_EVENT, CL_INVALID_EVENT);
  cl_context ctx = event_list[0]->ctx;
  for (cl_uint i = 1; i < num_events; i++)
    if (event_list[i]->ctx != ctx)
      return CL_INVALID_CONTEXT;
  pi_event small[16], *pis = small;
  if (num_events > 16 && !(pis = malloc(num_events * sizeof *pis)))
    return CL_OUT_OF_HOST_MEMORY;
  /* Held commands and user events first, on the host; then PI waits for
   * every event that has a PI event (user events' are complete). */
  bool failed = false;
  pi_uint32 n = 0;
  for (cl_uint i = 0; i < num_events; i++) {
    cl_event e = event_list[i];
    wait_ready(e);
    int s;
    ev_state(e, &s);
    failed |= s < 0;
    if (s == FE_BY_PI || (s <= CL_COMPLETE && !e->queue))
      pis[n++] = e->pi;
  }
  pi_result r = n ? pirt_piEventsWait(ctx->o.pl, n, pis) : PI_SUCCESS;
  fe_wait_list_free(pis, small);
  if (r != PI_SUCCESS)
    return fe_err(r);
  return failed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS;
}

static pi_result event_getter(const void *obj, uint32_t q, size_t n, void *v, size_t *r)
{
  const struct _cl_event *e = obj;
  return pirt_piEventGetInfo(e->o.pl, e->pi, q, n, v, r);
}

/* Queue, context and type from the wrapper; status and count from PI unless
 * the front end keeps them. */
cl_int CL_API_CALL fe_clGetEventInfo(cl_event event, cl_event_info param, size_t size,
                                     void *value, size_t *size_ret)
{
  FE_CHECK(event, FE_EVENT, CL_INVALID_EVENT);
  switch (param) {
  case CL_EVENT_COMMAND_QUEUE:
    return FE_PUT_VAL(size, value, size_ret, event->queue);
  case CL_EVENT_CONTEXT:
    return FE_PUT_VAL(size, value, size_ret, event->ctx);
  case CL_EVENT_COMMAND_TYPE:
    return FE_PUT_VAL(size, value, size_ret, event->type);
  case CL_EVENT_COMMAND_EXECUTION_STATUS: {
    cl_int s = atomic_load_explicit(&event->status, memory_order_acquire);
    if (s != FE_BY_PI)
      return FE_PUT_VAL(size, value, size_ret, s);
    break;
  }
  case CL_EVENT_REFERENCE_COUNT: {
    /* PI's count, with the retains and releases PI is still owed. */
    pthread_mutex_lock(&event->lock);
    int owed = event->held_refs;
    bool issued = event->pi != NULL;
    pthread_mutex_unlock(&event->lock);
    cl_uint refs = (cl_uint)(1 + owed);
    if (issued) {
      pi_uint32 pi_refs = 0;
      pi_result r = pirt_piEventGetInfo(event->o.pl, event->pi, PI_EVENT_INFO_REFERENCE_COUNT,
                                        sizeof pi_refs, &pi_refs, NULL);
      if (r != PI_SUCCESS)
        return fe_err(r);
      refs = (cl_uint)((int)pi_refs + owed);
    }
    return FE_PUT_VAL(size, value, size_ret, refs);
  }
  default:
    return CL_INVALID_VALUE;
  }
  return fe_pi_info("pi_event_info", event_getter, event, param, size, value, size_ret);
}

/* piEventGetProfilingInfo, after the OpenCL availability rules. */
cl_int CL_API_CALL fe_clGetEventProfilingInfo(cl_event event, cl_profiling_info param,
                                              size_t size, void *value, size_t *size_ret)
{
  FE_CHECK(event, FE_EVENT, CL_INVALID_EVENT);
  if (param < CL_PROFILING_COMMAND_QUEUED || param > CL_PROFILING_COMMAND_COMPLETE)
    return CL_INVALID_VALUE;
  if (!event->queue || !(event->queue->props & CL_QUEUE_PROFILING_ENABLE) ||
      atomic_load_explicit(&event->status, memory_order_acquire) != FE_BY_PI)
    return CL_PROFILING_INFO_NOT_AVAILABLE;
  /* No command has child commands (no device-side enqueue): a command is
   * complete when it ends. */
  pi_profiling_info q = param == CL_PROFILING_COMMAND_COMPLETE ? PI_PROFILING_INFO_COMMAND_END
                                                               : (pi_profiling_info)param;
  return fe_err(pirt_piEventGetProfilingInfo(event->o.pl, event->pi, q, size, value, size_ret));
}

/* piEventSetCallback through a trampoline that hands over the wrapper; kept
 * until a held command is issued or a user event is set. */
cl_int CL_API_CALL fe_clSetEventCallback(cl_event event, cl_int type,
                                         void(CL_CALLBACK *fn)(cl_event, cl_int, void *),
                                         void *user_data)
{
  FE_CHECK(event, FE_EVENT, CL_INVALID_EVENT);
  if (!fn || (type != CL_SUBMITTED && type != CL_RUNNING && type != CL_COMPLETE))
    return CL_INVALID_VALUE;
  struct fe_event_cb *cb = malloc(sizeof *cb);
  if (!cb)
    return CL_OUT_OF_HOST_MEMORY;
  *cb = (struct fe_event_cb){fn, user_data, type, event, NULL};
  fe_ref(event); /* until the callback ran */
  pthread_mutex_lock(&event->lock);
  int s = atomic_load(&event->status);
  if (s != FE_BY_PI) {
    /* A user event reaches CL_SUBMITTED at creation, then its final status;
     * a held command's callbacks go to PI when it is issued. */
    bool later = event->queue ? s == CL_QUEUED : s == CL_SUBMITTED && type != CL_SUBMITTED;
    if (later) {
      cb->next = event->callbacks;
      event->callbacks = cb;
    }
    pthread_mutex_unlock(&event->lock);
    if (!later)
      run_callback(cb, s < 0 ? s : type);
    return CL_SUCCESS;
  }
  pthread_mutex_unlock(&event->lock);
  pi_result r = pirt_piEventSetCallback(event->o.pl, event->pi, type, pi_callback, cb);
  if (r != PI_SUCCESS) {
    free(cb);
    event_unref(event);
  }
  return fe_err(r);
}

/* piEventRetain (deferred while PI must not see it yet), and a wrapper reference. */
cl_int CL_API_CALL fe_clRetainEvent(cl_event event)
{
  FE_CHECK(event, FE_EVENT, CL_INVALID_EVENT);
  cl_int err = pi_ref(event, +1);
  if (err == CL_SUCCESS)
    fe_ref(event);
  return err;
}

/* piEventRelease (likewise), and the wrapper reference. */
cl_int CL_API_CALL fe_clReleaseEvent(cl_event event)
{
  FE_CHECK(event, FE_EVENT, CL_INVALID_EVENT);
  cl_int err = pi_ref(event, -1);
  if (err == CL_SUCCESS)
    event_unref(event);
  return err;
}
