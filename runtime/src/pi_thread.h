/*
 * pi_thread.h: the threads pitrace starts inside an application (the
 * recorder's writer and encoders, the trace's flusher). Each takes none of
 * the application's signals (they go to its own threads, whose handlers
 * act on them) and runs on a stack of its own making, not one from
 * glibc's cache: in a child forked from a threaded process, glibc hands a
 * new thread the stack, and so the thread descriptor, of one of the
 * parent's threads that did not come along, and an implementation that
 * joins such a thread at exit (rusticl's atexit handler joins its queue's
 * worker thread, gone in the child: a descriptor whose thread id is 0, so
 * the join returns at once) joined the recorder's thread instead, which
 * ends only after that: a forked child that made an OpenCL call hung at
 * exit on rusticl, recorded or traced to a file.
 */
#ifndef PI_THREAD_H
#define PI_THREAD_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>

typedef struct pi_thread {
  pthread_t t;
  void *stack; /* its own (pi_thread_join unmaps it); NULL: glibc's */
  size_t size;
} pi_thread;

#define PI_THREAD_STACK (8u << 20) /* address space only: pages come as used */

/* Starts fn(arg) with every signal blocked, on a stack of its own
 * (glibc's when none can be mapped). */
static inline bool pi_thread_start(pi_thread *th, void *(*fn)(void *), void *arg)
{
  th->size = PI_THREAD_STACK;
  th->stack = mmap(NULL, th->size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
  pthread_attr_t a;
  pthread_attr_init(&a);
  if (th->stack == MAP_FAILED) {
    th->stack = NULL;
  } else {
    mprotect(th->stack, 4096, PROT_NONE); /* a guard page below it */
    pthread_attr_setstack(&a, th->stack, th->size);
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  bool ok = pthread_create(&th->t, &a, fn, arg) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&a);
  if (!ok && th->stack) {
    munmap(th->stack, th->size);
    th->stack = NULL;
  }
  return ok;
}

/* Waits for it to end, then gives its stack back. */
static inline void pi_thread_join(pi_thread *th)
{
  pthread_join(th->t, NULL);
  if (th->stack)
    munmap(th->stack, th->size);
  th->stack = NULL;
}

#endif
