/*
 * shim_internal.h: the recording shim's shared pieces: instances (one per
 * wrapped plugin), per-thread rings of binary records, and the interface
 * between the application-side capture (shim.c) and the SQLite writer
 * thread (writer.c).
 *
 * Data flow: a wrapped PI call writes an ENTRY record (before the real call,
 * so a crash still shows it) and an EXIT record (after) into its thread's
 * ring; each takes a ticket from one global counter. The writer merges the
 * rings in ticket order, so everything a call depends on (the call that
 * created a handle it uses) is processed before it; it numbers calls,
 * maps handles and USM pointers to stable ids, encodes arguments and
 * writes batches to SQLite. No lock is held across the real plugin call.
 */
#ifndef SHIM_INTERNAL_H
#define SHIM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pi/pi.h"
#include "pi_api.h"
#include "pirt.h"

#define SHIM_MAX_INSTANCES 8
#define PIRT_LIKELY(x) __builtin_expect(!!(x), 1)
#define SHIM_MAX_FRAMES 32

/* One wrapped plugin. */
typedef struct shim_instance {
  struct pi_function_table target; /* the real plugin's table */
  uint32_t index;                  /* plugin index in the session */
  char name[256], path[1024], version[32], backend[32];
} shim_instance;

/* ---- Records ------------------------------------------------------------------
 * Every record starts with this header and is 8-byte aligned in its ring. */
enum {
  REC_WRAP = 1,     /* the producer went back to the ring's start */
  REC_ENTRY = 2,    /* a call began: argv, copies of what it reads */
  REC_EXIT = 3,     /* it returned: result, out-values, what it wrote */
  REC_READBACK = 4, /* data a non-blocking call wrote, captured later */
  REC_NOTE = 5,     /* a runtime decision (pirt_note) for the next call */
  REC_THREAD = 6    /* a thread's first record: its OS thread id */
};

typedef struct rec_hdr {
  uint32_t size;   /* whole record, aligned */
  uint8_t type;
  uint8_t api;     /* pi_api_id for ENTRY/EXIT */
  uint8_t instance;
  uint8_t flags;
  uint64_t ticket;
} rec_hdr;

/* Payloads follow a record's fixed part as items. */
typedef struct rec_item {
  uint8_t position; /* parameter */
  uint8_t role;     /* ITEM_* */
  uint16_t index;   /* element of an array of payloads (binaries, sources) */
  uint32_t heap;    /* 1: `data` holds a malloc'd pointer the writer frees */
  uint64_t size;    /* bytes of data (captured) */
  uint64_t full;    /* bytes the call really had (size < full: capped) */
} rec_item;

enum {
  ITEM_IN = 1,      /* data the call read (buffers, sources, arrays) */
  ITEM_OUT = 2,     /* data the call wrote */
  ITEM_VALUE = 3,   /* an out-parameter's value(s) read after the call */
  ITEM_STRING = 4,  /* a string the call read or returned */
  ITEM_META = 5     /* a summary of a structure (binaries: target, format) */
};

typedef struct rec_entry {
  rec_hdr h;
  uint64_t t0;
  uint32_t thread;
  uint16_t nitems;
  uint16_t nframes;
  uint64_t argv[]; /* one per parameter; then nframes uintptr_t frames,
                      then nitems (rec_item + data) */
} rec_entry;

typedef struct rec_exit {
  rec_hdr h;
  uint64_t entry_ticket;
  uint64_t t1;
  int32_t result;
  uint16_t nitems;
  uint16_t pad;
} rec_exit;

typedef struct rec_readback {
  rec_hdr h;
  uint64_t call_ticket; /* the call that wrote the data */
  uint8_t position;
  uint8_t pad[7];
  uint64_t size;
  uint32_t heap;
  uint32_t pad2;
  /* then the data (or a pointer when heap) */
} rec_readback;

typedef struct rec_note {
  rec_hdr h;
  uint32_t kind;
  uint32_t native;
  uint32_t num_ids;
  uint32_t text_len;
  uint64_t value_len;
  /* then: kernel, device, symbol, image, symbolic_id (NUL-terminated),
   * numeric ids (uint32), value bytes, text */
} rec_note;

typedef struct rec_thread {
  rec_hdr h;
  uint32_t index;
  int32_t tid;
} rec_thread;

/* A single-producer single-consumer byte ring. The producer's and the
 * consumer's positions live on cache lines of their own, and each side
 * re-reads the other's only when its cached copy says it must: otherwise
 * every call would bounce one line between the two cores. */
typedef struct shim_ring {
  _Alignas(64) _Atomic size_t head; /* producer: next write offset (monotonic) */
  size_t tail_seen;                 /* producer's copy of tail */
  _Alignas(64) _Atomic size_t tail; /* consumer: next read offset (monotonic) */
  size_t head_seen;                 /* consumer's copy of head */
  _Alignas(64) unsigned char *buf;
  size_t cap;
  struct shim_ring *next;
  uint32_t thread_index;
  _Atomic bool dead; /* the thread exited */
} shim_ring;

/* ---- Global state ----------------------------------------------------------- */

typedef struct shim_config {
  char path[4096];
  char label[256];
  int data_mode;       /* DATA_NONE, DATA_META, DATA_ALL */
  uint64_t data_cap;   /* bytes per payload */
  bool backtrace;
  uint8_t api_on[PI_API_COUNT]; /* the API filter */
  char filter[512];
} shim_config;

enum { DATA_NONE = 0, DATA_META = 1, DATA_ALL = 2 };

extern shim_config shim_cfg;
extern shim_instance shim_instances[SHIM_MAX_INSTANCES];
extern _Atomic uint32_t shim_ninstances;
extern _Atomic bool shim_recording; /* false: pass every call through */

/* Rings: the writer walks this list; a thread adds its ring once. */
extern _Atomic(shim_ring *) shim_rings;

/* Writes a record into the calling thread's ring; returns NULL when
 * recording is off. shim_commit publishes it. */
void *shim_reserve(size_t size);
void shim_commit(void *rec);
shim_ring *shim_thread_ring(void);

/* Monotonic nanoseconds. */
uint64_t shim_now(void);

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

/* ---- The writer (writer.c) ------------------------------------------------------- */

/* Opens the database and starts the writer thread; false (after one
 * warning) when recording cannot start. */
bool writer_start(void);
/* Asks the writer to process everything, write the session's end and stop.
 * `how` is "teardown", "exit" or "signal"; waits at most `timeout_ms`. */
void writer_finish(const char *how, int signo, int timeout_ms);
/* Asks the writer to write everything so far now (waits at most
 * timeout_ms); recording goes on. */
void writer_flush(int timeout_ms);

#endif /* SHIM_INTERNAL_H */
