/*
 * replay_threads: PI calls in two threads that depend on each other, for
 * recording and replaying (tests/test_replay.c).
 *
 *   replay_threads data [writer-late|launcher-late]
 *                             (a real OpenCL device) a writer thread fills
 *                             buffer x on its own queue, round after round;
 *                             a launcher thread, told by a host condition
 *                             that the write returned, runs y = 2 * x on
 *                             another queue and reads y back. Only the
 *                             order across threads makes y right.
 *   replay_threads userevent  (the user-event test plugin) a waiter thread
 *                             blocks in piEventsWait on a user event that
 *                             the main thread completes later with
 *                             piEventSetStatus: a replay that ran the
 *                             calls one after the other would never return.
 *   replay_threads handoff    (a real OpenCL device) one thread completes
 *                             a user event and asks its status 300 times,
 *                             then hands it to another thread, which
 *                             releases it: a replay must not release it
 *                             while the first still asks about it.
 * Exit status: 0 verified, 1 wrong result, 2 the runtime failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pirt.h"

#define N 1024
#define ROUNDS 8

#define TRY(call)                                                                  \
  do {                                                                             \
    pi_result r_ = (call);                                                         \
    if (r_ != PI_SUCCESS) {                                                        \
      fprintf(stderr, "replay_threads: %s: %s\n", pirt_result_name(r_),            \
              pirt_error_message());                                               \
      exit(2);                                                                     \
    }                                                                              \
  } while (0)

/* ---- data: a writer and a launcher --------------------------------------------- */

static const char *source =
    "__kernel void twice(__global const float *x, __global float *y) {\n"
    "  size_t i = get_global_id(0);\n"
    "  y[i] = 2.0f * x[i];\n"
    "}\n";

static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int written; /* rounds whose write returned */
  pirt_context *ctx;
  pirt_buffer *x, *y;
  pirt_kernel *k;
  unsigned bad;
  const char *late; /* "writer" or "launcher": that thread starts 100 ms late */
} D = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL, NULL, NULL, NULL, 0, ""};

/* Starts the calling thread late when it is the one named: both threads
 * begin with the same call, so this decides which reaches the plugin first. */
static void maybe_late(const char *who)
{
  if (strcmp(D.late, who) == 0)
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
}

static void *writer(void *arg)
{
  (void)arg;
  maybe_late("writer");
  pirt_queue *q;
  TRY(pirt_queue_create(D.ctx, 0, &q));
  static float data[N];
  for (int round = 1; round <= ROUNDS; round++) {
    for (int i = 0; i < N; i++)
      data[i] = (float)(i * round);
    TRY(pirt_write(q, D.x, true, 0, sizeof data, data, 0, NULL, NULL));
    pthread_mutex_lock(&D.lock);
    D.written = round;
    pthread_cond_broadcast(&D.cond);
    while (D.written == round) /* the launcher takes this round */
      pthread_cond_wait(&D.cond, &D.lock);
    pthread_mutex_unlock(&D.lock);
  }
  TRY(pirt_queue_release(q));
  return NULL;
}

static void *launcher(void *arg)
{
  (void)arg;
  maybe_late("launcher");
  pirt_queue *q;
  TRY(pirt_queue_create(D.ctx, 0, &q));
  static float out[N];
  size_t global = N;
  for (int round = 1; round <= ROUNDS; round++) {
    pthread_mutex_lock(&D.lock);
    while (D.written != round)
      pthread_cond_wait(&D.cond, &D.lock);
    pthread_mutex_unlock(&D.lock);
    TRY(pirt_launch(q, D.k, 1, &global, NULL, 0, NULL, NULL));
    TRY(pirt_read(q, D.y, true, 0, sizeof out, out, 0, NULL, NULL));
    for (int i = 0; i < N; i++)
      D.bad += out[i] != 2.0f * (float)(i * round);
    pthread_mutex_lock(&D.lock);
    D.written = -round; /* taken: the writer may go on */
    pthread_cond_broadcast(&D.cond);
    pthread_mutex_unlock(&D.lock);
  }
  TRY(pirt_queue_release(q));
  return NULL;
}

static int run_data(void)
{
  pirt_device *dev;
  pirt_program *prog;
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_context_create(dev, &D.ctx));
  TRY(pirt_buffer_create(D.ctx, PIRT_MEM_READ_ONLY, N * sizeof(float), NULL, &D.x));
  TRY(pirt_buffer_create(D.ctx, PIRT_MEM_WRITE_ONLY, N * sizeof(float), NULL, &D.y));
  TRY(pirt_program_create_source(D.ctx, source, NULL, &prog));
  TRY(pirt_kernel_create(prog, "twice", &D.k));
  TRY(pirt_kernel_set_buffer(D.k, 0, D.x));
  TRY(pirt_kernel_set_buffer(D.k, 1, D.y));
  pthread_t w, l;
  pthread_create(&w, NULL, writer, NULL);
  pthread_create(&l, NULL, launcher, NULL);
  pthread_join(w, NULL);
  pthread_join(l, NULL);
  TRY(pirt_kernel_release(D.k));
  TRY(pirt_program_release(prog));
  TRY(pirt_buffer_release(D.x));
  TRY(pirt_buffer_release(D.y));
  TRY(pirt_context_release(D.ctx));
  if (D.bad) {
    printf("replay_threads: MISMATCH: %u elements wrong\n", D.bad);
    return 1;
  }
  printf("replay_threads: result verified over %d rounds\n", ROUNDS);
  return 0;
}

/* ---- userevent: a wait another thread releases ----------------------------------- */

static const struct pi_function_table *T;
static pi_event user_event;
static _Atomic int waiting;

static pi_int32 status_of(pi_event e)
{
  pi_int32 s = -1;
  TRY(T->piEventGetInfo(e, PI_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL));
  return s;
}

static void *waiter(void *arg)
{
  (void)arg;
  status_of(user_event); /* this thread's first call sets its recording up */
  waiting = 1;
  pi_result r = T->piEventsWait(1, &user_event);
  return (void *)(intptr_t)r;
}

/* A context on the selected device, through its plugin's table (into T). */
static pi_context selected_context(void)
{
  pirt_device *dev;
  pi_platform plat;
  pi_device pd;
  pi_context ctx;
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_device_pi(dev, &T, &plat, &pd));
  TRY(T->piContextCreate(NULL, 1, &pd, NULL, NULL, &ctx));
  return ctx;
}

static int run_userevent(void)
{
  pi_context ctx = selected_context();
  TRY(T->piEventCreate(ctx, &user_event));
  pthread_t w;
  pthread_create(&w, NULL, waiter, NULL);
  struct timespec nap = {0, 200 * 1000 * 1000}; /* the waiter is blocked by then */
  while (!waiting)
    nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
  nanosleep(&nap, NULL);
  pi_int32 before = status_of(user_event);
  TRY(T->piEventSetStatus(user_event, PI_EVENT_COMPLETE));
  void *r;
  pthread_join(w, &r);
  pi_int32 after = status_of(user_event);
  TRY(T->piEventRelease(user_event));
  TRY(T->piContextRelease(ctx));
  if ((pi_result)(intptr_t)r != PI_SUCCESS || before == PI_EVENT_COMPLETE ||
      after != PI_EVENT_COMPLETE) {
    printf("replay_threads: MISMATCH: wait %d, status before %d, after %d\n", (int)(intptr_t)r,
           before, after);
    return 1;
  }
  printf("replay_threads: result verified: the waiter was released by the other thread\n");
  return 0;
}

/* ---- handoff: queries, then another thread's release -------------------------------- */

static pthread_mutex_t handed_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t handed_cond = PTHREAD_COND_INITIALIZER;
static int handed;

static void *releaser(void *arg)
{
  pi_event *e = arg;
  pthread_mutex_lock(&handed_lock);
  while (!handed)
    pthread_cond_wait(&handed_cond, &handed_lock);
  pthread_mutex_unlock(&handed_lock);
  TRY(T->piEventRelease(*e));
  return NULL;
}

static int run_handoff(void)
{
  pi_context ctx = selected_context();
  pi_event e;
  TRY(T->piEventCreate(ctx, &e));
  TRY(T->piEventSetStatus(e, PI_EVENT_COMPLETE));
  pthread_t r;
  pthread_create(&r, NULL, releaser, &e);
  unsigned bad = 0;
  for (int i = 0; i < 300; i++)
    bad += status_of(e) != PI_EVENT_COMPLETE;
  pthread_mutex_lock(&handed_lock);
  handed = 1;
  pthread_cond_signal(&handed_cond);
  pthread_mutex_unlock(&handed_lock);
  pthread_join(r, NULL);
  TRY(T->piContextRelease(ctx));
  if (bad) {
    printf("replay_threads: MISMATCH: %u statuses not complete\n", bad);
    return 1;
  }
  printf("replay_threads: result verified: 300 queries, then the other thread's release\n");
  return 0;
}

int main(int argc, char **argv)
{
  if ((argc == 2 || argc == 3) && strcmp(argv[1], "data") == 0) {
    if (argc == 3 && strcmp(argv[2], "writer-late") != 0 && strcmp(argv[2], "launcher-late") != 0)
      goto usage;
    if (argc == 3)
      D.late = strcmp(argv[2], "writer-late") == 0 ? "writer" : "launcher";
    return run_data();
  }
  if (argc == 2 && strcmp(argv[1], "userevent") == 0)
    return run_userevent();
  if (argc == 2 && strcmp(argv[1], "handoff") == 0)
    return run_handoff();
usage:
  fprintf(stderr, "usage: replay_threads data [writer-late|launcher-late] | userevent | "
                  "handoff\n");
  return 2;
}
