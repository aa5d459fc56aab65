/*
 * rp_prefetch.c: reads a session's large payloads (the data rows: buffer
 * contents, read-backs) ahead of the replay, on a thread of its own with
 * its own connection, so that reading them overlaps the device's work
 * (program builds, transfers) instead of adding to it. At most `limit`
 * bytes are held ahead; a payload the replay asks for first, or one that
 * could not be read, is read the ordinary way.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rp.h"

enum { PF_WAITING, PF_LOADING, PF_READY, PF_TAKEN };

typedef struct pf_item {
  int64_t seq;
  unsigned position, idx;
  char role[12];
  unsigned char *data;
  size_t size;
  int state;
} pf_item;

struct rp_prefetch {
  pthread_t thread;
  pthread_mutex_t m;
  pthread_cond_t cv;
  pt_db db;
  rp_session *s;
  pf_item *items;
  size_t n;
  size_t ahead, limit;
  bool stop;
};


static bool list_rows(struct rp_prefetch *p)
{
  size_t n = 0, cap = 0;
  pt_payload_row *rows = pt_payload_rows(&p->db, p->s->id, &n);
  bool ok = true;
  for (size_t i = 0; ok && i < n; i++) {
    const char *r = rows[i].role; /* values are read with their calls */
    if (strcmp(r, "in") != 0 && strcmp(r, "out") != 0 && strcmp(r, "readback") != 0)
      continue;
    pf_item it = {.seq = rows[i].seq, .position = rows[i].position, .idx = rows[i].idx};
    snprintf(it.role, sizeof it.role, "%s", rows[i].role);
    ok = rp_push(&p->items, &p->n, &cap, sizeof it, &it);
  }
  free(rows);
  return ok;
}

static void *loader(void *arg)
{
  struct rp_prefetch *p = arg;
  for (size_t i = 0; i < p->n; i++) {
    pf_item *it = &p->items[i];
    pthread_mutex_lock(&p->m);
    while (!p->stop && p->ahead > p->limit)
      pthread_cond_wait(&p->cv, &p->m);
    bool stop = p->stop, go = !stop && it->state == PF_WAITING;
    if (go)
      it->state = PF_LOADING;
    pthread_mutex_unlock(&p->m);
    if (stop) /* read under the lock: rp_prefetch_stop sets it under it */
      break;
    if (!go)
      continue;
    const pt_call *c = rp_call_by_seq(p->s, it->seq);
    size_t size = 0, full = 0;
    unsigned char *d = c ? pt_data(&p->db, p->s->id, c, it->position, it->role, it->idx, &size,
                                   &full) : NULL;
    if (d && size < full) { /* partial: the ordinary way says why */
      free(d);
      d = NULL;
    }
    pthread_mutex_lock(&p->m);
    it->data = d;
    it->size = size;
    it->state = PF_READY;
    p->ahead += size;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->m);
  }
  return NULL;
}

bool rp_prefetch_start(rp_session *s, size_t limit)
{
  struct rp_prefetch *p = calloc(1, sizeof *p);
  char err[256];
  if (!p)
    return false;
  p->s = s;
  p->limit = limit;
  if (!pt_open(s->db.path, PT_OPEN_MAPPED, &p->db, err, sizeof err)) {
    free(p);
    return false;
  }
  pthread_mutex_init(&p->m, NULL);
  pthread_cond_init(&p->cv, NULL);
  if (!list_rows(p) || pthread_create(&p->thread, NULL, loader, p) != 0) {
    pthread_mutex_destroy(&p->m);
    pthread_cond_destroy(&p->cv);
    pt_close(&p->db);
    free(p->items);
    free(p);
    return false;
  }
  s->prefetch = p;
  return true;
}

void rp_prefetch_stop(rp_session *s)
{
  struct rp_prefetch *p = s->prefetch;
  if (!p)
    return;
  pthread_mutex_lock(&p->m);
  p->stop = true;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->m);
  pthread_join(p->thread, NULL);
  for (size_t i = 0; i < p->n; i++)
    if (p->items[i].state != PF_TAKEN)
      free(p->items[i].data);
  free(p->items);
  pt_close(&p->db);
  pthread_mutex_destroy(&p->m);
  pthread_cond_destroy(&p->cv);
  free(p);
  s->prefetch = NULL;
}

static pf_item *find(struct rp_prefetch *p, const pt_call *c, unsigned position, const char *role,
                     unsigned idx)
{
  size_t lo = 0, hi = p->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (p->items[mid].seq < c->seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (; lo < p->n && p->items[lo].seq == c->seq; lo++)
    if (p->items[lo].position == position && p->items[lo].idx == idx &&
        strcmp(p->items[lo].role, role) == 0)
      return &p->items[lo];
  return NULL;
}

unsigned char *rp_prefetch_take(rp_session *s, const pt_call *c, unsigned position,
                                const char *role, unsigned idx, size_t *size)
{
  struct rp_prefetch *p = s->prefetch;
  unsigned char *d = NULL;
  pthread_mutex_lock(&p->m);
  pf_item *it = find(p, c, position, role, idx);
  while (it && it->state == PF_LOADING)
    pthread_cond_wait(&p->cv, &p->m);
  if (it && it->state == PF_READY) {
    d = it->data;
    *size = it->size;
    p->ahead -= it->size;
    pthread_cond_broadcast(&p->cv);
  }
  if (it)
    it->state = PF_TAKEN; /* a waiting one is read by the caller instead */
  pthread_mutex_unlock(&p->m);
  return d;
}
