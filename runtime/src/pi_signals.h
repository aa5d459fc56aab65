/*
 * pi_signals.h: the fatal signals that the trace (runtime/src/trace.c:
 * writing its buffered blocks) and the recording shim (interposer/shim.c:
 * ending the session) catch before handing them on, and how each puts its
 * handler in front, keeping the one it replaces to chain to.
 */
#ifndef PI_SIGNALS_H
#define PI_SIGNALS_H

#include <signal.h>
#include <stddef.h>
#include <string.h>

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

/* Calls the handler of a disposition that has one (pi_sigaction_handles). */
static inline void pi_sigaction_call(const struct sigaction *a, int sig, siginfo_t *info,
                                     void *ctx)
{
  if (a->sa_flags & SA_SIGINFO)
    a->sa_sigaction(sig, info, ctx);
  else
    a->sa_handler(sig);
}

/* Installs `handler` (SA_SIGINFO) for pi_fatal_signals[k]; the handler it
 * replaces goes to *previous. */
static inline void pi_fatal_install(size_t k, void (*handler)(int, siginfo_t *, void *),
                                    struct sigaction *previous)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(pi_fatal_signals[k], &sa, previous);
}

#endif /* PI_SIGNALS_H */
