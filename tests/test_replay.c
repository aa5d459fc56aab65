/*
 * test_replay.c: pitrace replay and extract, and the replay plugin, on
 * sessions recorded here on PoCL (and replayed on rusticl): recorded
 * examples replay and match; a changed byte of recorded data is a
 * divergence named by call and offset; bad files are refused in one line;
 * threads that wait on each other replay without deadlock; a kernel cut
 * out of a session replays on its own; a replay is itself recorded; an
 * application re-runs against the replay plugin with no OpenCL at all.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <time.h>

#include "ex_sig.h"
#include "session.h"
#include "testutil.h"

#define BIN PITRACE_BIN_DIR
#define LIB PITRACE_LIB_DIR
#define PITRACE BIN "/pitrace"
#define POCL "OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd"
#define RUSTICL "OCL_ICD_VENDORS=/etc/OpenCL/vendors/rusticl.icd"
#define SWRAST "RUSTICL_ENABLE=swrast"

static char *kv(const char *name, const char *value)
{
  char *s = NULL;
  cr_assert_geq(asprintf(&s, "%s=%s", name, value), 0);
  return s;
}

/* Runs SQL on a database with the sqlite3 shell (the session library's
 * extension loaded: the views of version-2 sessions); its output. */
static char *sql(const char *db, const char *text)
{
  const char *argv[] = {"/usr/bin/sqlite3", "-cmd", TU_SQLITE_LOAD, db, text, NULL};
  char *out;
  cr_assert_eq(tu_run(argv, NULL, &out), 0, "sqlite3 %s: %s", text, out);
  return out;
}

static long long sql_int(const char *db, const char *text)
{
  return atoll(sql(db, text));
}

/* Changes the first 4 bytes of the payloads whose data_rows `where`
 * selects, in db: a recording that no longer matches what a replay sees. */
static void spoil_payloads(const char *db, const char *where)
{
  char *text = NULL;
  cr_assert_geq(asprintf(&text, "UPDATE blobs SET content = x'5A5A5A5A' || substr(content, 5) "
                                "WHERE hash IN (SELECT hash FROM data_rows WHERE %s)", where), 0);
  sql(db, text);
  free(text);
}

/* The session's chunks as version-1 ones (testutil.h), for edits. */
static void as_v1_chunks(const char *db) { sql(db, TU_AS_V1_CHUNKS); }

/* The seq of the first call of `api` in a session. Seqs count every call
 * the runtime made, plugin discovery included, so they depend on how many
 * plugins and platforms this machine has: take them from the session. */
static long long first_seq(const char *db, const char *api)
{
  char *q = NULL;
  cr_assert_geq(asprintf(&q, "SELECT coalesce(min(seq), 0) FROM pi_calls WHERE api = '%s'", api),
                0);
  long long seq = sql_int(db, q);
  cr_assert_gt(seq, 0, "no %s call in %s", api, db);
  free(q);
  return seq;
}

/* The recorded PI_DEVICE_INFO_NAME answer, unquoted. */
static char *recorded_device_name(const char *db)
{
  char *v = sql(db, "SELECT value FROM pi_args WHERE name = 'param_value' AND seq IN (SELECT seq "
                    "FROM pi_args WHERE value = 'PI_DEVICE_INFO_NAME') AND value LIKE '\"%' "
                    "ORDER BY seq LIMIT 1");
  v[strcspn(v, "\n")] = 0;
  cr_assert(strlen(v) > 2 && v[strlen(v) - 1] == '"', "no device name recorded in %s", db);
  v[strlen(v) - 1] = 0;
  return v + 1;
}

/* Records `prog [arg]` into a new database (extra: one more NAME=value). */
static char *record(const char *prog, const char *arg, const char *extra)
{
  char *db = tu_temp_path(".db"), *path = NULL, *out;
  cr_assert_geq(asprintf(&path, "%s/%s", BIN, prog), 0);
  const char *argv[] = {path, arg, NULL};
  const char *env[] = {kv("SYCL_PI_RECORD", db), POCL, extra, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "result verified"), "%s", out);
  return db;
}

/* pitrace VERB args... with env; returns the exit status, output in *out. */
static int pitrace(const char *const *args, const char *const *env, char **out)
{
  const char *argv[16] = {"/usr/bin/timeout", "120", PITRACE};
  int n = 3;
  for (; *args && n < 15; args++)
    argv[n++] = *args;
  argv[n] = NULL;
  return tu_run(argv, env, out);
}

static int replay(const char *db, const char *opt, const char *val, const char *const *env,
                  char **out)
{
  const char *args[] = {"replay", db, opt, val, NULL};
  return pitrace(args, env, out);
}

static const char *const pocl_env[] = {POCL, NULL};
static const char *const rusticl_env[] = {RUSTICL, SWRAST, NULL};

/* ---- Replaying on a device --------------------------------------------------------- */

Test(replay, examples_recorded_on_pocl_replay_and_match)
{
  const char *progs[] = {"vadd", "shared_lib", "spec_const", "pipeline"};
  for (size_t i = 0; i < 4; i++) {
    char *db = record(progs[i], NULL, NULL), *out;
    cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 0, "%s: %s", progs[i], out);
    cr_assert(strstr(out, "matched: "), "%s", out);
    cr_assert(strstr(out, "1 read-backs verified"), "%s: %s", progs[i], out);
  }
}

Test(replay, the_same_sessions_replay_on_rusticl_by_backend_or_device)
{
  char *vadd = record("vadd", NULL, NULL), *spec = record("spec_const", NULL, NULL);
  char *lib = record("shared_lib", NULL, NULL), *out;
  /* The recorded PoCL device is not there: a clear refusal. */
  cr_assert_eq(replay(vadd, NULL, NULL, rusticl_env, &out), 2, "%s", out);
  cr_assert(strstr(out, "is not available here; choose one with --backend or --device"), "%s",
            out);
  /* It names a filter for each device there, which selects it. */
  const char *named = strstr(out, "(here: --device ");
  cr_assert(named, "%s", out);
  char filter[64];
  cr_assert_eq(sscanf(named, "(here: --device %63s", filter), 1, "%s", out);
  cr_assert_eq(replay(vadd, "--device", filter, rusticl_env, &out), 0, "%s: %s", filter, out);
  cr_assert(strstr(out, "matched: ") && strstr(out, "llvmpipe"), "%s", out);
  cr_assert_eq(replay(vadd, "--backend", "opencl", rusticl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "matched: ") && strstr(out, "llvmpipe"), "%s", out);
  char *note = NULL;
  cr_assert_geq(asprintf(&note, "note: recorded on \"%s\" (opencl), replayed on \"",
                         recorded_device_name(vadd)), 0);
  cr_assert(strstr(out, note), "no '%s' in:\n%s", note, out);
  cr_assert_eq(replay(spec, "--device", "opencl:cpu:0", rusticl_env, &out), 0, "%s", out);
  /* llvmpipe rounds libmathdev's polynomial differently in the last bits. */
  const char *args[] = {"replay", lib, "--backend", "opencl", "--tolerance", "1e-5", NULL};
  cr_assert_eq(pitrace(args, rusticl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "matched: "), "%s", out);
}

/* shared_lib's results differ from PoCL's in their last bits on rusticl:
 * replayed there without --tolerance it diverges, and the divergence said
 * where the bytes differ but not that the device changed, nor what to do
 * about it. It says both now; on the recorded device (a spoiled byte) it
 * does not. */
Test(replay, a_data_divergence_on_another_device_names_tolerance)
{
  char *lib = record("shared_lib", NULL, NULL), *out;
  const char *hint = "(replayed on another device than the recorded one: to compare its "
                     "results as floats within a tolerance, give --tolerance X)";
  cr_assert_eq(replay(lib, "--backend", "opencl", rusticl_env, &out), 1, "%s", out);
  cr_assert(strstr(out, "differs from the recording at byte offset"), "%s", out);
  cr_assert(strstr(out, hint), "%s", out);
  spoil_payloads(lib, "role = 'out'");
  cr_assert_eq(replay(lib, NULL, NULL, pocl_env, &out), 1, "%s", out);
  cr_assert(strstr(out, "differs from the recording"), "%s", out);
  cr_assert_null(strstr(out, "--tolerance"), "%s", out);
}

Test(replay, a_build_that_fails_on_the_replay_device_shows_its_log)
{
  /* Doubles build on PoCL, not on rusticl (no fp64): the replay stopped at
   * piProgramBuild with nothing but PI_ERROR_BUILD_PROGRAM_FAILURE. */
  char *db = tu_temp_path(".db"), *out;
  const char *argv[] = {BIN "/record_prog", "fp64", NULL};
  const char *env[] = {kv("SYCL_PI_RECORD", db), POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert_eq(replay(db, "--backend", "opencl", rusticl_env, &out), 1, "%s", out);
  cr_assert(strstr(out, "result: expected PI_SUCCESS, got PI_ERROR_BUILD_PROGRAM_FAILURE\n"
                        "  build log on the replay's device:\n    "), "%s", out);
  cr_assert(strstr(out, "requires cl_khr_fp64"), "%s", out);
}

/* The hex of the first read-back payload and where it is stored. */
static char *readback_hex(const char *db)
{
  char *hex = sql(db, "SELECT hex FROM data WHERE role = 'out' AND seq = (SELECT max(seq) FROM "
                      "pi_calls WHERE api = 'piEnqueueMemBufferRead')");
  hex[strcspn(hex, "\n")] = 0;
  return hex;
}

Test(replay, a_changed_byte_of_a_large_read_back_diverges_at_that_call_and_offset)
{
  char *db = record("vadd", NULL, NULL), *out;
  long long seq = sql_int(db, "SELECT seq FROM pi_calls WHERE api = 'piEnqueueMemBufferRead'");
  sql(db, "UPDATE blobs SET content = substr(content, 1, 100) || x'5A' || substr(content, 102) "
          "WHERE hash = (SELECT hash FROM data_rows WHERE role = 'out')");
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 1, "%s", out);
  char *want = NULL;
  cr_assert_geq(asprintf(&want, "diverged at seq %lld (thread 1): piEnqueueMemBufferRead", seq), 0);
  cr_assert(strstr(out, want), "%s", out);
  cr_assert(strstr(out, "---> piEnqueueMemBufferRead(\n\tpi_queue queue : "), "%s", out);
  cr_assert(strstr(out, "differs from the recording at byte offset 100 (element 25 of 4-byte "
                        "elements)"), "%s", out);
  cr_assert(strstr(out, "1 of 1024 elements differ"), "%s", out);
  /* --to stops before it: what came before still matches. */
  char to[32];
  snprintf(to, sizeof to, "%lld", seq - 1);
  cr_assert_eq(replay(db, "--to", to, pocl_env, &out), 0, "%s", out);
}

static char *record_opencl_app(const char *prog, const char *data_mode, const char *arg);

/* A read-back the recording kept only the first bytes of (a data cap,
 * SYCL_PI_RECORD_DATA_CAP, keeps a payload's first bytes: here made by
 * cutting the read's 4096 bytes to 1000): replay compared none of it and
 * said nothing, "matched" with the read not counted, so a wrong result in
 * the kept bytes went unseen. Now the kept bytes are compared, and a note
 * says the rest are not. */
Test(replay, a_read_back_kept_in_part_is_compared_over_what_was_kept)
{
  char *db = record("vadd", NULL, NULL), *out;
  long long seq = first_seq(db, "piEnqueueMemBufferRead");
  sql(db, "UPDATE blobs SET content = substr(content, 1, 1000) "
          "WHERE hash = (SELECT hash FROM data_rows WHERE role = 'out')");
  sql(db, "UPDATE data_rows SET stored = 1000 WHERE role = 'out'");
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 0, "%s", out);
  char *want = NULL;
  cr_assert_geq(asprintf(&want, "note: seq %lld piEnqueueMemBufferRead: only the first 1000 of "
                                "the 4096 bytes written to parameter ptr compared", seq), 0);
  cr_assert(strstr(out, want), "%s", out);
  cr_assert(strstr(out, "1 read-backs verified; 1 notes"), "%s", out);
  sql(db, "UPDATE blobs SET content = substr(content, 1, 100) || x'5A' || substr(content, 102) "
          "WHERE hash = (SELECT hash FROM data_rows WHERE role = 'out')");
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 1, "%s", out);
  cr_assert(strstr(out, "differs from the recording at byte offset 100"), "%s", out);
  /* An image read (host memory sized by nothing but the recording): the
   * device writes all 13968 bytes it wrote when recorded, not the 1000
   * kept (under ASan: no overflow of a scratch of 1000). */
  char *img = record_opencl_app("image_app", "all", NULL);
  sql(img, "UPDATE blobs SET content = substr(content, 1, 1000) WHERE hash = (SELECT hash FROM "
           "data_rows WHERE role = 'out' AND size = 13968)");
  sql(img, "UPDATE data_rows SET stored = 1000 WHERE role = 'out' AND size = 13968");
  cr_assert_eq(replay(img, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "piEnqueueMemImageRead: only the first 1000 of the 13968 bytes written to "
                        "parameter ptr compared"), "%s", out);
}

Test(replay, a_changed_byte_of_an_inline_read_back_diverges)
{
  char *db = record("vadd", "8", NULL), *out;
  char *hex = readback_hex(db), *bad = strdup(hex), *upd = NULL;
  cr_assert_eq(strlen(hex), 64, "%s", hex); /* 8 floats, inline in the call */
  bad[9] = bad[9] == '1' ? '2' : '1';        /* byte 4: element 1 */
  as_v1_chunks(db);
  cr_assert_geq(asprintf(&upd, "UPDATE chunks SET calls = replace(calls, '%s', '%s')", hex, bad),
                0);
  sql(db, upd);
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 1, "%s", out);
  cr_assert(strstr(out, "piEnqueueMemBufferRead"), "%s", out);
  cr_assert(strstr(out, "at byte offset 4 (element 1 of 4-byte elements)"), "%s", out);
}

Test(replay, tolerance_accepts_a_last_bit_difference_and_not_more)
{
  char *db = record("vadd", "8", NULL), *out;
  char *hex = readback_hex(db), *near = strdup(hex), *far = strdup(hex), *upd = NULL;
  near[9] = near[9] == '0' ? '1' : '0'; /* the lowest bits of element 1's mantissa */
  far[14] = far[14] == '4' ? '3' : '4'; /* its exponent */
  as_v1_chunks(db);
  cr_assert_geq(asprintf(&upd, "UPDATE chunks SET calls = replace(calls, '%s', '%s')", hex, near),
                0);
  sql(db, upd);
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 1, "%s", out);
  cr_assert_eq(replay(db, "--tolerance", "1e-6", pocl_env, &out), 0, "%s", out);
  cr_assert_geq(asprintf(&upd, "UPDATE chunks SET calls = replace(calls, '%s', '%s')", near, far),
                0);
  sql(db, upd);
  cr_assert_eq(replay(db, "--tolerance", "1e-6", pocl_env, &out), 1, "%s", out);
  cr_assert(strstr(out, "beyond the tolerance"), "%s", out);
  /* An infinity recorded: within any tolerance of nothing but itself (the
   * scale made the bound infinite too, and it "matched"). */
  char *inf = strdup(far);
  memcpy(inf + 8, "0000807f", 8); /* element 1: +inf */
  cr_assert_geq(asprintf(&upd, "UPDATE chunks SET calls = replace(calls, '%s', '%s')", far, inf),
                0);
  sql(db, upd);
  cr_assert_eq(replay(db, "--tolerance", "1e-6", pocl_env, &out), 1, "%s", out);
  cr_assert(strstr(out, "beyond the tolerance"), "%s", out);
}

/* What --tolerance compares as floats (replay's check, diff's): float
 * results within it, and not integers or bytes read as floats. Every
 * int32 from 1 to 2^29 reads as a float below 2^-64, within any absolute
 * tolerance of every other: a cross-device replay with --tolerance 1e-4
 * of a kernel writing get_local_size(0) (512 on PoCL, 1024 on rusticl)
 * said "matched"; the int32 -1 and -2 are both NaNs, and NaN equalled
 * NaN. */
static bool within(uint32_t a, uint32_t b, double tolerance)
{
  pt_data_diff d;
  return pt_data_compare((const unsigned char *)&a, (const unsigned char *)&b, 4, tolerance,
                         false, &d);
}

static uint32_t float_bits(float f)
{
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

Test(replay, tolerance_compares_floats_and_not_integers_read_as_floats)
{
  /* Floats: last bits, absolute below 1, NaNs of two devices. */
  cr_assert(within(float_bits(75.5f), float_bits(75.50001f), 1e-6));
  cr_assert(!within(float_bits(75.5f), float_bits(75.6f), 1e-6));
  cr_assert(within(float_bits(1e-9f), float_bits(0.0f), 1e-6));
  cr_assert(within(float_bits(0.0f), float_bits(-0.0f), 1e-6));
  cr_assert(within(0x7fc00000u, 0xffc00000u, 1e-6));
  cr_assert(within(0x7fffffffu, 0x7fc00000u, 1e-6));
  /* Integers: compared bitwise. */
  cr_assert(!within(512, 1024, 1e-4));
  cr_assert(!within(0, 5, 1e-4));
  cr_assert(!within(100000000, 100000001, 1e-4));
  cr_assert(!within(0xffffffffu, 0xfffffffeu, 1e-4)); /* -1, -2 */
  cr_assert(within(42, 42, 1e-4));
  /* RGBA bytes with an opaque alpha: huge, or NaNs of other data. */
  cr_assert(!within(0xff102030u, 0xff102031u, 1e-4));
  cr_assert(!within(0xff902030u, 0xff902031u, 1e-4));
  /* Doubles the same way, with --f64. */
  double x = 1.0, y = 1.0 + 1e-12;
  uint64_t i = 512, j = 1024;
  pt_data_diff d;
  cr_assert(pt_data_compare((const unsigned char *)&x, (const unsigned char *)&y, 8, 1e-9, true,
                            &d));
  cr_assert(!pt_data_compare((const unsigned char *)&i, (const unsigned char *)&j, 8, 1e-9, true,
                             &d));
}

/* ---- Bad input --------------------------------------------------------------------------- */

/* One line on stderr, exit status 2, mentioning `why`. */
/* Lines of out that are pitrace's: AddressSanitizer's "==PID==WARNING:
 * failed to allocate" (an impossible size, in the sanitizer build) is not. */
static char *own_lines(const char *out)
{
  char *own = calloc(1, strlen(out) + 1);
  for (const char *line = out; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line + 1) : strlen(line);
    if (strncmp(line, "==", 2) != 0)
      strncat(own, line, len);
    line += len;
  }
  return own;
}

static void refused(const char *db, const char *why)
{
  char *out;
  int st = replay(db, NULL, NULL, pocl_env, &out);
  cr_assert_eq(st, 2, "%s: status %d: %s", db, st, out);
  out = own_lines(out);
  cr_assert(strstr(out, why), "%s", out);
  cr_assert_eq(tu_count(out, "\n"), 1, "not one line: %s", out);
  cr_assert(strncmp(out, "pitrace replay: ", 16) == 0, "%s", out);
}

Test(replay, bad_files_are_refused_in_one_line)
{
  char *vadd = record("vadd", NULL, NULL), *cmd = NULL;
  refused("/nonexistent/session.db", "No such file or directory");
  refused(tu_write_temp(".db", ""), "is empty");
  refused(tu_write_temp(".db", "this is no database at all, just some text......\n"),
          "not a pitrace session (not an SQLite database");
  /* Truncated: the header survives, the pages do not. */
  char *trunc = tu_temp_path(".db");
  cr_assert_geq(asprintf(&cmd, "head -c 8192 %s > %s", vadd, trunc), 0);
  cr_assert_eq(system(cmd), 0);
  refused(trunc, "damaged or truncated");
  /* Another program's SQLite database. */
  char *foreign = tu_temp_path(".db");
  sql(foreign, "CREATE TABLE t(x); INSERT INTO t VALUES (1);");
  refused(foreign, "not a pitrace session (no pitrace_meta table)");
  /* A newer schema. */
  char *newer = record("vadd", NULL, NULL);
  sql(newer, "UPDATE pitrace_meta SET value = '3' WHERE key = 'schema_version'");
  refused(newer, "schema version 3; this pitrace reads version 2");
  /* Data blobs gone. */
  sql(vadd, "DELETE FROM blobs");
  refused(vadd, "is missing from the file (its blob is gone");
}

Test(replay, usage_errors_and_help)
{
  char *out;
  const char *help[] = {"replay", "--help", NULL}, *none[] = {"replay", NULL},
             *bad[] = {"replay", "x.db", "--tolerance", "much", NULL},
             *both[] = {"replay", "x.db", "--backend", "opencl", "--device", "cpu", NULL},
             *ehelp[] = {"extract", "--help", NULL}, *enone[] = {"extract", "x.db", NULL};
  cr_assert_eq(pitrace(help, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "usage: pitrace replay SESSION.db"), "%s", out);
  cr_assert_eq(pitrace(none, NULL, &out), 2, "%s", out);
  cr_assert_eq(pitrace(bad, NULL, &out), 2, "%s", out);
  cr_assert(strstr(out, "bad argument 'much'"), "%s", out);
  bad[3] = "inf"; /* every difference within it: no comparison at all */
  cr_assert_eq(pitrace(bad, NULL, &out), 2, "%s", out);
  cr_assert(strstr(out, "bad argument 'inf': --tolerance wants a finite number"), "%s", out);
  /* A number too large is said so ("wants a number" sent users looking). */
  const char *large[] = {"replay", "x.db", "--to", "99999999999999999999", NULL};
  cr_assert_eq(pitrace(large, NULL, &out), 2, "%s", out);
  cr_assert(strstr(out, "bad argument '99999999999999999999': --to is out of range"), "%s", out);
  cr_assert_eq(pitrace(both, NULL, &out), 2, "%s", out);
  /* An empty filter, as --backend "" is: refused, where the replay went to
   * the first device. */
  const char *empty[] = {"replay", "x.db", "--device", "", NULL};
  cr_assert_eq(pitrace(empty, NULL, &out), 2, "%s", out);
  cr_assert(strstr(out, "--device is empty: give a filter such as opencl:cpu:0"), "%s", out);
  cr_assert_eq(pitrace(ehelp, NULL, &out), 0, "%s", out);
  cr_assert_eq(pitrace(enone, NULL, &out), 2, "%s", out);
}

/* replay and extract read their options as every verb does: --opt=VALUE
 * as well as --opt VALUE, -oFILE as well as -o FILE. */
Test(replay, options_take_their_value_in_every_form)
{
  char *db = record("vadd", NULL, NULL), *repro = tu_temp_path(".db"), *out;
  const char *eq[] = {"replay", "--session=1", "--tolerance=0", db, NULL};
  cr_assert_eq(pitrace(eq, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "matched: "), "%s", out);
  const char *none[] = {"replay", "--session=7", db, NULL};
  cr_assert_eq(pitrace(none, pocl_env, &out), 2, "%s", out);
  cr_assert(strstr(out, "has no session 7"), "%s", out);
  const char *ex[] = {"extract", db, "--kernel=1", "--session=1", "--output", repro, NULL};
  cr_assert_eq(pitrace(ex, NULL, &out), 0, "%s", out);
  cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%s", out);
  char *short_o = NULL;
  cr_assert_geq(asprintf(&short_o, "-o%s", repro), 0);
  const char *ex2[] = {"extract", "--kernel", "1", short_o, db, NULL};
  cr_assert_eq(pitrace(ex2, NULL, &out), 0, "%s", out);
  const char *flag[] = {"replay", "--stats=1", db, NULL};
  cr_assert_eq(pitrace(flag, pocl_env, &out), 2, "%s", out);
  cr_assert(strstr(out, "pitrace replay: --stats takes no value"), "%s", out);
  free(short_o);
}

static int extract(const char *db, const char *kernel, const char *repro, char **out);

/* A copy of db whose first call of `api` has JSON path `at` of its arguments
 * replaced by the SQL expression `value` (which may use `args`). */
static char *damaged(const char *db, const char *api, const char *at, const char *value)
{
  char *copy = tu_temp_path(".db"), *cmd = NULL, *update = NULL;
  cr_assert_geq(asprintf(&cmd, "cp %s %s", db, copy), 0);
  cr_assert_eq(system(cmd), 0);
  as_v1_chunks(copy);
  const char *match = "json_extract(value, '$[3]') = (SELECT id FROM pi_api WHERE name = '%s')";
  char *m = NULL;
  cr_assert_geq(asprintf(&m, match, api), 0);
  cr_assert_geq(asprintf(&update,
                         "UPDATE chunks SET calls = (SELECT json_replace(calls, '$[' || key || "
                         "'][7]%s', (SELECT %s FROM (SELECT json_extract(value, '$[7]') AS args))"
                         ") FROM json_each(chunks.calls) WHERE %s LIMIT 1) WHERE EXISTS (SELECT "
                         "1 FROM json_each(chunks.calls) WHERE %s)",
                         at, value, m, m),
                0);
  sql(copy, update);
  return copy;
}

/* Damaged counts, sizes and argument lists: one line and exit 2 from replay
 * (naming the call), extract and the replay plugin, never a crash. */
Test(replay, damaged_counts_and_arguments_are_refused_in_one_line)
{
  char *vadd = record("vadd", NULL, NULL), *out, *why = NULL;
  /* The calls damaged (each the first of its API) and the first buffer
   * created from host data, by their seqs in this session. */
  long long source = first_seq(vadd, "piclProgramCreateWithSource");
  long long buffer = first_seq(vadd, "piMemBufferCreate");
  long long host_buffer = sql_int(vadd, "SELECT coalesce(min(d.seq), 0) FROM data d JOIN pi_calls "
                                        "c USING (session, seq) WHERE c.api = "
                                        "'piMemBufferCreate' AND d.role = 'in'");
  cr_assert_gt(host_buffer, 0, "vadd created no buffer from host data");
  cr_assert_geq(asprintf(&why, "seq %lld piclProgramCreateWithSource: parameter strings needs more "
                               "memory than there is (a size or count in the recording may be "
                               "damaged)", source), 0);
  refused(damaged(vadd, "piclProgramCreateWithSource", "[1]", "2305843009213693953"), why);
  refused(damaged(vadd, "piEnqueueMemBufferRead", "[4]", "2305843009213693953"),
          "piEnqueueMemBufferRead: parameter ptr needs more memory than there is");
  char *shorter = damaged(vadd, "piMemBufferCreate", "", "json_remove(args, '$[#-1]')");
  cr_assert_geq(asprintf(&why, "is damaged: seq %lld piMemBufferCreate has 5 recorded arguments, "
                               "not 6", buffer), 0);
  refused(shorter, why);
  cr_assert_eq(extract(shorter, "1", tu_temp_path(".db"), &out), 2, "%s", out);
  cr_assert(strstr(out, why) && tu_count(out, "\n") == 1, "%s", out);
  const char *argv[] = {BIN "/vadd", NULL};
  const char *env[] = {kv("SYCL_PI_REPLAY", shorter), "OCL_ICD_VENDORS=/nonexistent", NULL};
  cr_assert_eq(tu_run(argv, env, &out), 2, "%s", out);
  cr_assert(strstr(out, "pitrace replay plugin: ") && strstr(out, why), "%s", out);
  /* Blobs gone: extract says so and writes nothing, whether the data is a
   * buffer's contents it follows or a program source it copies. */
  /* (args replaced by themselves: a plain copy to damage otherwise) */
  char *no_source = damaged(vadd, "piQueueFinish", "", "args"), *repro = tu_temp_path(".db");
  sql(no_source, "DELETE FROM blobs WHERE hash IN (SELECT hash FROM data_rows WHERE seq = "
                 "(SELECT seq FROM pi_calls WHERE api = 'piclProgramCreateWithSource'))");
  cr_assert_eq(extract(no_source, "1", repro, &out), 2, "%s", out);
  cr_assert_geq(asprintf(&why, "seq %lld piclProgramCreateWithSource: the in data of parameter "
                               "strings is missing from the file (its blob is gone", source), 0);
  cr_assert(strstr(out, why), "no '%s' in: %s", why, out);
  sql(no_source, "DELETE FROM blobs");
  cr_assert_eq(extract(no_source, "1", repro, &out), 2, "%s", out);
  cr_assert_geq(asprintf(&why, "seq %lld piMemBufferCreate: the in data of parameter host_ptr is "
                               "missing from the file", host_buffer), 0);
  cr_assert(strstr(out, why), "no '%s' in: %s", why, out);
  cr_assert_eq(access(repro, F_OK), -1, "a repro was written: %s", repro);
}

/* A program an application made from a binary (pyopencl's cache of
 * built programs, here warmed by a first run) is the recorded platform's
 * own: replayed on a device of another platform, replay refuses it in one
 * line naming both platforms and what to do (rusticl given PoCL's binary
 * aborted the replay); on the recorded platform it replays. */
Test(replay, a_program_binary_is_not_handed_to_another_platform)
{
  tu_need_pyopencl();
  const char *script =
    "import numpy as np, pyopencl as cl\n"
    "ctx = cl.create_some_context(interactive=False); q = cl.CommandQueue(ctx)\n"
    "p = cl.Program(ctx, '__kernel void inc(__global int *x) { x[get_global_id(0)] += 1; }')"
    ".build()\n"
    "x = np.arange(64, dtype=np.int32); b = cl.Buffer(ctx, cl.mem_flags.COPY_HOST_PTR | "
    "cl.mem_flags.READ_WRITE, hostbuf=x)\n"
    "p.inc(q, (64,), None, b); y = np.empty_like(x); cl.enqueue_copy(q, y, b)\n"
    "print('inc: result verified' if (y == x + 1).all() else 'inc: WRONG')\n";
  char *cache = tu_temp_path(".cache"), *dir[2], *out;
  for (int k = 0; k < 2; k++) {
    dir[k] = tu_temp_path(".d");
    const char *argv[] = {PITRACE, "record", "-o", dir[k], "--", "/usr/bin/python3", "-c", script,
                          NULL};
    const char *env[] = {POCL, kv("XDG_CACHE_HOME", cache), NULL};
    cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
    cr_assert(strstr(out, "inc: result verified"), "%s", out);
  }
  const char *count[] = {"sql", dir[1], "SELECT count(*) FROM pi_calls WHERE api = "
                         "'piProgramCreateWithBinary'", NULL};
  cr_assert_eq(pitrace(count, NULL, &out), 0, "%s", out);
  cr_assert_str_eq(out, "1\n", "the second run did not take its program from the cache");
  const char *args[] = {"replay", dir[1], "--backend", "opencl", NULL};
  cr_assert_eq(pitrace(args, rusticl_env, &out), 2, "%s", out);
  cr_assert(strstr(out, "piProgramCreateWithBinary: the program is a binary that platform "
                        "\"Portable Computing Language\" made, which \"rusticl\" cannot take; "
                        "replay on a device of \"Portable Computing Language\", or record the "
                        "application with its binary cache off"), "%s", out);
  cr_assert_eq(replay(dir[1], NULL, NULL, pocl_env, &out), 0, "%s", out);
  /* The first run built it from source: that replays on rusticl. */
  cr_assert_eq(replay(dir[0], "--backend", "opencl", rusticl_env, &out), 0, "%s", out);
}

/* A pyopencl program that makes a context on rusticl's device, then one
 * on PoCL's, each running a kernel from the program `build` makes (a line
 * of Python setting p from ctx, d and src), recorded into a directory
 * (returned) with both platforms' ICDs in env (4 entries). */
static char *record_on_both_platforms(const char *build, const char *env[4])
{
  tu_need_pyopencl();
  char script[2048];
  snprintf(script, sizeof script,
           "import numpy as np, pyopencl as cl\n"
           "src = '__kernel void inc(__global int *x) { x[get_global_id(0)] += 1; }'\n"
           "by = {p.name: p for p in cl.get_platforms()}\n"
           "for name in ('rusticl', 'Portable Computing Language'):\n"
           "  d = by[name].get_devices()[0]; ctx = cl.Context([d]); q = cl.CommandQueue(ctx)\n"
           "  %s\n"
           "  x = np.arange(64, dtype=np.int32); b = cl.Buffer(ctx, cl.mem_flags.COPY_HOST_PTR | "
           "cl.mem_flags.READ_WRITE, hostbuf=x)\n"
           "  p.inc(q, (64,), None, b); y = np.empty_like(x); cl.enqueue_copy(q, y, b)\n"
           "  print(name, 'verified' if (y == x + 1).all() else 'WRONG')\n", build);
  char *vendors = tu_temp_path(""), *dir = tu_temp_path(".d"), *out;
  cr_assert_eq(mkdir(vendors, 0700), 0);
  const char *icds[] = {"pocl.icd", "rusticl.icd"};
  for (int k = 0; k < 2; k++) {
    char from[64], to[512];
    snprintf(from, sizeof from, "/etc/OpenCL/vendors/%s", icds[k]);
    snprintf(to, sizeof to, "%s/%s", vendors, icds[k]);
    cr_assert_eq(symlink(from, to), 0, "%s", strerror(errno));
  }
  env[0] = kv("OCL_ICD_VENDORS", vendors);
  env[1] = SWRAST;
  env[2] = "PYOPENCL_NO_CACHE=1";
  env[3] = NULL;
  const char *rec[] = {"record", "-o", dir, "--", "/usr/bin/python3", "-c", script, NULL};
  cr_assert_eq(pitrace(rec, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "rusticl verified") && strstr(out, "Language verified"), "%s", out);
  return dir;
}

/* An application that made a context on rusticl's device, then one on
 * PoCL's, replays both on one device; nothing said so (the note named
 * only the recorded device, and only when it differed). */
Test(replay, contexts_on_two_devices_replayed_on_one_are_named)
{
  const char *env[4];
  char *dir = record_on_both_platforms("p = cl.Program(ctx, src).build()", env), *out;
  const char *args[] = {"replay", dir, NULL};
  cr_assert_eq(pitrace(args, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "note: the application made contexts on 2 devices (device#") &&
            strstr(out, "(rusticl), device#") &&
            strstr(out, "(Portable Computing Language)); replay runs them all on \"llvmpipe"),
            "%s", out);
  cr_assert(strstr(out, "2 read-backs verified"), "%s", out);
}

/* The same with each program made from the binary its platform built:
 * replay runs them all on the recorded device, rusticl's, and handed it
 * PoCL's binary, on which rusticl aborts the process (it only checked the
 * recorded device's platform against the one replayed on). Refused in one
 * line naming both platforms instead. */
Test(replay, a_binary_of_the_other_platform_a_session_used_is_not_handed_over)
{
  const char *env[4];
  char *dir = record_on_both_platforms(
    "built = cl.Program(ctx, src).build().get_info(cl.program_info.BINARIES)[0]; "
    "p = cl.Program(ctx, [d], [built]).build()", env), *out;
  const char *args[] = {"replay", dir, NULL};
  cr_assert_eq(pitrace(args, env, &out), 2, "%s", out);
  cr_assert(strstr(out, "piProgramCreateWithBinary: the program is a binary that platform "
                        "\"Portable Computing Language\" made, which \"rusticl\" cannot take; "
                        "the application used devices of \"Portable Computing Language\" and "
                        "\"rusticl\", which replay runs on one device"), "%s", out);
}

/* -o naming the session itself, under any name, is refused and the session
 * is left as it was; so is -o naming what is not a file (the repro is
 * renamed over it: `-o /dev/null` made /dev/null a regular file), here a
 * pipe and a directory, which stay as they were. */
Test(replay, extract_never_writes_over_the_session_it_reads)
{
  char *db = record("vadd", NULL, NULL), *out, *same = NULL, *link = tu_temp_path(".db");
  char *before = sql(db, "SELECT count(*) || ' ' || sum(length(calls)) FROM call_chunks");
  const char *slash = strrchr(db, '/');
  cr_assert_geq(asprintf(&same, "/tmp/./%s", slash + 1), 0);
  cr_assert_eq(symlink(db, link), 0);
  const char *aliases[] = {db, same, link};
  for (int k = 0; k < 3; k++) {
    cr_assert_eq(extract(db, "1", aliases[k], &out), 2, "%s: %s", aliases[k], out);
    cr_assert(strstr(out, "is the session being extracted from"), "%s", out);
  }
  cr_assert_str_eq(sql(db, "SELECT count(*) || ' ' || sum(length(calls)) FROM call_chunks"), before);
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 0, "%s", out);
  char *fifo = tu_temp_path(".fifo"), *dir = tu_temp_path("");
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  cr_assert_eq(mkdir(dir, 0700), 0);
  const char *others[] = {fifo, dir};
  for (int k = 0; k < 2; k++) {
    cr_assert_eq(extract(db, "1", others[k], &out), 2, "%s: %s", others[k], out);
    cr_assert(strstr(out, "not a file: name a file for the repro"), "%s", out);
  }
  struct stat st;
  cr_assert(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the pipe was replaced");
  cr_assert(stat(dir, &st) == 0 && S_ISDIR(st.st_mode), "the directory was replaced");
  /* A path SQLite cannot open (it said "unable to open database file"). */
  char deep[1024];
  size_t n = tu_deep_dir(deep, sizeof deep, 2);
  snprintf(deep + n, sizeof deep - n, "/%090d.db", 0);
  cr_assert_eq(extract(db, "1", deep, &out), 2, "%s", out);
  cr_assert(strstr(out, "and SQLite opens files by paths of up to 504; name a shorter one"), "%s",
            out);
}

/* ---- Threads -------------------------------------------------------------------------------- */

/* replay_threads userevent recorded on the test plugin whose user events
 * really block (cfg_env: its SYCL_PI_CONFIG=...): a waiter thread in
 * piEventsWait that the main thread's piEventSetStatus releases. */
static char *record_userevent(const char *cfg_env)
{
  char *db = NULL, *out;
  /* The recording must have the shape under test: the wait began first and
   * returned only after the other thread's piEventSetStatus began (it may
   * return before that call does: the status wakes it from inside the
   * call). The program gives the waiter 200 ms to block; a waiter preempted
   * longer than that enters the wait too late, so record again, a bounded
   * number of times. */
  long long shaped = 0;
  for (int attempt = 0; attempt < 5 && !shaped; attempt++) {
    db = tu_temp_path(".db");
    const char *argv[] = {BIN "/replay_threads", "userevent", NULL};
    const char *env[] = {kv("SYCL_PI_RECORD", db), cfg_env, NULL};
    cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
    shaped = sql_int(db, "SELECT count(*) FROM pi_calls w, pi_calls s WHERE w.api = "
                         "'piEventsWait' AND s.api = 'piEventSetStatus' AND w.thread <> "
                         "s.thread AND w.seq < s.seq AND w.end_ns > s.start_ns");
  }
  cr_assert_eq(shaped, 1, "5 recordings without a wait released by the other thread");
  return db;
}

Test(replay, a_wait_released_by_a_later_call_of_another_thread_does_not_deadlock)
{
  char *cfg = tu_write_temp(".conf", LIB "/libpi_replay_userevent.so opencl\n"), *out;
  char *cfg_env = kv("SYCL_PI_CONFIG", cfg), *db = record_userevent(cfg_env);
  const char *renv[] = {cfg_env, NULL};
  cr_assert_eq(replay(db, NULL, NULL, renv, &out), 0, "%s", out);
  cr_assert(strstr(out, "matched: 22 calls"), "%s", out);
}

/* --to cutting between the wait and the other thread's piEventSetStatus
 * that released it: the wait was replayed without its release and blocked
 * forever (the replay never ended). It is left out too, with a note. */
Test(replay, to_before_the_call_that_released_a_wait_leaves_the_wait_out)
{
  char *cfg = tu_write_temp(".conf", LIB "/libpi_replay_userevent.so opencl\n"), *out;
  char *cfg_env = kv("SYCL_PI_CONFIG", cfg), *db = record_userevent(cfg_env), to[32];
  long long wait = sql_int(db, "SELECT seq FROM pi_calls WHERE api = 'piEventsWait'");
  long long set = sql_int(db, "SELECT seq FROM pi_calls WHERE api = 'piEventSetStatus'");
  snprintf(to, sizeof to, "%lld", set - 1);
  const char *argv[] = {"/usr/bin/timeout", "20", PITRACE, "replay", db, "--to", to, NULL};
  const char *renv[] = {cfg_env, NULL};
  cr_assert_eq(tu_run(argv, renv, &out), 0, "--to %s: %s", to, out);
  char note[160];
  snprintf(note, sizeof note, "note: seq %lld piEventsWait (thread 2) returned in the recording "
           "only after seq %lld piEventSetStatus (thread 1) began", wait, set);
  cr_assert(strstr(out, note), "%s", out);
  cr_assert(strstr(out, "which the replay leaves out (past --to"), "%s", out);
  snprintf(note, sizeof note, "matched: %lld calls", set - 2);
  cr_assert(strstr(out, note), "%s", out);
}

Test(replay, threads_ordered_by_the_host_replay_in_that_order)
{
  char *db = record("replay_threads", "data", NULL), *out;
  cr_assert_eq(sql_int(db, "SELECT count(DISTINCT thread) FROM pi_calls"), 3);
  for (int i = 0; i < 3; i++) {
    cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 0, "%s", out);
    cr_assert(strstr(out, "8 read-backs verified"), "%s", out);
  }
}

/* A release waits for the other threads' info queries that returned
 * before it began in the recording (the 300 status queries of the thread
 * that handed the event over). Queries were never waited for, so the
 * release ran while they still did: queries on a released event, which a
 * recording of the replay showed and diff called "different". */
Test(replay, a_release_waits_for_the_queries_before_it_on_other_threads)
{
  char *db = record("replay_threads", "handoff", NULL), *out;
  const char *order = "SELECT (SELECT max(seq) FROM pi_calls WHERE api = 'piEventGetInfo') < "
                      "(SELECT seq FROM pi_calls WHERE api = 'piEventRelease')";
  cr_assert_eq(sql_int(db, order), 1);
  for (int i = 0; i < 3; i++) {
    char *again = tu_temp_path(".db");
    const char *env[] = {POCL, kv("SYCL_PI_RECORD", again), NULL};
    cr_assert_eq(replay(db, NULL, NULL, env, &out), 0, "%s", out);
    cr_assert_eq(sql_int(again, order), 1, "round %d: a query after the release", i);
    cr_assert_eq(sql_int(again, "SELECT count(*) FROM pi_calls WHERE api = 'piEventGetInfo' AND "
                                "result = 'PI_SUCCESS'"), 300);
  }
}

/* A recorded replay of a program of three threads diffs as the same,
 * aligned thread by thread: its main thread only discovers the devices
 * (and cleans up), its workers follow the recording's threads. Counted as
 * a fourth thread, it made the diff align globally, where two threads'
 * calls that swapped places paired the wrong calls (OpenCV from Python:
 * its callback thread's release before or after the main thread's map,
 * "argument size: 6144 vs 12288", on a loaded machine). */
Test(replay, a_recorded_replay_of_threads_diffs_thread_by_thread)
{
  char *db = record("replay_threads", "data", NULL), *again = tu_temp_path(".db"), *out;
  const char *env[] = {POCL, kv("SYCL_PI_RECORD", again), NULL};
  cr_assert_eq(replay(db, NULL, NULL, env, &out), 0, "%s", out);
  const char *args[] = {"diff", db, again, NULL};
  cr_assert_eq(pitrace(args, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "(aligned per thread); only in A 0, only in B 0; differences: 0 argument, "
                        "0 result, 0 info, 0 data, 0 note, 0 order"), "%s", out);
}

Test(replay, diff_pairs_threads_that_began_in_the_other_order)
{
  /* Both threads begin with a queue creation: which of them is thread 2
   * follows who came first. Paired by number, every call of the two
   * differed ("only in A 32, only in B 32"); paired by what they call,
   * the runs are the same. */
  char *db[2], *out;
  const char *orders[] = {"writer-late", "launcher-late"};
  for (int i = 0; i < 2; i++) {
    db[i] = tu_temp_path(".db");
    const char *argv[] = {BIN "/replay_threads", "data", orders[i], NULL};
    const char *env[] = {kv("SYCL_PI_RECORD", db[i]), POCL, NULL};
    cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  }
  const char *args[] = {"diff", db[0], db[1], NULL};
  cr_assert_eq(pitrace(args, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "(aligned per thread); only in A 0, only in B 0; differences: 0 argument, "
                        "0 result, 0 info, 0 data, 0 note, 0 order: same"), "%s", out);
}

Test(replay, nine_threads_of_getinfo_calls_replay)
{
  char *db = tu_temp_path(".db"), *out;
  const char *argv[] = {BIN "/record_prog", "threads", "8", "200", NULL};
  const char *env[] = {kv("SYCL_PI_RECORD", db), POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "matched: "), "%s", out);
}

Test(replay, a_crashed_session_replays_up_to_the_call_that_never_returned)
{
  char *db = tu_temp_path(".db"), *out;
  char *cfg = tu_write_temp(".conf", LIB "/libpi_test_partial.so\n");
  const char *argv[] = {BIN "/use_device", NULL};
  const char *env[] = {kv("SYCL_PI_RECORD", db), kv("SYCL_PI_CONFIG", cfg), "PI_TEST_CRASH=1",
                       NULL};
  cr_assert_neq(tu_run(argv, env, &out), 0, "%s", out); /* SIGSEGV (a sanitizer's exit) */
  const char *renv[] = {env[1], NULL};
  cr_assert_eq(replay(db, NULL, NULL, renv, &out), 0, "%s", out);
  cr_assert(strstr(out, "piContextCreate never returned in the recording"), "%s", out);
}

/* ---- Recording a replay ---------------------------------------------------------------------- */

Test(replay, a_replay_is_recorded_as_a_new_session)
{
  char *db = record("pipeline", NULL, NULL), *again = tu_temp_path(".db"), *out;
  const char *env[] = {POCL, kv("SYCL_PI_RECORD", again), NULL};
  cr_assert_eq(replay(db, NULL, NULL, env, &out), 0, "%s", out);
  cr_assert_eq(sql_int(again, "SELECT count(*) FROM sessions"), 1);
  cr_assert_str_eq(sql(again, "SELECT group_concat(api, ' ') FROM (SELECT api FROM pi_calls "
                              "WHERE api LIKE 'piEnqueue%' ORDER BY seq)"),
                   sql(db, "SELECT group_concat(api, ' ') FROM (SELECT api FROM pi_calls "
                           "WHERE api LIKE 'piEnqueue%' ORDER BY seq)"));
  /* And that session replays too. */
  cr_assert_eq(replay(again, NULL, NULL, pocl_env, &out), 0, "%s", out);
}

/* An OpenCL application through the front end: the runtime discovers the
 * devices, then the front end asks the same kinds of question (clinfo's
 * first is the device's PI_DEVICE_INFO_TYPE, as discovery's is). Replay
 * must re-issue the application's and only the application's, so that the
 * recorded replay holds the same calls. */
Test(replay, an_opencl_application_s_recorded_replay_diffs_the_same)
{
#ifndef PITRACE_CLINFO
  cr_skip_test("clinfo is not installed (scripts/setup.sh installs it), or this is a "
               "sanitized build, whose front end cannot load into Debian's clinfo");
#else
  char *dir = tu_temp_path(""), *out;
  const char *rec[] = {"record", "-o", dir, "--", PITRACE_CLINFO, "--raw", NULL};
  cr_assert_eq(pitrace(rec, pocl_env, &out), 0, "%s", out);
  char *a;
  const char *ls[] = {"/bin/sh", "-c", "ls \"$0\"/*.db", dir, NULL};
  cr_assert_eq(tu_run(ls, NULL, &a), 0, "no session recorded: %s", out);
  a[strcspn(a, "\n")] = 0;
  /* What makes it hard: after discovery (which ends with the plugins that
   * found no platform giving their last error), the front end's first
   * call is the query discovery makes first of each device. */
  cr_assert_str_eq(sql(a, "SELECT api || ' ' || (SELECT value FROM pi_args AS p WHERE p.seq = "
                          "c.seq AND p.name = 'param_name') FROM pi_calls AS c WHERE seq = 1 + "
                          "(SELECT max(seq) FROM pi_calls WHERE api = 'piPluginGetLastError')"),
                   "piDeviceGetInfo PI_DEVICE_INFO_TYPE\n", "%s", a);
  char *b = tu_temp_path(".db");
  const char *env[] = {POCL, kv("SYCL_PI_RECORD", b), NULL};
  cr_assert_eq(replay(a, NULL, NULL, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "matched: "), "%s", out);
  const char *diff[] = {"diff", a, b, NULL};
  cr_assert_eq(pitrace(diff, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "only in A 0, only in B 0; differences: 0 argument, 0 result, 0 info, "
                        "0 data, 0 note, 0 order"),
            "%s", out);
  cr_assert(strstr(out, ": same\n"), "%s", out);
  cr_assert_eq(sql_int(a, "SELECT count(*) FROM pi_calls"),
               sql_int(b, "SELECT count(*) FROM pi_calls"));
#endif
}

/* An info query into a buffer larger than its answer, no size asked back
 * (clinfo's, darktable's way): the recording keeps the answer's bytes, and
 * the replay compares those, not the whole buffer: no note that the value
 * "was X when recorded, X now". */
Test(replay, an_answer_shorter_than_its_buffer_is_the_same_answer)
{
  char *db = tu_temp_path(".db"), *out;
  const char *argv[] = {BIN "/record_prog", "infojunk", NULL};
  const char *env[] = {kv("SYCL_PI_RECORD", db), POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "; 0 notes"), "%s", out);
  cr_assert_null(strstr(out, "when recorded"), "%s", out);
}

/* record_prog MODE recorded on PoCL with its data into a new database,
 * which it returns, having said `says`. */
static char *record_prog_all(const char *mode, const char *says)
{
  char *db = tu_temp_path(".db"), *out;
  const char *argv[] = {BIN "/record_prog", mode, NULL};
  const char *env[] = {kv("SYCL_PI_RECORD", db), kv("SYCL_PI_RECORD_DATA", "all"), POCL, NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, says), "%s", out);
  free(out);
  return db;
}

/* A buffer made without data holds whatever the device's memory held:
 * reading it (here a map for reading and writing, as OpenCV does, and a
 * read) is no result to compare; what the map wrote, read back later, is.
 * Changed bytes of the undefined reads still match; a changed byte of the
 * later read diverges. */
Test(replay, what_a_buffer_holds_before_anything_wrote_it_is_not_compared)
{
  char *db = record_prog_all("freshmap", "fresh map ok"), *out;
  spoil_payloads(db, "seq IN (SELECT seq FROM pi_calls WHERE api = 'piEnqueueMemBufferMap') OR "
                     "seq = (SELECT max(seq) FROM pi_calls WHERE api = 'piEnqueueMemBufferRead')");
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert_eq(tu_count(out, "not compared: nothing wrote it since it was made"), 2, "%s", out);
  cr_assert(strstr(out, "1 read-backs verified"), "%s", out);
  spoil_payloads(db, "seq = (SELECT min(seq) FROM pi_calls WHERE api = 'piEnqueueMemBufferRead')");
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 1, "%s", out);
  cr_assert(strstr(out, "piEnqueueMemBufferRead"), "%s", out);
}

/* ---- Extract ------------------------------------------------------------------------------------- */

/* pitrace extract DB --kernel K -o REPRO [OPT [VAL]]. */
static int extract_with(const char *db, const char *kernel, const char *opt, const char *val,
                        const char *repro, char **out)
{
  const char *args[] = {"extract", db, "--kernel", kernel, "-o", repro, opt, val, NULL};
  return pitrace(args, NULL, out);
}

static int extract(const char *db, const char *kernel, const char *repro, char **out)
{
  return extract_with(db, kernel, NULL, NULL, repro, out);
}

/* A repro that cannot be written (a full disk, a file size limit) is
 * named, with the cause: extract said only "writing the repro: writing the
 * new session: disk I/O error", naming neither the file nor the limit. */
Test(replay, an_extract_that_cannot_be_written_names_the_repro_and_why)
{
  char *db = record("vadd", NULL, NULL), *repro = tu_temp_path(".db"), *out, *want = NULL;
  const char *argv[] = {"/bin/sh", "-c", "ulimit -f 64; exec \"$0\" extract \"$1\" --kernel 1 "
                        "-o \"$2\"", PITRACE, db, repro, NULL};
  cr_assert_eq(tu_run(argv, NULL, &out), 2, "%s", out);
  /* (the shell's blocks: 512 bytes in POSIX shells, 1024 in bash's own mode) */
  cr_assert_geq(asprintf(&want, "pitrace extract: cannot write the repro %s: disk I/O error; the "
                                "file size limit (ulimit -f) is ", repro), 0);
  cr_assert(strncmp(out, want, strlen(want)) == 0, "%s", out);
  cr_assert(strstr(out, " bytes; whatever it held is left as it was\n"), "%s", out);
  cr_assert_eq(access(repro, F_OK), -1, "%s was written", repro);
  char dir[32], path[64];
  tu_small_tmpfs(dir, "64k");
  snprintf(path, sizeof path, "%s/repro.db", dir);
  int rc = extract(db, "1", path, &out);
  int left = tu_dir_entries(dir);
  tu_small_tmpfs_gone(dir);
  cr_assert_eq(rc, 2, "%s", out);
  cr_assert(strstr(out, "cannot write the repro ") && strstr(out, "/repro.db: database or disk "
                                                                 "is full"), "%s", out);
  cr_assert_eq(left, 0, "the half-written repro was left behind");
}

/* -o a link to a file (latest.db naming a dated repro): the file is
 * written and the link stays, as report and export do. The repro replaced
 * the link, and the file it named kept what it held. */
Test(replay, an_extract_to_a_link_writes_the_file_it_names)
{
  char *db = record("vadd", NULL, NULL), *target = tu_write_temp(".db", "old"), *out;
  char *link = tu_temp_path(".db");
  cr_assert_eq(symlink(target, link), 0);
  cr_assert_eq(extract(db, "1", link, &out), 0, "%s", out);
  struct stat l;
  cr_assert(lstat(link, &l) == 0 && S_ISLNK(l.st_mode), "the link was replaced by the repro");
  cr_assert_eq(replay(target, NULL, NULL, pocl_env, &out), 0, "%s", out);
  unlink(link);
}

/* -o naming one of pitrace's descriptors (/dev/stdout, /dev/fd/N) is
 * refused: the repro, renamed over the name, replaced the link (as root,
 * `extract ... -o /dev/stdout > x` turned /dev/stdout into the repro).
 * /dev/fd/3 here, which without the check failed only by luck (procfs
 * takes no new file beside it). */
Test(replay, an_extract_to_a_descriptor_is_refused)
{
  char *db = record("vadd", NULL, NULL), *log = tu_write_temp(".log", "precious\n"), *out;
  char *script = NULL;
  cr_assert_geq(asprintf(&script, "exec %s extract %s --kernel 1 -o /dev/fd/3 3>>%s", PITRACE,
                         db, log), 0);
  const char *sh[] = {"/bin/sh", "-c", script, NULL};
  cr_assert_eq(tu_run(sh, NULL, &out), 2, "%s", out);
  cr_assert_str_eq(out, "pitrace extract: -o /dev/fd/3 is one of pitrace's descriptors, not a "
                        "file: name a file for the repro\n");
  cr_assert_str_eq(tu_read_file(log), "precious\n");
}

/* A repro whose name is as long as a name may be is written: its temporary
 * beside it (REPRO.tmp-XXXXXX, and SQLite's REPRO.tmp-XXXXXX-journal) was
 * too long to make, and extract refused names of 237 to 255 bytes. */
Test(replay, an_extract_to_the_longest_name_is_written)
{
  char *db = record("vadd", NULL, NULL), *dir = tu_temp_path(".d"), *out;
  cr_assert_eq(mkdir(dir, 0700), 0);
  const size_t lens[] = {240, 255};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
    char name[256], *repro = NULL;
    memset(name, 'x', lens[i]);
    name[lens[i]] = 0;
    cr_assert_geq(asprintf(&repro, "%s/%s", dir, name), 0);
    cr_assert_eq(extract(db, "1", repro, &out), 0, "%zu: %s", lens[i], out);
    cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%zu: %s", lens[i], out);
    cr_assert_eq(tu_dir_entries(dir), 1, "%zu: files were left beside the repro", lens[i]);
    unlink(repro);
  }
}

/* A signal (^C, a CI job's time limit) while extract writes its repro
 * beside -o: nothing is left beside it. The half-written repro
 * (REPRO.tmp-XXXXXX, tens of MB with vadd's buffers) and its journal
 * stayed. */
Test(replay, an_extract_ended_by_a_signal_leaves_nothing_beside_the_repro)
{
  char *db = record("vadd", "4000000", NULL);
  const int sigs[] = {SIGINT, SIGTERM};
  for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) {
    char *dir = tu_temp_path(".d"), *repro = NULL;
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_geq(asprintf(&repro, "%s/repro.db", dir), 0);
    const char *argv[] = {PITRACE, "extract", db, "--kernel", "1", "-o", repro, NULL};
    pid_t pid = tu_spawn_quiet(argv);
    cr_assert_geq(pid, 0);
    /* Once the repro is being written beside -o. */
    int seen = 0;
    for (int i = 0; i < 120000 && seen < 1 && waitpid(pid, NULL, WNOHANG) == 0; i++) {
      seen = tu_dir_entries(dir);
      struct timespec nap = {0, 500000};
      nanosleep(&nap, NULL);
    }
    int st = 0;
    kill(pid, sigs[k]);
    waitpid(pid, &st, 0);
    cr_assert(seen > 0, "extract ended before its repro was seen being written");
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == sigs[k], "extract: status %#x", st);
    cr_assert_eq(tu_dir_entries(dir), 0, "signal %d left the half-written repro behind",
                 sigs[k]);
  }
}

Test(replay, an_extracted_kernel_replays_on_its_own_with_the_same_result)
{
  char *db = record("vadd", NULL, NULL), *repro = tu_temp_path(".db"), *out;
  cr_assert_eq(extract(db, "1", repro, &out), 0, "%s", out);
  cr_assert_eq(sql_int(repro, "SELECT count(*) FROM pi_calls WHERE api = "
                              "'piEnqueueKernelLaunch'"), 1);
  cr_assert_eq(sql_int(repro, "SELECT count(*) FROM pi_calls WHERE api LIKE '%Release'"), 0);
  cr_assert_lt(sql_int(repro, "SELECT count(*) FROM pi_calls"),
               sql_int(db, "SELECT count(*) FROM pi_calls"));
  /* The read-back holds the original result. */
  cr_assert_str_eq(sql(repro, "SELECT hex FROM data WHERE role = 'out'"),
                   sql(db, "SELECT hex FROM data WHERE role = 'out'"));
  cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "1 read-backs verified"), "%s", out);
}

Test(replay, extract_rebuilds_buffer_contents_and_refuses_what_it_cannot_know)
{
  char *db = record("pipeline", NULL, NULL), *repro = tu_temp_path(".db"), *out;
  /* saxpy: x was filled and y written before it: both become writes. */
  cr_assert_eq(extract(db, "1", repro, &out), 0, "%s", out);
  /* The recorded calls kept and the calls made, told apart. */
  char *said = NULL;
  cr_assert_geq(asprintf(&said, ": %lld of %lld calls and %lld made (contents, reads, finishes)",
                         sql_int(repro, "SELECT count(*) FROM pi_calls") - 3,
                         sql_int(db, "SELECT count(*) FROM pi_calls"), 3LL), 0);
  cr_assert(strstr(out, said), "want '%s' in: %s", said, out);
  cr_assert_eq(sql_int(repro, "SELECT count(*) FROM pi_calls WHERE api = "
                              "'piEnqueueMemBufferWrite'"), 2);
  cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%s", out);
  /* square reads y, which saxpy computed and nothing read back. */
  cr_assert_eq(extract(db, "2", repro, &out), 2, "%s", out);
  cr_assert(strstr(out, "holds data computed on the device by seq"), "%s", out);
  cr_assert(strstr(out, "cannot be derived"), "%s", out);
  cr_assert_eq(extract(db, "4", repro, &out), 2, "%s", out);
  cr_assert(strstr(out, "has 3 kernel launches"), "%s", out);
  /* Past an int: named as given (it was said as 2147483647). */
  cr_assert_eq(extract(db, "4294967297", repro, &out), 2, "%s", out);
  cr_assert(strstr(out, "--kernel 4294967297: launches are counted up to"), "%s", out);
}

/* pipeline's three launches (saxpy, square, reduce) chain through device
 * buffers nothing reads back; its result is reduce's partial sums copied
 * to another buffer and mapped. */
Test(replay, extract_with_inputs_brings_the_launches_that_computed_them)
{
  char *db = record("pipeline", NULL, NULL), *repro = tu_temp_path(".db"), *out;
  /* Alone, reduce's input cannot be known: the refusal says what to do,
   * naming the launch to start from at once: from launch 2 on (square,
   * which computed it), saxpy's result would still be missing. */
  cr_assert_eq(extract(db, "3", repro, &out), 2, "%s", out);
  cr_assert(strstr(out, "computed on the device by seq") && strstr(out, "(--inputs, or --from 1)"),
            "%s", out);
  cr_assert_eq(extract_with(db, "3", "--from", "2", repro, &out), 2, "%s", out);
  cr_assert(strstr(out, "(--inputs, or --from 1)"), "%s", out);
  cr_assert_eq(extract_with(db, "3", "--from", "4", repro, &out), 2, "%s", out);
  cr_assert(strstr(out, "not a launch from 1 to --kernel 3"), "%s", out);
  cr_assert_eq(extract_with(db, "3", "--from", "0", repro, &out), 2, "%s", out);
  cr_assert(strstr(out, "--from 0 is not a launch"), "%s", out);
  cr_assert_eq(extract_with(db, "3", "--inputs", NULL, repro, &out), 0, "%s", out);
  cr_assert(strstr(out, "with 2 launches before it (from launch 1)"), "%s", out);
  /* The three launches, made on the repro's device; only x and y, saxpy's
   * inputs, written (square's and reduce's are computed there); the copy
   * of the partial sums, and their read, as recorded by the map. */
  cr_assert_eq(sql_int(repro, "SELECT count(*) FROM pi_calls WHERE api = "
                              "'piEnqueueKernelLaunch'"), 3);
  cr_assert_eq(sql_int(repro, "SELECT count(*) FROM pi_calls WHERE api = "
                              "'piEnqueueMemBufferWrite'"), 2);
  cr_assert_eq(sql_int(repro, "SELECT count(*) FROM pi_calls WHERE api = "
                              "'piEnqueueMemBufferCopy'"), 1);
  cr_assert_eq(sql_int(repro, "SELECT count(*) FROM pi_calls WHERE api = "
                              "'piEnqueueMemBufferRead'"), 1);
  cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "1 read-backs verified"), "%s", out);
  /* --from 1 is the same window. */
  cr_assert_eq(extract_with(db, "3", "--from", "1", repro, &out), 0, "%s", out);
  cr_assert(strstr(out, "with 2 launches before it (from launch 1)"), "%s", out);
  /* The first launch needs nothing computed: the same as without. */
  cr_assert_eq(extract_with(db, "1", "--inputs", NULL, repro, &out), 0, "%s", out);
  cr_assert(strstr(out, "before it") == NULL, "%s", out);
}

/* matmul's reduce_sum, scan_inclusive and histogram all read the same
 * input buffer, declared `__global const uint *in`: a launch of one
 * leaves it as it was, so the next extracts alone (before: refused, "holds
 * data computed on the device by seq N piEnqueueKernelLaunch"). */
Test(replay, extract_knows_what_a_kernel_only_reads_from_its_source)
{
  char *db = record("matmul", "1", NULL), *repro = tu_temp_path(".db"), *out;
  for (int k = 2; k <= 4; k++) {
    char n[8];
    snprintf(n, sizeof n, "%d", k);
    cr_assert_eq(extract(db, n, repro, &out), 0, "launch %d: %s", k, out);
    cr_assert(strstr(out, "before it") == NULL, "%s", out);
    cr_assert_eq(sql_int(repro, "SELECT count(*) FROM pi_calls WHERE api = "
                                "'piEnqueueKernelLaunch'"), 1);
    cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "launch %d: %s", k, out);
    cr_assert(strstr(out, "1 read-backs verified"), "%s", out);
  }
}

/* A kernel's parameters written through a macro (`#define OUTS __global
 * float *a, __global float *b`) are not read as written: the macro was one
 * parameter where the kernel has two, so each after it was taken for the
 * one before (a buffer the kernel writes for a const one after it), and
 * extract gave it stale contents. Such a signature is not used: every
 * argument may be written. Without macros, as written. */
Test(replay, a_kernel_signature_with_macros_is_not_taken_as_written)
{
  char macro[] = "#define OUTS __global float *a, __global float *b\n"
                 "__kernel void stage(OUTS, __global const float *c, __global float *d) {}\n";
  char call[] = "#define P(x) __global const float *x\n"
                "__kernel void stage(__global float *a, P(c)) {}\n";
  char plain[] = "__kernel void stage(__global float *a, __global float *b,\n"
                 "                    __global const float *c, __global float *d) {}\n";
  unsigned char ro[8];
  cr_assert_eq(ex_kernel_signature(macro, sizeof macro - 1, "stage", ro, 8), -1);
  cr_assert_eq(ex_kernel_signature(call, sizeof call - 1, "stage", ro, 8), -1);
  cr_assert_eq(ex_kernel_signature(plain, sizeof plain - 1, "stage", ro, 8), 4);
  cr_assert(!ro[0] && !ro[1] && ro[2] && !ro[3], "%d %d %d %d", ro[0], ro[1], ro[2], ro[3]);
}

Test(replay, extract_of_programs_from_device_images_replays)
{
  const char *progs[] = {"shared_lib", "spec_const"};
  for (int i = 0; i < 2; i++) {
    char *db = record(progs[i], NULL, NULL), *repro = tu_temp_path(".db"), *out;
    cr_assert_eq(extract(db, "1", repro, &out), 0, "%s", out);
    cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%s: %s", progs[i], out);
    cr_assert(strstr(out, "1 read-backs verified"), "%s", out);
  }
}

/* image_app (an OpenCL application, through the front end) recorded on
 * PoCL into a new directory; its session's path. */
static char *record_opencl_app(const char *prog, const char *data_mode, const char *arg)
{
  char *dir = tu_temp_path(""), *out, *db, *path = NULL, *verified = NULL;
  cr_assert_geq(asprintf(&path, "%s/%s", BIN, prog), 0);
  cr_assert_geq(asprintf(&verified, "%s: result verified", prog), 0);
  const char *rec[] = {"record", "-o", dir, "--", path, arg, NULL};
  const char *env[] = {POCL, kv("SYCL_PI_RECORD_DATA", data_mode), NULL};
  cr_assert_eq(pitrace(rec, env, &out), 0, "%s", out);
  cr_assert(strstr(out, verified), "%s", out);
  const char *ls[] = {"/bin/sh", "-c", "ls \"$0\"/*.db", dir, NULL};
  cr_assert_eq(tu_run(ls, NULL, &db), 0, "no session recorded: %s", out);
  db[strcspn(db, "\n")] = 0;
  return db;
}

/* Extracts launch `kernel` of db into repro: its image writes have the
 * regions `regions` (their pi_args values, one a line), and it replays on
 * PoCL with its one read-back verified. */
static void extract_image_launch(const char *db, const char *kernel, const char *repro,
                                 const char *regions)
{
  char *out;
  cr_assert_eq(extract(db, kernel, repro, &out), 0, "%s", out);
  cr_assert_str_eq(sql(repro, "SELECT value FROM pi_args WHERE name = 'region' AND seq IN (SELECT "
                              "seq FROM pi_calls WHERE api = 'piEnqueueMemImageWrite')"),
                   regions);
  cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "1 read-backs verified"), "%s", out);
}

/* A replay on another device of an application that asks an answer's
 * size, then the answer into a buffer of that size (image_app's platform
 * name, recorded on rusticl, replayed on PoCL): where this device's answer
 * is longer, the query is asked again with room for it and the two
 * answers compared, not noted as PI_ERROR_INVALID_VALUE, an error the
 * application never saw. */
Test(replay, an_info_query_too_small_for_this_devices_answer_is_asked_again_with_room)
{
  char *dir = tu_temp_path(""), *out, *db;
  const char *rec[] = {"record", "-o", dir, "--", BIN "/image_app", NULL};
  cr_assert_eq(pitrace(rec, rusticl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "image_app: on rusticl"), "%s", out);
  const char *ls[] = {"/bin/sh", "-c", "ls \"$0\"/*.db", dir, NULL};
  cr_assert_eq(tu_run(ls, NULL, &db), 0, "no session recorded: %s", out);
  db[strcspn(db, "\n")] = 0;
  char to[32];
  snprintf(to, sizeof to, "%lld",
           sql_int(db, "SELECT max(seq) FROM pi_calls WHERE api = 'piPlatformGetInfo'"));
  const char *args[] = {"replay", db, "--backend", "opencl", "--to", to, NULL};
  cr_assert_eq(pitrace(args, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "the size of the recorded answer, is too small for this device's answer ("),
            "%s", out);
  cr_assert(strstr(out, "param_value was \"rusticl\" when recorded, \"Portable Computing "
                        "Language\" now"), "%s", out);
  cr_assert(!strstr(out, "PI_ERROR_INVALID_VALUE now"), "%s", out);
}

/* A kernel that writes part of a buffer made without data leaves the rest
 * undefined: the recording's bytes there are whatever the device's memory
 * held (pyopencl's copy_if: a replay of pyopencl's own test suite diverged
 * there after 81,799 of 121,197 calls). The replay makes such a buffer
 * holding 0xa5 bytes: where its read still finds them, the recording's
 * bytes are not compared, and said so; a changed byte the kernel wrote
 * still diverges. */
Test(replay, what_a_kernel_left_unwritten_in_a_buffer_is_not_compared)
{
  char *db = record_prog_all("partial", "partial ok"), *out;
  /* What another device's memory left there: the last 4 bytes changed. */
  sql(db, "UPDATE blobs SET content = substr(content, 1, length(content) - 4) || x'5A5A5A5A' "
          "WHERE hash IN (SELECT hash FROM data_rows WHERE seq = (SELECT max(seq) FROM pi_calls "
          "WHERE api = 'piEnqueueMemBufferRead'))");
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "piEnqueueMemBufferRead: 73728 of the 98304 bytes read from mem#") &&
                strstr(out, "not compared: no call wrote them (the replay made the buffer "
                            "holding 0xa5 bytes, and they still do)"),
            "%s", out);
  cr_assert(strstr(out, "1 read-backs verified"), "%s", out);
  spoil_payloads(db, "seq = (SELECT max(seq) FROM pi_calls WHERE api = 'piEnqueueMemBufferRead')");
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 1, "%s", out);
  cr_assert(strstr(out, "differs from the recording at byte offset 0"), "%s", out);
}

/* A buffer written only through an image made on it (image1d_buffer):
 * its read is compared. It was taken for a buffer nothing wrote ("not
 * compared"), and a replay said "matched, 0 read-backs verified" whatever
 * the recording held. rusticl: PoCL 3.1 crashes on the program itself. */
Test(replay, a_buffer_written_through_an_image_on_it_is_compared)
{
  char *dir = tu_temp_path(""), *out, *db;
  const char *rec[] = {"record", "-o", dir, "--", BIN "/image_app", "onbuffer", NULL};
  cr_assert_eq(pitrace(rec, rusticl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "image_app: result verified: 256 texels"), "%s", out);
  const char *ls[] = {"/bin/sh", "-c", "ls \"$0\"/*.db", dir, NULL};
  cr_assert_eq(tu_run(ls, NULL, &db), 0, "no session recorded: %s", out);
  db[strcspn(db, "\n")] = 0;
  cr_assert_eq(replay(db, NULL, NULL, rusticl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "1 read-backs verified") && !strstr(out, "not compared"), "%s", out);
  sql(db, "UPDATE blobs SET content = zeroblob(length(content)) WHERE hash = (SELECT hash FROM "
          "data_rows WHERE role = 'out')");
  cr_assert_eq(replay(db, NULL, NULL, rusticl_env, &out), 1, "%s", out);
  cr_assert(strstr(out, "differs from the recording"), "%s", out);
}

/* An image made without data holds whatever the device's memory held, as
 * such a buffer does: the read through which the front end stages a map
 * of it for writing is no result to compare (replay diverged there, on
 * whatever the recording's device memory held); what the map wrote, read
 * back after the unmap, is compared. */
Test(replay, what_an_image_holds_before_anything_wrote_it_is_not_compared)
{
  char *db = record_opencl_app("image_app", "all", "imagemap"), *out;
  spoil_payloads(db, "role = 'out' AND seq = (SELECT min(seq) FROM pi_calls WHERE api = "
                     "'piEnqueueMemImageRead')");
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert_eq(tu_count(out, "not compared: nothing wrote it since it was made"), 1, "%s", out);
  cr_assert(strstr(out, "1 read-backs verified"), "%s", out);
  spoil_payloads(db, "role = 'out' AND seq = (SELECT max(seq) FROM pi_calls WHERE api = "
                     "'piEnqueueMemImageRead')");
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 1, "%s", out);
  cr_assert(strstr(out, "piEnqueueMemImageRead") && strstr(out, "differs from the recording"),
            "%s", out);
}

Test(replay, extract_rebuilds_image_contents_from_any_pitch_and_replays)
{
  char *db = record_opencl_app("image_app", "all", NULL), *repro = tu_temp_path(".db"), *out;
  /* The 1D image array's write: its 5 images 80 bytes apart (its row
   * pitch), the last 64. */
  cr_assert_eq(sql_int(db, "SELECT size FROM data WHERE seq = (SELECT max(seq) FROM pi_calls "
                           "WHERE api = 'piEnqueueMemImageWrite')"),
               4 * 80 + 64);
  /* A's host data whole: 23 scanlines of its 656-byte pitch. */
  cr_assert_eq(sql_int(db, "SELECT size FROM data WHERE seq = (SELECT min(seq) FROM pi_calls "
                           "WHERE api = 'piMemImageCreate')"),
               23 * 656);
  /* blend: A from its creation's host data (padded rows), B's 20 written
   * rows of 30 (two writes, padded and packed) as one write of that band,
   * and C read back after it (padded rows). */
  extract_image_launch(db, "1", repro, "[37,20,1]\n");
  cr_assert_eq(sql_int(repro, "SELECT count(*) FROM pi_calls WHERE api = 'piMemImageCreate'"), 3);
  /* row_sum reads C, which blend computed and the application read back:
   * C written whole from that read, the sums read back. */
  extract_image_launch(db, "2", repro, "[37,23,1]\n");
  /* With blend before it (--from 1): C is blend's to compute in the repro,
   * and the application's read of it between the launches is made there
   * and checked, not written back: B's band is the one image write, and
   * two reads are verified (C, then the sums). */
  cr_assert_eq(extract_with(db, "2", "--from", "1", repro, &out), 0, "%s", out);
  cr_assert(strstr(out, "with 1 launch before it (from launch 1)"), "%s", out);
  cr_assert_str_eq(sql(repro, "SELECT value FROM pi_args WHERE name = 'region' AND seq IN (SELECT "
                              "seq FROM pi_calls WHERE api = 'piEnqueueMemImageWrite')"),
                   "[37,20,1]\n");
  cr_assert_eq(sql_int(repro, "SELECT count(*) FROM pi_calls WHERE api = "
                              "'piEnqueueMemImageRead'"), 1);
  cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "2 read-backs verified"), "%s", out);
  /* A damaged row pitch: one line, no read outside the recorded bytes. */
  char *bad = damaged(db, "piEnqueueMemImageWrite", "[5]", "9223372036854775807");
  cr_assert_eq(extract(bad, "1", repro, &out), 2, "%s", out);
  cr_assert(strstr(out, "do not fit image mem#") && tu_count(out, "\n") == 1, "%s", out);
  /* Without the images' data, their contents cannot be derived. */
  char *none = record_opencl_app("image_app", "none", NULL);
  cr_assert_eq(extract(none, "1", repro, &out), 2, "%s", out);
  cr_assert(strstr(out, "piMemImageCreate, whose data was not recorded"), "%s", out);
}

/* Extract follows what the device does to images as it follows buffers:
 * image_app copy's A2, filled with 2.0 (RGBA float: the color's words are
 * the pixel) and then mostly copied from A, is written whole into the
 * repro, which replays with C's read-back verified (before: refused, "holds
 * data computed on the device by seq N piEnqueueMemImageCopy"). */
Test(replay, extract_follows_image_fills_and_copies)
{
  char *db = record_opencl_app("image_app", "all", "copy"), *repro = tu_temp_path(".db");
  extract_image_launch(db, "1", repro, "[37,23,1]\n[37,20,1]\n");
}

/* A read after the launch that the recording kept only the first bytes
 * of (a data cap; made here by cutting vadd's 4096-byte read to 1000):
 * extract left it out of the repro, which then replayed "matched" having
 * checked nothing. It is now a read of the bytes kept. */
Test(replay, extract_keeps_a_read_back_kept_in_part_as_a_read_of_what_was_kept)
{
  char *db = record("vadd", NULL, NULL), *repro = tu_temp_path(".db"), *out;
  sql(db, "UPDATE blobs SET content = substr(content, 1, 1000) "
          "WHERE hash = (SELECT hash FROM data_rows WHERE role = 'out')");
  sql(db, "UPDATE data_rows SET stored = 1000 WHERE role = 'out'");
  cr_assert_eq(extract(db, "1", repro, &out), 0, "%s", out);
  cr_assert_str_eq(sql(repro, "SELECT group_concat(size) FROM data_rows WHERE role = 'out'"),
                   "1000\n");
  cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "1 read-backs verified"), "%s", out);
}

/* A launch on a sub-buffer writes that sub-buffer's bytes of its parent
 * and no others: rect_app halves' second launch reads hi, the half of a
 * filled buffer its first launch did not write (it wrote lo). Extract took
 * the first launch as writing the whole parent and refused the second
 * alone ("holds data computed on the device by seq N"); it extracts now,
 * and replays with its read-back verified. */
Test(replay, extract_knows_a_launch_on_a_sub_buffer_writes_only_that_region)
{
  char *db = record_opencl_app("rect_app", "all", "halves"), *repro = tu_temp_path(".db"), *out;
  cr_assert_eq(extract(db, "3", repro, &out), 0, "%s", out);
  cr_assert(strstr(out, "kernel launch 3 (seq"), "%s", out);
  cr_assert_null(strstr(out, "launch before it"), "%s", out);
  cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "1 read-backs verified"), "%s", out);
}

/* Extract follows rectangle transfers row by row: rect_app's launch reads
 * a grid whose only data came by a rectangle write and a rectangle copy
 * (before: refused, "holds data computed on the device by seq N
 * piEnqueueMemBufferCopyRect"); the repro writes the grid whole, and the
 * application's rectangle read after the launch becomes a read of each
 * of its 4 rows, checked with the plain read of row 0. */
Test(replay, extract_follows_rectangle_writes_copies_and_reads)
{
  char *db = record_opencl_app("rect_app", "all", NULL), *repro = tu_temp_path(".db"), *out;
  cr_assert_eq(extract(db, "1", repro, &out), 0, "%s", out);
  cr_assert_str_eq(sql(repro, "SELECT group_concat(json_extract(args, '$[3]') || '+' || "
                              "json_extract(args, '$[4]'), ' ') FROM (SELECT args FROM calls "
                              "WHERE api = (SELECT id FROM pi_api WHERE name = "
                              "'piEnqueueMemBufferRead') ORDER BY seq)"),
                   "428+28 524+28 620+28 716+28 0+96\n");
  cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "5 read-backs verified"), "%s", out);
  /* A damaged region: one line, nothing read or written outside. */
  char *bad = damaged(db, "piEnqueueMemBufferWriteRect", "[5][0]", "4611686018427387904");
  cr_assert_eq(extract(bad, "1", repro, &out), 2, "%s", out);
  cr_assert(strstr(out, "by seq ") && strstr(out, " piEnqueueMemBufferWriteRect") &&
            tu_count(out, "\n") == 1, "%s", out);
  /* Without the rectangle's data, the grid's contents cannot be derived. */
  char *none = record_opencl_app("rect_app", "none", NULL);
  cr_assert_eq(extract(none, "1", repro, &out), 2, "%s", out);
  cr_assert(strstr(out, "piEnqueueMemBufferWriteRect, whose data was not recorded"), "%s", out);
}

/* Argument `arg` of the call at seq (an SQL expression). */
static long long arg_at(const char *db, const char *seq, int arg)
{
  char q[512];
  snprintf(q, sizeof q, "SELECT json_extract(args, '$[%d]') FROM calls WHERE seq = %s", arg, seq);
  return sql_int(db, q);
}

/* Cuts the stored 'out' data of the call at seq to its first `kept`
 * bytes, as SYCL_PI_RECORD_DATA_CAP keeps them. */
static void keep_first_bytes(const char *db, const char *seq, long long kept)
{
  char q[512];
  snprintf(q, sizeof q, "UPDATE blobs SET content = substr(content, 1, %lld) WHERE hash = (SELECT "
           "hash FROM data_rows WHERE seq = %s AND role = 'out')", kept, seq);
  sql(db, q);
  snprintf(q, sizeof q, "UPDATE data_rows SET stored = %lld WHERE seq = %s AND role = 'out'",
           kept, seq);
  sql(db, q);
}

/* The regions of the repro's calls of `api`, "origin+region" each. */
static char *regions_of(const char *repro, const char *api)
{
  char q[512];
  snprintf(q, sizeof q, "SELECT group_concat(json_extract(args, '$[3]') || '+' || "
           "json_extract(args, '$[4]'), ' ') FROM (SELECT args FROM calls WHERE api = (SELECT id "
           "FROM pi_api WHERE name = '%s') ORDER BY seq)", api);
  return sql(repro, q);
}

/* A rectangle read after the launch kept only in part (a data cap): the
 * repro reads the rows whose bytes were kept, no longer nothing. rect_app's
 * read puts its 4 rows at host rows 1 to 4; kept here: host rows 0 to 2. */
Test(replay, extract_keeps_the_rows_a_rectangle_read_kept_in_part)
{
  char *db = record_opencl_app("rect_app", "all", NULL), *repro = tu_temp_path(".db"), *out;
  const char *rect = "(SELECT seq FROM pi_calls WHERE api = 'piEnqueueMemBufferReadRect')";
  long long hrow = arg_at(db, rect, 8); /* the host row pitch */
  cr_assert_gt(hrow, 32);
  keep_first_bytes(db, rect, 3 * hrow);
  cr_assert_eq(extract(db, "1", repro, &out), 0, "%s", out);
  cr_assert_str_eq(regions_of(repro, "piEnqueueMemBufferRead"), "428+28 524+28 0+96\n");
  cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "3 read-backs verified"), "%s", out);
}

/* An image read after the launch whose data a cap cut: a read of each
 * whole row kept (image_app reads C back with a 608-byte row pitch, rows of
 * 592). It was left out of the repro, which checked nothing. */
Test(replay, extract_keeps_the_rows_an_image_read_kept_in_part)
{
  char *db = record_opencl_app("image_app", "all", NULL), *repro = tu_temp_path(".db"), *out;
  const char *rd = "(SELECT min(seq) FROM pi_calls WHERE api = 'piEnqueueMemImageRead')";
  /* Rows 0 and 1 whole; row 2 cut (500 of its 592 bytes kept). */
  cr_assert_eq(arg_at(db, rd, 5), 608); /* the row pitch */
  keep_first_bytes(db, rd, 2 * 608 + 500);
  cr_assert_eq(extract(db, "1", repro, &out), 0, "%s", out);
  cr_assert_str_eq(regions_of(repro, "piEnqueueMemImageRead"),
                   "[0,0,0]+[37,1,1] [0,1,0]+[37,1,1]\n");
  cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "2 read-backs verified"), "%s", out);
}

/* A release after the launch that leaves the buffer alive (the program
 * retained it before) ends nothing: the reads after it are still the
 * repro's checks. Taken for the buffer's end, it dropped them, and the
 * repro said "matched" with 0 read-backs verified. */
Test(replay, extract_keeps_the_reads_after_a_release_that_leaves_the_buffer_alive)
{
  const char *how[] = {"retain", "subretain"};
  for (int i = 0; i < 2; i++) { /* the buffer retained; a sub-buffer of it retained */
    char *db = record_opencl_app("rect_app", "all", how[i]), *repro = tu_temp_path(".db"), *out;
    cr_assert_eq(sql_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piMemRetain'"), 1);
    cr_assert_eq(extract(db, "1", repro, &out), 0, "%s: %s", how[i], out);
    cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%s: %s", how[i], out);
    cr_assert(strstr(out, "5 read-backs verified"), "%s: %s", how[i], out);
  }
}

/* A child forked after the parent used a queue, which makes one call and
 * ends with exit(): on rusticl its exit joins the queue's worker thread,
 * which did not come along, and glibc had given that thread's stack and
 * descriptor to the recorder's (or the trace's) thread in the child: the
 * join waited for it, and the child hung at exit, recorded or traced to a
 * file. */
/* argv's exit status, run up to three times until it is 0: rusticl's own
 * fork handling hangs a child now and then without pitrace too (1 run of
 * 25 under load, ASan build, fork_app run directly), while the hang this
 * guards against came every time. */
static int run_fork_app(const char *const *argv, const char *const *env, char **out)
{
  int st = -1;
  for (int i = 0; i < 3 && st != 0; i++)
    st = tu_run(argv, env, out);
  return st;
}

Test(replay, a_forked_child_that_calls_and_exits_ends_recorded_and_traced)
{
  if (access("/etc/OpenCL/vendors/rusticl.icd", R_OK) != 0)
    cr_skip_test("rusticl is not installed");
  char *dir = tu_temp_path(""), *trace = tu_temp_path(".trace"), *out;
  const char *rec[] = {"/usr/bin/timeout", "15", PITRACE, "record", "-o", dir, "--",
                       BIN "/fork_app", NULL};
  cr_assert_eq(run_fork_app(rec, rusticl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "fork_app: child exited 0"), "%s", out);
  const char *run[] = {"/usr/bin/timeout", "15", PITRACE, "run", "--", BIN "/fork_app", NULL};
  const char *env[] = {RUSTICL, SWRAST, "SYCL_PI_TRACE=2", kv("SYCL_PI_TRACE_FILE", trace),
                       NULL};
  cr_assert_eq(run_fork_app(run, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "fork_app: child exited 0"), "%s", out);
}

/* The recorder knows every live image's pixel size (how many bytes its
 * transfers move), however many were made before: B's writes after 300
 * images made and released keep their data. */
Test(replay, image_data_is_recorded_after_hundreds_of_images)
{
  char *db = record_opencl_app("image_app", "all", "churn"), *repro = tu_temp_path(".db"), *out;
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM pi_calls WHERE api = 'piMemImageCreate'"), 304);
  /* B's two writes (10 rows each, one padded by 32 bytes a row) and the
   * 1D image array's (its 5 images 80 bytes apart). */
  cr_assert_eq(sql_int(db, "SELECT sum(size) FROM data WHERE seq IN (SELECT seq FROM pi_calls "
                           "WHERE api = 'piEnqueueMemImageWrite')"),
               2 * 10 * 37 * 4 + 32 * 9 + 4 * 80 + 64);
  cr_assert_eq(extract(db, "1", repro, &out), 0, "%s", out);
  cr_assert_eq(replay(repro, NULL, NULL, pocl_env, &out), 0, "%s", out);
}

/* ---- The replay plugin ------------------------------------------------------------------------ */

Test(replay, vadd_reruns_against_the_replay_plugin_without_any_opencl)
{
  const char *progs[] = {"vadd", "pipeline", "shared_lib", "spec_const"};
  for (int i = 0; i < 4; i++) {
    char *db = record(progs[i], NULL, NULL), *path = NULL, *out;
    cr_assert_geq(asprintf(&path, "%s/%s", BIN, progs[i]), 0);
    const char *argv[] = {path, NULL};
    const char *env[] = {kv("SYCL_PI_REPLAY", db), "OCL_ICD_VENDORS=/nonexistent", NULL};
    cr_assert_eq(tu_run(argv, env, &out), 0, "%s: %s", progs[i], out);
    cr_assert(strstr(out, "result verified"), "%s", out);
  }
}

/* A read the recording kept only in part (a data cap; here vadd's 4096-byte
 * read cut to 1000): the replay plugin left the application's memory as it
 * was without a word, and vadd said its result was wrong. It now gives the
 * bytes kept and says what it could not give. */
Test(replay, the_replay_plugin_says_which_data_the_recording_kept_in_part)
{
  char *db = record("vadd", NULL, NULL), *path = NULL, *out;
  sql(db, "UPDATE blobs SET content = substr(content, 1, 1000) "
          "WHERE hash = (SELECT hash FROM data_rows WHERE role = 'out')");
  sql(db, "UPDATE data_rows SET stored = 1000 WHERE role = 'out'");
  cr_assert_geq(asprintf(&path, "%s/vadd", BIN), 0);
  const char *argv[] = {path, NULL};
  const char *env[] = {kv("SYCL_PI_REPLAY", db), "OCL_ICD_VENDORS=/nonexistent", NULL};
  tu_run(argv, env, &out);
  cr_assert(strstr(out, "piEnqueueMemBufferRead: the recording kept 1000 of the 4096 bytes "
                        "written to parameter ptr"), "%s", out);
}

/* An OpenCL application through the front end, against the replay
 * plugin: its PI calls answered from the recording. The front end asks
 * the implementation's image formats through the context's native handle,
 * a number from the recorded process: the replay plugin answers none (it
 * crashed image_app when it gave the recorded number). The formats the
 * implementation gave when recorded are in the session as a note, and the
 * plugin gives them back: image_app sees PoCL's 44 again, not the
 * specification's minimum (what it saw before, as ffmpeg did, which then
 * stopped for want of CL_R). */
Test(replay, an_opencl_application_reruns_against_the_replay_plugin)
{
  char *db = record_opencl_app("image_app", "all", NULL), *out;
  char *count = sql(db, "SELECT substr(text, instr(text, ': ') + 2) FROM notes "
                        "WHERE kind = 'image_formats'");
  count[strcspn(count, "\n")] = 0;
  cr_assert(atoi(count) > 0, "no image formats kept: '%s'", count);
  char *line = NULL;
  cr_assert_geq(asprintf(&line, "image_app: %s image formats\n", count), 0);
  const char *argv[] = {BIN "/image_app", NULL};
  const char *env[] = {kv("SYCL_PI_REPLAY", db),
                       "OCL_ICD_VENDORS=" BIN "/../etc/OpenCL/vendors/pitrace.icd", NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, line), "expected '%s' as recorded: %s", line, out);
  cr_assert(strstr(out, "image_app: result verified"), "%s", out);
}

/* An application that waits for its event callbacks, which release what
 * it made, as OpenCV's do: the replay plugin runs them where the
 * recording's began (the front end's callback notes), their calls going
 * to the recorded threads of the implementation that ran them. Without
 * them the application waits 10 s and fails. */
Test(replay, the_replay_plugin_runs_the_applications_callbacks_where_they_began)
{
  char *db = record_opencl_app("callback_app", "all", NULL), *out;
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM notes WHERE kind = 'callback'"), 8);
  const char *argv[] = {BIN "/callback_app", NULL};
  const char *env[] = {kv("SYCL_PI_REPLAY", db),
                       "OCL_ICD_VENDORS=" BIN "/../etc/OpenCL/vendors/pitrace.icd", NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "callback_app: 8 callbacks ran"), "%s", out);
  cr_assert(strstr(out, "callback_app: result verified"), "%s", out);
  cr_assert(!strstr(out, "deviates"), "%s", out);
}

/* A map for reading that does not block: its bytes are kept once the map
 * is complete (nothing was kept: replay compared nothing, and the replay
 * plugin handed the application other bytes). */
Test(replay, a_map_that_does_not_block_keeps_what_it_read)
{
  char *db = record_opencl_app("callback_app", "all", "map"), *out;
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM data_rows WHERE seq = (SELECT seq FROM pi_calls "
                           "WHERE api = 'piEnqueueMemBufferMap')"), 1);
  const char *argv[] = {BIN "/callback_app", "map", NULL};
  const char *env[] = {kv("SYCL_PI_REPLAY", db),
                       "OCL_ICD_VENDORS=" BIN "/../etc/OpenCL/vendors/pitrace.icd", NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "callback_app: result verified: 4096 ints mapped"), "%s", out);
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "1 read-backs verified"), "%s", out);
  spoil_payloads(db, "seq = (SELECT seq FROM pi_calls WHERE api = 'piEnqueueMemBufferMap')");
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 1, "%s", out);
  cr_assert(strstr(out, "piEnqueueMemBufferMap") && strstr(out, "differs from the recording"),
            "%s", out);
}

/* The same map, its end told by a callback on its event: no wait and no
 * status asked, so the bytes are kept by the recorder's own callback,
 * set on the event before the program's, and the replay compares them. */
Test(replay, a_map_a_callback_says_complete_keeps_what_it_read)
{
  char *db = record_opencl_app("callback_app", "all", "mapcallback"), *out;
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM data_rows WHERE seq = (SELECT seq FROM pi_calls "
                           "WHERE api = 'piEnqueueMemBufferMap')"), 1);
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "1 read-backs verified"), "%s", out);
}

/* A map for reading and writing, its end told by a callback: the program
 * writes the mapped bytes before the unmap. The recorder kept the bytes
 * at the unmap, as the program had written them, so the replay said the
 * map "differs from the recording" and the replay plugin handed the
 * program its own later bytes as the map's (its check failed). Now they
 * are taken as the map's event completes. */
Test(replay, a_map_written_after_its_callback_keeps_what_it_read)
{
  char *db = record_opencl_app("callback_app", "all", "maprw"), *out;
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "read-backs verified"), "%s", out);
  cr_assert_null(strstr(out, "differs from the recording"), "%s", out);
  const char *argv[] = {BIN "/callback_app", "maprw", NULL};
  const char *env[] = {kv("SYCL_PI_REPLAY", db),
                       "OCL_ICD_VENDORS=" BIN "/../etc/OpenCL/vendors/pitrace.icd", NULL};
  cr_assert_eq(tu_run(argv, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "callback_app: result verified: 4096 ints mapped"), "%s", out);
}

/* Two threads on one in-order queue (callback_app sharedread): one's read
 * without blocking, enqueued as the other's blocking read was returning,
 * waits for a kernel still running. The recorder took every deferred read
 * of the queue as a blocking command (or a finish) returned, those kept
 * after it began too: it kept the read's bytes before the device wrote
 * them (the 0x55 the program had put there). Now such a call takes only
 * the reads kept before it began; the read's own wait takes this one. */
Test(replay, a_read_enqueued_while_another_thread_blocked_keeps_its_bytes)
{
  char *db = record_opencl_app("callback_app", "all", "sharedread");
  cr_assert_str_eq(sql(db, "SELECT hex(substr(b.content, 1, 8)) FROM data_rows d JOIN blobs b "
                           "ON b.hash = d.hash WHERE d.role = 'readback' AND d.size = 16384"),
                   "0100000004000000\n");
}

/* A map's event released at once, the map's end known from a later
 * command's (an in-order queue). On the Level Zero plugin (over the test
 * double) the next command's submission lets go of the event, which is
 * freed: the recorder asked it its status at the unmap, and the program
 * crashed. Now the event is asked as the application releases it (and
 * held by the recorder while it is not complete, as on PoCL), and the
 * map's bytes are kept on both. */
Test(replay, a_map_whose_event_is_released_at_once_keeps_what_it_read)
{
  char *db = record_opencl_app("callback_app", "all", "mapreleased"), *out;
  const char *map_rows = "SELECT count(*) FROM data_rows WHERE seq = (SELECT seq FROM pi_calls "
                         "WHERE api = 'piEnqueueMemBufferMap')";
  cr_assert_eq(sql_int(db, map_rows), 1);
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "1 read-backs verified"), "%s", out);

  char *dir = tu_temp_path("");
  char *conf = tu_write_temp(".conf", LIB "/libpi_level_zero.so level_zero\n");
  const char *rec[] = {"record", "-o", dir, "--", BIN "/callback_app", "mapreleased", NULL};
  const char *env[] = {"ZE_ENABLE_ALT_DRIVERS=" LIB "/libze_pitrace_test_double.so",
                       kv("SYCL_PI_CONFIG", conf), "SYCL_PI_RECORD_DATA=all",
                       "OCL_ICD_VENDORS=" BIN "/../etc/OpenCL/vendors/pitrace.icd", NULL};
  cr_assert_eq(pitrace(rec, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "callback_app: result verified"), "%s", out);
  const char *ls[] = {"/bin/sh", "-c", "ls \"$0\"/*.db", dir, NULL};
  cr_assert_eq(tu_run(ls, NULL, &db), 0, "no session recorded: %s", out);
  db[strcspn(db, "\n")] = 0;
  cr_assert_eq(sql_int(db, map_rows), 1);
  unlink(conf);
}

/* A session that names no device (its device queries filtered out, or a
 * process that died in its first calls): the replay noted `recorded on
 * "" (opencl)`, a difference it does not know of. */
Test(replay, a_session_that_names_no_device_replays_without_a_device_note)
{
  char *db = record("vadd", NULL, "SYCL_PI_RECORD_FILTER=-piDeviceGetInfo"), *out;
  cr_assert_eq(replay(db, NULL, NULL, pocl_env, &out), 0, "%s", out);
  cr_assert(strstr(out, "matched: "), "%s", out);
  cr_assert_null(strstr(out, "recorded on"), "%s", out);
}

Test(replay, the_replay_plugin_follows_threads_that_begin_alike)
{
  /* The writer and launcher threads both begin with a queue creation. Re-run
   * once with each starting late: one of the two orders is not the
   * recorded one, so the thread that arrives first is first given the
   * other's recorded calls, deviates at its second call, and the plugin
   * must swap the two (without the swap that run fails). */
  char *db = record("replay_threads", "data", NULL), *out;
  const char *env[] = {kv("SYCL_PI_REPLAY", db), "OCL_ICD_VENDORS=/nonexistent", NULL};
  const char *orders[] = {"writer-late", "launcher-late", NULL};
  for (int i = 0; i < 3; i++) {
    const char *argv[] = {BIN "/replay_threads", "data", orders[i], NULL};
    cr_assert_eq(tu_run(argv, env, &out), 0, "%s: %s", orders[i] ? orders[i] : "as it comes",
                 out);
    cr_assert(strstr(out, "result verified over 8 rounds"), "%s", out);
  }
}

Test(replay, the_replay_plugin_stops_at_the_first_deviation)
{
  char *db = record("vadd", NULL, NULL), *out;
  const char *argv[] = {BIN "/vadd", "2048", NULL};
  const char *env[] = {kv("SYCL_PI_REPLAY", db), "OCL_ICD_VENDORS=/nonexistent", NULL};
  cr_assert_eq(tu_run(argv, env, &out), 2, "%s", out);
  cr_assert(strstr(out, "pitrace replay plugin: the application deviates from the recording"),
            "%s", out);
  cr_assert(strstr(out, "(thread 1): expected piMemBufferCreate with size 4096, got size 8192"),
            "%s", out);
  /* The application's own error carries the plugin's reason, once. */
  cr_assert(strstr(out, "vadd: PI_ERROR_INVALID_OPERATION: pirt_buffer_create: 8192 bytes on "),
            "%s", out);
  cr_assert(strstr(out, ": piMemBufferCreate failed with PI_ERROR_INVALID_OPERATION (plugin "
                        "libpi_replay.so says: the application deviates from the recording "),
            "%s", out);
  cr_assert_eq(tu_count(out, "pirt_buffer_create"), 1, "%s", out);
}

Test(replay, the_replay_plugin_refuses_a_bad_file)
{
  char *out;
  const char *argv[] = {BIN "/vadd", NULL};
  const char *env[] = {kv("SYCL_PI_REPLAY", tu_write_temp(".db", "")), NULL};
  cr_assert_eq(tu_run(argv, env, &out), 2, "%s", out);
  cr_assert(strstr(out, "pitrace replay plugin: ") && strstr(out, "is empty"), "%s", out);
}

/* ---- Progress and speed ------------------------------------------------------------------------ */

Test(replay, a_large_null_session_replays_with_progress_only_on_a_terminal)
{
  char *db = tu_temp_path(".db"), *out;
  const char *make[] = {BIN "/bench_replay", "--make-session", db, "4000000", NULL};
  cr_assert_eq(tu_run(make, NULL, &out), 0, "%s", out);
  const char *args[] = {"replay", db, "--plugin", LIB "/libpi_null.so", "--stats", NULL};
  cr_assert_eq(pitrace(args, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "matched: 4000000 calls"), "%s", out);
  cr_assert(strstr(out, "calls/s"), "%s", out);
  cr_assert_null(strchr(out, '\r'), "progress on a file: %s", out);
  /* On a terminal (script(1) gives one), a line that updates in place,
   * from a quarter of a second on: 4 M calls take about 0.9 s here (1 M,
   * about 0.25 s, drew none on a quiet machine). */
  char *cmd = NULL;
  cr_assert_geq(asprintf(&cmd, "%s replay %s --plugin %s/libpi_null.so >/dev/null", PITRACE, db,
                         LIB), 0);
  const char *tty[] = {"/usr/bin/script", "-qec", cmd, "/dev/null", NULL};
  cr_assert_eq(tu_run(tty, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "\rpitrace replay: ") && strstr(out, " of 4000000 calls ("), "%s", out);
}
