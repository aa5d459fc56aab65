/*
 * plugin.c: the Level Zero plugin as a whole: what names it and its backend
 * options (this_backend), its teardown, and its exported symbol, piPluginInit
 * (the function table).
 */
#include "lz_internal.h"

/* ---- Plugin -------------------------------------------------------------------------- */

/* Optimization levels as DPC++ maps them for Level Zero. */
const struct backend this_backend = {
    .name = "Level Zero",
    .revision = PLUGIN_REVISION,
    .compiler = "Level Zero",
    .options = {"", "-ze-opt-disable", "-ze-opt-level=1", "-ze-opt-level=1",
                "-ze-opt-level=2"},
    .no_source = "Level Zero compiles no OpenCL C source; give it SPIR-V "
                 "(piProgramCreate) or a native binary",
};

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
  TRY(plugin_init_version(plugin));
  PLUGIN_FILL_TABLE(plugin);
  return PI_SUCCESS;
}
