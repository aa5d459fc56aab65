/*
 * shim_internal.h: the recording shim's own pieces, on top of the
 * recorder's (session/include/recorder.h: instances, rings, records, the
 * writer): writing records into the calling thread's ring, and the
 * wrappers' begin/end of a recorded call (shim_gen.h).
 */
#ifndef SHIM_INTERNAL_H
#define SHIM_INTERNAL_H

#include "recorder.h"

#define PIRT_LIKELY(x) __builtin_expect(!!(x), 1)

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
} shim_call;

/* Records the entry; false when the call is not recorded (recording off,
 * or filtered out): the wrapper then just calls through. */
bool shim_begin(shim_call *c, shim_instance *inst, pi_api_id id, const uint64_t *argv);
/* Records the exit: result, out-values, data written. */
void shim_end(shim_call *c, pi_result r);

#endif /* SHIM_INTERNAL_H */
