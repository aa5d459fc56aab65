/*
 * use_device: selects a device, creates a context and a queue, and prints
 * what it got. Tests run it as a separate process to check the runtime's
 * start-up, selection, failure and crash paths from the outside.
 * Exit status: 0 on success, 2 when the runtime returned an error.
 */
#include <stdio.h>

#include "pirt.h"

int main(void)
{
  pirt_device *dev;
  pirt_device_info info;
  pirt_context *ctx;
  pi_result r = pirt_device_select(NULL, &dev);
  if (r == PI_SUCCESS)
    r = pirt_device_get_info(dev, &info);
  if (r != PI_SUCCESS) {
    printf("use_device: %s: %s\n", pirt_result_name(r), pirt_error_message());
    return 2;
  }
  printf("use_device: selected \"%s\" on \"%s\" (%s:%u)\n", info.name,
         info.platform_name, info.backend, info.index);
  fflush(stdout);
  r = pirt_context_create(dev, &ctx);
  if (r != PI_SUCCESS) {
    printf("use_device: %s: %s\n", pirt_result_name(r), pirt_error_message());
    return 2;
  }
  printf("use_device: context created\n");
  fflush(stdout);
  pirt_queue *q;
  r = pirt_queue_create(ctx, 0, &q);
  if (r != PI_SUCCESS) {
    printf("use_device: %s: %s\n", pirt_result_name(r), pirt_error_message());
    pirt_context_release(ctx);
    return 2;
  }
  printf("use_device: queue created\n");
  pirt_queue_release(q);
  return pirt_context_release(ctx) == PI_SUCCESS ? 0 : 2;
}
