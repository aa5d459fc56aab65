/*
 * testutil.h: helpers the test suites share: running a program and
 * capturing its output, reading files, temporary paths, the views of
 * version-2 sessions in SQLite (the session library's extension, which
 * gives the calls view pitrace_calls). Paths to the build
 * come from compile definitions (PITRACE_BIN_DIR, PITRACE_LIB_DIR,
 * PITRACE_TEST_DIR).
 */
#ifndef PITRACE_TESTUTIL_H
#define PITRACE_TESTUTIL_H


#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The whole file as a NUL-terminated string (malloc'd), or NULL; its
 * length (without the NUL) into *n_out where that is not NULL. */
static inline char *tu_read_file_n(const char *path, size_t *n_out)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (cap - len < 2) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        buf = NULL;
      }
      buf = nb;
    }
  }
  fclose(f);
  if (buf)
    buf[len] = 0;
  if (n_out)
    *n_out = len;
  return buf;
}

static inline char *tu_read_file(const char *path) { return tu_read_file_n(path, NULL); }

/* Every temporary path this process handed out: removed when it exits,
 * with SQLite's side files, the recorder's ring files and template
 * beside them and, for a directory, all it holds; set
 * PITRACE_KEEP_TEMP=1 to keep them for a look. A forked child that exits
 * removes only the paths it made itself. */
static char **tu_temps;
static size_t tu_ntemps;
static pid_t tu_temps_pid;

static inline int tu_remove_entry(const char *path, const struct stat *st, int flag,
                                  struct FTW *ftw)
{
  (void)st;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

static inline void tu_remove_temps(void)
{
  const char *keep = getenv("PITRACE_KEEP_TEMP");
  if (tu_temps_pid != getpid() || (keep && strcmp(keep, "1") == 0))
    return;
  for (size_t i = 0; i < tu_ntemps; i++) {
    nftw(tu_temps[i], tu_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    static const char *const side[] = {"-wal", "-shm", "-journal"};
    for (size_t j = 0; j < sizeof side / sizeof *side; j++) {
      char path[4200];
      snprintf(path, sizeof path, "%s%s", tu_temps[i], side[j]);
      unlink(path);
    }
    /* Ring files a test's recording left unsalvaged (_exit, kills: 8 MiB
     * each; a record suite's run left four in /tmp), and a new database's
     * template a process killed at its start left before linking it. */
    static const char *const beside[] = {"-rings.*", ".new.*"};
    for (size_t j = 0; j < sizeof beside / sizeof *beside; j++) {
      char pattern[4200];
      glob_t g;
      snprintf(pattern, sizeof pattern, "%s%s", tu_temps[i], beside[j]);
      if (glob(pattern, GLOB_NOSORT, NULL, &g) == 0)
        for (size_t k = 0; k < g.gl_pathc; k++)
          unlink(g.gl_pathv[k]);
      globfree(&g);
    }
  }
  tu_ntemps = 0;
}

/* A fresh temporary file name with the given suffix (no such file exists
 * yet); whatever is made under it goes when the process exits. */
static inline char *tu_temp_path(const char *suffix)
{
  char tmpl[] = "/tmp/pitrace-test-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd >= 0)
    close(fd);
  unlink(tmpl);
  char *p = malloc(strlen(tmpl) + strlen(suffix) + 1);
  sprintf(p, "%s%s", tmpl, suffix);
  if (tu_temps_pid != getpid()) {
    tu_temps = NULL; /* the parent's list: it removes them itself */
    tu_ntemps = 0;
    tu_temps_pid = getpid();
    atexit(tu_remove_temps);
  }
  char **grown = realloc(tu_temps, (tu_ntemps + 1) * sizeof *grown);
  if (grown) {
    tu_temps = grown;
    tu_temps[tu_ntemps++] = strdup(p);
  }
  return p;
}

/* Writes `text` to a new temporary file and returns its path. */
static inline char *tu_write_temp(const char *suffix, const char *text)
{
  char *p = tu_temp_path(suffix);
  FILE *f = fopen(p, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
  return p;
}

/* Runs argv (argv[0] a path) with extra "NAME=value" settings on top of the
 * current environment ("NAME=" alone unsets NAME); captures stdout and
 * stderr together into *out (malloc'd). Returns the exit status, or 128 +
 * the signal that ended it. */
static inline int tu_run(const char *const *argv, const char *const *env,
                         char **out)
{
  char *path = tu_temp_path(".out");
  pid_t pid = fork();
  if (pid == 0) {
    for (const char *const *e = env; e && *e; e++) {
      const char *eq = strchr(*e, '=');
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
      if (eq[1])
        setenv(name, eq + 1, 1);
      else
        unsetenv(name);
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (out)
    *out = tu_read_file(path);
  unlink(path);
  free(path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Starts argv (argv[0] a path) with its output to /dev/null and returns
 * its pid without waiting: a test that signals it while it works. */
static inline pid_t tu_spawn_quiet(const char *const *argv)
{
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  return pid;
}

/* The entries of directory `dir` but "." and "..": what an output left
 * beside itself; -1 when it cannot be read. */
static inline int tu_dir_entries(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d)
    return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  return n;
}

/* Number of (non-overlapping) occurrences of needle in hay. */
static inline int tu_count(const char *hay, const char *needle)
{
  int n = 0;
  for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

/* SQL that turns a session database's version-2 chunks into version-1
 * ones (JSON text, which tests edit with SQL's JSON functions to damage or
 * change a recording); pitrace reads both. Needs the extension. */
#define TU_AS_V1_CHUNKS                                                                      \
  "INSERT INTO chunks SELECT cc.session, cc.id, (SELECT json_group_array(json(CASE "          \
  "WHEN c.data IS NOT NULL THEN json_array(c.seq, c.thread, c.plugin, c.api, c.result, "      \
  "c.start_ns, c.dur_ns, json(c.args), c.stack, json(c.data)) WHEN c.stack IS NOT NULL "      \
  "THEN json_array(c.seq, c.thread, c.plugin, c.api, c.result, c.start_ns, c.dur_ns, "        \
  "json(c.args), c.stack) ELSE json_array(c.seq, c.thread, c.plugin, c.api, c.result, "       \
  "c.start_ns, c.dur_ns, json(c.args)) END)) FROM pitrace_calls(cc.calls) c) FROM "           \
  "call_chunks cc; DELETE FROM call_chunks;"

/* The sqlite3 shell's "-cmd" that loads the extension. */
#define TU_SQLITE_LOAD ".load " PITRACE_LIB_DIR "/libpitrace_sqlite"

/* TU_SANITIZED: built with AddressSanitizer (the build's libraries cannot
 * load into Debian's programs, and valgrind cannot run them). */
#if defined(__SANITIZE_ADDRESS__)
#define TU_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_SANITIZED 1
#endif
#endif

#ifdef cr_assert_eq /* with Criterion */
#include <errno.h>
#include <sys/mount.h>

/* Skips a test of a pyopencl script run through the build's OpenCL front
 * end where it cannot run: a sanitized front end cannot load into
 * Debian's python3 (the gcc build runs the test), and python3-pyopencl may
 * be missing (scripts/setup.sh installs it). */
static inline void tu_need_pyopencl(void)
{
#ifdef TU_SANITIZED
  cr_skip_test("a sanitized OpenCL front end cannot load into Debian's python3 (the gcc build "
               "runs this test)");
#endif
  const char *probe[] = {"/usr/bin/python3", "-c", "import pyopencl", NULL};
  if (tu_run(probe, NULL, NULL) != 0)
    cr_skip_test("python3-pyopencl is not installed (scripts/setup.sh installs it)");
}

/* A full disk to test on: a tmpfs of `size` ("64k", "1m") mounted on a new
 * directory, its path into dir (room for 32 bytes); unmount it with
 * tu_small_tmpfs_gone. Skips the test where mounting needs privileges it
 * lacks. */
static inline void tu_small_tmpfs(char dir[32], const char *size)
{
  snprintf(dir, 32, "/tmp/pitrace-full-XXXXXX");
  cr_assert(mkdtemp(dir));
  char opts[64];
  snprintf(opts, sizeof opts, "size=%s", size);
  if (mount("pitrace-full", dir, "tmpfs", 0, opts) != 0) {
    int e = errno;
    rmdir(dir);
    cr_skip_test("mounting a small tmpfs needs root (%s): no full disk to test on", strerror(e));
  }
}

/* A new temporary directory with `levels` directories of 200 characters
 * nested in it (paths past what SQLite opens); the deepest's path into
 * path (n bytes), its length returned. */
static inline size_t tu_deep_dir(char *path, size_t n, int levels)
{
  char *top = tu_temp_path("");
  cr_assert_eq(mkdir(top, 0700), 0);
  size_t len = (size_t)snprintf(path, n, "%s", top);
  for (int level = 0; level < levels; level++) {
    cr_assert_lt(len + 202, n);
    path[len++] = '/';
    memset(path + len, 'd', 200);
    len += 200;
    path[len] = 0;
    cr_assert_eq(mkdir(path, 0700), 0, "%s", strerror(errno));
  }
  return len;
}

static inline void tu_small_tmpfs_gone(const char *dir)
{
  umount(dir);
  rmdir(dir);
}
#endif

#ifdef SQLITE_VERSION
/* Loads the extension into a connection a test opened. */
static inline void tu_sqlite_views(sqlite3 *db)
{
  char *err = NULL;
  sqlite3_enable_load_extension(db, 1);
  if (sqlite3_load_extension(db, PITRACE_LIB_DIR "/libpitrace_sqlite.so", NULL, &err) !=
      SQLITE_OK) {
    fprintf(stderr, "cannot load %s/libpitrace_sqlite.so: %s\n", PITRACE_LIB_DIR,
            err ? err : "?");
    abort();
  }
}

#ifdef cr_assert_eq /* with Criterion */
/* Session files are opened read-write: a read-only connection cannot
 * rebuild the WAL index a killed process may leave
 * (SQLITE_READONLY_RECOVERY, "attempt to write a readonly database"), so
 * the tests read as pitrace does then. The views' extension is loaded. */
static inline sqlite3 *tu_db_query(const char *path, const char *sql, sqlite3_stmt **s)
{
  sqlite3 *db;
  cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK,
               "cannot open %s", path);
  tu_sqlite_views(db);
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, s, NULL), SQLITE_OK, "%s: %s", sql,
               sqlite3_errmsg(db));
  return db;
}

/* The first column of the first row of `sql` in session file `path` as
 * an integer (-1: no row, -2: NULL). */
static inline long long tu_db_int(const char *path, const char *sql)
{
  sqlite3_stmt *s;
  sqlite3 *db = tu_db_query(path, sql, &s);
  long long v = -1;
  if (sqlite3_step(s) == SQLITE_ROW)
    v = sqlite3_column_type(s, 0) == SQLITE_NULL ? -2 : sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

/* All rows of a one-column query, newline-separated (malloc'd; NULL
 * values as "NULL"). */
static inline char *tu_db_lines(const char *path, const char *sql)
{
  sqlite3_stmt *s;
  sqlite3 *db = tu_db_query(path, sql, &s);
  size_t cap = 4096, len = 0;
  char *out = calloc(1, cap);
  while (sqlite3_step(s) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(s, 0);
    size_t n = t ? strlen(t) : 4;
    while (len + n + 2 > cap)
      out = realloc(out, cap *= 2);
    memcpy(out + len, t ? t : "NULL", n);
    len += n;
    out[len++] = '\n';
    out[len] = 0;
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}
#endif
#endif

#endif
