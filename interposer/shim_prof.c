#define _GNU_SOURCE
/*
 * shim_prof.c: device times of device commands (kernel launches and
 * transfers: pi.api's `device_command` flag), with SYCL_PI_RECORD_PROFILE=1
 * (`pitrace record --profile`).
 *
 * - Every queue the application creates gets PI_QUEUE_FLAG_PROFILING_ENABLE
 *   (the recorded argument stays the application's own flags; a plugin that
 *   refuses the flag gets the application's call again, unchanged). The
 *   application still sees the queue as it asked for it: PI_QUEUE_INFO_
 *   PROPERTIES without the flag, and piEventGetProfilingInfo on its events
 *   answers PI_ERROR_PROFILING_INFO_NOT_AVAILABLE, as without the shim.
 * - The event of each device command is kept: retained when the
 *   application asked for it, made by the shim (and released by it) when
 *   the application passed NULL.
 * - When the application itself synchronises (piQueueFinish, piEventsWait,
 *   a blocking command, piEventGetInfo saying complete, piEventRelease) and
 *   at teardown, every kept event is asked its status; those complete give
 *   PI_PROFILING_INFO_COMMAND_START/END, the others are asked again at the
 *   next synchronisation. Nothing waits.
 * - Each queue's device clock is sampled with piGetDeviceAndHostTimer at
 *   the queue's creation and again at teardown; the device times are mapped
 *   to the host's monotonic clock (the session's) with those samples.
 *
 * - With SYCL_PI_TRACE as well, each time also goes to the trace as one
 *   line (shim_devtime_sink): "piEnqueueKernelLaunch (call 57, kernel
 *   matmul_tiled) 24.4 us on queue#1"; without SYCL_PI_RECORD the runtime
 *   binds the shim for that alone (shim_trace_only): no session, and the
 *   call number counts the PI calls from 1 as a session's seq would.
 *
 * Every call made here goes to the plugin's own table, never through the
 * recording wrappers: none of them is an application call in the session.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

bool shim_profiling;
void (*shim_devtime_sink)(const char *line);
bool shim_trace_only;

/* Queues created while profiling. */
typedef struct prof_queue {
  pi_queue queue;
  pi_device device;
  shim_instance *inst;
  bool added; /* the application did not ask for profiling */
} prof_queue;

/* Device clocks: the first sample. */
typedef struct prof_clock {
  pi_device device;
  shim_instance *inst;
  bool ok;
  uint64_t dev0, host0;
} prof_clock;

/* Kept events. */
typedef struct prof_event {
  pi_event event;
  pi_queue queue;
  pi_device device;
  shim_instance *inst;
  uint64_t ticket; /* the entry record's (recording) */
  bool own;
  /* For the trace's line (shim_devtime_sink). */
  pi_api_id api;
  uint64_t number;       /* the Nth PI call of the process */
  unsigned queue_number; /* queue#N: the queues in the order they were made */
  char kernel[64];       /* a launch's kernel name */
} prof_event;

#define MAX_QUEUES 1024
#define MAX_CLOCKS 64
#define MAX_KEPT 65536

static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER;
static prof_queue queues[MAX_QUEUES];
static unsigned nqueues;
static prof_clock clocks[MAX_CLOCKS];
static unsigned nclocks;
static prof_event *kept;
static unsigned nkept, capkept;
static _Atomic unsigned nkept_hint;

static prof_queue *find_queue(pi_queue q)
{
  for (unsigned i = 0; i < nqueues; i++)
    if (queues[i].queue == q)
      return &queues[i];
  return NULL;
}

static prof_clock *find_clock(pi_device d, shim_instance *inst)
{
  for (unsigned i = 0; i < nclocks; i++)
    if (clocks[i].device == d && clocks[i].inst == inst)
      return &clocks[i];
  return NULL;
}

/* Device time and the shim's monotonic clock at the same moment (the
 * middle of the call: the plugin's host time is in a clock of its own). */
static bool sample_clock(shim_instance *inst, pi_device d, uint64_t *dev, uint64_t *host)
{
  if (!inst->target.piGetDeviceAndHostTimer)
    return false;
  uint64_t h = 0, t0 = shim_now();
  if (inst->target.piGetDeviceAndHostTimer(d, dev, &h) != PI_SUCCESS)
    return false;
  uint64_t t1 = shim_now();
  *host = t0 + (t1 - t0) / 2;
  return true;
}

/* The trace's line for one command. */
static void trace_time(const prof_event *e, uint64_t start, uint64_t end, bool lost)
{
  char line[256];
  int n = snprintf(line, sizeof line, "%s (call %llu%s%s) ", pi_api_table[e->api].name,
                   (unsigned long long)e->number, e->kernel[0] ? ", kernel " : "", e->kernel);
  if (n < 0 || (size_t)n >= sizeof line)
    return;
  if (lost)
    snprintf(line + n, sizeof line - (size_t)n, "not known (the device gave no times, or the "
             "command had not completed by teardown) on queue#%u", e->queue_number);
  else
    snprintf(line + n, sizeof line - (size_t)n, "%.1f us on queue#%u",
             (double)(end - start) / 1000.0, e->queue_number);
  shim_devtime_sink(line);
}

static void emit_time(const prof_event *e, uint64_t start, uint64_t end, bool lost)
{
  if (shim_devtime_sink && e->event)
    trace_time(e, start, end, lost);
  if (shim_trace_only)
    return;
  rec_devtime *r = shim_reserve(sizeof *r);
  if (!r)
    return;
  r->h.type = REC_DEVTIME;
  r->call_ticket = e->ticket;
  r->device = (uint64_t)(uintptr_t)e->device;
  r->start = start;
  r->end = end;
  r->host_start = r->host_end = 0;
  r->mapped = 0;
  r->lost = lost;
  if (!lost) {
    pthread_mutex_lock(&prof_lock);
    const prof_clock *c = find_clock(e->device, e->inst);
    if (c && c->ok) {
      r->host_start = c->host0 + (start - c->dev0);
      r->host_end = c->host0 + (end - c->dev0);
      r->mapped = 1;
    }
    pthread_mutex_unlock(&prof_lock);
  }
  shim_commit(r);
}

static void give_up(const prof_event *e)
{
  e->inst->target.piEventRelease(e->event);
}

/* Reads the times of one kept event if it is complete; true when it is
 * done with (times sent, or lost). A command of a queue the application
 * has just finished is complete (piQueueFinish returns when every command
 * enqueued before it is), whatever its event says: rusticl 22.3 may still
 * say "submitted" then, and would say so until teardown. */
static bool try_event(const prof_event *e, bool teardown, pi_queue finished)
{
  const struct pi_function_table *t = &e->inst->target;
  pi_int32 status = PI_EVENT_COMPLETE;
  pi_result r = PI_SUCCESS;
  if (!finished || e->queue != finished)
    r = t->piEventGetInfo(e->event, PI_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof status,
                          &status, NULL);
  if (r == PI_SUCCESS && status == PI_EVENT_COMPLETE) {
    uint64_t start = 0, end = 0;
    pi_result rs = t->piEventGetProfilingInfo(e->event, PI_PROFILING_INFO_COMMAND_START,
                                              sizeof start, &start, NULL);
    pi_result re = t->piEventGetProfilingInfo(e->event, PI_PROFILING_INFO_COMMAND_END,
                                              sizeof end, &end, NULL);
    bool ok = rs == PI_SUCCESS && re == PI_SUCCESS && end >= start;
    emit_time(e, start, end, !ok);
    give_up(e);
    return true;
  }
  if (r != PI_SUCCESS || status < 0 || teardown) {
    emit_time(e, 0, 0, true);
    give_up(e);
    return true;
  }
  return false;
}

void shim_prof_sweep(bool teardown, pi_queue finished)
{
  if (!shim_profiling)
    return;
  if (atomic_load_explicit(&nkept_hint, memory_order_relaxed)) {
    /* Take the list out, so that no lock is held across plugin calls. */
    pthread_mutex_lock(&prof_lock);
    prof_event *mine = kept;
    unsigned n = nkept;
    kept = NULL;
    nkept = capkept = 0;
    atomic_store(&nkept_hint, 0);
    pthread_mutex_unlock(&prof_lock);
    unsigned w = 0;
    for (unsigned i = 0; i < n; i++)
      if (!try_event(&mine[i], teardown, finished))
        mine[w++] = mine[i];
    /* Put back what is still running, before what came meanwhile. */
    pthread_mutex_lock(&prof_lock);
    if (w && nkept + w <= MAX_KEPT) {
      prof_event *v = realloc(mine, (size_t)(w + nkept) * sizeof *v);
      if (v) {
        if (nkept)
          memcpy(v + w, kept, nkept * sizeof *v);
        free(kept);
        kept = v;
        nkept += w;
        capkept = nkept;
        mine = NULL;
        w = 0;
      }
    }
    atomic_store(&nkept_hint, nkept);
    pthread_mutex_unlock(&prof_lock);
    for (unsigned i = 0; i < w; i++) { /* no room: given up */
      emit_time(&mine[i], 0, 0, true);
      give_up(&mine[i]);
    }
    free(mine);
  }
  if (teardown && !shim_trace_only) {
    pthread_mutex_lock(&prof_lock);
    unsigned n = nclocks;
    prof_clock copy[MAX_CLOCKS];
    memcpy(copy, clocks, n * sizeof *copy);
    pthread_mutex_unlock(&prof_lock);
    for (unsigned i = 0; i < n; i++) {
      uint64_t dev1, host1;
      if (!copy[i].ok || !sample_clock(copy[i].inst, copy[i].device, &dev1, &host1))
        continue;
      rec_devclock *r = shim_reserve(sizeof *r);
      if (!r)
        continue;
      r->h.type = REC_DEVCLOCK;
      r->device = (uint64_t)(uintptr_t)copy[i].device;
      r->dev0 = copy[i].dev0;
      r->host0 = copy[i].host0;
      r->dev1 = dev1;
      r->host1 = host1;
      shim_commit(r);
    }
  }
}

static void keep(const prof_event *e)
{
  bool full = false;
  pthread_mutex_lock(&prof_lock);
  if (nkept == capkept && capkept < MAX_KEPT) {
    unsigned cap = capkept ? capkept * 2 : 256;
    prof_event *v = realloc(kept, cap * sizeof *v);
    if (v) {
      kept = v;
      capkept = cap;
    }
  }
  if (nkept < capkept)
    kept[nkept++] = *e;
  else
    full = true;
  atomic_store(&nkept_hint, nkept);
  pthread_mutex_unlock(&prof_lock);
  if (full) { /* the application never synchronises: look now, else give it up */
    shim_prof_sweep(false, NULL);
    pthread_mutex_lock(&prof_lock);
    full = nkept >= capkept;
    if (!full) {
      kept[nkept++] = *e;
      atomic_store(&nkept_hint, nkept);
    }
    pthread_mutex_unlock(&prof_lock);
    if (full) {
      emit_time(e, 0, 0, true);
      give_up(e);
    }
  }
}

bool shim_prof_wants(pi_api_id id, const uint64_t *argv)
{
  if (!(pi_api_table[id].flags & PI_API_F_DEVICE_COMMAND))
    return false;
  pthread_mutex_lock(&prof_lock);
  bool known = find_queue((pi_queue)(uintptr_t)argv[0]) != NULL;
  pthread_mutex_unlock(&prof_lock);
  return known;
}

/* The queue of an event, as the plugin says. */
static pi_queue queue_of_event(shim_instance *inst, pi_event ev)
{
  pi_queue q = NULL;
  if (!ev || !inst->target.piEventGetInfo ||
      inst->target.piEventGetInfo(ev, PI_EVENT_INFO_COMMAND_QUEUE, sizeof q, &q, NULL) !=
          PI_SUCCESS)
    return NULL;
  return q;
}

bool shim_prof_before(shim_prof *p, const shim_call *c, shim_instance *inst, pi_api_id id,
                      uint64_t *pass, pi_result *r)
{
  p->added_flag = p->own_event = p->track = false;
  p->event = NULL;
  if (!atomic_load_explicit(&shim_recording, memory_order_relaxed) && !shim_trace_only)
    return false;
  switch (id) {
  case PI_API_piQueueCreate:
    if (!(pass[2] & PI_QUEUE_FLAG_PROFILING_ENABLE)) {
      pass[2] |= PI_QUEUE_FLAG_PROFILING_ENABLE;
      p->added_flag = true;
    }
    return false;
  case PI_API_piextQueueCreate: {
    const pi_queue_properties *in = (const pi_queue_properties *)(uintptr_t)pass[2];
    unsigned n = 0, flags_at = 0;
    bool has_flags = false;
    for (; in && in[n] && n + 2 < 32; n += 2) {
      p->props[n] = in[n];
      p->props[n + 1] = in[n + 1];
      if (in[n] == PI_QUEUE_FLAGS) {
        has_flags = true;
        flags_at = n + 1;
      }
    }
    if (in && in[n]) /* longer than the shim's copy: left as it is */
      return false;
    if (has_flags && (p->props[flags_at] & PI_QUEUE_FLAG_PROFILING_ENABLE))
      return false;
    if (has_flags) {
      p->props[flags_at] |= PI_QUEUE_FLAG_PROFILING_ENABLE;
    } else {
      p->props[n++] = PI_QUEUE_FLAGS;
      p->props[n++] = PI_QUEUE_FLAG_PROFILING_ENABLE;
    }
    p->props[n] = 0;
    pass[2] = (uint64_t)(uintptr_t)p->props;
    p->added_flag = true;
    return false;
  }
  case PI_API_piEventGetProfilingInfo: {
    /* On an event of a queue that has profiling only for the shim, the
     * answer the application would have had. */
    pi_event ev = (pi_event)(uintptr_t)pass[0];
    pi_queue q = NULL;
    pthread_mutex_lock(&prof_lock);
    for (unsigned i = 0; i < nkept && !q; i++)
      if (kept[i].event == ev)
        q = kept[i].queue;
    pthread_mutex_unlock(&prof_lock);
    if (!q)
      q = queue_of_event(inst, ev);
    pthread_mutex_lock(&prof_lock);
    const prof_queue *pq = q ? find_queue(q) : NULL;
    bool hide = pq && pq->added;
    pthread_mutex_unlock(&prof_lock);
    if (hide) {
      *r = PI_ERROR_PROFILING_INFO_NOT_AVAILABLE;
      return true;
    }
    return false;
  }
  default:
    break;
  }
  if (c && c->devtime) {
    int ei = pi_api_table[id].event;
    p->track = true;
    p->ticket = c->ticket;
    p->number = c->number;
    if (ei >= 0 && !pass[ei]) {
      pass[ei] = (uint64_t)(uintptr_t)&p->event;
      p->own_event = true;
    }
  }
  return false;
}

static void add_queue(shim_instance *inst, pi_queue q, pi_device d, bool added)
{
  pthread_mutex_lock(&prof_lock);
  prof_queue *pq = find_queue(q);
  if (!pq && nqueues < MAX_QUEUES)
    pq = &queues[nqueues++];
  if (pq)
    *pq = (prof_queue){q, d, inst, added};
  bool sample = !shim_trace_only && !find_clock(d, inst) && nclocks < MAX_CLOCKS;
  if (sample)
    clocks[nclocks++] = (prof_clock){d, inst, false, 0, 0};
  pthread_mutex_unlock(&prof_lock);
  if (sample) {
    uint64_t dev0 = 0, host0 = 0;
    bool ok = sample_clock(inst, d, &dev0, &host0);
    pthread_mutex_lock(&prof_lock);
    prof_clock *c = find_clock(d, inst);
    if (c)
      *c = (prof_clock){d, inst, ok, dev0, host0};
    pthread_mutex_unlock(&prof_lock);
  }
}

/* A kernel's function name for the trace's line: cut to fit, with "..."
 * (SYCL's mangled names are long); "" when the plugin does not say. */
static void kernel_name(const struct pi_function_table *t, pi_kernel k, char *out, size_t n)
{
  out[0] = 0;
  if (t->piKernelGetInfo(k, PI_KERNEL_INFO_FUNCTION_NAME, n, out, NULL) == PI_SUCCESS)
    return;
  size_t size = 0;
  char *whole = NULL;
  if (t->piKernelGetInfo(k, PI_KERNEL_INFO_FUNCTION_NAME, 0, NULL, &size) == PI_SUCCESS &&
      size > n && (whole = malloc(size)) &&
      t->piKernelGetInfo(k, PI_KERNEL_INFO_FUNCTION_NAME, size, whole, NULL) == PI_SUCCESS)
    snprintf(out, n, "%.*s...", (int)(n - 4), whole);
  else
    out[0] = 0;
  free(whole);
}

void shim_prof_after(shim_prof *p, shim_instance *inst, pi_api_id id, const uint64_t *argv,
                     const uint64_t *pass, pi_result *r)
{
  const struct pi_function_table *t = &inst->target;
  switch (id) {
  case PI_API_piQueueCreate:
  case PI_API_piextQueueCreate: {
    if (p->added_flag && *r != PI_SUCCESS) {
      /* The plugin refused profiling: the application's own call, as it
       * made it (its queue is not timed). */
      *r = id == PI_API_piQueueCreate
               ? t->piQueueCreate((pi_context)(uintptr_t)argv[0], (pi_device)(uintptr_t)argv[1],
                                  (pi_queue_properties)argv[2], (pi_queue *)(uintptr_t)argv[3])
               : t->piextQueueCreate((pi_context)(uintptr_t)argv[0],
                                     (pi_device)(uintptr_t)argv[1],
                                     (pi_queue_properties *)(uintptr_t)argv[2],
                                     (pi_queue *)(uintptr_t)argv[3]);
      return;
    }
    if (*r == PI_SUCCESS && argv[3] && (atomic_load(&shim_recording) || shim_trace_only))
      add_queue(inst, *(pi_queue *)(uintptr_t)argv[3], (pi_device)(uintptr_t)argv[1],
                p->added_flag);
    return;
  }
  case PI_API_piQueueGetInfo:
    /* The queue's properties as the application asked for them. */
    if (*r == PI_SUCCESS && argv[1] == PI_QUEUE_INFO_PROPERTIES && argv[3] &&
        argv[2] >= sizeof(pi_queue_properties)) {
      pthread_mutex_lock(&prof_lock);
      const prof_queue *pq = find_queue((pi_queue)(uintptr_t)argv[0]);
      bool added = pq && pq->added;
      pthread_mutex_unlock(&prof_lock);
      if (added)
        *(pi_queue_properties *)(uintptr_t)argv[3] &= ~(pi_queue_properties)
            PI_QUEUE_FLAG_PROFILING_ENABLE;
    }
    return;
  default:
    break;
  }
  if (!p->track)
    return;
  int ei = pi_api_table[id].event;
  pi_event ev = NULL;
  if (*r == PI_SUCCESS && ei >= 0 && pass[ei])
    ev = *(pi_event *)(uintptr_t)pass[ei];
  pthread_mutex_lock(&prof_lock);
  const prof_queue *pq = find_queue((pi_queue)(uintptr_t)argv[0]);
  pi_device d = pq ? pq->device : NULL;
  unsigned qn = pq ? (unsigned)(pq - queues) + 1 : 0;
  pthread_mutex_unlock(&prof_lock);
  prof_event e = {ev, (pi_queue)(uintptr_t)argv[0], d, inst, p->ticket, p->own_event, id,
                  p->number, qn, ""};
  if (shim_devtime_sink && (pi_api_table[id].flags & PI_API_F_LAUNCH) && ev)
    kernel_name(t, (pi_kernel)(uintptr_t)argv[1], e.kernel, sizeof e.kernel);
  if (!ev) { /* failed: no times will come */
    emit_time(&e, 0, 0, true);
    return;
  }
  if (!p->own_event && t->piEventRetain(ev) != PI_SUCCESS) {
    emit_time(&e, 0, 0, true);
    return;
  }
  keep(&e);
}

void shim_prof_fork_lock(void) { pthread_mutex_lock(&prof_lock); }
void shim_prof_fork_unlock(void) { pthread_mutex_unlock(&prof_lock); }

/* In a child that records a session of its own: the device times of the
 * parent's calls are not its to give. */
void shim_prof_fork_child(void)
{
  nkept = 0;
  atomic_store(&nkept_hint, 0);
}

/* A new session in this process (shim.c, begin_again): the last one's
 * queues and clocks are gone with its runtime. */
void shim_prof_forget(void)
{
  pthread_mutex_lock(&prof_lock);
  nqueues = nclocks = 0;
  nkept = 0;
  atomic_store(&nkept_hint, 0);
  pthread_mutex_unlock(&prof_lock);
}
