/*
 * errors.c: the last error of each thread (what piPluginGetLastError
 * returns), fail()'s two halves, and the check piPluginInit makes of the
 * runtime's PI version, for every plugin.
 */
#include "plugin_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Thread_local char last_message[4096];
_Thread_local pi_result last_code = PI_SUCCESS;

void fail_message(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_message, sizeof last_message, fmt, ap);
  va_end(ap);
}

pi_result fail_code(pi_result code) {
  last_code = code;
  return code;
}

pi_result out_of_memory(const char *fn) {
  return fail(PI_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
}

pi_result plugin_last_error(char **message) {
  if (message)
    *message = last_message;
  return last_code;
}

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
