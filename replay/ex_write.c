/*
 * ex_write.c: the repro of `pitrace extract` as a new session database of
 * the recorder's schema (session/schema.c's SQL, the API description
 * copied from the source file): one session, one thread, the calls in
 * chunks renumbered from 1, their payloads (copied rows, or new ones
 * stored as the recorder stores them: inline up to 64 bytes, else once by
 * XXH3-128 hash in blobs) and the handles they create.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ex.h"

#define CHUNK_CALLS 512

typedef struct wr {
  ex *x;
  sqlite3 *db;
  int64_t *newseq; /* orig call index -> seq in the repro */
} wr;

/* ---- JSON ------------------------------------------------------------------------- */

static void json_string(pi_sbuf *b, const char *s)
{
  pi_sbuf_puts(b, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      pi_sbuf_printf(b, "\\%c", c);
    else if (c < 0x20)
      pi_sbuf_printf(b, "\\u%04x", c);
    else
      pi_sbuf_put(b, s, 1);
  }
  pi_sbuf_puts(b, "\"");
}

void ex_json(pi_sbuf *b, const pt_json *j)
{
  if (!j) {
    pi_sbuf_puts(b, "null");
    return;
  }
  switch (j->type) {
  case PJ_NULL: pi_sbuf_puts(b, "null"); return;
  case PJ_BOOL: pi_sbuf_puts(b, j->u.i ? "true" : "false"); return;
  case PJ_INT: pi_sbuf_printf(b, "%lld", (long long)j->u.i); return;
  case PJ_REAL: pi_sbuf_printf(b, "%.17g", j->u.d); return;
  case PJ_STRING: json_string(b, j->u.s); return;
  default:
    pi_sbuf_puts(b, j->type == PJ_ARRAY ? "[" : "{");
    for (uint32_t k = 0; k < j->n; k++) { /* an object's items: key, value, ... */
      pi_sbuf_puts(b, k == 0 ? "" : (j->type == PJ_OBJECT && k % 2) ? ":" : ",");
      ex_json(b, j->u.items[k]);
    }
    pi_sbuf_puts(b, j->type == PJ_ARRAY ? "]" : "}");
  }
}

/* ---- SQL ------------------------------------------------------------------------------ */

static bool sql(wr *w, const char *text)
{
  char *err = NULL;
  if (sqlite3_exec(w->db, text, NULL, NULL, &err) == SQLITE_OK)
    return true;
  ex_fail(w->x, "writing the repro: %s", err ? err : sqlite3_errmsg(w->db));
  sqlite3_free(err);
  return false;
}

/* Runs a statement with integer and text bindings: 'i' takes an int64_t,
 * 't' a string, 'b' a blob (pointer, size). */
static bool run(wr *w, const char *text, const char *types, ...)
{
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(w->db, text, -1, &st, NULL) != SQLITE_OK)
    return ex_fail(w->x, "writing the repro: %s", sqlite3_errmsg(w->db));
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
         ex_fail(w->x, "writing the repro: %s", sqlite3_errmsg(w->db));
}

/* ---- Calls ---------------------------------------------------------------------------------- */

/* A made-up call's payload: inline in the call when small, else a row. */
static bool new_payload(wr *w, const ex_call *c, int64_t seq, pi_sbuf *inl)
{
  if (!c->data)
    return true;
  if (c->data_size <= PT_INLINE_DATA) {
    pi_sbuf_printf(inl, ",null,[[%u,\"%s\",0,%zu,\"", c->data_pos, c->data_role, c->data_size);
    for (size_t k = 0; k < c->data_size; k++)
      pi_sbuf_printf(inl, "%02X", c->data[k]);
    pi_sbuf_puts(inl, "\"]]");
    return true;
  }
  unsigned char key[PT_BLOB_KEY];
  pt_blob_key(c->data, c->data_size, key);
  return run(w, "INSERT OR IGNORE INTO blobs(hash, size, content) VALUES (?,?,?)", "bib", key,
             (uint64_t)PT_BLOB_KEY, (int64_t)c->data_size, c->data, (uint64_t)c->data_size) &&
         run(w, "INSERT INTO data_rows(session, seq, position, role, idx, size, hash, stored) "
                "VALUES (1,?,?,?,0,?,?,?)", "iitibi", seq, (int64_t)c->data_pos, c->data_role,
             (int64_t)c->data_size, key, (uint64_t)PT_BLOB_KEY, (int64_t)c->data_size);
}

/* A recorded call's payload rows, under its new seq. */
static bool copy_payloads(wr *w, const pt_call *o, int64_t seq)
{
  return run(w, "INSERT INTO data_rows SELECT 1, ?, position, role, idx, size, hash, content, "
                "NULL, stored FROM src.data_rows WHERE session = ? AND seq = ? AND role <> "
                "'readback'", "iii", seq, w->x->s->id, o->seq);
}

/* Appends call k of the repro, numbered seq, to the chunk text. */
static bool add_call(wr *w, size_t k, int64_t seq, pi_sbuf *chunk)
{
  const ex_call *c = &w->x->out[k];
  const pt_call *o = c->orig, *l = &w->x->s->calls.v[w->x->launch];
  pi_sbuf_printf(chunk, "%s[%lld,1,%u,%u,%d,%lld,%lld,", chunk->len > 1 ? "," : "",
                 (long long)seq, (o ? o : l)->plugin, c->api, o ? o->result : 0,
                 (long long)(o ? o->start_ns : c->start_ns), (long long)(o ? o->dur_ns : 0));
  if (c->args)
    pi_sbuf_puts(chunk, c->args);
  else
    ex_json(chunk, o->args);
  if (o && o->data) {
    pi_sbuf_puts(chunk, ",null,");
    ex_json(chunk, o->data);
  }
  bool ok = o ? copy_payloads(w, o, seq) : new_payload(w, c, seq, chunk);
  pi_sbuf_puts(chunk, "]");
  return ok;
}

static bool flush_chunk(wr *w, int64_t id, pi_sbuf *chunk)
{
  pi_sbuf_puts(chunk, "]");
  bool ok = run(w, "INSERT INTO chunks(session, id, calls) VALUES (1,?,?)", "it", id, chunk->p);
  pi_sbuf_reset(chunk);
  pi_sbuf_puts(chunk, "[");
  return ok;
}

static bool write_calls(wr *w)
{
  pi_sbuf chunk;
  pi_sbuf_init(&chunk, NULL, 0);
  pi_sbuf_puts(&chunk, "[");
  bool ok = true;
  int64_t id = 0;
  for (size_t k = 0; ok && k < w->x->nout; k++) {
    int64_t seq = (int64_t)k + 1;
    if (w->x->out[k].orig)
      w->newseq[w->x->out[k].orig - w->x->s->calls.v] = seq;
    ok = add_call(w, k, seq, &chunk);
    if (ok && (seq % CHUNK_CALLS == 0 || k + 1 == w->x->nout))
      ok = flush_chunk(w, ++id, &chunk);
  }
  pi_sbuf_free(&chunk);
  return ok;
}

/* The handles the repro's calls create, created by them. */
static bool write_handles(wr *w)
{
  const ex *x = w->x;
  for (size_t id = 1; id < x->ncreator; id++) {
    size_t c = x->creator[id];
    if (!c || !w->newseq[c - 1])
      continue;
    if (!run(w, "INSERT OR IGNORE INTO handles SELECT 1, id, kind, ?, created, created_by, "
                "NULL, NULL FROM src.handles WHERE session = ? AND id = ?", "iii",
             w->newseq[c - 1], x->s->id, (int64_t)id))
      return false;
  }
  return true;
}

static bool write_session(wr *w, int kernel)
{
  const ex *x = w->x;
  const pt_call *l = &x->s->calls.v[x->launch];
  char label[4400];
  snprintf(label, sizeof label, "extract: kernel launch %d (seq %lld) of %.4000s session %lld",
           kernel, (long long)l->seq, x->s->db.path, (long long)x->s->id);
  return run(w, "INSERT INTO sessions(id, label, pid, command, cwd, host, start_unix_ns, "
                "end_unix_ns, duration_ns, pi_version, env, ended, data_mode, filter, calls, "
                "schema_version) SELECT 1, ?, pid, command, cwd, host, start_unix_ns, "
                "end_unix_ns, duration_ns, pi_version, env, 'exit', data_mode, filter, ?, "
                "schema_version FROM src.sessions WHERE id = ?", "tii", label,
             (int64_t)x->nout, x->s->id) &&
         run(w, "INSERT INTO plugins SELECT 1, idx, name, path, version, backend FROM "
                "src.plugins WHERE session = ?", "i", x->s->id) &&
         run(w, "INSERT INTO threads VALUES (1, 1, coalesce((SELECT tid FROM src.threads WHERE "
                "session = ? AND idx = ?), 0))", "ii", x->s->id, (int64_t)l->thread);
}

/* Every payload the repro refers to has its blob: a recording whose blob
 * is gone gives no repro that cannot replay, but the reason. */
static bool blobs_present(wr *w)
{
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(w->db, "SELECT r.seq, r.position, r.role FROM main.data_rows r WHERE "
                                "r.hash IS NOT NULL AND r.content IS NULL AND NOT EXISTS "
                                "(SELECT 1 FROM main.blobs b WHERE b.hash = r.hash) LIMIT 1",
                         -1, &st, NULL) != SQLITE_OK)
    return ex_fail(w->x, "writing the repro: %s", sqlite3_errmsg(w->db));
  bool ok = true;
  if (sqlite3_step(st) == SQLITE_ROW) {
    int64_t seq = sqlite3_column_int64(st, 0);
    const ex_call *c = seq >= 1 && (size_t)seq <= w->x->nout ? &w->x->out[seq - 1] : NULL;
    const char *role = (const char *)sqlite3_column_text(st, 2);
    if (c && c->orig)
      rp_payload_problem(w->x->s, c->orig, (unsigned)sqlite3_column_int(st, 1),
                         role ? role : "?", RP_DATA_MISSING_BLOB, w->x->err, sizeof w->x->err);
    else
      ex_fail(w->x, "%s is damaged: a payload's blob is gone", w->x->s->db.path);
    ok = false;
  }
  sqlite3_finalize(st);
  return ok;
}

static bool write_all(wr *w, int kernel)
{
  return sql(w, "PRAGMA journal_mode=DELETE") && sql(w, shim_schema_sql) &&
         run(w, "ATTACH DATABASE ? AS src", "t", w->x->s->db.path) && sql(w, "BEGIN") &&
         sql(w, "INSERT OR IGNORE INTO pi_api SELECT * FROM src.pi_api;"
                "INSERT OR IGNORE INTO pi_params SELECT * FROM src.pi_params;"
                "INSERT OR IGNORE INTO pi_enums SELECT * FROM src.pi_enums;") &&
         write_session(w, kernel) && write_calls(w) && write_handles(w) &&
         sql(w, "INSERT OR IGNORE INTO blobs SELECT b.hash, b.size, b.content FROM src.blobs b "
                "WHERE b.hash IN (SELECT hash FROM main.data_rows WHERE hash IS NOT NULL)") &&
         blobs_present(w) && sql(w, "COMMIT");
}

bool ex_write(ex *x, const char *path, int kernel)
{
  /* The same file under another name (./s.db, a link) is the session too. */
  struct stat in, out;
  if (stat(x->s->db.path, &in) == 0 && stat(path, &out) == 0 && in.st_dev == out.st_dev &&
      in.st_ino == out.st_ino)
    return ex_fail(x, "-o %s is the session being extracted from: name another file", path);
  /* Written beside the target and renamed over it once complete: a failed
   * extract leaves whatever PATH held. */
  size_t n = strlen(path) + sizeof ".tmp-XXXXXX";
  char *tmp = malloc(n);
  wr w = {.x = x, .newseq = calloc(x->s->calls.n + 1, sizeof *w.newseq)};
  int fd = -1;
  if (tmp) {
    snprintf(tmp, n, "%s.tmp-XXXXXX", path);
    fd = mkstemp(tmp);
  }
  if (!tmp || !w.newseq || fd < 0) {
    bool nomem = !tmp || !w.newseq;
    free(tmp);
    free(w.newseq);
    return nomem ? ex_fail(x, "out of memory")
                 : ex_fail(x, "cannot write beside %s: %s", path, strerror(errno));
  }
  close(fd);
  bool ok = sqlite3_open_v2(tmp, &w.db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK;
  if (!ok)
    ex_fail(x, "cannot write %s: %s", tmp, w.db ? sqlite3_errmsg(w.db) : "out of memory");
  ok = ok && write_all(&w, kernel);
  ok = sqlite3_close(w.db) == SQLITE_OK && ok;
  if (ok && rename(tmp, path) != 0)
    ok = ex_fail(x, "cannot write %s: %s", path, strerror(errno));
  if (!ok)
    unlink(tmp);
  free(tmp);
  free(w.newseq);
  return ok;
}
