/*
 * record_prog: workloads for the recorder's tests, each ending in a way the
 * session must survive.
 *
 *   record_prog crash N     N device queries, then a segfault
 *   record_prog abort N     N queries, then abort()
 *   record_prog aborttwo N  N queries, then abort() on two threads at once
 *   record_prog kill N      N queries, a pause, then SIGKILL to itself
 *   record_prog exit N      N queries, a pause, then _exit(3) (no teardown)
 *   record_prog quickexit N N queries, then _exit(3) at once (nothing flushed)
 * (RECORD_PROG_EXIT=_exit ends any mode so: _exit(3) right after it.)
 *   record_prog count FILE [US]  queries without end (US microseconds
 *                           apart: a session that grows steadily while read);
 *                           after each one returns, the number returned so far
 *                           goes into FILE's first 8 bytes (shared mapping):
 *                           whoever kills it knows how many calls had returned
 *   record_prog threads T M T threads making M queries each
 *   record_prog threadsexit T M  the same, then _exit(3) at once once they are
 *                           joined (every thread's ring left to salvage)
 *   record_prog gap MS      a query, MS milliseconds of sleep, a query; prints the
 *                           gap between the two as the program saw it on
 *                           CLOCK_MONOTONIC: "gap INNER OUTER" (ns, from the first
 *                           query's return to the second's call, and from the
 *                           first's call to the second's return)
 *   record_prog handoff P M P pairs of threads: one makes M buffers, one
 *                           at a time, and hands each to the other, which
 *                           releases it at once (a call using an object
 *                           another thread's call made just before)
 *   record_prog slowcall M  a program built from source (a new one each run,
 *                           so nothing is cached: a long call) on one thread
 *                           while the main thread makes M queries, then one
 *                           a millisecond until the build has returned (at
 *                           most 3000): the build's call returns after many
 *                           later calls
 *   record_prog reuse       a thread makes a buffer, another releases it, then
 *                           the first makes a second one and releases it; then
 *                           _exit(3) (the rings left to salvage: a test puts
 *                           their records in the order of a race)
 *   record_prog fp64        a kernel on doubles built from source (a device
 *                           without fp64, rusticl, fails to build it)
 *   record_prog infojunk    the device's name into a 4 KiB buffer full of 'Z'
 *                           with no size asked back
 *   record_prog readback [N]  a non-blocking read completed by an event wait,
 *                           and the same buffer written twice (N ints, i * 3;
 *                           1024 by default)
 *   record_prog bigwrites T M  T threads, each with a queue and a 2 MiB buffer
 *                           of its own in one context, each writing it M times,
 *                           every write different: int k of thread t's write
 *                           m is (t << 24 | m << 16) + k
 *   record_prog bigwrites T 0 STOP  the same until the file STOP exists (m
 *                           counted modulo 256)
 *   record_prog bigwrites T M B  the same B times (bursts: new threads,
 *                           queues and buffers each time, the same bytes),
 *                           300 ms apart
 *   record_prog latenote    a query, then a thread that hands the runtime a
 *                           callback note (value 0x1234) and ends without a
 *                           call (the note waits for a call that never comes)
 *   record_prog freshmap    a buffer made without data mapped for reading and
 *                           writing (what it holds is undefined), filled
 *                           through the map and half of it read back; a
 *                           second such buffer read at once (undefined too)
 *   record_prog partial     a buffer made without data (96 KiB), a kernel that
 *                           writes its first quarter, the whole of it read
 *                           back (the rest undefined), the quarter checked
 *   record_prog handled SIG a handler of its own for signal SIG (installed
 *                           before the runtime starts), a query, then waits
 *                           (up to 20 s) for two SIGs and makes a query more
 *   record_prog handledslow SIG  the same with a handler that takes 300 ms
 *   record_prog reraise SIG  a handler of its own for SIG, installed once
 *                       the runtime has started (over the recorder's, which
 *                       its next context puts in front of it again), that
 *                       cleans up ("cleaned up"), puts back the handler it
 *                       replaced and raises SIG again without unblocking
 *                       it: the classic way to end on a signal after
 *                       cleaning up
 *   record_prog chdir DIR   a query, then into directory DIR, then 100 queries
 *   record_prog alarm       a query, then alarm(1) and 3 s of sleep: the alarm
 *                           ends it (else "survived SIGALRM", exit 0)
 *   record_prog sigmasks    a query, then each thread's name and the signals it
 *                           blocks ("thread NAME blocks HEX")
 *   record_prog sigwait     no calls: SIGINT and SIGTERM blocked, "sigwait ready",
 *                           then a line for each that comes ("INT from the
 *                           kernel" for a terminal's ^C, "INT sent"), until
 *                           SIGTERM ("TERM", exit 0)
 *   record_prog churn N [P] N threads one after another, each a note
 *                           ("thread TID", a cache note) and a query (each
 *                           says "made 1 calls"), from P threads at once (1),
 *                           then _exit(3)
 *   record_prog handover    a thread makes 30,000 queries (its ring half
 *                           fills: a commit, part-way), a note ("thread
 *                           TID") and a query, and exits; 5 ms later a second
 *                           thread (its ring that thread's) the same note and
 *                           a query; then _exit(3), before the next commit
 *   record_prog exec PROG [ARG...]  a query, then the process goes on as PROG
 *                           (execv, the rest of the command line its argv)
 *   record_prog forkcall [exit]  a query, then a child forked that makes 2
 *                           queries ("the child PID made 2 calls") and ends
 *                           with _exit (exit: through exit), then a query more;
 *                           with RECORD_PROG_FORK_CHDIR=DIR, the parent goes
 *                           into DIR before the fork; with
 *                           RECORD_PROG_FORK_HELD=FILE, it says "waiting for
 *                           FILE", waits for FILE, makes a query more and
 *                           forks 200 ms later, and the child first says how
 *                           many files without a name it holds open
 *   record_prog forkmany N  a thread makes queries without a pause while
 *                           the main thread forks N children, one at a time,
 *                           each making 3 queries and ending through exit;
 *                           then the thread stops ("the thread made K
 *                           calls", "N children made 3 calls each")
 *   record_prog forkpar N   a query, then two threads forking N times each at
 *                           once (the children end at once), a query
 *   record_prog forknest    a query; a child that makes 3 queries, takes the
 *                           session file's write lock itself (its writer
 *                           cannot stand still for a fork then), makes a
 *                           query and forks a grandchild that makes 5 and
 *                           ends with _exit; the child lets the lock go and
 *                           makes one more; the parent one more
 *   record_prog forkterm    a query, then a child forked that sleeps, stopped
 *                           by SIGTERM ("the child ended by signal 15 in N
 *                           ms"); a query, then _exit(3)
 * It prints "made K calls" (K: the queries it made; slowcall: the first M)
 * before it ends.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sqlite3.h>
#include <unistd.h>

#include "pirt.h"

static pirt_device *dev;

/* n info queries; 0, or 2 after saying why one failed. */
static int queries_quiet(int n)
{
  for (int i = 0; i < n; i++) {
    pi_uint32 units = 0;
    if (pirt_device_query(dev, PI_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof units, &units,
                          NULL) != PI_SUCCESS) {
      printf("record_prog: %s\n", pirt_error_message());
      return 2;
    }
  }
  return 0;
}

static int queries(int n)
{
  if (queries_quiet(n))
    return 2;
  printf("record_prog: made %d calls\n", n);
  fflush(stdout);
  return 0;
}

/* Queries until killed, publishing how many returned. */
static int count_until_killed(const char *file, long pace_us)
{
  int fd = open(file, O_RDWR | O_CREAT, 0600);
  if (fd < 0 || ftruncate(fd, 4096) != 0) {
    perror(file);
    return 2;
  }
  _Atomic uint64_t *done = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (done == MAP_FAILED) {
    perror(file);
    return 2;
  }
  for (uint64_t n = 1;; n++) {
    pi_device_type type = 0; /* a query every device answers, test doubles too */
    if (pirt_device_query(dev, PI_DEVICE_INFO_TYPE, sizeof type, &type, NULL) != PI_SUCCESS) {
      printf("record_prog: %s\n", pirt_error_message());
      return 2;
    }
    atomic_store(done, n);
    if (pace_us > 0) {
      struct timespec nap = {pace_us / 1000000, pace_us % 1000000 * 1000};
      nanosleep(&nap, NULL);
    }
  }
}

static void *thread_main(void *arg)
{
  return (void *)(intptr_t)queries((int)(intptr_t)arg);
}

/* Joins threads th[0..n): whether any of them returned non-NULL (failed). */
static bool join_all(pthread_t *th, int n)
{
  bool bad = false;
  for (int i = 0; i < n; i++) {
    void *r;
    pthread_join(th[i], &r);
    bad |= r != NULL;
  }
  return bad;
}

/* handoff: a one-buffer mailbox between a maker and a releaser. */
typedef struct mailbox {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  pirt_buffer *slot;
  int m;
  pirt_context *ctx;
} mailbox;

static void *maker(void *arg)
{
  mailbox *mb = arg;
  for (int i = 0; i < mb->m; i++) {
    pirt_buffer *b;
    if (pirt_buffer_create(mb->ctx, 0, 64, NULL, &b) != PI_SUCCESS)
      return (void *)1;
    pthread_mutex_lock(&mb->lock);
    while (mb->slot)
      pthread_cond_wait(&mb->cond, &mb->lock);
    mb->slot = b;
    pthread_cond_broadcast(&mb->cond);
    pthread_mutex_unlock(&mb->lock);
  }
  return NULL;
}

static void *releaser(void *arg)
{
  mailbox *mb = arg;
  for (int i = 0; i < mb->m; i++) {
    pthread_mutex_lock(&mb->lock);
    while (!mb->slot)
      pthread_cond_wait(&mb->cond, &mb->lock);
    pirt_buffer *b = mb->slot;
    mb->slot = NULL;
    pthread_cond_broadcast(&mb->cond);
    pthread_mutex_unlock(&mb->lock);
    if (pirt_buffer_release(b) != PI_SUCCESS)
      return (void *)1;
  }
  return NULL;
}

static int handoff(int pairs, int m)
{
  pirt_context *ctx;
  if (pirt_context_create(dev, &ctx) != PI_SUCCESS) {
    printf("record_prog: %s\n", pirt_error_message());
    return 2;
  }
  mailbox mb[32];
  pthread_t th[64];
  int n = 0;
  for (int i = 0; i < pairs && i < 32; i++) {
    mb[i] = (mailbox){PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, m, ctx};
    pthread_create(&th[n++], NULL, maker, &mb[i]);
    pthread_create(&th[n++], NULL, releaser, &mb[i]);
  }
  bool bad = join_all(th, n);
  pirt_context_release(ctx);
  printf("record_prog: handed off %d buffers\n", n / 2 * m);
  return bad ? 2 : 0;
}

/* reuse: the first buffer goes from the maker to the releaser, which says
 * when it released it. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  pirt_context *ctx;
  pirt_buffer *made;
  bool released;
} reuse_box = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, false};

static void *reuse_maker(void *arg)
{
  (void)arg;
  pirt_buffer *b;
  if (pirt_buffer_create(reuse_box.ctx, 0, 64, NULL, &b) != PI_SUCCESS)
    return (void *)1;
  pthread_mutex_lock(&reuse_box.lock);
  reuse_box.made = b;
  pthread_cond_broadcast(&reuse_box.cond);
  while (!reuse_box.released)
    pthread_cond_wait(&reuse_box.cond, &reuse_box.lock);
  pthread_mutex_unlock(&reuse_box.lock);
  if (pirt_buffer_create(reuse_box.ctx, 0, 64, NULL, &b) != PI_SUCCESS ||
      pirt_buffer_release(b) != PI_SUCCESS)
    return (void *)1;
  return NULL;
}

static void *reuse_releaser(void *arg)
{
  (void)arg;
  pthread_mutex_lock(&reuse_box.lock);
  while (!reuse_box.made)
    pthread_cond_wait(&reuse_box.cond, &reuse_box.lock);
  pthread_mutex_unlock(&reuse_box.lock);
  pi_result r = pirt_buffer_release(reuse_box.made);
  pthread_mutex_lock(&reuse_box.lock);
  reuse_box.released = true;
  pthread_cond_broadcast(&reuse_box.cond);
  pthread_mutex_unlock(&reuse_box.lock);
  return (void *)(intptr_t)(r != PI_SUCCESS);
}

static int reuse(void)
{
  if (pirt_context_create(dev, &reuse_box.ctx) != PI_SUCCESS) {
    printf("record_prog: %s\n", pirt_error_message());
    return 2;
  }
  pthread_t m, r;
  void *rm, *rr;
  pthread_create(&m, NULL, reuse_maker, NULL);
  pthread_create(&r, NULL, reuse_releaser, NULL);
  pthread_join(m, &rm);
  pthread_join(r, &rr);
  if (rm || rr) {
    printf("record_prog: %s\n", pirt_error_message());
    return 2;
  }
  printf("record_prog: made 2 buffers on one thread, released 1 on another\n");
  fflush(stdout);
  _exit(3);
}

static atomic_bool build_begun, build_done;

static void *build_main(void *arg)
{
  (void)arg;
  char src[256];
  snprintf(src, sizeof src, "kernel void k%ld(global int *p) { p[get_global_id(0)] = %ld; }\n",
           (long)getpid(), (long)time(NULL));
  pirt_context *ctx;
  pirt_program *prog = NULL;
  pi_result r = pirt_context_create(dev, &ctx);
  atomic_store(&build_begun, true);
  if (r == PI_SUCCESS)
    r = pirt_program_create_source(ctx, src, NULL, &prog);
  if (prog)
    pirt_program_release(prog);
  if (r == PI_SUCCESS)
    pirt_context_release(ctx);
  atomic_store(&build_done, true);
  return (void *)(intptr_t)(r != PI_SUCCESS);
}

static uint64_t now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void pause_ms(int ms)
{
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static int readback(long n)
{
  pirt_context *ctx;
  pirt_queue *q;
  pirt_buffer *b;
  size_t bytes = (size_t)n * sizeof(int);
  int *data = malloc(bytes), *back = malloc(bytes);
  if (!data || !back) {
    printf("record_prog: out of memory for %ld ints\n", n);
    return 2;
  }
  for (long i = 0; i < n; i++)
    data[i] = (int)(i * 3);
  if (pirt_context_create(dev, &ctx) || pirt_queue_create(ctx, 0, &q) ||
      pirt_buffer_create(ctx, 0, bytes, NULL, &b) ||
      pirt_write(q, b, true, 0, bytes, data, 0, NULL, NULL) ||
      pirt_write(q, b, true, 0, bytes, data, 0, NULL, NULL)) {
    printf("record_prog: %s\n", pirt_error_message());
    return 2;
  }
  pirt_event *ev;
  memset(back, 0, bytes);
  if (pirt_read(q, b, false, 0, bytes, back, 0, NULL, &ev) || pirt_event_wait(1, &ev)) {
    printf("record_prog: %s\n", pirt_error_message());
    return 2;
  }
  pirt_event_release(ev);
  pirt_buffer_release(b);
  pirt_queue_release(q);
  pirt_context_release(ctx);
  printf("record_prog: read back %s\n", memcmp(data, back, bytes) ? "WRONG" : "ok");
  free(data);
  free(back);
  return 0;
}

/* freshmap (above): 96 KiB buffers, so that their data are blobs. */
/* bigwrites: what one thread writes (record_prog's header says). */
#define BIG_INTS (512 * 1024)
static pirt_context *big_ctx;
static int big_m;               /* 0: until big_stop exists */
static const char *big_stop;

static void *big_writer(void *arg)
{
  int t = (int)(intptr_t)arg;
  pirt_queue *q;
  pirt_buffer *b;
  int *data = malloc(BIG_INTS * sizeof *data);
  if (!data || pirt_queue_create(big_ctx, 0, &q) ||
      pirt_buffer_create(big_ctx, 0, BIG_INTS * sizeof *data, NULL, &b)) {
    printf("record_prog: %s\n", data ? pirt_error_message() : "out of memory");
    free(data);
    return (void *)1;
  }
  int bad = 0;
  for (int m = 0; (big_m ? m < big_m : access(big_stop, F_OK) != 0) && !bad; m++) {
    for (int k = 0; k < BIG_INTS; k++)
      data[k] = (t << 24 | (m & 0xff) << 16) + k;
    if (pirt_write(q, b, true, 0, BIG_INTS * sizeof *data, data, 0, NULL, NULL)) {
      printf("record_prog: %s\n", pirt_error_message());
      bad = 1;
    }
  }
  pirt_buffer_release(b);
  pirt_queue_release(q);
  free(data);
  return (void *)(intptr_t)bad;
}

static int bigwrites(int threads, int m, const char *stop, int bursts)
{
  pthread_t th[64];
  big_m = m;
  big_stop = stop;
  if (pirt_context_create(dev, &big_ctx)) {
    printf("record_prog: %s\n", pirt_error_message());
    return 2;
  }
  bool bad = false;
  for (int b = 0; b < bursts && !bad; b++) {
    if (b)
      usleep(300000);
    for (int t = 0; t < threads; t++)
      pthread_create(&th[t], NULL, big_writer, (void *)(intptr_t)t);
    bad = join_all(th, threads);
  }
  pirt_context_release(big_ctx);
  if (m)
    printf("record_prog: %d big writes %s\n", threads * m * bursts, bad ? "FAILED" : "made");
  else
    printf("record_prog: big writes until %s %s\n", stop, bad ? "FAILED" : "made");
  return bad ? 2 : 0;
}

static int freshmap(void)
{
  enum { N = 24 * 1024 };
  static int back[N], undefined[N];
  pirt_context *ctx;
  pirt_queue *q;
  pirt_buffer *b, *b2;
  int *p;
  if (pirt_context_create(dev, &ctx) || pirt_queue_create(ctx, 0, &q) ||
      pirt_buffer_create(ctx, 0, sizeof back, NULL, &b) ||
      pirt_buffer_create(ctx, 0, sizeof back, NULL, &b2) ||
      pirt_map(q, b, PIRT_MAP_READ | PIRT_MAP_WRITE, 0, sizeof back, (void **)&p)) {
    printf("record_prog: %s\n", pirt_error_message());
    return 2;
  }
  for (int i = 0; i < N; i++)
    p[i] = i * 7 + 1;
  /* Half of it read back: not the bytes the unmap wrote, which a session
   * keeps once (a test changes these alone). */
  if (pirt_unmap(q, b, p, 0, NULL, NULL) ||
      pirt_read(q, b, true, 0, sizeof back / 2, back, 0, NULL, NULL) ||
      pirt_read(q, b2, true, 0, sizeof undefined, undefined, 0, NULL, NULL)) {
    printf("record_prog: %s\n", pirt_error_message());
    return 2;
  }
  int bad = 0;
  for (int i = 0; i < N / 2; i++)
    bad += back[i] != i * 7 + 1;
  pirt_buffer_release(b);
  pirt_buffer_release(b2);
  pirt_queue_release(q);
  pirt_context_release(ctx);
  printf("record_prog: fresh map %s\n", bad ? "WRONG" : "ok");
  return bad != 0;
}

static int partial(void)
{
  enum { N = 24 * 1024 };
  static int back[N];
  pirt_context *ctx;
  pirt_queue *q;
  pirt_program *prog;
  pirt_kernel *k;
  pirt_buffer *b;
  size_t quarter = N / 4;
  if (pirt_context_create(dev, &ctx) || pirt_queue_create(ctx, 0, &q) ||
      pirt_program_create_source(ctx, "kernel void quarter(global int *p) "
                                      "{ p[get_global_id(0)] = (int)get_global_id(0) * 3 + 1; }\n",
                                 NULL, &prog) ||
      pirt_kernel_create(prog, "quarter", &k) ||
      pirt_buffer_create(ctx, 0, sizeof back, NULL, &b) ||
      pirt_kernel_set_buffer(k, 0, b) || pirt_launch(q, k, 1, &quarter, NULL, 0, NULL, NULL) ||
      pirt_read(q, b, true, 0, sizeof back, back, 0, NULL, NULL)) {
    printf("record_prog: %s\n", pirt_error_message());
    return 2;
  }
  int bad = 0;
  for (size_t i = 0; i < quarter; i++)
    bad += back[i] != (int)i * 3 + 1;
  pirt_buffer_release(b);
  pirt_kernel_release(k);
  pirt_program_release(prog);
  pirt_queue_release(q);
  pirt_context_release(ctx);
  printf("record_prog: partial %s\n", bad ? "WRONG" : "ok");
  return bad != 0;
}

/* latenote: what a thread of the implementation that runs one callback
 * and no call does (the OpenCL front end's note, then nothing). */
static void *late_note_main(void *arg)
{
  (void)arg;
  uint64_t value[2] = {0x1234, 0};
  pirt_note note = {.kind = PIRT_NOTE_CALLBACK, .text = "record_prog: a callback begins",
                    .value = value, .size = sizeof value};
  pirt_note_emit(&note);
  return NULL;
}

/* A thread of mode `churn`: a note that names it, which goes with its
 * call, then the call. */
static void *note_and_query(void *arg)
{
  (void)arg;
  char text[64];
  snprintf(text, sizeof text, "record_prog: thread %d", (int)syscall(SYS_gettid));
  pirt_note note = {.kind = PIRT_NOTE_CACHE, .text = text};
  pirt_note_emit(&note);
  return (void *)(intptr_t)queries(1);
}

/* The first thread of mode `handover`: enough queries for a commit
 * part-way through them, then as the churn's threads do. */
static void *fill_then_note(void *arg)
{
  (void)arg;
  if (queries_quiet(30000))
    return (void *)1;
  return note_and_query(NULL);
}

/* Mode `churn`: n threads one after another, a note and a query each;
 * NULL, or non-NULL when one failed. */
static void *spawn_one_by_one(void *arg)
{
  int n = (int)(intptr_t)arg;
  for (int i = 0; i < n; i++) {
    pthread_t th;
    void *bad = NULL;
    if (pthread_create(&th, NULL, note_and_query, NULL) != 0)
      return (void *)1;
    pthread_join(th, &bad);
    if (bad)
      return bad;
  }
  return NULL;
}

/* Signals its own handler took (mode `handled`). */
static volatile sig_atomic_t handled;

/* Mode `crashhandled`: a fault handler of Python faulthandler's kind,
 * installed before the first call (PoCL's LLVM installs its own over it
 * then): it says so, puts back the handler it replaced and raises the
 * signal again. */
static struct sigaction fault_replaced;

static void report_fault(int sig)
{
  static const char said[] = "record_prog: fault handler ran\n";
  if (write(1, said, sizeof said - 1) < 0)
    _exit(5);
  sigaction(sig, &fault_replaced, NULL);
  raise(sig);
}

/* Mode `handledslow`: the handler takes 300 ms (a signal sent meanwhile
 * waits, blocked). */
static bool slow_handler;

static void count_signal(int sig)
{
  (void)sig;
  if (slow_handler) {
    struct timespec t = {0, 300000000};
    nanosleep(&t, NULL);
  }
  handled++;
}

/* Mode `reraise SIG`: cleans up, then ends on the signal as it would
 * have without this handler, through the one it replaced. The raised
 * signal waits, blocked, until this handler returns (to whoever called
 * it). */
static struct sigaction replaced;

static void cleanup_and_reraise(int sig)
{
  static const char msg[] = "record_prog: cleaned up\n";
  if (write(1, msg, sizeof msg - 1) < 0) {
    /* nothing to do: the signal ends the process anyway */
  }
  sigaction(sig, &replaced, NULL);
  raise(sig);
}

/* Mode `handled SIG`: a process with a handler of its own for SIG,
 * installed before the runtime starts (so that the recorder's is put in
 * front of it and hands the signal on), which goes on after two of them. */
static int survive_two(void)
{
  if (queries(1))
    return 2;
  for (int i = 0; i < 2000 && handled < 2; i++)
    pause_ms(10);
  if (handled < 2) {
    printf("record_prog: got %d signals in 20 s\n", (int)handled);
    return 2;
  }
  if (queries_quiet(1))
    return 2;
  printf("record_prog: handled 2 signals\n");
  return 0;
}

/* The files this process holds open that have no name (deleted) in the
 * directory of the session (SYCL_PI_RECORD). */
static int unnamed_files(void)
{
  const char *db = getenv("SYCL_PI_RECORD"), *slash = db ? strrchr(db, '/') : NULL;
  DIR *d = opendir("/proc/self/fd");
  if (!d || !slash)
    return -1;
  size_t dir = (size_t)(slash - db) + 1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    char link[300], to[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    ssize_t len = readlink(link, to, sizeof to - 1);
    if (len > 10 && memcmp(to + len - 10, " (deleted)", 10) == 0 && (size_t)len > dir &&
        strncmp(to, db, dir) == 0)
      n++;
  }
  closedir(d);
  return n;
}

/* Mode `forkcall`: a child forked from a recording process makes calls
 * of its own (recorded in a session of its own). */
static int fork_and_call(bool through_exit)
{
  if (queries(1))
    return 2;
  const char *held = getenv("RECORD_PROG_FORK_HELD"); /* the file held meanwhile */
  if (held) {
    printf("record_prog: waiting for %s\n", held);
    fflush(stdout);
    while (access(held, F_OK) != 0)
      usleep(10000);
    if (queries_quiet(1)) /* the writer waits for the file to store it */
      return 2;
    usleep(200000);
  }
  const char *dir = getenv("RECORD_PROG_FORK_CHDIR"); /* the parent moves first */
  if (dir && chdir(dir) != 0) {
    perror(dir);
    return 2;
  }
  pid_t child = fork();
  if (child < 0)
    return 2;
  if (child == 0) {
    if (held)
      printf("record_prog: the child holds %d files without a name\n", unnamed_files());
    int bad = queries_quiet(2);
    printf("record_prog: the child %d made 2 calls\n", (int)getpid());
    fflush(stdout);
    if (through_exit)
      exit(bad);
    _exit(bad);
  }
  int st;
  waitpid(child, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    return 2;
  return queries(1);
}

/* Mode `forkmany`: forks while another thread floods the recorder. */
static _Atomic bool flood_stop;
static _Atomic uint64_t flood_calls;

static void *flood(void *arg)
{
  (void)arg;
  while (!atomic_load(&flood_stop)) {
    if (queries_quiet(1))
      return (void *)1;
    atomic_fetch_add(&flood_calls, 1);
  }
  return NULL;
}

/* forkpar: one of the two forking threads. */
static void *forker(void *arg)
{
  long n = (long)arg;
  for (long i = 0; i < n; i++) {
    pid_t c = fork();
    if (c == 0)
      _exit(0);
    if (c < 0)
      return (void *)1;
    waitpid(c, NULL, 0);
  }
  return NULL;
}

static int fork_par(int n)
{
  if (queries_quiet(1))
    return 2;
  pthread_t a, b;
  void *ra, *rb;
  pthread_create(&a, NULL, forker, (void *)(long)n);
  pthread_create(&b, NULL, forker, (void *)(long)n);
  pthread_join(a, &ra);
  pthread_join(b, &rb);
  if (ra || rb || queries_quiet(1))
    return 2;
  printf("record_prog: two threads forked %d times each\n", n);
  return 0;
}

static int fork_nest(void)
{
  if (queries_quiet(1))
    return 2;
  pid_t m = fork();
  if (m < 0)
    return 2;
  if (m == 0) {
    if (queries_quiet(3))
      _exit(2);
    pause_ms(200); /* its session's row is made and committed */
    sqlite3 *h = NULL;
    if (sqlite3_open(getenv("SYCL_PI_RECORD"), &h) != SQLITE_OK ||
        sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
      printf("record_prog: the child could not take the lock\n");
      _exit(2);
    }
    if (queries_quiet(1)) /* its writer waits for the file now */
      _exit(2);
    pause_ms(200);
    pid_t g = fork();
    if (g == 0) {
      int bad = queries_quiet(5);
      printf("record_prog: the grandchild %d made 5 calls\n", (int)getpid());
      fflush(stdout);
      _exit(bad);
    }
    int st = 0;
    if (g < 0 || waitpid(g, &st, 0) != g || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
      _exit(2);
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(h);
    if (queries_quiet(1))
      _exit(2);
    printf("record_prog: the child %d made 5 calls\n", (int)getpid());
    fflush(stdout);
    exit(0);
  }
  int st = 0;
  if (waitpid(m, &st, 0) != m || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || queries_quiet(1))
    return 2;
  return 0;
}

static int fork_many(int n)
{
  if (queries_quiet(1))
    return 2;
  pthread_t t;
  if (pthread_create(&t, NULL, flood, NULL) != 0)
    return 2;
  int bad = 0;
  uint64_t most = 0, all = 0;
  for (int i = 0; i < n && !bad; i++) {
    uint64_t t0 = now_ns();
    pid_t child = fork();
    if (child > 0) {
      uint64_t took = now_ns() - t0;
      all += took;
      most = took > most ? took : most;
    }
    if (child < 0) {
      bad = 1;
      break;
    }
    if (child == 0)
      exit(queries_quiet(3));
    int st;
    waitpid(child, &st, 0);
    bad = !WIFEXITED(st) || WEXITSTATUS(st) != 0;
  }
  atomic_store(&flood_stop, true);
  void *r;
  pthread_join(t, &r);
  if (bad || r)
    return 2;
  printf("record_prog: the thread made %llu calls\n", (unsigned long long)flood_calls);
  printf("record_prog: %d children made 3 calls each (a fork took %llu us on average, "
         "%llu us at most)\n", n, (unsigned long long)(all / 1000u / (uint64_t)n),
         (unsigned long long)(most / 1000u));
  fflush(stdout);
  return 0;
}

/* Mode `forkterm`: a query, a child forked that only sleeps, SIGTERM to
 * it; says how long it took to die, makes a query and ends with _exit(3)
 * (its ring file left to salvage). */
static int fork_and_stop_child(void)
{
  if (queries_quiet(1))
    return 2;
  fflush(stdout);
  pid_t child = fork();
  if (child < 0)
    return 2;
  if (child == 0) {
    pause_ms(30000);
    _exit(0);
  }
  pause_ms(200);
  uint64_t t0 = now_ns();
  kill(child, SIGTERM);
  int st;
  waitpid(child, &st, 0);
  uint64_t ms = (now_ns() - t0) / 1000000u;
  if (queries_quiet(1))
    return 2;
  printf("record_prog: the child ended by signal %d in %llu ms\n",
         WIFSIGNALED(st) ? WTERMSIG(st) : 0, (unsigned long long)ms);
  fflush(stdout);
  _exit(3);
}

/* aborttwo: both threads abort once both are here. */
static pthread_barrier_t abort_both;
static void *abort_at_once(void *arg)
{
  (void)arg;
  pthread_barrier_wait(&abort_both);
  abort();
}

static int run_mode(int argc, char **argv);

/* RECORD_PROG_EXIT=_exit: whatever the mode, the process ends with
 * _exit(3) right after it (nothing flushed, no teardown), unless it
 * failed (2). */
int main(int argc, char **argv)
{
  int rc = run_mode(argc, argv);
  const char *how = getenv("RECORD_PROG_EXIT");
  if (how && strcmp(how, "_exit") == 0) {
    fflush(stdout);
    _exit(rc ? rc : 3);
  }
  return rc;
}

static int run_mode(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: record_prog crash|abort|kill|exit|quickexit N | gap MS | threads T M | handoff P M | reuse | "
                    "count FILE | readback [N] | bigwrites T M | bigwrites T 0 STOP | freshmap | latenote | handled[slow] SIG | reraise SIG | crashhandled N | handover | exec PROG [ARG...] | forkcall [exit] | forkmany N | forkpar N | forknest | forkterm | churn N [P] | sigmasks | alarm | chdir DIR\n");
    return 2;
  }
  slow_handler = strcmp(argv[1], "handledslow") == 0;
  if ((strcmp(argv[1], "handled") == 0 || slow_handler) && argc > 2) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = count_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(atoi(argv[2]), &sa, NULL);
  }
  if (strcmp(argv[1], "crashhandled") == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = report_fault;
    sa.sa_flags = SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &fault_replaced);
  }
  if (pirt_device_select(NULL, &dev) != PI_SUCCESS) {
    printf("record_prog: %s\n", pirt_error_message());
    return 2;
  }
  int n = argc > 2 ? atoi(argv[2]) : 10;
  const char *mode = argv[1];
  bool reraise = strcmp(mode, "reraise") == 0;
  if (reraise && argc > 2) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cleanup_and_reraise;
    sigemptyset(&sa.sa_mask);
    sigaction(n, &sa, &replaced);
    /* A context made after it, as a program's next piece of work would:
     * the recorder puts its handler in front again (an implementation may
     * have installed its own), with this one behind it. */
    pirt_context *ctx;
    if (pirt_context_create(dev, &ctx) != PI_SUCCESS || pirt_context_release(ctx) != PI_SUCCESS) {
      printf("record_prog: %s\n", pirt_error_message());
      return 2;
    }
  }
  if (strcmp(mode, "threads") == 0 || strcmp(mode, "threadsexit") == 0) {
    int t = n, m = argc > 3 ? atoi(argv[3]) : 100;
    pthread_t th[64];
    for (int i = 0; i < t && i < 64; i++)
      pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)m);
    bool bad = join_all(th, t < 64 ? t : 64);
    if (strcmp(mode, "threadsexit") == 0 && !bad) {
      printf("made %d calls\n", t * m);
      fflush(stdout);
      _exit(3);
    }
    return bad ? 2 : 0;
  }
  if (strcmp(mode, "handled") == 0 || strcmp(mode, "handledslow") == 0 || reraise)
    return survive_two();
  if (strcmp(mode, "forkterm") == 0)
    return fork_and_stop_child();
  if (strcmp(mode, "forkcall") == 0)
    return fork_and_call(argc > 2 && strcmp(argv[2], "exit") == 0);
  if (strcmp(mode, "forkmany") == 0)
    return fork_many(n);
  if (strcmp(mode, "forkpar") == 0)
    return fork_par(n);
  if (strcmp(mode, "forknest") == 0)
    return fork_nest();
  if (strcmp(mode, "gap") == 0) {
    uint64_t before = now_ns();
    if (queries(1))
      return 2;
    uint64_t returned = now_ns();
    pause_ms(n);
    uint64_t calling = now_ns();
    int rc = queries(1);
    uint64_t after = now_ns();
    printf("gap %llu %llu\n", (unsigned long long)(calling - returned),
           (unsigned long long)(after - before));
    return rc;
  }
  if (strcmp(mode, "handoff") == 0)
    return handoff(n, argc > 3 ? atoi(argv[3]) : 100);
  if (strcmp(mode, "chdir") == 0 && argc > 2) {
    /* A query, then into another directory, and 100 more. */
    if (queries_quiet(1) || chdir(argv[2]) != 0)
      return 2;
    return queries(100);
  }
  if (strcmp(mode, "sigwait") == 0) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    signal(SIGINT, SIG_DFL); /* a shell's background job has it ignored */
    sigprocmask(SIG_BLOCK, &set, NULL);
    printf("sigwait ready\n");
    fflush(stdout);
    for (;;) {
      siginfo_t si;
      int sig = sigwaitinfo(&set, &si);
      if (sig == SIGTERM)
        break;
      if (sig == SIGINT)
        printf("INT %s\n", si.si_code == SI_KERNEL ? "from the kernel" : "sent");
      fflush(stdout);
    }
    printf("TERM\n");
    fflush(stdout);
    return 0;
  }
  if (strcmp(mode, "alarm") == 0) {
    /* A query, then an alarm a second later and 3 s of sleep: the alarm
     * (SIGALRM from the kernel) ends the process, as without recording. */
    if (queries(1))
      return 2;
    alarm(1);
    sleep(3);
    printf("record_prog: survived SIGALRM\n");
    return 0;
  }
  if (strcmp(mode, "sigmasks") == 0) {
    /* After a query: each thread's name and the signals it blocks. */
    if (queries(1))
      return 2;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d && (e = readdir(d));) {
      if (e->d_name[0] == '.')
        continue;
      char path[300], name[64] = "", line[256];
      snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
      FILE *f = fopen(path, "r");
      if (f && fgets(name, sizeof name, f))
        name[strcspn(name, "\n")] = 0;
      if (f)
        fclose(f);
      snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
      f = fopen(path, "r");
      while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "SigBlk:", 7) == 0)
          printf("thread %s blocks %s", name, line + 7 + strspn(line + 7, " \t"));
      if (f)
        fclose(f);
    }
    if (d)
      closedir(d);
    return 0;
  }
  if (strcmp(mode, "churn") == 0) {
    /* Thread after thread, a query each, from P spawning threads at once
     * (1 by default); then _exit(3), the ring file left to salvage. */
    int p = argc > 3 ? atoi(argv[3]) : 1;
    if (p < 1 || p > 64)
      return 2;
    pthread_t sp[64];
    for (int i = 0; i < p; i++)
      if (pthread_create(&sp[i], NULL, spawn_one_by_one, (void *)(intptr_t)n) != 0)
        return 2;
    if (join_all(sp, p))
      return 2;
    printf("record_prog: %d threads made a call each\n", n * p);
    fflush(stdout);
    _exit(3);
  }
  if (strcmp(mode, "exec") == 0 && argc > 2) {
    if (queries(1))
      return 2;
    execv(argv[2], argv + 2);
    printf("record_prog: cannot run %s: %s\n", argv[2], strerror(errno));
    return 2;
  }
  if (strcmp(mode, "handover") == 0) {
    /* The second thread takes the first one's ring, read but not all
     * committed (its exit wakes the writer, which gives the ring back
     * once read: 5 ms is plenty). */
    pthread_t a, b;
    if (pthread_create(&a, NULL, fill_then_note, NULL) != 0 || join_all(&a, 1))
      return 2;
    pause_ms(5);
    if (pthread_create(&b, NULL, note_and_query, NULL) != 0 || join_all(&b, 1))
      return 2;
    _exit(3);
  }
  if (strcmp(mode, "latenote") == 0) {
    pthread_t th;
    if (queries(1) || pthread_create(&th, NULL, late_note_main, NULL))
      return 2;
    pthread_join(th, NULL);
    printf("record_prog: late note handed over\n");
    return 0;
  }
  if (strcmp(mode, "fp64") == 0) {
    pirt_context *ctx;
    pirt_program *prog = NULL;
    pi_result r = pirt_context_create(dev, &ctx);
    if (r == PI_SUCCESS)
      r = pirt_program_create_source(
          ctx, "kernel void twice(global double *p) { p[get_global_id(0)] *= 2.0; }\n", NULL,
          &prog);
    if (prog)
      pirt_program_release(prog);
    if (r == PI_SUCCESS)
      pirt_context_release(ctx);
    printf("record_prog: fp64 kernel %s\n", r == PI_SUCCESS ? "built" : "not built");
    return r != PI_SUCCESS ? 2 : 0;
  }
  if (strcmp(mode, "slowcall") == 0) {
    pthread_t th;
    pthread_create(&th, NULL, build_main, NULL);
    while (!atomic_load(&build_begun))
      sched_yield();
    pause_ms(2); /* the build has begun */
    int rc = queries(n);
    /* And more, one a millisecond, until the build has returned (at most
     * 3000): its call may have begun only after the first n (a loaded
     * machine can hold its thread back longer than those take), and the
     * writer must commit queries made while it is in flight (every 50 ms)
     * for it to land in a later chunk than calls after it. Bounded: a
     * loaded machine also makes the build itself slower. */
    for (int extra = 0; !rc && !atomic_load(&build_done) && extra < 3000; extra++) {
      rc = queries_quiet(1);
      pause_ms(1);
    }
    void *r;
    pthread_join(th, &r);
    return rc || r ? 2 : 0;
  }
  if (strcmp(mode, "readback") == 0) {
    long n = argc > 2 ? atol(argv[2]) : 1024;
    if (n <= 0 || n > (1l << 28)) {
      fprintf(stderr, "record_prog: readback wants a number of ints from 1 to 2^28, not '%s'\n",
              argv[2]);
      return 2;
    }
    return readback(n);
  }
  if (strcmp(mode, "bigwrites") == 0) {
    int t = argc > 2 ? atoi(argv[2]) : 0, m = argc > 3 ? atoi(argv[3]) : -1;
    const char *stop = m == 0 && argc > 4 ? argv[4] : NULL;
    int bursts = m > 0 && argc > 4 ? atoi(argv[4]) : 1;
    if (t < 1 || t > 64 || m < 0 || m > 255 || (m == 0) != (stop != NULL) || bursts < 1 ||
        bursts > 100) {
      fprintf(stderr, "record_prog: bigwrites wants threads (1 to 64) and writes each (1 to "
                      "255) and bursts (1 to 100), or 0 and a file whose making stops them\n");
      return 2;
    }
    return bigwrites(t, m, stop, bursts);
  }
  if (strcmp(mode, "freshmap") == 0)
    return freshmap();
  if (strcmp(mode, "reuse") == 0)
    return reuse();
  if (strcmp(mode, "partial") == 0)
    return partial();
  if (strcmp(mode, "infojunk") == 0) {
    /* The device's name into a large buffer full of 'Z', without asking
     * how many bytes the answer took (as clinfo does). */
    char name[4096];
    memset(name, 'Z', sizeof name);
    if (pirt_device_query(dev, PI_DEVICE_INFO_NAME, sizeof name, name, NULL) != PI_SUCCESS) {
      printf("record_prog: %s\n", pirt_error_message());
      return 2;
    }
    printf("record_prog: device name %.*s (%zu bytes)\n", 200, name, strnlen(name, 4096) + 1);
    return 0;
  }
  if (strcmp(mode, "count") == 0)
    return argc > 2 ? count_until_killed(argv[2], argc > 3 ? atol(argv[3]) : 0) : 2;
  if (queries(n))
    return 2;
  if (strcmp(mode, "crash") == 0 || strcmp(mode, "crashhandled") == 0) {
    volatile int *null = NULL;
    *null = 1;
  } else if (strcmp(mode, "abort") == 0) {
    abort();
  } else if (strcmp(mode, "aborttwo") == 0) {
    pthread_t t;
    if (pthread_barrier_init(&abort_both, NULL, 2) != 0 ||
        pthread_create(&t, NULL, abort_at_once, NULL) != 0)
      return 2;
    abort_at_once(NULL);
  } else if (strcmp(mode, "kill") == 0) {
    pause_ms(300);
    kill(getpid(), SIGKILL);
  } else if (strcmp(mode, "exit") == 0) {
    pause_ms(300);
    _exit(3);
  } else if (strcmp(mode, "quickexit") == 0) {
    _exit(3);
  }
  return 0;
}
