/*
 * shim_internal.h: the recording shim's own pieces, on top of the
 * recorder's (session/include/recorder.h: instances, rings, records, the
 * writer): writing records into the calling thread's ring, and the
 * wrappers' begin/end of a recorded call (shim_gen.h).
 */
#ifndef SHIM_INTERNAL_H
#define SHIM_INTERNAL_H

#include <string.h>

#include "recorder.h"

#define PIRT_LIKELY(x) __builtin_expect(!!(x), 1)
#define PIRT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Writes a record into the calling thread's ring; returns NULL when
 * recording is off. shim_commit publishes it. */
void *shim_reserve(size_t size);
void shim_commit(void *rec);
shim_ring *shim_thread_ring(void);

/* A wrapped call in progress (shim_gen.h's wrappers hold one). */
typedef struct shim_call {
  const pi_api_desc *api;
  const uint64_t *argv;
  uint64_t ticket; /* the entry record's */
  bool devtime;    /* the shim collects this device command's device times */
  /* An info query's answer size, where the application passed no
   * param_value_size_ret and the wrapper asked for it (else NULL). */
  const size_t *written;
  bool trace_only; /* device times for the trace, nothing recorded */
  bool filtered;   /* left out by SYCL_PI_RECORD_FILTER (trace_only too) */
  uint64_t number;  /* with device times traced: the Nth PI call of the process */
  uint64_t reads_before; /* deferred reads the shim held as the call began (shim.c) */
} shim_call;

/* Records the entry; false when the call is not recorded (recording off,
 * or filtered out): the wrapper then just calls through. */
bool shim_begin(shim_call *c, shim_instance *inst, pi_api_id id, const uint64_t *argv);
/* Records the exit: result, out-values, data written. */
void shim_end(shim_call *c, pi_result r);
/* A call that sets a callback (`sets_callback`), recorded: what the plugin
 * gets in `pass` (argv's copy) may be a callback of the shim's that does
 * what it must first, then calls the application's; returns what
 * shim_callback_passed frees when the call failed (NULL: nothing). */
void *shim_callback_pass(const shim_instance *inst, pi_api_id id, uint64_t *pass);
void shim_callback_passed(void *wrap, pi_result r);

/* ---- Device times (shim_prof.c), with SYCL_PI_RECORD_PROFILE=1 ----------------
 * Queues get PI_QUEUE_FLAG_PROFILING_ENABLE; the event of each device
 * command is kept (one is made when the application passed none) and its
 * start and end are read once the application's own synchronisation
 * (a wait, a finish, a blocking command, a status query that said
 * complete, a release, teardown) finds it complete. The shim's own calls
 * go to the plugin's table, never through the recording wrappers. */
extern bool shim_profiling;
/* Device times go to the runtime's trace (SYCL_PI_TRACE with
 * SYCL_PI_RECORD_PROFILE=1): each as one line, "piXxx (call N[, kernel K])
 * 24.4 us on queue#Q", handed to this function (NULL: not traced). */
extern void (*shim_devtime_sink)(const char *line);
/* The shim wraps the plugins for device times only: no session. */
extern bool shim_trace_only;

/* What the shim changed in a call's arguments, for after it. */
typedef struct shim_prof {
  bool added_flag;       /* the shim added PI_QUEUE_FLAG_PROFILING_ENABLE */
  bool own_event;        /* the shim passed its own event pointer */
  bool track;            /* a device command whose event is kept */
  uint64_t ticket;       /* its entry record's */
  uint64_t number;       /* the call's number, for the trace */
  pi_event event;        /* the shim's own event */
  pi_queue_properties props[34]; /* piextQueueCreate's list, with the flag */
} shim_prof;

/* Changes `pass` (what the plugin gets); true when the call must not be
 * made and *r is its result. `c` is NULL when the call is not recorded. */
bool shim_prof_before(shim_prof *p, const shim_call *c, shim_instance *inst, pi_api_id id,
                      uint64_t *pass, pi_result *r);
/* After the plugin's call: keeps events, registers queues, hides what the
 * shim added from the application's view. */
void shim_prof_after(shim_prof *p, shim_instance *inst, pi_api_id id, const uint64_t *argv,
                     const uint64_t *pass, pi_result *r);
/* Whether the device command about to be recorded will be timed. */
bool shim_prof_wants(pi_api_id id, const uint64_t *argv);
/* The application synchronised: reads the times of every kept event that
 * is complete (never waiting). `finished`: the queue a piQueueFinish just
 * finished, whose commands are complete whatever their events say.
 * `teardown`: the plugins are about to go; every event is given up and the
 * clocks are sampled a second time. */
void shim_prof_sweep(bool teardown, pi_queue finished);
/* Its lock held across a fork; in a child that records, the parent's
 * commands forgotten. */
void shim_prof_fork_lock(void);
void shim_prof_fork_unlock(void);
void shim_prof_fork_child(void);
void shim_prof_forget(void);

#endif /* SHIM_INTERNAL_H */
