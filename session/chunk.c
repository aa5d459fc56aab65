/*
 * chunk.c: the chunk codec of chunk.h. A version-2 chunk (a call_chunks
 * row's blob) is one byte saying how it is compressed (1: zstd) and a zstd
 * frame of the body:
 *
 *   ncalls                                              varint
 *   seq        ncalls x zigzag(seq - previous seq)      varints, column by
 *   thread, plugin, api                                 column, each column
 *   result     zigzag                                   ncalls varints long
 *   start_ns   zigzag(start_ns - previous start_ns)
 *   dur_ns     zigzag
 *   stack      stack id + 1 (0: none)
 *   args_len, data_len
 *   each call's args JSON then each call's data JSON    bytes, the lengths'
 *                                                       sums exactly
 *
 * Columns keep alike values together and deltas keep them small, so zstd
 * stores a scalar-only call in a few bytes. Version 1 chunks are the JSON
 * arrays of calls chunks.calls holds; pt_chunk_decode reads both.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "chunk.h"

/* zstd's level: -3, 1 and 3 stored calls at rates within their noise in
 * bench_record, and 1 stored fewer bytes than -3 (docs/schema.md). */
#define ZSTD_LEVEL 1
/* No chunk is larger decoded: the writer ends a chunk long before. */
#define MAX_BODY (256u << 20)
#define NCOLS 10

struct pt_chunk_row {
  int64_t seq, start, dur, stack;
  uint32_t thread, plugin, api, args_len, data_len;
  int32_t result;
};

/* ---- Varints ------------------------------------------------------------------------ */

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }
/* a - b and a + b wrapping (deltas of whatever a damaged chunk holds). */
static int64_t sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }

static unsigned char *put_varint(unsigned char *p, uint64_t v)
{
  while (v >= 0x80) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (unsigned char)v;
  return p;
}

/* Reads a varint at *p (before end): false when truncated or over 64 bits. */
static inline bool get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
  if (*p < end && **p < 0x80) { /* one byte: most values of a column */
    *v = *(*p)++;
    return true;
  }
  uint64_t r = 0;
  *v = 0; /* set whatever happens: callers that checked the column before read on */
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (*p == end)
      return false;
    unsigned char b = *(*p)++;
    if (shift == 63 && b > 1)
      return false;
    r |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = r;
      return true;
    }
  }
  return false;
}

/* ---- Writing ------------------------------------------------------------------------ */

static bool reserve(unsigned char **p, size_t *cap, size_t need)
{
  if (need <= *cap)
    return true;
  size_t c = *cap ? *cap : 4096;
  while (c < need)
    c *= 2;
  unsigned char *n = realloc(*p, c);
  if (!n)
    return false;
  *p = n;
  *cap = c;
  return true;
}

bool pt_chunk_enc_add(pt_chunk_enc *e, const pt_chunk_call *c)
{
  if (c->args_len > UINT32_MAX || c->data_len > UINT32_MAX ||
      !reserve(&e->text, &e->text_cap, e->text_len + c->args_len + c->data_len))
    return false;
  memcpy(e->text + e->text_len, c->args, c->args_len);
  if (c->data_len)
    memcpy(e->text + e->text_len + c->args_len, c->data, c->data_len);
  return pt_chunk_enc_add_written(e, c);
}

bool pt_chunk_enc_add_written(pt_chunk_enc *e, const pt_chunk_call *c)
{
  if (c->args_len > UINT32_MAX || c->data_len > UINT32_MAX)
    return false;
  if (e->n == e->cap) {
    size_t cap = e->cap ? e->cap * 2 : 512;
    struct pt_chunk_row *r = realloc(e->rows, cap * sizeof *r);
    if (!r)
      return false;
    e->rows = r;
    e->cap = cap;
  }
  e->text_len += c->args_len + c->data_len;
  /* A reused chunk's rows were last written by the encoder that took it,
   * on another core: fetched for writing a few calls ahead. */
  __builtin_prefetch(e->rows + e->n + 8, 1);
  e->rows[e->n++] = (struct pt_chunk_row){c->seq, c->start_ns, c->dur_ns, c->stack,
                                          c->thread, c->plugin, c->api,
                                          (uint32_t)c->args_len, (uint32_t)c->data_len,
                                          c->result};
  if (e->n == 1 || c->seq < e->first_seq)
    e->first_seq = c->seq;
  if (e->n == 1 || c->seq > e->last_seq)
    e->last_seq = c->seq;
  return true;
}

size_t pt_chunk_enc_text_of(const pt_chunk_enc *e, size_t i)
{
  return (size_t)e->rows[i].args_len + e->rows[i].data_len;
}

bool pt_chunk_enc_set_text_of(pt_chunk_enc *e, size_t i, size_t args_len, size_t data_len)
{
  if (args_len > UINT32_MAX || data_len > UINT32_MAX)
    return false;
  e->rows[i].args_len = (uint32_t)args_len;
  e->rows[i].data_len = (uint32_t)data_len;
  return true;
}

bool pt_chunk_enc_finish(pt_chunk_enc *e, const void **blob, size_t *n, char *err, size_t errn)
{
  /* The body: at most 10 bytes a varint, NCOLS a call, then the text. */
  if (!reserve(&e->raw, &e->raw_cap, 10 + e->n * NCOLS * 10 + e->text_len)) {
    snprintf(err, errn, "out of memory encoding a chunk of calls");
    return false;
  }
  unsigned char *p = put_varint(e->raw, e->n);
  int64_t prev = 0;
  for (size_t i = 0; i < e->n; prev = e->rows[i++].seq)
    p = put_varint(p, zigzag(sub(e->rows[i].seq, prev)));
  for (size_t i = 0; i < e->n; i++)
    p = put_varint(p, e->rows[i].thread);
  for (size_t i = 0; i < e->n; i++)
    p = put_varint(p, e->rows[i].plugin);
  for (size_t i = 0; i < e->n; i++)
    p = put_varint(p, e->rows[i].api);
  for (size_t i = 0; i < e->n; i++)
    p = put_varint(p, zigzag(e->rows[i].result));
  prev = 0;
  for (size_t i = 0; i < e->n; prev = e->rows[i++].start)
    p = put_varint(p, zigzag(sub(e->rows[i].start, prev)));
  for (size_t i = 0; i < e->n; i++)
    p = put_varint(p, zigzag(e->rows[i].dur));
  for (size_t i = 0; i < e->n; i++)
    p = put_varint(p, (uint64_t)(e->rows[i].stack < 0 ? 0 : e->rows[i].stack + 1));
  for (size_t i = 0; i < e->n; i++)
    p = put_varint(p, e->rows[i].args_len);
  for (size_t i = 0; i < e->n; i++)
    p = put_varint(p, e->rows[i].data_len);
  /* The text holds each call's args and data together: the body wants
   * every args first, then every data. */
  const unsigned char *t = e->text;
  unsigned char *data = p;
  for (size_t i = 0; i < e->n; i++)
    data += e->rows[i].args_len;
  for (size_t i = 0; i < e->n; i++) {
    memcpy(p, t, e->rows[i].args_len);
    p += e->rows[i].args_len;
    t += e->rows[i].args_len;
    memcpy(data, t, e->rows[i].data_len);
    data += e->rows[i].data_len;
    t += e->rows[i].data_len;
  }
  size_t raw_len = (size_t)(data - e->raw);
  if (!e->zctx)
    e->zctx = ZSTD_createCCtx();
  if (!e->zctx || !reserve(&e->blob, &e->blob_cap, 1 + ZSTD_compressBound(raw_len))) {
    snprintf(err, errn, "out of memory compressing a chunk of calls");
    return false;
  }
  e->blob[0] = 1; /* zstd */
  size_t z = ZSTD_compressCCtx(e->zctx, e->blob + 1, e->blob_cap - 1, e->raw, raw_len,
                               ZSTD_LEVEL);
  if (ZSTD_isError(z)) {
    snprintf(err, errn, "compressing a chunk of calls: %s", ZSTD_getErrorName(z));
    return false;
  }
  *blob = e->blob;
  *n = 1 + z;
  e->n = 0;
  e->text_len = 0;
  return true;
}

void pt_chunk_enc_free(pt_chunk_enc *e)
{
  free(e->rows);
  free(e->text);
  free(e->raw);
  free(e->blob);
  ZSTD_freeCCtx(e->zctx);
  memset(e, 0, sizeof *e);
}

/* ---- Reading version 2 ------------------------------------------------------------------- */

void pt_chunk_dec_free(pt_chunk_dec *d)
{
  ZSTD_freeDCtx(d->zctx);
  free(d->body);
  memset(d, 0, sizeof *d);
}

/* The decompressed body of a blob, in d's buffer (grown to fit), or NULL
 * with err set. */
static unsigned char *inflate_blob(pt_chunk_dec *d, const unsigned char *b, size_t n,
                                   size_t *len, char *err, size_t errn)
{
  if (n < 1 || b[0] != 1) {
    snprintf(err, errn, n ? "unknown chunk encoding %u (this pitrace knows 1, zstd)"
                          : "the chunk is empty", n ? b[0] : 0u);
    return NULL;
  }
  unsigned long long size = ZSTD_getFrameContentSize(b + 1, n - 1);
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
    snprintf(err, errn, "the chunk is not a whole zstd frame");
    return NULL;
  }
  if (size > MAX_BODY) {
    snprintf(err, errn, "the chunk claims %llu bytes decoded, more than any chunk holds", size);
    return NULL;
  }
  if (!d->zctx)
    d->zctx = ZSTD_createDCtx();
  if (!d->zctx || !reserve(&d->body, &d->cap, size ? (size_t)size : 1)) {
    snprintf(err, errn, "out of memory decoding a chunk of calls");
    return NULL;
  }
  size_t got = ZSTD_decompressDCtx(d->zctx, d->body, (size_t)size, b + 1, n - 1);
  if (ZSTD_isError(got) || got != size) {
    snprintf(err, errn, "the chunk's zstd frame is damaged (%s)",
             ZSTD_isError(got) ? ZSTD_getErrorName(got) : "its size does not match");
    return NULL;
  }
  *len = (size_t)size;
  return d->body;
}

static bool walk(const unsigned char *body, size_t len,
                 bool (*fn)(void *ctx, const pt_chunk_call *c), void *ctx, char *err,
                 size_t errn)
{
  const unsigned char *p = body, *end = body + len;
  uint64_t ncalls, v;
  if (!get_varint(&p, end, &ncalls) || ncalls > len / NCOLS) {
    snprintf(err, errn, "the chunk's call count is truncated or larger than its columns");
    return false;
  }
  /* Where each column starts; the text's length the lengths add up to. */
  const unsigned char *col[NCOLS];
  uint64_t text_len = 0;
  for (int k = 0; k < NCOLS; k++) {
    col[k] = p;
    for (uint64_t i = 0; i < ncalls; i++) {
      if (!get_varint(&p, end, &v)) {
        snprintf(err, errn, "column %d of the chunk is truncated at call %llu of %llu", k + 1,
                 (unsigned long long)i + 1, (unsigned long long)ncalls);
        return false;
      }
      if (k >= 8 && (v > UINT32_MAX || (text_len += v) > len)) {
        snprintf(err, errn, "the chunk's text lengths add up to more than it holds");
        return false;
      }
    }
  }
  if (text_len != (uint64_t)(end - p)) {
    snprintf(err, errn, "the chunk's text lengths add up to %llu bytes, it holds %llu",
             (unsigned long long)text_len, (unsigned long long)(end - p));
    return false;
  }
  const unsigned char *args = p, *data = p;
  for (const unsigned char *q = col[8]; q < col[9];) { /* data follows every args */
    get_varint(&q, end, &v);
    data += v;
  }
  int64_t seq = 0, start = 0;
  for (uint64_t i = 0; i < ncalls; i++) {
    uint64_t f[NCOLS];
    for (int k = 0; k < NCOLS; k++)
      get_varint(&col[k], end, &f[k]); /* checked above */
    pt_chunk_call c;
    seq = add(seq, unzigzag(f[0]));
    start = add(start, unzigzag(f[5]));
    int64_t result = unzigzag(f[4]);
    if (seq < 1 || f[1] > UINT32_MAX || f[2] > UINT32_MAX || f[3] > UINT32_MAX ||
        result < INT32_MIN || result > INT32_MAX || f[7] > INT64_MAX || f[8] == 0) {
      snprintf(err, errn, "call %llu of the chunk is malformed", (unsigned long long)i + 1);
      return false;
    }
    c.seq = seq;
    c.thread = (uint32_t)f[1];
    c.plugin = (uint32_t)f[2];
    c.api = (uint32_t)f[3];
    c.result = (int32_t)result;
    c.start_ns = start;
    c.dur_ns = unzigzag(f[6]);
    c.stack = (int64_t)f[7] - 1;
    c.args = (const char *)args;
    c.args_len = (size_t)f[8];
    c.data = f[9] ? (const char *)data : NULL;
    c.data_len = (size_t)f[9];
    args += f[8];
    data += f[9];
    if (!fn(ctx, &c))
      return false;
  }
  return true;
}

bool pt_chunk_each_with(pt_chunk_dec *d, const void *blob, size_t n,
                        bool (*fn)(void *ctx, const pt_chunk_call *c), void *ctx, char *err,
                        size_t errn)
{
  size_t len;
  unsigned char *body = inflate_blob(d, blob, n, &len, err, errn);
  return body && walk(body, len, fn, ctx, err, errn);
}

bool pt_chunk_each(const void *blob, size_t n, bool (*fn)(void *ctx, const pt_chunk_call *c),
                   void *ctx, char *err, size_t errn)
{
  pt_chunk_dec d = {0};
  bool ok = pt_chunk_each_with(&d, blob, n, fn, ctx, err, errn);
  pt_chunk_dec_free(&d);
  return ok;
}

/* ---- Reading either version into pt_calls ------------------------------------------------ */

typedef struct decode_ctx {
  pt_json_arena *a;
  bool (*push)(void *ctx, const pt_call *c);
  void *ctx;
  char *err;
  size_t errn;
  bool nomem;
} decode_ctx;

static bool push_v2(void *p, const pt_chunk_call *cc)
{
  decode_ctx *d = p;
  char why[256] = "";
  pt_call c = {.seq = cc->seq, .thread = cc->thread, .plugin = cc->plugin, .api = cc->api,
               .returned = true, .result = cc->result,
               .start_ns = pt_time_clamp(cc->start_ns), .dur_ns = pt_time_clamp(cc->dur_ns),
               .stack = cc->stack};
  c.args = pt_json_parse(d->a, cc->args, cc->args_len, why, sizeof why);
  if (c.args && cc->data_len)
    c.data = pt_json_parse(d->a, cc->data, cc->data_len, why, sizeof why);
  if (!c.args || c.args->type != PJ_ARRAY || (cc->data_len && !c.data)) {
    snprintf(d->err, d->errn, "call seq %lld's %s are not valid JSON%s%s", (long long)cc->seq,
             c.args ? "payloads" : "arguments", why[0] ? ": " : "", why);
    return false;
  }
  if (!d->push(d->ctx, &c)) {
    d->nomem = true;
    return false;
  }
  return true;
}

static bool decode_v1(pt_json_arena *a, const char *text, size_t n, decode_ctx *d)
{
  char why[256] = "";
  pt_json *chunk = text ? pt_json_parse(a, text, n, why, sizeof why) : NULL;
  if (!chunk || chunk->type != PJ_ARRAY) {
    if (!chunk && why[0])
      snprintf(d->err, d->errn, "a chunk of calls is not valid (%s)", why);
    else
      snprintf(d->err, d->errn, "a chunk of calls is not an array");
    return false;
  }
  for (uint32_t i = 0; i < chunk->n; i++) {
    pt_json *e = chunk->u.items[i];
    pt_call c = {0};
    c.seq = pt_json_int(pt_json_at(e, 0), -1);
    c.thread = (uint32_t)pt_json_int(pt_json_at(e, 1), 0);
    c.plugin = (uint32_t)pt_json_int(pt_json_at(e, 2), 0);
    c.api = (uint32_t)pt_json_int(pt_json_at(e, 3), 0);
    c.result = (int32_t)pt_json_int(pt_json_at(e, 4), 0);
    c.returned = true;
    c.start_ns = pt_time_clamp(pt_json_int(pt_json_at(e, 5), 0));
    c.dur_ns = pt_time_clamp(pt_json_int(pt_json_at(e, 6), 0));
    c.args = pt_json_at(e, 7);
    pt_json *st = pt_json_at(e, 8);
    c.stack = st && st->type == PJ_INT ? st->u.i : -1;
    c.data = pt_json_at(e, 9);
    if (c.seq < 1 || !c.args || c.args->type != PJ_ARRAY) {
      snprintf(d->err, d->errn, "a recorded call is malformed");
      return false;
    }
    if (!d->push(d->ctx, &c)) {
      d->nomem = true;
      return false;
    }
  }
  return true;
}

bool pt_chunk_decode_with(pt_chunk_dec *dec, pt_json_arena *a, int version, const void *blob,
                          size_t n, bool (*push)(void *ctx, const pt_call *c), void *ctx,
                          char *err, size_t errn)
{
  decode_ctx d = {a, push, ctx, err, errn, false};
  err[0] = 0;
  bool ok = version < 2 ? decode_v1(a, blob, n, &d)
                        : pt_chunk_each_with(dec, blob, n, push_v2, &d, err, errn);
  if (d.nomem)
    snprintf(err, errn, "out of memory");
  return ok;
}

bool pt_chunk_decode(pt_json_arena *a, int version, const void *blob, size_t n,
                     bool (*push)(void *ctx, const pt_call *c), void *ctx, char *err,
                     size_t errn)
{
  pt_chunk_dec d = {0};
  bool ok = pt_chunk_decode_with(&d, a, version, blob, n, push, ctx, err, errn);
  pt_chunk_dec_free(&d);
  return ok;
}
