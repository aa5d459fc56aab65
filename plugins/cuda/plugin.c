/*
 * plugin.c: the CUDA plugin as a whole: what names it and its backend options
 * (this_backend), its teardown, and its exported symbol, piPluginInit (the
 * function table, then opening the driver).
 */
#include "cu_internal.h"

/* ---- Plugin ----------------------------------------------------------------
 */

/* -O0..-O3 pass to the JIT (piProgramBuild takes them), "" is the default. */
const struct backend this_backend = {
    .name = "CUDA",
    .revision = PLUGIN_REVISION,
    .compiler = "CUDA JIT",
    .options = {"", "-O0", "-O1", "-O2", "-O3"},
    .no_source = "the CUDA driver cannot compile OpenCL C source; compile the "
                 "kernels to PTX (nvcc -ptx, clang --cuda-device-only) and use "
                 "piProgramCreateWithBinary",
};

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
  TRY(plugin_init_version(plugin));
  PLUGIN_FILL_TABLE(plugin);
  pthread_mutex_lock(&init_lock);
  if (!driver && !driver_initialized && !driver_problem[0])
    load_driver();
  pthread_mutex_unlock(&init_lock);
  return PI_SUCCESS;
}
