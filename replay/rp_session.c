/*
 * rp_session.c: a recorded session opened for replay (rp.h): its calls,
 * which plugins served devices, the device the application used, payloads
 * with the reason one is unusable, and the recorded argument encoding.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rp.h"

static void load_plugins(rp_session *s)
{
  pt_plugin list[RP_MAX_PLUGINS];
  size_t n = pt_plugins(&s->db, s->id, list, RP_MAX_PLUGINS);
  for (size_t i = 0; i < n; i++) {
    int idx = list[i].idx;
    if (idx < 0 || idx >= RP_MAX_PLUGINS)
      continue;
    snprintf(s->plugins[idx].name, sizeof s->plugins[idx].name, "%s", list[i].name);
    snprintf(s->plugins[idx].backend, sizeof s->plugins[idx].backend, "%s", list[i].backend);
    if ((uint32_t)idx + 1 > s->nplugins)
      s->nplugins = (uint32_t)idx + 1;
  }
}

/* Where the runtime's device discovery ends: the seq of the first call
 * that is not part of it (INT64_MAX: the session is all discovery).
 *
 * Discovery (pirt_devices_discover, runtime/src/devices.c) asks each bound
 * plugin in turn for its platforms; a plugin with none gives its last
 * error; of each platform it gets the backend (a plugin of unknown
 * backend), the devices, the name; of each device its type, name, vendor
 * and version. An application asks the same kinds of question afterwards
 * (an OpenCL application, through the front end, asks a device's type
 * first), so which kind of call it is does not say whose it is: the calls
 * are followed in the order discovery makes them, with the counts and
 * handles each answer gave, and discovery ends at the first call that does
 * not come next there. After a plugin's last device that is any call but
 * the first piPlatformsGet of a plugin not asked yet (one asked again is
 * the application's). Sessions do not mark the end themselves. */
typedef struct disc {
  const rp_session *s;
  size_t i;          /* the next call */
  uint32_t thread, plugin;
} disc;

static const pt_call *disc_next(const disc *d, uint32_t api)
{
  if (d->i >= d->s->calls.n)
    return NULL;
  const pt_call *c = &d->s->calls.v[d->i];
  return c->api == api && c->thread == d->thread && c->plugin == d->plugin ? c : NULL;
}

/* The query_string of devices.c on object `id`: a size query, then (when
 * it gave a size) the value query. False where the calls are not those. */
static bool disc_string(disc *d, uint32_t api, int64_t id, int64_t param)
{
  const pt_call *c = disc_next(d, api);
  if (!c || rp_arg_int(c, 0, -1) != id || rp_arg_int(c, 1, -1) != param ||
      rp_arg_int(c, 2, -1) != 0)
    return false;
  d->i++;
  if (!rp_call_ok(c) || rp_arg_int(c, 4, 0) <= 0)
    return true;
  c = disc_next(d, api);
  if (!c || rp_arg_int(c, 0, -1) != id || rp_arg_int(c, 1, -1) != param)
    return false;
  d->i++;
  return true;
}

/* add_platform_devices of devices.c on platform `plat`. */
static bool disc_platform(disc *d, int64_t plat)
{
  const pt_call *c = disc_next(d, PI_API_piPlatformGetInfo);
  if (c && rp_arg_int(c, 0, -1) == plat && rp_arg_int(c, 1, -1) == PI_EXT_PLATFORM_INFO_BACKEND)
    d->i++;
  c = disc_next(d, PI_API_piDevicesGet);
  if (!c || rp_arg_int(c, 0, -1) != plat || rp_arg_int(c, 2, -1) != 0)
    return false;
  d->i++;
  if (!rp_call_ok(c) || rp_arg_int(c, 4, 0) <= 0)
    return true;
  c = disc_next(d, PI_API_piDevicesGet);
  if (!c || rp_arg_int(c, 0, -1) != plat || rp_arg_int(c, 2, 0) <= 0)
    return false;
  d->i++;
  if (!rp_call_ok(c))
    return true;
  pt_json *devs = pt_json_at(c->args, 3);
  if (!disc_string(d, PI_API_piPlatformGetInfo, plat, PI_PLATFORM_INFO_NAME))
    return false;
  static const int64_t strings[] = {PI_DEVICE_INFO_NAME, PI_DEVICE_INFO_VENDOR,
                                    PI_DEVICE_INFO_VERSION};
  for (uint32_t k = 0; devs && devs->type == PJ_ARRAY && k < devs->n; k++) {
    int64_t dev = pt_json_int(pt_json_at(devs, k), 0);
    c = disc_next(d, PI_API_piDeviceGetInfo);
    if (!c || rp_arg_int(c, 0, -1) != dev || rp_arg_int(c, 1, -1) != PI_DEVICE_INFO_TYPE)
      return false;
    d->i++;
    for (size_t q = 0; q < sizeof strings / sizeof *strings; q++)
      if (!disc_string(d, PI_API_piDeviceGetInfo, dev, strings[q]))
        return false;
  }
  return true;
}

static int64_t find_discovery_end(const rp_session *s)
{
  disc d = {.s = s};
  bool asked[RP_MAX_PLUGINS] = {false};
  while (d.i < s->calls.n) {
    const pt_call *c = &s->calls.v[d.i];
    if (d.i == 0)
      d.thread = c->thread;
    d.plugin = c->plugin;
    /* Each plugin once, with the count query first. */
    if (!disc_next(&d, PI_API_piPlatformsGet) || c->plugin >= RP_MAX_PLUGINS ||
        asked[c->plugin] || rp_arg_int(c, 0, -1) != 0)
      break;
    asked[c->plugin] = true;
    d.i++;
    if (!rp_call_ok(c) || rp_arg_int(c, 2, 0) <= 0) {
      if (disc_next(&d, PI_API_piPluginGetLastError))
        d.i++;
      continue;
    }
    c = disc_next(&d, PI_API_piPlatformsGet);
    if (!c || rp_arg_int(c, 0, 0) <= 0)
      break;
    d.i++;
    pt_json *plats = rp_call_ok(c) ? pt_json_at(c->args, 1) : NULL;
    bool whole = true;
    for (uint32_t k = 0; whole && plats && plats->type == PJ_ARRAY && k < plats->n; k++)
      whole = disc_platform(&d, pt_json_int(pt_json_at(plats, k), 0));
    if (!whole)
      break;
  }
  return d.i < s->calls.n ? s->calls.v[d.i].seq : INT64_MAX;
}

/* Which plugins found platforms, and the device the application used: the
 * first device of a context (else the first one discovered); where the
 * runtime's discovery ends (the first call that is not part of it). */
static void scan_calls(rp_session *s)
{
  s->discovery_end = find_discovery_end(s);
  int64_t first_found = 0;
  uint32_t first_plugin = 0;
  for (size_t i = 0; i < s->calls.n; i++) {
    const pt_call *c = &s->calls.v[i];
    if (c->plugin >= RP_MAX_PLUGINS || !c->returned || c->result != PI_SUCCESS)
      continue;
    if (c->api == PI_API_piPlatformsGet) {
      pt_json *list = pt_json_at(c->args, 1);
      s->plugins[c->plugin].probed = true;
      if (rp_arg_int(c, 2, 0) > 0 || (list && list->type == PJ_ARRAY && list->n))
        s->plugins[c->plugin].had_platforms = true;
    } else if (c->api == PI_API_piDevicesGet && !first_found) {
      first_found = pt_json_int(pt_json_at(pt_json_at(c->args, 3), 0), 0);
      first_plugin = c->plugin;
    } else if (c->api == PI_API_piContextCreate && !s->device_id) {
      s->device_id = pt_json_int(pt_json_at(pt_json_at(c->args, 2), 0), 0);
      s->device_plugin = c->plugin;
    }
  }
  if (!s->device_id) {
    s->device_id = first_found;
    s->device_plugin = first_plugin;
  }
}

/* Reads of buffers and images nothing wrote since they were made: one
 * made without host data holds whatever the device's memory held, and an
 * application may map it to write it (OpenCV maps a new UMat for reading
 * and writing, then fills it on the host; the OpenCL front end maps an
 * image for writing by reading it first): the bytes the recording saw
 * there are no result to compare. A buffer or image stops being fresh at a
 * write, fill, copy into it, an unmap, a partition, an image made on it,
 * or when it is bound to a kernel argument. Out of memory: everything is
 * compared, as before.
 * Also marked (RP_READ_FILLED): reads of a buffer made without host data,
 * or of a sub-buffer of one, which the replay fills with RP_FILL_BYTE when
 * it makes it (rp_sched.c's fill_new_buffer): a kernel that writes part of it
 * (pyopencl's copy_if writes as many items as it keeps) leaves the rest
 * undefined, bytes the recording saw as whatever the device's memory held
 * before; where the replay's read still finds its fill there, they are not
 * compared. */
static void find_undefined_reads(rp_session *s)
{
  /* Per recorded mem id: bit 1 fresh, bit 2 filled by the replay. */
  unsigned char *fresh = NULL, *undef = NULL;
  size_t nfresh = 0;
  for (size_t i = 0; i < s->calls.n; i++) {
    const pt_call *c = &s->calls.v[i];
    if (!c->returned || c->result != PI_SUCCESS)
      continue;
    uint64_t mem = 0, sub = 0;
    bool make = false, use = false, filled = false;
    switch (c->api) {
    case PI_API_piMemBufferCreate:
      make = !(rp_arg_int(c, 1, 0) & (PI_MEM_FLAGS_HOST_PTR_COPY | PI_MEM_FLAGS_HOST_PTR_USE));
      filled = make && rp_fills(rp_arg_int(c, 1, 0), (uint64_t)rp_arg_int(c, 2, 0));
      mem = (uint64_t)rp_arg_int(c, 4, 0);
      break;
    case PI_API_piMemImageCreate: {
      /* An image on a buffer (image1d_buffer) is written through it, and
       * holds what the buffer holds: neither is fresh. */
      uint64_t buffer = (uint64_t)pt_json_int(pt_json_at(pt_json_at(c->args, 3), 9), 0);
      if (buffer && buffer < nfresh)
        fresh[buffer] = 0;
      make = !buffer &&
             !(rp_arg_int(c, 1, 0) & (PI_MEM_FLAGS_HOST_PTR_COPY | PI_MEM_FLAGS_HOST_PTR_USE));
      mem = (uint64_t)rp_arg_int(c, 5, 0);
      break;
    }
    case PI_API_piEnqueueMemImageWrite: case PI_API_piEnqueueMemImageFill:
      mem = (uint64_t)rp_arg_int(c, 1, 0);
      break;
    case PI_API_piEnqueueMemImageCopy:
      mem = (uint64_t)rp_arg_int(c, 2, 0);
      break;
    case PI_API_piEnqueueMemImageRead:
      use = true;
      mem = (uint64_t)rp_arg_int(c, 1, 0);
      break;
    case PI_API_piEnqueueMemBufferWrite: case PI_API_piEnqueueMemBufferWriteRect:
    case PI_API_piEnqueueMemBufferFill: case PI_API_piEnqueueMemUnmap:
      mem = (uint64_t)rp_arg_int(c, 1, 0);
      break;
    case PI_API_piMemBufferPartition:
      mem = (uint64_t)rp_arg_int(c, 0, 0);
      sub = (uint64_t)rp_arg_int(c, 4, 0); /* filled as its buffer is */
      break;
    case PI_API_piEnqueueMemBufferCopy: case PI_API_piEnqueueMemBufferCopyRect:
      mem = (uint64_t)rp_arg_int(c, 2, 0);
      break;
    case PI_API_piextKernelSetArgMemObj:
      mem = (uint64_t)pt_json_int(pt_json_at(pt_json_at(c->args, 3), 0), 0);
      break;
    case PI_API_piEnqueueMemBufferRead: case PI_API_piEnqueueMemBufferReadRect:
      use = true;
      mem = (uint64_t)rp_arg_int(c, 1, 0);
      break;
    case PI_API_piEnqueueMemBufferMap:
      use = (rp_arg_int(c, 3, 0) & PI_MAP_READ) != 0;
      mem = (uint64_t)rp_arg_int(c, 1, 0);
      break;
    default:
      continue;
    }
    if (!mem || mem > (1u << 30) || sub > (1u << 30))
      continue;
    size_t top = mem > sub ? mem : sub;
    if (top >= nfresh) {
      if (!make && mem >= nfresh)
        continue; /* never marked */
      size_t n = (size_t)top * 2 + 64;
      unsigned char *v = realloc(fresh, n);
      if (!v)
        break;
      memset(v + nfresh, 0, n - nfresh);
      fresh = v;
      nfresh = n;
    }
    if (use) {
      if (fresh[mem]) {
        if (!undef && !(undef = calloc(s->calls.n, 1)))
          break;
        undef[i] = fresh[mem] & 1 ? RP_READ_UNDEFINED : RP_READ_FILLED;
      }
    } else if (make) {
      fresh[mem] = filled ? 3 : 1;
    } else { /* written, or may have been: no longer fresh, still filled */
      if (sub)
        fresh[sub] = fresh[mem] & 2;
      fresh[mem] &= 2;
    }
  }
  free(fresh);
  s->undefined_read = undef; /* NULL: no such read */
}

/* The string the first successful info query `api` of handle `id` for
 * `param` answered (its value, parameter 3), into out (n bytes); "" when
 * none was recorded. */
static void recorded_answer(rp_session *s, uint32_t api, int64_t id, int64_t param, char *out,
                            size_t n)
{
  *out = 0;
  for (size_t i = 0; i < s->calls.n && id; i++) {
    const pt_call *c = &s->calls.v[i];
    if (c->api != api || rp_arg_int(c, 0, -1) != id || rp_arg_int(c, 1, -1) != param ||
        c->result != PI_SUCCESS)
      continue;
    size_t size;
    rp_data_status st;
    unsigned char *v = rp_payload(s, c, 3, "value", 0, &size, &st);
    if (v && size)
      snprintf(out, n, "%.*s", (int)strnlen((const char *)v, size), (const char *)v);
    free(v);
    if (*out)
      return;
  }
}

/* Every device a recorded piDevicesGet listed, with the recorded name of
 * the platform it listed it for: program binaries are that platform's,
 * and an application may have used devices of several (out of memory:
 * those found so far). */
static void find_device_platforms(rp_session *s)
{
  size_t cap = 0;
  for (size_t i = 0; i < s->calls.n; i++) {
    const pt_call *c = &s->calls.v[i];
    const pt_json *devs = c->api == PI_API_piDevicesGet && c->result == PI_SUCCESS
                            ? pt_json_at(c->args, 3) : NULL;
    int64_t platform = rp_arg_int(c, 0, 0);
    for (size_t k = 0; devs && devs->type == PJ_ARRAY && k < devs->n; k++) {
      rp_device_platform d = {.device = pt_json_int(devs->u.items[k], 0)};
      bool known = false;
      for (size_t j = 0; j < s->ndevice_platforms && !known; j++)
        known = s->device_platforms[j].device == d.device;
      if (!d.device || known)
        continue;
      recorded_answer(s, PI_API_piPlatformGetInfo, platform, PI_PLATFORM_INFO_NAME, d.platform,
                      sizeof d.platform);
      recorded_answer(s, PI_API_piDeviceGetInfo, d.device, PI_DEVICE_INFO_NAME, d.name,
                      sizeof d.name);
      if (!rp_push(&s->device_platforms, &s->ndevice_platforms, &cap, sizeof d, &d))
        return;
    }
  }
}

const rp_device_platform *rp_device_of(const rp_session *s, int64_t device)
{
  for (size_t k = 0; k < s->ndevice_platforms; k++)
    if (s->device_platforms[k].device == device)
      return &s->device_platforms[k];
  return NULL;
}

const char *rp_device_platform_name(const rp_session *s, int64_t device)
{
  const rp_device_platform *d = rp_device_of(s, device);
  return d ? d->platform : "";
}

/* The recorded names of the application's device and of the platform
 * whose piDevicesGet listed it. */
static void find_device_names(rp_session *s)
{
  recorded_answer(s, PI_API_piDeviceGetInfo, s->device_id, PI_DEVICE_INFO_NAME, s->device_name,
                  sizeof s->device_name);
  find_device_platforms(s);
  snprintf(s->platform_name, sizeof s->platform_name, "%s",
           rp_device_platform_name(s, s->device_id));
}

/* Every call of a known function holds all its arguments: fewer is a
 * damaged file, refused here for every user (replay, extract, the plugin). */
static bool check_calls(const rp_session *s, char *err, size_t errn)
{
  for (size_t i = 0; i < s->calls.n; i++) {
    const pt_call *c = &s->calls.v[i];
    const pi_api_desc *api = rp_api(c);
    if (api && c->args->n < api->nparams) {
      snprintf(err, errn, "%s is damaged: seq %lld %s has %u recorded arguments, not %u",
               s->db.path, (long long)c->seq, api->name, c->args->n, api->nparams);
      return false;
    }
  }
  return true;
}

bool rp_session_open(rp_session *s, const char *path, int64_t session, char *err, size_t errn)
{
  memset(s, 0, sizeof *s);
  /* Payloads are read straight from the mapped file, not copied twice. */
  if (!pt_open(path, PT_OPEN_MAPPED, &s->db, err, errn))
    return false;
  s->id = session >= 0 ? session : pt_default_session(&s->db);
  if (s->id < 0 || !pt_session_exists(&s->db, s->id)) {
    if (session >= 0)
      snprintf(err, errn, "%s has no session %lld (pitrace sessions lists them)", path,
               (long long)session);
    else
      snprintf(err, errn, "%s holds no recorded session", path);
    pt_close(&s->db);
    return false;
  }
  if (pt_session_damaged(&s->db, s->id, err, errn)) {
    /* Its calls' handles and data would be missing past the lost rows. */
    size_t at = strlen(err);
    snprintf(err + at, errn - at, ": it cannot be replayed or extracted from (show lists "
             "what it holds)");
    pt_close(&s->db);
    return false;
  }
  if (!pt_load(&s->db, s->id, &s->calls, err, errn)) {
    pt_close(&s->db);
    return false;
  }
  if (!check_calls(s, err, errn)) {
    pt_calls_free(&s->calls);
    pt_close(&s->db);
    return false;
  }
  pthread_mutex_init(&s->db_lock, NULL);
  load_plugins(s);
  scan_calls(s);
  find_undefined_reads(s);
  find_device_names(s);
  return true;
}

void rp_session_close(rp_session *s)
{
  rp_prefetch_stop(s);
  free(s->undefined_read);
  s->undefined_read = NULL;
  free(s->device_platforms);
  s->device_platforms = NULL;
  s->ndevice_platforms = 0;
  pt_calls_free(&s->calls);
  pt_close(&s->db);
  pthread_mutex_destroy(&s->db_lock);
}

const pt_call *rp_call_by_seq(const rp_session *s, int64_t seq)
{
  return pt_call_by_seq(&s->calls, seq);
}

bool rp_plugin_replayed(const rp_session *s, uint32_t idx)
{
  if (idx >= RP_MAX_PLUGINS)
    return false;
  return s->plugins[idx].had_platforms || !s->plugins[idx].probed;
}

/* ---- Payloads ----------------------------------------------------------------- */

/* Why pt_data found nothing usable. */
static rp_data_status probe_row(rp_session *s, const pt_call *c, unsigned position,
                                const char *role, unsigned idx)
{
  switch (pt_data_row(&s->db, s->id, c->seq, position, role, idx)) {
  case PT_ROW_BLOB_GONE: return RP_DATA_MISSING_BLOB;
  case PT_ROW_PARTIAL: return RP_DATA_PARTIAL;
  default: return RP_DATA_ABSENT;
  }
}

unsigned char *rp_payload(rp_session *s, const pt_call *c, unsigned position, const char *role,
                          unsigned idx, size_t *size, rp_data_status *status)
{
  size_t full = 0;
  unsigned char *p = s->prefetch ? rp_prefetch_take(s, c, position, role, idx, size) : NULL;
  if (p) {
    *status = RP_DATA_OK;
    return p;
  }
  pthread_mutex_lock(&s->db_lock);
  p = pt_data(&s->db, s->id, c, position, role, idx, size, &full);
  pthread_mutex_unlock(&s->db_lock);
  if (p && *size >= full) {
    *status = RP_DATA_OK;
    return p;
  }
  if (p) {
    free(p);
    *status = RP_DATA_PARTIAL;
  } else {
    pthread_mutex_lock(&s->db_lock);
    *status = probe_row(s, c, position, role, idx);
    pthread_mutex_unlock(&s->db_lock);
  }
  *size = 0;
  return NULL;
}

unsigned char *rp_payload_kept(rp_session *s, const pt_call *c, unsigned position,
                               const char *role, unsigned idx, size_t *size, size_t *full)
{
  pthread_mutex_lock(&s->db_lock);
  unsigned char *p = pt_data(&s->db, s->id, c, position, role, idx, size, full);
  pthread_mutex_unlock(&s->db_lock);
  if (p && !*size) {
    free(p);
    p = NULL;
  }
  return p;
}

void rp_payload_problem(const rp_session *s, const pt_call *c, unsigned position,
                        const char *role, rp_data_status st, char *err, size_t errn)
{
  const pi_api_desc *api = rp_api(c);
  const char *fn = api ? api->name : "?";
  const char *param = api && position < api->nparams ? api->params[position].name : "?";
  static const char *const why[] = {
      [RP_DATA_OK] = "is fine",
      [RP_DATA_ABSENT] = "was not recorded (the session was recorded with "
                         "SYCL_PI_RECORD_DATA=none or filtered)",
      [RP_DATA_PARTIAL] = "was recorded only in part (SYCL_PI_RECORD_DATA=meta or "
                          "SYCL_PI_RECORD_DATA_CAP; its data stopped on a full disk; or its "
                          "process ended without a word before it was stored, on a disk too "
                          "full to keep it beside the session: pitrace sessions says which)",
      [RP_DATA_MISSING_BLOB] = "is missing from the file (its blob is gone: the database is "
                               "damaged)"};
  snprintf(err, errn, "%s: seq %lld %s: the %s data of parameter %s %s", s->db.path,
           (long long)c->seq, fn, role, param, why[st]);
}

int64_t rp_captured_seq(rp_session *s, const pt_call *c, unsigned position)
{
  pthread_mutex_lock(&s->db_lock);
  int64_t out = pt_captured_seq(&s->db, s->id, c->seq, position);
  pthread_mutex_unlock(&s->db_lock);
  return out;
}

bool rp_push(void *vec, size_t *n, size_t *cap, size_t elem, const void *item)
{
  void **v = vec;
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 16;
    void *nv = realloc(*v, nc * elem);
    if (!nv)
      return false;
    *v = nv;
    *cap = nc;
  }
  memcpy((char *)*v + *n * elem, item, elem);
  (*n)++;
  return true;
}

/* ---- Recorded argument values ---------------------------------------------------- */

int rp_param(const pi_api_desc *api, const char *name)
{
  for (unsigned i = 0; i < api->nparams; i++)
    if (strcmp(api->params[i].name, name) == 0)
      return (int)i;
  return -1;
}


int64_t rp_arg_int(const pt_call *c, unsigned i, int64_t def)
{
  return pt_json_int(pt_json_at(c->args, i), def);
}

/* The info parameter of every function, found once. */
static int8_t info_of[PI_API_COUNT];
static pthread_once_t params_once = PTHREAD_ONCE_INIT;

static void index_params(void)
{
  for (uint32_t id = 0; id < PI_API_COUNT; id++) {
    info_of[id] = -1;
    for (unsigned i = pi_api_table[id].nparams; i-- > 0;)
      if (pi_api_table[id].params[i].kind == PI_PK_INFO)
        info_of[id] = (int8_t)i;
  }
}

int rp_info_param(const pi_api_desc *api)
{
  pthread_once(&params_once, index_params);
  return info_of[api->id];
}

bool rp_call_blocking(const pi_api_desc *api, const pt_call *c)
{
  return api->blocking < 0 || rp_arg_int(c, (unsigned)api->blocking, 1) != 0;
}

size_t rp_info_ids(const pt_call *c, unsigned i, uint64_t *ids, size_t max)
{
  const pt_json *j = pt_json_at(c->args, i);
  const char *text = j && j->type == PJ_STRING ? j->u.s : NULL;
  size_t n = 0;
  for (const char *p = text ? strchr(text, '#') : NULL; p && n < max; p = strchr(p + 1, '#'))
    if (isdigit((unsigned char)p[1]))
      ids[n++] = strtoull(p + 1, NULL, 10);
  return n;
}

