/*
 * pitrace: one command for the recorded sessions, with verbs: record a run,
 * replay it on a device, cut it down, list, show, summarise, compare and
 * export sessions. `pitrace VERB --help` says more about each.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_verbs.h"
#include "pitrace_cli.h"
#include "pitrace_replay.h"
#include "pitrace_viewer.h"
#include "recorder.h"
#include "session.h"

/* Before any verb reads a session: the calls a recording process that is
 * gone (killed, _exit) left in its ring file go into the database (a
 * directory's ring files listed once, for the many sessions of a record
 * directory). */
static void salvage(const char *path)
{
  char err[1200];
  if (writer_salvage_listed(path, err, sizeof err) < 0)
    pt_say_salvage_error(NULL, err);
}

static const struct {
  const char *name;
  int (*fn)(int, char **);
  const char *summary;
} verbs[] = {
    {"record", pt_record, "run a command with recording on; keep its sessions"},
    {"run", pt_run, "run an OpenCL application through pitrace (no recording)"},
    {"replay", pt_replay, "re-issue a recorded session on a device and verify it"},
    {"extract", pt_extract, "cut a session down to what one kernel launch needs"},
    {"sessions", pt_sessions_verb, "list the sessions in a database"},
    {"show", pt_show, "print a session's calls (the SYCL_PI_TRACE=2 format or one line each)"},
    {"stats", pt_stats, "time, count and errors per API; kernels; bytes moved"},
    {"diff", pt_diff, "compare two sessions call by call"},
    {"export", pt_export, "Chrome trace JSON, JSON Lines or CSV"},
    {"report", pt_report, "one self-contained HTML report"},
    {"sql", pt_sql, "the sqlite3 shell on a session, its views answering (read-only)"},
};

/* What a verb printed must all be there: a full disk or a closed file
 * under a redirected standard output would otherwise leave a trace, a
 * diff or a verdict cut short behind an exit status that says all went
 * well. A verb that failed (2) has said why already. A verb that skipped
 * files of a directory fails too, after its output. */
static int output_written(const char *verb, int rc)
{
  if (rc != 2 && pt_files_skipped()) {
    rc = 2;
    fflush(stdout); /* the skipped files' count after what was printed */
    fprintf(stderr, "pitrace %s: %u file%s skipped (said above)\n", verb,
            pt_files_skipped(), pt_files_skipped() == 1 ? "" : "s");
  }
  errno = 0;
  bool flushed = fflush(stdout) == 0;
  int e = pt_stdout_error() ? pt_stdout_error() : flushed ? 0 : errno;
  if (flushed && !ferror(stdout))
    return rc;
  if (rc != 2)
    fprintf(stderr, "pitrace %s: writing the standard output failed%s%s: what it printed is "
            "incomplete\n", verb, e ? ": " : "", e ? strerror(e) : "");
  return 2;
}

static void usage(FILE *f)
{
  fprintf(f, "usage: pitrace VERB [ARGS...]   (pitrace VERB --help for each)\n\n");
  for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
    fprintf(f, "  %-9s %s\n", verbs[i].name, verbs[i].summary);
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  pt_stdout_keep_errors();
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    usage(stdout); /* as a verb's --help: a full disk is no usage printed */
    return output_written(argv[1], 0);
  }
  pt_salvage_hook = salvage;
  /* A file size limit (ulimit -f) fails a write (EFBIG), which the verb
   * says, and its output file's temporary goes; SIGXFSZ killed the verb
   * and left FILE.tmp-XXXXXX behind. Not for the verbs that run another
   * program (record, run, sql), which would inherit the disposition (sql
   * ignores it once its shell is started: run_shell in cli/sql.c). */
  if (strcmp(argv[1], "record") && strcmp(argv[1], "run") && strcmp(argv[1], "sql"))
    signal(SIGXFSZ, SIG_IGN);
  for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
    if (strcmp(argv[1], verbs[i].name) == 0)
      return output_written(verbs[i].name, verbs[i].fn(argc - 1, argv + 1));
  fprintf(stderr, "pitrace: unknown verb '%s' (pitrace --help lists them)\n", argv[1]);
  return 2;
}
