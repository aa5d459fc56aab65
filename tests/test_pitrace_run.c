/*
 * test_pitrace_run.c: how `pitrace run` and `pitrace record` route OpenCL
 * applications through the OpenCL front end (cli/route_opencl.c). The
 * command gets OCL_ICD_VENDORS naming the build tree's pitrace.icd, and the
 * user's own value in PITRACE_OCL_ICD_VENDORS (a nested run keeps the outer
 * one); --no-opencl changes nothing; record routes by default; a vendor
 * file that is missing, or that names a missing library (an installed tree
 * moved), is one line and exit 2, for run and record alike; a symbolic link
 * to pitrace finds the tree pitrace lies in. Last, real applications: clinfo
 * lists PoCL through `pitrace run` (its calls in the SYCL_PI_TRACE=2 trace),
 * and `pitrace record -- clinfo` keeps a session of its calls (skipped
 * without clinfo, and in sanitized builds, whose front end cannot load into
 * Debian's clinfo).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "testutil.h"

#define BIN PITRACE_BIN_DIR
#define PITRACE BIN "/pitrace"
#define POCL_ICD "/etc/OpenCL/vendors/pocl.icd"
/* Prints what the loader and pitrace's plugin will read. */
#define SHOW "echo \"${OCL_ICD_VENDORS-unset}|${PITRACE_OCL_ICD_VENDORS-unset}\""

/* The build tree's vendor file, resolved as pitrace resolves it. */
static char build_icd[PATH_MAX];

static void find_icd(void)
{
  cr_assert_not_null(realpath(BIN "/../etc/OpenCL/vendors/pitrace.icd", build_icd),
                     "the build tree has no etc/OpenCL/vendors/pitrace.icd");
}

TestSuite(pitrace_run, .init = find_icd);

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

/* Runs `PROG VERB ARGS...` (PROG a pitrace) with the environment changes
 * `env` ("NAME=" unsets), output in *out. */
static int pitrace_at(const char *prog, const char *verb, const char *const *args,
                      const char *const *env, char **out)
{
  const char *argv[32] = {prog, verb};
  size_t n = 2;
  for (; args[n - 2]; n++) {
    cr_assert_lt(n, 31);
    argv[n] = args[n - 2];
  }
  argv[n] = NULL;
  return tu_run(argv, env, out);
}

static int pitrace(const char *verb, const char *const *args, const char *const *env,
                   char **out)
{
  return pitrace_at(PITRACE, verb, args, env, out);
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
  FILE *in = fopen(from, "rb");
  cr_assert_not_null(in, "%s", from);
  FILE *o = fopen(to, "wb");
  cr_assert_not_null(o, "%s", to);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0)
    cr_assert_eq(fwrite(buf, 1, n, o), n);
  fclose(in);
  cr_assert_eq(fclose(o), 0);
  cr_assert_eq(chmod(to, mode), 0);
}

/* A tree of its own: DIR/bin/pitrace (a copy), with DIR/etc/OpenCL/vendors/
 * pitrace.icd holding `icd_text` unless that is NULL. Returns DIR/bin/pitrace. */
static char *lone_pitrace(const char *icd_text)
{
  char *dir = tu_temp_path(".tree");
  char *bin = str_printf("%s/bin", dir);
  cr_assert_eq(mkdir(dir, 0700), 0);
  cr_assert_eq(mkdir(bin, 0700), 0);
  char *prog = str_printf("%s/pitrace", bin);
  copy_file(PITRACE, prog, 0755);
  if (icd_text) {
    const char *parts[] = {"etc", "OpenCL", "vendors"};
    char *p = strdup(dir);
    for (size_t i = 0; i < 3; i++) {
      char *q = str_printf("%s/%s", p, parts[i]);
      free(p);
      p = q;
      cr_assert_eq(mkdir(p, 0700), 0);
    }
    char *icd = str_printf("%s/pitrace.icd", p);
    FILE *f = fopen(icd, "w");
    cr_assert_not_null(f);
    fputs(icd_text, f);
    fclose(f);
    free(icd);
    free(p);
  }
  free(bin);
  free(dir);
  return prog;
}

static bool one_line(const char *out) { return tu_count(out, "\n") == 1; }

/* ---- pitrace run ------------------------------------------------------------------ */

Test(pitrace_run, points_the_loader_at_pitrace_icd_only)
{
  char *out;
  const char *args[] = {"--", "/bin/sh", "-c", SHOW, NULL};
  const char *env[] = {"OCL_ICD_VENDORS=", "PITRACE_OCL_ICD_VENDORS=", NULL};
  cr_assert_eq(pitrace("run", args, env, &out), 0, "%s", out);
  char *want = str_printf("%s|unset\n", build_icd);
  cr_assert_str_eq(out, want);
  free(out);
  /* Without "--" too. */
  cr_assert_eq(pitrace("run", args + 1, env, &out), 0, "%s", out);
  cr_assert_str_eq(out, want);
  free(out);
  free(want);
}

Test(pitrace_run, keeps_the_users_vendors_for_the_plugin)
{
  char *out;
  const char *args[] = {"--", "/bin/sh", "-c", SHOW, NULL};
  char *want = str_printf("%s|%s\n", build_icd, POCL_ICD);
  const char *env[] = {"OCL_ICD_VENDORS=" POCL_ICD, "PITRACE_OCL_ICD_VENDORS=", NULL};
  cr_assert_eq(pitrace("run", args, env, &out), 0, "%s", out);
  cr_assert_str_eq(out, want);
  free(out);
  /* A directory is kept as well: the loader's value, whatever it is. */
  const char *env_dir[] = {"OCL_ICD_VENDORS=/etc/OpenCL/vendors", NULL};
  cr_assert_eq(pitrace("run", args, env_dir, &out), 0, "%s", out);
  char *want_dir = str_printf("%s|/etc/OpenCL/vendors\n", build_icd);
  cr_assert_str_eq(out, want_dir);
  free(out);
  free(want_dir);
  free(want);
}

Test(pitrace_run, a_run_inside_a_run_keeps_the_outer_saved_value)
{
  char *out;
  const char *args[] = {"--", PITRACE, "run", "--", "/bin/sh", "-c", SHOW, NULL};
  const char *env[] = {"OCL_ICD_VENDORS=" POCL_ICD, NULL};
  cr_assert_eq(pitrace("run", args, env, &out), 0, "%s", out);
  char *want = str_printf("%s|%s\n", build_icd, POCL_ICD);
  cr_assert_str_eq(out, want);
  free(out);
  /* pitrace.icd reached through a symbolic link is pitrace's own file too. */
  char *link = tu_temp_path(".icd");
  cr_assert_eq(symlink(build_icd, link), 0);
  char *setting = str_printf("OCL_ICD_VENDORS=%s", link);
  const char *env_link[] = {setting, "PITRACE_OCL_ICD_VENDORS=", NULL};
  cr_assert_eq(pitrace("run", args + 3, env_link, &out), 0, "%s", out);
  char *want_link = str_printf("%s|unset\n", build_icd);
  cr_assert_str_eq(out, want_link);
  free(out);
  free(want_link);
  free(setting);
  free(link);
  free(want);
}

Test(pitrace_run, no_opencl_changes_nothing)
{
  char *out;
  const char *args[] = {"--no-opencl", "--", "/bin/sh", "-c", SHOW, NULL};
  const char *env[] = {"OCL_ICD_VENDORS=" POCL_ICD, "PITRACE_OCL_ICD_VENDORS=", NULL};
  cr_assert_eq(pitrace("run", args, env, &out), 0, "%s", out);
  cr_assert_str_eq(out, POCL_ICD "|unset\n");
  free(out);
  const char *unset[] = {"OCL_ICD_VENDORS=", "PITRACE_OCL_ICD_VENDORS=", NULL};
  cr_assert_eq(pitrace("run", args, unset, &out), 0, "%s", out);
  cr_assert_str_eq(out, "unset|unset\n");
  free(out);
}

Test(pitrace_run, passes_the_status_on_and_usage_errors_exit_2)
{
  char *out;
  const char *fails[] = {"--", "/bin/sh", "-c", "exit 7", NULL};
  cr_assert_eq(pitrace("run", fails, NULL, &out), 7, "%s", out);
  free(out);
  const char *missing[] = {"--", "/nonexistent/program", NULL};
  cr_assert_eq(pitrace("run", missing, NULL, &out), 127, "%s", out);
  cr_assert(strstr(out, "pitrace run: cannot run /nonexistent/program: No such file"), "%s",
            out);
  free(out);
  /* A script whose #! interpreter is missing names the interpreter, not
   * the script, which is there (as pitrace record says it). */
  char *script = tu_write_temp(".sh", "#! /nonexistent/interp -x\necho hi\n");
  cr_assert_eq(chmod(script, 0700), 0);
  const char *noint[] = {"--", script, NULL};
  cr_assert_eq(pitrace("run", noint, NULL, &out), 127, "%s", out);
  char said[512];
  snprintf(said, sizeof said, "pitrace run: cannot run %s: its interpreter /nonexistent/interp: "
           "No such file or directory\n", script);
  cr_assert(strstr(out, said), "%s", out);
  free(out);
  unlink(script);
  /* PATH="" is the current directory to execvp, where there is no ls:
   * pitrace looked in /bin and blamed /bin/ls's loader. */
  const char *empty_path[] = {"/usr/bin/env", "PATH=", PITRACE, "run", "--", "ls", NULL};
  cr_assert_eq(tu_run(empty_path, NULL, &out), 127, "%s", out);
  cr_assert_str_eq(out, "pitrace run: cannot run ls: No such file or directory\n");
  free(out);
  const char *const usage[][4] = {{NULL}, {"--", NULL}, {"--bogus", "--", "true", NULL},
                                  {"--no-opencl", NULL}};
  for (size_t i = 0; i < sizeof usage / sizeof *usage; i++) {
    cr_assert_eq(pitrace("run", usage[i], NULL, &out), 2, "case %zu: %s", i, out);
    cr_assert_eq(strncmp(out, "pitrace run: ", 13), 0, "case %zu: %s", i, out);
    cr_assert(one_line(out), "case %zu: %s", i, out);
    free(out);
  }
  const char *help[] = {"--help", NULL};
  cr_assert_eq(pitrace("run", help, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "usage: pitrace run [--no-opencl] [--] CMD [ARGS...]"), "%s", out);
  cr_assert(strstr(out, "PITRACE_OCL_ICD_VENDORS"), "%s", out);
  free(out);
  const char *none[] = {NULL};
  cr_assert_eq(pitrace("--help", none, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "  run "), "pitrace --help does not list run: %s", out);
  free(out);
}

Test(pitrace_run, a_missing_vendor_file_is_one_line_and_exit_2)
{
  char *prog = lone_pitrace(NULL), *out;
  const char *args[] = {"--", "true", NULL};
  cr_assert_eq(pitrace_at(prog, "run", args, NULL, &out), 2, "%s", out);
  cr_assert_eq(strncmp(out, "pitrace run: ", 13), 0, "%s", out);
  cr_assert(strstr(out, "etc/OpenCL/vendors/pitrace.icd is missing"), "%s", out);
  cr_assert(one_line(out), "%s", out);
  free(out);
  const char *no_opencl[] = {"--no-opencl", "--", "true", NULL};
  cr_assert_eq(pitrace_at(prog, "run", no_opencl, NULL, &out), 0, "%s", out);
  free(out);
  char *dir = tu_temp_path(".sessions");
  const char *rec[] = {"-o", dir, "--", "true", NULL};
  cr_assert_eq(pitrace_at(prog, "record", rec, NULL, &out), 2, "%s", out);
  cr_assert_eq(strncmp(out, "pitrace record: ", 16), 0, "%s", out);
  cr_assert(strstr(out, "is missing"), "%s", out);
  cr_assert(strstr(out, "--no-opencl"), "record's error does not name --no-opencl: %s", out);
  cr_assert(one_line(out), "%s", out);
  free(out);
  struct stat st;
  cr_assert_neq(stat(dir, &st), 0, "a usage error created %s", dir);
  const char *rec_off[] = {"--no-opencl", "-o", dir, "--", "true", NULL};
  cr_assert_eq(pitrace_at(prog, "record", rec_off, NULL, &out), 0, "%s", out);
  free(out);
  free(dir);
  free(prog);
}

Test(pitrace_run, a_vendor_file_naming_a_missing_library_is_one_line_and_exit_2)
{
  /* An installed tree moved after installing: its file names the old path. */
  char *prog = lone_pitrace("/nonexistent/old-prefix/lib/libpitrace_opencl.so\n"), *out;
  const char *args[] = {"--", "true", NULL};
  cr_assert_eq(pitrace_at(prog, "run", args, NULL, &out), 2, "%s", out);
  cr_assert(strstr(out, "names /nonexistent/old-prefix/lib/libpitrace_opencl.so, which is "
                        "missing"),
            "%s", out);
  cr_assert(one_line(out), "%s", out);
  free(out);
  free(prog);
  /* An empty file names nothing. */
  prog = lone_pitrace("\n");
  cr_assert_eq(pitrace_at(prog, "run", args, NULL, &out), 2, "%s", out);
  cr_assert(strstr(out, "names no library"), "%s", out);
  cr_assert(one_line(out), "%s", out);
  free(out);
  free(prog);
  /* The library as the loader reads it: blanks around it do not matter. */
  char *text = str_printf("  %s/../lib/libpitrace_opencl.so \n", BIN);
  prog = lone_pitrace(text);
  const char *show[] = {"--", "/bin/sh", "-c", "echo \"$OCL_ICD_VENDORS\"", NULL};
  cr_assert_eq(pitrace_at(prog, "run", show, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, ".tree/etc/OpenCL/vendors/pitrace.icd\n"), "%s", out);
  free(out);
  free(prog);
  free(text);
}

Test(pitrace_run, a_link_to_pitrace_finds_the_tree_pitrace_lies_in)
{
  char *link = tu_temp_path("-pitrace"), *out;
  cr_assert_eq(symlink(PITRACE, link), 0);
  const char *args[] = {"--", "/bin/sh", "-c", SHOW, NULL};
  const char *env[] = {"OCL_ICD_VENDORS=", "PITRACE_OCL_ICD_VENDORS=", NULL};
  cr_assert_eq(pitrace_at(link, "run", args, env, &out), 0, "%s", out);
  char *want = str_printf("%s|unset\n", build_icd);
  cr_assert_str_eq(out, want);
  free(out);
  free(want);
  free(link);
}

/* ---- pitrace record --------------------------------------------------------------- */

Test(pitrace_run, record_routes_by_default_and_not_with_no_opencl)
{
  char *dir = tu_temp_path(".sessions"), *out;
  const char *env[] = {"OCL_ICD_VENDORS=" POCL_ICD, "PITRACE_OCL_ICD_VENDORS=", NULL};
  const char *on[] = {"-o", dir, "--", "/bin/sh", "-c", SHOW, NULL};
  cr_assert_eq(pitrace("record", on, env, &out), 0, "%s", out);
  char *want = str_printf("%s|%s\n", build_icd, POCL_ICD);
  cr_assert_eq(strncmp(out, want, strlen(want)), 0, "record did not route:\n%s", out);
  free(out);
  const char *off[] = {"--no-opencl", "-o", dir, "--", "/bin/sh", "-c", SHOW, NULL};
  cr_assert_eq(pitrace("record", off, env, &out), 0, "%s", out);
  cr_assert_eq(strncmp(out, POCL_ICD "|unset\n", strlen(POCL_ICD) + 7), 0,
               "record --no-opencl routed:\n%s", out);
  free(out);
  const char *help[] = {"--help", NULL};
  cr_assert_eq(pitrace("record", help, NULL, &out), 0, "%s", out);
  cr_assert(strstr(out, "--no-opencl"), "%s", out);
  free(out);
  free(want);
  free(dir);
}

/* ---- Real applications ------------------------------------------------------------- */

static const char *clinfo_path(void)
{
#ifdef PITRACE_TEST_SANITIZED
  cr_skip_test("a sanitized front end cannot load into Debian's clinfo");
#endif
  static const char *const where[] = {"/usr/bin/clinfo", "/usr/local/bin/clinfo"};
  for (size_t i = 0; i < sizeof where / sizeof *where; i++)
    if (access(where[i], X_OK) == 0)
      return where[i];
  cr_skip_test("clinfo is not installed");
  return NULL;
}

Test(pitrace_run, clinfo_lists_pocl_through_the_front_end, .timeout = 120)
{
  const char *clinfo = clinfo_path();
  char *out;
  const char *args[] = {"--", clinfo, "-l", NULL};
  const char *env[] = {"OCL_ICD_VENDORS=" POCL_ICD, "PITRACE_OCL_ICD_VENDORS=",
                       "SYCL_PI_TRACE=2", "SYCL_PI_TRACE_FILE=", NULL};
  cr_assert_eq(pitrace("run", args, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "Platform #0: Portable Computing Language"), "%s", out);
  /* Its calls went through the runtime: the trace shows them. */
  cr_assert(strstr(out, "piPlatformsGet"), "no PI call in the trace:\n%s", out);
  cr_assert(strstr(out, "piDevicesGet"), "no PI call in the trace:\n%s", out);
  free(out);
  /* Not routed, clinfo sees PoCL directly: no trace. */
  const char *off[] = {"--no-opencl", "--", clinfo, "-l", NULL};
  cr_assert_eq(pitrace("run", off, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "Platform #0: Portable Computing Language"), "%s", out);
  cr_assert_null(strstr(out, "piPlatformsGet"), "%s", out);
  free(out);
}

/* An OpenCL application that finds no platform through pitrace is told
 * why on stderr, once: with a malformed SYCL_DEVICE_FILTER `pitrace run --
 * clinfo -l` printed nothing at all (the reason only at SYCL_PI_TRACE=1). */
Test(pitrace_run, no_platform_says_why, .timeout = 300)
{
  const char *clinfo = clinfo_path();
  char *out;
  const char *args[] = {"--", clinfo, "-l", NULL};
  const char *env[] = {"OCL_ICD_VENDORS=" POCL_ICD, "PITRACE_OCL_ICD_VENDORS=",
                       "SYCL_DEVICE_FILTER=xyz", NULL};
  cr_assert_eq(pitrace("run", args, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "pitrace: no OpenCL platform: no device matches: "
                        "SYCL_DEVICE_FILTER=xyz is malformed"), "%s", out);
  cr_assert_eq(tu_count(out, "pitrace: no OpenCL platform"), 1, "%s", out);
  free(out);
}

Test(pitrace_run, record_keeps_a_session_of_clinfo, .timeout = 300)
{
  const char *clinfo = clinfo_path();
  char *dir = tu_temp_path(".sessions"), *out;
  const char *args[] = {"-o", dir, "--", clinfo, NULL};
  const char *env[] = {"OCL_ICD_VENDORS=" POCL_ICD, "PITRACE_OCL_ICD_VENDORS=", NULL};
  cr_assert_eq(pitrace("record", args, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "Portable Computing Language"), "%s", out);
  cr_assert(strstr(out, "pitrace record: 1 session in "), "%s", out);
  free(out);
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "no sessions directory %s", dir);
  char *session = NULL;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strncmp(e->d_name, "pitrace-", 8) == 0 && strstr(e->d_name, ".db") &&
        !strstr(e->d_name, ".db-")) {
      cr_assert_null(session, "more than one session in %s", dir);
      session = str_printf("%s/%s", dir, e->d_name);
    }
  closedir(d);
  cr_assert_not_null(session, "record -- clinfo kept no session in %s", dir);
  cr_assert_gt(tu_db_int(session, "SELECT calls FROM sessions"), 10, "%s", session);
  cr_assert_gt(tu_db_int(session, "SELECT count(*) FROM pi_calls WHERE api = 'piDevicesGet'"), 0,
               "%s has no piDevicesGet", session);
  free(session);
  /* --no-opencl: clinfo makes no PI call, so nothing is recorded. */
  const char *off[] = {"--no-opencl", "-o", dir, "--", clinfo, NULL};
  cr_assert_eq(pitrace("record", off, env, &out), 0, "%s", out);
  cr_assert(strstr(out, "no session was recorded"), "%s", out);
  free(out);
  free(dir);
}
