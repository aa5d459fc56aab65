/*
 * chunk.h: one chunk of calls as a session database stores it
 * (docs/schema.md): the encoder of the binary chunks of schema version 2
 * (the recorder's writer and pt_out write through it), the one decoder of
 * a chunk row of either version (the reader and the SQLite table-valued
 * function pitrace_calls read through it), and that function's
 * registration on a connection.
 */
#ifndef PT_CHUNK_H
#define PT_CHUNK_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session.h"

/* One call as a chunk holds it: its arguments and inline payloads as the
 * JSON text the calls view gives (data_len 0: no inline payload). */
typedef struct pt_chunk_call {
  int64_t seq;
  uint32_t thread, plugin, api;
  int32_t result;
  int64_t start_ns, dur_ns;
  int64_t stack; /* -1: none */
  const char *args;
  size_t args_len;
  const char *data; /* "[[position, role, idx, size, hex], ...]" */
  size_t data_len;
} pt_chunk_call;

/* ---- Writing (version 2) ------------------------------------------------------------ */

/* Calls in a chunk, at most: a row's cost spreads over many calls, and a
 * reader decodes a chunk at a time. Not fewer: call_chunks is a WITHOUT
 * ROWID table, whose rows over about 1 KB (4 KB pages) spill into
 * overflow pages of their own, and 512 calls compress to about that (the
 * table then took twice the bytes of its blobs; bench_viewer). */
#define PT_CHUNK_CALLS 4096

/* Calls gathered for one chunk, column by column; pt_chunk_enc_finish
 * encodes and compresses them into one blob. Zero-initialise; reusable
 * after finish; pt_chunk_enc_free releases it. */
typedef struct pt_chunk_enc {
  struct pt_chunk_row *rows;     /* the calls gathered, their numbers */
  size_t n, cap;
  unsigned char *text;           /* args then data of each call, in order */
  size_t text_len, text_cap;
  int64_t first_seq, last_seq;   /* the lowest and highest seq gathered */
  unsigned char *raw, *blob;     /* the encoded body, the compressed blob */
  size_t raw_cap, blob_cap;
  void *zctx;                    /* ZSTD_CCtx, kept between chunks */
} pt_chunk_enc;

/* Adds a call. False when memory ran out (the call is not added). The
 * count (n) and lowest and highest seq of the calls gathered are to be
 * read before pt_chunk_enc_finish. */
bool pt_chunk_enc_add(pt_chunk_enc *e, const pt_chunk_call *c);
/* Adds a call whose text the caller has appended to e->text itself (a
 * buffer from malloc: its args_len bytes of args, then data_len bytes of
 * data, after text_len, which this moves past them; c->args and c->data
 * are not read): the recorder prints each call's text straight into its
 * chunk instead of copying it there. False as pt_chunk_enc_add. */
bool pt_chunk_enc_add_written(pt_chunk_enc *e, const pt_chunk_call *c);
/* Call i's text as gathered (its args and data lengths, summed), and a
 * call's lengths set after it was gathered: the recorder gathers some
 * calls with no text (lengths 0) and prints them later, making the text
 * again in row order (text and text_len are then the caller's to set).
 * pt_chunk_enc_set_text_of is false for lengths over 4 GiB. */
size_t pt_chunk_enc_text_of(const pt_chunk_enc *e, size_t i);
bool pt_chunk_enc_set_text_of(pt_chunk_enc *e, size_t i, size_t args_len, size_t data_len);
/* The bytes gathered so far (args and data text), to bound a chunk. */
static inline size_t pt_chunk_enc_bytes(const pt_chunk_enc *e) { return e->text_len; }
/* Encodes the gathered calls into *blob (*n bytes, owned by e until the
 * next finish) and starts a new chunk. False (err set) when memory ran out
 * or compression failed. */
bool pt_chunk_enc_finish(pt_chunk_enc *e, const void **blob, size_t *n, char *err, size_t errn);
void pt_chunk_enc_free(pt_chunk_enc *e);

/* ---- Reading (versions 1 and 2) ------------------------------------------------------- */

/* What decoding chunk after chunk keeps: a zstd context and the buffer of
 * the decoded body. Zero-initialise; one per thread; pt_chunk_dec_free
 * releases it. The functions without _with make one for the call. */
typedef struct pt_chunk_dec {
  void *zctx;          /* ZSTD_DCtx */
  unsigned char *body; /* the last chunk's decoded body */
  size_t cap;
} pt_chunk_dec;
void pt_chunk_dec_free(pt_chunk_dec *d);

/* Calls every call of a version-2 chunk blob, in stored order, with fn;
 * fn returning false stops (and pt_chunk_each returns false with err
 * untouched). A damaged blob (a bad zstd frame, truncated varints, counts
 * that do not add up) returns false with a one-line reason in err. */
bool pt_chunk_each(const void *blob, size_t n, bool (*fn)(void *ctx, const pt_chunk_call *c),
                   void *ctx, char *err, size_t errn);
bool pt_chunk_each_with(pt_chunk_dec *d, const void *blob, size_t n,
                        bool (*fn)(void *ctx, const pt_chunk_call *c), void *ctx, char *err,
                        size_t errn);

/* Decodes one chunk row: version 1 (a JSON array of calls, the text of
 * chunks.calls) or 2 (a blob of call_chunks.calls), each call's args and
 * data parsed into arena a, calling push for each; push returning false
 * (out of memory) stops with "out of memory". False with a one-line
 * reason in err (without the file's name) when the chunk is damaged. */
bool pt_chunk_decode(pt_json_arena *a, int version, const void *blob, size_t n,
                     bool (*push)(void *ctx, const pt_call *c), void *ctx, char *err,
                     size_t errn);
bool pt_chunk_decode_with(pt_chunk_dec *dec, pt_json_arena *a, int version, const void *blob,
                          size_t n, bool (*push)(void *ctx, const pt_call *c), void *ctx,
                          char *err, size_t errn);

/* ---- SQLite ------------------------------------------------------------------------ */

/* Registers the table-valued function pitrace_calls(blob[, session, chunk])
 * on a connection: the calls of one version-2 chunk, as rows with the
 * calls view's columns (seq, thread, plugin, api, result, start_ns, dur_ns,
 * args, stack, data). The session library calls it on every connection it
 * opens; the loadable extension (libpitrace_sqlite.so, `pitrace sql`)
 * registers the same for the sqlite3 shell. An SQLite result code. */
int pt_sqlite_register(sqlite3 *db);

#endif /* PT_CHUNK_H */
