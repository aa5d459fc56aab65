/*
 * out.c: a new session database made of calls of a recorded one
 * (session_out.h), for `pitrace extract`: the schema (schema.c) and the
 * API description copied from the source file, one session, one thread,
 * the calls in version-2 chunks through the recorder's encoder (chunk.c),
 * their payloads (copied rows, or new ones stored as the recorder stores
 * them: inline up to PT_INLINE_DATA bytes, else once by XXH3-128 hash in
 * blobs) and the handles they create. All in one transaction.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"
#include "session_out.h"

struct pt_out {
  sqlite3 *db;
  int64_t src_session, chunk_id;
  pt_chunk_enc chunk;
  char *data; /* a made-up call's inline payload, as JSON */
  size_t data_cap;
  char err[1024];
};

static bool fail(pt_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(pt_out *o, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->err, sizeof o->err, fmt, ap);
  va_end(ap);
  return false;
}

/* SQLite's message, with the cause it does not name (schema.h). */
static const char *db_error(const pt_out *o, char *why, size_t n)
{
  return pt_sqlite_write_error(o->db, why, n);
}

static bool sql(pt_out *o, const char *text)
{
  char *err = NULL;
  if (sqlite3_exec(o->db, text, NULL, NULL, &err) == SQLITE_OK)
    return true;
  char why[512];
  fail(o, "%s", db_error(o, why, sizeof why));
  sqlite3_free(err);
  return false;
}

/* Runs a statement with bindings: 'i' takes an int64_t, 't' a string, 'b'
 * a blob (pointer, uint64_t size). */
static bool run(pt_out *o, const char *text, const char *types, ...)
{
  sqlite3_stmt *st;
  char why[512];
  if (sqlite3_prepare_v2(o->db, text, -1, &st, NULL) != SQLITE_OK)
    return fail(o, "%s", db_error(o, why, sizeof why));
  va_list ap;
  va_start(ap, types);
  for (int k = 0; types[k]; k++) {
    if (types[k] == 'i') {
      sqlite3_bind_int64(st, k + 1, va_arg(ap, int64_t));
    } else if (types[k] == 't') {
      sqlite3_bind_text(st, k + 1, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
    } else {
      const void *p = va_arg(ap, const void *);
      sqlite3_bind_blob64(st, k + 1, p, va_arg(ap, uint64_t), SQLITE_TRANSIENT);
    }
  }
  va_end(ap);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE || rc == SQLITE_ROW ||
         fail(o, "%s", db_error(o, why, sizeof why));
}

pt_out *pt_out_create(const char *path, const char *src_path, int64_t src_session,
                      const char *label, int64_t ncalls, uint32_t thread, char *err,
                      size_t errn)
{
  pt_out *o = calloc(1, sizeof *o);
  if (!o) {
    snprintf(err, errn, "out of memory");
    return NULL;
  }
  o->src_session = src_session;
  if (sqlite3_open_v2(path, &o->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
    char why[512];
    snprintf(err, errn, "cannot write %s: %s", path,
             o->db ? db_error(o, why, sizeof why) : "out of memory");
    pt_out_free(o);
    return NULL;
  }
  pt_sqlite_register(o->db);
  bool ok =
      sql(o, PT_PAGE_SIZE_SQL "PRAGMA journal_mode=DELETE") && sql(o, shim_schema_sql) &&
      run(o, "ATTACH DATABASE ? AS src", "t", src_path) && sql(o, "BEGIN") &&
      sql(o, "INSERT OR IGNORE INTO pi_api SELECT * FROM src.pi_api;"
             "INSERT OR IGNORE INTO pi_params SELECT * FROM src.pi_params;"
             "INSERT OR IGNORE INTO pi_enums SELECT * FROM src.pi_enums;") &&
      run(o, "INSERT INTO sessions(id, label, pid, command, cwd, host, start_unix_ns, "
             "end_unix_ns, duration_ns, pi_version, env, ended, data_mode, filter, calls, "
             "schema_version) SELECT 1, ?, pid, command, cwd, host, start_unix_ns, "
             "end_unix_ns, duration_ns, pi_version, env, 'exit', data_mode, filter, ?, ? "
             "FROM src.sessions WHERE id = ?", "tiii", label, ncalls,
          (int64_t)PT_SCHEMA_VERSION, src_session) &&
      run(o, "INSERT INTO plugins SELECT 1, idx, name, path, version, backend FROM "
             "src.plugins WHERE session = ?", "i", src_session) &&
      run(o, "INSERT INTO threads VALUES (1, 1, coalesce((SELECT tid FROM src.threads WHERE "
             "session = ? AND idx = ?), 0))", "ii", src_session, (int64_t)thread);
  if (!ok) {
    snprintf(err, errn, "%s", o->err);
    pt_out_free(o);
    return NULL;
  }
  return o;
}

static bool flush_chunk(pt_out *o)
{
  if (!o->chunk.n)
    return true;
  int64_t first = o->chunk.first_seq, last = o->chunk.last_seq, n = (int64_t)o->chunk.n;
  const void *blob;
  size_t size;
  if (!pt_chunk_enc_finish(&o->chunk, &blob, &size, o->err, sizeof o->err))
    return false;
  return run(o, "INSERT INTO call_chunks(session, id, first_seq, last_seq, ncalls, calls) "
                "VALUES (1,?,?,?,?,?)", "iiiib", ++o->chunk_id, first, last, n, blob,
             (uint64_t)size);
}

static const char hexdigits[] = "0123456789ABCDEF";

/* A made-up call's payload: inline JSON into o->data (returned), else a
 * data row and its blob (NULL returned, *ok says whether stored). */
static const char *made_payload(pt_out *o, int64_t seq, const pt_out_payload *p, bool *ok)
{
  *ok = true;
  if (p->size <= PT_INLINE_DATA) {
    size_t need = 64 + strlen(p->role) + 2 * p->size;
    if (need > o->data_cap) {
      char *d = realloc(o->data, need);
      if (!d) {
        *ok = fail(o, "out of memory");
        return NULL;
      }
      o->data = d;
      o->data_cap = need;
    }
    int n = snprintf(o->data, o->data_cap, "[[%u,\"%s\",0,%zu,\"", p->position, p->role,
                     p->size);
    for (size_t k = 0; k < p->size; k++) {
      o->data[n++] = hexdigits[p->bytes[k] >> 4];
      o->data[n++] = hexdigits[p->bytes[k] & 15];
    }
    memcpy(o->data + n, "\"]]", 4);
    return o->data;
  }
  unsigned char key[PT_BLOB_KEY];
  pt_blob_key(p->bytes, p->size, key);
  *ok = run(o, "INSERT OR IGNORE INTO blobs(hash, size, content) VALUES (?,?,?)", "bib", key,
            (uint64_t)PT_BLOB_KEY, (int64_t)p->size, p->bytes, (uint64_t)p->size) &&
        run(o, "INSERT INTO data_rows(session, seq, position, role, idx, size, hash, stored) "
               "VALUES (1,?,?,?,0,?,?,?)", "iitibi", seq, (int64_t)p->position, p->role,
            (int64_t)p->size, key, (uint64_t)PT_BLOB_KEY, (int64_t)p->size);
  return NULL;
}

bool pt_out_call(pt_out *o, const pt_chunk_call *c, int64_t src_seq, const pt_out_payload *made)
{
  pt_chunk_call cc = *c;
  cc.thread = 1;
  if (src_seq >= 0) {
    if (!run(o, "INSERT INTO data_rows SELECT 1, ?, position, role, idx, size, hash, content, "
                "NULL, stored FROM src.data_rows WHERE session = ? AND seq = ? AND role <> "
                "'readback'", "iii", c->seq, o->src_session, src_seq))
      return false;
  } else if (made && made->bytes) {
    bool ok;
    const char *inl = made_payload(o, c->seq, made, &ok);
    if (!ok)
      return false;
    if (inl) {
      cc.data = inl;
      cc.data_len = strlen(inl);
    }
  }
  if (!pt_chunk_enc_add(&o->chunk, &cc))
    return fail(o, "out of memory");
  return o->chunk.n < PT_CHUNK_CALLS || flush_chunk(o);
}

bool pt_out_handle(pt_out *o, uint64_t id, int64_t created_seq)
{
  return run(o, "INSERT OR IGNORE INTO handles SELECT 1, id, kind, ?, created, created_by, "
                "NULL, NULL FROM src.handles WHERE session = ? AND id = ?", "iii", created_seq,
             o->src_session, (int64_t)id);
}

pt_out_status pt_out_finish(pt_out *o, int64_t *seq, unsigned *pos, char role[16])
{
  if (!flush_chunk(o) ||
      !sql(o, "INSERT OR IGNORE INTO blobs SELECT b.hash, b.size, b.content FROM src.blobs b "
              "WHERE b.hash IN (SELECT hash FROM main.data_rows WHERE hash IS NOT NULL)"))
    return PT_OUT_ERROR;
  /* Every payload the new session refers to has its blob. */
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(o->db, "SELECT r.seq, r.position, r.role FROM main.data_rows r WHERE "
                                "r.hash IS NOT NULL AND r.content IS NULL AND NOT EXISTS "
                                "(SELECT 1 FROM main.blobs b WHERE b.hash = r.hash) LIMIT 1",
                         -1, &st, NULL) != SQLITE_OK) {
    char why[512];
    fail(o, "%s", db_error(o, why, sizeof why));
    return PT_OUT_ERROR;
  }
  bool gone = sqlite3_step(st) == SQLITE_ROW;
  if (gone) {
    *seq = sqlite3_column_int64(st, 0);
    *pos = (unsigned)sqlite3_column_int(st, 1);
    const unsigned char *r = sqlite3_column_text(st, 2);
    snprintf(role, 16, "%s", r ? (const char *)r : "?");
  }
  sqlite3_finalize(st);
  if (gone)
    return PT_OUT_BLOB_GONE;
  if (!sql(o, "COMMIT"))
    return PT_OUT_ERROR;
  int rc = sqlite3_close(o->db);
  o->db = NULL;
  if (rc == SQLITE_OK)
    return PT_OUT_OK;
  fail(o, "closing it failed (%s)", sqlite3_errstr(rc));
  return PT_OUT_ERROR;
}

const char *pt_out_error(const pt_out *o) { return o->err; }

void pt_out_free(pt_out *o)
{
  if (!o)
    return;
  if (o->db)
    sqlite3_close(o->db);
  pt_chunk_enc_free(&o->chunk);
  free(o->data);
  free(o);
}
