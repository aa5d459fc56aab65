/*
 * cursor.c: a session's calls in seq order without holding the session
 * (pt_cursor_*, session.h), for the verbs that read every call once (show,
 * stats, export). Chunks hold calls in the order they returned, so a call
 * made early that returned late sits in a later chunk. Calls wait in a
 * small heap; the lowest is yielded when it is the next seq (sessions number
 * calls 1, 2, 3...), or, past a gap, once no chunk still unread can hold an
 * earlier one: then a pass over the chunks notes each one's lowest seq
 * (once; a session recorded on one thread never needs it). Each chunk's
 * parsed JSON is freed once all its calls are yielded.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "session.h"

/* One decoded chunk (or the calls in flight) with calls not all yielded. */
typedef struct slot {
  pt_json_arena arena;
  pt_call *v;
  size_t n, cap, left;
} slot;

typedef struct pending {
  int64_t seq;
  uint32_t slot, idx;
} pending;

struct pt_cursor {
  const pt_db *db;
  int64_t session;
  sqlite3_stmt *rows;
  bool began; /* the cursor's read transaction */
  bool ended; /* no chunk row left */
  int64_t *bound; /* bound[k]: the lowest seq of chunks k.., INT64_MAX past them */
  size_t nchunks, next; /* chunks (when bound is known), chunks read */
  int64_t last; /* the seq yielded last */
  slot *slots;
  size_t nslots, cap_slots;
  uint32_t *unused;
  size_t nunused, cap_unused;
  pending *heap;
  size_t nheap, cap_heap;
  int64_t emptied; /* the slot whose last call was yielded last: freed next time */
  pt_call cur;
};

static bool heap_push(pt_cursor *c, pending p)
{
  pending *h = pt_grow(c->heap, &c->cap_heap, c->nheap, sizeof *h);
  if (!h)
    return false;
  c->heap = h;
  size_t i = c->nheap++;
  while (i && h[(i - 1) / 2].seq > p.seq) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = p;
  return true;
}

static pending heap_pop(pt_cursor *c)
{
  pending *h = c->heap, top = h[0], last = h[--c->nheap];
  size_t i = 0, n = c->nheap;
  for (;;) {
    size_t k = 2 * i + 1;
    if (k >= n)
      break;
    if (k + 1 < n && h[k + 1].seq < h[k].seq)
      k++;
    if (h[k].seq >= last.seq)
      break;
    h[i] = h[k];
    i = k;
  }
  if (n)
    h[i] = last;
  return top;
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
  pt_json_arena_free(&s->arena);
  s->n = s->left = 0;
  uint32_t *u = pt_grow(c->unused, &c->cap_unused, c->nunused, sizeof *u);
  if (u) { /* else the slot is only not reused */
    c->unused = u;
    u[c->nunused++] = k;
  }
}

/* Puts a filled slot's calls in the heap. */
static bool queue_slot(pt_cursor *c, uint32_t k, char *err, size_t errn)
{
  slot *s = &c->slots[k];
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

/* A pass of its own over the chunk rows: each chunk's lowest seq, then the
 * lowest of each suffix. */
static bool find_bounds(pt_cursor *c, char *err, size_t errn)
{
  size_t cap = 0;
  int rc;
  sqlite3_stmt *rows = pt__chunk_rows(c->db, c->session, err, errn);
  if (!rows)
    return false;
  while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
    int64_t *b = pt_grow(c->bound, &cap, c->nchunks + 1, sizeof *b);
    if (!b)
      break;
    c->bound = b;
    b[c->nchunks++] = pt__chunk_lowest_seq(sqlite3_column_text(rows, 0),
                                           (size_t)sqlite3_column_bytes(rows, 0));
  }
  sqlite3_finalize(rows);
  if (rc == SQLITE_ROW) {
    snprintf(err, errn, "out of memory reading %s", c->db->path);
    return false;
  }
  if (rc != SQLITE_DONE) {
    snprintf(err, errn, "%s is damaged or truncated: %s", c->db->path,
             sqlite3_errmsg(c->db->db));
    return false;
  }
  int64_t *b = pt_grow(c->bound, &cap, c->nchunks + 1, sizeof *b);
  if (!b) {
    snprintf(err, errn, "out of memory reading %s", c->db->path);
    return false;
  }
  c->bound = b;
  b[c->nchunks] = INT64_MAX;
  for (size_t k = c->nchunks; k-- > 0;)
    if (b[k + 1] < b[k])
      b[k] = b[k + 1];
  return true;
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
  c->emptied = -1;
  /* Both passes and the calls in flight see one state of a file that a
   * recording process may still be writing. */
  if (sqlite3_get_autocommit(db->db))
    c->began = sqlite3_exec(db->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
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
  return c;
}

/* Decodes the next chunk row into a slot and queues its calls. */
static bool read_chunk(pt_cursor *c, char *err, size_t errn)
{
  int rc = sqlite3_step(c->rows);
  if (rc != SQLITE_ROW) {
    if (rc != SQLITE_DONE)
      snprintf(err, errn, "%s is damaged or truncated: %s", c->db->path,
               sqlite3_errmsg(c->db->db));
    c->ended = true;
    return rc == SQLITE_DONE;
  }
  c->next++;
  int64_t k = take_slot(c);
  if (k < 0) {
    snprintf(err, errn, "out of memory reading %s", c->db->path);
    return false;
  }
  slot *s = &c->slots[k];
  char why[512];
  if (!pt__decode_chunk(&s->arena, sqlite3_column_text(c->rows, 0),
                        (size_t)sqlite3_column_bytes(c->rows, 0), &s->v, &s->n, &s->cap, why,
                        sizeof why)) {
    snprintf(err, errn, "%s %s", c->db->path, why);
    give_slot(c, (uint32_t)k);
    return false;
  }
  return queue_slot(c, (uint32_t)k, err, errn);
}

const pt_call *pt_cursor_next(pt_cursor *c, char *err, size_t errn)
{
  err[0] = 0;
  if (c->emptied >= 0) {
    give_slot(c, (uint32_t)c->emptied);
    c->emptied = -1;
  }
  while (!c->ended && (!c->nheap || c->heap[0].seq != c->last + 1)) {
    if (c->nheap && !c->bound && !find_bounds(c, err, errn))
      return NULL;
    if (c->nheap && c->bound && (c->next >= c->nchunks || c->heap[0].seq < c->bound[c->next]))
      break;
    if (!read_chunk(c, err, errn))
      return NULL;
  }
  if (!c->nheap)
    return NULL;
  pending p = heap_pop(c);
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
  sqlite3_finalize(c->rows);
  if (c->began)
    sqlite3_exec(c->db->db, "COMMIT", NULL, NULL, NULL);
  for (size_t k = 0; k < c->nslots; k++) {
    pt_json_arena_free(&c->slots[k].arena);
    free(c->slots[k].v);
  }
  free(c->slots);
  free(c->unused);
  free(c->heap);
  free(c->bound);
  free(c);
}
