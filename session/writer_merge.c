/*
 * writer_merge.c: the rings of every recording thread read in one order,
 * by ticket, each record handed to its handler (writer_calls.c); how far
 * each ring was read, and given back to its producer after a commit; the
 * checks a salvaged ring's records pass before they are read.
 */
#define _GNU_SOURCE
#include "writer_internal.h"

/* The merge's own, beside wr.mrings (the rings as it keeps them): the
 * list head those were taken from, the binary heap of the rings with a
 * record seen (by that record's ticket), and the looks at the rings'
 * heads counted (wr__merge, below, says what for). */
static shim_ring *mrings_from;
static mring **heap;
static size_t nheap;
static uint64_t looks;

/* Whether a record's n items fit between p and end (record_ok). */
static bool items_ok(unsigned char *p, const unsigned char *end, unsigned n)
{
  if (n > MAX_ITEMS_VIEW)
    return false;
  for (unsigned i = 0; i < n; i++) {
    if ((size_t)(end - p) < sizeof(rec_item))
      return false;
    rec_item *it = (rec_item *)p;
    p += sizeof *it;
    if (it->position >= PI_MAX_PARAMS)
      return false;
    if (it->heap) {
      if ((size_t)(end - p) < sizeof(uint64_t))
        return false;
      uint64_t token;
      memcpy(&token, p, sizeof token);
      if (!wr__salvaged_payload(token, it->size))
        it->size = 0; /* in the process's memory: gone with it */
      p += sizeof(uint64_t);
    } else {
      if (it->size > (uint64_t)(end - p) || ((it->size + 7) & ~(uint64_t)7) > (uint64_t)(end - p))
        return false;
      p += (it->size + 7) & ~(uint64_t)7;
    }
  }
  return true;
}

/* In a salvaged ring: whether the record at h (avail bytes published
 * from it, to_end bytes to the ring's end) is whole and sound, so that
 * decoding it reads nothing outside it. Heap payloads (pointers into the
 * dead process) are marked empty in place. Out of line: only salvage
 * checks records, and next_seen is inlined. */
__attribute__((noinline)) bool wr__record_ok(rec_hdr *h, size_t avail, size_t to_end)
{
  if (to_end < sizeof *h || avail < sizeof *h || h->size < sizeof *h || h->size % 8 ||
      h->size > avail || h->size > to_end)
    return false;
  unsigned char *p = (unsigned char *)h, *end = p + h->size;
  switch (h->type) {
  case REC_WRAP:
    return h->size == to_end;
  case REC_ENTRY: {
    rec_entry *e = (rec_entry *)h;
    if (h->size < sizeof *e || h->api >= PI_API_COUNT || h->instance >= SHIM_MAX_INSTANCES ||
        e->nframes > SHIM_MAX_FRAMES + 2)
      return false;
    size_t fixed = sizeof *e + (pi_api_table[h->api].nparams + (size_t)e->nframes) * 8;
    return fixed <= h->size && items_ok(p + fixed, end, e->nitems);
  }
  case REC_EXIT: {
    rec_exit *x = (rec_exit *)h;
    return h->size >= sizeof *x && h->api < PI_API_COUNT &&
           items_ok((unsigned char *)(x + 1), end, x->nitems);
  }
  case REC_READBACK: {
    rec_readback *r = (rec_readback *)h;
    if (h->size < sizeof *r || r->position >= PI_MAX_PARAMS)
      return false;
    if (r->heap) {
      if (h->size < sizeof *r + sizeof(uint64_t))
        return false;
      uint64_t token;
      memcpy(&token, r + 1, sizeof token);
      if (!wr__salvaged_payload(token, r->size))
        r->size = 0;
      return true;
    }
    return r->size <= h->size - sizeof *r;
  }
  case REC_NOTE: {
    rec_note *n = (rec_note *)h;
    if (h->size < sizeof *n)
      return false;
    unsigned char *w = (unsigned char *)(n + 1);
    for (int i = 0; i < 5; i++) {
      unsigned char *z = memchr(w, 0, (size_t)(end - w));
      if (!z)
        return false;
      w = z + 1;
    }
    uint64_t left = (uint64_t)(end - w);
    return (uint64_t)n->num_ids * 4u <= left && n->value_len <= left - n->num_ids * 4u &&
           n->text_len <= left - n->num_ids * 4u - n->value_len;
  }
  case REC_THREAD:
    return h->size >= sizeof(rec_thread);
  case REC_DEVTIME:
    return h->size >= sizeof(rec_devtime);
  case REC_DEVCLOCK:
    return h->size >= sizeof(rec_devclock);
  case REC_STACK:
    return h->size >= sizeof(rec_stack) &&
           ((const rec_stack *)h)->len <= h->size - sizeof(rec_stack);
  default:
    return false;
  }
}

/* How far ahead of the record read next_seen fetches (a line a record:
 * a scalar call's two records are 80 bytes). */
#define PREFETCH_AHEAD 512u

/* The next record of a ring among those already seen published (up to
 * head_seen), or NULL; skips WRAP markers. Reads at rd; the producer may
 * reuse bytes only up to tail, which moves at commits. */
static inline rec_hdr *next_seen(shim_ring *r)
{
  for (;;) {
    size_t rd = r->rd;
    if (rd == r->head_seen)
      return NULL;
    size_t off = rd & (r->cap - 1); /* a power of two (ringfile.c) */
    if (r->cap - off < sizeof(rec_hdr)) {
      r->rd = rd + (r->cap - off);
      continue;
    }
    rec_hdr *h = (rec_hdr *)(r->buf + off);
    if (__builtin_expect(wr.salvaging, 0) && !wr__record_ok(h, r->head_seen - rd, r->cap - off)) {
      wr.damaged++;
      r->rd = r->head_seen; /* the rest of this ring cannot be trusted */
      return NULL;
    }
    if (h->type == REC_WRAP) {
      r->rd = rd + h->size;
      continue;
    }
    /* Records further on, written on another core: on their way while
     * the ones before them are processed (reading a line from another
     * core takes longer than a call's processing). Only lines published
     * whole, or the producer's next write would find them taken away. */
    size_t ahead = rd + PREFETCH_AHEAD;
    if ((ahead | 63) < r->head_seen)
      __builtin_prefetch(r->buf + (ahead & (r->cap - 1)));
    return h;
  }
}

/* Looks at a ring's head again (the only read of a line its producer
 * writes): whether more records were published since the last look. */
static bool look_again(shim_ring *r)
{
  size_t head = atomic_load_explicit(&r->head, memory_order_acquire);
  if (head == r->head_seen)
    return false;
  r->head_seen = head;
  if (!wr.salvaging && !wr.ending)
    ringfile_populate(r);
  return true;
}

/* The next record of a ring, looking at its head when none is seen yet. */
static rec_hdr *peek(shim_ring *r)
{
  rec_hdr *h = next_seen(r);
  if (!h && look_again(r))
    h = next_seen(r);
  return h;
}

static void consume(shim_ring *r, rec_hdr *h)
{
  r->rd += h->size;
  /* Half the ring read but not committed: commit now, or the producer
   * waits. */
  if (r->rd - atomic_load_explicit(&r->tail, memory_order_relaxed) > r->cap / 2)
    wr.pressure = true;
}

/* After a commit (or when nothing is committed any more): the producers
 * may reuse what was read. */
void wr__publish_tails(void)
{
  for (shim_ring *r = rings_head(); r; r = r->next)
    atomic_store_explicit(&r->tail, r->rd, memory_order_release);
  wr.pressure = false;
  if (!wr.salvaging) /* the payloads stored are safe to reuse too */
    pt_payload_committed();
}

static bool before(const mring *a, const mring *b)
{
  return (int64_t)(a->ticket - b->ticket) < 0;
}

/* The ring's next record seen, into m->h (and its ticket): false when none. */
static inline bool next_of(mring *m)
{
  m->h = next_seen(m->r);
  if (m->h)
    m->ticket = m->h->ticket;
  return m->h != NULL;
}

static void heap_down(size_t i)
{
  for (;;) {
    size_t l = 2 * i + 1, m = i;
    if (l < nheap && before(heap[l], heap[m]))
      m = l;
    if (l + 1 < nheap && before(heap[l + 1], heap[m]))
      m = l + 1;
    if (m == i)
      return;
    mring *t = heap[i];
    heap[i] = heap[m];
    heap[m] = t;
    i = m;
  }
}

static void heap_push(mring *m)
{
  size_t i = nheap++;
  heap[i] = m;
  while (i && before(heap[i], heap[(i - 1) / 2])) {
    mring *t = heap[i];
    heap[i] = heap[(i - 1) / 2];
    heap[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
}

/* Takes in the rings that threads added since the last sweep (a ring is
 * only ever pushed at the list's head). */
static void take_new_rings(void)
{
  shim_ring *head = rings_head();
  if (head == mrings_from)
    return;
  size_t n = 0;
  for (shim_ring *r = head; r && r != mrings_from; r = r->next)
    n++;
  if (wr.nmrings + n > wr.cap_mrings) {
    size_t cap = (wr.nmrings + n) * 2;
    mring *v = realloc(wr.mrings, cap * sizeof *v);
    mring **hp = v ? realloc(heap, cap * sizeof *hp) : NULL;
    if (v)
      wr.mrings = v;
    if (!hp)
      abort(); /* as t_reserve: the writer cannot go on without memory */
    heap = hp;
    /* The heap points into mrings: it moved. */
    nheap = 0;
    for (size_t i = 0; i < wr.nmrings; i++)
      if (wr.mrings[i].h)
        heap_push(&wr.mrings[i]);
    wr.cap_mrings = cap;
  }
  for (shim_ring *r = head; r && r != mrings_from; r = r->next)
    wr.mrings[wr.nmrings++] = (mring){r, NULL, 0, 0, NULL};
  mrings_from = head;
  if (!wr.salvaging && !wr.ending) /* a thread took the spare slot: the next thread's */
    ringfile_make_spare();
}

/* Forgets the rings (their list is replaced: salvage, a new writer). */
void wr__forget_rings(void)
{
  free(wr.mrings);
  free(heap);
  wr.mrings = NULL;
  heap = NULL;
  wr.nmrings = wr.cap_mrings = nheap = 0;
  mrings_from = NULL;
  looks = 0;
}

/* Whether the merge goes on: not when a ring needs a commit (the
 * producers wait) or a fork waits for the writer to stand still, unless
 * everything is being read before the end; never once the transaction has
 * stored payloads for too long (wr.long_txn: other processes wait for the
 * file). */
static inline bool may_go_on(void)
{
  return !wr.long_txn &&
         (wr.draining ||
          (!wr.pressure && !atomic_load_explicit(&wr__fork_wait, memory_order_relaxed)));
}

/* Processes the records of every ring in ticket order, for as long as
 * there are any; stops early when a ring needs a commit. Returns the
 * number processed.
 *
 * Why this order is safe without a shared counter: a record can depend
 * only on records published before it was made (a call uses a handle
 * after the call that made it returned), and those have lower tickets
 * (a return stamp is read before its record is published; an entry stamp
 * only after every earlier load, shim_stamp_after_loads). Two returns are
 * ordered as the calls returned, which is not always the order of their
 * effects: wr__release_in_flight (writer_ids.c) says when that matters.
 * Once a record is seen, they are visible too. So a record seen at look
 * L is processed only after a sweep that began after L looked again at
 * every ring with nothing seen: a record it depends on is then either
 * seen (and, lower, comes out of the heap first) or in a ring whose next
 * seen record is lower still (and comes first, its own successors
 * behind it). Between sweeps a ring gives a run of records without any
 * look at the others while its tickets stay below the next ring's. */
size_t wr__merge(void)
{
  size_t done = 0;
  while (may_go_on()) {
    uint64_t sweep = ++looks;
    /* A ring is in the list before its first record is published: a
     * thread whose record another's depends on is found here. */
    take_new_rings();
    for (size_t i = 0; i < wr.nmrings; i++) {
      mring *m = &wr.mrings[i];
      if (!m->h && look_again(m->r) && next_of(m)) {
        m->seen = sweep;
        heap_push(m);
      }
    }
    if (!nheap)
      return done;
    while (nheap && may_go_on()) {
      mring *m = heap[0];
      if (m->seen >= sweep)
        break; /* seen at or after this sweep: look at the others again first */
      mring *next = nheap > 2 && before(heap[2], heap[1]) ? heap[2] : nheap > 1 ? heap[1] : NULL;
      rec_hdr *h = m->h;
      do {
        wr__handle_record(m, h);
        consume(m->r, h);
        wr.last_ticket = h->ticket;
        done++;
        h = next_of(m) ? m->h : NULL;
      } while (h && (!next || before(m, next)) && (!wr.pressure || wr.draining) &&
               !wr.long_txn);
      if (!h && look_again(m->r) && next_of(m))
        m->seen = ++looks;
      if (m->h) {
        heap_down(0);
      } else {
        heap[0] = heap[--nheap];
        heap_down(0);
      }
    }
  }
  return done;
}

/* Drops whatever the rings hold (after a failure: keep producers moving). */
void wr__discard(void)
{
  wr__wait_encoders();
  wr__materialize_inflight();
  for (shim_ring *r = rings_head(); r; r = r->next) {
    rec_hdr *h;
    while ((h = peek(r))) {
      if (h->type == REC_ENTRY || h->type == REC_EXIT) {
        item_view items[MAX_ITEMS_VIEW];
        const unsigned char *p;
        unsigned nitems;
        if (h->type == REC_ENTRY) {
          p = wr__entry_items((const rec_entry *)h);
          nitems = ((const rec_entry *)h)->nitems;
        } else {
          p = (const unsigned char *)((const rec_exit *)h + 1);
          nitems = ((const rec_exit *)h)->nitems;
        }
        unsigned got = wr__read_items(p, nitems, items, MAX_ITEMS_VIEW);
        wr__free_heap_items(items, got);
      } else if (h->type == REC_READBACK && ((const rec_readback *)h)->heap &&
                 ((const rec_readback *)h)->size && !wr.salvaging) {
        uint64_t token;
        memcpy(&token, (const rec_readback *)h + 1, sizeof token);
        pt_payload_discard(token);
      }
      consume(r, h);
    }
  }
  for (size_t i = 0; i < wr.nmrings; i++)
    wr.mrings[i].h = NULL; /* consumed: the merge sees them no more */
  nheap = 0;
  wr__publish_tails();
}
