/*
 * writer_checkpoint.c: the checkpoint. Each commit also stores, in
 * recorder_state, what the writer knows that the rings' unread records
 * need (sequence and id counters, the calls in flight, the handle, USM,
 * map and stack ids, pending notes) and how far each ring of the ring
 * file was read: the database and the read positions change in one
 * transaction, so a salvager resumes exactly where the commit left off.
 * Part 0 every commit (small); part 1, the id maps, when they changed.
 */
#define _GNU_SOURCE
#include "writer_internal.h"

#define CKPT_MAGIC 0x3130544b43505450ULL /* "PTPCKT01" */

static void put64(text *t, uint64_t v) { t_put(t, (const char *)&v, 8); }

static void put_map(text *t, const map *m, int values)
{
  put64(t, m->n);
  for (size_t i = 0; i < m->cap; i++)
    if (m->v[i].key) {
      put64(t, m->v[i].key);
      put64(t, m->v[i].a);
      if (values > 1) {
        put64(t, m->v[i].b);
        put64(t, m->v[i].c);
      }
    }
}

static bool store_state(int part, const text *t)
{
  sqlite3_stmt *s = wr.st_state;
  sqlite3_bind_int64(s, 1, wr.session_id);
  sqlite3_bind_int(s, 2, part);
  sqlite3_bind_blob(s, 3, t->p, (int)t->len, SQLITE_STATIC);
  return wr__step(s, "storing the recorder's state");
}

/* Stores the checkpoint in the open transaction: part 0 always, part 1
 * when the maps changed. */
void wr__write_checkpoint(void)
{
  text t = {0};
  put64(&t, CKPT_MAGIC);
  uint64_t scalars[] = {wr.seq_counter, wr.next_handle_id, wr.next_stack_id, (uint64_t)wr.chunk_id,
                        wr.last_ticket, wr.plugins_written, wr.last_t};
  put64(&t, sizeof scalars / sizeof *scalars);
  for (size_t i = 0; i < sizeof scalars / sizeof *scalars; i++)
    put64(&t, scalars[i]);
  size_t nr = 0;
  for (shim_ring *r = rings_head(); r; r = r->next)
    nr += r->slot != RING_NO_SLOT;
  put64(&t, nr);
  for (shim_ring *r = rings_head(); r; r = r->next)
    if (r->slot != RING_NO_SLOT) {
      put64(&t, r->slot);
      put64(&t, r->rd);
    }
  size_t np = 0;
  for (pending_call *c = wr.inflight; c; c = c->next)
    np++;
  put64(&t, np);
  for (pending_call *c = wr.inflight; c; c = c->next) {
    unsigned n = pi_api_table[c->api].nparams;
    /* inserted and released_early share a word (bits 0 and 1): a
     * checkpoint of before has 0 or 1 there. */
    uint64_t f[] = {c->ticket, c->seq, c->t0, c->thread, c->plugin, c->api,
                    (uint64_t)c->inserted | (uint64_t)c->released_early << 1,
                    (uint64_t)c->stack, c->in.len, c->inl.len};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
      put64(&t, f[i]);
    t_put(&t, (const char *)c->argv, n * sizeof *c->argv);
    t_put(&t, (const char *)c->start, n * sizeof *c->start);
    t_put(&t, (const char *)c->end, n * sizeof *c->end);
    t_put(&t, c->in.p ? c->in.p : "", c->in.len);
    t_put(&t, c->inl.p ? c->inl.p : "", c->inl.len);
  }
  size_t nn = 0;
  for (size_t i = 0; i < wr.nthreads; i++)
    nn += wr.threads[i].nnotes;
  put64(&t, nn);
  for (size_t i = 0; i < wr.nthreads; i++)
    for (size_t j = 0; j < wr.threads[i].nnotes; j++) {
      put64(&t, wr.threads[i].index);
      put64(&t, wr.threads[i].notes[j]->h.size);
      t_put(&t, (const char *)wr.threads[i].notes[j], wr.threads[i].notes[j]->h.size);
    }
  /* Whose records each ring holds at its read position (a ring passes
   * from thread to thread: the one before may have left records not yet
   * committed). Last: a loader from before it stops short of it. */
  put64(&t, nr);
  for (shim_ring *r = rings_head(); r; r = r->next)
    if (r->slot != RING_NO_SLOT) {
      put64(&t, r->slot);
      put64(&t, r->rd_thread);
    }
  bool ok = store_state(0, &t);
  if (ok && wr.maps_dirty) {
    t.len = 0;
    put64(&t, CKPT_MAGIC);
    put_map(&t, &wr.handles, 3);
    put_map(&t, &wr.mapped, 1);
    put_map(&t, &wr.memo, 1);
    put_map(&t, &wr.stacks, 1);
    put64(&t, wr.nusm_allocs);
    for (size_t i = 0; i < wr.nusm_allocs; i++) {
      put64(&t, wr.usm_allocs[i].base);
      put64(&t, wr.usm_allocs[i].size);
      put64(&t, wr.usm_allocs[i].id);
    }
    put_map(&t, &wr.devmemo, 3);
    put_map(&t, &wr.callbacks, 1);
    if (store_state(1, &t))
      wr.maps_dirty = false;
  }
  free(t.p);
}

/* A reader of a checkpoint blob; every read is bounds-checked. */
typedef struct reader {
  const unsigned char *p, *end;
  bool bad;
} reader;

static uint64_t get64(reader *r)
{
  uint64_t v = 0;
  if (r->end - r->p < 8) {
    r->bad = true;
    return 0;
  }
  memcpy(&v, r->p, 8);
  r->p += 8;
  return v;
}

static const void *get_bytes(reader *r, uint64_t n)
{
  if ((uint64_t)(r->end - r->p) < n) {
    r->bad = true;
    return NULL;
  }
  const void *v = r->p;
  r->p += n;
  return v;
}

static void get_map(reader *r, map *m, int values)
{
  uint64_t n = get64(r);
  for (uint64_t i = 0; i < n && !r->bad; i++) {
    uint64_t key = get64(r), a = get64(r), b = 0, c = 0;
    if (values > 1) {
      b = get64(r);
      c = get64(r);
    }
    map_slot *s = r->bad ? NULL : map_put(m, key);
    if (s) {
      s->a = a;
      s->b = b;
      s->c = c;
    }
  }
}

/* Restores the writer from the session's checkpoint (none: the session
 * committed nothing of its calls yet, and starts from zero). */
bool wr__load_checkpoint(slot_pos **pos, size_t *npos, char *err, size_t errn)
{
  *pos = NULL;
  *npos = 0;
  sqlite3_stmt *q = wr__prepare("SELECT part, state FROM recorder_state WHERE session=? "
                                "ORDER BY part");
  if (!q) {
    snprintf(err, errn, "no recorder state table");
    return false;
  }
  sqlite3_bind_int64(q, 1, wr.session_id);
  bool ok = true;
  while (ok && sqlite3_step(q) == SQLITE_ROW) {
    int part = sqlite3_column_int(q, 0);
    reader r = {sqlite3_column_blob(q, 1), NULL, false};
    r.end = r.p ? r.p + sqlite3_column_bytes(q, 1) : NULL; /* empty: NULL */
    if (!r.p || get64(&r) != CKPT_MAGIC) {
      ok = false;
      break;
    }
    if (part == 0) {
      uint64_t ns = get64(&r), v[7] = {0};
      for (uint64_t i = 0; i < ns && !r.bad; i++) {
        uint64_t x = get64(&r);
        if (i < 7)
          v[i] = x;
      }
      wr.seq_counter = v[0], wr.next_handle_id = v[1], wr.next_stack_id = v[2];
      wr.chunk_id = (int64_t)v[3], wr.last_ticket = v[4], wr.plugins_written = (uint32_t)v[5];
      wr.last_t = v[6];
      uint64_t nr = get64(&r);
      if (nr > 1u << 20)
        r.bad = true;
      if (!r.bad && nr && !(*pos = calloc(nr, sizeof **pos)))
        r.bad = true;
      for (uint64_t i = 0; i < nr && !r.bad; i++) {
        (*pos)[i].slot = get64(&r);
        (*pos)[i].rd = get64(&r);
        *npos = i + 1;
      }
      uint64_t np = get64(&r);
      for (uint64_t i = 0; i < np && !r.bad; i++) {
        uint64_t f[10];
        for (int k = 0; k < 10; k++)
          f[k] = get64(&r);
        if (r.bad || f[5] >= PI_API_COUNT) {
          r.bad = true;
          break;
        }
        unsigned n = pi_api_table[f[5]].nparams;
        const void *argv = get_bytes(&r, n * 8u), *start = get_bytes(&r, n * 4u),
                   *end = get_bytes(&r, n * 4u), *in = get_bytes(&r, f[8]),
                   *inl = get_bytes(&r, f[9]);
        pending_call *c = r.bad ? NULL : wr__call_new();
        if (!c)
          break;
        c->ticket = f[0], c->seq = f[1], c->t0 = f[2];
        c->thread = (uint32_t)f[3], c->plugin = (uint32_t)f[4], c->api = (uint8_t)f[5];
        c->inserted = f[6] & 1, c->released_early = f[6] >> 1 & 1, c->stack = (int64_t)f[7];
        memcpy(c->argv, argv, n * 8u);
        memcpy(c->start, start, n * 4u);
        memcpy(c->end, end, n * 4u);
        t_put(&c->in, in, f[8]);
        t_put(&c->inl, inl, f[9]);
        for (unsigned k = 0; k < n; k++)
          if (c->start[k] > c->end[k] || c->end[k] > c->in.len)
            c->start[k] = c->end[k] = 0;
        wr__inflight_push(c); /* in no ring's calls: an exit finds it by search */
        c->outer = NULL;
      }
      uint64_t nn = get64(&r);
      for (uint64_t i = 0; i < nn && !r.bad; i++) {
        uint64_t idx = get64(&r), size = get64(&r);
        const void *note = get_bytes(&r, size);
        if (r.bad || size < sizeof(rec_note) ||
            !wr__record_ok((rec_hdr *)(uintptr_t)note, size, size)) {
          r.bad = true;
          break;
        }
        /* wr__process_note (writer_calls.c) copies what it is given */
        rec_note *copy = malloc(size);
        if (copy) {
          memcpy(copy, note, size);
          wr__process_note(copy, (uint32_t)idx);
          free(copy);
        }
      }
      /* A recorder from before it has no rings' threads: each ring's
       * thread_index is right for it (its rings went to a new thread only
       * once committed to their end). */
      uint64_t nt = r.bad || r.p >= r.end ? 0 : get64(&r);
      for (uint64_t i = 0; i < nt && !r.bad; i++) {
        uint64_t slot = get64(&r), thread = get64(&r);
        for (size_t k = 0; k < *npos && !r.bad; k++)
          if ((*pos)[k].slot == slot)
            (*pos)[k].thread = (uint32_t)thread;
      }
    } else {
      get_map(&r, &wr.handles, 3);
      get_map(&r, &wr.mapped, 1);
      get_map(&r, &wr.memo, 1);
      get_map(&r, &wr.stacks, 1);
      uint64_t nu = get64(&r);
      for (uint64_t i = 0; i < nu && !r.bad; i++) {
        uint64_t base = get64(&r), size = get64(&r), id = get64(&r);
        if (!r.bad)
          wr__usm_add(base, size, id);
      }
      if (!r.bad && r.p < r.end) /* a recorder from before device times has none */
        get_map(&r, &wr.devmemo, 3);
      if (!r.bad && r.p < r.end) /* nor one from before callbacks' events */
        get_map(&r, &wr.callbacks, 1);
    }
    ok = !r.bad;
  }
  sqlite3_finalize(q);
  if (!ok)
    snprintf(err, errn, "its recorder state is damaged");
  return ok;
}
