/*
 * recorder.h: the recorder's shared pieces, between the application-side
 * capture (the shim, interposer/shim.c) and the SQLite writer thread
 * (writer.c): instances (one per wrapped plugin), per-thread rings of
 * binary records in the ring file (ringfile.c), and the writer's entry
 * points, salvage included (which pitrace calls too).
 *
 * Data flow: a wrapped PI call writes an ENTRY record (before the real call,
 * so a crash still shows it) and an EXIT record (after) into its thread's
 * ring; each carries a ticket, its time and its thread (shim.c, shim_commit).
 * The writer merges the rings in ticket order, so everything a call depends on (the call that
 * created a handle it uses) is processed before it; it numbers calls,
 * maps handles and USM pointers to stable ids, encodes arguments and
 * writes batches to SQLite. No lock is held across the real plugin call.
 */
#ifndef PITRACE_RECORDER_H
#define PITRACE_RECORDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "pi/pi.h"
#include "pi_api.h"
#include "pirt.h"

#define SHIM_MAX_INSTANCES 8
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
  REC_THREAD = 6,   /* a thread's first record: its OS thread id */
  REC_DEVTIME = 7,  /* a device command's device start and end, or its loss */
  REC_DEVCLOCK = 8, /* a device's clock against the host's, sampled twice */
  REC_STACK = 9     /* a call stack's text, before the first entry that has it */
};

/* rec_hdr.flags of an ENTRY: the shim keeps the command's event and will
 * send a DEVTIME record for it (SYCL_PI_RECORD_PROFILE). */
#define REC_F_DEVTIME 0x1u

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
  uint32_t heap;    /* 1: `data` holds a copy's token (pt_payload_copy), 8 bytes */
  uint64_t size;    /* bytes of data (captured) */
  uint64_t full;    /* bytes the call really had (size < full: capped) */
} rec_item;

/* The bytes that follow an item's header: a heap payload's token, or the
 * data padded to 8. */
static inline uint64_t rec_item_body(const rec_item *it)
{
  return it->heap ? sizeof(uint64_t) : (it->size + 7) & ~(uint64_t)7;
}

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
  uint8_t pad[3];
  /* The bytes the call wrote, where a data cap or mode kept fewer (size):
   * high and low halves, in what were padding bytes (ring files from
   * version 4 on). */
  uint32_t full_hi;
  uint64_t size;
  uint32_t heap;
  uint32_t full_lo;
  /* then the data (or a copy's token when heap) */
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

/* When a device command (an ENTRY flagged REC_F_DEVTIME) ran on the
 * device: PI_PROFILING_INFO_COMMAND_START/END of its event, in the
 * device's clock, and mapped to the host's monotonic clock with the
 * device's first clock sample (mapped = 1) when the plugin gave one.
 * lost = 1: no times will come (the command failed, its event did not
 * complete by teardown, or its times could not be read). */
typedef struct rec_devtime {
  rec_hdr h;
  uint64_t call_ticket;
  uint64_t device;                /* the queue's device (the plugin's handle) */
  uint64_t start, end;            /* device ns */
  uint64_t host_start, host_end;  /* monotonic host ns, when mapped */
  uint32_t mapped, lost;
} rec_devtime;

/* A device's clock sampled at first use and again at teardown
 * (piGetDeviceAndHostTimer's device time, paired with the shim's own
 * monotonic clock read around the call): the writer corrects the
 * device times mapped with the first sample for drift. */
typedef struct rec_devclock {
  rec_hdr h;
  uint64_t device;
  uint64_t dev0, host0, dev1, host1;
} rec_devclock;

/* A call stack (SYCL_PI_RECORD_BACKTRACE=1) named on the thread that made
 * the call, while the modules in it are surely loaded: one line a frame,
 * module!symbol+offset where dladdr knows it (shim_stack_text). Its
 * thread writes it before the first entry whose frames hash to `hash`
 * (shim_stack_hash); the writer never asks the dynamic loader (it would
 * wait for its lock, which a thread inside dlclose holds while it waits
 * for the writer to end the session). */
typedef struct rec_stack {
  rec_hdr h;
  uint64_t hash;
  uint32_t len; /* bytes of text after the record's fixed part */
  uint32_t pad;
} rec_stack;

/* The hash a stack is known by (never 0). */
uint64_t shim_stack_hash(const uintptr_t *frames, unsigned n);
/* A stack's text, malloc'd (NULL without memory), its length in *len:
 * module!symbol+offset (dladdr) when `names`, else the addresses alone. */
char *shim_stack_text(const uintptr_t *frames, unsigned n, bool names, size_t *len);

/* A single-producer single-consumer byte ring. The producer's and the
 * consumer's positions live on cache lines of their own, and each side
 * re-reads the other's only when its cached copy says it must: otherwise
 * every call would bounce one line between the two cores.
 *
 * The ring (this structure and its bytes) lives in the session's ring file
 * (ringfile.c), a shared file mapping that outlives the process: `head` is
 * the commit word (a record is complete once head is stored past it,
 * release), `tail` is what the database holds (the producer may reuse the
 * bytes before it), `rd` is how far the writer has read (ahead of tail
 * until the next database commit). */
typedef struct shim_ring {
  _Alignas(64) _Atomic size_t head; /* producer: next write offset (monotonic) */
  size_t tail_seen;                 /* producer's copy of tail */
  _Alignas(64) _Atomic size_t tail; /* committed to the database (monotonic) */
  size_t head_seen;                 /* consumer's copy of head */
  size_t rd;                        /* consumer: next read offset (monotonic) */
  size_t populated;                 /* consumer: bytes of buf faulted in (ringfile_populate) */
  _Alignas(64) unsigned char *buf;  /* this process's address of the bytes */
  size_t cap;
  struct shim_ring *next;
  uint32_t thread_index;
  uint32_t slot; /* its slot in the ring file; RING_NO_SLOT: process memory */
  struct shim_ring *next_free; /* among the rings free to take (ringfile.c) */
  /* producer: the last ticket of the thread that left it (the next
   * thread's tickets go on above it: a ring's records are in ticket
   * order). */
  uint64_t handed_ticket;
  /* consumer: the thread whose records are read at rd (its REC_THREAD
   * was read last; 0: none read yet, thread_index's). A ring passes from
   * thread to thread: thread_index is its latest thread's, while the
   * writer, or a salvager from the last checkpoint, may still read the
   * records of those before it. */
  uint32_t rd_thread;
} shim_ring;

#define RING_NO_SLOT UINT32_MAX

/* ---- Global state ----------------------------------------------------------- */

typedef struct shim_config {
  char path[4096];
  size_t path_len; /* SYCL_PI_RECORD's length: over path's room, nothing is recorded */
  char label[256];
  int data_mode;       /* DATA_NONE, DATA_META, DATA_ALL */
  uint64_t data_cap;   /* bytes per payload */
  bool backtrace;
  uint8_t api_on[PI_API_COUNT]; /* the API filter */
  char filter[512];
  bool profile; /* SYCL_PI_RECORD_PROFILE: collect device times */
} shim_config;

enum { DATA_NONE = 0, DATA_META = 1, DATA_ALL = 2 };

extern shim_config shim_cfg;
extern shim_instance shim_instances[SHIM_MAX_INSTANCES];
extern _Atomic uint32_t shim_ninstances;
extern _Atomic bool shim_recording; /* false: pass every call through */
/* The writer found that payloads would fill the disk and stores none
 * from then on: the shim captures their sizes only (as data=meta). */
extern _Atomic bool shim_data_dropped;
/* Disk taken beside the session file since the writer last looked (ring
 * slots, payload file regions): the writer counts it against the room
 * its session file has (writer_db.c: room_for). */
extern _Atomic uint64_t shim_disk_taken;

/* Rings: the writer walks this list; a ring is added once, by the first
 * thread that has it (the next threads take it from those that exited). */
extern _Atomic(shim_ring *) shim_rings;

/* Monotonic nanoseconds. */
static inline uint64_t shim_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- Call times (stamp.c) -----------------------------------------------------
 * A call's t0 and t1 are stamps: the CPU's time-stamp counter where the
 * kernel keeps CLOCK_MONOTONIC on it, else monotonic ns; the writer turns
 * them into monotonic ns (stamp_to_ns). */
extern bool shim_stamps_tsc;

static inline uint64_t shim_stamp(void)
{
#if defined(__x86_64__)
  if (__builtin_expect(shim_stamps_tsc, 1))
    return __builtin_ia32_rdtsc();
#endif
  return shim_now();
}

/* A call's entry stamp: read only once every load before it is done (the
 * processor may otherwise read the counter early), so that a call using
 * what another thread's call made (handed over through memory) is stamped
 * after that call's return stamp, and comes after it in the order. */
static inline uint64_t shim_stamp_after_loads(void)
{
#if defined(__x86_64__)
  if (__builtin_expect(shim_stamps_tsc, 1)) {
    __builtin_ia32_lfence();
    return __builtin_ia32_rdtsc();
  }
#endif
  return shim_now();
}

typedef struct stamp_knot {
  uint64_t stamp, ns; /* the counter and CLOCK_MONOTONIC, read together */
} stamp_knot;

/* Decides how this process stamps (once, before the first record). */
void stamp_init(void);
/* The writer's side (one thread): a stamp's monotonic ns. Takes a knot
 * when no knot is later than `s` and passes it to on_knot (may be NULL). */
uint64_t stamp_to_ns(uint64_t s, void (*on_knot)(stamp_knot));
/* Adds a knot read elsewhere (a ring file's, for salvage); takes one now. */
void stamp_add_knot(stamp_knot k);
stamp_knot stamp_take_knot(void);
/* Forgets every knot; stamps converted are this process's again. */
void stamp_reset(void);
/* The writer's side: the stamps converted next were taken as a salvaged
 * ring file says (tsc: the time-stamp counter), not as this process's. */
void stamp_set_mode(bool tsc);

/* The byte of a session database whose shared lock (an open-file-
 * description lock) says that a process waits for SQLite's write lock on
 * the file, so that the recorder holding it lets it have it (writer_db.c,
 * taking turns): past the bytes SQLite locks, which begin at 1 GiB
 * (PENDING_BYTE) and span 512. */
#define PT_TURN_BYTE (0x40000000LL + 4096)

/* ---- The ring file (ringfile.c) -------------------------------------------------
 * <database>-rings.<pid>.<random>: a header (session, clock origin, the
 * wrapped plugins) and one slot per ring (its shim_ring, then its bytes),
 * a ring being a recording thread's, then the next one's once that thread
 * exited. The recording process holds a write lock (fcntl) on it for
 * its whole life, so whoever finds it unlocked knows its process is gone
 * and may salvage it (writer_salvage). */

#define RINGFILE_MAGIC 0x31474e4952545050ULL /* "PPTRING1" */
/* The version a recorder writes: 2 added the session's description, 3
 * the REC_STACK record (an older salvager took it for damage and dropped
 * the rest of its ring; it leaves a newer file alone), 4 a read-back's
 * full size (rec_readback.full_hi, full_lo: padding before, whatever the
 * ring held). A salvager reads every version up to its own. */
#define RINGFILE_VERSION 4u
#define RINGFILE_HEADER (32u << 10)
#define RINGFILE_CTL 4096u /* a slot's shim_ring, on its own page */
enum { RINGFILE_LIVE = 1, RINGFILE_DONE = 2 };
#define RINGFILE_KNOTS 64
/* The session's description (writer_db.c packs it): room for its fields. */
#define RINGFILE_DESC (16u << 10)

typedef struct ringfile_instance {
  char name[256], path[1024], version[32], backend[32];
  uint32_t index;
  uint32_t set;
} ringfile_instance;

typedef struct ringfile_hdr {
  uint64_t magic;
  uint32_t version;
  _Atomic uint32_t state;
  int64_t session;
  int64_t start_unix_ns;
  uint64_t session_t0; /* the session's monotonic origin */
  uint64_t ring_cap;
  uint64_t slot_size;  /* RINGFILE_CTL + ring_cap */
  int32_t pid;
  _Atomic uint32_t nslots; /* slots ready to read */
  ringfile_instance instances[SHIM_MAX_INSTANCES];
  /* How the process stamped call times (1: time-stamp counter), and the
   * writer's last RINGFILE_KNOTS knots (knots[i % RINGFILE_KNOTS], i <
   * nknots), for salvage. */
  uint32_t stamps_tsc;
  _Atomic uint32_t nknots;
  stamp_knot knots[RINGFILE_KNOTS];
  /* Version 2: what the session's row says of the process (label,
   * command, ...), packed by the writer, so that a salvager can make the
   * row of a process that died before its writer made it (the database is
   * opened on the writer's thread, after the ring file exists); `session`
   * is 0 until the writer has made the row, and is set before its commit. */
  uint32_t desc_len;
  unsigned char desc[RINGFILE_DESC];
  /* The fatal signal the process was ending on when its writer was asked
   * to finish (0: none): a salvager of what the writer could not store in
   * time says so. Zero in files of recorders before it (the header's
   * bytes past what they wrote are zero). */
  _Atomic int32_t ending_signal;
  /* (ending_signal RINGFILE_ENDED_IN_ORDER: the process ended in order,
   * and its writer could not store its last calls in the time it was
   * given: the file was held by another process.) */
  /* When the process began, in clock ticks after boot (ringfile_proc_start;
   * 0: not known, and in files of recorders before it): a salvager that
   * finds a process of this pid and start still running knows that it
   * went on as another program (exec, which closes the file and drops the
   * process's lock on it). */
  uint64_t proc_start;
  /* A process forked from a recording one: its parent's pid, and the
   * parent's session when both record into this database (else 0, and in
   * files of recorders before it). */
  int32_t parent_pid;
  int64_t parent_session;
} ringfile_hdr;

_Static_assert(sizeof(ringfile_hdr) <= RINGFILE_HEADER, "ring file header too large");
_Static_assert(sizeof(shim_ring) <= RINGFILE_CTL, "ring control too large");

/* What pitrace record sets in its command's environment: a token of the
 * run (cli/record.c says what for). The writer leaves an empty session
 * file of such a run to record, which names it before removing it. */
#define PT_RECORD_RUN_VAR "PITRACE_RECORD_RUN"

/* Whether a file may grow to `end` bytes under the process's file size
 * limit (RLIMIT_FSIZE): growing one past it raises SIGXFSZ in the thread
 * that writes, which kills an application that does not expect it. */
bool pt_fsize_allows(uint64_t end);

/* Creates the ring file beside `db_path`, with the session's description
 * (desc_len bytes, at most RINGFILE_DESC; the parent's pid and session
 * of a forked process, else 0) and no session yet; false (with one
 * warning) when it cannot: rings then stay in process memory. */
bool ringfile_create(const char *db_path, uint64_t session_t0, int64_t start_unix_ns,
                     const void *desc, uint32_t desc_len, int32_t parent_pid,
                     int64_t parent_session);
/* The session's row is made (its id, set before the row's commit). */
void ringfile_set_session(int64_t session);
/* Whether the file st describes is this process's ring file. */
struct stat;
bool ringfile_is_own(const struct stat *st);
/* When process `pid` began, in clock ticks after boot (/proc/PID/stat's
 * starttime, which exec keeps), and its state letter into *state; 0 when
 * it cannot be read (no such process). */
uint64_t ringfile_proc_start(int pid, char *state);
/* A ring for the calling thread: one an exited thread left (*reused: it
 * is in shim_rings already), else a new slot of the ring file, else
 * process memory; NULL when none can be had. */
shim_ring *ringfile_new_ring(uint32_t thread_index, bool *reused);
/* A ring whose thread exits, free for the next thread that needs one (and
 * its slot of the ring file: a program that makes thread after thread
 * took a new slot, 4 MiB of disk, for each, without bound). A ring has
 * one producer at a time, so the next thread writes after the records
 * of the one before, which wait there to be read and committed (the
 * producer reuses bytes only up to tail); REC_THREAD says where each
 * thread's records begin (rd_thread). */
void ringfile_give_back(shim_ring *r);
/* The writer's side: makes the next thread's slot ahead (the file grown
 * by a slot, mapped), unless one is made already. */
void ringfile_make_spare(void);
/* The writer's side: faults in the ring's pages ahead of its head. */
void ringfile_populate(shim_ring *r);
/* Keeps a knot of the writer's in the file's header. */
void ringfile_note_knot(stamp_knot k);
/* Copies shim_instances[i] into the file's header. */
void ringfile_note_instance(uint32_t i);
/* The session ended in order: marks the file done and removes it. */
void ringfile_remove(void);
/* The process is ending on fatal signal `signo` (from its handler:
 * async-signal-safe), or in order with its last calls not stored
 * (RINGFILE_ENDED_IN_ORDER). */
#define RINGFILE_ENDED_IN_ORDER 1000
void ringfile_note_signal(int signo);
/* Around a fork (writer_fork_prepare): the file's lock held across it;
 * in the child, the parent's file let go (not removed: it is still the
 * parent's) and its rings forgotten, for a ring file of the child's own. */
void ringfile_fork_lock(void);
void ringfile_fork_unlock(void);
void ringfile_fork_child(void);
/* After the session ended (ringfile_remove), before another begins in
 * this process (writer_begin_again): its rings forgotten. */
void ringfile_forget(void);
/* The payload file beside ring file `ring` (payload.c): DB-payloads.PID.X
 * for DB-rings.PID.X; false when `ring` is not named so. */
bool ringfile_payload_path(const char *ring, char *out, size_t n);

/* ---- Payload copies (payload.c) ----------------------------------------------
 * Where the shim copies a payload too large for its ring (the record keeps
 * the copy's token), stored and then freed by the writer. */
/* Copies `size` bytes of src: into the payload file when there is one
 * (pt_payload_use_file), else into process memory; its token (for the
 * record), or 0 when no copy could be made (also when the file's write
 * finds src unreadable: the caller's bad address, no fault). */
uint64_t pt_payload_copy(const void *src, uint64_t size);
/* The writer's side: the copy's bytes (NULL when they cannot be had),
 * until pt_payload_free of them. */
const void *pt_payload_view(uint64_t token);
void pt_payload_free(const void *p);
/* A copy whose view could not be had, given up (its region in the
 * payload file would wait for the writer for ever, and the file would
 * never begin again); pt_payload_discard: a copy not stored, viewed or
 * not. */
void pt_payload_drop(uint64_t token);
void pt_payload_discard(uint64_t token);
/* Gives back the freed copies kept for reuse (the session's end). */
void pt_payload_trim(void);
/* The copies' lock held across a fork (writer_fork_prepare); in a child,
 * its parent's copies and payload file forgotten (the lock let go). */
void pt_payload_fork_lock(void);
void pt_payload_fork_unlock(void);
void pt_payload_fork_child(void);
/* In a child that is not recorded: the parent's payload file closed and
 * its window unmapped, so that the child does not keep the file's disk
 * after the parent removed it; only where the forking thread held the
 * copies' lock through the fork (pt_payload_fork_trylock: the fork does
 * not wait for it), which the child then lets go with
 * pt_payload_fork_unlock. */
bool pt_payload_fork_trylock(void);
void pt_payload_fork_forget(void);
/* Large payloads go into regions of the file at `path` (made at the first
 * one), beside the ring file, so that a salvager finds them after the
 * process is gone; "" or NULL: process memory only. */
void pt_payload_use_file(const char *path);
/* The writer committed: the copies it freed since may be reused. */
void pt_payload_committed(void);

/* The session ended in order: the payload file goes. */
void pt_payload_file_remove(void);
/* A payload a process that is gone left in its payload file: its token
 * (as its record holds it), its bytes. */
typedef struct pt_salvaged_payload {
  uint64_t token, size;
  const unsigned char *data;
} pt_salvaged_payload;
/* The payloads waiting to be stored in a payload file mapped at base
 * (len bytes): up to max into out; returns how many there are. */
int pt_payload_salvage_scan(const unsigned char *base, uint64_t len, pt_salvaged_payload *out,
                            int max);

/* ---- The writer (writer.c; writer_internal.h lists its files) -------------------- */

/* Opens the database and starts the writer thread; false (after one
 * warning) when recording cannot start. */
bool writer_start(void);
/* Asks the writer to process everything, write the session's end and stop.
 * `how` is "teardown", "exit" or "signal"; waits at most `timeout_ms`. */
void writer_finish(const char *how, int signo, int timeout_ms);
/* Whether the session's end was asked (writer_finish), whatever came of
 * it: a session that failed but was not ended is not over. */
bool writer_ended(void);
/* After the session ended in order (writer_finish, its writer joined),
 * back to the state before writer_start, for another session of this
 * process; false when the writer did not finish in time (still runs). */
bool writer_begin_again(void);
/* Asks the writer to write everything so far now (waits at most
 * timeout_ms); recording goes on. */
void writer_flush(int timeout_ms);
/* A process that records forks (the shim's pthread_atfork handlers): the
 * child may record a session of its own only if, at the fork, no thread
 * of the recorder was inside SQLite or held its locks (SQLite's rule: a
 * connection does not cross a fork; and a lock held at the fork is held
 * in the child for ever). writer_fork_prepare has the writer commit what
 * it has and stand still, then takes the recorder's locks; it answers
 * NONE when no writer runs here, BUSY when the writer did not stand still
 * within a second (it waits for another process's lock on the file, or
 * salvages before its own session): the child then must not record.
 * writer_fork_parent lets the writer go on; writer_fork_child (PAUSED
 * only) forgets the parent's session, its file, rings and connection, so
 * that writer_start begins the child's own. */
enum { WRITER_FORK_NONE, WRITER_FORK_PAUSED, WRITER_FORK_BUSY };
int writer_fork_prepare(void);
void writer_fork_parent(int prepared);
void writer_fork_child(int prepared);
/* In the child of a forked process that had not begun its own session
 * when it forked: the child's session (if it begins one) names this
 * process as its parent, which has no session. */
void writer_fork_unstarted_child(void);
/* Wakes the writer from its nap (a producer whose ring is full; a flush,
 * the end): one system call, async-signal-safe. */
void writer_wake(void);

/* How a process whose rings are salvaged ended, when the caller knows
 * (pitrace record reaped it): WRITER_STATUS_KNOWN with *wait_status filled
 * (as waitpid gives it); WRITER_STATUS_EXEC when its pid went on as
 * another program (the status the caller has is that program's);
 * WRITER_STATUS_UNKNOWN when it does not know. */
typedef enum { WRITER_STATUS_UNKNOWN, WRITER_STATUS_KNOWN, WRITER_STATUS_EXEC } writer_status;
typedef writer_status (*writer_status_fn)(void *ctx, int pid, int64_t start_unix_ns,
                                          int *wait_status);

/* Makes the directory `path` and its missing parents (as `mkdir -p`;
 * the parents 0777 less the umask, the last `mode`): where sessions go,
 * for a SYCL_PI_RECORD ending in '/' and pitrace record -o. 0, or the
 * errno of the first that could not be made (ENOTDIR: a file is in the
 * way); *made: whether the last was made here. `path` is changed during
 * the call and restored. */
int writer_make_dirs(char *path, mode_t mode, bool *made);

/* Salvages the ring files beside `db_path` whose processes are gone: every
 * complete record goes into the database through the writer's own
 * decoding, the session is marked ended ('killed' or '_exit'), and the
 * ring file is removed. Returns the number of sessions salvaged, or -1
 * with a one-line reason in `err` (the ring files are then left as they
 * are). `status_of` may be NULL. Not thread-safe: one salvage at a time,
 * and not in a process that records itself. */
int writer_salvage(const char *db_path, writer_status_fn status_of, void *ctx, char *err,
                   size_t errn);

/* The pid of the live process recording session `session` into db_path
 * (its ring file beside it, which that process keeps locked); -1 when
 * that ring file is there but its process is gone (not salvaged yet); 0
 * when there is none. */
int64_t writer_recorder_of(const char *db_path, int64_t session);

/* writer_salvage for a reader that opens many databases of one directory
 * (a record directory's sessions, each opened again when it was put to
 * rest): the directory's ring files are listed once while it is unchanged
 * (its modification time), not once a database, and nothing is done for
 * a database with none beside it. Serialized by a lock of its own. */
int writer_salvage_listed(const char *db_path, char *err, size_t errn);

#endif /* PITRACE_RECORDER_H */
