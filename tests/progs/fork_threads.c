/*
 * fork_threads: a program that forks while another of its threads asks
 * the runtime for devices (a call that takes the runtime's lock, briefly);
 * each child asks too, then ends with exit() (the runtime's shutdown runs
 * in it). A child forked while the other thread held the lock had it
 * locked for good and hung; a child hung past 5 s is killed by SIGALRM.
 *
 * With "bundle", the other thread sets a bundle's spec constant in a loop
 * (under the program manager's lock, and in no plugin: PoCL's own locks
 * are not the runtime's to hand over a fork), after a kernel of
 * tests/device/k_plain.cl's image was built (cached, released by the
 * shutdown); each child only exits: its shutdown hung on that lock.
 *
 * With "kernels", the other thread gets that kernel from the bundle and
 * releases it in a loop: PI calls under the program manager's lock, which
 * the recording shim records when the program runs recorded. Each child
 * leaves at once with _exit (PoCL's own locks, held by the other thread in
 * the parent, would hang a child's shutdown): what is tested is the
 * parent, whose fork took the runtime's locks and the shim's in the wrong
 * order once and waited for itself.
 *
 * With "exit", a thread forks in a loop (each child leaving at once) while
 * main returns: the exit hung when it unregistered the runtime's fork
 * handlers between a fork's prepare handler, which took the runtime's
 * lock, and its parent handler, which then never ran to let it go. glibc
 * lets go of its atfork lock while a handler runs, and the runtime's
 * prepare handler waits for the program manager's lock, which another
 * thread holds through most of each round of its loop (its bundle's
 * kernel got from the cache, whose note goes to a hook that takes 20 ms,
 * under that lock): that makes the window most of each fork. ROUNDS is not
 * used; it prints "fork_threads: exiting while a thread forks".
 *
 *   fork_threads [ROUNDS] [devices|bundle|kernels|exit]     (devices: the default)
 *
 * Prints "fork_threads: H of N children hung"; exit 0 when none did and
 * every child saw the parent's devices, 1 otherwise, 2 with no device.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pirt.h"

static atomic_bool stop;
static pirt_context *ctx;

static void *ask_for_devices(void *arg)
{
  (void)arg;
  size_t n;
  while (!atomic_load(&stop))
    pirt_device_count(&n);
  return NULL;
}

static void *get_kernels(void *arg)
{
  pirt_bundle *b = arg;
  while (!atomic_load(&stop)) {
    pirt_kernel *k;
    if (pirt_bundle_get_kernel(b, "k_plain", &k) != PI_SUCCESS || pirt_kernel_release(k)) {
      printf("fork_threads: %s\n", pirt_error_message());
      return (void *)1;
    }
  }
  return NULL;
}

static void slow_hook(const pirt_note *note, void *user)
{
  (void)note;
  (void)user;
  nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
}

static void *get_on(void *arg)
{
  pirt_bundle *b = arg;
  pirt_kernel *k;
  while (pirt_bundle_get_kernel(b, "k_plain", &k) == PI_SUCCESS) /* until the shutdown */
    pirt_kernel_release(k);
  return NULL;
}

static void *fork_on(void *arg)
{
  (void)arg;
  for (;;) {
    pid_t pid = fork();
    if (pid == 0)
      _exit(0);
    if (pid > 0)
      waitpid(pid, NULL, 0);
  }
  return NULL;
}

static void *set_constants(void *arg)
{
  pirt_bundle *b = arg;
  for (int i = 0; !atomic_load(&stop); i++)
    if (pirt_bundle_set_spec_constant(b, "id_any", &i, sizeof i) != PI_SUCCESS) {
      printf("fork_threads: %s\n", pirt_error_message());
      return (void *)1;
    }
  return NULL;
}

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 10;
  const char *mode = argc > 2 ? argv[2] : "devices";
  bool kernels = strcmp(mode, "kernels") == 0;
  bool exiting = strcmp(mode, "exit") == 0;
  bool bundle = kernels || exiting || strcmp(mode, "bundle") == 0;
  size_t n = 0;
  pirt_device *dev;
  if (pirt_device_count(&n) != PI_SUCCESS || n == 0 || pirt_device_select(NULL, &dev) ||
      pirt_context_create(dev, &ctx)) {
    printf("fork_threads: no device: %s\n", pirt_error_message());
    return 2;
  }
  pirt_bundle *b = NULL;
  pirt_kernel *k;
  if (bundle && (pirt_bundle_create(ctx, &b) || pirt_bundle_get_kernel(b, "k_plain", &k) ||
                 pirt_kernel_release(k))) {
    printf("fork_threads: %s\n", pirt_error_message());
    return 2;
  }
  if (exiting) {
    pthread_t t, u;
    if (pirt_add_note_hook(slow_hook, NULL) || pthread_create(&u, NULL, get_on, b) != 0 ||
        pthread_create(&t, NULL, fork_on, NULL) != 0)
      return 2;
    nanosleep(&(struct timespec){.tv_nsec = 200000000}, NULL);
    printf("fork_threads: exiting while a thread forks\n");
    fflush(stdout);
    return 0; /* the runtime shuts down while the thread forks on */
  }
  pthread_t t;
  if (pthread_create(&t, NULL,
                     kernels ? get_kernels : bundle ? set_constants : ask_for_devices, b) != 0)
    return 2;
  int hung = 0, wrong = 0;
  for (int i = 0; i < rounds; i++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork_threads: fork");
      break;
    }
    if (pid == 0) {
      alarm(5);
      if (kernels)
        _exit(0);
      if (bundle)
        exit(0);
      size_t m = 0;
      pi_result r = pirt_device_count(&m);
      exit(r == PI_SUCCESS && m == n ? 0 : 3);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid)
      wrong++;
    else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
      hung++;
    else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      wrong++;
  }
  atomic_store(&stop, true);
  void *failed = NULL;
  pthread_join(t, &failed);
  wrong += failed != NULL;
  printf("fork_threads: %d of %d children hung, %d failed\n", hung, rounds, wrong);
  return hung || wrong ? 1 : 0;
}
