/*
 * prof_probe.c: what an application sees of event profiling. A write with
 * an event on a queue created without profiling, and one on a queue
 * created with it; prints the result of asking each event its times, then
 * a blocking read with no event (the shim makes one when it records device
 * times). The output must be the same with and without recording
 * (SYCL_PI_RECORD_PROFILE=1 adds profiling to the first queue for the
 * shim, never for the application).
 */
#include <stdio.h>
#include <string.h>

#include "pirt.h"

#define TRY(x)                                                                        \
  do {                                                                                \
    pi_result r_ = (x);                                                               \
    if (r_ != PI_SUCCESS) {                                                           \
      fprintf(stderr, "prof_probe: %s failed (%d): %s\n", #x, r_, pirt_error_message()); \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

static int probe(pirt_context *ctx, unsigned flags, const char *what)
{
  pirt_queue *q;
  pirt_buffer *buf;
  pirt_event *ev;
  int data[256], back[256];
  for (int i = 0; i < 256; i++)
    data[i] = i;
  TRY(pirt_queue_create(ctx, flags, &q));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_WRITE, sizeof data, NULL, &buf));
  TRY(pirt_write(q, buf, false, 0, sizeof data, data, 0, NULL, &ev));
  TRY(pirt_event_wait(1, &ev));
  uint64_t start = 0, end = 0;
  pi_result r = pirt_event_times(ev, &start, &end);
  printf("%s: event times: %s\n", what, r == PI_SUCCESS ? "PI_SUCCESS" : pirt_result_name(r));
  TRY(pirt_event_release(ev));
  TRY(pirt_read(q, buf, true, 0, sizeof back, back, 0, NULL, NULL));
  printf("%s: read back %s\n", what, memcmp(data, back, sizeof data) ? "wrong" : "right");
  TRY(pirt_buffer_release(buf));
  TRY(pirt_queue_release(q));
  return 0;
}

int main(void)
{
  pirt_device *dev;
  pirt_context *ctx;
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_context_create(dev, &ctx));
  if (probe(ctx, 0, "plain queue") || probe(ctx, PIRT_QUEUE_PROFILING, "profiling queue"))
    return 1;
  TRY(pirt_context_release(ctx));
  return 0;
}
