/*
 * rp.h: what the replay verb, the extract verb and the replay plugin share:
 * a recorded session opened for replay (its calls, its plugins, the device
 * it ran on), payloads with the reason when one cannot be had, and readers
 * of the recorded argument encoding (session/writer.c, docs/schema.md).
 */
#ifndef PITRACE_RP_H
#define PITRACE_RP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pi_api.h"
#include "session.h"

#define RP_MAX_PLUGINS 16

typedef struct rp_plugin {
  char name[256], backend[32];
  bool had_platforms; /* a recorded piPlatformsGet found some */
  bool probed;        /* it was asked for platforms at all */
} rp_plugin;

typedef struct rp_session {
  pt_db db;
  int64_t id;
  pt_calls calls;
  rp_plugin plugins[RP_MAX_PLUGINS];
  uint32_t nplugins;
  int64_t device_id;       /* the device the application used (0: none seen) */
  uint32_t device_plugin;  /* the plugin serving it */
  char device_name[256];   /* from a recorded PI_DEVICE_INFO_NAME, or "" */
  char platform_name[256]; /* its platform's recorded PI_PLATFORM_INFO_NAME, or "" */
  /* Every discovered device with its platform's recorded name (a session
   * may have used devices of several platforms): rp_device_platform. */
  struct rp_device_platform *device_platforms;
  size_t ndevice_platforms;
  int64_t discovery_end;   /* seq of the first call after the runtime's device
                              discovery (INT64_MAX: the session is all discovery) */
  struct rp_prefetch *prefetch; /* large payloads read ahead, or NULL */
  /* Per call of `calls`: RP_READ_UNDEFINED where it reads a buffer
   * nothing wrote since it was made (what it holds is undefined: not
   * compared), RP_READ_FILLED where it reads one the replay filled when it
   * made it (rp_fills); NULL when none. */
  unsigned char *undefined_read;
  pthread_mutex_t db_lock;      /* db's cached statements: replay threads share it */
} rp_session;

typedef struct rp_device_platform {
  int64_t device;
  char platform[256]; /* "" when not recorded */
  char name[256];     /* the device's recorded PI_DEVICE_INFO_NAME, or "" */
} rp_device_platform;

/* The discovered recorded device `device` (its name and platform's), or
 * NULL. */
const rp_device_platform *rp_device_of(const rp_session *s, int64_t device);

/* The recorded PI_PLATFORM_INFO_NAME of the platform whose piDevicesGet
 * listed recorded device `device`; "" when not known. */
const char *rp_device_platform_name(const rp_session *s, int64_t device);

/* Discovery: the calls whose platforms and devices replay maps onto the
 * chosen device's instead of calling them. */
static inline bool rp_discovery_api(uint32_t api)
{
  return api == PI_API_piPlatformsGet || api == PI_API_piDevicesGet;
}

enum { RP_READ_UNDEFINED = 1, RP_READ_FILLED = 2 };

/* Whether call c (one of s->calls) reads a buffer nothing wrote since it
 * was made. */
static inline bool rp_undefined_read(const rp_session *s, const pt_call *c)
{
  return s->undefined_read && s->undefined_read[c - s->calls.v] == RP_READ_UNDEFINED;
}

/* A buffer made without host data holds what the device's memory held:
 * the replay makes it holding RP_FILL_BYTE in every byte instead (up to
 * RP_FILL_MAX bytes: a host copy of the fill is made for it), so that the
 * bytes no later call wrote are known when it is read (rp_check.c's
 * fill_unwritten). */
#define RP_FILL_BYTE 0xA5
#define RP_FILL_MAX ((uint64_t)256 << 20)
static inline bool rp_fills(int64_t flags, uint64_t size)
{
  return !(flags & (PI_MEM_FLAGS_HOST_PTR_COPY | PI_MEM_FLAGS_HOST_PTR_USE)) && size &&
         size <= RP_FILL_MAX;
}

/* Whether call c reads a buffer (or a sub-buffer of one) the replay
 * filled when it made it. */
static inline bool rp_filled_read(const rp_session *s, const pt_call *c)
{
  return s->undefined_read && s->undefined_read[c - s->calls.v] == RP_READ_FILLED;
}

/* The call with sequence number seq, or NULL. */
const pt_call *rp_call_by_seq(const rp_session *s, int64_t seq);

/* Opens `path` and loads session `session` (-1: the default one). False
 * with a one-line reason. */
bool rp_session_open(rp_session *s, const char *path, int64_t session, char *err,
                     size_t errn);
void rp_session_close(rp_session *s);

/* Starts reading the data rows ahead on a thread of its own, at most
 * `limit` bytes ahead of rp_payload (rp_prefetch.c); false if it cannot.
 * rp_session_close stops it. */
bool rp_prefetch_start(rp_session *s, size_t limit);
void rp_prefetch_stop(rp_session *s);
/* A payload read ahead (ownership passes), or NULL: read it the usual way. */
unsigned char *rp_prefetch_take(rp_session *s, const pt_call *c, unsigned position,
                                const char *role, unsigned idx, size_t *size);

/* Whether calls of recorded plugin `idx` are replayed: plugins that found
 * no platform (their discovery calls, last errors and teardown) are not. */
bool rp_plugin_replayed(const rp_session *s, uint32_t idx);

/* ---- Payloads --------------------------------------------------------------- */

typedef enum {
  RP_DATA_OK = 0,
  RP_DATA_ABSENT,       /* never recorded (SYCL_PI_RECORD_DATA=none, or not data) */
  RP_DATA_PARTIAL,      /* recorded in part (meta mode, a data cap) */
  RP_DATA_MISSING_BLOB  /* the row is there, its content is gone */
} rp_data_status;

/* A payload of call c (malloc'd; size in *size), or NULL with *status. */
unsigned char *rp_payload(rp_session *s, const pt_call *c, unsigned position, const char *role,
                          unsigned idx, size_t *size, rp_data_status *status);
/* What the recording kept of a payload it recorded only in part (a data cap
 * keeps the first bytes): malloc'd, *size bytes of the call's *full; NULL
 * when it kept none. */
unsigned char *rp_payload_kept(rp_session *s, const pt_call *c, unsigned position,
                               const char *role, unsigned idx, size_t *size, size_t *full);
/* One line saying why payload (position, role, idx) of call c is unusable. */
void rp_payload_problem(const rp_session *s, const pt_call *c, unsigned position,
                        const char *role, rp_data_status st, char *err, size_t errn);
/* The seq at which a "readback" payload was captured (-1: unknown). */
int64_t rp_captured_seq(rp_session *s, const pt_call *c, unsigned position);

/* ---- Recorded argument values -------------------------------------------------- */

/* Parameter `name` of api; -1 if none. (Its blocking flag, queue and
 * event: api->blocking, ->queue, ->event.) */
int rp_param(const pi_api_desc *api, const char *name);
/* The INFO parameter of an info query, -1 for other functions. */
int rp_info_param(const pi_api_desc *api);
/* Whether recorded call c is blocking (no blocking flag: it is). */
bool rp_call_blocking(const pi_api_desc *api, const pt_call *c);
/* An integer argument of a recorded call (def when null or absent). */
int64_t rp_arg_int(const pt_call *c, unsigned i, int64_t def);

/* Handle ids named in the recorded text of info-query parameter i of call
 * c ("device#2", "[device#2, device#3]"): up to max of them into ids;
 * returns the count. */
size_t rp_info_ids(const pt_call *c, unsigned i, uint64_t *ids, size_t max);


/* Appends `item` (elem bytes) to the growable array *vec of *n elements
 * (room for *cap); false when out of memory. */
bool rp_push(void *vec, size_t *n, size_t *cap, size_t elem, const void *item);

/* The function of a recorded call (NULL for an id this build lacks). */
/* Whether a recorded call returned and succeeded. */
static inline bool rp_call_ok(const pt_call *c) { return c->returned && c->result == PI_SUCCESS; }

static inline const pi_api_desc *rp_api(const pt_call *c)
{
  return pi_api_get(c->api);
}

#endif /* PITRACE_RP_H */
