/*
 * session_out.h: writing a new session database made of calls of a
 * recorded session (out.c), in the format the recorder writes (schema.c,
 * chunk.c): `pitrace extract` writes its repro through it and knows no SQL
 * of the storage format.
 */
#ifndef PT_SESSION_OUT_H
#define PT_SESSION_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chunk.h"

typedef struct pt_out pt_out;

/* Starts session 1 of the new database at `path` (an empty file): the
 * schema, the API description of source file `src_path`, its session
 * `src_session`'s process details and plugins, labelled `label`, with
 * `ncalls` calls on one thread (thread 1: the source's thread `thread`).
 * NULL with a one-line reason in err. Nothing is kept before
 * pt_out_finish. */
pt_out *pt_out_create(const char *path, const char *src_path, int64_t src_session,
                      const char *label, int64_t ncalls, uint32_t thread, char *err,
                      size_t errn);

/* A payload of a call made up for the new session: stored as the recorder
 * stores one (inline in the call up to PT_INLINE_DATA bytes, else once by
 * its hash). */
typedef struct pt_out_payload {
  unsigned position;
  const char *role; /* "in", "out", ... */
  const unsigned char *bytes;
  size_t size;
} pt_out_payload;

/* Adds a call, in order (c->thread is ignored: 1). `src_seq` >= 0: a
 * recorded call, whose payload rows (not its read-backs) are copied under
 * c->seq; else `made` (or NULL) is its payload. False: pt_out_error says
 * why. */
bool pt_out_call(pt_out *o, const pt_chunk_call *c, int64_t src_seq, const pt_out_payload *made);

/* The handle `id` of the source session, created by call `created_seq` of
 * the new one. */
bool pt_out_handle(pt_out *o, uint64_t id, int64_t created_seq);

/* Ends the new session: its chunks, the blobs its payloads refer to,
 * committed, the database closed. PT_OUT_BLOB_GONE: a payload's blob is
 * missing from the source (call *seq of the new session, parameter *pos,
 * role in role[16]); nothing kept. pt_out_free after either. */
typedef enum { PT_OUT_OK, PT_OUT_ERROR, PT_OUT_BLOB_GONE } pt_out_status;
pt_out_status pt_out_finish(pt_out *o, int64_t *seq, unsigned *pos, char role[16]);

/* Why the last call failed (one line). */
const char *pt_out_error(const pt_out *o);
/* Closes (without committing what pt_out_finish did not) and frees. */
void pt_out_free(pt_out *o);

#endif /* PT_SESSION_OUT_H */
