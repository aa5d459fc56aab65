/*
 * writer_ids.c: the stable ids a session gives what a process's pointers
 * were (handles, USM allocations, mapped pointers) and its call stacks,
 * with their rows: a handle's id from the call that made it (or first
 * used it) to the call that released it, so that a session reads the
 * same whatever addresses the process got.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <xxhash.h>

#include "writer_internal.h"

/* The allocation holding p, or NULL. */
const usm_alloc *wr__usm_find(uint64_t p)
{
  size_t lo = 0, hi = wr.nusm_allocs;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (wr.usm_allocs[mid].base <= p)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo && p < wr.usm_allocs[lo - 1].base + wr.usm_allocs[lo - 1].size)
    return &wr.usm_allocs[lo - 1];
  return NULL;
}

/* A USM allocation made by a call, with its new id. */
void wr__usm_add(uint64_t base, uint64_t size, uint64_t id)
{
  wr.maps_dirty = true;
  if (wr.nusm_allocs == wr.cap_usm_allocs) {
    size_t cap = wr.cap_usm_allocs ? wr.cap_usm_allocs * 2 : 64;
    usm_alloc *v = realloc(wr.usm_allocs, cap * sizeof *v);
    if (!v)
      return;
    wr.usm_allocs = v;
    wr.cap_usm_allocs = cap;
  }
  size_t i = wr.nusm_allocs;
  while (i && wr.usm_allocs[i - 1].base > base) {
    wr.usm_allocs[i] = wr.usm_allocs[i - 1];
    i--;
  }
  wr.usm_allocs[i] = (usm_alloc){base, size ? size : 1, id};
  wr.nusm_allocs++;
}

/* A fresh id for the object at ptr, stored in the handles table:
 * `created` when its call made it, else first seen now. */
uint64_t wr__handle_store(uint64_t ptr, uint8_t kind, uint64_t seq, bool created)
{
  map_slot *s = map_put(&wr.handles, ptr);
  if (!s)
    return 0;
  map_del(&wr.callbacks, ptr); /* an event given a callback there is gone */
  s->a = ++wr.next_handle_id;
  s->b = kind;
  s->c = 1;
  sqlite3_bind_int64(wr.st_handle, 1, wr.session_id);
  sqlite3_bind_int64(wr.st_handle, 2, (int64_t)s->a);
  sqlite3_bind_text(wr.st_handle, 3, pi_object_kind_name(kind), -1, SQLITE_STATIC);
  sqlite3_bind_int64(wr.st_handle, 4, (int64_t)seq);
  sqlite3_bind_int(wr.st_handle, 5, created);
  sqlite3_bind_text(wr.st_handle, 6, wr.cur_api, -1, SQLITE_STATIC);
  wr__step(wr.st_handle, "storing a handle");
  return s->a;
}

/* A new object: a fresh id, unless a platform or device seen before. */
uint64_t wr__handle_new(uint64_t ptr, uint8_t kind, uint64_t seq)
{
  if (!ptr)
    return 0;
  map_slot *s = map_find(&wr.handles, ptr);
  if (s && (kind == PI_OBJ_PLATFORM || kind == PI_OBJ_DEVICE) && s->b == kind)
    return s->a;
  return wr__handle_store(ptr, kind, seq, true);
}

/* A USM allocation freed by the call `seq`: its row says so. */
void wr__usm_free(uint64_t ptr, uint64_t seq)
{
  for (size_t i = 0; i < wr.nusm_allocs; i++)
    if (wr.usm_allocs[i].base == ptr) {
      sqlite3_bind_int64(wr.st_handle_release, 1, (int64_t)seq);
      sqlite3_bind_text(wr.st_handle_release, 2, wr.cur_api, -1, SQLITE_STATIC);
      sqlite3_bind_int64(wr.st_handle_release, 3, wr.session_id);
      sqlite3_bind_int64(wr.st_handle_release, 4, (int64_t)wr.usm_allocs[i].id);
      wr__step(wr.st_handle_release, "storing a free");
      memmove(&wr.usm_allocs[i], &wr.usm_allocs[i + 1],
              (wr.nusm_allocs - i - 1) * sizeof *wr.usm_allocs);
      wr.nusm_allocs--;
      return;
    }
}

/* A release of the handle at ptr by the call `seq`: the last reference
 * gone, its row says so and the address is free for a new object. */
void wr__handle_release(uint64_t ptr, uint64_t seq)
{
  map_slot *s = map_find(&wr.handles, ptr);
  if (!s)
    return;
  wr.maps_dirty = true;
  if (--s->c > 0)
    return;
  sqlite3_bind_int64(wr.st_handle_release, 1, (int64_t)seq);
  sqlite3_bind_text(wr.st_handle_release, 2, wr.cur_api, -1, SQLITE_STATIC);
  sqlite3_bind_int64(wr.st_handle_release, 3, wr.session_id);
  sqlite3_bind_int64(wr.st_handle_release, 4, (int64_t)s->a);
  wr__step(wr.st_handle_release, "storing a release");
  map_del(&wr.handles, ptr);
}

/* An address that a live object has came back from a call that makes a
 * new one: the old object is gone (its memory was reused), and the call
 * that released it is still in flight: it returned after the new object's
 * maker did, so its exit comes later in the order, where it would release
 * the new object (seen with two threads handing buffers to each other:
 * record::an_object_made_by_one_thread_and_used_by_another_keeps_its_order).
 * Its release takes effect now, as its own (its seq and function), and
 * its exit releases nothing. `what`: a handle, a USM allocation (ptr its
 * base) or a mapped pointer. Nothing in flight: the old object went some
 * other way, and the new one replaces it, as before. */
void wr__release_in_flight(uint64_t ptr, int what)
{
  for (pending_call *c = wr.inflight; c; c = c->next) {
    const pi_api_desc *api = &pi_api_table[c->api];
    bool usm = c->api == PI_API_piextUSMFree, unmap = c->api == PI_API_piEnqueueMemUnmap;
    bool hit = what == GONE_USM      ? usm && c->argv[1] == ptr
               : what == GONE_MAPPED ? unmap && c->argv[2] == ptr
                                     : api->releases >= 0 && !usm && c->argv[api->releases] == ptr;
    if (!hit || c->released_early)
      continue;
    c->released_early = true;
    const char *maker = wr.cur_api;
    wr.cur_api = api->name;
    if (what == GONE_USM) {
      wr__usm_free(ptr, c->seq);
    } else if (what == GONE_MAPPED) {
      map_del(&wr.mapped, ptr);
    } else {
      map_slot *h = map_find(&wr.handles, ptr);
      if (h)
        h->c = 1; /* gone, however often it was retained */
      wr__handle_release(ptr, c->seq);
    }
    wr.cur_api = maker;
    return;
  }
}

/* A handle a call made (its out-parameter): a fresh id, the object that
 * had its address before released if its release is in flight. */
uint64_t wr__handle_made(uint64_t ptr, uint8_t kind, uint64_t seq)
{
  map_slot *s = ptr ? map_find(&wr.handles, ptr) : NULL;
  if (s && !((kind == PI_OBJ_PLATFORM || kind == PI_OBJ_DEVICE) && s->b == kind))
    wr__release_in_flight(ptr, GONE_HANDLE);
  return wr__handle_new(ptr, kind, seq);
}

/* What the pointer p is (PTR_*), its id and offset into id_off. */
uint64_t wr__pointer_kind(uint64_t p, uint64_t id_off[2])
{
  map_slot *m = map_find(&wr.mapped, p);
  if (m) {
    id_off[0] = m->a;
    return PTR_MAPPED;
  }
  const usm_alloc *u = p ? wr__usm_find(p) : NULL;
  if (u) {
    id_off[0] = u->id;
    id_off[1] = p - u->base;
    return PTR_USM;
  }
  return PTR_PLAIN;
}

uint64_t shim_stack_hash(const uintptr_t *frames, unsigned n)
{
  return XXH3_64bits(frames, n * sizeof *frames) | 1;
}

char *shim_stack_text(const uintptr_t *frames, unsigned n, bool names, size_t *len)
{
  text t = {0};
  for (unsigned i = 0; i < n; i++) {
    Dl_info info;
    char line[512];
    if (names && dladdr((void *)(frames[i] - 1), &info) && info.dli_fname) {
      const char *mod = strrchr(info.dli_fname, '/');
      mod = mod ? mod + 1 : info.dli_fname;
      if (info.dli_sname)
        snprintf(line, sizeof line, "%s!%s+0x%lx", mod, info.dli_sname,
                 (unsigned long)(frames[i] - (uintptr_t)info.dli_saddr));
      else
        snprintf(line, sizeof line, "%s+0x%lx", mod,
                 (unsigned long)(frames[i] - (uintptr_t)info.dli_fbase));
    } else {
      snprintf(line, sizeof line, "0x%lx", (unsigned long)frames[i]);
    }
    t_put(&t, line, strlen(line));
    t_c(&t, '\n');
  }
  *len = t.len;
  return t.p;
}

/* A stack's row, with a fresh id; -1 when out of memory. */
static int64_t stack_store(uint64_t hash, const char *frames, size_t len)
{
  map_slot *s = map_put(&wr.stacks, hash);
  if (!s)
    return -1;
  s->a = ++wr.next_stack_id;
  sqlite3_bind_int64(wr.st_stack, 1, wr.session_id);
  sqlite3_bind_int64(wr.st_stack, 2, (int64_t)s->a);
  sqlite3_bind_text(wr.st_stack, 3, frames ? frames : "", (int)len, SQLITE_TRANSIENT);
  wr__step(wr.st_stack, "storing a stack");
  return (int64_t)s->a;
}

/* A stack named by the thread that made the call (REC_STACK): stored
 * unless known. */
void wr__stack_named(uint64_t hash, const char *frames, size_t len)
{
  if (!map_find(&wr.stacks, hash))
    stack_store(hash, frames, len);
}

/* A call stack's id (-1 for none), its frames stored once. Named by the
 * calling thread before (REC_STACK); a stack it did not name (a record
 * lost, or older rings) is stored as addresses: the writer never asks the
 * dynamic loader (recorder.h says why). */
int64_t wr__stack_id(const uintptr_t *frames, unsigned n)
{
  if (!n)
    return -1;
  uint64_t h = shim_stack_hash(frames, n);
  map_slot *s = map_find(&wr.stacks, h);
  if (s)
    return (int64_t)s->a;
  size_t len;
  char *t = shim_stack_text(frames, n, false, &len);
  int64_t id = stack_store(h, t, len);
  free(t);
  return id;
}
