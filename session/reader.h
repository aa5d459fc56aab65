/*
 * reader.h: what the two readers of calls in session.c (pt_load, which
 * holds a session) and cursor.c (which streams one) share, private to the
 * session library: the decoding of one chunk row, where a chunk's lowest
 * seq comes from, and the calls that never returned.
 */
#ifndef PT_READER_H
#define PT_READER_H

#include "chunk.h"
#include "session.h"

/* The statement over a session's chunk rows, in the order they were
 * written: column 0 the calls (version 1: JSON text; 2: a binary blob,
 * chunk.h), 1 the chunk's id (version 2's past every version-1 id), 2 the
 * version, 3 the lowest seq and 4 the count of calls where the row says
 * them (version 2), else NULL.
 * NULL after a reason in err. */
sqlite3_stmt *pt__chunk_rows(const pt_db *db, int64_t session, char *err, size_t errn);
/* The statement that reads one chunk row by its id (as pt__chunk_rows
 * gives it), bound as parameter 2: columns 0 to 2 as pt__chunk_rows's.
 * NULL after a reason in err. */
sqlite3_stmt *pt__chunk_row(const pt_db *db, int64_t session, char *err, size_t errn);

/* A chunk id as pt__chunk_rows gives it, as the user sees it: the row's
 * id in its own table. */
int64_t pt__chunk_shown_id(int64_t id);

/* Decodes the chunk row a statement of the two above stands on into the
 * growable array *v (*nv of *cap used), their JSON in the arena, with
 * dec's zstd context and buffer. False with what is wrong in err, after
 * the file's name ("is damaged: ..."). */
bool pt__decode_chunk(pt_chunk_dec *dec, pt_json_arena *a, sqlite3_stmt *st, int64_t session,
                      pt_call **v, size_t *nv, size_t *cap, char *err, size_t errn);

/* The lowest seq of the calls of the chunk row pt__chunk_rows stands on
 * (INT64_MAX when it holds none): chunks hold calls in the order they
 * returned, so a later chunk may still hold an earlier call. */
int64_t pt__chunk_lowest_seq(sqlite3_stmt *rows);

/* Why a read of the file at `path` failed, into err: held by another
 * process (SQLite's lock: SQLITE_BUSY), or damaged or truncated, with
 * `why` (NULL: SQLite's message on h). */
void pt__read_error(sqlite3 *h, const char *path, const char *why, char *err, size_t errn);

/* Begins a read transaction where none is open, so that every read of a
 * cursor or seek sees one state of a file a recording process may still be
 * writing; whether it began one (then pt__read_end ends it). */
bool pt__read_begin(const pt_db *db);
void pt__read_end(const pt_db *db, bool began);

/* Appends the session's calls that never returned to *v as pt__decode_chunk
 * does. False when memory ran out. */
bool pt__inflight_calls(const pt_db *db, int64_t session, pt_json_arena *a, pt_call **v, size_t *nv,
                        size_t *cap, char *err, size_t errn);

#endif /* PT_READER_H */
