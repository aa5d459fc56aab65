/*
 * writer_internal.h: what the files of the recorder's writer share,
 * private to the session library (the public side is recorder.h). The
 * writer is one thread per recording process, "pitrace-merge", with
 * encoder threads beside it ("pitrace-enc"); salvage runs the same code
 * over the rings a dead process left. Its files, in the order a record
 * travels:
 *
 *   writer.c            the thread's life: start (the session's
 *                       description, the ring file), the loop that merges
 *                       and commits, the end; the public writer_* calls
 *   writer_merge.c      the rings read in one order (ticket), each record
 *                       handed to its handler
 *   writer_calls.c      a record made a call: its seq, its arguments as
 *                       JSON text (or found now and printed by an encoder
 *                       later), its payloads, the calls in flight
 *   writer_ids.c        stable ids for handles, USM allocations, mapped
 *                       pointers and stacks, and their rows
 *   writer_chunks.c     calls gathered into chunks, encoded on encoder
 *                       threads, stored at the commit
 *   writer_checkpoint.c what the writer knows, stored with each commit, so
 *                       that a salvager resumes where the commit left off
 *   writer_salvage.c    the rings of processes that are gone, into the
 *                       database
 *   writer_db.c         SQLite: opening, statements, the session's row,
 *                       payloads, the session's end
 *
 * Names shared between these files carry wr__ (functions) or live in
 * `wr` (the state); everything else is static to its file. One thread
 * touches `wr` at a time: the merge thread while recording, or the
 * thread that salvages (writer_salvage refuses while recording); the
 * encoders read only their jobs.
 */
#ifndef PT_WRITER_INTERNAL_H
#define PT_WRITER_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "pi_thread.h"
#include "recorder.h"
#include "schema.h"

#define MAX_ITEMS_VIEW 64 /* the items of one record the writer looks at */
/* A commit at least this often while calls come (writer.c), and while the
 * merge stores payloads without a pause (wr__store_data). */
#define COMMIT_NS (50u * 1000000u)
/* A chunk's text is flushed at this size (or PT_CHUNK_CALLS calls). */
#define CHUNK_BYTES (4u << 20)

/* ---- Types --------------------------------------------------------------------- */

/* Small maps: open addressing, 64-bit keys (0 is empty), linear probing,
 * grown at 50 %. */
typedef struct map_slot {
  uint64_t key;
  uint64_t a, b, c; /* values, by map */
} map_slot;

typedef struct map {
  map_slot *v;
  size_t cap, n;
} map;

/* One USM allocation (wr.usm_allocs keeps them sorted by base, for
 * pointers into their middle). */
typedef struct usm_alloc {
  uint64_t base, size, id;
} usm_alloc;

typedef struct text {
  char *p;
  size_t len, cap;
} text;

typedef struct item_view {
  const rec_item *it;
  const unsigned char *data;
} item_view;

/* Values a call's text needs from the writer's maps (handle ids, USM and
 * mapped pointers), in the order the text asks for them. */
typedef struct ids {
  uint64_t *v;
  size_t n, cap;
} ids;

/* A call between its entry and its exit. */
typedef struct pending_call {
  uint64_t ticket, seq, t0;
  uint32_t thread, plugin;
  uint8_t api;
  bool inserted; /* already written as incomplete */
  /* What it releases was released already (wr__release_in_flight): its exit
   * releases nothing. */
  bool released_early;
  int64_t stack;
  uint64_t argv[PI_MAX_PARAMS]; /* the call's packed arguments */
  text in;       /* the in-parameters' JSON, per position */
  text inl;      /* small payloads, inline: [position, role, idx, size, hex],... */
  uint32_t start[PI_MAX_PARAMS], end[PI_MAX_PARAMS];
  /* Printed later (FMT_FIND at its entry): its entry record, still in
   * its ring, and the values found; NULL when `in` and `inl` hold its
   * text already. */
  const rec_entry *entry;
  ids found;
  struct pending_call *prev, *next; /* in inflight */
  struct pending_call *outer;       /* its ring's next call out (mring.open) */
} pending_call;

/* The rings as the merge keeps them (writer_merge.c says how): each
 * one's next record seen (NULL: none yet), its ticket, and when it was
 * seen, counted in looks at the heads (`looks`, writer_merge.c). A binary heap orders the
 * rings with a record seen by that record's ticket; the others wait for
 * the next sweep. A ring is one thread's at a time (an exiting thread
 * hands it to the next), whose calls nest: `open` is its innermost call
 * in flight (the others through their `outer`), which the thread's next
 * exit returns from, found without a search. */
typedef struct mring {
  shim_ring *r;
  rec_hdr *h;      /* its next record, seen published; NULL: none */
  uint64_t ticket; /* h's */
  uint64_t seen;   /* the look that revealed the records seen */
  struct pending_call *open;
} mring;

/* A thread's notes, waiting for its next call. */
typedef struct thread_state {
  uint32_t index;
  rec_note **notes;
  size_t nnotes;
} thread_state;

/* What a pointer is: a mapped pointer's id (1), a USM allocation's id
 * and the offset into it (2), or neither (0); as many words follow it
 * among the values found. */
enum { PTR_PLAIN, PTR_MAPPED, PTR_USM };

/* What wr__release_in_flight finds gone (writer_ids.c). */
enum { GONE_HANDLE, GONE_USM, GONE_MAPPED };

/* A call gathered into a chunk to be printed by the encoder (FMT_PRINT):
 * its row, its two records (in their rings until the commit, which waits
 * for the encoders), and the values the merge thread found for it (in its
 * job's `found`). */
typedef struct later_call {
  size_t row;
  const rec_entry *entry;
  const rec_exit *exit;
  size_t found_at, nfound;
} later_call;

typedef struct chunk_job {
  pt_chunk_enc enc;
  size_t order; /* its chunk among those handed over since the commit */
  later_call *later;
  size_t nlater, cap_later;
  ids found;
  size_t later_bytes; /* its later calls' records: a bound on their text */
  struct chunk_job *next;
} chunk_job;

/* What an encoder prints calls with; its own (and the merge thread's
 * when it encodes a chunk itself). */
typedef struct printer {
  text out;       /* the chunk's text, made again */
  pending_call c; /* the call being printed */
} printer;

/* What a session's row says of its process: gathered on the application's
 * thread at the start, and packed into the ring file (ringfile_hdr.desc),
 * so that the row is made from the same description by the writer (once
 * the database is open, on its own thread) or, when the process died
 * before that, by whoever salvages its rings. */

enum { DESC_LABEL, DESC_COMMAND, DESC_CWD, DESC_HOST, DESC_ENV, DESC_FILTER, DESC_NSTR };

typedef struct session_desc {
  int64_t pid, start_unix_ns;
  /* A process forked from a recording one: its parent's pid (else 0), and
   * the parent's session when both record into one database (else 0). */
  int64_t parent_pid, parent_session;
  uint32_t data_mode;
  struct {
    const char *p;
    uint32_t n;
  } s[DESC_NSTR];
} session_desc;

/* Rings of the file being salvaged, by slot, with where the last commit
 * left each and whose records are there. */
typedef struct slot_pos {
  uint64_t slot, rd;
  uint32_t thread; /* whose records are at rd (0: the ring's thread_index) */
} slot_pos;

/* ---- The writer's state ------------------------------------------------------- */

typedef struct writer_state {
  sqlite3 *db;
  sqlite3_stmt *st_chunk, *st_inflight, *st_inflight_done, *st_data, *st_blob, *st_blob_zero,
      *st_handle, *st_handle_release, *st_note, *st_stack, *st_thread, *st_plugin, *st_state,
      *st_devtime, *st_devclock, *st_drift;
  int64_t session_id;
  uint64_t session_t0; /* monotonic ns at start */
  bool failed; /* writing failed: recording stopped (writer_db.c's fail_sql said why) */
  bool committed; /* a commit of this session's went through: its row is in the file */
  /* Bytes the session file may still grow by, as last looked at, less
   * what was stored since (writer_db.c's room_for; once payloads would
   * fill the disk, shim_data_dropped says so). */
  uint64_t room;
  /* Decoding the rings of a process that is gone (writer_salvage): its
   * heap pointers and code addresses mean nothing here, and its records
   * are checked before they are read. */
  bool salvaging;
  bool pressure; /* a ring fills up: commit (and free it) now */
  /* Payloads have been stored in a transaction older than COMMIT_NS:
   * commit now, even while draining at the end (wr__store_data). */
  bool long_txn;
  uint64_t txn_began; /* when the write transaction began (shim_now) */
  bool draining; /* reading everything before the end: no stop */
  /* The session is ending (the application waits): nothing is written
   * into the rings any more, so none of their pages are faulted in ahead
   * and no spare slot is made, and a last chunk is encoded on the merge
   * thread rather than on an encoder started for it (at the end of a
   * short program those were half a millisecond of the application's
   * wait on the 2-core machine). */
  bool ending;
  /* The rings the writer reads: this process's (shim_rings), or while it
   * salvages, the salvaged file's (the application's threads go on adding
   * theirs to shim_rings meanwhile: the writer salvages before its own
   * session starts). */
  shim_ring *salvage_list;
  /* The payloads the salvaged process left in its payload file, by
   * token (payload.c). */
  pt_salvaged_payload *salvage_payloads;
  size_t nsalvage_payloads;
  /* The header of the ring file being salvaged (NULL while recording):
   * wr__write_plugins takes the plugins from its copy of them. */
  const ringfile_hdr *salvage_hdr;
  bool maps_dirty;   /* the id maps changed since the checkpoint */
  uint64_t last_t;   /* the latest call time seen (monotonic ns) */
  uint64_t damaged;  /* records found damaged while salvaging */
  char salvage_error[512];
  uint64_t seq_counter;
  uint64_t last_ticket; /* the last record processed (checkpointed) */
  uint32_t plugins_written;
  const char *cur_api; /* the function of the call being processed (handles' created_by) */

  /* Ids (writer_ids.c). handles: pointer -> a = id, b = kind, c =
   * references (the application's count); mapped: pointer -> a = id; USM
   * allocations sorted by base, for pointers into their middle; memo:
   * calls of which a READBACK may come, entry ticket -> a = seq; devmemo:
   * device commands whose device times will come (REC_F_DEVTIME), ticket
   * -> (seq, queue id, api); stacks: hash -> a = id; callbacks: the
   * address of an event given a callback -> a = its id, until another
   * object is at that address (a callback's note names its event by
   * address, and the application may have released it before the
   * callback runs). */
  map handles, mapped, memo, devmemo, stacks, callbacks;
  uint64_t next_handle_id, next_stack_id;
  usm_alloc *usm_allocs;
  size_t nusm_allocs, cap_usm_allocs;

  /* Calls (writer_calls.c): those in flight, doubly linked (prev, next),
   * and those reused, with their buffers; each thread's notes waiting for
   * its next call. */
  pending_call *inflight, *free_calls;
  thread_state *threads;
  size_t nthreads, notes_waiting;

  /* The rings as the merge keeps them (writer_merge.c). */
  mring *mrings;
  size_t nmrings, cap_mrings;

  /* Chunks (writer_chunks.c): the merge thread's job being filled, and the
   * last chunk row's id. */
  chunk_job *cur_job;
  int64_t chunk_id;
} writer_state;

extern writer_state wr;

/* ---- Small maps and text, inline -------------------------------------------------- */

static inline uint64_t mix(uint64_t k)
{
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
}

static inline map_slot *map_find(map *m, uint64_t key)
{
  if (!m->cap || !key)
    return NULL;
  for (size_t i = mix(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (m->v[i].key == key)
      return &m->v[i];
    if (!m->v[i].key)
      return NULL;
  }
}

static inline map_slot *map_put(map *m, uint64_t key)
{
  if (!key)
    return NULL;
  wr.maps_dirty = true;
  if ((m->n + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 1024;
    map_slot *v = calloc(cap, sizeof *v);
    if (!v)
      return NULL;
    for (size_t i = 0; i < m->cap; i++)
      if (m->v[i].key) {
        size_t j = mix(m->v[i].key) & (cap - 1);
        while (v[j].key)
          j = (j + 1) & (cap - 1);
        v[j] = m->v[i];
      }
    free(m->v);
    m->v = v;
    m->cap = cap;
  }
  size_t i = mix(key) & (m->cap - 1);
  while (m->v[i].key && m->v[i].key != key)
    i = (i + 1) & (m->cap - 1);
  if (!m->v[i].key) {
    m->v[i].key = key;
    m->n++;
  }
  return &m->v[i];
}

static inline void map_del(map *m, uint64_t key)
{
  map_slot *s = map_find(m, key);
  if (!s)
    return;
  wr.maps_dirty = true;
  /* Backward-shift deletion keeps probe chains intact. */
  size_t i = (size_t)(s - m->v), j = i;
  for (;;) {
    j = (j + 1) & (m->cap - 1);
    if (!m->v[j].key)
      break;
    size_t home = mix(m->v[j].key) & (m->cap - 1);
    if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
      m->v[i] = m->v[j];
      i = j;
    }
  }
  m->v[i].key = 0;
  m->n--;
}

static inline void map_free(map *m)
{
  free(m->v);
  m->v = NULL;
  m->cap = m->n = 0;
}

/* Room for n more bytes and the NUL: the check inline (every byte of every
 * call's text passes it), the growth out of line. */
__attribute__((noinline, unused)) static void t_grow(text *t, size_t n)
{
  size_t cap = t->cap ? t->cap : 256;
  while (cap < t->len + n + 1)
    cap *= 2;
  char *p = realloc(t->p, cap);
  if (!p)
    abort(); /* the writer cannot go on without memory */
  t->p = p;
  t->cap = cap;
}

static inline void t_reserve(text *t, size_t n)
{
  if (__builtin_expect(t->len + n + 1 > t->cap, 0))
    t_grow(t, n);
}

/* n bytes from s to d, which do not overlap: most pieces of a call's
 * text are a few bytes, copied here in two loads and two stores each, not
 * by a call to memcpy. */
static inline void copy_bytes(char *d, const char *s, size_t n)
{
  if (n >= 8 && n <= 16) {
    uint64_t a, b;
    memcpy(&a, s, 8);
    memcpy(&b, s + n - 8, 8);
    memcpy(d, &a, 8);
    memcpy(d + n - 8, &b, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t a, b;
    memcpy(&a, s, 4);
    memcpy(&b, s + n - 4, 4);
    memcpy(d, &a, 4);
    memcpy(d + n - 4, &b, 4);
  } else if (n && n < 4) {
    char a = s[0], b = s[n / 2], c = s[n - 1];
    d[0] = a;
    d[n / 2] = b;
    d[n - 1] = c;
  } else if (n) {
    memcpy(d, s, n);
  }
}

static inline void t_put(text *t, const char *s, size_t n)
{
  t_reserve(t, n);
  copy_bytes(t->p + t->len, s, n);
  t->len += n;
  t->p[t->len] = 0;
}

static inline void t_c(text *t, char c)
{
  t_reserve(t, 1);
  t->p[t->len++] = c;
  t->p[t->len] = 0;
}

/* A number, its digits written in place from the last, two at a time. */
static inline void t_u64(text *t, uint64_t v)
{
  static const char pairs[] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";
  unsigned n = 1;
  for (uint64_t p = 10; n < 20 && v >= p; p *= 10)
    n++;
  t_reserve(t, n);
  char *d = t->p + t->len + n;
  *d = 0;
  for (; v >= 100; v /= 100) {
    d -= 2;
    memcpy(d, pairs + 2 * (v % 100), 2);
  }
  if (v >= 10)
    memcpy(d - 2, pairs + 2 * v, 2);
  else
    d[-1] = (char)('0' + v);
  t->len += n;
}

static inline void t_i64(text *t, int64_t v)
{
  if (v < 0) {
    t_c(t, '-');
    t_u64(t, (uint64_t)(-(v + 1)) + 1);
  } else {
    t_u64(t, (uint64_t)v);
  }
}

/* A JSON string: room for the plain case taken once, more only at an
 * escape; written through a local pointer (a store through t->p could
 * change t itself, for all the compiler knows, so it would reload it at
 * every character). */
static inline void t_str(text *t, const char *s, size_t n)
{
  n = strnlen(s, n);
  t_reserve(t, n + 2);
  char *d = t->p + t->len;
  *d++ = '"';
  for (size_t i = 0; i < n; i++) {
    size_t run = n - i >= 16 ? pi_plain_prefix(s + i, n - i) : 0; /* eight at a time */
    if (run) {
      memcpy(d, s + i, run);
      d += run;
      i += run - 1;
      continue;
    }
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c != '"' && c != '\\') {
      *d++ = (char)c;
      continue;
    }
    t->len = (size_t)(d - t->p);
    t_reserve(t, 6 + n - i); /* this escape, the rest, the closing quote */
    d = t->p + t->len;
    if (c == '"' || c == '\\') {
      *d++ = '\\';
      *d++ = (char)c;
    } else {
      static const char hex[] = "0123456789abcdef";
      memcpy(d, "\\u00", 4);
      d[4] = hex[c >> 4];
      d[5] = hex[c & 15];
      d += 6;
    }
  }
  *d++ = '"';
  *d = 0;
  t->len = (size_t)(d - t->p);
}

/* An array that doubles, grown by one element's room (`first`: its first
 * capacity); the writer cannot go on without memory (as t_grow). */
static inline void *grow_array(void *p, size_t *cap, size_t elem, size_t first)
{
  size_t c = *cap ? *cap * 2 : first;
  void *q = realloc(p, c * elem);
  if (!q)
    abort();
  *cap = c;
  return q;
}

static inline void ids_push(ids *d, uint64_t v)
{
  if (d->n == d->cap)
    d->v = grow_array(d->v, &d->cap, sizeof *d->v, 16);
  d->v[d->n++] = v;
}

/* The rings the writer reads (wr.salvage_list says which). */
static inline shim_ring *rings_head(void)
{
  return wr.salvaging ? wr.salvage_list : atomic_load(&shim_rings);
}

/* ---- Between the files (each defined, with what it does, where named) ---- */

/* writer.c */
/* 1 while a fork waits for the writer to stand still: the merge stops. */
extern _Atomic uint32_t wr__fork_wait;
void wr__keep_knot(stamp_knot k);
void wr__reset_state(void);

/* writer_merge.c */
bool wr__record_ok(rec_hdr *h, size_t avail, size_t to_end);
void wr__publish_tails(void);
void wr__forget_rings(void);
size_t wr__merge(void);
void wr__discard(void);

/* writer_calls.c */
void wr__handle_record(mring *m, rec_hdr *h);
unsigned wr__read_items(const unsigned char *p, unsigned n, item_view *out, unsigned max);
void wr__free_heap_items(item_view *v, unsigned n);
void wr__inflight_push(pending_call *c);
pending_call *wr__call_new(void);
void wr__call_free(pending_call *c);
void wr__decide_printing(void);
const unsigned char *wr__entry_items(const rec_entry *e);
void wr__put_data(text *t, const pending_call *c);
void wr__print_later(chunk_job *j, printer *pr);
void wr__process_note(const rec_note *n, uint32_t thread);
void wr__write_waiting_notes(void);
void wr__write_inflight(void);
void wr__materialize_inflight(void);

/* writer_ids.c */
const usm_alloc *wr__usm_find(uint64_t p);
void wr__usm_add(uint64_t base, uint64_t size, uint64_t id);
uint64_t wr__handle_store(uint64_t ptr, uint8_t kind, uint64_t seq, bool created);
uint64_t wr__handle_new(uint64_t ptr, uint8_t kind, uint64_t seq);
void wr__usm_free(uint64_t ptr, uint64_t seq);
void wr__handle_release(uint64_t ptr, uint64_t seq);
void wr__release_in_flight(uint64_t ptr, int what);
uint64_t wr__handle_made(uint64_t ptr, uint8_t kind, uint64_t seq);
uint64_t wr__pointer_kind(uint64_t p, uint64_t id_off[2]);
int64_t wr__stack_id(const uintptr_t *frames, unsigned n);
void wr__stack_named(uint64_t hash, const char *frames, size_t len);

/* writer_chunks.c */
chunk_job *wr__take_job(void);
void wr__flush_chunk(void);
void wr__wait_encoders(void);
void wr__write_chunks(void);
void wr__stop_encoders(void);
void wr__free_chunks(void);
void wr__chunks_fork_lock(void);
void wr__chunks_fork_unlock(void);
void wr__chunks_fork_child(void);

/* writer_checkpoint.c */
void wr__write_checkpoint(void);
bool wr__load_checkpoint(slot_pos **pos, size_t *npos, char *err, size_t errn);

/* writer_salvage.c */
/* The bytes of the salvaged process's payload `token`, `size` of them,
 * from its payload file; NULL when they are not there. */
const unsigned char *wr__salvaged_payload(uint64_t token, uint64_t size);
int wr__salvage_dir(const char *db_path, writer_status_fn status_of, void *ctx, char *err,
                    size_t errn);

/* writer_db.c */
bool wr__step(sqlite3_stmt *s, const char *what);
bool wr__commit_writes(void);
sqlite3_stmt *wr__prepare(const char *sql);
void wr__store_data(uint64_t seq, unsigned position, const char *role, unsigned index,
                    const void *bytes, uint64_t size, uint64_t full, int64_t captured_seq);
void wr__insert_running(pending_call *c, const text *args);
void wr__write_plugins(void);
void wr__end_session(const char *how, int signo, int64_t end_unix_ns, uint64_t duration,
                     const char *reason, int exit_status);
sqlite3 *wr__open_rw(const char *path, bool create, char *err, size_t errn);
bool wr__prepare_statements(void);
void wr__finalize_statements(void);
int wr__schema_version(void);
void wr__create_from_template(const char *path);
void wr__say_cannot_record(const char *why);
bool wr__open_db(void);
/* Closes a connection wr__open_rw opened (and the descriptor it takes
 * turns by, after it). */
void wr__close_db(sqlite3 *d);
/* Room taken on the session's disk as it begins, given back when a write
 * meets a full disk (writer_db.c); forgotten at the end and in a child. */
void wr__reserve_take(void);
void wr__reserve_forget(void);
/* BEGIN IMMEDIATE on d, a wait for the lock said to the writer holding
 * it (taking turns); false with SQLite's error (in *err when not NULL). */
bool wr__begin_immediate(sqlite3 *d, char **err);
void wr__turn_fork_child(void);
uint32_t wr__desc_pack(const session_desc *d, unsigned char *out);
bool wr__desc_unpack(const ringfile_hdr *h, session_desc *d);
int64_t wr__insert_session(const session_desc *d);

#endif
