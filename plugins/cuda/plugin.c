/*
 * plugin.c: the CUDA plugin as a whole: its opaque data, last error,
 * backend options and teardown, and its exported symbol, piPluginInit (the
 * function table, then opening the driver).
 */
#include "cu_internal.h"

/* ---- Plugin ----------------------------------------------------------------
 */

pi_result cu_piextPluginGetOpaqueData(void *opaque_data_param,
                                      void **opaque_data_return) {
  (void)opaque_data_param;
  return plugin_no_opaque_data(FN, "CUDA", opaque_data_return);
}

/* The last message of this thread, and its code: PI_SUCCESS for a warning. */
pi_result cu_piPluginGetLastError(char **message) {
  return plugin_last_error(message);
}

/* -O0..-O3 pass to the JIT (piProgramBuild takes them), "" is the default. */
pi_result cu_piPluginGetBackendOption(pi_platform platform,
                                      const char *frontend_option,
                                      const char **backend_option) {
  static const char *const map[5] = {"", "-O0", "-O1", "-O2", "-O3"};
  (void)platform;
  return plugin_backend_option(FN, "CUDA JIT", map, frontend_option,
                               backend_option);
}

/* Frees the platform and what the plugin holds of the driver (the devices'
 * primary contexts and timer events; errors are ignored: the driver may
 * be shutting down with the process). The driver library itself stays
 * loaded once cuInit has run: its threads outlive teardown, and unloading
 * it under them would crash. No PI call may follow before piPluginInit. */
pi_result cu_piTearDown(void *PluginParameter) {
  (void)PluginParameter;
  pthread_mutex_lock(&init_lock);
  if (the_platform) {
    for (pi_uint32 i = 0; i < the_platform->num_devices; ++i) {
      struct _pi_device *d = &the_platform->devices[i];
      if (d->timer_base)
        drv.cuEventDestroy(d->timer_base);
      if (d->primary)
        drv.cuDevicePrimaryCtxRelease(d->cu);
      pthread_mutex_destroy(&d->lock);
    }
    free(the_platform->devices);
    free(the_platform);
    the_platform = NULL;
  }
  if (driver && !driver_initialized)
    dlclose(driver); /* never used: nothing of it runs */
  if (!driver_initialized || !driver)
    driver = NULL;
  driver_initialized = false;
  driver_problem[0] = 0;
  pthread_mutex_unlock(&init_lock);
  return PI_SUCCESS;
}

/* Checks the runtime's PI major version, writes the plugin's version, fills
 * every entry of the function table and opens the driver. Without a driver
 * it still succeeds: piPlatformsGet then reports no platform, and why. */
PI_PLUGIN_EXPORT pi_result piPluginInit(pi_plugin *plugin) {
  pi_result r = plugin_init_version(plugin, "CUDA", PLUGIN_REVISION);
  if (r != PI_SUCCESS)
    return r;
#define X(name) plugin->PiFunctionTable.name = cu_##name;
  PI_FOR_EACH_API(X)
#undef X
  pthread_mutex_lock(&init_lock);
  if (!driver && !driver_initialized && !driver_problem[0])
    load_driver();
  pthread_mutex_unlock(&init_lock);
  return PI_SUCCESS;
}
