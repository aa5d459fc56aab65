/*
 * rp_sched.c: replaying calls, one recorded thread per worker thread.
 *
 * The recording says, for every call, when it began and when it returned
 * (one monotonic clock). A worker takes its thread's calls in order, and
 * starts call N once every call of the other threads that had returned
 * before N began in the recording has returned now (but for info queries,
 * which change nothing another call could depend on, unless N ends an
 * object: a release waits for the queries before it too). That keeps every order
 * across threads the application could have relied on (a handle another
 * thread created, data it wrote, a host-side signal after a call), and
 * lets the rest overlap as it did. It never waits for a call that was
 * still running when N began: a piEventsWait in one thread on an event
 * another thread completes later is in flight while that thread goes on,
 * as it was when recorded. Waiting follows the order of the recorded
 * return times, so it has no cycle: the replay cannot deadlock where the
 * recording did not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pirt.h"
#include "rpx.h"

/* ---- One call ------------------------------------------------------------------ */

/* Discovery is not re-run: the platforms and devices it found stand for
 * the chosen device's platform and device (those the application made
 * contexts on are named when the replay begins: note_devices_used). */
static int map_discovery(rp_engine *e, const pt_call *c)
{
  bool platforms = c->api == PI_API_piPlatformsGet;
  const pt_json *list = pt_json_at(c->args, platforms ? 1 : 3);
  for (uint32_t k = 0; list && list->type == PJ_ARRAY && k < list->n; k++) {
    uint64_t id = (uint64_t)pt_json_int(list->u.items[k], 0);
    rp_ids_put(e, id, platforms ? e->live_platform : e->live_device);
  }
  atomic_fetch_add(&e->done, 1);
  return RP_OK;
}

/* An info query that failed with PI_ERROR_INVALID_VALUE where it
 * succeeded when recorded, because its buffer (as large as the recorded
 * device's answer: the application asked the size first) is too small for
 * this device's answer: a replay on another device. Asked the size, then
 * again with room for the answer, and noted, so that the difference replay
 * reports is the answer, not an error the application never saw (both
 * calls the replay's own: rp_own_call). Returns the result to check (r
 * when not such a query). */
static pi_result with_room_for_answer(rp_engine *e, rp_cc *cc, pi_result r)
{
  int v = rp_info_param(cc->api);
  if (v < 0 || r != PI_ERROR_INVALID_VALUE || cc->c->result != PI_SUCCESS || !cc->argv[v])
    return r;
  const pi_param_desc *p = &cc->api->params[v];
  if (p->count.ref < 0 || p->size_ret < 0 || p->query < 0 ||
      (cc->api->id == PI_API_piProgramGetInfo && cc->argv[p->query] == PI_PROGRAM_INFO_BINARIES))
    return r; /* binaries: an array of buffers, not one */
  uint64_t value = cc->argv[v], size = cc->argv[p->count.ref], ret = cc->argv[p->size_ret];
  size_t need = 0;
  cc->argv[v] = 0;
  cc->argv[p->count.ref] = 0;
  cc->argv[p->size_ret] = (uint64_t)(uintptr_t)&need;
  rp_own_call(e, "pitrace replay's own query: the size of recorded seq %lld's answer, which its "
              "%llu-byte buffer cannot hold here", (long long)cc->c->seq, (unsigned long long)size);
  pi_result q = pi_api_invoke(e->t, cc->api->id, cc->argv);
  void *room = q == PI_SUCCESS && need > size ? rp_cc_alloc(cc, need) : NULL;
  cc->argv[p->size_ret] = ret;
  if (!room) {
    cc->argv[v] = value;
    cc->argv[p->count.ref] = size;
    return r;
  }
  cc->argv[v] = (uint64_t)(uintptr_t)room;
  cc->argv[p->count.ref] = need;
  if (!ret) /* the answer's size asked too: the whole answer is compared */
    cc->argv[p->size_ret] = (uint64_t)(uintptr_t)&cc->slot[p->size_ret];
  rp_note(e, cc->c->seq, "%s: its %llu-byte buffer, the size of the recorded answer, is too small "
          "for this device's answer (%zu bytes): asked again with room for it", cc->api->name,
          (unsigned long long)size, need);
  rp_own_call(e, "pitrace replay's own query: recorded seq %lld again, with room for the %zu-byte "
              "answer", (long long)cc->c->seq, need);
  return pi_api_invoke(e->t, cc->api->id, cc->argv);
}

/* Memory the device may still use after the call returns. */
static bool keeps_memory(const rp_cc *cc)
{
  bool create = cc->api->id == PI_API_piMemBufferCreate || cc->api->id == PI_API_piMemImageCreate;
  return !rp_call_blocking(cc->api, cc->c) ||
         (create && (cc->argv[1] & PI_MEM_FLAGS_HOST_PTR_USE));
}

void rp_own_call(const rp_engine *e, const char *fmt, ...)
{
  if (e->stand_ins)
    return;
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  pirt_note note = {.kind = PIRT_NOTE_REPLAY, .text = text};
  pirt_note_emit(&note);
}

/* The runtime's recorded decisions that explained call c (link decisions,
 * spec-constant values), handed on again just before it on this thread:
 * a recording of the replay then holds them, tied to the same call. */
static void emit_notes(const rp_engine *e, const pt_call *c)
{
  size_t n;
  const pt_note *v = pt_notes_at(e->rec_notes, e->nrec_notes, c->seq, &n);
  for (size_t i = 0; i < n; i++) {
    pirt_note note = {.kernel = v[i].kernel, .device = v[i].device, .text = v[i].text,
                      .symbol = v[i].symbol, .image = v[i].image,
                      .symbolic_id = v[i].symbolic_id, .native = v[i].native != 0};
    for (unsigned k = PIRT_NOTE_LINK; strcmp(pi_note_kind_name(k), "?") != 0; k++)
      if (strcmp(v[i].kind, pi_note_kind_name(k)) == 0)
        note.kind = (pirt_note_kind)k;
    if (note.kind == PIRT_NOTE_CALLBACK) /* where the recorded implementation ran one */
      continue;
    uint32_t ids[256];
    for (const char *p = v[i].numeric_ids; *p && note.num_ids < 256;) {
      char *end;
      unsigned long id = strtoul(p + strspn(p, "[, "), &end, 10);
      if (end == p + strspn(p, "[, "))
        break;
      ids[note.num_ids++] = (uint32_t)id;
      p = end;
    }
    size_t len = pt_note_value(&v[i], NULL, 0);
    unsigned char *value = malloc(len ? len : 1);
    if (value)
      pt_note_value(&v[i], value, len);
    note.numeric_ids = ids;
    note.value = value;
    note.size = value ? len : 0;
    if (note.kind)
      pirt_note_emit(&note);
    free(value);
  }
}

/* A buffer made without host data is made holding RP_FILL_BYTE (rp.h):
 * the bytes of it that no call writes are then known when it is read. */
static void fill_new_buffer(rp_cc *cc)
{
  uint64_t size = cc->argv[2];
  if (!rp_fills((int64_t)cc->argv[1], size))
    return;
  void *fill = rp_cc_alloc(cc, (size_t)size);
  if (!fill)
    return; /* made as recorded; its read is compared whole */
  memset(fill, RP_FILL_BYTE, (size_t)size);
  cc->argv[1] |= PI_MEM_FLAGS_HOST_PTR_COPY;
  cc->argv[3] = (uint64_t)(uintptr_t)fill;
}

int rp_exec(rp_engine *e, const pt_call *c)
{
  const pi_api_desc *api = rp_api(c);
  if (!api) {
    char what[4400];
    snprintf(what, sizeof what, "%s: seq %lld calls PI function id %u, which this pitrace "
             "does not know: use a newer pitrace", e->s->db.path, (long long)c->seq, c->api);
    return rp_stop(e, RP_FAILED, c, NULL, what);
  }
  if (!e->stand_ins && rp_discovery_api(c->api))
    return map_discovery(e, c);
  if (!e->stand_ins && c->seq < e->s->discovery_end &&
      (c->api == PI_API_piPlatformGetInfo || c->api == PI_API_piDeviceGetInfo)) {
    /* The runtime's own look at the devices while discovering them: the
     * replay's runtime has just made the same queries (and, recorded, its
     * session holds them once, as the original does). */
    atomic_fetch_add(&e->done, 1);
    return RP_OK;
  }
  if (e->nrec_notes)
    emit_notes(e, c);
  rp_cc cc;
  rp_cc_init(&cc, c, api);
  int st;
  if (rp_build(e, &cc)) {
    if (api->id == PI_API_piMemBufferCreate && e->fills)
      fill_new_buffer(&cc);
    pi_result r = with_room_for_answer(e, &cc, pi_api_invoke(e->t, api->id, cc.argv));
    if (e->ran)
      e->ran[c - e->s->calls.v] = 1; /* this thread's own byte */
    st = rp_check(e, &cc, r);
    rp_cc_done(e, &cc, keeps_memory(&cc));
  } else {
    st = rp_stop(e, RP_FAILED, c, NULL, cc.err);
    rp_cc_done(e, &cc, false);
  }
  atomic_fetch_add(&e->done, 1);
  if (e->tty)
    rp_progress(e, false);
  return st == RP_OK ? rp_check_pending(e, c->seq) : st;
}

/* ---- Threads ------------------------------------------------------------------------ */

/* One recorded thread, replayed by one worker. */
typedef struct lane {
  struct sched *s;
  size_t *idx, n;       /* its calls, in order (indices into calls) */
  int64_t *end;         /* when each that is no info query returned in the
                           recording (ascending) */
  size_t nend;
  _Atomic size_t done;  /* how many of those have returned in the replay */
  int64_t *end_all;     /* when each of its calls returned in the recording */
  _Atomic size_t done_all; /* how many of them have returned in the replay */
  _Atomic int waiters;
  pthread_mutex_t m;
  pthread_cond_t cv;
} lane;

typedef struct sched {
  rp_engine *e;
  const pt_call *const *calls;
  lane *lanes;
  size_t nlanes, running; /* workers not finished (under m) */
  pthread_mutex_t m;
  pthread_cond_t cv;
} sched;

/* Info queries: nothing another call does depends on them, but the end
 * of the object they ask about (ends_objects). */
static bool queries(const pt_call *c)
{
  const pi_api_desc *api = rp_api(c);
  return api && rp_info_param(api) >= 0;
}

/* Calls that end objects (releases, USM frees, the teardown): they wait
 * for the other threads' info queries too, which may be about what they
 * end (a thread queried an event 300 times, then another released it:
 * the replay queried the released event). */
static bool ends_objects(const pt_call *c)
{
  const pi_api_desc *api = rp_api(c);
  return api && (api->releases >= 0 || api->id == PI_API_piTearDown);
}

/* How many of lane l's calls (`all`: queries too) had returned when a call
 * began at `start`. */
static size_t returned_by(const lane *l, int64_t start, bool all)
{
  const int64_t *end = all ? l->end_all : l->end;
  size_t lo = 0, hi = all ? l->n : l->nend;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (end[mid] <= start)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Waits until `need` of lane l's calls (`all`: queries too) have
 * returned; false on a stop. */
static bool wait_lane(lane *l, size_t need, bool all, rp_engine *e)
{
  _Atomic size_t *done = all ? &l->done_all : &l->done;
  for (int spin = 0; spin < 64; spin++) {
    if (atomic_load(done) >= need || atomic_load(&e->stop))
      return !atomic_load(&e->stop);
    sched_yield();
  }
  pthread_mutex_lock(&l->m);
  atomic_fetch_add(&l->waiters, 1);
  while (atomic_load(done) < need && !atomic_load(&e->stop))
    pthread_cond_wait(&l->cv, &l->m);
  atomic_fetch_sub(&l->waiters, 1);
  pthread_mutex_unlock(&l->m);
  return !atomic_load(&e->stop);
}

static void wake(lane *l)
{
  pthread_mutex_lock(&l->m);
  pthread_cond_broadcast(&l->cv);
  pthread_mutex_unlock(&l->m);
}

/* One of lane l's calls returned (`query`: an info query). */
static void returned(lane *l, bool query)
{
  atomic_fetch_add(&l->done_all, 1);
  if (!query)
    atomic_fetch_add(&l->done, 1);
  if (atomic_load(&l->waiters))
    wake(l);
}

/* Whether call c may start: false on a stop. */
static bool wait_turn(sched *s, const lane *mine, const pt_call *c)
{
  bool all = ends_objects(c);
  for (size_t k = 0; k < s->nlanes; k++) {
    lane *l = &s->lanes[k];
    if (l != mine && !wait_lane(l, returned_by(l, c->start_ns, all), all, s->e))
      return false;
  }
  return true;
}

static void *worker_main(void *arg)
{
  lane *me = arg;
  sched *s = me->s;
  for (size_t k = 0; k < me->n; k++) {
    const pt_call *c = s->calls[me->idx[k]];
    if (!wait_turn(s, me, c))
      break;
    int st = rp_exec(s->e, c);
    returned(me, queries(c));
    if (st != RP_OK) {
      for (size_t j = 0; j < s->nlanes; j++)
        wake(&s->lanes[j]); /* the others stop too */
      break;
    }
  }
  pthread_mutex_lock(&s->m);
  s->running--;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->m);
  return NULL;
}

/* Waits for the workers; after a stop, at most a few seconds for calls
 * that may never return (a wait on an event nobody will complete now).
 * True when every worker finished. */
static bool wait_workers(sched *s)
{
  struct timespec limit;
  bool timed = false;
  pthread_mutex_lock(&s->m);
  while (s->running) {
    if (!atomic_load(&s->e->stop)) {
      pthread_cond_wait(&s->cv, &s->m);
      continue;
    }
    if (!timed) {
      clock_gettime(CLOCK_REALTIME, &limit);
      limit.tv_sec += 5;
      timed = true;
    }
    if (pthread_cond_timedwait(&s->cv, &s->m, &limit) == ETIMEDOUT)
      break;
  }
  bool all = s->running == 0;
  pthread_mutex_unlock(&s->m);
  return all;
}

/* The distinct recorded threads, in order of their first call. */
static size_t thread_ids(const pt_call *const *calls, size_t n, uint32_t **out)
{
  uint32_t *v = NULL;
  size_t k = 0, cap = 0;
  for (size_t i = 0; i < n; i++) {
    size_t j = 0;
    while (j < k && v[j] != calls[i]->thread)
      j++;
    if (j == k && !rp_push(&v, &k, &cap, sizeof *v, &calls[i]->thread))
      break;
  }
  *out = v;
  return k;
}

/* The lane of call i's thread. */
static lane *lane_of(sched *s, size_t i, const uint32_t *tids)
{
  lane *l = s->lanes;
  while (tids[l - s->lanes] != s->calls[i]->thread)
    l++;
  return l;
}

/* Gives each lane its thread's calls (counted first: each lane holds its
 * own, not room for the whole session); false when out of memory. */
static bool split(sched *s, size_t n, const uint32_t *tids)
{
  for (size_t i = 0; i < n; i++) {
    lane *l = lane_of(s, i, tids);
    l->n++;
    l->nend += !queries(s->calls[i]);
  }
  for (size_t k = 0; k < s->nlanes; k++) {
    lane *l = &s->lanes[k];
    l->s = s;
    pthread_mutex_init(&l->m, NULL);
    pthread_cond_init(&l->cv, NULL);
    if (!(l->idx = malloc((l->n ? l->n : 1) * sizeof *l->idx)) ||
        !(l->end = malloc((l->nend ? l->nend : 1) * sizeof *l->end)) ||
        !(l->end_all = malloc((l->n ? l->n : 1) * sizeof *l->end_all)))
      return false;
    l->n = l->nend = 0;
  }
  for (size_t i = 0; i < n; i++) {
    lane *l = lane_of(s, i, tids);
    if (!queries(s->calls[i]))
      l->end[l->nend++] = s->calls[i]->start_ns + s->calls[i]->dur_ns;
    l->end_all[l->n] = s->calls[i]->start_ns + s->calls[i]->dur_ns;
    l->idx[l->n++] = i;
  }
  return true;
}

static void free_lanes(sched *s)
{
  for (size_t k = 0; s->lanes && k < s->nlanes; k++) {
    free(s->lanes[k].idx);
    free(s->lanes[k].end);
    free(s->lanes[k].end_all);
    pthread_mutex_destroy(&s->lanes[k].m);
    pthread_cond_destroy(&s->lanes[k].cv);
  }
  free(s->lanes);
}

static int run_threads(rp_engine *e, const pt_call *const *calls, size_t n, const uint32_t *tids,
                       size_t nthreads)
{
  sched s = {.e = e, .calls = calls, .nlanes = nthreads};
  s.lanes = calloc(nthreads, sizeof *s.lanes);
  pthread_t *th = calloc(nthreads, sizeof *th);
  pthread_mutex_init(&s.m, NULL);
  pthread_cond_init(&s.cv, NULL);
  e->mt = true;
  size_t started = 0;
  if (s.lanes && th && split(&s, n, tids)) {
    pthread_mutex_lock(&s.m);
    for (; started < nthreads; started++)
      if (pthread_create(&th[started], NULL, worker_main, &s.lanes[started]) != 0)
        break;
    s.running = started;
    pthread_mutex_unlock(&s.m);
  }
  if (started < nthreads)
    rp_stop(e, RP_FAILED, calls[0], NULL, "cannot start the replay threads (out of memory)");
  if (!wait_workers(&s)) {
    e->abandoned = true; /* a worker is stuck in the plugin: leave it be */
    return e->status;
  }
  for (size_t k = 0; k < started; k++)
    pthread_join(th[k], NULL);
  free_lanes(&s);
  free(th);
  pthread_cond_destroy(&s.cv);
  pthread_mutex_destroy(&s.m);
  return e->status;
}

int rp_run(rp_engine *e, const pt_call *const *calls, size_t n)
{
  e->total = n;
  uint32_t *tids;
  size_t nthreads = thread_ids(calls, n, &tids);
  int st = e->status;
  if (nthreads > 1) {
    st = run_threads(e, calls, n, tids, nthreads);
  } else {
    for (size_t i = 0; i < n; i++)
      if ((st = rp_exec(e, calls[i])) != RP_OK)
        break;
  }
  free(tids);
  return st == RP_OK ? e->status : st;
}
