/*
 * seek.c: a session's calls by seq without holding the session (pt_seek_*,
 * session.h), for a verb that reads calls in an order of its own (diff
 * compares calls in the order it aligned them, per thread, and looks for a
 * call found elsewhere). Opening notes each chunk's range of seqs (from the
 * row for version 2; version-1 chunks say nothing of theirs, so they are
 * decoded once to learn it); a call is then looked up in the few chunks
 * decoded last, else in the chunks whose range holds its seq, narrowest
 * first (a chunk that also holds a call that returned late spans more). The
 * calls that never returned are held from the start.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "session.h"

/* Chunks held decoded at once: a verb reading in nearly seq order decodes
 * each chunk about once, and diff's search for calls out of order reads a
 * call of one side against up to 8 of the other, the same ones for many
 * calls: with 4 slots those chunks were decoded again for every call (a
 * 1 M-call session against a 150 k-call one: 366 s, now 18 s; docs/benchmarks.md). */
#define SEEK_SLOTS 9

/* A chunk row: its id (as pt__chunk_rows gives it), range of seqs and
 * version. */
typedef struct range {
  int64_t id, first, last;
  int version;
} range;

/* Decoded calls, sorted by seq. */
typedef struct held {
  pt_json_arena arena;
  pt_call *v;
  size_t n, cap;
  int64_t id;     /* the chunk's id; -1: the slot holds nothing */
  uint64_t used;  /* when it served last */
} held;

struct pt_seek {
  const pt_db *db;
  int64_t session;
  sqlite3_stmt *row; /* one chunk row by id */
  bool began;        /* the read transaction of pt_seek_open */
  range *ranges;     /* by first seq */
  size_t nranges;
  held inflight;     /* the calls that never returned */
  held slots[SEEK_SLOTS];
  int last;          /* the slot that served last */
  uint64_t clock;
  pt_chunk_dec dec;  /* zstd context and body buffer, reused from chunk to chunk */
};

static int cmp_call(const void *a, const void *b)
{
  const pt_call *x = a, *y = b;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_range(const void *a, const void *b)
{
  const range *x = a, *y = b;
  return x->first < y->first ? -1 : x->first > y->first;
}

static int cmp_range_id(const void *a, const void *b)
{
  const range *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static void held_free(held *h)
{
  pt_json_arena_free(&h->arena);
  free(h->v);
  memset(h, 0, sizeof *h);
  h->id = -1;
}

/* Sorts freshly decoded calls by seq (chunks hold them as they returned). */
static void held_sort(held *h)
{
  for (size_t i = 1; i < h->n; i++)
    if (h->v[i - 1].seq > h->v[i].seq) {
      qsort(h->v, h->n, sizeof *h->v, cmp_call);
      return;
    }
}

static const pt_call *held_find(const held *h, int64_t seq)
{
  /* Most chunks hold seqs one after the other: seq's place first. */
  uint64_t at = (uint64_t)seq - (uint64_t)(h->n ? h->v[0].seq : 0);
  if (at < h->n && h->v[at].seq == seq)
    return &h->v[at];
  pt_call key = {.seq = seq};
  return h->n ? bsearch(&key, h->v, h->n, sizeof *h->v, cmp_call) : NULL;
}

/* The range of the chunk row `rows` stands on: version 2 keeps its first
 * seq in the row (its last comes from last_seqs), version 1 by decoding. */
static bool row_range(pt_seek *s, sqlite3_stmt *rows, range *r, char *err, size_t errn)
{
  r->id = sqlite3_column_int64(rows, 1);
  r->version = sqlite3_column_int(rows, 2);
  if (r->version >= 2) {
    r->first = sqlite3_column_int64(rows, 3);
    r->last = INT64_MAX; /* until last_seqs says */
    return true;
  }
  held h = {.id = -1};
  char why[512];
  if (!pt__decode_chunk(&s->dec, &h.arena, rows, s->session, &h.v, &h.n, &h.cap, why, sizeof why)) {
    snprintf(err, errn, "%s %s", s->db->path, why);
    held_free(&h);
    return false;
  }
  r->first = INT64_MAX;
  r->last = INT64_MIN;
  for (size_t i = 0; i < h.n; i++) {
    r->first = h.v[i].seq < r->first ? h.v[i].seq : r->first;
    r->last = h.v[i].seq > r->last ? h.v[i].seq : r->last;
  }
  held_free(&h);
  return true;
}

/* The last seqs of the version-2 rows (s->ranges sorted by id): the
 * chunk statements number version 2's rows past version 1's, in the order
 * of their own ids, so the k-th of them by id is the k-th call_chunks row
 * by id. A row it does not find keeps a range open at the top. */
static void last_seqs(pt_seek *s)
{
  sqlite3_stmt *lasts;
  if (sqlite3_prepare_v2(s->db->db, "SELECT last_seq FROM call_chunks WHERE session = ? ORDER BY "
                                    "id", -1, &lasts, NULL) != SQLITE_OK)
    return; /* a version-1 file: none */
  sqlite3_bind_int64(lasts, 1, s->session);
  for (size_t i = 0; i < s->nranges; i++)
    if (s->ranges[i].version >= 2 && sqlite3_step(lasts) == SQLITE_ROW &&
        sqlite3_column_type(lasts, 0) == SQLITE_INTEGER)
      s->ranges[i].last = sqlite3_column_int64(lasts, 0);
  sqlite3_finalize(lasts);
}

/* Each chunk row's range, by first seq. */
static bool find_ranges(pt_seek *s, char *err, size_t errn)
{
  sqlite3_stmt *rows = pt__chunk_rows(s->db, s->session, err, errn);
  if (!rows)
    return false;
  size_t cap = 0;
  int rc;
  bool ok = true;
  while (ok && (rc = sqlite3_step(rows)) == SQLITE_ROW) {
    range *v = pt_grow(s->ranges, &cap, s->nranges, sizeof *v);
    if (!v) {
      snprintf(err, errn, "out of memory reading %s", s->db->path);
      ok = false;
      break;
    }
    s->ranges = v;
    ok = row_range(s, rows, &v[s->nranges], err, errn);
    s->nranges += ok;
  }
  if (ok && rc != SQLITE_DONE) {
    pt__read_error(s->db->db, s->db->path, NULL, err, errn);
    ok = false;
  }
  sqlite3_finalize(rows);
  if (ok) {
    qsort(s->ranges, s->nranges, sizeof *s->ranges, cmp_range_id);
    last_seqs(s);
    qsort(s->ranges, s->nranges, sizeof *s->ranges, cmp_range);
  }
  return ok;
}

pt_seek *pt_seek_open(const pt_db *db, int64_t session, char *err, size_t errn)
{
  err[0] = 0;
  pt_seek *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(err, errn, "out of memory reading %s", db->path);
    return NULL;
  }
  s->db = db;
  s->session = session;
  s->inflight.id = -1;
  for (int k = 0; k < SEEK_SLOTS; k++)
    s->slots[k].id = -1;
  s->began = pt__read_begin(db);
  s->row = pt__chunk_row(db, session, err, errn);
  if (!s->row || !find_ranges(s, err, errn) ||
      !pt__inflight_calls(db, session, &s->inflight.arena, &s->inflight.v, &s->inflight.n,
                          &s->inflight.cap, err, errn)) {
    if (!err[0])
      snprintf(err, errn, "out of memory reading %s", db->path);
    pt_seek_close(s);
    return NULL;
  }
  held_sort(&s->inflight);
  return s;
}

/* Decodes chunk `id` into the slot used longest ago. */
static held *decode(pt_seek *s, int64_t id, char *err, size_t errn)
{
  held *h = &s->slots[0];
  for (int k = 1; k < SEEK_SLOTS; k++)
    if (s->slots[k].used < h->used)
      h = &s->slots[k];
  pt_json_arena_free(&h->arena);
  h->n = 0;
  h->id = -1;
  sqlite3_reset(s->row);
  sqlite3_bind_int64(s->row, 2, id);
  int rc = sqlite3_step(s->row);
  char why[512];
  if (rc != SQLITE_ROW) {
    pt__read_error(s->db->db, s->db->path,
                   rc == SQLITE_DONE ? "a chunk of calls went missing" : NULL, err, errn);
    return NULL;
  }
  if (!pt__decode_chunk(&s->dec, &h->arena, s->row, s->session, &h->v, &h->n, &h->cap, why, sizeof why)) {
    snprintf(err, errn, "%s %s", s->db->path, why);
    h->n = 0;
    return NULL;
  }
  held_sort(h);
  h->id = id;
  return h;
}

const pt_call *pt_seek_call(pt_seek *s, int64_t seq, char *err, size_t errn)
{
  err[0] = 0;
  s->clock++;
  for (int j = 0; j < SEEK_SLOTS; j++) {
    int k = (s->last + j) % SEEK_SLOTS; /* the slot that served last first */
    const pt_call *c = s->slots[k].id >= 0 ? held_find(&s->slots[k], seq) : NULL;
    if (c) {
      s->slots[k].used = s->clock;
      s->last = k;
      return c;
    }
  }
  const pt_call *c = held_find(&s->inflight, seq);
  if (c)
    return c;
  /* The chunks whose range holds seq and that are not held, narrowest
   * first: each tried once, in the order (width, index). */
  uint64_t last_w = 0;
  size_t last_i = SIZE_MAX;
  for (;;) {
    size_t best = SIZE_MAX;
    uint64_t best_w = 0;
    for (size_t i = 0; i < s->nranges && s->ranges[i].first <= seq; i++) {
      const range *r = &s->ranges[i];
      uint64_t w = (uint64_t)r->last - (uint64_t)r->first;
      bool after = last_i == SIZE_MAX || w > last_w || (w == last_w && i > last_i);
      if (r->last < seq || !after || (best != SIZE_MAX && (w > best_w || (w == best_w && i > best))))
        continue;
      bool held_now = false;
      for (int k = 0; k < SEEK_SLOTS && !held_now; k++)
        held_now = s->slots[k].id == r->id;
      if (!held_now) {
        best = i;
        best_w = w;
      }
    }
    if (best == SIZE_MAX)
      return NULL;
    last_i = best;
    last_w = best_w;
    held *h = decode(s, s->ranges[best].id, err, errn);
    if (!h)
      return NULL;
    h->used = s->clock;
    s->last = (int)(h - s->slots);
    if ((c = held_find(h, seq)))
      return c;
  }
}

void pt_seek_close(pt_seek *s)
{
  if (!s)
    return;
  sqlite3_finalize(s->row);
  pt__read_end(s->db, s->began);
  held_free(&s->inflight);
  for (int k = 0; k < SEEK_SLOTS; k++)
    held_free(&s->slots[k]);
  free(s->ranges);
  pt_chunk_dec_free(&s->dec);
  free(s);
}
