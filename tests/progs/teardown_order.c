/*
 * teardown_order: an application whose own destructor (default priority)
 * still uses the runtime after main returns. The runtime shuts down from a
 * destructor at priority 110, so its trace lines must come after the
 * application's "app destructor" line.
 *
 * The destructor queries the device through the plugin rather than
 * creating objects: by the time ELF destructors run, exit() has already
 * run the C++ static destructors of low-level runtimes (PoCL's LLVM), which
 * the pitrace runtime cannot order (seed 002, "Low-level runtimes").
 */
#include <stdio.h>

#include "pirt.h"

static pirt_device *dev;

__attribute__((destructor)) static void app_destructor(void)
{
  pi_uint32 units = 0;
  pirt_device_info info;
  pi_result r = pirt_device_query(dev, PI_DEVICE_INFO_MAX_COMPUTE_UNITS,
                                  sizeof units, &units, NULL);
  if (r == PI_SUCCESS)
    r = pirt_device_get_info(dev, &info);
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
