/*
 * plugin.c: the Level Zero plugin as a whole: its opaque data, last error,
 * backend options and teardown, and its exported symbol, piPluginInit (the
 * function table).
 */
#include "lz_internal.h"

/* ---- Plugin -------------------------------------------------------------------------- */

pi_result lz_piextPluginGetOpaqueData(void *opaque_data_param,
                                      void **opaque_data_return) {
  (void)opaque_data_param;
  return plugin_no_opaque_data(FN, "Level Zero", opaque_data_return);
}

/* The last message of this thread, and its code: PI_SUCCESS for a note. */
pi_result lz_piPluginGetLastError(char **message) {
  return plugin_last_error(message);
}

/* Optimization levels as DPC++ maps them for Level Zero. */
pi_result lz_piPluginGetBackendOption(pi_platform platform,
                                      const char *frontend_option,
                                      const char **backend_option) {
  static const char *const map[5] = {"", "-ze-opt-disable", "-ze-opt-level=1",
                                     "-ze-opt-level=1", "-ze-opt-level=2"};
  (void)platform;
  return plugin_backend_option(FN, "Level Zero", map, frontend_option,
                               backend_option);
}

/* Stops the callback threads and frees the platforms; no PI call may
 * follow before piPluginInit. Objects the application still holds are its
 * own to release first. */
pi_result lz_piTearDown(void *PluginParameter) {
  (void)PluginParameter;
  atomic_store(&stopping, true);
  callbacks_join(true);
  atomic_store(&stopping, false);
  pthread_mutex_lock(&platforms_lock);
  for (pi_uint32 i = 0; i < nplatforms; ++i)
    platform_free(platforms[i]);
  free(platforms);
  platforms = NULL;
  nplatforms = 0;
  platforms_known = false;
  pthread_mutex_unlock(&platforms_lock);
  return PI_SUCCESS;
}

/* Checks the runtime's PI major version, writes the plugin's version and
 * fills every entry of the function table. */
PI_PLUGIN_EXPORT pi_result piPluginInit(pi_plugin *plugin) {
  pi_result r = plugin_init_version(plugin, "Level Zero", PLUGIN_REVISION);
  if (r != PI_SUCCESS)
    return r;
#define X(name) plugin->PiFunctionTable.name = lz_##name;
  PI_FOR_EACH_API(X)
#undef X
  return PI_SUCCESS;
}
