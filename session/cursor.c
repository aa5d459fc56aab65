/*
 * cursor.c: a session's calls in seq order without holding the session
 * (pt_cursor_*, session.h), for the verbs that read every call once (show,
 * stats, export). Chunks hold calls in the order they returned, so a call
 * made early that returned late sits in a later chunk. Calls wait in a
 * small heap; the lowest is yielded when it is the next seq (sessions number
 * calls 1, 2, 3...), so a session recorded on one thread is read once, chunk
 * after chunk. Past a gap, a pass over the chunks that does not parse them
 * notes each one's lowest seq; from then on the unread chunk holding the
 * lowest seq is read next (by its id), and a waiting call is yielded once
 * no unread chunk holds an earlier one. A call that returned long after
 * later ones thus costs one chunk read early, not every call in between
 * held. Each chunk's parsed JSON is freed once all its calls are yielded
 * (its arena's largest block kept for the next chunk). A chunk whose calls
 * are the next seqs in a row, none waiting before them (every chunk of a
 * session recorded on one thread), is yielded straight from its slot,
 * without the heap. Where more than one processor is online, a thread of
 * the cursor's own reads and decodes the chunks ahead, in the order they
 * were written, while the caller uses the calls (a gap stops it: the chunks
 * it decoded are taken, then the pass that finds the lowest seqs runs as
 * without it).
 * (A damaged file whose seqs repeat still yields every call, not all of
 * them in order.)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader.h"
#include "session.h"

/* Chunks the reading thread decodes ahead, at most. */
#define AHEAD 3

/* One decoded chunk (or the calls in flight) with calls not all yielded. */
typedef struct slot {
  pt_json_arena arena;
  pt_call *v;
  size_t n, cap, left;
} slot;

/* A call waiting to be yielded. */
typedef struct pending {
  int64_t seq;
  uint32_t slot, idx;
} pending;

/* An unread chunk (once the lowest seqs are known). */
typedef struct unread {
  int64_t lowest, id;
} unread;

/* The thread that reads the chunk rows ahead: decoded chunks in buf
 * (ready: count of them from head, in order), given to slots by swapping
 * their arenas and arrays. Everything but the thread's own chunk (the one
 * after the ready ones) is the caller's, under lock. */
typedef struct reader {
  pthread_t tid;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  slot buf[AHEAD];
  size_t head, count;
  size_t rows; /* chunk rows decoded */
  bool stop;   /* the caller asks the thread to end */
  bool done;   /* no row left, or err says what went wrong */
  char err[sizeof ((pt_db *)0)->path + 700]; /* the file's name, what is wrong */
  pt_chunk_dec dec;
} reader;

struct pt_cursor {
  const pt_db *db;
  int64_t session;
  sqlite3_stmt *rows; /* chunk after chunk, until the lowest seqs are known */
  sqlite3_stmt *row;  /* then one by id */
  bool began;         /* the cursor's read transaction */
  bool ended;         /* rows has no row left */
  size_t read;        /* chunks rows gave */
  bool known;         /* the lowest seqs are known: chunks come from `ahead` */
  unread *ahead;      /* a heap of the unread chunks by lowest seq */
  size_t nahead, cap_ahead;
  int64_t last; /* the seq yielded last */
  slot *slots;
  size_t nslots, cap_slots;
  uint32_t *unused;
  size_t nunused, cap_unused;
  pending *heap;
  size_t nheap, cap_heap;
  int64_t emptied; /* the slot whose last call was yielded last: freed next time */
  reader *ahead_thread; /* reads rows ahead, or NULL */
  int64_t run;     /* the slot yielded in a row, without the heap (-1: none) */
  size_t run_idx;  /* its next call */
  pt_chunk_dec dec;
  pt_call cur;
};

/* Heaps (pending, unread) of `elem`-byte elements, at most 16, whose first
 * member is their int64_t key. */
_Static_assert(sizeof(pending) <= 16 && sizeof(unread) <= 16, "heap elements are 16 bytes");
static int64_t key_at(const void *v, size_t elem, size_t i)
{
  int64_t k;
  memcpy(&k, (const char *)v + i * elem, sizeof k);
  return k;
}

static void sift_up(void *v, size_t elem, size_t i)
{
  char item[16];
  memcpy(item, (char *)v + i * elem, elem);
  int64_t key = key_at(item, elem, 0);
  while (i && key_at(v, elem, (i - 1) / 2) > key) {
    memcpy((char *)v + i * elem, (char *)v + (i - 1) / 2 * elem, elem);
    i = (i - 1) / 2;
  }
  memcpy((char *)v + i * elem, item, elem);
}

/* Removes the top of a heap of *n elements into out. */
static void heap_take(void *v, size_t elem, size_t *n, void *out)
{
  char last[16];
  memcpy(out, v, elem);
  memcpy(last, (char *)v + --*n * elem, elem);
  int64_t key = key_at(last, elem, 0);
  size_t i = 0;
  for (;;) {
    size_t k = 2 * i + 1;
    if (k >= *n)
      break;
    if (k + 1 < *n && key_at(v, elem, k + 1) < key_at(v, elem, k))
      k++;
    if (key_at(v, elem, k) >= key)
      break;
    memcpy((char *)v + i * elem, (char *)v + k * elem, elem);
    i = k;
  }
  if (*n)
    memcpy((char *)v + i * elem, last, elem);
}

static bool heap_push(pt_cursor *c, pending p)
{
  pending *h = pt_grow(c->heap, &c->cap_heap, c->nheap, sizeof *h);
  if (!h)
    return false;
  c->heap = h;
  h[c->nheap] = p;
  sift_up(h, sizeof *h, c->nheap++);
  return true;
}

/* A slot to decode into (its arena empty, no calls). */
static int64_t take_slot(pt_cursor *c)
{
  if (c->nunused)
    return c->unused[--c->nunused];
  slot *v = pt_grow(c->slots, &c->cap_slots, c->nslots, sizeof *v);
  if (!v)
    return -1;
  c->slots = v;
  memset(&v[c->nslots], 0, sizeof *v);
  return (int64_t)c->nslots++;
}

static void give_slot(pt_cursor *c, uint32_t k)
{
  slot *s = &c->slots[k];
  pt_json_arena_reset(&s->arena);
  s->n = s->left = 0;
  uint32_t *u = pt_grow(c->unused, &c->cap_unused, c->nunused, sizeof *u);
  if (u) { /* else the slot is only not reused */
    c->unused = u;
    u[c->nunused++] = k;
  }
}

/* Whether a slot's calls are the next seqs in a row, none waiting before
 * their last. */
static bool in_a_row(const pt_cursor *c, const slot *s)
{
  if (!s->n || (uint64_t)s->v[0].seq != (uint64_t)c->last + 1 ||
      (c->nheap && c->heap[0].seq <= s->v[s->n - 1].seq))
    return false;
  for (size_t i = 1; i < s->n; i++)
    if ((uint64_t)s->v[i].seq != (uint64_t)s->v[i - 1].seq + 1)
      return false;
  return true;
}

/* Puts a filled slot's calls in the heap, or yields them in a row. */
static bool queue_slot(pt_cursor *c, uint32_t k, char *err, size_t errn)
{
  slot *s = &c->slots[k];
  if (c->run < 0 && in_a_row(c, s)) {
    c->run = k;
    c->run_idx = 0;
    return true;
  }
  s->left = s->n;
  for (size_t i = 0; i < s->n; i++)
    if (!heap_push(c, (pending){s->v[i].seq, k, (uint32_t)i})) {
      snprintf(err, errn, "out of memory reading %s", c->db->path);
      return false;
    }
  if (!s->n)
    give_slot(c, k);
  return true;
}

/* A pass of its own over the chunk rows: the lowest seq of each chunk not
 * read yet (past the first c->read), into the heap of unread chunks. */
static bool find_lowest(pt_cursor *c, char *err, size_t errn)
{
  int rc;
  sqlite3_stmt *rows = pt__chunk_rows(c->db, c->session, err, errn);
  c->row = rows ? pt__chunk_row(c->db, c->session, err, errn) : NULL;
  if (!c->row) {
    sqlite3_finalize(rows);
    return false;
  }
  for (size_t k = 0; (rc = sqlite3_step(rows)) == SQLITE_ROW; k++) {
    if (k < c->read)
      continue;
    unread *a = pt_grow(c->ahead, &c->cap_ahead, c->nahead, sizeof *a);
    if (!a)
      break;
    c->ahead = a;
    a[c->nahead] = (unread){pt__chunk_lowest_seq(rows), sqlite3_column_int64(rows, 1)};
    sift_up(a, sizeof *a, c->nahead++);
  }
  sqlite3_finalize(rows);
  if (rc == SQLITE_ROW) {
    snprintf(err, errn, "out of memory reading %s", c->db->path);
    return false;
  }
  if (rc != SQLITE_DONE) {
    pt__read_error(c->db->db, c->db->path, NULL, err, errn);
    return false;
  }
  sqlite3_finalize(c->rows);
  c->rows = NULL;
  c->known = true;
  return true;
}

/* ---- Reading ahead ------------------------------------------------------------------- */

static void *read_ahead(void *p)
{
  pt_cursor *c = p;
  reader *r = c->ahead_thread;
  char why[512];
  for (bool done = false; !done;) {
    pthread_mutex_lock(&r->lock);
    while (r->count == AHEAD && !r->stop)
      pthread_cond_wait(&r->cond, &r->lock);
    slot *d = &r->buf[(r->head + r->count) % AHEAD];
    done = r->stop;
    pthread_mutex_unlock(&r->lock);
    if (done)
      break;
    d->n = 0;
    int rc = sqlite3_step(c->rows);
    bool ok = rc == SQLITE_ROW && pt__decode_chunk(&r->dec, &d->arena, c->rows, c->session,
                                                   &d->v, &d->n, &d->cap, why, sizeof why);
    pthread_mutex_lock(&r->lock);
    if (ok) {
      r->count++;
      r->rows++;
    } else {
      if (rc == SQLITE_ROW)
        snprintf(r->err, sizeof r->err, "%s %s", c->db->path, why);
      else if (rc != SQLITE_DONE)
        pt__read_error(c->db->db, c->db->path, NULL, r->err, sizeof r->err);
      r->done = done = true;
    }
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
  }
  return NULL;
}

/* Starts the reading thread where it can help (several processors, a
 * connection that two threads may use at once: SQLite's serialized mode,
 * where the connection has a mutex); without it the rows are read as they
 * are needed. */
static void start_ahead(pt_cursor *c)
{
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || !sqlite3_db_mutex(c->db->db))
    return;
  reader *r = calloc(1, sizeof *r);
  if (!r)
    return;
  pthread_mutex_init(&r->lock, NULL);
  pthread_cond_init(&r->cond, NULL);
  c->ahead_thread = r;
  if (pthread_create(&r->tid, NULL, read_ahead, c) != 0) {
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->cond);
    free(r);
    c->ahead_thread = NULL;
  }
}

/* Moves the reading thread's next decoded chunk into slot s (whose arena
 * and array the thread gets back to decode into); false when it has none.
 * Called under r->lock. */
static bool take_ahead(reader *r, slot *s)
{
  if (!r->count)
    return false;
  slot *d = &r->buf[r->head], t = *s;
  s->arena = d->arena;
  s->v = d->v;
  s->cap = d->cap;
  s->n = d->n;
  d->arena = t.arena;
  d->v = t.v;
  d->cap = t.cap;
  d->n = 0;
  r->head = (r->head + 1) % AHEAD;
  r->count--;
  pthread_cond_broadcast(&r->cond);
  return true;
}

/* Ends the reading thread (if any). With `keep`, the chunks it decoded are
 * queued into slots and counted as read (false when memory ran out), and
 * the rows it stepped are left to find_lowest's pass (stepped again past
 * their end, they would start over); else dropped. */
static bool stop_ahead(pt_cursor *c, bool keep, char *err, size_t errn)
{
  reader *r = c->ahead_thread;
  if (!r)
    return true;
  pthread_mutex_lock(&r->lock);
  r->stop = true;
  pthread_cond_broadcast(&r->cond);
  pthread_mutex_unlock(&r->lock);
  pthread_join(r->tid, NULL);
  c->ahead_thread = NULL;
  bool ok = true;
  if (keep) {
    c->read = r->rows;
    while (ok && r->count) {
      int64_t k = take_slot(c);
      ok = k >= 0 && take_ahead(r, &c->slots[k]) && queue_slot(c, (uint32_t)k, err, errn);
    }
    if (!ok && !err[0])
      snprintf(err, errn, "out of memory reading %s", c->db->path);
  }
  for (int k = 0; k < AHEAD; k++) {
    pt_json_arena_free(&r->buf[k].arena);
    free(r->buf[k].v);
  }
  pt_chunk_dec_free(&r->dec);
  pthread_mutex_destroy(&r->lock);
  pthread_cond_destroy(&r->cond);
  free(r);
  return ok;
}

pt_cursor *pt_cursor_open(const pt_db *db, int64_t session, char *err, size_t errn)
{
  err[0] = 0;
  pt_cursor *c = calloc(1, sizeof *c);
  if (!c) {
    snprintf(err, errn, "out of memory reading %s", db->path);
    return NULL;
  }
  c->db = db;
  c->session = session;
  c->emptied = c->run = -1;
  c->began = pt__read_begin(db); /* both passes and the calls in flight */
  c->rows = pt__chunk_rows(db, session, err, errn);
  if (!c->rows) {
    pt_cursor_close(c);
    return NULL;
  }
  int64_t k = take_slot(c);
  if (k < 0 || !pt__inflight_calls(db, session, &c->slots[k].arena, &c->slots[k].v,
                                   &c->slots[k].n, &c->slots[k].cap, err, errn) ||
      !queue_slot(c, (uint32_t)k, err, errn)) {
    if (!err[0])
      snprintf(err, errn, "out of memory reading %s", db->path);
    pt_cursor_close(c);
    return NULL;
  }
  start_ahead(c);
  return c;
}

/* Decodes a chunk row (column 0 of st) into a slot and queues its calls.
 * A chunk read by id (u: not NULL) must hold the lowest seq the pass over
 * the rows found in the row of that id: where it does not, the file is
 * damaged (ids that repeat, an index that points elsewhere), and reading
 * on would yield one chunk twice and another never. */
static bool decode_row(pt_cursor *c, sqlite3_stmt *st, const unread *u, char *err, size_t errn)
{
  int64_t k = take_slot(c);
  if (k < 0) {
    snprintf(err, errn, "out of memory reading %s", c->db->path);
    return false;
  }
  slot *s = &c->slots[k];
  char why[512];
  if (!pt__decode_chunk(&c->dec, &s->arena, st, c->session, &s->v, &s->n, &s->cap, why,
                        sizeof why)) {
    snprintf(err, errn, "%s %s", c->db->path, why);
    give_slot(c, (uint32_t)k);
    return false;
  }
  int64_t lowest = INT64_MAX;
  for (size_t i = 0; u && i < s->n; i++)
    lowest = s->v[i].seq < lowest ? s->v[i].seq : lowest;
  if (u && lowest != u->lowest) {
    snprintf(err, errn, "%s is damaged: session %lld, chunk %lld: its lowest call is %lld, "
             "not %lld as the list of chunks says", c->db->path, (long long)c->session,
             (long long)pt__chunk_shown_id(u->id), (long long)lowest, (long long)u->lowest);
    give_slot(c, (uint32_t)k);
    return false;
  }
  return queue_slot(c, (uint32_t)k, err, errn);
}

/* The next chunk row, in the order they were written. */
static bool read_next(pt_cursor *c, char *err, size_t errn)
{
  reader *r = c->ahead_thread;
  if (r) {
    int64_t k = take_slot(c);
    if (k < 0) {
      snprintf(err, errn, "out of memory reading %s", c->db->path);
      return false;
    }
    pthread_mutex_lock(&r->lock);
    while (!r->count && !r->done)
      pthread_cond_wait(&r->cond, &r->lock);
    bool took = take_ahead(r, &c->slots[k]);
    pthread_mutex_unlock(&r->lock);
    if (took) {
      c->read++;
      return queue_slot(c, (uint32_t)k, err, errn);
    }
    give_slot(c, (uint32_t)k);
    c->ended = true;
    snprintf(err, errn, "%s", r->err);
    return !r->err[0];
  }
  int rc = sqlite3_step(c->rows);
  if (rc == SQLITE_ROW) {
    c->read++;
    return decode_row(c, c->rows, NULL, err, errn);
  }
  if (rc != SQLITE_DONE)
    pt__read_error(c->db->db, c->db->path, NULL, err, errn);
  c->ended = true;
  return rc == SQLITE_DONE;
}

/* The unread chunk that holds the lowest seq. */
static bool read_lowest(pt_cursor *c, char *err, size_t errn)
{
  unread u;
  heap_take(c->ahead, sizeof u, &c->nahead, &u);
  sqlite3_reset(c->row);
  sqlite3_bind_int64(c->row, 2, u.id);
  int rc = sqlite3_step(c->row);
  if (rc == SQLITE_ROW)
    return decode_row(c, c->row, &u, err, errn);
  pt__read_error(c->db->db, c->db->path, rc == SQLITE_DONE ? "a chunk of calls went missing" : NULL,
                 err, errn);
  return false;
}

const pt_call *pt_cursor_next(pt_cursor *c, char *err, size_t errn)
{
  err[0] = 0;
  if (c->emptied >= 0) {
    give_slot(c, (uint32_t)c->emptied);
    c->emptied = -1;
  }
  for (bool more = true; more;) {
    if (c->run >= 0 || (c->nheap && (uint64_t)c->heap[0].seq == (uint64_t)c->last + 1))
      break;
    if (!c->known && !c->ended && c->nheap) /* a gap: from now on by lowest seq */
      more = stop_ahead(c, true, err, errn) && find_lowest(c, err, errn);
    else if (!c->known && !c->ended)
      more = read_next(c, err, errn);
    else if (c->known && c->nahead && (!c->nheap || c->heap[0].seq >= c->ahead[0].lowest))
      more = read_lowest(c, err, errn);
    else
      break;
    if (!more)
      return NULL;
  }
  if (c->run >= 0) {
    slot *s = &c->slots[c->run];
    c->cur = s->v[c->run_idx++];
    c->last = c->cur.seq;
    if (c->run_idx == s->n) {
      c->emptied = c->run;
      c->run = -1;
    }
    return &c->cur;
  }
  if (!c->nheap)
    return NULL;
  pending p;
  heap_take(c->heap, sizeof p, &c->nheap, &p);
  c->last = p.seq;
  slot *s = &c->slots[p.slot];
  c->cur = s->v[p.idx];
  if (--s->left == 0)
    c->emptied = p.slot;
  return &c->cur;
}

void pt_cursor_close(pt_cursor *c)
{
  if (!c)
    return;
  char err[8];
  stop_ahead(c, false, err, sizeof err);
  sqlite3_finalize(c->rows);
  sqlite3_finalize(c->row);
  pt__read_end(c->db, c->began);
  for (size_t k = 0; k < c->nslots; k++) {
    pt_json_arena_free(&c->slots[k].arena);
    free(c->slots[k].v);
  }
  free(c->slots);
  pt_chunk_dec_free(&c->dec);
  free(c->unused);
  free(c->heap);
  free(c->ahead);
  free(c);
}
