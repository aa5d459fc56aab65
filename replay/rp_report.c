/*
 * rp_report.c: the outcome of a replay: notes (differences that are no
 * divergence), the first divergence or the reason replay could not go on
 * (the one with the smallest seq wins when threads race), memory kept for
 * the device, and the progress line on a terminal.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpx.h"

#define MAX_NOTES_SHOWN 20

void rp_lock(rp_engine *e)
{
  if (e->mt)
    pthread_mutex_lock(&e->lock);
}

void rp_unlock(rp_engine *e)
{
  if (e->mt)
    pthread_mutex_unlock(&e->lock);
}

void rp_note(rp_engine *e, int64_t seq, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  rp_notice n = {seq, NULL};
  if (vasprintf(&n.text, fmt, ap) < 0)
    n.text = NULL;
  va_end(ap);
  rp_lock(e);
  if (!n.text || !rp_push(&e->notes, &e->nnotes, &e->cap_notes, sizeof n, &n))
    free(n.text);
  rp_unlock(e);
}

void rp_keep(rp_engine *e, void *p)
{
  rp_lock(e);
  if (!rp_push(&e->kept, &e->nkept, &e->cap_kept, sizeof p, &p))
    free(p); /* out of memory: better a lost buffer than a leak report */
  rp_unlock(e);
}

char *rp_call_text(const pi_api_desc *api, const uint64_t *argv)
{
  pi_sbuf b;
  pi_sbuf_init(&b, NULL, 0);
  pi_format_call_enter(&b, api, argv, NULL);
  pi_sbuf_puts(&b, ")");
  if (!b.heap)
    return strdup("");
  return b.p;
}

int rp_stop(rp_engine *e, int status, const pt_call *c, const char *call_text, const char *what)
{
  const pi_api_desc *api = rp_api(c);
  char *text = NULL;
  int n;
  if (status == RP_DIVERGED)
    n = asprintf(&text, "diverged at seq %lld (thread %u): %s\n%s\n  %s\n", (long long)c->seq,
                 c->thread, api ? api->name : "?", call_text ? call_text : "", what);
  else
    n = asprintf(&text, "%s", what);
  if (n < 0)
    text = NULL;
  rp_lock(e);
  if (text && (!e->report || c->seq < e->stop_seq)) {
    free(e->report);
    e->report = text;
    e->status = status;
    e->stop_seq = c->seq;
    text = NULL;
  }
  atomic_store(&e->stop, true);
  rp_unlock(e);
  free(text);
  return status;
}

uint64_t rp_now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A single updating line on stderr, when it is a terminal and the replay
 * has run for a quarter of a second; `final` clears it. */
/* Called after every call on a terminal: draws at most every 100 ms, from
 * a quarter of a second on. */
void rp_progress(rp_engine *e, bool final)
{
  if (!e->tty)
    return;
  uint64_t t = rp_now_ns();
  if (final) {
    if (atomic_load(&e->progress_last))
      fputs("\r\033[K", stderr);
    return;
  }
  uint64_t last = atomic_load(&e->progress_last);
  if (t - e->progress_t0 < 250000000u || t - last < 100000000u ||
      !atomic_compare_exchange_strong(&e->progress_last, &last, t))
    return; /* not due, or another thread draws it */
  uint64_t done = atomic_load(&e->done);
  fprintf(stderr, "\rpitrace replay: %llu of %llu calls (%llu%%)", (unsigned long long)done,
          (unsigned long long)e->total,
          (unsigned long long)(e->total ? done * 100 / e->total : 100));
}

static int cmp_note(const void *a, const void *b)
{
  const rp_notice *x = a, *y = b;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void print_notes(rp_engine *e)
{
  if (e->nnotes)
    qsort(e->notes, e->nnotes, sizeof *e->notes, cmp_note);
  for (size_t i = 0; i < e->nnotes && i < MAX_NOTES_SHOWN; i++) {
    if (e->notes[i].seq > 0)
      printf("note: seq %lld %s\n", (long long)e->notes[i].seq, e->notes[i].text);
    else
      printf("note: %s\n", e->notes[i].text);
  }
  if (e->nnotes > MAX_NOTES_SHOWN)
    printf("note: ... and %zu more notes\n", e->nnotes - MAX_NOTES_SHOWN);
}

int rp_finish(rp_engine *e, const char *device)
{
  print_notes(e);
  if (e->status == RP_FAILED) {
    fflush(stdout);
    fprintf(stderr, "pitrace replay: %s\n", e->report ? e->report : "cannot replay");
  } else if (e->status == RP_DIVERGED) {
    fputs(e->report, stdout);
  } else {
    printf("matched: %llu calls replayed on %s; %llu read-backs verified; %zu notes\n",
           (unsigned long long)atomic_load(&e->done), device,
           (unsigned long long)atomic_load(&e->verified), e->nnotes);
  }
  fflush(stdout);
  return e->status;
}

void rp_engine_free(rp_engine *e)
{
  for (size_t i = 0; i < e->nnotes; i++)
    free(e->notes[i].text);
  free(e->notes);
  for (size_t i = 0; i < e->npending; i++)
    free(e->pending[i].text);
  free(e->pending);
  for (size_t i = 0; i < e->nkept; i++)
    free(e->kept[i]);
  free(e->kept);
  free(e->report);
  free(e->ran);
  pt_free_notes(e->rec_notes, e->nrec_notes);
  rp_ids_free(&e->ids);
  rp_natives_free(&e->natives);
  pthread_mutex_destroy(&e->lock);
}
