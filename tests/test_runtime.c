/*
 * test_runtime.c: the runtime core seen from outside: plugin discovery and
 * its errors, the version handshake, unsupported entries, device filters,
 * SYCL_BE, level-1 tracing, a crash inside a plugin, and shutdown order.
 *
 * Each case runs a small program (tests/progs) in its own process with its
 * own environment, on the real OpenCL implementations of this machine (PoCL
 * and rusticl), and reads what it printed.
 */
#include <criterion/criterion.h>

#include "pirt.h"
#include "testutil.h"

#define BIN PITRACE_BIN_DIR
#define LIB PITRACE_LIB_DIR

static const char *const use_device[] = {BIN "/use_device", NULL};

#define POCL "OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd"
#define BOTH_CL "OCL_ICD_VENDORS=" PITRACE_TEST_VENDORS, "RUSTICL_ENABLE=swrast"

/* A config file listing `lines`. */
static char *config(const char *lines) { return tu_write_temp(".conf", lines); }

static char *env_kv(const char *name, const char *value)
{
  char *s = malloc(strlen(name) + strlen(value) + 2);
  sprintf(s, "%s=%s", name, value);
  return s;
}

Test(discovery, missing_plugin_in_config_is_skipped_with_a_trace_line)
{
  char *cfg = config("# test config\n"
                     "libpi_does_not_exist.so opencl\n"
                     LIB "/libpi_opencl.so opencl\n");
  const char *env[] = {env_kv("SYCL_PI_CONFIG", cfg), "SYCL_PI_TRACE=1", POCL, NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert(strstr(out, "Reading plugins config "), "%s", out);
  cr_assert(strstr(out, "Plugin libpi_does_not_exist.so skipped: not found in "
                        "LD_LIBRARY_PATH"), "%s", out);
  cr_assert(strstr(out, "Plugin found and successfully loaded: " LIB "/libpi_opencl.so"),
            "%s", out);
  cr_assert(strstr(out, "use_device: queue created"), "%s", out);
  unlink(cfg);
}

Test(discovery, unreadable_config_is_a_clear_error)
{
  const char *env[] = {"SYCL_PI_CONFIG=/nonexistent/plugins.conf", NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 2, "%s", out);
  cr_assert(strstr(out, "SYCL_PI_CONFIG=/nonexistent/plugins.conf cannot be read "
                        "(No such file or directory)"), "%s", out);
  cr_assert(strstr(out, "PI_ERROR_DEVICE_NOT_FOUND"), "%s", out);
  /* A directory opens, and read as an empty config: the error blamed the
   * plugins ("no PI plugin could be loaded"). */
  const char *dir[] = {"SYCL_PI_CONFIG=/tmp", NULL};
  cr_assert_eq(tu_run(use_device, dir, &out), 2, "%s", out);
  cr_assert(strstr(out, "SYCL_PI_CONFIG=/tmp cannot be read (Is a directory)"), "%s", out);
}

/* A config that names no plugin (empty, or comments only) says so; it
 * said only that no plugin could be loaded, as if each had been tried.
 * An empty target= is said, not taken as no target. */
Test(discovery, a_config_without_plugins_says_so)
{
  char *cfg = config("# no plugin here\n\n");
  const char *env[] = {env_kv("SYCL_PI_CONFIG", cfg), NULL};
  char *out;
  cr_assert_eq(tu_run(use_device, env, &out), 2, "%s", out);
  char want[512];
  snprintf(want, sizeof want, "SYCL_PI_CONFIG=%s names no plugin (a line is: library [backend] "
           "[key=value ...]); add one or unset SYCL_PI_CONFIG", cfg);
  cr_assert(strstr(out, want), "%s", out);
  unlink(cfg);
  cfg = config("libpi_opencl.so opencl target=\n");
  const char *tenv[] = {env_kv("SYCL_PI_CONFIG", cfg), "SYCL_PI_TRACE=1", POCL, NULL};
  cr_assert_eq(tu_run(use_device, tenv, &out), 0, "%s", out);
  cr_assert(strstr(out, ":1: 'target=' names no plugin (target=libpi_opencl.so records that "
                        "plugin); ignored"), "%s", out);
  unlink(cfg);
}

Test(discovery, a_plugin_named_twice_is_bound_once)
{
  /* By its name and by its path: one library either way, whose
   * piPluginInit ran twice and whose devices were listed twice. */
  char *cfg = config("libpi_opencl.so opencl\n" LIB "/libpi_opencl.so\n");
  const char *env[] = {env_kv("SYCL_PI_CONFIG", cfg), "SYCL_PI_TRACE=1", POCL, NULL};
  char *out;
  cr_assert_eq(tu_run(use_device, env, &out), 0, "%s", out);
  cr_assert_eq(tu_count(out, "Plugin found and successfully loaded"), 1, "%s", out);
  cr_assert(strstr(out, "pitrace: plugin " LIB "/libpi_opencl.so (" LIB "/libpi_opencl.so) is "
                        "named twice in the plugins config (first as libpi_opencl.so); the "
                        "second is skipped"), "%s", out);
}

Test(discovery, unknown_backend_in_config_is_skipped)
{
  char *cfg = config("libpi_opencl.so vulkan\n");
  const char *env[] = {env_kv("SYCL_PI_CONFIG", cfg), "SYCL_PI_TRACE=1", NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 2, "%s", out);
  cr_assert(strstr(out, ":1: unknown backend 'vulkan'"), "%s", out);
  cr_assert(strstr(out, "no PI plugin could be loaded"), "%s", out);
  unlink(cfg);
}

Test(discovery, builtin_list_finds_plugins_next_to_the_runtime)
{
  /* No config and no LD_LIBRARY_PATH: the plugins are found in the runtime
   * library's own directory. */
  const char *env[] = {"SYCL_PI_CONFIG=", "LD_LIBRARY_PATH=", "SYCL_PI_TRACE=1",
                       POCL, NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert(strstr(out, "using the built-in list"), "%s", out);
  cr_assert(strstr(out, "Plugin found and successfully loaded: libpi_opencl.so "
                        "[ PluginVersion: 1."), "%s", out);
  cr_assert(strstr(out, "(" LIB "/libpi_opencl.so, backend opencl"), "%s", out);
  cr_assert(strstr(out, "Selected device: opencl:cpu:0"), "%s", out);
}

Test(discovery, ld_library_path_comes_first)
{
  /* A directory on LD_LIBRARY_PATH holding a plugin under the built-in name
   * wins over the runtime's directory: here it is a test plugin. */
  char dir[] = "/tmp/pitrace-llp-XXXXXX";
  cr_assert(mkdtemp(dir));
  char link[512];
  snprintf(link, sizeof link, "%s/libpi_opencl.so", dir);
  cr_assert_eq(symlink(LIB "/libpi_test_partial.so", link), 0);
  const char *env[] = {"SYCL_PI_CONFIG=", env_kv("LD_LIBRARY_PATH", dir),
                       "SYCL_PI_TRACE=1", NULL};
  char *out;
  tu_run(use_device, env, &out);
  cr_assert(strstr(out, "selected \"partial test device\""), "%s", out);
  unlink(link);
  rmdir(dir);
}

Test(handshake, other_major_version_is_refused_naming_both)
{
  char *cfg = config(LIB "/libpi_test_v2.so opencl\n");
  const char *env[] = {env_kv("SYCL_PI_CONFIG", cfg), "SYCL_PI_TRACE=1", NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 2, "%s", out);
  cr_assert(strstr(out, "refused: it implements PI 2.0.1 but this runtime "
                        "implements PI 1.0"), "%s", out);
  cr_assert(strstr(out, "pitrace: plugin " LIB "/libpi_test_v2.so not used: PI "
                        "major version differs"), "%s", out);
  unlink(cfg);
}

Test(handshake, failing_init_is_refused)
{
  char *cfg = config(LIB "/libpi_test_failinit.so\n" LIB "/libpi_opencl.so\n");
  const char *env[] = {env_kv("SYCL_PI_CONFIG", cfg), "SYCL_PI_TRACE=1", POCL, NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert(strstr(out, "refused: piPluginInit returned PI_ERROR_INVALID_OPERATION"),
            "%s", out);
  unlink(cfg);
}

Test(handshake, library_without_piPluginInit_is_skipped)
{
  char *cfg = config("libc.so.6\n" LIB "/libpi_opencl.so\n");
  const char *env[] = {env_kv("SYCL_PI_CONFIG", cfg), "SYCL_PI_TRACE=1", POCL, NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert(strstr(out, "exports no piPluginInit, so it is no PI plugin"), "%s", out);
  unlink(cfg);
}

Test(handshake, null_entry_is_reported_unsupported_and_never_called)
{
  char *cfg = config(LIB "/libpi_test_partial.so\n");
  const char *env[] = {env_kv("SYCL_PI_CONFIG", cfg), "SYCL_PI_TRACE=-1", NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 2, "%s", out);
  cr_assert(strstr(out, "use_device: context created"), "%s", out);
  cr_assert(strstr(out, "PI_ERROR_INVALID_OPERATION: piextQueueCreate is not "
                        "supported by plugin"), "%s", out);
  cr_assert(strstr(out, "leaves piextQueueCreate unsupported"), "%s", out);
  cr_assert_null(strstr(out, "---> piextQueueCreate("), "a NULL entry was called");
  unlink(cfg);
}

Test(handshake, no_plugin_at_all_is_a_clear_error)
{
  /* Every plugin named fails to load (a config naming none says so:
   * discovery::a_config_without_plugins_says_so). */
  char *cfg = config("libpi_does_not_exist.so\n");
  const char *env[] = {env_kv("SYCL_PI_CONFIG", cfg), NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 2, "%s", out);
  cr_assert(strstr(out, "PI_ERROR_DEVICE_NOT_FOUND: no device matches: no PI "
                        "plugin could be loaded (run with SYCL_PI_TRACE=1"), "%s", out);
  unlink(cfg);
}

Test(crash, call_that_crashes_still_shows_its_entry)
{
  char *cfg = config(LIB "/libpi_test_partial.so\n");
  char *trace = tu_temp_path(".trace");
  const char *env[] = {env_kv("SYCL_PI_CONFIG", cfg), "SYCL_PI_TRACE=2",
                       env_kv("SYCL_PI_TRACE_FILE", trace), "PI_TEST_CRASH=1", NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 128 + SIGSEGV, "exit %d: %s", st, out);
  char *t = tu_read_file(trace);
  cr_assert(t, "no trace file");
  const char *entry = strstr(t, "---> piContextCreate(\n");
  cr_assert(entry, "%s", t);
  cr_assert(strstr(entry, "\tpi_uint32 num_devices : 1\n"), "%s", entry);
  cr_assert_null(strstr(entry, ") --->"), "the crashed call has no exit line");
  unlink(cfg);
  unlink(trace);
}

Test(filter, second_cpu_device_by_number)
{
  const char *env[] = {"SYCL_DEVICE_FILTER=opencl:cpu:1", "SYCL_PI_TRACE=1",
                       BOTH_CL, NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  /* Whatever device discovery numbered 1 is the one selected. */
  const char *d1 = strstr(out, "Device opencl:cpu:1 \"");
  cr_assert(d1, "there is no second CPU device: %s", out);
  d1 += strlen("Device opencl:cpu:1 \"");
  char name[256];
  snprintf(name, sizeof name, "%.*s", (int)(strchr(d1, '"') - d1), d1);
  char want[300];
  snprintf(want, sizeof want, "Selected device: opencl:cpu:1 \"%s\"", name);
  cr_assert(strstr(out, want), "%s", out);
  snprintf(want, sizeof want, "use_device: selected \"%s\"", name);
  cr_assert(strstr(out, want), "%s", out);
  cr_assert(strstr(out, "excluded by SYCL_DEVICE_FILTER"), "%s", out);
}

Test(filter, device_type_alone_and_any_order)
{
  const char *env[] = {"SYCL_DEVICE_FILTER=cpu:opencl", "SYCL_PI_TRACE=1", POCL, NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert(strstr(out, "Selected device: opencl:cpu:0"), "%s", out);
}

Test(filter, no_match_is_a_clear_error)
{
  const char *env[] = {"SYCL_DEVICE_FILTER=opencl:gpu", POCL, NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 2, "%s", out);
  cr_assert(strstr(out, "PI_ERROR_DEVICE_NOT_FOUND: no device matches"), "%s", out);
}

Test(filter, other_backend_skips_the_opencl_plugin)
{
  const char *env[] = {"SYCL_DEVICE_FILTER=cuda", "SYCL_PI_CONFIG=",
                       "SYCL_PI_TRACE=1", POCL, NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 2, "%s", out);
  cr_assert(strstr(out, "Plugin libpi_opencl.so skipped: SYCL_DEVICE_FILTER "
                        "selects no opencl device"), "%s", out);
}

/* A config line naming no backend (it is optional): the plugin's backend
 * is learnt from its platforms, so a filter naming one binds it and keeps
 * its devices of that backend. It was skipped ("SYCL_DEVICE_FILTER selects
 * no unknown device") and no plugin was left. */
Test(filter, a_backend_names_devices_of_a_config_plugin_without_one)
{
  char *cfg = config(LIB "/libpi_opencl.so\n");
  const char *env[] = {env_kv("SYCL_PI_CONFIG", cfg), "SYCL_DEVICE_FILTER=opencl:cpu",
                       "SYCL_PI_TRACE=1", POCL, NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert_null(strstr(out, "selects no"), "%s", out);
  cr_assert(strstr(out, "Selected device: opencl:cpu:0 "), "%s", out);
  const char *cuda[] = {env_kv("SYCL_PI_CONFIG", cfg), "SYCL_DEVICE_FILTER=cuda", POCL, NULL};
  cr_assert_eq(tu_run(use_device, cuda, &out), 2, "%s", out);
  cr_assert(strstr(out, "PI_ERROR_DEVICE_NOT_FOUND"), "%s", out);
  unlink(cfg);
}

/* A blank term (only spaces or colons) is left out: it allowed every
 * device ('opencl:gpu, ' took PoCL's CPU); a filter of blank terms alone
 * names no device, said so instead of "no PI plugin could be loaded". */
Test(filter, a_blank_term_allows_nothing)
{
  const char *terms[] = {"SYCL_DEVICE_FILTER=opencl:gpu, ", "SYCL_DEVICE_FILTER=opencl:gpu,:"};
  char *out;
  for (int i = 0; i < 2; i++) {
    const char *env[] = {terms[i], POCL, NULL};
    cr_assert_eq(tu_run(use_device, env, &out), 2, "%s: %s", terms[i], out);
    cr_assert(strstr(out, "no device matches"), "%s", out);
  }
  const char *env[] = {"SYCL_DEVICE_FILTER=,", POCL, NULL};
  cr_assert_eq(tu_run(use_device, env, &out), 2, "%s", out);
  cr_assert(strstr(out, "SYCL_DEVICE_FILTER=, is malformed: it names no device"), "%s", out);
}

/* pirt_device_select's own filter, malformed, is said to be so also when
 * no device is left to match it (it said "no device matches"). */
Test(filter, a_malformed_selection_filter_is_named_without_devices)
{
  setenv("OCL_ICD_VENDORS", "/etc/OpenCL/vendors/pocl.icd", 1);
  setenv("SYCL_DEVICE_FILTER", "cuda:acc:7", 1); /* no such device here */
  size_t n = 1;
  cr_assert_eq(pirt_device_count(&n), PI_SUCCESS, "%s", pirt_error_message());
  cr_assert_eq(n, 0);
  pirt_device *d;
  cr_assert_eq(pirt_device_select("gpu:cpu", &d), PI_ERROR_INVALID_VALUE, "%s",
               pirt_error_message());
  cr_assert(strstr(pirt_error_message(), "device filter 'gpu:cpu' is malformed: 'gpu:cpu' "
                                         "names two device types"), "%s",
            pirt_error_message());
}

Test(filter, malformed_filter_names_the_bad_part)
{
  const char *env[] = {"SYCL_DEVICE_FILTER=opencl:tpu", POCL, NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 2, "%s", out);
  cr_assert(strstr(out, "SYCL_DEVICE_FILTER=opencl:tpu is malformed: 'tpu' is no "
                        "backend"), "%s", out);
  /* A part named twice, a fourth part, a number past int: said, where the
   * last of each won ("gpu:cpu" ran on the CPU) or the term named nothing. */
  const struct {
    const char *filter, *says;
  } bad[] = {{"SYCL_DEVICE_FILTER=gpu:cpu", "'gpu:cpu' names two device types ('gpu' and 'cpu')"},
             {"SYCL_DEVICE_FILTER=opencl:cpu:1:0", "'opencl:cpu:1:0' has more than three parts"},
             {"SYCL_DEVICE_FILTER=1:2", "'1:2' names two device numbers"},
             {"SYCL_DEVICE_FILTER=level_zero:opencl", "names two backends"},
             {"SYCL_DEVICE_FILTER=cpu:99999999999999999999",
              "'99999999999999999999' is not a device number"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    const char *e2[] = {bad[i].filter, POCL, NULL};
    cr_assert_eq(tu_run(use_device, e2, &out), 2, "%s: %s", bad[i].filter, out);
    cr_assert(strstr(out, " is malformed: ") && strstr(out, bad[i].says), "%s", out);
  }
  /* The parts in any order, '*' for one: as before. */
  const char *good[] = {"SYCL_DEVICE_FILTER=cpu:opencl", "SYCL_DEVICE_FILTER=opencl:*:0"};
  for (size_t i = 0; i < 2; i++) {
    const char *e3[] = {good[i], POCL, NULL};
    cr_assert_eq(tu_run(use_device, e3, &out), 0, "%s: %s", good[i], out);
  }
}

Test(filter, sycl_be_prefers_but_does_not_require)
{
  const char *env[] = {"SYCL_BE=PI_CUDA", "SYCL_PI_TRACE=1", POCL, NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert(strstr(out, "Selected device: opencl:cpu:0"), "%s", out);

  const char *bad[] = {"SYCL_BE=PI_VULKAN", POCL, NULL};
  st = tu_run(use_device, bad, &out);
  cr_assert_eq(st, 2, "%s", out);
  cr_assert(strstr(out, "SYCL_BE=PI_VULKAN is not a backend: use PI_OPENCL, "
                        "PI_LEVEL_ZERO or PI_CUDA"), "%s", out);
}

Test(lifetime, runtime_shuts_down_after_application_destructors)
{
  const char *argv[] = {BIN "/teardown_order", NULL};
  const char *env[] = {"SYCL_PI_TRACE=1", POCL, NULL};
  char *out;
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  const char *main_done = strstr(out, "main: device selected");
  const char *app = strstr(out, "app destructor: runtime usable");
  const char *down = strstr(out, "Runtime shutting down");
  const char *torn = strstr(out, "Plugin libpi_opencl.so torn down (PI_SUCCESS)");
  const char *unloaded = strstr(out, "Plugin libpi_opencl.so unloaded");
  cr_assert(main_done && app && down && torn && unloaded, "%s", out);
  cr_assert(main_done < app && app < down && down < torn && torn < unloaded,
            "wrong order:\n%s", out);
}

Test(lifetime, images_register_before_main_and_unregister_after_shutdown)
{
  const char *argv[] = {BIN "/late_unregister", NULL};
  const char *env[] = {"SYCL_PI_TRACE=1", POCL, NULL};
  char *out;
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  const char *ran = strstr(out, "wrote 0 2 4 6");
  const char *down = strstr(out, "Runtime shutting down");
  const char *unreg = strstr(out, "libunreg_late: destructors done");
  cr_assert(ran && down && unreg, "%s", out);
  cr_assert(ran < down && down < unreg, "the library unregistered before the "
            "runtime's shutdown, so this test checks nothing:\n%s", out);
  /* A bundle used after the shutdown says so (it said that no image held
   * the kernel, having built an index of the emptied registry). */
  const char *late = strstr(out, "after shutdown: PI_ERROR_UNINITIALIZED: ");
  cr_assert(late && down < late, "%s", out);
  cr_assert(strstr(late, "has shut down"), "%s", out);
  /* Objects used then say so too, naming the function, and read neither
   * their freed device nor their freed plugin (its last error): the
   * messages were "piQueueFinish failed with PI_ERROR_UNINITIALIZED" and
   * "pirt_buffer_create: 16 bytes on <the freed device's name>: ...". */
  static const char *const uses[][2] = {
      {"finish", "pirt_queue_finish: the pitrace runtime has shut down"},
      {"write", "pirt_write: the pitrace runtime has shut down"},
      {"buffer", "pirt_buffer_create: the pitrace runtime has shut down"},
      {"queue", "pirt_queue_create: the pitrace runtime has shut down"}};
  for (size_t i = 0; i < sizeof uses / sizeof *uses; i++) {
    char want[256];
    snprintf(want, sizeof want, "after shutdown: %s: PI_ERROR_UNINITIALIZED: %s",
             uses[i][0], uses[i][1]);
    cr_assert(strstr(late, want), "no '%s' in:\n%s", want, out);
  }
  /* Releases then only free (no plugin left to call): they say why. */
  const char *rel = strstr(late, "after shutdown: release: ");
  cr_assert(rel && strstr(rel, "has shut down") && !strstr(rel, "failed with"), "%s", out);
  cr_assert(strstr(out, "libunreg_late: destructors done"), "%s", out);
}

/* A thread that used the runtime and ends only after the runtime's library
 * was closed (dlclose): its thread-local destructor must not be left
 * registered in the unmapped library (a runtime that kept its key while
 * such a thread lived crashed the program as the thread ended). */
Test(lifetime, a_thread_that_ends_after_the_runtime_is_unloaded_does_not_crash)
{
  const char *argv[] = {BIN "/dlopen_cycle", PITRACE_LIB_DIR "/libpirt.so", "2", "thread", NULL};
  const char *env[] = {POCL, NULL};
  char *out;
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 0, "status %d: %s", st, out);
  cr_assert(strstr(out, "2 cycles done"), "%s", out);
}

/* Runs fork_threads (tests/progs) in `mode`, recording into `db` unless
 * NULL, and checks that every child ended and the parent too (timeout's
 * 124: the parent hung in fork). */
static void fork_threads(const char *mode, const char *db)
{
  const char *argv[] = {"/usr/bin/timeout", "120", BIN "/fork_threads", "20", mode, NULL};
  const char *env[] = {POCL, db ? env_kv("SYCL_PI_RECORD", db) : NULL, NULL};
  char *out;
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 0, "status %d: %s", st, out);
  cr_assert(strstr(out, "fork_threads: 0 of 20 children hung, 0 failed"), "%s", out);
}

/* A child forked while another thread held the runtime's lock (asking for
 * devices) had it locked with no thread to let it go: its first call that
 * needs a device hung, and so did its exit (7 children of 10). */
Test(lifetime, a_child_forked_while_another_thread_asks_for_devices_does_not_hang)
{
  fork_threads("devices", NULL);
}

/* The same with the program manager's lock, held by a thread setting a
 * bundle's spec constant (or getting its kernel, or building one): a child
 * that only exits hung in the runtime's shutdown (9 children of 10). */
Test(lifetime, a_child_forked_while_another_thread_gets_bundle_kernels_exits)
{
  fork_threads("bundle", NULL);
}

/* glibc lets go of its atfork lock while a handler runs: the exit
 * unregistered the runtime's fork handlers while a fork's prepare handler
 * waited for the program manager's lock. glibc 2.36 then aborted in the
 * fork ("Fatal glibc error: array index 0 not less than array length 0",
 * 20 runs of 20 of fork_threads' "exit"), or, where the list did not
 * shrink under it, the parent handler never ran and the shutdown waited
 * for the lock the prepare handler took (5 runs of 40 of a simpler
 * program, under load). Ten exits, each within 30 s. */
Test(lifetime, a_program_exits_while_a_thread_forks)
{
  const char *argv[] = {"/usr/bin/timeout", "30", BIN "/fork_threads", "0", "exit", NULL};
  const char *env[] = {POCL, NULL};
  for (int i = 0; i < 10; i++) {
    char *out;
    int st = tu_run(argv, env, &out);
    cr_assert_eq(st, 0, "run %d: status %d (124: the exit hung; 134: glibc aborted): %s", i, st,
                 out);
    cr_assert(strstr(out, "fork_threads: exiting while a thread forks"), "%s", out);
    free(out);
  }
}

/* Recorded, a thread getting kernels makes PI calls into the shim under
 * the program manager's lock. The shim's fork handler ran first (glibc
 * runs the newest first) and stopped its writer while the runtime's waited
 * for that lock: the thread, its ring full, waited for the writer, and the
 * parent for itself (2 runs of 3 hung). Every child leaves with _exit;
 * the session keeps every kernel the thread got and released. */
Test(lifetime, a_recorded_program_forks_while_a_thread_makes_pi_calls_under_a_runtime_lock)
{
  char *db = tu_temp_path(".db");
  fork_threads("kernels", db);
  const char *stats[] = {BIN "/pitrace", "stats", db, NULL};
  char *out;
  int st = tu_run(stats, NULL, &out);
  cr_assert_eq(st, 0, "%s", out);
  unsigned long made = 0, released = 0;
  const char *m = strstr(out, "piKernelCreate "), *r = strstr(out, "piKernelRelease ");
  cr_assert(m && r && sscanf(m, "piKernelCreate %lu", &made) == 1 &&
            sscanf(r, "piKernelRelease %lu", &released) == 1, "%s", out);
  cr_assert(made > 0 && made == released, "%lu kernels made, %lu released: %s", made,
            released, out);
}

/* Threads that only read a device (pirt_device_get_info calls no plugin)
 * as the program exits: they were never counted as users of the runtime,
 * so its shutdown tore down and freed the devices and plugins they were
 * reading. A device is now read only through the count, and the shutdown
 * says it leaves them. */
Test(lifetime, threads_reading_a_device_as_the_program_exits_are_counted)
{
  const char *argv[] = {BIN "/trace_end", "exitinfo", "4", NULL};
  const char *env[] = {"SYCL_PI_TRACE=1", POCL, NULL};
  char *out;
  int st = tu_run(argv, env, &out);
  cr_assert_eq(st, 0, "status %d: %s", st, out);
  cr_assert(strstr(out, "4 threads still querying at the end"), "%s", out);
  cr_assert(strstr(out, "Runtime shutting down: other threads still use the runtime"),
            "the shutdown did not see the threads reading a device:\n%s", out);
}
