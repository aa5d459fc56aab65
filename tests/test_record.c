/*
 * test_record.c: the recording shim on real PoCL calls. Every call the
 * trace shows is recorded, in the same order, with typed readable
 * arguments; sessions survive crashes, abort, SIGKILL and exit without
 * teardown; 8 threads lose and duplicate nothing; a full disk or an
 * unwritable path stops recording with one warning while the application
 * goes on; the data controls, the filter and backtraces work; the
 * runtime's link decisions and spec-constant values are stored. A process
 * that ends without a word (_exit right after its calls, SIGKILL at any
 * point) keeps every call that returned, salvaged from its ring file; four
 * processes recording into one path at once are all kept.
 */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "recorder.h" /* the ring file's layout, for tests that damage or reorder one */
#include "testutil.h"

#define BIN PITRACE_BIN_DIR
#define POCL "OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd"

static char *env_kv(const char *name, const char *value)
{
  char *s = malloc(strlen(name) + strlen(value) + 2);
  sprintf(s, "%s=%s", name, value);
  return s;
}

/* Session files are read through read-write connections, as tu_db_query
 * opens them (testutil.h says why). */
#define DB_READ SQLITE_OPEN_READWRITE

/* The APIs of the trace's call blocks, one per line. */
static char *trace_apis(const char *trace)
{
  char *out = calloc(1, strlen(trace) + 1), *w = out;
  for (const char *p = trace; (p = strstr(p, "---> ")); p += 5) {
    if (p != trace && p[-1] != '\n')
      continue;
    const char *e = strchr(p, '(');
    memcpy(w, p + 5, (size_t)(e - p - 5));
    w += e - p - 5;
    *w++ = '\n';
  }
  return out;
}

/* Runs argv recorded into db on PoCL; checks that it exits with status;
 * its output (malloc'd). */
static char *run_recorded(const char *const *argv, const char *db, int status)
{
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), status, "%s", out);
  return out;
}

/* The queries record_prog counts, by session: "session count" lines. */
#define QUERIES_BY_SESSION                                                                        \
  "SELECT session || ' ' || count(*) FROM pi_args WHERE name = 'param_name' AND "               \
  "value = 'PI_DEVICE_INFO_MAX_COMPUTE_UNITS' GROUP BY session ORDER BY session"

/* Runs argv recorded into db with every call traced to a file; checks its
 * exit status and that it printed `made` (NULL: nothing to check), and
 * returns the number of calls the trace shows. */
static int run_traced(const char *const *argv, const char *db, int status, const char *made)
{
  char *trace = tu_temp_path(".trace"), *out;
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), "SYCL_PI_TRACE=2",
                       env_kv("SYCL_PI_TRACE_FILE", trace), POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), status, "%s", out);
  if (made)
    cr_assert(strstr(out, made), "%s", out);
  return tu_count(tu_read_file(trace), "\n---> ") + 1;
}

Test(record, every_traced_call_is_recorded_in_order_with_readable_arguments)
{
  char *db = tu_temp_path(".db"), *trace = tu_temp_path(".trace");
  const char *argv[] = {BIN "/vadd", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), "SYCL_PI_TRACE=2",
                       env_kv("SYCL_PI_TRACE_FILE", trace), POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "result verified"), "%s", out);
  char *traced = trace_apis(tu_read_file(trace));
  char *recorded = tu_db_lines(db, "SELECT api FROM pi_calls ORDER BY seq");
  cr_assert_str_eq(recorded, traced);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE result <> 'PI_SUCCESS'"), 0);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_args WHERE value IS NULL OR value = ''"), 0,
               "%s", tu_db_lines(db, "SELECT seq || ' ' || name FROM pi_args WHERE value IS NULL "
                                  "OR value = ''"));
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "teardown\n");
  /* Typed values: a handle, an enum, flags, a string, an info result, data. */
  char *kc = tu_db_lines(db, "SELECT name || '=' || value FROM pi_args WHERE seq = (SELECT "
                          "min(seq) FROM pi_calls WHERE api = 'piKernelCreate')");
  cr_assert(strstr(kc, "program=program#"), "%s", kc);
  cr_assert(strstr(kc, "kernel_name=vadd\n"), "%s", kc);
  cr_assert(strstr(kc, "ret_kernel=kernel#"), "%s", kc);
  char *info = tu_db_lines(db, "SELECT value FROM pi_args WHERE name = 'param_name' AND "
                            "value = 'PI_DEVICE_INFO_TYPE'");
  cr_assert(strstr(info, "PI_DEVICE_INFO_TYPE"), "%s", info);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_args WHERE name = 'param_value' AND "
                          "value = 'PI_DEVICE_TYPE_CPU'"), 1);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_args WHERE name = 'flags' AND value = "
                          "'PI_MEM_ACCESS_READ_ONLY|PI_MEM_FLAGS_HOST_PTR_COPY'"), 1);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_args WHERE name = 'ptr' AND "
                          "value LIKE '4096 bytes (out): 0000003F%'"), 1);
  /* Handles: created and released by the calls named. */
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_handles WHERE kind = 'kernel' AND "
                          "created_by = 'piKernelCreate' AND released_by = 'piKernelRelease'"), 1);
}

Test(record, crash_keeps_every_call_and_the_entry_of_the_crashing_one)
{
  char *db = tu_temp_path(".db"), *cfg = tu_write_temp(".conf", PITRACE_LIB_DIR
                                                           "/libpi_test_partial.so\n");
  const char *argv[] = {BIN "/use_device", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), env_kv("SYCL_PI_CONFIG", cfg),
                       "PI_TEST_CRASH=1", NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 128 + SIGSEGV, "%s", out);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended || ' ' || signal FROM sessions"), "signal 11\n");
  char *last = tu_db_lines(db, "SELECT api || ' ' || coalesce(result, 'no result') FROM "
                            "pi_calls ORDER BY seq DESC LIMIT 1");
  cr_assert_str_eq(last, "piContextCreate no result\n");
}

/* A call given memory at a bad address: the recorder faulted before the
 * entry was committed, reading the call's data (a property list) or
 * copying it (host data kept in the ring), or the payload file's write
 * failed and turned the file off for the session before the copy into
 * memory faulted (a large one): either way the session lost the crashing
 * call. Its entry is kept now, with none of the bytes. */
static char *check_bad_address(const char *how, const char *api, const char *size)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {PITRACE_BIN_DIR "/trace_end", how, "3", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 128 + SIGSEGV, "%s", out);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended || ' ' || signal FROM sessions"), "signal 11\n");
  char *last = tu_db_lines(db, "SELECT api || ' ' || coalesce(result, 'no result') FROM "
                            "pi_calls ORDER BY seq DESC LIMIT 1");
  char want[128];
  snprintf(want, sizeof want, "%s no result\n", api);
  cr_assert_str_eq(last, want);
  /* The bytes: none stored of the call's size (no data row without an item). */
  if (size)
    snprintf(want, sizeof want, "0 %s\n", size);
  else
    want[0] = 0;
  cr_assert_str_eq(tu_db_lines(db, "SELECT stored || ' ' || size FROM data WHERE seq = "
                                   "(SELECT max(seq) FROM calls)"),
                   want);
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
  return db;
}

Test(record, a_fault_copying_a_calls_bytes_keeps_its_entry)
{
  check_bad_address("badhost", "piMemBufferCreate", "4096");
}

Test(record, a_bad_address_for_a_payload_file_copy_keeps_the_entry)
{
  check_bad_address("badbig", "piMemBufferCreate", "1048576");
}

Test(record, a_fault_reading_a_calls_property_list_keeps_its_entry)
{
  char *db = check_bad_address("badprops", "piextQueueCreate", NULL), *out;
  /* The list unread is said so, not shown empty ("[ 0 ]", "[]"). */
  const char *show[] = {BIN "/pitrace", "show", "--api", "piextQueueCreate", db, NULL};
  cr_assert_eq(tu_run(show, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "\tpi_queue_properties * properties : ptr [ not recorded ]\n"), "%s", out);
  const char *compact[] = {BIN "/pitrace", "show", "--compact", db, NULL};
  cr_assert_eq(tu_run(compact, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "piextQueueCreate(context#3, device#2, (not recorded), ->_)"), "%s", out);
}

Test(record, crash_after_n_calls_keeps_all_of_them)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "crash", "500", NULL};
  int traced = run_traced(argv, db, 128 + SIGSEGV, "made 500 calls");
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM calls"), traced);
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo'"), 500);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended || ' ' || signal FROM sessions"), "signal 11\n");
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
}

Test(record, abort_marks_the_session)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "abort", "50", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 128 + SIGABRT, "%s", out);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended || ' ' || signal FROM sessions"), "signal 6\n");
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo'"), 50);
}

/* Two threads that abort at once (a failure every worker asserts on):
 * the second one's handler found the first one storing the session and
 * ended the process at once, under the writer: the session stayed
 * "running", its last calls in the ring file until a salvager came (9
 * runs of 10). Now it waits for that end as the first does. */
Test(record, two_threads_aborting_at_once_mark_the_session)
{
  int ended = 0;
  for (int run = 0; run < 5; run++) {
    char *db = tu_temp_path(".db");
    const char *argv[] = {BIN "/record_prog", "aborttwo", "50", NULL};
    const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
    char *out;
    cr_assert_eq(tu_run(argv, env, &out), 128 + SIGABRT, "%s", out);
    char *how = tu_db_lines(db, "SELECT ended || ' ' || coalesce(signal, '-') FROM sessions");
    ended += strcmp(how, "signal 6\n") == 0;
    cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo'"),
                  50);
  }
  cr_assert_eq(ended, 5, "%d of 5 sessions say signal 6", ended);
}

static int ring_files(const char *db);
static char *salvage_with_pitrace(const char *db);

Test(record, sigkill_leaves_a_sound_database_with_the_calls_before_it)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "kill", "300", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 128 + SIGKILL, "%s", out);
  /* Sound as the kill left it, whatever its writer had committed by then
   * (on a loaded machine, maybe nothing of the last 300 ms: a test that
   * counted the calls here, before any salvage, failed now and then). */
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
  /* The calls returned 300 ms before the kill: none may be lost once the
   * next reader took what the ring file kept. */
  salvage_with_pitrace(db);
  cr_assert_eq(ring_files(db), 0);
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo'"), 300);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "killed\n");
}

Test(record, exit_without_teardown_keeps_the_calls)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "exit", "200", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 3, "%s", out);
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
  salvage_with_pitrace(db); /* what its writer had not committed yet */
  cr_assert_eq(ring_files(db), 0);
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo'"), 200);
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
}

/* `record_prog threads 8 2000` recorded into db: every thread's 2000
 * queries are there, from 9 threads, and in each thread the calls follow
 * each other in time as in sequence. */
static void assert_eight_threads_whole(const char *db)
{
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo' AND "
                          "thread > 1"), 8 * 2000);
  cr_assert_eq(tu_db_int(db, "SELECT count(DISTINCT thread) FROM calls"), 9);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM (SELECT start_ns, lag(start_ns + dur_ns) "
                          "OVER (PARTITION BY thread ORDER BY seq) AS prev_end FROM calls) "
                          "WHERE start_ns < prev_end"), 0);
}

Test(record, eight_threads_lose_and_duplicate_nothing)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "threads", "8", "2000", NULL};
  int traced = run_traced(argv, db, 0, NULL);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM calls"), traced);
  cr_assert_eq(tu_db_int(db, "SELECT count(DISTINCT seq) FROM pi_calls"), traced);
  cr_assert_eq(tu_db_int(db, "SELECT max(seq) - min(seq) + 1 FROM pi_calls"), traced,
               "gaps in seq");
  assert_eight_threads_whole(db);
}

/* Call times are stamped with the time-stamp counter where the kernel's
 * clock runs on it, and converted by the writer: a 300 ms sleep between
 * two calls is, in the session, what the program itself measured on
 * CLOCK_MONOTONIC: no less than the time from the first call's return to
 * the second's call, no more than from the first's call to the second's
 * return (bounds that hold however loaded the machine is; 1 ms is left for
 * the counter's conversion). */
static void check_gap(const char *clock)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "gap", "300", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, clock, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  long long inner = 0, outer = 0;
  const char *g = strstr(out, "gap ");
  cr_assert(g && sscanf(g, "gap %lld %lld", &inner, &outer) == 2, "%s", out);
  cr_assert(inner >= 300000000LL && outer >= inner, "%s", out);
  /* The program's two queries: the session's last two piDeviceGetInfo
   * calls (the runtime's own come before them, at discovery). */
  long long gap = tu_db_int(db, "WITH q AS (SELECT seq, start_ns, end_ns FROM pi_calls WHERE api = "
                             "'piDeviceGetInfo' ORDER BY seq DESC LIMIT 2) "
                             "SELECT max(start_ns) - min(end_ns) FROM q");
  cr_assert(gap >= inner - 1000000LL && gap <= outer + 1000000LL,
            "%s: gap %lld ns in the session, the program saw %lld..%lld ns", clock, gap, inner,
            outer);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM calls WHERE start_ns < 0 OR dur_ns < 0 OR "
                          "start_ns + dur_ns > (SELECT duration_ns FROM sessions)"), 0);
}

Test(record, call_times_follow_the_monotonic_clock)
{
  check_gap("PITRACE_CLOCK=default");
  check_gap("PITRACE_CLOCK=monotonic");
}

/* The same without the time-stamp counter. */
Test(record, eight_threads_on_the_monotonic_clock_lose_and_duplicate_nothing)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "threads", "8", "2000", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), "PITRACE_CLOCK=monotonic", POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert_eq(tu_db_int(db, "SELECT max(seq) - min(seq) + 1 - count(*) FROM calls"), 0);
  assert_eight_threads_whole(db);
}

/* Calls are ordered by their time and thread, not by a shared counter: a
 * call that uses what another thread's call made just before must still
 * come after it. */
Test(record, an_object_made_by_one_thread_and_used_by_another_keeps_its_order)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "handoff", "4", "3000", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "handed off 12000 buffers"), "%s", out);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_handles WHERE kind = 'mem'"), 12000);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_handles WHERE kind = 'mem' AND "
                          "(origin != 'created' OR released_seq IS NULL OR "
                          "released_seq <= created_seq)"), 0);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piMemRelease' AND "
                          "result = 'PI_SUCCESS'"), 12000);
}

Test(record, unwritable_path_warns_once_and_the_application_goes_on)
{
  const char *argv[] = {BIN "/vadd", NULL};
  const char *env[] = {"SYCL_PI_RECORD=/nonexistent/dir/s.db", POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "result verified"), "%s", out);
  cr_assert_eq(tu_count(out, "pitrace: cannot record to /nonexistent/dir/s.db"), 1, "%s", out);
  cr_assert_eq(tu_count(out, "pitrace:"), 1, "%s", out);
}

/* Rows of `table` in one database and not in the other, both ways. */
static long long rows_not_in_both(sqlite3 *db, const char *table, const char *cols)
{
  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT (SELECT count(*) FROM (SELECT %s FROM main.%s EXCEPT SELECT %s FROM o.%s))"
           " + (SELECT count(*) FROM (SELECT %s FROM o.%s EXCEPT SELECT %s FROM main.%s))",
           cols, table, cols, table, cols, table, cols, table);
  sqlite3_stmt *s;
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK, "%s: %s", sql,
               sqlite3_errmsg(db));
  cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
  long long n = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return n;
}

/* A recording into a new path copies the template made at build time; one
 * into a file that is there but empty creates the schema and the API
 * description statement by statement: the two hold the same. */
Test(record, a_new_file_holds_what_the_schema_statements_make)
{
  char *made = tu_temp_path(".db"), *from_sql = tu_write_temp(".db", "");
  const char *argv[] = {BIN "/vadd", "64", NULL};
  char *out;
  const char *env1[] = {env_kv("SYCL_PI_RECORD", made), POCL, NULL};
  cr_assert_eq(tu_run(argv, env1, &out), 0, "%s", out);
  cr_assert(strstr(out, "result verified"), "%s", out);
  const char *env2[] = {env_kv("SYCL_PI_RECORD", from_sql), POCL, NULL};
  cr_assert_eq(tu_run(argv, env2, &out), 0, "%s", out);
  cr_assert(strstr(out, "result verified"), "%s", out);
  struct stat st;
  cr_assert_eq(stat(made, &st), 0);
  cr_assert_eq(st.st_mode & 0777, 0600, "%s has mode %o", made, st.st_mode & 0777);
  cr_assert_eq(tu_db_int(made, "PRAGMA page_size"), tu_db_int(from_sql, "PRAGMA page_size"));
  cr_assert_eq(tu_db_int(made, "PRAGMA page_size"), 16384);
  cr_assert_gt(tu_db_int(made, "SELECT count(*) FROM pi_params"), 500);
  cr_assert_gt(tu_db_int(made, "SELECT count(*) FROM sqlite_master WHERE type = 'view'"), 5);
  cr_assert_eq(tu_db_int(made, "SELECT count(*) FROM pi_calls"),
               tu_db_int(from_sql, "SELECT count(*) FROM pi_calls"));
  sqlite3 *db;
  cr_assert_eq(sqlite3_open_v2(made, &db, DB_READ, NULL), SQLITE_OK);
  char attach[600];
  snprintf(attach, sizeof attach, "ATTACH '%s' AS o", from_sql);
  cr_assert_eq(sqlite3_exec(db, attach, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
  cr_assert_eq(rows_not_in_both(db, "sqlite_master", "type, name, tbl_name, sql"), 0);
  cr_assert_eq(rows_not_in_both(db, "pi_api", "*"), 0);
  cr_assert_eq(rows_not_in_both(db, "pi_params", "*"), 0);
  cr_assert_eq(rows_not_in_both(db, "pi_enums", "*"), 0);
  cr_assert_eq(rows_not_in_both(db, "pitrace_meta", "*"), 0);
  sqlite3_close(db);
}

/* A full disk stops neither the application nor the recording of its
 * calls: the data that would not fit is left out (1 MiB here, for vadd's
 * 12 MB of buffers; data_that_would_fill_the_disk_is_left_out_and_every_
 * call_kept has the details), and a file that stops growing altogether
 * stops the recording, said once (pitrace_record's
 * a_recording_that_stopped_part_way_is_said_so_in_the_summary). */
Test(record, a_full_disk_stops_not_the_application)
{
  char dir[32];
  tu_small_tmpfs(dir, "1m");
  char db[256];
  snprintf(db, sizeof db, "%s/s.db", dir);
  const char *argv[] = {BIN "/vadd", "1000000", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  char *out;
  int st = tu_run(argv, env, &out);
  char *ended = tu_db_lines(db, "SELECT ended FROM sessions");
  char *ok = tu_db_lines(db, "PRAGMA integrity_check");
  tu_small_tmpfs_gone(dir);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert(strstr(out, "result verified"), "%s", out);
  cr_assert_eq(tu_count(out, "pitrace: recording to "), 1, "%s", out);
  cr_assert(strstr(out, "the calls go on being recorded without it"), "%s", out);
  cr_assert_str_eq(ended, "teardown\n");
  cr_assert_str_eq(ok, "ok\n");
}

/* SYCL_PI_RECORD naming another program's SQLite database (a typo for
 * the application's own file): nothing is written into it, its journal
 * mode (WAL) included, and the application runs unrecorded with one line
 * saying why (the recorder added its tables to it before). */
Test(record, another_programs_database_is_left_alone)
{
  char *db = tu_temp_path(".db");
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(h, "PRAGMA journal_mode=WAL; CREATE TABLE orders(id, total); "
                               "INSERT INTO orders VALUES (1, 9.5);", NULL, NULL, NULL),
               SQLITE_OK, "%s", sqlite3_errmsg(h));
  sqlite3_close(h);
  const char *argv[] = {BIN "/vadd", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "result verified"), "%s", out);
  cr_assert_eq(tu_count(out, "pitrace: cannot record to "), 1, "%s", out);
  cr_assert(strstr(out, "another program's SQLite database: it holds table 'orders' and no "
                        "pitrace session; record to another file"), "%s", out);
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT group_concat(name) FROM sqlite_master", -1, &q,
                                  NULL), SQLITE_OK);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  cr_assert_str_eq((const char *)sqlite3_column_text(q, 0), "orders");
  sqlite3_finalize(q);
  cr_assert_eq(sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &q, NULL), SQLITE_OK);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  cr_assert_str_eq((const char *)sqlite3_column_text(q, 0), "wal");
  sqlite3_finalize(q);
  sqlite3_close(h);
}

/* SYCL_PI_RECORD naming a device, pipe or socket (/dev/null, to "record
 * nothing") is refused in one line and left as it is: the recorder made
 * it readable by its owner alone (as root, /dev/null became 0600 for the
 * whole machine) and then failed at its first write. Here a FIFO, which
 * the same path took. */
Test(record, a_device_or_pipe_is_not_recorded_into_and_keeps_its_mode)
{
  char *fifo = tu_temp_path(".fifo");
  cr_assert_eq(mkfifo(fifo, 0644), 0);
  cr_assert_eq(chmod(fifo, 0644), 0); /* whatever the umask */
  const char *argv[] = {BIN "/vadd", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", fifo), POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "result verified"), "%s", out);
  cr_assert_eq(tu_count(out, "pitrace: "), 1, "%s", out);
  cr_assert(strstr(out, "cannot record to "), "%s", out);
  cr_assert(strstr(out, " (it is a device, pipe or socket, not a file; "), "%s", out);
  struct stat st;
  cr_assert_eq(stat(fifo, &st), 0);
  cr_assert(S_ISFIFO(st.st_mode) && (st.st_mode & 07777) == 0644, "mode %o", st.st_mode);
  unlink(fifo);
}

/* A SYCL_PI_RECORD path longer than SQLite opens (504 bytes, absolute) is
 * refused in one line before any file is made: SQLite said "unable to
 * open database file" and left an empty file behind; and one longer than
 * the recorder's own room was cut short, which in a directory that exists
 * named another file, a prefix of the one asked for, recorded into. */
Test(record, a_path_too_long_to_open_is_refused_before_any_file_is_made)
{
  const int depths[] = {2, 17}; /* about 650 and 3,650 characters */
  for (int k = 0; k < 2; k++) {
    char path[4096];
    size_t n = tu_deep_dir(path, sizeof path, depths[k]);
    char deepest[4096];
    snprintf(deepest, sizeof deepest, "%s", path);
    path[n++] = '/';
    memset(path + n, 'f', 200);
    n += 200;
    snprintf(path + n, sizeof path - n, ".db");
    const char *argv[] = {BIN "/vadd", NULL};
    const char *env[] = {env_kv("SYCL_PI_RECORD", path), POCL, NULL};
    char *out;
    cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
    cr_assert(strstr(out, "result verified"), "%s", out);
    cr_assert(strstr(out, "characters long, and SQLite opens files by paths of up to 504; record "
                          "to a shorter one); the application goes on unrecorded"), "%s", out);
    DIR *d = opendir(deepest);
    cr_assert(d);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));)
      files += e->d_name[0] != '.';
    closedir(d);
    cr_assert_eq(files, 0, "depth %d: a file was made where nothing is recorded", depths[k]);
  }
}

Test(record, data_controls)
{
  const char *argv[] = {BIN "/vadd", NULL};
  char *none = tu_temp_path(".db"), *meta = tu_temp_path(".db"), *cap = tu_temp_path(".db");
  char *out;
  const char *e1[] = {env_kv("SYCL_PI_RECORD", none), "SYCL_PI_RECORD_DATA=none", POCL, NULL};
  cr_assert_eq(tu_run(argv, e1, &out), 0, "%s", out);
  cr_assert_eq(tu_db_int(none, "SELECT count(*) FROM data WHERE role IN ('in', 'out')"), 0);
  cr_assert_str_eq(tu_db_lines(none, "SELECT data_mode FROM sessions"), "none\n");
  const char *e2[] = {env_kv("SYCL_PI_RECORD", meta), "SYCL_PI_RECORD_DATA=meta", POCL, NULL};
  cr_assert_eq(tu_run(argv, e2, &out), 0, "%s", out);
  cr_assert_gt(tu_db_int(meta, "SELECT count(*) FROM data WHERE size = 4096"), 0);
  cr_assert_eq(tu_db_int(meta, "SELECT count(*) FROM data WHERE stored > 0 AND role IN "
                            "('in', 'out')"), 0);
  const char *e3[] = {env_kv("SYCL_PI_RECORD", cap), "SYCL_PI_RECORD_DATA_CAP=1K", POCL, NULL};
  cr_assert_eq(tu_run(argv, e3, &out), 0, "%s", out);
  cr_assert_gt(tu_db_int(cap, "SELECT count(*) FROM data WHERE size = 4096 AND stored = 1024"), 0);
  /* A cap that wraps (it was 0: nothing stored) or has a sign (-1 was
   * the largest number) is said, and the default kept. */
  const char *caps[] = {"17179869184G", "-1"};
  for (int i = 0; i < 2; i++) {
    char *db = tu_temp_path(".db");
    const char *e[] = {env_kv("SYCL_PI_RECORD", db),
                       env_kv("SYCL_PI_RECORD_DATA_CAP", caps[i]), POCL, NULL};
    cr_assert_eq(tu_run(argv, e, &out), 0, "%s", out);
    cr_assert(strstr(out, "is not a size (like 64M); keeping 268435456 bytes"), "%s", out);
    cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM data WHERE size = 4096 AND stored = 4096"),
                 tu_db_int(db, "SELECT count(*) FROM data WHERE size = 4096"));
  }
}

static int ring_files(const char *db);

Test(record, api_filter_and_backtraces)
{
  const char *argv[] = {BIN "/vadd", NULL};
  char *db = tu_temp_path(".db"), *out;
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), "SYCL_PI_RECORD_FILTER=piEnqueue*,piKernel*",
                       "SYCL_PI_RECORD_BACKTRACE=1", POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  /* The session ends as the process did, though piTearDown is filtered
   * out (it ended "killed", its last calls left in the ring file). */
  cr_assert_eq(ring_files(db), 0, "the ring file was left behind");
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "teardown\n");
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api NOT LIKE 'piEnqueue%' AND "
                          "api NOT LIKE 'piKernel%'"), 0);
  cr_assert_gt(tu_db_int(db, "SELECT count(*) FROM pi_calls"), 4);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM calls WHERE stack IS NULL"), 0);
  char *frames = tu_db_lines(db, "SELECT frames FROM stacks");
  cr_assert(strstr(frames, "vadd!main+0x") || strstr(frames, "vadd+0x"), "%s", frames);
  cr_assert(strstr(frames, "libpirt.so"), "%s", frames);
  /* 0 or 1: "off" (or "no", "false") turned stacks on, without a word. */
  char *off = tu_temp_path(".db");
  const char *env_off[] = {env_kv("SYCL_PI_RECORD", off), "SYCL_PI_RECORD_BACKTRACE=off", POCL,
                           NULL};
  cr_assert_eq(tu_run(argv, env_off, &out), 0, "%s", out);
  cr_assert_eq(tu_count(out, "SYCL_PI_RECORD_BACKTRACE=off is not 0 or 1; recording calls "
                             "without their stacks"), 1, "%s", out);
  cr_assert_eq(tu_db_int(off, "SELECT count(*) FROM calls WHERE stack IS NOT NULL"), 0);
}

/* A session of one call (a filter that keeps one API) is "1 call" in
 * stats, not "1 calls". */
Test(record, a_session_of_one_call_says_so)
{
  const char *argv[] = {BIN "/vadd", NULL};
  char *db = tu_temp_path(".db"), *out;
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), "SYCL_PI_RECORD_FILTER=piContextCreate",
                       POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  const char *stats[] = {BIN "/pitrace", "stats", db, NULL};
  cr_assert_eq(tu_run(stats, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, ": 1 call, "), "%s", out);
}

/* A recorded runtime dlopened and dlclosed with backtraces on: the
 * session ends inside dlclose, which holds the dynamic loader's lock
 * while its destructors run. The writer named stacks with dladdr, which
 * waits for that lock, while dlclose waited for the writer: every cycle
 * hung for the 10 s the end waits, then the shim was unloaded under the
 * writer still inside dladdr (SIGSEGV). Stacks are named by the calling
 * thread now; each cycle is a session of its own, its stacks named. */
Test(record, a_recorded_runtime_closed_with_dlclose_and_backtraces_ends_each_session)
{
  const char *argv[] = {BIN "/dlopen_cycle", PITRACE_LIB_DIR "/libpirt.so", "3", NULL};
  char *db = tu_temp_path(".db"), *out;
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), "SYCL_PI_RECORD_BACKTRACE=1", POCL, NULL};
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 0, "status %d: %s", st, out);
  cr_assert(strstr(out, "3 cycles done"), "%s", out);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions ORDER BY id"),
                   "teardown\nteardown\nteardown\n");
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM calls WHERE stack IS NULL"), 0);
  cr_assert_gt(tu_db_int(db, "SELECT count(DISTINCT session) FROM stacks"), 2);
  /* Every one named by its module (a function without a dynamic symbol
   * by its offset), none by its address alone. */
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM stacks WHERE frames NOT LIKE "
                             "'libpirt.so%'"), 0, "%s",
               tu_db_lines(db, "SELECT frames FROM stacks"));
  cr_assert_gt(tu_db_int(db, "SELECT count(*) FROM stacks WHERE frames LIKE "
                             "'%libpirt.so!pirt_%'"), 2);
}

/* The runtime unloaded (dlclose) and loaded again while a thread that
 * used it lives on: the runtime that ends keeps its plugins for that
 * thread, so the shim stays loaded with its session ended. The next load
 * found its four instances taken ("wraps at most 4 plugins") and its
 * session over: only the first load was recorded. Each load is a session
 * now, with the calls of both threads (the one that lives on writes into
 * a ring of the new session, not the one it had). */
Test(record, a_runtime_loaded_again_while_a_thread_that_used_it_lives_records_each_load)
{
  const char *argv[] = {BIN "/dlopen_cycle", PITRACE_LIB_DIR "/libpirt.so", "3", "across", NULL};
  char *db = tu_temp_path(".db"), *out;
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 0, "status %d: %s", st, out);
  cr_assert(strstr(out, "3 cycles done"), "%s", out);
  cr_assert_null(strstr(out, "not wrapped"), "%s", out);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions ORDER BY id"),
                   "teardown\nteardown\nteardown\n");
  cr_assert_str_eq(tu_db_lines(db, "SELECT session || '|' || count(DISTINCT thread) || '|' || count(*) "
                                   "FROM pi_calls WHERE api = 'piContextCreate' "
                                   "GROUP BY session ORDER BY session"),
                   "1|2|2\n2|2|2\n3|2|2\n");
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE result IS NULL"), 0);
}

/* libpirt recorded, used and unloaded (dlclose) twice, then SIGTERM:
 * LLVM's handler inside PoCL, installed over the recorder's, handed the
 * signal on to the recorder's, unmapped with the shim, and the program
 * died of SIGSEGV instead. The handler the dispositions name is in a
 * library that stays (libpi_sigfwd.so); the sessions end as before. */
Test(record, a_signal_after_the_recorded_runtime_is_unloaded_ends_the_program_as_it_would)
{
  const char *argv[] = {BIN "/dlopen_cycle", PITRACE_LIB_DIR "/libpirt.so", "2", "term", NULL};
  char *db = tu_temp_path(".db"), *out;
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 128 + SIGTERM, "status %d: %s", st, out);
  cr_assert(strstr(out, "2 cycles done"), "%s", out);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions ORDER BY id"),
                   "teardown\nteardown\n");
}

/* The program's own handlers around the recorder's (sigchain: x1 under
 * it, x2 over it, each putting back what it replaced and raising again),
 * then the runtime unloaded and SIGTERM: x2 hands on to the recorder's
 * forwarder, which hands on to what was there before the recorder's
 * first handler (the default action here). Handing on to x1, which hands
 * back to the forwarder, went round for ever. Loaded, the chain runs
 * whole. */
Test(record, handlers_around_the_recorders_end_the_program_after_the_runtime_is_unloaded)
{
  const char *how[] = {"open", "close"}, *ran[] = {"x2\nx1\n", "x2\n"};
  for (int i = 0; i < 2; i++) {
    const char *argv[] = {BIN "/sigchain", PITRACE_LIB_DIR "/libpirt.so", how[i], NULL};
    char *db = tu_temp_path(".db"), *out;
    const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
    int st = tu_run(argv, env, &out);
    cr_assert_eq(st, 128 + SIGTERM, "%s: status %d: %s", how[i], st, out);
    cr_assert_str_eq(out, ran[i], "%s", how[i]);
  }
}

/* A signal from the kernel (alarm's SIGALRM) with no handler of the
 * program's below the recorder's: its default action, as without
 * recording. Its si_code (SI_KERNEL) is above 0, and the recorder took it
 * for a fault that re-executes: it returned, and the program went on. */
Test(record, an_alarm_ends_a_recorded_program_as_it_would)
{
  const char *argv[] = {BIN "/record_prog", "alarm", NULL};
  char *db = tu_temp_path(".db"), *out;
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 128 + SIGALRM, "status %d: %s", st, out);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended || ' ' || signal FROM sessions"), "signal 14\n");
}

/* record_prog MODE recorded into a new session (on PoCL), which it says
 * `done` of; the session's path. */
static char *record_prog_session(const char *mode, const char *done)
{
  const char *argv[] = {BIN "/record_prog", mode, NULL};
  char *db = tu_temp_path(".db"), *out;
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, done), "%s", out);
  return db;
}

/* A note waits for its thread's next call; a thread that makes none (an
 * implementation's thread that ran one callback) has it stored as coming
 * before the call after the last, not dropped. A callback note's second
 * word is where it began: after the last call begun, on any thread. */
Test(record, a_note_whose_thread_calls_no_more_is_kept)
{
  char *db = record_prog_session("latenote", "late note handed over");
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM notes WHERE kind = 'callback'"), 1);
  cr_assert_eq(tu_db_int(db, "SELECT seq FROM notes WHERE kind = 'callback'"),
               tu_db_int(db, "SELECT max(seq) + 1 FROM pi_calls"));
  /* value: 0x1234, then the seq of the last query (little-endian words) */
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM notes WHERE kind = 'callback' AND "
                          "substr(hex(value), 1, 16) = '3412000000000000'"), 1);
  long long after = tu_db_int(db, "SELECT max(seq) FROM pi_calls WHERE api = 'piDeviceGetInfo'");
  char want[64], sql[160];
  snprintf(want, sizeof want, "%02llX%02llX", after & 0xff, (after >> 8) & 0xff);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM notes WHERE kind = 'callback' AND "
                            "substr(hex(value), 17, 4) = '%s'", want);
  cr_assert_eq(tu_db_int(db, sql), 1, "the callback did not begin after call %lld", after);
}

Test(record, readback_of_a_non_blocking_read_and_payloads_stored_once)
{
  char *db = record_prog_session("readback", "read back ok");
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM data d JOIN pi_calls c ON c.seq = d.seq "
                          "WHERE c.api = 'piEnqueueMemBufferRead' AND d.role = 'readback' AND "
                          "d.captured_seq > d.seq AND d.size = 4096"), 1);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM data WHERE role = 'in' AND size = 4096"), 2);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM blobs WHERE size = 4096"), 1,
               "the same data stored twice");
  /* Under a data cap the read-back keeps its first bytes and says how many
   * the call wrote (its row said 1024 of 1024: replay took it for whole). */
  const char *argv[] = {BIN "/record_prog", "readback", NULL};
  char *capped = tu_temp_path(".db"), *out;
  const char *env[] = {env_kv("SYCL_PI_RECORD", capped), "SYCL_PI_RECORD_DATA_CAP=1K", POCL,
                       NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert_eq(tu_db_int(capped, "SELECT count(*) FROM data WHERE role = 'readback' AND size = "
                                 "4096 AND stored = 1024"), 1, "%s",
               tu_db_lines(capped, "SELECT size, stored FROM data WHERE role = 'readback'"));
}

/* Payloads too large for a ring go through the recorder's own payload
 * memory (payload.c: a mapping of its own from 1 MiB on, kept for reuse
 * once freed) and are written into their blob rows in place from 64 KiB
 * on (store_blob): each stored byte for byte, once, the read back too. */
Test(record, large_payloads_are_stored_byte_for_byte_and_once)
{
  static const long ints[] = {32768, 786432}; /* 128 KiB (malloc), 3 MiB (mapped) */
  for (size_t k = 0; k < sizeof ints / sizeof *ints; k++) {
    char n[32];
    snprintf(n, sizeof n, "%ld", ints[k]);
    const char *argv[] = {BIN "/record_prog", "readback", n, NULL};
    char *db = tu_temp_path(".db"), *out;
    const char *env[] = {env_kv("SYCL_PI_RECORD", db), "SYCL_PI_RECORD_DATA=all", POCL, NULL};
    cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
    cr_assert(strstr(out, "read back ok"), "%s", out);
    long long bytes = ints[k] * 4;
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM data WHERE role = 'in' AND size = %lld", bytes);
    cr_assert_eq(tu_db_int(db, sql), 2);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM data WHERE role = 'readback' AND size = %lld",
             bytes);
    cr_assert_eq(tu_db_int(db, sql), 1);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM blobs WHERE size = %lld", bytes);
    cr_assert_eq(tu_db_int(db, sql), 1, "the same data stored more than once");
    sqlite3 *h;
    cr_assert_eq(sqlite3_open_v2(db, &h, DB_READ, NULL), SQLITE_OK);
    sqlite3_stmt *s;
    snprintf(sql, sizeof sql, "SELECT content FROM blobs WHERE size = %lld", bytes);
    cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
    const int *got = sqlite3_column_blob(s, 0);
    cr_assert_eq(sqlite3_column_bytes(s, 0), bytes);
    long bad = -1;
    for (long i = 0; i < ints[k] && bad < 0; i++)
      if (got[i] != (int)(i * 3))
        bad = i;
    cr_assert_eq(bad, -1, "%lld-byte payload: int %ld is %d, not %ld", bytes, bad,
                 bad >= 0 ? got[bad] : 0, bad * 3);
    sqlite3_finalize(s);
    sqlite3_close(h);
  }
}

/* The writes of `record_prog bigwrites T M` in db: each a blob of its own,
 * byte for byte. */
static void check_big_writes_of(const char *db, int T, int M, int bursts)
{
  enum { INTS = 512 * 1024 };
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM data d JOIN pi_calls c ON c.seq = d.seq WHERE "
                          "c.api = 'piEnqueueMemBufferWrite' AND d.role = 'in' AND "
                          "d.size = 2097152"), T * M * bursts);
  sqlite3 *h;
  cr_assert_eq(sqlite3_open_v2(db, &h, DB_READ, NULL), SQLITE_OK);
  sqlite3_stmt *s;
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT content FROM blobs WHERE size = 2097152", -1, &s,
                                  NULL), SQLITE_OK);
  bool seen[8][8] = {{false}};
  int n = 0;
  while (sqlite3_step(s) == SQLITE_ROW) {
    const int *v = sqlite3_column_blob(s, 0);
    cr_assert_eq(sqlite3_column_bytes(s, 0), INTS * 4);
    int t = v[0] >> 24, m = (v[0] >> 16) & 0xff;
    cr_assert(t >= 0 && t < T && m >= 0 && m < M && !seen[t][m],
              "blob %d begins with %#x: no write of its own", n, v[0]);
    seen[t][m] = true;
    for (int k = 0; k < INTS; k++)
      cr_assert_eq(v[k], v[0] + k, "thread %d's write %d: int %d is %#x, not %#x", t, m, k, v[k],
                   v[0] + k);
    n++;
  }
  sqlite3_finalize(s);
  sqlite3_close(h);
  cr_assert_eq(n, T * M);
}

static void check_big_writes(const char *db, int T, int M)
{
  check_big_writes_of(db, T, M, 1);
}

/* Large payloads from several threads at once: the recorder's payload
 * memory is taken on the application's threads and given back on the
 * writer's (payload.c), and each blob written in place (store_blob). 4
 * threads each write a 2 MiB buffer 8 times, every write different: 32
 * blobs, each the write it was, byte for byte. */
Test(record, large_payloads_from_many_threads_are_each_stored_whole)
{
  const char *argv[] = {BIN "/record_prog", "bigwrites", "4", "8", NULL};
  char *db = tu_temp_path(".db"), *out;
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), "SYCL_PI_RECORD_DATA=all", POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "32 big writes made"), "%s", out);
  check_big_writes(db, 4, 8);
}

static int ring_files(const char *db);
static int files_beside(const char *db, const char *infix);
static char *salvage_with_pitrace(const char *db);

/* Large payloads (over 64 KiB: the ring holds a pointer to a copy) of a
 * process that ends with _exit before its writer stored them are in the
 * payload file beside its ring file, and salvaged whole with their calls.
 * The copies lived in the process's memory and went with it: such a
 * session's replay stopped at the first call whose data was over 64 KiB
 * ("recorded only in part"); a pool of forked workers, which end with
 * _exit, lost its workers' last buffers so. Writes from 2 threads, and a
 * non-blocking read of 1 MiB completed by an event wait, replayed. */
Test(record, large_payloads_of_a_process_that_ends_with__exit_are_salvaged_whole)
{
  char *db = tu_temp_path(".db"), *out;
  const char *argv[] = {BIN "/record_prog", "bigwrites", "2", "4", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), "SYCL_PI_RECORD_DATA=all",
                       "RECORD_PROG_EXIT=_exit", POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 3, "%s", out);
  cr_assert(strstr(out, "8 big writes made"), "%s", out);
  cr_assert_eq(ring_files(db), 1);
  cr_assert_eq(files_beside(db, "-payloads."), 1);
  salvage_with_pitrace(db);
  cr_assert_eq(ring_files(db), 0);
  cr_assert_eq(files_beside(db, "-payloads."), 0);
  check_big_writes(db, 2, 4);

  char *db2 = tu_temp_path(".db");
  const char *argv2[] = {BIN "/record_prog", "readback", "262144", NULL};
  const char *env2[] = {env_kv("SYCL_PI_RECORD", db2), "SYCL_PI_RECORD_DATA=all",
                        "RECORD_PROG_EXIT=_exit", POCL, NULL};
  cr_assert_eq(tu_run(argv2, env2, &out), 3, "%s", out);
  cr_assert(strstr(out, "read back ok"), "%s", out);
  salvage_with_pitrace(db2);
  cr_assert_eq(tu_db_int(db2, "SELECT count(*) FROM data WHERE role = 'readback' AND "
                              "size = 1048576"), 1);
  const char *replay[] = {BIN "/pitrace", "replay", db2, NULL};
  const char *penv[] = {POCL, NULL};
  cr_assert_eq(tu_run(replay, penv, &out), 0, "%s", out);
  cr_assert(strstr(out, "matched: "), "%s", out);
  cr_assert(strstr(out, "1 read-backs verified") || strstr(out, "1 read-back verified"), "%s",
            out);
}

/* What a test changes of a recorded child's start, in the child, just
 * before it runs its program (its output already goes to the log): a
 * signal ignored, a file size limit, another directory, another stdout. */
typedef void (*child_prep)(const void *arg);

static pid_t spawn_prepared(const char *const *argv, const char *db, const char *label,
                            const char *log, child_prep prep, const void *arg);
static void record_all_data(const void *arg);

/* The largest the payload file beside `db` has been seen while `pid`
 * ran (polled), in bytes as its length says; its exit status into *st. */
static off_t largest_payload_file(const char *db, pid_t pid, int *st)
{
  char dir[512], prefix[512];
  snprintf(dir, sizeof dir, "%s", db);
  char *slash = strrchr(dir, '/');
  snprintf(prefix, sizeof prefix, "%s-payloads.", slash + 1);
  *slash = 0;
  off_t most = 0;
  while (waitpid(pid, st, WNOHANG) == 0) {
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
      struct stat sb;
      if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 &&
          fstatat(dirfd(d), e->d_name, &sb, 0) == 0 && sb.st_size > most)
        most = sb.st_size;
    }
    if (d)
      closedir(d);
    usleep(2000);
  }
  return most;
}

/* Bursts of large payloads: a stored region went back into the payload
 * file's pool only while the pool had room (4 regions), the others' pages
 * punched and their offsets never used again, so that the file grew by
 * nearly every burst (5 bursts of 64 MiB: 276 MiB long) and under a
 * steady stream from several threads without end. Now freed offsets are
 * taken again: the file is about as long as the most in flight at once. */
Test(record, bursts_of_large_payloads_reuse_the_payload_files_room)
{
  char *db = tu_temp_path(".db"), *log = tu_temp_path(".out");
  const char *argv[] = {BIN "/record_prog", "bigwrites", "4", "8", "5", NULL};
  int st;
  off_t most = largest_payload_file(db, spawn_prepared(argv, db, NULL, log, record_all_data, NULL),
                                    &st);
  char *out = tu_read_file(log);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", out);
  cr_assert(strstr(out, "160 big writes made"), "%s", out);
  cr_assert_gt(most, 0, "no payload file seen");
  cr_assert_leq(most, (off_t)128 << 20, "the payload file grew to %lld bytes for bursts of 64 MiB",
                (long long)most);
  check_big_writes_of(db, 4, 8, 5);
}

/* The same bursts, the process ending with _exit after the last: its
 * payload file holds regions in offsets used before, free space split
 * and joined between them, and the salvager's walk finds every region
 * still waiting. */
Test(record, payloads_in_reused_room_of_a_process_that_ends_with__exit_are_salvaged)
{
  char *db = tu_temp_path(".db"), *out;
  const char *argv[] = {BIN "/record_prog", "bigwrites", "4", "8", "3", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), "SYCL_PI_RECORD_DATA=all",
                       "RECORD_PROG_EXIT=_exit", POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 3, "%s", out);
  cr_assert(strstr(out, "96 big writes made"), "%s", out);
  cr_assert_eq(files_beside(db, "-payloads."), 1);
  salvage_with_pitrace(db);
  cr_assert_eq(files_beside(db, "-payloads."), 0);
  check_big_writes_of(db, 4, 8, 3);
}

/* Threads that still make calls as the program returns from main (a pool
 * nobody joined): the runtime's shutdown freed its devices and unloaded
 * the plugins under them, and the recorded program crashed on its way out
 * (9 runs of 10). Now nothing they may touch is freed, their calls after
 * the plugins' teardown fail, and the session ends in order. */
Test(record, threads_still_calling_as_the_program_exits_do_not_crash_it)
{
  char *db = tu_temp_path(".db"), *out;
  const char *argv[] = {BIN "/trace_end", "exitbusy", "4", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "4 threads still querying at the end"), "%s", out);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "teardown\n");
  cr_assert_gt(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo'"), 0);
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
}

/* A thread that aborts once its calls fail there (a program that asserts
 * on every call): the abort came while the session's end was under way
 * on the exiting thread, which the signal's handler left alone, and the
 * process died before its writer stored that end: the session said
 * "running" until salvaged, then "killed or _exit: the process ended
 * without a word" (4 runs of 4 with a program of 2 such threads). Now
 * the end says the signal. A run whose thread aborted only after the end
 * (or never: the process was gone first) ends "teardown", and is run
 * again. */
Test(record, an_abort_while_the_session_ends_at_exit_is_its_end)
{
  const char *argv[] = {BIN "/trace_end", "exitabort", "1", NULL};
  bool seen = false;
  for (int run = 0; run < 10 && !seen; run++) {
    char *db = tu_temp_path(".db"), *out;
    const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
    int st = tu_run(argv, env, &out);
    char *ended = tu_db_lines(db, "SELECT ended || ' ' || coalesce(signal, '-') FROM sessions");
    if (strcmp(ended, "teardown -\n") == 0)
      continue;
    seen = true;
    cr_assert_eq(st, 128 + SIGABRT, "%s", out);
    cr_assert_str_eq(ended, "signal 6\n", "%s", out);
    cr_assert_gt(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo'"), 0);
    cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
  }
  cr_assert(seen, "no run's thread aborted before the session's end was stored");
}

/* Calls whose text the encoder threads print (info queries, strings:
 * PITRACE_PRINT_LATER=1; by default only with 4 or more processors) are
 * stored as the merge thread prints them at once: the same arguments
 * (handle ids, USM and mapped pointers found in the merged order),
 * payloads inline and in data rows, and handles. vadd and matmul store
 * their data; record_prog's info queries run with data none. */
Test(record, calls_printed_by_the_encoders_read_as_those_printed_at_once)
{
  static const char *const progs[][3] = {
      {"vadd", NULL, "all"}, {"matmul", NULL, "all"}, {"record_prog", "infojunk", "none"}};
  static const char *const queries[] = {
      "SELECT seq || ' ' || thread || ' ' || api || ' ' || coalesce(result, 'running') || ' ' "
      "|| args || ' ' || coalesce(data, '-') FROM calls ORDER BY seq",
      "SELECT id || ' ' || kind || ' ' || created_seq || ' ' || created_by || ' ' || "
      "coalesce(released_seq, '-') || ' ' || coalesce(released_by, '-') "
      "FROM handles ORDER BY id",
      "SELECT seq || ' ' || position || ' ' || role || ' ' || idx || ' ' || size || ' ' || "
      "stored || ' ' || coalesce(hex(hash), '-') FROM data ORDER BY seq, position, role, idx"};
  for (size_t p = 0; p < sizeof progs / sizeof *progs; p++) {
    char *prog = malloc(strlen(BIN) + strlen(progs[p][0]) + 2);
    sprintf(prog, "%s/%s", BIN, progs[p][0]);
    const char *argv[] = {prog, progs[p][1], NULL};
    char *db[2];
    for (int later = 0; later < 2; later++) {
      db[later] = tu_temp_path(".db");
      char *out;
      const char *env[] = {env_kv("SYCL_PI_RECORD", db[later]),
                           env_kv("SYCL_PI_RECORD_DATA", progs[p][2]),
                           later ? "PITRACE_PRINT_LATER=1" : "PITRACE_PRINT_LATER=0", POCL, NULL};
      cr_assert_eq(tu_run(argv, env, &out), 0, "%s: %s", prog, out);
    }
    cr_assert_gt(tu_db_int(db[0], "SELECT count(*) FROM calls"), 10, "%s", prog);
    for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
      char *now = tu_db_lines(db[0], queries[q]), *later = tu_db_lines(db[1], queries[q]);
      cr_assert_str_eq(later, now, "%s, %s", prog, queries[q]);
      free(now);
      free(later);
    }
    free(prog);
  }
}

/* A setting that is neither 0 nor 1: one line says so and what is done
 * instead, and the program is recorded as by default. */
Test(record, a_bad_print_later_setting_warns_and_records)
{
  const char *argv[] = {BIN "/vadd", NULL};
  char *db = tu_temp_path(".db"), *out;
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), "PITRACE_PRINT_LATER=yes", POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert_eq(tu_count(out, "PITRACE_PRINT_LATER=yes is not 0 or 1; "), 1, "%s", out);
  cr_assert_gt(tu_db_int(db, "SELECT count(*) FROM calls"), 10);
}

/* A clock that is neither monotonic nor default (a misspelling): one line
 * says so, and the program is recorded as by default. */
Test(record, a_bad_clock_setting_warns_and_records)
{
  const char *argv[] = {BIN "/vadd", NULL};
  char *db = tu_temp_path(".db"), *out;
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), "PITRACE_CLOCK=Monotonic", POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert_eq(tu_count(out, "PITRACE_CLOCK=Monotonic is not monotonic or default; "), 1, "%s",
               out);
  cr_assert_gt(tu_db_int(db, "SELECT count(*) FROM calls"), 10);
}

Test(record, link_decisions_and_spec_constants_are_stored)
{
  char *db = tu_temp_path(".db"), *out;
  const char *a1[] = {BIN "/shared_lib", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  cr_assert_eq(tu_run(a1, env, &out), 0, "%s", out);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_link_decisions WHERE kind = 'symbol' AND "
                          "symbol = 'poly2' AND image = 'libmathdev.so#0'"), 1);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_link_decisions WHERE kind = 'link' AND "
                          "before_api = 'piclProgramCreateWithSource'"), 1);
  const char *a2[] = {BIN "/spec_const", NULL};
  cr_assert_eq(tu_run(a2, env, &out), 0, "%s", out);
  char *sc = tu_db_lines(db, "SELECT kernel || ' ' || symbolic_id || ' ' || numeric_ids || ' ' "
                          "|| how || ' ' || size FROM pi_spec_constants");
  cr_assert_str_eq(sc, "convolution coeff_id [0,1,2,3,4,5,6,7,8] emulated 36\n");
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM sessions"), 2, "two runs, one file");
}

/* ---- Records that outlive the process --------------------------------------------------- */

/* Starts argv with the environment additions env (as tu_run), output to
 * /dev/null; returns its pid. */
static pid_t spawn(const char *const *argv, const char *const *env)
{
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    for (const char *const *e = env; e && *e; e++) {
      const char *eq = strchr(*e, '=');
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
      setenv(name, eq + 1, 1);
    }
    int fd = open("/dev/null", O_WRONLY);
    dup2(fd, 1);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  return pid;
}

/* A recorder with nothing new to store leaves its file alone while the
 * application sleeps: it used to commit the same checkpoint every 50 ms,
 * a file changing all the time for whatever watches it (and 20 commits a
 * second of a processor). A reader counts the database's changes every 20
 * ms for the whole run: the start, the runtime's discovery, the first
 * query and the end are a few; 2.5 s of sleep made some fifty more. */
Test(record, an_idle_recorder_leaves_its_file_alone)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "gap", "2500", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), "SYCL_PI_RECORD_DATA=none", POCL, NULL};
  pid_t pid = spawn(argv, env);
  sqlite3 *r = NULL;
  int changes = 0, status = 0;
  long long last = -1;
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (!r && access(db, F_OK) == 0 &&
        sqlite3_open_v2(db, &r, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
      sqlite3_close(r);
      r = NULL;
    }
    sqlite3_stmt *s = NULL;
    if (r && (sqlite3_busy_timeout(r, 2000), 1) &&
        sqlite3_prepare_v2(r, "PRAGMA data_version", -1, &s, NULL) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int64(s, 0) != last) {
      last = sqlite3_column_int64(s, 0);
      changes++;
    }
    sqlite3_finalize(s);
    if (done == pid)
      break;
    struct timespec nap = {0, 20000000};
    nanosleep(&nap, NULL);
  }
  sqlite3_close(r);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "record_prog gap: status %d", status);
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo' AND "
                           "result = 'PI_SUCCESS'"), 2);
  cr_assert(changes >= 2 && changes <= 20, "the file changed %d times in a run that slept 2.5 s",
            changes);
}

/* The entries of a directory, but those whose names begin with a dot. */
static int entries_in(const char *dir)
{
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    n += e->d_name[0] != '.';
  if (d)
    closedir(d);
  return n;
}

/* Files beside `db` whose names are db's followed by `infix`. */
static int files_beside(const char *db, const char *infix)
{
  char dir[512], prefix[512];
  snprintf(dir, sizeof dir, "%s", db);
  char *slash = strrchr(dir, '/');
  snprintf(prefix, sizeof prefix, "%s%s", slash + 1, infix);
  *slash = 0;
  int count = 0;
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));)
    count += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
  if (d)
    closedir(d);
  return count;
}

/* Ring files left beside `db`; with `what`, each one's name, size and
 * state word (ringfile_hdr: magic (8), version (4), state) too; with
 * `last`, the path of the last one found. */
static int ring_files_at(const char *db, char *what, size_t n, char *last, size_t lastn)
{
  char dir[512], prefix[512];
  snprintf(dir, sizeof dir, "%s", db);
  char *slash = strrchr(dir, '/');
  snprintf(prefix, sizeof prefix, "%s-rings.", slash + 1);
  *slash = 0;
  int count = 0;
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
      continue;
    count++;
    char f[1100];
    snprintf(f, sizeof f, "%s/%s", dir, e->d_name);
    if (last)
      snprintf(last, lastn, "%s", f);
    if (!what)
      continue;
    struct stat sb;
    uint32_t state = UINT32_MAX;
    FILE *fp = fopen(f, "rb");
    if (fp) {
      if (fseek(fp, 12, SEEK_SET) != 0 || fread(&state, 4, 1, fp) != 1)
        state = UINT32_MAX;
      fclose(fp);
    }
    size_t used = strlen(what);
    snprintf(what + used, n - used, " %s (%lld bytes, state %u)", e->d_name,
             stat(f, &sb) == 0 ? (long long)sb.st_size : -1LL, state);
  }
  if (d)
    closedir(d);
  return count;
}

static int ring_files_said(const char *db, char *what, size_t n)
{
  return ring_files_at(db, what, n, NULL, 0);
}

static int ring_files(const char *db) { return ring_files_at(db, NULL, 0, NULL, 0); }

/* Pages of a file in the page cache (mincore over a mapping that
 * touches none of them). */
static size_t resident_pages(const char *path, size_t *total)
{
  int fd = open(path, O_RDONLY);
  cr_assert_geq(fd, 0, "%s", path);
  struct stat st;
  cr_assert_eq(fstat(fd, &st), 0);
  size_t page = (size_t)sysconf(_SC_PAGESIZE), n = ((size_t)st.st_size + page - 1) / page;
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  cr_assert_neq(m, MAP_FAILED);
  unsigned char *vec = malloc(n);
  cr_assert_eq(mincore(m, (size_t)st.st_size, vec), 0);
  size_t in = 0;
  for (size_t i = 0; i < n; i++)
    in += vec[i] & 1;
  free(vec);
  munmap(m, (size_t)st.st_size);
  close(fd);
  *total = n;
  return in;
}

/* A thread's first record does not bring its whole ring into memory: a
 * fault in a file mapping reads the pages around it in, as far as the
 * disk's read-ahead (8 MiB here), so the first write into a 4 MiB ring
 * slot allocated and zeroed all of it on the application's thread (about
 * 3 ms of every recorded process, bench_fixed); the rings read no pages
 * around a fault now, and the writer faults in a few ahead of what a
 * ring has been written. A process that made 20 queries and _exit'ed
 * leaves its ring file: its pages in memory are counted (13 of 2058 here,
 * 1033 with read-around; on a disk whose read-ahead is the usual 128 KiB
 * the two would not differ enough to tell). */
Test(record, a_short_program_brings_only_the_ring_pages_it_writes_into_memory)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "quickexit", "20", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), "SYCL_PI_RECORD_DATA=none", POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 3, "%s", out);
  char ring[4096];
  cr_assert_eq(ring_files_at(db, NULL, 0, ring, sizeof ring), 1);
  size_t total, in = resident_pages(ring, &total);
  cr_assert(total >= 1024, "%s: %zu pages, expected a header and two 4 MiB slots", ring, total);
  cr_assert(in <= 64, "%zu of the ring file's %zu pages are in memory after 20 calls", in, total);
}

/* Opens the session with a pitrace verb, which salvages what a process
 * that is gone left in its ring file; what it said (malloc'd). */
static char *salvage_with_pitrace(const char *db)
{
  const char *argv[] = {BIN "/pitrace", "sessions", db, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, NULL, &out), 0, "%s", out);
  cr_assert_eq(tu_count(out, "cannot salvage"), 0, "%s", out);
  return out;
}

/* A session whose ring file could not be salvaged (a full disk) says so,
 * where it said "not known (killed?)", and is salvaged whole by the next
 * reader once there is room. */
Test(record, a_ring_file_that_could_not_be_salvaged_is_named_and_salvaged_later)
{
  char dir[32], db[64], fill[64];
  tu_small_tmpfs(dir, "16m");
  snprintf(db, sizeof db, "%s/s.db", dir);
  snprintf(fill, sizeof fill, "%s/fill", dir);
  const char *prog[] = {BIN "/record_prog", "quickexit", "300", NULL};
  run_recorded(prog, db, 3);
  cr_assert_eq(ring_files(db), 1);
  FILE *f = fopen(fill, "w");
  static char block[1 << 16];
  while (f && fwrite(block, 1, sizeof block, f) == sizeof block)
    ;
  if (f)
    fclose(f);
  const char *argv[] = {BIN "/pitrace", "sessions", db, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "cannot salvage ") && strstr(out, "disk is full"), "%s", out);
  cr_assert(strstr(out, "killed, not salvaged: its last calls wait in its ring file"), "%s", out);
  cr_assert_eq(ring_files(db), 1);
  unlink(fill);
  out = salvage_with_pitrace(db);
  cr_assert(strstr(out, "killed or _exit: "), "%s", out);
  cr_assert_eq(ring_files(db), 0);
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_args WHERE name = 'param_name' AND "
                              "value = 'PI_DEVICE_INFO_MAX_COMPUTE_UNITS'"), 300);
  tu_small_tmpfs_gone(dir);
}

/* A session on a file system mounted read-only, its process ended before
 * storing its last calls and its database left mid-write: the salvage
 * said only "Read-only file system" and the reader that the user could
 * not write the file, sending them to another user. Both now name the
 * read-only file system, and a later reader with it writable again takes
 * every call. */
Test(record, a_session_on_a_read_only_file_system_says_so)
{
  char dir[32], db[64];
  tu_small_tmpfs(dir, "16m");
  snprintf(db, sizeof db, "%s/s.db", dir);
  const char *prog[] = {BIN "/record_prog", "quickexit", "300", NULL};
  run_recorded(prog, db, 3);
  cr_assert_eq(ring_files(db), 1);
  /* A writer that dies mid-transaction with pages of it already in the
   * database (a cache of one page spills them): its journal must be undone
   * by the next connection. */
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    sqlite3 *h;
    if (sqlite3_open(db, &h) != SQLITE_OK ||
        sqlite3_exec(h, "PRAGMA cache_size = 1; BEGIN; UPDATE sessions SET label = "
                        "hex(randomblob(8000)); UPDATE call_chunks SET ncalls = ncalls;",
                     NULL, NULL, NULL) != SQLITE_OK)
      _exit(2);
    _exit(0);
  }
  int st;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  cr_assert_eq(mount(NULL, dir, NULL, MS_REMOUNT | MS_RDONLY, NULL), 0, "%s", strerror(errno));
  const char *show[] = {BIN "/pitrace", "show", db, NULL};
  char *out;
  int rc = tu_run(show, NULL, &out);
  cr_assert_eq(mount(NULL, dir, NULL, MS_REMOUNT, NULL), 0, "%s", strerror(errno));
  cr_assert_eq(rc, 2, "%s", out);
  cr_assert(strstr(out, "-rings.") && strstr(out, "holds calls of a process that ended before "
                                                  "storing them, which cannot be stored into ") &&
            strstr(out, "(Read-only file system): mount it writable"), "%s", out);
  cr_assert(strstr(out, "was left mid-write by a process that was killed, and the file system it "
                        "is on is read-only"), "%s", out);
  cr_assert_null(strstr(out, "this user cannot write it"), "%s", out);
  salvage_with_pitrace(db);
  cr_assert_eq(ring_files(db), 0);
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_args WHERE name = 'param_name' AND "
                              "value = 'PI_DEVICE_INFO_MAX_COMPUTE_UNITS'"), 300);
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
  tu_small_tmpfs_gone(dir);
}

/* A ring file left after a salvage: its size, its state word and whether
 * a second salvage takes it (one failure in a fresh-machine run, not
 * reproduced in 64 runs here: this says more next time). */
static void assert_no_ring_left(const char *db, const char *said, unsigned seed, int kill_no)
{
  char what[1024] = "";
  int left = ring_files_said(db, what, sizeof what);
  if (!left)
    return;
  char *again = salvage_with_pitrace(db);
  cr_assert_fail("seed %u, kill %d: %d ring file(s) left after the salvage:%s; pitrace said "
                 "'%s'; a second salvage left %d, saying '%s'", seed, kill_no, left, what, said,
                 ring_files(db), again);
}

/* An info query whose caller does not ask how many bytes the answer took
 * (clinfo passes a 3200-byte buffer and no size pointer): the session
 * holds the answer, not the rest of the caller's buffer (old heap contents
 * went into sessions, which get uploaded as CI artifacts). */
Test(record, an_info_answer_is_stored_without_the_rest_of_the_buffer)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "infojunk", NULL};
  char *out = run_recorded(argv, db, 0);
  const char *size = strstr(out, " bytes)");
  cr_assert(size, "%s", out);
  while (size > out && size[-1] >= '0' && size[-1] <= '9')
    size--;
  long long answer = atoll(size);
  cr_assert_gt(answer, 1, "%s", out);
  const char *name = "SELECT d.size FROM data d JOIN pi_args a ON a.seq = d.seq AND "
                     "a.position = d.position JOIN pi_calls c ON c.seq = d.seq WHERE "
                     "c.api = 'piDeviceGetInfo' AND a.name = 'param_value' AND d.seq = "
                     "(SELECT max(seq) FROM pi_calls WHERE api = 'piDeviceGetInfo')";
  cr_assert_eq(tu_db_int(db, name), answer, "the name query's answer is %lld bytes", answer);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM data WHERE instr(hex, '5A5A5A5A') > 0"), 0);
  /* The recorded argument stays the caller's: no size pointer. */
  char *ret = tu_db_lines(db, "SELECT value FROM pi_args WHERE name = 'param_value_size_ret' AND "
                           "seq = (SELECT max(seq) FROM pi_calls WHERE api = 'piDeviceGetInfo')");
  cr_assert_str_eq(ret, "NULL\n");
}

Test(record, exit_right_after_n_calls_keeps_all_of_them)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "quickexit", "1000", NULL};
  int traced = run_traced(argv, db, 3, "made 1000 calls");
  /* Nothing was committed after the last calls: they are in the ring file. */
  cr_assert_eq(ring_files(db), 1);
  salvage_with_pitrace(db);
  cr_assert_eq(ring_files(db), 0, "the ring file was not removed after salvage");
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM calls"), traced);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE result IS NULL"), 0);
  cr_assert_eq(tu_db_int(db, "SELECT max(seq) FROM calls"), traced);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "killed\n");
  char *reason = tu_db_lines(db, "SELECT incomplete_reason FROM sessions");
  cr_assert(strstr(reason, " calls salvaged from its rings"), "%s", reason);
  cr_assert_eq(tu_db_int(db, "SELECT calls FROM sessions"), traced);
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
  /* The next salvage finds nothing to do and changes nothing. */
  salvage_with_pitrace(db);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM calls"), traced);
}

/* SYCL_PI_RECORD ending in '/' names a directory, made when missing
 * (pitrace record passes its -o so: another run's end may remove the
 * default directory, left empty, before this run's process records, and
 * the session went into a file by the directory's name, which every later
 * pitrace record there refused), with its missing parents as pitrace
 * record -o makes them (only the last was made: "its directory cannot be
 * made"). A file there is not taken for one. */
Test(record, a_path_ending_in_a_slash_is_a_directory_made_when_missing)
{
  char *top = tu_temp_path(".d"), dir[512], slash[600];
  snprintf(dir, sizeof dir, "%s/runs//nightly", top);
  snprintf(slash, sizeof slash, "%s/", dir);
  const char *prog[] = {BIN "/record_prog", "threads", "1", "5", NULL};
  run_recorded(prog, slash, 0);
  struct stat st;
  cr_assert(stat(dir, &st) == 0 && S_ISDIR(st.st_mode), "%s is no directory", dir);
  char file[1100] = "";
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));)
    if (strncmp(e->d_name, "pitrace-", 8) == 0)
      snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
  closedir(d);
  cr_assert(file[0], "no session file in %s", dir);
  cr_assert_str_eq(tu_db_lines(file, QUERIES_BY_SESSION), "1 5\n");
  char *plain = tu_temp_path(".db"), *out;
  FILE *f = fopen(plain, "w");
  fclose(f);
  snprintf(slash, sizeof slash, "%s/", plain);
  const char *env[] = {env_kv("SYCL_PI_RECORD", slash), POCL, NULL};
  cr_assert_eq(tu_run(prog, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "pitrace: cannot record to ") && strstr(out, "Not a directory"), "%s", out);
}

/* A verb reading a record directory lists its ring files once for all
 * its sessions (not once a session: 500 sessions read the directory 500
 * times, a fifth of `diff`'s time), and still salvages the one a process
 * left into its own database, wherever that sorts among the others. */
Test(record, a_verb_reading_a_directory_salvages_the_ring_file_left_in_it)
{
  char *dir = tu_temp_path("");
  cr_assert_eq(mkdir(dir, 0700), 0);
  char db[4][1100];
  const char *names[] = {"a.db", "b.db", "c.db", "d.db"};
  const char *full[] = {BIN "/record_prog", "threads", "1", "10", NULL};
  const char *quick[] = {BIN "/record_prog", "quickexit", "40", NULL};
  for (int i = 0; i < 4; i++) {
    snprintf(db[i], sizeof db[i], "%s/%s", dir, names[i]);
    if (i == 2)
      cr_assert_geq(run_traced(quick, db[i], 3, "made 40 calls"), 40);
    else
      run_recorded(full, db[i], 0);
  }
  cr_assert_eq(ring_files(db[2]), 1);
  const char *argv[] = {BIN "/pitrace", "stats", dir, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, NULL, &out), 0, "%s", out);
  cr_assert_eq(tu_count(out, "cannot salvage"), 0, "%s", out);
  cr_assert_eq(ring_files(db[2]), 0, "the ring file in the directory was not salvaged: %s", out);
  cr_assert_str_eq(tu_db_lines(db[2], "SELECT ended FROM sessions"), "killed\n");
  cr_assert_geq(tu_db_int(db[2], "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo'"),
                40);
  for (int i = 0; i < 4; i++)
    if (i != 2)
      cr_assert_str_eq(tu_db_lines(db[i], "SELECT count(*) FROM sessions"), "1\n", "%s",
                       names[i]);
  cr_assert(strstr(out, "c.db"), "%s", out);
}

/* Every thread's ring is a slot of the ring file (the first ones made
 * ahead by the writer): _exit right after four threads' calls keeps them
 * all, each thread's as its own. */
Test(record, exit_after_four_threads_keeps_every_threads_calls)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "threadsexit", "4", "300", NULL};
  int traced = run_traced(argv, db, 3, "made 1200 calls");
  salvage_with_pitrace(db);
  cr_assert_eq(ring_files(db), 0, "the ring file was not removed after salvage");
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM calls"), traced);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM (SELECT thread FROM calls GROUP BY thread "
                          "HAVING count(*) >= 300)"), 4);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE result IS NULL"), 0);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "killed\n");
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
}

/* A ring file cut short (a copy, a full disk): the rings past its end
 * are gone, and the session says so rather than only "N calls salvaged". */
Test(record, a_ring_file_cut_short_is_salvaged_and_says_so)
{
  char *db = tu_temp_path(".db"), path[4200];
  const char *argv[] = {BIN "/record_prog", "threadsexit", "4", "300", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 3, "%s", out);
  cr_assert_eq(ring_files_at(db, NULL, 0, path, sizeof path), 1);
  struct stat st;
  cr_assert_eq(stat(path, &st), 0);
  cr_assert_eq(truncate(path, RINGFILE_HEADER + (st.st_size - RINGFILE_HEADER) / 3), 0);
  salvage_with_pitrace(db);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "killed\n");
  char *why = tu_db_lines(db, "SELECT incomplete_reason FROM sessions");
  cr_assert(strstr(why, "past the end of its ring file, which was cut short"), "%s", why);
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
}

Test(record, the_next_recording_process_salvages_the_last_one)
{
  char *db = tu_temp_path(".db");
  const char *quick[] = {BIN "/record_prog", "quickexit", "300", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(quick, env, &out), 3, "%s", out);
  cr_assert_eq(ring_files(db), 1);
  const char *vadd[] = {BIN "/vadd", NULL};
  cr_assert_eq(tu_run(vadd, env, &out), 0, "%s", out);
  cr_assert_eq(ring_files(db), 0);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions ORDER BY id"), "killed\nteardown\n");
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE session = 1 AND api = "
                           "'piDeviceGetInfo' AND result = 'PI_SUCCESS'"), 300);
}

/* A reader that opens a killed process's session while another reader
 * salvages it (pitrace show and pitrace report of it at once, or a verb
 * while pitrace record stores what its command left) took the ring
 * file's lock, held by that salvager, for its recorder's, and went on
 * with the session as its last commit left it: a replay matched 1350
 * calls of 11,700 and exited 0, the next call "never returned". Now it
 * waits for that salvage. Here a child of the test holds the lock for
 * 300 ms, as a salvager would. */
Test(record, a_reader_waits_for_another_readers_salvage_of_the_session)
{
  char *db = tu_temp_path(".db"), *out;
  const char *quick[] = {BIN "/record_prog", "quickexit", "300", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  cr_assert_eq(tu_run(quick, env, &out), 3, "%s", out);
  char ring[1100];
  cr_assert_eq(ring_files_at(db, NULL, 0, ring, sizeof ring), 1);
  int ready[2];
  cr_assert_eq(pipe(ready), 0);
  pid_t holder = fork();
  if (holder == 0) {
    int fd = open(ring, O_RDWR | O_CLOEXEC);
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fd < 0 || fcntl(fd, F_SETLK, &lk) != 0 || write(ready[1], "x", 1) != 1)
      _exit(1);
    struct timespec hold = {0, 300000000};
    nanosleep(&hold, NULL);
    _exit(0);
  }
  char x;
  cr_assert_eq(read(ready[0], &x, 1), 1);
  const char *sql[] = {BIN "/pitrace", "sql", db,
                       "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo' AND "
                       "result = 'PI_SUCCESS'", NULL};
  cr_assert_eq(tu_run(sql, NULL, &out), 0, "%s", out);
  cr_assert_geq(atoi(out), 300, "%s", out);
  int st;
  cr_assert_eq(waitpid(holder, &st, 0), holder);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  cr_assert_eq(ring_files(db), 0);
}

/* A ring file read whole (its image, *len bytes), for a test to change
 * and write back with ring_image_put. */
static unsigned char *ring_image(const char *db, char *path, size_t pathn, size_t *len,
                                 ringfile_hdr *h)
{
  cr_assert_eq(ring_files_at(db, NULL, 0, path, pathn), 1);
  unsigned char *img = (unsigned char *)tu_read_file_n(path, len);
  cr_assert(img && *len >= RINGFILE_HEADER, "%s", path);
  memcpy(h, img, sizeof *h);
  return img;
}

/* Runs argv (which ends with _exit(3)) recorded into a new database
 * (*db), and reads the ring file it left, as ring_image. */
static unsigned char *left_ring(const char *const *argv, char **db, char *path, size_t pathn,
                                size_t *len, ringfile_hdr *h)
{
  *db = tu_temp_path(".db");
  run_recorded(argv, *db, 3);
  return ring_image(*db, path, pathn, len, h);
}

static void ring_image_put(const char *path, const unsigned char *img, size_t len)
{
  FILE *f = fopen(path, "r+b");
  cr_assert(f && fwrite(img, 1, len, f) == len && fclose(f) == 0, "%s", path);
}

/* The records of a slot of a ring file's image, in order (at most max). */
typedef struct ring_rec {
  unsigned char *p; /* the record in the image */
  uint8_t type;     /* REC_ENTRY, REC_EXIT, ... */
} ring_rec;

static unsigned ring_records(unsigned char *img, uint64_t slot, ring_rec *out, unsigned max)
{
  ringfile_hdr h;
  memcpy(&h, img, sizeof h);
  unsigned char *base = img + RINGFILE_HEADER + slot * h.slot_size;
  size_t head;
  memcpy(&head, base + offsetof(shim_ring, head), sizeof head);
  unsigned n = 0;
  for (uint64_t off = 0; off < head && n < max;) {
    rec_hdr r;
    memcpy(&r, base + RINGFILE_CTL + off, sizeof r);
    cr_assert(r.size >= sizeof r && r.size % 8 == 0, "record at %llu: size %u",
              (unsigned long long)off, r.size);
    out[n++] = (ring_rec){base + RINGFILE_CTL + off, r.type};
    off += r.size;
  }
  return n;
}

/* A ring file of a newer version than this pitrace reads is left where it
 * is, with one line saying so (an older pitrace that took it for one done
 * already removed it, and the calls in it with it); read as its own
 * version again, it is salvaged whole. */
Test(record, a_newer_ring_file_is_left_for_a_newer_pitrace)
{
  const char *argv[] = {BIN "/record_prog", "quickexit", "50", NULL};
  char *db, path[4096];
  size_t len;
  ringfile_hdr h;
  unsigned char *img = left_ring(argv, &db, path, sizeof path, &len, &h);
  uint32_t version = h.version;
  h.version = 9;
  memcpy(img, &h, sizeof h);
  ring_image_put(path, img, len);
  const char *sessions[] = {BIN "/pitrace", "sessions", db, NULL};
  char *out;
  tu_run(sessions, NULL, &out);
  cr_assert(strstr(out, "a ring file of version 9, newer than this pitrace reads"), "%s", out);
  cr_assert_eq(ring_files(db), 1, "%s", out);
  h.version = version;
  memcpy(img, &h, sizeof h);
  ring_image_put(path, img, len);
  salvage_with_pitrace(db);
  cr_assert_eq(ring_files(db), 0);
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo' AND "
                           "result = 'PI_SUCCESS'"), 50);
}

/* A ring file without a header is one whose process died making it, or
 * one being made now, between mkostemp and its process's lock: a
 * salvager that locked it then and removed it made the maker's lock fail
 * and left it recording without a ring file (four processes starting
 * into one path at once: record::four_processes_into_one_path_are_all_kept
 * failed so once). Such a file stays while the process its name gives
 * lives, and goes with the next salvage once it is gone. */
Test(record, a_ring_file_being_made_is_left_to_its_process)
{
  char *db = tu_temp_path(".db");
  pid_t dead = fork();
  if (dead == 0)
    _exit(0);
  cr_assert_gt(dead, 0);
  waitpid(dead, NULL, 0);
  char gone[4200], live[4200];
  snprintf(gone, sizeof gone, "%s-rings.%d.AbCdEf", db, (int)dead);
  snprintf(live, sizeof live, "%s-rings.%d.GhIjKl", db, (int)getpid());
  for (int i = 0; i < 2; i++) {
    FILE *f = fopen(i ? live : gone, "w");
    cr_assert(f, "%s", strerror(errno));
    fclose(f);
  }
  const char *argv[] = {BIN "/record_prog", "quickexit", "5", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 3, "%s", out);
  salvage_with_pitrace(db); /* the recording process's own ring file */
  struct stat st;
  cr_assert_neq(stat(gone, &st), 0, "an empty ring file of a process that is gone stayed");
  cr_assert_eq(stat(live, &st), 0, "an empty ring file of a live process was removed");
  unlink(live);
  cr_assert_eq(ring_files(db), 0);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM sessions"), 1);
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo' AND "
                           "result = 'PI_SUCCESS'"), 5);
}

/* Found by fuzz/fuzz_salvage: a ring file whose call times are damaged
 * made the session's duration anything, and its end time (start + that
 * duration) overflowed. The calls were made between the session's start
 * and the salvage: the end stays within them. */
Test(record, salvage_of_damaged_call_times_ends_the_session_by_now)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "quickexit", "5", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, env, &out), 3, "%s", out);
  /* Every exit record's return time 8e18 ns after the clock origin. */
  char ring[1100];
  size_t len;
  ringfile_hdr h;
  unsigned char *img = ring_image(db, ring, sizeof ring, &len, &h);
  static ring_rec v[4096];
  unsigned n = ring_records(img, 0, v, 4096), patched = 0;
  for (unsigned i = 0; i < n; i++)
    if (v[i].type == REC_EXIT) {
      uint64_t t1 = h.session_t0 + 8000000000000000000ull;
      memcpy(v[i].p + offsetof(rec_exit, t1), &t1, sizeof t1);
      patched++;
    }
  ring_image_put(ring, img, len);
  cr_assert_geq(patched, 5);
  salvage_with_pitrace(db);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT end_unix_ns >= start_unix_ns AND end_unix_ns <= %lld AND "
           "duration_ns = end_unix_ns - start_unix_ns FROM sessions",
           (long long)now.tv_sec * 1000000000 + now.tv_nsec);
  cr_assert_eq(tu_db_int(db, sql), 1, "%s", tu_db_lines(db, "SELECT start_unix_ns, end_unix_ns, "
                                                     "duration_ns FROM sessions"));
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "killed\n");
}

/* The race behind the rare failures of
 * record::an_object_made_by_one_thread_and_used_by_another_keeps_its_order,
 * made certain: thread R's
 * release of buffer P returns after thread M made a new buffer at the same
 * address (the allocator reused P inside the release). record_prog reuse
 * makes the calls in their natural order and leaves its rings; the test
 * moves the release's return (its exit record's ticket) to right after the
 * second buffer's creation, and the salvage must still give each buffer
 * its own handle, released by its own release. */
Test(record, a_release_that_returns_after_its_address_is_reused_releases_its_own_object)
{
  const char *argv[] = {BIN "/record_prog", "reuse", NULL};
  char *db, ring[1100];
  size_t len;
  ringfile_hdr h;
  unsigned char *img = left_ring(argv, &db, ring, sizeof ring, &len, &h);
  uint32_t nslots = h.nslots;
  /* M's ring: make, make, release; R's: release. Their records: [thread,
   * entry, exit, ...]. */
  ring_rec m[16] = {{0}}, r[16] = {{0}}, v[16];
  unsigned nm = 0, nr = 0;
  for (uint32_t i = 0; i < nslots; i++) {
    unsigned n = ring_records(img, i, v, 16);
    if (n == 7 && v[0].type == REC_THREAD) {
      memcpy(m, v, sizeof v);
      nm = n;
    } else if (n == 3 && v[0].type == REC_THREAD) {
      memcpy(r, v, sizeof v);
      nr = n;
    }
  }
  cr_assert(nm == 7 && nr == 3, "no maker's or releaser's ring among %u slots", nslots);
  uint64_t p1, p2; /* the released buffers: argv[0] of each release's entry */
  memcpy(&p1, r[1].p + offsetof(rec_entry, argv), 8);
  memcpy(&p2, m[5].p + offsetof(rec_entry, argv), 8);
  if (p2 != p1) { /* the allocator gave another address: make it the same */
    rec_hdr x;
    memcpy(&x, m[4].p, sizeof x);
    int found = 0;
    for (uint32_t o = sizeof(rec_exit); o + 8 <= x.size; o += 8) /* the second make's out-value */
      if (memcmp(m[4].p + o, &p2, 8) == 0) {
        memcpy(m[4].p + o, &p1, 8);
        found++;
      }
    cr_assert_eq(found, 1);
    memcpy(m[5].p + offsetof(rec_entry, argv), &p1, 8);
  }
  uint64_t made2, release2, moved;
  memcpy(&made2, m[4].p + offsetof(rec_hdr, ticket), 8);
  memcpy(&release2, m[5].p + offsetof(rec_hdr, ticket), 8);
  moved = made2 + 1;
  cr_assert_lt(moved, release2);
  memcpy(r[2].p + offsetof(rec_hdr, ticket), &moved, 8);
  ring_image_put(ring, img, len);
  salvage_with_pitrace(db);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_handles WHERE kind = 'mem'"), 2,
               "%s", tu_db_lines(db, "SELECT handle || ' ' || origin || ' ' || created_seq || "
                                  "' ' || coalesce(released_seq, '-') FROM pi_handles WHERE "
                                  "kind = 'mem'"));
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_handles WHERE kind = 'mem' AND "
                          "origin = 'created' AND released_by = 'piMemRelease' AND "
                          "released_seq > created_seq"), 2);
  /* Each released at its own release's call (the earlier release first). */
  cr_assert_str_eq(tu_db_lines(db, "SELECT h.released_seq = c.seq FROM pi_handles h JOIN "
                                "(SELECT seq, row_number() OVER (ORDER BY seq) AS k FROM "
                                "pi_calls WHERE api = 'piMemRelease') c ON c.k = (SELECT "
                                "count(*) FROM pi_handles g WHERE g.kind = 'mem' AND g.id <= "
                                "h.id) WHERE h.kind = 'mem' ORDER BY h.id"),
                   "1\n1\n");
}

/* How many calls `record_prog count FILE` saw return (0: none yet). */
static long long count_of(const char *file)
{
  uint64_t v = 0;
  FILE *f = fopen(file, "rb");
  if (f) {
    if (fread(&v, 8, 1, f) != 1)
      v = 0;
    fclose(f);
  }
  return (long long)v;
}

Test(record, sigkill_at_random_points_keeps_every_call_that_returned)
{
  unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
  srand(seed);
  int kills = 20, during_calls = 0;
  /* The partial test plugin: a device that starts at once, so that the
   * kills land among the calls rather than in an implementation's start. */
  char *cfg = tu_write_temp(".conf", PITRACE_LIB_DIR "/libpi_test_partial.so\n");
  for (int i = 0; i < kills; i++) {
    char *db = tu_temp_path(".db"), *count = tu_temp_path(".count");
    const char *argv[] = {BIN "/record_prog", "count", count, NULL};
    const char *env[] = {env_kv("SYCL_PI_RECORD", db), env_kv("SYCL_PI_CONFIG", cfg), NULL};
    pid_t pid = spawn(argv, env);
    /* Every other kill anywhere from the recorder's start on; the others
     * once the calls run, at a random point among them. */
    if (i % 2) {
      for (int waited = 0; waited < 5000 && count_of(count) == 0; waited++) {
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
      }
    }
    struct timespec t = {0, (rand() % (i % 2 ? 40 : 120)) * 1000000L};
    nanosleep(&t, NULL);
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "seed %u: status 0x%x", seed, st);
    long long returned = count_of(count);
    struct stat sb;
    if (stat(db, &sb) != 0 || sb.st_size == 0 ||
        tu_db_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'sessions'") == 0) {
      /* Killed before its session was committed: a ring file made just
       * before that holds nothing, and the next reader removes it (and
       * says the database holds no session). */
      const char *argv2[] = {BIN "/pitrace", "sessions", db, NULL};
      char *out;
      tu_run(argv2, NULL, &out);
      cr_assert_eq(tu_count(out, "cannot salvage"), 0, "seed %u: %s", seed, out);
      cr_assert_eq(ring_files(db), 0, "seed %u", seed);
      continue; /* killed before recording began */
    }
    assert_no_ring_left(db, salvage_with_pitrace(db), seed, i);
    cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n", "seed %u", seed);
    if (tu_db_int(db, "SELECT count(*) FROM sessions") == 0)
      continue; /* killed before its session was stored */
    during_calls += returned > 0;
    long long stored = tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo' "
                                  "AND result = 'PI_SUCCESS'");
    cr_assert_geq(stored, returned, "seed %u, kill %d: %lld calls returned, %lld stored", seed,
                  i, returned, stored);
    /* Nothing lost or stored twice: seq runs 1..n without a gap; at most
     * the one call in flight never returned. */
    cr_assert_eq(tu_db_int(db, "SELECT count(DISTINCT seq) FROM calls"),
                 tu_db_int(db, "SELECT count(*) FROM calls"), "seed %u", seed);
    cr_assert_eq(tu_db_int(db, "SELECT coalesce(max(seq), 0) FROM calls"),
                 tu_db_int(db, "SELECT count(*) FROM calls"), "seed %u", seed);
    cr_assert_leq(tu_db_int(db, "SELECT count(*) FROM calls WHERE result IS NULL"), 1, "seed %u",
                  seed);
    char *ended = tu_db_lines(db, "SELECT ended FROM sessions");
    cr_assert_str_eq(ended, "killed\n", "seed %u, kill %d: %s", seed, i, ended);
  }
  cr_assert_geq(during_calls, kills / 2, "seed %u: too few kills landed during the calls",
                seed);
}

Test(record, four_processes_into_one_path_are_all_kept)
{
  for (int round = 0; round < 2; round++) {
    char *db = tu_temp_path(".db");
    char *outs[4];
    pid_t pids[4];
    const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
    for (int i = 0; i < 4; i++) {
      outs[i] = tu_temp_path(".out");
      const char *argv[] = {BIN "/vadd", NULL};
      pid_t pid = fork();
      cr_assert_geq(pid, 0);
      if (pid == 0) {
        setenv("SYCL_PI_RECORD", db, 1);
        setenv("OCL_ICD_VENDORS", "/etc/OpenCL/vendors/pocl.icd", 1);
        int fd = open(outs[i], O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
      }
      pids[i] = pid;
    }
    (void)env;
    for (int i = 0; i < 4; i++) {
      int st;
      waitpid(pids[i], &st, 0);
      char *out = tu_read_file(outs[i]);
      cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", out);
      cr_assert(strstr(out, "result verified"), "%s", out);
      cr_assert_eq(tu_count(out, "pitrace:"), 0, "process %d: %s", i, out);
    }
    cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"),
                     "teardown\nteardown\nteardown\nteardown\n");
    /* The same program: every session holds as many calls as the first. */
    long long calls = tu_db_int(db, "SELECT calls FROM sessions WHERE id = 1");
    cr_assert_gt(calls, 10);
    cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM sessions WHERE calls = (SELECT calls FROM "
                            "sessions WHERE id = 1)"), 4);
    cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM calls"), 4 * calls);
    cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
  }
}

/* Starts argv recording into db (labelled, unless NULL) on PoCL, its
 * output into log, prepared by prep(arg) when prep is not NULL; its pid. */
static pid_t spawn_prepared(const char *const *argv, const char *db, const char *label,
                            const char *log, child_prep prep, const void *arg)
{
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    setenv("SYCL_PI_RECORD", db, 1);
    if (label)
      setenv("SYCL_PI_RECORD_LABEL", label, 1);
    setenv("OCL_ICD_VENDORS", "/etc/OpenCL/vendors/pocl.icd", 1);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    if (prep)
      prep(arg);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  return pid;
}

/* Starts argv recorded into db on PoCL (with a label, when not NULL), its
 * output into the file log; returns at once, the child's pid. */
static pid_t spawn_recording(const char *const *argv, const char *db, const char *label,
                             const char *log)
{
  return spawn_prepared(argv, db, label, log, NULL, NULL);
}

/* spawn_prepared's, then its exit status (waited for). */
static int run_prepared(const char *const *argv, const char *db, const char *log, child_prep prep,
                        const void *arg)
{
  int st;
  waitpid(spawn_prepared(argv, db, NULL, log, prep, arg), &st, 0);
  return st;
}

/* A process that ends in order while another holds the file's write lock
 * (a recorder stopped at a debugger's breakpoint; here a connection in
 * BEGIN IMMEDIATE): its end waits 10 s for its writer, says so in one
 * line, and leaves its last calls in the ring file; the salvager says it
 * ended at teardown. It was labelled "killed or _exit: the process ended
 * without a word", which pitrace record counts as a failure. */
Test(record, an_end_in_order_that_cannot_store_in_time_is_salvaged_as_teardown)
{
  char *db = tu_temp_path(".db"), *out;
  const char *first[] = {BIN "/record_prog", "threads", "1", "3", NULL};
  run_recorded(first, db, 0);
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK, "%s",
               sqlite3_errmsg(h));
  const char *prog[] = {BIN "/record_prog", "threads", "1", "5", NULL};
  out = run_recorded(prog, db, 0);
  cr_assert_eq(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  cr_assert_eq(tu_count(out, "the session's end waited 10 s for the file, held by another "
                             "process"), 1, "%s", out);
  char *said;
  const char *ls[] = {BIN "/pitrace", "sessions", db, NULL};
  cr_assert_eq(tu_run(ls, NULL, &said), 0, "%s", said);
  cr_assert(strstr(said, " teardown; its writer could not store its last calls in time (the "
                         "file was held by another process); "), "%s", said);
  cr_assert_str_eq(tu_db_lines(db, QUERIES_BY_SESSION), "1 3\n2 5\n");
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
}

/* A reader that holds the file open in a read transaction (`pitrace show`
 * of a session still being recorded, a sqlite3 shell in BEGIN) holds off
 * the recorder's commits (the journal is a rollback journal: writer_db.c says
 * why): the recorder waits, its application goes on until its rings are
 * full and then waits too; when the reader lets go, every call is stored,
 * nobody gave up, and the file is one file again at the end. */
Test(record, a_reader_holding_the_file_delays_the_recorder_and_loses_nothing)
{
  char *db = tu_temp_path(".db");
  const char *first[] = {BIN "/record_prog", "threads", "1", "10", NULL};
  run_recorded(first, db, 0);
  sqlite3 *r;
  cr_assert_eq(sqlite3_open_v2(db, &r, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(r, "BEGIN; SELECT count(*) FROM sessions;", NULL, NULL, NULL),
               SQLITE_OK, "%s", sqlite3_errmsg(r));
  /* 2 x 100000 queries: more than a thread's ring holds (4 MiB). */
  char *log = tu_temp_path(".out");
  const char *prog[] = {BIN "/record_prog", "threads", "2", "100000", NULL};
  pid_t pid = spawn_recording(prog, db, NULL, log);
  struct timespec hold = {1, 500000000};
  nanosleep(&hold, NULL);
  cr_assert_eq(sqlite3_exec(r, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(r);
  int st;
  waitpid(pid, &st, 0);
  char *out = tu_read_file(log);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", out);
  cr_assert_eq(tu_count(out, "pitrace:"), 0, "%s", out);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "teardown\nteardown\n");
  long long calls = tu_db_int(db, "SELECT calls FROM sessions WHERE id = 2");
  cr_assert_gt(calls, 200000);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM calls WHERE session = 2"), calls);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE session = 2 AND api = "
                          "'piDeviceGetInfo'"),
               tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE session = 1 AND api = "
                          "'piDeviceGetInfo'") - 10 + 200000);
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
  char *journal = malloc(strlen(db) + 16);
  sprintf(journal, "%s-journal", db);
  cr_assert(access(journal, F_OK) != 0, "%s is left", journal);
}

/* The status of a child that should end within `ms` milliseconds; one
 * still running then is killed (SIGKILL: its status says so). */
static int wait_or_kill(pid_t pid, int ms)
{
  int st = 0;
  for (int i = 0; i < ms / 50 && waitpid(pid, &st, WNOHANG) == 0; i++) {
    struct timespec nap = {0, 50000000};
    nanosleep(&nap, NULL);
  }
  if (waitpid(pid, &st, WNOHANG) == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
  }
  return st;
}

/* A connection to db holding its write lock (BEGIN IMMEDIATE), as a
 * recorder committing does: recording processes wait for it. */
static sqlite3 *hold_file(const char *db)
{
  sqlite3 *w;
  cr_assert_eq(sqlite3_open(db, &w), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(w, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK, "%s",
               sqlite3_errmsg(w));
  return w;
}

/* db with one session in it (record_prog threads 1 10), then held by
 * another connection (hold_file): a process that records into it now
 * waits for that connection. */
static sqlite3 *one_session_then_held(const char *db)
{
  const char *first[] = {BIN "/record_prog", "threads", "1", "10", NULL};
  run_recorded(first, db, 0);
  return hold_file(db);
}

/* The database is opened on the writer's thread: a process whose file
 * another process holds (here, a writer inside its transaction) goes on
 * with its calls meanwhile (the old start waited in the first call, up to
 * 30 s), and one that ends before its writer could make its session's row
 * keeps its calls anyway: the salvager makes the row from the description
 * in the ring file. Without that, this run would sit in its first call
 * until the kill below and leave nothing, or a ring file that no session
 * claims. Runs `record_prog quickexit 300` so into db (which holds one
 * session already, and with `dead` calls a killed process's ring file
 * too); returns its pid, its ring file left to salvage. */
static pid_t run_held_out(const char *db, int dead)
{
  const char *first[] = {BIN "/record_prog", "threads", "1", "10", NULL};
  run_recorded(first, db, 0);
  char n[16];
  snprintf(n, sizeof n, "%d", dead);
  const char *quick[] = {BIN "/record_prog", "quickexit", n, NULL};
  if (dead)
    run_recorded(quick, db, 3);
  sqlite3 *w = hold_file(db);
  char *log = tu_temp_path(".out");
  const char *prog[] = {BIN "/record_prog", "quickexit", "300", NULL};
  pid_t pid = spawn_recording(prog, db, "held out", log);
  /* It ends (_exit(3)) within seconds unless its calls wait for the lock. */
  int st = wait_or_kill(pid, 10000);
  cr_assert_eq(sqlite3_exec(w, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(w);
  char *out = tu_read_file(log);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 3, "status %d: %s", st, out);
  cr_assert(strstr(out, "made 300 calls"), "%s", out);
  cr_assert_eq(ring_files(db), dead ? 2 : 1, "%s", out);
  return pid;
}

/* Waits (up to 4 s) for a process writing into log to have said `text`. */
static void wait_for_output(const char *log, const char *text)
{
  char *said = NULL;
  for (int i = 0; i < 200 && !(said && strstr(said, text)); i++) {
    struct timespec nap = {0, 20000000};
    nanosleep(&nap, NULL);
    free(said);
    said = tu_read_file(log);
  }
  cr_assert(said && strstr(said, text), "%s", said ? said : "(no output)");
  free(said);
}

/* A fork while the parent's writer waits for another process's lock on
 * the file (it cannot stand still outside SQLite then): the fork goes on
 * after a second, and the child, which could not record safely, says so
 * at its first call and passes its calls through; the parent's session
 * keeps its calls once the lock is let go. */
Test(record, a_child_forked_while_the_recorder_waits_for_the_file_says_it_is_not_recorded)
{
  char *db = tu_temp_path(".db");
  sqlite3 *w = one_session_then_held(db);
  char *log = tu_temp_path(".out");
  const char *prog[] = {BIN "/record_prog", "forkcall", "exit", NULL};
  pid_t pid = spawn_recording(prog, db, NULL, log);
  wait_for_output(log, "the child ");
  cr_assert_eq(sqlite3_exec(w, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(w);
  int st = wait_or_kill(pid, 20000);
  char *out = tu_read_file(log);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, out);
  cr_assert_eq(tu_count(out, "is not recorded: at the fork its parent's recorder could not "
                             "stand still within a second"), 1, "%s", out);
  salvage_with_pitrace(db);
  char *got = tu_db_lines(db, QUERIES_BY_SESSION);
  cr_assert_str_eq(got, "1 10\n2 2\n", "%s: %s", got, out);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM sessions"), 2);
}

/* The room the writer keeps on the disk (a file without a name) is its
 * process's: a child forked while the writer waited for the file kept it
 * open (a child that records forgot it), so the room its parent gave
 * back on a full disk stayed taken while the child lived. */
Test(record, a_child_forked_while_the_recorder_waits_keeps_none_of_its_room)
{
  char *db = tu_temp_path(".db"), *go = tu_temp_path(".go");
  const char *first[] = {BIN "/record_prog", "threads", "1", "10", NULL};
  run_recorded(first, db, 0);
  char *log = tu_temp_path(".out");
  const char *prog[] = {BIN "/record_prog", "forkcall", NULL};
  setenv("RECORD_PROG_FORK_HELD", go, 1);
  pid_t pid = spawn_recording(prog, db, NULL, log);
  unsetenv("RECORD_PROG_FORK_HELD");
  wait_for_output(log, "waiting for");
  usleep(300000); /* its session begun: the room taken */
  sqlite3 *w = hold_file(db);
  int fd = open(go, O_WRONLY | O_CREAT, 0600);
  cr_assert_geq(fd, 0);
  close(fd);
  wait_for_output(log, "the child ");
  cr_assert_eq(sqlite3_exec(w, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(w);
  int st = wait_or_kill(pid, 20000);
  char *out = tu_read_file(log);
  unlink(go);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, out);
  cr_assert_eq(tu_count(out, "is not recorded: at the fork its parent's recorder could not "
                             "stand still within a second"), 1, "%s", out);
  cr_assert(strstr(out, "the child holds 0 files without a name"), "%s", out);
}

/* A process that goes on as another program (exec: no teardown, its ring
 * file closed) is said to have done so, its calls salvaged: by the
 * program it became when that records too (its writer salvages at its
 * start), or by any reader while it runs. They were "killed or _exit". */
Test(record, a_process_that_execs_another_program_is_said_to_have_gone_on_as_it)
{
  char *db = tu_temp_path(".db"), *log = tu_temp_path(".out");
  const char *again[] = {BIN "/record_prog", "exec", BIN "/record_prog", "gap", "0", NULL};
  int st = run_prepared(again, db, log, NULL, NULL);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, tu_read_file(log));
  cr_assert_eq(ring_files(db), 0);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended || ' ' || (command LIKE '%record_prog exec%') "
                                   "FROM sessions ORDER BY id"),
                   "exec 1\nteardown 0\n");
  cr_assert_eq(tu_db_int(db, "SELECT count(DISTINCT pid) FROM sessions"), 1);
  cr_assert(strstr(tu_db_lines(db, "SELECT incomplete_reason FROM sessions WHERE id = 1"),
                   "went on as another program (exec)"),
            "%s", tu_db_lines(db, "SELECT incomplete_reason FROM sessions"));
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_args WHERE session = 1 AND name = "
                              "'param_name' AND value = 'PI_DEVICE_INFO_MAX_COMPUTE_UNITS'"), 1);

  char *db2 = tu_temp_path(".db"), *log2 = tu_temp_path(".out");
  const char *sleeper[] = {BIN "/record_prog", "exec", "/bin/sleep", "3", NULL};
  pid_t pid = spawn_recording(sleeper, db2, NULL, log2);
  wait_for_output(log2, "made 1 calls");
  struct timespec nap = {0, 300000000}; /* into sleep */
  nanosleep(&nap, NULL);
  char *out = salvage_with_pitrace(db2);
  cr_assert(strstr(out, "exec: pid "), "%s", out);
  cr_assert_str_eq(tu_db_lines(db2, "SELECT ended FROM sessions"), "exec\n");
  waitpid(pid, &st, 0);
}

static void record_all_data(const void *arg)
{
  (void)arg;
  setenv("SYCL_PI_RECORD_DATA", "all", 1);
}

/* A run of prog recorded with data all into a session on a tmpfs of
 * `size`, and what the session says, read before the tmpfs goes: how it
 * ended, why, its integrity check, and the counts that `counts` (SQL,
 * up to 4) ask for. */
typedef struct small_disk_run {
  int status;
  char *out, *ended, *reason, *check;
  int n[4];
} small_disk_run;

static small_disk_run on_a_small_disk(const char *size, const char *const *prog,
                                      const char *const *counts)
{
  char dir[32], db[64], *log = tu_temp_path(".out");
  tu_small_tmpfs(dir, size);
  snprintf(db, sizeof db, "%s/s.db", dir);
  small_disk_run r = {.status = run_prepared(prog, db, log, record_all_data, NULL)};
  r.out = tu_read_file(log);
  r.ended = tu_db_lines(db, "SELECT ended FROM sessions");
  r.reason = tu_db_lines(db, "SELECT incomplete_reason FROM sessions");
  r.check = tu_db_lines(db, "PRAGMA integrity_check");
  for (int i = 0; i < 4 && counts[i]; i++)
    r.n[i] = tu_db_int(db, counts[i]);
  tu_small_tmpfs_gone(dir);
  cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d: %s", r.status, r.out);
  cr_assert_str_eq(r.ended, "teardown\n", "%s", r.out);
  cr_assert_str_eq(r.check, "ok\n");
  return r;
}

/* Data that would fill the disk is left out, from the call that brought
 * it on, and the calls go on being recorded: the session ends in order,
 * saying so. A write that met the full disk made SQLite take back the
 * whole transaction, and the recording stopped: vadd's session here kept
 * 1 call of 47, "incomplete". */
Test(record, data_that_would_fill_the_disk_is_left_out_and_every_call_kept)
{
  const char *vadd[] = {BIN "/vadd", "1048576", NULL}; /* 3 buffers of 4 MiB */
  const char *counts[] = {"SELECT calls FROM sessions", "SELECT count(*) FROM pi_calls",
                          "SELECT count(*) FROM data", /* what came before */
                          /* from there on, each payload's size (as data=meta has it) */
                          "SELECT count(*) FROM data_rows WHERE size = 4194304 AND stored = 0"};
  small_disk_run r = on_a_small_disk("12m", vadd, counts); /* the ring file takes 8 MiB */
  cr_assert(strstr(r.out, "result verified"), "%s", r.out);
  cr_assert(strstr(r.out, "the calls go on being recorded without it"), "%s", r.out);
  /* Below the calls' reserve (3 MiB) the warning promises nothing: on 80
   * KiB the next commit met the full disk, every call lost. */
  const char *with = strstr(r.out, ", with ");
  unsigned long long kib = 0;
  cr_assert(with && sscanf(with, ", with %llu KiB free", &kib) == 1, "%s", r.out);
  cr_assert_eq(strstr(r.out, "which it may not (recording then stops)") != NULL, kib < 3072,
               "%s", r.out);
  cr_assert_geq(r.n[0], 40);
  cr_assert_eq(r.n[1], r.n[0]);
  cr_assert(strstr(r.reason, " on not stored: 4194304 bytes of it, with "), "%s", r.reason);
  cr_assert_gt(r.n[2], 0);
  cr_assert_geq(r.n[3], 1);
}

/* The same with 4 threads writing 2 MiB buffers on a 100 MiB disk: the
 * ring slots of threads that begin after the recorder looked at the room
 * (and the payload file's regions) take disk too, and are counted
 * against it. They were not: the session's write met the full disk and
 * the recording stopped with nothing ("recording failed", 3 runs of 3). */
Test(record, data_of_many_threads_that_would_fill_the_disk_is_left_out_and_every_call_kept)
{
  const char *prog[] = {BIN "/record_prog", "bigwrites", "4", "12", NULL}; /* 96 MiB */
  const char *counts[] = {"SELECT count(*) FROM pi_calls WHERE api = 'piEnqueueMemBufferWrite'",
                          "SELECT count(*) FROM data_rows WHERE size = 2097152 AND stored = size",
                          NULL};
  small_disk_run r = on_a_small_disk("100m", prog, counts);
  cr_assert(strstr(r.out, "48 big writes made"), "%s", r.out);
  cr_assert_null(strstr(r.out, "stopped"), "%s", r.out);
  cr_assert(strstr(r.reason, " on not stored: 2097152 bytes of it, with "), "%s", r.reason);
  cr_assert_eq(r.n[0], 48);
  cr_assert_gt(r.n[1], 0);
}

/* A disk that another process fills while the calls are recorded: SQLite
 * takes back the whole transaction when its commit meets the full disk,
 * and the recording stopped with the calls since the last commit lost.
 * The room the writer kept as the session began (3 MiB, in a file with no
 * name) is given back first, and the calls go on being stored. */
Test(record, a_disk_another_process_fills_gives_back_the_room_kept_for_it)
{
  char dir[32], db[64], fill[64], *log = tu_temp_path(".out"), *count = tu_temp_path(".count");
  tu_small_tmpfs(dir, "24m");
  snprintf(db, sizeof db, "%s/s.db", dir);
  snprintf(fill, sizeof fill, "%s/fill", dir);
  const char *argv[] = {BIN "/record_prog", "count", count, NULL};
  pid_t pid = spawn_recording(argv, db, NULL, log);
  for (int waited = 0; waited < 10000 && count_of(count) < 100000; waited++)
    usleep(1000);
  long long before = count_of(count);
  /* Filled as a process that writes a file does, 64 KiB a millisecond
   * (the recorder looks at the room before each commit and at most once a
   * millisecond otherwise: a disk filled faster than it looks can still
   * meet a write first). */
  int fd = open(fill, O_WRONLY | O_CREAT, 0600);
  static char zeros[64 << 10];
  while (fd >= 0 && write(fd, zeros, sizeof zeros) > 0)
    usleep(1000); /* until the disk is full */
  if (fd >= 0)
    close(fd);
  usleep(200000);
  kill(pid, SIGTERM);
  int st;
  waitpid(pid, &st, 0);
  unlink(fill);
  char *out = tu_read_file(log);
  long long stored = tu_db_int(db, "SELECT count(*) FROM pi_calls");
  char *check = tu_db_lines(db, "PRAGMA integrity_check");
  tu_small_tmpfs_gone(dir);
  cr_assert_gt(before, 0, "%s", out);
  cr_assert(strstr(out, "the disk is full; the 3 MiB kept for this are given back, so the calls "
                        "so far are kept"), "%s", out);
  cr_assert_geq(stored, before, "%lld returned before the disk filled, %lld stored: %s", before,
                stored, out);
  cr_assert_str_eq(check, "ok\n");
}

/* As `sh -c 'prog &'` leaves a background command. */
static void ignore_sigint(const void *arg)
{
  (void)arg;
  signal(SIGINT, SIG_IGN);
}

/* A signal the process ignores stays ignored when it records: a shell
 * starts its background commands ignoring SIGINT and SIGQUIT, and the
 * recorder's handler, put in front of SIG_IGN, ended such a process on
 * the terminal's ^C (exit status 130) where it would have gone on. */
Test(record, a_signal_the_process_ignores_stays_ignored)
{
  char *db = tu_temp_path(".db"), *log = tu_temp_path(".out");
  const char *prog[] = {BIN "/record_prog", "gap", "1500", NULL};
  pid_t pid = spawn_prepared(prog, db, NULL, log, ignore_sigint, NULL);
  /* Sent within its 1.5 s pause between calls: once it said its first. */
  wait_for_output(log, "made 1 calls");
  cr_assert_eq(kill(pid, SIGINT), 0);
  int st;
  waitpid(pid, &st, 0);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, tu_read_file(log));
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "teardown\n");
}

/* A process with a handler of its own for a signal goes on after it,
 * each time: the recorder's handler in front hands the signal on and
 * stays in front. It handed the second SIGTERM to itself (it had taken
 * its own place as the one to hand on to) and so ended the process, which
 * was recorded as ended by that signal; SIGHUP went to the application
 * without the recorder seeing it. */
Test(record, a_signal_the_process_handles_leaves_it_going_each_time)
{
  /* Not SIGUSR1: PoCL's LLVM takes that one for itself, recorded or not. */
  const int sigs[] = {SIGTERM, SIGHUP, SIGUSR2};
  for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) {
    char *db = tu_temp_path(".db"), *log = tu_temp_path(".out"), sig[8];
    snprintf(sig, sizeof sig, "%d", sigs[k]);
    const char *prog[] = {BIN "/record_prog", "handled", sig, NULL};
    pid_t pid = spawn_recording(prog, db, NULL, log);
    wait_for_output(log, "made 1 calls");
    for (int i = 0; i < 2; i++) {
      cr_assert_eq(kill(pid, sigs[k]), 0);
      struct timespec nap = {0, 100000000};
      nanosleep(&nap, NULL);
    }
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "signal %d: status %d: %s", sigs[k], st,
              tu_read_file(log));
    cr_assert(strstr(tu_read_file(log), "handled 2 signals"), "%s", tu_read_file(log));
    cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "teardown\n");
  }
  /* The second sent while the application's handler still runs (a slow
   * one, two ^C in a row): it waits, blocked, and then goes to that
   * handler again. The recorder took the waiting signal for one given
   * back by that handler, dropped the handler, and the second ended the
   * process. */
  for (size_t k = 0; k < 2; k++) {
    char *db = tu_temp_path(".db"), *log = tu_temp_path(".out"), sig[8];
    snprintf(sig, sizeof sig, "%d", sigs[k]);
    const char *prog[] = {BIN "/record_prog", "handledslow", sig, NULL};
    pid_t pid = spawn_recording(prog, db, NULL, log);
    wait_for_output(log, "made 1 calls");
    cr_assert_eq(kill(pid, sigs[k]), 0);
    struct timespec nap = {0, 100000000}; /* within the first's 300 ms */
    nanosleep(&nap, NULL);
    cr_assert_eq(kill(pid, sigs[k]), 0);
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "signal %d: status %d: %s", sigs[k], st,
              tu_read_file(log));
    cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "teardown\n");
    cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_args WHERE name = 'param_name' AND "
                                "value = 'PI_DEVICE_INFO_MAX_COMPUTE_UNITS'"), 2);
  }
}

static void not_recorded(const void *arg)
{
  (void)arg;
  unsetenv("SYCL_PI_RECORD");
}

/* record_prog gap 1500 (recorded into db, or not when NULL) given
 * SIGSEGV by kill during its pause; its exit status. */
static int segv_sent_in_gap(const char *db)
{
  char *log = tu_temp_path(".out");
  const char *prog[] = {BIN "/record_prog", "gap", "1500", NULL};
  pid_t pid = spawn_prepared(prog, db ? db : "", NULL, log, db ? NULL : not_recorded, NULL);
  wait_for_output(log, "made 1 calls");
  cr_assert_eq(kill(pid, SIGSEGV), 0);
  return wait_or_kill(pid, 10000);
}

/* A fault's signal sent by kill (timeout -s SEGV, a watchdog), not
 * raised by the processor, to a program with a handler for it that
 * returns: the program goes on (PoCL's LLVM has such a handler: a
 * pyopencl script given kill -SEGV ran to its end, recorded or not). The
 * recorder took every fault's signal for the end of the process: it
 * ended the session "signal 11" there, and the rest of the run was not
 * recorded. */
Test(record, a_sent_fault_signal_that_a_handler_returns_from_leaves_the_session_going)
{
  int st = segv_sent_in_gap(NULL);
  if (!WIFEXITED(st))
    cr_skip_test("unrecorded, record_prog dies of a sent SIGSEGV here (status %d): no "
                 "handler of the implementation's takes it", st);
  char *db = tu_temp_path(".db");
  st = segv_sent_in_gap(db);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "teardown\n");
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_args WHERE name = 'param_name' AND "
                             "value = 'PI_DEVICE_INFO_MAX_COMPUTE_UNITS'"), 2);
}

/* record_prog crashhandled (recorded into db, or not when NULL): its
 * exit status; its output into *out. */
static int crash_handled(const char *db, char **out)
{
  char *log = tu_temp_path(".out");
  const char *prog[] = {BIN "/record_prog", "crashhandled", "1", NULL};
  int st = wait_or_kill(
      spawn_prepared(prog, db ? db : "", NULL, log, db ? NULL : not_recorded, NULL), 10000);
  *out = tu_read_file(log);
  return st;
}

/* A program with a fault handler of its own (Python's faulthandler,
 * which pytest turns on) that segfaults: its handler runs, as it does
 * unrecorded. PoCL's LLVM installs its handler over the program's; it
 * puts back the one it replaced (the recorder's, once recording) and
 * returns, for the fault to come again there. The recorder had reset
 * LLVM's place in its chain to the default action (SA_RESETHAND), which
 * hid the program's handler below it: the fault came again and ended the
 * process with no traceback. */
Test(record, a_programs_fault_handler_under_llvms_still_runs)
{
  char *out;
  int st = crash_handled(NULL, &out);
  cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "status %d: %s", st, out);
  if (!strstr(out, "fault handler ran"))
    cr_skip_test("unrecorded, the program's handler does not run here: %s", out);
  char *db = tu_temp_path(".db");
  st = crash_handled(db, &out);
  cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "status %d: %s", st, out);
  cr_assert(strstr(out, "fault handler ran"), "%s", out);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended || ' ' || signal FROM sessions"), "signal 11\n");
}

/* A program ended by SIGTERM: the session says so, and the database is
 * one file again (the recorder's journal, TRUNCATE while recording, was
 * left beside it empty: the normal end turned it back to DELETE after
 * joining the writer, which a process dying of a signal never does). */
Test(record, sigterm_ends_the_session_and_leaves_no_journal_file)
{
  char *db = tu_temp_path(".db"), *log = tu_temp_path(".out");
  const char *prog[] = {BIN "/record_prog", "gap", "5000", NULL};
  pid_t pid = spawn_recording(prog, db, NULL, log);
  wait_for_output(log, "made 1 calls");
  cr_assert_eq(kill(pid, SIGTERM), 0);
  int st = wait_or_kill(pid, 10000);
  cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %d", st);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended || ' ' || signal FROM sessions"), "signal 15\n");
  char journal[4096];
  snprintf(journal, sizeof journal, "%s-journal", db);
  cr_assert_neq(access(journal, F_OK), 0, "%s is left", journal);
}

/* The classic handler that cleans up and ends on the signal anyway: it
 * puts back the handler it replaced (the recorder's) and raises the
 * signal again, which waits, blocked, until the handler returns into the
 * recorder's. The recorder takes it there (sent by the process itself:
 * given back) and ends the session on it; the process dies of it as it
 * would unrecorded. */
Test(record, a_handler_that_cleans_up_and_raises_again_ends_the_process_on_that_signal)
{
  char *db = tu_temp_path(".db"), *log = tu_temp_path(".out"), sig[8];
  snprintf(sig, sizeof sig, "%d", SIGTERM);
  const char *prog[] = {BIN "/record_prog", "reraise", sig, NULL};
  pid_t pid = spawn_recording(prog, db, NULL, log);
  wait_for_output(log, "made 1 calls");
  cr_assert_eq(kill(pid, SIGTERM), 0);
  /* The recorder took the raised signal for a new one and handed it to
   * that handler again, round and round. */
  int st = wait_or_kill(pid, 10000);
  cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
            "status %d (9: still running after 10 s; its log keeps growing, not shown)", st);
  cr_assert(strstr(tu_read_file(log), "cleaned up"), "%s", tu_read_file(log));
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended || ' ' || signal FROM sessions"), "signal 15\n");
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_args WHERE name = 'param_name' AND "
                              "value = 'PI_DEVICE_INFO_MAX_COMPUTE_UNITS'"), 1);
}

/* A real program with a handler of its own, through the OpenCL front end:
 * a pyopencl script that catches KeyboardInterrupt goes on after each
 * ^C. PoCL's LLVM puts its handler in front of Python's; the recorder's
 * went in front of that and lost Python's, so the first ^C ended the
 * script (status 130, the session "signal 2") where it goes on without
 * pitrace. */
Test(record, a_python_script_that_catches_keyboard_interrupt_goes_on)
{
  tu_need_pyopencl();
  const char *script =
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "import time, numpy as np, pyopencl as cl\n"
    "ctx = cl.create_some_context(interactive=False); q = cl.CommandQueue(ctx)\n"
    "a = np.zeros(256, np.float32)\n"
    "b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)\n"
    "for k in range(2):\n"
    "    try:\n"
    "        print('ready', k, flush=True)\n"
    "        for n in range(20000):\n"
    "            cl.enqueue_copy(q, a, b); time.sleep(0.001)\n"
    "        print('never interrupted')\n"
    "    except KeyboardInterrupt:\n"
    "        cl.enqueue_copy(q, a, b); print('interrupted', k, flush=True)\n";
  char *db = tu_temp_path(".db"), *log = tu_temp_path(".out");
  const char *prog[] = {BIN "/pitrace", "run", "--", "/usr/bin/python3", "-c", script, NULL};
  pid_t pid = spawn_recording(prog, db, NULL, log);
  /* Each ^C once the script is inside its try (it said so): one sent
   * right after "ready" was printed before the try, or right after the
   * first "interrupted", could land outside it and end the script with
   * Python's own traceback (one CI run). */
  wait_for_output(log, "ready 0");
  cr_assert_eq(kill(pid, SIGINT), 0);
  wait_for_output(log, "interrupted 0");
  wait_for_output(log, "ready 1");
  cr_assert_eq(kill(pid, SIGINT), 0);
  wait_for_output(log, "interrupted 1");
  int st;
  waitpid(pid, &st, 0);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, tu_read_file(log));
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "teardown\n");
}

/* A child forked from a recording process (Python's multiprocessing, a
 * pool's terminate()) dies of SIGTERM at once, and leaves its parent's
 * session alone. The recorder's handler in the child waited 3 s for a
 * writer the child does not have, and marked the parent's ring file as
 * ending on the child's signal: the parent's session, salvaged after its
 * _exit, said "the process was ending on signal 15". */
Test(record, a_forked_child_stopped_by_a_signal_dies_at_once_and_leaves_the_session_alone)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "forkterm", NULL};
  char *out = run_recorded(argv, db, 3);
  unsigned long long ms = 99999;
  const char *said = strstr(out, "the child ended by signal 15 in ");
  cr_assert(said && sscanf(said, "the child ended by signal 15 in %llu ms", &ms) == 1, "%s", out);
  cr_assert_lt(ms, 1500, "%s", out);
  salvage_with_pitrace(db);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended || ' ' || coalesce(signal, 'none') FROM "
                                   "sessions"), "killed none\n");
  char *reason = tu_db_lines(db, "SELECT incomplete_reason FROM sessions");
  cr_assert_null(strstr(reason, "signal"), "%s", reason);
  cr_assert_null(strstr(out, "is not recorded"), "%s", out); /* it made no call */
}

/* A child forked from a recording process that makes PI calls of its own
 * (Python's multiprocessing with the fork start method, the default on
 * Debian 12's Python) records them in a session of its own, beside its
 * parent's. It was not recorded: it would have written into its parent's
 * rings, so its calls passed through unseen. One that ends with _exit (as
 * multiprocessing's workers do) is salvaged; one that ends through exit
 * tears its session down. */
Test(record, a_forked_child_records_its_calls_in_a_session_of_its_own)
{
  for (int through_exit = 0; through_exit < 2; through_exit++) {
    char *db = tu_temp_path(".db");
    const char *argv[] = {BIN "/record_prog", "forkcall", through_exit ? "exit" : "_exit", NULL};
    char *out = run_recorded(argv, db, 0);
    int child = 0;
    const char *said = strstr(out, "the child ");
    cr_assert(said && sscanf(said, "the child %d made 2 calls", &child) == 1, "%s", out);
    cr_assert_null(strstr(out, "not recorded"), "%s", out);
    char *listed = salvage_with_pitrace(db);
    cr_assert_str_eq(tu_db_lines(db, QUERIES_BY_SESSION), "1 2\n2 2\n");
    /* The child's session names its parent's, here and in the listing. */
    cr_assert_str_eq(tu_db_lines(db, "SELECT session || ' ' || coalesce(parent_session, '-') || "
                                     "' ' || coalesce(parent_pid = (SELECT pid FROM sessions "
                                     "WHERE id = 1), '-') FROM pi_sessions"),
                     "1 - -\n2 1 1\n");
    cr_assert(strstr(listed, "forked from") && strstr(listed, "session 1 "), "%s", listed);
    char want[128];
    snprintf(want, sizeof want, "1 teardown\n2 %d %s\n", child,
             through_exit ? "teardown" : "_exit");
    cr_assert_str_eq(tu_db_lines(db, "SELECT id || ' ' || CASE id WHEN 2 THEN pid || ' ' ELSE "
                                     "'' END || replace(ended, 'killed', '_exit') FROM sessions"),
                     want);
    cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
  }
}

static void into_dir(const void *arg) { cr_assert_eq(chdir(arg), 0); }

/* A forked child resolves SYCL_PI_RECORD as its parent did at its start:
 * %p becomes the child's pid (a file of its own), and a relative path is
 * taken from the directory the parent started recording in, wherever the
 * parent went since. */
Test(record, a_forked_child_records_where_its_parents_path_says_with_its_own_pid)
{
  char *dir = tu_temp_path(".dir"), *elsewhere = tu_temp_path(".dir");
  cr_assert_eq(mkdir(dir, 0700), 0);
  cr_assert_eq(mkdir(elsewhere, 0700), 0);
  char *log = tu_temp_path(".out");
  setenv("RECORD_PROG_FORK_CHDIR", elsewhere, 1);
  const char *prog[] = {BIN "/record_prog", "forkcall", "exit", NULL};
  int st = run_prepared(prog, "s-%p.db", log, into_dir, dir);
  unsetenv("RECORD_PROG_FORK_CHDIR");
  char *out = tu_read_file(log);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, out);
  int child = 0;
  const char *said = strstr(out, "the child ");
  cr_assert(said && sscanf(said, "the child %d made 2 calls", &child) == 1, "%s", out);
  char path[600];
  snprintf(path, sizeof path, "%s/s-%d.db", dir, child);
  char want[64];
  snprintf(want, sizeof want, "%d teardown\n", child);
  cr_assert_str_eq(tu_db_lines(path, "SELECT pid || ' ' || ended FROM sessions"), want, "%s",
                   out);
  cr_assert_str_eq(tu_db_lines(path, QUERIES_BY_SESSION), "1 2\n");
  cr_assert_eq(entries_in(elsewhere), 0, "%s", out);
  /* In a file of its own, the child names its parent by pid: the pid of
   * the session in the parent's file. */
  long long parent = tu_db_int(path, "SELECT parent_pid FROM sessions WHERE parent_session IS "
                                     "NULL");
  cr_assert(parent > 0 && parent != child, "%lld", parent);
  snprintf(path, sizeof path, "%s/s-%lld.db", dir, parent);
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM sessions WHERE parent_pid IS NULL AND pid = %lld",
           parent);
  cr_assert_eq(access(path, F_OK), 0, "%s", path);
  cr_assert_eq(tu_db_int(path, sql), 1, "%s", out);
}

/* Forks while another thread floods the recorder: the writer stands
 * still for each fork (committed, outside SQLite), and each child records
 * its own session from a file, a connection and rings of its own; the
 * parent's session goes on, nothing lost or counted twice. */
Test(record, forks_while_another_thread_floods_the_recorder_keep_every_call_of_each_process)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "forkmany", "12", NULL};
  char *out = run_recorded(argv, db, 0);
  unsigned long long flood = 0;
  const char *said = strstr(out, "the thread made ");
  cr_assert(said && sscanf(said, "the thread made %llu calls", &flood) == 1, "%s", out);
  cr_assert(strstr(out, "12 children made 3 calls each"), "%s", out);
  cr_assert_null(strstr(out, "not recorded"), "%s", out);
  salvage_with_pitrace(db);
  char want[256];
  int w = snprintf(want, sizeof want, "1 %llu\n", flood + 1);
  for (int i = 2; i <= 13; i++)
    w += snprintf(want + w, sizeof want - (size_t)w, "%d 3\n", i);
  cr_assert_str_eq(tu_db_lines(db, QUERIES_BY_SESSION), want, "%s", out);
  /* Each ended in order, or (a child whose end waited past its 10 s for
   * the file, which its parent's flood kept busy: seen once under a
   * loaded CI run with AddressSanitizer) was salvaged, every call kept. */
  char *ended = tu_db_lines(db, "SELECT id || ' ' || ended || ' ' || "
                                "coalesce(incomplete_reason, '') FROM sessions");
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM sessions WHERE ended IN "
                             "('teardown', 'killed', '_exit')"), 13, "%s\n%s", ended, out);
  cr_assert_eq(tu_db_int(db, "SELECT count(DISTINCT pid) FROM sessions"), 13);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM sessions WHERE parent_session = 1 AND "
                             "parent_pid = (SELECT pid FROM sessions WHERE id = 1)"), 12);
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
}

/* A file of a recorder before the sessions' parent columns, its last
 * process killed: the salvage adds the columns and makes pi_sessions again
 * with them (it dropped the view and left it to a recorder's next start,
 * which an older recorder never makes: `pitrace sql ... FROM pi_sessions`
 * said "no such table"). Made here from a file of this recorder, its
 * columns and view taken back to what older recorders made. */
Test(record, salvaging_into_a_file_of_an_older_recorder_keeps_its_sessions_view)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "quickexit", "5", NULL};
  run_recorded(argv, db, 3);
  cr_assert_eq(ring_files(db), 1);
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  tu_sqlite_views(h); /* the schema's views are checked as it changes */
  cr_assert_eq(sqlite3_exec(h, "DROP VIEW pi_sessions;"
                               "ALTER TABLE sessions DROP COLUMN parent_session;"
                               "ALTER TABLE sessions DROP COLUMN parent_pid;"
                               "CREATE VIEW pi_sessions AS SELECT s.id AS session, s.pid "
                               "FROM sessions s;"
                               "UPDATE pitrace_meta SET value = 'older' WHERE key = 'schema_sql';",
                            NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
  sqlite3_close(h);
  salvage_with_pitrace(db);
  cr_assert_eq(ring_files(db), 0);
  cr_assert_str_eq(tu_db_lines(db, "SELECT session || ' ' || coalesce(parent_pid, '-') || ' ' || "
                                   "ended FROM pi_sessions"), "1 - killed\n");
}

/* Two threads that fork at once: glibc runs their fork handlers side by
 * side, and the second's answer overwrote the first's, whose locks then
 * stayed held: the process hung (3 runs of 3). Forks now go one at a
 * time through the recorder. */
Test(record, two_threads_forking_at_once_do_not_hang_the_process)
{
  char *db = tu_temp_path(".db"), *log = tu_temp_path(".out");
  const char *prog[] = {BIN "/record_prog", "forkpar", "100", NULL};
  pid_t pid = spawn_recording(prog, db, NULL, log);
  int st = wait_or_kill(pid, 60000);
  char *out = tu_read_file(log);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d (hung?): %s", st, out);
  cr_assert(strstr(out, "two threads forked 100 times each"), "%s", out);
  cr_assert_str_eq(tu_db_lines(db, QUERIES_BY_SESSION), "1 2\n", "%s", out);
}

/* A grandchild forked from a forked child whose recorder could not stand
 * still (the child's writer waits for the file, which the child itself
 * holds here) is not recorded and says so: it took its parent's state for
 * its own and wrote its calls into the child's rings, as the child's
 * (the child's session held 10 queries, the grandchild's 5 among them). */
Test(record, a_grandchild_forked_while_its_parents_recorder_waits_is_not_recorded)
{
  char *db = tu_temp_path(".db");
  const char *prog[] = {BIN "/record_prog", "forknest", NULL};
  char *out = run_recorded(prog, db, 0);
  cr_assert(strstr(out, "the grandchild ") && strstr(out, "the child "), "%s", out);
  cr_assert_eq(tu_count(out, "is not recorded: at the fork its parent's recorder could not "
                             "stand still within a second"), 1, "%s", out);
  salvage_with_pitrace(db);
  cr_assert_str_eq(tu_db_lines(db, QUERIES_BY_SESSION), "1 2\n2 5\n", "%s", out);
  cr_assert_str_eq(tu_db_lines(db, "SELECT count(*) FROM sessions"), "2\n");
}

/* Whether a process holds a shared lock on the database's turn byte: one
 * waits for SQLite's write lock on it (recorder.h, PT_TURN_BYTE). */
static bool someone_waits(int fd)
{
  struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t)PT_TURN_BYTE,
                    .l_len = 1};
  cr_assert_eq(fcntl(fd, F_OFD_GETLK, &l), 0, "%s", strerror(errno));
  return l.l_type != F_UNLCK;
}

/* A recorder that waits for another process's lock on the file says so
 * (a shared lock on the turn byte), so that a recorder holding the lock
 * lets it have it after its next commit; once it has it, it lets go. Here
 * the test holds SQLite's write lock. */
Test(record, a_recorder_waiting_for_the_file_says_so_until_it_has_it)
{
  char *db = tu_temp_path(".db"), *log = tu_temp_path(".out");
  const char *first[] = {BIN "/record_prog", "plain", "1", NULL};
  run_recorded(first, db, 0);
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  /* The waiter's retries hold a shared lock for an instant each: the
   * commit waits for it (CI saw this COMMIT fail with none set). */
  sqlite3_busy_timeout(h, 10000);
  cr_assert_eq(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
  int fd = open(db, O_RDONLY | O_CLOEXEC); /* closed after h: its locks are the process's */
  cr_assert_geq(fd, 0);
  cr_assert_not(someone_waits(fd));
  const char *argv[] = {BIN "/record_prog", "plain", "3", NULL};
  pid_t pid = spawn_recording(argv, db, NULL, log);
  bool said = false;
  for (int i = 0; i < 1000 && !said; i++) {
    usleep(10000);
    said = someone_waits(fd);
  }
  cr_assert(said, "the waiting recorder did not say so: %s", tu_read_file(log));
  cr_assert_eq(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  int st;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", tu_read_file(log));
  cr_assert_not(someone_waits(fd));
  close(fd);
  cr_assert_str_eq(tu_db_lines(db, "SELECT id || ' ' || ended FROM sessions ORDER BY id"),
                   "1 teardown\n2 teardown\n");
  cr_assert_str_eq(tu_db_lines(db, QUERIES_BY_SESSION), "1 1\n2 3\n");
}

/* Only a wait for the write lock is said: a recorder whose commit waits
 * for a reader to leave (or whose page cache spills) waits too, and it
 * used to say so and keep saying it until its next transaction began,
 * seconds later when its program paused, every other recorder yielding
 * 20 ms at each of its commits meanwhile. */
Test(record, a_recorder_waiting_for_a_reader_to_leave_does_not_say_it_waits_for_the_lock)
{
  char *db = tu_temp_path(".db"), *log = tu_temp_path(".out");
  const char *first[] = {BIN "/record_prog", "plain", "1", NULL};
  run_recorded(first, db, 0);
  sqlite3 *r;
  cr_assert_eq(sqlite3_open_v2(db, &r, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(r, "BEGIN; SELECT count(*) FROM sessions;", NULL, NULL, NULL),
               SQLITE_OK, "%s", sqlite3_errmsg(r));
  int fd = open(db, O_RDONLY | O_CLOEXEC); /* closed after r */
  cr_assert_geq(fd, 0);
  const char *argv[] = {BIN "/record_prog", "gap", "3000", NULL}; /* a query, 3 s, a query */
  pid_t pid = spawn_recording(argv, db, NULL, log);
  bool said = false;
  for (int i = 0; i < 100 && !said; i++) { /* its first commit waits for the reader */
    usleep(10000);
    said = someone_waits(fd);
  }
  cr_assert_eq(sqlite3_exec(r, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(r);
  usleep(300000); /* its commit done; its program pauses */
  said = said || someone_waits(fd);
  int st;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  close(fd);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", tu_read_file(log));
  cr_assert_not(said, "a recorder said it waited for the write lock while it waited for a "
                      "reader");
  cr_assert_str_eq(tu_db_lines(db, QUERIES_BY_SESSION), "1 1\n2 2\n");
}

/* Processes recording into one file take turns. SQLite's lock has no
 * queue: a waiter polls, and gets the lock only in the moment between
 * another writer's commit and its next write. A recorder storing a stream
 * of large payloads committed only once the stream paused (its merge went
 * on while records came, and its rings, whose payloads are in the payload
 * file, never filled), holding the lock all along: a process that began
 * recording into the file beside it could not even make its session's
 * row, and its end gave up after its 10 s, its calls left to a salvager.
 * Now the recorder commits every 50 ms through such a stream, and lets a
 * waiter (which says so with a lock of its own on the file) have the lock
 * before writing again. */
Test(record, a_process_recording_beside_a_stream_of_large_payloads_gets_its_turn)
{
  char *db = tu_temp_path(".db"), *stop = tu_temp_path(".stop"), *log = tu_temp_path(".out");
  const char *flood[] = {BIN "/record_prog", "bigwrites", "4", "0", stop, NULL};
  pid_t a = spawn_recording(flood, db, NULL, log);
  /* Its stream has begun once payloads are in its payload file. */
  for (int i = 0; i < 2000 && files_beside(db, "-payloads.") == 0; i++)
    usleep(5000);
  cr_assert_eq(files_beside(db, "-payloads."), 1, "%s", tu_read_file(log));
  const char *argv[] = {BIN "/record_prog", "plain", "3", NULL};
  char *out = run_recorded(argv, db, 0);
  FILE *f = fopen(stop, "w");
  cr_assert_not_null(f);
  fclose(f);
  int st;
  cr_assert_eq(waitpid(a, &st, 0), a);
  char *said = tu_read_file(log);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", said);
  cr_assert(strstr(said, "big writes until"), "%s", said);
  cr_assert_eq(tu_count(out, "pitrace:") + tu_count(said, "pitrace:"), 0, "%s\n%s", out, said);
  /* The second process's session ended in order, with its calls, while
   * the first still recorded. */
  cr_assert_str_eq(tu_db_lines(db, "SELECT id || ' ' || ended FROM sessions ORDER BY id"),
                   "1 teardown\n2 teardown\n", "%s", out);
  cr_assert_str_eq(tu_db_lines(db, QUERIES_BY_SESSION), "2 3\n"); /* the stream makes none */
  cr_assert_gt(tu_db_int(db, "SELECT end_unix_ns FROM sessions WHERE id = 1"),
               tu_db_int(db, "SELECT end_unix_ns FROM sessions WHERE id = 2"));
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
}

static void limit_files_to_2gib(const void *arg)
{
  (void)arg;
  struct rlimit fsize = {2ull << 30, 2ull << 30};
  setrlimit(RLIMIT_FSIZE, &fsize);
  signal(SIGXFSZ, SIG_IGN); /* a write past it fails, as on a full disk */
}

/* A file size limit (ulimit -f), SIGXFSZ left at its default (kills). */
static void limit_files_to(const void *arg)
{
  rlim_t bytes = *(const rlim_t *)arg;
  struct rlimit fsize = {bytes, bytes};
  setrlimit(RLIMIT_FSIZE, &fsize);
  signal(SIGXFSZ, SIG_DFL);
}

/* Under a file size limit, recording never kills the program: the ring
 * file's header and each thread's 4 MiB slot were made with
 * posix_fallocate past the limit, on the application's thread, and
 * SIGXFSZ killed it (status 153, 0 calls kept) where it ran fine
 * unrecorded. With 3 MB the rings stay in process memory (said once) and
 * every call is stored; with 300 KB (less than the database's template)
 * nothing is recorded, the program goes on, and no empty file is left
 * (a record directory with one was refused whole by every verb). */
Test(record, a_file_size_limit_never_kills_the_program)
{
  const rlim_t limits[] = {3000 << 10, 300 << 10};
  for (int i = 0; i < 2; i++) {
    char *db = tu_temp_path(".db"), *log = tu_temp_path(".out");
    const char *prog[] = {BIN "/record_prog", "threads", "4", "1000", NULL};
    int st = run_prepared(prog, db, log, limit_files_to, &limits[i]);
    char *out = tu_read_file(log);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "limit %d: status %d: %s", i, st, out);
    if (i == 0) {
      cr_assert(strstr(out, "File too large"), "%s", out); /* the rings, in memory */
      cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_args WHERE name = 'param_name' AND "
                                 "value = 'PI_DEVICE_INFO_MAX_COMPUTE_UNITS'"), 4000);
      cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "teardown\n");
    } else {
      /* The writer may fail before any thread asks for a ring (a loaded
       * machine): SQLite's "disk I/O error" then says the limit. */
      cr_assert(strstr(out, "disk I/O error; the file size limit (ulimit -f) is 307200 bytes"),
                "%s", out);
      cr_assert(strstr(out, "and no session was kept"), "%s", out);
      cr_assert_neq(access(db, F_OK), 0, "an empty %s is left", db);
    }
  }
}

/* A program that lowers its file size limit below the session file's
 * size once recording began (trace_end fsize: 100000 bytes, the file
 * 400 KB): the next commit fails, and so does its rollback, which leaves
 * the file needing one and the session's row unreadable there. The line
 * said "no session was kept" over a file that keeps the session as its
 * last commit left it (its row and first calls, read once the next
 * reader rolls the file back). */
Test(record, a_file_size_limit_lowered_by_the_program_says_the_session_stays)
{
  char *db = tu_temp_path(".db"), *out;
  const char *argv[] = {BIN "/trace_end", "fsize", "2000", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "the file size limit (ulimit -f) is 100000 bytes"), "%s", out);
  cr_assert(strstr(out, "the session stays as its last commit left it"), "%s", out);
  cr_assert_eq(tu_count(out, "pitrace:"), 1, "%s", out);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM sessions"), 1);
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
}

/* Notes "thread TID" (record_prog's churn and handover) with a call of
 * that thread; each note as it was stored. */
#define NOTES_WITH_THEIR_THREADS                                                                  \
  "SELECT count(*) FROM notes n JOIN pi_calls c ON c.session = n.session AND c.seq = n.seq "     \
  "JOIN threads t ON t.session = c.session AND t.idx = c.thread "                                \
  "WHERE n.text = 'record_prog: thread ' || t.tid"
#define NOTES_SEEN                                                                                \
  "SELECT n.seq || ' ' || n.text || ' with a call of thread ' || coalesce(c.thread, '-') || "    \
  "' (tid ' || coalesce(t.tid, '-') || ')' FROM notes n LEFT JOIN pi_calls c ON c.session = "    \
  "n.session AND c.seq = n.seq LEFT JOIN threads t ON t.session = c.session AND "                \
  "t.idx = c.thread LIMIT 20"

/* A program that makes thread after thread (a thread per task) records
 * into a bounded ring file: a thread that exits leaves its ring to the
 * next one. Each thread took a new 4 MiB slot of the file, on disk, for
 * the process's whole life: 20,000 short threads of a pyopencl script
 * filled this machine's disk (69 GB). Here 1,000 threads under a 2 GiB
 * file size limit (which the old way hit: "cannot keep the recording
 * rings in a file"), then _exit: the ring file holds a slot for each
 * thread alive at once, and its salvage keeps every thread's note and
 * call, each with its thread. */
Test(record, threads_made_one_after_another_reuse_the_rings_of_those_gone)
{
  char *db = tu_temp_path(".db"), *log = tu_temp_path(".out");
  const char *prog[] = {BIN "/record_prog", "churn", "1000", NULL};
  int st = run_prepared(prog, db, log, limit_files_to_2gib, NULL);
  char *out = tu_read_file(log);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 3, "status %d: %s", st, out);
  cr_assert(strstr(out, "1000 threads made a call each"), "%s", out);
  cr_assert_null(strstr(out, "pitrace:"), "%s", out);
  char file[1100] = "";
  cr_assert_eq(ring_files_at(db, NULL, 0, file, sizeof file), 1);
  struct stat rs;
  cr_assert_eq(stat(file, &rs), 0);
  /* A slot is 4 MiB (and a page): a thousand of them before; then as many
   * as threads began while the writer committed an exited one's last
   * records (30 to 70 here, hundreds from several threads at once on a
   * loaded machine); now the main thread's, the present one's and a
   * spare. */
  cr_assert_lt(rs.st_size, 4 * ((4ll << 20) + 4096) + (1 << 20), "ring file of %lld bytes",
               (long long)rs.st_size);
  salvage_with_pitrace(db);
  cr_assert_eq(ring_files(db), 0);
  cr_assert_eq(tu_db_int(db, "SELECT count(DISTINCT thread) FROM pi_calls WHERE api = "
                             "'piDeviceGetInfo' AND thread > 1"), 1000);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo' AND "
                             "thread > 1"), 1000);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM threads"), 1001);
  /* Each thread's note, with that thread's call: a ring read again by the
   * salvage may hold the last records of the thread before its present
   * one, not yet committed when it went on to the next. */
  cr_assert_eq(tu_db_int(db, NOTES_WITH_THEIR_THREADS), 1000, "%s", tu_db_lines(db, NOTES_SEEN));
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
}

/* A ring read again by a salvage may hold the last records of the thread
 * before its present one, not yet committed when it went to the next. */
Test(record, a_ring_handed_to_the_next_thread_keeps_each_notes_thread_when_salvaged)
{
  char *db = tu_temp_path(".db"), *log = tu_temp_path(".out");
  const char *prog[] = {BIN "/record_prog", "handover", NULL};
  int st = run_prepared(prog, db, log, NULL, NULL);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 3, "status %d: %s", st, tu_read_file(log));
  cr_assert_eq(ring_files(db), 1);
  salvage_with_pitrace(db);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piDeviceGetInfo' AND "
                             "thread > 1"), 30002);
  cr_assert_eq(tu_db_int(db, NOTES_WITH_THEIR_THREADS), 2, "%s", tu_db_lines(db, NOTES_SEEN));
}

static void enter_dir(const void *dir)
{
  if (chdir(dir) != 0)
    _exit(126);
}

/* SYCL_PI_RECORD relative to the directory the process started in, which
 * it leaves after its first call: the session and its ring file stay
 * there, and the ring file goes at the end. The ring file was left
 * behind (its removal looked for it in the new directory), and the
 * database could be opened in either, as the writer's thread got to it. */
Test(record, a_relative_path_stays_where_the_recording_began)
{
  char *top = tu_temp_path(""), a[600], b[600];
  cr_assert_eq(mkdir(top, 0700), 0);
  snprintf(a, sizeof a, "%s/a", top);
  snprintf(b, sizeof b, "%s/b", top);
  cr_assert_eq(mkdir(a, 0700), 0);
  cr_assert_eq(mkdir(b, 0700), 0);
  char *log = tu_temp_path(".out");
  const char *prog[] = {BIN "/record_prog", "chdir", b, NULL};
  int st = run_prepared(prog, "s.db", log, enter_dir, a);
  char *out = tu_read_file(log);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, out);
  char db[700];
  snprintf(db, sizeof db, "%s/s.db", a);
  cr_assert_eq(ring_files(db), 0, "the ring file was left behind");
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended FROM sessions"), "teardown\n");
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_args WHERE name = 'param_name' AND "
                              "value = 'PI_DEVICE_INFO_MAX_COMPUTE_UNITS'"), 101);
  cr_assert_eq(entries_in(b), 0, "files were made in the directory the process went to");
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
  cr_assert_eq(system(cmd), 0);
}

/* The recorder's own threads take none of the application's signals: a
 * SIGTERM that the kernel gave to the writer's thread (any thread that
 * does not block it may get it) ended the process without the writer
 * storing the session's end, which only a thread of the application's
 * can ask of it. The encoders blocked them already; the writer did not. */
Test(record, the_recorders_threads_block_every_signal)
{
  char *db = tu_temp_path(".db");
  const char *argv[] = {BIN "/record_prog", "sigmasks", NULL};
  char *out = run_recorded(argv, db, 0);
  const char *w = strstr(out, "thread pitrace-merge blocks ");
  cr_assert(w, "%s", out);
  unsigned long long mask = strtoull(w + strlen("thread pitrace-merge blocks "), NULL, 16);
  cr_assert_eq(mask & (1ull << (SIGTERM - 1)), 1ull << (SIGTERM - 1), "%s", out);
  cr_assert_eq(mask & (1ull << (SIGINT - 1)), 1ull << (SIGINT - 1), "%s", out);
}

/* Standard output into the pipe *fd, its signal's default action. */
static void output_into(const void *fd)
{
  dup2(*(const int *)fd, 1);
  signal(SIGPIPE, SIG_DFL);
}

/* `app | head`: a process that SIGPIPE ends keeps every call and says so,
 * as for any fatal signal. The recorder did not catch SIGPIPE: the
 * session was left to a salvage as "killed or _exit", with no signal. */
Test(record, a_process_ended_by_a_closed_pipe_says_so)
{
  char *db = tu_temp_path(".db"), *log = tu_temp_path(".out");
  int p[2];
  cr_assert_eq(pipe(p), 0);
  close(p[0]); /* the reader is gone, as `head` after its lines */
  const char *prog[] = {BIN "/record_prog", "quickexit", "300", NULL};
  int st = run_prepared(prog, db, log, output_into, &p[1]);
  close(p[1]);
  cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE, "status %d: %s", st, tu_read_file(log));
  cr_assert_eq(ring_files(db), 0);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended || ' ' || signal FROM sessions"), "signal 13\n");
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_args WHERE name = 'param_name' AND "
                              "value = 'PI_DEVICE_INFO_MAX_COMPUTE_UNITS'"), 300);
}

/* A process ending on SIGTERM whose writer cannot store its last calls
 * in the time the signal handler gives it (another process holds the
 * file): the salvage names the signal it was ending on, where it said
 * "the process ended without a word" before. */
Test(record, a_signal_the_writer_could_not_finish_in_is_named_by_the_salvage)
{
  char *db = tu_temp_path(".db");
  sqlite3 *w = one_session_then_held(db);
  char *log = tu_temp_path(".out");
  char *count = tu_temp_path(".count");
  const char *prog[] = {BIN "/record_prog", "count", count, NULL};
  pid_t pid = spawn_recording(prog, db, "terminated", log);
  /* Once its calls return (its ring file and handlers are in place by its
   * first call), and a little more. Waiting a fixed time from the ring
   * file's making instead, a loaded machine sent the signal now and then
   * before the program's first call, and the session had none. */
  for (int i = 0; i < 3000 && count_of(count) == 0; i++) {
    struct timespec nap = {0, 10000000};
    nanosleep(&nap, NULL);
  }
  cr_assert_gt(count_of(count), 0, "no call in 30 s: %s", tu_read_file(log));
  struct timespec nap = {0, 100000000};
  nanosleep(&nap, NULL);
  cr_assert_eq(kill(pid, SIGTERM), 0);
  int st = 0;
  waitpid(pid, &st, 0);
  cr_assert_eq(sqlite3_exec(w, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(w);
  cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %d: %s", st, tu_read_file(log));
  cr_assert_eq(ring_files(db), 1);
  salvage_with_pitrace(db);
  cr_assert_eq(ring_files(db), 0);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended || ' ' || signal || ' ' || exit_status FROM "
                                "sessions WHERE label = 'terminated'"), "killed 15 143\n");
  char *reason = tu_db_lines(db, "SELECT incomplete_reason FROM sessions WHERE label = "
                                 "'terminated'");
  cr_assert(strstr(reason, "the process was ending on signal 15 (Terminated) before its writer "
                           "stored its last calls; "), "%s", reason);
  cr_assert_gt(tu_db_int(db, "SELECT calls FROM sessions WHERE label = 'terminated'"), 0);
}

/* A session whose process is still recording shows as such, with its
 * pid (its ring file is locked by it), where it said "not known
 * (killed?)"; once that process is killed it is salvaged as killed. */
Test(record, a_session_being_recorded_shows_its_recording_process)
{
  char *db = tu_temp_path(".db"), *log = tu_temp_path(".out");
  const char *prog[] = {BIN "/record_prog", "threads", "1", "2000000000", NULL};
  pid_t pid = spawn_recording(prog, db, NULL, log);
  const char *argv[] = {BIN "/pitrace", "sessions", db, NULL};
  char *out = NULL, want[64];
  snprintf(want, sizeof want, "recording (pid %d)", (int)pid);
  for (int i = 0; i < 100 && !(out && strstr(out, want)); i++) { /* its first commit */
    struct timespec nap = {0, 50000000};
    nanosleep(&nap, NULL);
    free(out);
    tu_run(argv, NULL, &out);
  }
  kill(pid, SIGKILL);
  int st;
  waitpid(pid, &st, 0);
  cr_assert(strstr(out, want), "%s", out);
  /* Its ring file held by another reader salvaging it (here this test, as
   * a salvager holds it): not "recording (pid <that reader>)". */
  char file[1100] = "";
  cr_assert_eq(ring_files_at(db, NULL, 0, file, sizeof file), 1);
  int fd = open(file, O_RDWR | O_CLOEXEC);
  struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  cr_assert(fd >= 0 && fcntl(fd, F_SETLK, &lk) == 0, "%s", strerror(errno));
  cr_assert_eq(tu_run(argv, NULL, &out), 0, "%s", out);
  close(fd);
  cr_assert(strstr(out, "killed, not salvaged: its last calls wait in its ring file") &&
            !strstr(out, "recording (pid"), "%s", out);
  cr_assert_eq(tu_run(argv, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "killed or _exit: the process ended without a word; ") &&
            !strstr(out, "recording (pid"), "%s", out);
}

/* Session 2 of db: the held-out run's, made by the salvage, whole. */
static void assert_held_out_salvaged(const char *db, pid_t pid)
{
  salvage_with_pitrace(db);
  cr_assert_eq(ring_files(db), 0, "the ring file was not removed after salvage");
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended || ' ' || label || ' ' || data_mode FROM sessions "
                                "ORDER BY id"), "teardown  all\nkilled held out all\n");
  cr_assert_eq(tu_db_int(db, "SELECT pid FROM sessions WHERE id = 2"), pid);
  cr_assert(strstr(tu_db_lines(db, "SELECT command FROM sessions WHERE id = 2"), "quickexit 300"));
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE session = 2 AND api = "
                           "'piDeviceGetInfo' AND result = 'PI_SUCCESS'"), 300);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM calls WHERE session = 2"),
               tu_db_int(db, "SELECT calls FROM sessions WHERE id = 2"));
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM plugins WHERE session = 2"),
               tu_db_int(db, "SELECT count(*) FROM plugins WHERE session = 1"), "%s",
               tu_db_lines(db, "SELECT session, name FROM plugins"));
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
}

Test(record, a_process_that_ends_before_its_writer_opened_the_file_keeps_its_calls)
{
  char *db = tu_temp_path(".db");
  pid_t pid = run_held_out(db, 0);
  assert_held_out_salvaged(db, pid);
}

/* The next process to record into a path salvages what a killed one left
 * there, on its writer's thread: while another process holds the file,
 * that salvage waits for it there, and the application's calls go on (the
 * salvage used to run in the application's first call, which waited). */
Test(record, the_next_process_salvages_on_its_writer_thread_not_in_its_first_call)
{
  char *db = tu_temp_path(".db");
  pid_t pid = run_held_out(db, 120);
  salvage_with_pitrace(db);
  cr_assert_eq(ring_files(db), 0);
  cr_assert_str_eq(tu_db_lines(db, "SELECT ended || ' ' || label FROM sessions ORDER BY id"),
                   "teardown \nkilled \nkilled held out\n");
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE session = 2 AND api = "
                           "'piDeviceGetInfo' AND result = 'PI_SUCCESS'"), 120);
  cr_assert_eq(tu_db_int(db, "SELECT pid FROM sessions WHERE id = 3"), pid);
  cr_assert_geq(tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE session = 3 AND api = "
                           "'piDeviceGetInfo' AND result = 'PI_SUCCESS'"), 300);
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
}

/* A writer that made its row, said so in the ring file and died before
 * the commit: the row is rolled back, and its id may be another
 * process's row by the time of the salvage (here, the ring file names
 * session 1, the first run's). That row is not this process's (its pid and
 * start differ): the salvage leaves it alone and makes this one's. */
Test(record, a_ring_file_naming_another_process_session_gets_its_own)
{
  char *db = tu_temp_path(".db");
  long long calls1 = 0;
  pid_t pid = run_held_out(db, 0);
  calls1 = tu_db_int(db, "SELECT calls FROM sessions WHERE id = 1");
  char path[4096];
  size_t len;
  ringfile_hdr h;
  unsigned char *img = ring_image(db, path, sizeof path, &len, &h);
  cr_assert_eq(h.session, 0, "its writer never made its row");
  h.session = 1;
  memcpy(img, &h, sizeof h);
  ring_image_put(path, img, len);
  assert_held_out_salvaged(db, pid);
  cr_assert_eq(tu_db_int(db, "SELECT calls FROM sessions WHERE id = 1"), calls1);
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM calls WHERE session = 1"), calls1);
}

/* A process killed while it wrote into the file (mid-commit) leaves a
 * journal that must be rolled back before anyone reads: a verb, which
 * reads through a read-only connection, does it through a read-write one
 * and reads the session as it was before that write. */
Test(record, a_journal_left_by_a_killed_writer_is_rolled_back_by_the_next_reader)
{
  char *db = tu_temp_path(".db");
  const char *prog[] = {BIN "/record_prog", "threads", "1", "10", NULL};
  run_recorded(prog, db, 0);
  const char *argv[] = {BIN "/pitrace", "stats", db, NULL};
  char *before;
  cr_assert_eq(tu_run(argv, NULL, &before), 0, "%s", before);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) { /* a writer whose pages spill into the file, then killed */
    sqlite3 *w;
    if (sqlite3_open(db, &w) != SQLITE_OK ||
        sqlite3_exec(w, "PRAGMA cache_size=2; BEGIN IMMEDIATE; DELETE FROM call_chunks; "
                        "CREATE TABLE junk(x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
                        "SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO junk SELECT "
                        "randomblob(2000) FROM n;", NULL, NULL, NULL) != SQLITE_OK)
      _exit(1);
    kill(getpid(), SIGKILL);
  }
  int st;
  waitpid(pid, &st, 0);
  cr_assert(WIFSIGNALED(st), "the writer did not get as far as its kill");
  char *journal = malloc(strlen(db) + 16);
  sprintf(journal, "%s-journal", db);
  cr_assert_eq(access(journal, F_OK), 0, "no journal was left to roll back");
  char *after;
  cr_assert_eq(tu_run(argv, NULL, &after), 0, "%s", after);
  cr_assert_str_eq(after, before);
  cr_assert_str_eq(tu_db_lines(db, "PRAGMA integrity_check"), "ok\n");
  cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'junk'"), 0);
}

/* The shim is loaded late (dlopen) and reads its thread state through
 * initial-exec TLS, which must fit in the spare static TLS a process has
 * left: a Python process that had loaded OpenCV had too little for the
 * 1.6 KiB the shim used to take ("cannot allocate memory in static TLS
 * block": nothing recorded). With glibc's optional spare set to nothing,
 * vadd is still recorded. */
Test(record, the_shim_loads_where_little_static_tls_is_left)
{
  char *db = tu_temp_path(".db"), *out;
  const char *argv[] = {BIN "/vadd", NULL};
  const char *env[] = {env_kv("SYCL_PI_RECORD", db), POCL,
                       "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=0", NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert_null(strstr(out, "static TLS"), "%s", out);
  cr_assert(strstr(out, "result verified"), "%s", out);
  cr_assert_gt(
      tu_db_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piEnqueueKernelLaunch'"), 0);
}
