/*
 * session.h: reading recorded sessions (docs/schema.md), for every verb of
 * the pitrace command: the viewer, replay, extract and record.
 *
 * pt_open checks a file is a pitrace session database this build can read
 * and says why not in one line (missing, empty, not SQLite, not pitrace, a
 * newer schema, damaged). pt_load reads one session's calls, in sequence
 * order, straight from the chunk rows (no per-call SQL), with each call's
 * arguments parsed from its JSON; a cursor (pt_cursor_*, cursor.c) yields
 * them in the same order without holding the session; pt_data finds a
 * call's payloads. The other questions the verbs ask of a session (its
 * threads, stacks, handles, payload rows, device times, exit status) are
 * answered here too, so that no code outside this library knows a table.
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
  bool image;              /* held in memory (pt_open_image): no file beside it */
} pt_db;

/* Called by pt_open with the path first when set: pitrace sets it to
 * salvage the calls that recording processes which are gone left in ring
 * files beside the database (ringfile.c). */
extern void (*pt_salvage_hook)(const char *path);

/* How pt_open opens: read-only unless PT_OPEN_WRITABLE; PT_OPEN_MAPPED
 * reads the file through a memory mapping (payloads are not copied twice:
 * replay). */
enum { PT_OPEN_WRITABLE = 1, PT_OPEN_MAPPED = 2 };

/* Opens a session database (`flags`: PT_OPEN_*; true is PT_OPEN_WRITABLE).
 * A directory that holds one session file (pitrace record -o DIR of a
 * program of one process) opens that file, and out->path names it. On
 * failure returns false with a one-line reason in err. */
bool pt_open(const char *path, unsigned flags, pt_db *out, char *err, size_t errn);
/* Whether SQLite can open `path` as a database: it opens a file by its
 * absolute path, of at most mxPathname bytes (512 in its unix VFS) with
 * "-journal" added for the journal beside it (so 504 for the database),
 * and past that says only "unable to open database file". *len: the
 * path's absolute length, *most: that limit. */
bool pt_path_openable(const char *path, size_t *len, size_t *most);
/* Removes the session file `path` when it is empty (a process that could
 * not begin its session left it so: no session, and every verb refused a
 * record directory holding it), and its journal when empty too; whether
 * it did. A file with a page in it is left: another process may be
 * making its session there. */
bool pt_remove_if_empty(const char *path);
/* Whether a directory's entry of this name is one of its session files:
 * *.db, not hidden. */
bool pt_session_file_name(const char *name);
/* The session files of a directory (pitrace record -o DIR): its regular
 * *.db files not hidden, as "DIR/NAME", sorted by name, at most `max` of
 * them into names (each to free()); *n is how many there are in all.
 * False with a one-line reason in err when the directory cannot be read
 * or memory runs out. */
bool pt_session_files(const char *dir, char **names, size_t max, size_t *n, char *err,
                      size_t errn);
/* Opens the image of a session database file held in memory (n bytes,
 * which must stay as they are until pt_close), read-only, with the checks
 * pt_open makes after the file's own (`name` stands for the file in
 * messages): what reads a database it has whole without writing it to a
 * file first (the fuzzers). */
bool pt_open_image(const char *name, const void *bytes, size_t n, pt_db *out, char *err,
                   size_t errn);
void pt_close(pt_db *db);
/* Holds the file as it is now for every read on db until pt_snapshot_end
 * (or pt_close): a process still recording into it commits nothing
 * meanwhile (it waits, as for any reader's pass over the calls), so a
 * verb that reads a session more than once sees it the same each time
 * (pitrace diff of a file with itself). False with a one-line reason. */
bool pt_snapshot_begin(pt_db *db, char *err, size_t errn);
void pt_snapshot_end(pt_db *db);

typedef struct pt_session_info {
  int64_t id;
  char label[256], command[1024], host[256], ended[64];
  int64_t pid, start_unix_ns, duration_ns, calls, signal;
  char plugins[1024]; /* "backend:name, ..." */
  bool has_exit_status; /* the exit status the shim or pitrace record stored */
  int exit_status;
  /* A session still `running`: the pid of the live process recording it
   * (its ring file beside the database is locked by it); -1 when its
   * process is gone and its ring file waits to be salvaged (a salvage
   * that failed: a full disk, a file this reader may not write); 0 when
   * there is no ring file (an older recorder's session). */
  int64_t recorder_pid;
  /* A process forked from a recording one: its parent's pid, and the
   * parent's session in this file when it recorded into it (else 0). */
  int64_t parent_pid, parent_session;
} pt_session_info;

/* The sessions in the file, by id; *n set. Caller frees. */
pt_session_info *pt_sessions(pt_db *db, size_t *n, char *err, size_t errn);

typedef struct pt_call {
  int64_t seq;
  uint32_t thread, plugin, api;
  bool returned;    /* false: the call never returned (crash, kill) */
  int32_t result;
  int64_t start_ns; /* from the session's start, within +-PT_TIME_MAX */
  int64_t dur_ns;   /* within +-PT_TIME_MAX */
  int64_t stack;    /* -1: none */
  pt_json *args;    /* a JSON array, one element per parameter */
  pt_json *data;    /* inline payloads: [position, role, idx, size, hex]... or NULL */
} pt_call;

/* The farthest a call's time (its start or duration) is from 0: 2^60 ns,
 * about 36 years, is no recorded time, only damage (a flipped bit, a call
 * edited by hand). The readers (pt_load, a cursor, a seek) clamp a call's
 * times to it where they decode them, so a viewer's sum or difference of
 * a few (a start plus a duration, two starts' difference) stays in
 * int64_t; a sum over many calls saturates where it is made (stats). */
#define PT_TIME_MAX (INT64_C(1) << 60)

static inline int64_t pt_time_clamp(int64_t ns)
{
  return ns > PT_TIME_MAX ? PT_TIME_MAX : ns < -PT_TIME_MAX ? -PT_TIME_MAX : ns;
}

typedef struct pt_calls {
  pt_call *v;
  size_t n;
  pt_json_arena arena; /* owns the parsed JSON */
} pt_calls;

/* Loads every call of `session` (sorted by seq). False with a reason. */
bool pt_load(pt_db *db, int64_t session, pt_calls *out, char *err, size_t errn);
void pt_calls_free(pt_calls *c);
/* The calls of the first `chunks` chunks the recorder stored (sorted by
 * seq): what a session began with, read cheaply. */
bool pt_load_first(pt_db *db, int64_t session, size_t chunks, pt_calls *out, char *err,
                   size_t errn);
/* The call `seq` of loaded calls (sorted by seq), or NULL. */
const pt_call *pt_call_by_seq(const pt_calls *calls, int64_t seq);

/* A session's calls one at a time in seq order, as pt_load sorts them,
 * holding only the chunks whose calls are not all yielded yet (cursor.c). */
typedef struct pt_cursor pt_cursor;
/* NULL with a one-line reason in err. */
pt_cursor *pt_cursor_open(const pt_db *db, int64_t session, char *err, size_t errn);
/* The next call, or NULL at the end (err "") or when the file is damaged
 * (err says why). The call and its JSON stay valid until the next
 * pt_cursor_next or pt_cursor_close. */
const pt_call *pt_cursor_next(pt_cursor *c, char *err, size_t errn);
void pt_cursor_close(pt_cursor *c);

/* ---- seek.c: calls by seq, without holding the session ---------------------------- */

/* A session's calls looked up by seq in any order, holding a few decoded
 * chunks (seek.c): for a verb that reads calls in an order of its own. */
typedef struct pt_seek pt_seek;
/* NULL with a one-line reason in err. */
pt_seek *pt_seek_open(const pt_db *db, int64_t session, char *err, size_t errn);
/* The call `seq`, or NULL when the session has none (err "") or the file is
 * damaged (err says why). The call and its JSON stay valid until the next
 * pt_seek_call or pt_seek_close. */
const pt_call *pt_seek_call(pt_seek *s, int64_t seq, char *err, size_t errn);
void pt_seek_close(pt_seek *s);

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

/* ---- What the verbs ask besides the calls ------------------------------------------ */

/* Why recording of a session stopped early ("" when it did not). */
void pt_incomplete_reason(pt_db *db, int64_t session, char *out, size_t n);
/* How a session's incomplete_reason says that its data stopped on a full
 * disk while its calls went on being recorded: it begins so, or has it
 * after "; " (a salvage's reason put before it). */
#define PT_DATA_CUT "data of call "
/* The value variable `name` had in the environment the session was
 * recorded in (NULL when not recorded). Caller frees. */
char *pt_session_env_var(pt_db *db, int64_t session, const char *name);
/* Stores the exit status of a session's process (the file opened writable).
 * False with a reason. */
bool pt_set_exit_status(pt_db *db, int64_t session, int status, char *err, size_t errn);
/* The calls stored for a session, counted from its chunks and its calls in
 * flight (for a session that never wrote its count); -1 when unreadable. */
int64_t pt_count_calls(pt_db *db, int64_t session);
/* Whether rows of an ended session were lost (a damaged file): it holds
 * fewer (or more) calls than its row counts, or calls but no row of the
 * plugins that made them. True with a sentence in out that says so,
 * naming the file and the session. */
bool pt_session_damaged(pt_db *db, int64_t session, char *out, size_t n);
/* The end of the last call of the session's last chunk, from the session's
 * start (how long a killed session ran at least); -1 when none. */
int64_t pt_last_call_end(pt_db *db, int64_t session);

/* A thread that made calls: its number in the session and its system id. */
typedef struct pt_thread {
  int idx;
  int64_t tid;
} pt_thread;
/* The session's threads by number (*n; NULL when none). Caller frees. */
pt_thread *pt_threads(pt_db *db, int64_t session, size_t *n);

/* Calls fn for each recorded call stack (backtrace) of the session: its id
 * and its frames, one per line. False with a reason when unreadable. */
bool pt_each_stack(pt_db *db, int64_t session, void (*fn)(void *ctx, int64_t id,
                                                           const char *frames),
                   void *ctx, char *err, size_t errn);

/* The largest handle id the recorder gave out in a session (0: none). */
int64_t pt_max_handle_id(pt_db *db, int64_t session);

/* A handle the session created and had not released by some call. */
typedef struct pt_live_handle {
  int64_t id, created_seq;
  int64_t released_seq; /* -1: never released */
  char kind[16];        /* "mem", "kernel", ... (pi_object_kind_name) */
} pt_live_handle;
/* The handles the session created itself that were not released at or
 * before call `seq`, newest first (*n; NULL when none). Caller frees. */
pt_live_handle *pt_live_handles(pt_db *db, int64_t session, int64_t seq, size_t *n);

/* A stored payload row (not the inline payloads of a call's JSON). */
typedef struct pt_payload_row {
  int64_t seq, size, stored;
  int64_t captured_seq; /* -1: none */
  unsigned position, idx;
  char role[12]; /* "in", "out", "value", "readback" */
} pt_payload_row;
/* The session's stored payload rows, by seq, position, role and element
 * (*n; NULL when none or out of memory: *n 0). Caller frees. */
pt_payload_row *pt_payload_rows(pt_db *db, int64_t session, size_t *n);

/* A device command's times as recorded (SYCL_PI_RECORD_PROFILE). */
typedef struct pt_device_time {
  int64_t seq, api, queue, device;
  bool mapped;             /* start_ns/end_ns on the session's clock */
  int64_t start_ns, end_ns; /* when mapped */
  int64_t device_start_ns, device_end_ns; /* on the device's clock */
} pt_device_time;
/* The session's device times by seq (*n; NULL when none). Caller frees. */
pt_device_time *pt_device_times(pt_db *db, int64_t session, size_t *n);

/* ---- Recorded references --------------------------------------------------------- */

/* A recorded pointer or handle argument: NULL, a plain number (an address
 * of the recorded process), or an object "KIND#ID[+OFFSET]" (usm#3+16,
 * mapped#2, mem#4: the kinds of pi_object_kind_name). */
typedef enum { PT_REF_NULL, PT_REF_NUMBER, PT_REF_OBJECT } pt_ref_kind;
typedef struct pt_ref {
  pt_ref_kind kind;
  uint8_t obj;     /* PT_REF_OBJECT: PI_OBJ_* */
  int64_t id, offset;
  uint64_t value;  /* PT_REF_NUMBER: the number */
  size_t len;      /* characters of the object reference */
} pt_ref;
/* Parses an object reference at the start of s; false when there is none. */
bool pt_ref_parse(const char *s, pt_ref *r);
/* The reference a recorded argument value holds. */
pt_ref pt_ref_of(const pt_json *j);

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
/* A note's value (its bytes, from value_hex), up to `size` bytes into
 * `out`: returns its size (0: none, or not hex). */
size_t pt_note_value(const pt_note *note, void *out, size_t size);

/* Two runs' bytes of a payload (n bytes each) compared element by element:
 * bitwise, or, with tolerance >= 0, as 32-bit floats (64-bit with f64),
 * equal when |a - b| <= tolerance * max(1, |a|, |b|) (NaN equals NaN
 * where both are NaNs arithmetic makes). Values of magnitude outside
 * [2^-64, 2^64] (doubles: [2^-256, 2^256]), zero aside, are compared
 * bitwise: integers and packed bytes read as floats fall there.
 * True when no element differs; *d says which did either way. */
typedef struct pt_data_diff {
  size_t width; /* the elements' width: 4 or 8 with a tolerance; else 4
                   when n is a multiple of 4, 1 otherwise */
  size_t elems; /* how many (the last may be short) */
  size_t count; /* how many differ */
  size_t first; /* the first that differs (SIZE_MAX: none) */
} pt_data_diff;
bool pt_data_compare(const unsigned char *a, const unsigned char *b, size_t n, double tolerance,
                     bool f64, pt_data_diff *d);
/* An element of w bytes as "0x3f800000 (1)": its bits, and its value for
 * 4- and 8-byte elements (a float, a double). */
void pt_data_elem_text(char *out, size_t n, const unsigned char *p, size_t w);

/* Room for element n of a growable array of `elem`-byte elements: returns
 * the array (moved when it grew, *cap updated), or NULL when memory ran out
 * (the array and *cap unchanged). */
void *pt_grow(void *v, size_t *cap, size_t n, size_t elem);

#endif /* PT_SESSION_H */
