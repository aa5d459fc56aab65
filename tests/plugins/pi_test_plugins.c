/*
 * Test plugins: tiny PI plugins for the runtime's own failure paths, where
 * no real plugin behaves that way. They are not doubles of a backend; one
 * source builds several, chosen by PI_TEST_PLUGIN_KIND:
 *
 *   pi_test_v2      reports PI version 2.0: the runtime must refuse it.
 *   pi_test_failinit its piPluginInit fails.
 *   pi_test_partial  one CPU "device"; leaves most of the table NULL, and
 *                    piContextCreate crashes (SIGSEGV) when the
 *                    PI_TEST_CRASH environment variable is set.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pi/pi.h"

#define TEST_VERSION(major) #major ".0.1"

#if PI_TEST_PLUGIN_KIND == 1 /* pi_test_v2 */
PI_PLUGIN_EXPORT pi_result piPluginInit(pi_plugin *p)
{
  snprintf(p->PluginVersion, sizeof p->PluginVersion, "%s", TEST_VERSION(2));
  return PI_SUCCESS;
}
#elif PI_TEST_PLUGIN_KIND == 2 /* pi_test_failinit */
PI_PLUGIN_EXPORT pi_result piPluginInit(pi_plugin *p)
{
  (void)p;
  return PI_ERROR_INVALID_OPERATION;
}
#else /* pi_test_partial */
static struct _pi_platform {
  int dummy;
} platform;
static struct _pi_device {
  int dummy;
} device;
static struct _pi_context {
  int dummy;
} context;

static pi_result platforms_get(pi_uint32 n, pi_platform *out, pi_uint32 *count)
{
  if (count)
    *count = 1;
  if (n && out)
    out[0] = &platform;
  return PI_SUCCESS;
}

static pi_result devices_get(pi_platform p, pi_device_type t, pi_uint32 n,
                             pi_device *out, pi_uint32 *count)
{
  (void)p;
  (void)t;
  if (count)
    *count = 1;
  if (n && out)
    out[0] = &device;
  return PI_SUCCESS;
}

static pi_result copy_out(const void *v, size_t size, size_t cap, void *out,
                          size_t *size_ret)
{
  if (size_ret)
    *size_ret = size;
  if (out) {
    if (cap < size)
      return PI_ERROR_INVALID_VALUE;
    memcpy(out, v, size);
  }
  return PI_SUCCESS;
}

static pi_result device_info(pi_device d, pi_device_info q, size_t cap,
                             void *out, size_t *size_ret)
{
  (void)d;
  static const pi_device_type cpu = PI_DEVICE_TYPE_CPU;
  switch (q) {
  case PI_DEVICE_INFO_TYPE:
    return copy_out(&cpu, sizeof cpu, cap, out, size_ret);
  case PI_DEVICE_INFO_NAME:
    return copy_out("partial test device", 20, cap, out, size_ret);
  default:
    return PI_ERROR_INVALID_VALUE;
  }
}

static pi_result platform_info(pi_platform p, pi_platform_info q, size_t cap,
                               void *out, size_t *size_ret)
{
  (void)p;
  static const pi_uint32 be = PI_EXT_PLATFORM_BACKEND_UNKNOWN;
  if (q == PI_EXT_PLATFORM_INFO_BACKEND)
    return copy_out(&be, sizeof be, cap, out, size_ret);
  if (q == PI_PLATFORM_INFO_NAME)
    return copy_out("partial test platform", 22, cap, out, size_ret);
  return PI_ERROR_INVALID_VALUE;
}

static pi_result context_create(const pi_context_properties *props,
                                pi_uint32 n, const pi_device *devs,
                                void (*notify)(const char *, const void *,
                                               size_t, void *),
                                void *user, pi_context *ret)
{
  (void)props;
  (void)n;
  (void)devs;
  (void)notify;
  (void)user;
  if (getenv("PI_TEST_CRASH"))
    raise(SIGSEGV);
  *ret = &context;
  return PI_SUCCESS;
}

static pi_result context_release(pi_context c)
{
  (void)c;
  return PI_SUCCESS;
}

static pi_result tear_down(void *p)
{
  (void)p;
  return PI_SUCCESS;
}

PI_PLUGIN_EXPORT pi_result piPluginInit(pi_plugin *p)
{
  if (p->PiVersion[0] != '1')
    return PI_ERROR_INVALID_OPERATION;
  snprintf(p->PluginVersion, sizeof p->PluginVersion, "%s", TEST_VERSION(1));
  p->PiFunctionTable.piPlatformsGet = platforms_get;
  p->PiFunctionTable.piPlatformGetInfo = platform_info;
  p->PiFunctionTable.piDevicesGet = devices_get;
  p->PiFunctionTable.piDeviceGetInfo = device_info;
  p->PiFunctionTable.piContextCreate = context_create;
  p->PiFunctionTable.piContextRelease = context_release;
  p->PiFunctionTable.piTearDown = tear_down;
  return PI_SUCCESS;
}
#endif
