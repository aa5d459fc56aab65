/*
 * recproc_crash: a program for `pitrace record`'s tests that makes a few PI
 * calls through pirt.h and then crashes with a segfault in its own code
 * (not inside a PI call).
 *
 *   recproc_crash [N]   a context, a queue, a buffer, N device queries, a
 *                       blocking write, then a NULL write (SIGSEGV)
 * It prints "recproc_crash: crashing after the calls" just before.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pirt.h"

static int fail(const char *what)
{
  printf("recproc_crash: %s: %s\n", what, pirt_error_message());
  return 2;
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 3;
  pirt_device *dev;
  pirt_context *ctx;
  pirt_queue *q;
  pirt_buffer *b;
  int data[64] = {0};
  if (pirt_device_select(NULL, &dev) != PI_SUCCESS)
    return fail("device");
  if (pirt_context_create(dev, &ctx) != PI_SUCCESS)
    return fail("context");
  if (pirt_queue_create(ctx, 0, &q) != PI_SUCCESS)
    return fail("queue");
  if (pirt_buffer_create(ctx, 0, sizeof data, NULL, &b) != PI_SUCCESS)
    return fail("buffer");
  for (int i = 0; i < n; i++) {
    pi_uint32 units = 0;
    if (pirt_device_query(dev, PI_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof units, &units,
                          NULL) != PI_SUCCESS)
      return fail("query");
  }
  if (pirt_write(q, b, true, 0, sizeof data, data, 0, NULL, NULL) != PI_SUCCESS)
    return fail("write");
  printf("recproc_crash: crashing after the calls\n");
  fflush(stdout);
  volatile int *volatile null = NULL;
  *null = 1;
  return 0;
}
