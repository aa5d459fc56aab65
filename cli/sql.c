/*
 * sql.c: `pitrace sql FILE [SQL]`: the sqlite3 shell on a session database
 * (read-only) with pitrace's SQLite extension loaded, so that the calls
 * view and the views on it (pi_calls, pi_args, data) read version-2 chunks
 * (docs/schema.md). The extension, libpitrace_sqlite.so, lies in the lib
 * folder beside this program's bin folder: lib/ in the build tree, the
 * install's libdir (PITRACE_INSTALL_LIBDIR) in an installed one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_verbs.h"
#include "pitrace_cli.h"
#include "session.h"

#define EXTENSION "libpitrace_sqlite.so"

static const char usage[] =
    "usage: pitrace sql SESSION.db [SQL]\n"
    "The sqlite3 shell on a session database, read-only, with pitrace's SQLite\n"
    "extension loaded: the views (pi_sessions, pi_calls, pi_args, pi_handles, ...,\n"
    "docs/schema.md) answer for sessions of every schema version, each with the\n"
    "columns and views its version has (a version-1 file has no parent_pid or\n"
    "pi_device_times). With SQL, runs it and exits; without, an interactive shell.\n";

/* The first executable `name` on PATH, into out. */
static bool on_path(const char *name, char *out, size_t n)
{
  const char *path = getenv("PATH");
  if (!path || !*path)
    path = "/usr/bin:/bin";
  for (const char *p = path; *p;) {
    size_t len = strcspn(p, ":");
    snprintf(out, n, "%.*s/%s", (int)len, p, name);
    if (len && access(out, X_OK) == 0)
      return true;
    p += len + (p[len] == ':');
  }
  return false;
}

/* The extension beside this program's tree, into out; false when none. */
static bool extension(char *out, size_t n, char *tried, size_t tn)
{
  char self[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len < 0)
    return false;
  self[len] = 0;
  char *slash = strrchr(self, '/');
  if (slash)
    *slash = 0;
  const char *dirs[] = {"lib", PITRACE_INSTALL_LIBDIR};
  tried[0] = 0;
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
    snprintf(out, n, "%s/../%s/%s", self, dirs[i], EXTENSION);
    struct stat st;
    if (stat(out, &st) == 0 && S_ISREG(st.st_mode))
      return true;
    size_t used = strlen(tried);
    snprintf(tried + used, tn - used, "%s%s", used ? ", " : "", out);
  }
  return false;
}

/* Runs the shell with SQL, its output passed on through a pipe: the
 * shell ignores a failed write (exit 0 on a full disk, > /dev/full),
 * which main sees in ours. Its exit status, or 128 + its signal. */
static int run_shell(const char *shell, const char *const *args)
{
  int fd[2];
  if (pipe2(fd, O_CLOEXEC) != 0) {
    pt_verb_error("sql", "cannot run %s: %s", shell, strerror(errno));
    return 2;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], STDOUT_FILENO);
    execv(shell, (char *const *)args);
    fprintf(stderr, "pitrace sql: cannot run %s: %s\n", shell, strerror(errno));
    _exit(127);
  }
  close(fd[1]);
  /* Past a file size limit (ulimit -f) our write fails, said by main;
   * SIGXFSZ killed us (status 153, nothing said). Not in the shell: its
   * pipe has no limit. */
  signal(SIGXFSZ, SIG_IGN);
  if (pid < 0) {
    close(fd[0]);
    pt_verb_error("sql", "cannot run %s: %s", shell, strerror(errno));
    return 2;
  }
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    if (!ferror(stdout)) /* once failed, drained only: main says so */
      fwrite(buf, 1, (size_t)n, stdout);
  }
  close(fd[0]);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Says, one line each, which sessions of the file lost rows (the views
 * answer with what is left, as show does); whether any did. */
static bool said_damaged(pt_db *db)
{
  char err[512], damage[1024];
  size_t n;
  pt_session_info *s = pt_sessions(db, &n, err, sizeof err);
  bool any = false;
  for (size_t i = 0; s && i < n; i++)
    if (pt_session_damaged(db, s[i].id, damage, sizeof damage)) {
      pt_verb_error("sql", "%s; the views answer with what it holds", damage);
      any = true;
    }
  free(s);
  return any;
}

int pt_sql(int argc, char **argv)
{
  pt_args a;
  int rc = pt_parse(argc, argv, usage, NULL, 1, 2, &a);
  if (rc)
    return rc == 1 ? 0 : 2;
  const char *file = a.pos[0];
  char err[5000];
  pt_db db;
  if (!pt_open(file, false, &db, err, sizeof err)) {
    pt_verb_error("sql", "%s", err);
    return 2;
  }
  char file_opened[sizeof db.path]; /* a record directory's one session file */
  snprintf(file_opened, sizeof file_opened, "%s", db.path);
  file = file_opened;
  bool damaged = said_damaged(&db);
  pt_close(&db);
  char shell[PATH_MAX + 16];
  if (!on_path("sqlite3", shell, sizeof shell)) {
    pt_verb_error("sql", "the sqlite3 shell is not on PATH: install it (Debian: apt-get install "
                  "sqlite3)");
    return 2;
  }
  char ext[PATH_MAX + 64], tried[3 * PATH_MAX];
  if (!extension(ext, sizeof ext, tried, sizeof tried)) {
    pt_verb_error("sql", "pitrace's SQLite extension %s is missing (looked at %s): build the "
                  "pitrace_sqlite target, or install pitrace", EXTENSION, tried);
    return 2;
  }
  char load[PATH_MAX + 80];
  snprintf(load, sizeof load, ".load \"%s\"", ext);
  /* Neither the file nor the SQL may begin with '-': the shell would take
   * it for an option (SQL opening with a "-- comment", a file named
   * -x.db), even after pitrace's "--". */
  char file_arg[sizeof file_opened + 2], *sql = NULL;
  snprintf(file_arg, sizeof file_arg, "%s%s", file[0] == '-' ? "./" : "", file);
  if (a.npos > 1 && a.pos[1][0] == '-' && asprintf(&sql, "\n%s", a.pos[1]) < 0) {
    pt_verb_error("sql", "out of memory");
    return 2;
  }
  /* A busy timeout: a recorder commits into the file every 50 ms while it
   * records, holding readers off for as long (its rollback journal), and
   * the shell would answer "database is locked" at once. */
  const char *args[] = {shell, "-readonly", "-cmd", ".timeout 5000", "-cmd", load, file_arg,
                        sql ? sql : a.npos > 1 ? a.pos[1] : NULL, NULL};
  fflush(NULL);
  if (a.npos > 1) {
    int st = run_shell(shell, args);
    return st ? st : damaged ? 2 : 0; /* as show and stats: the answer holds what is left */
  }
  execv(shell, (char *const *)args); /* interactive: the terminal is the shell's */
  pt_verb_error("sql", "cannot run %s: %s", shell, strerror(errno));
  return 2;
}
