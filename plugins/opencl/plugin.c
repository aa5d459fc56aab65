/*
 * plugin.c: the OpenCL plugin as a whole: what names it and its backend
 * options (this_backend), its teardown, and its two exported symbols,
 * piPluginInit (the function table) and pitrace_plugin_options (the libraries=
 * option of the plugins config).
 */
#include "ocl_internal.h"

/* ---- Plugin ----------------------------------------------------------------
 */

/* Optimization levels as DPC++ maps them for OpenCL: -O0 disables
 * optimization, -O1 to -O3 are OpenCL's default. */
const struct backend this_backend = {
    .name = "OpenCL",
    .revision = PLUGIN_REVISION,
    .compiler = "OpenCL",
    .options = {"", "-cl-opt-disable", "", "", ""},
    .program_with_source = ocl_piclProgramCreateWithSource,
};

/* Frees the platform cache and the discovery (and the options: the runtime
 * gives them again before the next piPluginInit); no PI call may follow
 * before piPluginInit. */
pi_result ocl_piTearDown(void *PluginParameter) {
  (void)PluginParameter;
  pthread_mutex_lock(&platforms_lock);
  while (platforms) {
    struct platform_state *next = platforms->next;
    free(platforms);
    platforms = next;
  }
  pthread_mutex_unlock(&platforms_lock);
  forget_discovery();
  return PI_SUCCESS;
}

/* Checks the runtime's PI major version, writes the plugin's version and
 * fills every entry of the function table. */
PI_PLUGIN_EXPORT pi_result piPluginInit(pi_plugin *plugin) {
  TRY(plugin_init_version(plugin));
  PLUGIN_FILL_TABLE(plugin);
  return PI_SUCCESS;
}

/* Takes the options of the plugin's line in the plugins config (the runtime
 * calls this before piPluginInit; "" when the line has none):
 * libraries=LIB[:LIB...] names OpenCL libraries to use besides the ICD
 * vendors, registered as ICDs or not. An option it does not know is named in
 * piPlatformsGet's message. Options given after discovery take effect at the
 * next discovery (after piTearDown). */
PI_PLUGIN_EXPORT void pitrace_plugin_options(const char *options) {
  static const char key[] = "libraries=";
  char *copy = strdup(options ? options : ""), *save = NULL;
  pthread_mutex_lock(&discovery_lock);
  free(option_libraries);
  option_libraries = NULL;
  text_free(&option_notes);
  for (char *opt = copy ? strtok_r(copy, " \t\n", &save) : NULL; opt;
       opt = strtok_r(NULL, " \t\n", &save)) {
    if (strncmp(opt, key, sizeof key - 1) != 0) {
      text_item(&option_notes,
                "plugins config: option '%s' is unknown to the OpenCL plugin "
                "and ignored (it takes libraries=LIB[:LIB...])",
                opt);
      continue;
    }
    const char *value = opt + sizeof key - 1; /* several join with ':' */
    size_t had = option_libraries ? strlen(option_libraries) + 1 : 0;
    char *joined = malloc(had + strlen(value) + 1);
    if (joined)
      sprintf(joined, "%s%s%s", had ? option_libraries : "", had ? ":" : "",
              value);
    free(option_libraries);
    option_libraries = joined;
  }
  pthread_mutex_unlock(&discovery_lock);
  free(copy);
}
