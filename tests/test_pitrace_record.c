/*
 * test_pitrace_record.c: `pitrace record` on real PoCL runs. It passes the
 * command's exit status through (128 + the signal when one ended it);
 * --keep on-failure keeps nothing after a success, the sessions of the
 * failing processes after a failure, and every session when the failure
 * came from a process without PI calls; a crash keeps its session and the
 * summary shows the last calls, a call that never returned, and the calls
 * that failed; each process records its own complete session, also when
 * two runs share a directory; sessions are private (0600 in a 0700
 * directory); SIGINT and SIGTERM reach the command; usage errors are one
 * line and exit 2.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <pty.h>
#include <errno.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <time.h>

#include "testutil.h"

#define BIN PITRACE_BIN_DIR
#define PITRACE BIN "/pitrace"
#define POCL "OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd"
/* Under AddressSanitizer a SIGSEGV would become ASan's report and exit 1. */
#define NO_ASAN_SEGV "ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_abort=0"

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  cr_assert_geq(vasprintf(&s, fmt, ap), 0);
  va_end(ap);
  return s;
}

/* Runs `pitrace record ARGS...` with the environment additions `env`. */
static int record(const char *const *args, const char *const *env, char **out)
{
  const char *argv[32] = {PITRACE, "record"};
  size_t n = 2;
  for (; args[n - 2]; n++) {
    cr_assert_lt(n, 31);
    argv[n] = args[n - 2];
  }
  argv[n] = NULL;
  return tu_run(argv, env, out);
}

/* The session files (pitrace-*.db) in `dir`, as full paths, sorted. */
static size_t session_files(const char *dir, char ***paths)
{
  *paths = NULL;
  size_t n = 0;
  DIR *d = opendir(dir);
  if (!d)
    return 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (strncmp(e->d_name, "pitrace-", 8) || len < 4 || strcmp(e->d_name + len - 3, ".db"))
      continue;
    *paths = realloc(*paths, (n + 1) * sizeof **paths);
    (*paths)[n++] = str_printf("%s/%s", dir, e->d_name);
  }
  closedir(d);
  return n;
}

/* Every file in `dir` (any name). */
static size_t all_files(const char *dir)
{
  size_t n = 0;
  DIR *d = opendir(dir);
  if (!d)
    return 0;
  struct dirent *e;
  while ((e = readdir(d)))
    n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  return n;
}

static bool exists(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0;
}

/* A new directory for sessions that does not exist yet. */
static char *fresh_dir(void) { return tu_temp_path(".sessions"); }

/* Removes a test's directory and the files in it (not on a failed
 * assertion: those stay for a look). */
static void remove_dir(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
      char *p = str_printf("%s/%s", dir, e->d_name);
      unlink(p);
      free(p);
    }
  closedir(d);
  rmdir(dir);
}

/* ---- Usage --------------------------------------------------------------------- */

Test(pitrace_record, usage_errors_are_one_line_and_exit_2)
{
  char *file = tu_write_temp(".txt", "not a directory\n");
  char *dir = fresh_dir();
  const char *const cases[][8] = {
      {NULL},
      {"-o", dir, NULL},
      {"-o", dir, "--", NULL},
      {"--keep", "sometimes", "--", "true", NULL},
      {"--keep=", "--", "true", NULL},
      {"--data", "most", "--", "true", NULL},
      {"--bogus", "--", "true", NULL},
      {"--backtrace=1", "--", "true", NULL},
      {"-o", NULL},
      {"--label", NULL},
      {"-o", file, "--", "true", NULL},
      {"-o", "", "--", "true", NULL},
      /* "--" is not a value: a directory named "--" was made */
      {"-o", "--", "true", NULL},
      {"--label", "--", "true", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *out;
    int rc = record(cases[i], NULL, &out);
    cr_assert_eq(rc, 2, "case %zu: exit %d: %s", i, rc, out);
    cr_assert_eq(strncmp(out, "pitrace record: ", 16), 0, "case %zu: %s", i, out);
    cr_assert_eq(tu_count(out, "\n"), 1, "case %zu: not one line: %s", i, out);
    free(out);
  }
  cr_assert(!exists(dir), "a usage error created %s", dir);
  unlink(file);
}

Test(pitrace_record, help_prints_the_usage_and_exits_0)
{
  char *out;
  const char *args[] = {"--help", NULL};
  cr_assert_eq(record(args, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "usage: pitrace record [OPTIONS] [--] CMD [ARGS...]"), "%s", out);
  cr_assert(strstr(out, "--keep always|on-failure"), "%s", out);
}

Test(pitrace_record, a_command_that_cannot_run_exits_127_or_126)
{
  char *dir = fresh_dir(), *out;
  const char *missing[] = {"-o", dir, "--", "/nonexistent/program", NULL};
  cr_assert_eq(record(missing, NULL, &out), 127, "%s", out);
  cr_assert(strstr(out, "pitrace record: cannot run /nonexistent/program: No such file"), "%s",
            out);
  cr_assert_eq(tu_count(out, "\n"), 1, "%s", out);
  cr_assert(!exists(dir), "the empty sessions directory %s was left", dir);
  char *text = tu_write_temp(".txt", "not a program\n"); /* not executable */
  const char *noexec[] = {"-o", dir, "--", text, NULL};
  cr_assert_eq(record(noexec, NULL, &out), 126, "%s", out);
  cr_assert(strstr(out, "Permission denied"), "%s", out);
  unlink(text);
  /* A script whose #! interpreter is missing: ENOENT, of the interpreter,
   * not of the script, which is there ("cannot run S: No such file or
   * directory" named the wrong file). */
  char *script = tu_write_temp(".sh", "#! /nonexistent/interp -x\necho hi\n");
  cr_assert_eq(chmod(script, 0700), 0);
  const char *noint[] = {"-o", dir, "--", script, NULL};
  cr_assert_eq(record(noint, NULL, &out), 127, "%s", out);
  char *said = str_printf("pitrace record: cannot run %s: its interpreter /nonexistent/interp: "
                          "No such file or directory\n", script);
  cr_assert_str_eq(out, said);
  cr_assert(!exists(dir), "the empty sessions directory %s was left", dir);
  unlink(script);
}

Test(pitrace_record, the_exit_status_passes_through)
{
  char *dir = fresh_dir(), *out;
  const char *args[] = {"-o", dir, "--", "/bin/sh", "-c", "exit 7", NULL};
  cr_assert_eq(record(args, NULL, &out), 7, "%s", out);
  cr_assert(strstr(out, "exited with status 7"), "%s", out);
  cr_assert(strstr(out, "no session was recorded"), "%s", out);
  cr_assert(!exists(dir));
  /* A script of several lines (python3 -c, sh -c) is named on one line,
   * quoted so that it can be pasted back: it broke the line before. */
  const char *script[] = {"-o", dir, "--", "/bin/sh", "-c", "true\nexit 7 # it's", NULL};
  cr_assert_eq(record(script, NULL, &out), 7, "%s", out);
  cr_assert(strstr(out, "pitrace record: /bin/sh -c $'true\\nexit 7 # it\\'s' exited with "
                        "status 7\n"), "%s", out);
}

/* ---- Keeping ------------------------------------------------------------------ */

Test(pitrace_record, a_success_keeps_nothing_with_keep_on_failure)
{
  char *dir = fresh_dir(), *out;
  const char *args[] = {"--keep", "on-failure", "-o", dir, "--", BIN "/vadd", NULL};
  const char *env[] = {POCL, NULL};
  cr_assert_eq(record(args, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "result verified"), "%s", out);
  cr_assert(strstr(out, "its 1 session was not kept"), "%s", out);
  cr_assert(!exists(dir), "%s is left: %zu files", dir, all_files(dir));
}

Test(pitrace_record, a_success_leaves_a_directory_it_did_not_make_and_others_files)
{
  char *dir = fresh_dir(), *out;
  cr_assert_eq(mkdir(dir, 0755), 0);
  /* A session of another run, and a file that is none. */
  char *old = str_printf("%s/pitrace-1-1.db", dir), *other = str_printf("%s/notes.txt", dir);
  const char *first[] = {"-o", dir, "--", BIN "/vadd", NULL};
  const char *env[] = {POCL, NULL};
  cr_assert_eq(record(first, env, &out), 0, "%s", out);
  char **files;
  cr_assert_eq(session_files(dir, &files), 1);
  cr_assert_eq(rename(files[0], old), 0);
  FILE *f = fopen(other, "w");
  fputs("x\n", f);
  fclose(f);
  const char *args[] = {"--keep=on-failure", "-o", dir, "--", BIN "/vadd", NULL};
  cr_assert_eq(record(args, env, &out), 0, "%s", out);
  cr_assert(exists(dir));
  cr_assert_eq(session_files(dir, &files), 1, "%s", out);
  cr_assert_str_eq(files[0], old);
  cr_assert(exists(other));
  cr_assert_eq(all_files(dir), 2);
  remove_dir(dir);
}

Test(pitrace_record, keep_always_keeps_a_private_complete_session)
{
  char *dir = fresh_dir(), *out;
  const char *args[] = {"-o", dir, "--label", "nightly 12", "--data", "meta", "--backtrace",
                        "--", BIN "/vadd", NULL};
  const char *env[] = {POCL, "SYCL_PI_RECORD_DATA=all", NULL};
  cr_assert_eq(record(args, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "result verified"), "%s", out);
  cr_assert(strstr(out, "pitrace record: 1 session in "), "%s", out);
  struct stat st;
  cr_assert_eq(stat(dir, &st), 0);
  cr_assert_eq(st.st_mode & 07777, 0700, "directory mode %o", st.st_mode & 07777);
  char **files;
  cr_assert_eq(session_files(dir, &files), 1, "%s", out);
  cr_assert_eq(all_files(dir), 1, "files beside the session (WAL?)");
  cr_assert_eq(stat(files[0], &st), 0);
  cr_assert_eq(st.st_mode & 07777, 0600, "session mode %o", st.st_mode & 07777);
  cr_assert_str_eq(tu_db_lines(files[0], "SELECT ended || '|' || label || '|' || data_mode || '|' "
                                      "|| exit_status FROM sessions"),
                   "teardown|nightly 12|meta|0\n");
  cr_assert_gt(tu_db_int(files[0], "SELECT calls FROM sessions"), 30);
  cr_assert_gt(tu_db_int(files[0], "SELECT count(*) FROM stacks"), 0);
  cr_assert_str_eq(tu_db_lines(files[0], "PRAGMA integrity_check"), "ok\n");
  remove_dir(dir);
}

Test(pitrace_record, the_default_directory_is_pitrace_sessions_here)
{
  char *cwd = fresh_dir(), *out;
  cr_assert_eq(mkdir(cwd, 0755), 0);
  char *script = str_printf("cd '%s' && exec '%s' record -- '%s'", cwd, PITRACE, BIN "/vadd");
  const char *argv[] = {"/bin/sh", "-c", script, NULL};
  const char *env[] = {POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  char *dir = str_printf("%s/pitrace-sessions", cwd), **files;
  cr_assert_eq(session_files(dir, &files), 1, "%s", out);
  remove_dir(dir);
  rmdir(cwd);
}

Test(pitrace_record, a_failure_without_pi_calls_keeps_every_session)
{
  char *dir = fresh_dir(), *out;
  const char *args[] = {"--keep", "on-failure", "-o", dir, "--",
                        "/bin/sh", "-c", BIN "/vadd; exit 3", NULL};
  const char *env[] = {POCL, NULL};
  cr_assert_eq(record(args, env, &out), 3, "%s", out);
  cr_assert(strstr(out, "result verified"), "%s", out);
  char **files;
  cr_assert_eq(session_files(dir, &files), 1, "%s", out);
  cr_assert_str_eq(tu_db_lines(files[0], "SELECT ended FROM sessions"), "teardown\n");
  cr_assert(strstr(tu_db_lines(files[0], "SELECT command FROM sessions"), "/vadd"));
  /* vadd's status went to the shell, not to pitrace: none is stored. */
  cr_assert_eq(tu_db_int(files[0], "SELECT exit_status FROM sessions"), -2);
  /* The summary: how the command ended, where the session is, its end. */
  cr_assert(strstr(out, "exited with status 3"), "%s", out);
  cr_assert(strstr(out, "kept 1 session in "), "%s", out);
  cr_assert(strstr(out, files[0]), "%s", out);
  cr_assert(strstr(out, "last calls:"), "%s", out);
  cr_assert(strstr(out, "piTearDown"), "%s", out);
  cr_assert(strstr(out, "pitrace show FILE"), "%s", out);
  remove_dir(dir);
}

Test(pitrace_record, only_the_sessions_of_failing_processes_are_kept)
{
  /* Three processes orphaned to pitrace (so it reaps them and sees their
   * statuses): two succeed, one exits 4. */
  char *dir = fresh_dir(), *out;
  char *script = str_printf("('%s' 0 300 &); ('%s' 4 300 &); ('%s' >/dev/null &); exit 1",
                            BIN "/recproc_exit", BIN "/recproc_exit", BIN "/vadd");
  const char *args[] = {"--keep", "on-failure", "-o", dir, "--", "/bin/sh", "-c", script, NULL};
  const char *env[] = {POCL, NULL};
  cr_assert_eq(record(args, env, &out), 1, "%s", out);
  cr_assert_eq(tu_count(out, "recproc_exit: ready"), 2, "%s", out);
  char **files;
  cr_assert_eq(session_files(dir, &files), 1, "%s", out);
  cr_assert_str_eq(tu_db_lines(files[0], "SELECT exit_status || ' ' || ended FROM sessions"),
                   "4 teardown\n");
  cr_assert(strstr(tu_db_lines(files[0], "SELECT command FROM sessions"), "recproc_exit 4 300"));
  cr_assert(strstr(out, "kept 1 session in "), "%s", out);
  cr_assert(strstr(out, "removed the 2 sessions of processes that succeeded"), "%s", out);
  cr_assert(strstr(out, "exited with status 4"), "%s", out);
  /* The call that failed is named with its result. */
  cr_assert(strstr(out, "failed calls:"), "%s", out);
  cr_assert(strstr(out, "piDeviceGetInfo"), "%s", out);
  cr_assert(strstr(out, "PI_ERROR_INVALID_VALUE"), "%s", out);
  remove_dir(dir);
}

/* A command that succeeds, leaving processes running: one that then fails
 * was dropped with the rest (the command's status says nothing of it). It
 * is kept, alone, and the summary says why. */
Test(pitrace_record, a_process_left_running_that_fails_after_a_success_is_kept)
{
  char *dir = fresh_dir(), *out;
  char *script = str_printf("('%s' 4 2000 &); ('%s' 0 2000 &); '%s' >/dev/null; exit 0",
                            BIN "/recproc_exit", BIN "/recproc_exit", BIN "/vadd");
  const char *args[] = {"--keep", "on-failure", "-o", dir, "--", "/bin/sh", "-c", script, NULL};
  const char *env[] = {POCL, NULL};
  cr_assert_eq(record(args, env, &out), 0, "%s", out);
  char **files;
  cr_assert_eq(session_files(dir, &files), 1, "%s", out);
  cr_assert_str_eq(tu_db_lines(files[0], "SELECT exit_status || ' ' || ended FROM sessions"),
                   "4 teardown\n");
  cr_assert(strstr(out, "exited with status 0, but 1 process it left running failed after it"),
            "%s", out);
  cr_assert(strstr(out, "kept 1 session in "), "%s", out);
  cr_assert(strstr(out, "removed the run's 2 other sessions (the command succeeded)"), "%s",
            out);
  cr_assert(strstr(out, "recproc_exit 4 2000"), "%s", out);
  remove_dir(dir);
}

Test(pitrace_record, a_process_whose_status_is_unknown_is_kept_beside_a_failing_one)
{
  /* recproc_exit is orphaned (pitrace sees its 4); the shell reaps vadd
   * itself, so vadd's status is unknown and it might be what failed. */
  char *dir = fresh_dir(), *out;
  char *script = str_printf("('%s' 4 100 &); '%s'; exit 1", BIN "/recproc_exit", BIN "/vadd");
  const char *args[] = {"--keep", "on-failure", "-o", dir, "--", "/bin/sh", "-c", script, NULL};
  const char *env[] = {POCL, NULL};
  cr_assert_eq(record(args, env, &out), 1, "%s", out);
  char **files;
  cr_assert_eq(session_files(dir, &files), 2, "%s", out);
  char *statuses = str_printf("%s%s",
                              tu_db_lines(files[0], "SELECT coalesce(exit_status, 'unknown') "
                                                 "FROM sessions"),
                              tu_db_lines(files[1], "SELECT coalesce(exit_status, 'unknown') "
                                                 "FROM sessions"));
  cr_assert(strcmp(statuses, "4\nunknown\n") == 0 || strcmp(statuses, "unknown\n4\n") == 0,
            "%s", statuses);
  cr_assert(strstr(out, "kept 2 sessions in "), "%s", out);
  /* The known failure comes first in the summary. */
  char *failing = strstr(out, "exited with status 4"), *other = strstr(out, "not seen");
  cr_assert(failing && other && failing < other, "%s", out);
  remove_dir(dir);
}

/* ---- Crashes --------------------------------------------------------------------- */

Test(pitrace_record, a_crash_exits_139_keeps_its_session_and_shows_its_last_calls)
{
  char *dir = fresh_dir(), *out;
  const char *args[] = {"--keep", "on-failure", "-o", dir, "--", BIN "/recproc_crash", "4",
                        NULL};
  const char *env[] = {POCL, NO_ASAN_SEGV, NULL};
  cr_assert_eq(record(args, env, &out), 128 + SIGSEGV, "%s", out);
  cr_assert(strstr(out, "recproc_crash: crashing after the calls"), "%s", out);
  char **files;
  cr_assert_eq(session_files(dir, &files), 1, "%s", out);
  cr_assert_str_eq(tu_db_lines(files[0], "SELECT ended || ' ' || signal || ' ' || exit_status "
                                      "FROM sessions"), "signal 11 139\n");
  cr_assert_eq(tu_db_int(files[0], "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo' "
                                "AND result = 'PI_SUCCESS'") >= 4, 1);
  cr_assert(strstr(out, "killed by signal 11 (SIGSEGV)"), "%s", out);
  cr_assert(strstr(out, "crashed: signal 11 (SIGSEGV)"), "%s", out);
  cr_assert(strstr(out, files[0]), "%s", out);
  /* The last five calls, the write among them, the last one last. */
  char *last = strstr(out, "last calls:\n");
  cr_assert(last, "%s", out);
  char *last_api = tu_db_lines(files[0], "SELECT api FROM pi_calls ORDER BY seq DESC LIMIT 1");
  last_api[strlen(last_api) - 1] = 0;
  cr_assert(strstr(last, "piEnqueueMemBufferWrite"), "%s", out);
  cr_assert(strstr(last, last_api), "%s", out);
  cr_assert_eq(tu_count(last, "\n      #"), 5, "%s", out);
  cr_assert(!strstr(out, "never returned"), "%s", out);
  remove_dir(dir);
}

Test(pitrace_record, a_call_that_never_returned_is_flagged)
{
  char *dir = fresh_dir(), *out;
  char *cfg = tu_write_temp(".conf", PITRACE_LIB_DIR "/libpi_test_partial.so\n");
  char *cfg_env = str_printf("SYCL_PI_CONFIG=%s", cfg);
  const char *args[] = {"-o", dir, "--", BIN "/use_device", NULL};
  const char *env[] = {cfg_env, "PI_TEST_CRASH=1", NO_ASAN_SEGV, NULL};
  cr_assert_eq(record(args, env, &out), 128 + SIGSEGV, "%s", out);
  char **files;
  cr_assert_eq(session_files(dir, &files), 1, "%s", out);
  char *line = strstr(out, "piContextCreate");
  cr_assert(line, "%s", out);
  char *eol = strchr(line, '\n');
  cr_assert(eol && memmem(line, (size_t)(eol - line), "never returned", 14), "%s", out);
  remove_dir(dir);
  unlink(cfg);
}

/* ---- Several processes ------------------------------------------------------------ */

Test(pitrace_record, three_processes_make_three_complete_sessions)
{
  char *dir = fresh_dir(), *out;
  char *script = str_printf("'%s' & '%s' & '%s' & wait", BIN "/vadd", BIN "/vadd",
                            BIN "/vadd");
  const char *args[] = {"-o", dir, "--", "/bin/sh", "-c", script, NULL};
  const char *env[] = {POCL, NULL};
  cr_assert_eq(record(args, env, &out), 0, "%s", out);
  cr_assert_eq(tu_count(out, "result verified"), 3, "%s", out);
  char **files;
  cr_assert_eq(session_files(dir, &files), 3, "%s", out);
  long long pids[3];
  for (int i = 0; i < 3; i++) {
    cr_assert_str_eq(tu_db_lines(files[i], "SELECT ended || ' ' || (calls > 30) || ' ' || "
                                        "(SELECT count(*) FROM sessions) FROM sessions"),
                     "teardown 1 1\n", "%s", files[i]);
    cr_assert_eq(tu_db_int(files[i], "SELECT count(*) FROM pi_calls WHERE api = "
                                  "'piEnqueueKernelLaunch'"), 1);
    pids[i] = tu_db_int(files[i], "SELECT pid FROM sessions");
  }
  cr_assert(pids[0] != pids[1] && pids[1] != pids[2] && pids[0] != pids[2]);
  remove_dir(dir);
}

/* Starts `pitrace record ARGS...` with output into a pipe; *fd reads it. */
static pid_t start_record(const char *const *args, const char *const *env, int *fd)
{
  int p[2];
  cr_assert_eq(pipe(p), 0);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    for (const char *const *e = env; e && *e; e++)
      putenv((char *)*e);
    dup2(p[1], 1);
    dup2(p[1], 2);
    close(p[0]);
    close(p[1]);
    const char *argv[32] = {PITRACE, "record"};
    for (size_t i = 0; args[i] && i < 29; i++)
      argv[i + 2] = args[i];
    execv(PITRACE, (char *const *)argv);
    _exit(127);
  }
  close(p[1]);
  *fd = p[0];
  return pid;
}

/* Reads `fd` until `text` has come (or it closes): the output so far. */
static char *read_until(int fd, const char *text)
{
  size_t cap = 65536, len = 0;
  char *buf = calloc(1, cap);
  ssize_t n;
  while (!strstr(buf, text) && len + 1 < cap && (n = read(fd, buf + len, cap - len - 1)) > 0)
    len += (size_t)n;
  return buf;
}

/* Waits for `pid` at most `seconds`; its exit status or 128 + signal, -1 on
 * timeout. */
static int wait_for(pid_t pid, int seconds)
{
  for (int i = 0; i < seconds * 100; i++) {
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid)
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    struct timespec t = {0, 10000000};
    nanosleep(&t, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return -1;
}

Test(pitrace_record, sigterm_and_sigint_are_passed_on_to_the_command)
{
  static const int sigs[] = {SIGTERM, SIGINT};
  for (size_t i = 0; i < 2; i++) {
    char *dir = fresh_dir();
    /* The shell says when it runs, and ends by the signal it gets. */
    const char *args[] = {"-o", dir, "--", "/bin/sh", "-c", "echo started; exec sleep 30",
                          NULL};
    int fd;
    pid_t pid = start_record(args, NULL, &fd);
    char *got = read_until(fd, "started");
    cr_assert(strstr(got, "started"), "%s", got);
    /* "started" comes just before the exec: wait for sleep itself. */
    struct timespec t = {0, 200000000};
    nanosleep(&t, NULL);
    cr_assert_eq(kill(pid, sigs[i]), 0);
    int rc = wait_for(pid, 10);
    cr_assert_eq(rc, 128 + sigs[i], "signal %d: pitrace record exited %d", sigs[i], rc);
    char *rest = read_until(fd, "\n$never");
    cr_assert(strstr(rest, sigs[i] == SIGTERM ? "killed by signal 15 (SIGTERM)"
                                              : "killed by signal 2 (SIGINT)"), "%s", rest);
    close(fd);
  }
}

Test(pitrace_record, a_recording_command_stopped_by_sigterm_keeps_its_session)
{
  char *dir = fresh_dir();
  const char *args[] = {"--keep", "on-failure", "-o", dir, "--", BIN "/recproc_exit", "0",
                        "20000", NULL};
  const char *env[] = {POCL, NULL};
  int fd;
  pid_t pid = start_record(args, env, &fd);
  char *got = read_until(fd, "recproc_exit: ready");
  cr_assert(strstr(got, "recproc_exit: ready"), "%s", got);
  /* Past the recorder's next commit (every 50 ms). */
  struct timespec t = {0, 300000000};
  nanosleep(&t, NULL);
  cr_assert_eq(kill(pid, SIGTERM), 0);
  int rc = wait_for(pid, 15);
  /* Ended by a signal, long before its 20 s were over. */
  cr_assert_gt(rc, 128, "pitrace record exited %d", rc);
  char **files;
  cr_assert_eq(session_files(dir, &files), 1);
  cr_assert_gt(tu_db_int(files[0], "SELECT count(*) FROM pi_calls"), 5);
  cr_assert_eq(tu_db_int(files[0], "SELECT exit_status FROM sessions"), rc);
  /* Stopped, not crashed (the summary said "crashed: signal 15"). */
  char *rest = read_until(fd, "\n$never");
  cr_assert(strstr(rest, "killed by signal 15 (SIGTERM); "), "%s", rest);
  close(fd);
  remove_dir(dir);
}

/* SIGTERM reached pitrace's children only: a process whose parent then
 * ended without passing it on (orphaned to pitrace) ran on, and pitrace
 * waited for it; a stopped process left running never took it. Each gets
 * the signal now, and is continued. */
Test(pitrace_record, sigterm_reaches_orphaned_and_stopped_processes_of_the_command)
{
  const char *scripts[] = {
      /* recproc_exit under a shell under the command's shell */
      "sh -c '" BIN "/recproc_exit 7 60000; true' & wait",
      /* recproc_exit left running, stopped */
      BIN "/recproc_exit 7 60000 & p=$!; sleep 0.5; kill -STOP $p; echo stopped; exit 0"};
  const char *wait_text[] = {"recproc_exit: ready", "waiting for the 1 process it left running"};
  for (size_t i = 0; i < 2; i++) {
    char *dir = fresh_dir();
    const char *args[] = {"-o", dir, "--", "/bin/sh", "-c", scripts[i], NULL};
    const char *env[] = {POCL, NULL};
    int fd;
    pid_t pid = start_record(args, env, &fd);
    char *got = read_until(fd, wait_text[i]);
    cr_assert(strstr(got, wait_text[i]), "%s", got);
    struct timespec t = {0, 300000000};
    nanosleep(&t, NULL);
    cr_assert_eq(kill(pid, SIGTERM), 0);
    int rc = wait_for(pid, 20);
    char *rest = read_until(fd, "\n$never");
    cr_assert_neq(rc, -1, "case %zu: pitrace record still waited 20 s after SIGTERM: %s%s", i,
                  got, rest);
    cr_assert_eq(rc, i == 0 ? 128 + SIGTERM : 0, "case %zu: %s%s", i, got, rest);
    char **files;
    cr_assert_eq(session_files(dir, &files), 1, "%s%s", got, rest);
    cr_assert_eq(tu_db_int(files[0], "SELECT exit_status FROM sessions"), 128 + SIGTERM);
    cr_assert(strstr(rest, "recproc_exit 7 60000\n    killed by signal 15 (SIGTERM)"),
              "case %zu: %s", i, rest);
    close(fd);
    remove_dir(dir);
  }
}

Test(pitrace_record, two_runs_sharing_a_directory_keep_to_their_own_sessions)
{
  char *dir = fresh_dir();
  const char *env[] = {POCL, NULL};
  /* B fails after a pause; A succeeds meanwhile and removes only its own. */
  const char *b_args[] = {"--keep", "on-failure", "-o", dir, "--", BIN "/recproc_exit", "5",
                          "1500", NULL};
  int bfd, afd;
  pid_t b = start_record(b_args, env, &bfd);
  char *got = read_until(bfd, "recproc_exit: ready");
  cr_assert(strstr(got, "recproc_exit: ready"), "%s", got);
  const char *a_args[] = {"--keep", "on-failure", "-o", dir, "--", BIN "/vadd", NULL};
  pid_t a = start_record(a_args, env, &afd);
  cr_assert_eq(wait_for(a, 60), 0);
  char **files;
  cr_assert_eq(session_files(dir, &files), 1, "A removed B's session, or kept its own");
  cr_assert_eq(wait_for(b, 60), 5);
  cr_assert_eq(session_files(dir, &files), 1);
  cr_assert_str_eq(tu_db_lines(files[0], "SELECT exit_status FROM sessions"), "5\n");
  close(afd);
  close(bfd);
  remove_dir(dir);
}

Test(pitrace_record, exit_right_after_the_calls_keeps_them_all)
{
  /* _exit(3) right after 1000 queries: the last ones were never committed
   * by the process; pitrace record salvages them from its ring file and
   * says how the process ended. */
  char *dir = tu_temp_path(".d"), *trace = tu_temp_path(".trace");
  const char *args[] = {"--no-opencl", "-o", dir, "--", BIN "/record_prog", "quickexit", "1000",
                        NULL};
  const char *env[] = {POCL, "SYCL_PI_TRACE=2", str_printf("SYCL_PI_TRACE_FILE=%s", trace),
                       NULL};
  char *out;
  cr_assert_eq(record(args, env, &out), 3, "%s", out);
  char **files;
  cr_assert_eq(session_files(dir, &files), 1, "%s", out);
  int traced = tu_count(tu_read_file(trace), "\n---> ") + 1;
  cr_assert_eq(tu_db_int(files[0], "SELECT count(*) FROM calls"), traced);
  cr_assert_eq(tu_db_int(files[0], "SELECT count(*) FROM calls WHERE result IS NULL"), 0);
  cr_assert_str_eq(tu_db_lines(files[0], "SELECT ended || ' ' || exit_status FROM sessions"),
                   "_exit 3\n");
  cr_assert_str_eq(tu_db_lines(files[0], "PRAGMA integrity_check"), "ok\n");
  cr_assert_eq(all_files(dir), 1, "the ring file (or a -wal) was left in %s", dir);
  cr_assert(strstr(out, "without teardown"), "%s", out);
}

/* A directory on a full disk: the process says it cannot record, and the
 * summary says that its session file could not be read and names it, not
 * that no process made PI calls (which it said before); the command's
 * exit status still passes through. */
Test(pitrace_record, a_full_disk_is_named_as_why_no_session_was_recorded)
{
  char dir[32];
  tu_small_tmpfs(dir, "64k");
  char *pad = str_printf("%s/pad", dir), *sessions = str_printf("%s/sessions", dir);
  FILE *f = fopen(pad, "w");
  cr_assert(f);
  static char block[4096];
  while (fwrite(block, 1, sizeof block, f) == sizeof block && fflush(f) == 0)
    ;
  fclose(f);
  const char *args[] = {"-o", sessions, "--", BIN "/vadd", NULL};
  const char *env[] = {POCL, NULL};
  char *out;
  int st = record(args, env, &out);
  int left = all_files(sessions);
  tu_small_tmpfs_gone(dir);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert_eq(left, 0, "files left in %s:\n%s", sessions, out);
  cr_assert(strstr(out, "result verified"), "%s", out);
  cr_assert(strstr(out, "pitrace: cannot record to "), "%s", out);
  cr_assert(strstr(out, "no session was recorded: 1 session file of "), "%s", out);
  /* The empty file named, and removed: left there, it made every verb
   * refuse the directory. */
  cr_assert(strstr(out, "not a readable session: ") &&
            strstr(out, ": empty (its process could not begin its session), removed\n"), "%s", out);
  cr_assert_null(strstr(out, "made PI calls"), "%s", out);
}

/* A recording that stopped part-way (here its file's size limit, 600
 * KiB, against some 3 MiB of calls) is said so in the summary of a run
 * that succeeded, not only in the warning its process gave among its
 * output when it happened. */
Test(pitrace_record, a_recording_that_stopped_part_way_is_said_so_in_the_summary)
{
  char *dir = tu_temp_path("");
  char *script = str_printf("ulimit -f 600; trap '' XFSZ; exec %s record -o %s -- "
                            "%s/record_prog threads 2 300000", PITRACE, dir, BIN);
  const char *argv[] = {"/bin/bash", "-c", script, NULL}; /* ulimit -f: KiB */
  const char *env[] = {POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  char *said = str_printf("pitrace record: 1 session in %s, incomplete: recording stopped "
                          "part-way (pitrace sessions %s says why)\n", dir, dir);
  cr_assert(strstr(out, said), "%s", out);
  char **files;
  cr_assert_eq(session_files(dir, &files), 1);
  cr_assert_str_eq(tu_db_lines(files[0], "SELECT ended FROM sessions"), "incomplete\n");
}

/* Data left out on a full disk (the recorder keeps the calls) is said in
 * the summary: a replay of that session cannot give the calls their data
 * back. */
Test(pitrace_record, data_cut_short_on_a_full_disk_is_said_so_in_the_summary)
{
  char dir[32];
  tu_small_tmpfs(dir, "12m"); /* the ring file takes 8 MiB of it */
  char *sessions = str_printf("%s/sessions", dir);
  const char *args[] = {"-o", sessions, "--", BIN "/vadd", "1048576", NULL};
  const char *env[] = {POCL, "SYCL_PI_RECORD_DATA=all", NULL};
  char *out;
  int st = record(args, env, &out);
  tu_small_tmpfs_gone(dir);
  cr_assert_eq(st, 0, "%s", out);
  char *said = str_printf("pitrace record: 1 session in %s, its data cut short on a full disk "
                          "(pitrace sessions %s says why)\n", sessions, sessions);
  cr_assert(strstr(out, said), "%s", out);
}

/* -o naming a directory so deep that the session files in it would be
 * past what SQLite opens (504 characters, absolute): one line and exit 2
 * before the command runs (every process failed to record, each saying
 * "unable to open database file"), and the directory it made is gone. */
Test(pitrace_record, a_directory_too_deep_for_sessions_is_refused)
{
  char path[1024];
  size_t n = tu_deep_dir(path, sizeof path, 2);
  snprintf(path + n, sizeof path - n, "/%080d", 0);
  const char *args[] = {"-o", path, "--", BIN "/vadd", NULL};
  const char *env[] = {POCL, NULL};
  char *out;
  cr_assert_eq(record(args, env, &out), 2, "%s", out);
  cr_assert(strstr(out, "is too deep for sessions: their paths in it are up to ") &&
            strstr(out, "SQLite opens files by paths of up to 504; give -o a shorter one") &&
            tu_count(out, "\n") == 1 && !strstr(out, "vadd:"), "%s", out);
  cr_assert_eq(access(path, F_OK), -1, "the directory it made is still there");
}

/* -o naming a directory whose path holds "%p": the recorder reads that in
 * SYCL_PI_RECORD as the pid, so every process recorded into a directory
 * of its own (the path with its pid in it) and the run said no process
 * made PI calls. Refused, one line and exit 2, before the command runs. */
Test(pitrace_record, a_directory_whose_path_holds_percent_p_is_refused)
{
  char *dir = fresh_dir();
  char *odd = str_printf("%s/a%%pb", dir);
  cr_assert_eq(mkdir(dir, 0700), 0);
  const char *args[] = {"-o", odd, "--", BIN "/record_prog", "exit", "2", NULL};
  const char *env[] = {POCL, NULL};
  char *out;
  cr_assert_eq(record(args, env, &out), 2, "%s", out);
  cr_assert(strstr(out, "a%pb: its path holds %p, which the recorder replaces by each "
                        "process's pid") &&
            tu_count(out, "\n") == 1 && !strstr(out, "record_prog:"), "%s", out);
  cr_assert(!exists(odd), "the directory it made is still there");
  cr_assert_eq(all_files(dir), 0, "a session went to a directory of its own");
  rmdir(dir);
}

/* The sessions directory gone while the command runs (another run in it
 * ended and removed it, left empty): the recorder makes it again, private
 * as pitrace record makes it (0700), not by the umask (0755: readable by
 * every user, against what docs/ci.md says). */
Test(pitrace_record, a_directory_made_again_by_the_recorder_is_private)
{
  char *dir = fresh_dir();
  char *script = str_printf("umask 022; rmdir %s && exec %s/vadd", dir, BIN);
  const char *args[] = {"-o", dir, "--", "/bin/sh", "-c", script, NULL};
  const char *env[] = {POCL, NULL};
  char *out;
  cr_assert_eq(record(args, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "pitrace record: 1 session in "), "%s", out);
  struct stat st;
  cr_assert_eq(stat(dir, &st), 0);
  cr_assert_eq(st.st_mode & 0777, 0700, "%s is mode %o", dir, st.st_mode & 0777);
  remove_dir(dir);
}

/* Another run sharing the directory, its process beginning its session
 * as this run ends: the file is still empty, or holds a header and no
 * session yet. It was removed ("empty (its process could not begin its
 * session), removed": that process's session lost) or named as not a
 * readable session of this run. A file of a process still running is
 * none of this run's, whose processes have all ended: left alone. (The
 * test's own pid stands for that process.) */
Test(pitrace_record, a_file_another_run_is_making_is_left_alone)
{
  char *dir = fresh_dir();
  cr_assert_eq(mkdir(dir, 0700), 0);
  char *empty = str_printf("%s/pitrace-%d-1.db", dir, (int)getpid());
  char *half = str_printf("%s/pitrace-%d-2.db", dir, (int)getpid());
  char *script = str_printf(": > %s; printf 'SQLite format 3\\000' > %s; exec %s/vadd", empty,
                            half, BIN);
  const char *args[] = {"-o", dir, "--", "/bin/sh", "-c", script, NULL};
  const char *env[] = {POCL, NULL};
  char *out;
  cr_assert_eq(record(args, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "pitrace record: 1 session in ") && !strstr(out, "not a readable"),
            "%s", out);
  cr_assert(exists(empty) && exists(half), "%s", out);
  remove_dir(dir);
}

/* A recording process that goes on as another recording program (exec),
 * in a later second: the next program records into a file of its own, so
 * nothing sees the exec as the rings of the first are salvaged, after the
 * run. The status pitrace reaped for the pid is the last program's; the
 * first session took it ("crashed: signal 11" for a process that crashed
 * not) and it went into its exit_status. */
Test(pitrace_record, a_process_that_went_on_as_another_program_is_not_given_its_status)
{
  char *dir = fresh_dir();
  char *script = str_printf("sleep 1; exec %s/record_prog crash 3", BIN);
  const char *args[] = {"-o", dir, "--", BIN "/record_prog", "exec", "/bin/sh", "-c", script,
                        NULL};
  const char *env[] = {POCL, NO_ASAN_SEGV, NULL};
  char *out;
  cr_assert_eq(record(args, env, &out), 139, "%s", out);
  cr_assert(strstr(out, "kept 2 sessions in "), "%s", out);
  cr_assert_eq(tu_count(out, "crashed: signal 11 (SIGSEGV)"), 1, "%s", out);
  cr_assert(strstr(out, "record_prog exec /bin/sh -c sleep 1; exec ") &&
            strstr(out, "\n    went on as another program (exec); "), "%s", out);
  char **files;
  cr_assert_eq(session_files(dir, &files), 2);
  for (size_t i = 0; i < 2; i++) {
    char *ended = tu_db_lines(files[i], "SELECT ended || ' ' || ifnull(exit_status, '-') || ' ' "
                              "|| (command LIKE '%record_prog exec%') FROM sessions");
    cr_assert(strcmp(ended, "exec - 1\n") == 0 || strcmp(ended, "signal 139 0\n") == 0, "%s: %s",
              files[i], ended);
    free(ended);
  }
  remove_dir(dir);
}

/* A failure with no recorded process known to have failed: under --keep
 * on-failure the summary says why every session is kept; under --keep
 * always that is no reason (every session is kept whatever failed), and
 * the summary gave it all the same. */
Test(pitrace_record, keep_always_gives_no_on_failure_reason_for_keeping)
{
  const char *env[] = {POCL, NULL};
  const char *why = "; no recorded process is known to have failed, so every session of "
                    "the run is kept\n";
  for (int on_failure = 0; on_failure < 2; on_failure++) {
    char *dir = fresh_dir(), *out;
    const char *args[] = {"--keep", on_failure ? "on-failure" : "always", "-o", dir, "--",
                          "/bin/sh", "-c", BIN "/vadd; exit 3", NULL};
    cr_assert_eq(record(args, env, &out), 3, "%s", out);
    char *kept = str_printf("pitrace record: kept 1 session in %s%s", dir,
                            on_failure ? why : "\n");
    cr_assert(strstr(out, kept), "%s", out);
    free(kept);
    remove_dir(dir);
  }
}

/* The exit status pitrace record stores (sessions.exit_status) is part of
 * how a process ended in pitrace sessions: a command that tore down and
 * exited with 2 was listed as "teardown", as one that succeeded. */
Test(pitrace_record, sessions_shows_the_exit_status_record_stored)
{
  char *dir = fresh_dir(), *out;
  const char *args[] = {"-o", dir, "--", BIN "/record_prog", "chdir", "/nonexistent", NULL};
  const char *env[] = {POCL, NULL};
  cr_assert_eq(record(args, env, &out), 2, "%s", out);
  char **files;
  cr_assert_eq(session_files(dir, &files), 1, "%s", out);
  cr_assert_str_eq(tu_db_lines(files[0], "SELECT ended || ' ' || exit_status FROM sessions"),
                   "teardown 2\n");
  const char *list[] = {PITRACE, "sessions", dir, NULL};
  cr_assert_eq(tu_run(list, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "  teardown, exit status 2  "), "%s", out);
  remove_dir(dir);
}

/* Two processes of a run recording into one file (SYCL_PI_RECORD set by
 * the command: the same file for both), one that succeeded (an orphan
 * pitrace reaped, status 0) and one that crashed: the file stays for the
 * crash, the success's session with it. The summary said "removed the 1
 * session of processes that succeeded", of a session still there. */
Test(pitrace_record, a_session_in_a_file_that_stays_is_not_said_to_be_removed)
{
  char *dir = fresh_dir();
  cr_assert_eq(mkdir(dir, 0700), 0);
  char *script = str_printf("export SYCL_PI_RECORD=%s/pitrace-1-1.db; (%s/vadd &); "
                            "%s/record_prog crash 3", dir, BIN, BIN);
  const char *args[] = {"--keep", "on-failure", "-o", dir, "--", "/bin/sh", "-c", script,
                        NULL};
  const char *env[] = {POCL, NO_ASAN_SEGV, NULL};
  char *out;
  cr_assert_eq(record(args, env, &out), 139, "%s", out);
  char **files;
  cr_assert_eq(session_files(dir, &files), 1, "%s", out);
  cr_assert_eq(tu_db_int(files[0], "SELECT count(*) FROM sessions"), 2, "%s", out);
  char *kept = str_printf("pitrace record: kept 2 sessions in %s\n", dir);
  cr_assert(strstr(out, kept) && !strstr(out, "removed"), "%s", out);
  cr_assert(strstr(out, "exited with status 0; ") && strstr(out, "crashed: signal 11"), "%s",
            out);
  remove_dir(dir);
}

/* Runs `pitrace record -o DIR -- /bin/sh -c SCRIPT` with its stderr a pipe
 * nobody reads (closed before it starts): its wait status. */
static int record_stderr_closed(const char *dir, const char *script)
{
  int fd[2];
  cr_assert_eq(pipe(fd), 0);
  close(fd[0]);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    signal(SIGPIPE, SIG_DFL);
    dup2(fd[1], 2);
    execl(PITRACE, PITRACE, "record", "-o", dir, "--", "/bin/sh", "-c", script, (char *)NULL);
    _exit(99);
  }
  close(fd[1]);
  int st;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  return st;
}

/* pitrace record with a stderr nobody reads any more (2>&1 | head that
 * has ended): SIGPIPE on its summary ended it, exit 141 for a command that
 * exited with 3 (or, on its "waiting for" line, mid-run: its command's
 * processes left to init, its sessions to nobody). It ignores SIGPIPE now;
 * its command gets SIGPIPE as pitrace was given it. */
Test(pitrace_record, a_closed_stderr_does_not_change_the_exit_status)
{
  char *dir = fresh_dir();
  int st = record_stderr_closed(dir, "exit 3");
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 3, "wait status 0x%x", (unsigned)st);
  /* Not ignored in the command: a shell cannot undo an ignored signal. */
  st = record_stderr_closed(dir, "kill -PIPE $$; exit 4");
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGPIPE, "wait status 0x%x",
            (unsigned)st);
  cr_assert(!exists(dir));
}

/* A failed run whose process's recording stopped part-way (its file's
 * size limit) and whose status pitrace saw: the summary said "exited with
 * status 3" and showed its last recorded calls as its last calls, nothing
 * of the recording having stopped long before the process did. */
Test(pitrace_record, a_failure_summary_says_a_recording_stopped_part_way)
{
  char *dir = tu_temp_path("");
  char *script = str_printf("ulimit -f 600; trap '' XFSZ; exec %s record -o %s -- "
                            "%s/record_prog threads 2 300000", PITRACE, dir, BIN);
  const char *argv[] = {"/bin/bash", "-c", script, NULL}; /* ulimit -f: KiB */
  const char *env[] = {POCL, "RECORD_PROG_EXIT=_exit", NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 3, "%s", out);
  cr_assert(strstr(out, "\n    exited with status 3, its recording stopped part-way (see its "
                        "incomplete_reason); "), "%s", out);
  char **files;
  cr_assert_eq(session_files(dir, &files), 1);
  cr_assert_str_eq(tu_db_lines(files[0], "SELECT ended FROM sessions"), "incomplete\n");
  remove_dir(dir);
}

/* A terminal's ^C once the command has ended, its processes left running
 * (pitrace waits for them): the terminal gives it to them, pitrace's
 * process group, and pitrace passed it on again: each got SIGINT twice
 * (a second ^C that cuts short the cleanup of the first). The leftover
 * process says each SIGINT it gets and whether the kernel sent it; the
 * SIGTERM sent to pitrace after the ^C reached it is passed on after any
 * SIGINT pitrace passes on (the lower signal first), so the lines between
 * are all that came. */
Test(pitrace_record, a_terminal_interrupt_reaches_what_the_command_left_once)
{
  char *dir = fresh_dir();
  char *script = str_printf("%s/record_prog sigwait & exit 0", BIN);
  int master;
  pid_t pid = forkpty(&master, NULL, NULL, NULL);
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    execl(PITRACE, PITRACE, "record", "-o", dir, "--", "/bin/sh", "-c", script, (char *)NULL);
    _exit(127);
  }
  char *got = read_until(master, "waiting for the 1 process it left running");
  if (!strstr(got, "sigwait ready"))
    got = read_until(master, "sigwait ready");
  cr_assert(strstr(got, "sigwait ready"), "%s", got);
  cr_assert_eq(write(master, "\003", 1), 1);
  got = read_until(master, "INT from the kernel");
  cr_assert(strstr(got, "INT from the kernel"), "%s", got);
  cr_assert(!strstr(got, "INT sent"), "%s", got);
  cr_assert_eq(kill(pid, SIGTERM), 0);
  char *rest = read_until(master, "TERM\r\n");
  cr_assert(strstr(rest, "TERM\r\n"), "%s", rest);
  cr_assert(!strstr(rest, "INT sent"), "SIGINT came twice: %s%s", got, rest);
  cr_assert_eq(wait_for(pid, 10), 0);
  close(master);
  remove_dir(dir);
}
