/*
 * shim.c: the recording shim, application side. It wraps any plugin's
 * function table (the wrappers are generated from the API description:
 * shim_gen.h), and for each call writes what the call reads before it runs
 * and what it produced after it returns, into the calling thread's ring.
 * session/writer.c turns the rings into the SQLite session.
 *
 * What is captured is decided by each parameter's kind in the description
 * (runtime/api/pi.api), not per function: arrays by their count, buffers by
 * their size, strings, property lists, images, info-query values by their
 * returned size. The special cases are hooks below: data that a
 * non-blocking call writes is captured when it is really complete (the
 * call's event or queue completes), regions written through a map are
 * captured at unmap, rectangles and images by their computed extent.
 *
 * Turned on by SYCL_PI_RECORD=PATH (the runtime then binds the shim in front
 * of every plugin), or by naming libpi_shim.so in the plugins config with
 * target=PLUGIN. Controls: SYCL_PI_RECORD_LABEL, SYCL_PI_RECORD_DATA
 * (none|meta|all), SYCL_PI_RECORD_DATA_CAP (bytes per payload),
 * SYCL_PI_RECORD_BACKTRACE=1, SYCL_PI_RECORD_FILTER (API patterns),
 * SYCL_PI_RECORD_PROFILE=1 (device times: shim_prof.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "pi_signals.h"
#include "shim_internal.h"

/* Records are ordered by their ticket: the time the record stands for
 * (a call's start or end, else when it was written), shifted left by 12 to
 * make room for the thread's index in the low bits (unique across threads),
 * and kept strictly increasing per thread. No cache line is shared: a
 * global counter made every call of every thread move one line between
 * cores. The writer merges the rings by ticket; a call that uses what
 * another thread's call made starts after that call returned, so its
 * ticket is larger (docs/architecture.md, the recorder). Stamps count from
 * the library's load; the writer compares tickets by their difference, so
 * they may wrap. */
static uint64_t ticket_base;

__attribute__((constructor)) static void set_ticket_base(void)
{
  stamp_init();
  ticket_base = shim_stamp();
}

static _Atomic uint32_t thread_counter;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
/* The session's number in this process: the shim stays loaded after its
 * session ended when the runtime kept its plugins (a thread still counted
 * as its user at its end: runtime/src/global.c), and a runtime loaded
 * again then begins another session with it (begin_again). A thread's
 * ring of an earlier session is left with that session. */
static _Atomic uint32_t session_gen;
/* Whether the session began: read without the lock on every call (and
 * by the ends, which other threads may reach at once), so atomic. */
static _Atomic bool started;
static bool start_failed; /* under start_lock */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t torn_down;

#define INLINE_MAX (64u << 10) /* payloads above this go through the heap */
#define MAX_ITEMS 64

/* ---- Rings -------------------------------------------------------------------- */

/* The calling thread's recording state, in one block: a call finds it
 * with one address computation. initial-exec: it is read on every call,
 * and the general dynamic model of a dlopened library goes through
 * __tls_get_addr each time. */
typedef struct thread_rec {
  shim_ring *ring;
  size_t pending;       /* the ring's head once the reserved record is committed */
  uint64_t last_ticket; /* of the thread's last record */
  uint64_t *stacks_named; /* hashes of the stacks it named (name_stack), by slot */
  rec_entry *forming;     /* the entry whose items it copies now (settle_forming) */
  rec_item *forming_item; /* the item it copies now, the forming_n-th */
  uint32_t forming_n;
  uint8_t capturing_inst;     /* the instance of the call whose data it looks at now */
  const shim_call *capturing; /* that call (api and argv set), before its entry exists */
  uint32_t gen; /* the session_gen its ring is of */
} thread_rec;
static __thread thread_rec me __attribute__((tls_model("initial-exec")));
static pthread_key_t ring_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* The thread exits: its ring goes to the next new thread, which writes
 * after this one's records (ringfile_give_back). A call the thread makes
 * later in its exit (another key's destructor) takes a ring of its own.
 * Not in a child forked from a recording process (fork_child): the ring,
 * in the file both map, is its parent's thread's. */
static void ring_thread_exit(void *p)
{
  shim_ring *r = p;
  bool mine = me.ring == r && me.gen == atomic_load(&session_gen) &&
              atomic_load(&shim_recording);
  me.ring = NULL;
  free(me.stacks_named);
  me.stacks_named = NULL;
  if (mine) {
    r->handed_ticket = me.last_ticket;
    ringfile_give_back(r);
  }
}

static void make_key(void) { pthread_key_create(&ring_key, ring_thread_exit); }

#define STACKS_NAMED 512 /* a thread's stacks remembered as named, by hash */

shim_ring *shim_thread_ring(void)
{
  uint32_t gen = atomic_load_explicit(&session_gen, memory_order_acquire);
  if (PIRT_LIKELY(me.ring != NULL && me.gen == gen))
    return me.ring;
  if (me.gen != gen) {
    /* A ring of an earlier session of this process stays with it. The
     * stacks named there are unknown to this one. */
    me.ring = NULL;
    me.last_ticket = 0;
    if (me.stacks_named)
      memset(me.stacks_named, 0, STACKS_NAMED * sizeof *me.stacks_named);
    me.gen = gen;
  }
  bool reused;
  shim_ring *r = ringfile_new_ring(atomic_fetch_add(&thread_counter, 1) + 1, &reused);
  if (!r)
    return NULL;
  pthread_once(&key_once, make_key);
  pthread_setspecific(ring_key, r);
  me.last_ticket = r->handed_ticket; /* 0 for a new ring */
  if (!reused) {
    shim_ring *head = atomic_load(&shim_rings);
    do
      r->next = head;
    while (!atomic_compare_exchange_weak(&shim_rings, &head, r));
  }
  me.ring = r;
  rec_thread *t = shim_reserve(sizeof *t);
  if (t) {
    t->h.type = REC_THREAD;
    t->index = r->thread_index;
    t->tid = (int32_t)syscall(SYS_gettid);
    shim_commit(t);
  }
  return r;
}

#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)

/* libunwind's unw_backtrace, loaded only when stacks are recorded: a
 * recording process without them does not load libunwind and liblzma
 * (part of the recorder's fixed cost, bench_fixed). */
static int (*unwind_backtrace)(void **, int);

static bool load_unwind(const char *setting)
{
  typedef __typeof__(unw_backtrace) backtrace_fn;
  void *h = dlopen(PITRACE_UNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);
  backtrace_fn *f = h ? (backtrace_fn *)(uintptr_t)dlsym(h, "unw_backtrace") : NULL;
  if (!f) {
    fprintf(stderr, "pitrace: SYCL_PI_RECORD_BACKTRACE=%s: cannot load unw_backtrace from %s "
                    "(%s); calls are recorded without their stacks\n", setting,
            PITRACE_UNWIND_SONAME, dlerror());
    return false;
  }
  unwind_backtrace = f;
  return true;
}

/* A record of `size` bytes (aligned) at the ring's head `head` that does
 * not fit before the ring's end, or not before what the writer still
 * holds: the wrap, the wait for the writer. */
__attribute__((noinline)) static void *reserve_slow(shim_ring *r, size_t head, size_t size)
{
  size_t off = head & (r->cap - 1);
  size_t need = size;
  bool wrap = off + size > r->cap;
  if (wrap)
    need += r->cap - off; /* the rest of the ring is skipped */
  for (unsigned spins = 0; head + need - r->tail_seen > r->cap &&
                           head + need - (r->tail_seen = atomic_load_explicit(
                                              &r->tail, memory_order_acquire)) > r->cap;
       spins++) {
    if (!atomic_load_explicit(&shim_recording, memory_order_relaxed))
      return NULL;
    /* The writer is behind: wait rather than lose calls, leaving it the
     * processor (a spinning producer would slow it down); it may be
     * napping. */
    if (spins == 0)
      writer_wake();
    if (spins < 16) {
      sched_yield();
    } else {
      struct timespec nap = {0, 50000};
      nanosleep(&nap, NULL);
    }
  }
  if (wrap) {
    if (r->cap - off >= sizeof(rec_hdr)) {
      rec_hdr *w = (rec_hdr *)(r->buf + off);
      w->type = REC_WRAP;
      w->size = (uint32_t)(r->cap - off);
    }
    head += r->cap - off;
    off = 0;
  }
  rec_hdr *h = (rec_hdr *)(r->buf + off);
  h->size = (uint32_t)size;
  h->flags = 0;
  me.pending = head + size;
  return h;
}

/* The fast path of shim_reserve: the record fits, no wrap, no wait. The
 * ring's capacity is a power of two (ringfile.c). */
static inline void *reserve(size_t size)
{
  shim_ring *r = me.ring;
  if (PIRT_UNLIKELY(!r) && !(r = shim_thread_ring()))
    return NULL;
  size = ALIGN8(size);
  size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
  size_t off = head & (r->cap - 1);
  if (PIRT_UNLIKELY(off + size > r->cap || head + size - r->tail_seen > r->cap))
    return reserve_slow(r, head, size);
  rec_hdr *h = (rec_hdr *)(r->buf + off);
  h->size = (uint32_t)size;
  h->flags = 0;
  me.pending = head + size;
  return h;
}

/* Whether the thread's ring is of this session: checked once a call
 * (shim_begin) and by the records made outside one, not by every
 * reserve. A ring of an earlier session is let go here; the next
 * reserve takes one of this session's (shim_thread_ring). */
static inline void check_session(void)
{
  if (PIRT_UNLIKELY(me.gen != atomic_load_explicit(&session_gen, memory_order_relaxed)))
    me.ring = NULL;
}

void *shim_reserve(size_t size)
{
  check_session();
  return reserve(size);
}

/* Publishes the reserved record with its ticket, from its stamp t. */
static inline void commit_at(rec_hdr *h, uint64_t t)
{
  uint64_t v = ((t - ticket_base) << 12) | (me.ring->thread_index & 0xfffu);
  if (PIRT_UNLIKELY(v <= me.last_ticket))
    v = me.last_ticket + 0x1000u;
  h->ticket = me.last_ticket = v;
  atomic_store_explicit(&me.ring->head, me.pending, memory_order_release);
}

void shim_commit(void *rec)
{
  rec_hdr *h = rec;
  commit_at(h, h->type == REC_ENTRY  ? ((const rec_entry *)h)->t0
               : h->type == REC_EXIT ? ((const rec_exit *)h)->t1
                                     : shim_stamp());
}

/* ---- Configuration --------------------------------------------------------------- */

static void read_config(void)
{
  const char *p = getenv("SYCL_PI_RECORD");
  snprintf(shim_cfg.path, sizeof shim_cfg.path, "%s", p && *p ? p : "pitrace-%p.db");
  shim_cfg.path_len = strlen(p && *p ? p : "pitrace-%p.db");
  const char *label = getenv("SYCL_PI_RECORD_LABEL");
  snprintf(shim_cfg.label, sizeof shim_cfg.label, "%s", label ? label : "");
  const char *data = getenv("SYCL_PI_RECORD_DATA");
  shim_cfg.data_mode = DATA_ALL;
  if (data && *data) {
    if (strcmp(data, "none") == 0)
      shim_cfg.data_mode = DATA_NONE;
    else if (strcmp(data, "meta") == 0)
      shim_cfg.data_mode = DATA_META;
    else if (strcmp(data, "all") != 0)
      fprintf(stderr, "pitrace: SYCL_PI_RECORD_DATA=%s is not none, meta or all; "
                      "recording all data\n", data);
  }
  const char *cap = getenv("SYCL_PI_RECORD_DATA_CAP");
  shim_cfg.data_cap = 256u << 20;
  if (cap && *cap) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(cap, &end, 10);
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K')
      shift = 10, end++;
    else if (*end == 'm' || *end == 'M')
      shift = 20, end++;
    else if (*end == 'g' || *end == 'G')
      shift = 30, end++;
    /* No sign (strtoull takes "-1" as the largest number), and no size
     * that wraps (17179869184G was 0: nothing stored). */
    bool bad = *end || !(*cap >= '0' && *cap <= '9') || errno == ERANGE ||
               v > (UINT64_MAX >> shift);
    v <<= shift;
    if (bad)
      fprintf(stderr, "pitrace: SYCL_PI_RECORD_DATA_CAP=%s is not a size (like 64M); "
                      "keeping %llu bytes\n", cap, (unsigned long long)shim_cfg.data_cap);
    else
      shim_cfg.data_cap = v;
  }
  const char *prof = getenv("SYCL_PI_RECORD_PROFILE");
  shim_cfg.profile = prof && *prof && strcmp(prof, "0") != 0;
  if (prof && *prof && strcmp(prof, "0") != 0 && strcmp(prof, "1") != 0) {
    fprintf(stderr, "pitrace: SYCL_PI_RECORD_PROFILE=%s is not 0 or 1; not collecting "
                    "device times\n", prof);
    shim_cfg.profile = false;
  }
  shim_profiling = shim_cfg.profile;
  /* 0 or 1, as SYCL_PI_RECORD_PROFILE: "no", "off" and "false" turned
   * stacks on (anything but "0" did), without a word. */
  const char *bt = getenv("SYCL_PI_RECORD_BACKTRACE");
  bool bt_on = bt && *bt && strcmp(bt, "0") != 0;
  if (bt_on && strcmp(bt, "1") != 0) {
    fprintf(stderr, "pitrace: SYCL_PI_RECORD_BACKTRACE=%s is not 0 or 1; recording calls "
                    "without their stacks\n", bt);
    bt_on = false;
  }
  shim_cfg.backtrace = bt_on && load_unwind(bt);
  /* The filter: comma-separated glob patterns; a leading '-' excludes. */
  const char *f = getenv("SYCL_PI_RECORD_FILTER");
  memset(shim_cfg.api_on, 1, sizeof shim_cfg.api_on);
  if (f && *f) {
    snprintf(shim_cfg.filter, sizeof shim_cfg.filter, "%s", f);
    char *copy = strdup(f), *save = NULL;
    bool any_include = false;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
      any_include |= t[0] != '-';
    if (any_include)
      memset(shim_cfg.api_on, 0, sizeof shim_cfg.api_on);
    free(copy);
    copy = strdup(f);
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
      bool exclude = t[0] == '-', match[PI_API_COUNT];
      size_t matched = pi_api_glob(exclude ? t + 1 : t, match);
      for (uint32_t id = 0; id < PI_API_COUNT; id++)
        if (match[id])
          shim_cfg.api_on[id] = !exclude;
      if (!matched)
        fprintf(stderr, "pitrace: SYCL_PI_RECORD_FILTER: '%s' matches no PI function\n", t);
    }
    free(copy);
  }
}

/* ---- Capture ---------------------------------------------------------------------- */

typedef struct capture {
  uint8_t position, role;
  uint16_t index;
  const void *ptr;
  uint64_t size, full;
} capture;

typedef struct captures {
  capture v[MAX_ITEMS];
  unsigned n;
} captures;

static void add(captures *c, unsigned pos, uint8_t role, unsigned index,
                const void *ptr, uint64_t size)
{
  if (c->n == MAX_ITEMS || !ptr)
    return;
  uint64_t full = size;
  if (role == ITEM_IN || role == ITEM_OUT) {
    if (shim_cfg.data_mode == DATA_NONE)
      return;
    if (shim_cfg.data_mode == DATA_META ||
        atomic_load_explicit(&shim_data_dropped, memory_order_relaxed))
      size = 0;
    else if (size > shim_cfg.data_cap)
      size = shim_cfg.data_cap;
  }
  c->v[c->n++] = (capture){(uint8_t)pos, role, (uint16_t)index, ptr, size, full};
}

static uint64_t ref_of(const pi_param_ref r, const uint64_t *argv)
{
  return r.ref >= 0 ? argv[r.ref] : r.literal;
}

static size_t vt_size(uint8_t vt, const pi_enum_desc *en)
{
  switch (vt) {
  case PI_VT_U32: case PI_VT_I32: case PI_VT_BOOL: return 4;
  case PI_VT_CBOOL: return 1;
  case PI_VT_U64: return 8;
  case PI_VT_ENUM: case PI_VT_FLAGS: return en ? en->width : 4;
  default: return sizeof(void *);
  }
}

/* Bytes a rectangle spans in host memory: {x, y, z} origin, {w, h, d}. */
static uint64_t rect_extent(const size_t *origin, const size_t *region, size_t row,
                            size_t slice)
{
  if (!origin || !region || !region[0] || !region[1] || !region[2])
    return 0;
  if (!row)
    row = region[0];
  if (!slice)
    slice = row * region[1];
  return origin[2] * slice + origin[1] * row + origin[0] +
         (region[2] - 1) * slice + (region[1] - 1) * row + region[0];
}

/* The pixel size of every live image (how many bytes its transfers move),
 * from its piMemImageCreate until its last piMemRelease: the application's
 * references counted, as a program that makes images all the time (an
 * image editor) would fill any fixed table, and an image not in it would
 * have its data recorded as nothing. */
typedef struct image_info {
  uint64_t mem;
  size_t pixel;
  uint64_t refs;
} image_info;
static image_info *images;
static unsigned nimages, cap_images;
/* nimages, for the calls that release or retain memory to skip the lock
 * while no image lives (most programs make none). */
static _Atomic unsigned live_images;
static pthread_mutex_t side_lock = PTHREAD_MUTEX_INITIALIZER;

/* Bytes of one pixel of an image format (NULL: none). */
static size_t pixel_size(const pi_image_format *f)
{
  return f ? pi_image_element_size(f->image_channel_order, f->image_channel_data_type) : 0;
}

static size_t image_pixel(uint64_t mem)
{
  size_t px = 0;
  pthread_mutex_lock(&side_lock);
  for (unsigned i = 0; i < nimages; i++)
    if (images[i].mem == mem)
      px = images[i].pixel;
  pthread_mutex_unlock(&side_lock);
  return px;
}

/* Host ranges of USM allocations, so that data is only read from host
 * memory (a device allocation may not be readable from the host). */
typedef struct usm_range {
  uintptr_t base;
  size_t size;
} usm_range;
static usm_range usm[4096];
static unsigned nusm;

static bool is_usm(const void *p)
{
  uintptr_t a = (uintptr_t)p;
  bool hit = false;
  pthread_mutex_lock(&side_lock);
  for (unsigned i = 0; i < nusm && !hit; i++)
    hit = a >= usm[i].base && a < usm[i].base + usm[i].size;
  pthread_mutex_unlock(&side_lock);
  return hit;
}

/* Mapped regions, captured at unmap when mapped for writing. */
typedef struct mapping {
  uintptr_t ptr;
  size_t size;
  uint64_t flags;
} mapping;
static mapping maps[1024];
static unsigned nmaps;

/* Is this call blocking (a call with no blocking flag is)? */
static bool blocking(const pi_api_desc *api, const uint64_t *argv)
{
  return api->blocking < 0 || argv[api->blocking] != 0;
}

/* The host bytes a hostptr parameter covers. */
static uint64_t hostptr_extent(pi_api_id id, const uint64_t *argv)
{
  switch (id) {
  case PI_API_piEnqueueMemBufferReadRect:
  case PI_API_piEnqueueMemBufferWriteRect:
    return rect_extent((const size_t *)(uintptr_t)argv[4], (const size_t *)(uintptr_t)argv[5],
                       (size_t)argv[8], (size_t)argv[9]);
  case PI_API_piEnqueueMemImageRead:
  case PI_API_piEnqueueMemImageWrite: {
    /* A 1D image array's images are the region's rows, the row pitch apart
     * (as PoCL and Mesa read them). */
    size_t px = image_pixel(argv[1]);
    const size_t *region = (const size_t *)(uintptr_t)argv[4];
    if (!px || !region)
      return 0;
    size_t zero[3] = {0, 0, 0}, r[3] = {region[0] * px, region[1], region[2]};
    return rect_extent(zero, r, (size_t)argv[5], (size_t)argv[6]);
  }
  case PI_API_piMemImageCreate: /* whole padded scanlines and slices, as the implementation reads them */
    if (!(argv[1] & (PI_MEM_FLAGS_HOST_PTR_COPY | PI_MEM_FLAGS_HOST_PTR_USE)))
      return 0;
    return pi_image_host_extent((const pi_image_format *)(uintptr_t)argv[2],
                                (const pi_image_desc *)(uintptr_t)argv[3]);
  case PI_API_piEnqueueMemUnmap: {
    uint64_t size = 0;
    pthread_mutex_lock(&side_lock);
    for (unsigned i = 0; i < nmaps; i++)
      if (maps[i].ptr == argv[2] && (maps[i].flags & (PI_MAP_WRITE | PI_MAP_WRITE_INVALIDATE_REGION)))
        size = maps[i].size;
    pthread_mutex_unlock(&side_lock);
    return size;
  }
  default:
    return 0;
  }
}

/* What a call reads, from its parameters' kinds. */
static void capture_in(const pi_api_desc *api, const uint64_t *argv, captures *c)
{
  pi_api_id id = api->id;
  for (unsigned i = 0; i < api->nparams; i++) {
    const pi_param_desc *p = &api->params[i];
    const void *ptr = (const void *)(uintptr_t)argv[i];
    if (p->dir == PI_DIR_OUT || !ptr)
      continue;
    uint64_t n = ref_of(p->count, argv);
    switch (p->kind) {
    case PI_PK_HANDLES:
      add(c, i, ITEM_VALUE, 0, ptr, n * sizeof(void *));
      break;
    case PI_PK_ARRAY:
      add(c, i, ITEM_VALUE, 0, ptr, n * vt_size(p->vt, p->en));
      break;
    case PI_PK_STRING:
      add(c, i, ITEM_STRING, 0, ptr, strnlen(ptr, 1u << 20) + 1);
      break;
    case PI_PK_STRINGS: {
      const char *const *s = ptr;
      const size_t *lens = p->lengths >= 0 ? (const size_t *)(uintptr_t)argv[p->lengths] : NULL;
      for (uint64_t j = 0; j < n; j++)
        if (s[j])
          add(c, i, ITEM_IN, (unsigned)j, s[j], lens && lens[j] ? lens[j] : strlen(s[j]));
      break;
    }
    case PI_PK_BYTES:
      /* A device USM source is no host memory: its content comes from
       * earlier recorded operations. */
      if (id == PI_API_piMemBufferCreate &&
          !(argv[1] & (PI_MEM_FLAGS_HOST_PTR_COPY | PI_MEM_FLAGS_HOST_PTR_USE)))
        break;
      add(c, i, ITEM_IN, 0, ptr, n);
      break;
    case PI_PK_PROPS: {
      const intptr_t *kv = ptr;
      unsigned len = 0;
      while (len < 128 && kv[len])
        len += 2;
      add(c, i, ITEM_VALUE, 0, ptr, (len + 1) * sizeof(intptr_t));
      break;
    }
    case PI_PK_BINARIES: {
      const pi_device_binary *bins = ptr;
      for (uint64_t j = 0; j < n && bins[j]; j++) {
        const struct pi_device_binary_struct *b = bins[j];
        if (b->DeviceTargetSpec)
          add(c, i, ITEM_STRING, (unsigned)j, b->DeviceTargetSpec,
              strlen(b->DeviceTargetSpec) + 1);
        add(c, i, ITEM_META, (unsigned)j, &b->Format, 1);
        add(c, i, ITEM_IN, (unsigned)j, b->BinaryStart, (uint64_t)(b->BinaryEnd - b->BinaryStart));
      }
      break;
    }
    case PI_PK_BLOBS: {
      const unsigned char *const *bins = ptr;
      const size_t *lens = p->lengths >= 0 ? (const size_t *)(uintptr_t)argv[p->lengths] : NULL;
      for (uint64_t j = 0; lens && j < n; j++)
        add(c, i, ITEM_IN, (unsigned)j, bins[j], lens[j]);
      break;
    }
    case PI_PK_PROPERTIES: {
      const pi_device_binary_property *props = ptr;
      for (uint64_t j = 0; j < n; j++)
        if (props[j] && props[j]->Name)
          add(c, i, ITEM_STRING, (unsigned)j, props[j]->Name, strlen(props[j]->Name) + 1);
      break;
    }
    case PI_PK_IMAGE_FORMAT:
      add(c, i, ITEM_VALUE, 0, ptr, sizeof(pi_image_format));
      break;
    case PI_PK_IMAGE_DESC:
      add(c, i, ITEM_VALUE, 0, ptr, sizeof(pi_image_desc));
      break;
    case PI_PK_MEM_OBJ_PROPERTY:
      add(c, i, ITEM_VALUE, 0, ptr, sizeof(pi_mem_obj_property));
      break;
    case PI_PK_USMREF:
      add(c, i, ITEM_VALUE, 0, ptr, sizeof(void *));
      break;
    case PI_PK_HOSTPTR:
      if (p->dir == PI_DIR_IN) {
        uint64_t ext = hostptr_extent(id, argv);
        if (ext)
          add(c, i, ITEM_IN, 0, ptr, ext);
      }
      break;
    default:
      break;
    }
  }
  /* USM copies from host memory carry their data. */
  if ((id == PI_API_piextUSMEnqueueMemcpy && !is_usm((void *)(uintptr_t)argv[3])))
    add(c, 3, ITEM_IN, 0, (void *)(uintptr_t)argv[3], argv[4]);
  if (id == PI_API_piextUSMEnqueueMemcpy2D && !is_usm((void *)(uintptr_t)argv[4]) && argv[7])
    add(c, 4, ITEM_IN, 0, (void *)(uintptr_t)argv[4], argv[5] * (argv[7] - 1) + argv[6]);
}

/* ---- Data written by non-blocking calls -------------------------------------------
 * Kept until the call is known complete: its event is waited on or reported
 * complete, its queue finishes, or a blocking command follows on its
 * (in-order) queue. A finish or a blocking command completes only the reads
 * enqueued before it began: another thread's read enqueued on the queue
 * while it waited is not complete when it returns (its bytes were taken
 * before the device wrote them). Each read is numbered as it is kept
 * (pending_count), and such a call takes those numbered up to the count it
 * saw as it began (shim_call's reads_before). */

typedef struct pending_read {
  uint64_t number; /* pending_count when it was kept */
  uint64_t ticket;
  uint8_t position;
  uint64_t queue, event;
  const void *ptr;
  uint64_t size;
  /* The instance whose plugin the shim asked to retain `event` (when the
   * application released it before it was complete), else NULL. */
  const shim_instance *held;
} pending_read;

static pending_read pending[1024];
static unsigned npending;
static _Atomic unsigned npending_hint;
static _Atomic uint64_t pending_count; /* reads ever kept; changed under side_lock */

static void emit_readback(const pending_read *p)
{
  uint64_t size = p->size;
  if (shim_cfg.data_mode != DATA_ALL ||
      atomic_load_explicit(&shim_data_dropped, memory_order_relaxed))
    size = 0;
  else if (size > shim_cfg.data_cap)
    size = shim_cfg.data_cap;
  bool heap = size > INLINE_MAX;
  rec_readback *r = shim_reserve(sizeof *r + (heap ? sizeof(uint64_t) : size));
  if (!r)
    return;
  r->h.type = REC_READBACK;
  r->call_ticket = p->ticket;
  r->position = p->position;
  r->size = size;
  r->full_hi = (uint32_t)(p->size >> 32);
  r->full_lo = (uint32_t)p->size;
  r->heap = heap;
  if (heap) {
    uint64_t token = pt_payload_copy(p->ptr, size);
    if (!token)
      r->size = 0;
    memcpy(r + 1, &token, sizeof token);
  } else {
    memcpy(r + 1, p->ptr, size);
  }
  shim_commit(r);
}

/* The shim's hold on a pending read's event, let go once the read has
 * left the table (outside the side lock: a plugin's release may take
 * locks of its own). */
static void let_go(const pending_read *p)
{
  if (p->held)
    p->held->target.piEventRelease((pi_event)(uintptr_t)p->event);
}

/* Captures pending reads matching (queue, event); 0 matches any. A queue
 * matches only the reads numbered up to `upto`. */
static void flush_reads(uint64_t queue, uint64_t upto, const uint64_t *events,
                        uint64_t nevents, bool all)
{
  if (!atomic_load_explicit(&npending_hint, memory_order_relaxed))
    return;
  struct { /* the events held for the reads taken (16 KiB at most) */
    const shim_instance *held;
    uint64_t event;
  } gone[sizeof pending / sizeof *pending];
  unsigned ngone = 0;
  pthread_mutex_lock(&side_lock);
  unsigned w = 0;
  for (unsigned i = 0; i < npending; i++) {
    const pending_read *p = &pending[i];
    bool hit = all || (queue && p->queue == queue && p->number <= upto);
    for (uint64_t e = 0; !hit && e < nevents; e++)
      hit = p->event && p->event == events[e];
    if (!hit)
      pending[w++] = *p;
    else if (emit_readback(p), p->held) {
      gone[ngone].held = p->held;
      gone[ngone++].event = p->event;
    }
  }
  npending = w;
  atomic_store(&npending_hint, npending);
  pthread_mutex_unlock(&side_lock);
  for (unsigned i = 0; i < ngone; i++)
    let_go(&(pending_read){.held = gone[i].held, .event = gone[i].event});
}

/* Whether the plugin says `event` is complete. */
static bool event_complete(const shim_instance *inst, uint64_t event)
{
  pi_int32 status = -1;
  return event && inst->target.piEventGetInfo &&
         inst->target.piEventGetInfo((pi_event)(uintptr_t)event,
                                     PI_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof status,
                                     &status, NULL) == PI_SUCCESS &&
         status == PI_EVENT_COMPLETE;
}

/* Takes out the first pending read on `ptr` (when ptr), else the first
 * that waits on `event` and is not held yet; false when there is none. */
static bool take_pending(uint64_t ptr, uint64_t event, pending_read *out)
{
  bool found = false;
  pthread_mutex_lock(&side_lock);
  for (unsigned i = 0; i < npending && !found; i++)
    if (ptr ? (uint64_t)(uintptr_t)pending[i].ptr == ptr
            : pending[i].event == event && !pending[i].held) {
      *out = pending[i];
      memmove(&pending[i], &pending[i + 1], (npending - i - 1) * sizeof *pending);
      npending--;
      atomic_store(&npending_hint, npending);
      found = true;
    }
  pthread_mutex_unlock(&side_lock);
  return found;
}

static void put_pending(const pending_read *p)
{
  pending_read over = {0};
  pthread_mutex_lock(&side_lock);
  if (npending == sizeof pending / sizeof *pending) {
    over = pending[--npending];
    emit_readback(&over); /* best effort when overfull */
  }
  pending[npending] = *p;
  if (!p->number) /* a new read, not one put back */
    pending[npending].number = atomic_fetch_add(&pending_count, 1) + 1;
  npending++;
  atomic_store(&npending_hint, npending);
  pthread_mutex_unlock(&side_lock);
  let_go(&over);
}

/* Before an unmap: a map's read still pending is taken now if its event
 * says it is complete, else dropped (no wait was asked for, so nothing
 * read the bytes): after the unmap the pointer may be gone. The event is
 * asked outside the side lock: a plugin may hold the event's own lock
 * while it runs the application's callback, which may call through the
 * shim and take the side lock. */
static void settle_map_read(const shim_instance *inst, uint64_t mapped)
{
  pending_read p;
  while (mapped && atomic_load_explicit(&npending_hint, memory_order_relaxed) &&
         take_pending(mapped, 0, &p)) {
    if (event_complete(p.held ? p.held : inst, p.event))
      emit_readback(&p);
    let_go(&p);
  }
}

/* Before the application releases `event` (while it surely lives): the
 * reads that wait on it are taken now if it is complete. Else the shim
 * holds the event (the plugin's own retain) until they are taken: after
 * the application's last release the event would be freed (and an unmap
 * would ask a freed event its status) or its handle reused by another
 * command's event (whose wait would take these reads early). */
static void settle_released_event(const shim_instance *inst, uint64_t event)
{
  if (!event || !atomic_load_explicit(&npending_hint, memory_order_relaxed))
    return;
  int complete = -1; /* asked once a read is found: most releases have none */
  pending_read p;
  while (take_pending(0, event, &p)) {
    if (complete < 0)
      complete = event_complete(inst, event);
    if (complete) {
      emit_readback(&p);
      continue;
    }
    if (inst->target.piEventRetain &&
        inst->target.piEventRetain((pi_event)(uintptr_t)event) == PI_SUCCESS)
      p.held = inst;
    else
      p.event = 0; /* left to its queue's end */
    put_pending(&p);
  }
}

/* The shim's callback as a deferred read's event completes: its bytes are
 * taken then, before the application, told by its own callback, changes
 * them (a map for reading and writing, filled in after its callback, was
 * kept as the application left it at the unmap). A wait that came first
 * took them already. */
static void read_complete(pi_event event, pi_int32 status, void *user)
{
  (void)status; /* a command that failed: its bytes are kept as a wait would */
  (void)user;
  uint64_t e = (uint64_t)(uintptr_t)event;
  flush_reads(0, 0, &e, 1, false);
}

/* Keeps the shim loaded to the process's end once a plugin holds a
 * callback into it (a command that never completes before the runtime
 * unloads its plugins would call into unmapped code). */
static void pin_shim(void)
{
  static atomic_bool pinned;
  Dl_info self;
  if (!atomic_load_explicit(&pinned, memory_order_relaxed) &&
      dladdr((void *)pin_shim, &self) && self.dli_fname &&
      dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
    atomic_store(&pinned, true);
}

/* Whether a read the shim keeps waits on `event`. */
static bool reads_wait_on(uint64_t event)
{
  bool any = false;
  pthread_mutex_lock(&side_lock);
  for (unsigned i = 0; i < npending && !any; i++)
    any = pending[i].event == event;
  pthread_mutex_unlock(&side_lock);
  return any;
}

/* The application's callback, behind the shim's (shim_callback_pass). */
typedef struct callback_wrap {
  void (*fn)(pi_event, pi_int32, void *);
  void *user;
} callback_wrap;

/* Takes the reads that wait on the event, then calls the application's
 * callback: in the thread that runs it, before it. */
static void reads_then_callback(pi_event event, pi_int32 status, void *data)
{
  callback_wrap w = *(callback_wrap *)data;
  free(data);
  read_complete(event, status, NULL);
  w.fn(event, status, w.user);
}

/* Where reads wait on the event the application sets a callback on, the
 * plugin gets the shim's callback for it (reads_then_callback), so that
 * their bytes are taken before the application's runs, which may change
 * them (a map's). A callback of the shim's set beside the application's,
 * first (implementations call an event's callbacks in the order they were
 * set), lost that race when the event completed between the two: PoCL
 * hands the callbacks set before the end to a thread of its own and calls
 * one set after it at once. Only then: a callback costs the plugin a
 * thread's wake-up (15-20 us a read on PoCL), and a program that waits or
 * asks the status is seen doing so. A callback on an earlier status
 * (submitted, running) is the application's alone; the shim sets its own
 * for the end beside it. */
void *shim_callback_pass(const shim_instance *inst, pi_api_id id, uint64_t *pass)
{
  (void)id; /* piEventSetCallback: event, status, callback, user data */
  uint64_t event = pass[0];
  if (!event || shim_cfg.data_mode != DATA_ALL || !pass[2] ||
      !atomic_load_explicit(&npending_hint, memory_order_relaxed) || !reads_wait_on(event))
    return NULL;
  pin_shim(); /* the plugin holds a callback of the shim's */
  if ((pi_int32)pass[1] != PI_EVENT_COMPLETE) {
    if (inst->target.piEventSetCallback)
      (void)inst->target.piEventSetCallback((pi_event)(uintptr_t)event, PI_EVENT_COMPLETE,
                                            read_complete, NULL);
    return NULL;
  }
  callback_wrap *w = malloc(sizeof *w);
  if (!w)
    return NULL; /* taken at the next wait, finish or release, as without a callback */
  *w = (callback_wrap){(void (*)(pi_event, pi_int32, void *))(uintptr_t)pass[2],
                       (void *)(uintptr_t)pass[3]};
  pass[2] = (uint64_t)(uintptr_t)reads_then_callback;
  pass[3] = (uint64_t)(uintptr_t)w;
  return w;
}

void shim_callback_passed(void *wrap, pi_result r)
{
  if (r != PI_SUCCESS) /* never called */
    free(wrap);
}

static void defer_read(uint64_t ticket, unsigned position, uint64_t queue, uint64_t event,
                       const void *ptr, uint64_t size)
{
  put_pending(
      &(pending_read){0, ticket, (uint8_t)position, queue, event, ptr, size, NULL});
}

/* What a successful call produced, and the side tables it changes. */
static void capture_out(shim_call *call, const pi_api_desc *api, const uint64_t *argv,
                        captures *c)
{
  pi_api_id id = api->id;
  bool blocks = blocking(api, argv);
  int qi = pi_api_table[id].queue, ei = pi_api_table[id].event;
  for (unsigned i = 0; i < api->nparams; i++) {
    const pi_param_desc *p = &api->params[i];
    void *ptr = (void *)(uintptr_t)argv[i];
    if (p->dir == PI_DIR_IN || !ptr)
      continue;
    switch (p->kind) {
    case PI_PK_SCALAR:
      add(c, i, ITEM_VALUE, 0, ptr, vt_size(p->vt, p->en));
      break;
    case PI_PK_HANDLE:
      add(c, i, ITEM_VALUE, 0, ptr, sizeof(void *));
      break;
    case PI_PK_HANDLES:
    case PI_PK_ARRAY: {
      uint64_t n = ref_of(p->count, argv);
      for (unsigned j = 0; j < api->nparams; j++) /* what an out counter says */
        if (j != i && api->params[j].dir == PI_DIR_OUT && api->params[j].kind == PI_PK_SCALAR &&
            api->params[j].vt == PI_VT_U32 && argv[j]) {
          uint32_t written = *(const uint32_t *)(uintptr_t)argv[j];
          if (written < n)
            n = written;
        }
      add(c, i, ITEM_VALUE, 0, ptr,
          n * (p->kind == PI_PK_HANDLES ? sizeof(void *) : vt_size(p->vt, p->en)));
      break;
    }
    case PI_PK_STRING:
      if (*(char **)ptr)
        add(c, i, ITEM_STRING, 0, *(char **)ptr, strnlen(*(char **)ptr, 1u << 16) + 1);
      break;
    case PI_PK_INFO: {
      uint64_t size = ref_of(p->count, argv);
      /* Only the bytes the answer took (the wrapper asked for their count
       * where the application did not): the rest of the buffer is whatever
       * the application's memory held, not the call's answer. */
      const size_t *ret = argv[p->size_ret] ? (const size_t *)(uintptr_t)argv[p->size_ret]
                                            : call->written;
      if (ret && *ret < size)
        size = *ret;
      c->v[c->n < MAX_ITEMS ? c->n++ : c->n - 1] =
          (capture){(uint8_t)i, ITEM_VALUE, 0, ptr, size > 65536 ? 65536 : size, size};
      break;
    }
    case PI_PK_BYTES:
    case PI_PK_HOSTPTR: {
      uint64_t size = p->kind == PI_PK_BYTES ? ref_of(p->count, argv) : hostptr_extent(id, argv);
      if (!size)
        break;
      if (blocks)
        add(c, i, ITEM_OUT, 0, ptr, size);
      else
        defer_read(call->ticket, i, qi >= 0 ? argv[qi] : 0,
                   ei >= 0 && argv[ei] ? (uint64_t)*(void **)(uintptr_t)argv[ei] : 0, ptr, size);
      break;
    }
    default:
      break;
    }
  }
  /* USM copies into host memory: the data, when complete. */
  if (id == PI_API_piextUSMEnqueueMemcpy && !is_usm((void *)(uintptr_t)argv[2])) {
    if (blocks)
      add(c, 2, ITEM_OUT, 0, (void *)(uintptr_t)argv[2], argv[4]);
    else
      defer_read(call->ticket, 2, argv[0], argv[7] ? (uint64_t)*(void **)(uintptr_t)argv[7] : 0,
                 (void *)(uintptr_t)argv[2], argv[4]);
  }
  /* Side tables. */
  switch (id) {
  case PI_API_piextUSMHostAlloc:
  case PI_API_piextUSMDeviceAlloc:
  case PI_API_piextUSMSharedAlloc: {
    void *base = *(void **)(uintptr_t)argv[0];
    size_t size = (size_t)argv[id == PI_API_piextUSMHostAlloc ? 3 : 4];
    pthread_mutex_lock(&side_lock);
    if (nusm < sizeof usm / sizeof *usm)
      usm[nusm++] = (usm_range){(uintptr_t)base, size};
    pthread_mutex_unlock(&side_lock);
    break;
  }
  case PI_API_piextUSMFree:
    pthread_mutex_lock(&side_lock);
    for (unsigned i = 0; i < nusm; i++)
      if (usm[i].base == argv[1]) {
        usm[i] = usm[--nusm];
        break;
      }
    pthread_mutex_unlock(&side_lock);
    break;
  case PI_API_piMemImageCreate: {
    image_info im = {(uint64_t)(uintptr_t)*(void **)(uintptr_t)argv[5],
                     pixel_size((const pi_image_format *)(uintptr_t)argv[2]), 1};
    pthread_mutex_lock(&side_lock);
    unsigned i = 0;
    while (i < nimages && images[i].mem != im.mem) /* an address reused: that one is gone */
      i++;
    if (i == nimages && nimages == cap_images) {
      unsigned cap = cap_images ? cap_images * 2 : 64;
      image_info *v = realloc(images, cap * sizeof *v);
      if (v) {
        images = v;
        cap_images = cap;
      }
    }
    if (i < cap_images) {
      images[i] = im;
      if (i == nimages)
        atomic_store_explicit(&live_images, ++nimages, memory_order_relaxed);
    }
    pthread_mutex_unlock(&side_lock);
    break;
  }
  case PI_API_piMemRetain:
  case PI_API_piMemRelease:
    /* An image is in the table before its handle is returned, so a call
     * on it never finds the count 0. */
    if (!atomic_load_explicit(&live_images, memory_order_relaxed))
      break;
    pthread_mutex_lock(&side_lock);
    for (unsigned i = 0; i < nimages; i++)
      if (images[i].mem == argv[0]) {
        if (id == PI_API_piMemRetain)
          images[i].refs++;
        else if (--images[i].refs == 0)
          images[i] = images[--nimages];
        atomic_store_explicit(&live_images, nimages, memory_order_relaxed);
        break;
      }
    pthread_mutex_unlock(&side_lock);
    break;
  case PI_API_piEnqueueMemBufferMap: {
    void *mapped = *(void **)(uintptr_t)argv[9];
    pthread_mutex_lock(&side_lock);
    if (nmaps < sizeof maps / sizeof *maps)
      maps[nmaps++] = (mapping){(uintptr_t)mapped, (size_t)argv[5], argv[3]};
    pthread_mutex_unlock(&side_lock);
    if (blocks && (argv[3] & PI_MAP_READ))
      add(c, 9, ITEM_OUT, 0, mapped, argv[5]);
    else if (argv[3] & PI_MAP_READ) /* what it reads, once the map is complete */
      defer_read(call->ticket, 9, argv[0], argv[8] ? (uint64_t)*(void **)(uintptr_t)argv[8] : 0,
                 mapped, argv[5]);
    break;
  }
  default:
    break;
  }
}

/* Side effects at the end of a call that completes other calls. */
static void after_call(const shim_call *c, pi_result r)
{
  const pi_api_desc *api = c->api;
  const uint64_t *argv = c->argv;
  pi_api_id id = api->id;
  if (id == PI_API_piEnqueueMemUnmap) {
    pthread_mutex_lock(&side_lock);
    for (unsigned i = 0; i < nmaps; i++)
      if (maps[i].ptr == argv[2]) {
        maps[i] = maps[--nmaps];
        break;
      }
    pthread_mutex_unlock(&side_lock);
  }
  if (r != PI_SUCCESS)
    return;
  switch (id) {
  case PI_API_piQueueFinish:
    flush_reads(argv[0], c->reads_before, NULL, 0, false);
    shim_prof_sweep(false, (pi_queue)(uintptr_t)argv[0]);
    break;
  case PI_API_piEventsWait:
    flush_reads(0, 0, (const uint64_t *)(uintptr_t)argv[1], argv[0], false);
    shim_prof_sweep(false, NULL);
    break;
  case PI_API_piEventGetInfo:
    if (argv[1] == PI_EVENT_INFO_COMMAND_EXECUTION_STATUS && argv[3] &&
        *(const pi_int32 *)(uintptr_t)argv[3] == PI_EVENT_COMPLETE) {
      flush_reads(0, 0, &argv[0], 1, false);
      shim_prof_sweep(false, NULL);
    }
    break;
  case PI_API_piEventRelease:
    shim_prof_sweep(false, NULL);
    break;
  default:
    if (pi_api_table[id].blocking >= 0 && argv[pi_api_table[id].blocking]) {
      /* a blocking command on an in-order queue */
      flush_reads(argv[0], c->reads_before, NULL, 0, false);
      shim_prof_sweep(false, NULL);
    }
    break;
  }
}

/* ---- Records ------------------------------------------------------------------------ */

static size_t items_size(const captures *c)
{
  size_t n = 0;
  for (unsigned i = 0; i < c->n; i++)
    n += sizeof(rec_item) + ALIGN8(c->v[i].size > INLINE_MAX ? sizeof(uint64_t) : c->v[i].size);
  return n;
}

static void write_items(unsigned char *w, const captures *c)
{
  for (unsigned i = 0; i < c->n; i++) {
    const capture *k = &c->v[i];
    rec_item *it = (rec_item *)w;
    me.forming_item = it;
    me.forming_n = i;
    it->position = k->position;
    it->role = k->role;
    it->index = k->index;
    it->size = k->size;
    it->full = k->full;
    it->heap = k->size > INLINE_MAX;
    w += sizeof *it;
    if (it->heap) {
      uint64_t token = pt_payload_copy(k->ptr, k->size);
      if (!token)
        it->size = 0;
      memcpy(w, &token, sizeof token);
      w += sizeof token;
    } else {
      memcpy(w, k->ptr, k->size);
      w += ALIGN8(k->size);
    }
  }
}

static void ensure_handlers(void);

/* Starts the session on the first recorded call. */
static bool ensure_started(void)
{
  if (PIRT_LIKELY(atomic_load_explicit(&started, memory_order_acquire)))
    return true;
  pthread_mutex_lock(&start_lock);
  if (!atomic_load_explicit(&started, memory_order_relaxed) && !start_failed) {
    atomic_store(&shim_recording, true);
    if (writer_start())
      atomic_store_explicit(&started, true, memory_order_release);
    else {
      start_failed = true;
      atomic_store(&shim_recording, false);
    }
  }
  pthread_mutex_unlock(&start_lock);
  return atomic_load_explicit(&started, memory_order_relaxed);
}

/* Without a session (shim_trace_only): a call is only numbered, and a
 * device command on a known queue timed; its end runs the same
 * synchronisation hooks as a recorded call's. */
static _Atomic uint64_t trace_calls;
/* Device times only: the runtime that bound the instances ended (its
 * pitrace_shim_finish, or every instance torn down); a runtime loaded
 * again while the shim stayed binds them anew. */
static _Atomic bool devtimes_over;

static bool trace_only_begin(shim_call *c, pi_api_id id, const uint64_t *argv)
{
  c->trace_only = true;
  c->api = &pi_api_table[id];
  c->argv = argv;
  c->number = c->ticket = atomic_fetch_add_explicit(&trace_calls, 1, memory_order_relaxed) + 1;
  if (id == PI_API_piTearDown)
    shim_prof_sweep(true, NULL);
  c->devtime = (c->api->flags & PI_API_F_DEVICE_COMMAND) && shim_prof_wants(id, argv);
  return true;
}

/* A child forked from a recording process records a session of its own,
 * from its first call: the fork waits for the writer to commit and stand
 * still (writer_fork_prepare), with every lock of the recorder's taken,
 * so that the child finds none of them held and no SQLite connection in
 * use; the child then forgets its parent's session, rings and file. The
 * calls that only let go of what the child was given (releases, and the
 * teardown of a child that ends through exit, its parent's objects going
 * with it) do not begin a session, and a child that only runs another
 * program, as most do, records nothing. When the writer could not stand
 * still in time (waiting for another process's lock on the file), the
 * child is not recorded and says so at its first call. */
static pid_t forked_from;
static int fork_prepared;     /* writer_fork_prepare's answer, for the handlers after */
static bool forked_may_record; /* the parent's recorder stood still at the fork */
/* One fork at a time: glibc runs the handlers of two threads that fork at
 * once side by side, and the second's answer in fork_prepared overwrote
 * the first's, whose locks then stayed held for ever (the process hung:
 * two threads forking in a loop). */
static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;

static void fork_prepare(void)
{
  pthread_mutex_lock(&fork_lock);
  fork_prepared = WRITER_FORK_NONE;
  /* `started` is read under the start lock, which stays held through the
   * fork: a session begun meanwhile by another thread would leave its
   * locks (the ring file's, the payload file's) held in the child. */
  pthread_mutex_lock(&start_lock);
  if (!atomic_load(&shim_recording) || !atomic_load(&started))
    return;
  /* In the order the recorder nests them: the start, the side tables
   * (whose readbacks take rings), device times; then the session's. */
  pthread_mutex_lock(&side_lock);
  shim_prof_fork_lock();
  fork_prepared = writer_fork_prepare();
  if (fork_prepared == WRITER_FORK_NONE) {
    shim_prof_fork_unlock();
    pthread_mutex_unlock(&side_lock);
  }
}

static void fork_unlock(void)
{
  if (fork_prepared != WRITER_FORK_NONE) {
    shim_prof_fork_unlock();
    pthread_mutex_unlock(&side_lock);
  }
  pthread_mutex_unlock(&start_lock);
  pthread_mutex_unlock(&fork_lock);
}

static void fork_parent(void)
{
  writer_fork_parent(fork_prepared);
  fork_unlock();
}

static void fork_child(void)
{
  atomic_store(&torn_down, 0); /* the plugins' teardowns the child will see */
  if (fork_prepared == WRITER_FORK_PAUSED) {
    forked_from = getppid();
    atomic_store(&shim_recording, false);
    writer_fork_child(fork_prepared);
    shim_prof_fork_child();
    npending = 0; /* reads the parent's calls wait for */
    atomic_store(&npending_hint, 0);
    free(me.stacks_named); /* the parent's stacks, named into the parent's rings */
    me = (thread_rec){0};
    atomic_store(&started, false);
    start_failed = false;
    forked_may_record = true;
  } else if (fork_prepared == WRITER_FORK_BUSY) {
    forked_from = getppid();
    atomic_store(&shim_recording, false);
    forked_may_record = false; /* the rings and the writer are the parent's */
    writer_fork_child(fork_prepared);
  } else if (forked_from) {
    /* The parent is a forked child too, without a session of its own: one
     * that was not recorded or stopped (nor is this one; its rings, if
     * any, are the parent's), or one that had not begun (this one may,
     * naming it as its parent). */
    forked_from = getppid();
    if (atomic_load(&started))
      forked_may_record = false;
    else if (forked_may_record)
      writer_fork_unstarted_child();
  }
  fork_unlock();
}

/* A forked child's call while it records nothing: true once its own
 * session has begun (the call is recorded). */
__attribute__((noinline, cold)) static bool forked_child_call(pi_api_id id)
{
  const char *name = pi_api_table[id].name;
  size_t len = strlen(name);
  if (id == PI_API_piTearDown || (len > 7 && strcmp(name + len - 7, "Release") == 0))
    return false;
  if (forked_may_record)
    return ensure_started(); /* or writer_start said why not */
  static _Atomic bool said;
  if (!atomic_exchange(&said, true))
    fprintf(stderr, "pitrace: process %d, forked from recording process %d, is not recorded: "
                    "at the fork its parent's recorder could not stand still within a second "
                    "(it waited for another process's lock on the session file, or was "
                    "ending), and a child cannot share it; its PI calls pass through\n",
            (int)getpid(), (int)forked_from);
  return false;
}

/* A call stack named here, on the calling thread, the first time the
 * thread meets it (REC_STACK, before the call's entry): its modules are
 * loaded now, and the writer, which cannot ask the dynamic loader
 * (recorder.h), only looks its hash up. A stack another thread named
 * first is named again (the writer keeps the first). */
static void name_stack(const uintptr_t *frames, unsigned n)
{
  uint64_t hash = shim_stack_hash(frames, n);
  /* The ring first: its key's destructor frees the cache as the thread ends. */
  if (!shim_thread_ring() ||
      (!me.stacks_named && !(me.stacks_named = calloc(STACKS_NAMED, sizeof(uint64_t)))))
    return;
  uint64_t *slot = &me.stacks_named[hash % STACKS_NAMED];
  if (*slot == hash)
    return;
  size_t len;
  char *text = shim_stack_text(frames, n, true, &len);
  if (!text)
    return;
  if (len > (16u << 10))
    len = 16u << 10; /* 34 frames of 512 bytes at most: never more, really */
  rec_stack *r = reserve(sizeof *r + len);
  if (r) {
    r->h.type = REC_STACK;
    r->hash = hash;
    r->len = (uint32_t)len;
    r->pad = 0;
    memcpy(r + 1, text, len);
    commit_at(&r->h, shim_stamp());
    *slot = hash;
  }
  free(text);
}

bool shim_begin(shim_call *c, shim_instance *inst, pi_api_id id, const uint64_t *argv)
{
  c->devtime = false;
  c->written = NULL;
  c->trace_only = c->filtered = false;
  c->reads_before = atomic_load(&pending_count);
  if (!atomic_load_explicit(&shim_recording, memory_order_relaxed) &&
      !(PIRT_UNLIKELY(forked_from) && forked_child_call(id)))
    return PIRT_UNLIKELY(shim_trace_only) && trace_only_begin(c, id, argv);
  /* The last moment the plugins answer: the device times of what is
   * complete, and the clocks' second samples. */
  if (PIRT_UNLIKELY(shim_profiling) && id == PI_API_piTearDown)
    shim_prof_sweep(true, NULL);
  check_session();
  if (id == PI_API_piTearDown) /* every read still pending, while the events live */
    flush_reads(0, 0, NULL, 0, true);
  if (PIRT_UNLIKELY(shim_devtime_sink))
    c->number = atomic_fetch_add_explicit(&trace_calls, 1, memory_order_relaxed) + 1;
  if (id == PI_API_piEnqueueMemUnmap)
    settle_map_read(inst, argv[2]);
  else if (id == PI_API_piEventRelease)
    settle_released_event(inst, argv[0]);
  if (!shim_cfg.api_on[id]) {
    /* Left out of the session, but what follows a call still runs for it
     * (after_recorded): the reads a wait completes, device times, the
     * handlers, and at teardown the session's end (a filter without
     * piTearDown left every session "killed", its last calls unstored). */
    c->api = &pi_api_table[id];
    c->argv = argv;
    c->trace_only = c->filtered = true;
    return true;
  }
  const pi_api_desc *api = &pi_api_table[id];
  captures cap;
  cap.n = 0;
  c->api = api;
  c->argv = argv;
  me.capturing_inst = (uint8_t)(inst - shim_instances);
  me.capturing = c;
  capture_in(api, argv, &cap);
  me.capturing = NULL;
  void *frames[SHIM_MAX_FRAMES + 2];
  int nframes = 0;
  if (shim_cfg.backtrace) {
    nframes = unwind_backtrace(frames, SHIM_MAX_FRAMES + 2) - 2; /* not the shim's */
    if (nframes < 0)
      nframes = 0;
    if (nframes)
      name_stack((const uintptr_t *)(frames + 2), (unsigned)nframes);
  }
  size_t size = sizeof(rec_entry) + api->nparams * sizeof(uint64_t) +
                (size_t)nframes * sizeof(void *) + items_size(&cap);
  rec_entry *e = reserve(size);
  if (!e)
    return false;
  e->h.type = REC_ENTRY;
  e->h.api = (uint8_t)id;
  e->h.instance = (uint8_t)(inst - shim_instances);
  e->thread = me.ring->thread_index;
  e->nitems = (uint16_t)cap.n;
  e->nframes = (uint16_t)nframes;
  /* A few words: a loop, not memcpy's setup (a rep movs here, slow to
   * start on some processors). */
  for (unsigned i = 0; i < api->nparams; i++)
    e->argv[i] = argv[i];
  unsigned char *w = (unsigned char *)(e->argv + api->nparams);
  if (nframes) {
    memcpy(w, frames + 2, (size_t)nframes * sizeof(void *));
    w += (size_t)nframes * sizeof(void *);
  }
  if (cap.n) {
    me.forming = e;
    write_items(w, &cap);
    me.forming = NULL;
  }
  if (PIRT_UNLIKELY(shim_profiling) && (api->flags & PI_API_F_DEVICE_COMMAND) &&
      shim_prof_wants(id, argv)) {
    e->h.flags |= REC_F_DEVTIME;
    c->devtime = true;
  }
  e->t0 = shim_stamp_after_loads();
  commit_at(&e->h, e->t0);
  c->ticket = e->h.ticket;
  return true;
}

/* After a call of a recording process, recorded or filtered out. */
static void after_recorded(const pi_api_desc *api, pi_result r)
{
  if (api->flags & PI_API_F_STARTS_IMPL) /* its signal handlers over ours */
    ensure_handlers();
  if (api->id == PI_API_piTearDown && r == PI_SUCCESS &&
      atomic_fetch_add(&torn_down, 1) + 1 == atomic_load(&shim_ninstances))
    writer_finish("teardown", 0, 10000);
}

void shim_end(shim_call *c, pi_result r)
{
  if (PIRT_UNLIKELY(c->trace_only)) {
    after_call(c, r);
    if (c->filtered)
      after_recorded(c->api, r);
    else if (c->api->id == PI_API_piTearDown && r == PI_SUCCESS &&
             atomic_fetch_add(&torn_down, 1) + 1 == atomic_load(&shim_ninstances))
      atomic_store(&devtimes_over, true); /* device times only: the runtime's end */
    return;
  }
  uint64_t t1 = shim_stamp();
  const pi_api_desc *api = c->api;
  captures cap;
  cap.n = 0;
  if (r == PI_SUCCESS)
    capture_out(c, api, c->argv, &cap);
  rec_exit *x = reserve(sizeof *x + items_size(&cap));
  if (x) {
    x->h.type = REC_EXIT;
    x->h.api = (uint8_t)api->id;
    x->entry_ticket = c->ticket;
    x->t1 = t1;
    x->result = r;
    x->nitems = (uint16_t)cap.n;
    if (cap.n)
      write_items((unsigned char *)(x + 1), &cap);
    commit_at(&x->h, t1);
  }
  after_call(c, r);
  after_recorded(api, r);
}

/* ---- Notes from the runtime --------------------------------------------------------- */

PI_PLUGIN_EXPORT void pitrace_note_hook(const pirt_note *n)
{
  if (!atomic_load(&shim_recording) || !ensure_started())
    return;
  const char *s[5] = {n->kernel, n->device, n->symbol, n->image, n->symbolic_id};
  size_t strs = 0;
  for (int i = 0; i < 5; i++)
    strs += (s[i] ? strlen(s[i]) : 0) + 1;
  size_t text = n->text ? strlen(n->text) : 0;
  size_t size = sizeof(rec_note) + strs + n->num_ids * 4u + n->size + text;
  rec_note *r = shim_reserve(size);
  if (!r)
    return;
  r->h.type = REC_NOTE;
  r->kind = n->kind;
  r->native = n->native;
  r->num_ids = n->num_ids;
  r->text_len = (uint32_t)text;
  r->value_len = n->value ? n->size : 0;
  char *w = (char *)(r + 1);
  for (int i = 0; i < 5; i++) {
    size_t l = s[i] ? strlen(s[i]) : 0;
    memcpy(w, s[i] ? s[i] : "", l + 1);
    w += l + 1;
  }
  if (n->num_ids)
    memcpy(w, n->numeric_ids, n->num_ids * 4u);
  w += n->num_ids * 4u;
  if (n->value)
    memcpy(w, n->value, n->size);
  w += r->value_len;
  if (text)
    memcpy(w, n->text, text);
  shim_commit(r);
}

/* ---- Crashes ---------------------------------------------------------------------------
 * A fatal signal: the writer stores everything so far (the crashing call's
 * entry included) and marks the session ended by the signal; then the
 * previous handler (or the default action) runs. */

/* The handlers ours hands each signal on to, oldest first: [0] the one
 * ours replaced when the recording began, then each one installed over
 * ours since, that ours was put in front of again (LLVM inside PoCL
 * installs its own when it starts). A handler that gives a signal back
 * (LLVM's puts back the handler it replaced, ours, and raises the signal
 * again) leaves the chain: the one below it takes the signal. Without the
 * chain ours kept only the last one replaced, LLVM's, whose signal given
 * back looked like the end of the process: a recorded program with a
 * SIGINT or SIGTERM handler of its own (Python's KeyboardInterrupt) was
 * ended by the first ^C. */
#define CHAIN_MAX 8
static struct sigaction chain[PI_NFATAL][CHAIN_MAX];
static _Atomic int nchain[PI_NFATAL];
static _Atomic int crashing;
/* The signal whose handler in the chain put back ours (the handler it had
 * replaced) and returned: it has left the chain, and the signal, delivered
 * again (a fault coming back), goes to the handler below it, as it would
 * unrecorded, not to the default action. */
static _Atomic int handed_down;
static _Atomic bool handlers_installed;

static void on_fatal(int sig, siginfo_t *info, void *ctx);

/* The handler the dispositions name: libpi_sigfwd.so's, which stays when
 * the shim is unloaded (sigfwd.c says why) and calls on_fatal while the
 * shim is there; on_fatal itself when that library cannot be loaded. */
typedef void (*fatal_fn)(int, siginfo_t *, void *);
static fatal_fn front = on_fatal;
static void (*sigfwd_detach)(const struct sigaction *);
/* What an earlier shim left each signal to (libpi_sigfwd.so's record):
 * the chain's start where its handler is still in place. */
static struct sigaction inherited[PI_NFATAL];

/* Loads libpi_sigfwd.so from the shim's own directory, once, to stay. */
static void load_sigfwd(void)
{
  static bool tried;
  Dl_info self;
  char path[4096];
  if (tried)
    return;
  tried = true;
  if (!dladdr((void *)load_sigfwd, &self) || !self.dli_fname)
    return;
  const char *slash = strrchr(self.dli_fname, '/');
  snprintf(path, sizeof path, "%.*slibpi_sigfwd.so", slash ? (int)(slash - self.dli_fname + 1) : 0,
           self.dli_fname);
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  fatal_fn h = dl ? (fatal_fn)(uintptr_t)dlsym(dl, "pi_sigfwd_handler") : NULL;
  void (*attach)(fatal_fn) = dl ? (void (*)(fatal_fn))(uintptr_t)dlsym(dl, "pi_sigfwd_attach")
                                : NULL;
  sigfwd_detach = dl ? (void (*)(const struct sigaction *))(uintptr_t)dlsym(dl, "pi_sigfwd_detach")
                     : NULL;
  void (*below)(struct sigaction *) =
      dl ? (void (*)(struct sigaction *))(uintptr_t)dlsym(dl, "pi_sigfwd_below") : NULL;
  if (!h || !attach || !sigfwd_detach || !below) {
    sigfwd_detach = NULL;
    return; /* on_fatal stays in front, as before */
  }
  below(inherited);
  attach(on_fatal);
  front = h;
}

/* Ours in front; the handler it replaces goes on top of the chain (over
 * the top one when the chain is full). */
static void install_one(size_t k)
{
  int n = atomic_load(&nchain[k]);
  if (n == CHAIN_MAX)
    n--;
  pi_fatal_install(k, front, &chain[k][n]);
  atomic_store(&nchain[k], n + 1);
}

/* The shim is unloaded (its session over): each signal goes where it
 * would have without it. Where ours is in front, the handler it replaced
 * last is put back; a handler over ours keeps libpi_sigfwd.so's to hand
 * on to, which now hands on to the disposition from before the shim's
 * first one (chain level 0). Not to a level above it: every one of those
 * was installed over ours and hands signals back to the forwarder, which
 * cannot tell a signal handed back from a new one (on_fatal's chain can):
 * a forwarder handing on to them went round for ever. The handlers in
 * between (over ours once, ours put in front of them again) are left
 * out: each of them took signals only through ours. */
static void leave_handlers(void)
{
  struct sigaction to[PI_NFATAL];
  for (size_t k = 0; k < PI_NFATAL; k++) {
    int n = atomic_load(&nchain[k]);
    struct sigaction cur;
    memset(&to[k], 0, sizeof to[k]);
    to[k].sa_handler = SIG_DFL;
    if (n == 0 || sigaction(pi_fatal_signals[k], NULL, &cur) != 0)
      continue;
    to[k] = chain[k][0];
    if ((cur.sa_flags & SA_SIGINFO) && (cur.sa_sigaction == front || cur.sa_sigaction == on_fatal))
      sigaction(pi_fatal_signals[k], &chain[k][n - 1], NULL);
  }
  if (sigfwd_detach)
    sigfwd_detach(to);
}

/* Handler `level` of signal k's chain leaves it. */
static void drop_from_chain(size_t k, int level)
{
  int n = atomic_load(&nchain[k]);
  if (level < 0 || level >= n)
    return;
  for (int i = level; i + 1 < n; i++)
    chain[k][i] = chain[k][i + 1];
  atomic_store(&nchain[k], n - 1);
}

/* Ours in front of the signal's handler, unless it is ours already (the
 * chain stays: installed again, ours would hand signals on to itself) or
 * the process ignores the signal: that stays ignored (a shell starts its
 * background commands ignoring SIGINT and SIGQUIT; with ours in front a
 * ^C ended a process that would have gone on). */
static void keep_in_front(size_t k)
{
  struct sigaction cur;
  sigaction(pi_fatal_signals[k], NULL, &cur);
  bool ours = (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == front;
  if (ours && atomic_load(&nchain[k]) == 0) { /* left in place by a shim unloaded before */
    chain[k][0] = inherited[k];
    atomic_store(&nchain[k], 1);
  }
  if (!ours && !pi_sigaction_ignores(&cur))
    install_one(k);
}

/* The runtime's trace writes its buffered blocks (async-signal-safe). */
static void (*_Atomic crash_hook)(void);

/* A call given memory at a bad address (host data at 0x40, a string or
 * property list at one) faults in the shim as it looks at or copies that
 * data, before the call's entry is committed: the session lost the
 * crashing call. The entry is committed here: where the fault came before
 * it was made (capture_in), with the arguments alone, where the thread has
 * a ring (its room taken as any call's); where it came in the copy of an
 * item, with that item kept as none of its bytes (a heap item's body: the
 * token 0 with size 0, as a copy that failed) and the items after it
 * left out. */
static void settle_forming(int sig, const siginfo_t *info)
{
  rec_entry *e = me.forming;
  const shim_call *c = me.capturing;
  me.forming = NULL;
  me.capturing = NULL;
  if ((!e && !c) || (sig != SIGSEGV && sig != SIGBUS) || !info || info->si_code <= 0)
    return;
  /* Not a fault of the ring itself (a SIGBUS of its file): writing into
   * it here would fault again inside this handler. */
  const unsigned char *at = info->si_addr;
  if (me.ring && at >= me.ring->buf && at < me.ring->buf + me.ring->cap)
    return;
  if (!e) {
    if (!me.ring || !(e = reserve(sizeof(rec_entry) + c->api->nparams * sizeof(uint64_t))))
      return;
    e->h.type = REC_ENTRY;
    e->h.api = (uint8_t)c->api->id;
    e->h.instance = me.capturing_inst;
    e->thread = me.ring->thread_index;
    e->nitems = e->nframes = 0;
    for (unsigned i = 0; i < c->api->nparams; i++)
      e->argv[i] = c->argv[i];
    e->t0 = shim_stamp();
    commit_at(&e->h, e->t0);
    return;
  }
  rec_item *it = me.forming_item;
  /* An inline item's body is its bytes padded to 8: 8 at least for the
   * one byte the fault shows it had. */
  it->heap = 1;
  it->size = 0;
  static const uint64_t no_token = 0;
  memcpy(it + 1, &no_token, sizeof no_token);
  e->nitems = (uint16_t)(me.forming_n + 1);
  e->t0 = shim_stamp();
  commit_at(&e->h, e->t0);
}

PI_PLUGIN_EXPORT void pitrace_shim_crash_hook(void (*hook)(void)) { atomic_store(&crash_hook, hook); }

static void on_fatal(int sig, siginfo_t *info, void *ctx)
{
  /* The signal this thread is handing on, and to which handler of its
   * chain: a handler gives a signal back on the thread it runs on (raise),
   * while the same signal sent meanwhile may come on any other thread, to
   * be taken as new (global, it was taken as given back: that handler was
   * dropped and the process ended). */
  static __thread int passing_on __attribute__((tls_model("initial-exec")));
  static __thread int passing_level __attribute__((tls_model("initial-exec")));
  void (*hook)(void) = atomic_load(&crash_hook);
  size_t k = 0;
  while (pi_fatal_signals[k] != sig)
    k++;
  int level = atomic_load(&nchain[k]) - 1;
  /* The handler we handed this signal to gave it back (it raised it
   * again, from inside itself): it is done with it. */
  bool given_back = passing_on == sig;
  if (given_back) {
    level = passing_level;
    drop_from_chain(k, level);
    level--;
  }
  struct sigaction *prev = level >= 0 ? &chain[k][level] : NULL;
  if (prev && pi_sigaction_ignores(prev))
    return; /* ignored below us */
  bool app_handler = prev && pi_sigaction_handles(prev);
  /* An application that handles SIGTERM, SIGHUP, SIGPIPE, ... may go on;
   * also after a fault's signal that was sent, not raised by a fault. */
  bool ends = !app_handler || !pi_signal_may_go_on_as_sent(sig, info);
  /* The trace's blocks, before the process may end without chaining; not
   * for a signal the application handles and goes on after (a timer's):
   * its trace flusher writes them (written from here, the interrupted
   * thread's own buffer could be written twice). */
  if (hook && ends)
    hook();
  if (ends)
    settle_forming(sig, info);
  /* Whether this thread is storing the session for a signal of its own
   * (a fault inside that is no other thread's). */
  static __thread bool storing_here __attribute__((tls_model("initial-exec")));
  int expected = 0;
  bool first = atomic_compare_exchange_strong(&crashing, &expected, sig);
  if (!ends)
    atomic_store(&crashing, 0);
  if (ends && first) {
    storing_here = true;
    writer_finish("signal", sig, 3000);
    storing_here = false;
  } else if (ends && !given_back && !storing_here) {
    /* Another thread's fatal signal stores the session (two threads that
     * abort at once): this one ended the process under its writer, the
     * session left "running" for a salvager. It waits for that end. */
    writer_finish("signal", sig, 3000);
  }
  bool down = atomic_exchange(&handed_down, 0) == sig;
  if (!app_handler || (ends && !first && !given_back && !down)) {
    /* No handler left to take it, or again after one took it (a fault
     * that its handler returned into, a signal raised anew): the default
     * action. A fault re-executes under it when this handler returns;
     * any other signal (sent, or the kernel's: an alarm) is raised again
     * (pi_signal_reexecutes). */
    signal(sig, SIG_DFL);
    if (!pi_signal_reexecutes(sig, info))
      raise(sig);
    return;
  }
  passing_level = level;
  passing_on = sig;
  /* A handler installed with SA_RESETHAND runs as the kernel would run
   * it: the signal's disposition the default meanwhile. What it put in
   * place when it returns tells whether it is done (LLVM's puts back the
   * one it replaced: ours). */
  bool reset = prev->sa_flags & SA_RESETHAND;
  if (reset) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
  }
  pi_sigaction_chain(prev, sig, info, ctx);
  passing_on = 0;
  if (reset) {
    struct sigaction cur, was;
    sigaction(sig, NULL, &cur);
    bool put_back = (cur.sa_flags & SA_SIGINFO) &&
                    (cur.sa_sigaction == front || cur.sa_sigaction == on_fatal);
    if (!put_back && !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL)
      pi_fatal_install(k, front, &was); /* ours in front again; its level stays the default */
    /* It put ours back: its level leaves the chain (a signal it raised
     * again is taken below, as given back, and drops it there). */
    sigset_t pending;
    if (put_back && sigpending(&pending) == 0 && !sigismember(&pending, sig)) {
      drop_from_chain(k, level);
      atomic_store(&handed_down, sig);
    }
  }
  /* The signal again, waiting while this handler blocks it: given back by
   * the handler it went to, which raised it without unblocking it (it put
   * back the handler it had replaced, ours: delivered after this returns,
   * it would go to that handler again, and again), or sent once more
   * meanwhile (a second ^C during a slow handler), which is the
   * application's as the first was. Taken now, told apart by who sent it. */
  siginfo_t again;
  if (pi_signal_take_pending(sig, &again)) {
    if (again.si_pid == getpid() && (again.si_code == SI_TKILL || again.si_code == SI_USER)) {
      passing_level = level;
      passing_on = sig;
    }
    on_fatal(sig, &again, ctx);
    passing_on = 0;
  }
  if (!ends)
    keep_in_front(k); /* the application goes on: keep watching */
}

/* Puts the crash handlers in place, or back on top of handlers installed
 * since (LLVM inside an OpenCL implementation installs its own when it
 * starts, and does not pass a re-raised abort on). */
static void ensure_handlers(void)
{
  /* Threads' first calls may come at once. The signal handler's own
   * keep_in_front takes no lock (none may be taken there); two signals on
   * two threads at once can put ours in front twice, which the chain's
   * given-back handling drops. */
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  load_sigfwd();
  for (size_t k = 0; k < PI_NFATAL; k++)
    keep_in_front(k);
  pthread_mutex_unlock(&lock);
  atomic_store(&handlers_installed, true);
}

/* ---- Binding ---------------------------------------------------------------------------- */

#define SHIM_CONCAT_(a, b, c) a##b##_##c
#define SHIM_CONCAT(a, b, c) SHIM_CONCAT_(a, b, c)

#define SHIM_TARGET shim_instances[SHIM_I].target
#define SHIM_INSTANCE shim_instances[SHIM_I]

#define SHIM_I 0
#define SHIM_FN(name) SHIM_CONCAT(shim, 0, name)
#include "shim_gen.h"
#undef SHIM_I
#undef SHIM_FN
#define SHIM_I 1
#define SHIM_FN(name) SHIM_CONCAT(shim, 1, name)
#include "shim_gen.h"
#undef SHIM_I
#undef SHIM_FN
#define SHIM_I 2
#define SHIM_FN(name) SHIM_CONCAT(shim, 2, name)
#include "shim_gen.h"
#undef SHIM_I
#undef SHIM_FN
#define SHIM_I 3
#define SHIM_FN(name) SHIM_CONCAT(shim, 3, name)
#include "shim_gen.h"
#undef SHIM_I
#undef SHIM_FN

static void (*const fill_tables[])(struct pi_function_table *) = {
    shim0_fill_table, shim1_fill_table, shim2_fill_table, shim3_fill_table};

static void configure(void)
{
  read_config();
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Takes the next instance for `target` and fills `out` with its wrappers;
 * NULL when none is left. */
static shim_instance *add_instance(const pi_plugin *target, const char *name, const char *path,
                                   const char *backend, pi_plugin *out)
{
  pthread_once(&config_once, configure);
  uint32_t i = atomic_load(&shim_ninstances);
  if (i >= sizeof fill_tables / sizeof *fill_tables) {
    fprintf(stderr, "pitrace: the shim wraps at most %zu plugins; %s is not wrapped\n",
            sizeof fill_tables / sizeof *fill_tables, name);
    return NULL;
  }
  shim_instance *inst = &shim_instances[i];
  inst->target = target->PiFunctionTable;
  inst->index = i;
  snprintf(inst->name, sizeof inst->name, "%s", name ? name : "");
  snprintf(inst->path, sizeof inst->path, "%s", path ? path : "");
  snprintf(inst->version, sizeof inst->version, "%s", target->PluginVersion);
  snprintf(inst->backend, sizeof inst->backend, "%s", backend ? backend : "");
  atomic_store(&shim_ninstances, i + 1);
  *out = *target;
  fill_tables[i](&out->PiFunctionTable);
  return inst;
}

/* A runtime binds plugins again after this shim's session ended: the
 * shim stayed loaded (the runtime that ended kept its plugins for a
 * thread still counted as its user), and the runtime was unloaded and
 * loaded again. It is a session of its own, as with a shim loaded anew:
 * the instances are taken again from the first (the last runtime is gone,
 * and the plugins, kept loaded, are the same), the side tables of the
 * last session's objects are forgotten, and threads leave their rings of
 * the last session (session_gen). False when the last session's writer
 * did not finish (its end timed out): nothing is recorded then. */
static bool begin_again(void)
{
  pthread_mutex_lock(&start_lock);
  bool ok = true;
  if (atomic_load(&started) && writer_ended()) {
    ok = writer_begin_again();
    if (ok) {
      pthread_mutex_lock(&side_lock);
      free(images);
      images = NULL;
      nimages = cap_images = 0;
      atomic_store(&live_images, 0);
      nusm = nmaps = npending = 0;
      atomic_store(&npending_hint, 0);
      pthread_mutex_unlock(&side_lock);
      shim_prof_forget();
      atomic_store(&shim_ninstances, 0);
      atomic_store(&torn_down, 0);
      atomic_store(&thread_counter, 0);
      atomic_fetch_add_explicit(&session_gen, 1, memory_order_release);
      start_failed = false;
      atomic_store(&started, false);
    }
  }
  pthread_mutex_unlock(&start_lock);
  return ok;
}

/* Wraps `target`'s table: `out` receives the shim's table for it. Returns
 * false (the runtime then uses the target directly) when no instance is
 * left or recording cannot start. */
PI_PLUGIN_EXPORT bool pitrace_shim_wrap(const pi_plugin *target, const char *name,
                                        const char *path, const char *backend,
                                        pi_plugin *out)
{
  if (shim_trace_only) /* one mode per process: the first plugin's */
    return false;
  if (!begin_again()) {
    static _Atomic bool said;
    if (!atomic_exchange(&said, true))
      fprintf(stderr, "pitrace: the runtime binds its plugins again, but the recorder's last "
                      "session in this process has not finished storing; %s and the plugins "
                      "after it are not recorded\n", name ? name : "the plugin");
    return false;
  }
  shim_instance *inst = add_instance(target, name, path, backend, out);
  if (!inst)
    return false;
  ringfile_note_instance(inst->index);
  if (inst->index == 0) {
    atomic_store(&shim_recording, true);
    if (!ensure_started())
      return false;
    ensure_handlers();
  }
  return true;
}

/* Wraps `target`'s table for device times only (SYCL_PI_TRACE with
 * SYCL_PI_RECORD_PROFILE=1 and no SYCL_PI_RECORD): no session, no rings,
 * no crash handlers; each device command's device time goes to `sink` as
 * one line once the application's own synchronisation finds it complete. */
PI_PLUGIN_EXPORT bool pitrace_shim_wrap_devtimes(const pi_plugin *target, const char *name,
                                                 const char *path, const char *backend,
                                                 void (*sink)(const char *line),
                                                 pi_plugin *out)
{
  pthread_once(&config_once, configure);
  if (!sink || !shim_profiling || atomic_load(&shim_recording)) /* a bad PROFILE value: said */
    return false;
  if (atomic_exchange(&devtimes_over, false)) {
    /* The last runtime ended and the shim stayed loaded (see begin_again):
     * its instances, queues and call numbers were that runtime's. */
    shim_prof_forget();
    atomic_store(&shim_ninstances, 0);
    atomic_store(&torn_down, 0);
    atomic_store(&trace_calls, 0);
  }
  shim_devtime_sink = sink;
  shim_trace_only = true;
  return add_instance(target, name, path, backend, out) != NULL;
}

/* A recording shim's device times also go to the trace (SYCL_PI_TRACE with
 * SYCL_PI_RECORD_PROFILE=1), as pitrace_shim_wrap_devtimes prints them. */
PI_PLUGIN_EXPORT void pitrace_shim_devtime_sink(void (*sink)(const char *line))
{
  shim_devtime_sink = sink;
}

/* The runtime's end while other threads may still be inside a plugin (it
 * tears none down then: runtime/src/global.c): the session ends as at the
 * plugins' teardown, and device times still waiting are given. */
PI_PLUGIN_EXPORT void pitrace_shim_finish(void)
{
  if (shim_trace_only) {
    shim_prof_sweep(true, NULL);
    atomic_store(&devtimes_over, true);
  }
  else if (atomic_load(&started) && atomic_load(&shim_recording))
    writer_finish("teardown", 0, 10000);
}

/* The shim is a PI plugin too, but it only works with a target: loaded by
 * itself it refuses, saying how to use it. */
PI_PLUGIN_EXPORT pi_result piPluginInit(pi_plugin *p)
{
  (void)p;
  fprintf(stderr, "pitrace: libpi_shim.so records another plugin: set "
                  "SYCL_PI_RECORD=PATH, or name it in the plugins config as "
                  "'libpi_shim.so target=libpi_opencl.so'\n");
  return PI_ERROR_INVALID_OPERATION;
}

/* At exit the loader may finalise the shim before the runtime tears the
 * plugins down (which ends the session): write everything so far, so that
 * a process killed during its exit loses nothing before this point. */
__attribute__((destructor)) static void shim_fini(void)
{
  if (atomic_load(&started) && atomic_load(&shim_recording))
    writer_flush(2000);
  else if (atomic_load(&handlers_installed))
    leave_handlers(); /* unloaded (a dlclose) or exiting, its session over */
}
