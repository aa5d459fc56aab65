/*
 * writer.c: the recording shim's writer thread. It merges the per-thread
 * rings in ticket order, numbers calls, gives handles, USM allocations and
 * mapped pointers stable ids, encodes each call's arguments as a compact
 * JSON array and gathers the calls into chunks, which encoder threads
 * turn into binary chunks (chunk.c) beside it; it stores payloads
 * once by content hash, and writes it all to SQLite in transactions
 * committed at least every 50 ms (so a killed process loses at most
 * that much, and the database, with its rollback journal, is never
 * corrupt). The schema and its views are in schema.c (docs/schema.md).
 *
 * When writing fails (a full disk, an unwritable path) recording stops with
 * one warning, the session is marked incomplete where that still can be
 * written, and the application's calls go on unrecorded.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "chunk.h"
#include "recorder.h"
#include "schema.h"

#define COMMIT_NS (50u * 1000000u)
/* The writer's naps: 0.25 ms doubled up to 4 ms (a thread flooding its
 * ring writes no more than about 1 GB/s: 4 MB, a ring, in 4 ms). */
#define NAP_MIN_NS 250000L
#define NAP_DOUBLINGS 4u
#define MAX_ITEMS_VIEW 64

static sqlite3 *db;
static sqlite3_stmt *st_chunk, *st_inflight, *st_inflight_done, *st_data, *st_blob, *st_handle,
    *st_handle_release, *st_note, *st_stack, *st_thread, *st_plugin, *st_state,
    *st_devtime, *st_devclock, *st_drift;
static int64_t session_id;
static pthread_t writer_thread;
static bool writer_running;
static _Atomic int finish_req;  /* 0 none, 1 flush, 2 finish */
static _Atomic int finish_done; /* generation acknowledged */
static _Atomic int finish_gen;

/* The writer naps on this word when it finds nothing; whoever needs it
 * sooner (a producer whose ring is full, a flush, the end) rings it. */
static _Atomic uint32_t writer_bell;

void writer_wake(void)
{
  atomic_fetch_add_explicit(&writer_bell, 1, memory_order_release);
  syscall(SYS_futex, &writer_bell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Naps ns nanoseconds, or until the bell rings after it read `bell`. */
static void writer_nap(uint32_t bell, long ns)
{
  struct timespec t = {ns / 1000000000L, ns % 1000000000L};
  syscall(SYS_futex, &writer_bell, FUTEX_WAIT_PRIVATE, bell, &t, NULL, 0);
}
static char finish_how[16];
static int finish_signo;
static bool failed;
static uint64_t session_t0; /* monotonic ns at start */
/* Decoding the rings of a process that is gone (writer_salvage): its heap
 * pointers and code addresses mean nothing here, and its records are
 * checked before they are read. */
static bool salvaging;
static bool pressure;          /* a ring fills up: commit (and free it) now */
static bool draining;          /* reading everything before the end: no stop */
/* The session is ending (the application waits): nothing is written into
 * the rings any more, so none of their pages are faulted in ahead and no
 * spare slot is made, and a last chunk is encoded here rather than on an
 * encoder started for it (at the end of a short program those were half
 * a millisecond of the application's wait on the 2-core machine). */
static bool ending;
/* The rings the writer reads: this process's (shim_rings), or while it
 * salvages, the salvaged file's (the application's threads go on adding
 * theirs to shim_rings meanwhile: the writer salvages before its own
 * session starts). */
static shim_ring *salvage_list;
static inline shim_ring *rings_head(void)
{
  return salvaging ? salvage_list : atomic_load(&shim_rings);
}
static bool maps_dirty = true; /* the id maps changed since the checkpoint */
static uint64_t last_t;        /* the latest call time seen (monotonic ns) */
static uint64_t damaged;       /* records found damaged while salvaging */
static char salvage_error[512];
static uint64_t seq_counter;
static uint32_t plugins_written;

/* ---- Small maps ------------------------------------------------------------------
 * Open addressing, 64-bit keys (0 is empty), linear probing, grown at 50%. */

typedef struct map_slot {
  uint64_t key;
  uint64_t a, b, c; /* values, by map */
} map_slot;

typedef struct map {
  map_slot *v;
  size_t cap, n;
} map;

static uint64_t mix(uint64_t k)
{
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
}

static map_slot *map_find(map *m, uint64_t key)
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

static map_slot *map_put(map *m, uint64_t key)
{
  if (!key)
    return NULL;
  maps_dirty = true;
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

static void map_del(map *m, uint64_t key)
{
  map_slot *s = map_find(m, key);
  if (!s)
    return;
  maps_dirty = true;
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

static void map_free(map *m)
{
  free(m->v);
  m->v = NULL;
  m->cap = m->n = 0;
}

/* handles: pointer -> a = id, b = kind, c = references (the app's count). */
static map handles;
static uint64_t next_handle_id;
/* mapped: pointer -> a = id. */
static map mapped;
/* USM allocations, sorted by base, for pointers into their middle. */
typedef struct usm_alloc {
  uint64_t base, size, id;
} usm_alloc;
static usm_alloc *usm_allocs;
static size_t nusm_allocs, cap_usm_allocs;

/* The allocation holding p, or NULL. */
static const usm_alloc *usm_find(uint64_t p)
{
  size_t lo = 0, hi = nusm_allocs;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (usm_allocs[mid].base <= p)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo && p < usm_allocs[lo - 1].base + usm_allocs[lo - 1].size)
    return &usm_allocs[lo - 1];
  return NULL;
}

static void usm_add(uint64_t base, uint64_t size, uint64_t id)
{
  maps_dirty = true;
  if (nusm_allocs == cap_usm_allocs) {
    size_t cap = cap_usm_allocs ? cap_usm_allocs * 2 : 64;
    usm_alloc *v = realloc(usm_allocs, cap * sizeof *v);
    if (!v)
      return;
    usm_allocs = v;
    cap_usm_allocs = cap;
  }
  size_t i = nusm_allocs;
  while (i && usm_allocs[i - 1].base > base) {
    usm_allocs[i] = usm_allocs[i - 1];
    i--;
  }
  usm_allocs[i] = (usm_alloc){base, size ? size : 1, id};
  nusm_allocs++;
}
/* Calls of which a READBACK may come: entry ticket -> a = seq. */
static map memo;
/* Device commands whose device times will come (REC_F_DEVTIME): ticket ->
 * (seq, queue id, api). */
static map devmemo;
/* Stacks: hash -> a = id. */
static map stacks;
static uint64_t next_stack_id;

/* ---- Text ------------------------------------------------------------------------- */

typedef struct text {
  char *p;
  size_t len, cap;
} text;

/* Room for n more bytes and the NUL: the check inline (every byte of every
 * call's text passes it), the growth out of line. */
__attribute__((noinline)) static void t_grow(text *t, size_t n)
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

static void t_c(text *t, char c)
{
  t_reserve(t, 1);
  t->p[t->len++] = c;
  t->p[t->len] = 0;
}

/* A number, its digits written in place from the last, two at a time. */
static void t_u64(text *t, uint64_t v)
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

static void t_i64(text *t, int64_t v)
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
static void t_str(text *t, const char *s, size_t n)
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

/* ---- SQL helpers --------------------------------------------------------------------- */

#define BUSY_MS 30000u /* the longest wait for another process's lock (busy_wait) */

static void fail_sql(const char *what)
{
  if (failed)
    return;
  failed = true;
  if (salvaging) { /* writer_salvage says why */
    snprintf(salvage_error, sizeof salvage_error, "%s: %s", what,
             db ? sqlite3_errmsg(db) : "no database");
    return;
  }
  atomic_store(&shim_recording, false);
  /* Locked: say by whom it can be, and for how long it was waited for. */
  char why[256];
  if (db && (sqlite3_errcode(db) == SQLITE_BUSY || sqlite3_errcode(db) == SQLITE_LOCKED))
    snprintf(why, sizeof why, "another process held the file for %u s: a reader inside a "
             "transaction, or another recorder", BUSY_MS / 1000);
  else
    snprintf(why, sizeof why, "%s", db ? sqlite3_errmsg(db) : "no database");
  fprintf(stderr, "pitrace: recording to %s stopped (%s: %s); the application "
                  "goes on unrecorded, and the session is marked incomplete\n",
          shim_cfg.path, what, why);
  if (db) {
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    char sql[256];
    snprintf(sql, sizeof sql, "UPDATE sessions SET ended='incomplete', "
             "incomplete_reason=%s WHERE id=%lld", "'recording failed: disk full or "
             "write error'", (long long)session_id);
    sqlite3_exec(db, sql, NULL, NULL, NULL);
  }
}

/* The write lock is taken when there is something to write, not held
 * between commits: a transaction begins (IMMEDIATE: the lock first, so
 * that two processes never each hold a read lock the other's commit waits
 * for) at the first statement after a commit. */
static bool begin_writing(const char *what)
{
  if (!sqlite3_get_autocommit(db))
    return true;
  if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
    fail_sql(what);
    return false;
  }
  return true;
}

static bool step(sqlite3_stmt *s, const char *what)
{
  if (!begin_writing(what)) {
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return false;
  }
  int rc = sqlite3_step(s);
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    fail_sql(what);
    return false;
  }
  return true;
}

/* Commits what was written since the last commit (nothing: true). */
static bool commit_writes(void)
{
  if (sqlite3_get_autocommit(db))
    return true;
  if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    fail_sql("writing the session");
    return false;
  }
  return true;
}

static sqlite3_stmt *prepare(const char *sql)
{
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) {
    fprintf(stderr, "pitrace: internal error preparing '%s': %s\n", sql, sqlite3_errmsg(db));
    return NULL;
  }
  return s;
}

/* ---- Payloads ------------------------------------------------------------------------- */

/* Stores a payload: inline when small, else once by its hash. */
static void store_data(uint64_t seq, unsigned position, const char *role, unsigned index,
                       const void *bytes, uint64_t size, uint64_t full, int64_t captured_seq)
{
  sqlite3_bind_int64(st_data, 1, session_id);
  sqlite3_bind_int64(st_data, 2, (int64_t)seq);
  sqlite3_bind_int(st_data, 3, (int)position);
  sqlite3_bind_text(st_data, 4, role, -1, SQLITE_STATIC);
  sqlite3_bind_int(st_data, 5, (int)index);
  sqlite3_bind_int64(st_data, 6, (int64_t)full);
  if (captured_seq >= 0)
    sqlite3_bind_int64(st_data, 9, captured_seq);
  if (size <= PT_INLINE_DATA || !bytes) {
    if (bytes && (size || full == 0))
      sqlite3_bind_blob(st_data, 8, bytes, (int)size, SQLITE_STATIC);
    sqlite3_bind_int64(st_data, 10, (int64_t)size);
  } else {
    unsigned char key[PT_BLOB_KEY];
    pt_blob_key(bytes, size, key);
    sqlite3_bind_blob(st_blob, 1, key, PT_BLOB_KEY, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st_blob, 2, (int64_t)size);
    sqlite3_bind_blob64(st_blob, 3, bytes, size, SQLITE_STATIC);
    if (!step(st_blob, "storing data"))
      return;
    sqlite3_bind_blob(st_data, 7, key, PT_BLOB_KEY, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st_data, 10, (int64_t)size);
  }
  step(st_data, "storing data");
}

/* ---- Records ---------------------------------------------------------------------------- */


typedef struct item_view {
  const rec_item *it;
  const unsigned char *data;
} item_view;

/* A record's items; `foreign`: another process's records (salvage), whose
 * heap pointers are not ours. */
static unsigned read_items_of(const unsigned char *p, unsigned n, item_view *out, unsigned max,
                              bool foreign)
{
  unsigned k = 0;
  for (unsigned i = 0; i < n; i++) {
    const rec_item *it = (const rec_item *)p;
    p += sizeof *it;
    const unsigned char *d = p;
    if (it->heap) {
      void *ptr;
      memcpy(&ptr, p, sizeof ptr);
      d = foreign ? NULL : ptr;
      p += sizeof(void *);
    } else {
      p += (it->size + 7) & ~(uint64_t)7;
    }
    if (k < max)
      out[k++] = (item_view){it, d};
  }
  return k;
}

/* On the merge thread (an encoder reads no variable the merge thread
 * writes often: `salvaging` shares its cache line with some). */
static unsigned read_items(const unsigned char *p, unsigned n, item_view *out, unsigned max)
{
  return read_items_of(p, n, out, max, salvaging);
}

static void free_heap_items(item_view *v, unsigned n)
{
  for (unsigned i = 0; i < n && !salvaging; i++)
    if (v[i].it->heap)
      free((void *)v[i].data);
}

static const item_view *find_item(const item_view *v, unsigned n, unsigned pos, uint8_t role)
{
  for (unsigned i = 0; i < n; i++)
    if (v[i].it->position == pos && v[i].it->role == role)
      return &v[i];
  return NULL;
}

/* Values a call's text needs from the writer's maps (handle ids, USM and
 * mapped pointers), in the order the text asks for them. */
typedef struct ids {
  uint64_t *v;
  size_t n, cap;
} ids;

/* An array that doubles, grown by one element's room (`first`: its first
 * capacity); the writer cannot go on without memory (as t_grow). */
static void *grow_array(void *p, size_t *cap, size_t elem, size_t first)
{
  size_t c = *cap ? *cap * 2 : first;
  void *q = realloc(p, c * elem);
  if (!q)
    abort();
  *cap = c;
  return q;
}

static void ids_push(ids *d, uint64_t v)
{
  if (d->n == d->cap)
    d->v = grow_array(d->v, &d->cap, sizeof *d->v, 16);
  d->v[d->n++] = v;
}

/* How a call's text is made. Its order-dependent part is what the maps
 * say (an id is handed out, a handle released, a pointer found in a USM
 * allocation) at the call's place in the merged order: only the merge
 * thread can ask them. The rest (printing numbers, strings, payloads as
 * hex, an info query's answer) is most of the work, and the encoder
 * threads do it: the merge thread *finds* the values (FMT_FIND: asks the
 * maps, keeps the answers, prints nothing it need not), and an encoder
 * *prints* the call from its ring records with them (FMT_PRINT: the same
 * functions, in the same order, the answers taken instead of asked).
 * FMT_NOW does both at once on the merge thread: salvage, calls whose
 * payloads are on the heap, a call still running at a commit. */
typedef enum { FMT_NOW, FMT_FIND, FMT_PRINT } fmt_mode;

typedef struct fmt {
  fmt_mode mode;
  ids *found;        /* FIND: appended to; PRINT: read from */
  size_t *at;        /* PRINT: the next to read */
} fmt;

/* Printing at once: one for every call (nothing in it changes). */
static const fmt fmt_now = {FMT_NOW, NULL, NULL}; /* const: the compiler folds its mode */

/* Printing: the next value found (0 past the last, which printing a call
 * whose values were all found never reaches). */
static inline uint64_t f_take(const fmt *f)
{
  return *f->at < f->found->n ? f->found->v[(*f->at)++] : 0;
}

/* What finding prints on its way (the few pieces it does not skip; the
 * merge thread's only), dropped after each call. */
static text find_scratch;

/* A value found now (NOW, FIND: kept) or earlier (PRINT). */
static inline uint64_t f_value(const fmt *f, uint64_t (*ask)(uint64_t, uint8_t, uint64_t),
                               uint64_t a, uint8_t b, uint64_t c)
{
  if (f->mode == FMT_PRINT)
    return f_take(f);
  uint64_t v = ask(a, b, c);
  if (f->mode == FMT_FIND)
    ids_push(f->found, v);
  return v;
}

/* A call between its entry and its exit. */
typedef struct pending_call {
  uint64_t ticket, seq, t0;
  uint32_t thread, plugin;
  uint8_t api;
  bool inserted; /* already written as incomplete */
  /* What it releases was released already (release_in_flight): its exit
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

static pending_call *inflight;   /* doubly linked (prev, next) */
static pending_call *free_calls; /* reused, with their buffers */

static void inflight_push(pending_call *c)
{
  c->prev = NULL;
  c->next = inflight;
  if (inflight)
    inflight->prev = c;
  inflight = c;
}

static void inflight_unlink(pending_call *c)
{
  if (c->prev)
    c->prev->next = c->next;
  else
    inflight = c->next;
  if (c->next)
    c->next->prev = c->prev;
}

/* The rings as the merge keeps them (the merge, below, says how): each
 * one's next record seen (NULL: none yet), its ticket, and when it was
 * seen, counted in looks at the heads (`looks`). A binary heap orders the
 * rings with a record seen by that record's ticket; the others wait for
 * the next sweep. A ring is one thread's, whose calls nest: `open` is its
 * innermost call in flight (the others through their `outer`), which the
 * thread's next exit returns from, found without a search. */
typedef struct mring {
  shim_ring *r;
  rec_hdr *h;      /* its next record, seen published; NULL: none */
  uint64_t ticket; /* h's */
  uint64_t seen;   /* the look that revealed the records seen */
  struct pending_call *open;
} mring;

static mring *mrings;
static size_t nmrings, cap_mrings;

static pending_call *call_new(void)
{
  pending_call *c = free_calls;
  if (c) { /* its fields are all set by whoever takes it; its buffers kept */
    free_calls = c->next;
    c->inserted = c->released_early = false;
    c->in.len = c->inl.len = 0;
    c->entry = NULL;
    c->found.n = 0;
    return c;
  }
  return calloc(1, sizeof *c);
}

static void call_free(pending_call *c)
{
  c->next = free_calls;
  free_calls = c;
}


/* A payload: inline in the call when small (printed with the call's
 * text), else a data row by hash (stored by the merge thread, which owns
 * the database). With data none, an info query's answer (the only payload
 * then) stays in its call whatever its size: no payload row for a call
 * whose data the user did not ask for. */
static void keep_data(const fmt *f, pending_call *c, unsigned position, const char *role,
                      unsigned index, const void *bytes, uint64_t size, uint64_t full)
{
  if (!bytes) { /* another process's heap (salvage): its size is all there is */
    if (f->mode != FMT_PRINT)
      store_data(c->seq, position, role, index, NULL, size, full, -1);
    return;
  }
  if (size > PT_INLINE_DATA && !(shim_cfg.data_mode == DATA_NONE && strcmp(role, "value") == 0)) {
    if (f->mode != FMT_PRINT)
      store_data(c->seq, position, role, index, bytes, size, full, -1);
    return;
  }
  if (f->mode == FMT_FIND)
    return;
  text *t = &c->inl;
  if (t->len)
    t_c(t, ',');
  t_c(t, '[');
  t_u64(t, position);
  t_put(t, ",\"", 2);
  t_put(t, role, strlen(role));
  t_put(t, "\",", 2);
  t_u64(t, index);
  t_c(t, ',');
  t_u64(t, full);
  t_put(t, ",\"", 2);
  t_reserve(t, 2 * size);
  const unsigned char *b = bytes;
  static const char pairs[] = /* each byte's two digits */
      "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F"
      "202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F"
      "404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F"
      "606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F"
      "808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9F"
      "A0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBF"
      "C0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDF"
      "E0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF";
  char *d = t->p + t->len; /* a local pointer: as in t_str */
  for (uint64_t i = 0; b && i < size; i++, d += 2)
    memcpy(d, pairs + 2 * b[i], 2);
  *d = 0;
  t->len = (size_t)(d - t->p);
  t_put(t, "\"]", 2);
}
/* The function of the call being processed (for handles' created_by). */
static const char *cur_api = "";

/* A thread's notes, waiting for its next call. */
typedef struct thread_state {
  uint32_t index;
  rec_note **notes;
  size_t nnotes;
} thread_state;

static thread_state *threads;
static size_t nthreads;
static size_t notes_waiting; /* in all threads */

static thread_state *thread_of(uint32_t index)
{
  for (size_t i = 0; i < nthreads; i++)
    if (threads[i].index == index)
      return &threads[i];
  thread_state *t = realloc(threads, (nthreads + 1) * sizeof *t);
  if (!t)
    return NULL;
  threads = t;
  threads[nthreads] = (thread_state){index, NULL, 0};
  return &threads[nthreads++];
}

/* A fresh id for the object at ptr, stored in the handles table:
 * `created` when its call made it, else first seen now. */
static uint64_t handle_store(uint64_t ptr, uint8_t kind, uint64_t seq, bool created)
{
  map_slot *s = map_put(&handles, ptr);
  if (!s)
    return 0;
  s->a = ++next_handle_id;
  s->b = kind;
  s->c = 1;
  sqlite3_bind_int64(st_handle, 1, session_id);
  sqlite3_bind_int64(st_handle, 2, (int64_t)s->a);
  sqlite3_bind_text(st_handle, 3, pi_object_kind_name(kind), -1, SQLITE_STATIC);
  sqlite3_bind_int64(st_handle, 4, (int64_t)seq);
  sqlite3_bind_int(st_handle, 5, created);
  sqlite3_bind_text(st_handle, 6, cur_api, -1, SQLITE_STATIC);
  step(st_handle, "storing a handle");
  return s->a;
}

/* The stable id of a handle (0 for NULL), seen first now if unknown. */
static uint64_t handle_id(uint64_t ptr, uint8_t kind, uint64_t seq)
{
  if (!ptr)
    return 0;
  map_slot *s = map_find(&handles, ptr);
  return s ? s->a : handle_store(ptr, kind, seq, false);
}

/* A new object: a fresh id, unless a platform or device seen before. */
static uint64_t handle_new(uint64_t ptr, uint8_t kind, uint64_t seq)
{
  if (!ptr)
    return 0;
  map_slot *s = map_find(&handles, ptr);
  if (s && (kind == PI_OBJ_PLATFORM || kind == PI_OBJ_DEVICE) && s->b == kind)
    return s->a;
  return handle_store(ptr, kind, seq, true);
}

static void usm_free(uint64_t ptr, uint64_t seq)
{
  for (size_t i = 0; i < nusm_allocs; i++)
    if (usm_allocs[i].base == ptr) {
      sqlite3_bind_int64(st_handle_release, 1, (int64_t)seq);
      sqlite3_bind_text(st_handle_release, 2, cur_api, -1, SQLITE_STATIC);
      sqlite3_bind_int64(st_handle_release, 3, session_id);
      sqlite3_bind_int64(st_handle_release, 4, (int64_t)usm_allocs[i].id);
      step(st_handle_release, "storing a free");
      memmove(&usm_allocs[i], &usm_allocs[i + 1], (nusm_allocs - i - 1) * sizeof *usm_allocs);
      nusm_allocs--;
      return;
    }
}

static void handle_release(uint64_t ptr, uint64_t seq)
{
  map_slot *s = map_find(&handles, ptr);
  if (!s)
    return;
  maps_dirty = true;
  if (--s->c > 0)
    return;
  sqlite3_bind_int64(st_handle_release, 1, (int64_t)seq);
  sqlite3_bind_text(st_handle_release, 2, cur_api, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st_handle_release, 3, session_id);
  sqlite3_bind_int64(st_handle_release, 4, (int64_t)s->a);
  step(st_handle_release, "storing a release");
  map_del(&handles, ptr);
}

/* An address that a live object has came back from a call that makes a
 * new one: the old object is gone (its memory was reused), and the call
 * that released it is still in flight: it returned after the new object's
 * maker did, so its exit comes later in the order, where it would release
 * the new object (seen with two threads handing buffers to each other:
 * record::an_object_made_by_one_thread_and_used_by_another_keeps_its_order).
 * Its release takes effect now, as its own (its seq and function), and
 * its exit releases nothing. `what`: a handle, a USM allocation (ptr its
 * base) or a mapped pointer. Nothing in flight: the old object went some
 * other way, and the new one replaces it, as before. */
enum { GONE_HANDLE, GONE_USM, GONE_MAPPED };

static void release_in_flight(uint64_t ptr, int what)
{
  for (pending_call *c = inflight; c; c = c->next) {
    const pi_api_desc *api = &pi_api_table[c->api];
    bool usm = c->api == PI_API_piextUSMFree, unmap = c->api == PI_API_piEnqueueMemUnmap;
    bool hit = what == GONE_USM      ? usm && c->argv[1] == ptr
               : what == GONE_MAPPED ? unmap && c->argv[2] == ptr
                                     : api->releases >= 0 && !usm && c->argv[api->releases] == ptr;
    if (!hit || c->released_early)
      continue;
    c->released_early = true;
    const char *maker = cur_api;
    cur_api = api->name;
    if (what == GONE_USM) {
      usm_free(ptr, c->seq);
    } else if (what == GONE_MAPPED) {
      map_del(&mapped, ptr);
    } else {
      map_slot *h = map_find(&handles, ptr);
      if (h)
        h->c = 1; /* gone, however often it was retained */
      handle_release(ptr, c->seq);
    }
    cur_api = maker;
    return;
  }
}

/* A handle a call made (its out-parameter): a fresh id, the object that
 * had its address before released if its release is in flight. */
static uint64_t handle_made(uint64_t ptr, uint8_t kind, uint64_t seq)
{
  map_slot *s = ptr ? map_find(&handles, ptr) : NULL;
  if (s && !((kind == PI_OBJ_PLATFORM || kind == PI_OBJ_DEVICE) && s->b == kind))
    release_in_flight(ptr, GONE_HANDLE);
  return handle_new(ptr, kind, seq);
}

/* What a pointer is: a mapped pointer's id (1), a USM allocation's id
 * and the offset into it (2), or neither (0); as many words follow it
 * among the values found. */
enum { PTR_PLAIN, PTR_MAPPED, PTR_USM };

static uint64_t pointer_kind(uint64_t p, uint64_t id_off[2])
{
  map_slot *m = map_find(&mapped, p);
  if (m) {
    id_off[0] = m->a;
    return PTR_MAPPED;
  }
  const usm_alloc *u = p ? usm_find(p) : NULL;
  if (u) {
    id_off[0] = u->id;
    id_off[1] = p - u->base;
    return PTR_USM;
  }
  return PTR_PLAIN;
}

/* A pointer as USM "usm#id+offset", a mapped pointer, or a plain number. */
static void t_pointer(const fmt *f, text *t, uint64_t p)
{
  uint64_t kind, id_off[2] = {0, 0};
  if (f->mode == FMT_PRINT) {
    kind = f_take(f);
    for (uint64_t i = 0; i < kind && i < 2; i++)
      id_off[i] = f_take(f);
  } else {
    kind = pointer_kind(p, id_off);
    if (f->mode == FMT_FIND) {
      ids_push(f->found, kind);
      for (uint64_t i = 0; i < kind; i++)
        ids_push(f->found, id_off[i]);
      return;
    }
  }
  if (kind == PTR_MAPPED) {
    t_put(t, "\"mapped#", 8);
    t_u64(t, id_off[0]);
    t_c(t, '"');
  } else if (kind == PTR_USM) {
    t_put(t, "\"usm#", 5);
    t_u64(t, id_off[0]);
    if (id_off[1]) {
      t_c(t, '+');
      t_u64(t, id_off[1]);
    }
    t_c(t, '"');
  } else {
    t_u64(t, p);
  }
}

static uint64_t load(const unsigned char *p, size_t w)
{
  uint64_t v = 0;
  if (p && w)
    memcpy(&v, p, w > 8 ? 8 : w);
  if (w == 4)
    v &= 0xffffffffu;
  return v;
}

/* The item when it holds at least n bytes (a damaged or salvaged record
 * may hold fewer), else NULL. */
static const item_view *sized(const item_view *iv, size_t n)
{
  return iv && iv->data && iv->it->size >= n ? iv : NULL;
}

static size_t elem_width(const pi_param_desc *p)
{
  switch (p->vt) {
  case PI_VT_U32: case PI_VT_I32: case PI_VT_BOOL: return 4;
  case PI_VT_CBOOL: return 1;
  case PI_VT_U64: return 8;
  case PI_VT_ENUM: case PI_VT_FLAGS: return p->en ? p->en->width : 4;
  default: return sizeof(void *);
  }
}

/* An array of handles (ids from `id_of`: known or new) or of numbers. */
static void t_array(const fmt *f, text *t, const pi_param_desc *p, const item_view *iv,
                    uint64_t seq, uint64_t (*id_of)(uint64_t, uint8_t, uint64_t))
{
  if (!iv || !iv->data) { /* none, or another process's heap (salvage): lost */
    t_put(t, "[]", 2);
    return;
  }
  size_t w = p->kind == PI_PK_HANDLES ? sizeof(void *) : elem_width(p);
  t_c(t, '[');
  for (uint64_t i = 0; i + w <= iv->it->size; i += w) {
    if (i)
      t_c(t, ',');
    uint64_t e = load(iv->data + i, w);
    if (p->kind == PI_PK_HANDLES)
      t_u64(t, f_value(f, id_of, e, p->obj, seq));
    else if (p->vt == PI_VT_I32)
      t_i64(t, (int32_t)e);
    else
      t_u64(t, e);
  }
  t_c(t, ']');
}

static void t_opt_str(text *t, const item_view *is)
{
  if (is && is->data) /* not another process's heap (salvage): lost */
    t_str(t, (const char *)is->data, is->it->size);
  else
    t_put(t, "null", 4);
}

/* Whether a parameter's text (as an in-, or an out-parameter) asks the
 * writer's maps anything: the only parameters that finding a call's
 * values (FMT_FIND) looks at. */
static bool asks_maps(const pi_param_desc *p, bool out)
{
  switch (p->kind) {
  case PI_PK_SCALAR:
    return p->vt == PI_VT_PTR ||
           (out && (p->creates == PI_OBJ_USM || p->creates == PI_OBJ_MAPPED));
  case PI_PK_HANDLE: case PI_PK_HANDLES:
    return true;
  case PI_PK_IMAGE_DESC: case PI_PK_USMREF: case PI_PK_USMPTR: case PI_PK_HOSTPTR:
    return !out;
  case PI_PK_INFO:
    return out;
  default:
    return false;
  }
}

/* The JSON of an in-parameter (inlined: on the merge thread's path of
 * every call). */
static inline __attribute__((always_inline)) void
encode_in(const fmt *f, text *t, const pi_param_desc *p, unsigned pos, uint64_t v,
          const item_view *items, unsigned nitems, uint64_t seq)
{
  if (f->mode == FMT_FIND && !asks_maps(p, false))
    return;
  /* The scalars and handles, most parameters, need no item: none looked
   * for. */
  bool has_items = p->kind != PI_PK_SCALAR && p->kind != PI_PK_HANDLE;
  const item_view *iv = has_items ? find_item(items, nitems, pos, ITEM_VALUE) : NULL;
  const item_view *is = has_items ? find_item(items, nitems, pos, ITEM_STRING) : NULL;
  switch (p->kind) {
  case PI_PK_SCALAR:
    if (p->vt == PI_VT_I32)
      t_i64(t, (int32_t)v);
    else if (p->vt == PI_VT_PTR)
      t_pointer(f, t, v);
    else
      t_u64(t, p->vt == PI_VT_CBOOL ? (v & 0xff) : v);
    return;
  case PI_PK_HANDLE:
    t_u64(t, f_value(f, handle_id, v, p->obj, seq));
    return;
  case PI_PK_HANDLES:
  case PI_PK_ARRAY:
  case PI_PK_PROPS:
    if (!v) {
      t_put(t, "null", 4);
      return;
    }
    t_array(f, t, p, iv, seq, handle_id);
    return;
  case PI_PK_STRING:
    t_opt_str(t, is);
    return;
  case PI_PK_PROPERTIES:
    t_c(t, '[');
    for (unsigned i = 0, k = 0; i < nitems; i++)
      if (items[i].it->position == pos && items[i].it->role == ITEM_STRING) {
        if (k++)
          t_c(t, ',');
        if (items[i].data)
          t_str(t, (const char *)items[i].data, items[i].it->size);
        else /* another process's heap (salvage): lost */
          t_put(t, "null", 4);
      }
    t_c(t, ']');
    return;
  case PI_PK_BINARIES:
    t_c(t, '[');
    for (unsigned i = 0, k = 0; i < nitems; i++)
      if (items[i].it->position == pos && items[i].it->role == ITEM_META) {
        unsigned j = items[i].it->index;
        const item_view *tg = NULL, *in = NULL;
        for (unsigned x = 0; x < nitems; x++)
          if (items[x].it->position == pos && items[x].it->index == j) {
            if (items[x].it->role == ITEM_STRING)
              tg = &items[x];
            if (items[x].it->role == ITEM_IN)
              in = &items[x];
          }
        if (k++)
          t_c(t, ',');
        t_c(t, '[');
        if (tg && tg->data)
          t_str(t, (const char *)tg->data, tg->it->size);
        else
          t_put(t, "null", 4);
        t_c(t, ',');
        t_u64(t, items[i].data && items[i].it->size ? items[i].data[0] : 0);
        t_c(t, ',');
        t_u64(t, in ? in->it->full : 0);
        t_c(t, ']');
      }
    t_c(t, ']');
    return;
  case PI_PK_IMAGE_FORMAT:
    if ((iv = sized(iv, sizeof(pi_image_format)))) {
      pi_image_format f;
      memcpy(&f, iv->data, sizeof f);
      t_c(t, '[');
      t_u64(t, (uint64_t)f.image_channel_order);
      t_c(t, ',');
      t_u64(t, (uint64_t)f.image_channel_data_type);
      t_c(t, ']');
    } else {
      t_put(t, "null", 4);
    }
    return;
  case PI_PK_IMAGE_DESC:
    if ((iv = sized(iv, sizeof(pi_image_desc)))) {
      pi_image_desc d;
      memcpy(&d, iv->data, sizeof d);
      uint64_t w[10] = {(uint64_t)d.image_type, d.image_width, d.image_height, d.image_depth,
                        d.image_array_size, d.image_row_pitch, d.image_slice_pitch,
                        d.num_mip_levels, d.num_samples,
                        f_value(f, handle_id, (uint64_t)(uintptr_t)d.buffer, PI_OBJ_MEM, seq)};
      t_c(t, '[');
      for (int i = 0; i < 10; i++) {
        if (i)
          t_c(t, ',');
        t_u64(t, w[i]);
      }
      t_c(t, ']');
    } else {
      t_put(t, "null", 4);
    }
    return;
  case PI_PK_MEM_OBJ_PROPERTY:
    if ((iv = sized(iv, sizeof(pi_mem_obj_property)))) {
      pi_mem_obj_property m;
      memcpy(&m, iv->data, sizeof m);
      t_c(t, '[');
      t_u64(t, (uint64_t)m.type);
      t_c(t, ',');
      t_u64(t, m.mem_access);
      t_c(t, ']');
    } else {
      t_put(t, "null", 4);
    }
    return;
  case PI_PK_USMREF:
    if ((iv = sized(iv, sizeof(void *))))
      t_pointer(f, t, load(iv->data, sizeof(void *)));
    else
      t_put(t, "null", 4);
    return;
  case PI_PK_USMPTR:
  case PI_PK_HOSTPTR:
    t_pointer(f, t, v);
    return;
  case PI_PK_FNPTR:
    t_u64(t, v != 0);
    return;
  default: /* bytes, strings, blobs: their data rows hold them; 0 is NULL */
    if (v)
      t_put(t, "1", 1);
    else
      t_put(t, "null", 4);
    return;
  }
}

/* pi_enum_lookup, remembered: it scans the enumeration (over a hundred
 * device queries), and an info query's answer needs its entry. */
static const pi_enum_entry *enum_entry(const pi_enum_desc *en, int64_t v)
{
  static __thread struct {
    const pi_enum_desc *en;
    int64_t v;
    const pi_enum_entry *e;
  } seen[64]; /* each thread's: the merge thread's and every encoder's */
  size_t k = mix((uint64_t)(uintptr_t)en ^ (uint64_t)v) & 63;
  if (seen[k].en != en || seen[k].v != v) {
    seen[k].en = en;
    seen[k].v = v;
    seen[k].e = pi_enum_lookup(en, v);
  }
  return seen[k].e;
}

/* The JSON of an out-parameter after a successful call; creates ids. */
static void encode_out(const fmt *f, text *t, const pi_api_desc *api, unsigned pos,
                       const uint64_t *argv, const item_view *items, unsigned nitems,
                       uint64_t seq)
{
  const pi_param_desc *p = &api->params[pos];
  if (f->mode == FMT_FIND && !asks_maps(p, true))
    return;
  const item_view *iv = find_item(items, nitems, pos, ITEM_VALUE);
  const item_view *is = find_item(items, nitems, pos, ITEM_STRING);
  if (!argv[pos]) {
    t_put(t, "null", 4); /* a NULL out pointer: nothing returned */
    return;
  }
  switch (p->kind) {
  case PI_PK_SCALAR:
    if (!iv || !iv->data) {
      t_put(t, "null", 4);
      return;
    }
    {
      uint64_t v = load(iv->data, iv->it->size);
      if (p->creates == PI_OBJ_USM && f->mode != FMT_PRINT) {
        int sz = -1;
        for (unsigned i = 0; i < api->nparams; i++)
          if (strcmp(api->params[i].name, "size") == 0)
            sz = (int)i;
        uint64_t id = ++next_handle_id;
        const usm_alloc *old = usm_find(v);
        if (old)
          release_in_flight(old->base, GONE_USM);
        usm_add(v, sz >= 0 ? argv[sz] : 1, id);
        {
          sqlite3_bind_int64(st_handle, 1, session_id);
          sqlite3_bind_int64(st_handle, 2, (int64_t)id);
          sqlite3_bind_text(st_handle, 3, "usm", -1, SQLITE_STATIC);
          sqlite3_bind_int64(st_handle, 4, (int64_t)seq);
          sqlite3_bind_int(st_handle, 5, 1);
  sqlite3_bind_text(st_handle, 6, cur_api, -1, SQLITE_STATIC);
          step(st_handle, "storing a USM allocation");
        }
        t_pointer(f, t, v);
      } else if (p->creates == PI_OBJ_USM) {
        t_pointer(f, t, v);
      } else if (p->creates == PI_OBJ_MAPPED) {
        if (f->mode != FMT_PRINT) {
          if (map_find(&mapped, v))
            release_in_flight(v, GONE_MAPPED);
          map_slot *s = map_put(&mapped, v);
          if (s)
            s->a = ++next_handle_id;
        }
        t_pointer(f, t, v);
      } else if (p->vt == PI_VT_I32) {
        t_i64(t, (int32_t)v);
      } else if (p->vt == PI_VT_PTR) {
        t_pointer(f, t, v);
      } else {
        t_u64(t, v);
      }
    }
    return;
  case PI_PK_HANDLE:
    iv = sized(iv, sizeof(void *));
    t_u64(t, iv ? f_value(f, handle_made, load(iv->data, sizeof(void *)), p->obj, seq) : 0);
    return;
  case PI_PK_HANDLES:
  case PI_PK_ARRAY:
    t_array(f, t, p, iv, seq, handle_new);
    return;
  case PI_PK_STRING:
    t_opt_str(t, is);
    return;
  case PI_PK_INFO: {
    /* Readable text from the one decoder; the bytes go to a data row. */
    if (!iv || !iv->data) {
      t_put(t, "null", 4);
      return;
    }
    const pi_enum_entry *e = enum_entry(p->en, (int64_t)argv[p->query]);
    if (f->mode == FMT_FIND) { /* only handles ask the maps */
      for (size_t i = 0; e && e->vt == PI_VT_HANDLE && i < iv->it->size / sizeof(void *); i++)
        f_value(f, handle_new, load(iv->data + i * 8, 8), e->obj, seq);
      return;
    }
    char store[512];
    pi_sbuf b;
    pi_sbuf_init(&b, store, sizeof store);
    if (e && (e->vt == PI_VT_HANDLE)) {
      size_t n = iv->it->size / sizeof(void *);
      if (e->is_array)
        pi_sbuf_puts(&b, "[");
      for (size_t i = 0; i < n; i++) {
        uint64_t id = f_value(f, handle_new, load(iv->data + i * 8, 8), e->obj, seq);
        pi_sbuf_printf(&b, "%s%s#%llu", i ? ", " : "", pi_object_kind_name(e->obj),
                       (unsigned long long)id);
      }
      if (e->is_array)
        pi_sbuf_puts(&b, "]");
    } else if (e) {
      pi_format_value(&b, e->vt, e->obj, e->en, iv->data, iv->it->size, e->is_array);
    } else {
      pi_format_value(&b, PI_VT_BYTES, 0, NULL, iv->data, iv->it->size, false);
    }
    t_str(t, b.p, b.len);
    pi_sbuf_free(&b);
    return;
  }
  default:
    t_put(t, "null", 4);
    return;
  }
}

static int64_t stack_id(const uintptr_t *frames, unsigned n)
{
  if (!n)
    return -1;
  uint64_t h = XXH3_64bits(frames, n * sizeof *frames) | 1;
  map_slot *s = map_find(&stacks, h);
  if (s)
    return (int64_t)s->a;
  s = map_put(&stacks, h);
  if (!s)
    return -1;
  s->a = ++next_stack_id;
  text t = {0};
  for (unsigned i = 0; i < n; i++) {
    Dl_info info;
    char line[512];
    if (!salvaging && dladdr((void *)(frames[i] - 1), &info) && info.dli_fname) {
      const char *mod = strrchr(info.dli_fname, '/');
      mod = mod ? mod + 1 : info.dli_fname;
      if (info.dli_sname)
        snprintf(line, sizeof line, "%s!%s+0x%lx", mod, info.dli_sname,
                 (unsigned long)(frames[i] - (uintptr_t)info.dli_saddr));
      else
        snprintf(line, sizeof line, "%s+0x%lx", mod,
                 (unsigned long)(frames[i] - (uintptr_t)info.dli_fbase));
    } else {
      snprintf(line, sizeof line, "0x%lx", (unsigned long)frames[i]);
    }
    t_put(&t, line, strlen(line));
    t_c(&t, '\n');
  }
  sqlite3_bind_int64(st_stack, 1, session_id);
  sqlite3_bind_int64(st_stack, 2, (int64_t)s->a);
  sqlite3_bind_text(st_stack, 3, t.p, (int)t.len, SQLITE_TRANSIENT);
  step(st_stack, "storing a stack");
  free(t.p);
  return (int64_t)s->a;
}

static void write_note(const rec_note *n, uint64_t seq, unsigned idx)
{
  const char *s[5];
  const char *w = (const char *)(n + 1);
  for (int i = 0; i < 5; i++) {
    s[i] = w;
    w += strlen(w) + 1;
  }
  const uint32_t *ids = (const uint32_t *)(const void *)w;
  w += n->num_ids * 4u;
  const void *value = w;
  w += n->value_len;
  text idt = {0};
  t_c(&idt, '[');
  for (uint32_t i = 0; i < n->num_ids; i++) {
    uint32_t id;
    memcpy(&id, ids + i, 4);
    if (i)
      t_c(&idt, ',');
    t_u64(&idt, id);
  }
  t_c(&idt, ']');
  sqlite3_bind_int64(st_note, 1, session_id);
  sqlite3_bind_int64(st_note, 2, (int64_t)seq);
  sqlite3_bind_int(st_note, 3, (int)idx);
  sqlite3_bind_text(st_note, 4, pi_note_kind_name(n->kind), -1, SQLITE_STATIC);
  for (int i = 0; i < 5; i++)
    if (*s[i])
      sqlite3_bind_text(st_note, 5 + i, s[i], -1, SQLITE_TRANSIENT);
  if (n->kind == PIRT_NOTE_SPEC_CONST) {
    sqlite3_bind_text(st_note, 10, idt.p, (int)idt.len, SQLITE_TRANSIENT);
    sqlite3_bind_blob(st_note, 11, value, (int)n->value_len, SQLITE_TRANSIENT);
    sqlite3_bind_int(st_note, 12, (int)n->native);
  }
  sqlite3_bind_text(st_note, 13, w, (int)n->text_len, SQLITE_TRANSIENT);
  sqlite3_bind_text(st_note, 14, cur_api, -1, SQLITE_STATIC);
  step(st_note, "storing a note");
  free(idt.p);
}

/* A knot the writer took (stamp.c): into the ring file, for salvage. */
static void keep_knot(stamp_knot k)
{
  if (!salvaging)
    ringfile_note_knot(k);
}

/* The parameters of a function that say whether it blocks (blocking_*),
 * as a mask, found once from the description (out of line: every entry
 * asks). */
static uint32_t blocking_masks[PI_API_COUNT];
/* Functions whose calls' text costs more to print than to find (an info
 * query's answer, strings): printed by the encoders, where there are
 * processors for them (printing_later). The others (numbers, handles, a
 * kernel argument's few bytes) print as fast as their values are found:
 * measured, moving them only added the encoders' work. */
static bool print_later_api[PI_API_COUNT];
static bool api_facts_found;
/* Whether the encoders print calls (PITRACE_PRINT_LATER: 1, 0, or by
 * default with 4 or more processors: an encoder prints a call in about
 * twice the merge thread's time, as it reads the call's records again,
 * which pays only where it runs beside the merge thread and the
 * application instead of taking their processor). */
static bool printing_later;

static void decide_printing(void)
{
  const char *v = getenv("PITRACE_PRINT_LATER");
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (v && strcmp(v, "1") == 0) {
    printing_later = true;
  } else if (v && strcmp(v, "0") == 0) {
    printing_later = false;
  } else {
    printing_later = cpus >= 4;
    if (v && *v)
      fprintf(stderr, "pitrace: PITRACE_PRINT_LATER=%s is not 0 or 1; %s (%ld processors)\n",
              v, printing_later ? "the encoder threads print info queries and strings"
                                : "every call is printed on the merge thread", cpus);
  }
}

__attribute__((noinline)) static void find_api_facts(void)
{
  for (unsigned id = 0; id < PI_API_COUNT; id++)
    for (unsigned i = 0; i < pi_api_table[id].nparams; i++) {
      const pi_param_desc *p = &pi_api_table[id].params[i];
      if (strncmp(p->name, "blocking", 8) == 0)
        blocking_masks[id] |= 1u << i;
      switch (p->kind) {
      case PI_PK_INFO: case PI_PK_STRING: case PI_PK_STRINGS: case PI_PK_BINARIES:
      case PI_PK_BLOBS: case PI_PK_PROPERTIES:
        print_later_api[id] = true;
        break;
      default:
        break;
      }
    }
  api_facts_found = true;
}

static inline uint32_t blocking_params(const pi_api_desc *api)
{
  if (__builtin_expect(!api_facts_found, 0))
    find_api_facts();
  return blocking_masks[api->id];
}

static inline bool prints_much(const pi_api_desc *api)
{
  if (__builtin_expect(!api_facts_found, 0))
    find_api_facts();
  return print_later_api[api->id];
}

/* Where an entry record's items begin: after its arguments and frames. */
static const unsigned char *entry_items(const rec_entry *e)
{
  return (const unsigned char *)((const uintptr_t *)(e->argv + pi_api_table[e->h.api].nparams) +
                                 e->nframes);
}

static bool any_heap(const item_view *v, unsigned n)
{
  for (unsigned i = 0; i < n; i++)
    if (v[i].it->heap)
      return true;
  return false;
}

/* A call's in-parameters' text into c->in (each one's span in start and
 * end) and the payloads it read into c->inl, from its entry's items. */
static inline __attribute__((always_inline)) void
entry_text(const fmt *f, pending_call *c, const pi_api_desc *api, const item_view *items, unsigned n)
{
  text *t = f->mode == FMT_FIND ? &find_scratch : &c->in;
  for (unsigned i = 0; i < api->nparams; i++) {
    c->start[i] = (uint32_t)t->len;
    if (api->params[i].dir != PI_DIR_OUT)
      encode_in(f, t, &api->params[i], i, c->argv[i], items, n, c->seq);
    c->end[i] = (uint32_t)t->len;
  }
  if (f->mode == FMT_FIND) {
    find_scratch.len = 0;
    c->in.len = 0;
  }
  for (unsigned i = 0; i < n; i++)
    if (items[i].it->role == ITEM_IN)
      keep_data(f, c, items[i].it->position, "in", items[i].it->index, items[i].data,
                items[i].it->size, items[i].it->full);
}

/* A call to be printed later prints its in-parameters now, with the
 * values found at its entry: its entry record goes back to its ring (a
 * commit), or its exit carries payloads on the heap, which the merge
 * thread prints and frees. */
static void materialize(pending_call *c)
{
  const rec_entry *e = c->entry;
  if (!e)
    return;
  item_view items[MAX_ITEMS_VIEW];
  unsigned n = read_items(entry_items(e), e->nitems, items, MAX_ITEMS_VIEW);
  size_t at = 0;
  const fmt f = {FMT_PRINT, &c->found, &at};
  c->in.len = c->inl.len = 0;
  entry_text(&f, c, &pi_api_table[c->api], items, n);
  c->entry = NULL;
  c->found.n = 0;
}

static void process_entry(const rec_entry *e, mring *m)
{
  const pi_api_desc *api = &pi_api_table[e->h.api];
  cur_api = api->name;
  pending_call *c = call_new();
  if (!c)
    return;
  c->ticket = e->h.ticket;
  c->seq = ++seq_counter;
  c->t0 = stamp_to_ns(e->t0, keep_knot);
  c->thread = e->thread;
  c->plugin = e->h.instance; /* shim_instances[i].index is i */
  if (c->t0 > last_t)
    last_t = c->t0;
  c->api = e->h.api;
  /* A few words: a loop, not memcpy's setup (a rep movs here, slow to
   * start on some processors). */
  for (unsigned i = 0; i < api->nparams; i++)
    c->argv[i] = e->argv[i];
  const uintptr_t *frames = (const uintptr_t *)(e->argv + api->nparams);
  c->stack = e->nframes ? stack_id(frames, e->nframes) : -1; /* the call only with a stack */
  item_view items[MAX_ITEMS_VIEW];
  unsigned n = read_items(entry_items(e), e->nitems, items, MAX_ITEMS_VIEW);
  /* Printed later by an encoder, from this record, where that saves the
   * merge thread work; not when salvaging (one thread, another process's
   * rings) or for heap payloads. */
  bool later = printing_later && prints_much(api) && !salvaging && !any_heap(items, n);
  c->entry = later ? e : NULL;
  if (later) { /* two copies, each with its mode known to the compiler */
    const fmt f = {FMT_FIND, &c->found, NULL};
    entry_text(&f, c, api, items, n);
  } else {
    entry_text(&fmt_now, c, api, items, n);
  }
  free_heap_items(items, n);
  /* Data of a call that may come later (a non-blocking read). */
  for (uint32_t m = blocking_params(api); m; m &= m - 1)
    if (e->argv[__builtin_ctz(m)] == 0) {
      map_slot *s = map_put(&memo, c->ticket);
      if (s)
        s->a = c->seq;
    }
  if (api->id == PI_API_piextUSMEnqueueMemcpy && e->argv[1] == 0) {
    map_slot *s = map_put(&memo, c->ticket);
    if (s)
      s->a = c->seq;
  }
  if (e->h.flags & REC_F_DEVTIME) {
    map_slot *s = map_put(&devmemo, c->ticket);
    if (s) {
      const map_slot *q = map_find(&handles, e->argv[0]);
      s->a = c->seq;
      s->b = q ? q->a : 0;
      s->c = api->id;
      maps_dirty = true;
    }
  }
  thread_state *ts = notes_waiting ? thread_of(e->thread) : NULL;
  if (ts && ts->nnotes) {
    for (size_t i = 0; i < ts->nnotes; i++) {
      write_note(ts->notes[i], c->seq, (unsigned)i);
      free(ts->notes[i]);
    }
    notes_waiting -= ts->nnotes;
    ts->nnotes = 0;
  }
  inflight_push(c);
  c->outer = m->open;
  m->open = c;
}

/* The args JSON of a call: in-values from the entry, out-values now
 * (finding: only the out-values' lookups). */
static inline __attribute__((always_inline)) void
build_args(const fmt *f, text *out, pending_call *c, const pi_api_desc *api, const uint64_t *argv,
           const item_view *items, unsigned n, bool ok)
{
  if (f->mode == FMT_FIND) {
    for (unsigned i = 0; ok && argv && i < api->nparams; i++)
      if (api->params[i].dir != PI_DIR_IN)
        encode_out(f, out, api, i, argv, items, n, c->seq);
    return;
  }
  t_c(out, '[');
  for (unsigned i = 0; i < api->nparams; i++) {
    if (i)
      t_c(out, ',');
    if (api->params[i].dir == PI_DIR_IN)
      t_put(out, c->in.p + c->start[i], c->end[i] - c->start[i]);
    else if (ok && argv)
      encode_out(f, out, api, i, argv, items, n, c->seq);
    else
      t_put(out, "null", 4);
  }
  t_c(out, ']');
}

static shim_ring *mrings_from; /* the list head they were taken from */
static mring **heap;
static size_t nheap;
static uint64_t looks;

/* Completed calls are stored in chunks: one call_chunks row holds up to
 * PT_CHUNK_CALLS calls (or CHUNK_BYTES of their text), encoded column by
 * column and compressed (chunk.c), so that a row's cost spreads over many
 * calls (the `calls` view unpacks them). Calls still running at a commit
 * go to `inflight` until they return.
 *
 * Only gathering a chunk's calls needs their order; encoding and
 * compressing it does not, so it runs on encoder threads: the merge
 * thread adds each call's text to a job (pt_chunk_enc_add), hands a full
 * job over, and goes on merging with another; an encoder turns the job
 * into its blob (pt_chunk_enc_finish). An encoder is started when a job is
 * handed over and every encoder is busy, up to one per recording thread
 * and one fewer than the processors online (at least one), so that they
 * grow with the threads that record. Salvage encodes on its own thread. */
#define CHUNK_BYTES (4u << 20)
#define MAX_ENCODERS 16
#define MAX_JOBS (2 * MAX_ENCODERS + 2)

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

/* Chunks handed over wait in memory for the commit, so that the
 * database's write lock is taken at the commit only: between commits
 * other processes recording into the same file get their turn. The commit
 * waits for those still being encoded, and stores them in the order they
 * were handed over (seq order), with the checkpoint that says the rings
 * were read past them. */
typedef struct ready_chunk {
  text blob;
  int64_t first_seq, last_seq, ncalls;
} ready_chunk;

static chunk_job *cur_job; /* the merge thread's, being filled */
static int64_t chunk_id;

/* Between the merge thread and the encoders: everything below. */
static pthread_mutex_t enc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t enc_work = PTHREAD_COND_INITIALIZER; /* a job queued, or stop */
static pthread_cond_t enc_done = PTHREAD_COND_INITIALIZER; /* a job encoded */
static ready_chunk *ready;
static size_t nready, cap_ready;
static chunk_job *queued, **queued_tail = &queued, *free_jobs;
static size_t njobs, nbusy, npending; /* made; encoders at work; handed over, not done */
static pthread_t encoders[MAX_ENCODERS];
static size_t nencoders;
static bool enc_stop;

/* What an encoder prints calls with; its own (and the merge thread's
 * when it encodes a chunk itself). */
typedef struct printer {
  text out;       /* the chunk's text, made again */
  pending_call c; /* the call being printed */
} printer;

static printer merge_printer; /* the merge thread's, for a chunk it encodes itself */

static void printer_free(printer *p)
{
  free(p->out.p);
  free(p->c.in.p);
  free(p->c.inl.p);
  *p = (printer){0};
}

static inline void exit_text(const fmt *f, text *out, pending_call *c, const pi_api_desc *api,
                             const item_view *items, unsigned n, bool ok, size_t *args_len);

/* Prints a job's later calls where they belong among the text of those
 * printed already: the text is made again in row order. */
static void print_later(chunk_job *j, printer *pr)
{
  pt_chunk_enc *e = &j->enc;
  text *out = &pr->out;
  out->len = 0;
  size_t from = 0, k = 0;
  for (size_t i = 0; i < e->n; i++) {
    if (k == j->nlater || j->later[k].row != i) {
      size_t len = pt_chunk_enc_text_of(e, i);
      if (len)
        t_put(out, (const char *)e->text + from, len);
      from += len;
      continue;
    }
    const later_call *l = &j->later[k++];
    const rec_entry *en = l->entry;
    const pi_api_desc *api = &pi_api_table[en->h.api];
    pending_call *c = &pr->c;
    c->api = en->h.api;
    for (unsigned a = 0; a < api->nparams; a++)
      c->argv[a] = en->argv[a];
    c->in.len = c->inl.len = 0;
    ids found = {j->found.v ? j->found.v + l->found_at : NULL, l->nfound, l->nfound};
    size_t next = 0;
    const fmt f = {FMT_PRINT, &found, &next};
    item_view items[MAX_ITEMS_VIEW];
    /* Encoders run only for this process's records: never salvaging. */
    unsigned n = read_items_of(entry_items(en), en->nitems, items, MAX_ITEMS_VIEW, false);
    entry_text(&f, c, api, items, n);
    n = read_items_of((const unsigned char *)(l->exit + 1), l->exit->nitems, items,
                      MAX_ITEMS_VIEW, false);
    size_t at = out->len, args_len;
    exit_text(&f, out, c, api, items, n, l->exit->result == PI_SUCCESS, &args_len);
    if (!pt_chunk_enc_set_text_of(e, i, args_len, out->len - at - args_len))
      abort(); /* a call's text over 4 GiB: as t_reserve */
  }
  /* The text made is the chunk's now; its old buffer, the next one's. */
  unsigned char *old = e->text;
  size_t old_cap = e->text_cap;
  e->text = (unsigned char *)out->p;
  e->text_len = out->len;
  e->text_cap = out->cap;
  out->p = (char *)old;
  out->cap = old_cap;
  out->len = 0;
  j->nlater = 0;
  j->found.n = 0;
  j->later_bytes = 0;
}

/* Encodes a job into its ready chunk, then frees the job (any thread). */
static void encode_job(chunk_job *j, printer *pr)
{
  if (j->nlater)
    print_later(j, pr);
  const void *blob;
  size_t n;
  char why[256];
  if (!pt_chunk_enc_finish(&j->enc, &blob, &n, why, sizeof why)) {
    fprintf(stderr, "pitrace: %s\n", why);
    abort(); /* as t_reserve: out of memory */
  }
  text t = {0};
  t_put(&t, blob, n);
  pthread_mutex_lock(&enc_lock);
  ready[j->order].blob = t;
  j->next = free_jobs;
  free_jobs = j;
  pthread_cond_broadcast(&enc_done);
  pthread_mutex_unlock(&enc_lock);
}

static void *encoder_main(void *arg)
{
  (void)arg;
  pthread_setname_np(pthread_self(), "pitrace-enc"); /* for top, perf, bench_record */
  printer pr = {0};
  pthread_mutex_lock(&enc_lock);
  for (;;) {
    while (!queued && !enc_stop)
      pthread_cond_wait(&enc_work, &enc_lock);
    chunk_job *j = queued;
    if (!j)
      break; /* stopped, and nothing left */
    if (!(queued = j->next))
      queued_tail = &queued;
    nbusy++;
    pthread_mutex_unlock(&enc_lock);
    encode_job(j, &pr);
    pthread_mutex_lock(&enc_lock);
    nbusy--;
    npending--;
    pthread_cond_broadcast(&enc_done);
  }
  pthread_mutex_unlock(&enc_lock);
  printer_free(&pr);
  return NULL;
}

/* Starts one more encoder when every one is busy and the limits allow
 * (enc_lock held); false when none runs at all. Encoders take no signal:
 * the application's threads handle them (a crash handler that waits for
 * the writer, run on an encoder, would wait for itself). */
static bool more_encoders(void)
{
  static long cpus;
  if (!cpus)
    cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t most = cpus > 2 ? (size_t)cpus - 1 : 1;
  if (most > nmrings)
    most = nmrings ? nmrings : 1;
  if (most > MAX_ENCODERS)
    most = MAX_ENCODERS;
  if (salvaging || nencoders >= most || nbusy < nencoders)
    return nencoders > 0;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  if (pthread_create(&encoders[nencoders], NULL, encoder_main, NULL) == 0)
    nencoders++;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return nencoders > 0;
}

/* A job to fill: a free one, a new one, or (all MAX_JOBS at work) the
 * first to come free. */
static chunk_job *take_job(void)
{
  pthread_mutex_lock(&enc_lock);
  while (!free_jobs && njobs >= MAX_JOBS)
    pthread_cond_wait(&enc_done, &enc_lock);
  chunk_job *j = free_jobs;
  if (j)
    free_jobs = j->next;
  else if ((j = calloc(1, sizeof *j)))
    njobs++;
  pthread_mutex_unlock(&enc_lock);
  if (!j)
    abort(); /* as t_reserve: the writer cannot go on without memory */
  return j;
}

/* Hands the chunk being filled over to the encoders (or encodes it here
 * when none runs). */
static void flush_chunk(void)
{
  chunk_job *j = cur_job;
  if (!j || !j->enc.n || failed)
    return;
  cur_job = NULL;
  pthread_mutex_lock(&enc_lock);
  if (nready == cap_ready) {
    size_t cap = cap_ready ? cap_ready * 2 : 16;
    ready_chunk *v = realloc(ready, cap * sizeof *v);
    if (!v)
      abort(); /* as t_reserve: the writer cannot go on without memory */
    ready = v;
    cap_ready = cap;
  }
  j->order = nready++;
  ready[j->order] = (ready_chunk){{NULL, 0, 0}, j->enc.first_seq, j->enc.last_seq,
                                  (int64_t)j->enc.n};
  /* The last chunk of a session that started no encoder: encoded here
   * rather than on a thread started for it, whose end is waited for. */
  bool inline_ = (ending && !nencoders) || !more_encoders();
  if (!inline_) {
    j->next = NULL;
    *queued_tail = j;
    queued_tail = &j->next;
    npending++;
    pthread_cond_signal(&enc_work);
  }
  pthread_mutex_unlock(&enc_lock);
  if (inline_)
    encode_job(j, &merge_printer);
}

/* Waits for the encoders to finish the chunks handed over: until then
 * they may read the records of the calls they print in the rings. */
static void wait_encoders(void)
{
  pthread_mutex_lock(&enc_lock);
  while (npending)
    pthread_cond_wait(&enc_done, &enc_lock);
  pthread_mutex_unlock(&enc_lock);
}

/* Stores the chunks handed over since the last commit, once encoded. */
static void write_chunks(void)
{
  wait_encoders();
  for (size_t i = 0; i < nready; i++) {
    if (!failed) {
      sqlite3_bind_int64(st_chunk, 1, session_id);
      sqlite3_bind_int64(st_chunk, 2, ++chunk_id);
      sqlite3_bind_int64(st_chunk, 3, ready[i].first_seq);
      sqlite3_bind_int64(st_chunk, 4, ready[i].last_seq);
      sqlite3_bind_int64(st_chunk, 5, ready[i].ncalls);
      sqlite3_bind_blob(st_chunk, 6, ready[i].blob.p, (int)ready[i].blob.len, SQLITE_STATIC);
      step(st_chunk, "storing calls");
    }
    free(ready[i].blob.p);
  }
  nready = 0;
}

/* Lets the encoders finish what is queued, and ends them. */
static void stop_encoders(void)
{
  pthread_mutex_lock(&enc_lock);
  enc_stop = true;
  pthread_cond_broadcast(&enc_work);
  pthread_mutex_unlock(&enc_lock);
  for (size_t i = 0; i < nencoders; i++)
    pthread_join(encoders[i], NULL);
  nencoders = 0;
  enc_stop = false;
}

/* Frees the jobs and the chunks not stored (the encoders are stopped). */
static void free_chunks(void)
{
  if (cur_job) {
    cur_job->next = free_jobs;
    free_jobs = cur_job;
    cur_job = NULL;
  }
  for (chunk_job *j = free_jobs, *n; j; j = n) {
    n = j->next;
    pt_chunk_enc_free(&j->enc);
    free(j->later);
    free(j->found.v);
    free(j);
  }
  printer_free(&merge_printer);
  free_jobs = NULL;
  njobs = 0;
  for (size_t i = 0; i < nready; i++)
    free(ready[i].blob.p);
  free(ready);
  ready = NULL;
  nready = cap_ready = 0;
}

/* The inline payloads' JSON array of a call onto t (nothing when none). */
static void put_data(text *t, const pending_call *c)
{
  if (c->inl.len) {
    t_c(t, '[');
    t_put(t, c->inl.p, c->inl.len);
    t_c(t, ']');
  }
}

/* A call still running: the inflight table, until it returns. */
static void insert_running(pending_call *c, const text *args)
{
  static text data; /* the writer is one thread */
  data.len = 0;
  put_data(&data, c);
  sqlite3_stmt *s = st_inflight;
  sqlite3_bind_int64(s, 1, session_id);
  sqlite3_bind_int64(s, 2, (int64_t)c->seq);
  sqlite3_bind_int(s, 3, (int)c->thread);
  sqlite3_bind_int(s, 4, (int)c->plugin);
  sqlite3_bind_int(s, 5, c->api);
  sqlite3_bind_int64(s, 6, (int64_t)(c->t0 - session_t0));
  sqlite3_bind_text(s, 7, args->p, (int)args->len, SQLITE_TRANSIENT);
  if (c->stack >= 0)
    sqlite3_bind_int64(s, 8, c->stack);
  if (data.len)
    sqlite3_bind_text(s, 9, data.p, (int)data.len, SQLITE_TRANSIENT);
  step(s, "storing a running call");
  c->inserted = true;
}

/* A call that returned, whose text (args_len bytes of args, data_len of
 * payloads) process_exit printed at the end of the chunk job's. */
static void insert_call(pending_call *c, size_t args_len, size_t data_len, int32_t result,
                        uint64_t t1)
{
  if (c->inserted) {
    sqlite3_bind_int64(st_inflight_done, 1, session_id);
    sqlite3_bind_int64(st_inflight_done, 2, (int64_t)c->seq);
    step(st_inflight_done, "storing a call");
  }
  pt_chunk_call cc = {.seq = (int64_t)c->seq, .thread = c->thread, .plugin = c->plugin,
                      .api = c->api, .result = result,
                      .start_ns = (int64_t)(c->t0 - session_t0), .dur_ns = (int64_t)(t1 - c->t0),
                      .stack = c->stack, .args_len = args_len, .data_len = data_len};
  if (!pt_chunk_enc_add_written(&cur_job->enc, &cc))
    abort(); /* as t_reserve: the writer cannot go on without memory */
  if (cur_job->enc.n == PT_CHUNK_CALLS ||
      pt_chunk_enc_bytes(&cur_job->enc) + cur_job->later_bytes >= CHUNK_BYTES)
    flush_chunk();
}

/* The call in flight that an exit from ring m returns from, taken out of
 * inflight and its ring's calls; NULL when there is none. */
static pending_call *returning(mring *m, uint64_t entry_ticket)
{
  pending_call *c = m->open;
  if (c && c->ticket == entry_ticket) {
    m->open = c->outer;
  } else { /* not the thread's innermost (a record lost), or from a checkpoint */
    for (c = inflight; c && c->ticket != entry_ticket; c = c->next)
      ;
    if (!c)
      return NULL;
    for (size_t i = 0; i < nmrings; i++)
      for (pending_call **pp = &mrings[i].open; *pp; pp = &(*pp)->outer)
        if (*pp == c) {
          *pp = c->outer;
          break;
        }
  }
  inflight_unlink(c);
  return c;
}

/* A returned call's text onto out: its args (args_len bytes), then the
 * payloads kept inline; finding prints nothing. */
static inline __attribute__((always_inline)) void
exit_text(const fmt *f, text *out, pending_call *c, const pi_api_desc *api, const item_view *items,
          unsigned n, bool ok, size_t *args_len)
{
  size_t at = out->len;
  build_args(f, out, c, api, c->argv, items, n, ok);
  *args_len = out->len - at;
  for (unsigned i = 0; i < n; i++)
    if (items[i].it->position < api->nparams &&
        (items[i].it->role == ITEM_OUT || (items[i].it->role == ITEM_VALUE &&
                                           api->params[items[i].it->position].kind == PI_PK_INFO)))
      keep_data(f, c, items[i].it->position,
                items[i].it->role == ITEM_OUT ? "out" : "value", items[i].it->index,
                items[i].data, items[i].it->size, items[i].it->full);
  if (f->mode != FMT_FIND)
    put_data(out, c);
}

static void process_exit(const rec_exit *x, mring *m)
{
  pending_call *c = returning(m, x->entry_ticket);
  static item_view items[MAX_ITEMS_VIEW]; /* the merge thread's */
  unsigned n = read_items((const unsigned char *)(x + 1), x->nitems, items, MAX_ITEMS_VIEW);
  if (!c) { /* its entry was filtered or lost: nothing to pair with */
    free_heap_items(items, n);
    return;
  }
  const pi_api_desc *api = &pi_api_table[c->api];
  const uint64_t *argv = c->argv;
  cur_api = api->name;
  if (c->entry && any_heap(items, n))
    materialize(c);
  if (!cur_job)
    cur_job = take_job();
  pt_chunk_enc *e = &cur_job->enc;
  bool ok = x->result == PI_SUCCESS;
  size_t args_len = 0, data_len = 0;
  if (c->entry) { /* the encoder prints it: the values it needs found now */
    chunk_job *j = cur_job;
    const fmt f = {FMT_FIND, &c->found, NULL};
    exit_text(&f, &find_scratch, c, api, items, n, ok, &args_len);
    find_scratch.len = 0;
    if (j->nlater == j->cap_later)
      j->later = grow_array(j->later, &j->cap_later, sizeof *j->later, 256);
    j->later[j->nlater++] = (later_call){e->n, c->entry, x, j->found.n, c->found.n};
    for (size_t i = 0; i < c->found.n; i++)
      ids_push(&j->found, c->found.v[i]);
    j->later_bytes += 2u * (c->entry->h.size + x->h.size);
    args_len = 0;
  } else { /* printed now, straight to the end of its chunk's text (no copy) */
    text t = {(char *)e->text, e->text_len, e->text_cap};
    exit_text(&fmt_now, &t, c, api, items, n, ok, &args_len);
    data_len = t.len - e->text_len - args_len;
    e->text = (unsigned char *)t.p;
    e->text_cap = t.cap;
  }
  uint64_t t1 = stamp_to_ns(x->t1, keep_knot);
  if (t1 > last_t)
    last_t = t1;
  insert_call(c, args_len, data_len, x->result, t1);
  free_heap_items(items, n);
  if (x->result == PI_SUCCESS) {
    if (api->retains >= 0) {
      map_slot *h = map_find(&handles, argv[api->retains]);
      if (h) {
        h->c++;
        maps_dirty = true;
      }
    }
    if (api->releases >= 0 && c->api != PI_API_piextUSMFree && !c->released_early)
      handle_release(argv[api->releases], c->seq);
    if (c->api == PI_API_piextUSMFree && !c->released_early)
      usm_free(argv[1], c->seq);
    if (c->api == PI_API_piEnqueueMemUnmap && !c->released_early)
      map_del(&mapped, argv[2]);
  }
  call_free(c);
}

static void process_readback(const rec_readback *r, uint64_t current_seq)
{
  map_slot *s = map_find(&memo, r->call_ticket);
  const void *data = r + 1;
  void *heap = NULL;
  if (r->heap) {
    memcpy(&heap, data, sizeof heap);
    data = heap;
    if (salvaging) /* another process's heap: the data is lost */
      data = heap = NULL;
  }
  if (s) {
    store_data(s->a, r->position, "readback", 0, data, r->size, r->size, (int64_t)current_seq);
    map_del(&memo, r->call_ticket);
  }
  free(heap);
}

/* The note belongs to the next call of the thread whose ring held it. */
static void process_note(const rec_note *n, uint32_t thread)
{
  thread_state *ts = thread_of(thread);
  if (!ts)
    return;
  rec_note *copy = malloc(n->h.size);
  rec_note **v = realloc(ts->notes, (ts->nnotes + 1) * sizeof *v);
  if (!copy || !v) {
    free(copy);
    return;
  }
  memcpy(copy, n, n->h.size);
  ts->notes = v;
  ts->notes[ts->nnotes++] = copy;
  notes_waiting++;
}

/* A device command's device times (docs/schema.md: device_times). */
static void process_devtime(const rec_devtime *r)
{
  map_slot *s = map_find(&devmemo, r->call_ticket);
  if (!s)
    return;
  if (!r->lost) {
    const map_slot *d = map_find(&handles, r->device);
    sqlite3_bind_int64(st_devtime, 1, session_id);
    sqlite3_bind_int64(st_devtime, 2, (int64_t)s->a);
    sqlite3_bind_int64(st_devtime, 3, (int64_t)s->c);
    sqlite3_bind_int64(st_devtime, 4, (int64_t)s->b);
    sqlite3_bind_int64(st_devtime, 5, d ? (int64_t)d->a : 0);
    if (r->mapped) {
      sqlite3_bind_int64(st_devtime, 6, (int64_t)(r->host_start - session_t0));
      sqlite3_bind_int64(st_devtime, 7, (int64_t)(r->host_end - session_t0));
    } else {
      sqlite3_bind_null(st_devtime, 6);
      sqlite3_bind_null(st_devtime, 7);
    }
    sqlite3_bind_int64(st_devtime, 8, (int64_t)r->start);
    sqlite3_bind_int64(st_devtime, 9, (int64_t)r->end);
    step(st_devtime, "storing a device time");
  }
  map_del(&devmemo, r->call_ticket);
  maps_dirty = true;
}

/* A device's two clock samples: stored, and the device's times corrected
 * for the drift between them. */
static void process_devclock(const rec_devclock *r)
{
  const map_slot *d = map_find(&handles, r->device);
  int64_t dev = d ? (int64_t)d->a : 0;
  sqlite3_bind_int64(st_devclock, 1, session_id);
  sqlite3_bind_int64(st_devclock, 2, dev);
  sqlite3_bind_int64(st_devclock, 3, (int64_t)r->dev0);
  sqlite3_bind_int64(st_devclock, 4, (int64_t)(r->host0 - session_t0));
  sqlite3_bind_int64(st_devclock, 5, (int64_t)r->dev1);
  sqlite3_bind_int64(st_devclock, 6, (int64_t)(r->host1 - session_t0));
  step(st_devclock, "storing a device clock");
  /* Only over a span long enough to mean something (10 ms), and a rate
   * within 1% of the host's (else a clock that jumped: left as it is). */
  if (r->dev1 <= r->dev0 + 10000000u || r->host1 <= r->host0)
    return;
  double k = (double)(r->host1 - r->host0) / (double)(r->dev1 - r->dev0);
  if (k < 0.99 || k > 1.01)
    return;
  sqlite3_bind_int64(st_drift, 1, (int64_t)(r->host0 - session_t0));
  sqlite3_bind_int64(st_drift, 2, (int64_t)r->dev0);
  sqlite3_bind_double(st_drift, 3, k);
  sqlite3_bind_int64(st_drift, 4, session_id);
  sqlite3_bind_int64(st_drift, 5, dev);
  step(st_drift, "correcting device times for drift");
}

static void process_thread(const rec_thread *t)
{
  sqlite3_bind_int64(st_thread, 1, session_id);
  sqlite3_bind_int(st_thread, 2, (int)t->index);
  sqlite3_bind_int(st_thread, 3, t->tid);
  step(st_thread, "storing a thread");
}

/* ---- The merge ----------------------------------------------------------------------------- */

/* In a salvaged ring: whether the record at h (avail bytes published
 * from it, to_end bytes to the ring's end) is whole and sound, so that
 * decoding it reads nothing outside it. Heap payloads (pointers into the
 * dead process) are marked empty in place. */
static bool items_ok(unsigned char *p, const unsigned char *end, unsigned n)
{
  if (n > MAX_ITEMS_VIEW)
    return false;
  for (unsigned i = 0; i < n; i++) {
    if ((size_t)(end - p) < sizeof(rec_item))
      return false;
    rec_item *it = (rec_item *)p;
    p += sizeof *it;
    if (it->position >= PI_MAX_PARAMS)
      return false;
    if (it->heap) {
      if ((size_t)(end - p) < sizeof(void *))
        return false;
      it->size = 0;
      p += sizeof(void *);
    } else {
      if (it->size > (uint64_t)(end - p) || ((it->size + 7) & ~(uint64_t)7) > (uint64_t)(end - p))
        return false;
      p += (it->size + 7) & ~(uint64_t)7;
    }
  }
  return true;
}

/* Out of line: only salvage checks records, and next_seen is inlined. */
__attribute__((noinline)) static bool record_ok(rec_hdr *h, size_t avail, size_t to_end)
{
  if (to_end < sizeof *h || avail < sizeof *h || h->size < sizeof *h || h->size % 8 ||
      h->size > avail || h->size > to_end)
    return false;
  unsigned char *p = (unsigned char *)h, *end = p + h->size;
  switch (h->type) {
  case REC_WRAP:
    return h->size == to_end;
  case REC_ENTRY: {
    rec_entry *e = (rec_entry *)h;
    if (h->size < sizeof *e || h->api >= PI_API_COUNT || h->instance >= SHIM_MAX_INSTANCES ||
        e->nframes > SHIM_MAX_FRAMES + 2)
      return false;
    size_t fixed = sizeof *e + (pi_api_table[h->api].nparams + (size_t)e->nframes) * 8;
    return fixed <= h->size && items_ok(p + fixed, end, e->nitems);
  }
  case REC_EXIT: {
    rec_exit *x = (rec_exit *)h;
    return h->size >= sizeof *x && h->api < PI_API_COUNT &&
           items_ok((unsigned char *)(x + 1), end, x->nitems);
  }
  case REC_READBACK: {
    rec_readback *r = (rec_readback *)h;
    if (h->size < sizeof *r || r->position >= PI_MAX_PARAMS)
      return false;
    if (r->heap) {
      if (h->size < sizeof *r + sizeof(void *))
        return false;
      r->size = 0;
      return true;
    }
    return r->size <= h->size - sizeof *r;
  }
  case REC_NOTE: {
    rec_note *n = (rec_note *)h;
    if (h->size < sizeof *n)
      return false;
    unsigned char *w = (unsigned char *)(n + 1);
    for (int i = 0; i < 5; i++) {
      unsigned char *z = memchr(w, 0, (size_t)(end - w));
      if (!z)
        return false;
      w = z + 1;
    }
    uint64_t left = (uint64_t)(end - w);
    return (uint64_t)n->num_ids * 4u <= left && n->value_len <= left - n->num_ids * 4u &&
           n->text_len <= left - n->num_ids * 4u - n->value_len;
  }
  case REC_THREAD:
    return h->size >= sizeof(rec_thread);
  case REC_DEVTIME:
    return h->size >= sizeof(rec_devtime);
  case REC_DEVCLOCK:
    return h->size >= sizeof(rec_devclock);
  default:
    return false;
  }
}

/* How far ahead of the record read next_seen fetches (a line a record:
 * a scalar call's two records are 80 bytes). */
#define PREFETCH_AHEAD 512u

/* The next record of a ring among those already seen published (up to
 * head_seen), or NULL; skips WRAP markers. Reads at rd; the producer may
 * reuse bytes only up to tail, which moves at commits. */
static inline rec_hdr *next_seen(shim_ring *r)
{
  for (;;) {
    size_t rd = r->rd;
    if (rd == r->head_seen)
      return NULL;
    size_t off = rd & (r->cap - 1); /* a power of two (ringfile.c) */
    if (r->cap - off < sizeof(rec_hdr)) {
      r->rd = rd + (r->cap - off);
      continue;
    }
    rec_hdr *h = (rec_hdr *)(r->buf + off);
    if (__builtin_expect(salvaging, 0) && !record_ok(h, r->head_seen - rd, r->cap - off)) {
      damaged++;
      r->rd = r->head_seen; /* the rest of this ring cannot be trusted */
      return NULL;
    }
    if (h->type == REC_WRAP) {
      r->rd = rd + h->size;
      continue;
    }
    /* Records further on, written on another core: on their way while
     * the ones before them are processed (reading a line from another
     * core takes longer than a call's processing). Only lines published
     * whole, or the producer's next write would find them taken away. */
    size_t ahead = rd + PREFETCH_AHEAD;
    if ((ahead | 63) < r->head_seen)
      __builtin_prefetch(r->buf + (ahead & (r->cap - 1)));
    return h;
  }
}

/* Looks at a ring's head again (the only read of a line its producer
 * writes): whether more records were published since the last look. */
static bool look_again(shim_ring *r)
{
  size_t head = atomic_load_explicit(&r->head, memory_order_acquire);
  if (head == r->head_seen)
    return false;
  r->head_seen = head;
  if (!salvaging && !ending)
    ringfile_populate(r);
  return true;
}

/* The next record of a ring, looking at its head when none is seen yet. */
static rec_hdr *peek(shim_ring *r)
{
  rec_hdr *h = next_seen(r);
  if (!h && look_again(r))
    h = next_seen(r);
  return h;
}

static void consume(shim_ring *r, rec_hdr *h)
{
  r->rd += h->size;
  /* Half the ring read but not committed: commit now, or the producer
   * waits. */
  if (r->rd - atomic_load_explicit(&r->tail, memory_order_relaxed) > r->cap / 2)
    pressure = true;
}

/* After a commit (or when nothing is committed any more): the producers
 * may reuse what was read. */
static void publish_tails(void)
{
  for (shim_ring *r = rings_head(); r; r = r->next)
    atomic_store_explicit(&r->tail, r->rd, memory_order_release);
  pressure = false;
}

static uint64_t last_ticket; /* the last record processed (checkpointed) */

static void handle_record(mring *m, rec_hdr *h)
{
  shim_ring *r = m->r;
  switch (h->type) {
  case REC_ENTRY:
    process_entry((const rec_entry *)h, m);
    break;
  case REC_EXIT:
    process_exit((const rec_exit *)h, m);
    break;
  case REC_READBACK:
    process_readback((const rec_readback *)h, seq_counter);
    break;
  case REC_NOTE:
    process_note((const rec_note *)h, r->thread_index);
    break;
  case REC_THREAD:
    process_thread((const rec_thread *)h);
    break;
  case REC_DEVTIME:
    process_devtime((const rec_devtime *)h);
    break;
  case REC_DEVCLOCK:
    process_devclock((const rec_devclock *)h);
    break;
  default:
    break;
  }
}

/* ---- Merging the rings -------------------------------------------------------------------- */

static bool before(const mring *a, const mring *b)
{
  return (int64_t)(a->ticket - b->ticket) < 0;
}

/* The ring's next record seen, into m->h (and its ticket): false when none. */
static inline bool next_of(mring *m)
{
  m->h = next_seen(m->r);
  if (m->h)
    m->ticket = m->h->ticket;
  return m->h != NULL;
}

static void heap_down(size_t i)
{
  for (;;) {
    size_t l = 2 * i + 1, m = i;
    if (l < nheap && before(heap[l], heap[m]))
      m = l;
    if (l + 1 < nheap && before(heap[l + 1], heap[m]))
      m = l + 1;
    if (m == i)
      return;
    mring *t = heap[i];
    heap[i] = heap[m];
    heap[m] = t;
    i = m;
  }
}

static void heap_push(mring *m)
{
  size_t i = nheap++;
  heap[i] = m;
  while (i && before(heap[i], heap[(i - 1) / 2])) {
    mring *t = heap[i];
    heap[i] = heap[(i - 1) / 2];
    heap[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
}

/* Takes in the rings that threads added since the last sweep (a ring is
 * only ever pushed at the list's head). */
static void take_new_rings(void)
{
  shim_ring *head = rings_head();
  if (head == mrings_from)
    return;
  size_t n = 0;
  for (shim_ring *r = head; r && r != mrings_from; r = r->next)
    n++;
  if (nmrings + n > cap_mrings) {
    size_t cap = (nmrings + n) * 2;
    mring *v = realloc(mrings, cap * sizeof *v);
    mring **hp = v ? realloc(heap, cap * sizeof *hp) : NULL;
    if (v)
      mrings = v;
    if (!hp)
      abort(); /* as t_reserve: the writer cannot go on without memory */
    heap = hp;
    /* The heap points into mrings: it moved. */
    nheap = 0;
    for (size_t i = 0; i < nmrings; i++)
      if (mrings[i].h)
        heap_push(&mrings[i]);
    cap_mrings = cap;
  }
  for (shim_ring *r = head; r && r != mrings_from; r = r->next)
    mrings[nmrings++] = (mring){r, NULL, 0, 0, NULL};
  mrings_from = head;
  if (!salvaging && !ending) /* a thread took the spare slot: the next thread's */
    ringfile_make_spare();
}

/* Forgets the rings (their list is replaced: salvage, a new writer). */
static void forget_rings(void)
{
  free(mrings);
  free(heap);
  mrings = NULL;
  heap = NULL;
  nmrings = cap_mrings = nheap = 0;
  mrings_from = NULL;
  looks = 0;
}

/* Processes the records of every ring in ticket order, for as long as
 * there are any; stops early when a ring needs a commit. Returns the
 * number processed.
 *
 * Why this order is safe without a shared counter: a record can depend
 * only on records published before it was made (a call uses a handle
 * after the call that made it returned), and those have lower tickets
 * (a return stamp is read before its record is published; an entry stamp
 * only after every earlier load, shim_stamp_after_loads). Two returns are
 * ordered as the calls returned, which is not always the order of their
 * effects: release_in_flight says when that matters.
 * Once a record is seen, they are visible too. So a record seen at look
 * L is processed only after a sweep that began after L looked again at
 * every ring with nothing seen: a record it depends on is then either
 * seen (and, lower, comes out of the heap first) or in a ring whose next
 * seen record is lower still (and comes first, its own successors
 * behind it). Between sweeps a ring gives a run of records without any
 * look at the others while its tickets stay below the next ring's. */
static size_t merge(void)
{
  size_t done = 0;
  while (!pressure || draining) {
    uint64_t sweep = ++looks;
    /* A ring is in the list before its first record is published: a
     * thread whose record another's depends on is found here. */
    take_new_rings();
    for (size_t i = 0; i < nmrings; i++) {
      mring *m = &mrings[i];
      if (!m->h && look_again(m->r) && next_of(m)) {
        m->seen = sweep;
        heap_push(m);
      }
    }
    if (!nheap)
      return done;
    while (nheap && (!pressure || draining)) {
      mring *m = heap[0];
      if (m->seen >= sweep)
        break; /* seen at or after this sweep: look at the others again first */
      mring *next = nheap > 2 && before(heap[2], heap[1]) ? heap[2] : nheap > 1 ? heap[1] : NULL;
      rec_hdr *h = m->h;
      do {
        handle_record(m, h);
        consume(m->r, h);
        last_ticket = h->ticket;
        done++;
        h = next_of(m) ? m->h : NULL;
      } while (h && (!next || before(m, next)) && (!pressure || draining));
      if (!h && look_again(m->r) && next_of(m))
        m->seen = ++looks;
      if (m->h) {
        heap_down(0);
      } else {
        heap[0] = heap[--nheap];
        heap_down(0);
      }
    }
  }
  return done;
}

/* Writes the in-flight calls as incomplete rows (result NULL). */
static void write_inflight(void)
{
  for (pending_call *c = inflight; c; c = c->next) {
    if (c->inserted)
      continue;
    const pi_api_desc *api = &pi_api_table[c->api];
    text args = {0};
    build_args(&fmt_now, &args, c, api, NULL, NULL, 0, false);
    insert_running(c, &args);
    free(args.p);
  }
}

/* Plugins from this process's instances, or (salvaging) from the ring
 * file's copy of them. */
static const ringfile_hdr *salvage_hdr;

static void write_plugins(void)
{
  for (;; plugins_written++) {
    const char *name, *path, *version, *backend;
    uint32_t index;
    if (salvage_hdr) {
      if (plugins_written >= SHIM_MAX_INSTANCES || !salvage_hdr->instances[plugins_written].set)
        return;
      const ringfile_instance *in = &salvage_hdr->instances[plugins_written];
      name = in->name, path = in->path, version = in->version, backend = in->backend;
      index = in->index;
    } else {
      if (plugins_written >= atomic_load(&shim_ninstances))
        return;
      const shim_instance *in = &shim_instances[plugins_written];
      name = in->name, path = in->path, version = in->version, backend = in->backend;
      index = in->index;
    }
    sqlite3_bind_int64(st_plugin, 1, session_id);
    sqlite3_bind_int(st_plugin, 2, (int)index);
    sqlite3_bind_text(st_plugin, 3, name, (int)strnlen(name, 256), SQLITE_TRANSIENT);
    sqlite3_bind_text(st_plugin, 4, path, (int)strnlen(path, 1024), SQLITE_TRANSIENT);
    sqlite3_bind_text(st_plugin, 5, version, (int)strnlen(version, 32), SQLITE_TRANSIENT);
    sqlite3_bind_text(st_plugin, 6, backend, (int)strnlen(backend, 32), SQLITE_TRANSIENT);
    step(st_plugin, "storing a plugin");
  }
}

/* ---- The checkpoint -------------------------------------------------------------------
 * Each commit also stores, in recorder_state, what the writer knows that
 * the rings' unread records need (sequence and id counters, the calls in
 * flight, the handle, USM, map and stack ids, pending notes) and how far
 * each ring of the ring file was read: the database and the read
 * positions change in one transaction, so a salvager resumes exactly
 * where the commit left off. Part 0 every commit (small); part 1, the id
 * maps, when they changed. */
#define CKPT_MAGIC 0x3130544b43505450ULL /* "PTPCKT01" */

static void put64(text *t, uint64_t v) { t_put(t, (const char *)&v, 8); }

static void put_map(text *t, const map *m, int values)
{
  put64(t, m->n);
  for (size_t i = 0; i < m->cap; i++)
    if (m->v[i].key) {
      put64(t, m->v[i].key);
      put64(t, m->v[i].a);
      if (values > 1) {
        put64(t, m->v[i].b);
        put64(t, m->v[i].c);
      }
    }
}

static bool store_state(int part, const text *t)
{
  sqlite3_stmt *s = st_state;
  sqlite3_bind_int64(s, 1, session_id);
  sqlite3_bind_int(s, 2, part);
  sqlite3_bind_blob(s, 3, t->p, (int)t->len, SQLITE_STATIC);
  return step(s, "storing the recorder's state");
}

static void write_checkpoint(void)
{
  text t = {0};
  put64(&t, CKPT_MAGIC);
  uint64_t scalars[] = {seq_counter, next_handle_id, next_stack_id, (uint64_t)chunk_id,
                        last_ticket, plugins_written, last_t};
  put64(&t, sizeof scalars / sizeof *scalars);
  for (size_t i = 0; i < sizeof scalars / sizeof *scalars; i++)
    put64(&t, scalars[i]);
  size_t nr = 0;
  for (shim_ring *r = rings_head(); r; r = r->next)
    nr += r->slot != RING_NO_SLOT;
  put64(&t, nr);
  for (shim_ring *r = rings_head(); r; r = r->next)
    if (r->slot != RING_NO_SLOT) {
      put64(&t, r->slot);
      put64(&t, r->rd);
    }
  size_t np = 0;
  for (pending_call *c = inflight; c; c = c->next)
    np++;
  put64(&t, np);
  for (pending_call *c = inflight; c; c = c->next) {
    unsigned n = pi_api_table[c->api].nparams;
    /* inserted and released_early share a word (bits 0 and 1): a
     * checkpoint of before has 0 or 1 there. */
    uint64_t f[] = {c->ticket, c->seq, c->t0, c->thread, c->plugin, c->api,
                    (uint64_t)c->inserted | (uint64_t)c->released_early << 1,
                    (uint64_t)c->stack, c->in.len, c->inl.len};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
      put64(&t, f[i]);
    t_put(&t, (const char *)c->argv, n * sizeof *c->argv);
    t_put(&t, (const char *)c->start, n * sizeof *c->start);
    t_put(&t, (const char *)c->end, n * sizeof *c->end);
    t_put(&t, c->in.p ? c->in.p : "", c->in.len);
    t_put(&t, c->inl.p ? c->inl.p : "", c->inl.len);
  }
  size_t nn = 0;
  for (size_t i = 0; i < nthreads; i++)
    nn += threads[i].nnotes;
  put64(&t, nn);
  for (size_t i = 0; i < nthreads; i++)
    for (size_t j = 0; j < threads[i].nnotes; j++) {
      put64(&t, threads[i].index);
      put64(&t, threads[i].notes[j]->h.size);
      t_put(&t, (const char *)threads[i].notes[j], threads[i].notes[j]->h.size);
    }
  bool ok = store_state(0, &t);
  if (ok && maps_dirty) {
    t.len = 0;
    put64(&t, CKPT_MAGIC);
    put_map(&t, &handles, 3);
    put_map(&t, &mapped, 1);
    put_map(&t, &memo, 1);
    put_map(&t, &stacks, 1);
    put64(&t, nusm_allocs);
    for (size_t i = 0; i < nusm_allocs; i++) {
      put64(&t, usm_allocs[i].base);
      put64(&t, usm_allocs[i].size);
      put64(&t, usm_allocs[i].id);
    }
    put_map(&t, &devmemo, 3);
    if (store_state(1, &t))
      maps_dirty = false;
  }
  free(t.p);
}

/* A reader of a checkpoint blob; every read is bounds-checked. */
typedef struct reader {
  const unsigned char *p, *end;
  bool bad;
} reader;

static uint64_t get64(reader *r)
{
  uint64_t v = 0;
  if (r->end - r->p < 8) {
    r->bad = true;
    return 0;
  }
  memcpy(&v, r->p, 8);
  r->p += 8;
  return v;
}

static const void *get_bytes(reader *r, uint64_t n)
{
  if ((uint64_t)(r->end - r->p) < n) {
    r->bad = true;
    return NULL;
  }
  const void *v = r->p;
  r->p += n;
  return v;
}

static void get_map(reader *r, map *m, int values)
{
  uint64_t n = get64(r);
  for (uint64_t i = 0; i < n && !r->bad; i++) {
    uint64_t key = get64(r), a = get64(r), b = 0, c = 0;
    if (values > 1) {
      b = get64(r);
      c = get64(r);
    }
    map_slot *s = r->bad ? NULL : map_put(m, key);
    if (s) {
      s->a = a;
      s->b = b;
      s->c = c;
    }
  }
}

/* Rings of the file being salvaged, by slot, with where the last commit
 * left each. */
typedef struct slot_pos {
  uint64_t slot, rd;
} slot_pos;

/* Restores the writer from the session's checkpoint (none: the session
 * committed nothing of its calls yet, and starts from zero). */
static bool load_checkpoint(slot_pos **pos, size_t *npos, char *err, size_t errn)
{
  *pos = NULL;
  *npos = 0;
  sqlite3_stmt *q = prepare("SELECT part, state FROM recorder_state WHERE session=? "
                            "ORDER BY part");
  if (!q) {
    snprintf(err, errn, "no recorder state table");
    return false;
  }
  sqlite3_bind_int64(q, 1, session_id);
  bool ok = true;
  while (ok && sqlite3_step(q) == SQLITE_ROW) {
    int part = sqlite3_column_int(q, 0);
    reader r = {sqlite3_column_blob(q, 1), NULL, false};
    r.end = r.p ? r.p + sqlite3_column_bytes(q, 1) : NULL; /* empty: NULL */
    if (!r.p || get64(&r) != CKPT_MAGIC) {
      ok = false;
      break;
    }
    if (part == 0) {
      uint64_t ns = get64(&r), v[7] = {0};
      for (uint64_t i = 0; i < ns && !r.bad; i++) {
        uint64_t x = get64(&r);
        if (i < 7)
          v[i] = x;
      }
      seq_counter = v[0], next_handle_id = v[1], next_stack_id = v[2];
      chunk_id = (int64_t)v[3], last_ticket = v[4], plugins_written = (uint32_t)v[5];
      last_t = v[6];
      uint64_t nr = get64(&r);
      if (nr > 1u << 20)
        r.bad = true;
      if (!r.bad && nr && !(*pos = calloc(nr, sizeof **pos)))
        r.bad = true;
      for (uint64_t i = 0; i < nr && !r.bad; i++) {
        (*pos)[i].slot = get64(&r);
        (*pos)[i].rd = get64(&r);
        *npos = i + 1;
      }
      uint64_t np = get64(&r);
      for (uint64_t i = 0; i < np && !r.bad; i++) {
        uint64_t f[10];
        for (int k = 0; k < 10; k++)
          f[k] = get64(&r);
        if (r.bad || f[5] >= PI_API_COUNT) {
          r.bad = true;
          break;
        }
        unsigned n = pi_api_table[f[5]].nparams;
        const void *argv = get_bytes(&r, n * 8u), *start = get_bytes(&r, n * 4u),
                   *end = get_bytes(&r, n * 4u), *in = get_bytes(&r, f[8]),
                   *inl = get_bytes(&r, f[9]);
        pending_call *c = r.bad ? NULL : call_new();
        if (!c)
          break;
        c->ticket = f[0], c->seq = f[1], c->t0 = f[2];
        c->thread = (uint32_t)f[3], c->plugin = (uint32_t)f[4], c->api = (uint8_t)f[5];
        c->inserted = f[6] & 1, c->released_early = f[6] >> 1 & 1, c->stack = (int64_t)f[7];
        memcpy(c->argv, argv, n * 8u);
        memcpy(c->start, start, n * 4u);
        memcpy(c->end, end, n * 4u);
        t_put(&c->in, in, f[8]);
        t_put(&c->inl, inl, f[9]);
        for (unsigned k = 0; k < n; k++)
          if (c->start[k] > c->end[k] || c->end[k] > c->in.len)
            c->start[k] = c->end[k] = 0;
        inflight_push(c); /* in no ring's calls: an exit finds it by search */
        c->outer = NULL;
      }
      uint64_t nn = get64(&r);
      for (uint64_t i = 0; i < nn && !r.bad; i++) {
        uint64_t idx = get64(&r), size = get64(&r);
        const void *note = get_bytes(&r, size);
        if (r.bad || size < sizeof(rec_note) ||
            !record_ok((rec_hdr *)(uintptr_t)note, size, size)) {
          r.bad = true;
          break;
        }
        /* process_note copies what it is given */
        rec_note *copy = malloc(size);
        if (copy) {
          memcpy(copy, note, size);
          process_note(copy, (uint32_t)idx);
          free(copy);
        }
      }
    } else {
      get_map(&r, &handles, 3);
      get_map(&r, &mapped, 1);
      get_map(&r, &memo, 1);
      get_map(&r, &stacks, 1);
      uint64_t nu = get64(&r);
      for (uint64_t i = 0; i < nu && !r.bad; i++) {
        uint64_t base = get64(&r), size = get64(&r), id = get64(&r);
        if (!r.bad)
          usm_add(base, size, id);
      }
      if (!r.bad && r.p < r.end) /* a recorder from before device times has none */
        get_map(&r, &devmemo, 3);
    }
    ok = !r.bad;
  }
  sqlite3_finalize(q);
  if (!ok)
    snprintf(err, errn, "its recorder state is damaged");
  return ok;
}

/* Every call in flight printed to be printed later prints its
 * in-parameters now: its entry record is about to go back to its ring. */
static void materialize_inflight(void)
{
  for (pending_call *c = inflight; c; c = c->next)
    materialize(c);
}

static void commit(void)
{
  if (failed)
    return;
  materialize_inflight();
  write_plugins();
  flush_chunk();
  write_chunks();
  write_inflight();
  write_checkpoint();
  if (failed)
    return;
  if (commit_writes())
    publish_tails();
}

/* Drops whatever the rings hold (after a failure: keep producers moving). */
static void discard(void)
{
  wait_encoders();
  materialize_inflight();
  for (shim_ring *r = rings_head(); r; r = r->next) {
    rec_hdr *h;
    while ((h = peek(r))) {
      if (h->type == REC_ENTRY || h->type == REC_EXIT) {
        item_view items[MAX_ITEMS_VIEW];
        const unsigned char *p;
        unsigned nitems;
        if (h->type == REC_ENTRY) {
          p = entry_items((const rec_entry *)h);
          nitems = ((const rec_entry *)h)->nitems;
        } else {
          p = (const unsigned char *)((const rec_exit *)h + 1);
          nitems = ((const rec_exit *)h)->nitems;
        }
        unsigned got = read_items(p, nitems, items, MAX_ITEMS_VIEW);
        free_heap_items(items, got);
      } else if (h->type == REC_READBACK && ((const rec_readback *)h)->heap) {
        void *heap;
        memcpy(&heap, (const rec_readback *)h + 1, sizeof heap);
        free(heap);
      }
      consume(r, h);
    }
  }
  for (size_t i = 0; i < nmrings; i++)
    mrings[i].h = NULL; /* consumed: the merge sees them no more */
  nheap = 0;
  publish_tails();
}

/* The session's end: `how` and `signo` as writer_finish has them. */
static void end_session(const char *how, int signo, int64_t end_unix_ns, uint64_t duration,
                        const char *reason, int exit_status)
{
  sqlite3_stmt *u = prepare("UPDATE sessions SET ended=?, signal=?, end_unix_ns=?, "
                            "duration_ns=?, calls=?, incomplete_reason=coalesce(?, "
                            "incomplete_reason), exit_status=coalesce(?, exit_status) "
                            "WHERE id=?");
  if (u) {
    sqlite3_bind_text(u, 1, how, -1, SQLITE_TRANSIENT);
    if (signo)
      sqlite3_bind_int(u, 2, signo);
    sqlite3_bind_int64(u, 3, end_unix_ns);
    sqlite3_bind_int64(u, 4, (int64_t)duration);
    sqlite3_bind_int64(u, 5, (int64_t)seq_counter);
    if (reason)
      sqlite3_bind_text(u, 6, reason, -1, SQLITE_TRANSIENT);
    if (exit_status >= 0)
      sqlite3_bind_int(u, 7, exit_status);
    sqlite3_bind_int64(u, 8, session_id);
    step(u, "ending the session");
    sqlite3_finalize(u);
  }
  sqlite3_stmt *d = prepare("DELETE FROM recorder_state WHERE session=?");
  if (d) {
    sqlite3_bind_int64(d, 1, session_id);
    step(d, "ending the session");
    sqlite3_finalize(d);
  }
}

static void finish_session(void)
{
  if (failed)
    return;
  draining = true;
  merge();
  materialize_inflight();
  write_plugins();
  flush_chunk();
  write_chunks();
  write_inflight();
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  end_session(finish_how[0] ? finish_how : "exit", finish_signo,
              (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec, shim_now() - session_t0, NULL,
              -1);
  commit_writes();
}

static void reset_state(void);
static bool writer_open(void);
static void finalize_statements(void);

static void *writer_main(void *arg)
{
  (void)arg;
  pthread_setname_np(pthread_self(), "pitrace-merge"); /* for top, perf, bench_record */
  ringfile_make_spare(); /* the application's first thread's slot */
  if (!writer_open()) {
    /* Said why; the calls made meanwhile are dropped (discard), as after
     * any failure, and the ring file goes. */
    failed = true;
    atomic_store(&shim_recording, false);
    finalize_statements();
    if (db) {
      sqlite3_close(db); /* an open transaction is rolled back */
      db = NULL;
    }
    ringfile_remove();
  }
  uint64_t last_commit = shim_now();
  unsigned idle = 0; /* rounds in a row that found nothing */
  size_t since_commit = 0; /* records processed since the last commit */
  for (;;) {
    uint32_t bell = atomic_load_explicit(&writer_bell, memory_order_acquire);
    int req = atomic_load(&finish_req);
    if (failed) {
      discard();
      if (req) {
        if (req == 2) {
          stop_encoders();
          ringfile_remove();
        }
        atomic_store(&finish_done, atomic_load(&finish_gen));
        if (req == 2)
          return NULL;
        atomic_store(&finish_req, 0);
      }
      writer_nap(bell, 1000000);
      continue;
    }
    ending = req == 2;
    size_t done = merge();
    since_commit += done;
    uint64_t now = shim_now();
    if (req) {
      if (req == 2) {
        pressure = false;
        finish_session();
        stop_encoders();
        /* Everything is in the database (or recording failed): nobody
         * needs the rings any more. */
        ringfile_remove();
        atomic_store(&finish_done, atomic_load(&finish_gen));
        return NULL;
      }
      for (;;) {
        merge();
        bool again = pressure; /* merge stopped to let the producers on */
        commit();
        if (!again || failed)
          break;
      }
      atomic_store(&finish_req, 0);
      atomic_store(&finish_done, atomic_load(&finish_gen));
      last_commit = now;
      since_commit = 0;
      continue;
    }
    if (pressure || now - last_commit >= COMMIT_NS) {
      /* Nothing new: no commit (it would write the same checkpoint). */
      if (since_commit || pressure ||
          plugins_written < atomic_load(&shim_ninstances))
        commit();
      last_commit = now;
      since_commit = 0;
      continue;
    }
    /* Nothing came: nap, twice as long each round that finds nothing,
     * from NAP_MIN_NS (0.25 ms) up to 4 ms. A wake-up is what an idle recorder
     * costs (the timer and two context switches: 10-20 us on a virtual
     * machine); waking every 0.2 ms for 50 ms after each call, as before,
     * cost vadd 1024 (60 ms, 39 calls) some 4 ms of a processor on the
     * 2-core machine. The records are safe in the ring file meanwhile,
     * and a producer whose ring fills rings the bell (reserve_slow). */
    idle = done ? 0 : idle + 1;
    if (!done)
      writer_nap(bell, NAP_MIN_NS << (idle - 1 < NAP_DOUBLINGS ? idle - 1 : NAP_DOUBLINGS));
  }
}

/* ---- Start ------------------------------------------------------------------------------------ */

/* The database path: %p becomes the pid; a directory gets a new file. */
static void resolve_path(char *out, size_t n)
{
  char tmp[3800];
  size_t w = 0;
  for (const char *p = shim_cfg.path; *p && w + 24 < sizeof tmp; p++) {
    if (p[0] == '%' && p[1] == 'p') {
      w += (size_t)snprintf(tmp + w, sizeof tmp - w, "%d", (int)getpid());
      p++;
    } else {
      tmp[w++] = *p;
    }
  }
  tmp[w] = 0;
  struct stat st;
  if (stat(tmp, &st) == 0 && S_ISDIR(st.st_mode))
    snprintf(out, n, "%s/pitrace-%d-%lld.db", tmp, (int)getpid(), (long long)time(NULL));
  else
    snprintf(out, n, "%s", tmp);
}

static void json_env(text *t)
{
  extern char **environ;
  t_c(t, '{');
  bool first = true;
  for (char **e = environ; e && *e; e++)
    /* pitrace's and the runtime's own variables only (not PIP_*, say:
     * pip's certificates and index paths are no business of a session). */
    if (strncmp(*e, "SYCL_", 5) == 0 || strncmp(*e, "PI_", 3) == 0 ||
        strncmp(*e, "PITRACE_", 8) == 0) {
      const char *eq = strchr(*e, '=');
      if (!eq)
        continue;
      if (!first)
        t_c(t, ',');
      first = false;
      t_str(t, *e, (size_t)(eq - *e));
      t_c(t, ':');
      t_str(t, eq + 1, strlen(eq + 1));
    }
  t_c(t, '}');
}

static char *command_line(void)
{
  FILE *f = fopen("/proc/self/cmdline", "rb");
  if (!f)
    return strdup("");
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  for (size_t i = 0; i + 1 < n; i++)
    if (!buf[i])
      buf[i] = ' ';
  buf[n] = 0;
  return strdup(buf);
}

/* SQLite's busy handler: other processes recording into the same file
 * hold its write lock while they commit, and readers hold off a commit
 * while they read. Polls often (their commits are short, and a waiter
 * that sleeps long misses its turn), for at most BUSY_MS in all; then the
 * caller says the database stayed locked. */
static int busy_wait(void *arg, int n)
{
  (void)arg;
  static __thread uint64_t since;
  if (n == 0)
    since = shim_now();
  if (shim_now() - since > (uint64_t)BUSY_MS * 1000000u)
    return 0;
  struct timespec nap = {0, n < 20 ? 100000 : 1000000};
  nanosleep(&nap, NULL);
  return 1;
}

/* Opens `path` for writing with the busy handler; NULL with a reason. */
static sqlite3 *open_rw(const char *path, bool create, char *err, size_t errn)
{
  sqlite3 *d = NULL;
  int rc = sqlite3_open_v2(path, &d, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX |
                                         (create ? SQLITE_OPEN_CREATE : 0), NULL);
  if (rc != SQLITE_OK) {
    snprintf(err, errn, "%s", d ? sqlite3_errmsg(d) : sqlite3_errstr(rc));
    sqlite3_close(d);
    return NULL;
  }
  sqlite3_busy_handler(d, busy_wait, NULL);
  pt_sqlite_register(d);
  return d;
}

static bool prepare_statements(void)
{
  st_chunk = prepare("INSERT INTO call_chunks(session, id, first_seq, last_seq, ncalls, calls) "
                     "VALUES (?,?,?,?,?,?)");
  st_inflight = prepare("INSERT OR REPLACE INTO inflight(session, seq, thread, plugin, api, "
                        "start_ns, args, stack, data) VALUES (?,?,?,?,?,?,?,?,?)");
  st_inflight_done = prepare("DELETE FROM inflight WHERE session=? AND seq=?");
  st_data = prepare("INSERT OR REPLACE INTO data_rows(session, seq, position, role, idx, size, "
                    "hash, content, captured_seq, stored) VALUES (?,?,?,?,?,?,?,?,?,?)");
  st_blob = prepare("INSERT OR IGNORE INTO blobs(hash, size, content) VALUES (?,?,?)");
  st_handle = prepare("INSERT OR REPLACE INTO handles(session, id, kind, created_seq, created, "
                      "created_by) VALUES (?,?,?,?,?,?)");
  st_handle_release = prepare("UPDATE handles SET released_seq=?, released_by=? WHERE "
                              "session=? AND id=?");
  st_note = prepare("INSERT INTO notes(session, seq, idx, kind, kernel, device, symbol, "
                    "image, symbolic_id, numeric_ids, value, native, text, api) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  st_stack = prepare("INSERT INTO stacks(session, id, frames) VALUES (?,?,?)");
  st_thread = prepare("INSERT OR IGNORE INTO threads(session, idx, tid) VALUES (?,?,?)");
  st_plugin = prepare("INSERT INTO plugins(session, idx, name, path, version, backend) "
                      "VALUES (?,?,?,?,?,?)");
  st_state = prepare("INSERT OR REPLACE INTO recorder_state(session, part, state) "
                     "VALUES (?,?,?)");
  st_devtime = prepare("INSERT OR REPLACE INTO device_times(session, seq, api, queue, device, "
                       "start_ns, end_ns, device_start_ns, device_end_ns) "
                       "VALUES (?,?,?,?,?,?,?,?,?)");
  st_devclock = prepare("INSERT OR REPLACE INTO device_clocks(session, device, device_ns0, "
                        "host_ns0, device_ns1, host_ns1) VALUES (?,?,?,?,?,?)");
  /* Drift: the times mapped with the first sample, scaled by the device
   * clock's rate against the host's over the two samples. */
  st_drift = prepare("UPDATE device_times SET "
                     "start_ns = ?1 + CAST(round((device_start_ns - ?2) * ?3) AS INTEGER), "
                     "end_ns = ?1 + CAST(round((device_end_ns - ?2) * ?3) AS INTEGER) "
                     "WHERE session = ?4 AND device = ?5 AND start_ns IS NOT NULL");
  return st_chunk && st_inflight && st_inflight_done && st_data && st_blob && st_handle &&
         st_handle_release && st_note && st_stack && st_thread && st_plugin && st_state &&
         st_devtime && st_devclock && st_drift;
}

static void finalize_statements(void)
{
  sqlite3_stmt **all[] = {&st_chunk, &st_inflight, &st_inflight_done, &st_data, &st_blob,
                          &st_handle, &st_handle_release, &st_note, &st_stack, &st_thread,
                          &st_plugin, &st_state, &st_devtime, &st_devclock, &st_drift};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
    sqlite3_finalize(*all[i]);
    *all[i] = NULL;
  }
}

/* The file's schema version, in the write transaction: one of version 1
 * becomes version 2 first, its sessions kept as they are (a newer one is
 * not written to). */
static int schema_version(void)
{
  int version = pt_schema_stored_version(db);
  if (version == 1 && sqlite3_exec(db, shim_schema_sql, NULL, NULL, NULL) == SQLITE_OK &&
      sqlite3_exec(db, pt_schema_upgrade_sql, NULL, NULL, NULL) == SQLITE_OK)
    version = PT_SCHEMA_VERSION;
  return version;
}

/* Puts the template of a new database (schema.h) at `path` when nothing
 * is there: written beside it, then linked into place, so that a process
 * opening the path at the same moment sees nothing or all of it. Where
 * that fails (a file there already, a file system without links, a full
 * disk), the schema is created statement by statement as before. */
static void create_from_template(const char *path)
{
  struct stat st;
  if (lstat(path, &st) == 0 || errno != ENOENT)
    return;
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.new.XXXXXX", path);
  int fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
  if (fd < 0)
    return;
  size_t done = 0;
  while (done < pt_schema_template_size) {
    ssize_t w = write(fd, pt_schema_template + done, pt_schema_template_size - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      break;
    done += (size_t)w;
  }
  if (close(fd) == 0 && done == pt_schema_template_size)
    (void)link(tmp, path);
  unlink(tmp);
}

/* Opens the database and leaves a write transaction open (BEGIN
 * IMMEDIATE: it waits its turn behind other recording processes, and
 * nothing read in it goes stale) with the schema in place. */
static void say_cannot_record(const char *why)
{
  fprintf(stderr, "pitrace: cannot record to %s (%s); the application goes on unrecorded\n",
          shim_cfg.path, why);
}

static bool open_db(void)
{
  const char *path = shim_cfg.path;
  char why[512];
  db = open_rw(path, true, why, sizeof why);
  if (!db) {
    say_cannot_record(why);
    return false;
  }
  /* A rollback journal, not WAL: a commit writes the pages it adds (the
   * payloads, the chunks) once, into the database, where WAL writes them
   * to its log (with a checksum over every byte) and copies them into the
   * database again at each checkpoint: recording vadd 4194304 with data
   * all (50 MB moved) added 93 ms to the plain run through WAL, 56 ms with
   * the journal (2-core machine, 10 rounds; 70 and 33 ms on the GPU host:
   * bench/results/2026-11-26-h100-round8/). The journal holds only the
   * pages a commit changes that were there before (a few b-tree pages),
   * truncated after each commit. What it costs: a reader's
   * open read transaction holds off a commit until it ends (the recorder
   * waits, at most BUSY_MS; the application only once its ring is full).
   * A killed process leaves a consistent database either way (a journal
   * left behind is rolled back by the next connection that writes, as
   * the salvage does). synchronous=OFF: a process crash loses nothing the
   * OS has. */
  char *err = NULL;
  /* Some of SQLite's lock steps answer SQLITE_BUSY without calling the
   * busy handler (taking a file out of WAL mode, as an older recorder
   * left it, while another process has it open): several processes that
   * start recording into one path at once retry the whole start, within
   * the same bound as every other wait for the lock. */
  uint64_t since = shim_now();
  char schema_err[512] = "";
  bool ok;
  for (;;) {
    ok = sqlite3_exec(db, PT_PAGE_SIZE_SQL "PRAGMA synchronous=OFF; PRAGMA journal_mode=TRUNCATE;",
                      NULL, NULL, &err) == SQLITE_OK &&
         sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &err) == SQLITE_OK &&
         pt_schema_create(db, schema_err, sizeof schema_err);
    int code = sqlite3_errcode(db);
    if (ok || (code != SQLITE_BUSY && code != SQLITE_LOCKED) ||
        shim_now() - since > (uint64_t)BUSY_MS * 1000000u)
      break;
    if (!sqlite3_get_autocommit(db))
      sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_free(err);
    err = NULL;
    schema_err[0] = 0;
    struct timespec nap = {0, 2000000};
    nanosleep(&nap, NULL);
  }
  if (!ok) {
    say_cannot_record(err ? err : schema_err[0] ? schema_err : sqlite3_errmsg(db));
    sqlite3_free(err);
    sqlite3_close(db);
    db = NULL;
    return false;
  }
  int version = schema_version();
  if (version != PT_SCHEMA_VERSION) {
    fprintf(stderr, "pitrace: %s holds pitrace schema version %d, this recorder writes "
                    "version %d; record to another file\n", path, version, PT_SCHEMA_VERSION);
    sqlite3_close(db);
    db = NULL;
    return false;
  }
  return true;
}

/* ---- The session's row ------------------------------------------------------------------------
 * What a session's row says of its process: gathered on the application's
 * thread at the start, and packed into the ring file (ringfile_hdr.desc),
 * so that the row is made from the same description by the writer (once
 * the database is open, on its own thread) or, when the process died
 * before that, by whoever salvages its rings. */

enum { DESC_LABEL, DESC_COMMAND, DESC_CWD, DESC_HOST, DESC_ENV, DESC_FILTER, DESC_NSTR };

typedef struct session_desc {
  int64_t pid, start_unix_ns;
  uint32_t data_mode;
  struct {
    const char *p;
    uint32_t n;
  } s[DESC_NSTR];
} session_desc;

/* The most each field keeps in the ring file (the writer's row has them
 * whole): the environment (pitrace's and the runtime's variables only) goes
 * in whole or not at all (half a JSON object is not one). */
enum { MOST_LABEL = 256, MOST_COMMAND = 4096, MOST_CWD = 4096, MOST_HOST = 256, MOST_ENV = 6144,
       MOST_FILTER = 512 };
static const uint32_t desc_most[DESC_NSTR] = {MOST_LABEL, MOST_COMMAND, MOST_CWD,
                                              MOST_HOST,  MOST_ENV,     MOST_FILTER};

/* Packs d into out (at most RINGFILE_DESC bytes): data_mode, then each
 * string as its length and bytes (all little-endian u32). */
static uint32_t desc_pack(const session_desc *d, unsigned char *out)
{
  uint32_t at = 0;
  memcpy(out, &d->data_mode, 4);
  at += 4;
  for (int i = 0; i < DESC_NSTR; i++) {
    uint32_t n = d->s[i].n;
    const char *p = d->s[i].p;
    if (n > desc_most[i]) {
      if (i == DESC_ENV)
        p = "{}", n = 2;
      else
        n = desc_most[i];
    }
    memcpy(out + at, &n, 4);
    if (n)
      memcpy(out + at + 4, p, n);
    at += 4 + n;
  }
  return at;
}

_Static_assert(4 + 4 * DESC_NSTR + MOST_LABEL + MOST_COMMAND + MOST_CWD + MOST_HOST + MOST_ENV +
                       MOST_FILTER <= RINGFILE_DESC,
               "a packed description may not fit the ring file");

/* The description a ring file holds (its strings point into it); false
 * when it has none (version 1) or it is damaged. */
static bool desc_unpack(const ringfile_hdr *h, session_desc *d)
{
  if (h->version < 2 || h->desc_len < 4 || h->desc_len > RINGFILE_DESC)
    return false;
  const unsigned char *p = h->desc, *end = h->desc + h->desc_len;
  memcpy(&d->data_mode, p, 4);
  p += 4;
  for (int i = 0; i < DESC_NSTR; i++) {
    uint32_t n;
    if (end - p < 4)
      return false;
    memcpy(&n, p, 4);
    p += 4;
    if ((size_t)(end - p) < n)
      return false;
    d->s[i].p = (const char *)p;
    d->s[i].n = n;
    p += n;
  }
  d->pid = h->pid;
  d->start_unix_ns = h->start_unix_ns;
  return true;
}

/* Makes the session's row, running, in the open write transaction; its id,
 * or 0 (failed: fail_sql said why). */
static int64_t insert_session(const session_desc *d)
{
  static const char *const modes[] = {"none", "meta", "all"};
  sqlite3_stmt *s = prepare(
      "INSERT INTO sessions(label, pid, command, cwd, host, start_unix_ns, pi_version, "
      "env, ended, data_mode, filter, schema_version) VALUES (?,?,?,?,?,?,?,?,'running',?,?,?)");
  if (!s)
    return 0;
  sqlite3_bind_text(s, 1, d->s[DESC_LABEL].p, (int)d->s[DESC_LABEL].n, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 2, d->pid);
  sqlite3_bind_text(s, 3, d->s[DESC_COMMAND].p, (int)d->s[DESC_COMMAND].n, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 4, d->s[DESC_CWD].p, (int)d->s[DESC_CWD].n, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 5, d->s[DESC_HOST].p, (int)d->s[DESC_HOST].n, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 6, d->start_unix_ns);
  sqlite3_bind_text(s, 7, _PI_H_VERSION_STRING, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 8, d->s[DESC_ENV].n ? d->s[DESC_ENV].p : "{}",
                    d->s[DESC_ENV].n ? (int)d->s[DESC_ENV].n : 2, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 9, modes[d->data_mode <= DATA_ALL ? d->data_mode : DATA_ALL], -1,
                    SQLITE_STATIC);
  sqlite3_bind_text(s, 10, d->s[DESC_FILTER].p, (int)d->s[DESC_FILTER].n, SQLITE_TRANSIENT);
  sqlite3_bind_int(s, 11, PT_SCHEMA_VERSION);
  bool ok = step(s, "starting the session");
  sqlite3_finalize(s);
  return ok ? sqlite3_last_insert_rowid(db) : 0;
}

/* This process's description, made by writer_start for the writer's
 * thread (which frees it once the row is made). */
static int salvage_dir(const char *db_path, writer_status_fn status_of, void *ctx, char *err,
                       size_t errn);
static session_desc start_desc;
static stamp_knot start_knot; /* taken as the ring file was made */
static text start_env;
static char *start_cmd;
static char start_cwd[4096], start_host[256];

static void start_desc_free(void)
{
  free(start_env.p);
  free(start_cmd);
  start_env = (text){0};
  start_cmd = NULL;
}

/* The writer's first work, on its own thread: the database opened (which
 * may wait for another process's lock, at most BUSY_MS: the application's
 * calls wait in their rings meanwhile, not in the call), the session's
 * row made and committed. False (having said why) when recording cannot
 * go on. */
static bool writer_open(void)
{
  /* First, sessions of processes that recorded here and ended without a
   * word (the next process to record salvages them: up to a fraction of a
   * second for a large one, which the application's first call used to
   * wait for). The salvage uses the writer's state: this process's start
   * is kept aside meanwhile. */
  {
    uint64_t t0 = session_t0;
    char err[600];
    if (salvage_dir(shim_cfg.path, NULL, NULL, err, sizeof err) < 0)
      fprintf(stderr, "pitrace: %s\n", err);
    session_t0 = t0;
    stamp_add_knot(start_knot);
  }
  bool ok = open_db();
  if (ok && !(session_id = insert_session(&start_desc)))
    ok = false;
  start_desc_free();
  ok = ok && prepare_statements();
  if (ok) {
    /* Before the commit: a salvager that finds no row of this id (the
     * process died before the commit) makes the row from the description. */
    ringfile_set_session(session_id);
  }
  /* Committed, then the lock is let go until the first commit of calls. */
  ok = ok && commit_writes();
  if (!ok && db && !failed)
    say_cannot_record(sqlite3_errmsg(db));
  return ok;
}

bool writer_start(void)
{
  decide_printing();
  char path[4096];
  resolve_path(path, sizeof path);
  snprintf(shim_cfg.path, sizeof shim_cfg.path, "%s", path);
  /* A new file is the template, put in place whole; created readable by
   * its owner only, before SQLite opens it. The database is there before
   * the ring file is: a salvager finds it beside. */
  create_from_template(path);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) { /* one line, before a ring file beside it is tried */
    say_cannot_record(strerror(errno));
    return false;
  }
  fchmod(fd, 0600);
  close(fd);
  start_desc_free();
  json_env(&start_env);
  start_cmd = command_line();
  if (!getcwd(start_cwd, sizeof start_cwd))
    start_cwd[0] = 0;
  gethostname(start_host, sizeof start_host);
  start_host[sizeof start_host - 1] = 0;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int64_t start_unix_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
  session_t0 = shim_now();
  start_desc = (session_desc){.pid = getpid(), .start_unix_ns = start_unix_ns,
                              .data_mode = (uint32_t)shim_cfg.data_mode};
  const char *strs[DESC_NSTR] = {shim_cfg.label, start_cmd, start_cwd, start_host,
                                 start_env.p ? start_env.p : "{}", shim_cfg.filter};
  for (int i = 0; i < DESC_NSTR; i++) {
    start_desc.s[i].p = strs[i];
    start_desc.s[i].n = (uint32_t)strlen(strs[i]);
  }
  static unsigned char packed[RINGFILE_DESC];
  uint32_t packed_len = desc_pack(&start_desc, packed);
  /* The ring file is there before the session's row is (which the
   * writer's thread makes): whatever the process records is in a file
   * from its first call on. */
  ringfile_create(path, session_t0, start_unix_ns, packed, packed_len);
  start_knot = stamp_take_knot();
  keep_knot(start_knot); /* for a salvager: how its stamps were counting */
  writer_running = pthread_create(&writer_thread, NULL, writer_main, NULL) == 0;
  if (!writer_running) {
    fprintf(stderr, "pitrace: cannot start the recording thread; not recording\n");
    ringfile_remove();
    start_desc_free();
    return false;
  }
  return true;
}

/* Waits for the writer to be done with request `gen`, at most timeout_ms.
 * Naps of 50 µs: a process's end waits for its writer, which takes a
 * millisecond or so; waking every millisecond added up to one more to
 * every recorded run. Only clock_gettime and nanosleep: it also runs in
 * signal handlers. */
static void wait_done(int gen, int timeout_ms)
{
  struct timespec nap = {0, 50000};
  uint64_t until = shim_now() + (uint64_t)timeout_ms * 1000000u;
  while (atomic_load(&finish_done) < gen && shim_now() < until)
    nanosleep(&nap, NULL);
}

void writer_flush(int timeout_ms)
{
  if (!writer_running || pthread_equal(pthread_self(), writer_thread))
    return;
  int gen = atomic_fetch_add(&finish_gen, 1) + 1;
  int expected = 0;
  if (atomic_compare_exchange_strong(&finish_req, &expected, 1)) {
    writer_wake();
    wait_done(gen, timeout_ms);
  }
}

void writer_finish(const char *how, int signo, int timeout_ms)
{
  static _Atomic bool finishing;
  if (!writer_running || atomic_exchange(&finishing, true))
    return;
  if (pthread_equal(pthread_self(), writer_thread))
    return;
  snprintf(finish_how, sizeof finish_how, "%s", how);
  finish_signo = signo;
  int gen = atomic_fetch_add(&finish_gen, 1) + 1;
  atomic_store(&finish_req, 2);
  writer_wake();
  wait_done(gen, timeout_ms);
  atomic_store(&shim_recording, false);
  if (signo) /* in a signal handler: leave the rest to the process's end */
    return;
  if (atomic_load(&finish_done) >= gen) {
    pthread_join(writer_thread, NULL);
    writer_running = false;
    finalize_statements();
    /* One file again when this process is the last one using it: the
     * journal mode changes only with nobody else there (no waiting for
     * processes that still record into it). */
    if (db) { /* none when it could not be opened */
      sqlite3_busy_handler(db, NULL, NULL);
      sqlite3_exec(db, "PRAGMA journal_mode=DELETE;", NULL, NULL, NULL);
      sqlite3_close(db);
      db = NULL;
    }
  }
  reset_state();
}

/* ---- Salvage ------------------------------------------------------------------------------ */

/* Back to the state of a writer that never ran. */
static void reset_state(void)
{
  stamp_reset();
  for (size_t i = 0; i < nthreads; i++) {
    for (size_t j = 0; j < threads[i].nnotes; j++)
      free(threads[i].notes[j]);
    free(threads[i].notes);
  }
  free(threads);
  threads = NULL;
  nthreads = notes_waiting = 0;
  stop_encoders();
  free_chunks();
  for (pending_call *c = inflight, *n; c; c = n) {
    n = c->next;
    call_free(c);
  }
  inflight = NULL;
  for (pending_call *c = free_calls, *n; c; c = n) {
    n = c->next;
    free(c->in.p);
    free(c->inl.p);
    free(c->found.v);
    free(c);
  }
  free_calls = NULL;
  map_free(&handles);
  free(usm_allocs);
  usm_allocs = NULL;
  nusm_allocs = cap_usm_allocs = 0;
  map_free(&mapped);
  map_free(&memo);
  map_free(&devmemo);
  map_free(&stacks);
  seq_counter = next_handle_id = next_stack_id = 0;
  chunk_id = 0;
  last_ticket = 0;
  plugins_written = 0;
  last_t = 0;
  damaged = 0;
  failed = salvaging = draining = ending = pressure = false;
  maps_dirty = true;
  salvage_hdr = NULL;
  cur_api = "";
  forget_rings();
}

/* Salvages one ring file: 1 done, 0 nothing to do (its process lives, or
 * it was done already), -1 failed (err says why; the file stays). */
__attribute__((noinline)) static int salvage_file(const char *db_path, const char *file,
                                                 writer_status_fn status_of,
                                                 void *ctx, char *err, size_t errn)
{
  int fd = open(file, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : (snprintf(err, errn, "%s: %s", file, strerror(errno)), -1);
  /* The recording process holds this lock until it is gone. */
  struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  struct stat st;
  if (fcntl(fd, F_SETLK, &lk) != 0 || fstat(fd, &st) != 0) {
    close(fd);
    return 0;
  }
  if (st.st_size < (off_t)RINGFILE_HEADER) { /* its process died creating it */
    unlink(file);
    close(fd);
    return 0;
  }
  unsigned char *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    snprintf(err, errn, "%s: cannot map it: %s", file, strerror(errno));
    close(fd);
    return -1;
  }
  ringfile_hdr *hdr = (ringfile_hdr *)base;
  int ret = 0;
  sqlite3 *d = NULL;
  if (hdr->magic == RINGFILE_MAGIC && hdr->version > 2) {
    /* A newer recorder's: left for a pitrace that reads it (an older one
     * that took it for done removed it, calls and all). */
    snprintf(err, errn, "%s: a ring file of version %u, newer than this pitrace reads (2); "
             "left for a newer pitrace to salvage", file, hdr->version);
    ret = -1;
    goto out;
  }
  if (hdr->magic != RINGFILE_MAGIC || hdr->version < 1 ||
      atomic_load(&hdr->state) != RINGFILE_LIVE || hdr->ring_cap == 0 ||
      hdr->ring_cap > (1u << 30) || hdr->ring_cap % 8 ||
      (hdr->ring_cap & (hdr->ring_cap - 1)) || hdr->slot_size != RINGFILE_CTL + hdr->ring_cap) {
    unlink(file); /* done already, or never begun: nothing in it */
    goto out;
  }
  /* Version 2: the process's description, for a row it did not make. */
  session_desc desc;
  bool has_desc = desc_unpack(hdr, &desc);
  char why[512];
  if (!(d = open_rw(db_path, false, why, sizeof why))) {
    snprintf(err, errn, "%s: cannot salvage %s into it: %s", db_path, file, why);
    ret = -1;
    goto out;
  }
  db = d;
  sqlite3_stmt *q = NULL;
  const char *ended = NULL;
  int64_t pid = 0, start_ns = 0;
  if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
    snprintf(err, errn, "%s: cannot salvage %s into it: %s", db_path, file, sqlite3_errmsg(db));
    ret = -1;
    goto out;
  }
  /* A database without its tables: its process died before its writer
   * made them, so an old ring file (no description) holds nothing; with a
   * description, they are made, as its writer would have. */
  if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE name = 'sessions'", -1, &q,
                         NULL) == SQLITE_OK &&
      sqlite3_step(q) == SQLITE_DONE) {
    sqlite3_finalize(q);
    q = NULL;
    if (!has_desc) {
      unlink(file);
      goto out;
    }
    if (!pt_schema_create(db, why, sizeof why)) {
      snprintf(err, errn, "%s: cannot salvage %s into it: %s", db_path, file, why);
      ret = -1;
      goto out;
    }
  }
  sqlite3_finalize(q);
  q = NULL;
  if (schema_version() != PT_SCHEMA_VERSION) {
    snprintf(err, errn, "%s: cannot salvage %s into it: its schema version is not %d", db_path,
             file, PT_SCHEMA_VERSION);
    ret = -1;
    goto out;
  }
  if (sqlite3_prepare_v2(db, "SELECT ended, pid, start_unix_ns FROM sessions WHERE id=?", -1,
                         &q, NULL) != SQLITE_OK) {
    snprintf(err, errn, "%s: cannot salvage %s into it: %s", db_path, file, sqlite3_errmsg(db));
    ret = -1;
    goto out;
  }
  /* Its session: the row of that id made by this process (a row of the id
   * that another process made after this one's was rolled back is not). */
  sqlite3_bind_int64(q, 1, hdr->session);
  bool found = false, running = false;
  if (hdr->session > 0 && sqlite3_step(q) == SQLITE_ROW) {
    ended = (const char *)sqlite3_column_text(q, 0);
    pid = sqlite3_column_int64(q, 1);
    start_ns = sqlite3_column_int64(q, 2);
    found = pid == hdr->pid && start_ns == hdr->start_unix_ns;
    running = found && ended && strcmp(ended, "running") == 0;
  }
  sqlite3_finalize(q);
  q = NULL;
  salvaging = true; /* a failure from here on is this salvage's (fail_sql) */
  salvage_error[0] = 0;
  if (!found && has_desc) {
    /* It died before its row was committed: the row made now. */
    session_id = insert_session(&desc);
    if (!session_id) {
      snprintf(err, errn, "%s: cannot salvage %s into it: %s", db_path, file,
               salvage_error[0] ? salvage_error : sqlite3_errmsg(db));
      ret = -1;
      goto out;
    }
    hdr->session = session_id;
    pid = desc.pid;
    start_ns = desc.start_unix_ns;
    running = true;
  }
  if (!running) { /* its session ended, or is not in this file */
    unlink(file);
    goto out;
  }
  draining = true;
  salvage_hdr = hdr;
  /* The process's call stamps, and the knots its writer took. */
  stamp_reset(); /* its knots, not this process's */
  stamp_set_mode(hdr->stamps_tsc == 1);
  uint32_t nk = atomic_load(&hdr->nknots);
  for (uint32_t i = nk > RINGFILE_KNOTS ? nk - RINGFILE_KNOTS : 0; i < nk; i++)
    stamp_add_knot(hdr->knots[i % RINGFILE_KNOTS]);
  session_id = hdr->session;
  session_t0 = hdr->session_t0;
  slot_pos *pos = NULL;
  size_t npos = 0;
  if (!prepare_statements())
    snprintf(why, sizeof why, "%s", sqlite3_errmsg(db));
  else if (load_checkpoint(&pos, &npos, why, sizeof why))
    why[0] = 0;
  if (why[0]) {
    snprintf(err, errn, "%s: cannot salvage %s into it: %s", db_path, file, why);
    free(pos);
    ret = -1;
    goto out;
  }
  uint64_t committed = seq_counter;
  uint32_t nslots = atomic_load(&hdr->nslots);
  uint64_t fit = ((uint64_t)st.st_size - RINGFILE_HEADER) / hdr->slot_size;
  if (nslots > fit)
    nslots = (uint32_t)fit;
  shim_ring *list = NULL;
  for (uint32_t k = 0; k < nslots; k++) {
    shim_ring *r = (shim_ring *)(base + RINGFILE_HEADER + (size_t)k * hdr->slot_size);
    size_t rd = 0;
    for (size_t i = 0; i < npos; i++)
      if (pos[i].slot == k)
        rd = pos[i].rd;
    size_t head = atomic_load(&r->head);
    r->buf = (unsigned char *)r + RINGFILE_CTL;
    r->cap = hdr->ring_cap;
    r->slot = k;
    if (head < rd || head - rd > r->cap || rd % 8) { /* damaged: nothing to trust */
      damaged++;
      rd = head;
    }
    r->rd = r->head_seen = rd;
    r->next = list;
    list = r;
  }
  free(pos);
  salvage_list = list;
  merge();
  uint64_t pending = 0;
  for (pending_call *c = inflight; c; c = c->next)
    pending++;
  write_plugins();
  flush_chunk();
  write_chunks();
  write_inflight();
  int ws = 0;
  const char *how = "killed";
  int signo = 0, code = -1;
  if (status_of && status_of(ctx, (int)pid, start_ns, &ws)) {
    if (WIFSIGNALED(ws)) {
      signo = WTERMSIG(ws);
      code = 128 + signo;
    } else if (WIFEXITED(ws)) {
      how = "_exit";
      code = WEXITSTATUS(ws);
    }
  }
  char reason[256];
  int len = snprintf(reason, sizeof reason, "the process ended without a word; %llu call%s "
                     "salvaged from its rings", (unsigned long long)(seq_counter - committed),
                     seq_counter - committed == 1 ? "" : "s");
  if (pending)
    len += snprintf(reason + len, sizeof reason - (size_t)len, ", %llu never returned",
                    (unsigned long long)pending);
  if (damaged)
    snprintf(reason + len, sizeof reason - (size_t)len, "; %llu damaged record%s skipped",
             (unsigned long long)damaged, damaged == 1 ? "" : "s");
  uint64_t dur = last_t > session_t0 ? last_t - session_t0 : 0;
  /* Damaged call times can make that anything (and start + it overflow):
   * the calls were made between the session's start and now. */
  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  int64_t now_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
  uint64_t most = start_ns >= 0 && now_ns > start_ns ? (uint64_t)(now_ns - start_ns) : 0;
  if (dur > most)
    dur = most;
  end_session(how, signo, start_ns + (int64_t)dur, dur, reason, code);
  if (!failed && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) {
    atomic_store(&hdr->state, RINGFILE_DONE);
    unlink(file);
    ret = 1;
    /* One file again, as a session that ended in order, unless another
     * process still uses the database. */
    sqlite3_busy_handler(db, NULL, NULL);
    sqlite3_exec(db, "PRAGMA journal_mode=DELETE;", NULL, NULL, NULL);
  } else {
    snprintf(err, errn, "%s: cannot salvage %s into it: %s", db_path, file,
             salvage_error[0] ? salvage_error : sqlite3_errmsg(db));
    ret = -1;
  }
out:
  salvage_list = NULL;
  finalize_statements();
  if (d)
    sqlite3_close(d); /* an open transaction is rolled back */
  db = NULL;
  reset_state();
  munmap(base, (size_t)st.st_size);
  close(fd);
  return ret;
}

/* Salvages every ring file beside db_path but this process's own. */
static int salvage_dir(const char *db_path, writer_status_fn status_of, void *ctx, char *err,
                       size_t errn)
{
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", db_path);
  char *slash = strrchr(dir, '/');
  const char *base = slash ? slash + 1 : dir;
  char prefix[4200];
  snprintf(prefix, sizeof prefix, "%s-rings.", base);
  if (slash)
    *slash = 0;
  DIR *dd = opendir(slash ? (*dir ? dir : "/") : ".");
  if (!dd)
    return 0;
  int n = 0;
  size_t plen = strlen(prefix);
  struct dirent *e;
  while ((e = readdir(dd)))
    if (strncmp(e->d_name, prefix, plen) == 0) {
      char file[8400];
      snprintf(file, sizeof file, "%s%s%s", slash ? (*dir ? dir : "") : "", slash ? "/" : "",
               e->d_name);
      /* Not this process's own, which it has locked: a lock taken again
       * by the same process is granted, and closing the file then would
       * let go of the process's own lock. */
      struct stat st;
      if (stat(file, &st) == 0 && ringfile_is_own(&st))
        continue;
      char one[1024];
      int r = salvage_file(db_path, file, status_of, ctx, one, sizeof one);
      if (r < 0 && n >= 0) {
        snprintf(err, errn, "%s", one);
        n = -1;
      } else if (r > 0 && n >= 0) {
        n++;
      }
    }
  closedir(dd);
  return n;
}

int writer_salvage(const char *db_path, writer_status_fn status_of, void *ctx, char *err,
                   size_t errn)
{
  if (writer_running) {
    snprintf(err, errn, "cannot salvage rings while recording");
    return -1;
  }
  return salvage_dir(db_path, status_of, ctx, err, errn);
}
