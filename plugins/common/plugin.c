/*
 * plugin.c: the version check and version string of piPluginInit.
 */
#include "plugin_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pi_result plugin_init_version(pi_plugin *plugin) {
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
                version, this_backend.name);
  snprintf(plugin->PluginVersion, sizeof plugin->PluginVersion, "%s.%s",
           _PI_H_VERSION_STRING, this_backend.revision);
  return PI_SUCCESS;
}
