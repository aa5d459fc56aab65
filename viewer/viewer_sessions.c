/*
 * viewer_sessions.c: `pitrace sessions`: one line per session of a file:
 * id, label, calls, duration, how it ended, backend, device, command.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "pitrace_viewer.h"
#include "viewer_common.h"

static const char usage[] =
    "usage: pitrace sessions DB\n"
    "\n"
    "Lists the sessions of a session database, one line each: id, label, calls,\n"
    "duration, how it ended (teardown; signal N; killed or _exit when the process\n"
    "died without a word, with the calls salvaged from its ring file; not known\n"
    "(killed?) for such a session of an older recorder; incomplete: why recording\n"
    "stopped), the backend and device it used, and the command line.\n";

typedef struct row {
  char id[24], label[64], calls[24], dur[32], ended[128], backend[32], device[128],
      command[1024];
} row;

/* Calls of a session whose count was never written (a killed process). */
static int64_t count_calls(pt_db *db, int64_t session)
{
  sqlite3_stmt *st;
  int64_t n = -1;
  if (sqlite3_prepare_v2(db->db, "SELECT count(*) FROM calls WHERE session = ?1", -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_int64(st, 1, session);
  if (sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

/* How long a session that never wrote its duration (a killed process) ran
 * at least: until the end of the last call it stored. */
static int64_t last_call_end(pt_db *db, int64_t session)
{
  sqlite3_stmt *st;
  int64_t end = -1;
  if (sqlite3_prepare_v2(db->db, "SELECT max(start_ns + dur_ns) FROM calls WHERE session = ?1", -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_int64(st, 1, session);
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
    end = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return end;
}

static void fill_row(pt_db *db, const pt_session_info *i, row *r)
{
  char reason[256];
  snprintf(r->id, sizeof r->id, "%lld", (long long)i->id);
  /* The column holds the label's start. */
  snprintf(r->label, sizeof r->label, "%.*s", (int)sizeof r->label - 1,
           *i->label ? i->label : "-");
  int64_t calls = i->calls >= 0 ? i->calls : count_calls(db, i->id);
  snprintf(r->calls, sizeof r->calls, "%lld", (long long)calls);
  int64_t at_least = i->duration_ns < 0 ? last_call_end(db, i->id) : -1;
  vw_dur(r->dur, i->duration_ns >= 0 ? i->duration_ns : at_least);
  if (at_least >= 0) { /* ">=1.23 ms" */
    memmove(r->dur + 2, r->dur, strlen(r->dur) + 1);
    memcpy(r->dur, ">=", 2);
  }
  vw_incomplete_reason(db, i->id, reason, sizeof reason);
  vw_ended_text(i, reason, r->ended, sizeof r->ended);
  vw_backend_device(db, i->id, r->backend, sizeof r->backend, r->device, sizeof r->device);
  if (!*r->backend)
    snprintf(r->backend, sizeof r->backend, "-");
  if (!*r->device)
    snprintf(r->device, sizeof r->device, "-");
  snprintf(r->command, sizeof r->command, "%s", i->command);
}

#define NCOLS 8

static const char *col(const row *r, int c)
{
  const char *v[NCOLS] = {r->id, r->label, r->calls, r->dur, r->ended, r->backend, r->device,
                          r->command};
  return v[c];
}

static void print_rows(const row *rows, size_t n)
{
  static const row head = {"session", "label", "calls", "duration", "ended", "backend",
                           "device", "command"};
  static const bool right[NCOLS] = {true, false, true, true, false, false, false, false};
  int w[NCOLS];
  for (int c = 0; c < NCOLS; c++) {
    w[c] = (int)strlen(col(&head, c));
    for (size_t i = 0; i < n; i++)
      if ((int)strlen(col(&rows[i], c)) > w[c])
        w[c] = (int)strlen(col(&rows[i], c));
  }
  vw_colors k = vw_colors_for(stdout);
  for (size_t i = 0; i <= n; i++) {
    const row *r = i ? &rows[i - 1] : &head;
    fputs(i ? "" : k.bold, stdout);
    for (int c = 0; c < NCOLS; c++) {
      int width = c == NCOLS - 1 ? 0 : w[c];
      printf(right[c] ? "%*s" : "%-*s", width, col(r, c));
      fputs(c == NCOLS - 1 ? "" : "  ", stdout);
    }
    printf("%s\n", i ? "" : k.off);
  }
}

int pt_sessions_verb(int argc, char **argv)
{
  pt_args a;
  int rc = pt_parse(argc, argv, usage, NULL, 1, 1, &a);
  if (rc)
    return rc == 1 ? 0 : 2;
  pt_db db;
  char err[1024];
  if (!pt_open(a.pos[0], false, &db, err, sizeof err)) {
    pt_verb_error("sessions", "%s", err);
    return 2;
  }
  size_t n = 0;
  pt_session_info *all = pt_sessions(&db, &n, err, sizeof err);
  if (!all) {
    pt_verb_error("sessions", "%s", err);
    pt_close(&db);
    return 2;
  }
  row *rows = calloc(n ? n : 1, sizeof *rows);
  for (size_t i = 0; rows && i < n; i++)
    fill_row(&db, &all[i], &rows[i]);
  if (rows && n)
    print_rows(rows, n);
  else if (rows)
    printf("%s holds no session\n", a.pos[0]);
  free(rows);
  free(all);
  pt_close(&db);
  return 0;
}
