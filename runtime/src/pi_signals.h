/*
 * pi_signals.h: the fatal signals that the trace (runtime/src/trace.c:
 * writing its buffered blocks) and the recording shim (interposer/shim.c:
 * ending the session) catch before handing them on, and how each puts its
 * handler in front, keeping the one it replaces to chain to.
 */
#ifndef PI_SIGNALS_H
#define PI_SIGNALS_H

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The faults and abort first, then every signal whose default action
 * ends a process that one meets in practice: a terminal closed (SIGHUP),
 * `app | head` (SIGPIPE), an alarm as a watchdog, `ulimit -t` and `-f`
 * (SIGXCPU, SIGXFSZ), a stray SIGUSR1 or SIGUSR2. Left out: SIGKILL and
 * SIGSTOP (no handler runs), SIGTRAP and SIGSYS (debuggers, seccomp), the
 * profilers' SIGPROF and SIGVTALRM. */
static const int pi_fatal_signals[] = {SIGSEGV, SIGBUS,  SIGILL,  SIGFPE,  SIGABRT, SIGTERM,
                                       SIGINT,  SIGQUIT, SIGHUP,  SIGPIPE, SIGALRM, SIGXCPU,
                                       SIGXFSZ, SIGUSR1, SIGUSR2};
#define PI_NFATAL (sizeof pi_fatal_signals / sizeof *pi_fatal_signals)

/* Whether a process whose own handler takes sig may go on after it: any
 * signal but a fault or abort (a fault's handler that returns faults
 * again; abort ends the process once its handlers return). */
static inline int pi_signal_may_go_on(int sig)
{
  return sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE && sig != SIGABRT;
}

/* pi_signal_may_go_on for the signal as delivered (info: its siginfo):
 * a fault's signal sent (kill, raise, sigqueue: si_code <= 0, not the
 * processor's) is not raised again when its handler returns, and SIGABRT
 * sent by another process is no abort(): the process goes on after
 * either (timeout -s SEGV to a program whose handler returns, as LLVM's
 * does for a signal it did not cause). */
static inline int pi_signal_may_go_on_as_sent(int sig, const siginfo_t *info)
{
  if (pi_signal_may_go_on(sig))
    return 1;
  if (!info || info->si_code > 0)
    return 0;
  return sig != SIGABRT || info->si_pid != getpid();
}

/* Whether a signal's default action comes by returning from its handler:
 * a fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE) the processor raised on an
 * instruction, which runs again under the default and faults again. Any
 * other must be raised again: one sent (kill, raise: si_code <= 0) and
 * one the kernel sent (alarm's SIGALRM, ^C's SIGINT, a hang-up: SI_KERNEL,
 * which is above 0: taken for a fault, such a signal was lost and a
 * recorded program that alarm() should have ended went on). */
static inline int pi_signal_reexecutes(int sig, const siginfo_t *info)
{
  return info && info->si_code > 0 && info->si_code != SI_KERNEL &&
         (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE);
}

/* Takes sig if it is pending now (blocked while its handler runs: raised
 * again by a handler ours called), into *again; whether it was. */
static inline int pi_signal_take_pending(int sig, siginfo_t *again)
{
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  struct timespec none = {0, 0};
  return sigtimedwait(&one, again, &none) == sig;
}

/* Whether a disposition ignores its signal (SIG_IGN). */
static inline int pi_sigaction_ignores(const struct sigaction *a)
{
  return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_IGN;
}

/* Whether a disposition is a handler of the program's (not SIG_DFL nor
 * SIG_IGN). */
static inline int pi_sigaction_handles(const struct sigaction *a)
{
  return (a->sa_flags & SA_SIGINFO) ? a->sa_sigaction != NULL
                                    : a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

/* Calls the handler of a disposition that has one (pi_sigaction_handles)
 * as the kernel would have: with the signals its mask names blocked too,
 * and, for one installed with SA_RESETHAND, the disposition back to
 * SIG_DFL first (a second ^C ends the program, as without pitrace). */
static inline void pi_sigaction_chain(struct sigaction *a, int sig, siginfo_t *info, void *ctx)
{
  struct sigaction h = *a;
  if (h.sa_flags & SA_RESETHAND) {
    memset(a, 0, sizeof *a);
    a->sa_handler = SIG_DFL;
  }
  sigset_t old;
  pthread_sigmask(SIG_BLOCK, &h.sa_mask, &old);
  if (h.sa_flags & SA_SIGINFO)
    h.sa_sigaction(sig, info, ctx);
  else
    h.sa_handler(sig);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Keeps the library that holds `fn` loaded until the process ends: a
 * handler installed over ours keeps ours to hand signals on to (LLVM's,
 * inside PoCL, does, and gives them back to it), so after a dlclose a
 * signal jumped into unmapped code (dlopen, use and dlclose libpirt
 * traced to a file, then SIGTERM: SIGSEGV instead). Once per library
 * (each includer has its own flag). */
static inline void pi_pin_library_of(void *fn)
{
  static int pinned;
  Dl_info where;
  if (!pinned && dladdr(fn, &where) && where.dli_fname &&
      dlopen(where.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
    pinned = 1;
}

/* Installs `handler` (SA_SIGINFO) for pi_fatal_signals[k], with the flags
 * of the handler it replaces that the program counts on: SA_RESTART (its
 * system calls go on after the signal) and SA_ONSTACK (its handler of a
 * stack overflow runs on its alternate stack: ours runs first, so ours
 * must too); that handler goes to *previous. */
static inline void pi_fatal_install(size_t k, void (*handler)(int, siginfo_t *, void *),
                                    struct sigaction *previous)
{
  struct sigaction cur, sa;
  memset(&cur, 0, sizeof cur);
  sigaction(pi_fatal_signals[k], NULL, &cur);
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO | (cur.sa_flags & (SA_RESTART | SA_ONSTACK));
  sigemptyset(&sa.sa_mask);
  sigaction(pi_fatal_signals[k], &sa, previous);
}

#endif /* PI_SIGNALS_H */
