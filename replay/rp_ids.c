/*
 * rp_ids.c: recorded ids to live values. The recorder numbers handles, USM
 * allocations and mapped pointers from one counter, so ids index an array;
 * native handles (arbitrary values) go to a short list. Both take the
 * engine's lock when several threads replay.
 */
#include <stdlib.h>
#include <string.h>

#include "rpx.h"

static bool ids_grow(rp_ids *m, uint64_t id)
{
  if (id < m->cap)
    return true;
  size_t cap = m->cap ? m->cap : 1024;
  while (cap <= id)
    cap *= 2;
  uint64_t *v = realloc(m->v, cap * sizeof *v);
  if (!v)
    return false;
  memset(v + m->cap, 0, (cap - m->cap) * sizeof *v);
  m->v = v;
  m->cap = cap;
  return true;
}

bool rp_ids_put(rp_engine *e, uint64_t id, uint64_t live)
{
  rp_lock(e);
  bool ok = id < ((uint64_t)1 << 40) && ids_grow(&e->ids, id);
  if (ok)
    e->ids.v[id] = live;
  rp_unlock(e);
  return ok;
}

uint64_t rp_ids_get(rp_engine *e, uint64_t id)
{
  rp_lock(e);
  uint64_t v = id < e->ids.cap ? e->ids.v[id] : 0;
  rp_unlock(e);
  return v;
}

void rp_ids_free(rp_ids *m)
{
  free(m->v);
  m->v = NULL;
  m->cap = 0;
}

bool rp_native_put(rp_engine *e, uint64_t recorded, uint64_t live)
{
  uint64_t pair[2] = {recorded, live};
  rp_lock(e);
  bool ok = rp_push(&e->natives.v, &e->natives.n, &e->natives.cap, sizeof pair, pair);
  rp_unlock(e);
  return ok;
}

bool rp_native_get(rp_engine *e, uint64_t recorded, uint64_t *live)
{
  bool found = false;
  rp_lock(e);
  for (size_t i = e->natives.n; i-- > 0 && !found;)
    if (e->natives.v[i][0] == recorded) {
      *live = e->natives.v[i][1];
      found = true;
    }
  rp_unlock(e);
  return found;
}

void rp_natives_free(rp_natives *m)
{
  free(m->v);
  m->v = NULL;
  m->n = m->cap = 0;
}
