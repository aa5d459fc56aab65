/*
 * events.c: the event arguments every plugin that keeps its own events
 * checks alike: the command status a piEventSetCallback callback is for.
 */
#include "plugin_common.h"

pi_result event_callback_type_check(const char *fn, pi_int32 type) {
  if (type != PI_EVENT_COMPLETE && type != PI_EVENT_RUNNING &&
      type != PI_EVENT_SUBMITTED)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: callback type %d is none of PI_EVENT_COMPLETE, "
                "PI_EVENT_RUNNING, PI_EVENT_SUBMITTED",
                fn, (int)type);
  return PI_SUCCESS;
}
