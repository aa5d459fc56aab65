/*
 * sigchain: handlers of the program's own around the recorder's, then the
 * runtime unloaded, then SIGTERM. Loads the runtime (dlopen), counts the
 * devices, installs handler x1 over the recorder's SIGTERM handler,
 * creates a context (the recorder puts its handler in front again, x1 in
 * its chain), installs x2 over it, unloads the runtime with `close`
 * (dlclose), and raises SIGTERM. x1 and x2 are of Python faulthandler's
 * kind: each puts back the handler it replaced and raises the signal
 * again (no SA_RESETHAND). After the shim was unloaded, libpi_sigfwd.so's
 * handler handed the signal on to x1, whose raise came back to it: round
 * for ever (a guard here ends that with exit 99).
 *
 *   sigchain LIBPIRT open|close
 *
 * Prints which handlers ran ("x2", "x1"); ends by SIGTERM when the chain
 * ends in the default action, 99 on a loop, 1 if SIGTERM did not end it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pirt.h"

static struct sigaction prev1, prev2;
static volatile sig_atomic_t depth;

static void guard(void)
{
  if (++depth > 20) {
    static const char m[] = "sigchain: the handlers were entered 20 times: a loop\n";
    (void)!write(2, m, sizeof m - 1);
    _exit(99);
  }
}

static void x1(int sig)
{
  guard();
  (void)!write(1, "x1\n", 3);
  sigaction(sig, &prev1, NULL);
  raise(sig);
}

static void x2(int sig)
{
  guard();
  (void)!write(1, "x2\n", 3);
  sigaction(sig, &prev2, NULL);
  raise(sig);
}

static void install(void (*h)(int), struct sigaction *prev)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = h;
  sa.sa_flags = SA_NODEFER;
  sigaction(SIGTERM, &sa, prev);
}

#define LOAD(dl, name) __typeof__(&name) p_##name = (__typeof__(&name))dlsym(dl, #name)

int main(int argc, char **argv)
{
  if (argc != 3) {
    fprintf(stderr, "usage: sigchain LIBPIRT open|close\n");
    return 2;
  }
  void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    fprintf(stderr, "sigchain: %s\n", dlerror());
    return 2;
  }
  LOAD(dl, pirt_device_count);
  LOAD(dl, pirt_device_select);
  LOAD(dl, pirt_context_create);
  LOAD(dl, pirt_context_release);
  if (!p_pirt_device_count || !p_pirt_device_select || !p_pirt_context_create ||
      !p_pirt_context_release) {
    fprintf(stderr, "sigchain: the runtime lacks a function\n");
    return 2;
  }
  size_t n = 0;
  pirt_device *dev;
  pirt_context *ctx;
  if (p_pirt_device_count(&n) != PI_SUCCESS || !n)
    return 2;
  install(x1, &prev1);
  if (p_pirt_device_select(NULL, &dev) != PI_SUCCESS ||
      p_pirt_context_create(dev, &ctx) != PI_SUCCESS)
    return 2;
  p_pirt_context_release(ctx);
  install(x2, &prev2);
  fflush(stdout);
  if (strcmp(argv[2], "close") == 0)
    dlclose(dl);
  raise(SIGTERM);
  fprintf(stderr, "sigchain: survived SIGTERM\n");
  return 1;
}
