/*
 * dlopen_cycle: loads the runtime library with dlopen, uses it (binds the
 * plugins, lists devices, creates and releases a context), unloads it with
 * dlclose, and repeats. Each cycle must really unload the library (its
 * shutdown destructor runs at dlclose) and leave no memory behind: the test
 * runs it under valgrind, which reports anything the cycles leaked.
 *
 * Usage: dlopen_cycle LIBPIRT [CYCLES] [term]
 * Exit status: 0 when every cycle worked and the library unloaded each time.
 * With `term`, a library that stays loaded is said, not failed (a traced
 * runtime stays: trace.c), and after the cycles the program raises SIGTERM,
 * by which it should end.
 */
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
    fprintf(stderr, "usage: dlopen_cycle LIBPIRT [CYCLES]\n");
    return 2;
  }
  int cycles = argc > 2 ? atoi(argv[2]) : 5;
  may_stay = argc > 3 && strcmp(argv[3], "term") == 0;
  for (int i = 0; i < cycles; i++)
    if (cycle(argv[1], i))
      return 1;
  printf("dlopen_cycle: %d cycles done\n", cycles);
  if (may_stay) {
    fflush(stdout);
    raise(SIGTERM);
    fprintf(stderr, "dlopen_cycle: SIGTERM did not end the program\n");
    return 1;
  }
  return 0;
}
