/*
 * sigfwd.c: libpi_sigfwd.so, the recording shim's fatal-signal handler as
 * the process's signal dispositions name it. A handler that another
 * library installs over the shim's (LLVM's, inside PoCL) keeps the shim's
 * to hand signals on to; a program that dlcloses the runtime unloads the
 * shim, and a signal handed on later jumped into unmapped code (SIGTERM
 * after `dlopen_cycle libpirt.so N term`, recorded: SIGSEGV instead). The
 * shim installs this library's handler and loads it so that it stays
 * (RTLD_NODELETE; a few hundred bytes): while the shim is there the
 * handler calls the shim's, after it the disposition the shim had
 * replaced, or the default action.
 */
#define _GNU_SOURCE
#include <stdatomic.h>

#include "pi_signals.h"

#define EXPORT __attribute__((visibility("default")))

typedef void (*handler_fn)(int, siginfo_t *, void *);

static _Atomic(handler_fn) shim_handler;
/* Per signal (pi_fatal_signals' order): what takes it once the shim left. */
static struct sigaction below[PI_NFATAL];

EXPORT void pi_sigfwd_handler(int sig, siginfo_t *info, void *ctx)
{
  handler_fn h = atomic_load(&shim_handler);
  if (h) {
    h(sig, info, ctx);
    return;
  }
  size_t k = 0;
  while (k < PI_NFATAL && pi_fatal_signals[k] != sig)
    k++;
  if (k < PI_NFATAL && pi_sigaction_ignores(&below[k]))
    return;
  if (k < PI_NFATAL && pi_sigaction_handles(&below[k])) {
    pi_sigaction_chain(&below[k], sig, info, ctx);
    return;
  }
  /* The default action: a fault re-executes under it when this returns,
   * any other signal is raised again (pi_signal_reexecutes). */
  signal(sig, SIG_DFL);
  if (!pi_signal_reexecutes(sig, info))
    raise(sig);
}

/* The shim's handler, from its first installation until it leaves. */
EXPORT void pi_sigfwd_attach(handler_fn h) { atomic_store(&shim_handler, h); }

/* What takes each signal while no shim is there (SIG_DFL until a shim
 * left): a shim loaded again after one left, which finds this library's
 * handler still in place, hands on to it. */
EXPORT void pi_sigfwd_below(struct sigaction out[PI_NFATAL]) { memcpy(out, below, sizeof below); }

/* The shim leaves: `to[k]` takes signal k from now on. */
EXPORT void pi_sigfwd_detach(const struct sigaction to[PI_NFATAL])
{
  memcpy(below, to, sizeof below);
  atomic_store(&shim_handler, NULL);
}
