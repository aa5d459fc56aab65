/*
 * session.c: reading recorded sessions (session.h). Calls come from the
 * chunk rows, parsed once each, plus the calls that never returned
 * (inflight), then are sorted by sequence number (cursor.c streams them
 * instead). Also the runtime's notes (the notes table), which the viewer
 * and replay both read, the other tables the verbs ask about, and the
 * text of recorded references ("usm#3+16").
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "chunk.h"
#include "pi_api.h"
#include "reader.h"
#include "recorder.h"
#include "schema.h"
#include "session.h"

void (*pt_salvage_hook)(const char *path);

static int cmp_name(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

bool pt_session_file_name(const char *name)
{
  size_t len = strlen(name);
  return len >= 4 && strcmp(name + len - 3, ".db") == 0 && name[0] != '.';
}

bool pt_session_files(const char *dir, char **names, size_t max, size_t *n, char *err,
                      size_t errn)
{
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) {
    snprintf(err, errn, "cannot read the directory %s: %s", dir, strerror(errno));
    return false;
  }
  bool ok = true;
  struct dirent *e;
  while (ok && (e = readdir(d))) {
    if (!pt_session_file_name(e->d_name))
      continue;
    char *p;
    struct stat st;
    if (asprintf(&p, "%s/%s", dir, e->d_name) < 0) {
      snprintf(err, errn, "out of memory listing %s", dir);
      ok = false;
    } else if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
      free(p);
    } else if (*n < max) {
      names[(*n)++] = p;
    } else { /* the first `max` by name are kept, whatever readdir's order */
      ++*n;
      size_t last = 0;
      for (size_t i = 1; i < max; i++)
        if (strcmp(names[i], names[last]) > 0)
          last = i;
      if (max && strcmp(p, names[last]) < 0) {
        free(names[last]);
        names[last] = p;
      } else {
        free(p);
      }
    }
  }
  closedir(d);
  qsort(names, *n < max ? *n : max, sizeof *names, cmp_name);
  return ok;
}

/* Whether file `path` begins as an SQLite database does. */
static bool looks_like_sqlite(const char *path)
{
  char head[16];
  FILE *f = fopen(path, "rb");
  bool yes = f && fread(head, 1, sizeof head, f) == sizeof head &&
             memcmp(head, "SQLite format 3", 16) == 0;
  if (f)
    fclose(f);
  return yes;
}

/* pt_open of the one session file in directory `dir`. With several, the
 * error names the first (by name, of the first 16) that is an SQLite
 * database at all, not a file beside them that no verb could read. */
static bool open_dir(const char *dir, unsigned flags, pt_db *out, char *err, size_t errn)
{
  enum { SHOWN = 16 };
  char *names[SHOWN];
  size_t n;
  bool listed = pt_session_files(dir, names, SHOWN, &n, err, errn), ok = false; /* err: why not */
  size_t kept = n < SHOWN ? n : SHOWN, example = 0;
  while (listed && n > 1 && example < kept && !looks_like_sqlite(names[example]))
    example++;
  if (listed && n == 0)
    snprintf(err, errn, "%s is a directory without session files (*.db)", dir);
  else if (listed && n > 1)
    snprintf(err, errn, "%s is a directory of %zu session files: name one (%s, ...), or give "
             "the directory to pitrace sessions, stats, diff, export or report, which read them "
             "all",
             dir, n, names[example < kept ? example : 0]);
  else if (listed)
    ok = pt_open(names[0], flags, out, err, errn);
  for (size_t i = 0; i < kept; i++)
    free(names[i]);
  return ok;
}

/* False with err set unless the first bytes of `name` (16 of them, of a
 * file of `size` bytes) are an SQLite database's. */
static bool sqlite_magic(const char *name, const void *head, size_t size, char *err,
                         size_t errn)
{
  if (size >= 16 && memcmp(head, "SQLite format 3", 16) == 0)
    return true;
  snprintf(err, errn, "%s is not a pitrace session (not an SQLite database%s)", name,
           size < 100 ? ": too short" : "");
  return false;
}

void pt__read_error(sqlite3 *h, const char *path, const char *why, char *err, size_t errn)
{
  int code = sqlite3_errcode(h) & 0xff;
  if (!why && (code == SQLITE_BUSY || code == SQLITE_LOCKED))
    snprintf(err, errn, "%s is held by another process: a recording process's commit, or one "
             "it left unfinished that a reader keeping the file open (pitrace show into a "
             "pager, sqlite3) stops this one from undoing; try again once that ends", path);
  else
    snprintf(err, errn, "%s is damaged or truncated: %s", path, why ? why : sqlite3_errmsg(h));
}

/* The first statement on a connection out->db just opened (its schema
 * read, with pitrace's SQL functions registered): SQLite's result code. */
static int prepare_version(pt_db *out, sqlite3_stmt **s)
{
  sqlite3_busy_timeout(out->db, 5000);
  pt_sqlite_register(out->db);
  return sqlite3_prepare_v2(out->db, "SELECT value FROM pitrace_meta WHERE key = "
                                     "'schema_version'", -1, s, NULL);
}

/* Whether the file system `path` is on is mounted read-only. */
static bool read_only_fs(const char *path)
{
  struct statvfs v;
  return statvfs(path, &v) == 0 && (v.f_flag & ST_RDONLY);
}

/* What pt_open and pt_open_image check once SQLite has the database (rc
 * and s: prepare_version's): a pitrace session of a schema version this
 * build reads, whose tables are there. False (out closed) with err set. */
static bool check_session(pt_db *out, int rc, sqlite3_stmt *s, unsigned flags, char *err,
                          size_t errn)
{
  const char *path = out->path;
  if (rc != SQLITE_OK) {
    const char *why = sqlite3_errmsg(out->db);
    int ext = sqlite3_extended_errcode(out->db);
    if (strstr(why, "no such table"))
      snprintf(err, errn, "%s is an SQLite database but not a pitrace session (no "
               "pitrace_meta table)", path);
    else if ((ext == SQLITE_READONLY_ROLLBACK || ext == SQLITE_READONLY_RECOVERY) &&
             read_only_fs(path))
      snprintf(err, errn, "%s was left mid-write by a process that was killed, and the file "
               "system it is on is read-only, so that cannot be undone there: mount it "
               "writable, or copy it with its %s file to where it can be written",
               path, ext == SQLITE_READONLY_ROLLBACK ? "-journal" : "-wal");
    else if (ext == SQLITE_READONLY_ROLLBACK || ext == SQLITE_READONLY_RECOVERY)
      snprintf(err, errn, "%s was left mid-write by a process that was killed, and this "
               "user cannot write it to undo that: open it once as a user who can "
               "(or copy it with its %s file)", path,
               ext == SQLITE_READONLY_ROLLBACK ? "-journal" : "-wal");
    else
      pt__read_error(out->db, path, NULL, err, errn);
    sqlite3_finalize(s);
    pt_close(out);
    return false;
  }
  rc = sqlite3_step(s);
  int version = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
  sqlite3_finalize(s);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    pt__read_error(out->db, path, NULL, err, errn);
    pt_close(out);
    return false;
  }
  if (version > PT_SCHEMA_VERSION) {
    snprintf(err, errn, "%s was recorded with pitrace schema version %d; this pitrace "
             "reads version %d: use a newer pitrace", path, version, PT_SCHEMA_VERSION);
    pt_close(out);
    return false;
  }
  if (version < 1) {
    snprintf(err, errn, "%s is not a pitrace session (no schema version)", path);
    pt_close(out);
    return false;
  }
  /* A quick look at the structure catches truncation that the header
   * survived. */
  rc = sqlite3_exec(out->db, "SELECT count(*) FROM sessions; SELECT count(*) FROM chunks;",
                    NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    pt__read_error(out->db, path, NULL, err, errn);
    pt_close(out);
    return false;
  }
  if (flags & PT_OPEN_MAPPED)
    sqlite3_exec(out->db, "PRAGMA mmap_size = 4294967296", NULL, NULL, NULL);
  return true;
}

bool pt_remove_if_empty(const char *path)
{
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0 || unlink(path) != 0)
    return false;
  char journal[PATH_MAX + 16];
  snprintf(journal, sizeof journal, "%s-journal", path);
  if (stat(journal, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
    unlink(journal);
  return true;
}

bool pt_path_openable(const char *path, size_t *len, size_t *most)
{
  char cwd[4096] = "";
  if (path[0] != '/' && !getcwd(cwd, sizeof cwd))
    cwd[0] = 0;
  *len = strlen(path) + (cwd[0] ? strlen(cwd) + 1 : 0);
  /* A database's journal is named by its path and "-journal", which must
   * fit too: 8 fewer than the VFS's limit. */
  sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
  *most = (vfs && vfs->mxPathname > 8 ? (size_t)vfs->mxPathname : 512) - 8;
  return *len <= *most;
}

bool pt_open(const char *path, unsigned flags, pt_db *out, char *err, size_t errn)
{
  memset(out, 0, sizeof *out);
  struct stat st;
  bool there = stat(path, &st) == 0;
  if (there && S_ISDIR(st.st_mode))
    return open_dir(path, flags, out, err, errn);
  /* A device, pipe or socket holds no session (a FIFO read waits for a
   * writer; /dev/null was "empty"), nor rings beside it to salvage. */
  if (there && !S_ISREG(st.st_mode)) {
    snprintf(err, errn, "%s is a device, pipe or socket, not a session file", path);
    return false;
  }
  if (pt_salvage_hook)
    pt_salvage_hook(path);
  if (stat(path, &st) != 0) {
    snprintf(err, errn, "%s: %s", path, strerror(errno));
    return false;
  }
  if (st.st_size == 0) {
    snprintf(err, errn, "%s is empty: no session was recorded into it", path);
    return false;
  }
  FILE *f = fopen(path, "rb");
  char magic[16] = ""; /* zeros where it cannot be read */
  if (!f) { /* not its content's fault (no permission, no file descriptor left) */
    snprintf(err, errn, "cannot read %s: %s", path, strerror(errno));
    return false;
  }
  if (fread(magic, 1, 16, f) != 16)
    magic[0] = 0;
  fclose(f);
  if (!sqlite_magic(path, magic, (size_t)st.st_size, err, errn))
    return false;
  size_t len, most;
  if (!pt_path_openable(path, &len, &most)) {
    snprintf(err, errn, "%s: its path is %zu characters long, and SQLite opens files by paths "
             "of up to %zu; move or link it to a shorter one", path, len, most);
    return false;
  }
  int mode = flags & PT_OPEN_WRITABLE ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
  sqlite3_stmt *s = NULL;
  int rc;
  for (;;) {
    if (sqlite3_open_v2(path, &out->db, mode, NULL) != SQLITE_OK) {
      snprintf(err, errn, "%s: cannot open: %s", path, sqlite3_errmsg(out->db));
      sqlite3_close(out->db);
      out->db = NULL;
      return false;
    }
    rc = prepare_version(out, &s);
    /* A process killed while it wrote can leave a journal that must be
     * rolled back (SQLITE_READONLY_ROLLBACK), or, from a recorder of
     * before, a WAL index that must be rebuilt (SQLITE_READONLY_RECOVERY),
     * before anyone reads, which a read-only connection may not do: read
     * through a read-write one then, where the file allows it. */
    int ext = sqlite3_extended_errcode(out->db);
    if (rc == SQLITE_OK || mode != SQLITE_OPEN_READONLY ||
        (ext != SQLITE_READONLY_RECOVERY && ext != SQLITE_READONLY_ROLLBACK) ||
        access(path, W_OK) != 0)
      break;
    sqlite3_close(out->db);
    out->db = NULL;
    mode = SQLITE_OPEN_READWRITE;
  }
  snprintf(out->path, sizeof out->path, "%s", path);
  return check_session(out, rc, s, flags, err, errn);
}

bool pt_open_image(const char *name, const void *bytes, size_t n, pt_db *out, char *err,
                   size_t errn)
{
  memset(out, 0, sizeof *out);
  out->image = true;
  snprintf(out->path, sizeof out->path, "%s", name);
  if (n == 0) {
    snprintf(err, errn, "%s is empty: no session was recorded into it", name);
    return false;
  }
  if (!sqlite_magic(name, bytes, n, err, errn))
    return false;
  if (sqlite3_open_v2(":memory:", &out->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
    snprintf(err, errn, "%s: cannot open: %s", name, sqlite3_errmsg(out->db));
    pt_close(out);
    return false;
  }
  /* SQLite keeps a database in memory without a WAL: a file in WAL mode
   * (bytes 18 and 19 are 2) without its -wal file holds the same pages as
   * in rollback mode, so such an image is read as that, from a copy. */
  unsigned char *data = (unsigned char *)(uintptr_t)bytes; /* read-only: never written */
  unsigned flags = SQLITE_DESERIALIZE_READONLY;
  if (n > 19 && (data[18] == 2 || data[19] == 2)) {
    if (!(data = sqlite3_malloc64(n))) {
      snprintf(err, errn, "out of memory reading %s", name);
      pt_close(out);
      return false;
    }
    memcpy(data, bytes, n);
    data[18] = data[18] == 2 ? 1 : data[18];
    data[19] = data[19] == 2 ? 1 : data[19];
    flags |= SQLITE_DESERIALIZE_FREEONCLOSE;
  }
  if (sqlite3_deserialize(out->db, "main", data, (sqlite3_int64)n, (sqlite3_int64)n, flags) !=
      SQLITE_OK) {
    snprintf(err, errn, "%s: cannot open: %s", name, sqlite3_errmsg(out->db));
    pt_close(out);
    return false;
  }
  sqlite3_stmt *s = NULL;
  int rc = prepare_version(out, &s);
  return check_session(out, rc, s, 0, err, errn);
}

void pt_close(pt_db *db)
{
  sqlite3_finalize(db->data_stmt);
  db->data_stmt = NULL;
  if (db->db)
    sqlite3_close(db->db);
  db->db = NULL;
}

static void copy_text(char *dst, size_t n, const unsigned char *src)
{
  snprintf(dst, n, "%s", src ? (const char *)src : "");
}

pt_session_info *pt_sessions(pt_db *db, size_t *n, char *err, size_t errn)
{
  *n = 0;
  sqlite3_stmt *s;
  /* Files of recorders before the parent columns have none. */
  const char *parents = pt_schema_has_parents(db->db) ? "parent_pid, parent_session" : "0, 0";
  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT id, label, command, host, ended, pid, start_unix_ns, duration_ns, calls, "
           "signal, (SELECT group_concat(p.backend || ':' || p.name, ', ') FROM plugins p "
           "WHERE p.session = s.id), exit_status, %s FROM sessions s ORDER BY id", parents);
  if (sqlite3_prepare_v2(db->db, sql, -1, &s, NULL) != SQLITE_OK) {
    snprintf(err, errn, "%s is damaged: %s", db->path, sqlite3_errmsg(db->db));
    return NULL;
  }
  size_t cap = 8;
  pt_session_info *v = calloc(cap, sizeof *v);
  int rc;
  while (v && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    if (*n == cap) {
      pt_session_info *nv = realloc(v, (cap *= 2) * sizeof *v);
      if (!nv)
        break;
      v = nv;
    }
    pt_session_info *i = &v[(*n)++];
    memset(i, 0, sizeof *i);
    i->id = sqlite3_column_int64(s, 0);
    copy_text(i->label, sizeof i->label, sqlite3_column_text(s, 1));
    copy_text(i->command, sizeof i->command, sqlite3_column_text(s, 2));
    copy_text(i->host, sizeof i->host, sqlite3_column_text(s, 3));
    copy_text(i->ended, sizeof i->ended, sqlite3_column_text(s, 4));
    i->pid = sqlite3_column_int64(s, 5);
    i->start_unix_ns = sqlite3_column_int64(s, 6);
    i->duration_ns = sqlite3_column_type(s, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 7);
    i->calls = sqlite3_column_type(s, 8) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 8);
    i->signal = sqlite3_column_int64(s, 9);
    copy_text(i->plugins, sizeof i->plugins, sqlite3_column_text(s, 10));
    i->has_exit_status = sqlite3_column_type(s, 11) != SQLITE_NULL;
    i->exit_status = sqlite3_column_int(s, 11);
    i->parent_pid = sqlite3_column_int64(s, 12);
    i->parent_session = sqlite3_column_int64(s, 13);
    if (strcmp(i->ended, "running") == 0 && !db->image)
      i->recorder_pid = writer_recorder_of(db->path, i->id);
  }
  sqlite3_finalize(s);
  return v;
}

int64_t pt_default_session(pt_db *db)
{
  sqlite3_stmt *s;
  int64_t id = -1;
  if (sqlite3_prepare_v2(db->db, "SELECT max(id) FROM sessions", -1, &s, NULL) == SQLITE_OK) {
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
      id = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
  }
  return id;
}

static int cmp_seq(const void *a, const void *b)
{
  const pt_call *x = a, *y = b;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Version-2 chunks' ids in the chunk statements: past every version-1
 * id, so that one id names one row of either table. */
#define V2_ID_BASE 1099511627776
#define STR_(x) #x
#define STR(x) STR_(x)
#define V2_IDS STR(V2_ID_BASE)

/* One of two statements: over both tables where the file has call_chunks,
 * else over chunks alone (a version-1 file opened read-only). */
static sqlite3_stmt *chunk_stmt(const pt_db *db, const char *both, const char *v1,
                                int64_t session, char *err, size_t errn)
{
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db->db, both, -1, &s, NULL) != SQLITE_OK &&
      sqlite3_prepare_v2(db->db, v1, -1, &s, NULL) != SQLITE_OK) {
    snprintf(err, errn, "%s is damaged: %s", db->path, sqlite3_errmsg(db->db));
    return NULL;
  }
  sqlite3_bind_int64(s, 1, session);
  return s;
}

sqlite3_stmt *pt__chunk_rows(const pt_db *db, int64_t session, char *err, size_t errn)
{
  /* A session's chunks are in the table of its version (docs/schema.md);
   * each arm goes in id order. */
  return chunk_stmt(db,
                    "SELECT calls, id, 1, NULL, NULL FROM chunks WHERE session = ?1 UNION ALL "
                    "SELECT calls, id + " V2_IDS ", 2, first_seq, ncalls FROM call_chunks "
                    "WHERE session = ?1",
                    "SELECT calls, id, 1, NULL, NULL FROM chunks WHERE session = ?1 ORDER BY "
                    "id", session, err, errn);
}

sqlite3_stmt *pt__chunk_row(const pt_db *db, int64_t session, char *err, size_t errn)
{
  return chunk_stmt(db,
                    "SELECT calls, id, 1 FROM chunks WHERE session = ?1 AND id = ?2 UNION ALL "
                    "SELECT calls, id + " V2_IDS ", 2 FROM call_chunks WHERE session = ?1 AND "
                    "id = ?2 - " V2_IDS,
                    "SELECT calls, id, 1 FROM chunks WHERE session = ?1 AND id = ?2", session,
                    err, errn);
}

/* The fast way through a chunk as the writer writes it: the fixed fields of
 * each call read in place, only its arguments and inline data parsed into
 * JSON (a call's seven numbers as JSON values were a third of a loaded
 * session's memory). */
typedef struct scan {
  const char *p, *end;
} scan;

static void scan_space(scan *s)
{
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\t' || *s->p == '\r'))
    s->p++;
}

static bool scan_char(scan *s, char c)
{
  scan_space(s);
  if (s->p >= s->end || *s->p != c)
    return false;
  s->p++;
  return true;
}

static bool at_end(scan *s)
{
  scan_space(s);
  return s->p == s->end;
}

/* An integer (64-bit wrap-around as json.c reads it) then `after`. */
static bool scan_int(scan *s, int64_t *out, char after)
{
  bool neg = s->p < s->end && *s->p == '-';
  const char *start = s->p += neg;
  uint64_t v = 0;
  for (; s->p < s->end && *s->p >= '0' && *s->p <= '9'; s->p++)
    v = v * 10 + (uint64_t)(*s->p - '0');
  *out = (int64_t)(neg ? 0 - v : v); /* as json.c: -INT64_MIN is no int64_t */
  return s->p > start && s->p - start <= 20 && scan_char(s, after);
}

static pt_json *scan_json(pt_json_arena *a, scan *s)
{
  size_t used;
  char why[8];
  pt_json *j = pt_json_parse_prefix(a, s->p, (size_t)(s->end - s->p), &used, why, sizeof why);
  s->p += used;
  return j;
}

/* False (calls appended so far kept in *nv: the caller drops them) where
 * the chunk is not in the writer's exact shape. */
static bool decode_fast(pt_json_arena *a, const char *text, size_t n, pt_call **v, size_t *nv,
                        size_t *cap)
{
  scan s = {text, text + n};
  if (!scan_char(&s, '['))
    return false;
  if (scan_char(&s, ']'))
    return at_end(&s);
  do {
    pt_call c = {.returned = true, .stack = -1};
    int64_t f[7];
    if (!scan_char(&s, '['))
      return false;
    for (int k = 0; k < 7; k++)
      if (!scan_int(&s, &f[k], ','))
        return false;
    c.seq = f[0];
    c.thread = (uint32_t)f[1];
    c.plugin = (uint32_t)f[2];
    c.api = (uint32_t)f[3];
    c.result = (int32_t)f[4];
    c.start_ns = pt_time_clamp(f[5]);
    c.dur_ns = pt_time_clamp(f[6]);
    c.args = scan_json(a, &s);
    if (!c.args || c.args->type != PJ_ARRAY || c.seq < 1)
      return false;
    if (scan_char(&s, ',')) {
      pt_json *st = scan_json(a, &s);
      if (!st || (st->type != PJ_INT && st->type != PJ_NULL))
        return false;
      c.stack = st->type == PJ_INT ? st->u.i : -1;
      if (scan_char(&s, ',') && !(c.data = scan_json(a, &s)))
        return false;
    }
    if (!scan_char(&s, ']'))
      return false;
    pt_call *nvv = pt_grow(*v, cap, *nv, sizeof **v);
    if (!nvv)
      return false;
    *v = nvv;
    nvv[(*nv)++] = c;
  } while (scan_char(&s, ','));
  return scan_char(&s, ']') && at_end(&s);
}

typedef struct grow_ctx {
  pt_call **v;
  size_t *nv, *cap;
} grow_ctx;

static bool push_grow(void *ctx, const pt_call *c)
{
  grow_ctx *g = ctx;
  pt_call *v = pt_grow(*g->v, g->cap, *g->nv, sizeof *v);
  if (!v)
    return false;
  *g->v = v;
  v[(*g->nv)++] = *c;
  return true;
}

/* Decodes a chunk row's calls (its blob, version and id as pt__chunk_rows
 * gives them) as pt__decode_chunk does, with push. */
static bool decode_blob(pt_chunk_dec *dec, pt_json_arena *a, const void *blob, size_t n,
                        int version, int64_t id, int64_t session,
                        bool (*push)(void *ctx, const pt_call *c), void *ctx, char *err,
                        size_t errn)
{
  char why[400];
  if (pt_chunk_decode_with(dec, a, version, blob, n, push, ctx, why, sizeof why))
    return true;
  if (strcmp(why, "out of memory") == 0)
    snprintf(err, errn, "cannot be read: out of memory");
  else if (version < 2)
    snprintf(err, errn, "is damaged: %s", why);
  else
    snprintf(err, errn, "is damaged: session %lld, chunk %lld: %s", (long long)session,
             (long long)pt__chunk_shown_id(id), why);
  return false;
}

int64_t pt__chunk_shown_id(int64_t id)
{
  return id >= V2_ID_BASE ? id - V2_ID_BASE : id;
}

/* A chunk row's calls appended to *v as pt__decode_chunk says. */
static bool decode_listed(pt_chunk_dec *dec, pt_json_arena *a, const void *blob, size_t n,
                          int version, int64_t id, int64_t session, pt_call **v, size_t *nv,
                          size_t *cap, char *err, size_t errn)
{
  size_t before = *nv;
  if (version < 2 && blob && decode_fast(a, blob, n, v, nv, cap))
    return true;
  *nv = before; /* anything else: the codec's own way, which says what is wrong */
  grow_ctx g = {v, nv, cap};
  return decode_blob(dec, a, blob, n, version, id, session, push_grow, &g, err, errn);
}

bool pt__decode_chunk(pt_chunk_dec *dec, pt_json_arena *a, sqlite3_stmt *st, int64_t session,
                      pt_call **v, size_t *nv, size_t *cap, char *err, size_t errn)
{
  return decode_listed(dec, a, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0),
                       sqlite3_column_int(st, 2), sqlite3_column_int64(st, 1), session, v, nv,
                       cap, err, errn);
}

/* A chunk is a JSON array of calls, each an array that starts with its
 * seq: the lowest is found by looking at the second level only, without
 * parsing (strings skipped). A seq not written as plain digits makes the
 * answer INT64_MIN (the chunk may hold any seq). */
bool pt__read_begin(const pt_db *db)
{
  return sqlite3_get_autocommit(db->db) &&
         sqlite3_exec(db->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
}

void pt__read_end(const pt_db *db, bool began)
{
  if (began)
    sqlite3_exec(db->db, "COMMIT", NULL, NULL, NULL);
}

bool pt_snapshot_begin(pt_db *db, char *err, size_t errn)
{
  /* BEGIN takes no lock: the first read does (the file's shared lock, or a
   * WAL read mark), and the transaction keeps it to its end; the readers
   * within it (cursors, seeks) begin none of their own. */
  sqlite3_stmt *s = NULL;
  bool began = pt__read_begin(db);
  bool ok = began &&
            sqlite3_prepare_v2(db->db, "SELECT count(*) FROM sqlite_master", -1, &s, NULL) ==
                SQLITE_OK &&
            sqlite3_step(s) == SQLITE_ROW;
  sqlite3_finalize(s);
  if (!ok) {
    snprintf(err, errn, "%s cannot be read as it is at one moment: %s", db->path,
             began ? sqlite3_errmsg(db->db) : "a read of it is under way");
    if (began)
      sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
  }
  return ok;
}

void pt_snapshot_end(pt_db *db)
{
  if (db->db && !sqlite3_get_autocommit(db->db))
    sqlite3_exec(db->db, "COMMIT", NULL, NULL, NULL);
}

int64_t pt__chunk_lowest_seq(sqlite3_stmt *rows)
{
  if (sqlite3_column_type(rows, 3) != SQLITE_NULL) /* version 2: first_seq */
    return sqlite3_column_int64(rows, 3);
  const char *p = sqlite3_column_blob(rows, 0);
  const char *end = p ? p + sqlite3_column_bytes(rows, 0) : NULL; /* empty: NULL */
  int64_t lowest = INT64_MAX;
  int depth = 0;
  for (; p < end; p++) {
    char ch = *p;
    if (ch == '"') {
      for (p++; p < end && *p != '"'; p++)
        p += *p == '\\';
    } else if (ch == '[') {
      if (++depth != 2)
        continue;
      const char *q = p + 1;
      while (q < end && (*q == ' ' || *q == '\n' || *q == '\t' || *q == '\r'))
        q++;
      uint64_t v = 0; /* wrapping as json.c does */
      const char *digits = q;
      for (; q < end && *q >= '0' && *q <= '9'; q++)
        v = v * 10 + (uint64_t)(*q - '0');
      if (q == digits || (q < end && *q != ',' && *q != ']' && *q != ' ' && *q != '\n'))
        return INT64_MIN;
      if ((int64_t)v < lowest)
        lowest = (int64_t)v;
      p = q - 1;
    } else if (ch == ']') {
      depth--;
    }
  }
  return lowest;
}

bool pt__inflight_calls(const pt_db *db, int64_t session, pt_json_arena *a, pt_call **v, size_t *nv,
                        size_t *cap, char *err, size_t errn)
{
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db->db, "SELECT seq, thread, plugin, api, start_ns, args, stack, data "
                                 "FROM inflight WHERE session = ? ORDER BY seq", -1, &s,
                         NULL) != SQLITE_OK)
    return true; /* a file from before calls in flight were kept */
  sqlite3_bind_int64(s, 1, session);
  bool ok = true;
  while (ok && sqlite3_step(s) == SQLITE_ROW) {
    pt_call c = {0};
    c.seq = sqlite3_column_int64(s, 0);
    c.thread = (uint32_t)sqlite3_column_int(s, 1);
    c.plugin = (uint32_t)sqlite3_column_int(s, 2);
    c.api = (uint32_t)sqlite3_column_int(s, 3);
    c.start_ns = pt_time_clamp(sqlite3_column_int64(s, 4));
    c.returned = false;
    char why[256];
    const char *t = (const char *)sqlite3_column_text(s, 5);
    c.args = t ? pt_json_parse(a, t, strlen(t), why, sizeof why) : NULL;
    c.stack = sqlite3_column_type(s, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 6);
    const char *d = (const char *)sqlite3_column_text(s, 7);
    c.data = d ? pt_json_parse(a, d, strlen(d), why, sizeof why) : NULL;
    if (!c.args)
      continue;
    pt_call *nvv = pt_grow(*v, cap, *nv, sizeof **v);
    if (!nvv) {
      snprintf(err, errn, "out of memory loading %s", db->path);
      ok = false;
      break;
    }
    *v = nvv;
    nvv[(*nv)++] = c;
  }
  sqlite3_finalize(s);
  return ok;
}

/* ---- Loading: chunks decoded on several threads ----------------------------------- */

/* At most this many threads decode a session's chunks (the calling one
 * included), never more than the processors online. */
#define MAX_LOADERS 16

/* One chunk row to decode: a copy of its blob, and where its calls went. */
typedef struct job {
  void *blob;
  size_t n;
  int version;
  int64_t id;
  int64_t ncalls; /* the row's count of calls (version 2), else -1 */
  size_t at;      /* the first of its places in loader.calls */
  bool nomem;     /* its blob could not be copied */
  bool placed;    /* its calls are there, else in v */
  pt_call *v;
  size_t nv, cap;
  char err[512]; /* why it could not be decoded ("" when it was) */
} job;

typedef struct loader {
  const pt_db *db;
  int64_t session;
  job *jobs;
  size_t njobs;
  pt_call *calls; /* every call, when every row said its count (else NULL) */
  _Atomic size_t next;   /* the next job to take */
  _Atomic size_t failed; /* the first job that failed (njobs: none) */
} loader;

/* Each thread's own: its arena (moved into the calls' when done). */
typedef struct loader_thread {
  loader *l;
  pt_json_arena arena;
  pthread_t tid;
} loader_thread;

/* Puts calls in the places a row's count gave them; false past the last. */
typedef struct place_ctx {
  pt_call *at;
  size_t n, max;
} place_ctx;

static bool push_placed(void *ctx, const pt_call *c)
{
  place_ctx *p = ctx;
  if (p->n == p->max)
    return false;
  p->at[p->n++] = *c;
  return true;
}

static void decode_job(loader *l, pt_chunk_dec *dec, pt_json_arena *a, job *j)
{
  if (j->nomem) {
    snprintf(j->err, sizeof j->err, "cannot be read: out of memory");
    return;
  }
  if (l->calls) {
    place_ctx p = {l->calls + j->at, 0, (size_t)j->ncalls};
    char why[512];
    if (decode_blob(dec, a, j->blob, j->n, j->version, j->id, l->session, push_placed, &p, why,
                    sizeof why) && p.n == p.max) {
      j->placed = true;
      j->nv = p.n;
      return;
    }
    /* Its count is not its calls' (or the chunk is damaged): its calls go
     * in a list of their own, and the decoding says what is wrong. */
  }
  decode_listed(dec, a, j->blob, j->n, j->version, j->id, l->session, &j->v, &j->nv, &j->cap,
                j->err, sizeof j->err);
}

static void *load_jobs(void *p)
{
  loader_thread *t = p;
  loader *l = t->l;
  pt_chunk_dec dec = {0};
  for (size_t k; (k = atomic_fetch_add(&l->next, 1)) < l->njobs && k < atomic_load(&l->failed);) {
    job *j = &l->jobs[k];
    decode_job(l, &dec, &t->arena, j);
    free(j->blob);
    j->blob = NULL;
    size_t f = atomic_load(&l->failed); /* the lowest failed job wins */
    while (j->err[0] && k < f && !atomic_compare_exchange_weak(&l->failed, &f, k))
      ;
  }
  pt_chunk_dec_free(&dec);
  return NULL;
}

/* The chunk rows (at most `chunks`) as jobs, their blobs copied; false
 * with err set. */
static bool read_jobs(loader *l, size_t chunks, char *err, size_t errn)
{
  size_t cap = 0, total = 0;
  bool counted = true;
  sqlite3_stmt *s = pt__chunk_rows(l->db, l->session, err, errn);
  if (!s)
    return false;
  int rc = SQLITE_DONE;
  while (l->njobs < chunks && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    job *v = pt_grow(l->jobs, &cap, l->njobs, sizeof *v);
    if (!v) {
      rc = SQLITE_NOMEM;
      break;
    }
    l->jobs = v;
    job *j = &v[l->njobs++];
    memset(j, 0, sizeof *j);
    const void *blob = sqlite3_column_blob(s, 0);
    j->n = (size_t)sqlite3_column_bytes(s, 0);
    j->version = sqlite3_column_int(s, 2);
    j->id = sqlite3_column_int64(s, 1);
    j->ncalls = sqlite3_column_type(s, 4) == SQLITE_INTEGER ? sqlite3_column_int64(s, 4) : -1;
    /* No blob (NULL) is decoded as the codec says; a failed copy is out
     * of memory when its turn comes. */
    if (blob && (j->blob = malloc(j->n ? j->n : 1)))
      memcpy(j->blob, blob, j->n);
    j->nomem = blob && !j->blob;
    j->at = total;
    counted &= j->ncalls >= 0 && j->ncalls <= (int64_t)(SIZE_MAX / 2 / sizeof(pt_call) - total);
    if (counted)
      total += (size_t)j->ncalls;
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    if (rc == SQLITE_NOMEM)
      snprintf(err, errn, "out of memory loading %s", l->db->path);
    else
      pt__read_error(l->db->db, l->db->path, NULL, err, errn);
    return false;
  }
  if (counted && total)
    l->calls = malloc(total * sizeof *l->calls);
  return true;
}

/* The decoded jobs' calls in one array, in job order, into out (v, n; *cap
 * its room); false when memory ran out. */
static bool gather(loader *l, pt_calls *out, size_t *cap)
{
  bool all_placed = l->calls != NULL;
  size_t total = 0;
  for (size_t k = 0; k < l->njobs; k++) {
    all_placed &= l->jobs[k].placed;
    total += l->jobs[k].nv;
  }
  if (all_placed) {
    out->v = l->calls;
    out->n = *cap = total;
    l->calls = NULL;
    return true;
  }
  out->v = malloc((total ? total : 1) * sizeof *out->v);
  if (!out->v)
    return false;
  for (size_t k = 0; k < l->njobs; k++) {
    job *j = &l->jobs[k];
    memcpy(out->v + out->n, j->placed ? l->calls + j->at : j->v, j->nv * sizeof *out->v);
    out->n += j->nv;
  }
  *cap = total ? total : 1;
  return true;
}

static void loader_free(loader *l)
{
  for (size_t k = 0; k < l->njobs; k++) {
    free(l->jobs[k].blob);
    free(l->jobs[k].v);
  }
  free(l->jobs);
  free(l->calls);
}

/* Puts each call at its seq's place when the seqs are lo, lo+1, ... each
 * once, in place (each call swapped straight to where it belongs); false
 * otherwise, the calls then in some order (to be sorted). */
static bool place_by_seq(pt_calls *c)
{
  if (!c->n)
    return true;
  int64_t lo = c->v[0].seq, hi = c->v[0].seq;
  for (size_t i = 1; i < c->n; i++) {
    lo = c->v[i].seq < lo ? c->v[i].seq : lo;
    hi = c->v[i].seq > hi ? c->v[i].seq : hi;
  }
  if ((uint64_t)hi - (uint64_t)lo != c->n - 1)
    return false;
  for (size_t i = 0; i < c->n; i++)
    while ((size_t)(c->v[i].seq - lo) != i) {
      size_t k = (size_t)(c->v[i].seq - lo);
      if (c->v[k].seq == c->v[i].seq)
        return false; /* a damaged file whose seqs repeat */
      pt_call t = c->v[k];
      c->v[k] = c->v[i];
      c->v[i] = t;
    }
  return true;
}

/* Calls of the first `chunks` chunk rows (SIZE_MAX: all, and the calls in
 * flight), sorted by seq. The rows are read here, then decoded by up to
 * MAX_LOADERS threads, each taking the next row not taken (each call is
 * parsed into its thread's arena, in its place in the array when the rows
 * say how many calls each holds). */
static bool load(pt_db *db, int64_t session, size_t chunks, pt_calls *out, char *err,
                 size_t errn)
{
  memset(out, 0, sizeof *out);
  loader l = {.db = db, .session = session};
  if (!read_jobs(&l, chunks, err, errn)) {
    loader_free(&l);
    return false;
  }
  atomic_init(&l.next, 0);
  atomic_init(&l.failed, l.njobs);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t nthreads = cpus < 1 ? 1 : cpus > MAX_LOADERS ? MAX_LOADERS : (size_t)cpus;
  if (nthreads > l.njobs / 2)
    nthreads = l.njobs / 2 ? l.njobs / 2 : 1;
  loader_thread t[MAX_LOADERS];
  size_t started = 1;
  for (size_t k = 0; k < nthreads; k++)
    t[k] = (loader_thread){.l = &l};
  for (; started < nthreads; started++)
    if (pthread_create(&t[started].tid, NULL, load_jobs, &t[started]) != 0)
      break;
  load_jobs(&t[0]);
  for (size_t k = 0; k < started; k++) {
    if (k)
      pthread_join(t[k].tid, NULL);
    pt_json_arena_move(&out->arena, &t[k].arena);
  }
  size_t failed = atomic_load(&l.failed), cap = 0;
  if (failed < l.njobs)
    snprintf(err, errn, "%s %s", db->path, l.jobs[failed].err);
  else if (!gather(&l, out, &cap))
    snprintf(err, errn, "out of memory loading %s", db->path);
  bool ok = failed == l.njobs && out->v;
  loader_free(&l);
  if (ok && chunks == SIZE_MAX)
    ok = pt__inflight_calls(db, session, &out->arena, &out->v, &out->n, &cap, err, errn);
  if (!ok) {
    pt_calls_free(out);
    return false;
  }
  /* Chunks hold calls in the order they returned: sort only when needed,
   * and where the seqs are those of a whole session (each of lo..hi once),
   * put each call in its place instead (threads' calls return out of
   * order; chunks of several writer threads would interleave). */
  bool sorted = true;
  for (size_t i = 1; i < out->n && sorted; i++)
    sorted = out->v[i - 1].seq < out->v[i].seq;
  if (!sorted && !place_by_seq(out))
    qsort(out->v, out->n, sizeof *out->v, cmp_seq);
  err[0] = 0;
  return true;
}

bool pt_load(pt_db *db, int64_t session, pt_calls *out, char *err, size_t errn)
{
  return load(db, session, SIZE_MAX, out, err, errn);
}

bool pt_load_first(pt_db *db, int64_t session, size_t chunks, pt_calls *out, char *err,
                   size_t errn)
{
  return load(db, session, chunks, out, err, errn);
}

static int seq_vs_call(const void *key, const void *elem)
{
  int64_t k = *(const int64_t *)key, s = ((const pt_call *)elem)->seq;
  return (k > s) - (k < s);
}

const pt_call *pt_call_by_seq(const pt_calls *calls, int64_t seq)
{
  return calls->n ? bsearch(&seq, calls->v, calls->n, sizeof *calls->v, seq_vs_call) : NULL;
}

void pt_calls_free(pt_calls *c)
{
  free(c->v);
  c->v = NULL;
  c->n = 0;
  pt_json_arena_free(&c->arena);
}

static unsigned char *unhex(const char *h, size_t *n)
{
  size_t len = strlen(h) / 2;
  unsigned char *b = malloc(len ? len : 1);
  if (!b)
    return NULL;
  for (size_t i = 0; i < len; i++) {
    unsigned hi = (unsigned)(h[2 * i] <= '9' ? h[2 * i] - '0' : (h[2 * i] | 32) - 'a' + 10);
    unsigned lo = (unsigned)(h[2 * i + 1] <= '9' ? h[2 * i + 1] - '0'
                                                 : (h[2 * i + 1] | 32) - 'a' + 10);
    b[i] = (unsigned char)(hi << 4 | lo);
  }
  *n = len;
  return b;
}

unsigned char *pt_data(pt_db *db, int64_t session, const pt_call *call, unsigned position,
                       const char *role, unsigned idx, size_t *size, size_t *full)
{
  *size = *full = 0;
  if (call->data && call->data->type == PJ_ARRAY)
    for (uint32_t i = 0; i < call->data->n; i++) {
      pt_json *d = call->data->u.items[i];
      pt_json *r = pt_json_at(d, 1), *h = pt_json_at(d, 4);
      if (pt_json_int(pt_json_at(d, 0), -1) == position && r && r->type == PJ_STRING &&
          strcmp(r->u.s, role) == 0 && pt_json_int(pt_json_at(d, 2), -1) == idx && h &&
          h->type == PJ_STRING) {
        *full = (size_t)pt_json_int(pt_json_at(d, 3), 0);
        return unhex(h->u.s, size);
      }
    }
  sqlite3_stmt *s = db->data_stmt;
  if (!s && sqlite3_prepare_v2(db->db, "SELECT r.size, coalesce(r.content, b.content) FROM "
                                       "data_rows r LEFT JOIN blobs b ON b.hash = r.hash WHERE "
                                       "r.session = ? AND r.seq = ? AND r.position = ? AND "
                                       "r.role = ? AND r.idx = ?",
                               -1, &s, NULL) != SQLITE_OK)
    return NULL;
  db->data_stmt = s;
  sqlite3_bind_int64(s, 1, session);
  sqlite3_bind_int64(s, 2, call->seq);
  sqlite3_bind_int(s, 3, (int)position);
  sqlite3_bind_text(s, 4, role, -1, SQLITE_STATIC);
  sqlite3_bind_int(s, 5, (int)idx);
  unsigned char *out = NULL;
  if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 1) != SQLITE_NULL) {
    *full = (size_t)sqlite3_column_int64(s, 0);
    int n = sqlite3_column_bytes(s, 1);
    out = malloc(n ? (size_t)n : 1);
    if (out) {
      if (n) /* an empty blob's pointer is NULL */
        memcpy(out, sqlite3_column_blob(s, 1), (size_t)n);
      *size = (size_t)n;
    }
  }
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  return out;
}

/* A statement on data_rows prepared with (session, seq, position) bound as
 * its first three parameters, or NULL. */
static sqlite3_stmt *row_query(pt_db *db, const char *sql, int64_t session, int64_t seq,
                               unsigned position)
{
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db->db, sql, -1, &st, NULL) != SQLITE_OK)
    return NULL;
  sqlite3_bind_int64(st, 1, session);
  sqlite3_bind_int64(st, 2, seq);
  sqlite3_bind_int(st, 3, (int)position);
  return st;
}

pt_row_state pt_data_row(pt_db *db, int64_t session, int64_t seq, unsigned position,
                         const char *role, unsigned idx)
{
  sqlite3_stmt *st = row_query(db, "SELECT r.hash IS NOT NULL, EXISTS(SELECT 1 FROM blobs b "
                                   "WHERE b.hash = r.hash) FROM data_rows r WHERE r.session = ? "
                                   "AND r.seq = ? AND r.position = ? AND r.role = ? AND "
                                   "r.idx = ?", session, seq, position);
  pt_row_state out = PT_ROW_NONE;
  if (!st)
    return out;
  sqlite3_bind_text(st, 4, role, -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 5, (int)idx);
  if (sqlite3_step(st) == SQLITE_ROW)
    out = sqlite3_column_int(st, 0) && !sqlite3_column_int(st, 1) ? PT_ROW_BLOB_GONE
                                                                  : PT_ROW_PARTIAL;
  sqlite3_finalize(st);
  return out;
}

int64_t pt_captured_seq(pt_db *db, int64_t session, int64_t seq, unsigned position)
{
  sqlite3_stmt *st = row_query(db, "SELECT captured_seq FROM data_rows WHERE session = ? AND "
                                   "seq = ? AND position = ? AND role = 'readback'",
                               session, seq, position);
  int64_t out = -1;
  if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
    out = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return out;
}

bool pt_session_exists(pt_db *db, int64_t session)
{
  sqlite3_stmt *st;
  bool ok = false;
  if (sqlite3_prepare_v2(db->db, "SELECT 1 FROM sessions WHERE id = ?", -1, &st, NULL) ==
      SQLITE_OK) {
    sqlite3_bind_int64(st, 1, session);
    ok = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
  }
  return ok;
}

size_t pt_plugins(pt_db *db, int64_t session, pt_plugin *out, size_t max)
{
  sqlite3_stmt *st;
  size_t n = 0;
  if (sqlite3_prepare_v2(db->db, "SELECT idx, name, backend FROM plugins WHERE session = ? "
                                 "ORDER BY idx", -1, &st, NULL) != SQLITE_OK)
    return 0;
  sqlite3_bind_int64(st, 1, session);
  while (n < max && sqlite3_step(st) == SQLITE_ROW) {
    pt_plugin *p = &out[n++];
    p->idx = sqlite3_column_int(st, 0);
    copy_text(p->name, sizeof p->name, sqlite3_column_text(st, 1));
    copy_text(p->backend, sizeof p->backend, sqlite3_column_text(st, 2));
  }
  sqlite3_finalize(st);
  return n;
}

/* ---- Notes ---------------------------------------------------------------------- */

static char *dup_col(sqlite3_stmt *s, int col)
{
  const char *t = (const char *)sqlite3_column_text(s, col);
  return strdup(t ? t : "");
}

pt_note *pt_load_notes(pt_db *db, int64_t session, size_t *n)
{
  pt_note *notes = NULL;
  size_t cap = 0;
  *n = 0;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db->db,
                         "SELECT seq, kind, kernel, device, symbol, image, symbolic_id, "
                         "numeric_ids, hex(value), native, text FROM notes WHERE session = ? "
                         "ORDER BY seq, idx", -1, &st, NULL) != SQLITE_OK)
    return NULL;
  sqlite3_bind_int64(st, 1, session);
  while (sqlite3_step(st) == SQLITE_ROW) {
    pt_note *v = pt_grow(notes, &cap, *n, sizeof *v);
    if (!v)
      break;
    notes = v;
    pt_note *note = &notes[(*n)++];
    note->seq = sqlite3_column_int64(st, 0);
    char **cols[] = {&note->kind, &note->kernel, &note->device, &note->symbol, &note->image,
                     &note->symbolic_id, &note->numeric_ids, &note->value_hex};
    for (int i = 0; i < 8; i++)
      *cols[i] = dup_col(st, i + 1);
    note->native = sqlite3_column_int(st, 9);
    note->text = dup_col(st, 10);
  }
  sqlite3_finalize(st);
  return notes;
}

void pt_free_notes(pt_note *notes, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    pt_note *note = &notes[i];
    char *cols[] = {note->kind, note->kernel, note->device, note->symbol, note->image,
                    note->symbolic_id, note->numeric_ids, note->value_hex, note->text};
    for (int k = 0; k < 9; k++)
      free(cols[k]);
  }
  free(notes);
}

const pt_note *pt_notes_at(const pt_note *notes, size_t count, int64_t seq, size_t *n)
{
  size_t lo = 0, hi = count;
  while (lo < hi) { /* the first note with that seq or later */
    size_t mid = (lo + hi) / 2;
    if (notes[mid].seq < seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  size_t k = lo;
  while (k < count && notes[k].seq == seq)
    k++;
  *n = k - lo;
  return *n ? &notes[lo] : NULL;
}

static int hex_digit(char c)
{
  return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                        : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

size_t pt_note_value(const pt_note *note, void *out, size_t size)
{
  const char *h = note->value_hex ? note->value_hex : "";
  size_t len = strlen(h) / 2;
  for (size_t b = 0; b < len; b++) {
    int hi = hex_digit(h[2 * b]), lo = hex_digit(h[2 * b + 1]);
    if (hi < 0 || lo < 0)
      return 0;
    if (b < size)
      ((unsigned char *)out)[b] = (unsigned char)(hi << 4 | lo);
  }
  return len;
}

void *pt_grow(void *v, size_t *cap, size_t n, size_t elem)
{
  if (n < *cap)
    return v;
  size_t nc = *cap ? 2 * *cap : 16;
  void *nv = realloc(v, nc * elem);
  if (nv)
    *cap = nc;
  return nv;
}

/* ---- What the verbs ask besides the calls ------------------------------------------ */

/* A statement with the session bound as ?1, or NULL. */
static sqlite3_stmt *session_query(pt_db *db, const char *sql, int64_t session)
{
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db->db, sql, -1, &st, NULL) != SQLITE_OK)
    return NULL;
  sqlite3_bind_int64(st, 1, session);
  return st;
}

/* The integer the query answers (def when none or NULL). */
static int64_t session_int(pt_db *db, const char *sql, int64_t session, int64_t def)
{
  sqlite3_stmt *st = session_query(db, sql, session);
  int64_t v = def;
  if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

void pt_incomplete_reason(pt_db *db, int64_t session, char *out, size_t n)
{
  sqlite3_stmt *st = session_query(db, "SELECT incomplete_reason FROM sessions WHERE id = ?1",
                                   session);
  *out = 0;
  if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
    snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
}

char *pt_session_env_var(pt_db *db, int64_t session, const char *name)
{
  sqlite3_stmt *st = session_query(db, "SELECT env FROM sessions WHERE id = ?1", session);
  const char *env = st && sqlite3_step(st) == SQLITE_ROW
                        ? (const char *)sqlite3_column_text(st, 0) : NULL;
  pt_json_arena arena = {0};
  char err[128], *value = NULL;
  pt_json *j = env ? pt_json_parse(&arena, env, strlen(env), err, sizeof err) : NULL;
  if (j && j->type == PJ_OBJECT) /* {"NAME": "value", ...} */
    for (uint32_t i = 0; i < j->n && !value; i++) {
      const pt_json *k = j->u.items[2 * i], *v = j->u.items[2 * i + 1];
      if (k->type == PJ_STRING && strcmp(k->u.s, name) == 0 && v->type == PJ_STRING)
        value = strdup(v->u.s);
    }
  pt_json_arena_free(&arena);
  sqlite3_finalize(st);
  return value;
}

bool pt_set_exit_status(pt_db *db, int64_t session, int status, char *err, size_t errn)
{
  /* The write lock first (BEGIN IMMEDIATE): an update that read first
   * would hold a read lock that a recorder's commit into the same file
   * waits for, while it waited for that recorder's write lock. */
  bool began = sqlite3_exec(db->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK;
  sqlite3_stmt *st = began ? session_query(db, "UPDATE sessions SET exit_status = ?2 "
                                               "WHERE id = ?1", session)
                           : NULL;
  bool ok = st != NULL;
  if (st) {
    sqlite3_bind_int(st, 2, status);
    ok = sqlite3_step(st) == SQLITE_DONE;
  }
  sqlite3_finalize(st);
  ok = ok && sqlite3_exec(db->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
  if (!ok)
    snprintf(err, errn, "%s: %s", db->path, sqlite3_errmsg(db->db));
  if (began && !sqlite3_get_autocommit(db->db))
    sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
  return ok;
}

/* Whether the file has version-2 chunks' table (a version-1 file read
 * as it is has not). */
static bool has_call_chunks(pt_db *db)
{
  return session_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'call_chunks' AND "
                         "?1 = ?1", 0, 0) > 0;
}

int64_t pt_count_calls(pt_db *db, int64_t session)
{
  int64_t v2 = has_call_chunks(db) ? session_int(db, "SELECT coalesce(sum(ncalls), 0) FROM "
                                                     "call_chunks WHERE session = ?1", session, 0)
                                   : 0;
  return v2 + session_int(db, "SELECT (SELECT coalesce(sum(json_array_length(calls)), 0) FROM "
                              "chunks WHERE session = ?1) + (SELECT count(*) FROM inflight WHERE "
                              "session = ?1)", session, -1);
}

bool pt_session_damaged(pt_db *db, int64_t session, char *out, size_t n)
{
  /* The count is written when the session ends (NULL while recording; a
   * session still said running may be growing). */
  int64_t counted = session_int(db, "SELECT calls FROM sessions WHERE id = ?1 AND ended IS NOT "
                                    "'running'", session, -1);
  int64_t held = counted >= 0 ? pt_count_calls(db, session) : -1;
  if (held >= 0 && held != counted) {
    snprintf(out, n, "%s is damaged: session %lld counts %lld calls and the file holds %lld of "
             "them (rows of it were lost)", db->path, (long long)session, (long long)counted,
             (long long)held);
    return true;
  }
  /* Its plugins' rows are written with its first chunk. */
  if (held > 0 && session_int(db, "SELECT count(*) FROM plugins WHERE session = ?1", session,
                              -1) == 0) {
    snprintf(out, n, "%s is damaged: session %lld has %lld calls and no row of the plugins that "
             "made them (rows of it were lost)", db->path, (long long)session, (long long)held);
    return true;
  }
  return false;
}

int64_t pt_last_call_end(pt_db *db, int64_t session)
{
  if (has_call_chunks(db)) {
    int64_t end = session_int(db, "SELECT max(c.start_ns + c.dur_ns) FROM call_chunks cc, "
                                  "pitrace_calls(cc.calls, cc.session, cc.id) c WHERE "
                                  "cc.session = ?1 AND cc.id = (SELECT max(id) FROM call_chunks "
                                  "WHERE session = ?1)", session, -1);
    if (end >= 0)
      return end;
  }
  return session_int(db, "SELECT max(json_extract(j.value, '$[5]') + json_extract(j.value, "
                         "'$[6]')) FROM chunks c, json_each(c.calls) j WHERE c.session = ?1 "
                         "AND c.id = (SELECT max(id) FROM chunks WHERE session = ?1)",
                     session, -1);
}

/* An integer column, or def when NULL. */
static int64_t col_int(sqlite3_stmt *st, int col, int64_t def)
{
  return sqlite3_column_type(st, col) == SQLITE_NULL ? def : sqlite3_column_int64(st, col);
}

/* Every row of a query on a session (?1; ?2 bound to arg2 when the query has
 * it) into a new array of `elem`-byte elements that fill() sets from the
 * row; *n of them (NULL when none or memory ran out). */
static void *collect(pt_db *db, const char *sql, int64_t session, int64_t arg2, size_t elem,
                     void (*fill)(sqlite3_stmt *st, void *out), size_t *n)
{
  sqlite3_stmt *st = session_query(db, sql, session);
  char *v = NULL;
  size_t cap = 0;
  *n = 0;
  if (st && sqlite3_bind_parameter_count(st) > 1)
    sqlite3_bind_int64(st, 2, arg2);
  while (st && sqlite3_step(st) == SQLITE_ROW) {
    char *nv = pt_grow(v, &cap, *n, elem);
    if (!nv)
      break;
    v = nv;
    memset(v + *n * elem, 0, elem);
    fill(st, v + (*n)++ * elem);
  }
  sqlite3_finalize(st);
  return v;
}

static void fill_thread(sqlite3_stmt *st, void *out)
{
  pt_thread *t = out;
  t->idx = sqlite3_column_int(st, 0);
  t->tid = sqlite3_column_int64(st, 1);
}

pt_thread *pt_threads(pt_db *db, int64_t session, size_t *n)
{
  return collect(db, "SELECT idx, tid FROM threads WHERE session = ?1 ORDER BY idx", session, 0,
                 sizeof(pt_thread), fill_thread, n);
}

bool pt_each_stack(pt_db *db, int64_t session, void (*fn)(void *ctx, int64_t id,
                                                           const char *frames),
                   void *ctx, char *err, size_t errn)
{
  sqlite3_stmt *st = session_query(db, "SELECT id, frames FROM stacks WHERE session = ?1",
                                   session);
  if (!st) {
    snprintf(err, errn, "%s is damaged: %s", db->path, sqlite3_errmsg(db->db));
    return false;
  }
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *frames = (const char *)sqlite3_column_text(st, 1);
    fn(ctx, sqlite3_column_int64(st, 0), frames ? frames : "");
  }
  sqlite3_finalize(st);
  return true;
}

int64_t pt_max_handle_id(pt_db *db, int64_t session)
{
  return session_int(db, "SELECT max(id) FROM handles WHERE session = ?1", session, 0);
}

static void fill_handle(sqlite3_stmt *st, void *out)
{
  pt_live_handle *h = out;
  h->id = sqlite3_column_int64(st, 0);
  copy_text(h->kind, sizeof h->kind, sqlite3_column_text(st, 1));
  h->created_seq = sqlite3_column_int64(st, 2);
  h->released_seq = col_int(st, 3, -1);
}

pt_live_handle *pt_live_handles(pt_db *db, int64_t session, int64_t seq, size_t *n)
{
  return collect(db, "SELECT id, kind, created_seq, released_seq FROM handles WHERE session = "
                     "?1 AND created = 1 AND (released_seq IS NULL OR released_seq > ?2) ORDER "
                     "BY id DESC", session, seq, sizeof(pt_live_handle), fill_handle, n);
}

static void fill_payload_row(sqlite3_stmt *st, void *out)
{
  pt_payload_row *r = out;
  r->seq = sqlite3_column_int64(st, 0);
  r->position = (unsigned)sqlite3_column_int(st, 1);
  copy_text(r->role, sizeof r->role, sqlite3_column_text(st, 2));
  r->idx = (unsigned)sqlite3_column_int(st, 3);
  r->size = sqlite3_column_int64(st, 4);
  r->stored = sqlite3_column_int64(st, 5);
  r->captured_seq = col_int(st, 6, -1);
}

pt_payload_row *pt_payload_rows(pt_db *db, int64_t session, size_t *n)
{
  return collect(db, "SELECT seq, position, role, idx, size, stored, captured_seq FROM "
                     "data_rows WHERE session = ?1 ORDER BY seq, position, role, idx", session,
                 0, sizeof(pt_payload_row), fill_payload_row, n);
}

static void fill_device_time(sqlite3_stmt *st, void *out)
{
  pt_device_time *d = out;
  d->seq = sqlite3_column_int64(st, 0);
  d->api = sqlite3_column_int64(st, 1);
  d->queue = sqlite3_column_int64(st, 2);
  d->device = sqlite3_column_int64(st, 3);
  d->mapped = sqlite3_column_type(st, 4) != SQLITE_NULL;
  d->start_ns = sqlite3_column_int64(st, 4);
  d->end_ns = sqlite3_column_int64(st, 5);
  d->device_start_ns = sqlite3_column_int64(st, 6);
  d->device_end_ns = sqlite3_column_int64(st, 7);
}

pt_device_time *pt_device_times(pt_db *db, int64_t session, size_t *n)
{
  return collect(db, "SELECT seq, api, queue, device, start_ns, end_ns, device_start_ns, "
                     "device_end_ns FROM device_times WHERE session = ?1 ORDER BY seq", session,
                 0, sizeof(pt_device_time), fill_device_time, n);
}

/* ---- Recorded references --------------------------------------------------------- */

bool pt_ref_parse(const char *s, pt_ref *r)
{
  for (uint8_t k = PI_OBJ_PLATFORM; k < PI_OBJ_KIND_COUNT; k++) {
    const char *name = pi_object_kind_name(k);
    size_t n = strlen(name);
    if (strncmp(s, name, n) != 0 || s[n] != '#' || s[n + 1] < '0' || s[n + 1] > '9')
      continue;
    char *end;
    memset(r, 0, sizeof *r);
    r->kind = PT_REF_OBJECT;
    r->obj = k;
    r->id = strtoll(s + n + 1, &end, 10);
    if (*end == '+' && end[1] >= '0' && end[1] <= '9')
      r->offset = strtoll(end + 1, &end, 10);
    r->len = (size_t)(end - s);
    return true;
  }
  return false;
}

pt_ref pt_ref_of(const pt_json *j)
{
  pt_ref r = {.kind = PT_REF_NULL};
  if (!j || j->type == PJ_NULL)
    return r;
  if (j->type == PJ_STRING && pt_ref_parse(j->u.s, &r))
    return r;
  r.kind = PT_REF_NUMBER;
  r.value = j->type == PJ_STRING ? strtoull(j->u.s, NULL, 0) : (uint64_t)pt_json_int(j, 0);
  if (!r.value && j->type != PJ_STRING)
    r.kind = PT_REF_NULL;
  return r;
}
