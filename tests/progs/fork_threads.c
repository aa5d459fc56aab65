/*
 * fork_threads: a program that forks while another of its threads asks
 * the runtime for devices (a call that takes the runtime's lock, briefly);
 * each child asks too, then ends with exit() (the runtime's shutdown runs
 * in it). A child forked while the other thread held the lock had it
 * locked for good and hung; a child hung past 5 s is killed by SIGALRM.
 *
 *   fork_threads [ROUNDS]
 *
 * Prints "fork_threads: H of N children hung"; exit 0 when none did and
 * every child saw the parent's devices, 1 otherwise, 2 with no device.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pirt.h"

static atomic_bool stop;

static void *ask_for_devices(void *arg)
{
  (void)arg;
  size_t n;
  while (!atomic_load(&stop))
    pirt_device_count(&n);
  return NULL;
}

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 10;
  size_t n = 0;
  if (pirt_device_count(&n) != PI_SUCCESS || n == 0) {
    printf("fork_threads: no device: %s\n", pirt_error_message());
    return 2;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, ask_for_devices, NULL) != 0)
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
  pthread_join(t, NULL);
  printf("fork_threads: %d of %d children hung, %d failed\n", hung, rounds, wrong);
  return hung || wrong ? 1 : 0;
}
