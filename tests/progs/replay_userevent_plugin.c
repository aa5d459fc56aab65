/*
 * replay_userevent_plugin.c: a test plugin (libpi_replay_userevent.so) with
 * one CPU "device" whose user events really block: piEventCreate makes an
 * event that is not complete, piEventsWait waits until piEventSetStatus
 * completes it. The OpenCL plugin cannot show this (its piEventCreate
 * returns a complete event, as DPC++ does), and the replay tests need a
 * wait in one thread that only another thread's later call releases.
 * It is a test fixture, not a backend: it has no memory, programs or
 * queues.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pi/pi.h"

/* The one platform, device and context: any distinct addresses will do. */
static int the_platform, the_device, the_context;

struct _pi_event {
  pthread_mutex_t lock;
  pthread_cond_t done;
  pi_int32 status;
  int refs;
};

/* A list of one object: what piPlatformsGet and piDevicesGet answer. */
static pi_result list_of_one(void *object, pi_uint32 room, void **list, pi_uint32 *count)
{
  if (list && room)
    list[0] = object;
  if (count)
    count[0] = 1;
  return PI_SUCCESS;
}

static pi_result platforms_get(pi_uint32 n, pi_platform *out, pi_uint32 *count)
{
  return list_of_one(&the_platform, n, (void **)out, count);
}

static pi_result devices_get(pi_platform p, pi_device_type type, pi_uint32 n, pi_device *out,
                             pi_uint32 *count)
{
  (void)p;
  (void)type;
  return list_of_one(&the_device, n, (void **)out, count);
}

static pi_result give(const void *value, size_t size, size_t room, void *out, size_t *ret)
{
  if (ret)
    *ret = size;
  if (out && room < size)
    return PI_ERROR_INVALID_VALUE;
  if (out)
    memcpy(out, value, size);
  return PI_SUCCESS;
}

static pi_result device_info(pi_device dev, pi_device_info what, size_t room, void *out,
                             size_t *out_size)
{
  static const char name[] = "pitrace user-event test device";
  pi_device_type cpu = PI_DEVICE_TYPE_CPU;
  if (dev != (pi_device)(void *)&the_device)
    return PI_ERROR_INVALID_DEVICE;
  if (what == PI_DEVICE_INFO_TYPE)
    return give(&cpu, sizeof cpu, room, out, out_size);
  if (what == PI_DEVICE_INFO_NAME)
    return give(name, sizeof name, room, out, out_size);
  return give("1.0", 4, room, out, out_size); /* vendor, version */
}

static pi_result platform_info(pi_platform plat, pi_platform_info what, size_t room, void *out,
                               size_t *out_size)
{
  static const char name[] = "pitrace user-event test platform";
  (void)what;
  if (plat != (pi_platform)(void *)&the_platform)
    return PI_ERROR_INVALID_PLATFORM;
  return give(name, sizeof name, room, out, out_size);
}

static pi_result context_create(const pi_context_properties *properties, pi_uint32 ndevices,
                                const pi_device *list,
                                void (*callback)(const char *, const void *, size_t, void *),
                                void *callback_data, pi_context *context)
{
  (void)properties;
  (void)callback;
  (void)callback_data;
  if (ndevices != 1 || list[0] != (pi_device)(void *)&the_device)
    return PI_ERROR_INVALID_DEVICE;
  *context = (pi_context)(void *)&the_context;
  return PI_SUCCESS;
}

static pi_result context_release(pi_context c)
{
  return c == (pi_context)(void *)&the_context ? PI_SUCCESS : PI_ERROR_INVALID_CONTEXT;
}

static pi_result event_create(pi_context c, pi_event *out)
{
  (void)c;
  pi_event e = calloc(1, sizeof *e);
  if (!e)
    return PI_ERROR_OUT_OF_HOST_MEMORY;
  pthread_mutex_init(&e->lock, NULL);
  pthread_cond_init(&e->done, NULL);
  e->status = PI_EVENT_SUBMITTED;
  e->refs = 1;
  *out = e;
  return PI_SUCCESS;
}

static pi_result event_set_status(pi_event e, pi_int32 status)
{
  pthread_mutex_lock(&e->lock);
  e->status = status;
  pthread_cond_broadcast(&e->done);
  pthread_mutex_unlock(&e->lock);
  return PI_SUCCESS;
}

static pi_result events_wait(pi_uint32 n, const pi_event *events)
{
  for (pi_uint32 i = 0; i < n; i++) {
    pthread_mutex_lock(&events[i]->lock);
    while (events[i]->status != PI_EVENT_COMPLETE)
      pthread_cond_wait(&events[i]->done, &events[i]->lock);
    pthread_mutex_unlock(&events[i]->lock);
  }
  return PI_SUCCESS;
}

static pi_result event_info(pi_event e, pi_event_info param, size_t size, void *value,
                            size_t *ret)
{
  if (param != PI_EVENT_INFO_COMMAND_EXECUTION_STATUS)
    return PI_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&e->lock);
  pi_int32 status = e->status;
  pthread_mutex_unlock(&e->lock);
  return give(&status, sizeof status, size, value, ret);
}

static pi_result event_release(pi_event e)
{
  if (--e->refs)
    return PI_SUCCESS;
  pthread_cond_destroy(&e->done);
  pthread_mutex_destroy(&e->lock);
  free(e);
  return PI_SUCCESS;
}

static pi_result tear_down(void *unused)
{
  return unused ? PI_ERROR_INVALID_VALUE : PI_SUCCESS;
}

PI_PLUGIN_EXPORT pi_result piPluginInit(pi_plugin *p)
{
  snprintf(p->PluginVersion, sizeof p->PluginVersion, "%s", _PI_H_VERSION_STRING);
  struct pi_function_table *t = &p->PiFunctionTable;
  t->piPlatformsGet = platforms_get;
  t->piDevicesGet = devices_get;
  t->piDeviceGetInfo = device_info;
  t->piPlatformGetInfo = platform_info;
  t->piContextCreate = context_create;
  t->piContextRelease = context_release;
  t->piEventCreate = event_create;
  t->piEventSetStatus = event_set_status;
  t->piEventsWait = events_wait;
  t->piEventGetInfo = event_info;
  t->piEventRelease = event_release;
  t->piTearDown = tear_down;
  return PI_SUCCESS;
}
