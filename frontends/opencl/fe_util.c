/*
 * fe_util.c: what every file of the OpenCL front end shares: wrapper
 * allocation and reference counts, the map from PI handles to wrappers,
 * OpenCL-style info answers, and the generic PI info query that takes its
 * value types from the API description (runtime/api/pi.api).
 */
#include <stdlib.h>
#include <string.h>

#include "fe.h"
#include "pi_api.h"

void *fe_new(size_t size, fe_kind k, const pirt_plugin *pl)
{
  fe_obj *o = calloc(1, size);
  if (!o)
    return NULL;
  o->dispatch = &fe_dispatch;
  o->kind = k;
  atomic_init(&o->refs, 1);
  o->pl = pl;
  return o;
}

void fe_ref(void *o) { atomic_fetch_add(&((fe_obj *)o)->refs, 1); }

bool fe_unref(void *p, void (*on_free)(void *o))
{
  fe_obj *o = p;
  if (atomic_fetch_sub(&o->refs, 1) != 1)
    return false;
  if (on_free)
    on_free(o);
  o->kind = FE_DEAD; /* a stale handle reads as invalid while the memory lasts */
  free(o);
  return true;
}

/* ---- PI handle -> wrapper --------------------------------------------------
 * An open-addressing table keyed by (kind, PI handle). Only creation,
 * release and info answers that carry handles touch it, never a launch. */

typedef struct {
  const void *pi;
  uint32_t kind;
  void *wrapper;
} slot;

static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static slot *map;
static size_t map_cap, map_used; /* used counts live and deleted slots */

static size_t hash(fe_kind k, const void *pi)
{
  uint64_t x = (uint64_t)(uintptr_t)pi ^ ((uint64_t)k << 48);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static void *const TOMBSTONE = (void *)&map_lock;

static void map_grow(void)
{
  size_t cap = map_cap ? map_cap * 2 : 256;
  slot *n = calloc(cap, sizeof *n);
  if (!n)
    return; /* keep the old table; inserts may fail below */
  for (size_t i = 0; i < map_cap; i++) {
    if (!map[i].pi || map[i].wrapper == TOMBSTONE)
      continue;
    size_t j = hash(map[i].kind, map[i].pi) & (cap - 1);
    while (n[j].pi)
      j = (j + 1) & (cap - 1);
    n[j] = map[i];
  }
  free(map);
  map = n;
  map_cap = cap;
  map_used = 0;
  for (size_t i = 0; i < cap; i++)
    map_used += n[i].pi != NULL;
}

void fe_map_add(fe_kind k, const void *pi, void *wrapper)
{
  if (!pi)
    return;
  pthread_mutex_lock(&map_lock);
  if ((map_used + 1) * 2 > map_cap)
    map_grow();
  if (map_cap && (map_used + 1) * 4 <= map_cap * 3) {
    size_t j = hash(k, pi) & (map_cap - 1);
    while (map[j].pi && !(map[j].pi == pi && map[j].kind == (uint32_t)k))
      j = (j + 1) & (map_cap - 1);
    if (!map[j].pi)
      map_used++;
    map[j] = (slot){pi, (uint32_t)k, wrapper};
  }
  pthread_mutex_unlock(&map_lock);
}

static slot *map_find(fe_kind k, const void *pi)
{
  if (!map_cap || !pi)
    return NULL;
  size_t j = hash(k, pi) & (map_cap - 1);
  while (map[j].pi) {
    if (map[j].pi == pi && map[j].kind == (uint32_t)k && map[j].wrapper != TOMBSTONE)
      return &map[j];
    j = (j + 1) & (map_cap - 1);
  }
  return NULL;
}

void *fe_lookup(fe_kind k, const void *pi)
{
  pthread_mutex_lock(&map_lock);
  slot *s = map_find(k, pi);
  void *w = s ? s->wrapper : NULL;
  pthread_mutex_unlock(&map_lock);
  return w;
}

void fe_map_remove(fe_kind k, const void *pi)
{
  pthread_mutex_lock(&map_lock);
  slot *s = map_find(k, pi);
  if (s)
    s->wrapper = TOMBSTONE;
  pthread_mutex_unlock(&map_lock);
}

void fe_map_remove_if(fe_kind k, const void *pi, const void *wrapper)
{
  pthread_mutex_lock(&map_lock);
  slot *s = map_find(k, pi);
  if (s && s->wrapper == wrapper)
    s->wrapper = TOMBSTONE;
  pthread_mutex_unlock(&map_lock);
}

/* ---- Answers -------------------------------------------------------------- */

cl_int fe_put(size_t size, void *value, size_t *size_ret, const void *src, size_t n)
{
  if (value) {
    if (size < n)
      return CL_INVALID_VALUE;
    if (n)
      memcpy(value, src, n);
  }
  if (size_ret)
    *size_ret = n;
  return CL_SUCCESS;
}

cl_int fe_put_str(size_t size, void *value, size_t *size_ret, const char *s)
{
  return fe_put(size, value, size_ret, s ? s : "", s ? strlen(s) + 1 : 1);
}

/* Info queries are answered on every clGet*Info call, so each table of
 * pi.api is turned once into a small hash of query -> entry. */
#define INFO_SLOTS 512 /* > 2x the largest info table */

typedef struct {
  const char *name; /* the table's name, as the callers spell it */
  const pi_enum_entry *slot[INFO_SLOTS];
} info_index;

static info_index *_Atomic info_indexes[16];
static pthread_mutex_t info_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t info_hash(uint32_t v) { return (v * 2654435761u) >> 23; } /* 9 bits */

static info_index *info_index_of(const char *table)
{
  for (size_t i = 0; i < sizeof info_indexes / sizeof *info_indexes; i++) {
    info_index *x = atomic_load_explicit(&info_indexes[i], memory_order_acquire);
    if (!x)
      break;
    if (x->name == table || strcmp(x->name, table) == 0)
      return x;
  }
  pthread_mutex_lock(&info_lock);
  info_index *x = NULL;
  size_t i = 0;
  for (; i < sizeof info_indexes / sizeof *info_indexes; i++) {
    x = atomic_load_explicit(&info_indexes[i], memory_order_relaxed);
    if (!x || strcmp(x->name, table) == 0)
      break;
  }
  const pi_enum_desc *en = pi_enum_find(table);
  if (!x && en && en->count * 2 < INFO_SLOTS && i < sizeof info_indexes / sizeof *info_indexes &&
      (x = calloc(1, sizeof *x))) {
    x->name = table;
    for (unsigned k = 0; k < en->count; k++) {
      size_t h = info_hash((uint32_t)en->entries[k].value);
      while (x->slot[h])
        h = (h + 1) % INFO_SLOTS;
      x->slot[h] = &en->entries[k];
    }
    atomic_store_explicit(&info_indexes[i], x, memory_order_release);
  }
  pthread_mutex_unlock(&info_lock);
  return x;
}

static const pi_enum_entry *info_entry(const char *table, uint32_t param)
{
  info_index *x = info_index_of(table);
  if (!x)
    return NULL;
  for (size_t h = info_hash(param); x->slot[h]; h = (h + 1) % INFO_SLOTS)
    if ((uint32_t)x->slot[h]->value == param)
      return x->slot[h];
  return NULL;
}

bool fe_pi_knows(const char *table, uint32_t param)
{
  return info_entry(table, param) != NULL;
}

static fe_kind kind_of(uint8_t obj)
{
  switch (obj) {
  case PI_OBJ_PLATFORM: return FE_PLATFORM;
  case PI_OBJ_DEVICE: return FE_DEVICE;
  case PI_OBJ_CONTEXT: return FE_CONTEXT;
  case PI_OBJ_QUEUE: return FE_QUEUE;
  case PI_OBJ_MEM: return FE_MEM;
  case PI_OBJ_PROGRAM: return FE_PROGRAM;
  case PI_OBJ_KERNEL: return FE_KERNEL;
  case PI_OBJ_EVENT: return FE_EVENT;
  case PI_OBJ_SAMPLER: return FE_SAMPLER;
  default: return FE_DEAD;
  }
}

cl_int fe_pi_info(const char *table, fe_info_fn call, const void *obj,
                  uint32_t param, size_t size, void *value, size_t *size_ret)
{
  const pi_enum_entry *e = info_entry(table, param);
  if (!e)
    return CL_INVALID_VALUE;
  if (e->vt != PI_VT_HANDLE)
    return fe_err(call(obj, param, size, value, size_ret));
  /* Handles: ask PI for its handles, answer with the wrappers. */
  size_t n = 0;
  pi_result r = call(obj, param, 0, NULL, &n);
  if (r != PI_SUCCESS)
    return fe_err(r);
  void **pi = n ? malloc(n) : NULL;
  if (n && !pi)
    return CL_OUT_OF_HOST_MEMORY;
  r = n ? call(obj, param, n, pi, NULL) : PI_SUCCESS;
  if (r == PI_SUCCESS) {
    for (size_t i = 0; i < n / sizeof(void *); i++)
      pi[i] = pi[i] ? fe_lookup(kind_of(e->obj), pi[i]) : NULL;
  }
  cl_int err = r == PI_SUCCESS ? fe_put(size, value, size_ret, pi, n) : fe_err(r);
  free(pi);
  return err;
}

cl_int fe_copy_props(const void *list, void *outp, size_t *n)
{
  const int64_t *in = list;
  int64_t **out = outp;
  *out = NULL;
  *n = 0;
  if (!in)
    return CL_SUCCESS;
  size_t k = 0;
  while (in[k])
    k += 2;
  k++;
  *out = malloc(k * sizeof **out);
  if (!*out)
    return CL_OUT_OF_HOST_MEMORY;
  memcpy(*out, in, k * sizeof **out);
  *n = k;
  return CL_SUCCESS;
}
