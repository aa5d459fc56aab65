/*
 * fuzz_session: the session reader (session/session.c, the pitrace_session
 * library every pitrace verb reads sessions with). The input is a session
 * database file: it is written to a scratch file, opened read-only with
 * pt_open, and every session's calls are loaded (pt_load: the chunk rows
 * and each call's JSON arguments) and their payloads read (pt_data: the
 * inline ones of every call, and each parameter's "in" and "out" rows of
 * the first 256 calls through SQL); then the calls are streamed (the
 * cursor, session/cursor.c).
 *
 * Seeds: small real recorded sessions (fuzz/make_seeds.sh). Checks: no
 * crash, no sanitizer report, no leak; a file pt_open refuses says why;
 * the calls come in sequence order, and the cursor yields as many calls
 * as pt_load holds, in the same order when no seq repeats.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_call(pt_db *db, int64_t session, const pt_call *c, bool sql)
{
  size_t n, full;
  if (c->data && c->data->type == PJ_ARRAY)
    for (uint32_t i = 0; i < c->data->n; i++) {
      pt_json *d = c->data->u.items[i], *role = pt_json_at(d, 1);
      if (!role || role->type != PJ_STRING)
        continue;
      free(pt_data(db, session, c, (unsigned)pt_json_int(pt_json_at(d, 0), 0), role->u.s,
                   (unsigned)pt_json_int(pt_json_at(d, 2), 0), &n, &full));
    }
  uint32_t nargs = c->args && c->args->type == PJ_ARRAY ? c->args->n : 0;
  for (uint32_t p = 0; sql && p < nargs && p < 16; p++) {
    free(pt_data(db, session, c, p, "in", 0, &n, &full));
    free(pt_data(db, session, c, p, "out", 0, &n, &full));
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char path[512];
  if (!path[0])
    snprintf(path, sizeof path, "%s/session.db", fuzz_scratch());
  fuzz_remove_db(path);
  fuzz_write_file(path, data, size);
  pt_db db;
  char err[512] = "";
  if (!pt_open(path, false, &db, err, sizeof err)) {
    if (!err[0])
      abort();
    fuzz_remove_db(path);
    return 0;
  }
  size_t ns = 0;
  pt_session_info *s = pt_sessions(&db, &ns, err, sizeof err);
  for (size_t i = 0; s && i < ns; i++) {
    pt_calls calls;
    if (!pt_load(&db, s[i].id, &calls, err, sizeof err))
      continue;
    for (size_t k = 0; k < calls.n; k++) {
      if (k > 0 && calls.v[k].seq < calls.v[k - 1].seq)
        abort();
      read_call(&db, s[i].id, &calls.v[k], k < 256);
    }
    bool unique = true; /* seqs that repeat (a damaged file) come in some order */
    for (size_t k = 1; k < calls.n; k++)
      unique &= calls.v[k].seq != calls.v[k - 1].seq;
    pt_cursor *cur = pt_cursor_open(&db, s[i].id, err, sizeof err);
    size_t k = 0;
    for (const pt_call *c; cur && (c = pt_cursor_next(cur, err, sizeof err)); k++)
      if (k >= calls.n || (unique && c->seq != calls.v[k].seq))
        abort();
    if (cur && !err[0] && k != calls.n)
      abort();
    pt_cursor_close(cur);
    pt_calls_free(&calls);
  }
  free(s);
  (void)pt_default_session(&db);
  pt_close(&db);
  fuzz_remove_db(path);
  return 0;
}
