/*
 * pi_null: a minimal PI plugin for benchmarks (a stand-in, not a backend):
 * every function the benchmarks call returns at once, so what a benchmark
 * measures through it is the cost of the layers above it (the runtime's
 * call path, the recording shim, the SYCL_PI_TRACE=2 trace). It has one
 * platform with one CPU device, enough for the runtime to discover and
 * select it (bench_record's trace mode goes through the runtime), and
 * answers piDeviceGetInfo for an integer (MAX_COMPUTE_UNITS) and the
 * strings the runtime asks for (NAME, VENDOR, VERSION).
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

static struct _pi_platform {
  int dummy;
} platform;
static struct _pi_device {
  int dummy;
} device;

static pi_result platforms_get(pi_uint32 n, pi_platform *platforms, pi_uint32 *num)
{
  if (platforms && n > 0)
    platforms[0] = &platform;
  if (num)
    *num = 1;
  return PI_SUCCESS;
}

/* Copies an info value the way every plugin does: its size always, the
 * value when the buffer holds it. */
static pi_result info_out(const void *v, size_t n, size_t size, void *value, size_t *size_ret)
{
  if (value) {
    if (size < n)
      return PI_ERROR_INVALID_VALUE;
    memcpy(value, v, n);
  }
  if (size_ret)
    *size_ret = n;
  return PI_SUCCESS;
}

static pi_result platform_get_info(pi_platform p, pi_platform_info param, size_t size,
                                   void *value, size_t *size_ret)
{
  (void)p;
  static const char name[] = "pi_null";
  if (param == PI_PLATFORM_INFO_NAME)
    return info_out(name, sizeof name, size, value, size_ret);
  return PI_ERROR_INVALID_VALUE;
}

static pi_result devices_get(pi_platform p, pi_device_type type, pi_uint32 n, pi_device *devices,
                             pi_uint32 *num)
{
  (void)p;
  bool cpu = (type & PI_DEVICE_TYPE_CPU) != 0;
  if (devices && n > 0 && cpu)
    devices[0] = &device;
  if (num)
    *num = cpu ? 1 : 0;
  return cpu ? PI_SUCCESS : PI_ERROR_DEVICE_NOT_FOUND;
}

static pi_result device_get_info(pi_device d, pi_device_info param, size_t size, void *value,
                                 size_t *size_ret)
{
  (void)d;
  static const char name[] = "pi_null device (answers at once)", vendor[] = "pitrace",
                    version[] = "OpenCL 3.0 pi_null";
  static const pi_device_type type = PI_DEVICE_TYPE_CPU;
  static const pi_uint32 units = 1;
  switch (param) {
  case PI_DEVICE_INFO_TYPE:
    return info_out(&type, sizeof type, size, value, size_ret);
  case PI_DEVICE_INFO_MAX_COMPUTE_UNITS:
    return info_out(&units, sizeof units, size, value, size_ret);
  case PI_DEVICE_INFO_NAME:
    return info_out(name, sizeof name, size, value, size_ret);
  case PI_DEVICE_INFO_VENDOR:
    return info_out(vendor, sizeof vendor, size, value, size_ret);
  case PI_DEVICE_INFO_VERSION:
    return info_out(version, sizeof version, size, value, size_ret);
  default:
    return PI_ERROR_INVALID_VALUE;
  }
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
  p->PiFunctionTable.piPlatformsGet = platforms_get;
  p->PiFunctionTable.piPlatformGetInfo = platform_get_info;
  p->PiFunctionTable.piDevicesGet = devices_get;
  p->PiFunctionTable.piDeviceGetInfo = device_get_info;
  p->PiFunctionTable.piQueueFinish = queue_finish;
  p->PiFunctionTable.piKernelSetArg = kernel_set_arg;
  p->PiFunctionTable.piEnqueueMemBufferWrite = buffer_write;
  p->PiFunctionTable.piTearDown = tear_down;
  return PI_SUCCESS;
}

/* The queue handle the benchmark passes (any pointer would do). */
PI_PLUGIN_EXPORT pi_queue pi_null_queue(void) { return &queue; }
