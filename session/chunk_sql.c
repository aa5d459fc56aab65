/*
 * chunk_sql.c: pitrace_calls(blob[, session, chunk]), the eponymous
 * table-valued function through which the calls view reads version-2
 * chunks (chunk.h, docs/schema.md): one row per call of the blob, decoded
 * by pt_chunk_each. The session library registers it on its connections
 * (pt_sqlite_register); the same file, built with PT_SQLITE_EXTENSION
 * into libpitrace_sqlite.so (sqlite_ext.c), gives it to the sqlite3 shell.
 * A damaged chunk is an SQL error naming the session and chunk.
 */
#ifdef PT_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#else
#include <sqlite3.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"

enum { COL_SEQ, COL_THREAD, COL_PLUGIN, COL_API, COL_RESULT, COL_START, COL_DUR, COL_ARGS,
       COL_STACK, COL_DATA, COL_BLOB, COL_SESSION, COL_CHUNK };

typedef struct cursor {
  sqlite3_vtab_cursor base;
  pt_chunk_call *rows;
  size_t n, cap, i;
  unsigned char *text; /* the rows' args and data, copied */
  size_t text_len, text_cap;
  pt_chunk_dec dec;    /* kept from chunk to chunk (a join reads many) */
} cursor;

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err)
{
  (void)aux, (void)argc, (void)argv, (void)err;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(seq, thread, plugin, api, result, "
                                    "start_ns, dur_ns, args, stack, data, blob HIDDEN, "
                                    "session HIDDEN, chunk HIDDEN)");
  if (rc != SQLITE_OK)
    return rc;
  *out = sqlite3_malloc(sizeof **out);
  if (!*out)
    return SQLITE_NOMEM;
  memset(*out, 0, sizeof **out);
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *vt)
{
  sqlite3_free(vt);
  return SQLITE_OK;
}

/* The blob argument is required; session and chunk (for messages) are
 * optional. idxNum's bits say which are given, in argv order. */
static int vt_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
  int which[3] = {-1, -1, -1};
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (c->iColumn < COL_BLOB || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
      continue;
    if (!c->usable)
      return SQLITE_CONSTRAINT;
    which[c->iColumn - COL_BLOB] = i;
  }
  if (which[0] < 0) {
    sqlite3_free(vt->zErrMsg);
    vt->zErrMsg = sqlite3_mprintf("pitrace_calls needs a chunk: pitrace_calls(call_chunks.calls)");
    return SQLITE_ERROR;
  }
  int arg = 1;
  info->idxNum = 0;
  for (int k = 0; k < 3; k++)
    if (which[k] >= 0) {
      info->aConstraintUsage[which[k]].argvIndex = arg++;
      info->aConstraintUsage[which[k]].omit = 1;
      info->idxNum |= 1 << k;
    }
  info->estimatedCost = 512;
  info->estimatedRows = 512;
  return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
  (void)vt;
  cursor *c = sqlite3_malloc(sizeof *c);
  if (!c)
    return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
  cursor *c = (cursor *)cur;
  free(c->rows);
  free(c->text);
  pt_chunk_dec_free(&c->dec);
  sqlite3_free(c);
  return SQLITE_OK;
}

/* Keeps one decoded call: its text copied, pointers fixed after. */
static bool keep(void *ctx, const pt_chunk_call *call)
{
  cursor *c = ctx;
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 512;
    pt_chunk_call *r = realloc(c->rows, cap * sizeof *r);
    if (!r)
      return false;
    c->rows = r;
    c->cap = cap;
  }
  size_t need = c->text_len + call->args_len + call->data_len;
  if (need > c->text_cap) {
    size_t cap = c->text_cap ? c->text_cap : 16384;
    while (cap < need)
      cap *= 2;
    unsigned char *t = realloc(c->text, cap);
    if (!t)
      return false;
    c->text = t;
    c->text_cap = cap;
  }
  pt_chunk_call r = *call;
  memcpy(c->text + c->text_len, call->args, call->args_len);
  r.args = (const char *)(uintptr_t)c->text_len; /* an offset until the end */
  c->text_len += call->args_len;
  if (call->data_len)
    memcpy(c->text + c->text_len, call->data, call->data_len);
  r.data = (const char *)(uintptr_t)c->text_len;
  c->text_len += call->data_len;
  c->rows[c->n++] = r;
  return true;
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxs, int argc,
                     sqlite3_value **argv)
{
  (void)idxs;
  cursor *c = (cursor *)cur;
  c->n = c->i = c->text_len = 0;
  if (argc < 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL)
    return SQLITE_OK;
  const void *blob = sqlite3_value_blob(argv[0]);
  size_t n = (size_t)sqlite3_value_bytes(argv[0]);
  char err[256];
  if (!pt_chunk_each_with(&c->dec, blob, n, keep, c, err, sizeof err)) {
    int k = 1;
    long long session = -1, chunk = -1;
    if (idx & 2)
      session = sqlite3_value_int64(argv[k++]);
    if (idx & 4)
      chunk = sqlite3_value_int64(argv[k++]);
    sqlite3_free(cur->pVtab->zErrMsg);
    if (!err[0])
      cur->pVtab->zErrMsg = sqlite3_mprintf("out of memory decoding a chunk of calls");
    else if (session >= 0 && chunk >= 0)
      cur->pVtab->zErrMsg = sqlite3_mprintf("session %lld, chunk %lld is damaged: %s",
                                            session, chunk, err);
    else
      cur->pVtab->zErrMsg = sqlite3_mprintf("a chunk of calls is damaged: %s", err);
    c->n = 0;
    return err[0] ? SQLITE_CORRUPT : SQLITE_NOMEM;
  }
  for (size_t i = 0; i < c->n; i++) {
    c->rows[i].args = (const char *)c->text + (uintptr_t)c->rows[i].args;
    c->rows[i].data = (const char *)c->text + (uintptr_t)c->rows[i].data;
  }
  return SQLITE_OK;
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
  ((cursor *)cur)->i++;
  return SQLITE_OK;
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
  cursor *c = (cursor *)cur;
  return c->i >= c->n;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
  cursor *c = (cursor *)cur;
  const pt_chunk_call *r = &c->rows[c->i];
  switch (col) {
  case COL_SEQ: sqlite3_result_int64(ctx, r->seq); break;
  case COL_THREAD: sqlite3_result_int64(ctx, r->thread); break;
  case COL_PLUGIN: sqlite3_result_int64(ctx, r->plugin); break;
  case COL_API: sqlite3_result_int64(ctx, r->api); break;
  case COL_RESULT: sqlite3_result_int64(ctx, r->result); break;
  case COL_START: sqlite3_result_int64(ctx, r->start_ns); break;
  case COL_DUR: sqlite3_result_int64(ctx, r->dur_ns); break;
  case COL_ARGS:
    sqlite3_result_text64(ctx, r->args, r->args_len, SQLITE_TRANSIENT, SQLITE_UTF8);
    break;
  case COL_STACK:
    if (r->stack >= 0)
      sqlite3_result_int64(ctx, r->stack);
    break;
  case COL_DATA:
    if (r->data_len)
      sqlite3_result_text64(ctx, r->data, r->data_len, SQLITE_TRANSIENT, SQLITE_UTF8);
    break;
  default: break; /* the hidden arguments */
  }
  return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
  *rowid = (sqlite3_int64)((cursor *)cur)->i + 1;
  return SQLITE_OK;
}

static sqlite3_module calls_module = {
    .xConnect = vt_connect,
    .xBestIndex = vt_best_index,
    .xDisconnect = vt_disconnect,
    .xOpen = vt_open,
    .xClose = vt_close,
    .xFilter = vt_filter,
    .xNext = vt_next,
    .xEof = vt_eof,
    .xColumn = vt_column,
    .xRowid = vt_rowid,
};

int pt_sqlite_register(sqlite3 *db)
{
  return sqlite3_create_module(db, "pitrace_calls", &calls_module, NULL);
}
