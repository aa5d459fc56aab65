/*
 * writer_chunks.c: completed calls gathered into chunks and stored, a row
 * of up to PT_CHUNK_CALLS calls each; the chunks are encoded and
 * compressed (chunk.c) on encoder threads beside the merge thread.
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "writer_internal.h"

/* Completed calls are stored in chunks: one call_chunks row holds up to
 * PT_CHUNK_CALLS calls (or CHUNK_BYTES of their text), encoded column by
 * column and compressed (chunk.c), so that a row's cost spreads over many
 * calls (the `calls` view unpacks them). Calls still running at a commit
 * go to `inflight` until they return.
 *
 * Only gathering a chunk's calls needs their order; encoding and
 * compressing it does not, so it runs on encoder threads: the merge
 * thread adds each call's text to a job (pt_chunk_enc_add), hands a full
 * job over, and goes on merging with another; an encoder turns the job
 * into its blob (pt_chunk_enc_finish). An encoder is started when a job is
 * handed over and every encoder is busy, up to one per recording thread
 * and one fewer than the processors online (at least one), so that they
 * grow with the threads that record. Salvage encodes on its own thread. */

#define MAX_ENCODERS 16
#define MAX_JOBS (2 * MAX_ENCODERS + 2)

/* Chunks handed over wait in memory for the commit, so that the
 * database's write lock is taken at the commit only: between commits
 * other processes recording into the same file get their turn. The commit
 * waits for those still being encoded, and stores them in the order they
 * were handed over (seq order), with the checkpoint that says the rings
 * were read past them. */
typedef struct ready_chunk {
  text blob;
  int64_t first_seq, last_seq, ncalls;
} ready_chunk;

/* Shared with the encoders, under enc_lock: */
static pthread_mutex_t enc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t enc_work = PTHREAD_COND_INITIALIZER; /* a job queued, or stop */
static pthread_cond_t enc_done = PTHREAD_COND_INITIALIZER; /* a job encoded */
static ready_chunk *ready;
static size_t nready, cap_ready;
static chunk_job *queued, **queued_tail = &queued, *free_jobs;
static size_t njobs, nbusy, npending; /* made; encoders at work; handed over, not done */
static pi_thread encoders[MAX_ENCODERS];
static size_t nencoders;
static bool enc_stop;

/* The merge thread's own: */
static printer merge_printer; /* the merge thread's, for a chunk it encodes itself */

static void printer_free(printer *p)
{
  free(p->out.p);
  free(p->c.in.p);
  free(p->c.inl.p);
  *p = (printer){0};
}

/* Encodes a job into its ready chunk, then frees the job (any thread). */
static void encode_job(chunk_job *j, printer *pr)
{
  if (j->nlater)
    wr__print_later(j, pr);
  const void *blob;
  size_t n;
  char why[256];
  if (!pt_chunk_enc_finish(&j->enc, &blob, &n, why, sizeof why)) {
    fprintf(stderr, "pitrace: %s\n", why);
    abort(); /* as t_reserve: out of memory */
  }
  text t = {0};
  t_put(&t, blob, n);
  pthread_mutex_lock(&enc_lock);
  ready[j->order].blob = t;
  j->next = free_jobs;
  free_jobs = j;
  pthread_cond_broadcast(&enc_done);
  pthread_mutex_unlock(&enc_lock);
}

static void *encoder_main(void *arg)
{
  (void)arg;
  pthread_setname_np(pthread_self(), "pitrace-enc"); /* for top, perf, bench_record */
  printer pr = {0};
  pthread_mutex_lock(&enc_lock);
  for (;;) {
    while (!queued && !enc_stop)
      pthread_cond_wait(&enc_work, &enc_lock);
    chunk_job *j = queued;
    if (!j)
      break; /* stopped, and nothing left */
    if (!(queued = j->next))
      queued_tail = &queued;
    nbusy++;
    pthread_mutex_unlock(&enc_lock);
    encode_job(j, &pr);
    pthread_mutex_lock(&enc_lock);
    nbusy--;
    npending--;
    pthread_cond_broadcast(&enc_done);
  }
  pthread_mutex_unlock(&enc_lock);
  printer_free(&pr);
  return NULL;
}

/* Starts one more encoder when every one is busy and the limits allow
 * (enc_lock held); false when none runs at all. Encoders take no signal:
 * the application's threads handle them (a crash handler that waits for
 * the writer, run on an encoder, would wait for itself). */
static bool more_encoders(void)
{
  static long cpus;
  if (!cpus)
    cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t most = cpus > 2 ? (size_t)cpus - 1 : 1;
  if (most > wr.nmrings)
    most = wr.nmrings ? wr.nmrings : 1;
  if (most > MAX_ENCODERS)
    most = MAX_ENCODERS;
  if (wr.salvaging || nencoders >= most || nbusy < nencoders)
    return nencoders > 0;
  if (pi_thread_start(&encoders[nencoders], encoder_main, NULL))
    nencoders++;
  return nencoders > 0;
}

/* A job to fill: a free one, a new one, or (all MAX_JOBS at work) the
 * first to come free. */
chunk_job *wr__take_job(void)
{
  pthread_mutex_lock(&enc_lock);
  while (!free_jobs && njobs >= MAX_JOBS)
    pthread_cond_wait(&enc_done, &enc_lock);
  chunk_job *j = free_jobs;
  if (j)
    free_jobs = j->next;
  else if ((j = calloc(1, sizeof *j)))
    njobs++;
  pthread_mutex_unlock(&enc_lock);
  if (!j)
    abort(); /* as t_reserve: the writer cannot go on without memory */
  return j;
}

/* Hands the chunk being filled over to the encoders (or encodes it here
 * when none runs). */
void wr__flush_chunk(void)
{
  chunk_job *j = wr.cur_job;
  if (!j || !j->enc.n || wr.failed)
    return;
  wr.cur_job = NULL;
  pthread_mutex_lock(&enc_lock);
  if (nready == cap_ready) {
    size_t cap = cap_ready ? cap_ready * 2 : 16;
    ready_chunk *v = realloc(ready, cap * sizeof *v);
    if (!v)
      abort(); /* as t_reserve: the writer cannot go on without memory */
    ready = v;
    cap_ready = cap;
  }
  j->order = nready++;
  ready[j->order] = (ready_chunk){{NULL, 0, 0}, j->enc.first_seq, j->enc.last_seq,
                                  (int64_t)j->enc.n};
  /* The last chunk of a session that started no encoder: encoded here
   * rather than on a thread started for it, whose end is waited for. */
  bool inline_ = (wr.ending && !nencoders) || !more_encoders();
  if (!inline_) {
    j->next = NULL;
    *queued_tail = j;
    queued_tail = &j->next;
    npending++;
    pthread_cond_signal(&enc_work);
  }
  pthread_mutex_unlock(&enc_lock);
  if (inline_)
    encode_job(j, &merge_printer);
}

/* Waits for the encoders to finish the chunks handed over: until then
 * they may read the records of the calls they print in the rings. */
void wr__wait_encoders(void)
{
  pthread_mutex_lock(&enc_lock);
  while (npending)
    pthread_cond_wait(&enc_done, &enc_lock);
  pthread_mutex_unlock(&enc_lock);
}

/* Stores the chunks handed over since the last commit, once encoded. */
void wr__write_chunks(void)
{
  wr__wait_encoders();
  for (size_t i = 0; i < nready; i++) {
    if (!wr.failed) {
      sqlite3_bind_int64(wr.st_chunk, 1, wr.session_id);
      sqlite3_bind_int64(wr.st_chunk, 2, ++wr.chunk_id);
      sqlite3_bind_int64(wr.st_chunk, 3, ready[i].first_seq);
      sqlite3_bind_int64(wr.st_chunk, 4, ready[i].last_seq);
      sqlite3_bind_int64(wr.st_chunk, 5, ready[i].ncalls);
      sqlite3_bind_blob(wr.st_chunk, 6, ready[i].blob.p, (int)ready[i].blob.len, SQLITE_STATIC);
      wr__step(wr.st_chunk, "storing calls");
    }
    free(ready[i].blob.p);
  }
  nready = 0;
}

/* Lets the encoders finish what is queued, and ends them. */
void wr__stop_encoders(void)
{
  pthread_mutex_lock(&enc_lock);
  enc_stop = true;
  pthread_cond_broadcast(&enc_work);
  pthread_mutex_unlock(&enc_lock);
  for (size_t i = 0; i < nencoders; i++)
    pi_thread_join(&encoders[i]);
  nencoders = 0;
  enc_stop = false;
}

/* Frees the jobs and the chunks not stored (the encoders are stopped). */
void wr__free_chunks(void)
{
  if (wr.cur_job) {
    wr.cur_job->next = free_jobs;
    free_jobs = wr.cur_job;
    wr.cur_job = NULL;
  }
  for (chunk_job *j = free_jobs, *n; j; j = n) {
    n = j->next;
    pt_chunk_enc_free(&j->enc);
    free(j->later);
    free(j->found.v);
    free(j);
  }
  printer_free(&merge_printer);
  free_jobs = NULL;
  njobs = 0;
  for (size_t i = 0; i < nready; i++)
    free(ready[i].blob.p);
  free(ready);
  ready = NULL;
  nready = cap_ready = 0;
}

void wr__chunks_fork_lock(void) { pthread_mutex_lock(&enc_lock); }
void wr__chunks_fork_unlock(void) { pthread_mutex_unlock(&enc_lock); }

/* In a forked child: no encoder threads (the parent's idle ones are not
 * here), the condition variables without the parent's waiters. */
void wr__chunks_fork_child(void)
{
  nencoders = 0;
  nbusy = npending = 0;
  enc_stop = false;
  enc_work = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
  enc_done = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
  pthread_mutex_unlock(&enc_lock);
}
