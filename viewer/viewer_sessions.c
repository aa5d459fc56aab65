/*
 * viewer_sessions.c: `pitrace sessions`: one line per session of a file
 * (or of every file of a record directory): id, the session it was forked
 * from, label, calls, duration, how it ended, backend, device, command.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "pitrace_viewer.h"
#include "viewer_common.h"

static const char usage[] =
    "usage: pitrace sessions DB|DIR\n"
    "\n"
    "Lists the sessions of a session database, one line each: id, label, calls,\n"
    "duration, how it ended (teardown; signal N; killed or _exit when the process\n"
    "died without a word, with the calls salvaged from its ring file; killed by\n"
    "signal N when the signal is known; exec when the process went on as another\n"
    "program; recording (pid N) while process N still records it; killed, not\n"
    "salvaged when its process is gone and its ring file could not be salvaged (a\n"
    "full disk, a file you may not write: the verbs say why); not known (killed?)\n"
    "for such a session of an older recorder; incomplete: why recording stopped;\n"
    "\", exit status N\" after it when pitrace record saw the process end),\n"
    "the backend and device it used, and the command line. Given a directory\n"
    "(pitrace record -o DIR), the sessions of each of its session files (*.db), in\n"
    "the order they started, each with its file. A session of a process forked\n"
    "from a recording one (Python's multiprocessing, a fork server) says whose:\n"
    "\"forked from\" names its parent's session in the same file, or its parent's\n"
    "pid when the child recorded into a file of its own.\n";

typedef struct row {
  char file[256], id[24], parent[48], label[64], calls[24], dur[32], ended[128], backend[32],
      device[128], command[1024];
  int64_t start; /* unix ns: a directory's rows are ordered by it */
} row;

/* A cell cut short to its column's bytes: not in the middle of a UTF-8
 * character (a label of "é"s cut at 63 bytes printed half a character). */
static void whole_characters(char *s)
{
  size_t n = strlen(s), i = n;
  while (i > 0 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
    i--; /* continuation bytes at the end */
  if (i == 0 || (unsigned char)s[i - 1] < 0xc0)
    return; /* ends in ASCII (or stray bytes: left as they are) */
  unsigned char lead = (unsigned char)s[i - 1];
  size_t want = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  if (n - (i - 1) < want)
    s[i - 1] = 0;
}

/* A session's row; false (err says why) when its first chunks, which name
 * its backend and device, cannot be read: those say "damaged". */
static bool fill_row(pt_db *db, const pt_session_info *i, row *r, char *err, size_t errn)
{
  char reason[256];
  r->start = i->start_unix_ns;
  snprintf(r->id, sizeof r->id, "%lld", (long long)i->id);
  if (i->parent_session > 0)
    snprintf(r->parent, sizeof r->parent, "session %lld", (long long)i->parent_session);
  else if (i->parent_pid > 0)
    snprintf(r->parent, sizeof r->parent, "pid %lld", (long long)i->parent_pid);
  /* The column holds the label's start. */
  snprintf(r->label, sizeof r->label, "%.*s", (int)sizeof r->label - 1,
           *i->label ? i->label : "-");
  char damage[1024];
  bool damaged = pt_session_damaged(db, i->id, damage, sizeof damage);
  int64_t calls = damaged || i->calls < 0 ? pt_count_calls(db, i->id) : i->calls;
  snprintf(r->calls, sizeof r->calls, "%lld", (long long)calls);
  int64_t at_least = i->duration_ns < 0 ? pt_last_call_end(db, i->id) : -1;
  vw_dur(r->dur, i->duration_ns >= 0 ? i->duration_ns : at_least);
  /* A process that ended without a word ran on past its last call
   * stored: its salvager ended the session there. */
  bool lower = strcmp(i->ended, "killed") == 0 || strcmp(i->ended, "_exit") == 0;
  if (at_least >= 0 || (lower && i->duration_ns >= 0)) { /* ">=1.23 ms" */
    memmove(r->dur + 2, r->dur, strlen(r->dur) + 1);
    memcpy(r->dur, ">=", 2);
  }
  pt_incomplete_reason(db, i->id, reason, sizeof reason);
  vw_ended_text(i, reason, r->ended, sizeof r->ended);
  if (damaged) { /* why: said after the table */
    size_t at = strlen(r->ended);
    snprintf(r->ended + at, sizeof r->ended - at, "; damaged");
  }
  bool ok = vw_backend_device(db, i->id, r->backend, sizeof r->backend, r->device,
                              sizeof r->device, err, errn);
  if (!ok)
    snprintf(r->backend, sizeof r->backend, "damaged");
  if (!*r->backend)
    snprintf(r->backend, sizeof r->backend, "-");
  if (!*r->device)
    snprintf(r->device, sizeof r->device, "-");
  snprintf(r->command, sizeof r->command, "%s", i->command);
  /* A row per line: a command's newlines (python3 -c "...") and tabs, a
   * label's, as spaces. */
  char *cells[] = {r->label, r->ended, r->device, r->command};
  for (size_t c = 0; c < sizeof cells / sizeof *cells; c++)
    whole_characters(pt_one_line(cells[c]));
  if (ok && damaged) /* said after the table, as a damaged chunk is */
    snprintf(err, errn, "%s", damage);
  return ok && !damaged;
}

enum { COL_FILE, COL_PARENT = 2, NCOLS = 10 };

static const char *col(const row *r, int c)
{
  const char *v[NCOLS] = {r->file,  r->id,    r->parent,  r->label,  r->calls,
                          r->dur,   r->ended, r->backend, r->device, r->command};
  return v[c];
}

/* The rows as a table; the file column only for a directory's, the
 * parent's only when a session has one. */
static void print_rows(const row *rows, size_t n, bool files)
{
  static const row head = {"file",     "session", "forked from", "label",  "calls",
                           "duration", "ended",   "backend",     "device", "command", 0};
  static const bool right[NCOLS] = {false, true,  false, false, true,
                                    true,  false, false, false, false};
  bool shown[NCOLS];
  for (int c = 0; c < NCOLS; c++)
    shown[c] = true;
  shown[COL_FILE] = files;
  shown[COL_PARENT] = false;
  for (size_t i = 0; i < n; i++)
    shown[COL_PARENT] |= rows[i].parent[0] != 0;
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
      if (!shown[c])
        continue;
      int width = c == NCOLS - 1 ? 0 : w[c];
      const char *v = col(r, c);
      printf(right[c] ? "%*s" : "%-*s", width, *v ? v : "-"); /* no parent */
      fputs(c == NCOLS - 1 ? "" : "  ", stdout);
    }
    printf("%s\n", i ? "" : k.off);
  }
}

/* The rows of every session of the file `path` appended to *rows (each
 * with `file` in its first column when not NULL). False after a one-line
 * error. What makes a session's row say "damaged" goes into `damage`
 * (the first such only), to be said after the table. */
static bool add_rows(const char *path, const char *file, row **rows, size_t *n, char *damage,
                     size_t damagen)
{
  pt_db db;
  char err[1024];
  if (!pt_open(path, false, &db, err, sizeof err)) {
    if (file) /* one of a directory's: the others are listed */
      pt_skip_file("sessions", err);
    else
      pt_verb_error("sessions", "%s", err);
    return file != NULL;
  }
  size_t ns = 0;
  pt_session_info *all = pt_sessions(&db, &ns, err, sizeof err);
  row *v = all ? realloc(*rows, (*n + ns + 1) * sizeof *v) : NULL;
  if (!all && file) {
    pt_skip_file("sessions", err);
    pt_close(&db);
    return true;
  }
  if (!v)
    pt_verb_error("sessions", "%s", all ? "out of memory" : err);
  for (size_t i = 0; v && i < ns; i++) {
    row *r = &v[(*n)++];
    memset(r, 0, sizeof *r);
    char why[1024];
    if (!fill_row(&db, &all[i], r, why, sizeof why) && !*damage)
      snprintf(damage, damagen, "%s", why);
    snprintf(r->file, sizeof r->file, "%s", file ? file : "");
  }
  if (v)
    *rows = v;
  free(all);
  pt_close(&db);
  return v != NULL;
}

static int by_start(const void *a, const void *b)
{
  const row *x = a, *y = b;
  return (x->start > y->start) - (x->start < y->start);
}

int pt_sessions_verb(int argc, char **argv)
{
  pt_args a;
  int rc = pt_parse(argc, argv, usage, NULL, 1, 1, &a);
  if (rc)
    return rc == 1 ? 0 : 2;
  const char *path = a.pos[0];
  row *rows = NULL;
  size_t n = 0;
  char damage[1024] = "";
  bool ok = true, dir = vw_is_dir(path);
  if (dir) {
    char **names;
    size_t nf = 0;
    ok = vw_list_dir("sessions", path, &names, &nf);
    for (size_t i = 0; i < nf; i++) {
      const char *slash = strrchr(names[i], '/');
      ok = ok && add_rows(names[i], slash ? slash + 1 : names[i], &rows, &n, damage, sizeof damage);
      free(names[i]);
    }
    free(names); /* NULL when the listing failed */
    if (ok && nf && pt_files_skipped() == nf) {
      pt_verb_error("sessions", "%s holds no session file it can read (%zu skipped)", path, nf);
      ok = false;
    }
    if (ok && n)
      qsort(rows, n, sizeof *rows, by_start);
  } else {
    ok = add_rows(path, NULL, &rows, &n, damage, sizeof damage);
  }
  if (ok && n)
    print_rows(rows, n, dir);
  else if (ok && !dir)
    printf("%s holds no session\n", path);
  if (ok && *damage) { /* listed as far as it could be: then why not all */
    fflush(stdout);
    pt_verb_error("sessions", "%s", damage);
    ok = false;
  }
  free(rows);
  return ok ? 0 : 2;
}
