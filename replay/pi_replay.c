/*
 * pi_replay.c: libpi_replay.so, a PI plugin that answers an application's
 * PI calls from a recording instead of a device (SYCL_PI_REPLAY=session.db;
 * the runtime then binds this plugin alone, see runtime/src/plugins.c).
 *
 * Each application thread follows one recorded thread (the first not yet
 * followed that begins with its first call; threads that began alike may
 * swap later, see rebind), call by call: a call must be the recorded one, with
 * the same in-arguments where they matter (scalars, enumerations, sizes,
 * strings such as kernel names, handles, small data such as kernel
 * argument values). It then gets the recorded result and out-values:
 * stable fake handles, info-query values, counts, read-back data, host
 * memory holding a mapped region's recorded content, host memory for USM.
 * Info queries are answered from any identical recorded query even out of
 * order (this plugin's own backend query included): they change nothing.
 *
 * The first call that deviates is reported on stderr (seq, expected and
 * got) and every call from then on fails with PI_ERROR_INVALID_OPERATION;
 * piPluginGetLastError says why. The application's event callbacks run
 * on a thread of the plugin's where the recording says they began.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "pirt.h" /* the note kinds (pirt_note_kind) */
#include "rp.h"

#define FAKE_BASE 0x7e0000000000ull
#define FAKE_STEP 16u

typedef struct rthread {
  uint32_t recorded;
  size_t *calls, n, next;
  bool taken;
} rthread;

typedef struct ralloc {
  uint64_t id;
  unsigned char *p;
  size_t size;
} ralloc;

typedef struct idpair {
  uint64_t app, rec;
} idpair;

static struct {
  pthread_mutex_t lock;
  bool loaded, stopped;
  unsigned loads; /* piPluginInit calls: thread bindings of an earlier one are void */
  rp_session s;
  uint32_t plugin; /* the recorded plugin this one stands for */
  rthread *threads;
  size_t nthreads, cap_threads;
  rthread **bound; /* application thread (slot) -> recorded thread */
  size_t nbound, cap_bound;
  idpair *perm;    /* application ids standing for other recorded ids */
  size_t nperm, cap_perm;
  ralloc *allocs; /* USM allocations and mapped regions handed out */
  size_t nallocs, cap_allocs;
  char message[2048];
  pt_note *notes; /* the recording's notes, read at the first recall */
  size_t nnotes;
  bool notes_read;
  struct rec_callback *rcbs; /* the callbacks the recording ran (callback notes) */
  size_t nrcbs;
  struct app_callback *cbs; /* the application's callbacks, run or to run */
  size_t ncbs, cap_cbs, cb_first;
  pthread_cond_t progress; /* a call answered, a callback run (with lock) */
} R = {.lock = PTHREAD_MUTEX_INITIALIZER, .progress = PTHREAD_COND_INITIALIZER};

/* A callback the recording ran: the user data its piEventSetCallback was
 * given (a number of the recorded process), and the last call begun, on
 * any thread, before it began. */
struct rec_callback {
  uint64_t user;
  int64_t after;
  bool taken;
};

/* An application's callback, to run once every recorded call up to
 * `after` was answered. */
typedef void (*event_callback)(pi_event event, pi_int32 status, void *user);
struct app_callback {
  event_callback fn;
  pi_event event;
  pi_int32 status;
  void *user;
  int64_t after;
  size_t order; /* its note's place among the recording's callback notes */
  bool started, finished;
  rthread *setter; /* the recorded thread of the thread that set it */
};

static _Thread_local size_t my_slot;  /* index + 1 into R.bound */
static _Thread_local bool on_callback_thread; /* the plugin's own (callbacks, below) */
static rthread *cb_setter; /* the running callback's setter's recorded thread (R.lock) */
static _Thread_local unsigned my_load; /* ... of load R.loads */

static pi_result rp_answer(pi_api_id id, uint64_t *argv);
#include "pi_replay_gen.h"

/* ---- Handles and memory handed out --------------------------------------------- */

/* Handles are recorded ids, as the application sees them: the same but
 * where two threads that began alike were matched the other way round at
 * first (swap_ids). */
static uint64_t to_recorded(uint64_t app)
{
  for (size_t k = 0; k < R.nperm; k++)
    if (R.perm[k].app == app)
      return R.perm[k].rec;
  return app;
}

static uint64_t to_app(uint64_t rec)
{
  for (size_t k = 0; k < R.nperm; k++)
    if (R.perm[k].rec == rec)
      return R.perm[k].app;
  return rec;
}

static void remap(uint64_t app, uint64_t rec)
{
  for (size_t k = 0; k < R.nperm; k++)
    if (R.perm[k].app == app) {
      R.perm[k].rec = rec;
      return;
    }
  idpair p = {app, rec};
  rp_push(&R.perm, &R.nperm, &R.cap_perm, sizeof p, &p);
}

static uint64_t fake(uint64_t id) { return id ? FAKE_BASE + to_app(id) * FAKE_STEP : 0; }

/* The recorded id of a handle this plugin gave (0 for NULL, UINT64_MAX for
 * anything else). */
static uint64_t id_of(uint64_t v)
{
  if (!v)
    return 0;
  return v > FAKE_BASE && (v - FAKE_BASE) % FAKE_STEP == 0
             ? to_recorded((v - FAKE_BASE) / FAKE_STEP)
             : UINT64_MAX;
}

static unsigned char *alloc_for(uint64_t id, size_t size)
{
  ralloc a = {id, aligned_alloc(64, (size + 63) / 64 * 64 + 64), size};
  if (a.p)
    memset(a.p, 0, size);
  if (a.p && !rp_push(&R.allocs, &R.nallocs, &R.cap_allocs, sizeof a, &a)) {
    free(a.p);
    a.p = NULL;
  }
  return a.p;
}

static void free_alloc(uint64_t p)
{
  for (size_t i = 0; i < R.nallocs; i++)
    if ((uint64_t)(uintptr_t)R.allocs[i].p == p) {
      free(R.allocs[i].p);
      R.allocs[i] = R.allocs[--R.nallocs];
      return;
    }
}

/* "usm#ID+OFF" / "mapped#ID" of a pointer into memory handed out. */
static bool pointer_ref(uint64_t p, const char *kind, pi_sbuf *b)
{
  for (size_t i = 0; i < R.nallocs; i++) {
    uint64_t base = (uint64_t)(uintptr_t)R.allocs[i].p;
    if (p >= base && p < base + (R.allocs[i].size ? R.allocs[i].size : 1)) {
      pi_sbuf_printf(b, "%s#%llu", kind, (unsigned long long)R.allocs[i].id);
      if (p != base)
        pi_sbuf_printf(b, "+%llu", (unsigned long long)(p - base));
      return true;
    }
  }
  return false;
}

/* ---- Canonical argument text, the same from both sides ---------------------------- */

static uint64_t masked(const pi_param_desc *p, uint64_t v)
{
  size_t w = pi_value_width(p->vt, p->en);
  return w >= 8 ? v : v & ((1ull << (8 * w)) - 1);
}

static void rec_scalar(pi_sbuf *b, const pi_param_desc *p, const pt_json *j)
{
  if (p->kind == PI_PK_HANDLE)
    pi_sbuf_printf(b, "%s#%lld", pi_object_kind_name(p->obj), (long long)pt_json_int(j, 0));
  else
    pi_sbuf_printf(b, "%llu", (unsigned long long)masked(p, (uint64_t)pt_json_int(j, 0)));
}

static void app_scalar(pi_sbuf *b, const pi_param_desc *p, uint64_t v)
{
  if (p->kind == PI_PK_HANDLE)
    pi_sbuf_printf(b, "%s#%lld", pi_object_kind_name(p->obj), (long long)id_of(v));
  else
    pi_sbuf_printf(b, "%llu", (unsigned long long)masked(p, v));
}

static void rec_list(pi_sbuf *b, const pi_param_desc *p, const pt_json *j)
{
  if (!j || j->type != PJ_ARRAY) {
    pi_sbuf_puts(b, "NULL");
    return;
  }
  pi_sbuf_puts(b, "[");
  pi_param_desc elem = *p;
  elem.kind = p->kind == PI_PK_HANDLES ? PI_PK_HANDLE : PI_PK_SCALAR;
  if (p->kind == PI_PK_PROPS)
    elem.vt = PI_VT_U64;
  for (uint32_t k = 0; k < j->n; k++) {
    pi_sbuf_puts(b, k ? "," : "");
    rec_scalar(b, &elem, j->u.items[k]);
  }
  pi_sbuf_puts(b, "]");
}

static void app_list(pi_sbuf *b, const pi_param_desc *p, const uint64_t *argv, unsigned i)
{
  const unsigned char *a = (const unsigned char *)(uintptr_t)argv[i];
  if (!a) {
    pi_sbuf_puts(b, "NULL");
    return;
  }
  pi_param_desc elem = *p;
  elem.kind = p->kind == PI_PK_HANDLES ? PI_PK_HANDLE : PI_PK_SCALAR;
  if (p->kind == PI_PK_PROPS)
    elem.vt = PI_VT_U64;
  size_t w = p->kind == PI_PK_ARRAY ? pi_value_width(p->vt, p->en) : sizeof(void *);
  size_t n = p->kind == PI_PK_PROPS ? 257 : pi_param_extent(p, argv) / w;
  pi_sbuf_puts(b, "[");
  for (size_t k = 0; k < n; k++) {
    uint64_t v = 0;
    memcpy(&v, a + k * w, w);
    pi_sbuf_puts(b, k ? "," : "");
    app_scalar(b, &elem, v);
    if (p->kind == PI_PK_PROPS && !v && k % 2 == 0)
      break; /* the list's terminating key */
  }
  pi_sbuf_puts(b, "]");
}

static void hex(pi_sbuf *b, const unsigned char *d, size_t n)
{
  for (size_t k = 0; k < n; k++)
    pi_sbuf_printf(b, "%02x", d[k]);
}

static void rec_pointer(pi_sbuf *b, const pt_json *j)
{
  pt_ref r = pt_ref_of(j);
  if (r.kind != PT_REF_OBJECT) {
    pi_sbuf_puts(b, r.kind == PT_REF_NULL ? "NULL" : "host memory");
    return;
  }
  pi_sbuf_printf(b, "%s#%lld", pi_object_kind_name(r.obj), (long long)r.id);
  if (r.offset)
    pi_sbuf_printf(b, "+%lld", (long long)r.offset);
}

static void app_pointer(pi_sbuf *b, uint64_t p, bool mapped)
{
  if (!p)
    pi_sbuf_puts(b, "NULL");
  else if (!pointer_ref(p, mapped ? "mapped" : "usm", b))
    pi_sbuf_puts(b, "host memory");
}

/* Data up to 64 bytes (kernel argument values, fill patterns) by content. */
static void rec_bytes(pi_sbuf *b, const pt_call *c, unsigned i, const pt_json *j)
{
  size_t n;
  rp_data_status st;
  unsigned char *d = (!j || j->type == PJ_NULL) ? NULL : rp_payload(&R.s, c, i, "in", 0, &n, &st);
  if (!j || j->type == PJ_NULL)
    pi_sbuf_puts(b, "NULL");
  else if (d && n <= 64)
    hex(b, d, n);
  else
    pi_sbuf_puts(b, "data");
  free(d);
}

static void app_bytes(pi_sbuf *b, const pi_param_desc *p, const uint64_t *argv, unsigned i)
{
  size_t n = pi_param_extent(p, argv);
  if (!argv[i])
    pi_sbuf_puts(b, "NULL");
  else if (n <= 64)
    hex(b, (const unsigned char *)(uintptr_t)argv[i], n);
  else
    pi_sbuf_puts(b, "data");
}

/* Whether in-parameter i matters, and its canonical text from each side. */
static bool canon(const pi_api_desc *api, unsigned i, const pt_call *c, const uint64_t *argv,
                  pi_sbuf *rec, pi_sbuf *app)
{
  const pi_param_desc *p = &api->params[i];
  const pt_json *j = pt_json_at(c->args, i);
  switch (p->kind) {
  case PI_PK_SCALAR:
    if (p->vt == PI_VT_PTR || p->vt == PI_VT_NATIVE)
      return false;
    /* fallthrough */
  case PI_PK_HANDLE:
    rec_scalar(rec, p, j);
    app_scalar(app, p, argv[i]);
    return true;
  case PI_PK_HANDLES: case PI_PK_ARRAY: case PI_PK_PROPS:
    rec_list(rec, p, j);
    app_list(app, p, argv, i);
    return true;
  case PI_PK_STRING:
    pi_sbuf_printf(rec, "\"%s\"", j && j->type == PJ_STRING ? j->u.s : "(NULL)");
    pi_sbuf_printf(app, "\"%s\"", argv[i] ? (const char *)(uintptr_t)argv[i] : "(NULL)");
    return true;
  case PI_PK_BYTES:
    rec_bytes(rec, c, i, j);
    app_bytes(app, p, argv, i);
    return true;
  case PI_PK_USMPTR: case PI_PK_HOSTPTR: case PI_PK_USMREF: {
    uint64_t v = argv[i];
    if (p->kind == PI_PK_USMREF && v)
      memcpy(&v, (const void *)(uintptr_t)v, sizeof v);
    rec_pointer(rec, j);
    app_pointer(app, v, p->kind == PI_PK_HOSTPTR);
    return true;
  }
  case PI_PK_FNPTR:
    pi_sbuf_printf(rec, "%s", pt_json_int(j, 0) ? "a function" : "NULL");
    pi_sbuf_printf(app, "%s", argv[i] ? "a function" : "NULL");
    return true;
  default:
    return false;
  }
}

/* Whether the application's in-arguments are the recorded ones; else the
 * first difference in why. */
static bool args_match(const pi_api_desc *api, const pt_call *c, const uint64_t *argv,
                       char *why, size_t whyn)
{
  bool same = true;
  for (unsigned i = 0; i < api->nparams && same; i++) {
    if (api->params[i].dir != PI_DIR_IN)
      continue;
    char s1[256], s2[256];
    pi_sbuf rec, app;
    pi_sbuf_init(&rec, s1, sizeof s1);
    pi_sbuf_init(&app, s2, sizeof s2);
    if (canon(api, i, c, argv, &rec, &app) && strcmp(rec.p, app.p) != 0) {
      snprintf(why, whyn, " with %s %.300s, got %s %.300s", api->params[i].name, rec.p,
               api->params[i].name, app.p);
      same = false;
    }
    pi_sbuf_free(&rec);
    pi_sbuf_free(&app);
  }
  return same;
}

/* Whether recorded call c, which returned, is this call (api, argv). */
static bool is_call(const pt_call *c, const pi_api_desc *api, const uint64_t *argv, char *why,
                    size_t whyn)
{
  return c->api == api->id && c->returned && args_match(api, c, argv, why, whyn);
}

/* ---- Answers ------------------------------------------------------------------------- */

static void put(uint64_t dst, uint64_t v, size_t w)
{
  memcpy((void *)(uintptr_t)dst, &v, w);
}

/* Copies a payload of call c into the application's memory. */
static void give_data(const pt_call *c, unsigned i, uint64_t dst, size_t room)
{
  static const char *const roles[] = {"out", "readback", "value"};
  for (int k = 0; k < 3; k++) {
    size_t n, full = 0;
    rp_data_status st;
    unsigned char *d = rp_payload(&R.s, c, i, roles[k], 0, &n, &st);
    if (!d && st == RP_DATA_PARTIAL) { /* a data cap kept its first bytes: those */
      d = rp_payload_kept(&R.s, c, i, roles[k], 0, &n, &full);
      const pi_api_desc *api = rp_api(c);
      fprintf(stderr, "pitrace replay plugin: seq %lld %s: the recording kept %zu of the %zu "
              "bytes written to parameter %s (SYCL_PI_RECORD_DATA_CAP, SYCL_PI_RECORD_DATA=meta, "
              "or a full disk): the application gets those, the rest of its memory as it was\n",
              (long long)c->seq, api->name, d ? n : 0, full, api->params[i].name);
    }
    if (d) {
      memcpy((void *)(uintptr_t)dst, d, n < room ? n : room);
      free(d);
      return;
    }
    if (st == RP_DATA_PARTIAL)
      return;
  }
}

static void give_list(const pi_param_desc *p, const pt_json *j, const uint64_t *argv,
                      unsigned i)
{
  size_t w = p->kind == PI_PK_HANDLES ? sizeof(void *) : pi_value_width(p->vt, p->en);
  size_t cap = pi_param_extent(p, argv) / w;
  for (uint32_t k = 0; j && j->type == PJ_ARRAY && k < j->n && k < cap; k++) {
    uint64_t v = (uint64_t)pt_json_int(j->u.items[k], 0);
    put(argv[i] + k * w, p->kind == PI_PK_HANDLES ? fake(v) : v, w);
  }
}

/* A new USM allocation or mapped region: host memory, a mapped one holding
 * what the application saw. */
static void give_memory(const pi_api_desc *api, const pt_call *c, unsigned i,
                        const uint64_t *argv)
{
  pt_ref r = pt_ref_of(pt_json_at(c->args, i));
  int size = rp_param(api, "size");
  size_t n = size >= 0 ? (size_t)argv[size] : 0;
  unsigned char *p = alloc_for((uint64_t)r.id, n);
  if (p && api->params[i].creates == PI_OBJ_MAPPED)
    give_data(c, i, (uint64_t)(uintptr_t)p, n);
  put(argv[i], (uint64_t)(uintptr_t)p, sizeof p);
}

static void give_info(const pi_param_desc *p, const pt_call *c, unsigned i, const uint64_t *argv)
{
  const pi_enum_entry *en = pi_enum_lookup(p->en, (int64_t)argv[p->query]);
  size_t room = (size_t)argv[p->count.ref];
  if (!en || en->vt != PI_VT_HANDLE) {
    give_data(c, i, argv[i], room);
    return;
  }
  uint64_t ids[64];
  size_t n = rp_info_ids(c, i, ids, 64);
  for (size_t k = 0; k < n && (k + 1) * sizeof(void *) <= room; k++)
    put(argv[i] + k * sizeof(void *), fake(ids[k]), sizeof(void *));
}

static void give_out(const pi_api_desc *api, const pt_call *c, unsigned i, const uint64_t *argv)
{
  const pt_json *j = c->args->u.items[i]; /* as recorded */
  const pi_param_desc *p = api->params + i;
  switch (p->kind) {
  case PI_PK_SCALAR:
    if (p->creates == PI_OBJ_USM || p->creates == PI_OBJ_MAPPED)
      give_memory(api, c, i, argv);
    else if (p->vt == PI_VT_NATIVE) /* no implementation's object is here: none */
      put(argv[i], 0, 8);
    else if (j && j->type != PJ_NULL)
      put(argv[i], j->type == PJ_STRING ? pt_ref_of(j).value : (uint64_t)pt_json_int(j, 0),
          p->vt == PI_VT_PTR || p->vt == PI_VT_NATIVE ? 8 : pi_value_width(p->vt, p->en));
    return;
  case PI_PK_HANDLE:
    put(argv[i], fake((uint64_t)pt_json_int(j, 0)), sizeof(void *));
    return;
  case PI_PK_HANDLES: case PI_PK_ARRAY:
    give_list(p, j, argv, i);
    return;
  case PI_PK_STRING:
    if (j && j->type == PJ_STRING)
      put(argv[i], (uint64_t)(uintptr_t)j->u.s, sizeof(char *));
    return;
  case PI_PK_INFO:
    give_info(p, c, i, argv);
    return;
  case PI_PK_BYTES: case PI_PK_HOSTPTR:
    give_data(c, i, argv[i], p->kind == PI_PK_BYTES ? pi_param_extent(p, argv) : SIZE_MAX);
    return;
  default:
    return;
  }
}

/* The recorded answer to call c: out-values, then the recorded result. */
static pi_result give(const pi_api_desc *api, const pt_call *c, const uint64_t *argv)
{
  if (c->result != PI_SUCCESS)
    return (pi_result)c->result;
  for (unsigned i = 0; i < api->nparams; i++) {
    const pi_param_desc *p = &api->params[i];
    if (p->dir != PI_DIR_IN && argv[i])
      give_out(api, c, i, argv);
    else if (p->kind == PI_PK_USMPTR && argv[i] &&
             pt_ref_of(pt_json_at(c->args, i)).kind == PT_REF_NUMBER)
      give_data(c, i, argv[i], SIZE_MAX); /* a USM copy's host destination */
  }
  if (api->id == PI_API_piEnqueueMemUnmap)
    free_alloc(argv[2]);
  if (api->id == PI_API_piextUSMFree)
    free_alloc(argv[1]);
  return (pi_result)c->result;
}

/* This plugin's backend, asked by the runtime (it binds it as unknown). */
static pi_result give_backend(const uint64_t *argv)
{
  /* The recorded name ("opencl") is the enumeration's PI_EXT_PLATFORM_BACKEND_OPENCL. */
  static const char prefix[] = "PI_EXT_PLATFORM_BACKEND_";
  const pi_enum_desc *en = pi_enum_find("pi_platform_backend");
  const char *name = R.s.plugins[R.plugin].backend;
  uint32_t be = PI_EXT_PLATFORM_BACKEND_UNKNOWN;
  for (uint16_t k = 0; en && k < en->count; k++) {
    const char *e = en->entries[k].name;
    if (strncmp(e, prefix, sizeof prefix - 1) == 0 && strcasecmp(e + sizeof prefix - 1, name) == 0)
      be = (uint32_t)en->entries[k].value;
  }
  if (argv[3] && argv[2] >= sizeof be)
    put(argv[3], be, sizeof be);
  if (argv[4])
    put(argv[4], sizeof be, sizeof(size_t));
  return PI_SUCCESS;
}

/* An identical recorded info query anywhere, or NULL. */
static const pt_call *same_query(const pi_api_desc *api, const uint64_t *argv)
{
  char why[8];
  for (size_t k = 0; k < R.s.calls.n; k++) {
    const pt_call *c = &R.s.calls.v[k];
    if (c->api == api->id && c->plugin == R.plugin && c->returned &&
        args_match(api, c, argv, why, sizeof why))
      return c;
  }
  return NULL;
}

/* ---- Following the recording ------------------------------------------------------------ */

/* The recorded thread this application thread follows: on its first call,
 * the first recorded thread not yet taken whose first call this is, else
 * the first not taken. */
static rthread *my_thread(const pi_api_desc *api, const uint64_t *argv)
{
  if (my_slot && my_load == R.loads)
    return R.bound[my_slot - 1];
  rthread *any = NULL, *same = NULL;
  char why[8];
  for (size_t k = 0; k < R.nthreads && !same; k++) {
    rthread *t = &R.threads[k];
    const pt_call *first = t->n ? &R.s.calls.v[t->calls[0]] : NULL;
    if (t->taken)
      continue;
    any = any ? any : t;
    if (first && first->api == api->id && args_match(api, first, argv, why, sizeof why))
      same = t;
  }
  rthread *pick = same ? same : any;
  if (!pick || !rp_push(&R.bound, &R.nbound, &R.cap_bound, sizeof pick, &pick))
    return NULL;
  pick->taken = true;
  my_slot = R.nbound;
  my_load = R.loads;
  return pick;
}

/* ---- Threads that began alike ----------------------------------------------------------
 * Two application threads whose first calls are the same may reach the
 * plugin in either order, and be matched to the other's recorded thread.
 * When a thread's call then deviates, and another recorded thread began
 * with the same calls (but for the handles they created) and goes on with
 * this one, the two are swapped: their threads, and the ids of the handles
 * each was handed. */

static bool json_same(const pt_json *a, const pt_json *b)
{
  if (!a || !b || a->type != b->type || a->n != b->n)
    return a == b;
  switch (a->type) {
  case PJ_INT: case PJ_BOOL: return a->u.i == b->u.i;
  case PJ_REAL: return a->u.d == b->u.d;
  case PJ_STRING: return strcmp(a->u.s, b->u.s) == 0;
  case PJ_ARRAY: case PJ_OBJECT:
    for (uint32_t k = 0; k < a->n; k++)
      if (!json_same(a->u.items[k], b->u.items[k]))
        return false;
    return true;
  default: return true;
  }
}

typedef struct pairs {
  uint64_t a[64], b[64];
  size_t n;
} pairs;

/* Recorded ids a and b name the same handle in the two threads. */
static bool same_id(const pairs *p, uint64_t a, uint64_t b)
{
  for (size_t k = 0; k < p->n; k++)
    if (p->a[k] == a)
      return p->b[k] == b;
  return a == b;
}

/* Parameter i of two recorded calls, the handles they created paired. */
static bool same_param(const pi_param_desc *d, const pt_json *a, const pt_json *b, pairs *p)
{
  bool handle = d->kind == PI_PK_HANDLE;
  if (d->dir != PI_DIR_IN) {
    if (handle && pt_json_int(a, 0) != pt_json_int(b, 0) && p->n < 64) {
      p->a[p->n] = (uint64_t)pt_json_int(a, 0);
      p->b[p->n++] = (uint64_t)pt_json_int(b, 0);
    }
    return !handle || p->n < 64;
  }
  if (handle)
    return same_id(p, (uint64_t)pt_json_int(a, 0), (uint64_t)pt_json_int(b, 0));
  return json_same(a, b);
}

/* Whether threads t and u began with the same m calls; p gets the pairs of
 * handles they created. */
static bool same_start(const rthread *t, const rthread *u, size_t m, pairs *p)
{
  p->n = 0;
  for (size_t k = 0; k < m; k++) {
    const pt_call *a = &R.s.calls.v[t->calls[k]], *b = &R.s.calls.v[u->calls[k]];
    const pi_api_desc *api = rp_api(a);
    if (a->api != b->api || a->result != b->result || !api)
      return false;
    for (unsigned i = 0; i < api->nparams; i++)
      if (!same_param(&api->params[i], pt_json_at(a->args, i), pt_json_at(b->args, i), p))
        return false;
  }
  return true;
}

/* Exchanges what the paired ids stand for (twice undoes it). */
static void swap_ids(const pairs *p)
{
  for (size_t k = 0; k < p->n; k++) {
    uint64_t x = to_app(p->a[k]), y = to_app(p->b[k]);
    remap(x, p->b[k]);
    remap(y, p->a[k]);
  }
}

static void swap_threads(rthread *t, rthread *u)
{
  for (size_t k = 0; k < R.nbound; k++)
    R.bound[k] = R.bound[k] == t ? u : R.bound[k] == u ? t : R.bound[k];
  bool taken = t->taken;
  t->taken = u->taken;
  u->taken = taken;
}

/* Another recorded thread this application thread should follow, swapped
 * with its own: one as far along (followed by the application thread that
 * took this one's place), or one nobody follows yet (which this one's
 * place is then left for); NULL if none takes this call. */
static rthread *rebind(rthread *t, const pi_api_desc *api, const uint64_t *argv)
{
  char why[8];
  pairs p;
  for (size_t k = 0; t && k < R.nthreads; k++) {
    rthread *u = &R.threads[k];
    bool fresh = !u->taken && u->next == 0;
    if (u == t || (u->next != t->next && !fresh) || u->n <= t->next ||
        !same_start(t, u, t->next, &p))
      continue;
    const pt_call *c = &R.s.calls.v[u->calls[t->next]];
    swap_ids(&p);
    if (is_call(c, api, argv, why, sizeof why)) {
      if (fresh) {
        u->next = t->next;
        t->next = 0;
      }
      swap_threads(t, u);
      return u;
    }
    swap_ids(&p);
  }
  return NULL;
}

static pi_result deviate(const pi_api_desc *api, const rthread *t, const pt_call *c,
                         const char *why)
{
  const pi_api_desc *want = c ? rp_api(c) : NULL;
  if (!c)
    snprintf(R.message, sizeof R.message, "the application deviates from the recording %.1000s: "
             "the recording has no further call for this %s; got %s", R.s.db.path,
             on_callback_thread ? "callback" : "thread", api->name);
  else if (c->api != api->id || !c->returned)
    snprintf(R.message, sizeof R.message, "the application deviates from the recording %.1000s at "
             "seq %lld (thread %u): expected %s%s, got %s", R.s.db.path, (long long)c->seq,
             t->recorded, want ? want->name : "?",
             c->returned ? "" : " (which never returned when recorded)", api->name);
  else
    snprintf(R.message, sizeof R.message, "the application deviates from the recording %.1000s at "
             "seq %lld (thread %u): expected %s%s", R.s.db.path, (long long)c->seq,
             t->recorded, api->name, why);
  fprintf(stderr, "pitrace replay plugin: %s\n", R.message);
  R.stopped = true;
  return PI_ERROR_INVALID_OPERATION;
}

static pi_result answer_locked(pi_api_id id, uint64_t *argv, const pt_call **matched)
{
  const pi_api_desc *api = pi_api_get(id);
  if (id == PI_API_piPluginGetLastError && R.stopped) {
    put(argv[0], (uint64_t)(uintptr_t)R.message, sizeof(char *));
    return PI_SUCCESS;
  }
  if (R.stopped || !R.loaded)
    return PI_ERROR_INVALID_OPERATION;
  /* A callback's call: the next call of a recorded thread no application
   * thread follows (the implementation's), or of the setting thread's (an
   * implementation that ran it at once, inside piEventSetCallback: that
   * thread is held meanwhile, its next recorded call being later). */
  for (size_t k = 0; on_callback_thread && k <= R.nthreads; k++) {
    rthread *u = k < R.nthreads ? &R.threads[k] : cb_setter;
    const pt_call *uc = u && u->next < u->n ? &R.s.calls.v[u->calls[u->next]] : NULL;
    char no[8];
    if (uc && (!u->taken || u == cb_setter) && is_call(uc, api, argv, no, sizeof no)) {
      u->next++;
      *matched = uc;
      return give(api, uc, argv);
    }
  }
  rthread *t = on_callback_thread ? NULL : my_thread(api, argv);
  const pt_call *c = t && t->next < t->n ? &R.s.calls.v[t->calls[t->next]] : NULL;
  char why[768] = "";
  rthread *other = NULL;
  if ((c && is_call(c, api, argv, why, sizeof why)) ||
      (other = rebind(t, api, argv))) {
    t = other ? other : t;
    c = &R.s.calls.v[t->calls[t->next++]];
    *matched = c;
    return give(api, c, argv);
  }
  const pt_call *same = rp_info_param(api) >= 0 ? same_query(api, argv) : NULL;
  if (same)
    return give(api, same, argv);
  if (id == PI_API_piPlatformGetInfo && argv[1] == PI_EXT_PLATFORM_INFO_BACKEND)
    return give_backend(argv);
  return deviate(api, t, c, why);
}

static void unload(void)
{
  for (size_t k = 0; k < R.nthreads; k++)
    free(R.threads[k].calls);
  free(R.threads);
  R.threads = NULL;
  R.nthreads = R.cap_threads = 0;
  free(R.bound);
  R.bound = NULL;
  R.nbound = R.cap_bound = 0;
  free(R.perm);
  R.perm = NULL;
  R.nperm = R.cap_perm = 0;
  for (size_t k = 0; k < R.nallocs; k++)
    free(R.allocs[k].p);
  free(R.allocs);
  R.allocs = NULL;
  R.nallocs = R.cap_allocs = 0;
  pt_free_notes(R.notes, R.nnotes);
  R.notes = NULL;
  R.nnotes = 0;
  R.notes_read = false;
  free(R.rcbs);
  R.rcbs = NULL;
  R.nrcbs = 0;
  cb_setter = NULL;
  free(R.cbs); /* those not run stay so: the application tore the runtime down */
  R.cbs = NULL;
  R.ncbs = R.cap_cbs = R.cb_first = 0;
  pthread_cond_broadcast(&R.progress);
  if (R.loaded)
    rp_session_close(&R.s);
  R.loaded = false;
}

static void hold_for_callbacks(void);
static void queue_callback(const uint64_t *argv, const pt_call *set);

static pi_result rp_answer(pi_api_id id, uint64_t *argv)
{
  pthread_mutex_lock(&R.lock);
  hold_for_callbacks();
  const pt_call *set = NULL;
  pi_result r = answer_locked(id, argv, &set);
  if (id == PI_API_piEventSetCallback && r == PI_SUCCESS && argv[2] && set)
    queue_callback(argv, set);
  if (id == PI_API_piTearDown)
    unload();
  pthread_cond_broadcast(&R.progress);
  pthread_mutex_unlock(&R.lock);
  return r;
}

/* ---- The application's event callbacks ------------------------------------------------
 * The application is live here: the callback it gives piEventSetCallback
 * is a function of this process, and it may count on it running (OpenCV
 * lets a kernel's buffers go once its completion callback has run). When
 * it ran decided what the application did next, so the recording says
 * where each began: the OpenCL front end's callback notes
 * (PIRT_NOTE_CALLBACK), which the recorder places after the last call
 * begun on any thread. The plugin runs an application's callback on a
 * thread of its own once every recorded call up to there has been
 * answered, and an application thread whose next recorded call comes
 * after that point waits until it has run (the callback's own calls go to
 * the recorded thread that made them, as any thread's). Callbacks the
 * recording never ran (or recorded before the notes) are not run. If a
 * callback's moment does not come within CB_WAIT_MS (the application
 * waits for it before a call the recording has before it), it runs then. */

#define CB_WAIT_MS 1000

/* The recording's notes, read when first needed (R.lock). */
static void read_notes(void)
{
  if (!R.notes_read) {
    R.notes = pt_load_notes(&R.s.db, R.s.id, &R.nnotes);
    R.notes_read = true;
  }
}

static int64_t next_seq(const rthread *t)
{
  return t->next < t->n ? R.s.calls.v[t->calls[t->next]].seq : INT64_MAX;
}

/* Whether every recorded call up to `after` has been answered (R.lock). */
static bool answered_up_to(int64_t after)
{
  for (size_t k = 0; k < R.nthreads; k++)
    if (next_seq(&R.threads[k]) <= after)
      return false;
  return true;
}

static void deadline(struct timespec *t)
{
  clock_gettime(CLOCK_REALTIME, t);
  t->tv_nsec += (CB_WAIT_MS % 1000) * 1000000L;
  t->tv_sec += CB_WAIT_MS / 1000 + t->tv_nsec / 1000000000L;
  t->tv_nsec %= 1000000000L;
}

/* The first callback, as the recording's threads began them, not started
 * yet (`running`: or not finished yet); NULL when none. Those before
 * R.cb_first have all finished (R.lock). */
static struct app_callback *next_callback(bool running)
{
  while (R.cb_first < R.ncbs && R.cbs[R.cb_first].finished)
    R.cb_first++;
  struct app_callback *first = NULL;
  for (size_t k = R.cb_first; k < R.ncbs; k++) {
    struct app_callback *c = &R.cbs[k];
    if (!(running ? c->finished : c->started) &&
        (!first || c->after < first->after ||
         (c->after == first->after && c->order < first->order)))
      first = c;
  }
  return first;
}

static void *callback_main(void *arg)
{
  (void)arg;
  on_callback_thread = true;
  pthread_mutex_lock(&R.lock);
  size_t waiting_for = SIZE_MAX; /* the callback whose moment is awaited (its order) */
  struct timespec until = {0, 0};
  for (;;) {
    struct app_callback *c = next_callback(false);
    if (!c) {
      pthread_cond_wait(&R.progress, &R.lock);
      continue;
    }
    if (c->order != waiting_for) {
      waiting_for = c->order;
      deadline(&until);
    }
    if (R.loaded && !R.stopped && !answered_up_to(c->after) &&
        pthread_cond_timedwait(&R.progress, &R.lock, &until) == 0)
      continue; /* something was answered: look again */
    c->started = true; /* due, or its moment did not come in time */
    size_t k = (size_t)(c - R.cbs); /* R.cbs may move meanwhile */
    struct app_callback run = *c;
    unsigned load = R.loads;
    cb_setter = run.setter;
    pthread_mutex_unlock(&R.lock);
    run.fn(run.event, run.status, run.user);
    pthread_mutex_lock(&R.lock);
    cb_setter = NULL;
    if (load == R.loads && k < R.ncbs) /* not torn down meanwhile */
      R.cbs[k].finished = true;
    pthread_cond_broadcast(&R.progress);
  }
  return NULL;
}

/* An application thread whose next recorded call comes after a callback's
 * moment waits until that callback has run (R.lock). */
static void hold_for_callbacks(void)
{
  if (on_callback_thread || !my_slot || my_load != R.loads)
    return;
  struct timespec until;
  deadline(&until);
  const struct app_callback *c;
  while ((c = next_callback(true)) && R.loaded && !R.stopped &&
         next_seq(R.bound[my_slot - 1]) > c->after &&
         pthread_cond_timedwait(&R.progress, &R.lock, &until) == 0)
    ;
}

/* The callbacks the recording ran, from its notes (R.lock). */
static void read_callbacks(void)
{
  read_notes();
  if (R.rcbs)
    return;
  R.rcbs = calloc(R.nnotes ? R.nnotes : 1, sizeof *R.rcbs);
  for (size_t k = 0; R.rcbs && k < R.nnotes; k++) {
    uint64_t v[2];
    if (strcmp(R.notes[k].kind, pi_note_kind_name(PIRT_NOTE_CALLBACK)) == 0 &&
        pt_note_value(&R.notes[k], v, sizeof v) == sizeof v)
      R.rcbs[R.nrcbs++] = (struct rec_callback){v[0], (int64_t)v[1], false};
  }
}

/* The application set a callback where the recording did (call `set`):
 * queued to run where the recording's began, if it ran (R.lock). */
static void queue_callback(const uint64_t *argv, const pt_call *set)
{
  pt_ref user = pt_ref_of(pt_json_at(set->args, 3));
  if (user.kind != PT_REF_NUMBER) /* no user data: nothing tells its note */
    return;
  read_callbacks();
  struct rec_callback *rc = NULL;
  for (size_t k = 0; k < R.nrcbs && !rc; k++)
    if (!R.rcbs[k].taken && R.rcbs[k].user == user.value && R.rcbs[k].after >= set->seq)
      rc = &R.rcbs[k];
  if (!rc)
    return;
  rc->taken = true;
  static pthread_t thread;
  static bool started;
  if (!started) {
    pthread_attr_t a;
    sigset_t all, old;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the application's threads take signals */
    started = pthread_create(&thread, &a, callback_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
  }
  struct app_callback cb = {(event_callback)(uintptr_t)argv[2], (pi_event)(uintptr_t)argv[0],
                            (pi_int32)argv[1], (void *)(uintptr_t)argv[3], rc->after,
                            (size_t)(rc - R.rcbs), false, false,
                            my_slot && my_load == R.loads ? R.bound[my_slot - 1] : NULL};
  if (started)
    rp_push(&R.cbs, &R.ncbs, &R.cap_cbs, sizeof cb, &cb);
}

/* ---- What the application learnt outside PI --------------------------------------------
 * pirt_recall_note (runtime/include/pirt.h): the value of the note of
 * `kind` just before the recorded call the calling thread is to make next,
 * where the recording ties a note (docs/notes.md). The OpenCL front end
 * asks the image formats it had from the implementation this way: no PI
 * call asks them, and there is no implementation to ask here. */

static size_t recall_locked(int kind, void *value, size_t size)
{
  if (R.stopped || !R.loaded || !my_slot || my_load != R.loads)
    return 0;
  const rthread *t = R.bound[my_slot - 1];
  if (!t || t->next >= t->n)
    return 0;
  read_notes();
  size_t n = 0;
  const pt_note *at = pt_notes_at(R.notes, R.nnotes, R.s.calls.v[t->calls[t->next]].seq, &n);
  for (size_t k = 0; at && k < n; k++)
    if (strcmp(at[k].kind, pi_note_kind_name((unsigned)kind)) == 0)
      return pt_note_value(&at[k], value, size);
  return 0;
}

PI_PLUGIN_EXPORT size_t pitrace_recall_note(int kind, void *value, size_t size)
{
  pthread_mutex_lock(&R.lock);
  size_t n = recall_locked(kind, value, size);
  pthread_mutex_unlock(&R.lock);
  return n;
}

/* ---- Loading ------------------------------------------------------------------------------ */

static rthread *thread_for(uint32_t recorded)
{
  for (size_t k = 0; k < R.nthreads; k++)
    if (R.threads[k].recorded == recorded)
      return &R.threads[k];
  rthread t = {recorded, malloc(R.s.calls.n * sizeof *t.calls), 0, 0, false};
  if (!t.calls || !rp_push(&R.threads, &R.nthreads, &R.cap_threads, sizeof t, &t)) {
    free(t.calls);
    return NULL;
  }
  return &R.threads[R.nthreads - 1];
}

/* The followed plugin's calls, split by thread in seq order. */
static bool split_threads(void)
{
  bool any_platforms = false;
  for (uint32_t k = 0; k < R.s.nplugins; k++)
    if (R.s.plugins[k].had_platforms && !any_platforms)
      R.plugin = k, any_platforms = true;
  if (R.s.device_id)
    R.plugin = R.s.device_plugin;
  for (size_t i = 0; i < R.s.calls.n; i++) {
    if (R.s.calls.v[i].plugin != R.plugin)
      continue;
    rthread *t = thread_for(R.s.calls.v[i].thread);
    if (!t)
      return false;
    t->calls[t->n++] = i;
  }
  return true;
}

PI_PLUGIN_EXPORT pi_result piPluginInit(pi_plugin *p)
{
  const char *path = getenv("SYCL_PI_REPLAY");
  char err[1536];
  if (!path || !*path) {
    fprintf(stderr, "pitrace replay plugin: SYCL_PI_REPLAY names no session database\n");
    return PI_ERROR_INVALID_VALUE;
  }
  pthread_mutex_lock(&R.lock);
  unload();
  bool ok = rp_session_open(&R.s, path, -1, err, sizeof err);
  R.loaded = ok;
  R.stopped = false;
  R.loads++;
  if (ok && !split_threads()) {
    snprintf(err, sizeof err, "out of memory loading %s", path);
    unload();
    ok = false;
  }
  pthread_mutex_unlock(&R.lock);
  if (!ok) {
    fprintf(stderr, "pitrace replay plugin: %s\n", err);
    return PI_ERROR_INVALID_VALUE;
  }
  snprintf(p->PluginVersion, sizeof p->PluginVersion, "%s", _PI_H_VERSION_STRING);
  rp_fill_table(&p->PiFunctionTable);
  return PI_SUCCESS;
}
