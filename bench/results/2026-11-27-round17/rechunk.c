/*
 * rechunk.c: an experiment of round 17, not part of pitrace (built by
 * hand, README beside it): rewrites a session's version-2 chunks so that
 * each chunk holds the calls of one recording thread only, as chunks would
 * come from handlers working in parallel (docs/recorder-parallel.md), with
 * every call's seq kept. The chunks then cover interleaved seq ranges,
 * which the readers must merge; timing `pitrace stats` and `show
 * --compact` on both files (bench_viewer --db) says what that costs them.
 *
 *   rechunk DB SESSION      (in place: copy the file first)
 */
#define _GNU_SOURCE
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"

typedef struct held {
  pt_chunk_call c;
  char *text; /* args then data */
} held;

typedef struct all {
  held *v;
  size_t n, cap;
} all;

static bool keep(void *ctx, const pt_chunk_call *c)
{
  all *a = ctx;
  if (a->n == a->cap) {
    a->cap = a->cap ? 2 * a->cap : 1 << 16;
    a->v = realloc(a->v, a->cap * sizeof *a->v);
    if (!a->v)
      return false;
  }
  held *h = &a->v[a->n++];
  h->c = *c;
  h->text = malloc(c->args_len + c->data_len + 1);
  memcpy(h->text, c->args, c->args_len);
  if (c->data_len)
    memcpy(h->text + c->args_len, c->data, c->data_len);
  h->c.args = h->text;
  h->c.data = h->text + c->args_len;
  return true;
}

static int by_thread_then_seq(const void *x, const void *y)
{
  const held *a = x, *b = y;
  if (a->c.thread != b->c.thread)
    return a->c.thread < b->c.thread ? -1 : 1;
  return (a->c.seq > b->c.seq) - (a->c.seq < b->c.seq);
}

typedef struct chunk_row {
  int64_t first, last, n;
  void *blob;
  size_t size;
} chunk_row;

static int by_first(const void *x, const void *y)
{
  const chunk_row *a = x, *b = y;
  return (a->first > b->first) - (a->first < b->first);
}

int main(int argc, char **argv)
{
  if (argc != 3) {
    fprintf(stderr, "usage: rechunk DB SESSION\n");
    return 2;
  }
  sqlite3 *db;
  char err[512];
  if (sqlite3_open(argv[1], &db) != SQLITE_OK)
    return fprintf(stderr, "rechunk: cannot open %s\n", argv[1]), 2;
  int64_t session = atoll(argv[2]);
  sqlite3_stmt *s;
  sqlite3_prepare_v2(db, "SELECT calls FROM call_chunks WHERE session = ? ORDER BY id", -1, &s,
                     NULL);
  sqlite3_bind_int64(s, 1, session);
  all a = {0};
  while (sqlite3_step(s) == SQLITE_ROW)
    if (!pt_chunk_each(sqlite3_column_blob(s, 0), (size_t)sqlite3_column_bytes(s, 0), keep, &a,
                       err, sizeof err))
      return fprintf(stderr, "rechunk: %s\n", err), 2;
  sqlite3_finalize(s);
  qsort(a.v, a.n, sizeof *a.v, by_thread_then_seq);
  chunk_row *rows = NULL;
  size_t nrows = 0;
  pt_chunk_enc e = {0};
  for (size_t i = 0; i < a.n; i++) {
    pt_chunk_enc_add(&e, &a.v[i].c);
    bool last = i + 1 == a.n || a.v[i + 1].c.thread != a.v[i].c.thread;
    if (e.n == PT_CHUNK_CALLS || last) {
      chunk_row r = {e.first_seq, e.last_seq, (int64_t)e.n, NULL, 0};
      const void *blob;
      if (!pt_chunk_enc_finish(&e, &blob, &r.size, err, sizeof err))
        return fprintf(stderr, "rechunk: %s\n", err), 2;
      r.blob = malloc(r.size);
      memcpy(r.blob, blob, r.size);
      rows = realloc(rows, (nrows + 1) * sizeof *rows);
      rows[nrows++] = r;
    }
  }
  /* Committed as handlers' chunks would be: each when its calls are, by
   * their lowest seq. */
  qsort(rows, nrows, sizeof *rows, by_first);
  sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
  sqlite3_prepare_v2(db, "DELETE FROM call_chunks WHERE session = ?", -1, &s, NULL);
  sqlite3_bind_int64(s, 1, session);
  sqlite3_step(s);
  sqlite3_finalize(s);
  sqlite3_prepare_v2(db, "INSERT INTO call_chunks(session, id, first_seq, last_seq, ncalls, calls) "
                     "VALUES (?,?,?,?,?,?)", -1, &s, NULL);
  for (size_t i = 0; i < nrows; i++) {
    sqlite3_bind_int64(s, 1, session);
    sqlite3_bind_int64(s, 2, (int64_t)i + 1);
    sqlite3_bind_int64(s, 3, rows[i].first);
    sqlite3_bind_int64(s, 4, rows[i].last);
    sqlite3_bind_int64(s, 5, rows[i].n);
    sqlite3_bind_blob(s, 6, rows[i].blob, (int)rows[i].size, SQLITE_STATIC);
    if (sqlite3_step(s) != SQLITE_DONE)
      return fprintf(stderr, "rechunk: %s\n", sqlite3_errmsg(db)), 2;
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  sqlite3_exec(db, "COMMIT; VACUUM", NULL, NULL, NULL);
  sqlite3_close(db);
  printf("rechunk: %zu calls into %zu chunks of one thread each\n", a.n, nrows);
  return 0;
}
