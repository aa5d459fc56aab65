/*
 * test_session_v1.c: a session of schema version 1, recorded once and
 * checked in (tests/fixtures/session-v1.db, tests/fixtures/README.md says
 * how it was made), stays readable by every verb: old captures always
 * open. Each verb runs on a copy of it, and its output is checked for what
 * the fixture holds (read from it with sqlite3, not only exit codes):
 * sessions, show in both formats, stats, export in each format, report,
 * diff against itself, replay on PoCL, extract of its first launch and
 * the replay of that. None of them changes the file.
 */
#include <criterion/criterion.h>

#include "testutil.h"

#define BIN PITRACE_BIN_DIR
#define PITRACE BIN "/pitrace"
#define FIXTURE PITRACE_SOURCE_DIR "/tests/fixtures/session-v1.db"
#define POCL "OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd"

static const char *const pocl_env[] = {POCL, NULL};

/* sqlite3's output for `text` on db, without its last newline. */
static char *sql(const char *db, const char *text)
{
  const char *argv[] = {"/usr/bin/sqlite3", "-cmd", TU_SQLITE_LOAD, db, text, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, NULL, &out), 0, "sqlite3 %s: %s", text, out);
  size_t n = strlen(out);
  if (n && out[n - 1] == '\n')
    out[n - 1] = 0;
  return out;
}

static long long sql_int(const char *db, const char *text)
{
  return atoll(sql(db, text));
}

/* pitrace ARGS... (NULL-terminated, at most 12) with env; exit status,
 * stdout and stderr together in *out. */
static int pitrace(const char *const *env, char **out, const char *const *args)
{
  const char *argv[16] = {"/usr/bin/timeout", "120", PITRACE};
  int n = 3;
  for (; *args && n < 15; args++)
    argv[n++] = *args;
  argv[n] = NULL;
  return tu_run(argv, env, out);
}

#define PT(env, out, ...) pitrace(env, out, (const char *const[]){__VA_ARGS__, NULL})

/* A copy of the fixture: verbs may leave -wal/-shm files beside what they
 * open, never in the source tree. */
static char *copy_of_fixture(void)
{
  char *db = tu_temp_path(".db"), *out;
  const char *argv[] = {"/bin/cp", FIXTURE, db, NULL};
  cr_assert_eq(tu_run(argv, NULL, &out), 0, "%s", out);
  return db;
}

static void assert_unchanged(const char *db)
{
  char *out;
  const char *argv[] = {"/usr/bin/cmp", FIXTURE, db, NULL};
  cr_assert_eq(tu_run(argv, NULL, &out), 0, "a verb changed the session: %s", out);
}

/* What the fixture is: a version-1 session of vadd on PoCL. Other tests
 * check their outputs against what is read here. */
static void assert_fixture(const char *db)
{
  cr_assert_str_eq(sql(db, "SELECT value FROM pitrace_meta WHERE key = 'schema_version'"), "1");
  cr_assert_str_eq(sql(db, "SELECT schema_version || ' ' || label || ' ' || ended FROM sessions"),
                   "1 session-v1-fixture teardown");
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM pi_calls"), 45);
}

static char *device_name(const char *db)
{
  char *v = sql(db, "SELECT value FROM pi_args WHERE name = 'param_value' AND seq IN (SELECT seq "
                    "FROM pi_args WHERE value = 'PI_DEVICE_INFO_NAME') AND value LIKE '\"%' "
                    "ORDER BY seq LIMIT 1");
  size_t n = strlen(v);
  cr_assert(n > 2 && v[n - 1] == '"', "no device name in %s", db);
  v[n - 1] = 0;
  return v + 1;
}

Test(session_v1, sessions_lists_the_recorded_session)
{
  char *db = copy_of_fixture(), *out;
  assert_fixture(db);
  cr_assert_eq(PT(NULL, &out, "sessions", db), 0, "%s", out);
  cr_assert(strstr(out, "session-v1-fixture"), "%s", out);
  cr_assert(strstr(out, sql(db, "SELECT command FROM sessions")), "%s", out);
  cr_assert(strstr(out, device_name(db)), "%s", out);
  cr_assert(strstr(out, " 45 "), "%s", out);
  cr_assert(strstr(out, "teardown"), "%s", out);
  cr_assert(strstr(out, "opencl"), "%s", out);
  assert_unchanged(db);
}

Test(session_v1, show_prints_every_call_in_both_formats)
{
  char *db = copy_of_fixture(), *out;
  cr_assert_eq(PT(NULL, &out, "show", db), 0, "%s", out);
  cr_assert_eq(tu_count(out, "---> pi"), 45, "%s", out);
  cr_assert(strstr(out, "---> piEnqueueKernelLaunch("), "%s", out);
  cr_assert(strstr(out, "\"vadd\""), "the kernel's name: %s", out);
  cr_assert(strstr(out, device_name(db)), "%s", out);

  cr_assert_eq(PT(NULL, &out, "show", "--compact", db), 0, "%s", out);
  /* Every recorded call, in order, on a line of its own with its result. */
  char *calls = sql(db, "SELECT group_concat(seq || ' T1 ' || api || '(', char(10)) FROM "
                        "(SELECT seq, api FROM pi_calls ORDER BY seq)");
  const char *from = out;
  for (char *line = strtok(calls, "\n"); line; line = strtok(NULL, "\n")) {
    const char *at = strstr(from, line);
    cr_assert(at, "no line \"%s\" (in order) in:\n%s", line, out);
    from = at + strlen(line);
  }
  cr_assert_eq(tu_count(out, ") = PI_SUCCESS"), 45, "%s", out);
  assert_unchanged(db);
}

Test(session_v1, stats_counts_the_calls_and_the_kernel)
{
  char *db = copy_of_fixture(), *out;
  cr_assert_eq(PT(NULL, &out, "stats", db), 0, "%s", out);
  cr_assert(strstr(out, "45 calls"), "%s", out);
  cr_assert(strstr(out, "0 failed, 0 never returned"), "%s", out);
  /* Each API with its count, as recorded. */
  char *per_api = sql(db, "SELECT group_concat(api || ' ' || n, char(10)) FROM (SELECT api, "
                          "count(*) AS n FROM pi_calls GROUP BY api)");
  for (char *line = strtok(per_api, "\n"); line; line = strtok(NULL, "\n")) {
    char api[128];
    int n;
    cr_assert_eq(sscanf(line, "%127s %d", api, &n), 2);
    char *row = strstr(out, api);
    cr_assert(row, "no %s in:\n%s", api, out);
    row += strlen(api);
    cr_assert_eq(strtol(row, NULL, 10), n, "%s: %s", api, out);
  }
  char *kernel = strstr(out, "\nvadd ");
  cr_assert(kernel, "no kernel vadd in:\n%s", out);
  cr_assert_eq(strtol(kernel + 5, NULL, 10), 1, "%s", out);
  assert_unchanged(db);
}

/* Checks an export with Python's json module; prints what `check` prints. */
static char *python(const char *program, const char *file)
{
  const char *argv[] = {"/usr/bin/python3", "-c", program, file, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, NULL, &out), 0, "%s", out);
  return out;
}

Test(session_v1, export_writes_every_call_in_each_format)
{
  char *db = copy_of_fixture(), *out;
  char *apis = sql(db, "SELECT group_concat(api, ' ') FROM (SELECT api FROM pi_calls ORDER BY "
                       "seq)");
  char *expect = NULL;
  cr_assert_geq(asprintf(&expect, "%s\n", apis), 0);

  char *jsonl = tu_temp_path(".jsonl");
  cr_assert_eq(PT(NULL, &out, "export", db, "--format", "jsonl", "-o", jsonl), 0, "%s", out);
  cr_assert_str_eq(python("import json, sys\n"
                          "calls = [json.loads(l) for l in open(sys.argv[1])]\n"
                          "assert [c['seq'] for c in calls] == list(range(1, 46)), calls\n"
                          "print(' '.join(c['api'] for c in calls))",
                          jsonl),
                   expect);

  char *csv = tu_temp_path(".csv");
  cr_assert_eq(PT(NULL, &out, "export", db, "--format", "csv", "-o", csv), 0, "%s", out);
  cr_assert_str_eq(python("import csv, sys\n"
                          "rows = list(csv.DictReader(open(sys.argv[1])))\n"
                          "assert [r['kernel'] for r in rows if r['api'] == "
                          "'piEnqueueKernelLaunch'] == ['vadd'], rows\n"
                          "print(' '.join(r['api'] for r in rows))",
                          csv),
                   expect);

  char *chrome = tu_temp_path(".json");
  cr_assert_eq(PT(NULL, &out, "export", db, "--format", "chrome", "-o", chrome), 0, "%s", out);
  cr_assert_str_eq(python("import json, sys\n"
                          "ev = json.load(open(sys.argv[1]))['traceEvents']\n"
                          "names = [e['args']['name'] for e in ev if e['ph'] == 'M']\n"
                          "assert 'build/bin/vadd 256 (session 1)' in names, names\n"
                          "calls = [e for e in ev if e['ph'] == 'X']\n"
                          "calls.sort(key=lambda e: e['args']['seq'])\n"
                          "k = [e['args']['kernel'] for e in calls if e['cat'] == 'kernel']\n"
                          "assert k == ['vadd'], k\n"
                          "print(' '.join(e['name'].split(':')[0] for e in calls))",
                          chrome),
                   expect);
  assert_unchanged(db);
}

Test(session_v1, report_writes_one_page_of_the_session)
{
  char *db = copy_of_fixture(), *out, *html = tu_temp_path(".html");
  cr_assert_eq(PT(NULL, &out, "report", db, "-o", html), 0, "%s", out);
  char *page = tu_read_file(html);
  cr_assert(page && strstr(page, "<html"), "%s", page ? page : "(no file)");
  cr_assert(strstr(page, "session-v1-fixture"), "the label is not in the report");
  cr_assert(strstr(page, "build/bin/vadd 256"), "the command is not in the report");
  cr_assert(strstr(page, device_name(db)), "the device is not in the report");
  cr_assert(strstr(page, "piEnqueueKernelLaunch"), "the launch is not in the report");
  cr_assert(strstr(page, "vadd"), "the kernel is not in the report");
  assert_unchanged(db);
}

Test(session_v1, diff_against_itself_is_the_same)
{
  char *db = copy_of_fixture(), *out;
  cr_assert_eq(PT(NULL, &out, "diff", db, db), 0, "%s", out);
  cr_assert(strstr(out, "45 matched calls"), "%s", out);
  cr_assert(strstr(out, "only in A 0, only in B 0; differences: 0 argument, 0 result, 0 info, "
                        "0 data, 0 note, 0 order: same"),
            "%s", out);
  assert_unchanged(db);
}

/* On PoCL, whatever its device is called on this machine (--backend): the
 * fixture was recorded on one CPU, and is replayed on others. */
Test(session_v1, replays_on_pocl_and_matches)
{
  char *db = copy_of_fixture(), *out;
  cr_assert_eq(PT(pocl_env, &out, "replay", db, "--backend", "opencl"), 0, "%s", out);
  cr_assert(strstr(out, "matched: "), "%s", out);
  cr_assert(strstr(out, "1 read-backs verified"), "%s", out);
  assert_unchanged(db);
}

Test(session_v1, its_first_launch_extracted_replays_and_matches)
{
  char *db = copy_of_fixture(), *out, *repro = tu_temp_path(".db");
  cr_assert_eq(PT(NULL, &out, "extract", db, "--kernel", "1", "-o", repro), 0, "%s", out);
  long long launch = sql_int(db, "SELECT min(seq) FROM pi_calls WHERE api = "
                                 "'piEnqueueKernelLaunch'");
  char *said = NULL;
  cr_assert_geq(asprintf(&said, "kernel launch 1 (seq %lld) of %s", launch, db), 0);
  cr_assert(strstr(out, said), "%s", out);
  /* The launch, and the read of its result holding the recorded bytes. */
  cr_assert_eq(sql_int(repro, "SELECT count(*) FROM pi_calls WHERE api = "
                              "'piEnqueueKernelLaunch'"),
               1);
  const char *read_hash = "SELECT hash FROM data_rows WHERE role = 'out' AND seq = (SELECT "
                          "max(seq) FROM pi_calls WHERE api = 'piEnqueueMemBufferRead')";
  char *want = sql(db, read_hash);
  cr_assert(strlen(want) > 0, "the fixture has no read-back row");
  cr_assert_str_eq(sql(repro, read_hash), want);
  cr_assert_eq(PT(pocl_env, &out, "replay", repro, "--backend", "opencl"), 0, "%s", out);
  cr_assert(strstr(out, "matched: "), "%s", out);
  cr_assert(strstr(out, "1 read-backs verified"), "%s", out);
  assert_unchanged(db);
}

/* Recording into a version-1 file makes it a version-2 one that keeps the
 * version-1 session as it was: both sessions read by every verb and by
 * the views. */
Test(session_v1, recording_into_it_adds_a_v2_session_beside_the_v1_one)
{
  char *db = copy_of_fixture(), *out, *rec = NULL;
  cr_assert_geq(asprintf(&rec, "SYCL_PI_RECORD=%s", db), 0);
  const char *env[] = {POCL, rec, NULL}, *argv[] = {BIN "/vadd", "64", NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert_str_eq(sql(db, "SELECT value FROM pitrace_meta WHERE key = 'schema_version'"), "2");
  cr_assert_str_eq(sql(db, "SELECT group_concat(id || ':' || schema_version, ' ') FROM sessions"),
                   "1:1 2:2");
  /* The sessions table gained the parent columns, and its view with them. */
  cr_assert_str_eq(sql(db, "SELECT count(*) FROM pi_sessions WHERE parent_pid IS NULL AND "
                           "parent_session IS NULL"), "2");
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM chunks WHERE session = 2"), 0);
  cr_assert_gt(sql_int(db, "SELECT count(*) FROM call_chunks WHERE session = 2"), 0);
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM pi_calls WHERE session = 1"), 45);
  long long v2 = sql_int(db, "SELECT count(*) FROM pi_calls WHERE session = 2");
  cr_assert_eq(v2, sql_int(db, "SELECT calls FROM sessions WHERE id = 2"));
  char n2[32];
  snprintf(n2, sizeof n2, "%lld calls", v2);
  cr_assert_eq(PT(NULL, &out, "stats", "--session", "1", db), 0, "%s", out);
  cr_assert(strstr(out, "45 calls"), "%s", out);
  cr_assert_eq(PT(NULL, &out, "stats", "--session", "2", db), 0, "%s", out);
  cr_assert(strstr(out, n2), "%s", out);
  cr_assert_eq(PT(NULL, &out, "diff", "--session-a", "1", db, FIXTURE), 0, "%s", out);
  cr_assert_eq(PT(pocl_env, &out, "replay", "--session", "2", db), 0, "%s", out);
}
