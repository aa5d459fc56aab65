/*
 * test_viewer.c: the viewer verbs of the pitrace command on sessions
 * recorded here from real runs (PoCL, rusticl): sessions lists them and how
 * they ended; show prints the live trace's blocks (same shape, typed
 * arguments, notes in place) and filters; stats agrees with the database;
 * diff tells two backends apart by their device info and finds two runs of
 * one program on one device the same; export writes valid trace-event JSON,
 * JSON Lines and CSV; report renders in headless Chromium; bad files give
 * one line and exit 2; colours only on a terminal and never with NO_COLOR.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <math.h>
#include <dirent.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <zstd.h>

#include "chunk.h"
#include "json.h"
#include "pi_api.h"
#include "session.h"
#include "testutil.h"

#define BIN PITRACE_BIN_DIR
#define PITRACE BIN "/pitrace"
#define POCL "OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd"
#define RUSTICL "OCL_ICD_VENDORS=/etc/OpenCL/vendors/rusticl.icd"

TestSuite(viewer, .timeout = 180);

static char *kv(const char *name, const char *value)
{
  char *s = malloc(strlen(name) + strlen(value) + 2);
  sprintf(s, "%s=%s", name, value);
  return s;
}

/* Records argv (with SYCL_PI_RECORD=db and the given settings); returns the
 * program's exit status. */
static int record_into(const char *db, const char *const *argv, const char *icd,
                       const char *extra)
{
  const char *env[] = {kv("SYCL_PI_RECORD", db), icd, "RUSTICL_ENABLE=swrast", extra, NULL};
  char *out;
  int rc = tu_run(argv, env, &out);
  free(out);
  return rc;
}

/* A new session database with one recorded run of BIN/prog. */
static char *record(const char *prog, const char *icd)
{
  char *db = tu_temp_path(".db"), path[4096];
  snprintf(path, sizeof path, "%s/%s", BIN, prog);
  const char *argv[] = {path, NULL};
  cr_assert_eq(record_into(db, argv, icd, NULL), 0, "recording %s failed", prog);
  return db;
}

/* Runs pitrace with the arguments (NULL-terminated); stdout and stderr
 * apart. Returns the exit status. */
static int pitrace(char **out, char **err, ...)
{
  const char *argv[16] = {PITRACE};
  va_list ap;
  va_start(ap, err);
  for (int i = 1; i < 15 && (argv[i] = va_arg(ap, const char *)); i++)
    ;
  va_end(ap);
  char *po = tu_temp_path(".out"), *pe = tu_temp_path(".err");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(open(po, O_WRONLY | O_CREAT | O_TRUNC, 0600), 1);
    dup2(open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0600), 2);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  *out = tu_read_file(po);
  *err = tu_read_file(pe);
  unlink(po);
  unlink(pe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The first column of the first row of a query, as text ("" if none). */
static char *sql(const char *db, const char *query)
{
  sqlite3 *h;
  cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  tu_sqlite_views(h);
  sqlite3_stmt *s;
  cr_assert_eq(sqlite3_prepare_v2(h, query, -1, &s, NULL), SQLITE_OK, "%s: %s", query,
               sqlite3_errmsg(h));
  const unsigned char *t = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_text(s, 0) : NULL;
  char *v = strdup(t ? (const char *)t : "");
  sqlite3_finalize(s);
  sqlite3_close(h);
  return v;
}

static long long sql_int(const char *db, const char *query) { return atoll(sql(db, query)); }

static int lines(const char *s) { return tu_count(s, "\n"); }

/* printf into a new string. */
static char *fmt(const char *f, ...)
{
  va_list ap;
  va_start(ap, f);
  char *s = NULL;
  cr_assert_geq(vasprintf(&s, f, ap), 0);
  va_end(ap);
  return s;
}

/* The recorded PI_DEVICE_INFO_NAME answer, unquoted. */
static char *device_name(const char *db)
{
  char *v = sql(db, "SELECT value FROM pi_args WHERE name = 'param_value' AND seq IN (SELECT seq "
                    "FROM pi_args WHERE value = 'PI_DEVICE_INFO_NAME') AND value LIKE '\"%'");
  cr_assert(strlen(v) > 2, "no device name recorded");
  v[strlen(v) - 1] = 0;
  return v + 1;
}

/* The recorded PI_DEVICE_INFO_NAME answer for device#id, unquoted. */
static char *name_of(const char *db, long long id)
{
  char q[512];
  snprintf(q, sizeof q, "SELECT value FROM pi_args WHERE name = 'param_value' AND value LIKE "
           "'\"%%' AND seq IN (SELECT seq FROM pi_args WHERE value = 'PI_DEVICE_INFO_NAME') AND "
           "seq IN (SELECT seq FROM pi_args WHERE position = 0 AND value = 'device#%lld')", id);
  char *v = sql(db, q);
  cr_assert(strlen(v) > 2, "no name recorded for device#%lld", id);
  v[strlen(v) - 1] = 0;
  return v + 1;
}

/* ---- sessions --------------------------------------------------------------------- */

Test(viewer, sessions_lists_each_session_with_backend_device_calls_and_end)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/vadd", NULL};
  cr_assert_eq(record_into(db, argv, POCL, "SYCL_PI_RECORD_LABEL=first run"), 0);
  /* A label (or a command: python3 -c "...") of several lines is one row. */
  cr_assert_eq(record_into(db, argv, POCL, "SYCL_PI_RECORD_LABEL=second\nrun"), 0);
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "sessions", db, NULL), 0, "%s", err);
  cr_assert_eq(lines(out), 3, "a header and a line per session:\n%s", out);
  cr_assert(strstr(out, "first run") && strstr(out, "second run"), "%s", out);
  cr_assert_eq(tu_count(out, "teardown"), 2, "%s", out);
  cr_assert_eq(tu_count(out, " opencl "), 2, "%s", out);
  cr_assert_eq(tu_count(out, device_name(db)), 2, "%s", out);
  char calls[64];
  snprintf(calls, sizeof calls, " %s ", sql(db, "SELECT calls FROM sessions WHERE id = 2"));
  cr_assert(strstr(out, calls), "no call count%s in:\n%s", calls, out);
  cr_assert(strstr(out, BIN "/vadd"), "%s", out);
  /* A label longer than its column is cut between characters: 40 "é"
   * (80 bytes) cut at 63 bytes left the first byte of the 32nd. */
  char label[128] = "SYCL_PI_RECORD_LABEL=";
  for (int i = 0; i < 40; i++)
    strcat(label, "\xc3\xa9");
  char *db2 = tu_temp_path(".db");
  cr_assert_eq(record_into(db2, argv, POCL, label), 0);
  cr_assert_eq(pitrace(&out, &err, "sessions", db2, NULL), 0, "%s", err);
  cr_assert(strstr(out, "\xc3\xa9\xc3\xa9 "), "%s", out);
  cr_assert_null(strstr(out, "\xc3 "), "%s", out);
}

/* A command (python3 -c "...") or a label of several lines is one line
 * in the headings of stats and diff too, as in sessions: they printed it
 * as it was, the heading spilling over several lines. */
Test(viewer, stats_and_diff_headings_put_a_command_of_several_lines_on_one)
{
  char *a = tu_temp_path(".db"), *b = tu_temp_path(".db"), *out, *err;
  const char *argv[] = {BIN "/vadd", "1024\nsecond line", NULL};
  cr_assert_eq(record_into(a, argv, POCL, "SYCL_PI_RECORD_LABEL=two\nlines"), 0);
  cr_assert_eq(record_into(b, argv, POCL, NULL), 0);
  cr_assert_eq(pitrace(&out, &err, "stats", a, b, NULL), 0, "%s", err);
  cr_assert(strstr(out, "== process 1 of 2: pid "), "%s", out);
  cr_assert(strstr(out, "/vadd 1024 second line\n"), "%s", out);
  cr_assert(strstr(out, " (label two lines): "), "%s", out);
  cr_assert_null(strstr(out, "\nsecond line"), "%s", out);
  cr_assert_null(strstr(out, "\nlines"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", a, b, NULL), 0, "%s", err);
  cr_assert(strstr(out, "/vadd 1024 second line (45 calls)\n+++ B: "), "%s", out);
  cr_assert_null(strstr(out, "\nsecond line"), "%s", out);
}

Test(viewer, sessions_say_how_a_session_ended)
{
  char *crashed = tu_temp_path(".db"), *killed = tu_temp_path(".db");
  char *cfg = tu_write_temp(".conf", PITRACE_LIB_DIR "/libpi_test_partial.so\n");
  const char *use_device[] = {BIN "/use_device", NULL};
  cr_assert_eq(record_into(crashed, use_device, kv("SYCL_PI_CONFIG", cfg), "PI_TEST_CRASH=1"),
               128 + SIGSEGV);
  const char *kill_prog[] = {BIN "/record_prog", "kill", "20", NULL};
  cr_assert_eq(record_into(killed, kill_prog, POCL, NULL), 128 + SIGKILL);
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "sessions", crashed, NULL), 0, "%s", err);
  cr_assert(strstr(out, "signal 11"), "%s", out);
  cr_assert(strstr(out, "partial test device"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "sessions", killed, NULL), 0, "%s", err);
  /* Its ring file was salvaged when pitrace opened it: how it ended and
   * what was salvaged, and how long it ran until its last call. */
  cr_assert(strstr(out, "killed or _exit: the process ended without a word; "), "%s", out);
  cr_assert(strstr(out, " salvaged from its rings"), "%s", out);
  cr_assert_eq(sql_int(killed, "SELECT duration_ns > 0 FROM sessions"), 1);
  /* That is how long it ran at least (docs/viewer.md): the crashed one's
   * end is known. */
  cr_assert(strstr(out, " >="), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "sessions", crashed, NULL), 0, "%s", err);
  cr_assert_null(strstr(out, ">="), "%s", out);
}

/* ---- show ------------------------------------------------------------------------- */

/* Length of the pointer-like token at p: an address of the live trace
 * ("0x7ffd..."), a handle of the show ("queue#4") or "ptr"; 0 if none. */
static size_t pointer_token(const char *text, const char *p)
{
  static const char *const kinds[] = {"platform#", "device#", "context#", "queue#", "mem#",
                                      "program#", "kernel#", "event#", "usm#", "mapped#"};
  if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
    return 0;
  size_t hex = strncmp(p, "0x", 2) == 0 ? strspn(p + 2, "0123456789abcdef") : 0;
  if (hex >= 6)
    return hex + 2;
  if (strncmp(p, "ptr", 3) == 0 && !isalnum((unsigned char)p[3]))
    return 3;
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
    if (strncmp(p, kinds[k], strlen(kinds[k])) == 0 && isdigit((unsigned char)p[strlen(kinds[k])]))
      return strlen(kinds[k]) + strspn(p + strlen(kinds[k]), "0123456789");
  return 0;
}

/* A trace with its pointers and handles as "X": what a recording keeps. */
static char *normalized(const char *text)
{
  char *out = malloc(strlen(text) + 1), *w = out;
  for (const char *p = text; *p;) {
    size_t n = pointer_token(text, p);
    if (n) {
      *w++ = 'X';
      p += n;
    } else {
      *w++ = *p++;
    }
  }
  *w = 0;
  return out;
}

/* Whether text holds a pointer-sized hex number (an address the show
 * should have named). */
static bool has_address(const char *text)
{
  for (const char *p = text; (p = strstr(p, "0x")); p += 2)
    if (strspn(p + 2, "0123456789abcdef") >= 8)
      return true;
  return false;
}

Test(viewer, show_prints_the_live_trace_blocks_with_typed_arguments)
{
  /* A run recorded and traced live: show prints what the live trace
   * printed, but for addresses and handles. */
  char *db2 = tu_temp_path(".db"), *trace = tu_temp_path(".trace");
  const char *argv[] = {BIN "/vadd", NULL};
  const char *env[] = {kv("SYCL_PI_RECORD", db2), POCL, "SYCL_PI_TRACE=2",
                       kv("SYCL_PI_TRACE_FILE", trace), NULL};
  char *out, *err;
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert_eq(pitrace(&out, &err, "show", db2, NULL), 0, "%s", err);
  cr_assert_str_eq(normalized(out), normalized(tu_read_file(trace)));
  cr_assert(strstr(out, "---> piEnqueueKernelLaunch(\n\tpi_queue queue : queue#"), "%s", out);
  cr_assert(strstr(out, "\tpi_kernel kernel : kernel#"), "%s", out);
  cr_assert(strstr(out, "\tconst size_t * global_work_size : ptr [ 1024 ]\n"), "%s", out);
  cr_assert(strstr(out, "\t[out]pi_event * event : ptr [ event#"), "%s", out);
  cr_assert(strstr(out, "\tconst char * kernel_name : \"vadd\"\n"), "%s", out);
  cr_assert(strstr(out, "\tpi_mem_flags flags : PI_MEM_ACCESS_READ_ONLY|PI_MEM_FLAGS_HOST_PTR_COPY"),
            "%s", out);
  char want[512];
  snprintf(want, sizeof want, "\t[out]void * param_value : ptr [ \"%s\" ]", device_name(db2));
  cr_assert(strstr(out, want), "no %s in:\n%s", want, out);
  /* Data previews come from the recorded bytes: the read-back of vadd. */
  char *hex = sql(db2, "SELECT lower(substr(hex, 1, 8)) FROM data WHERE role = 'out'");
  snprintf(want, sizeof want, "\t[out]void * ptr : ptr (4096 bytes: %.2s %.2s %.2s %.2s", hex,
           hex + 2, hex + 4, hex + 6);
  cr_assert(strstr(out, want), "no %s in:\n%s", want, out);
  cr_assert(!has_address(out), "an address or a tagged value leaked:\n%s", out);
  cr_assert_null(strstr(out, "\033["), "colours off a terminal");
}

Test(viewer, show_puts_notes_before_the_call_they_belong_to)
{
  char *db = record("spec_const", POCL);
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "show", db, NULL), 0, "%s", err);
  char *note = strstr(out, "SYCL_PI_TRACE[basic]: Spec constant 'coeff_id'");
  cr_assert(note, "%s", out);
  cr_assert(strncmp(strchr(note, '\n') + 1, "---> piMemBufferCreate(", 23) == 0, "%s", note);
  cr_assert_eq(pitrace(&out, &err, "show", "--compact", db, NULL), 0, "%s", err);
  note = strstr(out, "# Link decision: kernel 'convolution'");
  cr_assert(note, "%s", out);
  cr_assert(strstr(strchr(note, '\n'), " piclProgramCreateWithSource("), "%s", note);
  /* A property's value as the type pi.api gives its key (hex before). */
  cr_assert(strstr(out, "piextQueueCreate(context#") && strstr(out, ", [PI_QUEUE_FLAGS=0, 0], "),
            "%s", out);
}

/* A program made from its binary passes no metadata (NULL): show printed
 * "metadata : ptr", a pointer to memory, as the recorder stored an empty
 * list for it. */
Test(viewer, show_prints_a_null_binary_metadata_as_null)
{
  char *db = tu_temp_path(".db"), *cache = tu_temp_path(".cache"), *out, *err;
  cr_assert_eq(mkdir(cache, 0700), 0);
  const char *argv[] = {BIN "/test_api", "--filter", "api/program_from_its_own_binary",
                        "--jobs", "1", NULL};
  /* BXFI_MAP would make the suite think it is one of this suite's test
   * processes. */
  const char *env[] = {kv("SYCL_PI_RECORD", db), POCL, kv("POCL_CACHE_DIR", cache), "BXFI_MAP=",
                       NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert_eq(pitrace(&out, &err, "show", "--api", "piProgramCreateWithBinary", db, NULL), 0,
               "%s", err);
  cr_assert(strstr(out, "\tsize_t num_metadata_entries : 0\n"
                        "\tconst pi_device_binary_property * metadata : NULL\n"), "%s", out);
}

/* A callback's note names its event as the calls do, event#N: it printed
 * the address the implementation passed ("callback of event 0x55d0...").
 * callback_app releases each event right after setting its callback, so
 * the callback often runs after the release: still the event it was set
 * on. */
Test(viewer, show_names_a_callbacks_event_by_its_id)
{
  char *dir = tu_temp_path(".d"), *out, *err;
  const char *argv[] = {PITRACE, "record", "-o", dir, "--", BIN "/callback_app", NULL};
  const char *env[] = {POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "callback_app: 8 callbacks ran"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "show", "--compact", dir, NULL), 0, "%s", err);
  cr_assert_eq(tu_count(out, "# callback of event#"), 8, "%s", out);
  for (const char *p = out; (p = strstr(p, "# callback of event#")); p++) {
    long long id = atoll(p + strlen("# callback of event#"));
    cr_assert(strstr(out, fmt("piEventSetCallback(event#%lld, ", id)),
              "event#%lld was given no callback:\n%s", id, out);
  }
  cr_assert_eq(pitrace(&out, &err, "show", dir, NULL), 0, "%s", err);
  cr_assert_eq(tu_count(out, "]: callback of event#"), 8, "%s", out);
  cr_assert_null(strstr(out, "callback of event 0x"), "%s", out);
}

Test(viewer, compact_errors_lists_only_the_failing_calls)
{
  char *db = tu_temp_path(".db");
  char *cfg = tu_write_temp(".conf", PITRACE_LIB_DIR "/libpi_test_partial.so\n");
  const char *argv[] = {BIN "/use_device", NULL};
  cr_assert_eq(record_into(db, argv, kv("SYCL_PI_CONFIG", cfg), "PI_TEST_CRASH=1"),
               128 + SIGSEGV);
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "show", "--compact", "--errors", db, NULL), 0, "%s", err);
  long long failing = sql_int(db, "SELECT count(*) FROM pi_calls WHERE result IS NULL OR "
                                  "result <> 'PI_SUCCESS'");
  cr_assert_geq(failing, 2);
  cr_assert_eq(lines(out), failing, "%s", out);
  cr_assert_eq(tu_count(out, "= PI_ERROR_") + tu_count(out, "= (never returned)"), failing,
               "%s", out);
  /* The plugin's one device, by the handle id the session gave it (ids
   * count every handle the session saw, so they are not fixed numbers). */
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM pi_handles WHERE kind = 'device'"), 1);
  char want[256];
  snprintf(want, sizeof want, "piContextCreate(NULL, 1, [%s], NULL, NULL, ->_) = (never returned)",
           sql(db, "SELECT handle FROM pi_handles WHERE kind = 'device' AND created_by = "
                   "'piDevicesGet'"));
  cr_assert(strstr(out, want), "no '%s' in:\n%s", want, out);
  cr_assert_eq(pitrace(&out, &err, "show", "--compact", db, NULL), 0, "%s", err);
  cr_assert_eq(lines(out), sql_int(db, "SELECT count(*) FROM pi_calls"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "show", "--errors", db, NULL), 0, "%s", err);
  cr_assert(strstr(out, ") ---> piContextCreate never returned (the session ended: signal 11)"),
            "%s", out);
  cr_assert_eq(pitrace(&out, &err, "stats", db, NULL), 0, "%s", err);
  cr_assert(strstr(out, "; 2 failed, 1 never returned\n"), "%s", out);
  cr_assert(strstr(out, "\n(no kernel launches)\n"), "%s", out);
}

Test(viewer, show_filters_by_api_thread_and_sequence)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "threads", "2", "300", NULL};
  cr_assert_eq(record_into(db, argv, POCL, NULL), 0);
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "show", "--compact", "--api", "piPlatform*", db, NULL), 0);
  cr_assert_eq(lines(out), sql_int(db, "SELECT count(*) FROM pi_calls WHERE api LIKE "
                                       "'piPlatform%'"), "%s", out);
  cr_assert_eq(tu_count(out, " piPlatform"), lines(out), "%s", out);
  /* Several patterns: a comma-separated list. The option twice kept only
   * the last without a word; it is refused (as any option twice, but
   * diff's --ignore/--only, which add up). */
  int platform = lines(out);
  cr_assert_eq(pitrace(&out, &err, "show", "--compact", "--api", "piPlatform*,piDeviceGetInfo", db,
                       NULL), 0, "%s", err);
  cr_assert_eq(lines(out), platform + sql_int(db, "SELECT count(*) FROM pi_calls WHERE api = "
                                                  "'piDeviceGetInfo'"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "show", "--api", "piPlatform*", "--api", "piDeviceGetInfo", db,
                       NULL), 2);
  cr_assert(strstr(err, "--api is given twice") && lines(err) == 1, "%s", err);
  cr_assert_eq(pitrace(&out, &err, "show", "--api", "piPlatform*,", db, NULL), 2);
  cr_assert(strstr(err, "an empty pattern") && lines(err) == 1, "%s", err);
  cr_assert_eq(pitrace(&out, &err, "show", "--compact", "--thread", "2", db, NULL), 0);
  cr_assert_eq(lines(out), 300, "%s", out);
  cr_assert_eq(tu_count(out, " T2 piDeviceGetInfo("), 300, "%s", out);
  cr_assert_eq(pitrace(&out, &err, "show", "--compact", "--seq", "3..7", db, NULL), 0);
  cr_assert_eq(lines(out), 5, "%s", out);
  cr_assert(strncmp(out, "      3 ", 8) == 0 && strstr(out, "\n      7 "), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "show", "--thread", "3", db, NULL), 0);
  cr_assert_eq(tu_count(out, "---> piDeviceGetInfo( [thread 3]\n"), 300, "%s", out);
  /* Threads count from 1; one the session does not have is said (0 and 4
   * showed nothing and exited 0). */
  const char *no_thread[] = {"0", "4"};
  for (int i = 0; i < 2; i++) {
    cr_assert_eq(pitrace(&out, &err, "show", "--thread", no_thread[i], db, NULL), 2, "%s", err);
    cr_assert_eq(lines(err), 1, "%s", err);
    cr_assert(strstr(err, i ? "no such thread (its threads: 1-3)" : "1 or more"), "%s", err);
  }
  char *html = tu_temp_path(".html");
  cr_assert_eq(pitrace(&out, &err, "report", db, "-o", html, NULL), 0, "%s", err);
  cr_assert(strstr(tu_read_file(html), ",\"threads\":3,"), "three threads made calls");
  /* A seq past 64 bits is refused, as --session's is (it was taken as the
   * largest); so are signs and spaces. */
  const char *bad[] = {"9..2", "1..99999999999999999999", "99999999999999999999", "-1", " 3",
                       "1...3"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_assert_eq(pitrace(&out, &err, "show", "--seq", bad[i], db, NULL), 2, "%s", bad[i]);
    cr_assert_eq(lines(err), 1, "%s", err);
  }
  cr_assert_eq(pitrace(&out, &err, "show", "--compact", "--seq", "..2", db, NULL), 0);
  cr_assert_eq(lines(out), 2, "%s", out);
}

/* ---- stats ------------------------------------------------------------------------ */

Test(viewer, stats_agree_with_the_database)
{
  char *db = record("vadd", POCL);
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "stats", db, NULL), 0, "%s", err);
  /* Every API row: calls and errors as the database counts them. */
  int rows = 0;
  for (char *p = strstr(out, "\nAPI ") + 1; (p = strchr(p, '\n')) && p[1] != '\n'; rows++) {
    char api[128], query[512];
    long long calls, errors;
    p++;
    cr_assert_eq(sscanf(p, "%127s %lld", api, &calls), 2, "%s", p);
    errors = atoll(strrchr(strndup(p, (size_t)(strchr(p, '\n') - p)), ' '));
    snprintf(query, sizeof query, "SELECT count(*) || ' ' || sum(result <> 'PI_SUCCESS') FROM "
             "pi_calls WHERE api = '%s'", api);
    char got[64];
    snprintf(got, sizeof got, "%lld %lld", calls, errors);
    cr_assert_str_eq(got, sql(db, query), "%s", api);
  }
  cr_assert_eq(rows, sql_int(db, "SELECT count(DISTINCT api) FROM pi_calls"), "%s", out);
  cr_assert(strstr(out, "\nvadd                                           1 "), "%s", out);
  char want[128];
  snprintf(want, sizeof want, "host to device  %s bytes",
           sql(db, "SELECT sum(CAST(a.value AS INTEGER)) FROM pi_args a JOIN pi_calls c USING "
                   "(session, seq) WHERE a.name = 'size' AND (c.api = 'piEnqueueMemBufferWrite' "
                   "OR (c.api = 'piMemBufferCreate' AND seq IN (SELECT seq FROM pi_args WHERE "
                   "name = 'flags' AND value LIKE '%HOST_PTR_COPY%')))"));
  cr_assert(strstr(out, want), "no '%s' in:\n%s", want, out);
  snprintf(want, sizeof want, "device to host  %s bytes",
           sql(db, "SELECT sum(CAST(a.value AS INTEGER)) FROM pi_args a JOIN pi_calls c USING "
                   "(session, seq) WHERE a.name = 'size' AND c.api = 'piEnqueueMemBufferRead'"));
  cr_assert(strstr(out, want), "no '%s' in:\n%s", want, out);
}

/* An image made with the host's data copied moves its pixels to the
 * device, as a buffer made so does: image_app makes a 37x23 RGBA float
 * image from host memory (13616 bytes); its other images are R float ones
 * it writes into (4 bytes a pixel). stats left the image's bytes out. */
Test(viewer, stats_count_an_image_made_from_host_data)
{
  char *dir = tu_temp_path(".d"), *db = tu_temp_path(".db"), *out, *err;
  const char *argv[] = {PITRACE, "record", "-o", dir, "--", BIN "/image_app", NULL};
  const char *env[] = {POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  const char *cp[] = {"/bin/sh", "-c", "cp \"$0\"/*.db \"$1\"", dir, db, NULL};
  cr_assert_eq(tu_run(cp, NULL, &out), 0, "%s", out);
  cr_assert_eq(pitrace(&out, &err, "stats", db, NULL), 0, "%s", err);
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM pi_calls WHERE api IN ('piEnqueueMemBufferWrite',"
                           " 'piEnqueueMemBufferFill') OR (api = 'piMemBufferCreate' AND seq IN "
                           "(SELECT seq FROM pi_args WHERE name = 'flags' AND value LIKE "
                           "'%HOST_PTR%'))"), 0, "image_app moves buffer bytes now");
  long long writes = sql_int(db, "SELECT sum(json_extract(args, '$[4][0]') * json_extract(args, "
                                 "'$[4][1]') * json_extract(args, '$[4][2]') * 4) FROM calls "
                                 "WHERE api = (SELECT id FROM pi_api WHERE name = "
                                 "'piEnqueueMemImageWrite')");
  cr_assert_gt(writes, 0);
  char want[128];
  snprintf(want, sizeof want, "host to device  %lld bytes", 37 * 23 * 16 + writes);
  cr_assert(strstr(out, want), "no '%s' in:\n%s", want, out);
}

/* ---- diff ------------------------------------------------------------------------- */

/* The value of key in a parsed JSON object, or NULL. */
static pt_json *member(const pt_json *o, const char *key)
{
  for (uint32_t i = 0; o && o->type == PJ_OBJECT && i < o->n; i++)
    if (strcmp(o->u.items[2 * i]->u.s, key) == 0)
      return o->u.items[2 * i + 1];
  return NULL;
}

static pt_json *parse(pt_json_arena *a, const char *text)
{
  char err[256] = "";
  pt_json *j = pt_json_parse(a, text, strlen(text), err, sizeof err);
  cr_assert(j, "%s", err);
  return j;
}

/* The JSON reader of version-1 chunks takes the most negative int64_t (a
 * call's argument may hold it): its negation overflowed int64_t, which
 * UBSan stopped show, stats, diff, export and report at (the sanitized
 * build; elsewhere undefined). */
Test(viewer, json_reads_the_most_negative_int64)
{
  pt_json_arena a = {0};
  pt_json *j = parse(&a, "[-9223372036854775808, -9223372036854775807, 9223372036854775807, "
                         "-1]");
  cr_assert(j->type == PJ_ARRAY && j->n == 4);
  const int64_t want[] = {INT64_MIN, INT64_MIN + 1, INT64_MAX, -1};
  for (uint32_t i = 0; i < 4; i++) {
    cr_assert_eq(j->u.items[i]->type, PJ_INT, "%u", i);
    cr_assert_eq(j->u.items[i]->u.i, want[i], "%u: %lld", i, (long long)j->u.items[i]->u.i);
  }
  pt_json_arena_free(&a);
}

Test(viewer, diff_of_two_backends_names_the_device_info_that_differs)
{
  char *pocl = record("vadd", POCL), *rusticl = record("vadd", RUSTICL);
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "diff", pocl, rusticl, NULL), 1, "%s%s", out, err);
  cr_assert(strstr(out, "info param_value (PI_DEVICE_INFO_NAME): "), "%s", out);
  cr_assert(strstr(out, device_name(pocl)) && strstr(out, device_name(rusticl)), "%s", out);
  cr_assert(strstr(out, ": different\n"), "%s", out);
  /* vadd's calls differ in nothing but the info answers. */
  cr_assert_eq(pitrace(&out, &err, "diff", "--no-info", pocl, rusticl, NULL), 0, "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", "--json", pocl, rusticl, NULL), 1, "%s", err);
  pt_json_arena a = {0};
  pt_json *j = parse(&a, out);
  cr_assert_eq(member(j, "same")->u.i, 0);
  pt_json *d = member(j, "differences");
  bool named = false;
  for (uint32_t i = 0; d && i < d->n; i++)
    named |= strstr(member(d->u.items[i], "what")->u.s, "PI_DEVICE_INFO_NAME") != NULL;
  cr_assert(named, "%s", out);
  pt_json_arena_free(&a);
}

Test(viewer, diff_of_one_program_twice_on_one_device_is_the_same)
{
  char *a = record("vadd", POCL), *b = record("vadd", POCL);
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "diff", a, b, NULL), 0, "%s%s", out, err);
  cr_assert(strstr(out, ": same\n"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", a, a, NULL), 0, "%s%s", out, err);
  char *s1 = record("spec_const", POCL), *s2 = record("spec_const", POCL);
  cr_assert_eq(pitrace(&out, &err, "diff", s1, s2, NULL), 0, "%s%s", out, err);
}

/* Records `pitrace replay DB` on the device of icd into a new database. */
static char *record_replay(const char *db, const char *icd)
{
  char *b = tu_temp_path(".db"), *out;
  const char *argv[] = {PITRACE, "replay", db, NULL};
  const char *env[] = {kv("SYCL_PI_RECORD", b), icd, "RUSTICL_ENABLE=swrast", NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "replay of %s: %s", db, out);
  free(out);
  return b;
}

static bool replay_built(void)
{
  const char *help[] = {PITRACE, "replay", "--help", NULL};
  char *out;
  bool ok = tu_run(help, NULL, &out) == 0;
  free(out);
  return ok;
}

#define SAME_SUMMARY                                                                          \
  "only in A 0, only in B 0; differences: 0 argument, 0 result, 0 info, 0 data, 0 note, 0 " \
  "order"

Test(viewer, diff_of_a_session_and_its_replay_finds_the_calls_the_same)
{
  if (!replay_built())
    cr_skip_test("pitrace replay is not built");
  char *out, *err;
  /* The replay's runtime discovers the devices as the application's did,
   * and the replay issues the rest: the same calls, info queries included.
   * Also with a device filter, where no other plugin is probed after the
   * last platform's devices are looked at; and for programs the runtime
   * linked or specialised, whose decisions (notes) the replay hands on. */
  const struct {
    const char *app, *filter;
  } runs[] = {{BIN "/vadd", NULL},
              {BIN "/vadd", "SYCL_DEVICE_FILTER=opencl:cpu:0"},
              {BIN "/shared_lib", NULL},
              {BIN "/spec_const", NULL}};
  for (int k = 0; k < 4; k++) {
    char *a = tu_temp_path(".db");
    const char *app[] = {runs[k].app, NULL};
    cr_assert_eq(record_into(a, app, POCL, runs[k].filter), 0);
    const char *argv[] = {PITRACE, "replay", a, NULL};
    char *b = tu_temp_path(".db");
    const char *env[] = {kv("SYCL_PI_RECORD", b), POCL, runs[k].filter, NULL};
    cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
    cr_assert_eq(pitrace(&out, &err, "diff", a, b, NULL), 0, "%s%s", out, err);
    cr_assert(strstr(out, SAME_SUMMARY ": same"), "%s: %s", runs[k].app, out);
  }
}

/* An application that leaves its objects to the process's end: its
 * recorded replay releases them at its end (marked by `replay` notes),
 * and the diff lists those calls apart without counting them. On both
 * devices. */
Test(viewer, diff_of_a_leaking_session_and_its_replay_is_the_same)
{
  if (!replay_built())
    cr_skip_test("pitrace replay is not built");
  const char *icds[] = {POCL, RUSTICL};
  for (int d = 0; d < 2; d++) {
    char *a = record("diff_leak", icds[d]), *b = record_replay(a, icds[d]), *out, *err;
    /* What the application never released: each is released by the replay. */
    long long leaked = sql_int(a, "SELECT count(*) FROM handles WHERE created = 1 AND "
                                  "released_seq IS NULL AND kind NOT IN ('platform', 'device')");
    cr_assert_geq(leaked, 7, "%lld", leaked);
    cr_assert_eq(sql_int(b, "SELECT count(*) FROM notes WHERE kind = 'replay' AND text LIKE "
                            "'%clean-up%'"), leaked);
    cr_assert_eq(sql_int(b, "SELECT count(*) FROM calls") - sql_int(a, "SELECT count(*) FROM "
                                                                     "calls"), leaked);
    cr_assert_eq(pitrace(&out, &err, "diff", a, b, NULL), 0, "%s%s", out, err);
    char want[160];
    snprintf(want, sizeof want, SAME_SUMMARY "; not counted: %lld replay's own, 0 teardown: same",
             leaked);
    cr_assert(strstr(out, want), "%s", out);
    cr_assert_eq(tu_count(out, "\n= "), leaked, "%s", out);
    cr_assert(strstr(out, "piContextRelease(context#3) = PI_SUCCESS  [pitrace replay's clean-up: "
                          "releases context#3 (made at recorded seq "), "%s", out);
    /* The other way round too. */
    cr_assert_eq(pitrace(&out, &err, "diff", b, a, NULL), 0, "%s%s", out, err);
    cr_assert_eq(pitrace(&out, &err, "diff", "--json", a, b, NULL), 0, "%s", err);
    pt_json_arena ar = {0};
    pt_json *j = parse(&ar, out), *v = member(j, "differences");
    cr_assert_eq(member(member(j, "summary"), "replay")->u.i, leaked);
    for (uint32_t i = 0; i < v->n; i++) {
      cr_assert_str_eq(member(v->u.items[i], "kind")->u.s, "replay");
      cr_assert(member(v->u.items[i], "counted")->type == PJ_BOOL && !member(v->u.items[i], "counted")->u.i);
    }
    pt_json_arena_free(&ar);
  }
}

/* The replay's data checks (a non-blocking read's event kept, waited for
 * and released) and its teardown of a process that ended by _exit are the
 * replay's, not differences. */
Test(viewer, diff_of_a_replay_leaves_out_its_data_checks_and_teardown)
{
  if (!replay_built())
    cr_skip_test("pitrace replay is not built");
  char *out, *err;
  char *a = tu_temp_path(".db");
  const char *readback[] = {BIN "/record_prog", "readback", NULL};
  cr_assert_eq(record_into(a, readback, POCL, NULL), 0);
  char *b = record_replay(a, POCL);
  cr_assert_eq(pitrace(&out, &err, "diff", a, b, NULL), 0, "%s%s", out, err);
  cr_assert(strstr(out, "piEventsWait(1, [event#") && strstr(out, "[pitrace replay's data check: "
                                                                  "waits for the event of "),
            "%s", out);
  cr_assert(strstr(out, SAME_SUMMARY "; not counted: 3 replay's own, 0 teardown: same"), "%s",
            out);

  char *x = tu_temp_path(".db");
  const char *quit[] = {BIN "/record_prog", "exit", "3", NULL};
  cr_assert_eq(record_into(x, quit, POCL, NULL), 3);
  cr_assert_eq(sql_int(x, "SELECT count(*) FROM pi_calls WHERE api = 'piTearDown'"),
               0);
  char *y = record_replay(x, POCL);
  cr_assert_gt(sql_int(y, "SELECT count(*) FROM pi_calls WHERE api = 'piTearDown'"),
               0);
  cr_assert_eq(pitrace(&out, &err, "diff", x, y, NULL), 0, "%s%s", out, err);
  cr_assert(strstr(out, "piTearDown(NULL) = PI_SUCCESS  [teardown, in one session only"), "%s",
            out);
  cr_assert(strstr(out, "; not counted: 0 replay's own, "), "%s", out);
  cr_assert(strstr(out, " teardown: same"), "%s", out);
}

/* PoCL against rusticl: the same program on two devices differs in what
 * the devices say of themselves, results and data, never in handles. */
Test(viewer, diff_of_pocl_and_rusticl_lists_only_real_differences)
{
  const char *progs[] = {"vadd", "diff_leak", "shared_lib", "spec_const"};
  for (int k = 0; k < 4; k++) {
    char *pocl = record(progs[k], POCL), *rusticl = record(progs[k], RUSTICL), *out, *err;
    cr_assert_eq(pitrace(&out, &err, "diff", "--json", pocl, rusticl, NULL), 1, "%s%s", out,
                 err);
    pt_json_arena ar = {0};
    pt_json *j = parse(&ar, out), *v = member(j, "differences");
    cr_assert_gt(member(member(j, "summary"), "info")->u.i, 0, "%s", progs[k]);
    for (uint32_t i = 0; i < v->n; i++) {
      const char *kind = member(v->u.items[i], "kind")->u.s;
      cr_assert(strcmp(kind, "info") == 0 || strcmp(kind, "data") == 0 ||
                    strcmp(kind, "note") == 0 || strcmp(kind, "result") == 0,
                "%s: %s: %s", progs[k], kind, member(v->u.items[i], "what")->u.s);
      if (strcmp(kind, "note") == 0) /* the runtime's notes name the device */
        cr_assert(strstr(member(v->u.items[i], "a")->u.s, device_name(pocl)), "%s", out);
    }
    pt_json_arena_free(&ar);
  }
}

/* Both devices visible to both runs; the first runs on PoCL's device, the
 * second on rusticl's: the discovery is the same, so each session's device
 * corresponds to the other's of the same platform, and the calls that use
 * one are real differences naming both devices by the calls that made them. */
Test(viewer, diff_reports_a_handle_that_corresponds_to_another_object)
{
  char *dir = tu_temp_path(".d");
  cr_assert_eq(mkdir(dir, 0700), 0);
  char pocl_icd[4200], rusticl_icd[4200];
  snprintf(pocl_icd, sizeof pocl_icd, "%s/pocl.icd", dir);
  snprintf(rusticl_icd, sizeof rusticl_icd, "%s/rusticl.icd", dir);
  const char *cp[] = {"/bin/cp", "/etc/OpenCL/vendors/pocl.icd",
                      "/etc/OpenCL/vendors/rusticl.icd", dir, NULL};
  char *cpout;
  cr_assert_eq(tu_run(cp, NULL, &cpout), 0, "%s", cpout);
  char *icd = kv("OCL_ICD_VENDORS", dir), *db[2];
  const char *app[] = {BIN "/vadd", NULL};
  for (int d = 0; d < 2; d++) {
    db[d] = tu_temp_path(".db");
    cr_assert_eq(record_into(db[d], app, icd, d ? "SYCL_DEVICE_FILTER=opencl:cpu:1"
                                                : "SYCL_DEVICE_FILTER=opencl:cpu:0"), 0);
  }
  long long used[2], other[2], made[2][2];
  for (int d = 0; d < 2; d++) {
    used[d] = sql_int(db[d], "SELECT substr(value, 8) FROM pi_args WHERE seq = (SELECT min(seq) FROM "
                             "pi_calls WHERE api = 'piextQueueCreate') AND name = 'device'");
    other[d] = sql_int(db[d], "SELECT id FROM handles WHERE kind = 'device' ORDER BY id");
    made[d][0] = sql_int(db[d], "SELECT created_seq FROM handles WHERE kind = 'device' ORDER BY id");
    made[d][1] = sql_int(db[d], "SELECT created_seq FROM handles WHERE kind = 'device' ORDER BY "
                                "id DESC");
  }
  cr_assert_eq(used[0], other[0], "the first run uses the first platform's device");
  cr_assert_neq(used[1], other[1], "the second run uses the second platform's device");
  char *out, *err, want[1024];
  cr_assert_eq(pitrace(&out, &err, "diff", "--no-info", db[0], db[1], NULL), 1, "%s%s", out, err);
  /* Explained where the context names them first, referred to after. */
  snprintf(want, sizeof want, "piContextCreate: argument devices: different objects: A's "
           "device#%lld (made by A %lld piDevicesGet: \"%s\") vs B's device#%lld (made by B %lld "
           "piDevicesGet: \"%s\"); A's corresponds to B's device#%lld, B's to A's device#%lld: "
           "[device#%lld] vs [device#%lld]", used[0], made[0][0], name_of(db[0], used[0]),
           used[1], made[1][1], name_of(db[1], used[1]), used[0], used[1], used[0], used[1]);
  cr_assert(strstr(out, want), "wanted %s in\n%s", want, out);
  long long ctx = sql_int(db[0], "SELECT min(seq) FROM pi_calls WHERE api = 'piContextCreate'");
  snprintf(want, sizeof want, "piextQueueCreate: argument device: different objects, as at A "
           "%lld: device#%lld vs device#%lld", ctx, used[0], used[1]);
  cr_assert(strstr(out, want), "wanted %s in\n%s", want, out);
  /* The context, the queue and the build name the device: three calls. */
  cr_assert(strstr(out, "differences: 3 argument, 0 result, 0 info, 0 data, 0 note, 0 order: "
                        "different"), "%s", out);
  /* With the context's line left out, the queue's explains them itself:
   * nothing refers to a line not shown. */
  cr_assert_eq(pitrace(&out, &err, "diff", "--no-info", "--ignore", "piContextCreate", db[0],
                       db[1], NULL), 1, "%s%s", out, err);
  long long queue = sql_int(db[0], "SELECT min(seq) FROM pi_calls WHERE api = 'piextQueueCreate'");
  snprintf(want, sizeof want, "as at A %lld:", ctx);
  cr_assert(!strstr(out, want) && !strstr(out, "piContextCreate: "), "%s", out);
  cr_assert(strstr(out, "piextQueueCreate: argument device: different objects: A's "), "%s", out);
  snprintf(want, sizeof want, "piProgramBuild: argument device_list: different objects, as at A "
           "%lld: ", queue);
  cr_assert(strstr(out, want), "wanted %s in\n%s", want, out);
  /* The same sessions each against itself: equal. */
  cr_assert_eq(pitrace(&out, &err, "diff", db[1], db[1], NULL), 0, "%s%s", out, err);
}

/* An OpenCL application (image_app, through the front end) recorded by
 * pitrace record -o DIR on PoCL and on rusticl: the directories, each of
 * one session file, are what diff opens; the implementations' image
 * formats (a front end's note, not a PI call) differ as the devices'
 * answers to info queries do, and --no-info leaves them out with those
 * (nothing else differs). A directory of two session files is refused in one line naming one. */
Test(viewer, diff_of_record_directories_counts_image_formats_as_info)
{
  char *dir[2], *out, *err;
  const char *icd[2] = {POCL, RUSTICL};
  for (int d = 0; d < 2; d++) {
    dir[d] = tu_temp_path(".d");
    const char *argv[] = {PITRACE, "record", "-o", dir[d], "--", BIN "/image_app", NULL};
    const char *env[] = {icd[d], "RUSTICL_ENABLE=swrast", NULL};
    cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
    cr_assert(strstr(out, "image_app: result verified"), "%s", out);
  }
  cr_assert_eq(pitrace(&out, &err, "diff", dir[0], dir[1], NULL), 1, "%s%s", out, err);
  const char *line = strstr(out, "info image_formats: image formats of the OpenCL implementation");
  cr_assert(line, "%s", out);
  cr_assert(!strstr(out, "note image_formats"), "%s", out);
  /* Without info, the two runs of one program on two devices are alike. */
  cr_assert_eq(pitrace(&out, &err, "diff", "--no-info", dir[0], dir[1], NULL), 0, "%s%s", out,
               err);
  cr_assert(!strstr(out, "image_formats"), "%s", out);
  /* Each directory against itself: equal, image formats and all. */
  cr_assert_eq(pitrace(&out, &err, "diff", dir[1], dir[1], NULL), 0, "%s%s", out, err);
  char path[4200];
  snprintf(path, sizeof path, "%s/second.db", dir[0]);
  const char *cp[] = {"/bin/sh", "-c", "cp \"$0\"/*.db \"$1\"", dir[1], path, NULL};
  cr_assert_eq(tu_run(cp, NULL, &out), 0, "%s", out);
  cr_assert_eq(pitrace(&out, &err, "show", dir[0], NULL), 2, "%s", out);
  cr_assert(strstr(err, "is a directory of 2 session files: name one (") && lines(err) == 1, "%s",
            err);
  /* The one it names is the first by name, wherever the directory lists
   * it (it named the first of the first two listed), of those that are
   * SQLite databases at all (it named 0junk.db, which no verb reads). */
  const char *more[] = {"/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do "
                        "cp \"$1\" \"$0/second-$i.db\" || exit 1; done; cp \"$1\" \"$0/a.db\" && "
                        "echo junk >\"$0/0junk.db\"",
                        dir[0], path, NULL};
  cr_assert_eq(tu_run(more, NULL, &out), 0, "%s", out);
  cr_assert_eq(pitrace(&out, &err, "show", dir[0], NULL), 2, "%s", out);
  char *first;
  cr_assert_geq(asprintf(&first, "is a directory of 16 session files: name one (%s/a.db, ...)",
                         dir[0]), 0);
  cr_assert(strstr(err, first) && lines(err) == 1, "%s", err);
}

/* Two record directories of several processes each (a CI job run twice):
 * diff pairs their sessions by command, in start order, and compares
 * each pair; a process only one run had is listed and makes them differ.
 * Sessions left unpaired then pair by program with as many arguments (a
 * temporary path that differs from run to run), which the pair says. */
Test(viewer, diff_of_record_directories_pairs_sessions_by_command)
{
  char *dir[8], *out, *err;
  const char *jobs[8] = {"$0/vadd && $0/spec_const", "$0/vadd && $0/spec_const",
                         "$0/vadd && $0/spec_const && $0/vadd", "$0/vadd 512 && $0/spec_const",
                         "$0/spec_const && $0/vadd 2048",
                         "$0/record_prog threads 1 10 && $0/record_prog threads 2 20",
                         "$0/record_prog threads 2 21 && $0/record_prog threads 1 11",
                         "$0/../bin/vadd && $0/../bin/spec_const"};
  for (int d = 0; d < 8; d++) {
    dir[d] = tu_temp_path(".d");
    const char *argv[] = {PITRACE, "record", "-o", dir[d], "--", "/bin/sh", "-c", jobs[d], BIN,
                          NULL};
    const char *env[] = {POCL, NULL};
    cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  }
  cr_assert_eq(pitrace(&out, &err, "diff", dir[0], dir[1], NULL), 0, "%s%s", out, err);
  cr_assert(strstr(out, "=== pair 1: pid ") && strstr(out, "=== pair 2: pid "), "%s", out);
  cr_assert(strstr(out, "directories: 2 pairs of sessions compared by command, 2 same, 0 "
                        "different; only in A 0, only in B 0: same"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", dir[0], dir[2], NULL), 1, "%s%s", out, err);
  cr_assert(strstr(out, "+ only in B: ") && strstr(out, "/vadd\n"), "%s", out);
  cr_assert(strstr(out, "2 pairs of sessions compared by command, 2 same, 0 different; only in "
                        "A 0, only in B 1: different"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", "--json", dir[2], dir[0], NULL), 1, "%s%s", out, err);
  cr_assert(strncmp(out, "{\"pairs\":[{\"paired_by\":\"command\",\"a\":", 35) == 0 &&
            strstr(out, "\"only_a\":[{\"path\":") && strstr(out, "\"only_b\":[]") &&
            strstr(out, "\"same\":false}"), "%s", out);
  /* vadd 512 and vadd 2048: paired by program (their data differ), the
   * other pair by command though it ran first in B. */
  cr_assert_eq(pitrace(&out, &err, "diff", dir[3], dir[4], NULL), 1, "%s%s", out, err);
  cr_assert(strstr(out, "=== pair 1: pid ") && strstr(out, " (paired by program: their commands "
                                                         "differ)\n--- A: "), "%s", out);
  cr_assert(strstr(out, "/vadd 512 (") && strstr(out, "/vadd 2048 ("), "%s", out);
  cr_assert(strstr(out, "directories: 2 pairs of sessions compared by command (1 of them by "
                        "program: their commands differ), 1 same, 1 different; only in A 0, "
                        "only in B 0: different"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", "--json", dir[3], dir[4], NULL), 1, "%s%s", out, err);
  cr_assert(strstr(out, "{\"paired_by\":\"program\",\"a\":") &&
            strstr(out, "{\"paired_by\":\"command\",\"a\":"), "%s", out);
  /* By program, a session pairs with the one whose arguments agree most
   * (a parallel job starts its processes in another order each run):
   * "threads 1 10" with "threads 1 11", not with "threads 2 21", which
   * started first in B. */
  cr_assert_eq(pitrace(&out, &err, "diff", dir[5], dir[6], NULL), 1, "%s%s", out, err);
  const char *a1 = strstr(out, "/record_prog threads 1 10 ("), *b1 = a1 ? strstr(a1, "+++ B: ")
                                                                          : NULL;
  const char *p1 = b1 ? strstr(b1, "/record_prog ") : NULL;
  cr_assert(p1 && strncmp(p1, "/record_prog threads 1 11 (", 27) == 0, "%s", out);
  cr_assert(strstr(out, "2 pairs of sessions compared by command (2 of them by program"), "%s",
            out);
  /* The same programs from another place (another build's bin/): paired
   * by program (they were never paired: their first words differ). */
  cr_assert_eq(pitrace(&out, &err, "diff", dir[0], dir[7], NULL), 0, "%s%s", out, err);
  cr_assert(strstr(out, "directories: 2 pairs of sessions compared by command (2 of them by "
                        "program: their commands differ), 2 same, 0 different; only in A 0, "
                        "only in B 0: same"), "%s", out);
  /* vadd without arguments and vadd 512: not the same program run alike.
   * One pair is "1 pair" (it said "1 pairs"). */
  cr_assert_eq(pitrace(&out, &err, "diff", dir[0], dir[3], NULL), 1, "%s%s", out, err);
  cr_assert(strstr(out, "directories: 1 pair of sessions compared by command, 1 same, 0 "
                        "different; only in A 1, only in B 1: different"), "%s", out);
  /* sessions lists a directory's sessions, each with its file, in the
   * order they started. */
  cr_assert_eq(pitrace(&out, &err, "sessions", dir[2], NULL), 0, "%s", err);
  cr_assert_eq(lines(out), 4, "%s", out);
  const char *v1 = strstr(out, "/vadd\n"), *sc = strstr(out, "/spec_const\n"),
             *v2 = v1 ? strstr(v1 + 1, "/vadd\n") : NULL;
  cr_assert(strncmp(out, "file ", 5) == 0 && v1 && sc && v2 && v1 < sc && sc < v2, "%s", out);
  cr_assert_eq(tu_count(out, "\npitrace-"), 3, "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", "--session-a", "1", dir[0], dir[1], NULL), 2, "%s", out);
  cr_assert(strstr(err, "pair by command") && lines(err) == 1, "%s", err);
  char *one = record("vadd", POCL);
  cr_assert_eq(pitrace(&out, &err, "diff", dir[0], one, NULL), 2, "%s", out);
  cr_assert(strstr(err, "give two record directories") && lines(err) == 1, "%s", err);
}

/* A record directory of one file that holds several sessions (a process
 * that exec'd another; two runs into one path): its sessions pair by
 * command as a directory's of several files do. Only each file's last
 * session was compared: "same", exit 0, where the first sessions differ.
 * stats and export given several files take every session of each, in
 * start order, and refuse a file named twice (it counted twice). */
Test(viewer, a_record_directory_of_one_file_of_two_sessions_pairs_them_all)
{
  char *dir[2], *out, *err;
  const char *first[2] = {"512", "2048"};
  for (int d = 0; d < 2; d++) {
    dir[d] = tu_temp_path(".d");
    cr_assert_eq(mkdir(dir[d], 0700), 0);
    char db[4096], vadd[4096], pipeline[4096];
    snprintf(db, sizeof db, "%s/one.db", dir[d]);
    snprintf(vadd, sizeof vadd, "%s/vadd", BIN);
    snprintf(pipeline, sizeof pipeline, "%s/pipeline", BIN);
    const char *a1[] = {vadd, first[d], NULL}, *a2[] = {pipeline, NULL};
    cr_assert_eq(record_into(db, a1, POCL, NULL), 0);
    cr_assert_eq(record_into(db, a2, POCL, NULL), 0);
  }
  cr_assert_eq(pitrace(&out, &err, "diff", dir[0], dir[1], NULL), 1, "%s%s", out, err);
  cr_assert(strstr(out, "/vadd 512 (") && strstr(out, "/vadd 2048 ("), "%s", out);
  cr_assert(strstr(out, "directories: 2 pairs of sessions compared by command (1 of them by "
                        "program: their commands differ), 1 same, 1 different"), "%s", out);
  /* stats of both files: four processes, vadd 512's first. */
  char a[4096], b[4096];
  snprintf(a, sizeof a, "%s/one.db", dir[0]);
  snprintf(b, sizeof b, "%s/one.db", dir[1]);
  cr_assert_eq(pitrace(&out, &err, "stats", b, a, NULL), 0, "%s", err);
  cr_assert_eq(tu_count(out, "\n== process "), 3, "%s", out); /* the first has no \n before */
  cr_assert(strncmp(out, "== process 1 of 4: ", 19) == 0, "%s", out);
  const char *p1 = strstr(out, "/vadd 512\n"), *p2 = strstr(out, "/vadd 2048\n");
  cr_assert(p1 && p2 && p1 < p2, "%s", out);
  cr_assert(strstr(out, "== all 4 processes\n4 sessions over "), "%s", out);
  /* A directory of one process: "all 1 processes", "1 sessions". */
  char *one = tu_temp_path(""), db1[4200];
  cr_assert_eq(mkdir(one, 0700), 0, "%s", one);
  snprintf(db1, sizeof db1, "%s/vadd.db", one);
  const char *a3[] = {BIN "/vadd", NULL};
  cr_assert_eq(record_into(db1, a3, POCL, NULL), 0);
  cr_assert_eq(pitrace(&out, &err, "stats", one, NULL), 0, "%s", err);
  cr_assert(strstr(out, "== all 1 process\n1 session over "), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "export", "--format", "csv", a, b, NULL), 0, "%s", err);
  /* pid,file,session,seq,...: seq 1 of each of the four sessions. */
  char want[4200];
  for (int d = 0; d < 2; d++)
    for (int k = 1; k <= 2; k++) {
      snprintf(want, sizeof want, ",%s,%d,1,", d ? b : a, k);
      cr_assert(strstr(out, want), "no %s in:\n%.2000s", want, out);
    }
  char alias[4096];
  snprintf(alias, sizeof alias, "%s/./one.db", dir[0]);
  const char *verbs[] = {"stats", "export"};
  for (int v = 0; v < 2; v++) {
    int rc = v ? pitrace(&out, &err, "export", "--format", "csv", a, alias, NULL)
               : pitrace(&out, &err, "stats", a, alias, NULL);
    cr_assert_eq(rc, 2, "%s: %s", verbs[v], out);
    cr_assert_eq(lines(err), 1, "%s", err);
    cr_assert(strstr(err, "are the same file"), "%s", err);
  }
  /* A file named beside the directory that holds it counted twice too. */
  for (int v = 0; v < 2; v++) {
    int rc = v ? pitrace(&out, &err, "export", "--format", "csv", dir[0], a, NULL)
               : pitrace(&out, &err, "stats", alias, dir[0], NULL);
    cr_assert_eq(rc, 2, "%s: %s", verbs[v], out);
    cr_assert_eq(lines(err), 1, "%s", err);
    cr_assert(strstr(err, v ? fmt("%s is in the directory %s too: its sessions would count "
                                  "twice", a, dir[0])
                            : fmt("%s is in the directory %s too (as %s)", alias, dir[0], a)),
              "%s", err);
  }
}

/* pitrace ARGS... (NULL-terminated) with at most `files` open files
 * (ulimit -n); stdout and stderr together in *out. */
static int pitrace_with_files(int files, char **out, const char *const *args)
{
  char limit[64];
  snprintf(limit, sizeof limit, "ulimit -n %d && exec \"$@\"", files);
  const char *argv[16] = {"/bin/sh", "-c", limit, "sh", PITRACE};
  for (int i = 5; i < 15 && (argv[i] = *args); i++, args++)
    ;
  return tu_run(argv, NULL, out);
}

/* A CI job's directory of many processes: 70 sessions (one recording
 * copied). Every verb that reads a directory reads them all with 48 open
 * files: each session's connection is open only while it is read. */
Test(viewer, directory_of_many_sessions_is_read_with_few_files_open)
{
  char *db = record("vadd", POCL), *dir = tu_temp_path(".d"), *out;
  const char *cp[] = {"/bin/sh", "-c", "mkdir \"$1\" && for i in $(seq 70); do cp \"$0\" "
                      "\"$1/pitrace-$i-1.db\"; done", db, dir, NULL};
  cr_assert_eq(tu_run(cp, NULL, &out), 0, "%s", out);
  long long calls = tu_db_int(db, "SELECT count(*) FROM pi_calls");
  cr_assert_gt(calls, 10);
  const char *stats[] = {"stats", dir, NULL};
  cr_assert_eq(pitrace_with_files(48, &out, stats), 0, "%s", out);
  cr_assert(strstr(out, "== process 70 of 70: ") && strstr(out, "== all 70 processes"), "%s",
            out);
  const char *diff[] = {"diff", dir, dir, NULL};
  cr_assert_eq(pitrace_with_files(48, &out, diff), 0, "%s", out);
  cr_assert(strstr(out, "directories: 70 pairs of sessions compared by command, 70 same, 0 "
                        "different; only in A 0, only in B 0: same"), "%s", out);
  char *jsonl = tu_temp_path(".jsonl"), *html = tu_temp_path(".html");
  const char *export[] = {"export", "--format", "jsonl", "-o", jsonl, dir, NULL};
  cr_assert_eq(pitrace_with_files(48, &out, export), 0, "%s", out);
  char *lines_out = tu_read_file(jsonl);
  cr_assert_not_null(lines_out);
  cr_assert_eq(lines(lines_out), 70 * calls, "%s", out);
  const char *report[] = {"report", "-o", html, dir, NULL};
  cr_assert_eq(pitrace_with_files(48, &out, report), 0, "%s", out);
  cr_assert_gt(tu_count(tu_read_file(html), "\"pid\":"), 69);
}

/* One file of a directory that is no session (a file cut short, another
 * program's database) stopped every directory verb: nothing of the other
 * sessions was shown. Each verb now reads the others, names each file it
 * skipped in one line, and exits 2 after its output; a directory of
 * nothing readable is an error. */
Test(viewer, a_directory_verb_skips_a_file_that_is_no_session_and_fails_after)
{
  char *db = record("vadd", POCL), *dir = tu_temp_path(".d"), *none = tu_temp_path(".d"), *out;
  const char *mk[] = {"/bin/sh", "-c", "mkdir \"$1\" \"$2\" && cp \"$0\" \"$1/pitrace-1-1.db\" "
                      "&& echo garbage > \"$1/cut.db\" && cp \"$1/cut.db\" \"$2/cut.db\" && "
                      "sqlite3 \"$1/other.db\" 'CREATE TABLE t(x)'", db, dir, none, NULL};
  cr_assert_eq(tu_run(mk, NULL, &out), 0, "%s", out);
  long long calls = tu_db_int(db, "SELECT count(*) FROM pi_calls");
  char *jsonl = tu_temp_path(".jsonl"), *html = tu_temp_path(".html");
  const char *verbs[][8] = {{PITRACE, "sessions", dir, NULL},
                            {PITRACE, "stats", dir, NULL},
                            {PITRACE, "diff", dir, dir, NULL},
                            {PITRACE, "export", "--format", "jsonl", "-o", jsonl, dir, NULL},
                            {PITRACE, "report", "-o", html, dir, NULL}};
  const char *shown[] = {"pitrace-1-1.db        1", "== process 1 of 1: ",
                         "directories: 1 pair of sessions compared by command, 1 same", "",
                         ""};
  for (size_t v = 0; v < sizeof verbs / sizeof *verbs; v++) {
    cr_assert_eq(tu_run(verbs[v], NULL, &out), 2, "%s: %s", verbs[v][1], out);
    if (*shown[v])
      cr_assert(strstr(out, shown[v]), "%s: %s", verbs[v][1], out);
    int per_dir = v == 2 ? 2 : 1; /* diff reads the directory twice */
    cr_assert_eq(tu_count(out, "/cut.db is not a pitrace session (not an SQLite database"),
                 per_dir, "%s: %s", verbs[v][1], out);
    cr_assert_eq(tu_count(out, "/other.db is an SQLite database but not a pitrace session"),
                 per_dir, "%s: %s", verbs[v][1], out);
    char *said = fmt("pitrace %s: %d files skipped (said above)", verbs[v][1], 2 * per_dir);
    cr_assert(strstr(out, said), "%s: %s", said, out);
  }
  char *lines_out = tu_read_file(jsonl);
  cr_assert(lines_out && lines(lines_out) == calls, "%s", lines_out);
  cr_assert_gt(tu_count(tu_read_file(html), "\"pid\":"), 0);
  const char *stats[] = {PITRACE, "stats", none, NULL};
  cr_assert_eq(tu_run(stats, NULL, &out), 2, "%s", out);
  cr_assert(strstr(out, fmt("pitrace stats: %s holds no session file it can read (1 skipped)",
                            none)), "%s", out);
  cr_assert_null(strstr(out, "== all"), "%s", out);
}

/* Runs SQL on a session database (to edit it). */
static void sql_exec(const char *db, const char *query)
{
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  tu_sqlite_views(h);
  char *msg = NULL;
  cr_assert_eq(sqlite3_exec(h, query, NULL, NULL, &msg), SQLITE_OK, "%s: %s", query, msg);
  sqlite3_close(h);
}

/* Sets element PATH (a JSON path inside the call) of call `seq` of a
 * session's chunks (made version-1 ones first: JSON to edit). */
static void set_in_call(const char *db, long long seq, const char *path, const char *value)
{
  char *q;
  sql_exec(db, TU_AS_V1_CHUNKS);
  cr_assert(asprintf(&q, "UPDATE chunks SET calls = json_set(calls, '$[' || (SELECT j.key FROM "
                         "json_each(chunks.calls) j WHERE json_extract(j.value, '$[0]') = %lld) "
                         "|| ']%s', json(%s)) WHERE EXISTS (SELECT 1 FROM json_each(chunks.calls) "
                         "j WHERE json_extract(j.value, '$[0]') = %lld)",
                     seq, path, value, seq) > 0);
  sql_exec(db, q);
  free(q);
}

/* A copy of a session database. */
static char *copy_db(const char *db)
{
  char *c = tu_temp_path(".db"), *out;
  const char *cp[] = {"/bin/cp", db, c, NULL};
  cr_assert_eq(tu_run(cp, NULL, &out), 0, "%s", out);
  free(out);
  return c;
}

/* Rewrites the session's call chunks with each call on the thread
 * `thread_of` gives it (0: where it is); threads 2 and 3 get rows in
 * threads. */
typedef struct move_calls {
  pt_chunk_enc enc;
  uint32_t (*thread_of)(int64_t seq);
} move_calls;

static bool move_call(void *ctx, const pt_chunk_call *c)
{
  move_calls *m = ctx;
  pt_chunk_call v = *c;
  v.thread = m->thread_of(c->seq) ? m->thread_of(c->seq) : c->thread;
  return pt_chunk_enc_add(&m->enc, &v);
}

static void move_calls_to_threads(const char *db, uint32_t (*thread_of)(int64_t seq))
{
  sqlite3 *h;
  sqlite3_stmt *rd, *wr;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT id, calls FROM call_chunks WHERE session = 1", -1,
                                  &rd, NULL), SQLITE_OK);
  cr_assert_eq(sqlite3_prepare_v2(h, "UPDATE call_chunks SET calls = ? WHERE session = 1 AND "
                                     "id = ?", -1, &wr, NULL), SQLITE_OK);
  char e[256];
  while (sqlite3_step(rd) == SQLITE_ROW) {
    move_calls m = {.thread_of = thread_of};
    cr_assert(pt_chunk_each(sqlite3_column_blob(rd, 1), (size_t)sqlite3_column_bytes(rd, 1),
                            move_call, &m, e, sizeof e), "%s", e);
    const void *blob;
    size_t n;
    cr_assert(pt_chunk_enc_finish(&m.enc, &blob, &n, e, sizeof e), "%s", e);
    sqlite3_bind_blob(wr, 1, blob, (int)n, SQLITE_TRANSIENT);
    sqlite3_bind_int64(wr, 2, sqlite3_column_int64(rd, 0));
    cr_assert_eq(sqlite3_step(wr), SQLITE_DONE, "%s", sqlite3_errmsg(h));
    sqlite3_reset(wr);
    pt_chunk_enc_free(&m.enc);
  }
  sqlite3_finalize(rd);
  sqlite3_finalize(wr);
  sqlite3_close(h);
  sql_exec(db, "DELETE FROM threads WHERE idx > 1");
  sql_exec(db, "INSERT INTO threads SELECT session, 2, tid + 1 FROM threads WHERE idx = 1");
  sql_exec(db, "INSERT INTO threads SELECT session, 3, tid + 2 FROM threads WHERE idx = 1");
}

/* callback_app's 8 callbacks (the calls after a callback note) as two
 * threads of the implementation's would run them: taking turns, in one
 * run the first on thread 2, in the other on thread 3. */
static int64_t callbacks[8];
static uint32_t callback_thread(int64_t seq, uint32_t first)
{
  for (int i = 0; i < 8; i++)
    if (callbacks[i] == seq)
      return i % 2 ? 5 - first : first;
  return 0;
}
static uint32_t callbacks_from_2(int64_t seq) { return callback_thread(seq, 2); }
static uint32_t callbacks_from_3(int64_t seq) { return callback_thread(seq, 3); }

/* Which of the implementation's threads ran an event callback differs
 * from run to run (OpenCV's, on PoCL): two runs of a program whose
 * callbacks release its buffers compare the same, whichever thread ran
 * each callback. The threads paired by number, and every release in a
 * callback differed ("different objects"). */
Test(viewer, diff_same_when_callbacks_ran_on_other_threads_of_the_implementation)
{
  char *dir = tu_temp_path(".d"), *out, *err;
  const char *argv[] = {PITRACE, "record", "-o", dir, "--", BIN "/callback_app", NULL};
  const char *env[] = {POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  const char *ls[] = {"/bin/sh", "-c", "ls \"$0\"/*.db", dir, NULL};
  char *db;
  cr_assert_eq(tu_run(ls, NULL, &db), 0, "%s", db);
  db[strcspn(db, "\n")] = 0;
  char *seqs = sql(db, "SELECT group_concat(seq) FROM (SELECT DISTINCT n.seq FROM notes n, "
                       "pi_calls c WHERE n.kind = 'callback' AND c.seq = n.seq AND c.api = "
                       "'piMemRelease' ORDER BY n.seq)");
  int n = 0;
  for (char *p = seqs; *p && n < 8; p += strspn(p, ","))
    callbacks[n++] = strtoll(p, &p, 10);
  cr_assert_eq(n, 8, "callbacks at %s", seqs);
  char *a = copy_db(db), *b = copy_db(db);
  move_calls_to_threads(a, callbacks_from_2);
  move_calls_to_threads(b, callbacks_from_3);
  cr_assert_eq(sql_int(a, "SELECT count(*) FROM pi_calls WHERE thread = 3"), 4);
  cr_assert_eq(sql_int(b, "SELECT count(*) FROM pi_calls WHERE thread = 3"), 4);
  cr_assert_eq(pitrace(&out, &err, "diff", a, b, NULL), 0, "%s%s", out, err);
  cr_assert(strstr(out, "differences: 0 argument, 0 result, 0 info, 0 data, 0 note, 0 order: "
                        "same"), "%s", out);
}

/* A forked child's session: its thread is not numbered 1. `show --thread
 * 1` said "no such thread (it has 1)": the numbers it has are said. */
Test(viewer, show_thread_not_there_says_the_numbers_a_forked_childs_session_has)
{
  char *db = tu_temp_path(".db"), *out, *err;
  const char *argv[] = {PITRACE, "run", "--", BIN "/fork_app", NULL}; /* the front end */
  cr_assert_eq(record_into(db, argv, POCL, NULL), 0);
  long long child = sql_int(db, "SELECT id FROM sessions WHERE parent_session IS NOT NULL");
  char *threads = sql(db, fmt("SELECT group_concat(idx, ', ') FROM threads WHERE session = %lld",
                              child));
  cr_assert_str_eq(threads, "2", "the child's thread is numbered 2 as it records now");
  cr_assert_eq(pitrace(&out, &err, "show", "--session", fmt("%lld", child), "--thread", "1", db,
                       NULL), 2, "%s", out);
  cr_assert_eq(lines(err), 1, "%s", err);
  cr_assert(strstr(err, "no such thread (its threads: 2)"), "%s", err);
  cr_assert_eq(pitrace(&out, &err, "show", "--session", fmt("%lld", child), "--thread", "2", db,
                       NULL), 0, "%s", err);
}

/* A session whose end is not known (its process still records it, or was
 * killed and not salvaged: no duration) lasts at least until its last
 * call stored ends: stats said "- recorded" and "1 session over 0 ns",
 * and export ended its call that never returned where it began. */
Test(viewer, a_session_without_its_end_lasts_until_its_last_call_stored)
{
  char *dir = tu_temp_path(".d"), db[4200], *out, *err;
  cr_assert_eq(mkdir(dir, 0700), 0);
  snprintf(db, sizeof db, "%s/run.db", dir);
  const char *argv[] = {BIN "/vadd", NULL};
  cr_assert_eq(record_into(db, argv, POCL, NULL), 0);
  long long end = sql_int(db, "SELECT max(end_ns) FROM pi_calls");
  long long start = sql_int(db, "SELECT start_ns FROM pi_calls WHERE seq = 3") + 1;
  sql_exec(db, "UPDATE sessions SET ended = 'running', duration_ns = NULL, end_unix_ns = NULL");
  sql_exec(db, "INSERT INTO inflight SELECT session, (SELECT max(seq) + 1 FROM calls), thread, "
               "plugin, api, start_ns + 1, args, stack, data FROM calls WHERE seq = 3");
  cr_assert_eq(pitrace(&out, &err, "stats", db, NULL), 0, "%s", err);
  cr_assert(strstr(out, " calls, >=") && !strstr(out, "- recorded"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "stats", dir, NULL), 0, "%s", err);
  cr_assert(strstr(out, ": starts at +0 ns, >=") && strstr(out, "\n1 session over >="),
            "%.3000s", out);
  cr_assert_eq(pitrace(&out, &err, "export", "--format", "chrome", db, NULL), 0, "%s", err);
  const char *lost = strstr(out, "\"result\":\"(never returned)\"");
  cr_assert(lost, "%s", out);
  while (lost > out && lost[-1] != '\n')
    lost--;
  char want[64];
  snprintf(want, sizeof want, "\"dur\":%lld.%03lld,", (end - start) / 1000, (end - start) % 1000);
  cr_assert(strstr(lost, want) && strstr(lost, want) < strchr(lost, '\n'), "no %s in %.300s",
            want, lost);
}

/* Every (seq, position, value) of a session's arguments that print as
 * `value` or `[value]`, into seqs/positions/arrays; returns how many. */
static int args_naming(const char *db, const char *value, long long *seqs, int *pos, bool *array,
                       int max)
{
  sqlite3 *h;
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  tu_sqlite_views(h);
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT seq, position, value FROM pi_args WHERE value = ?1 "
                                     "OR value = '[' || ?1 || ']' ORDER BY seq", -1, &st, NULL),
               SQLITE_OK);
  sqlite3_bind_text(st, 1, value, -1, SQLITE_STATIC);
  int n = 0;
  while (n < max && sqlite3_step(st) == SQLITE_ROW) {
    seqs[n] = sqlite3_column_int64(st, 0);
    pos[n] = sqlite3_column_int(st, 1);
    array[n++] = *(const char *)sqlite3_column_text(st, 2) == '[';
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

/* A session edited so that one call uses another buffer than the one
 * its run created for it: the diff names both buffers by the calls that
 * made them. A copy with the buffer renumbered (other ids, objects that
 * correspond) is the same. */
/* How many calls `record_prog count FILE` had returned (FILE's first 8
 * bytes). */
static long long calls_returned(const char *file)
{
  uint64_t n = 0;
  FILE *f = fopen(file, "rb");
  if (f && fread(&n, sizeof n, 1, f) != 1)
    n = 0;
  if (f)
    fclose(f);
  return (long long)n;
}

/* diff of a session with itself while its process still records it (a
 * call every 200 us, a commit every 50 ms): the same, every time. Each
 * side was read apart, each pass seeing what was committed by then, and a
 * commit between the passes left calls "only in B" (past 10,000 calls,
 * most runs). */
Test(viewer, diff_of_a_session_being_recorded_with_itself_is_the_same)
{
  char *db = tu_temp_path(".db"), *count = tu_temp_path(".count"), *out = NULL, *err;
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* not left recording if the test dies */
    setenv("SYCL_PI_RECORD", db, 1);
    putenv((char *)POCL);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(BIN "/record_prog", "record_prog", "count", count, "200", (char *)NULL);
    _exit(127);
  }
  const char *sessions[] = {PITRACE, "sessions", db, NULL};
  char want[64];
  snprintf(want, sizeof want, "recording (pid %d)", (int)pid);
  /* Committed, and long enough that a pass over it takes a while. */
  for (int i = 0; i < 300 && !(out && strstr(out, want) && calls_returned(count) > 8000); i++) {
    struct timespec nap = {0, 50000000};
    nanosleep(&nap, NULL);
    free(out);
    tu_run(sessions, NULL, &out);
  }
  bool recording = strstr(out, want) && calls_returned(count) > 8000;
  /* Runs until 6 are done or 20 s have passed (at least 2: the session
   * must be seen growing): 20 runs took over 180 s under ASan, each slower
   * than the last as the session grows. Without the fix the first run
   * already differs. */
  enum { RUNS = 6 };
  int rc[RUNS], runs = 0;
  char *outs[RUNS];
  long long first = 0, last = 0;
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int r = 0; recording && r < RUNS; r++, runs++) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (r >= 2 && now.tv_sec - t0.tv_sec > 20)
      break;
    rc[r] = pitrace(&outs[r], &err, "diff", db, db, NULL);
    const char *s = strstr(outs[r], "summary: ");
    long long n = 0;
    if (s && sscanf(s, "summary: %lld matched calls", &n) == 1) {
      first = r ? first : n;
      last = n;
    }
  }
  bool alive = kill(pid, 0) == 0;
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  cr_assert(recording, "no session of 8000 calls being recorded in 15 s: %s", out);
  cr_assert(alive, "the recording process ended before the diffs did");
  for (int r = 0; r < runs; r++)
    cr_assert(rc[r] == 0 && strstr(outs[r], "; only in A 0, only in B 0; ") &&
              strstr(outs[r], ": same\n"), "run %d: exit status %d:\n%s", r, rc[r], outs[r]);
  cr_assert_gt(last, first, "the session did not grow while it was compared");
}

Test(viewer, diff_names_both_objects_when_a_call_uses_another_buffer)
{
  char *a = record("vadd", POCL), *b = copy_db(a), *out, *err;
  /* vadd's second kernel argument is its second buffer; B's gets the first. */
  long long set = sql_int(a, "SELECT seq FROM pi_calls WHERE api = 'piextKernelSetArgMemObj' "
                             "ORDER BY seq LIMIT 1 OFFSET 1");
  long long mem1 = sql_int(a, "SELECT id FROM handles WHERE kind = 'mem' ORDER BY id");
  long long mem2 = sql_int(a, "SELECT id FROM handles WHERE kind = 'mem' ORDER BY id LIMIT 1 "
                              "OFFSET 1");
  long long made1 = sql_int(a, "SELECT created_seq FROM handles WHERE kind = 'mem' ORDER BY id");
  long long made2 = sql_int(a, "SELECT created_seq FROM handles WHERE kind = 'mem' ORDER BY id "
                               "LIMIT 1 OFFSET 1");
  char v[64], want[512];
  snprintf(v, sizeof v, "'[%lld]'", mem1);
  set_in_call(b, set, "[7][3]", v);
  cr_assert_eq(pitrace(&out, &err, "diff", a, b, NULL), 1, "%s%s", out, err);
  snprintf(want, sizeof want, "piextKernelSetArgMemObj: argument arg_value: different objects: "
           "A's mem#%lld (made by A %lld piMemBufferCreate) vs B's mem#%lld (made by B %lld "
           "piMemBufferCreate); A's corresponds to B's mem#%lld, B's to A's mem#%lld: [mem#%lld] "
           "vs [mem#%lld]", mem2, made2, mem1, made1, mem2, mem1, mem2, mem1);
  cr_assert(strstr(out, want), "wanted %s in\n%s", want, out);
  cr_assert_eq(tu_count(out, "\n~ "), 1, "%s", out);
  cr_assert(strstr(out, "differences: 1 argument, 0 result"), "%s", out);

  /* Renumbered: C's second buffer is mem#1000 wherever it is named (its
   * creation, the write, the kernel argument, the release). */
  char *c = copy_db(a), name[32];
  snprintf(name, sizeof name, "mem#%lld", mem2);
  long long seqs[16];
  int pos[16];
  bool array[16];
  int n = args_naming(a, name, seqs, pos, array, 16);
  cr_assert_eq(n, 4, "%d", n);
  for (int i = 0; i < n; i++) {
    char path[32];
    snprintf(path, sizeof path, "[7][%d]", pos[i]);
    set_in_call(c, seqs[i], path, array[i] ? "'[1000]'" : "1000");
  }
  cr_assert_eq(args_naming(c, "mem#1000", seqs, pos, array, 16), 4);
  cr_assert_eq(pitrace(&out, &err, "diff", a, c, NULL), 0, "%s%s", out, err);
  cr_assert(strstr(out, SAME_SUMMARY ": same"), "%s", out);
  /* And the edited session against it: the same one difference. */
  cr_assert_eq(pitrace(&out, &err, "diff", c, b, NULL), 1, "%s%s", out, err);
  cr_assert(strstr(out, "A's mem#1000 (made by A "), "%s", out);
}

/* b, a copy of a, gets a's calls k and p in each other's places (each
 * keeps its place's seq): each is found in the other session. */
static void swap_calls(const char *a, const char *b, long long k, long long p)
{
  char q[256], v[1024];
  sql_exec(a, TU_AS_V1_CHUNKS);
  for (int i = 0; i < 2; i++) {
    snprintf(q, sizeof q, "SELECT j.value FROM chunks, json_each(chunks.calls) j WHERE "
             "json_extract(j.value, '$[0]') = %lld", i ? k : p);
    snprintf(v, sizeof v, "json_set('%s', '$[0]', %lld)", sql(a, q), i ? p : k);
    set_in_call(b, i ? p : k, "", v);
  }
}

/* Two calls swapped: each is found in the other session, out of order. */
Test(viewer, diff_reports_calls_out_of_order)
{
  char *a = record("vadd", POCL), *b = copy_db(a), *out, *err;
  long long k = sql_int(a, "SELECT seq FROM pi_calls WHERE api = 'piKernelRelease'");
  long long p = sql_int(a, "SELECT seq FROM pi_calls WHERE api = 'piProgramRelease'");
  cr_assert_eq(p, k + 1);
  swap_calls(a, b, k, p); /* B releases the program first */
  cr_assert_eq(sql_int(b, "SELECT seq FROM pi_calls WHERE api = 'piProgramRelease'"), k);
  cr_assert_eq(pitrace(&out, &err, "diff", a, b, NULL), 1, "%s%s", out, err);
  cr_assert(strstr(out, ": order: the same call, out of the order the other calls align in"),
            "%s", out);
  cr_assert(strstr(out, "only in A 0, only in B 0; differences: 0 argument, 0 result, 0 info, 0 "
                        "data, 0 note, 1 order: different"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", "--ignore", "order", a, b, NULL), 0, "%s%s", out, err);
}

/* A damaged session's thread number (4294967295: a flipped bit) indexed
 * diff's arrays per thread: 12 GB asked for and seconds spent, or "out of
 * memory" under a limit. Threads far past the calls count by their place
 * among those present, as fast as any. */
Test(viewer, diff_of_a_damaged_thread_number_takes_no_gigabytes)
{
  char *a = record("vadd", POCL), *b = copy_db(a), *out;
  long long k = sql_int(a, "SELECT seq FROM pi_calls WHERE api = 'piKernelCreate'");
  set_in_call(b, k, "[1]", "4294967295");
#ifdef TU_SANITIZED
  const char *limit = ""; /* AddressSanitizer reserves terabytes of address space */
#else
  const char *limit = "ulimit -v 1000000 && ";
#endif
  char *script = fmt("%sexec %s diff %s %s", limit, PITRACE, a, b);
  const char *sh[] = {"/bin/sh", "-c", script, NULL};
  cr_assert_eq(tu_run(sh, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "only in A 0, only in B 0; differences: 0 argument, 0 result, 0 info, 0 "
                        "data, 0 note, 0 order: same"), "%s", out);
}

/* Damaged call times (a start of INT64_MIN, durations of INT64_MAX) made
 * export, report and stats overflow int64_t adding and subtracting them:
 * UBSan stopped them (the sanitized build), elsewhere they printed wrapped
 * numbers without a word. The readers clamp a call's times to 2^60 ns
 * (PT_TIME_MAX) and stats' sums stop at INT64_MAX. */
Test(viewer, damaged_call_times_overflow_no_viewer)
{
  char *a = record("vadd", POCL), *b = copy_db(a), *out, *err;
  long long k = sql_int(a, "SELECT seq FROM pi_calls WHERE api = 'piKernelCreate'");
  set_in_call(b, k, "[5]", "'-9223372036854775808'");
  sql_exec(b, "UPDATE chunks SET calls = (SELECT json_group_array(json(json_set(j.value, "
              "'$[6]', 9223372036854775807))) FROM json_each(chunks.calls) j)");
  cr_assert_eq(sql_int(b, "SELECT count(*) FROM calls WHERE dur_ns = 9223372036854775807"),
               sql_int(a, "SELECT count(*) FROM calls"));
  cr_assert_str_eq(sql(b, fmt("SELECT start_ns FROM calls WHERE seq = %lld", k)),
                   "-9223372036854775808");
  cr_assert_eq(pitrace(&out, &err, "show", b, NULL), 0, "%s", err);
  cr_assert_eq(pitrace(&out, &err, "show", "--compact", b, NULL), 0, "%s", err);
  cr_assert_eq(pitrace(&out, &err, "export", b, "--format", "jsonl", NULL), 0, "%s", err);
  cr_assert(strstr(out, fmt("{\"seq\":%lld,", k)), "%s", out);
  cr_assert(strstr(strstr(out, fmt("{\"seq\":%lld,", k)), "\"start_ns\":-1152921504606846976,"
                                                         "\"dur_ns\":1152921504606846976"),
            "%s", out);
  cr_assert_eq(pitrace(&out, &err, "export", b, "--format", "csv", NULL), 0, "%s", err);
  char *file = tu_temp_path(".json");
  cr_assert_eq(pitrace(&out, &err, "export", b, "--format", "chrome", "-o", file, NULL), 0,
               "%s", err);
  cr_assert(strstr(tu_read_file(file), "\"ts\":-1152921504606846.976,"), "%s",
            tu_read_file(file));
  cr_assert_eq(pitrace(&out, &err, "report", b, "-o", tu_temp_path(".html"), NULL), 0, "%s",
               err);
  /* Each call's 2^60 ns, summed: as much as an int64_t holds. */
  cr_assert_eq(pitrace(&out, &err, "stats", b, NULL), 0, "%s", err);
  cr_assert(strstr(out, "recorded, 9223372036.855 s in PI calls;"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", a, b, NULL), 0, "%s%s", out, err);
  if (replay_built()) {
    const char *argv[] = {PITRACE, "replay", b, NULL}, *env[] = {POCL, NULL};
    cr_assert_eq(tu_run(argv, env, &out), 0, "replay of %s: %s", b, out);
  }
}

/* Threads interleave differently from run to run: a call that moved only
 * among another thread's calls is no order difference; one that moved
 * among its own thread's is (above). A's and B's piProgramRelease run on
 * a thread of their own (thread 2), B's before the piKernelRelease it
 * follows in A; a third thread in B (its last call's) makes the sessions'
 * threads differ, so they align globally, in sequence order. */
Test(viewer, diff_takes_no_move_among_other_threads_calls_for_a_difference)
{
  char *a = record("vadd", POCL), *b = copy_db(a), *out, *err;
  long long k = sql_int(a, "SELECT seq FROM pi_calls WHERE api = 'piKernelRelease'");
  long long p = sql_int(a, "SELECT seq FROM pi_calls WHERE api = 'piProgramRelease'");
  long long last = sql_int(a, "SELECT max(seq) FROM pi_calls");
  cr_assert_eq(p, k + 1);
  cr_assert_gt(last, p);
  swap_calls(a, b, k, p);
  set_in_call(a, p, "[1]", "2"); /* A's program release on thread 2 */
  set_in_call(b, k, "[1]", "2"); /* B's, swapped to k, too */
  set_in_call(b, last, "[1]", "3");
  cr_assert_eq(sql_int(b, "SELECT seq FROM pi_calls WHERE api = 'piProgramRelease'"), k);
  cr_assert_eq(sql_int(b, "SELECT count(DISTINCT thread) FROM pi_calls"),
               sql_int(a, "SELECT count(DISTINCT thread) FROM pi_calls") + 1);
  cr_assert_eq(pitrace(&out, &err, "diff", a, b, NULL), 0, "%s%s", out, err);
  cr_assert(strstr(out, "(aligned globally); only in A 0, only in B 0; differences: 0 argument, "
                        "0 result, 0 info, 0 data, 0 note, 0 order: same"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", b, a, NULL), 0, "%s%s", out, err);
  /* On one thread in A, the same swap is a move among its own calls. */
  set_in_call(a, p, "[1]", "1");
  cr_assert_eq(pitrace(&out, &err, "diff", a, b, NULL), 1, "%s%s", out, err);
  cr_assert(strstr(out, "0 note, 1 order: different"), "%s", out);
}

/* The same with a call that makes a handle: OpenCV's event callback thread
 * releases a kernel before or after the main thread's next map (which
 * makes a mapped pointer), as it happens. A's launch (it makes event#11)
 * runs on thread 2, after the last argument set on thread 1; B's before
 * it. The moved launch is the same call, its event paired with B's
 * (before: "different objects: A's event#11 ... corresponds to nothing in
 * B", only in A 1, only in B 1). */
Test(viewer, diff_finds_a_moved_call_that_makes_a_handle)
{
  char *a = record("vadd", POCL), *b = copy_db(a), *out, *err;
  long long p = sql_int(a, "SELECT seq FROM pi_calls WHERE api = 'piEnqueueKernelLaunch'");
  long long k = p - 1, last = sql_int(a, "SELECT max(seq) FROM pi_calls");
  cr_assert_str_eq(sql(a, fmt("SELECT api FROM pi_calls WHERE seq = %lld", k)), "piKernelSetArg");
  swap_calls(a, b, k, p);
  set_in_call(a, p, "[1]", "2");
  set_in_call(b, k, "[1]", "2");
  set_in_call(b, last, "[1]", "3");
  cr_assert_eq(sql_int(b, "SELECT seq FROM pi_calls WHERE api = 'piEnqueueKernelLaunch'"), k);
  for (int twice = 0; twice < 2; twice++) {
    cr_assert_eq(pitrace(&out, &err, "diff", twice ? b : a, twice ? a : b, NULL), 0, "%s%s", out,
                 err);
    cr_assert(strstr(out, "(aligned globally); only in A 0, only in B 0; differences: 0 "
                          "argument, 0 result, 0 info, 0 data, 0 note, 0 order: same"),
              "%s", out);
  }
}

/* Flips the bits `mask` of byte `at` of the first payload of `role` (of
 * a call to `api`; NULL: any) (a blob several rows share changes for
 * each). */
static void flip_payload_of(const char *db, const char *api, const char *role, int at,
                            unsigned char mask)
{
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  tu_sqlite_views(h);
  sqlite3_stmt *s;
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT hash, content FROM blobs WHERE hash = (SELECT hash "
                                     "FROM data_rows WHERE role = ?1 AND (?2 IS NULL OR seq IN "
                                     "(SELECT seq FROM pi_calls WHERE api = ?2)) ORDER BY seq "
                                     "LIMIT 1)", -1, &s, NULL),
               SQLITE_OK);
  sqlite3_bind_text(s, 1, role, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 2, api, -1, SQLITE_STATIC);
  cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
  int n = sqlite3_column_bytes(s, 1);
  cr_assert_gt(n, at);
  unsigned char *c = malloc((size_t)n), hash[16];
  memcpy(c, sqlite3_column_blob(s, 1), (size_t)n);
  memcpy(hash, sqlite3_column_blob(s, 0), 16);
  sqlite3_finalize(s);
  c[at] ^= mask;
  cr_assert_eq(sqlite3_prepare_v2(h, "UPDATE blobs SET content = ? WHERE hash = ?", -1, &s, NULL),
               SQLITE_OK);
  sqlite3_bind_blob(s, 1, c, n, SQLITE_STATIC);
  sqlite3_bind_blob(s, 2, hash, 16, SQLITE_STATIC);
  cr_assert_eq(sqlite3_step(s), SQLITE_DONE);
  sqlite3_finalize(s);
  sqlite3_close(h);
  free(c);
}

static void flip_payload(const char *db, const char *role, int at, unsigned char mask)
{
  flip_payload_of(db, NULL, role, at, mask);
}

Test(viewer, diff_finds_data_differences_and_calls_in_only_one)
{
  char *a = record("vadd", POCL), *b = record("vadd", POCL);
  flip_payload(b, "out", 8, 0xff);
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "diff", a, b, NULL), 1, "%s%s", out, err);
  cr_assert(strstr(out, "piEnqueueMemBufferRead: data ptr (out, 4096 and 4096 bytes): first "
                        "difference at byte 8 (32-bit element 2)"), "%s", out);
  cr_assert_eq(tu_count(out, "\n~ "), 1, "%s", out);
  char *sc = record("spec_const", POCL);
  cr_assert_eq(pitrace(&out, &err, "diff", a, sc, NULL), 1, "%s%s", out, err);
  cr_assert(strstr(out, "\n- A ") && strstr(out, "\n+ "), "%s", out);
  cr_assert(strstr(out, "piKernelCreate: argument kernel_name: \"vadd\" vs \"convolution\""),
            "%s", out);
  cr_assert(strstr(out, "note link: (none) vs Link decision"), "%s", out);
}

/* A kernel argument's value is data: one difference (data) where both
 * sessions recorded it, none where one did not (SYCL_PI_RECORD_DATA=none
 * against all). Its bytes were in the argument's text too: counted twice
 * ("argument arg_value: 4 bytes <00040000> vs 4 bytes <00080000>" and the
 * data), and "4 bytes vs 4 bytes <00040000>" against a session without
 * data. */
Test(viewer, diff_counts_a_kernel_argument_value_once_and_only_where_recorded)
{
  char *a = record("vadd", POCL), *b = tu_temp_path(".db"), *none = tu_temp_path(".db");
  const char *argv[] = {BIN "/vadd", "2048", NULL}, *plain[] = {BIN "/vadd", NULL};
  cr_assert_eq(record_into(b, argv, POCL, NULL), 0);
  cr_assert_eq(record_into(none, plain, POCL, "SYCL_PI_RECORD_DATA=none"), 0);
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "diff", a, b, NULL), 1, "%s%s", out, err);
  cr_assert(strstr(out, "piKernelSetArg: data arg_value (in, 4 and 4 bytes): first difference"),
            "%s", out);
  cr_assert_null(strstr(out, "piKernelSetArg: argument"), "%s", out);
  /* B's data, which A did not record, is not compared, and the summary
   * says so (it said "same" as if it had been). */
  cr_assert_eq(pitrace(&out, &err, "diff", none, a, NULL), 0, "%s%s", out, err);
  cr_assert(strstr(out, "differences: 0 argument, 0 result, 0 info, 0 data, 0 note, 0 order; "
                        "not compared: 0 payloads only A recorded, "),
            "%s", out);
  cr_assert(strstr(out, " only B (SYCL_PI_RECORD_DATA, SYCL_PI_RECORD_DATA_CAP): same\n"), "%s",
            out);
  cr_assert_null(strstr(out, "recorded, 0 only B"), "%s", out);
}

/* A program's source that differs (pyopencl adds a name of its own to
 * each source it builds) is shown as text around the first difference,
 * placed by line and column. */
Test(viewer, diff_shows_a_source_difference_as_text)
{
  char *dir = tu_temp_path(".d"), *out, *err, *b = tu_temp_path(".db");
  const char *argv[] = {PITRACE, "record", "-o", dir, "--", BIN "/image_app", NULL};
  const char *env[] = {POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  const char *cp[] = {"/bin/sh", "-c", "cp \"$0\"/*.db \"$1\"", dir, b, NULL};
  cr_assert_eq(tu_run(cp, NULL, &out), 0, "%s", out);
  cr_assert_eq(pitrace(&out, &err, "show", b, NULL), 0, "%s", err);
  const char *src = strstr(out, "const char ** strings : ptr [ \"");
  cr_assert(src, "%s", out);
  src += strlen("const char ** strings : ptr [ \"");
  const char *nl = strstr(src, "\\n"); /* the source's first line, as show escapes it */
  cr_assert(nl && nl - src > 4, "%s", out);
  int at = (int)(nl - src) + 1 + 3; /* the 4th byte of its second line */
  flip_payload_of(b, "piclProgramCreateWithSource", "in", at, 0x01);
  cr_assert_eq(pitrace(&out, &err, "diff", dir, b, NULL), 1, "%s%s", out, err);
  char want[160];
  snprintf(want, sizeof want, "piclProgramCreateWithSource: data strings (in, ");
  const char *line = strstr(out, want);
  cr_assert(line, "%s", out);
  snprintf(want, sizeof want, "first difference at byte %d (line 2, column 4): ", at);
  cr_assert(strstr(line, want), "%s", out);
  /* The text around it on both sides, B's with its changed character. */
  char changed[8] = "\\n   ";
  changed[5] = (char)(nl[2 + 3] ^ 0x01); /* line 2, column 4 */
  cr_assert(strstr(line, "\\n   ") && strstr(line, " vs ") && strstr(line, changed), "%s", out);
  cr_assert_eq(tu_count(out, "\n~ "), 1, "%s", out);
}

/* Two devices' float results differ in their last bits: with --tolerance
 * diff compares what the devices read back as floats, as replay does,
 * and the application's own data (its inputs) still bitwise. */
Test(viewer, diff_tolerance_compares_read_back_floats_as_replay_does)
{
  char *a = record("vadd", POCL), *b = copy_db(a), *c = copy_db(a), *out, *err;
  flip_payload(b, "out", 8, 0x01); /* element 2, one unit in the last place */
  cr_assert_eq(pitrace(&out, &err, "diff", a, b, NULL), 1, "%s%s", out, err);
  cr_assert(strstr(out, "first difference at byte 8 (32-bit element 2)"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", "--tolerance", "1e-6", a, b, NULL), 0, "%s%s", out,
               err);
  cr_assert(strstr(out, " 0 data, "), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", "--tolerance", "1e-12", a, b, NULL), 1, "%s%s", out,
               err);
  cr_assert(strstr(out, "piEnqueueMemBufferRead: data ptr (out, 4096 bytes): 1 of 1024 4-byte "
                        "floats differ beyond the tolerance, the first at byte 8 (element 2): "),
            "%s", out);
  flip_payload(c, "in", 8, 0x01);
  cr_assert_eq(pitrace(&out, &err, "diff", "--tolerance", "1e-6", a, c, NULL), 1, "%s%s", out,
               err);
  cr_assert(strstr(out, "first difference at byte 8 (32-bit element 2)"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", "--f64", a, b, NULL), 2, "%s", out);
  cr_assert(strstr(err, "give --tolerance X with it") && lines(err) == 1, "%s", err);
}

/* The runtime's notes name the device they were made for: the same
 * decisions on two devices (matmul's link decisions and cache results on
 * PoCL's and on rusticl's) are no difference; a decision that differs
 * still is. */
Test(viewer, diff_compares_notes_but_for_the_devices_they_name)
{
  char *pocl = record("matmul", POCL), *rusticl = record("matmul", RUSTICL), *out, *err;
  cr_assert_gt(sql_int(pocl, "SELECT count(*) FROM notes WHERE kind = 'link'"), 0);
  cr_assert_eq(pitrace(&out, &err, "diff", "--no-info", pocl, rusticl, NULL), 0, "%s%s", out,
               err);
  cr_assert(strstr(out, " 0 note, "), "%s", out);
  sql_exec(rusticl, "UPDATE notes SET text = replace(text, 'options ''''', 'options ''-w''') "
                    "WHERE kind = 'link'");
  cr_assert_eq(pitrace(&out, &err, "diff", "--no-info", pocl, rusticl, NULL), 1, "%s%s", out,
               err);
  cr_assert(strstr(out, "note link: Link decision") && strstr(out, "options '-w'"), "%s", out);
}

/* Every line of out that starts with `prefix` has `needle`; how many. */
static int lines_all_have(const char *out, const char *prefix, const char *needle)
{
  int n = 0;
  for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (strncmp(l, prefix, strlen(prefix)) == 0) {
      const char *end = strchr(l, '\n');
      char *line = strndup(l, end ? (size_t)(end - l) : strlen(l));
      cr_assert(strstr(line, needle), "'%s' lacks '%s'", line, needle);
      free(line);
      n++;
    }
  return n;
}

Test(viewer, diff_ignore_and_only_filter_by_api_and_kind)
{
  char *pocl = record("vadd", POCL), *rusticl = record("vadd", RUSTICL), *out, *err;
  cr_assert_eq(pitrace(&out, &err, "diff", pocl, rusticl, NULL), 1, "%s%s", out, err);
  int all = tu_count(out, "\n~ ");
  cr_assert_gt(all, 2, "%s", out);
  /* By kind. */
  cr_assert_eq(pitrace(&out, &err, "diff", "--ignore", "info", pocl, rusticl, NULL), 0, "%s", out);
  char want[96];
  snprintf(want, sizeof want, "; %d left out by --ignore/--only: same\n", all);
  cr_assert(strstr(out, want), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", "--only", "args,result,data", pocl, rusticl, NULL), 0,
               "%s", out);
  /* By API glob, and both. */
  cr_assert_eq(pitrace(&out, &err, "diff", "--only", "piDeviceGetInfo", pocl, rusticl, NULL), 1);
  int dev = lines_all_have(out, "~ ", "piDeviceGetInfo: info ");
  cr_assert(dev > 0 && dev < all, "%d of %d\n%s", dev, all, out);
  cr_assert_eq(pitrace(&out, &err, "diff", "--only=piPlatformGetInfo:info", pocl, rusticl, NULL),
               1);
  cr_assert_eq(lines_all_have(out, "~ ", "piPlatformGetInfo: info "), all - dev, "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", "--ignore", "*GetInfo", pocl, rusticl, NULL), 0);
  cr_assert_eq(pitrace(&out, &err, "diff", "--ignore", "piDeviceGetInfo", "--ignore",
                       "piPlatform*", pocl, rusticl, NULL), 0, "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", "--ignore", "piDeviceGetInfo:args", pocl, rusticl,
                       NULL), 1);
  cr_assert_eq(tu_count(out, "\n~ "), all);
  /* Data: a read-back changed. */
  char *b = record("vadd", POCL);
  flip_payload(b, "out", 8, 0xff);
  char *a = record("vadd", POCL);
  cr_assert_eq(pitrace(&out, &err, "diff", "--only", "data", a, b, NULL), 1);
  cr_assert_eq(pitrace(&out, &err, "diff", "--ignore", "data", a, b, NULL), 0);
  cr_assert_eq(pitrace(&out, &err, "diff", "--ignore", "piEnqueueMemBufferRead", a, b, NULL), 0);
  cr_assert_eq(pitrace(&out, &err, "diff", "--json", "--only", "info", a, b, NULL), 0);
  cr_assert(strstr(out, "\"ignored\":1,\"data_only_a\":0,\"data_only_b\":0}"), "%s", out);
  /* Bad patterns: one line, exit 2. */
  const struct {
    const char *opt, *value, *says;
  } bad[] = {{"--only", "foo", "pitrace diff: --only 'foo': neither a kind"},
             {"--ignore", "pi*:bogus", "pitrace diff: --ignore 'pi*:bogus': unknown kind 'bogus'"},
             {"--ignore", "", "pitrace diff: --ignore wants a pattern"},
             {"--only", "args,,data", "pitrace diff: --only '': neither a kind"},
             /* A misspelt function left out nothing and said "same", exit 0. */
             {"--only", "piDeviceGetInfoo",
              "pitrace diff: --only 'piDeviceGetInfoo': 'piDeviceGetInfoo' matches no PI "
              "function"},
             {"--ignore", "piEnqueueMemBufferReed:data", "matches no PI function"}};
  for (int i = 0; i < 6; i++) {
    cr_assert_eq(pitrace(&out, &err, "diff", bad[i].opt, bad[i].value, a, b, NULL), 2, "%s", err);
    cr_assert_eq(lines(err), 1, "%s", err);
    cr_assert(strstr(err, bad[i].says), "%s", err);
    cr_assert_str_empty(out);
  }
  cr_assert_eq(pitrace(&out, &err, "diff", a, b, "--only", NULL), 2, "%s", err);
  cr_assert(strstr(err, "--only needs a value"), "%s", err);
  /* --only that --ignore empties compared nothing and said "same"; one
   * that keeps something (data of other functions) compares. */
  const char *ignores[] = {"data", "pi*", "piEnqueue*"}, *onlys[] = {"data", "data",
                                                                     "piEnqueueMemBufferRead"};
  for (int i = 0; i < 3; i++) {
    cr_assert_eq(pitrace(&out, &err, "diff", "--ignore", ignores[i], "--only", onlys[i], a, b,
                         NULL), 2, "%s", err);
    cr_assert_eq(lines(err), 1, "%s", err);
    cr_assert(strstr(err, "--only keeps nothing that --ignore does not leave out"), "%s", err);
  }
  cr_assert_eq(pitrace(&out, &err, "diff", "--ignore", "piEnqueueMemBufferWrite:data", "--only",
                       "data", a, b, NULL), 1, "%s", err);
  /* '*' is a pattern (of every function), as '*GetInfo' is: it was
   * refused as neither a kind nor a pattern. */
  cr_assert_eq(pitrace(&out, &err, "diff", "--only", "*", a, b, NULL), 1, "%s", err);
  cr_assert_eq(pitrace(&out, &err, "diff", "--ignore", "*", a, b, NULL), 0, "%s", err);
}

/* ---- export ----------------------------------------------------------------------- */

Test(viewer, export_chrome_is_trace_event_json_with_kernels_marked)
{
  char *db = record("vadd", POCL), *file = tu_temp_path(".json");
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "export", db, "--format", "chrome", "-o", file, NULL), 0,
               "%s", err);
  pt_json_arena a = {0};
  pt_json *events = member(parse(&a, tu_read_file(file)), "traceEvents");
  cr_assert(events && events->type == PJ_ARRAY);
  int spans = 0, kernels = 0, threads = 0;
  for (uint32_t i = 0; i < events->n; i++) {
    pt_json *e = events->u.items[i], *ph = member(e, "ph"), *cat = member(e, "cat");
    spans += strcmp(ph->u.s, "X") == 0 && member(e, "ts") && member(e, "dur");
    threads += strcmp(member(e, "name")->u.s, "thread_name") == 0;
    if (cat && strcmp(cat->u.s, "kernel") == 0) {
      kernels++;
      cr_assert_str_eq(member(member(e, "args"), "kernel")->u.s, "vadd");
    }
  }
  cr_assert_eq(spans, sql_int(db, "SELECT count(*) FROM pi_calls"));
  cr_assert_eq(kernels, 1);
  cr_assert_eq(threads, 1);
  pt_json_arena_free(&a);
}

Test(viewer, export_jsonl_and_csv_have_a_line_per_call)
{
  char *db = record("vadd", POCL);
  long long calls = sql_int(db, "SELECT count(*) FROM pi_calls");
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "export", "--format", "jsonl", db, NULL), 0, "%s", err);
  cr_assert_eq(lines(out), calls);
  pt_json_arena a = {0};
  long long seq = 0;
  for (char *p = out, *eol; (eol = strchr(p, '\n')); p = eol + 1) {
    *eol = 0;
    pt_json *j = parse(&a, p);
    cr_assert_eq(member(j, "seq")->u.i, ++seq);
    cr_assert(member(member(j, "args"), pi_api_find(member(j, "api")->u.s)->params[0].name),
              "%s", p);
  }
  pt_json_arena_free(&a);
  cr_assert_eq(pitrace(&out, &err, "export", "--format", "csv", db, NULL), 0, "%s", err);
  cr_assert_eq(lines(out), calls + 1);
  static const char header[] = "seq,thread,api,result,start_ns,dur_ns,kernel,args\n";
  cr_assert(strncmp(out, header, sizeof header - 1) == 0, "%s", out);
  cr_assert(strstr(out, ",piKernelCreate,PI_SUCCESS,"), "%s", out);
  /* piKernelCreate's arguments: the program vadd built and the kernel made,
   * by the handle ids the session gave them. */
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM pi_handles WHERE kind = 'program'"), 1);
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM pi_handles WHERE kind = 'kernel'"), 1);
  char want[256];
  snprintf(want, sizeof want, ",\"%s, \"\"vadd\"\", ->%s\"\n",
           sql(db, "SELECT handle FROM pi_handles WHERE kind = 'program' AND created_by = "
                   "'piclProgramCreateWithSource'"),
           sql(db, "SELECT handle FROM pi_handles WHERE kind = 'kernel' AND created_by = "
                   "'piKernelCreate'"));
  cr_assert(strstr(out, want), "no '%s' in:\n%s", want, out);
  cr_assert(strstr(out, ",vadd,\"queue#"), "%s", out);
}

/* ---- Calls streamed in seq order ---------------------------------------------------- */

/* The seq at the start of each line (after `skip` characters), or of each
 * "seq" member: strictly increasing, and as many as the session has. */
static void assert_seq_order(const char *out, const char *key, long long calls)
{
  long long last = 0, n = 0;
  for (const char *p = out; (p = key ? strstr(p, key) : p) && *p; n++) {
    long long seq = atoll(p + (key ? strlen(key) : 0));
    cr_assert_gt(seq, last, "seq %lld after %lld", seq, last);
    last = seq;
    p = strchr(p, '\n');
    if (!p)
      break;
    p++;
  }
  cr_assert_eq(n, calls, "%lld calls in order, the session has %lld", n, calls);
}

/* A new session whose program build returned after the queries of a
 * later chunk: a chunk holds an earlier call than one before it. */
static char *record_chunks_out_of_order(void)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "slowcall", "1500", NULL};
  cr_assert_eq(record_into(db, argv, POCL, NULL), 0);
  cr_assert_gt(sql_int(db, "SELECT count(*) FROM call_chunks a, call_chunks b WHERE "
                           "b.session = a.session AND b.id > a.id AND b.first_seq < a.last_seq"),
               0,
               "the recording has no chunk out of seq order");
  return db;
}

/* Whether a call read one way is the call w read another. */
static bool same_recorded_call(const pt_call *c, const pt_call *w)
{
  return c->seq == w->seq && c->api == w->api && c->thread == w->thread &&
         c->result == w->result && c->start_ns == w->start_ns && c->dur_ns == w->dur_ns &&
         c->returned == w->returned && c->args->n == w->args->n;
}

/* Opens db and loads its default session's calls (pt_load); its id. */
static int64_t open_and_load(const char *db, pt_db *h, pt_calls *all)
{
  char e[512];
  cr_assert(pt_open(db, 0, h, e, sizeof e), "%s", e);
  int64_t id = pt_default_session(h);
  cr_assert(pt_load(h, id, all, e, sizeof e), "%s", e);
  return id;
}

Test(viewer, show_stats_export_stream_calls_in_seq_order_from_chunks_out_of_order)
{
  char *db = record_chunks_out_of_order();
  long long calls = sql_int(db, "SELECT count(*) FROM pi_calls");
  cr_assert_gt(calls, 1500);
  /* The cursor yields what pt_load holds, call by call. */
  pt_db h;
  pt_calls all;
  char e[512];
  int64_t id = open_and_load(db, &h, &all);
  pt_cursor *cur = pt_cursor_open(&h, id, e, sizeof e);
  cr_assert(cur, "%s", e);
  size_t n = 0;
  for (const pt_call *c; (c = pt_cursor_next(cur, e, sizeof e)); n++) {
    cr_assert_lt(n, all.n);
    const pt_call *w = &all.v[n];
    cr_assert(same_recorded_call(c, w), "call %zu: seq %lld, want %lld", n, (long long)c->seq,
              (long long)w->seq);
  }
  cr_assert_eq(e[0], 0, "%s", e);
  cr_assert_eq(n, all.n);
  pt_cursor_close(cur);
  pt_calls_free(&all);
  pt_close(&h);
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "show", "--compact", db, NULL), 0, "%s", err);
  assert_seq_order(out, NULL, calls);
  cr_assert_eq(pitrace(&out, &err, "show", db, NULL), 0, "%s", err);
  cr_assert_eq(tu_count(out, "\n---> "), calls - 1, "a block per call");
  cr_assert_eq(pitrace(&out, &err, "export", "--format", "jsonl", db, NULL), 0, "%s", err);
  assert_seq_order(out, "{\"seq\":", calls);
  cr_assert_eq(pitrace(&out, &err, "export", "--format", "csv", db, NULL), 0, "%s", err);
  assert_seq_order(strchr(out, '\n') + 1, NULL, calls);
  cr_assert_eq(pitrace(&out, &err, "stats", db, NULL), 0, "%s", err);
  char *want = fmt(": %lld calls, ", calls);
  cr_assert(strstr(out, want), "no '%s' in\n%s", want, out);
  cr_assert(strstr(out, "\npiProgramBuild "), "%s", out);
}

/* pt_seek finds every call of the session in db by its seq, whatever the
 * order they are asked in, as pt_load holds it; none past the last. */
static void assert_seek_finds_every_call(const char *db)
{
  pt_db h;
  pt_calls all;
  char e[512];
  int64_t id = open_and_load(db, &h, &all);
  cr_assert_gt(all.n, 0);
  pt_seek *s = pt_seek_open(&h, id, e, sizeof e);
  cr_assert(s, "%s", e);
  /* Last to first, then a stride that jumps between chunks. */
  for (size_t pass = 0; pass < 2; pass++)
    for (size_t k = 0; k < all.n; k++) {
      const pt_call *w = &all.v[pass ? k * 7919 % all.n : all.n - 1 - k];
      const pt_call *c = pt_seek_call(s, w->seq, e, sizeof e);
      cr_assert(c, "%s: seq %lld not found: %s", db, (long long)w->seq, e);
      cr_assert(same_recorded_call(c, w), "%s: seq %lld read as seq %lld", db,
                (long long)w->seq, (long long)c->seq);
    }
  cr_assert_null(pt_seek_call(s, all.v[all.n - 1].seq + 1, e, sizeof e));
  cr_assert_str_eq(e, "");
  cr_assert_null(pt_seek_call(s, 0, e, sizeof e));
  pt_seek_close(s);
  pt_calls_free(&all);
  pt_close(&h);
}

/* A session whose chunks hold calls out of seq order, in version-2 chunks
 * and turned into version-1 ones: pt_seek reads each call by its seq, and
 * diff, which reads the calls by seq in the order it aligned them, finds
 * the two the same. */
Test(viewer, seek_and_diff_read_calls_by_seq_from_chunks_out_of_order)
{
  char *db = record_chunks_out_of_order();
  assert_seek_finds_every_call(db);
  char *v1 = copy_db(db), *out, *err;
  sql_exec(v1, TU_AS_V1_CHUNKS);
  cr_assert_eq(sql_int(v1, "SELECT count(*) FROM call_chunks"), 0);
  assert_seek_finds_every_call(v1);
  cr_assert_eq(pitrace(&out, &err, "diff", db, v1, NULL), 0, "%s%s", out, err);
  cr_assert(strstr(out, SAME_SUMMARY ": same"), "%s", out);
  char *want = fmt("(%lld calls)", sql_int(db, "SELECT count(*) FROM pi_calls"));
  cr_assert(strstr(out, want), "no '%s' in\n%s", want, out);
}

/* The default session of the file db, loaded into *want: its id. */
static int64_t load_default_session(const char *db, pt_calls *want)
{
  pt_db h;
  char e[512];
  cr_assert(pt_open(db, 0, &h, e, sizeof e), "%s", e);
  int64_t id = pt_default_session(&h);
  cr_assert(pt_load(&h, id, want, e, sizeof e), "%s", e);
  pt_close(&h);
  return id;
}

/* The session h holds, loaded, has the calls of want (`what` says which
 * try); got is freed. */
static void assert_loads_the_same(pt_db *h, int64_t id, const pt_calls *want, const char *what)
{
  pt_calls got;
  char e[512];
  cr_assert(pt_load(h, id, &got, e, sizeof e), "%s: %s", what, e);
  cr_assert_eq(got.n, want->n, "%s", what);
  for (size_t i = 0; i < got.n; i++)
    cr_assert(got.v[i].seq == want->v[i].seq && got.v[i].api == want->v[i].api &&
              got.v[i].start_ns == want->v[i].start_ns &&
              got.v[i].args->n == want->v[i].args->n, "%s, call %zu: seq %lld, want %lld",
              what, i, (long long)got.v[i].seq, (long long)want->v[i].seq);
  pt_calls_free(&got);
}

/* pt_load decodes chunks on several threads, each call put in its place by
 * the rows' counts of calls: where a count is wrong the calls are the same,
 * and of two damaged chunks the first is named whichever thread failed
 * first. */
Test(viewer, pt_load_takes_wrong_counts_and_names_the_first_damaged_chunk)
{
  char *db = tu_temp_path(".db");
  /* Over 9000 calls: at least three chunks of at most 4096 (PT_CHUNK_CALLS). */
  const char *argv[] = {BIN "/record_prog", "slowcall", "9000", NULL};
  cr_assert_eq(record_into(db, argv, POCL, NULL), 0);
  cr_assert_geq(sql_int(db, "SELECT count(*) FROM call_chunks"), 3);
  pt_calls want, got;
  int64_t id = load_default_session(db, &want);
  pt_db h;
  char e[512];
  /* A count too high (the others right), then one too low. */
  static const char *const edits[] = {
      "UPDATE call_chunks SET ncalls = ncalls + 5 WHERE id = 2",
      "UPDATE call_chunks SET ncalls = ncalls - 5 WHERE id = 2; "
      "UPDATE call_chunks SET ncalls = ncalls - 1 WHERE id = 3"};
  for (int k = 0; k < 2; k++) {
    sql_exec(db, edits[k]);
    cr_assert(pt_open(db, 0, &h, e, sizeof e), "%s", e);
    assert_loads_the_same(&h, id, &want, k ? "a count too low" : "a count too high");
    pt_close(&h);
  }
  sql_exec(db, "UPDATE call_chunks SET calls = substr(calls, 1, 10) WHERE id IN (2, (SELECT "
               "max(id) FROM call_chunks))");
  cr_assert(pt_open(db, 0, &h, e, sizeof e), "%s", e);
  cr_assert_not(pt_load(&h, id, &got, e, sizeof e));
  cr_assert(strstr(e, "is damaged: session 1, chunk 2: "), "%s", e);
  pt_close(&h);
  pt_calls_free(&want);
}

/* A database held in memory (the fuzzers' way in) reads as its file does:
 * the same calls, also from the image of a file in WAL mode (which is
 * never written to), and bad images are refused in one line. */
Test(viewer, pt_open_image_reads_a_database_held_in_memory_as_pt_open_reads_the_file)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/vadd", "16", NULL};
  cr_assert_eq(record_into(db, argv, POCL, "SYCL_PI_RECORD_DATA=all"), 0);
  pt_calls want;
  int64_t id = load_default_session(db, &want);
  cr_assert_gt(want.n, 10);
  pt_db h;
  char e[512];
  struct stat st;
  cr_assert_eq(stat(db, &st), 0);
  size_t n = (size_t)st.st_size;
  unsigned char *image = (unsigned char *)tu_read_file(db);
  cr_assert(image && n > 4096);
  for (int wal = 0; wal < 2; wal++) {
    if (wal)
      image[18] = image[19] = 2;
    cr_assert(pt_open_image("the image", image, n, &h, e, sizeof e), "%s", e);
    cr_assert_eq(pt_default_session(&h), id);
    assert_loads_the_same(&h, id, &want, wal ? "in WAL mode" : "in rollback mode");
    pt_close(&h);
  }
  cr_assert(image[18] == 2 && image[19] == 2, "pt_open_image wrote into the image");
  cr_assert_not(pt_open_image("the image", "SQLite", 6, &h, e, sizeof e));
  cr_assert_str_eq(e, "the image is not a pitrace session (not an SQLite database: too short)");
  cr_assert_not(pt_open_image("the image", image, 0, &h, e, sizeof e));
  cr_assert_str_eq(e, "the image is empty: no session was recorded into it");
  /* Cut after its first pages: refused with SQLite's reason. */
  cr_assert_not(pt_open_image("the image", image, 2048, &h, e, sizeof e));
  cr_assert(strncmp(e, "the image is damaged or truncated: ", 35) == 0 && !strchr(e, '\n'), "%s",
            e);
  free(image);
  pt_calls_free(&want);
}

/* ---- report ----------------------------------------------------------------------- */

static const char *chromium(void)
{
  static const char *const names[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser",
                                      "/snap/bin/chromium"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (access(names[i], X_OK) == 0)
      return names[i];
  return NULL;
}

/* Runs headless Chromium on a page: the DOM after its scripts ran, or a
 * screenshot into `png`. */
static char *headless(const char *page, const char *png)
{
  char url[4200], shot[4200], profile[] = "/tmp/pitrace-chromium-XXXXXX", dir[4200];
  snprintf(url, sizeof url, "file://%s", page);
  snprintf(shot, sizeof shot, "--screenshot=%s", png ? png : "");
  snprintf(dir, sizeof dir, "--user-data-dir=%s", mkdtemp(profile));
  const char *argv[] = {chromium(), "--headless", "--no-sandbox", "--disable-gpu", dir,
                        png ? shot : "--dump-dom", "--window-size=1280,900", url, NULL};
  const char *env[] = {kv("HOME", profile), NULL};
  char *out;
  int rc = tu_run(argv, env, &out);
  const char *rm[] = {"/bin/rm", "-rf", profile, NULL};
  tu_run(rm, NULL, NULL);
  cr_assert_eq(rc, 0, "%s", out);
  return out;
}

Test(viewer, report_renders_in_headless_chromium)
{
  if (!chromium())
    cr_skip_test("chromium is not installed (apt-get install chromium; scripts/setup.sh "
                 "installs it)");
  char *a = record("vadd", POCL), *b = record("vadd", RUSTICL), *html = tu_temp_path(".html");
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "report", a, b, "-o", html, NULL), 0, "%s", err);
  char *page = tu_read_file(html);
  cr_assert_null(strstr(page, "http://"), "the report must work offline");
  cr_assert_null(strstr(page, "https://"), "the report must work offline");
  cr_assert_null(strstr(page, " src="), "the report must be self-contained");
  char *dom = headless(html, NULL);
  cr_assert(strstr(dom, "data-rendered=\"yes\""), "the script did not run:\n%.2000s", dom);
  cr_assert_eq(tu_count(dom, "<tr class=\"call"), sql_int(a, "SELECT count(*) FROM pi_calls"));
  cr_assert(strstr(dom, "<td>piEnqueueKernelLaunch</td><td class=\"num\">1</td>"), "%.3000s",
            dom);
  cr_assert(strstr(dom, "<td>vadd</td><td class=\"num\">1</td>"), "no kernel row");
  cr_assert(strstr(dom, "param_value (PI_DEVICE_INFO_NAME)"), "no comparison");
  cr_assert(strstr(dom, "class=\"badge bad\">different<"), "no verdict");
  cr_assert(strstr(dom, "<canvas id=\"timeline\" width=\""), "no timeline");
  /* The filter box: the page opens filtered when its address says so. */
  char filtered[4200];
  snprintf(filtered, sizeof filtered, "%s#filter=piKernel", html);
  dom = headless(filtered, NULL);
  cr_assert_eq(tu_count(dom, "<tr class=\"call"),
               sql_int(a, "SELECT count(*) FROM pi_calls WHERE api LIKE 'piKernel%'"));
  char *png = tu_temp_path(".png");
  headless(html, png);
  struct stat st;
  cr_assert_eq(stat(png, &st), 0, "no screenshot");
  cr_assert_gt(st.st_size, 20000, "the screenshot is blank");
  cr_assert(memcmp(tu_read_file(png), "\x89PNG", 4) == 0);
}

/* The report page with a script of the test's appended: it runs after the
 * page's own script, drives the page with real DOM events, and leaves what
 * it saw as URI-encoded JSON in <pre id="harness">. Returns that JSON,
 * parsed. `fragment` goes after the page's address (#zoom=...). */
static pt_json *drive(pt_json_arena *arena, const char *html, const char *fragment,
                      const char *script)
{
  char *page = tu_read_file(html), *at = strstr(page, "</body>");
  cr_assert(at, "no </body> in the report");
  for (char *next; (next = strstr(at + 1, "</body>"));)
    at = next;
  char *driven = tu_temp_path(".html");
  FILE *f = fopen(driven, "w");
  fprintf(f, "%.*s<script>\n'use strict';\n(function () {\nconst out = {};\ntry {\n%s\n} catch (e) "
             "{ out.error = String(e.stack || e); }\nconst pre = document.createElement('pre');\n"
             "pre.id = 'harness';\npre.textContent = encodeURIComponent(JSON.stringify(out));\n"
             "document.body.append(pre);\n})();\n</script>\n%s",
          (int)(at - page), page, script, at);
  fclose(f);
  char url[4200];
  snprintf(url, sizeof url, "%s%s", driven, fragment ? fragment : "");
  char *dom = headless(url, NULL);
  char *p = strstr(dom, "<pre id=\"harness\">");
  cr_assert(p, "the test's script did not run:\n%.3000s", dom);
  p += strlen("<pre id=\"harness\">");
  char *end = strstr(p, "</pre>"), *json = malloc((size_t)(end - p) + 1), *o = json;
  for (; p < end; p++) { /* URI decoding */
    unsigned v;
    if (*p == '%' && sscanf(p + 1, "%2x", &v) == 1) {
      *o++ = (char)v;
      p += 2;
    } else {
      *o++ = *p;
    }
  }
  *o = 0;
  pt_json *j = parse(arena, json);
  pt_json *err = member(j, "error");
  cr_assert_null(err, "the page threw: %s", err ? err->u.s : "");
  return j;
}

static double num(const pt_json *j)
{
  cr_assert(j && (j->type == PJ_INT || j->type == PJ_REAL), "not a number");
  return j->type == PJ_INT ? (double)j->u.i : j->u.d;
}

static double num_at(const pt_json *o, const char *key, size_t i)
{
  return num(pt_json_at(member(o, key), i));
}

static const char *str_of(const pt_json *o, const char *key)
{
  pt_json *v = member(o, key);
  cr_assert(v && v->type == PJ_STRING, "no string %s", key);
  return v->u.s;
}

/* The calls of a session that overlap the times a..b (ns from its start):
 * what the page counts as in view. */
static long count_between(const pt_calls *calls, double a, double b)
{
  long n = 0;
  for (size_t i = 0; i < calls->n; i++) {
    const pt_call *c = &calls->v[i];
    cr_assert(c->returned, "the recorded vadd run has a call that never returned");
    if ((double)c->start_ns <= b && (double)(c->start_ns + c->dur_ns) >= a)
      n++;
  }
  return n;
}

static void load_calls(const char *db, pt_calls *calls)
{
  pt_db h;
  char err[512];
  cr_assert(pt_open(db, false, &h, err, sizeof err), "%s", err);
  cr_assert(pt_load(&h, pt_default_session(&h), calls, err, sizeof err), "%s", err);
  pt_close(&h);
}

/* What `pitrace show --seq N` prints for the call, without the blank line. */
static char *show_block_of(const char *db, long long seq)
{
  char *out, *err, range[32];
  snprintf(range, sizeof range, "%lld", seq);
  cr_assert_eq(pitrace(&out, &err, "show", "--seq", range, db, NULL), 0, "%s", err);
  size_t n = strlen(out);
  while (n && out[n - 1] == '\n')
    out[--n] = 0;
  return out;
}

Test(viewer, report_timeline_zooms_pans_and_shows_a_clicked_calls_details)
{
  if (!chromium())
    cr_skip_test("chromium is not installed (apt-get install chromium)");
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/vadd", NULL};
  cr_assert_eq(record_into(db, argv, POCL, "SYCL_PI_RECORD_BACKTRACE=1"), 0);
  char *html = tu_temp_path(".html"), *out, *err;
  cr_assert_eq(pitrace(&out, &err, "report", db, "-o", html, NULL), 0, "%s", err);
  long long launch = sql_int(db, "SELECT seq FROM pi_calls WHERE api = 'piEnqueueKernelLaunch'");
  long long write = sql_int(db, "SELECT min(seq) FROM pi_calls WHERE api = "
                                "'piEnqueueMemBufferWrite'");
  long long l0 = sql_int(db, "SELECT start_ns FROM pi_calls WHERE api = 'piEnqueueKernelLaunch'");
  long long l1 = sql_int(db, "SELECT end_ns FROM pi_calls WHERE api = 'piEnqueueKernelLaunch'");
  long long total = sql_int(db, "SELECT count(*) FROM pi_calls");
  cr_assert(launch > 0 && write > 0 && l1 > l0);
  /* Opened on the launch (zoomed to it) with the write selected; then the
   * test clicks the launch on its queue's lane, shows the whole run, turns
   * the wheel, drags the timeline and picks ranges on the overview. */
  char fragment[128], script[6000];
  snprintf(fragment, sizeof fragment, "#zoom=%lld,%lld&select=%lld", l0 - 20000, l1 + 20000,
           write);
  snprintf(script, sizeof script,
      "const P = window.pitrace, cv = document.getElementById('timeline');\n"
      "const ov = document.getElementById('overview');\n"
      "const range = () => { const e = document.getElementById('range').dataset;\n"
      "  return [Number(e.a), Number(e.b), Number(e.calls)]; };\n"
      "const text = id => { const e = document.getElementById(id); return e ? e.textContent : null; };\n"
      "const details = () => ({ seq: document.getElementById('details').dataset.seq,\n"
      "  title: text('details-title'), facts: text('details-facts'), args: text('details-args'),\n"
      "  data: text('details-data'), stack: text('details-stack'), selected: P.selected() });\n"
      "/* Events carry whole pixels: the test's points are whole too. */\n"
      "const mouse = (target, type, x, y) => target.dispatchEvent(new MouseEvent(type,\n"
      "  { clientX: Math.round(x), clientY: Math.round(y), button: 0, bubbles: true,\n"
      "    cancelable: true }));\n"
      "out.opened = range();\n"
      "out.first = details();\n"
      "out.lanes = P.lanes();\n"
      "const box = P.box(0, %lld, 'queue');\n"
      "out.box = box;\n"
      "mouse(cv, 'mousedown', box.x + box.w / 2, box.y + box.h / 2);\n"
      "mouse(window, 'mouseup', box.x + box.w / 2, box.y + box.h / 2);\n"
      "out.clicked = details();\n"
      "document.getElementById('zoom-all').click();\n"
      "out.whole = P.whole();\n"
      "out.all = range();\n"
      "const r = cv.getBoundingClientRect(), x = Math.round(r.left + r.width * 0.75);\n"
      "const y = Math.round(r.top + 30);\n"
      "out.before = P.timeAt(x);\n"
      "cv.dispatchEvent(new WheelEvent('wheel', { clientX: x, clientY: y, deltaY: -500,\n"
      "  bubbles: true, cancelable: true }));\n"
      "out.wheeled = range();\n"
      "out.after = P.timeAt(x);\n"
      "out.beforeDrag = P.timeAt(x - 100);\n"
      "mouse(cv, 'mousedown', x - 100, y);\n"
      "mouse(window, 'mousemove', x - 150, y);\n"
      "mouse(window, 'mousemove', x - 200, y);\n"
      "mouse(window, 'mouseup', x - 200, y);\n"
      "out.dragged = range();\n"
      "out.afterDrag = P.timeAt(x - 200);\n"
      "out.stillSelected = P.selected();\n"
      "const o = ov.getBoundingClientRect(), ox = Math.round(o.left + o.width * 0.5);\n"
      "const oy = o.top + 10;\n"
      "for (const [name, from, to] of [['brushed', 0, 150], ['brushed2', -150, 150],\n"
      "                                ['moved', 0, 50]]) {\n"
      "  mouse(ov, 'mousedown', ox + from, oy);\n"
      "  mouse(window, 'mousemove', ox + to, oy);\n"
      "  mouse(window, 'mouseup', ox + to, oy);\n"
      "  out[name] = range();\n"
      "}\n",
      launch);
  pt_json_arena arena = {0};
  pt_json *j = drive(&arena, html, fragment, script);
  pt_calls calls;
  load_calls(db, &calls);

  /* The address opened it zoomed and with the write selected. */
  cr_assert_float_eq(num_at(j, "opened", 0), (double)(l0 - 20000), 0.5);
  cr_assert_float_eq(num_at(j, "opened", 1), (double)(l1 + 20000), 0.5);
  cr_assert_eq(num_at(j, "opened", 2), count_between(&calls, l0 - 20000, l1 + 20000));
  cr_assert_lt(num_at(j, "opened", 2), total, "zoomed in, fewer calls are in view");
  pt_json *first = member(j, "first");
  cr_assert_eq(atoll(str_of(first, "seq")), write);
  cr_assert_str_eq(str_of(first, "args"), show_block_of(db, write));
  /* Its data: the buffer's bytes, their size as the database has it. */
  char want[128];
  snprintf(want, sizeof want, "%s bytes", sql(db, "SELECT size FROM data WHERE seq = (SELECT "
                                                  "min(seq) FROM pi_calls WHERE api = "
                                                  "'piEnqueueMemBufferWrite')"));
  cr_assert(strstr(str_of(first, "data"), "ptrin (read by the call)"), "%s",
            str_of(first, "data"));
  cr_assert(strstr(str_of(first, "data"), want), "no '%s' in %s", want, str_of(first, "data"));

  /* Lanes: one per thread, one for the queue, labelled plainly. */
  pt_json *lanes = member(j, "lanes");
  char queue[160];
  snprintf(queue, sizeof queue, "%s (enqueue calls; device time not recorded)",
           sql(db, "SELECT value FROM pi_args WHERE seq = (SELECT seq FROM pi_calls WHERE api "
                   "= 'piEnqueueKernelLaunch') AND position = 0"));
  bool queue_lane = false;
  for (uint32_t i = 0; i < lanes->n; i++) {
    pt_json *l = pt_json_at(lanes, i);
    if (strcmp(str_of(l, "kind"), "queue") == 0) {
      cr_assert_str_eq(str_of(l, "title"), queue);
      cr_assert_eq(num(member(l, "items")),
                   sql_int(db, "SELECT count(*) FROM pi_calls WHERE api LIKE 'piEnqueue%'"));
      queue_lane = true;
    }
  }
  cr_assert(queue_lane, "no queue lane");

  /* The click on the queue lane selected the launch: its details. */
  pt_json *clicked = member(j, "clicked");
  cr_assert_eq(atoll(str_of(clicked, "seq")), launch, "the click selected %s",
               str_of(clicked, "seq"));
  char title[64];
  snprintf(title, sizeof title, "#%lld piEnqueueKernelLaunch (vadd)", launch);
  cr_assert_str_eq(str_of(clicked, "title"), title);
  char *block = show_block_of(db, launch);
  cr_assert(strstr(block, "pi_kernel kernel : kernel#"), "%s", block);
  cr_assert_str_eq(str_of(clicked, "args"), block);
  cr_assert(strstr(str_of(clicked, "facts"), "resultPI_SUCCESS"), "%s", str_of(clicked, "facts"));
  cr_assert(strstr(str_of(clicked, "facts"), "queuequeue#"), "%s", str_of(clicked, "facts"));
  const char *frames = sql(db, "SELECT s.frames FROM stacks s JOIN pi_calls c ON c.stack = "
                               "s.id WHERE c.api = 'piEnqueueKernelLaunch'");
  cr_assert(strstr(frames, "vadd"), "no backtrace recorded: %s", frames);
  cr_assert_str_eq(str_of(clicked, "stack"), frames);

  /* The whole run: every call in view. */
  double whole = num_at(j, "whole", 1);
  cr_assert_eq(num_at(j, "whole", 0), 0);
  cr_assert_geq(whole, (double)sql_int(db, "SELECT max(end_ns) FROM pi_calls"));
  cr_assert_eq(num_at(j, "all", 2), total);
  /* The wheel zoomed in at the pointer: the time under it stayed, the span
   * shrank by e^(500 * 0.002), the calls in view are those of the range. */
  double a = num_at(j, "wheeled", 0), b = num_at(j, "wheeled", 1);
  cr_assert_float_eq(b - a, whole * 0.36787944117144233 /* e^-1 */, whole * 1e-9);
  cr_assert_float_eq(num(member(j, "after")), num(member(j, "before")), whole * 1e-9);
  cr_assert_eq(num_at(j, "wheeled", 2), count_between(&calls, a, b));
  cr_assert_lt(num_at(j, "wheeled", 2), total);
  /* The drag moved it by 100 pixels, the span kept; a drag selects nothing. */
  double da = num_at(j, "dragged", 0), db2 = num_at(j, "dragged", 1);
  cr_assert_float_eq(db2 - da, b - a, whole * 1e-9);
  cr_assert_float_eq(num(member(j, "afterDrag")), num(member(j, "beforeDrag")), whole * 1e-9);
  cr_assert_gt(da, a);
  cr_assert_eq(num_at(j, "dragged", 2), count_between(&calls, da, db2));
  cr_assert_eq(num(member(member(j, "stillSelected"), "seq")), launch);
  /* The overview: a range picked from its middle 150 pixels to the right,
   * then from 150 pixels left of the middle (the same end, twice as wide);
   * a drag of 50 pixels inside the range moves it by a sixth of its span. */
  double b1 = num_at(j, "brushed", 0), e1 = num_at(j, "brushed", 1);
  double b2 = num_at(j, "brushed2", 0), e2 = num_at(j, "brushed2", 1);
  double b3 = num_at(j, "moved", 0), e3 = num_at(j, "moved", 1);
  cr_assert_gt(b2, 0);
  cr_assert_lt(e1, whole);
  cr_assert_float_eq(e1, e2, whole * 1e-9);
  cr_assert_float_eq(e2 - b2, 2 * (e1 - b1), whole * 1e-6);
  cr_assert_float_eq(e3 - b3, e2 - b2, whole * 1e-6);
  cr_assert_float_eq(b3 - b2, (e2 - b2) / 6, whole * 1e-6);
  cr_assert_eq(num_at(j, "brushed", 2), count_between(&calls, b1, e1));
  cr_assert_eq(num_at(j, "moved", 2), count_between(&calls, b3, e3));
  pt_calls_free(&calls);
  pt_json_arena_free(&arena);
}

/* A profiled session (SYCL_PI_RECORD_PROFILE=1, PoCL: no device and host
 * timers, so the viewer places the commands): its queue lane holds each
 * command's device time, placed at the earliest time the enqueue calls
 * allow (as stats, show and export place them), not the enqueue calls'
 * spans, and says so; a launch clicked there shows its device time as
 * `pitrace show` prints it. */
Test(viewer, report_queue_lane_shows_device_times_when_recorded)
{
  if (!chromium())
    cr_skip_test("chromium is not installed (apt-get install chromium)");
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/pipeline", NULL};
  cr_assert_eq(record_into(db, argv, POCL, "SYCL_PI_RECORD_PROFILE=1"), 0);
  char *html = tu_temp_path(".html"), *out, *err;
  cr_assert_eq(pitrace(&out, &err, "report", db, "-o", html, NULL), 0, "%s", err);
  long long timed = sql_int(db, "SELECT count(*) FROM device_times");
  cr_assert_geq(timed, 4, "pipeline's commands were not timed");
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM device_times WHERE start_ns IS NOT NULL"), 0,
               "PoCL has device and host timers now: this test expects estimated placement");
  /* The placement, from the database: each command at its device start
   * plus the smallest offset that starts none before its enqueue call. */
  const char *placed = "SELECT d.seq, d.device_start_ns + (SELECT max(c.start_ns - e.device_start_ns)"
                       " FROM device_times e JOIN pi_calls c ON c.seq = e.seq AND c.session = "
                       "e.session WHERE e.device = d.device AND e.session = d.session), "
                       "d.device_end_ns - d.device_start_ns, c.start_ns, c.end_ns - c.start_ns "
                       "FROM device_times d JOIN pi_calls c ON c.seq = d.seq AND c.session = "
                       "d.session ORDER BY d.seq";
  long long seqs[64], start[64], dev[64], call_start[64], call_dur[64], launch = -1, n = 0;
  sqlite3 *h;
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  tu_sqlite_views(h);
  cr_assert_eq(sqlite3_prepare_v2(h, placed, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
  for (; sqlite3_step(st) == SQLITE_ROW && n < 64; n++) {
    seqs[n] = sqlite3_column_int64(st, 0);
    start[n] = sqlite3_column_int64(st, 1);
    dev[n] = sqlite3_column_int64(st, 2);
    call_start[n] = sqlite3_column_int64(st, 3);
    call_dur[n] = sqlite3_column_int64(st, 4);
    cr_assert_neq(dev[n], call_dur[n], "seq %lld: device time and enqueue span agree", seqs[n]);
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  cr_assert_eq(n, timed);
  /* The launch that ran longest on the device, opened zoomed on its span. */
  long long k = -1;
  for (long long i = 0; i < n; i++)
    if (strcmp(sql(db, fmt("SELECT api FROM pi_calls WHERE seq = %lld", seqs[i])),
               "piEnqueueKernelLaunch") == 0 && (k < 0 || dev[i] > dev[k]))
      k = i;
  cr_assert_geq(k, 0, "no launch timed");
  launch = seqs[k];
  char fragment[128], script[4000];
  snprintf(fragment, sizeof fragment, "#zoom=%lld,%lld", start[k] - dev[k], start[k] + 2 * dev[k]);
  char seqlist[64 * 24] = "";
  for (long long i = 0; i < n; i++)
    snprintf(seqlist + strlen(seqlist), sizeof seqlist - strlen(seqlist), "%s%lld", i ? "," : "",
             seqs[i]);
  snprintf(script, sizeof script,
      "const P = window.pitrace, cv = document.getElementById('timeline');\n"
      "const text = id => { const e = document.getElementById(id); return e ? e.textContent : null; };\n"
      "const mouse = (target, type, x, y) => target.dispatchEvent(new MouseEvent(type,\n"
      "  { clientX: Math.round(x), clientY: Math.round(y), button: 0, bubbles: true,\n"
      "    cancelable: true }));\n"
      "out.lanes = P.lanes();\n"
      "out.boxes = [%s].map(seq => P.box(0, seq, 'queue'));\n"
      "const box = P.box(0, %lld, 'queue');\n"
      "mouse(cv, 'mousedown', box.x + box.w / 2, box.y + box.h / 2);\n"
      "mouse(window, 'mouseup', box.x + box.w / 2, box.y + box.h / 2);\n"
      "out.seq = document.getElementById('details').dataset.seq;\n"
      "out.device = text('details-device');\n"
      "out.dur = text('details-device-dur');\n",
      seqlist, launch);
  pt_json_arena arena = {0};
  pt_json *j = drive(&arena, html, fragment, script);

  /* One queue lane: the device's commands, labelled so. */
  char *queue = sql(db, fmt("SELECT queue FROM pi_device_times WHERE seq = %lld", launch));
  pt_json *lanes = member(j, "lanes");
  int queue_lanes = 0;
  for (uint32_t i = 0; i < lanes->n; i++) {
    pt_json *l = pt_json_at(lanes, i);
    if (strcmp(str_of(l, "kind"), "queue") != 0)
      continue;
    queue_lanes++;
    cr_assert_str_eq(str_of(l, "title"), fmt("%s (device time, estimated placement)", queue));
    cr_assert_eq(num(member(l, "items")), timed);
  }
  cr_assert_eq(queue_lanes, 1);
  /* Each command drawn over its device time, where the viewer places it:
   * never its enqueue call's span. */
  pt_json *boxes = member(j, "boxes");
  cr_assert_eq(boxes->n, n);
  for (long long i = 0; i < n; i++) {
    pt_json *b = pt_json_at(boxes, (size_t)i);
    cr_assert(b && b->type == PJ_OBJECT, "seq %lld is not on the queue lane", seqs[i]);
    double s = num(member(b, "s")), e = num(member(b, "e"));
    cr_assert_float_eq(e - s, (double)dev[i], 0.5, "seq %lld: drawn %.0f ns, device %lld ns",
                       seqs[i], e - s, dev[i]);
    cr_assert_float_eq(s, (double)start[i], 0.5, "seq %lld: drawn from %.0f, placed at %lld",
                       seqs[i], s, start[i]);
    cr_assert_geq(s, (double)call_start[i], "seq %lld starts before its enqueue call", seqs[i]);
  }
  /* The launch clicked on that lane: its device time as show prints it. */
  cr_assert_eq(atoll(str_of(j, "seq")), launch);
  char *block = show_block_of(db, launch), *line = strstr(block, "device time: ");
  cr_assert(line, "%s", block);
  line += strlen("device time: ");
  *strstr(line, " on ") = 0;
  cr_assert_str_eq(str_of(j, "dur"), line);
  cr_assert(strstr(str_of(j, "device"), fmt(" on %s, from ", queue)), "%s",
            str_of(j, "device"));
  cr_assert(strstr(str_of(j, "device"), "estimated placement"), "%s", str_of(j, "device"));
  pt_json_arena_free(&arena);
}

/* ---- record directories (pitrace record -o DIR) ------------------------------------ */

/* Three processes recorded into a new directory (vadd three times under
 * sh -c): their session files, start times and pids, by start time. */
typedef struct three {
  char *dir, *files[3];
  long long start[3], pid[3];
} three;

static three record_three(void)
{
  three t = {.dir = tu_temp_path(".d")};
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "%s/vadd; %s/vadd; %s/vadd", BIN, BIN, BIN);
  /* vadd makes PI calls itself (pirt.h): no OpenCL front end needed. */
  const char *argv[] = {PITRACE, "record", "--no-opencl", "-o", t.dir, "--", "/bin/sh", "-c",
                        cmd, NULL};
  const char *env[] = {POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  int n = 0;
  DIR *d = opendir(t.dir);
  for (struct dirent *e; (e = readdir(d));) {
    if (!strstr(e->d_name, ".db"))
      continue;
    cr_assert_lt(n, 3, "more than three sessions");
    t.files[n] = fmt("%s/%s", t.dir, e->d_name);
    t.start[n] = sql_int(t.files[n], "SELECT start_unix_ns FROM sessions");
    t.pid[n] = sql_int(t.files[n], "SELECT pid FROM sessions");
    for (int k = n++; k > 0 && t.start[k] < t.start[k - 1]; k--) {
      long long v = t.start[k];
      t.start[k] = t.start[k - 1], t.start[k - 1] = v;
      v = t.pid[k], t.pid[k] = t.pid[k - 1], t.pid[k - 1] = v;
      char *f = t.files[k];
      t.files[k] = t.files[k - 1], t.files[k - 1] = f;
    }
  }
  closedir(d);
  cr_assert_eq(n, 3);
  return t;
}

Test(viewer, report_of_a_record_directory_shows_its_processes_on_one_clock)
{
  if (!chromium())
    cr_skip_test("chromium is not installed (apt-get install chromium)");
  three t = record_three();
  char *dir = t.dir, **files = t.files, *out;
  long long *start = t.start, *pid = t.pid;
  char *html = tu_temp_path(".html"), *err;
  cr_assert_eq(pitrace(&out, &err, "report", dir, "-o", html, NULL), 0, "%s", err);
  pt_json_arena arena = {0};
  pt_json *j = drive(&arena, html, NULL, "out.lanes = window.pitrace.lanes();\n"
                                          "out.sessions = document.getElementById('sessions')"
                                          ".textContent;\n");
  /* A heading per process (pid and command), its thread and queue lanes
   * after it, each placed by its start time on one clock. */
  pt_json *lanes = member(j, "lanes");
  int heads = 0, threads = 0, queues = 0;
  for (uint32_t i = 0; i < lanes->n; i++) {
    pt_json *l = pt_json_at(lanes, i);
    int s = (int)num(member(l, "session"));
    cr_assert(s >= 0 && s < 3);
    cr_assert_eq(num(member(l, "offset")), (double)(start[s] - start[0]), "session %d", s);
    const char *kind = str_of(l, "kind");
    if (strcmp(kind, "head") == 0) {
      char want[4300];
      snprintf(want, sizeof want, "pid %lld: %s (starts at +", pid[s],
               sql(files[s], "SELECT command FROM sessions"));
      cr_assert(strncmp(str_of(l, "title"), want, strlen(want)) == 0, "%s", str_of(l, "title"));
      cr_assert_eq(s, heads++, "the headings go in start order");
    } else {
      cr_assert_eq(s, heads - 1, "a lane before its session's heading");
      threads += strcmp(kind, "thread") == 0;
      queues += strcmp(kind, "queue") == 0;
      if (strcmp(kind, "thread") == 0)
        cr_assert_eq(num(member(l, "items")), sql_int(files[s], "SELECT count(*) FROM pi_calls"));
    }
  }
  cr_assert(heads == 3 && threads == 3 && queues == 3, "%d %d %d", heads, threads, queues);
  for (int s = 0; s < 3; s++) {
    char want[64];
    snprintf(want, sizeof want, "pid %lld: ", pid[s]);
    cr_assert(strstr(str_of(j, "sessions"), want), "%s", str_of(j, "sessions"));
  }
  pt_json_arena_free(&arena);
}

Test(viewer, report_of_a_directory_without_good_sessions_says_why_in_one_line)
{
  char *empty = tu_temp_path(".d"), *html = tu_temp_path(".html"), *out, *err;
  cr_assert_eq(mkdir(empty, 0700), 0);
  cr_assert_eq(pitrace(&out, &err, "report", empty, "-o", html, NULL), 2);
  cr_assert(strstr(err, "holds no session files (*.db)") && lines(err) == 1, "%s", err);
  char *db = record("vadd", POCL), path[4200];
  snprintf(path, sizeof path, "%s/run.db", empty);
  cr_assert_eq(rename(db, path), 0);
  cr_assert_eq(pitrace(&out, &err, "report", empty, "--session", "1", "-o", html, NULL), 2);
  cr_assert(strstr(err, "is a directory") && lines(err) == 1, "%s", err);
  cr_assert_eq(pitrace(&out, &err, "report", empty, "-o", html, NULL), 0, "%s", err);
  /* The comparison's options where nothing is compared (one session, or a
   * directory's shown side by side) were taken and ignored. */
  char *one = record("vadd", POCL);
  cr_assert_eq(pitrace(&out, &err, "report", one, "--tolerance", "0.1", "-o", html, NULL), 2);
  cr_assert(strstr(err, "only one was given") && lines(err) == 1, "%s", err);
  cr_assert_eq(pitrace(&out, &err, "report", empty, one, "--no-info", "-o", html, NULL), 2);
  cr_assert(strstr(err, "shown side by side, not compared") && lines(err) == 1, "%s", err);
  cr_assert_eq(pitrace(&out, &err, "report", empty, one, "-o", html, NULL), 0, "%s", err);
  snprintf(path, sizeof path, "%s/zz-garbage.db", empty);
  FILE *f = fopen(path, "w");
  fputs("not a database, but long enough to look like one to a careless reader", f);
  fclose(f);
  /* A file that is no session beside good ones: named, skipped, exit 2. */
  unlink(html);
  cr_assert_eq(pitrace(&out, &err, "report", empty, "-o", html, NULL), 2);
  cr_assert(strstr(err, "zz-garbage.db is not a pitrace session") &&
                strstr(err, "pitrace report: 1 file skipped") && lines(err) == 2,
            "%s", err);
  cr_assert(access(html, R_OK) == 0, "the report of the other sessions is written");
}

/* -o naming a session being read: export and report wrote over it (exit
 * 0, the session gone), by its own name, through a link, as the second
 * file of a comparison, or as a file of a directory being read. */
Test(viewer, an_output_that_would_replace_a_session_being_read_is_refused)
{
  char *db = record("vadd", POCL), *other = record("vadd", POCL), *out, *err;
  char *link = tu_temp_path(".db"), *dir = tu_temp_path(".d"), path[4200];
  cr_assert_eq(symlink(db, link), 0);
  cr_assert_eq(mkdir(dir, 0700), 0);
  snprintf(path, sizeof path, "%s/run.db", dir);
  cr_assert_eq(rename(other, path), 0);
  other = path;
  long long calls = sql_int(db, "SELECT count(*) FROM pi_calls");
  struct {
    const char *verb, *in, *in2, *o;
  } cases[] = {{"export", db, NULL, db},   {"report", db, NULL, db},
               {"report", db, NULL, link}, {"export", db, NULL, link},
               {"report", other, db, db},  {"report", dir, NULL, path},
               {"export", dir, NULL, path}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    bool export = strcmp(cases[i].verb, "export") == 0;
    const char *second = cases[i].in2 ? cases[i].in2 : export ? "--format=csv" : NULL;
    int st = second ? pitrace(&out, &err, cases[i].verb, cases[i].in, second, "-o", cases[i].o,
                              NULL)
                    : pitrace(&out, &err, cases[i].verb, cases[i].in, "-o", cases[i].o, NULL);
    cr_assert_eq(st, 2, "%s %s -o %s: %d %s", cases[i].verb, cases[i].in, cases[i].o, st, err);
    cr_assert(strstr(err, "which is being read: name another file") && lines(err) == 1, "%s",
              err);
  }
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM pi_calls"), calls);
  cr_assert_eq(sql_int(path, "SELECT count(*) FROM pi_calls"), calls); /* the same program */
  /* A report written beside the sessions of a directory is no session. */
  snprintf(path, sizeof path, "%s/report.html", dir);
  cr_assert_eq(pitrace(&out, &err, "report", dir, "-o", path, NULL), 0, "%s", err);
  cr_assert_eq(pitrace(&out, &err, "report", dir, "-o", path, NULL), 0, "%s", err);
}

Test(viewer, stats_of_a_record_directory_shows_each_process_and_all_of_them)
{
  three t = record_three();
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "stats", t.dir, NULL), 0, "%s", err);
  /* A heading per process, in start order, with its pid, command and
   * session file, its own figures after it. */
  const char *at = out;
  long long sum = 0, launches = 0;
  for (int s = 0; s < 3; s++) {
    char *head = fmt("== process %d of 3: pid %lld: %s\n", s + 1, t.pid[s],
                     sql(t.files[s], "SELECT command FROM sessions"));
    const char *h = strstr(out, head);
    cr_assert(h, "no '%s' in:\n%s", head, out);
    cr_assert(h >= at, "process %d is out of start order:\n%s", s + 1, out);
    at = h + strlen(head);
    long long calls = sql_int(t.files[s], "SELECT count(*) FROM pi_calls");
    char *line = fmt("session 1 of %s: starts at +", t.files[s]);
    cr_assert(strncmp(at, line, strlen(line)) == 0, "no '%s' after the heading:\n%s", line, at);
    cr_assert(strstr(at, fmt(" recorded; %lld calls, ", calls)), "%s", at);
    sum += calls;
    launches += sql_int(t.files[s], "SELECT count(*) FROM pi_calls WHERE api = "
                                    "'piEnqueueKernelLaunch'");
  }
  /* Then all of them together: the calls of the three databases. */
  const char *all = strstr(at, "== all 3 processes\n");
  cr_assert(all, "%s", out);
  cr_assert(strstr(all, fmt("3 sessions over ")), "%s", all);
  cr_assert(strstr(all, fmt(": %lld calls, ", sum)), "want %lld calls in:\n%s", sum, all);
  char *row = fmt("\npiEnqueueKernelLaunch %*lld ", 38 - (int)strlen("piEnqueueKernelLaunch") + 9,
                  launches);
  cr_assert(strstr(all, row), "no '%s' in:\n%s", row, all);
  cr_assert(strstr(all, fmt("\nvadd %*lld ", 38 - 4 + 9, launches)), "%s", all);
  cr_assert(strstr(all, "\nbytes moved\n"), "%s", all);
}

Test(viewer, export_of_a_record_directory_puts_the_processes_on_one_clock)
{
  three t = record_three();
  char *out, *err, *file = tu_temp_path(".json");
  cr_assert_eq(pitrace(&out, &err, "export", t.dir, "--format", "chrome", "-o", file, NULL), 0,
               "%s", err);
  pt_json_arena a = {0};
  pt_json *events = member(parse(&a, tu_read_file(file)), "traceEvents");
  cr_assert(events && events->type == PJ_ARRAY);
  int named[3] = {0}, spans[3] = {0};
  double first[3] = {-1, -1, -1};
  for (uint32_t i = 0; i < events->n; i++) {
    pt_json *e = events->u.items[i];
    int s = -1;
    for (int k = 0; k < 3; k++)
      s = (long long)num(member(e, "pid")) == t.pid[k] ? k : s;
    cr_assert_geq(s, 0, "an event of pid %.0f, of none of the processes", num(member(e, "pid")));
    const char *ph = str_of(e, "ph"), *name = str_of(e, "name");
    if (strcmp(ph, "M") == 0 && strcmp(name, "process_name") == 0) {
      named[s]++;
      cr_assert_str_eq(str_of(member(e, "args"), "name"),
                       fmt("%lld %s", t.pid[s], sql(t.files[s], "SELECT command FROM sessions")));
    } else if (strcmp(ph, "X") == 0) {
      spans[s]++;
      if (first[s] < 0 || num(member(e, "ts")) < first[s])
        first[s] = num(member(e, "ts"));
    }
  }
  for (int s = 0; s < 3; s++) {
    cr_assert_eq(named[s], 1, "process %lld is named %d times", t.pid[s], named[s]);
    cr_assert_eq(spans[s], sql_int(t.files[s], "SELECT count(*) FROM pi_calls"));
    /* Its first call, placed by the session's start after the earliest. */
    double want = (double)(t.start[s] - t.start[0] +
                           sql_int(t.files[s], "SELECT min(start_ns) FROM pi_calls")) / 1000;
    cr_assert_float_eq(first[s], want, 0.002, "pid %lld: first call at %.3f us, want %.3f",
                       t.pid[s], first[s], want);
    if (s)
      cr_assert_gt(first[s], first[s - 1], "the processes ran one after the other");
  }
  pt_json_arena_free(&a);
  /* JSON Lines and CSV: every call, each with its process's pid and file. */
  long long calls = 0;
  for (int s = 0; s < 3; s++)
    calls += sql_int(t.files[s], "SELECT count(*) FROM pi_calls");
  cr_assert_eq(pitrace(&out, &err, "export", t.dir, "--format", "jsonl", NULL), 0, "%s", err);
  cr_assert_eq(lines(out), calls);
  int per[3] = {0};
  pt_json_arena b = {0};
  for (char *p = out, *eol; (eol = strchr(p, '\n')); p = eol + 1) {
    *eol = 0;
    pt_json *j = parse(&b, p);
    int s = -1;
    for (int k = 0; k < 3; k++)
      s = (long long)num(member(j, "pid")) == t.pid[k] ? k : s;
    cr_assert_geq(s, 0, "%s", p);
    cr_assert_str_eq(str_of(j, "file"), t.files[s]);
    per[s]++;
  }
  pt_json_arena_free(&b);
  for (int s = 0; s < 3; s++)
    cr_assert_eq(per[s], sql_int(t.files[s], "SELECT count(*) FROM pi_calls"));
  cr_assert_eq(pitrace(&out, &err, "export", t.dir, "--format", "csv", NULL), 0, "%s", err);
  cr_assert_eq(lines(out), calls + 1);
  static const char header[] = "pid,file,session,seq,thread,api,result,start_ns,dur_ns,kernel,"
                               "args\n";
  cr_assert(strncmp(out, header, sizeof header - 1) == 0, "%s", out);
  for (int s = 0; s < 3; s++)
    cr_assert(strstr(out, fmt("\n%lld,%s,1,1,", t.pid[s], t.files[s])), "%s", out);
}

Test(viewer, stats_and_export_of_a_bad_directory_say_why_in_one_line)
{
  char *dir = tu_temp_path(".d"), *out, *err, path[4200];
  cr_assert_eq(mkdir(dir, 0700), 0);
  const char *verbs[][4] = {{"stats", NULL}, {"export", "--format", "chrome", NULL}};
  for (int v = 0; v < 2; v++) {
    const char *const *x = verbs[v];
    cr_assert_eq(pitrace(&out, &err, x[0], dir, x[1], x[2], NULL), 2);
    cr_assert(strstr(err, "holds no session files (*.db)") && lines(err) == 1, "%s", err);
    cr_assert(!*out, "%s", out);
  }
  char *db = record("vadd", POCL);
  snprintf(path, sizeof path, "%s/run.db", dir);
  cr_assert_eq(rename(db, path), 0);
  for (int v = 0; v < 2; v++) {
    const char *const *x = verbs[v];
    cr_assert_eq(pitrace(&out, &err, x[0], dir, "--session", "1", x[1], x[2], NULL), 2);
    cr_assert(strstr(err, "a directory was given") && lines(err) == 1, "%s", err);
    cr_assert_eq(pitrace(&out, &err, x[0], dir, x[1], x[2], NULL), 0, "%s", err);
  }
  snprintf(path, sizeof path, "%s/zz-garbage.db", dir);
  FILE *f = fopen(path, "w");
  fputs("not a database, but long enough to look like one to a careless reader", f);
  fclose(f);
  /* Beside a good session: named, skipped, the good one shown, exit 2. */
  for (int v = 0; v < 2; v++) {
    const char *const *x = verbs[v];
    cr_assert_eq(pitrace(&out, &err, x[0], dir, x[1], x[2], NULL), 2);
    cr_assert(strstr(err, "zz-garbage.db is not a pitrace session") && lines(err) == 2, "%s",
              err);
    cr_assert(*out, "the good session is shown: %s", err);
  }
}

/* ---- conventions ------------------------------------------------------------------ */

static void expect_one_line_error(const char *verb, const char *file)
{
  char *out, *err, html[] = "/tmp/pitrace-test-report.html";
  int rc = strcmp(verb, "diff") == 0     ? pitrace(&out, &err, verb, file, file, NULL)
           : strcmp(verb, "export") == 0 ? pitrace(&out, &err, verb, "--format", "csv", file, NULL)
           : strcmp(verb, "report") == 0 ? pitrace(&out, &err, verb, file, "-o", html, NULL)
                                         : pitrace(&out, &err, verb, file, NULL);
  cr_assert_eq(rc, 2, "pitrace %s %s: %d\n%s%s", verb, file, rc, out, err);
  cr_assert_str_eq(out, "", "pitrace %s %s wrote: %s", verb, file, out);
  cr_assert_eq(lines(err), 1, "pitrace %s %s: %s", verb, file, err);
  char prefix[64];
  snprintf(prefix, sizeof prefix, "pitrace %s: ", verb);
  cr_assert(strncmp(err, prefix, strlen(prefix)) == 0, "%s", err);
}

Test(viewer, bad_files_give_one_line_and_exit_2)
{
  char *garbage = tu_temp_path(".db"), *empty = tu_write_temp(".db", "");
  FILE *f = fopen(garbage, "w");
  for (int i = 0; i < 4096; i++)
    fputc((i * 7919) & 0xff, f);
  fclose(f);
  char *db = record("vadd", POCL), *truncated = tu_temp_path(".db");
  char *whole = tu_read_file(db);
  f = fopen(truncated, "w");
  fwrite(whole, 1, 24576, f); /* the header and the first pages only */
  fclose(f);
  char *foreign = tu_temp_path(".db");
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(foreign, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(h, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", NULL, NULL, NULL),
               SQLITE_OK);
  sqlite3_close(h);
  /* A directory: a private one. /tmp itself, used here before, made stats
   * read every other test's session in it, salvaging their ring files
   * under them (a record test that changes a ring file it left failed). */
  char *dir = tu_temp_path("");
  cr_assert_eq(mkdir(dir, 0700), 0, "%s", dir);
  char *fifo = tu_temp_path(".fifo");
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  const char *files[] = {garbage, empty, truncated, foreign, "/nonexistent/x.db", dir, fifo};
  const char *verbs[] = {"sessions", "show", "stats", "diff", "export", "report"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++)
    for (size_t v = 0; v < sizeof verbs / sizeof *verbs; v++)
      if (files[i] != dir || strcmp(verbs[v], "report")) /* report reads directories */
        expect_one_line_error(verbs[v], files[i]);
  rmdir(dir);
  char *out, *err;
  /* Not a file at all (it said "is empty: no session was recorded into it",
   * and looked for ring files beside /dev/null). */
  const char *not_files[] = {fifo, "/dev/null"};
  for (size_t i = 0; i < 2; i++) {
    cr_assert_eq(pitrace(&out, &err, "show", not_files[i], NULL), 2);
    cr_assert(strstr(err, " is a device, pipe or socket, not a session file") && lines(err) == 1,
              "%s", err);
  }
  unlink(fifo);
  cr_assert_eq(pitrace(&out, &err, "show", "--session", "7", db, NULL), 2);
  cr_assert(strstr(err, "has no session 7 (it has 1)") && lines(err) == 1, "%s", err);
  /* A path longer than SQLite opens (SQLite said "unable to open"). */
  char path[1024];
  size_t n = tu_deep_dir(path, sizeof path, 3);
  snprintf(path + n, sizeof path - n, "/s.db");
  const char *cp[] = {"/bin/cp", db, path, NULL};
  cr_assert_eq(tu_run(cp, NULL, &out), 0, "%s", out);
  cr_assert_eq(pitrace(&out, &err, "show", path, NULL), 2);
  cr_assert(strstr(err, "characters long, and SQLite opens files by paths of up to 504; move or "
                        "link it to a shorter one") && lines(err) == 1, "%s", err);
  cr_assert_eq(pitrace(&out, &err, "show", "--bogus", db, NULL), 2);
  cr_assert_eq(lines(err), 1, "%s", err);
}

/* What a verb prints to a standard output that cannot take it (a full
 * disk: /dev/full) is a one-line error and exit status 2, not a trace, a
 * diff or a verdict cut short behind the status of one that went well
 * (show, stats, sessions and replay exited 0 and diff 1, most saying
 * nothing, before). The error says why: show, export, replay and sql of
 * more than stdio buffers left the cause out (the write that failed was
 * inside the verb, and the last flush had nothing left to fail). The usage
 * too: `pitrace --help` exited 0 having printed nothing. */
Test(viewer, output_that_cannot_be_written_is_a_one_line_error)
{
  struct stat full;
  if (stat("/dev/full", &full) != 0 || !S_ISCHR(full.st_mode))
    cr_skip_test("no /dev/full device here to write into");
  char *a = record("vadd", POCL), *b = record("spec_const", POCL);
  const char *runs[][5] = {{"sessions", a}, {"show", a}, {"show", "--compact", a},
                           {"stats", a}, {"export", "--format", "jsonl", a}, {"diff", a, b},
                           {"report", a, "-o", "-"}, {"replay", a},
                           {"sql", a, "SELECT * FROM pi_args"}, {"--help"}, {"show", "--help"}};
  for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
    char cmd[8192];
    int n = snprintf(cmd, sizeof cmd, "exec %s", PITRACE);
    for (int i = 0; i < 5 && runs[r][i]; i++)
      n += snprintf(cmd + n, sizeof cmd - (size_t)n, " '%s'", runs[r][i]);
    snprintf(cmd + n, sizeof cmd - (size_t)n, " > /dev/full");
    const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    const char *env[] = {POCL, NULL}; /* replay: rusticl throws at load under ASan */
    char *err;
    int rc = tu_run(argv, env, &err);
    cr_assert_eq(rc, 2, "%s: exit status %d: %s", cmd, rc, err);
    cr_assert(strstr(err, "writing the standard output failed: No space left on device: ") &&
              lines(err) == 1, "%s: %s", cmd, err);
  }
}

/* -o '' names no file: each verb that writes one says so in one line and
 * what to give, before any work. report and export wrote their whole output
 * to a hidden file and then said "writing  failed: No such file or
 * directory"; extract "cannot write : ..."; record "-o needs a directory". */
Test(viewer, an_empty_output_path_is_a_one_line_error_naming_what_to_give)
{
  char *db = record("vadd", POCL), *out, *err, *made = tu_temp_path(".made");
  char *touch = fmt("touch %s", made);
  const char *runs[][9] = {
      {"report", db, "-o", "", NULL},
      {"export", "--format", "jsonl", db, "-o", "", NULL},
      {"export", "--format", "csv", db, "--output=", NULL},
      {"extract", db, "--kernel", "1", "-o", "", NULL},
      {"record", "-o", "", "--", "/bin/sh", "-c", touch, NULL},
  };
  const char *what[] = {"the file to write the report to", "the file to write",
                        "the file to write", "the session file to write the repro to",
                        "the directory to record into"};
  for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
    const char *const *v = runs[r];
    int rc = pitrace(&out, &err, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], NULL);
    cr_assert_eq(rc, 2, "%s: exit status %d: %s", v[0], rc, err);
    cr_assert(strstr(err, fmt("pitrace %s: the output path (-o) is empty: name %s", v[0],
                              what[r])) && lines(err) == 1, "%s: %s", v[0], err);
    cr_assert_str_empty(out, "%s: %s", v[0], out);
  }
  cr_assert_neq(access(made, F_OK), 0, "record ran the command");
}

/* The number of entries in dir besides . and .. */
/* `report -o` and `export -o` on a full disk: one line that says why, and
 * the file named is left as it was (a report kept from the last run stays
 * whole) or not made, with nothing beside it. They said "writing FILE
 * failed", no reason, and left an empty or cut FILE in place of the old
 * one. A device is written as it is: -o /dev/null stays a device. */
Test(viewer, an_output_file_that_cannot_be_written_is_left_as_it_was)
{
  char *db = record("vadd", POCL), dir[32], path[96], *out, *err;
  tu_small_tmpfs(dir, "64k");
  snprintf(path, sizeof path, "%s/last-report.html", dir);
  FILE *f = fopen(path, "w");
  cr_assert(f);
  fputs("the last run's report\n", f);
  fclose(f);
  snprintf(path, sizeof path, "%s/fill", dir);
  f = fopen(path, "w");
  for (int i = 0; i < 64 && f; i++) { /* a full disk */
    static char block[4096];
    fwrite(block, 1, sizeof block, f);
  }
  if (f)
    fclose(f);
  char old[96], new_html[96], new_csv[96];
  snprintf(old, sizeof old, "%s/last-report.html", dir);
  snprintf(new_html, sizeof new_html, "%s/new.html", dir);
  snprintf(new_csv, sizeof new_csv, "%s/new.csv", dir);
  int rc[4] = {pitrace(&out, &err, "report", db, "-o", old, NULL), 0, 0, 0};
  char *errs[4] = {err};
  rc[1] = pitrace(&out, &errs[1], "export", "--format", "jsonl", db, "-o", old, NULL);
  rc[2] = pitrace(&out, &errs[2], "report", db, "-o", new_html, NULL);
  rc[3] = pitrace(&out, &errs[3], "export", "--format", "csv", db, "-o", new_csv, NULL);
  for (int r = 0; r < 4; r++) {
    cr_assert_eq(rc[r], 2, "run %d: %s", r, errs[r]);
    cr_assert(lines(errs[r]) == 1 && strstr(errs[r], "failed: No space left on device; "), "%s",
              errs[r]);
    cr_assert(strstr(errs[r], r < 2 ? "the file is left as it was" : "no file was made"), "%s",
              errs[r]);
  }
  snprintf(path, sizeof path, "%s/last-report.html", dir);
  cr_assert_str_eq(tu_read_file(path), "the last run's report\n");
  cr_assert_eq(tu_dir_entries(dir), 2, "files were left beside the report");
  tu_small_tmpfs_gone(dir);
  /* A file size limit the same way (SIGXFSZ killed the verb, status 153,
   * and left FILE.tmp-XXXXXX beside the file). */
  char *lim_dir = tu_temp_path(".d"), lim_file[4200], script[9000];
  cr_assert_eq(mkdir(lim_dir, 0700), 0);
  snprintf(lim_file, sizeof lim_file, "%s/out.json", lim_dir);
  f = fopen(lim_file, "w");
  fputs("old\n", f);
  fclose(f);
  snprintf(script, sizeof script, "ulimit -f 4 && exec %s export %s --format chrome -o %s",
           PITRACE, db, lim_file);
  const char *sh[] = {"/bin/sh", "-c", script, NULL};
  cr_assert_eq(tu_run(sh, NULL, &out), 2, "%s", out);
  cr_assert(strstr(out, "failed: File too large; the file is left as it was"), "%s", out);
  cr_assert_str_eq(tu_read_file(lim_file), "old\n");
  cr_assert_eq(tu_dir_entries(lim_dir), 1, "files were left beside out.json");
  cr_assert_eq(pitrace(&out, &err, "report", db, "-o", "/dev/null", NULL), 0, "%s", err);
  struct stat null;
  cr_assert(stat("/dev/null", &null) == 0 && S_ISCHR(null.st_mode));
  /* A link to a file (latest.html to a dated report): the file is
   * written, the link stays. */
  char *target = tu_write_temp(".html", "old"), *link = tu_temp_path(".html");
  cr_assert_eq(symlink(target, link), 0);
  cr_assert_eq(pitrace(&out, &err, "report", db, "-o", link, NULL), 0, "%s", err);
  struct stat l;
  cr_assert(lstat(link, &l) == 0 && S_ISLNK(l.st_mode), "the link was replaced by a file");
  cr_assert(strstr(tu_read_file(target), "<html"), "the file it names was not written");
  unlink(link);
}

/* An output that cannot be made says why: on a read-only file system
 * report and export said "No such file or directory" (the errno of
 * checking whether FILE itself could be written, which did not exist). */
Test(viewer, an_output_on_a_read_only_file_system_says_so)
{
  char *db = record("vadd", POCL), dir[32], *out, *err;
  tu_small_tmpfs(dir, "64k");
  int ro = mount("pitrace-full", dir, "tmpfs", MS_REMOUNT | MS_RDONLY, "size=64k");
  int e = errno;
  char *html = fmt("%s/report.html", dir), *csv = fmt("%s/out.csv", dir);
  int rc[2] = {-1, -1};
  char *errs[2] = {NULL, NULL};
  if (ro == 0) {
    rc[0] = pitrace(&out, &errs[0], "report", db, "-o", html, NULL);
    rc[1] = pitrace(&out, &err, "export", db, "--format", "csv", "-o", csv, NULL);
    errs[1] = err;
  }
  tu_small_tmpfs_gone(dir);
  cr_assert_eq(ro, 0, "remounting read-only: %s", strerror(e));
  const char *file[] = {html, csv}, *verb[] = {"report", "export"};
  for (int r = 0; r < 2; r++) {
    cr_assert_eq(rc[r], 2, "%s: %s", verb[r], errs[r]);
    cr_assert_str_eq(errs[r], fmt("pitrace %s: cannot write %s: Read-only file system\n",
                                  verb[r], file[r]));
  }
}

/* An output file whose name is as long as a name may be is written: its
 * temporary beside it, FILE.tmp-XXXXXX, was 11 bytes too long to make, and
 * report and export refused names of 245 to 255 bytes. */
Test(viewer, an_output_file_of_the_longest_name_is_written)
{
  char *db = record("vadd", POCL), *dir = tu_temp_path(".d"), *out, *err;
  cr_assert_eq(mkdir(dir, 0700), 0);
  const size_t lens[] = {245, 250, 255};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
    char name[256];
    memset(name, 'r', lens[i]);
    name[lens[i]] = 0;
    char *file = fmt("%s/%s", dir, name);
    cr_assert_eq(pitrace(&out, &err, "report", db, "-o", file, NULL), 0, "%zu: %s", lens[i], err);
    cr_assert(strstr(tu_read_file(file), "<html"), "%zu", lens[i]);
    cr_assert_eq(pitrace(&out, &err, "export", db, "--format", "csv", "-o", file, NULL), 0,
                 "%zu: %s", lens[i], err);
    cr_assert_eq(strncmp(tu_read_file(file), "seq,", 4), 0, "%zu", lens[i]);
    cr_assert_eq(tu_dir_entries(dir), 1, "%zu: files were left beside the output", lens[i]);
    unlink(file);
  }
}

/* -o /dev/stdout (or /dev/fd/N) is the program's own descriptor, written as
 * the shell opened it: taken for the file it leads to, that file was
 * written beside and renamed over, so `-o /dev/stdout >> log` lost the log,
 * and what the shell wrote to it afterwards went to a file no longer there. */
Test(viewer, an_output_to_the_programs_own_descriptor_appends_where_it_points)
{
  char *db = record("vadd", POCL), *log = tu_write_temp(".log", "precious\n"), *out;
  char *script = fmt("exec 3>>%s && %s export %s --format csv -o /dev/stdout >> %s && "
                     "%s report %s -o /dev/fd/3 && echo after >&3", log, PITRACE, db, log,
                     PITRACE, db);
  const char *sh[] = {"/bin/sh", "-c", script, NULL};
  cr_assert_eq(tu_run(sh, NULL, &out), 0, "%s", out);
  char *text = tu_read_file(log);
  const char *head = "precious\nseq,thread,api,";
  cr_assert_eq(strncmp(text, head, strlen(head)), 0, "%.200s", text);
  cr_assert(strstr(text, "<html") && strstr(text, "</html>\nafter\n"), "%.200s", text);
  struct stat l;
  cr_assert(lstat("/dev/stdout", &l) == 0 && S_ISLNK(l.st_mode), "/dev/stdout was replaced");
}

/* A session of at least `calls` calls (record_prog count, stopped by
 * SIGINT once that many have returned): long enough to export that a
 * signal can come while the output is written. */
static char *record_calls(long long calls)
{
  char *db = tu_temp_path(".db"), *count = tu_temp_path(".count");
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    setenv("SYCL_PI_RECORD", db, 1);
    putenv((char *)POCL);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(BIN "/record_prog", "record_prog", "count", count, "0", (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 6000 && calls_returned(count) < calls; i++) {
    struct timespec nap = {0, 10000000};
    nanosleep(&nap, NULL);
  }
  bool enough = calls_returned(count) >= calls;
  kill(pid, SIGINT);
  waitpid(pid, NULL, 0);
  cr_assert(enough, "record_prog made fewer than %lld calls in 60 s", calls);
  return db;
}

/* A signal (^C, a CI job's time limit) while `export -o FILE` writes:
 * FILE stays as it was and nothing is left beside it. The partial output,
 * FILE.tmp-XXXXXX, stayed (tens of MB for a session of a million calls). */
Test(viewer, an_export_ended_by_a_signal_leaves_no_file_beside_its_output)
{
  char *db = record_calls(1000000);
  const int sigs[] = {SIGINT, SIGTERM};
  for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) {
    char *dir = tu_temp_path(".d"), *file = fmt("%s/out.jsonl", dir);
    cr_assert_eq(mkdir(dir, 0700), 0);
    FILE *f = fopen(file, "w");
    fputs("old\n", f);
    fclose(f);
    const char *argv[] = {PITRACE, "export", db, "--format", "jsonl", "-o", file, NULL};
    pid_t pid = tu_spawn_quiet(argv);
    cr_assert_geq(pid, 0);
    /* Once its output is being written beside FILE. */
    for (int i = 0; i < 60000 && tu_dir_entries(dir) < 2 && waitpid(pid, NULL, WNOHANG) == 0; i++) {
      struct timespec nap = {0, 1000000};
      nanosleep(&nap, NULL);
    }
    int n = tu_dir_entries(dir), st = 0;
    kill(pid, sigs[k]);
    waitpid(pid, &st, 0);
    cr_assert_eq(n, 2, "export ended before its output file was seen being written");
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == sigs[k], "export: status %#x", st);
    cr_assert_str_eq(tu_read_file(file), "old\n");
    cr_assert_eq(tu_dir_entries(dir), 1, "signal %d left a file beside out.jsonl", sigs[k]);
  }
}

/* ---- sql and the stored chunks ---------------------------------------------------------- */

/* pitrace sql answers the views over version-2 chunks as show prints the
 * calls; plain sqlite3 reads every table but not the calls views. */
Test(viewer, sql_answers_pi_calls_as_show_prints_them)
{
  char *db = record("vadd", POCL), *out, *err;
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM chunks"), 0);
  cr_assert_gt(sql_int(db, "SELECT count(*) FROM call_chunks"), 0);
  cr_assert_eq(sql_int(db, "SELECT sum(ncalls) FROM call_chunks"),
               sql_int(db, "SELECT calls FROM sessions"));
  cr_assert_eq(pitrace(&out, &err, "sql", db, "SELECT api || ' ' || result FROM pi_calls ORDER "
                       "BY seq", NULL), 0, "%s", err);
  char *shown, *serr;
  cr_assert_eq(pitrace(&shown, &serr, "show", "--compact", db, NULL), 0, "%s", serr);
  /* "   SEQ Tn api(args) = RESULT  time" -> "api RESULT" */
  size_t cap = strlen(shown) + 1, len = 0;
  char *want = calloc(1, cap);
  for (char *line = strtok(shown, "\n"); line; line = strtok(NULL, "\n")) {
    char *api = strstr(line, " T"), *paren, *res;
    cr_assert(api && (api = strchr(api + 1, ' ')) && (paren = strchr(api, '(')) &&
              (res = strstr(paren, ") = ")), "%s", line);
    res += 4;
    len += (size_t)snprintf(want + len, cap - len, "%.*s %.*s\n", (int)(paren - api - 1),
                            api + 1, (int)strcspn(res, " "), res);
  }
  cr_assert_gt(lines(out), 40);
  cr_assert_str_eq(out, want);
  /* Without the extension: the tables, and one line on the calls view. */
  const char *plain[] = {"/usr/bin/sqlite3", db, "SELECT count(*) FROM call_chunks", NULL};
  cr_assert_eq(tu_run(plain, NULL, &out), 0, "%s", out);
  const char *views[] = {"/usr/bin/sqlite3", db, "SELECT count(*) FROM pi_calls", NULL};
  cr_assert_neq(tu_run(views, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "no such table: main.pitrace_calls"), "%s", out);
  /* SQL opening with a comment, a file named like an option: the shell
   * took them for options ("unknown option"). */
  cr_assert_eq(pitrace(&out, &err, "sql", db, "--", "-- calls\nSELECT count(*) FROM pi_calls",
                       NULL), 0, "%s", err);
  cr_assert_eq(atoi(out), sql_int(db, "SELECT calls FROM sessions"), "%s", out);
  char *dir = tu_temp_path(".d"), dash[4200];
  cr_assert_eq(mkdir(dir, 0700), 0);
  snprintf(dash, sizeof dash, "%s/-x.db", dir);
  cr_assert_eq(link(db, dash), 0);
  char script[9000];
  snprintf(script, sizeof script, "cd %s && exec %s sql -- -x.db 'SELECT count(*) FROM pi_calls'",
           dir, PITRACE);
  const char *sh[] = {"/bin/sh", "-c", script, NULL};
  cr_assert_eq(tu_run(sh, NULL, &out), 0, "%s", out);
  cr_assert_eq(atoi(out), sql_int(db, "SELECT calls FROM sessions"), "%s", out);
  /* An output that cannot be written: exit 2, said (the shell ignores its
   * failed writes: exit 0, nothing said). */
  snprintf(script, sizeof script, "exec %s sql %s 'SELECT * FROM pi_args' >/dev/full", PITRACE,
           db);
  cr_assert_eq(tu_run(sh, NULL, &out), 2, "%s", out);
  cr_assert(strstr(out, "pitrace sql: writing the standard output failed"), "%s", out);
  /* So past a file size limit (SIGXFSZ killed it: status 153, nothing said). */
  char *big = tu_temp_path(".out");
  snprintf(script, sizeof script, "ulimit -f 4 && exec %s sql %s 'SELECT * FROM pi_args' >%s",
           PITRACE, db, big);
  cr_assert_eq(tu_run(sh, NULL, &out), 2, "%s", out);
  cr_assert(strstr(out, "pitrace sql: writing the standard output failed") && lines(out) == 1,
            "%s", out);
  /* Not a session; no sqlite3 shell. */
  cr_assert_eq(pitrace(&out, &err, "sql", "/etc/passwd", "SELECT 1", NULL), 2);
  cr_assert(strstr(err, "pitrace sql: /etc/passwd is not a pitrace session") && lines(err) == 1,
            "%s", err);
}

/* A file a recorder commits into (it holds readers off while it commits):
 * a helper process takes the write lock for 30 ms out of every 33, for
 * three seconds, and pitrace sql answers eight queries, waiting for the
 * lock where it has to, where a shell without a busy timeout says
 * "database is locked". */
Test(viewer, sql_waits_for_a_recorder_that_commits_into_the_file)
{
  char *db = record("vadd", POCL), *out, *err;
  long long calls = sql_int(db, "SELECT calls FROM sessions");
  int ready[2];
  cr_assert_eq(pipe(ready), 0);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    sqlite3 *w;
    if (sqlite3_open(db, &w) != SQLITE_OK)
      _exit(1);
    sqlite3_busy_timeout(w, 5000); /* pitrace's own reads hold it off too */
    struct timespec hold = {0, 30000000}, gap = {0, 3000000};
    for (int i = 0; i < 90; i++) {
      if (sqlite3_exec(w, "BEGIN EXCLUSIVE", NULL, NULL, NULL) != SQLITE_OK)
        _exit(1);
      if (i == 0 && write(ready[1], "x", 1) != 1)
        _exit(1);
      nanosleep(&hold, NULL);
      sqlite3_exec(w, "COMMIT", NULL, NULL, NULL);
      nanosleep(&gap, NULL);
    }
    _exit(0);
  }
  char x;
  cr_assert_eq(read(ready[0], &x, 1), 1);
  for (int i = 0; i < 8; i++) {
    cr_assert_eq(pitrace(&out, &err, "sql", db, "SELECT calls FROM sessions", NULL), 0, "%s",
                 err);
    cr_assert_eq(atoll(out), calls, "%s", out);
  }
  int st;
  waitpid(pid, &st, 0);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Sets the first chunk of a session to `blob` (n bytes). */
static void set_chunk(const char *db, const void *blob, size_t n)
{
  sqlite3 *h;
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_prepare_v2(h, "UPDATE call_chunks SET calls = ? WHERE session = 1 AND "
                                     "id = 1", -1, &st, NULL), SQLITE_OK);
  sqlite3_bind_blob(st, 1, blob, (int)n, SQLITE_TRANSIENT);
  cr_assert_eq(sqlite3_step(st), SQLITE_DONE, "%s", sqlite3_errmsg(h));
  sqlite3_finalize(st);
  sqlite3_close(h);
}

/* A damaged chunk: one line naming the session and the chunk from every
 * verb and from pitrace sql, never a crash (sessions used to list it with
 * "-" for backend and device and exit 0). */
Test(viewer, a_damaged_chunk_gives_one_line_naming_session_and_chunk)
{
  char *db = record("vadd", POCL);
  /* A zstd frame cut short; bytes that are no frame; a frame whose body's
   * text lengths (5) do not add up to its text ("[1]"). */
  char *cut = copy_db(db), *noise = copy_db(db), *counts = copy_db(db);
  sql_exec(cut, "UPDATE call_chunks SET calls = substr(calls, 1, length(calls) - 9) WHERE id = 1");
  set_chunk(noise, "\x01 this is not zstd at all", 26);
  const unsigned char body[] = {1, 2, 1, 0, 1, 0, 0, 0, 0, 5, 0, '[', '1', ']'};
  unsigned char frame[128];
  frame[0] = 1;
  size_t z = ZSTD_compress(frame + 1, sizeof frame - 1, body, sizeof body, 1);
  cr_assert(!ZSTD_isError(z));
  set_chunk(counts, frame, z + 1);
  const char *files[] = {cut, noise, counts};
  const char *why[] = {"zstd frame", "not a whole zstd frame", "text lengths add up to 5 bytes"};
  for (int i = 0; i < 3; i++) {
    const char *verbs[] = {"show", "stats", "export", "diff"};
    for (int v = 0; v < 4; v++) {
      char *out, *err;
      int rc = v == 3   ? pitrace(&out, &err, "diff", files[i], db, NULL)
               : v == 2 ? pitrace(&out, &err, "export", "--format", "jsonl", files[i], NULL)
                        : pitrace(&out, &err, verbs[v], files[i], NULL);
      cr_assert_eq(rc, 2, "%s %s: %s", verbs[v], files[i], err);
      cr_assert_eq(lines(err), 1, "%s", err);
      cr_assert(strstr(err, "is damaged: session 1, chunk 1: ") && strstr(err, why[i]),
                "%s: %s", verbs[v], err);
    }
    /* sessions lists what it can (the backend and device come from the
     * first chunks: "damaged"), then says why, and fails. */
    char *out, *err;
    cr_assert_eq(pitrace(&out, &err, "sessions", files[i], NULL), 2, "%s", err);
    cr_assert(strstr(out, " damaged ") && strstr(out, "/vadd"), "%s", out);
    cr_assert_eq(lines(err), 1, "%s", err);
    cr_assert(strstr(err, "is damaged: session 1, chunk 1: ") && strstr(err, why[i]), "%s", err);
    cr_assert_neq(pitrace(&out, &err, "sql", files[i], "SELECT count(*) FROM pi_calls", NULL),
                  0);
    cr_assert(strstr(out, "session 1, chunk 1 is damaged: ") || strstr(err, "session 1, chunk 1 "
              "is damaged: "), "%s%s", out, err);
  }
}

/* A chunk's row deleted (a damaged file): the session's count says more
 * calls than the file holds. Every verb went on as if nothing was lost:
 * sessions listed the count, show and stats the rest with exit 0, replay
 * failed at the first handle the lost calls made ("was the recording
 * filtered?") and extract could succeed without a word. */
Test(viewer, a_session_that_lost_a_chunk_is_named_damaged_by_every_verb)
{
  char *db = copy_db(record("vadd", POCL)), *out, *err;
  long long all = sql_int(db, "SELECT calls FROM sessions");
  long long lost = sql_int(db, "SELECT ncalls FROM call_chunks WHERE id = (SELECT max(id) FROM "
                               "call_chunks)");
  cr_assert(all > 0 && lost > 0);
  sql_exec(db, "DELETE FROM call_chunks WHERE id = (SELECT max(id) FROM call_chunks)");
  char said[512], held[64];
  snprintf(said, sizeof said, "is damaged: session 1 counts %lld calls and the file holds %lld of "
           "them (rows of it were lost)", all, all - lost);
  cr_assert_eq(pitrace(&out, &err, "sessions", db, NULL), 2, "%s", out);
  snprintf(held, sizeof held, " %lld ", all - lost);
  cr_assert(strstr(out, held) && strstr(out, "teardown; damaged"), "%s", out);
  cr_assert(lines(err) == 1 && strstr(err, said), "%s", err);
  /* show and stats: what it holds, after one line; exit 2. */
  cr_assert_eq(pitrace(&out, &err, "show", "--compact", db, NULL), 2, "%s", err);
  cr_assert(lines(err) == 1 && strstr(err, said) && strstr(err, "what it holds follows"), "%s",
            err);
  cr_assert_eq(lines(out), all - lost, "%s", out);
  cr_assert_eq(pitrace(&out, &err, "stats", db, NULL), 2, "%s", err);
  cr_assert(lines(err) == 1 && strstr(err, said), "%s", err);
  /* sql: the views answer with what is left, after the same line. */
  cr_assert_eq(pitrace(&out, &err, "sql", db, "SELECT count(*) FROM pi_calls", NULL), 2, "%s",
               err);
  cr_assert(lines(err) == 1 && strstr(err, said), "%s", err);
  cr_assert_eq(atoll(out), all - lost, "%s", out);
  /* Verbs whose answer needs every call refuse it. */
  char *file = tu_temp_path(".out");
  const char *refusing[][6] = {{"export", "--format", "jsonl", "-o", file, db},
                               {"report", "-o", file, db, NULL, NULL},
                               {"diff", db, db, NULL, NULL, NULL},
                               {"replay", db, NULL, NULL, NULL, NULL},
                               {"extract", db, "--kernel", "1", "-o", file}};
  for (size_t v = 0; v < sizeof refusing / sizeof *refusing; v++) {
    const char **a = refusing[v];
    cr_assert_eq(pitrace(&out, &err, a[0], a[1], a[2], a[3], a[4], a[5], NULL), 2, "%s: %s",
                 a[0], err);
    cr_assert(lines(err) == 1 && strstr(err, said), "%s: %s", a[0], err);
    cr_assert_eq(access(file, F_OK), -1, "%s wrote %s", a[0], file);
  }
  /* Its plugins' rows lost: replay named the device's backend "" ("is not
   * available here"). */
  char *noplugins = copy_db(record("vadd", POCL));
  sql_exec(noplugins, "DELETE FROM plugins");
  cr_assert_eq(pitrace(&out, &err, "replay", noplugins, NULL), 2, "%s", err);
  cr_assert(lines(err) == 1 && strstr(err, "is damaged: session 1 has ") &&
            strstr(err, " calls and no row of the plugins that made them"), "%s", err);
  cr_assert_eq(pitrace(&out, &err, "show", noplugins, NULL), 2, "%s", err);
}

/* A file another process holds locked (a recording process's commit that
 * a reader keeps from finishing, as `pitrace show | less` does): every
 * verb said "is damaged or truncated: database is locked", which sent
 * users to a file that was whole. */
Test(viewer, a_file_another_process_holds_is_not_called_damaged)
{
  char *db = record("vadd", POCL), *out, *err;
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
  cr_assert_eq(pitrace(&out, &err, "stats", db, NULL), 2, "%s", out);
  cr_assert_eq(lines(err), 1, "%s", err);
  cr_assert(strstr(err, "is held by another process") && !strstr(err, "damaged"), "%s", err);
  sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_close(h);
  cr_assert_eq(pitrace(&out, &err, "stats", db, NULL), 0, "%s", err);
}

Test(viewer, every_verb_has_help)
{
  const char *verbs[] = {"sessions", "show", "stats", "diff", "export", "report", "sql"};
  for (size_t v = 0; v < sizeof verbs / sizeof *verbs; v++) {
    char *out, *err, want[64];
    cr_assert_eq(pitrace(&out, &err, verbs[v], "--help", NULL), 0, "%s", err);
    snprintf(want, sizeof want, "usage: pitrace %s ", verbs[v]);
    cr_assert(strncmp(out, want, strlen(want)) == 0, "%s", out);
  }
}

Test(viewer, colours_only_on_a_terminal_and_never_with_no_color)
{
  if (access("/usr/bin/script", X_OK) != 0)
    cr_skip_test("script(1) is not installed: no terminal to test colours on");
  char *db = tu_temp_path(".db");
  char *cfg = tu_write_temp(".conf", PITRACE_LIB_DIR "/libpi_test_partial.so\n");
  const char *argv[] = {BIN "/use_device", NULL};
  cr_assert_eq(record_into(db, argv, kv("SYCL_PI_CONFIG", cfg), NULL), 2);
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "%s show --compact --errors %s", PITRACE, db);
  const char *script[] = {"/usr/bin/script", "-qec", cmd, "/dev/null", NULL};
  const char *colour[] = {"NO_COLOR=", NULL}, *plain[] = {"NO_COLOR=1", NULL};
  char *out;
  cr_assert_eq(tu_run(script, colour, &out), 0, "%s", out);
  cr_assert(strstr(out, "\033[31mPI_ERROR_INVALID_VALUE\033[0m"), "%s", out);
  cr_assert_eq(tu_run(script, plain, &out), 0, "%s", out);
  cr_assert(strstr(out, "PI_ERROR_INVALID_VALUE") && !strstr(out, "\033["), "%s", out);
}

Test(viewer, verbs_free_everything_they_allocate)
{
#ifdef TU_SANITIZED
  cr_skip_test("built with AddressSanitizer, which valgrind cannot run under");
#elif defined(__clang__)
  cr_skip_test("built with clang, whose DWARF 5 Debian 12's valgrind cannot read (the gcc "
               "build runs this test)");
#endif
  if (access("/usr/bin/valgrind", X_OK) != 0)
    cr_skip_test("valgrind is not installed");
  char *a = record("spec_const", POCL), *b = record("vadd", POCL), *html = tu_temp_path(".html");
  const char *runs[][6] = {{"sessions", a}, {"show", a}, {"show", "--compact", a},
                           {"stats", a}, {"export", "--format", "chrome", a},
                           {"diff", a, b}, {"report", a, b, "-o", html}};
  for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
    const char *argv[16] = {"/usr/bin/valgrind", "-q", "--error-exitcode=99",
                            "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
                            "--log-fd=1", PITRACE};
    for (int i = 0; i < 6 && runs[r][i]; i++)
      argv[7 + i] = runs[r][i];
    char *out;
    int rc = tu_run(argv, NULL, &out);
    cr_assert(rc == 0 || (rc == 1 && strcmp(runs[r][0], "diff") == 0), "pitrace %s: %d\n%.4000s",
              runs[r][0], rc, out);
    cr_assert_null(strstr(out, "definitely lost"), "%s", out);
  }
}

/* ---- device times (pitrace record --profile) ----------------------------------------- */

/* The APIs of a session's calls in order, one a line. */
static char *api_list(const char *db)
{
  return sql(db, "SELECT group_concat(api, char(10)) FROM (SELECT api FROM pi_calls ORDER BY seq)");
}

/* With SYCL_PI_RECORD_PROFILE=1 on PoCL and on rusticl: every kernel launch
 * and transfer of vadd has its device time; the application's calls, and
 * the queue flags it passed, are exactly those of a run without it (the
 * shim's own queries are not in the session); stats shows the device time
 * per kernel and per transfer; the Chrome export has a device track per
 * queue with each command's span and flow arrows from the enqueue call,
 * every event with the fields the trace-event format requires. Without
 * profiling there are no device times and no device track. */
Test(viewer, device_times_with_profile_on_pocl_and_rusticl)
{
  const char *icds[] = {POCL, RUSTICL};
  for (int k = 0; k < 2; k++) {
    char *plain = record("vadd", icds[k]), *prof = tu_temp_path(".db");
    const char *argv[] = {BIN "/vadd", NULL};
    cr_assert_eq(record_into(prof, argv, icds[k], "SYCL_PI_RECORD_PROFILE=1"), 0);
    cr_assert_str_eq(api_list(prof), api_list(plain), "%s", icds[k]);
    const char *props = "SELECT value FROM pi_args WHERE name = 'properties' AND seq IN (SELECT "
                        "seq FROM pi_calls WHERE api LIKE '%QueueCreate')";
    cr_assert_str_eq(sql(prof, props), sql(plain, props));
    cr_assert(!strstr(sql(prof, props), "PROFILING"), "%s", sql(prof, props));
    /* Every device command that succeeded, timed; nothing without --profile. */
    cr_assert_eq(sql_int(prof, "SELECT count(*) FROM pi_device_times"),
                 sql_int(prof, "SELECT count(*) FROM pi_calls WHERE result = 'PI_SUCCESS' AND "
                               "api IN ('piEnqueueKernelLaunch', 'piEnqueueMemBufferWrite', "
                               "'piEnqueueMemBufferRead')"));
    cr_assert_eq(sql_int(prof, "SELECT count(*) FROM pi_device_times WHERE api = "
                               "'piEnqueueKernelLaunch' AND device_ns >= 0"), 1);
    cr_assert_eq(sql_int(plain, "SELECT count(*) FROM device_times"), 0);
    char *out, *err;
    cr_assert_eq(pitrace(&out, &err, "stats", prof, NULL), 0, "%s", err);
    cr_assert(strstr(out, "timed      device        mean         p50         p99         max"),
              "%s", out);
    char want[256];
    snprintf(want, sizeof want, "\nvadd                                           1 %*s %9d %11s",
             11, "", 1, "");
    char *row = strstr(out, "\nvadd ");
    cr_assert(row, "%s", out);
    long long launches, timed;
    char enq[32], unit[8];
    cr_assert_eq(sscanf(row + 1, "vadd %lld %31s %7s %lld", &launches, enq, unit, &timed), 4,
                 "%s", row);
    cr_assert_eq(launches, 1);
    cr_assert_eq(timed, 1, "%s", row);
    cr_assert(strstr(out, "\npiEnqueueMemBufferWrite                        1            4096 "),
              "%s", out);
    cr_assert(strstr(out, "\ndevice times: as the device measured them"), "%s", out);
    /* rusticl says 1 ns for every command: no rate made from that (it
     * showed millions of GB/s), and stats says why; PoCL times them. */
    const char *transfers = strstr(out, "transfer (device time)");
    const char *write_row = strstr(transfers, "\npiEnqueueMemBufferWrite ");
    const char *eol = strchr(write_row + 1, '\n');
    bool no_rate = eol[-1] == '-';
    bool said = strstr(out, " device times are under 10 ns") != NULL;
    cr_assert_eq(no_rate, k == 1, "%s", out);
    cr_assert_eq(said, k == 1, "%s", out);
    cr_assert_eq(pitrace(&out, &err, "stats", plain, NULL), 0, "%s", err);
    cr_assert(strstr(out, "\ndevice times: none recorded"), "%s", out);
    cr_assert(!strstr(out, "transfer (device time)"), "%s", out);
    /* show: the device time on the launch's line. */
    cr_assert_eq(pitrace(&out, &err, "show", prof, "--compact", "--api", "piEnqueueKernelLaunch",
                         NULL), 0, "%s", err);
    cr_assert(strstr(out, " device "), "%s", out);
    /* export: device tracks and flows. */
    for (int p = 0; p < 2; p++) {
      char *file = tu_temp_path(".json");
      cr_assert_eq(pitrace(&out, &err, "export", p ? plain : prof, "--format", "chrome", "-o",
                           file, NULL), 0, "%s", err);
      pt_json_arena a = {0};
      pt_json *events = member(parse(&a, tu_read_file(file)), "traceEvents");
      cr_assert(events && events->type == PJ_ARRAY);
      int device_spans = 0, tracks = 0, starts = 0, finishes = 0;
      int64_t ids[64];
      for (uint32_t i = 0; i < events->n; i++) {
        pt_json *e = events->u.items[i], *ph = member(e, "ph");
        cr_assert(ph && ph->type == PJ_STRING && member(e, "pid") && member(e, "tid") &&
                  member(e, "name"), "event %u lacks ph/pid/tid/name", i);
        if (strcmp(ph->u.s, "M") != 0)
          cr_assert(member(e, "ts"), "event %u (%s) has no ts", i, ph->u.s);
        bool device = member(e, "pid")->u.i == 2;
        if (device && strcmp(ph->u.s, "X") == 0) {
          device_spans++;
          cr_assert(member(e, "dur"));
        }
        tracks += device && strcmp(member(e, "name")->u.s, "thread_name") == 0;
        if (strcmp(ph->u.s, "s") == 0) {
          cr_assert_eq(member(e, "pid")->u.i, 1, "a flow starts at the enqueue call");
          cr_assert(starts < 64);
          ids[starts++] = member(e, "id")->u.i;
        }
        if (strcmp(ph->u.s, "f") == 0) {
          finishes++;
          cr_assert(device, "a flow ends on the device track");
          bool paired = false;
          for (uint32_t j = 0; j < events->n && !paired; j++) {
            pt_json *o = events->u.items[j];
            paired = strcmp(member(o, "ph")->u.s, "s") == 0 &&
                     member(o, "id")->u.i == member(e, "id")->u.i;
          }
          cr_assert(paired, "flow %lld ends without a start", (long long)member(e, "id")->u.i);
        }
      }
      long long timed_n = sql_int(p ? plain : prof, "SELECT count(*) FROM device_times");
      cr_assert_eq(device_spans, timed_n);
      cr_assert_eq(starts, timed_n);
      cr_assert_eq(finishes, timed_n);
      cr_assert_eq(tracks, p ? 0 : 1);
      for (int i = 0; i < starts; i++)
        for (int j = i + 1; j < starts; j++)
          cr_assert_neq(ids[i], ids[j], "flow ids are unique");
      pt_json_arena_free(&a);
    }
  }
}

/* The GB/s of a transfer API's row in the last transfer table of stats'
 * output ("-" where none is made). */
static char *transfer_rate(const char *out, const char *api)
{
  const char *t = out, *next;
  while ((next = strstr(t + 1, "\ntransfer (device time)")))
    t = next;
  char row[64];
  snprintf(row, sizeof row, "\n%s ", api);
  const char *r = strstr(t, row);
  cr_assert(r, "no %s row in %s", api, t);
  const char *eol = strchr(r + 1, '\n'), *at = eol;
  while (at[-1] != ' ')
    at--;
  return strndup(at, (size_t)(eol - at));
}

/* stats over a profiled PoCL run and a profiled rusticl run (whose 1 ns
 * per command is no measurement): the rate over both is PoCL's alone, not
 * rusticl's bytes over PoCL's time (it was twice PoCL's rate). */
Test(viewer, stats_rate_leaves_out_the_bytes_of_untimed_commands)
{
  char *dbs[2];
  const char *icds[] = {POCL, RUSTICL}, *argv[] = {BIN "/vadd", NULL};
  for (int k = 0; k < 2; k++) {
    dbs[k] = tu_temp_path(".db");
    cr_assert_eq(record_into(dbs[k], argv, icds[k], "SYCL_PI_RECORD_PROFILE=1"), 0);
  }
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "stats", dbs[0], NULL), 0, "%s", err);
  char *pocl = transfer_rate(out, "piEnqueueMemBufferWrite");
  cr_assert_neq(strcmp(pocl, "-"), 0, "%s", out);
  cr_assert_eq(pitrace(&out, &err, "stats", dbs[0], dbs[1], NULL), 0, "%s", err);
  cr_assert(strstr(out, "\n== all 2 processes\n"), "%s", out);
  cr_assert_str_eq(transfer_rate(out, "piEnqueueMemBufferWrite"), pocl, "%s", out);
}

/* The application's own profiling queries answer as without the shim: on
 * a queue it created without profiling, PI_ERROR_PROFILING_INFO_NOT_
 * AVAILABLE (the specification's answer, PoCL's; rusticl 22.3 answers
 * success there even without the shim); on its profiling queue, success. */
Test(viewer, profiling_added_by_the_shim_stays_hidden_from_the_application)
{
  const char *argv[] = {BIN "/prof_probe", NULL};
  const char *env_plain[] = {POCL, NULL};
  char *plain, *prof;
  cr_assert_eq(tu_run(argv, env_plain, &plain), 0, "%s", plain);
  char *db = tu_temp_path(".db");
  const char *icds[] = {POCL, RUSTICL};
  for (int k = 0; k < 2; k++) {
    const char *env[] = {kv("SYCL_PI_RECORD", db), icds[k], "RUSTICL_ENABLE=swrast",
                         "SYCL_PI_RECORD_PROFILE=1", NULL};
    cr_assert_eq(tu_run(argv, env, &prof), 0, "%s", prof);
    cr_assert_str_eq(prof, plain, "%s", icds[k]);
    cr_assert(strstr(prof, "plain queue: event times: PI_ERROR_PROFILING_INFO_NOT_AVAILABLE"));
    /* Both queues' commands are timed, the NULL-event read's too. */
    cr_assert_eq(sql_int(db, "SELECT count(*) FROM pi_device_times WHERE session = (SELECT "
                             "max(id) FROM sessions)"), 4);
  }
}

/* diff with device times: after the summary, per kernel (each one the
 * sessions made, by name) the launches timed and the device total and mean
 * in A and in B and B/A of the means; in --json as device_times; never a
 * difference: two profiled PoCL runs of pipeline compare "same", and a
 * profiled run against a plain one too (only A has device times, which it
 * says). PoCL against rusticl: rusticl 22.3 answers fixed profiling values,
 * so the structure is checked, not the magnitudes. The report's comparison
 * has the same table. */
static bool is_bool(const pt_json *j, bool v)
{
  return j && j->type == PJ_BOOL && (j->u.i != 0) == v;
}

Test(viewer, diff_compares_device_time_per_kernel_without_counting_it)
{
  const char *argv[] = {BIN "/pipeline", NULL};
  char *p1 = tu_temp_path(".db"), *p2 = tu_temp_path(".db"), *rus = tu_temp_path(".db");
  cr_assert_eq(record_into(p1, argv, POCL, "SYCL_PI_RECORD_PROFILE=1"), 0);
  cr_assert_eq(record_into(p2, argv, POCL, "SYCL_PI_RECORD_PROFILE=1"), 0);
  cr_assert_eq(record_into(rus, argv, RUSTICL, "SYCL_PI_RECORD_PROFILE=1"), 0);
  char *plain = record("pipeline", POCL);
  const char *kernels[3];
  int nk = 0;
  for (int i = 0; i < 3; i++) {
    kernels[i] = sql(p1, fmt("SELECT value FROM pi_args WHERE name = 'kernel_name' AND seq IN "
                             "(SELECT seq FROM pi_calls WHERE api = 'piKernelCreate') ORDER BY "
                             "seq LIMIT 1 OFFSET %d", i));
    nk += *kernels[i] != 0;
  }
  cr_assert_eq(nk, 3, "pipeline makes three kernels");
  const char *pairs[][2] = {{p1, p2}, {p1, rus}};
  for (int p = 0; p < 2; p++) {
    char *out, *err;
    int rc = pitrace(&out, &err, "diff", pairs[p][0], pairs[p][1], NULL);
    cr_assert_eq(rc, p ? 1 : 0, "%s%s", out, err); /* PoCL vs rusticl: their device info */
    char *summary = strstr(out, "\nsummary: "), *table = strstr(out, "\ndevice time per kernel");
    cr_assert(summary && table && table > summary, "no device table after the summary:\n%s", out);
    cr_assert(strstr(summary, p ? ": different\n" : ": same\n"), "%s", summary);
    cr_assert(strstr(table, "launches A    device A      mean A launches B    device B      mean "
                            "B  B/A mean\n"), "%s", table);
    for (int i = 0; i < 3; i++) {
      char *row = strstr(table, fmt("\n%s ", kernels[i]));
      cr_assert(row, "no row for %s:\n%s", kernels[i], table);
      char name[64], da[16], ua[8], ma[16], uma[8], db[16], ub[8], mb[16], umb[8], ratio[32];
      long long la, lb;
      cr_assert_eq(sscanf(row + 1, "%63s %lld %15s %7s %15s %7s %lld %15s %7s %15s %7s %31s", name,
                          &la, da, ua, ma, uma, &lb, db, ub, mb, umb, ratio), 12, "%s", row);
      cr_assert_eq(la, 1, "%s", row);
      cr_assert_eq(lb, 1, "%s", row);
      /* rusticl says 1 ns for every command: no ratio of that (it showed
       * 1e-07, a device ten million times faster), and why not. */
      if (p)
        cr_assert_str_eq(ratio, "-", "%s", row);
      else
        cr_assert_gt(strtod(ratio, NULL), 0, "%s", row);
    }
    cr_assert_eq(strstr(table, "B's device times are under 10 ns") != NULL, p == 1, "%s", table);
    /* JSON: the same numbers; counted false; the differences' count unchanged. */
    char *jout;
    cr_assert_eq(pitrace(&jout, &err, "diff", "--json", pairs[p][0], pairs[p][1], NULL), p ? 1 : 0);
    pt_json_arena a = {0};
    pt_json *j = parse(&a, jout), *dt = member(j, "device_times");
    cr_assert(dt && dt->type == PJ_OBJECT, "%s", jout);
    cr_assert(is_bool(member(dt, "a"), true) && is_bool(member(dt, "b"), true));
    cr_assert(is_bool(member(dt, "counted"), false));
    cr_assert(is_bool(member(j, "same"), !p));
    pt_json *ks = member(dt, "kernels");
    cr_assert_eq(ks->n, 3);
    for (int i = 0; i < 3; i++) {
      bool found = false;
      for (uint32_t k = 0; k < ks->n; k++) {
        pt_json *e = pt_json_at(ks, k);
        if (strcmp(str_of(e, "kernel"), kernels[i]))
          continue;
        found = true;
        pt_json *sa = member(e, "a"), *sb = member(e, "b");
        cr_assert_eq(num(member(sa, "launches")), 1);
        cr_assert_eq(num(member(sb, "launches")), 1);
        cr_assert_gt(num(member(sa, "total_ns")), 0);
        cr_assert_gt(num(member(sb, "total_ns")), 0);
        char q[512];
        snprintf(q, sizeof q, "SELECT sum(device_ns) FROM pi_device_times WHERE seq IN (SELECT seq "
                 "FROM pi_args WHERE position = 1 AND value IN (SELECT value FROM pi_args WHERE "
                 "name = 'ret_kernel' AND seq IN (SELECT seq FROM pi_args WHERE value = '%s')))",
                 kernels[i]);
        cr_assert_eq(num(member(sa, "total_ns")), sql_int(pairs[p][0], q), "%s in A", kernels[i]);
        cr_assert_eq(num(member(sb, "total_ns")), sql_int(pairs[p][1], q), "%s in B", kernels[i]);
        if (p)
          cr_assert_eq(member(e, "ratio")->type, PJ_NULL);
        else
          cr_assert_float_eq(num(member(e, "ratio")),
                             num(member(sb, "total_ns")) / num(member(sa, "total_ns")),
                             1e-5 * num(member(sb, "total_ns")) / num(member(sa, "total_ns")));
      }
      cr_assert(found, "no %s in device_times", kernels[i]);
    }
    pt_json_arena_free(&a);
  }
  /* Only one side profiled: said, not counted; neither: nothing. */
  char *out, *err;
  cr_assert_eq(pitrace(&out, &err, "diff", p1, plain, NULL), 0, "%s", out);
  cr_assert(strstr(out, ": same\ndevice times: only A has them"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", "--json", plain, p1, NULL), 0, "%s", out);
  pt_json_arena a = {0};
  pt_json *dt = member(parse(&a, out), "device_times");
  cr_assert(is_bool(member(dt, "a"), false) && is_bool(member(dt, "b"), true));
  cr_assert_eq(member(dt, "kernels")->n, 0);
  cr_assert_eq(pitrace(&out, &err, "diff", plain, plain, NULL), 0, "%s", out);
  cr_assert_null(strstr(out, "device time"), "%s", out);
  cr_assert_eq(pitrace(&out, &err, "diff", "--json", plain, plain, NULL), 0, "%s", out);
  cr_assert_eq(member(parse(&a, out), "device_times")->type, PJ_NULL);
  pt_json_arena_free(&a);
  /* The report's comparison: the same table. */
  if (!chromium())
    return;
  char *html = tu_temp_path(".html");
  cr_assert_eq(pitrace(&out, &err, "report", p1, rus, "-o", html, NULL), 0, "%s", err);
  char *dom = headless(html, NULL), *t = strstr(dom, "<table id=\"diff-devtimes\">");
  cr_assert(t, "no device table in the comparison:\n%.3000s", dom);
  *strstr(t, "</table>") = 0;
  cr_assert(strstr(t, "<th class=\"num\">B/A mean</th>"), "%s", t);
  for (int i = 0; i < 3; i++)
    cr_assert(strstr(t, fmt("<tr><td>%s</td><td class=\"num\">1</td>", kernels[i])), "%s", t);
}

/* A duration as stats prints it ("26.50 ms"), in ns. */
static double stats_ns(double v, const char *unit)
{
  return v * (strcmp(unit, "s") == 0 ? 1e9 : strcmp(unit, "ms") == 0 ? 1e6
              : strcmp(unit, "us") == 0 ? 1e3 : 1);
}

/* matmul (examples/matmul: four kernels) under `pitrace record --profile`:
 * stats gives each kernel, by the names the session created them with,
 * its launches all timed and count, total, mean, p50, p99 and max; on PoCL
 * the times are real and agree with the session's device_times, on
 * rusticl 22.3 (fixed profiling values) only the structure is checked. */
Test(viewer, matmul_device_times_per_kernel_under_record_profile)
{
  const char *icds[] = {POCL, RUSTICL};
  for (int k = 0; k < 2; k++) {
    char *dir = tu_temp_path(".d"), *out, *err;
    cr_assert_eq(pitrace(&out, &err, "record", "--profile", "-o", dir, "--", "/usr/bin/env",
                         icds[k], "RUSTICL_ENABLE=swrast", BIN "/matmul", "3", NULL), 0,
                 "%s%s", out, err);
    DIR *d = opendir(dir);
    cr_assert(d);
    char *db = NULL;
    for (struct dirent *e; (e = readdir(d));)
      if (strstr(e->d_name, ".db") && !strchr(strstr(e->d_name, ".db"), '-'))
        db = fmt("%s/%s", dir, e->d_name);
    closedir(d);
    cr_assert(db, "no session in %s", dir);
    cr_assert_eq(pitrace(&out, &err, "stats", db, NULL), 0, "%s", err);
    cr_assert(strstr(out, "\nkernel                                  launches     enqueue     timed"
                          "      device        mean         p50         p99         max\n"),
              "%s", out);
    const char *names = "SELECT group_concat(value, ' ') FROM (SELECT a.value FROM pi_args a "
                        "JOIN pi_calls c ON c.session = a.session AND c.seq = a.seq WHERE "
                        "c.api = 'piKernelCreate' AND a.name = 'kernel_name' ORDER BY a.seq)";
    char *list = sql(db, names), *save = NULL;
    int nk = 0;
    for (char *name = strtok_r(list, " ", &save); name; name = strtok_r(NULL, " ", &save)) {
      nk++;
      char *row = strstr(out, fmt("\n%s ", name));
      cr_assert(row, "no stats row for %s:\n%s", name, out);
      long long launches, timed;
      double enq, total, mean, p50, p99, max;
      char u[6][8];
      cr_assert_eq(sscanf(row + 1 + strlen(name), "%lld %lf %7s %lld %lf %7s %lf %7s %lf %7s "
                          "%lf %7s %lf %7s", &launches, &enq, u[0], &timed, &total, u[1],
                          &mean, u[2], &p50, u[3], &p99, u[4], &max, u[5]), 14,
                   "%.160s", row);
      cr_assert_eq(launches, 3, "%s", name);
      cr_assert_eq(timed, 3, "%s: %lld of 3 launches timed", name, timed);
      total = stats_ns(total, u[1]), mean = stats_ns(mean, u[2]), p50 = stats_ns(p50, u[3]);
      p99 = stats_ns(p99, u[4]), max = stats_ns(max, u[5]);
      cr_assert(p50 <= p99 && p99 <= max && mean <= max, "%s: %.160s", name, row);
      if (k == 1)
        continue; /* rusticl 22.3: 1 ns for every command */
      cr_assert_gt(p50, 0.0, "%s: %.160s", name, row);
      /* The total is the session's sum for this kernel (stats rounds to 4 digits). */
      double sum = (double)sql_int(db, fmt(
          "SELECT sum(d.device_ns) FROM pi_device_times d JOIN pi_args a ON a.session = "
          "d.session AND a.seq = d.seq AND a.name = 'kernel' WHERE a.value IN (SELECT r.value "
          "FROM pi_args r JOIN pi_args n ON n.session = r.session AND n.seq = r.seq WHERE "
          "n.name = 'kernel_name' AND n.value = '%s' AND r.name = 'ret_kernel')", name));
      cr_assert(fabs(total - sum) <= 0.01 * sum, "%s: stats %g ns, session %g ns", name, total,
                sum);
      cr_assert(fabs(3 * mean - total) <= 0.01 * total, "%s: %.160s", name, row);
      /* Plausible: no command longer than the session. */
      double span = (double)sql_int(db, "SELECT max(end_ns) - min(start_ns) FROM pi_calls");
      cr_assert(max < span, "%s: max %g ns in a session of %g ns", name, max, span);
    }
    cr_assert_eq(nk, 4, "kernels: %s", sql(db, names));
  }
}
