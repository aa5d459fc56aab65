/*
 * trace_end: a program for test_trace that makes traced PI calls and then
 * ends the ways that skip atexit and destructors, to check that the
 * buffered trace file still has every line:
 *
 *   trace_end exit N      N device queries, then _exit(7)
 *   trace_end crash N     N device queries, then a query whose answer goes
 *                         to an invalid address: SIGSEGV inside the call
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pirt.h"

int main(int argc, char **argv)
{
  if (argc != 3 || (strcmp(argv[1], "exit") != 0 && strcmp(argv[1], "crash") != 0)) {
    fprintf(stderr, "usage: trace_end exit|crash N\n");
    return 2;
  }
  int n = atoi(argv[2]);
  pirt_device *dev;
  if (pirt_device_select(NULL, &dev) != PI_SUCCESS) {
    fprintf(stderr, "trace_end: %s\n", pirt_error_message());
    return 2;
  }
  for (int i = 0; i < n; i++) {
    pi_uint32 units = 0;
    if (pirt_device_query(dev, PI_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof units, &units,
                          NULL) != PI_SUCCESS) {
      fprintf(stderr, "trace_end: %s\n", pirt_error_message());
      return 2;
    }
  }
  if (strcmp(argv[1], "exit") == 0)
    _exit(7);
  /* The plugin writes the answer to this address. */
  pirt_device_query(dev, PI_DEVICE_INFO_VENDOR_ID, sizeof(pi_uint32),
                    (void *)(uintptr_t)16, NULL);
  return 0;
}
