/*
 * session.c: reading recorded sessions (session.h). Calls come from the
 * chunk rows, parsed once each, plus the calls that never returned
 * (inflight), then are sorted by sequence number. Also the runtime's
 * notes (the notes table), which the viewer and replay both read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chunk.h"
#include "session.h"

void (*pt_salvage_hook)(const char *path);

bool pt_open(const char *path, bool writable, pt_db *out, char *err, size_t errn)
{
  memset(out, 0, sizeof *out);
  if (pt_salvage_hook)
    pt_salvage_hook(path);
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(err, errn, "%s: %s", path, strerror(errno));
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    snprintf(err, errn, "%s is a directory, not a session database", path);
    return false;
  }
  if (st.st_size == 0) {
    snprintf(err, errn, "%s is empty: no session was recorded into it", path);
    return false;
  }
  FILE *f = fopen(path, "rb");
  char magic[16] = "";
  if (!f || fread(magic, 1, 16, f) != 16 || memcmp(magic, "SQLite format 3", 16) != 0) {
    if (f)
      fclose(f);
    snprintf(err, errn, "%s is not a pitrace session (not an SQLite database%s)", path,
             st.st_size < 100 ? ": too short" : "");
    return false;
  }
  fclose(f);
  int flags = writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
  sqlite3_stmt *s = NULL;
  int rc;
  for (;;) {
    if (sqlite3_open_v2(path, &out->db, flags, NULL) != SQLITE_OK) {
      snprintf(err, errn, "%s: cannot open: %s", path, sqlite3_errmsg(out->db));
      sqlite3_close(out->db);
      out->db = NULL;
      return false;
    }
    sqlite3_busy_timeout(out->db, 5000);
    pt_sqlite_register(out->db);
    rc = sqlite3_prepare_v2(out->db, "SELECT value FROM pitrace_meta WHERE key = "
                                     "'schema_version'", -1, &s, NULL);
    /* A process killed while it recorded can leave a WAL index that must
     * be rebuilt before anyone reads, which a read-only connection may not
     * do (SQLITE_READONLY_RECOVERY): read through a read-write one then,
     * where the file allows it. */
    if (rc == SQLITE_OK || flags != SQLITE_OPEN_READONLY ||
        sqlite3_extended_errcode(out->db) != SQLITE_READONLY_RECOVERY || access(path, W_OK) != 0)
      break;
    sqlite3_close(out->db);
    out->db = NULL;
    flags = SQLITE_OPEN_READWRITE;
  }
  snprintf(out->path, sizeof out->path, "%s", path);
  if (rc != SQLITE_OK) {
    const char *why = sqlite3_errmsg(out->db);
    if (strstr(why, "no such table"))
      snprintf(err, errn, "%s is an SQLite database but not a pitrace session (no "
               "pitrace_meta table)", path);
    else
      snprintf(err, errn, "%s is damaged or truncated: %s", path, why);
    sqlite3_finalize(s);
    pt_close(out);
    return false;
  }
  rc = sqlite3_step(s);
  int version = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
  sqlite3_finalize(s);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    snprintf(err, errn, "%s is damaged or truncated: %s", path, sqlite3_errmsg(out->db));
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
    snprintf(err, errn, "%s is damaged or truncated: %s", path, sqlite3_errmsg(out->db));
    pt_close(out);
    return false;
  }
  return true;
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
  if (sqlite3_prepare_v2(db->db,
                         "SELECT id, label, command, host, ended, pid, start_unix_ns, "
                         "duration_ns, calls, signal, (SELECT group_concat(p.backend || ':' "
                         "|| p.name, ', ') FROM plugins p WHERE p.session = s.id) FROM "
                         "sessions s ORDER BY id", -1, &s, NULL) != SQLITE_OK) {
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

static bool push(pt_calls *c, size_t *cap, const pt_call *call)
{
  if (c->n == *cap) {
    size_t nc = *cap ? *cap * 2 : 4096;
    pt_call *v = realloc(c->v, nc * sizeof *v);
    if (!v)
      return false;
    c->v = v;
    *cap = nc;
  }
  c->v[c->n++] = *call;
  return true;
}

typedef struct load_ctx {
  pt_calls *out;
  size_t *cap;
} load_ctx;

static bool push_loaded(void *ctx, const pt_call *c)
{
  load_ctx *l = ctx;
  return push(l->out, l->cap, c);
}

bool pt_load(pt_db *db, int64_t session, pt_calls *out, char *err, size_t errn)
{
  memset(out, 0, sizeof *out);
  size_t cap = 0;
  load_ctx ctx = {out, &cap};
  sqlite3_stmt *s;
  /* Version-1 chunks, then version-2 ones (a file upgraded from version 1
   * has both tables; one of version 1 has no call_chunks). */
  for (int version = 1; version <= 2; version++) {
    const char *q = version == 1 ? "SELECT id, calls FROM chunks WHERE session = ? ORDER BY id"
                                 : "SELECT id, calls FROM call_chunks WHERE session = ? ORDER BY id";
    if (sqlite3_prepare_v2(db->db, q, -1, &s, NULL) != SQLITE_OK) {
      if (version == 2 && strstr(sqlite3_errmsg(db->db), "no such table"))
        break;
      snprintf(err, errn, "%s is damaged: %s", db->path, sqlite3_errmsg(db->db));
      pt_calls_free(out);
      return false;
    }
    sqlite3_bind_int64(s, 1, session);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      const void *blob = version == 1 ? (const void *)sqlite3_column_text(s, 1)
                                      : sqlite3_column_blob(s, 1);
      char why[512];
      if (!pt_chunk_decode(&out->arena, version, blob, (size_t)sqlite3_column_bytes(s, 1),
                           push_loaded, &ctx, why, sizeof why)) {
        if (strcmp(why, "out of memory") == 0)
          snprintf(err, errn, "out of memory loading %s", db->path);
        else
          snprintf(err, errn, "%s is damaged: session %lld, chunk %lld: %s", db->path,
                   (long long)session, (long long)sqlite3_column_int64(s, 0), why);
        sqlite3_finalize(s);
        pt_calls_free(out);
        return false;
      }
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
      snprintf(err, errn, "%s is damaged or truncated: %s", db->path, sqlite3_errmsg(db->db));
      pt_calls_free(out);
      return false;
    }
  }
  /* Calls that never returned. */
  if (sqlite3_prepare_v2(db->db, "SELECT seq, thread, plugin, api, start_ns, args, stack, data "
                                 "FROM inflight WHERE session = ?", -1, &s, NULL) == SQLITE_OK) {
    sqlite3_bind_int64(s, 1, session);
    while (sqlite3_step(s) == SQLITE_ROW) {
      pt_call c = {0};
      c.seq = sqlite3_column_int64(s, 0);
      c.thread = (uint32_t)sqlite3_column_int(s, 1);
      c.plugin = (uint32_t)sqlite3_column_int(s, 2);
      c.api = (uint32_t)sqlite3_column_int(s, 3);
      c.start_ns = sqlite3_column_int64(s, 4);
      c.returned = false;
      const char *a = (const char *)sqlite3_column_text(s, 5);
      c.args = a ? pt_json_parse(&out->arena, a, strlen(a), err, errn) : NULL;
      c.stack = sqlite3_column_type(s, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 6);
      const char *d = (const char *)sqlite3_column_text(s, 7);
      c.data = d ? pt_json_parse(&out->arena, d, strlen(d), err, errn) : NULL;
      if (c.args && !push(out, &cap, &c))
        break;
    }
    sqlite3_finalize(s);
  }
  /* Chunks hold calls in the order they returned: sort only when needed. */
  bool sorted = true;
  for (size_t i = 1; i < out->n && sorted; i++)
    sorted = out->v[i - 1].seq < out->v[i].seq;
  if (!sorted)
    qsort(out->v, out->n, sizeof *out->v, cmp_seq);
  err[0] = 0;
  return true;
}

const pt_call *pt_call_by_seq(const pt_calls *calls, int64_t seq)
{
  size_t lo = 0, hi = calls->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (calls->v[mid].seq < seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < calls->n && calls->v[lo].seq == seq ? &calls->v[lo] : NULL;
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
