/*
 * teardown_order: an application whose own destructor (default priority)
 * still uses the runtime after main returns. The runtime shuts down from a
 * destructor at priority 110, so its trace lines must come after the
 * application's "app destructor" line.
 */
#include <stdio.h>

#include "pirt.h"

static pirt_device *dev;

__attribute__((destructor)) static void app_destructor(void)
{
  pirt_context *ctx;
  pi_result r = pirt_context_create(dev, &ctx);
  if (r == PI_SUCCESS)
    r = pirt_context_release(ctx);
  printf("app destructor: %s\n", r == PI_SUCCESS ? "runtime usable"
                                                 : pirt_error_message());
  fflush(stdout);
}

int main(void)
{
  pi_result r = pirt_device_select(NULL, &dev);
  printf("main: %s\n", r == PI_SUCCESS ? "device selected" : pirt_error_message());
  fflush(stdout);
  return r == PI_SUCCESS ? 0 : 2;
}
