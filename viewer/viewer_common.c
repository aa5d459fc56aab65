/*
 * viewer_common.c: opening sessions, notes, how a session ended,
 * its backend and device, and the small text helpers of the viewer verbs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pitrace_cli.h"
#include "viewer_common.h"

/* ---- Sessions ---------------------------------------------------------------------- */

const pt_note *vw_notes_of(const vw_session *s, int64_t seq, size_t *n)
{
  return pt_notes_at(s->notes, s->nnotes, seq, n);
}

/* The session's row; false after an error message. */
static bool find_session(const char *verb, vw_session *s, int64_t id)
{
  char err[1024];
  size_t n = 0;
  pt_session_info *all = pt_sessions(&s->db, &n, err, sizeof err);
  if (!all) {
    pt_verb_error(verb, "%s", err);
    return false;
  }
  char ids[256] = "";
  bool found = false;
  for (size_t i = 0; i < n; i++) {
    if (all[i].id == id) {
      s->info = all[i];
      found = true;
    }
    size_t l = strlen(ids);
    snprintf(ids + l, sizeof ids - l, "%s%lld", i ? ", " : "", (long long)all[i].id);
  }
  free(all);
  if (!found)
    pt_verb_error(verb, "%s has no session %lld (%s%s)", s->path, (long long)id,
                  n ? "it has " : "it has none", ids);
  return found;
}

/* The threads that made calls, as the session lists them. */
static void count_threads(vw_session *s)
{
  size_t n = 0;
  free(pt_threads(&s->db, s->id, &n));
  s->nthreads = (uint32_t)n;
}

/* The start of the calls whose seq devtimes[0..n) name (sorted by seq), in
 * start[]: from one pass of a cursor. */
static void call_starts(vw_session *s, const vw_devtime *d, size_t n, int64_t *start)
{
  for (size_t i = 0; i < n; i++)
    start[i] = INT64_MIN;
  char err[256];
  pt_cursor *cur = pt_cursor_open(&s->db, s->id, err, sizeof err);
  const pt_call *c;
  size_t i = 0;
  while (cur && i < n && (c = pt_cursor_next(cur, err, sizeof err))) {
    while (i < n && d[i].seq < c->seq)
      i++;
    if (i < n && d[i].seq == c->seq)
      start[i++] = c->start_ns;
  }
  pt_cursor_close(cur);
}

/* The session's device times (none in a file from before them). A device
 * whose clock was not mapped is placed by the smallest offset that starts
 * no command before its enqueue call began. */
static void load_devtimes(vw_session *s)
{
  size_t n = 0;
  pt_device_time *raw = pt_device_times(&s->db, s->id, &n);
  s->devtimes = n ? calloc(n, sizeof *s->devtimes) : NULL;
  int64_t *start = n ? malloc(n * sizeof *start) : NULL;
  if (!s->devtimes || !start) {
    free(s->devtimes);
    s->devtimes = NULL;
    free(start);
    free(raw);
    return;
  }
  s->ndevtimes = n;
  bool estimate = false;
  for (size_t i = 0; i < n; i++) {
    vw_devtime *d = &s->devtimes[i];
    d->seq = raw[i].seq;
    d->api = raw[i].api;
    d->queue = raw[i].queue;
    d->device = raw[i].device;
    d->dur_ns = raw[i].device_end_ns - raw[i].device_start_ns;
    d->start_ns = raw[i].mapped ? raw[i].start_ns : INT64_MIN; /* placed below */
    d->end_ns = raw[i].mapped ? raw[i].end_ns : d->dur_ns;
    estimate |= !raw[i].mapped;
  }
  if (estimate)
    call_starts(s, s->devtimes, n, start);
  for (size_t i = 0; i < n; i++) {
    if (s->devtimes[i].start_ns != INT64_MIN)
      continue;
    s->devtimes_estimated = true;
    int64_t dev = s->devtimes[i].device, offset = INT64_MIN;
    for (size_t j = i; j < n; j++)
      if (s->devtimes[j].device == dev && s->devtimes[j].start_ns == INT64_MIN &&
          start[j] != INT64_MIN && start[j] - raw[j].device_start_ns > offset)
        offset = start[j] - raw[j].device_start_ns;
    for (size_t j = i; j < n; j++)
      if (s->devtimes[j].device == dev && s->devtimes[j].start_ns == INT64_MIN) {
        vw_devtime *d = &s->devtimes[j];
        d->start_ns = offset == INT64_MIN ? 0 : raw[j].device_start_ns + offset;
        d->end_ns = d->start_ns + d->dur_ns;
      }
  }
  free(raw);
  free(start);
}

static int seq_vs_devtime(const void *key, const void *elem)
{
  int64_t k = *(const int64_t *)key, s = ((const vw_devtime *)elem)->seq;
  return (k > s) - (k < s);
}

const vw_devtime *vw_devtime_of(const vw_session *s, int64_t seq)
{
  return s->ndevtimes ? bsearch(&seq, s->devtimes, s->ndevtimes, sizeof *s->devtimes,
                                seq_vs_devtime)
                      : NULL;
}

const char *vw_devtime_clock_text(const vw_session *s)
{
  if (!s->ndevtimes)
    return "device times: none recorded (record with pitrace record --profile or "
           "SYCL_PI_RECORD_PROFILE=1)";
  if (s->devtimes_estimated)
    return "device times: as the device measured them; its clock could not be mapped to "
           "the session's (the plugin has no device and host timers), so on the timeline "
           "commands are placed at the earliest time their enqueue calls allow";
  return "device times: as the device measured them, on the session's clock "
         "(piGetDeviceAndHostTimer)";
}

bool vw_session_open(const char *verb, const char *path, int64_t id, unsigned what,
                     vw_session *s)
{
  memset(s, 0, sizeof *s);
  s->path = path;
  s->verb = verb;
  char err[1024];
  if (!pt_open(path, false, &s->db, err, sizeof err)) {
    pt_verb_error(verb, "%s", err);
    return false;
  }
  if ((what & VW_SNAPSHOT) && !(s->snapshot = pt_snapshot_begin(&s->db, err, sizeof err))) {
    pt_verb_error(verb, "%s", err);
    pt_close(&s->db);
    return false;
  }
  s->id = id >= 0 ? id : pt_default_session(&s->db);
  if (s->id < 0) {
    pt_verb_error(verb, "%s holds no session", path);
    pt_close(&s->db);
    return false;
  }
  if (!find_session(verb, s, s->id)) {
    pt_close(&s->db);
    return false;
  }
  pt_incomplete_reason(&s->db, s->id, s->incomplete_reason, sizeof s->incomplete_reason);
  s->damaged = pt_session_damaged(&s->db, s->id, err, sizeof err);
  if (s->damaged && (what & VW_WHOLE)) {
    pt_verb_error(verb, "%s: cannot %s it", err, verb);
    vw_session_close(s);
    return false;
  }
  if (s->damaged)
    pt_verb_error(verb, "%s; what it holds follows", err);
  count_threads(s);
  if (what & VW_STREAM)
    load_devtimes(s);
  if (what & VW_NOTES)
    s->notes = pt_load_notes(&s->db, s->id, &s->nnotes);
  return true;
}

void vw_session_close(vw_session *s)
{
  pt_free_notes(s->notes, s->nnotes);
  free(s->devtimes);
  s->devtimes = NULL;
  s->ndevtimes = 0;
  s->notes = NULL;
  s->nnotes = 0;
  if (s->snapshot && !s->rested)
    pt_snapshot_end(&s->db);
  s->snapshot = false;
  if (!s->rested)
    pt_close(&s->db);
  s->rested = true;
}

/* The connection is a cache of the session's, kept or not: the functions
 * below change it behind a const session. */
pt_db *vw_db(const vw_session *cs)
{
  vw_session *s = (vw_session *)(uintptr_t)cs;
  if (s->rested) {
    char err[1024];
    if (!pt_open(s->path, false, &s->db, err, sizeof err)) {
      pt_verb_error(s->verb ? s->verb : "", "%s", err);
      exit(2);
    }
    s->rested = false;
  }
  return &s->db;
}

void vw_session_rest(const vw_session *cs)
{
  vw_session *s = (vw_session *)(uintptr_t)cs;
  if (s->restable && !s->rested && !s->holds) {
    pt_close(&s->db);
    s->rested = true;
  }
}

void vw_session_hold(const vw_session *cs)
{
  ((vw_session *)(uintptr_t)cs)->holds++;
}

void vw_session_release(const vw_session *cs)
{
  vw_session *s = (vw_session *)(uintptr_t)cs;
  if (s->holds && --s->holds == 0)
    vw_session_rest(s);
}

bool vw_iter_open(const char *verb, const vw_session *s, vw_iter *it)
{
  memset(it, 0, sizeof *it);
  it->s = s;
  it->cur = pt_cursor_open(vw_db(s), s->id, it->err, sizeof it->err);
  if (!it->cur)
    pt_verb_error(verb, "%s", it->err);
  else
    vw_session_hold(s);
  return it->cur != NULL;
}

const pt_call *vw_iter_next(vw_iter *it)
{
  if (!it->cur)
    return NULL;
  return pt_cursor_next(it->cur, it->err, sizeof it->err);
}

bool vw_iter_close(const char *verb, vw_iter *it)
{
  if (it->cur) {
    pt_cursor_close(it->cur); /* its statements before the connection they are on */
    vw_session_release(it->s);
  }
  it->cur = NULL;
  if (it->err[0])
    pt_verb_error(verb, "%s", it->err);
  return !it->err[0] && !it->s->damaged; /* damage said when opened */
}

/* ---- Several sessions ------------------------------------------------------------- */

bool vw_is_dir(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_start(const void *a, const void *b)
{
  const vw_session *x = a, *y = b;
  if (x->info.start_unix_ns != y->info.start_unix_ns)
    return x->info.start_unix_ns < y->info.start_unix_ns ? -1 : 1;
  int c = strcmp(x->path, y->path);
  return c ? c : (x->id > y->id) - (x->id < y->id);
}

/* Room for one more session in the set; false after a one-line error. */
static bool set_room(const char *verb, vw_set *set)
{
  if (set->n < set->cap)
    return true;
  if (set->n == VW_MAX_SESSIONS) {
    pt_verb_error(verb, "too many sessions: pitrace %s takes at most %d", verb, VW_MAX_SESSIONS);
    return false;
  }
  size_t cap = set->cap ? set->cap * 2 : 16;
  vw_session *s = realloc(set->s, cap * sizeof *s);
  if (s)
    set->s = s;
  int *g = s ? realloc(set->group, cap * sizeof *g) : NULL;
  if (g)
    set->group = g;
  int64_t *o = g ? realloc(set->offset_ns, cap * sizeof *o) : NULL;
  if (o)
    set->offset_ns = o;
  if (!o) {
    pt_verb_error(verb, "out of memory opening %zu sessions", set->n + 1);
    return false;
  }
  set->cap = cap;
  return true;
}

bool vw_set_open_file(const char *verb, vw_set *set, const char *path, int64_t id, unsigned what,
                      int group)
{
  if (!set_room(verb, set) || !vw_session_open(verb, path, id, what, &set->s[set->n]))
    return false;
  set->offset_ns[set->n] = 0;
  set->group[set->n++] = group;
  /* Past VW_AWAKE sessions, each keeps its connection only while read
   * (a CI job's directory: hundreds of processes). */
  if (set->n > VW_AWAKE)
    for (size_t i = set->n == VW_AWAKE + 1 ? 0 : set->n - 1; i < set->n; i++) {
      set->s[i].restable = true;
      vw_session_rest(&set->s[i]);
    }
  return true;
}

bool vw_list_dir(const char *verb, const char *dir, char ***names, size_t *nn)
{
  char err[1024];
  size_t max = 0;
  bool ok;
  *names = NULL;
  *nn = 0;
  do { /* as many as there are: listed again with room for them */
    for (size_t i = 0; i < *nn && i < max; i++)
      free((*names)[i]);
    max = *nn + 64;
    *nn = 0; /* none held until listed again */
    char **grown = max <= VW_MAX_SESSIONS ? realloc(*names, max * sizeof **names) : NULL;
    if (!grown) {
      snprintf(err, sizeof err, max <= VW_MAX_SESSIONS ? "out of memory listing %s"
                                                       : "%s holds too many session files",
               dir);
      ok = false;
      break;
    }
    *names = grown;
    ok = pt_session_files(dir, *names, max, nn, err, sizeof err);
  } while (ok && *nn > max);
  if (ok && !*nn) {
    snprintf(err, sizeof err, "%s holds no session files (*.db)", dir);
    ok = false;
  }
  if (!ok) {
    pt_verb_error(verb, "%s", err);
    for (size_t i = 0; i < *nn && i < max; i++)
      free((*names)[i]);
    free(*names);
    *names = NULL;
    *nn = 0;
  }
  return ok;
}

/* Opens every session of the file `path` (which outlives the set) into
 * the set; false after a one-line error. A file of a directory (in_dir)
 * that is no session it can read is skipped, said and counted. */
static bool open_every_session(const char *verb, vw_set *set, const char *path, unsigned what,
                               int group, bool in_dir)
{
  pt_db db;
  char err[1024];
  size_t ns = 0;
  pt_session_info *all = NULL;
  if (pt_open(path, false, &db, err, sizeof err)) {
    all = pt_sessions(&db, &ns, err, sizeof err);
    pt_close(&db);
  }
  if (!all) {
    if (in_dir)
      pt_skip_file(verb, err);
    else
      pt_verb_error(verb, "%s", err);
    return in_dir;
  }
  bool ok = true;
  for (size_t j = 0; ok && j < ns; j++)
    ok = vw_set_open_file(verb, set, path, all[j].id, what, group);
  free(all);
  return ok;
}

bool vw_set_open_dir(const char *verb, vw_set *set, const char *dir, unsigned what, int group)
{
  char **names;
  size_t nn = 0;
  unsigned skipped = pt_files_skipped();
  bool ok = vw_list_dir(verb, dir, &names, &nn);
  size_t first = set->n;
  if (ok && set->npaths + nn > set->cap_paths) {
    char **p = realloc(set->paths, (set->npaths + nn) * sizeof *p);
    if (p) {
      set->paths = p;
      set->cap_paths = set->npaths + nn;
    } else {
      pt_verb_error(verb, "out of memory listing %s", dir);
      ok = false;
    }
  }
  for (size_t i = 0; i < nn; i++) {
    if (!ok) {
      free(names[i]);
      continue;
    }
    set->paths[set->npaths++] = names[i]; /* the sessions point at them */
    ok = open_every_session(verb, set, names[i], what, group, true);
  }
  free(names);
  if (ok && nn && pt_files_skipped() - skipped == nn) {
    pt_verb_error(verb, "%s holds no session file it can read (%zu skipped)", dir, nn);
    ok = false;
  }
  if (ok)
    qsort(set->s + first, set->n - first, sizeof *set->s, cmp_start);
  return ok;
}

bool vw_set_open_paths(const char *verb, vw_set *set, const char *const *paths, size_t n,
                       unsigned what)
{
  struct stat st[PT_ARGS_MAX];
  if (n > PT_ARGS_MAX) {
    pt_verb_error(verb, "%zu files or directories: at most %d", n, PT_ARGS_MAX);
    return false;
  }
  bool there[PT_ARGS_MAX];
  for (size_t i = 0; i < n; i++) {
    there[i] = stat(paths[i], &st[i]) == 0; /* else pt_open says why, below */
    for (size_t j = 0; j < i && there[i]; j++)
      if (there[j] && st[j].st_dev == st[i].st_dev && st[j].st_ino == st[i].st_ino) {
        pt_verb_error(verb, "%s and %s are the same %s: its sessions would count twice",
                      paths[j], paths[i], S_ISDIR(st[i].st_mode) ? "directory" : "file");
        return false;
      }
  }
  size_t first = set->n, listed[PT_ARGS_MAX + 1];
  bool ok = true;
  for (size_t i = 0; ok && i < n; i++) {
    listed[i] = set->npaths;
    ok = there[i] && S_ISDIR(st[i].st_mode) ? vw_set_open_dir(verb, set, paths[i], what, 0)
                                            : open_every_session(verb, set, paths[i], what, 0, false);
  }
  listed[n] = set->npaths;
  /* A file named beside a directory that holds it (runs runs/x.db). */
  for (size_t i = 0; ok && i < n; i++)
    for (size_t j = 0; ok && !S_ISDIR(st[i].st_mode) && j < n; j++)
      for (size_t k = listed[j]; ok && k < listed[j + 1]; k++) {
        struct stat ls;
        if (stat(set->paths[k], &ls) == 0 && ls.st_dev == st[i].st_dev &&
            ls.st_ino == st[i].st_ino) {
          bool as = strcmp(paths[i], set->paths[k]) != 0; /* by another name there */
          pt_verb_error(verb, "%s is in the directory %s too%s%s%s: its sessions would count "
                        "twice", paths[i], paths[j], as ? " (as " : "", as ? set->paths[k] : "",
                        as ? ")" : "");
          ok = false;
        }
      }
  if (ok)
    qsort(set->s + first, set->n - first, sizeof *set->s, cmp_start);
  return ok;
}

void vw_set_place(vw_set *set)
{
  for (size_t i = 0; i < set->n; i++) {
    int64_t first = set->s[i].info.start_unix_ns;
    for (size_t j = 0; j < set->n; j++)
      if (set->group[j] == set->group[i] && set->s[j].info.start_unix_ns < first)
        first = set->s[j].info.start_unix_ns;
    set->offset_ns[i] = set->s[i].info.start_unix_ns - first;
  }
}

void vw_set_close(vw_set *set)
{
  while (set->n)
    vw_session_close(&set->s[--set->n]);
  while (set->npaths)
    free(set->paths[--set->npaths]);
  free(set->s);
  free(set->group);
  free(set->offset_ns);
  free(set->paths);
  memset(set, 0, sizeof *set);
}

void vw_ended_text(const pt_session_info *i, const char *incomplete_reason, char *out, size_t n)
{
  /* The exit status pitrace record saw (sessions.exit_status), where the
   * end does not say it already (a signal's, 128 + N): "teardown" alone
   * for a process that tore down and exited with 1 said it succeeded. */
  char st[40] = "";
  if (i->has_exit_status && strcmp(i->ended, "signal") != 0 &&
      !(strcmp(i->ended, "killed") == 0 && i->signal > 0))
    snprintf(st, sizeof st, ", exit status %d", i->exit_status);
  if (strcmp(i->ended, "signal") == 0 && *incomplete_reason) /* its data cut short */
    snprintf(out, n, "signal %lld; %s", (long long)i->signal, incomplete_reason);
  else if (strcmp(i->ended, "signal") == 0)
    snprintf(out, n, "signal %lld", (long long)i->signal);
  else if (strcmp(i->ended, "running") == 0 && i->recorder_pid > 0)
    snprintf(out, n, "recording (pid %lld)", (long long)i->recorder_pid);
  else if (strcmp(i->ended, "running") == 0 && i->recorder_pid < 0)
    snprintf(out, n, "killed, not salvaged: its last calls wait in its ring file");
  else if (strcmp(i->ended, "running") == 0)
    snprintf(out, n, "not known (killed?)");
  else if (strcmp(i->ended, "killed") == 0 && i->signal > 0)
    snprintf(out, n, "killed by signal %lld: %s", (long long)i->signal,
             *incomplete_reason ? incomplete_reason : "no teardown");
  else if (strcmp(i->ended, "killed") == 0)
    snprintf(out, n, "killed or _exit%s: %s", st, *incomplete_reason ? incomplete_reason
                                                                    : "no teardown");
  else if (strcmp(i->ended, "exec") == 0)
    snprintf(out, n, "exec: %s", *incomplete_reason ? incomplete_reason
                                                    : "went on as another program");
  else if (strcmp(i->ended, "_exit") == 0)
    snprintf(out, n, "_exit (no teardown)%s: %s", st, *incomplete_reason ? incomplete_reason
                                                                        : "no details");
  else if (strcmp(i->ended, "incomplete") == 0)
    snprintf(out, n, "incomplete%s: %s", st, *incomplete_reason ? incomplete_reason
                                                               : "no reason");
  else if (*incomplete_reason) /* an end in order, the data cut short (a full disk) */
    snprintf(out, n, "%s%s; %s", *i->ended ? i->ended : "not known", st, incomplete_reason);
  else
    snprintf(out, n, "%s%s", *i->ended ? i->ended : "not known", st);
}

/* ---- Backend and device ------------------------------------------------------------ */

typedef struct devscan {
  vw_map names;         /* device id -> index in `text` */
  const char *text[64]; /* PI_DEVICE_INFO_NAME answers */
  size_t ntext;
  int64_t context_dev, context_plugin, devices_plugin;
} devscan;

static void scan_call(devscan *d, const pt_call *c)
{
  int64_t api = c->api;
  const pt_json *args = c->args;
  if (!c->returned || c->result != PI_SUCCESS)
    return;
  if (api == PI_API_piDeviceGetInfo && pt_json_int(pt_json_at(args, 1), 0) == PI_DEVICE_INFO_NAME) {
    const pt_json *v = pt_json_at(args, 3);
    if (v && v->type == PJ_STRING && d->ntext < 64) {
      vw_map_put(&d->names, pt_json_int(pt_json_at(args, 0), 0), (int64_t)d->ntext);
      d->text[d->ntext++] = v->u.s;
    }
  } else if (api == PI_API_piDevicesGet && d->devices_plugin < 0) {
    const pt_json *devs = pt_json_at(args, 3);
    if (devs && devs->type == PJ_ARRAY && devs->n)
      d->devices_plugin = c->plugin;
  } else if (api == PI_API_piContextCreate && d->context_dev < 0) {
    d->context_dev = pt_json_int(pt_json_at(pt_json_at(args, 2), 0), -1);
    d->context_plugin = c->plugin;
  }
}

/* The backend of plugin `plugin` (the first plugin's when not known). */
static void plugin_backend(pt_db *db, int64_t session, int64_t plugin, char *out, size_t n)
{
  pt_plugin p[64];
  size_t np = pt_plugins(db, session, p, 64), k = 0;
  while (k < np && p[k].idx != plugin)
    k++;
  if (np)
    snprintf(out, n, "%s", p[k < np ? k : 0].backend);
}

int64_t vw_session_duration(const vw_session *s, bool *at_least)
{
  *at_least = s->info.duration_ns < 0;
  if (!*at_least)
    return pt_time_clamp(s->info.duration_ns);
  vw_session_hold(s);
  int64_t end = pt_last_call_end(vw_db(s), s->id);
  vw_session_release(s);
  return pt_time_clamp(end);
}

/* "\"name\"" as the decoder printed it -> name. */
static void unquote(const char *s, char *out, size_t n)
{
  size_t len = strlen(s);
  if (len >= 2 && s[0] == '"' && s[len - 1] == '"')
    snprintf(out, n, "%.*s", (int)(len - 2), s + 1);
  else
    snprintf(out, n, "%s", s);
}

bool vw_backend_device(pt_db *db, int64_t session, char *backend, size_t bn, char *device,
                       size_t dn, char *err, size_t errn)
{
  *backend = *device = 0;
  devscan d = {.context_dev = -1, .context_plugin = -1, .devices_plugin = -1};
  pt_calls first;
  /* Devices are looked at first: the first chunks suffice. */
  if (!pt_load_first(db, session, 8, &first, err, errn))
    return false;
  for (size_t i = 0; i < first.n; i++)
    scan_call(&d, &first.v[i]);
  int64_t k = -1;
  if (d.ntext && !vw_map_get(&d.names, d.context_dev, &k))
    k = 0;
  if (k >= 0)
    unquote(d.text[k], device, dn);
  plugin_backend(db, session, d.context_plugin >= 0 ? d.context_plugin : d.devices_plugin,
                 backend, bn);
  vw_map_free(&d.names);
  pt_calls_free(&first);
  return true;
}

/* ---- Text ------------------------------------------------------------------------- */

const char *vw_dur(char buf[32], int64_t ns)
{
  if (ns < 0)
    snprintf(buf, 32, "-");
  else if (ns < 1000)
    snprintf(buf, 32, "%lld ns", (long long)ns);
  else if (ns < 1000000)
    snprintf(buf, 32, "%.1f us", (double)ns / 1e3);
  else if (ns < 1000000000)
    snprintf(buf, 32, "%.2f ms", (double)ns / 1e6);
  else
    snprintf(buf, 32, "%.3f s", (double)ns / 1e9);
  return buf;
}

void vw_put_u64(pi_sbuf *b, uint64_t v)
{
  char d[24];
  int n = 0;
  do {
    d[sizeof d - 1 - n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  pi_sbuf_put(b, d + sizeof d - n, (size_t)n);
}

void vw_put_i64(pi_sbuf *b, int64_t v)
{
  if (v < 0) {
    pi_sbuf_put(b, "-", 1);
    vw_put_u64(b, (uint64_t)0 - (uint64_t)v);
  } else {
    vw_put_u64(b, (uint64_t)v);
  }
}

void vw_put_quoted(pi_sbuf *b, const char *s, size_t max)
{
  static const char hex[] = "0123456789abcdef";
  size_t len = strlen(s), shown = len < max ? len : max;
  pi_sbuf_put(b, "\"", 1);
  for (size_t i = 0; i < shown; i++) {
    unsigned char c = (unsigned char)s[i];
    char esc[4] = {'\\', 0, 0, 0};
    if (c == '\n' || c == '\t' || c == '"' || c == '\\') {
      esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : (char)c;
      pi_sbuf_put(b, esc, 2);
    } else if (c < 0x20 || c == 0x7f) {
      char x[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
      pi_sbuf_put(b, x, 4);
    } else {
      pi_sbuf_put(b, (const char *)&c, 1);
    }
  }
  pi_sbuf_put(b, "\"", 1);
  if (shown < len)
    pi_sbuf_printf(b, "...(%zu chars)", len);
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
  size_t n = s[0] >= 0xf0 && s[0] < 0xf5 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2
                                                                                                : 0;
  if (s[0] >= 0xf5)
    n = 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  return n;
}

void vw_put_json_str(pi_sbuf *b, const char *s)
{
  static const char hex[] = "0123456789abcdef";
  pi_sbuf_put(b, "\"", 1);
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    size_t run = 0; /* plain characters go in one piece */
    while (p[run] >= 0x20 && p[run] < 0x7f && p[run] != '"' && p[run] != '\\' &&
           p[run] != '<' && p[run] != '>' && p[run] != '&')
      run++;
    pi_sbuf_put(b, (const char *)p, run);
    p += run;
    if (!*p)
      break;
    size_t u = *p >= 0x80 ? utf8_len(p) : 0;
    if (u) {
      pi_sbuf_put(b, (const char *)p, u);
      p += u;
    } else if (*p == '"' || *p == '\\') {
      char e[2] = {'\\', (char)*p++};
      pi_sbuf_put(b, e, 2);
    } else { /* controls, HTML specials, bytes that are not UTF-8: \u00XX */
      char e[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
      pi_sbuf_put(b, e, 6);
      p++;
    }
  }
  pi_sbuf_put(b, "\"", 1);
}

void vw_put_csv(pi_sbuf *b, const char *s)
{
  if (!strpbrk(s, ",\"\n\r")) {
    pi_sbuf_puts(b, s);
    return;
  }
  pi_sbuf_put(b, "\"", 1);
  for (const char *p = s; *p; p++) {
    if (*p == '"')
      pi_sbuf_put(b, "\"", 1); /* doubled */
    pi_sbuf_put(b, p, 1);
  }
  pi_sbuf_put(b, "\"", 1);
}

void vw_flush(pi_sbuf *b, FILE *f)
{
  if (b->len)
    fwrite(b->p, 1, b->len, f);
  pi_sbuf_reset(b);
}

const char *vw_api_name(uint32_t api, char buf[32])
{
  const pi_api_desc *d = pi_api_get(api);
  if (d)
    return d->name;
  snprintf(buf, 32, "api#%u", api);
  return buf;
}

const char *vw_result_name(const pt_call *c)
{
  return c->returned ? pi_result_name(c->result) : "(never returned)";
}

vw_colors vw_colors_for(FILE *f)
{
  /* stdout is a stream over descriptor 1 without one of its own
   * (pt_stdout_keep_errors). */
  if (pt_use_color(f == stdout ? STDOUT_FILENO : fileno(f)))
    return (vw_colors){"\033[31m", "\033[32m", "\033[33m", "\033[1m", "\033[2m", "\033[0m"};
  return (vw_colors){"", "", "", "", "", ""};
}
