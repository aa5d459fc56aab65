/*
 * pi_null: a minimal PI plugin for benchmarks (a stand-in, not a backend):
 * every function the benchmarks call returns at once, so what a benchmark
 * measures through it is the cost of the layers above it (the runtime's
 * call path, the recording shim).
 */
#include <stdio.h>
#include <string.h>

#include "pi/pi.h"

static struct _pi_queue {
  int dummy;
} queue;

static pi_result queue_finish(pi_queue q)
{
  (void)q;
  return PI_SUCCESS;
}

static pi_result kernel_set_arg(pi_kernel k, pi_uint32 index, size_t size, const void *value)
{
  (void)k;
  (void)index;
  (void)size;
  (void)value;
  return PI_SUCCESS;
}

static pi_result buffer_write(pi_queue q, pi_mem b, pi_bool blocking, size_t offset,
                              size_t size, const void *ptr, pi_uint32 n, const pi_event *wait,
                              pi_event *event)
{
  (void)q;
  (void)b;
  (void)blocking;
  (void)offset;
  (void)size;
  (void)ptr;
  (void)n;
  (void)wait;
  if (event)
    *event = NULL;
  return PI_SUCCESS;
}

static pi_result tear_down(void *p)
{
  (void)p;
  return PI_SUCCESS;
}

PI_PLUGIN_EXPORT pi_result piPluginInit(pi_plugin *p)
{
  snprintf(p->PluginVersion, sizeof p->PluginVersion, "%d.%d.0", _PI_H_VERSION_MAJOR,
           _PI_H_VERSION_MINOR);
  p->PiFunctionTable.piQueueFinish = queue_finish;
  p->PiFunctionTable.piKernelSetArg = kernel_set_arg;
  p->PiFunctionTable.piEnqueueMemBufferWrite = buffer_write;
  p->PiFunctionTable.piTearDown = tear_down;
  return PI_SUCCESS;
}

/* The queue handle the benchmark passes (any pointer would do). */
PI_PLUGIN_EXPORT pi_queue pi_null_queue(void) { return &queue; }
