/*
 * plugins.c: finding, loading, binding and unloading plugins.
 *
 * Which plugins: the config file named by SYCL_PI_CONFIG, else the installed
 * default config (<libdir>/../etc/pitrace/plugins.conf, next to the runtime
 * library), else the built-in list (OpenCL, Level Zero, CUDA). A config file
 * lists one plugin per line, "#" starting a comment: the library, then
 * optionally its backend, then optionally options, words of the form
 * key=value (no spaces inside a value):
 *
 *     libpi_opencl.so        opencl
 *     /opt/x/libpi_cuda.so   cuda
 *     libpi_opencl.so        opencl  libraries=/opt/x/libfoo.so:/opt/y/libbar.so
 *
 * The runtime keeps target= for itself (recording, below); the other
 * options go, as one space-separated text, to the plugin's optional export
 * `void pitrace_plugin_options(const char *options)`, called before
 * piPluginInit ("" for a line without options). A plugin that does not
 * export it ignores them, with a level-1 trace line saying so.
 *
 * Where: a name with a "/" is used as it is; otherwise each directory of
 * LD_LIBRARY_PATH, then the runtime library's own directory, then the
 * system's default paths (dlopen by bare name).
 *
 * Recording: with SYCL_PI_RECORD=PATH the recording shim (libpi_shim.so,
 * found like a plugin) wraps every plugin bound; a config line
 * "libpi_shim.so [backend] target=libpi_opencl.so [options]" does it for one
 * plugin, the options going to the target.
 *
 * Binding: dlopen, piPluginInit with our PI version, a check that the
 * plugin's major version is ours. Anything that fails is skipped with a
 * level-1 trace line saying why; when nothing binds, the first call that
 * needs a device gets a clear error (pirt_plugins_problem).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pirt_config.h"
#include "pirt_internal.h"

static const struct {
  const char *lib;
  pirt_backend backend;
} builtin_plugins[] = {
    {"libpi_opencl.so", PIRT_BACKEND_OPENCL},
    {"libpi_level_zero.so", PIRT_BACKEND_LEVEL_ZERO},
    {"libpi_cuda.so", PIRT_BACKEND_CUDA},
};

static const struct {
  const char *name, *sycl_be;
} backend_names[PIRT_BACKEND_COUNT] = {
    [PIRT_BACKEND_UNKNOWN] = {"unknown", "PI_UNKNOWN"},
    [PIRT_BACKEND_OPENCL] = {"opencl", "PI_OPENCL"},
    [PIRT_BACKEND_LEVEL_ZERO] = {"level_zero", "PI_LEVEL_ZERO"},
    [PIRT_BACKEND_CUDA] = {"cuda", "PI_CUDA"},
};

const char *pirt_backend_name(pirt_backend b)
{
  return b < PIRT_BACKEND_COUNT ? backend_names[b].name : "unknown";
}

pirt_backend pirt_backend_from_name(const char *s)
{
  for (int b = 1; b < PIRT_BACKEND_COUNT; b++)
    if (strcmp(s, backend_names[b].name) == 0)
      return (pirt_backend)b;
  return PIRT_BACKEND_UNKNOWN;
}

pirt_backend pirt_backend_from_sycl_be(const char *s)
{
  for (int b = 1; b < PIRT_BACKEND_COUNT; b++)
    if (strcmp(s, backend_names[b].sycl_be) == 0)
      return (pirt_backend)b;
  return PIRT_BACKEND_UNKNOWN;
}

/* The directory holding the runtime library itself. */
static bool runtime_dir(char *out, size_t n)
{
  Dl_info info;
  if (!dladdr((void *)&runtime_dir, &info) || !info.dli_fname)
    return false;
  const char *slash = strrchr(info.dli_fname, '/');
  if (!slash)
    return false;
  size_t len = (size_t)(slash - info.dli_fname);
  if (len >= n)
    return false;
  memcpy(out, info.dli_fname, len);
  out[len] = 0;
  return true;
}

static bool file_exists(const char *path) { return access(path, R_OK) == 0; }

/* dlopen `name` by the search order above; fills `path` with what loaded. */
static void *load_library(const char *name, char *path, size_t n,
                          char *why, size_t whyn)
{
  void *dl;
  if (strchr(name, '/')) {
    snprintf(path, n, "%s", name);
    dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!dl)
      snprintf(why, whyn, "%s", dlerror());
    return dl;
  }
  char candidate[PATH_MAX];
  const char *llp = getenv("LD_LIBRARY_PATH");
  if (llp) {
    char *dirs = strdup(llp), *save = NULL;
    for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d;
         d = strtok_r(NULL, ":", &save)) {
      /* A path too long to hold is no candidate (not a truncated one). */
      int k = snprintf(candidate, sizeof candidate, "%s/%s", d, name);
      if (k > 0 && (size_t)k < sizeof candidate && file_exists(candidate)) {
        free(dirs);
        goto found;
      }
    }
    free(dirs);
  }
  char dir[PATH_MAX] = "";
  if (runtime_dir(dir, sizeof dir)) {
    int k = snprintf(candidate, sizeof candidate, "%s/%s", dir, name);
    if (k > 0 && (size_t)k < sizeof candidate && file_exists(candidate))
      goto found;
  }
  /* The system's default paths. */
  snprintf(path, n, "%s", name);
  dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!dl)
    snprintf(why, whyn, "not found in LD_LIBRARY_PATH, %s or the system "
                        "paths (%s)", dir[0] ? dir : "the runtime's directory",
             dlerror());
  return dl;
found:
  snprintf(path, n, "%s", candidate);
  dl = dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
  if (!dl)
    snprintf(why, whyn, "%s", dlerror());
  return dl;
}

static int version_major(const char *v)
{
  char *end;
  long m = strtol(v, &end, 10);
  return end == v ? -1 : (int)m;
}

static void plugin_free(struct pirt_plugin *p)
{
  if (!p)
    return;
  free(p->name);
  free(p->path);
  free(p);
}

typedef void (*plugin_options_fn)(const char *options);

/* Loads and binds one plugin, giving it `options` (a config line's, or NULL)
 * first; NULL (with a trace line) when skipped. */
static struct pirt_plugin *bind_plugin(pirt_global *g, const char *name, pirt_backend backend,
                                       const char *options)
{
  char path[PATH_MAX] = "", why[PATH_MAX + 256] = "";
  void *dl = load_library(name, path, sizeof path, why, sizeof why);
  if (!dl) {
    pirt_trace(PIRT_TRACE_BASIC, "Plugin %s skipped: %s", name, why);
    return NULL;
  }
  /* A library bound already (a config naming it twice, under one name or
   * two): dlopen gives the same module, whose piPluginInit would run again
   * and whose devices were listed twice. */
  for (size_t i = 0; i < g->nplugins; i++)
    if (g->plugins[i]->dl == dl) {
      pirt_trace(PIRT_TRACE_BASIC, "Plugin %s (%s) skipped: bound already as %s", name, path,
                 g->plugins[i]->name);
      fprintf(stderr, "pitrace: plugin %s (%s) is named twice in the plugins config (first "
                      "as %s); the second is skipped\n", name, path, g->plugins[i]->name);
      dlclose(dl);
      return NULL;
    }
  pi_plugin_init_fn init = (pi_plugin_init_fn)(uintptr_t)dlsym(dl, "piPluginInit");
  if (!init) {
    pirt_trace(PIRT_TRACE_BASIC, "Plugin %s (%s) skipped: it exports no "
               "piPluginInit, so it is no PI plugin", name, path);
    dlclose(dl);
    return NULL;
  }
  plugin_options_fn take_options =
      (plugin_options_fn)(uintptr_t)dlsym(dl, "pitrace_plugin_options");
  if (take_options) {
    if (options && *options)
      pirt_trace(PIRT_TRACE_BASIC, "Plugin %s (%s): options %s", name, path, options);
    take_options(options ? options : "");
  } else if (options && *options) {
    pirt_trace(PIRT_TRACE_BASIC, "Plugin %s (%s) ignores the options '%s': it "
               "exports no pitrace_plugin_options", name, path, options);
  }
  struct pirt_plugin *p = calloc(1, sizeof *p);
  if (!p) {
    dlclose(dl);
    return NULL;
  }
  snprintf(p->info.PiVersion, sizeof p->info.PiVersion, "%s",
           _PI_H_VERSION_STRING);
  pi_result r = init(&p->info);
  p->info.PluginVersion[sizeof p->info.PluginVersion - 1] = 0;
  int major = version_major(p->info.PluginVersion);
  if (r != PI_SUCCESS || major != _PI_H_VERSION_MAJOR) {
    if (major >= 0 && major != _PI_H_VERSION_MAJOR)
      pirt_trace(PIRT_TRACE_BASIC, "Plugin %s (%s) refused: it implements PI "
                 "%s but this runtime implements PI %s; rebuild the plugin "
                 "against PI %d", name, path, p->info.PluginVersion,
                 _PI_H_VERSION_STRING, _PI_H_VERSION_MAJOR);
    else
      pirt_trace(PIRT_TRACE_BASIC, "Plugin %s (%s) refused: piPluginInit "
                 "returned %s (runtime PI %s, plugin reports version '%s')",
                 name, path, pi_result_name(r), _PI_H_VERSION_STRING,
                 p->info.PluginVersion);
    fprintf(stderr, "pitrace: plugin %s not used: %s (runtime PI %s, plugin "
            "'%s')\n", name,
            r != PI_SUCCESS ? "its piPluginInit failed" : "PI major version differs",
            _PI_H_VERSION_STRING, p->info.PluginVersion);
    free(p);
    dlclose(dl);
    return NULL;
  }
  p->dl = dl;
  p->name = pirt_strdup(name);
  p->path = pirt_strdup(path);
  p->backend = backend;
  p->table = p->info.PiFunctionTable;
  p->note_hook = dlsym(dl, "pitrace_note_hook");
  p->recall_hook = dlsym(dl, "pitrace_recall_note");
  unsigned missing = 0;
#define COUNT_MISSING(fn)                                                    \
  if (!p->table.fn) {                                                        \
    missing++;                                                               \
    pirt_trace(PIRT_TRACE_DEBUG, "Plugin %s leaves " #fn " unsupported", name); \
  }
  PI_FOR_EACH_API(COUNT_MISSING)
#undef COUNT_MISSING
  pirt_trace(PIRT_TRACE_BASIC, "Plugin found and successfully loaded: %s "
             "[ PluginVersion: %s ] (%s, backend %s, %u of %u functions)",
             name, p->info.PluginVersion, path, pirt_backend_name(backend),
             (unsigned)PI_API_COUNT - missing, (unsigned)PI_API_COUNT);
  return p;
}

typedef bool (*shim_wrap_fn)(const pi_plugin *target, const char *name, const char *path,
                             const char *backend, pi_plugin *out);
typedef bool (*shim_devtimes_fn)(const pi_plugin *target, const char *name, const char *path,
                                 const char *backend, void (*sink)(const char *line),
                                 pi_plugin *out);

/* SYCL_PI_RECORD_PROFILE asks for device times (the shim says what is
 * wrong with a value other than 0 or 1). */
static bool profile_wanted(void)
{
  const char *v = getenv("SYCL_PI_RECORD_PROFILE");
  return v && *v && strcmp(v, "0") != 0;
}

/* Loads the shim `shim_name` once; false (said, for `purpose`) when it
 * cannot be loaded. */
static bool load_shim(pirt_global *g, const char *shim_name, const char *purpose)
{
  if (g->shim_dl)
    return true;
  char path[PATH_MAX] = "", why[PATH_MAX + 256] = "";
  g->shim_dl = load_library(shim_name, path, sizeof path, why, sizeof why);
  if (!g->shim_dl) {
    fprintf(stderr, "pitrace: cannot %s: the recording shim %s is not loadable (%s)\n",
            purpose, shim_name, why);
    pirt_trace(PIRT_TRACE_BASIC, "Recording shim %s skipped: %s", shim_name, why);
  }
  return g->shim_dl != NULL;
}

/* Puts the recording shim `shim_name` in front of plugin p. */
static void wrap_with_shim(pirt_global *g, struct pirt_plugin *p, const char *shim_name)
{
  if (!load_shim(g, shim_name, "record"))
    return;
  shim_wrap_fn wrap = (shim_wrap_fn)(uintptr_t)dlsym(g->shim_dl, "pitrace_shim_wrap");
  pi_plugin out;
  if (!wrap || !wrap(&p->info, p->name, p->path, pirt_backend_name(p->backend), &out)) {
    pirt_trace(PIRT_TRACE_BASIC, "Plugin %s not recorded%s", p->name,
               wrap ? "" : ": the shim exports no pitrace_shim_wrap");
    return;
  }
  p->table = out.PiFunctionTable;
  p->note_hook = dlsym(g->shim_dl, "pitrace_note_hook");
  p->recorded = true;
  pirt_trace(PIRT_TRACE_BASIC, "Plugin %s recorded by the shim %s (SYCL_PI_RECORD=%s)",
             p->name, shim_name, getenv("SYCL_PI_RECORD") ? getenv("SYCL_PI_RECORD")
                                                          : "unset: pitrace-<pid>.db");
  /* A crash ends the session from the shim's handler, which may not hand
   * the signal on to the trace's: the trace's buffered blocks go first. */
  void (*set_hook)(void (*)(void)) =
      (void (*)(void (*)(void)))(uintptr_t)dlsym(g->shim_dl, "pitrace_shim_crash_hook");
  if (set_hook && pirt_trace_level)
    set_hook(pirt_trace_flush_at_crash);
  /* Recorded device times are traced too. */
  void (*set_sink)(void (*)(const char *)) =
      (void (*)(void (*)(const char *)))(uintptr_t)dlsym(g->shim_dl, "pitrace_shim_devtime_sink");
  if (pirt_trace_level && profile_wanted() && set_sink)
    set_sink(pirt_trace_device_time);
}

/* SYCL_PI_TRACE with SYCL_PI_RECORD_PROFILE=1 and no recording: the shim's
 * device-time part in front of plugin p, its times printed to the trace. */
static void wrap_for_device_times(pirt_global *g, struct pirt_plugin *p)
{
  if (!load_shim(g, "libpi_shim.so", "trace device times"))
    return;
  shim_devtimes_fn wrap =
      (shim_devtimes_fn)(uintptr_t)dlsym(g->shim_dl, "pitrace_shim_wrap_devtimes");
  pi_plugin out;
  if (!wrap || !wrap(&p->info, p->name, p->path, pirt_backend_name(p->backend),
                     pirt_trace_device_time, &out)) {
    pirt_trace(PIRT_TRACE_BASIC, "Plugin %s: no device times in the trace%s", p->name,
               wrap ? "" : ": the shim exports no pitrace_shim_wrap_devtimes");
    return;
  }
  p->table = out.PiFunctionTable;
  p->recorded = true; /* wrapped: not again */
  pirt_trace(PIRT_TRACE_BASIC, "Plugin %s: device times traced by the shim "
             "(SYCL_PI_RECORD_PROFILE=1)", p->name);
}

/* Appends a bound plugin to the global list. */
static void add_plugin(pirt_global *g, struct pirt_plugin *p)
{
  const char *rec = getenv("SYCL_PI_RECORD");
  if (rec && *rec && !p->recorded)
    wrap_with_shim(g, p, "libpi_shim.so");
  else if (!p->recorded && pirt_trace_level && profile_wanted())
    wrap_for_device_times(g, p);
  struct pirt_plugin **np =
      realloc(g->plugins, (g->nplugins + 1) * sizeof *np);
  if (!np) {
    plugin_free(p);
    return;
  }
  g->plugins = np;
  g->plugins[g->nplugins++] = p;
}

/* Does SYCL_DEVICE_FILTER / SYCL_BE leave any device of this backend? */
static bool backend_wanted(pirt_backend b)
{
  return pirt_filter_wants_backend(getenv("SYCL_DEVICE_FILTER"), b);
}

bool pirt_config_parse_line(char *line, const char *file, unsigned lineno,
                            pirt_config_line *out)
{
  char *hash = strchr(line, '#');
  if (hash)
    *hash = 0;
  out->lib[0] = out->backend[0] = out->target[0] = out->options[0] = 0;
  size_t used = 0;
  char *save = NULL;
  unsigned words = 0;
  for (char *w = strtok_r(line, " \t\r\n", &save); w;
       w = strtok_r(NULL, " \t\r\n", &save), words++) {
    if (words == 0)
      snprintf(out->lib, sizeof out->lib, "%s", w);
    else if (words == 1 && !strchr(w, '='))
      snprintf(out->backend, sizeof out->backend, "%s", w);
    else if (strncmp(w, "target=", 7) == 0 && w[7]) /* the shim's: record PLUGIN */
      snprintf(out->target, sizeof out->target, "%s", w + 7);
    else if (strncmp(w, "target=", 7) == 0)
      pirt_trace(PIRT_TRACE_BASIC, "%s:%u: 'target=' names no plugin (target=libpi_opencl.so "
                 "records that plugin); ignored", file, lineno);
    else if (strchr(w, '=') && w[0] != '=') {
      int n = snprintf(out->options + used, sizeof out->options - used, "%s%s",
                       used ? " " : "", w);
      if (n > 0 && used + (size_t)n < sizeof out->options)
        used += (size_t)n;
    } else {
      pirt_trace(PIRT_TRACE_BASIC, "%s:%u: '%s' is neither a backend (the "
                 "second word) nor a key=value option; ignored", file,
                 lineno, w);
    }
  }
  return words > 0;
}

/* Reads the config file; false when it cannot be read. A line is
 * "library [backend] [key=value ...]" (see the top of the file); *lines:
 * how many name a plugin. */
static bool load_config(pirt_global *g, const char *file, unsigned *lines)
{
  *lines = 0;
  FILE *f = fopen(file, "re");
  if (!f)
    return false;
  /* A directory opens, and its first read fails: that is no config (it
   * read as an empty one, and the error blamed the plugins). */
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    errno = EISDIR;
    return false;
  }
  pirt_trace(PIRT_TRACE_BASIC, "Reading plugins config %s", file);
  char line[PIRT_CONFIG_LINE_MAX];
  unsigned lineno = 0;
  pirt_config_line cl, *c = &cl;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (!pirt_config_parse_line(line, file, lineno, c))
      continue;
    ++*lines;
    pirt_backend b = c->backend[0] ? pirt_backend_from_name(c->backend) : PIRT_BACKEND_UNKNOWN;
    if (c->backend[0] && b == PIRT_BACKEND_UNKNOWN) {
      pirt_trace(PIRT_TRACE_BASIC, "%s:%u: unknown backend '%s' (use opencl, "
                 "level_zero or cuda); plugin %s skipped", file, lineno, c->backend, c->lib);
      continue;
    }
    if (!backend_wanted(b)) {
      pirt_trace(PIRT_TRACE_BASIC, "Plugin %s skipped: SYCL_DEVICE_FILTER "
                 "selects no %s device", c->lib, pirt_backend_name(b));
      continue;
    }
    struct pirt_plugin *p = bind_plugin(g, c->target[0] ? c->target : c->lib, b, c->options);
    if (p && c->target[0])
      wrap_with_shim(g, p, c->lib);
    if (p)
      add_plugin(g, p);
  }
  /* A read that failed part-way (an I/O error): the plugins of the lines
   * before are bound already, and are used; said, not taken back. */
  if (ferror(f)) {
    pirt_trace(PIRT_TRACE_BASIC, "%s: reading failed after line %u (%s); the plugins named "
               "before it are used", file, lineno, strerror(errno));
    fprintf(stderr, "pitrace: plugins config %s: reading failed after line %u (%s)\n", file,
            lineno, strerror(errno));
  }
  fclose(f);
  return true;
}

void pirt_plugins_load(void)
{
  pirt_global *g = pirt_global_get();
  if (!g || g->plugins_loaded)
    return;
  g->plugins_loaded = true;
  const char *cfg = getenv("SYCL_PI_CONFIG");
  const char *replay = getenv("SYCL_PI_REPLAY");
  if (replay && *replay) {
    /* Re-running against a recording: the replay plugin answers every call
     * from it, and no device is needed. */
    pirt_trace(PIRT_TRACE_BASIC, "SYCL_PI_REPLAY=%s: the replay plugin answers from "
               "the recording", replay);
    struct pirt_plugin *p = bind_plugin(g, "libpi_replay.so", PIRT_BACKEND_UNKNOWN, NULL);
    if (p)
      add_plugin(g, p);
    else
      snprintf(g->problem, sizeof g->problem, "SYCL_PI_REPLAY is set but the replay "
               "plugin libpi_replay.so cannot be loaded (SYCL_PI_TRACE=1 says why)");
  } else if (cfg && *cfg) {
    unsigned lines;
    if (!load_config(g, cfg, &lines)) {
      snprintf(g->problem, sizeof g->problem, "SYCL_PI_CONFIG=%s cannot be "
               "read (%s); fix the path or unset SYCL_PI_CONFIG", cfg,
               strerror(errno));
      pirt_trace(PIRT_TRACE_BASIC, "%s", g->problem);
      fprintf(stderr, "pitrace: %s\n", g->problem);
      return;
    }
    if (!lines)
      snprintf(g->problem, sizeof g->problem, "SYCL_PI_CONFIG=%s names no plugin (a line "
               "is: library [backend] [key=value ...]); add one or unset SYCL_PI_CONFIG", cfg);
  } else {
    char dir[PATH_MAX], file[PATH_MAX + 64];
    bool have = runtime_dir(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/../etc/pitrace/plugins.conf", dir);
    unsigned lines;
    if (!have || !load_config(g, file, &lines)) {
      pirt_trace(PIRT_TRACE_BASIC, "No plugins config (SYCL_PI_CONFIG unset, "
                 "no %s); using the built-in list", have ? file : "default");
      for (size_t i = 0; i < sizeof builtin_plugins / sizeof *builtin_plugins; i++) {
        if (!backend_wanted(builtin_plugins[i].backend)) {
          pirt_trace(PIRT_TRACE_BASIC, "Plugin %s skipped: SYCL_DEVICE_FILTER "
                     "selects no %s device", builtin_plugins[i].lib,
                     pirt_backend_name(builtin_plugins[i].backend));
          continue;
        }
        struct pirt_plugin *p = bind_plugin(g, builtin_plugins[i].lib,
                                            builtin_plugins[i].backend, NULL);
        if (p)
          add_plugin(g, p);
      }
    }
  }
  if (g->nplugins == 0 && !g->problem[0])
    snprintf(g->problem, sizeof g->problem, "no PI plugin could be loaded "
             "(run with SYCL_PI_TRACE=1 to see why each was skipped)");
}

void pirt_plugins_finish_recording(void)
{
  pirt_global *g = pirt_global_get();
  if (!g || !g->shim_dl)
    return;
  void (*finish)(void) = (void (*)(void))(uintptr_t)dlsym(g->shim_dl, "pitrace_shim_finish");
  if (finish)
    finish();
}

void pirt_plugins_unload(void)
{
  pirt_global *g = pirt_global_get();
  if (!g)
    return;
  for (size_t i = 0; i < g->nplugins; i++) {
    struct pirt_plugin *p = g->plugins[i];
    if (p->table.piTearDown) {
      pi_result r = pirt_call_piTearDown(p, NULL);
      pirt_trace(PIRT_TRACE_BASIC, "Plugin %s torn down (%s)", p->name,
                 pi_result_name(r));
    }
  }
  for (size_t i = g->nplugins; i-- > 0;) {
    struct pirt_plugin *p = g->plugins[i];
    dlclose(p->dl);
    pirt_trace(PIRT_TRACE_BASIC, "Plugin %s unloaded", p->name);
    plugin_free(p);
  }
  free(g->plugins);
  g->plugins = NULL;
  g->nplugins = 0;
  if (g->shim_dl) {
    dlclose(g->shim_dl);
    g->shim_dl = NULL;
  }
}

size_t pirt_plugin_count(void)
{
  pirt_global *g = pirt_global_get();
  return g ? g->nplugins : 0;
}

struct pirt_plugin *pirt_plugin_at(size_t i)
{
  pirt_global *g = pirt_global_get();
  return g && i < g->nplugins ? g->plugins[i] : NULL;
}

const char *pirt_plugins_problem(void)
{
  pirt_global *g = pirt_global_get();
  return g ? g->problem : "the runtime has shut down";
}

pi_result pirt_unsupported(const struct pirt_plugin *pl, pi_api_id id)
{
  char msg[512];
  snprintf(msg, sizeof msg, "%s is not supported by plugin %s (its table leaves it "
           "NULL)", pi_api_table[id].name, pl->name);
  return pirt_fail_unsupported(PI_ERROR_INVALID_OPERATION, msg);
}
