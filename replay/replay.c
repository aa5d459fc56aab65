/*
 * replay.c: `pitrace replay SESSION.db`: re-issues every recorded call on a
 * real device through a real plugin, without the application, and checks
 * each against the recording (docs/replay.md). Exit status: 0 matched, 1
 * diverged (the first divergence is printed), 2 could not replay.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pirt.h"
#include "pitrace_cli.h"
#include "pitrace_replay.h"
#include "rpx.h"

static const char usage[] =
    "usage: pitrace replay SESSION.db [--session N] [--backend B | --device FILTER]\n"
    "                      [--to SEQ] [--tolerance X [--f64]] [--stats]\n\n"
    "Re-issues every recorded call on a device, without the application, and\n"
    "checks results and read-back data against the recording.\n\n"
    "  --session N      the session to replay (default: the last one)\n"
    "  --backend B      replay on a device of backend B (opencl, level_zero, cuda)\n"
    "  --device FILTER  replay on the device FILTER selects (SYCL_DEVICE_FILTER\n"
    "                   syntax, e.g. opencl:cpu:0); default: the recorded device\n"
    "  --to SEQ         stop after call SEQ\n"
    "  --tolerance X    compare read-back data as 32-bit floats (64-bit with --f64):\n"
    "                   equal when |a - b| <= X * max(1, |a|, |b|)\n"
    "  --stats          print the call count and rate on stderr\n\n"
    "Exit status: 0 matched, 1 diverged, 2 could not replay.\n";

/* Parses the options; -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, rp_opts *o)
{
  *o = (rp_opts){.session = -1, .to_seq = -1, .tolerance = -1};
  const pt_opt opts[] = {{"--session", PT_OPT_INT, &o->session},
                         {"--backend", PT_OPT_STR, &o->backend},
                         {"--device", PT_OPT_STR, &o->device},
                         {"--plugin", PT_OPT_STR, &o->plugin}, /* benchmarks */
                         {"--to", PT_OPT_INT, &o->to_seq},
                         {"--tolerance", PT_OPT_REAL, &o->tolerance},
                         {"--f64", PT_OPT_FLAG, &o->f64},
                         {"--stats", PT_OPT_FLAG, &o->stats},
                         {NULL, PT_OPT_FLAG, NULL}};
  pt_args a;
  int rc = pt_parse(argc, argv, usage, opts, 1, 1, &a);
  if (rc)
    return rc == 1 ? 0 : 2;
  o->path = a.pos[0];
  if (o->f64 && o->tolerance < 0) {
    pt_verb_error("replay", "--f64 says how --tolerance compares: give --tolerance X with it");
    return 2;
  }
  if (o->backend && strcmp(o->backend, "opencl") != 0 &&
      strcmp(o->backend, "level_zero") != 0 && strcmp(o->backend, "cuda") != 0) {
    pt_verb_error("replay", "bad argument '%s': --backend takes opencl, level_zero or cuda "
                            "(pitrace replay --help)", o->backend);
    return 2;
  }
  /* An empty filter selects nothing, and was taken as none: the replay
   * went to whatever device came first. */
  if (o->device && !o->device[0]) {
    pt_verb_error("replay", "--device is empty: give a filter such as opencl:cpu:0, or leave "
                            "--device out for the recorded device (pitrace replay --help)");
    return 2;
  }
  if (o->backend && o->device) {
    pt_verb_error("replay", "give --backend or --device, not both (pitrace replay --help)");
    return 2;
  }
  return -1;
}

/* ---- The device ------------------------------------------------------------------- */

/* `--device FILTER` "name", ... of every device, for a message: the
 * filter that selects it (backend:type:num, num among that backend's
 * devices of that type). */
static void list_devices(char *out, size_t n)
{
  static const char *const types[] = {"*", "cpu", "gpu", "acc", "*"};
  size_t count = 0, len = 0;
  out[0] = 0;
  pirt_device_count(&count);
  for (size_t i = 0; i < count && len < n; i++) {
    pirt_device *d;
    pirt_device_info info;
    if (pirt_device_get(i, &d) == PI_SUCCESS && pirt_device_get_info(d, &info) == PI_SUCCESS)
      len += (size_t)snprintf(out + len, n - len, "%s--device %s:%s:%u \"%s\"", i ? ", " : "",
                              info.backend,
                              (unsigned)info.type < sizeof types / sizeof *types
                                  ? types[info.type]
                                  : "*",
                              info.index, info.name);
  }
  if (!count)
    snprintf(out, n, "none");
}

/* The recorded device: same backend, same name. */
static pirt_device *recorded_device(const rp_session *s, const char *backend, char *err,
                                    size_t errn)
{
  size_t count = 0;
  pirt_device_count(&count);
  for (size_t i = 0; i < count; i++) {
    pirt_device *d;
    pirt_device_info info;
    if (pirt_device_get(i, &d) == PI_SUCCESS && pirt_device_get_info(d, &info) == PI_SUCCESS &&
        strcmp(info.backend, backend) == 0 &&
        (!s->device_name[0] || strcmp(info.name, s->device_name) == 0))
      return d;
  }
  char avail[1024];
  list_devices(avail, sizeof avail);
  snprintf(err, errn, "the recorded device \"%s\" (%s) is not available here; choose one "
           "with --backend or --device (here: %s)",
           s->device_name[0] ? s->device_name : "?", backend, avail);
  return NULL;
}

/* Whether a recorded call is replayed: its plugin's, and not a teardown. */
static bool replayed(const rp_session *s, const pt_call *c)
{
  return rp_plugin_replayed(s, c->plugin) && c->api != PI_API_piTearDown;
}

/* An application that made contexts on several devices (pyopencl on two
 * platforms, a multi-GPU program) replays them all on the one chosen: said
 * once, naming the recorded devices (a replay's differences may be that). */
static void note_devices_used(rp_engine *e, const char *dev)
{
  const rp_session *s = e->s;
  int64_t seen[4];
  size_t n = 0;
  bool more = false; /* past the 4 named */
  for (size_t i = 0; i < s->calls.n; i++) {
    const pt_call *c = &s->calls.v[i];
    const pt_json *devs = c->api == PI_API_piContextCreate && c->result == PI_SUCCESS &&
                                  replayed(s, c) ? pt_json_at(c->args, 2) : NULL;
    for (uint32_t k = 0; devs && devs->type == PJ_ARRAY && k < devs->n; k++) {
      int64_t id = pt_json_int(devs->u.items[k], 0);
      bool known = false;
      for (size_t j = 0; j < n && !known; j++)
        known = seen[j] == id;
      if (!known && n < sizeof seen / sizeof *seen)
        seen[n++] = id;
      else if (!known)
        more = true;
    }
  }
  if (n < 2)
    return;
  char list[1400] = "";
  size_t at = 0;
  for (size_t j = 0; j < n && at < sizeof list; j++) {
    const rp_device_platform *d = rp_device_of(s, seen[j]);
    at += (size_t)snprintf(list + at, sizeof list - at, "%sdevice#%lld \"%s\" (%s)",
                           j ? ", " : "", (long long)seen[j], d && d->name[0] ? d->name : "?",
                           d && d->platform[0] ? d->platform : "?");
  }
  rp_note(e, 0, "the application made contexts on %s%zu devices (%s%s); replay runs them all "
          "on %s", more ? "more than " : "", n, list, more ? ", ..." : "", dev);
}

static bool choose_device(rp_engine *e, const rp_opts *o, char *dev, size_t devn, char *err,
                          size_t errn)
{
  const rp_session *s = e->s;
  const char *rec_backend = s->plugins[s->device_plugin].backend;
  pirt_device *d = NULL;
  const char *filter = o->device ? o->device : o->backend;
  if (filter) {
    if (pirt_device_select(filter, &d) != PI_SUCCESS)
      snprintf(err, errn, "no device for '%s': %s", filter, pirt_error_message());
  } else {
    d = recorded_device(s, rec_backend, err, errn);
  }
  const struct pi_function_table *t;
  pi_platform plat;
  pi_device pd;
  pirt_device_info info;
  if (!d)
    return false; /* err says why */
  if (pirt_device_pi(d, &t, &plat, &pd) != PI_SUCCESS ||
      pirt_device_get_info(d, &info) != PI_SUCCESS) {
    snprintf(err, errn, "the device to replay on cannot be used: %s", pirt_error_message());
    return false;
  }
  e->t = t;
  e->live_platform = (uint64_t)(uintptr_t)plat;
  e->live_device = (uint64_t)(uintptr_t)pd;
  snprintf(dev, devn, "\"%s\" (%s)", info.name, info.backend);
  /* A session that ended inside its first calls may name no device: only
   * a backend can differ then. */
  if (strcmp(info.backend, rec_backend) != 0 ||
      (s->device_name[0] && strcmp(info.name, s->device_name) != 0)) {
    e->other_device = true;
    if (s->device_name[0])
      rp_note(e, 0, "recorded on \"%s\" (%s), replayed on %s", s->device_name, rec_backend,
              dev);
    else
      rp_note(e, 0, "recorded on a device of %s the session does not name, replayed on %s",
              rec_backend, dev);
  }
  /* (the runtime's answer: a query of replay's own would be in a recorded
   * replay's session) */
  if (info.platform_name)
    snprintf(e->live_platform_name, sizeof e->live_platform_name, "%s", info.platform_name);
  note_devices_used(e, dev);
  return true;
}

/* --plugin PATH: the plugin's own table, no runtime, no discovery (for
 * benchmarks on a minimal plugin). */
static void *load_plugin(rp_engine *e, const char *path, pi_plugin *p, char *err, size_t errn)
{
  *p = (pi_plugin){.PiVersion = _PI_H_VERSION_STRING};
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    snprintf(err, errn, "--plugin %s: %s", path, dlerror());
    return NULL;
  }
  pi_plugin_init_fn init = (pi_plugin_init_fn)(uintptr_t)dlsym(dl, "piPluginInit");
  if (!init || init(p) != PI_SUCCESS) {
    snprintf(err, errn, "--plugin %s: %s", path,
             init ? "its piPluginInit failed" : "it exports no piPluginInit");
    dlclose(dl);
    return NULL;
  }
  e->t = &p->PiFunctionTable;
  e->stand_ins = true;
  return dl;
}

/* ---- The calls ------------------------------------------------------------------------- */

/* Of the replayed calls from index `cut` on (those the cut leaves out),
 * the one that began first, and the one that began first on any other
 * thread: a thread's calls begin in order, so these are the first left-out
 * calls of the two threads whose left-out calls began earliest. */
static void earliest_cut(const rp_session *s, size_t cut, const pt_call **first,
                         const pt_call **other)
{
  *first = *other = NULL;
  for (size_t i = cut; i < s->calls.n; i++) {
    const pt_call *c = &s->calls.v[i];
    if (!replayed(s, c))
      continue;
    if (!*first || c->start_ns < (*first)->start_ns) {
      if (*first && (*first)->thread != c->thread)
        *other = *first;
      *first = c;
    } else if (c->thread != (*first)->thread && (!*other || c->start_ns < (*other)->start_ns)) {
      *other = c;
    }
  }
}

/* A cut (--to, a call that never returned) leaves out calls of the
 * session's end; a call before the cut that returned in the recording
 * only after another thread's left-out call began may have waited for it
 * (a piEventsWait on a user event the other thread's piEventSetStatus
 * completes): replayed without it, it waited forever. Such a call is left
 * out too, with a note. The thread's later calls began after it returned,
 * so after the cut: none is kept alone. */
static size_t drop_waiting_on_cut(rp_engine *e, const pt_call **v, size_t n, size_t cut,
                                  const char *why)
{
  const pt_call *first, *other;
  earliest_cut(e->s, cut, &first, &other);
  size_t kept = 0;
  for (size_t k = 0; k < n; k++) {
    const pt_call *c = v[k];
    /* The earliest left-out call of another thread than c's. */
    const pt_call *x = first && first->thread != c->thread ? first : other;
    const pt_call *by = x && c->start_ns + c->dur_ns > x->start_ns ? x : NULL;
    if (!by) {
      v[kept++] = c;
      continue;
    }
    const pi_api_desc *api = rp_api(c), *bapi = rp_api(by);
    rp_note(e, c->seq, "%s (thread %u) returned in the recording only after seq %lld %s "
            "(thread %u) began, which the replay leaves out (%s): it may have waited for it, so "
            "it is left out too", api ? api->name : "?", c->thread, (long long)by->seq,
            bapi ? bapi->name : "?", by->thread, why);
  }
  return kept;
}

/* The calls to replay: the replayed plugins' (not their teardown: the
 * runtime tears down at exit), up to --to, and not past one that never
 * returned. */
static const pt_call **replay_list(rp_engine *e, const rp_opts *o, size_t *n)
{
  const rp_session *s = e->s;
  const pt_call **v = malloc((s->calls.n + 1) * sizeof *v);
  size_t i = 0;
  char why[64] = "";
  *n = 0;
  for (; v && i < s->calls.n; i++) {
    const pt_call *c = &s->calls.v[i];
    if (o->to_seq >= 0 && c->seq > o->to_seq) {
      snprintf(why, sizeof why, "past --to %lld", (long long)o->to_seq);
      break;
    }
    if (!replayed(s, c))
      continue;
    if (!c->returned) {
      snprintf(why, sizeof why, "it stops before seq %lld, which never returned",
               (long long)c->seq);
      const pi_api_desc *api = rp_api(c);
      rp_note(e, c->seq, "%s never returned in the recording (the process crashed or was "
              "killed in it): replay stops before it", api ? api->name : "?");
      break;
    }
    v[(*n)++] = c;
  }
  if (v && i < s->calls.n)
    *n = drop_waiting_on_cut(e, v, *n, i, why);
  return v;
}

/* The function that releases a handle of `kind` (the handles table's
 * name), from the API description: the one whose releases= parameter is of
 * that kind (a USM pointer for "usm"). */
static const pi_api_desc *releaser(const char *kind)
{
  for (unsigned a = 0; a < PI_API_COUNT; a++) {
    const pi_api_desc *api = &pi_api_table[a];
    if (!api->name || api->releases < 0)
      continue;
    const pi_param_desc *p = &api->params[api->releases];
    uint8_t obj = p->kind == PI_PK_USMPTR ? PI_OBJ_USM : p->obj;
    if (strcmp(pi_object_kind_name(obj), kind) == 0)
      return api;
  }
  return NULL;
}

/* Live handles for the releasing call of `id`: the handle itself, and each
 * other handle parameter (a USM pointer's context) as the creating call
 * was given it. False when one is not live. */
static bool release_args(rp_engine *e, const pi_api_desc *rel, uint64_t id,
                         const pt_call *creator, uint64_t *argv)
{
  for (unsigned i = 0; i < rel->nparams; i++) {
    const pi_param_desc *p = &rel->params[i];
    argv[i] = 0;
    if ((int)i == rel->releases) {
      argv[i] = rp_ids_get(e, id);
    } else if (p->kind == PI_PK_HANDLE && creator) {
      const pi_api_desc *c = rp_api(creator);
      for (unsigned k = 0; c && k < c->nparams && !argv[i]; k++)
        if (c->params[k].dir == PI_DIR_IN && c->params[k].kind == PI_PK_HANDLE &&
            c->params[k].obj == p->obj)
          argv[i] = rp_ids_get(e, (uint64_t)pt_json_int(creator->args->u.items[k], 0));
    }
    if (!argv[i])
      return false;
  }
  return true;
}

/* Releases what replay created and the recording released only later (or
 * never): a replay stopped early, or a cut-down session, leaves nothing
 * behind in the plugin. Newest first: kernels before programs, USM and
 * buffers before queues and contexts. A handle whose recorded release ran
 * (another thread may have gone past the stop) is not released again, nor
 * are discovery's platforms and devices (the chosen device's own). */
static void release_live(rp_engine *e, int64_t last_seq)
{
  size_t n = 0;
  pt_live_handle *live = pt_live_handles(&e->s->db, e->s->id, last_seq, &n);
  for (size_t i = 0; i < n; i++) {
    const pt_live_handle *h = &live[i];
    const pi_api_desc *rel = releaser(h->kind);
    const pt_call *creator = rp_call_by_seq(e->s, h->created_seq);
    const pt_call *released = h->released_seq < 0 ? NULL : rp_call_by_seq(e->s, h->released_seq);
    uint64_t argv[PI_MAX_PARAMS];
    if (!rel || (creator && rp_discovery_api(creator->api)) ||
        (released && e->ran && e->ran[released - e->s->calls.v]) ||
        !release_args(e, rel, (uint64_t)h->id, creator, argv))
      continue;
    rp_own_call(e, "pitrace replay's clean-up: releases %s#%lld (made at recorded seq %lld), "
                "which the recording %s", h->kind, (long long)h->id, (long long)h->created_seq,
                released ? "released only after where the replay stopped" : "never released");
    pi_api_invoke(e->t, rel->id, argv);
  }
  free(live);
}

/* The plugin table to replay through: --plugin's, or a device's. */
static bool open_target(rp_engine *e, const rp_opts *o, pi_plugin *plugin, void **dl, char *dev,
                        size_t devn)
{
  char err[1536] = "";
  bool ok = o->plugin ? (*dl = load_plugin(e, o->plugin, plugin, err, sizeof err)) != NULL
                      : choose_device(e, o, dev, devn, err, sizeof err);
  if (!ok)
    fprintf(stderr, "pitrace replay: %s\n", err);
  else if (o->plugin)
    snprintf(dev, devn, "plugin %s", o->plugin);
  return ok;
}

static int replay_session(rp_session *s, const rp_opts *o, uint64_t load_ns)
{
  rp_engine e = {.s = s, .o = o, .stop_seq = INT64_MAX, .progress_t0 = o->t0, .tty = isatty(2)};
  pthread_mutex_init(&e.lock, NULL);
  char dev[600] = "";
  pi_plugin plugin;
  void *dl = NULL;
  size_t n;
  const pt_call **calls = NULL;
  if (!open_target(&e, o, &plugin, &dl, dev, sizeof dev) ||
      !(calls = replay_list(&e, o, &n))) {
    rp_engine_free(&e);
    return 2;
  }
  e.ran = calloc(s->calls.n ? s->calls.n : 1, 1);
  const char *recorded = getenv("SYCL_PI_RECORD");
  e.fills = !e.stand_ins && !(recorded && *recorded);
  if (!o->plugin) /* through the runtime: its decisions go on with the calls */
    e.rec_notes = pt_load_notes(&s->db, s->id, &e.nrec_notes);
  uint64_t t0 = rp_now_ns();
  if (rp_run(&e, calls, n) == RP_OK)
    rp_check_pending(&e, -1);
  uint64_t t1 = rp_now_ns();
  if (!e.stand_ins && !e.abandoned)
    release_live(&e, e.status != RP_OK ? e.stop_seq : n ? calls[n - 1]->seq : 0);
  rp_progress(&e, true);
  int code = rp_finish(&e, dev);
  if (o->stats)
    fprintf(stderr, "pitrace replay: %llu calls replayed in %.3f ms (%.0f calls/s); loading "
            "the session took %.3f ms\n", (unsigned long long)e.done, (double)(t1 - t0) / 1e6,
            (double)e.done * 1e9 / (double)(t1 - t0 ? t1 - t0 : 1), (double)load_ns / 1e6);
  if (e.abandoned) {
    fflush(NULL); /* a thread is stuck in the plugin: exit without waiting for it */
    _exit(code);
  }
  free(calls);
  rp_engine_free(&e);
  if (dl) {
    uint64_t none[1] = {0};
    pi_api_invoke(&plugin.PiFunctionTable, PI_API_piTearDown, none);
    dlclose(dl);
  }
  return code;
}

int pt_replay(int argc, char **argv)
{
  rp_opts o;
  int r = parse_args(argc, argv, &o);
  if (r >= 0)
    return r;
  char err[1536];
  rp_session s;
  uint64_t t0 = o.t0 = rp_now_ns(); /* the progress line counts loading too */
  if (!rp_session_open(&s, o.path, o.session, err, sizeof err)) {
    fprintf(stderr, "pitrace replay: %s\n", err);
    return 2;
  }
  rp_prefetch_start(&s, (size_t)512 << 20); /* optional: without it, payloads come in turn */
  int code = replay_session(&s, &o, rp_now_ns() - t0);
  rp_session_close(&s);
  return code;
}
