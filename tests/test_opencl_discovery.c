/*
 * test_opencl_discovery.c: how the OpenCL plugin finds OpenCL
 * implementations without the ICD loader (plugins/opencl/README.md): the
 * vendor lists (OCL_ICD_VENDORS as a directory, a .icd file, a bare .icd
 * name, a library; OPENCL_VENDOR_PATH; PITRACE_OCL_ICD_VENDORS first),
 * libraries named outright (PITRACE_OPENCL_LIBRARIES, libraries= in the
 * plugins config), the stable order, de-duplication, skipping pitrace's own
 * front end, libraries that are no ICD, and calls that an implementation's
 * dispatch table leaves NULL.
 *
 * Most cases load libpi_opencl.so in the test's own process (Criterion runs
 * each test in a process of its own, so each sets its environment freely)
 * and read piPlatformsGet's platforms and message; the others run
 * tests/progs/use_device through the runtime and read its SYCL_PI_TRACE=1
 * output. The real implementations are PoCL and rusticl; the front end, an
 * old ICD and a library linking the ICD loader are test doubles
 * (tests/plugins/fake_icd.c).
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <link.h>

#include "pi/pi.h"
#include "testutil.h"

#define BIN PITRACE_BIN_DIR
#define LIB PITRACE_LIB_DIR
#define VENDORS "/etc/OpenCL/vendors"

static const char *const use_device[] = {BIN "/use_device", NULL};

/* Every variable discovery reads, unset: each test says what it wants. */
static void clean_env(void)
{
  unsetenv("PITRACE_OCL_ICD_VENDORS");
  unsetenv("OCL_ICD_VENDORS");
  unsetenv("OPENCL_VENDOR_PATH");
  unsetenv("PITRACE_OPENCL_LIBRARIES");
  setenv("RUSTICL_ENABLE", "swrast", 1);
}

static char *kv(const char *name, const char *value)
{
  char *s = malloc(strlen(name) + strlen(value) + 2);
  sprintf(s, "%s=%s", name, value);
  return s;
}

/* The library a system .icd file names (its first line). */
static char *icd_library(const char *icd)
{
  char *text = tu_read_file(icd);
  cr_assert(text, "cannot read %s", icd);
  text[strcspn(text, "\r\n")] = 0;
  return text;
}

/* The file the dynamic linker takes for a library name (left loaded: the
 * plugin then gets the same one). */
static char *library_file(const char *name)
{
  void *dl = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
  struct link_map *lm = NULL;
  cr_assert(dl && dlinfo(dl, RTLD_DI_LINKMAP, &lm) == 0, "%s", dlerror());
  return realpath(lm->l_name, NULL);
}

/* A fresh directory (removed when the test ends). */
static char *temp_dir(void)
{
  char *dir = tu_temp_path(".d");
  cr_assert_eq(mkdir(dir, 0700), 0);
  return dir;
}

/* Writes `text` into dir/name. */
static char *put_file(const char *dir, const char *name, const char *text)
{
  char *path = malloc(strlen(dir) + strlen(name) + 2);
  sprintf(path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  cr_assert(f, "%s", path);
  fputs(text, f);
  fclose(f);
  return path;
}

/* What the plugin found: its platforms' names, in order, and the message
 * piPlatformsGet left. */
struct found {
  pi_uint32 n;
  char names[8][128];
  char message[4096];
  void *dl;
  pi_plugin plugin;
};

/* Loads the plugin, gives it `options` (when not NULL) as the runtime does,
 * and lists the platforms. */
static void discover(const char *options, struct found *f)
{
  memset(f, 0, sizeof *f);
  f->dl = dlopen(LIB "/libpi_opencl.so", RTLD_NOW | RTLD_LOCAL);
  cr_assert(f->dl, "%s", dlerror());
  void (*take_options)(const char *) =
      (void (*)(const char *))(uintptr_t)dlsym(f->dl, "pitrace_plugin_options");
  pi_plugin_init_fn init = (pi_plugin_init_fn)(uintptr_t)dlsym(f->dl, "piPluginInit");
  cr_assert(take_options && init, "the plugin exports piPluginInit and pitrace_plugin_options");
  if (options)
    take_options(options);
  snprintf(f->plugin.PiVersion, sizeof f->plugin.PiVersion, "%s", _PI_H_VERSION_STRING);
  cr_assert_eq(init(&f->plugin), PI_SUCCESS);
  struct pi_function_table *t = &f->plugin.PiFunctionTable;
  cr_assert_eq(t->piPlatformsGet(0, NULL, &f->n), PI_SUCCESS);
  char *msg = NULL;
  t->piPluginGetLastError(&msg);
  snprintf(f->message, sizeof f->message, "%s", msg ? msg : "");
  cr_assert_leq(f->n, 8);
  pi_platform plats[8];
  cr_assert_eq(t->piPlatformsGet(8, plats, NULL), PI_SUCCESS);
  for (pi_uint32 i = 0; i < f->n; i++)
    cr_assert_eq(t->piPlatformGetInfo(plats[i], PI_PLATFORM_INFO_NAME,
                                      sizeof f->names[i], f->names[i], NULL),
                 PI_SUCCESS);
}

static void forget(struct found *f)
{
  cr_assert_eq(f->plugin.PiFunctionTable.piTearDown(NULL), PI_SUCCESS);
  dlclose(f->dl);
}

#define POCL_NAME "Portable Computing Language"
#define RUSTICL_NAME "rusticl"

Test(vendors, ocl_icd_vendors_directory_sorted_by_icd_name)
{
  clean_env();
  char *pocl = tu_read_file(VENDORS "/pocl.icd");
  char *rusticl = tu_read_file(VENDORS "/rusticl.icd");
  char *dir = temp_dir();
  put_file(dir, "1-rusticl.icd", rusticl);
  put_file(dir, "2-pocl.icd", pocl);
  put_file(dir, "README", "not an .icd file: ignored\n");
  setenv("OCL_ICD_VENDORS", dir, 1);
  struct found f;
  discover(NULL, &f);
  cr_assert_eq(f.n, 2, "%u platforms: %s", f.n, f.message);
  cr_assert_str_eq(f.names[0], RUSTICL_NAME);
  cr_assert_str_eq(f.names[1], POCL_NAME);
  forget(&f);

  /* The other way round: the names decide, not the directory's order. */
  char *dir2 = temp_dir();
  put_file(dir2, "a-pocl.icd", pocl);
  put_file(dir2, "b-rusticl.icd", rusticl);
  setenv("OCL_ICD_VENDORS", dir2, 1);
  discover(NULL, &f);
  cr_assert_eq(f.n, 2, "%s", f.message);
  cr_assert_str_eq(f.names[0], POCL_NAME);
  cr_assert_str_eq(f.names[1], RUSTICL_NAME);
  forget(&f);
}

Test(vendors, ocl_icd_vendors_single_icd_file)
{
  clean_env();
  setenv("OCL_ICD_VENDORS", VENDORS "/rusticl.icd", 1);
  struct found f;
  discover(NULL, &f);
  cr_assert_eq(f.n, 1, "%s", f.message);
  cr_assert_str_eq(f.names[0], RUSTICL_NAME);
  forget(&f);
}

Test(vendors, bare_icd_name_is_looked_for_in_opencl_vendor_path)
{
  clean_env();
  char *dir = temp_dir();
  put_file(dir, "mine.icd", tu_read_file(VENDORS "/pocl.icd"));
  setenv("OPENCL_VENDOR_PATH", dir, 1);
  setenv("OCL_ICD_VENDORS", "mine.icd", 1);
  struct found f;
  discover(NULL, &f);
  cr_assert_eq(f.n, 1, "%s", f.message);
  cr_assert_str_eq(f.names[0], POCL_NAME);
  forget(&f);

  /* Without OCL_ICD_VENDORS, OPENCL_VENDOR_PATH is the vendor directory. */
  unsetenv("OCL_ICD_VENDORS");
  discover(NULL, &f);
  cr_assert_eq(f.n, 1, "%s", f.message);
  cr_assert_str_eq(f.names[0], POCL_NAME);
  forget(&f);
}

Test(vendors, ocl_icd_vendors_library_name)
{
  clean_env();
  setenv("OCL_ICD_VENDORS", icd_library(VENDORS "/pocl.icd"), 1);
  struct found f;
  discover(NULL, &f);
  cr_assert_eq(f.n, 1, "%s", f.message);
  cr_assert_str_eq(f.names[0], POCL_NAME);
  forget(&f);
}

Test(vendors, pitrace_ocl_icd_vendors_comes_first)
{
  clean_env();
  setenv("OCL_ICD_VENDORS", VENDORS "/pocl.icd", 1);
  setenv("PITRACE_OCL_ICD_VENDORS", VENDORS "/rusticl.icd", 1);
  struct found f;
  discover(NULL, &f);
  cr_assert_eq(f.n, 1, "%s", f.message);
  cr_assert_str_eq(f.names[0], RUSTICL_NAME);
  forget(&f);
}

Test(vendors, same_library_listed_twice_is_taken_once)
{
  clean_env();
  char *pocl = tu_read_file(VENDORS "/pocl.icd");
  char *dir = temp_dir();
  put_file(dir, "pocl.icd", pocl);
  put_file(dir, "pocl-again.icd", pocl);
  setenv("OCL_ICD_VENDORS", dir, 1);
  /* And once more by its full path. */
  char *file = library_file(icd_library(VENDORS "/pocl.icd"));
  setenv("PITRACE_OPENCL_LIBRARIES", file, 1);
  struct found f;
  discover(NULL, &f);
  cr_assert_eq(f.n, 1, "%u platforms: %s", f.n, f.message);
  cr_assert_str_eq(f.names[0], POCL_NAME);
  /* "pocl-again.icd" sorts first: it takes the library, the others are
   * duplicates of it. */
  char want[8192];
  snprintf(want, sizeof want, "%s/pocl.icd: %s skipped: it is %s, already taken from "
           "%s/pocl-again.icd", dir, icd_library(VENDORS "/pocl.icd"), file, dir);
  cr_assert(strstr(f.message, want), "%s", f.message);
  snprintf(want, sizeof want, "PITRACE_OPENCL_LIBRARIES: %s skipped: it is %s, already "
           "taken from %s/pocl-again.icd", file, file, dir);
  cr_assert(strstr(f.message, want), "%s", f.message);
  forget(&f);
}

Test(vendors, front_end_is_skipped_without_being_called)
{
  clean_env();
  char *dir = temp_dir();
  put_file(dir, "pitrace.icd", LIB "/libfake_frontend_icd.so\n");
  put_file(dir, "pocl.icd", tu_read_file(VENDORS "/pocl.icd"));
  setenv("OCL_ICD_VENDORS", dir, 1);
  setenv("PITRACE_OPENCL_LIBRARIES", LIB "/libfake_frontend_icd.so", 1);
  struct found f;
  discover(NULL, &f); /* the double aborts if the plugin calls into it */
  cr_assert_eq(f.n, 1, "%s", f.message);
  cr_assert_str_eq(f.names[0], POCL_NAME);
  cr_assert(strstr(f.message, "/pitrace.icd: " LIB "/libfake_frontend_icd.so "
                              "skipped: it is pitrace's own OpenCL front end "
                              "(it exports pitrace_opencl_frontend)"),
            "%s", f.message);
  cr_assert(strstr(f.message, "PITRACE_OPENCL_LIBRARIES: " LIB
                              "/libfake_frontend_icd.so skipped: it is pitrace's "
                              "own OpenCL front end"),
            "%s", f.message);
  forget(&f);
}

Test(vendors, a_list_naming_only_the_front_end_counts_as_unset)
{
  /* What the launcher leaves when the user had no OCL_ICD_VENDORS: the
   * application's loader sees the front end only, the plugin the usual
   * vendor directory. */
  clean_env();
  char *icd = put_file(temp_dir(), "pitrace.icd", LIB "/libfake_frontend_icd.so\n");
  char *dir = temp_dir();
  put_file(dir, "pocl.icd", tu_read_file(VENDORS "/pocl.icd"));
  setenv("OCL_ICD_VENDORS", icd, 1);
  setenv("OPENCL_VENDOR_PATH", dir, 1);
  struct found f;
  discover(NULL, &f);
  cr_assert_eq(f.n, 1, "%s", f.message);
  cr_assert_str_eq(f.names[0], POCL_NAME);
  cr_assert(strstr(f.message, "OCL_ICD_VENDORS names nothing but pitrace's front "
                              "end, so it counts as unset"),
            "%s", f.message);
  forget(&f);
}

Test(vendors, library_linking_the_icd_loader_is_no_icd)
{
  /* dlsym finds the loader's clGetExtensionFunctionAddress through it; the
   * plugin must not take that for the library's own. */
  clean_env();
  setenv("OCL_ICD_VENDORS", temp_dir(), 1);
  setenv("PITRACE_OPENCL_LIBRARIES", LIB "/libfake_loader_client.so", 1);
  struct found f;
  discover(NULL, &f);
  cr_assert_eq(f.n, 0, "%s", f.message);
  cr_assert(strstr(f.message, "PITRACE_OPENCL_LIBRARIES: " LIB
                              "/libfake_loader_client.so ("),
            "%s", f.message);
  cr_assert(strstr(f.message, "skipped: it has no clIcdGetPlatformIDsKHR of its "
                              "own, so it is no OpenCL ICD implementation"),
            "%s", f.message);
  forget(&f);
}

Test(vendors, explicit_libraries_follow_the_icds)
{
  clean_env();
  setenv("OCL_ICD_VENDORS", VENDORS "/rusticl.icd", 1);
  setenv("PITRACE_OPENCL_LIBRARIES", icd_library(VENDORS "/pocl.icd"), 1);
  struct found f;
  discover(NULL, &f);
  cr_assert_eq(f.n, 2, "%s", f.message);
  cr_assert_str_eq(f.names[0], RUSTICL_NAME);
  cr_assert_str_eq(f.names[1], POCL_NAME);
  forget(&f);
}

Test(options, libraries_option_adds_libraries_and_unknown_options_are_named)
{
  clean_env();
  setenv("OCL_ICD_VENDORS", temp_dir(), 1);
  char options[4200];
  snprintf(options, sizeof options, "libraries=%s frobnicate=1",
           icd_library(VENDORS "/pocl.icd"));
  struct found f;
  discover(options, &f);
  cr_assert_eq(f.n, 1, "%s", f.message);
  cr_assert_str_eq(f.names[0], POCL_NAME);
  cr_assert(strstr(f.message, "option 'frobnicate=1' is unknown to the OpenCL "
                              "plugin"),
            "%s", f.message);
  cr_assert(strstr(f.message, "holds no *.icd file"), "%s", f.message);
  forget(&f);
}

Test(calls, null_objects_fail_as_the_icd_loader_fails_them)
{
  clean_env();
  setenv("OCL_ICD_VENDORS", VENDORS "/pocl.icd", 1);
  struct found f;
  discover(NULL, &f);
  struct pi_function_table *t = &f.plugin.PiFunctionTable;
  pi_device_type type;
  cr_assert_eq(t->piDeviceGetInfo(NULL, PI_DEVICE_INFO_TYPE, sizeof type, &type, NULL),
               PI_ERROR_INVALID_DEVICE);
  cr_assert_eq(t->piQueueFinish(NULL), PI_ERROR_INVALID_QUEUE);
  cr_assert_eq(t->piEventsWait(1, (pi_event[]){NULL}), PI_ERROR_INVALID_EVENT);
  /* Nor did anything load the ICD loader. */
  cr_assert_null(dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD),
                 "libOpenCL.so.1 is loaded");
  forget(&f);
}

/* ---- Through the runtime ------------------------------------------------ */

Test(runtime, libraries_option_in_the_plugins_config)
{
  char *pocl = icd_library(VENDORS "/pocl.icd");
  char line[4400];
  snprintf(line, sizeof line, "# OpenCL from an explicit library\n"
           LIB "/libpi_opencl.so  opencl  libraries=%s\n", pocl);
  char *cfg = tu_write_temp(".conf", line);
  const char *env[] = {kv("SYCL_PI_CONFIG", cfg), kv("OCL_ICD_VENDORS", temp_dir()),
                       "PITRACE_OCL_ICD_VENDORS=", "PITRACE_OPENCL_LIBRARIES=",
                       "SYCL_PI_TRACE=1", NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  char want[4400];
  snprintf(want, sizeof want, "Plugin " LIB "/libpi_opencl.so (" LIB
           "/libpi_opencl.so): options libraries=%s", pocl);
  cr_assert(strstr(out, want), "%s", out);
  cr_assert(strstr(out, "Plugin " LIB "/libpi_opencl.so: 1 platform(s)"), "%s", out);
  cr_assert(strstr(out, "on platform \"" POCL_NAME "\""), "%s", out);
  cr_assert(strstr(out, "use_device: queue created"), "%s", out);
}

Test(runtime, recording_shim_line_passes_the_options_to_its_target)
{
  char *pocl = icd_library(VENDORS "/pocl.icd");
  char line[4400];
  snprintf(line, sizeof line, "libpi_shim.so opencl target=" LIB
           "/libpi_opencl.so libraries=%s\n", pocl);
  char *cfg = tu_write_temp(".conf", line);
  const char *env[] = {kv("SYCL_PI_CONFIG", cfg), kv("OCL_ICD_VENDORS", temp_dir()),
                       kv("SYCL_PI_RECORD", tu_temp_path(".db")),
                       "PITRACE_OCL_ICD_VENDORS=", "PITRACE_OPENCL_LIBRARIES=",
                       "SYCL_PI_TRACE=1", NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 0, "%s", out);
  cr_assert(strstr(out, "/libpi_opencl.so): options libraries="), "%s", out);
  cr_assert(strstr(out, "recorded by the shim libpi_shim.so"), "%s", out);
  cr_assert(strstr(out, "on platform \"" POCL_NAME "\""), "%s", out);
}

Test(runtime, options_for_a_plugin_without_the_export_are_reported)
{
  char *cfg = tu_write_temp(".conf", LIB "/libpi_test_partial.so color=blue\n");
  const char *env[] = {kv("SYCL_PI_CONFIG", cfg), "SYCL_PI_TRACE=1", NULL};
  char *out;
  tu_run(use_device, env, &out);
  cr_assert(strstr(out, "/libpi_test_partial.so) ignores the options 'color=blue': "
                        "it exports no pitrace_plugin_options"),
            "%s", out);
  cr_assert(strstr(out, "backend unknown"), "%s", out);
}

Test(runtime, missing_vendor_library_gives_a_clear_trace_line)
{
  char *icd = put_file(temp_dir(), "gone.icd", "/nonexistent/libgone_opencl.so\n");
  const char *env[] = {kv("OCL_ICD_VENDORS", icd), "PITRACE_OCL_ICD_VENDORS=",
                       "PITRACE_OPENCL_LIBRARIES=", "SYCL_PI_CONFIG=",
                       "SYCL_PI_TRACE=1", NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 2, "%s", out);
  char want[1024];
  snprintf(want, sizeof want,
           "Plugin libpi_opencl.so: 0 platform(s): piPlatformsGet: no OpenCL "
           "platform (from OCL_ICD_VENDORS=%s): %s: /nonexistent/libgone_opencl.so "
           "cannot be loaded (/nonexistent/libgone_opencl.so: cannot open shared "
           "object file: No such file or directory)\n", icd, icd);
  cr_assert(strstr(out, want), "%s", out);
}

Test(runtime, null_dispatch_entry_fails_naming_function_and_platform)
{
  char *icd = put_file(temp_dir(), "sparse.icd", LIB "/libfake_sparse_icd.so\n");
  const char *env[] = {kv("OCL_ICD_VENDORS", icd), "PITRACE_OCL_ICD_VENDORS=",
                       "PITRACE_OPENCL_LIBRARIES=", "SYCL_PI_CONFIG=",
                       "SYCL_DEVICE_FILTER=opencl", "SYCL_PI_TRACE=1", NULL};
  char *out;
  int st = tu_run(use_device, env, &out);
  cr_assert_eq(st, 2, "exit %d (a crash is 128 + its signal): %s", st, out);
  cr_assert(strstr(out, "use_device: selected \"sparse test device\" on "
                        "\"pitrace test double: sparse ICD\""),
            "%s", out);
  cr_assert(strstr(out, "PI_ERROR_INVALID_OPERATION"), "%s", out);
  cr_assert(strstr(out, "piContextCreate: clCreateContext is NULL in the ICD "
                        "dispatch table of platform 'pitrace test double: sparse "
                        "ICD' (" LIB "/libfake_sparse_icd.so)"),
            "%s", out);
}
