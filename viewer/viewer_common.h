/*
 * viewer_common.h: what the viewer verbs (sessions, show, stats, diff,
 * export, report) share: opening a session with one-line errors, the
 * session's notes, short readable argument text from the recorded JSON,
 * the packed arguments rebuilt for the one decoder (viewer_pack.c),
 * statistics (viewer_stats.c) and the comparison of two sessions
 * (viewer_diff.c), which the report reuses.
 */
#ifndef VIEWER_COMMON_H
#define VIEWER_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pi_api.h"
#include "pitrace_cli.h"
#include "session.h"

/* ---- Sessions ---------------------------------------------------------------------- */

/* A device command's device time (device_times, SYCL_PI_RECORD_PROFILE). */
typedef struct vw_devtime {
  int64_t seq, api, queue, device;
  int64_t start_ns, end_ns; /* on the session's clock: mapped, or estimated */
  int64_t dur_ns;           /* as the device measured it */
} vw_devtime;

typedef struct vw_session {
  pt_db db;
  const char *path;
  int64_t id;
  pt_session_info info;
  char incomplete_reason[256];
  uint32_t nthreads; /* threads that made calls */
  pt_note *notes;    /* sorted by seq */
  size_t nnotes;
  vw_devtime *devtimes; /* sorted by seq (loaded with VW_STREAM) */
  size_t ndevtimes;
  /* Devices whose clock could not be mapped to the session's (the plugin
   * has no device and host timers): their commands are placed at the
   * earliest time consistent with their enqueue calls. */
  bool devtimes_estimated;
  /* A set of more sessions than VW_AWAKE keeps open only the connections
   * of those being read: a rested session's is closed (what was loaded
   * stays), and vw_db opens it again. `holds`: readers open on it (an
   * iterator, a seek), which keep it awake. */
  const char *verb;
  bool restable, rested;
  unsigned holds;
  bool snapshot; /* opened with VW_SNAPSHOT (never restable) */
  bool damaged;  /* it lost calls (pt_session_damaged): said when opened */
} vw_session;

/* The session's connection, opened again if the session was rested; a
 * file that can no longer be opened ends the verb (one line, exit 2). */
pt_db *vw_db(const vw_session *s);
/* A reader of the session begins (vw_db's connection stays open until it
 * ends) or ends (a restable session with no reader left is rested). */
void vw_session_hold(const vw_session *s);
void vw_session_release(const vw_session *s);
/* Rests a restable session that nothing reads. */
void vw_session_rest(const vw_session *s);

/* The device time of the call `seq`, or NULL. */
const vw_devtime *vw_devtime_of(const vw_session *s, int64_t seq);
/* One line saying how the device times were placed (or that there are none). */
const char *vw_devtime_clock_text(const vw_session *s);

/* What vw_session_open loads besides the session's row: the notes, and
 * what a verb that reads the calls (vw_iter) needs besides them (the
 * device times). No verb holds a session's calls: they stream.
 * VW_SNAPSHOT: everything read until vw_session_close sees the file as it
 * was when opened (pt_snapshot_begin), though a process still records
 * into it. A session that lost calls (pt_session_damaged) is said in one
 * line; with VW_WHOLE (a verb whose answer needs every call) it is not
 * opened, else the verb goes on with what it holds and vw_iter_close
 * fails it (exit 2). */
enum { VW_NOTES = 2, VW_STREAM = 4, VW_SNAPSHOT = 8, VW_WHOLE = 16 };

/* Opens `path` and loads session `id` (-1: the file's default, the last);
 * `what` says what to load (VW_*). On failure prints one line
 * "pitrace VERB: ..." and returns false. */
bool vw_session_open(const char *verb, const char *path, int64_t id, unsigned what,
                     vw_session *s);
void vw_session_close(vw_session *s);

/* The calls of a session in seq order, one at a time, streamed from the
 * file (pt_cursor). */
typedef struct vw_iter {
  const vw_session *s;
  pt_cursor *cur;
  char err[1024];
} vw_iter;
/* False after a one-line error ("pitrace VERB: ..."). */
bool vw_iter_open(const char *verb, const vw_session *s, vw_iter *it);
/* The next call (valid until the next one), or NULL at the end or when the
 * file is damaged: vw_iter_close says which. */
const pt_call *vw_iter_next(vw_iter *it);
/* False after a one-line error when the calls could not all be read. */
bool vw_iter_close(const char *verb, vw_iter *it);

/* ---- Several sessions: record directories (pitrace record -o DIR) ------------------ */

#define VW_MAX_SESSIONS 65536 /* sessions a verb reads (a bound on memory: ~5 KiB each) */
#define VW_AWAKE 32            /* a set of more rests the sessions it is not reading */

/* The sessions the arguments name: files, and every session of the *.db
 * files of directories. Sessions of one group share a clock: offset_ns is
 * where each starts after the group's earliest (sessions.start_unix_ns).
 * The arrays grow while the set is opened, not after. */
typedef struct vw_set {
  vw_session *s; /* a directory's by start time */
  int *group;
  int64_t *offset_ns; /* set by vw_set_place */
  size_t n, cap;
  char **paths; /* file names made from directories */
  size_t npaths, cap_paths;
} vw_set;

/* Whether `path` names a directory. */
bool vw_is_dir(const char *path);
/* The directory's session files (pt_session_files), however many, sorted
 * by name, into *names (malloc'd, as each name); false after a one-line
 * error, which a directory without any is too. */
bool vw_list_dir(const char *verb, const char *dir, char ***names, size_t *nn);
/* Opens session `id` (-1: the last) of the file into the set. False after
 * a one-line error ("pitrace VERB: ..."). */
bool vw_set_open_file(const char *verb, vw_set *set, const char *path, int64_t id, unsigned what,
                      int group);
/* Opens every session of the directory's *.db files, by start time. False
 * after a one-line error: no session files, a bad one (named), too many. */
bool vw_set_open_dir(const char *verb, vw_set *set, const char *dir, unsigned what, int group);
/* Opens every session of the files and directories named (n of them,
 * at most PT_ARGS_MAX; they outlive the set) into group 0, all in start
 * order. False after a one-line error: a bad file, or one named twice
 * (by another name too: its sessions would count twice). */
bool vw_set_open_paths(const char *verb, vw_set *set, const char *const *paths, size_t n,
                       unsigned what);
/* Sets offset_ns: each session's start after its group's earliest. */
void vw_set_place(vw_set *set);
/* Closes the sessions and frees the names (not the set itself). */
void vw_set_close(vw_set *set);

/* The notes of call `seq`: *n of them from the returned one (NULL when none). */
const pt_note *vw_notes_of(const vw_session *s, int64_t seq, size_t *n);

/* How a session ended, in words: "teardown", "signal 11", "killed or
 * _exit: ... N calls salvaged ...", "not known (killed?)", "incomplete:
 * REASON". */
void vw_ended_text(const pt_session_info *i, const char *incomplete_reason, char *out,
                   size_t n);

/* The backend that served the devices (from the plugins table) and the
 * device's name (from the recorded PI_DEVICE_INFO_NAME answers), read from
 * the session's first chunks. Empty strings when not known; false (err
 * says why) when those chunks cannot be read. */
bool vw_backend_device(pt_db *db, int64_t session, char *backend, size_t bn, char *device,
                       size_t dn, char *err, size_t errn);
/* How long the session was recorded: its duration, or where that is not
 * known (a process still recording it, or killed and not salvaged) the
 * end of the last call stored, with *at_least set (-1: no call stored);
 * within PT_TIME_MAX, as a call's times are (a damaged file's may not be). */
int64_t vw_session_duration(const vw_session *s, bool *at_least);

/* a + b, stopping at INT64_MAX or INT64_MIN: a sum of times over many
 * calls or commands, each bounded (PT_TIME_MAX) or not (a device's). */
static inline int64_t vw_add_ns(int64_t a, int64_t b)
{
  int64_t sum;
  return !__builtin_add_overflow(a, b, &sum) ? sum : b > 0 ? INT64_MAX : INT64_MIN;
}

/* ---- Text ------------------------------------------------------------------------- */

/* "12 ns", "3.4 us", "5.67 ms", "1.234 s". */
const char *vw_dur(char buf[32], int64_t ns);

void vw_put_u64(pi_sbuf *b, uint64_t v);
void vw_put_i64(pi_sbuf *b, int64_t v);
/* A quoted C-style string with escapes, cut after `max` characters. */
void vw_put_quoted(pi_sbuf *b, const char *s, size_t max);
/* A JSON string (quotes included); '<' escaped so that it can sit in HTML. */
void vw_put_json_str(pi_sbuf *b, const char *s);
/* A CSV field, quoted when it has to be. */
void vw_put_csv(pi_sbuf *b, const char *s);

/* Writes the buffer to f and empties it. */
void vw_flush(pi_sbuf *b, FILE *f);

/* The API's name ("api#N" for an id this build does not know). */
const char *vw_api_name(uint32_t api, char buf[32]);
/* The result's name, or "(never returned)". */
const char *vw_result_name(const pt_call *c);

/* Colours for a stream (none unless pt_use_color says so). */
typedef struct vw_colors {
  const char *red, *green, *yellow, *bold, *dim, *off;
} vw_colors;
vw_colors vw_colors_for(FILE *f);

/* ---- Arguments as short text --------------------------------------------------------- */

/* How handles and pointers print. The default (NULL fields): handles as
 * kind#id, raw addresses in hex. The diff prints handles by their role and
 * masks raw addresses. */
typedef struct vw_textopt {
  void (*handle)(pi_sbuf *b, uint8_t kind, int64_t id, int64_t offset, void *ctx);
  void *ctx;
  bool mask_addresses; /* raw addresses print as "addr" */
  unsigned max_elems;  /* array elements shown (0: 8) */
  unsigned max_chars;  /* string characters shown (0: 60) */
  bool no_payloads;    /* data as "N bytes" only, without the bytes recorded inline */
} vw_textopt;

/* Parameter i of call c as short text, from its recorded JSON: enums by
 * name (pi_format_enum), handles, strings quoted, arrays, info results as
 * the recorder decoded them, data as "N bytes". Out-values of calls that did
 * not succeed print as "_". */
void vw_arg_text(pi_sbuf *b, const vw_textopt *o, const pi_api_desc *api, unsigned i,
                 const pt_call *c);
/* All of a call's arguments, ", "-separated, out-values marked "->". */
void vw_args_text(pi_sbuf *b, const vw_textopt *o, const pi_api_desc *api, const pt_call *c);
/* A parameter's recorded integer value (0 when not a number). */
int64_t vw_arg_int(const pt_call *c, unsigned i);

/* ---- Kernel names, bytes moved ------------------------------------------------------- */

/* kernel handle id -> name, from the piKernelCreate calls. */
typedef struct vw_map {
  int64_t *keys, *vals;
  size_t cap, n;
} vw_map;
void vw_map_put(vw_map *m, int64_t key, int64_t val);
bool vw_map_get(const vw_map *m, int64_t key, int64_t *val);
void vw_map_free(vw_map *m);

/* Kernel names: keys are kernel ids, values index `names`. */
typedef struct vw_kernels {
  vw_map ids;
  char **names; /* copies */
  size_t n, cap;
} vw_kernels;
/* Adds the kernel call c created, if it is a piKernelCreate that succeeded
 * (calls read one at a time: names are copied). */
void vw_kernels_note(vw_kernels *k, const pt_call *c);
void vw_kernels_free(vw_kernels *k);
/* The kernel a launch ran (NULL when the call is no launch or not known). */
const char *vw_kernel_of(const vw_kernels *k, const pt_call *c);
bool vw_is_launch(uint32_t api);

/* Bytes a successful call moved from host to device and back (0, 0 for
 * calls that move none). `pixels` maps image mem ids to bytes per pixel
 * (from piMemImageCreate). */
void vw_call_bytes(const pt_call *c, const vw_map *pixels, int64_t *h2d, int64_t *d2h);
/* The bytes a transfer moves, either way (copies included). */
int64_t vw_transfer_bytes(const pt_call *c, const vw_map *pixels);
/* Records the pixel size of an image a call created. */
void vw_note_image(const pt_call *c, vw_map *pixels);

/* ---- Packed arguments for the one decoder (viewer_pack.c) ---------------------------- */

typedef struct vw_pack vw_pack;
vw_pack *vw_pack_new(void);
void vw_pack_free(vw_pack *p);
/* Rebuilds call c's packed argv from its JSON and payloads (pointers into
 * the recorded bytes, handles as tagged values); returns argv. */
const uint64_t *vw_pack_call(vw_pack *p, vw_session *s, const pt_call *c);
/* Appends `text` (the decoder's output for the packed call) with the tagged
 * values turned into kind#id and pointers into recorded bytes into "ptr". */
void vw_pack_render(const vw_pack *p, const char *text, size_t len, pi_sbuf *out);
/* Appends "\t[data] NAME : ..." lines for payloads the decoder does not
 * preview (host pointers of rectangles and images, USM copies). */
void vw_pack_data_lines(vw_session *s, const pt_call *c, pi_sbuf *out);

/* ---- Statistics (viewer_stats.c) ---------------------------------------------------- */

typedef struct vw_api_stat {
  uint32_t api;
  int64_t count, errors, total, mean, p50, p99, max;
} vw_api_stat;

/* Device times (count 0: none recorded): total, mean, p50, p99, max. */
typedef struct vw_dev_stat {
  int64_t count, total, mean, p50, p99, max;
} vw_dev_stat;

typedef struct vw_kernel_stat {
  char *name; /* a copy; NULL: not known */
  int64_t launches, total;
  vw_dev_stat dev;
} vw_kernel_stat;

/* Transfers of one API with device times: bytes and device time. */
typedef struct vw_transfer_stat {
  uint32_t api;
  int64_t bytes;
  vw_dev_stat dev;
  /* The bytes and device time of the commands timed (VW_UNTIMED_NS or
   * longer): the rate's, which no placeholder time may inflate. */
  int64_t timed_bytes, timed_ns;
} vw_transfer_stat;

typedef struct vw_stats {
  vw_api_stat *apis; /* by total time, largest first */
  size_t napis;
  vw_kernel_stat *kernels; /* by total time */
  size_t nkernels;
  int64_t calls, errors, unreturned, total_ns;
  int64_t h2d, d2h, h2d_calls, d2h_calls;
  vw_transfer_stat *transfers; /* by device time */
  size_t ntransfers;
  /* Device times under VW_UNTIMED_NS, of how many: a driver that does not
   * time its commands (rusticl says 1 ns for each). */
  int64_t untimed, ndevtimes;
} vw_stats;

/* No device command completes this fast: a device time shorter is a
 * driver's placeholder, not a measurement (no rate is made from it). */
#define VW_UNTIMED_NS 10

/* The figures of a session, reading its calls once (vw_iter). False after a
 * one-line error ("pitrace VERB: ..."). */
bool vw_stats_compute(const char *verb, const vw_session *s, vw_stats *st);
/* The figures over several sessions together (ss[0..ns)): calls per API,
 * kernels by name, device times, bytes moved. */
bool vw_stats_compute_all(const char *verb, const vw_session *ss, size_t ns, vw_stats *st);
void vw_stats_free(vw_stats *st);

/* ---- Comparison (viewer_diff.c) ------------------------------------------------------ */

/* Aligns b to a on equal elements (a longest common subsequence, Myers):
 * match_a[i] is the index in b that a[i] pairs with, or -1. */
bool vw_align(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, int32_t *match_a);

/* What differs. VD_REPLAY (a call a recorded replay made itself, marked by
 * its `replay` note) and VD_TEARDOWN (piTearDown in one session only) are
 * listed but are no differences. */
typedef enum {
  VD_ONLY_A, VD_ONLY_B, VD_ARG, VD_RESULT, VD_INFO, VD_DATA, VD_NOTE, VD_ORDER, VD_REPLAY,
  VD_TEARDOWN, VD_KINDS
} vw_diff_kind;

typedef struct vw_diff_item {
  vw_diff_kind kind;
  int64_t seq_a, seq_b; /* -1: none */
  uint32_t api;
  const char *what, *a, *b; /* in the diff's texts */
} vw_diff_item;

typedef struct vw_diff {
  vw_diff_item *v;
  size_t n, cap;
  /* The items' texts, in the blocks of an arena (a million differences
   * are a million short strings: one malloc each cost more than their
   * text). */
  pt_json_arena texts;
  const char *whats[4]; /* the last few `what` texts kept, shared by the items */
  unsigned next_what;
  size_t count[VD_KINDS];
  size_t matched;
  size_t ignored; /* items left out by vw_diff_filter */
  /* Payloads only A, or only B, recorded (a session of data none against
   * one of data all): not compared, and said so. */
  size_t data_only[2];
  bool per_thread;
  size_t calls_a, calls_b; /* the sessions' calls */
  char why[1024];          /* why vw_diff_compute failed ("": said already) */
} vw_diff;

/* Aligns and compares two sessions opened with VW_STREAM (their calls are
 * read twice, not held), with their notes. False with
 * a one-line reason in d->why, or after printing one (why ""); d then
 * holds nothing to free. */
typedef struct vw_diff_opts {
  bool no_info;     /* --no-info: info queries left out */
  double tolerance; /* --tolerance: read-back data compared as floats within
                       it (pt_data_compare); < 0: bitwise */
  bool f64;         /* --f64: as 64-bit floats */
  /* --ignore and --only (vw_diff_filter): what is left out is also never
   * what a shown difference refers to ("as at A N"). */
  const struct vw_diff_term *ignore, *only;
  size_t nignore, nonly;
} vw_diff_opts;
bool vw_diff_compute(vw_session *a, vw_session *b, const vw_diff_opts *o, vw_diff *d);
void vw_diff_free(vw_diff *d);
/* The differences counted toward "different". */
size_t vw_diff_total(const vw_diff *d);
/* Whether items of a kind count toward "different". */
bool vw_diff_counts(vw_diff_kind k);
const char *vw_diff_kind_name(vw_diff_kind k);
/* The comparison as JSON (the diff verb's --json, and the report's);
 * `paired_by` (NULL: none) says how a record directory's pair was made. */
void vw_diff_json(pi_sbuf *b, const vw_session *a, const vw_session *b2, const vw_diff *d,
                  const char *paired_by);

/* --ignore/--only patterns: "KIND", "API_GLOB" or "API_GLOB:KIND", comma-
 * separated. Parsing appends to *terms; false with a one-line reason. */
typedef struct vw_diff_term vw_diff_term;
bool vw_diff_terms_parse(const char *option, const char *text, vw_diff_term **terms, size_t *n,
                         char *err, size_t errn);
void vw_diff_terms_free(vw_diff_term *terms, size_t n);
/* Leaves out the items that match an `ignore` term or, when there are
 * `only` terms, match none of them; recounts. */
void vw_diff_filter(vw_diff *d, const vw_diff_opts *o);

#endif
