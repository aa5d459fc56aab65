/*
 * errors.c: the last error of each thread (what piPluginGetLastError
 * returns) and fail()'s two halves, for every plugin.
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
