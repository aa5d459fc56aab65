/*
 * rpx.h: the replay engine's internals (docs/replay.md). The verb (replay.c)
 * picks a device and a plugin table; the engine re-issues recorded calls
 * through it: rp_build.c turns a recorded call into packed arguments,
 * rp_check.c compares what the call did with the recording, rp_sched.c
 * runs the recorded threads, rp_report.c keeps notes, the first
 * divergence and the progress line.
 */
#ifndef PITRACE_RPX_H
#define PITRACE_RPX_H

#include <pthread.h>
#include <stdatomic.h>

#include "rp.h"

/* What the verb was asked. */
typedef struct rp_opts {
  const char *path;
  int64_t session;     /* -1: the default one */
  const char *backend; /* --backend, or NULL */
  const char *device;  /* --device FILTER, or NULL */
  const char *plugin;  /* --plugin PATH (benchmarks), or NULL */
  int64_t to_seq;      /* --to, or -1 */
  double tolerance;    /* --tolerance, or < 0 for bitwise */
  bool f64;            /* --f64: tolerance applies to doubles */
  bool stats;          /* --stats */
  uint64_t t0;         /* when the verb started (monotonic ns) */
} rp_opts;

/* Recorded ids to live values: handles, USM allocations, mapped pointers
 * (one id space: docs/schema.md). Ids are small and dense, so an array. */
typedef struct rp_ids {
  uint64_t *v;
  size_t cap;
} rp_ids;

/* Recorded native handles to the live ones their calls returned now. */
typedef struct rp_natives {
  uint64_t (*v)[2];
  size_t n, cap;
} rp_natives;

/* A non-blocking read whose data is checked when the recording captured it
 * (captured_seq) or at the end. */
typedef struct rp_pending {
  const pt_call *call;
  unsigned position;
  int64_t due;        /* check once this seq is done (-1: at the end) */
  uint64_t event;     /* a live event to wait for before the check */
  bool own_event;     /* replay added it (else retained): release it after */
  unsigned char *buf; /* what the call wrote */
  const unsigned char *want; /* what the recording says */
  size_t size;
  char *text;         /* the call as replayed, for a report */
} rp_pending;

typedef struct rp_notice {
  int64_t seq;
  char *text;
} rp_notice;

enum { RP_OK = 0, RP_DIVERGED = 1, RP_FAILED = 2 };

typedef struct rp_engine {
  rp_session *s;
  const rp_opts *o;
  const struct pi_function_table *t;
  uint64_t live_platform, live_device;
  bool stand_ins;  /* --plugin: ids never created stand for themselves */
  bool other_device; /* replayed on another device than the recorded one */
  /* Buffers made without data are made holding RP_FILL_BYTE (rp.h): not
   * into a plugin (--plugin: a replay plugin checks the calls as recorded)
   * nor when this replay is recorded (SYCL_PI_RECORD: its session is
   * compared with the recording call for call, `pitrace diff`). */
  bool fills;
  /* The name of the platform of the device replayed on ("" when not
   * known), for refusing program binaries another platform made when
   * recorded (rp_build). */
  char live_platform_name[256];
  bool mt;         /* several threads replay: take the lock */
  bool abandoned;  /* a replay thread was left in a call that never returned */
  pthread_mutex_t lock;
  rp_ids ids;
  rp_natives natives;
  /* Outcome: the first divergence (by seq) or the reason replay stopped. */
  int status;
  int64_t stop_seq;
  char *report;
  _Atomic bool stop;
  rp_notice *notes;
  size_t nnotes, cap_notes;
  rp_pending *pending;
  size_t npending, cap_pending;
  unsigned char *ran; /* per call of s->calls: issued to the plugin (or NULL) */
  pt_note *rec_notes;    /* the runtime's recorded notes, re-emitted */
  size_t nrec_notes;
  void **kept; /* memory the device may still use, freed at the end */
  size_t nkept, cap_kept;
  _Atomic uint64_t done, verified;
  uint64_t total;
  bool tty;                       /* stderr is a terminal: show progress */
  uint64_t progress_t0;
  _Atomic uint64_t progress_last; /* when the progress line was last drawn */
} rp_engine;

/* ---- One call --------------------------------------------------------------- */

#define RP_CC_HEAP 16

/* A call being replayed: its packed arguments and the memory behind them. */
typedef struct rp_cc {
  const pt_call *c;
  const pi_api_desc *api;
  uint64_t argv[PI_MAX_PARAMS];
  uint64_t slot[PI_MAX_PARAMS]; /* out scalars and handles, USM references */
  unsigned char *want[PI_MAX_PARAMS]; /* recorded data a parameter received */
  size_t want_size[PI_MAX_PARAMS];
  int own_event;                      /* event parameter replay added, or -1 */
  void *heap_inline[RP_CC_HEAP];
  void **heap;
  size_t nheap, cap_heap;
  char err[1024];
} rp_cc;

void rp_cc_init(rp_cc *cc, const pt_call *c, const pi_api_desc *api);
/* Frees the call's memory, or hands it to the engine (keep) when the device
 * may still read it (non-blocking writes, USE_HOST_PTR buffers). */
void rp_cc_done(rp_engine *e, rp_cc *cc, bool keep);
void *rp_cc_alloc(rp_cc *cc, size_t n);
/* Takes ownership of malloc'd p (NULL is fine). */
void *rp_cc_own(rp_cc *cc, void *p);

/* Replays one recorded call: RP_OK, or RP_DIVERGED / RP_FAILED with the
 * engine's report set (and its stop flag). */
int rp_exec(rp_engine *e, const pt_call *c);

/* rp_build.c: the packed arguments of a recorded call; false with cc->err. */
bool rp_build(rp_engine *e, rp_cc *cc);
/* What a recorded pointer stands for now (handles, USM, mapped). False
 * when the recording never created it. */
bool rp_resolve(rp_engine *e, uint8_t kind, uint64_t id, uint64_t *live);
/* Scratch for the data parameter i receives, with the recorded bytes to
 * check it against in cc->want[i]; rp_out_extent is its size. */
bool rp_out_data(rp_engine *e, rp_cc *cc, unsigned i);
size_t rp_out_extent(const rp_cc *cc, unsigned i);

/* rp_check.c: compares the call with the recording and records what it
 * created; RP_OK, RP_DIVERGED or RP_FAILED. */
int rp_check(rp_engine *e, rp_cc *cc, pi_result r);
/* Checks the pending reads due by seq (all of them when seq < 0). */
int rp_check_pending(rp_engine *e, int64_t seq);
/* Compares replayed bytes with recorded ones (bitwise, or --tolerance);
 * true when they match, else a description of the first difference. */
bool rp_data_equal(const rp_opts *o, const unsigned char *want, const unsigned char *got,
                   size_t n, char *why, size_t whyn);

/* ---- Maps (rp_ids.c) -------------------------------------------------------------- */

bool rp_ids_put(rp_engine *e, uint64_t id, uint64_t live);
uint64_t rp_ids_get(rp_engine *e, uint64_t id);
void rp_ids_free(rp_ids *m);
bool rp_native_put(rp_engine *e, uint64_t recorded, uint64_t live);
bool rp_native_get(rp_engine *e, uint64_t recorded, uint64_t *live);
void rp_natives_free(rp_natives *m);

/* ---- Outcome (rp_report.c) --------------------------------------------------------- */

void rp_lock(rp_engine *e);
void rp_unlock(rp_engine *e);
/* A difference that is no divergence (info queries, out-values). */
void rp_note(rp_engine *e, int64_t seq, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Notes that parameter i of call c is compared only over the `kept` bytes
 * of its `full` the recording kept (none: not compared). */
void rp_note_kept(rp_engine *e, const pt_call *c, unsigned i, size_t kept, size_t full);
/* The call diverged (status RP_DIVERGED) or cannot be replayed
 * (RP_FAILED); the one with the smallest seq is reported. `what` follows
 * the call block (call_text, from rp_call_text; may be NULL). */
int rp_stop(rp_engine *e, int status, const pt_call *c, const char *call_text, const char *what);
/* The replayed call as the trace prints it (malloc'd). */
char *rp_call_text(const pi_api_desc *api, const uint64_t *argv);
void rp_keep(rp_engine *e, void *p);
void rp_progress(rp_engine *e, bool final);
/* Monotonic nanoseconds. */
uint64_t rp_now_ns(void);
/* Prints the notes and the outcome; returns the exit status. */
int rp_finish(rp_engine *e, const char *device);
void rp_engine_free(rp_engine *e);

/* ---- Threads (rp_sched.c) ------------------------------------------------------------ */

/* Says, in a recording of the replay (a `replay` note, docs/notes.md), that
 * the next PI call of this thread is the replay's own, not one of the
 * recorded application's: `pitrace diff` lists it apart and does not count
 * it. Nothing with --plugin (no runtime to record it). */
void rp_own_call(const rp_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Replays calls[0..n) keeping each recorded thread's order and every
 * cross-thread order the recording shows; returns the engine status. */
int rp_run(rp_engine *e, const pt_call *const *calls, size_t n);

#endif /* PITRACE_RPX_H */
