/*
 * dlopen_cycle: loads the runtime library with dlopen, uses it (binds the
 * plugins, lists devices, creates and releases a context), unloads it with
 * dlclose, and repeats. Each cycle must really unload the library (its
 * shutdown destructor runs at dlclose) and leave no memory behind: the test
 * runs it under valgrind, which reports anything the cycles leaked.
 *
 * Usage: dlopen_cycle LIBPIRT [CYCLES] [term|thread|across]
 * Exit status: 0 when every cycle worked and the library unloaded each time.
 * With `term`, a library that stays loaded is said, not failed (a traced
 * runtime stays: trace.c), and after the cycles the program raises SIGTERM,
 * by which it should end. With `thread`, each cycle also has a thread of
 * its own count the devices before the library's use and end only after
 * its dlclose (its thread-local destructors run then). With `across`, one
 * thread lives through every cycle and uses each cycle's library (a
 * context made and released) before the main thread's use.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "pirt.h"

#define LOAD(dl, name)                                                         \
  __typeof__(&name) p_##name = (__typeof__(&name))dlsym(dl, #name);            \
  if (!p_##name) {                                                             \
    fprintf(stderr, "dlopen_cycle: %s missing\n", #name);                      \
    return 1;                                                                  \
  }

static int may_stay; /* `term` */
static int with_thread; /* `thread` */
static int across; /* `across` */

/* The thread of `thread`: counts the devices, then waits to be let go. */
static pthread_mutex_t let_go_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t let_go_cond = PTHREAD_COND_INITIALIZER;
static int let_go, counted;
static pi_result (*thread_count)(size_t *);

static void *counting_thread(void *arg)
{
  (void)arg;
  size_t n = 0;
  pi_result r = thread_count(&n);
  pthread_mutex_lock(&let_go_lock);
  counted = r == PI_SUCCESS ? 1 : -1;
  pthread_cond_broadcast(&let_go_cond);
  while (!let_go)
    pthread_cond_wait(&let_go_cond, &let_go_lock);
  pthread_mutex_unlock(&let_go_lock);
  return NULL;
}

/* The thread of `across`: uses the library it is given (counts the
 * devices, makes and releases a context: calls into the plugins), once
 * per request, until told to end (NULL). */
typedef struct library_fns {
  pi_result (*count)(size_t *);
  pi_result (*select)(const char *, pirt_device **);
  pi_result (*create)(pirt_device *, pirt_context **);
  pi_result (*release)(pirt_context *);
} library_fns;
static pthread_mutex_t ask_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ask_cond = PTHREAD_COND_INITIALIZER;
static int asked, answered, answer;
static const library_fns *asked_fns;

static int use_library(const library_fns *f)
{
  size_t n = 0;
  pirt_device *dev;
  pirt_context *ctx;
  return f->count(&n) == PI_SUCCESS && n > 0 && f->select(NULL, &dev) == PI_SUCCESS &&
         f->create(dev, &ctx) == PI_SUCCESS && f->release(ctx) == PI_SUCCESS;
}

static void *across_thread(void *arg)
{
  (void)arg;
  pthread_mutex_lock(&ask_lock);
  for (int seen = 0;; seen++) {
    while (asked == seen)
      pthread_cond_wait(&ask_cond, &ask_lock);
    const library_fns *f = asked_fns;
    if (!f)
      break;
    pthread_mutex_unlock(&ask_lock);
    int ok = use_library(f);
    pthread_mutex_lock(&ask_lock);
    answer = ok ? 1 : -1;
    answered++;
    pthread_cond_broadcast(&ask_cond);
  }
  pthread_mutex_unlock(&ask_lock);
  return NULL;
}

/* Asks the `across` thread to use `f` (NULL: to end); true when its use
 * worked. */
static int ask(const library_fns *f)
{
  pthread_mutex_lock(&ask_lock);
  asked_fns = f;
  int want = ++asked;
  pthread_cond_broadcast(&ask_cond);
  while (f && answered < want)
    pthread_cond_wait(&ask_cond, &ask_lock);
  int ok = !f || answer == 1;
  pthread_mutex_unlock(&ask_lock);
  return ok;
}

static int cycle(const char *lib, int i)
{
  void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    fprintf(stderr, "dlopen_cycle: %s\n", dlerror());
    return 1;
  }
  LOAD(dl, pirt_device_count);
  LOAD(dl, pirt_device_select);
  LOAD(dl, pirt_context_create);
  LOAD(dl, pirt_context_release);
  LOAD(dl, pirt_error_message);
  pthread_t th;
  if (with_thread) {
    /* The platforms start on this thread first: PoCL's LLVM gives the
     * thread that starts it an alternate signal stack of its own, which
     * AddressSanitizer then fails to unmap as that thread ends. */
    size_t first = 0;
    p_pirt_device_count(&first);
    thread_count = p_pirt_device_count;
    counted = let_go = 0;
    if (pthread_create(&th, NULL, counting_thread, NULL) != 0)
      return 1;
    pthread_mutex_lock(&let_go_lock);
    while (!counted)
      pthread_cond_wait(&let_go_cond, &let_go_lock);
    pthread_mutex_unlock(&let_go_lock);
  }
  if (across) {
    size_t first = 0;
    p_pirt_device_count(&first); /* the platforms start here: see above */
    const library_fns f = {p_pirt_device_count, p_pirt_device_select, p_pirt_context_create,
                           p_pirt_context_release};
    if (!ask(&f)) {
      fprintf(stderr, "dlopen_cycle: cycle %d: the thread's use failed\n", i);
      dlclose(dl);
      return 1;
    }
  }
  size_t n = 0;
  pirt_device *dev;
  pirt_context *ctx;
  if (p_pirt_device_count(&n) != PI_SUCCESS || n == 0 ||
      p_pirt_device_select(NULL, &dev) != PI_SUCCESS ||
      p_pirt_context_create(dev, &ctx) != PI_SUCCESS ||
      p_pirt_context_release(ctx) != PI_SUCCESS) {
    fprintf(stderr, "dlopen_cycle: cycle %d: %s\n", i, p_pirt_error_message());
    dlclose(dl);
    return 1;
  }
  if (dlclose(dl) != 0) {
    fprintf(stderr, "dlopen_cycle: dlclose: %s\n", dlerror());
    return 1;
  }
  if (with_thread) {
    pthread_mutex_lock(&let_go_lock);
    let_go = 1;
    pthread_cond_broadcast(&let_go_cond);
    pthread_mutex_unlock(&let_go_lock);
    pthread_join(th, NULL);
    if (counted != 1) {
      fprintf(stderr, "dlopen_cycle: cycle %d: the thread's count failed\n", i);
      return 1;
    }
  }
  if (dlopen(lib, RTLD_NOW | RTLD_NOLOAD)) {
    fprintf(stderr, "dlopen_cycle: %s is still loaded after dlclose\n", lib);
    if (!may_stay)
      return 1;
  }
  printf("dlopen_cycle: cycle %d: %zu device(s), unloaded\n", i, n);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: dlopen_cycle LIBPIRT [CYCLES] [term|thread|across]\n");
    return 2;
  }
  int cycles = argc > 2 ? atoi(argv[2]) : 5;
  may_stay = argc > 3 && strcmp(argv[3], "term") == 0;
  with_thread = argc > 3 && strcmp(argv[3], "thread") == 0;
  across = argc > 3 && strcmp(argv[3], "across") == 0;
  pthread_t th;
  if (across && pthread_create(&th, NULL, across_thread, NULL) != 0)
    return 1;
  for (int i = 0; i < cycles; i++)
    if (cycle(argv[1], i))
      return 1;
  if (across) {
    ask(NULL);
    pthread_join(th, NULL);
  }
  printf("dlopen_cycle: %d cycles done\n", cycles);
  if (may_stay) {
    fflush(stdout);
    raise(SIGTERM);
    fprintf(stderr, "dlopen_cycle: SIGTERM did not end the program\n");
    return 1;
  }
  return 0;
}
