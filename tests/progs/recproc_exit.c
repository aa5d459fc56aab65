/*
 * recproc_exit: a program for `pitrace record`'s tests that makes a few PI
 * calls through pirt.h, one of which fails (a device query the device does
 * not know: PI_ERROR_INVALID_VALUE), then exits with the status it is
 * given.
 *
 *   recproc_exit STATUS [MS]   the calls, "recproc_exit: ready" on stdout,
 *                              a pause of MS milliseconds, exit(STATUS)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pirt.h"

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: recproc_exit STATUS [MS]\n");
    return 2;
  }
  int status = atoi(argv[1]);
  long ms = argc > 2 ? atol(argv[2]) : 0;
  pirt_device *dev;
  if (pirt_device_select(NULL, &dev) != PI_SUCCESS) {
    printf("recproc_exit: %s\n", pirt_error_message());
    return 2;
  }
  pi_uint32 units = 0;
  char value[64];
  if (pirt_device_query(dev, PI_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof units, &units,
                        NULL) != PI_SUCCESS ||
      pirt_device_query(dev, (pi_device_info)0x7fff0000, sizeof value, value, NULL) ==
          PI_SUCCESS) {
    printf("recproc_exit: the queries did not answer as expected\n");
    return 2;
  }
  printf("recproc_exit: ready\n");
  fflush(stdout);
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (ms > 0 && nanosleep(&t, &t) != 0)
    ;
  return status;
}
