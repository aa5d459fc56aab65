/*
 * plugin.c: the backend-neutral halves of the plugin-wide PI calls:
 * piextPluginGetOpaqueData of a plugin without opaque data,
 * piPluginGetBackendOption from a plugin's table of options, the version
 * check and version string of piPluginInit, and piclProgramCreateWithSource
 * of a plugin that compiles no OpenCL C.
 */
#include "plugin_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* REQUIRE names the PI function it is in. */
#define FN fn

pi_result plugin_no_opaque_data(const char *fn, const char *backend,
                                void **opaque_data_return) {
  if (opaque_data_return)
    *opaque_data_return = NULL;
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: the %s plugin has no opaque data (only host-compiled "
              "device plugins do)",
              fn, backend);
}

pi_result plugin_init_version(pi_plugin *plugin, const char *backend,
                              const char *revision) {
  char version[sizeof plugin->PiVersion + 1] = {0};
  char *end;
  if (!plugin)
    return fail(PI_ERROR_INVALID_VALUE, "piPluginInit: plugin is NULL");
  memcpy(version, plugin->PiVersion, sizeof plugin->PiVersion);
  long major = strtol(version, &end, 10);
  if (end == version || *end != '.' || major != _PI_H_VERSION_MAJOR)
    return fail(PI_ERROR_INVALID_OPERATION,
                "piPluginInit: the runtime speaks PI '%s' but the %s "
                "plugin speaks PI " _PI_H_VERSION_STRING
                "; build both from the same pi.h",
                version, backend);
  snprintf(plugin->PluginVersion, sizeof plugin->PluginVersion, "%s.%s",
           _PI_H_VERSION_STRING, revision);
  return PI_SUCCESS;
}

pi_result plugin_backend_option(const char *fn, const char *backend,
                                const char *const map[5],
                                const char *frontend_option,
                                const char **backend_option) {
  static const char *const levels[] = {"", "-O0", "-O1", "-O2", "-O3"};
  REQUIRE(frontend_option != NULL && backend_option != NULL);
  for (size_t i = 0; i < sizeof levels / sizeof *levels; ++i)
    if (strcmp(frontend_option, levels[i]) == 0) {
      *backend_option = map[i];
      return PI_SUCCESS;
    }
  return fail(PI_ERROR_INVALID_VALUE,
              "%s: no %s option for '%s'; the plugin maps -O0 to -O3", fn,
              backend, frontend_option);
}

pi_result program_no_source(const char *fn, const char *why,
                            pi_program *ret_program) {
  if (ret_program)
    *ret_program = NULL;
  return fail(PI_ERROR_INVALID_OPERATION, "%s: %s", fn, why);
}
