/*
 * session.h: reading recorded sessions (docs/schema.md), for every verb of
 * the pitrace command: the viewer, replay, extract and record.
 *
 * pt_open checks a file is a pitrace session database this build can read
 * and says why not in one line (missing, empty, not SQLite, not pitrace, a
 * newer schema, damaged). pt_load reads one session's calls, in sequence
 * order, straight from the chunk rows (no per-call SQL), with each call's
 * arguments parsed from its JSON; pt_data finds a call's payloads.
 */
#ifndef PT_SESSION_H
#define PT_SESSION_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "schema.h"

typedef struct pt_db {
  sqlite3 *db;
  char path[4096];
  sqlite3_stmt *data_stmt; /* pt_data's lookup, prepared once */
} pt_db;

/* Called by pt_open with the path first when set: pitrace sets it to
 * salvage the calls that recording processes which are gone left in ring
 * files beside the database (ringfile.c). */
extern void (*pt_salvage_hook)(const char *path);

/* Opens a session database read-only (read-write when `writable`). On
 * failure returns false with a one-line reason in err. */
bool pt_open(const char *path, bool writable, pt_db *out, char *err, size_t errn);
void pt_close(pt_db *db);

typedef struct pt_session_info {
  int64_t id;
  char label[256], command[1024], host[256], ended[64];
  int64_t pid, start_unix_ns, duration_ns, calls, signal;
  char plugins[1024]; /* "backend:name, ..." */
} pt_session_info;

/* The sessions in the file, by id; *n set. Caller frees. */
pt_session_info *pt_sessions(pt_db *db, size_t *n, char *err, size_t errn);

typedef struct pt_call {
  int64_t seq;
  uint32_t thread, plugin, api;
  bool returned;    /* false: the call never returned (crash, kill) */
  int32_t result;
  int64_t start_ns; /* from the session's start */
  int64_t dur_ns;
  int64_t stack;    /* -1: none */
  pt_json *args;    /* a JSON array, one element per parameter */
  pt_json *data;    /* inline payloads: [position, role, idx, size, hex]... or NULL */
} pt_call;

typedef struct pt_calls {
  pt_call *v;
  size_t n;
  pt_json_arena arena; /* owns the parsed JSON */
} pt_calls;

/* Loads every call of `session` (sorted by seq). False with a reason. */
bool pt_load(pt_db *db, int64_t session, pt_calls *out, char *err, size_t errn);
void pt_calls_free(pt_calls *c);
/* The call `seq` of loaded calls (sorted by seq), or NULL. */
const pt_call *pt_call_by_seq(const pt_calls *calls, int64_t seq);

/* A payload of call `seq`: `role` is "in", "out", "value" or "readback",
 * `position` the parameter, `idx` the element. Returns a malloc'd copy of
 * its bytes (size in *size, the size the call really had in *full), or
 * NULL when not recorded. Looks at the call's inline data first. */
unsigned char *pt_data(pt_db *db, int64_t session, const pt_call *call, unsigned position,
                       const char *role, unsigned idx, size_t *size, size_t *full);

/* Why pt_data found no complete payload: no row at all, a row recorded
 * in part (meta mode, a data cap), or a row whose blob is gone. */
typedef enum { PT_ROW_NONE, PT_ROW_PARTIAL, PT_ROW_BLOB_GONE } pt_row_state;
pt_row_state pt_data_row(pt_db *db, int64_t session, int64_t seq, unsigned position,
                         const char *role, unsigned idx);
/* The seq at which the "readback" payload of parameter `position` of call
 * `seq` was captured (-1: unknown). */
int64_t pt_captured_seq(pt_db *db, int64_t session, int64_t seq, unsigned position);

/* Whether the file holds session `session`. */
bool pt_session_exists(pt_db *db, int64_t session);

/* A recorded plugin (the plugins table). */
typedef struct pt_plugin {
  int idx;
  char name[256], backend[32];
} pt_plugin;
/* The plugins of a session, by index: up to max into out; returns the count. */
size_t pt_plugins(pt_db *db, int64_t session, pt_plugin *out, size_t max);

/* The default session of a file: the only one, or the last. -1 if none. */
int64_t pt_default_session(pt_db *db);

/* A note of the runtime (a link decision, a spec-constant value): it comes
 * just before the call `seq`. */
typedef struct pt_note {
  int64_t seq;
  char *kind, *kernel, *device, *symbol, *image, *symbolic_id, *numeric_ids, *text;
  char *value_hex;
  int native;
} pt_note;

/* Every note of a session, sorted by seq (*n of them; NULL when none). */
pt_note *pt_load_notes(pt_db *db, int64_t session, size_t *n);
void pt_free_notes(pt_note *notes, size_t n);
/* The notes of call `seq` in `count` notes sorted by seq: *n of them from
 * the returned one (NULL when none). */
const pt_note *pt_notes_at(const pt_note *notes, size_t count, int64_t seq, size_t *n);

/* Room for element n of a growable array of `elem`-byte elements: returns
 * the array (moved when it grew, *cap updated), or NULL when memory ran out
 * (the array and *cap unchanged). */
void *pt_grow(void *v, size_t *cap, size_t n, size_t elem);

#endif /* PT_SESSION_H */
