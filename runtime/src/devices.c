/*
 * devices.c: device discovery and selection.
 *
 * Discovery asks every bound plugin for its platforms and their devices
 * (the calls show at SYCL_PI_TRACE=2) and keeps those SYCL_DEVICE_FILTER
 * allows. A filter is a comma-separated list of "backend:device_type:num"
 * terms; each part may be "*" or left out, and the parts may come in any
 * order ("cpu", "opencl:gpu", "opencl:cpu:1"). `num` counts the devices of
 * that backend in discovery order, from 0, whatever their type, across
 * its platforms: DPC++'s numbering (platform_impl's filter; sycl-ls lists
 * [opencl:cpu:0], [opencl:gpu:1]), so a filter taken from DPC++ selects
 * the same device here. "opencl:gpu:0" with a CPU before the GPU selects
 * nothing, there as here.
 *
 * Selection picks, among the devices a filter leaves, a GPU over an
 * accelerator over a CPU; among equals, SYCL_BE's backend (PI_OPENCL,
 * PI_LEVEL_ZERO, PI_CUDA) first, then discovery order.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pirt_internal.h"

typedef struct {
  pirt_backend backend; /* UNKNOWN = any */
  pi_device_type type;  /* 0 = any */
  long num;             /* -1 = any */
} filter_term;

/* One term of a filter into *t; false (with a message in err) when it is
 * malformed. *blank when it has no part at all (only spaces or colons: left
 * out, where it allowed every device: 'opencl:gpu, ' took the CPU); '*' is
 * a part (every device, said so). */
static bool parse_term(char *s, filter_term *t, bool *blank, char *err, size_t errn)
{
  t->backend = PIRT_BACKEND_UNKNOWN;
  t->type = 0;
  t->num = -1;
  *blank = true;
  char whole[128]; /* the term as given, for messages; a longer one ends in "..." */
  if (snprintf(whole, sizeof whole, "%s", s) >= (int)sizeof whole)
    memcpy(whole + sizeof whole - 4, "...", 4);
  /* Each of backend, type and number at most once, three parts in all:
   * "gpu:cpu" took the last (the CPU, for a term asking for a GPU), four
   * parts and "1:2" were taken too. */
  const char *seen[3] = {NULL, NULL, NULL};
  static const char *const what[3] = {"backends", "device types", "device numbers"};
  unsigned parts = 0;
  char *save = NULL;
  for (char *part = strtok_r(s, ":", &save); part;
       part = strtok_r(NULL, ":", &save)) {
    while (isspace((unsigned char)*part))
      part++;
    size_t n = strlen(part);
    while (n && isspace((unsigned char)part[n - 1]))
      part[--n] = 0;
    if (!*part)
      continue;
    *blank = false;
    if (++parts > 3) {
      snprintf(err, errn, "'%s' has more than three parts (backend:type:number)", whole);
      return false;
    }
    if (strcmp(part, "*") == 0)
      continue;
    int field;
    pirt_backend b = pirt_backend_from_name(part);
    if (b != PIRT_BACKEND_UNKNOWN) {
      t->backend = b;
      field = 0;
    } else if (strcmp(part, "cpu") == 0) {
      t->type = PI_DEVICE_TYPE_CPU;
      field = 1;
    } else if (strcmp(part, "gpu") == 0) {
      t->type = PI_DEVICE_TYPE_GPU;
      field = 1;
    } else if (strcmp(part, "acc") == 0) {
      t->type = PI_DEVICE_TYPE_ACC;
      field = 1;
    } else if (isdigit((unsigned char)*part)) {
      char *end;
      errno = 0;
      t->num = strtol(part, &end, 10);
      if (*end || errno || t->num > INT32_MAX) {
        snprintf(err, errn, "'%s' is not a device number", part);
        return false;
      }
      field = 2;
    } else {
      snprintf(err, errn, "'%s' is no backend (opencl, level_zero, cuda), "
               "device type (cpu, gpu, acc) or device number", part);
      return false;
    }
    if (seen[field]) {
      snprintf(err, errn, "'%s' names two %s ('%s' and '%s'): give one of each part", whole,
               what[field], seen[field], part);
      return false;
    }
    seen[field] = part;
  }
  return true;
}

static bool term_matches(const filter_term *t, const struct pirt_device *d)
{
  return (t->backend == PIRT_BACKEND_UNKNOWN || t->backend == d->backend) &&
         (t->type == 0 || (t->type & d->type)) &&
         (t->num < 0 || t->num == (long)d->index);
}

/* Does `filter` (NULL/empty: everything) allow device d? -1: malformed (see
 * pirt_internal.h). */
int pirt_filter_allows(const char *filter, const struct pirt_device *d,
                       char *err, size_t errn)
{
  if (!filter || !*filter)
    return 1;
  char *copy = strdup(filter), *save = NULL;
  if (!copy)
    return 1;
  int ok = 0;
  bool any = false, blank;
  for (char *term = strtok_r(copy, ",", &save); term;
       term = strtok_r(NULL, ",", &save)) {
    filter_term t;
    if (!parse_term(term, &t, &blank, err, errn)) {
      ok = -1;
      break;
    }
    any |= !blank;
    if (!blank && term_matches(&t, d))
      ok = 1;
  }
  free(copy);
  if (ok == 0 && !any) {
    snprintf(err, errn, "it names no device (terms are backend:type:number, '*' for any)");
    return -1;
  }
  return ok;
}

/* A plugin of unknown backend (a config line that names none) is wanted:
 * its backend is known only from its platforms, and discovery filters its
 * devices; it was skipped by any filter naming a backend ("opencl:cpu"
 * skipped the OpenCL plugin, "selects no unknown device"). */
bool pirt_filter_wants_backend(const char *filter, pirt_backend b)
{
  if (!filter || !*filter || b == PIRT_BACKEND_UNKNOWN)
    return true;
  char *copy = strdup(filter), *save = NULL, err[256];
  bool wanted = !copy, any = false, blank;
  for (char *term = copy ? strtok_r(copy, ",", &save) : NULL; term && !wanted;
       term = strtok_r(NULL, ",", &save)) {
    filter_term t;
    if (!parse_term(term, &t, &blank, err, sizeof err))
      wanted = true; /* malformed: device selection says so */
    any |= !blank;
    wanted |= !blank && (t.backend == PIRT_BACKEND_UNKNOWN || t.backend == b);
  }
  free(copy);
  return wanted || !any;
}

/* A malloc'd string info query, or NULL. */
static char *query_string(struct pirt_plugin *pl, pi_device dev,
                          pi_platform plat, uint32_t param)
{
  size_t size = 0;
  pi_result r = dev ? pirt_call_piDeviceGetInfo(pl, dev, param, 0, NULL, &size)
                    : pirt_call_piPlatformGetInfo(pl, plat, param, 0, NULL, &size);
  if (r != PI_SUCCESS || size == 0)
    return NULL;
  char *s = calloc(1, size + 1);
  if (!s)
    return NULL;
  r = dev ? pirt_call_piDeviceGetInfo(pl, dev, param, size, s, NULL)
          : pirt_call_piPlatformGetInfo(pl, plat, param, size, s, NULL);
  if (r != PI_SUCCESS) {
    free(s);
    return NULL;
  }
  return s;
}

static const char *type_name(pi_device_type t)
{
  if (t & PI_DEVICE_TYPE_GPU)
    return "gpu";
  if (t & PI_DEVICE_TYPE_ACC)
    return "acc";
  if (t & PI_DEVICE_TYPE_CPU)
    return "cpu";
  return "other";
}

/* Adds the devices of one platform; `counts` numbers devices per backend. */
static void add_platform_devices(pirt_global *g, struct pirt_plugin *pl,
                                 pi_platform plat, unsigned counts[])
{
  pi_uint32 n = 0;
  pi_result r = pirt_call_piDevicesGet(pl, plat, PI_DEVICE_TYPE_ALL, 0, NULL, &n);
  if (r != PI_SUCCESS || n == 0) {
    char *name = query_string(pl, NULL, plat, PI_PLATFORM_INFO_NAME);
    pirt_trace(PIRT_TRACE_BASIC, "Plugin %s: platform '%s' has no devices (%s)", pl->name,
               name && *name ? name : "(unnamed)", pi_result_name(r));
    free(name);
    return;
  }
  pi_device *devs = calloc(n, sizeof *devs);
  if (!devs)
    return;
  r = pirt_call_piDevicesGet(pl, plat, PI_DEVICE_TYPE_ALL, n, devs, NULL);
  if (r != PI_SUCCESS) {
    free(devs);
    return;
  }
  char *platform_name = query_string(pl, NULL, plat, PI_PLATFORM_INFO_NAME);
  const char *filter = getenv("SYCL_DEVICE_FILTER");
  for (pi_uint32 i = 0; i < n; i++) {
    struct pirt_device d = {.plugin = pl, .platform = plat, .device = devs[i],
                            .backend = pl->backend};
    pi_device_type type = 0;
    pirt_call_piDeviceGetInfo(pl, devs[i], PI_DEVICE_INFO_TYPE, sizeof type,
                              &type, NULL);
    d.type = type;
    d.index = counts[d.backend]++;
    d.name = query_string(pl, devs[i], NULL, PI_DEVICE_INFO_NAME);
    d.vendor = query_string(pl, devs[i], NULL, PI_DEVICE_INFO_VENDOR);
    d.version = query_string(pl, devs[i], NULL, PI_DEVICE_INFO_VERSION);
    d.platform_name = pirt_strdup(platform_name);
    char err[256] = "";
    int ok = pirt_filter_allows(filter, &d, err, sizeof err);
    pirt_trace(PIRT_TRACE_BASIC, "Device %s:%s:%u \"%s\" on platform \"%s\" "
               "(plugin %s)%s", pirt_backend_name(d.backend), type_name(type),
               d.index, d.name ? d.name : "?",
               d.platform_name ? d.platform_name : "?", pl->name,
               ok == 1 ? "" : " - excluded by SYCL_DEVICE_FILTER");
    struct pirt_device *nd =
        ok == 1 ? realloc(g->devices, (g->ndevices + 1) * sizeof *nd) : NULL;
    if (!nd) {
      free(d.name);
      free(d.vendor);
      free(d.version);
      free(d.platform_name);
      continue;
    }
    g->devices = nd;
    g->devices[g->ndevices++] = d;
  }
  free(platform_name);
  free(devs);
}

void pirt_devices_discover(void)
{
  pirt_global *g = pirt_global_get();
  if (!g || g->devices_discovered)
    return;
  g->devices_discovered = true;
  const char *filter = getenv("SYCL_DEVICE_FILTER");
  if (filter && *filter) {
    char err[256] = "";
    struct pirt_device probe = {0};
    if (pirt_filter_allows(filter, &probe, err, sizeof err) < 0) {
      snprintf(g->problem, sizeof g->problem,
               "SYCL_DEVICE_FILTER=%s is malformed: %s", filter, err);
      pirt_trace(PIRT_TRACE_BASIC, "%s", g->problem);
      return;
    }
  }
  unsigned counts[PIRT_BACKEND_COUNT] = {0};
  for (size_t p = 0; p < g->nplugins; p++) {
    struct pirt_plugin *pl = g->plugins[p];
    pi_uint32 n = 0;
    pi_result r = pirt_call_piPlatformsGet(pl, 0, NULL, &n);
    /* With no platform, the plugin's own words say why (no driver...). */
    char *why = NULL;
    if ((r != PI_SUCCESS || n == 0) && pl->table.piPluginGetLastError)
      pirt_call_piPluginGetLastError(pl, &why);
    pirt_trace(PIRT_TRACE_BASIC, "Plugin %s: %u platform(s)%s%s%s%s", pl->name,
               (unsigned)n, r == PI_SUCCESS ? "" : ", piPlatformsGet: ",
               r == PI_SUCCESS ? "" : pi_result_name(r), why && *why ? ": " : "",
               why && *why ? why : "");
    if (r != PI_SUCCESS || n == 0)
      continue;
    pi_platform *plats = calloc(n, sizeof *plats);
    if (!plats)
      continue;
    if (pirt_call_piPlatformsGet(pl, n, plats, NULL) == PI_SUCCESS)
      for (pi_uint32 i = 0; i < n; i++) {
        if (pl->backend == PIRT_BACKEND_UNKNOWN) {
          pi_uint32 be = 0;
          if (pirt_call_piPlatformGetInfo(pl, plats[i], PI_EXT_PLATFORM_INFO_BACKEND,
                                          sizeof be, &be, NULL) == PI_SUCCESS)
            pl->backend = be == PI_EXT_PLATFORM_BACKEND_OPENCL ? PIRT_BACKEND_OPENCL
                          : be == PI_EXT_PLATFORM_BACKEND_LEVEL_ZERO
                              ? PIRT_BACKEND_LEVEL_ZERO
                          : be == PI_EXT_PLATFORM_BACKEND_CUDA ? PIRT_BACKEND_CUDA
                                                               : PIRT_BACKEND_UNKNOWN;
        }
        add_platform_devices(g, pl, plats[i], counts);
      }
    free(plats);
  }
  if (g->ndevices == 0 && !g->problem[0])
    snprintf(g->problem, sizeof g->problem, "%s",
             g->nplugins ? "no device is available: the bound plugins report "
                           "none that SYCL_DEVICE_FILTER allows (SYCL_PI_TRACE=1 "
                           "lists them)"
                         : "no PI plugin could be loaded (run with "
                           "SYCL_PI_TRACE=1 to see why each was skipped)");
}

void pirt_devices_free(void)
{
  pirt_global *g = pirt_global_get();
  if (!g)
    return;
  for (size_t i = 0; i < g->ndevices; i++) {
    free(g->devices[i].name);
    free(g->devices[i].vendor);
    free(g->devices[i].version);
    free(g->devices[i].platform_name);
  }
  free(g->devices);
  g->devices = NULL;
  g->ndevices = 0;
}

/* Loads plugins and devices on first use; the global state, or NULL with
 * the error recorded. */
static pirt_global *ready(pi_result *r)
{
  pirt_global *g = pirt_global_get();
  if (!g) {
    *r = pirt_fail(PI_ERROR_UNINITIALIZED, "the pitrace runtime has shut "
                   "down; no device can be used from this point of exit");
    return NULL;
  }
  pirt_global_load(g);
  *r = PI_SUCCESS;
  return g;
}

pi_result pirt_device_count(size_t *count)
{
  pi_result r;
  pirt_global *g = ready(&r);
  if (!count)
    return pirt_fail(PI_ERROR_INVALID_VALUE, "pirt_device_count: count is NULL");
  *count = g ? g->ndevices : 0;
  return r;
}

pi_result pirt_device_get(size_t index, pirt_device **device)
{
  pi_result r;
  pirt_global *g = ready(&r);
  if (!g)
    return r;
  if (!device)
    return pirt_fail(PI_ERROR_INVALID_VALUE, "pirt_device_get: device is NULL");
  if (index >= g->ndevices)
    return pirt_fail(PI_ERROR_DEVICE_NOT_FOUND, "pirt_device_get: no device %zu: "
                     "%zu device(s) available%s%s", index, g->ndevices,
                     g->ndevices ? "" : "; ", g->ndevices ? "" : g->problem);
  *device = &g->devices[index];
  return PI_SUCCESS;
}

static int type_rank(pi_device_type t)
{
  return (t & PI_DEVICE_TYPE_GPU) ? 3 : (t & PI_DEVICE_TYPE_ACC) ? 2
                                      : (t & PI_DEVICE_TYPE_CPU) ? 1 : 0;
}

pi_result pirt_device_select(const char *filter, pirt_device **device)
{
  pi_result r;
  pirt_global *g = ready(&r);
  if (!g)
    return r;
  if (!device)
    return pirt_fail(PI_ERROR_INVALID_VALUE, "pirt_device_select: device is NULL");
  const char *be_env = getenv("SYCL_BE");
  pirt_backend be = PIRT_BACKEND_UNKNOWN;
  if (be_env && *be_env) {
    be = pirt_backend_from_sycl_be(be_env);
    if (be == PIRT_BACKEND_UNKNOWN)
      return pirt_fail(PI_ERROR_INVALID_VALUE, "SYCL_BE=%s is not a backend: "
                       "use PI_OPENCL, PI_LEVEL_ZERO or PI_CUDA", be_env);
  }
  /* Checked apart from the devices: with none left it was "no device
   * matches", for a filter that cannot match anything. */
  char err[256] = "";
  struct pirt_device probe = {0};
  if (pirt_filter_allows(filter, &probe, err, sizeof err) < 0)
    return pirt_fail(PI_ERROR_INVALID_VALUE, "device filter '%s' is malformed: %s", filter,
                     err);
  struct pirt_device *best = NULL;
  int best_score = -1;
  for (size_t i = 0; i < g->ndevices; i++) {
    struct pirt_device *d = &g->devices[i];
    if (pirt_filter_allows(filter, d, err, sizeof err) != 1)
      continue;
    int score = type_rank(d->type) * 2 + (be != PIRT_BACKEND_UNKNOWN &&
                                          d->backend == be);
    if (score > best_score) {
      best = d;
      best_score = score;
    }
  }
  if (!best)
    return pirt_fail(PI_ERROR_DEVICE_NOT_FOUND, "no device matches%s%s: %s",
                     filter ? " filter " : "", filter ? filter : "",
                     g->ndevices ? "the available devices are listed at "
                                   "SYCL_PI_TRACE=1"
                                 : g->problem);
  pirt_trace(PIRT_TRACE_BASIC, "Selected device: %s:%s:%u \"%s\" on platform "
             "\"%s\" (plugin %s%s%s)", pirt_backend_name(best->backend),
             type_name(best->type), best->index, best->name ? best->name : "?",
             best->platform_name ? best->platform_name : "?",
             best->plugin->name, filter ? ", filter " : "", filter ? filter : "");
  *device = best;
  return PI_SUCCESS;
}

/* Before a device is read: the calling thread counted as a user of the
 * runtime (global.c), and no device read once it shuts down (its devices
 * may be freed). */
static pi_result device_usable(const char *fn)
{
  if (PIRT_LIKELY(pirt_global_get() != NULL))
    return PI_SUCCESS;
  return pirt_fail(PI_ERROR_UNINITIALIZED, "%s: the pitrace runtime has shut down; no "
                   "device can be used from this point of exit", fn);
}

pi_result pirt_device_get_info(const pirt_device *d, pirt_device_info *info)
{
  if (!d || !info)
    return pirt_fail(PI_ERROR_INVALID_VALUE, "pirt_device_get_info: NULL argument");
  if (device_usable("pirt_device_get_info") != PI_SUCCESS)
    return PI_ERROR_UNINITIALIZED;
  info->name = d->name ? d->name : "";
  info->vendor = d->vendor ? d->vendor : "";
  info->version = d->version ? d->version : "";
  info->platform_name = d->platform_name ? d->platform_name : "";
  info->backend = pirt_backend_name(d->backend);
  info->plugin = d->plugin->name;
  info->type = (d->type & PI_DEVICE_TYPE_GPU)   ? PIRT_DEVICE_GPU
               : (d->type & PI_DEVICE_TYPE_ACC) ? PIRT_DEVICE_ACCELERATOR
               : (d->type & PI_DEVICE_TYPE_CPU) ? PIRT_DEVICE_CPU
                                                : PIRT_DEVICE_OTHER;
  info->index = d->index;
  return PI_SUCCESS;
}

pi_result pirt_device_query(const pirt_device *d, pi_device_info param,
                            size_t size, void *value, size_t *size_ret)
{
  if (!d)
    return pirt_fail(PI_ERROR_INVALID_VALUE, "pirt_device_query: device is NULL");
  if (device_usable("pirt_device_query") != PI_SUCCESS)
    return PI_ERROR_UNINITIALIZED;
  pi_result r = pirt_call_piDeviceGetInfo(d->plugin, d->device, param, size,
                                          value, size_ret);
  if (r != PI_SUCCESS)
    return pirt_fail_call(d->plugin, "piDeviceGetInfo", r);
  return r;
}

pi_result pirt_device_pi(const pirt_device *d, const struct pi_function_table **table,
                         pi_platform *platform, pi_device *pi_dev)
{
  if (!d || !table)
    return pirt_fail(PI_ERROR_INVALID_VALUE, "pirt_device_pi: device and table must "
                     "not be NULL");
  if (device_usable("pirt_device_pi") != PI_SUCCESS)
    return PI_ERROR_UNINITIALIZED;
  *table = &d->plugin->table;
  if (platform)
    *platform = d->platform;
  if (pi_dev)
    *pi_dev = d->device;
  return PI_SUCCESS;
}

pi_result pirt_device_plugin(const pirt_device *d, const pirt_plugin **plugin,
                             pi_platform *platform, pi_device *pi_dev,
                             const char **backend)
{
  if (!d || !plugin)
    return pirt_fail(PI_ERROR_INVALID_VALUE, "pirt_device_plugin: device and "
                     "plugin must not be NULL");
  if (device_usable("pirt_device_plugin") != PI_SUCCESS)
    return PI_ERROR_UNINITIALIZED;
  *plugin = d->plugin;
  if (platform)
    *platform = d->platform;
  if (pi_dev)
    *pi_dev = d->device;
  if (backend)
    *backend = pirt_backend_name(d->backend);
  return PI_SUCCESS;
}
