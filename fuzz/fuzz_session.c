/*
 * fuzz_session: the session reader (session/session.c, the pitrace_session
 * library every pitrace verb reads sessions with). The input is a session
 * database file: it is opened read-only where it lies, in memory, with
 * pt_open_image (the checks pt_open makes once SQLite has a file, without
 * writing each input to a file, whose locks and checks SQLite repeats on
 * every statement), and every session's calls are loaded (pt_load: the chunk rows
 * and each call's JSON arguments) and their payloads read (pt_data: the
 * inline ones of every call, and each parameter's "in" and "out" rows of
 * the first 256 calls through SQL); then the calls are streamed (the
 * cursor, session/cursor.c).
 *
 * An input that is no SQLite file is one chunk of calls (session/chunk.c),
 * decoded as the reader decodes a call_chunks row (pt_chunk_decode), so
 * that mutations reach the version-2 decoder itself: "B" and an encoded
 * body, which is compressed here first (mutations land on its varints,
 * columns and lengths), or else a stored blob as it is (its zstd frame).
 * A body that decodes is encoded again and must decode to the same calls.
 *
 * Seeds: small real recorded sessions of both schema versions, a chunk
 * blob and a chunk body of one (fuzz/make_seeds.sh). Checks: no crash, no
 * sanitizer report, no leak; a file pt_open refuses, or a chunk
 * pt_chunk_decode refuses, says why; the calls come in sequence order,
 * and the cursor yields as many calls as pt_load holds, in the same order
 * when no seq repeats; a chunk survives its round trip.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "chunk.h"
#include "session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_call(pt_db *db, int64_t session, const pt_call *c, bool sql)
{
  size_t n, full;
  if (c->data && c->data->type == PJ_ARRAY)
    for (uint32_t i = 0; i < c->data->n; i++) {
      pt_json *d = c->data->u.items[i], *role = pt_json_at(d, 1);
      if (!role || role->type != PJ_STRING)
        continue;
      free(pt_data(db, session, c, (unsigned)pt_json_int(pt_json_at(d, 0), 0), role->u.s,
                   (unsigned)pt_json_int(pt_json_at(d, 2), 0), &n, &full));
    }
  uint32_t nargs = c->args && c->args->type == PJ_ARRAY ? c->args->n : 0;
  for (uint32_t p = 0; sql && p < nargs && p < 16; p++) {
    free(pt_data(db, session, c, p, "in", 0, &n, &full));
    free(pt_data(db, session, c, p, "out", 0, &n, &full));
  }
}

/* The calls of a chunk, their text copied. */
typedef struct calls_copy {
  pt_chunk_call v[4096];
  size_t n;
  char *text[4096];
} calls_copy;

static bool copy_call(void *ctx, const pt_chunk_call *c)
{
  calls_copy *k = ctx;
  if (k->n == 4096)
    return false;
  char *t = malloc(c->args_len + c->data_len + 1);
  if (!t)
    abort();
  memcpy(t, c->args, c->args_len);
  if (c->data_len)
    memcpy(t + c->args_len, c->data, c->data_len);
  k->text[k->n] = t;
  k->v[k->n] = *c;
  k->v[k->n].args = t;
  k->v[k->n].data = c->data_len ? t + c->args_len : NULL;
  k->n++;
  return true;
}

static void free_copy(calls_copy *k)
{
  for (size_t i = 0; i < k->n; i++)
    free(k->text[i]);
  k->n = 0;
}

static bool count_call(void *ctx, const pt_call *c)
{
  (void)c;
  ++*(size_t *)ctx;
  return true;
}

/* One chunk: decoded as pt_load decodes it (with one decoder kept from
 * chunk to chunk, as each of its threads keeps one); a body that decodes
 * is encoded again and must decode to the same calls. */
static void fuzz_chunk(const uint8_t *data, size_t size)
{
  static ZSTD_CCtx *zc;
  static pt_chunk_dec dec;
  unsigned char *blob = NULL;
  size_t n = size;
  if (size && data[0] == 'B') {
    size_t cap = 1 + ZSTD_compressBound(size - 1);
    blob = malloc(cap);
    if (!blob)
      abort();
    blob[0] = 1;
    if (!zc && !(zc = ZSTD_createCCtx()))
      abort();
    size_t z = ZSTD_compressCCtx(zc, blob + 1, cap - 1, data + 1, size - 1, 1);
    if (ZSTD_isError(z))
      abort();
    n = 1 + z;
  }
  const void *in = blob ? (const void *)blob : (const void *)data;
  pt_json_arena arena = {0};
  char err[512] = "";
  size_t got = 0;
  if (!pt_chunk_decode_with(&dec, &arena, 2, in, n, count_call, &got, err, sizeof err) &&
      !err[0])
    abort(); /* refused without a reason */
  pt_json_arena_free(&arena);
  static calls_copy a, b;
  if (pt_chunk_each_with(&dec, in, n, copy_call, &a, err, sizeof err) && a.n) {
    pt_chunk_enc enc = {0};
    for (size_t i = 0; i < a.n; i++)
      if (!pt_chunk_enc_add(&enc, &a.v[i]))
        abort();
    const void *again;
    size_t an;
    if (!pt_chunk_enc_finish(&enc, &again, &an, err, sizeof err) ||
        !pt_chunk_each_with(&dec, again, an, copy_call, &b, err, sizeof err) || b.n != a.n)
      abort();
    for (size_t i = 0; i < a.n; i++) {
      const pt_chunk_call *x = &a.v[i], *y = &b.v[i];
      if (x->seq != y->seq || x->thread != y->thread || x->plugin != y->plugin ||
          x->api != y->api || x->result != y->result || x->start_ns != y->start_ns ||
          x->dur_ns != y->dur_ns || x->stack != y->stack || x->args_len != y->args_len ||
          x->data_len != y->data_len || memcmp(x->args, y->args, x->args_len) != 0 ||
          (x->data_len && memcmp(x->data, y->data, x->data_len) != 0))
        abort(); /* the round trip changed a call */
    }
    pt_chunk_enc_free(&enc);
  }
  free_copy(&a);
  free_copy(&b);
  free(blob);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 16 || memcmp(data, "SQLite format 3", 16) != 0) {
    fuzz_chunk(data, size);
    return 0;
  }
  pt_db db;
  char err[512] = "";
  if (!pt_open_image("the input", data, size, &db, err, sizeof err)) {
    if (!err[0])
      abort();
    return 0;
  }
  size_t ns = 0;
  pt_session_info *s = pt_sessions(&db, &ns, err, sizeof err);
  for (size_t i = 0; s && i < ns; i++) {
    pt_calls calls;
    if (!pt_load(&db, s[i].id, &calls, err, sizeof err))
      continue;
    for (size_t k = 0; k < calls.n; k++) {
      if (k > 0 && calls.v[k].seq < calls.v[k - 1].seq)
        abort();
      read_call(&db, s[i].id, &calls.v[k], k < 256);
    }
    bool unique = true; /* seqs that repeat (a damaged file) come in some order */
    for (size_t k = 1; k < calls.n; k++)
      unique &= calls.v[k].seq != calls.v[k - 1].seq;
    pt_cursor *cur = pt_cursor_open(&db, s[i].id, err, sizeof err);
    size_t k = 0;
    for (const pt_call *c; cur && (c = pt_cursor_next(cur, err, sizeof err)); k++)
      if (k >= calls.n || (unique && c->seq != calls.v[k].seq))
        abort();
    if (cur && !err[0] && k != calls.n)
      abort();
    pt_cursor_close(cur);
    pt_calls_free(&calls);
  }
  free(s);
  (void)pt_default_session(&db);
  pt_close(&db);
  return 0;
}
