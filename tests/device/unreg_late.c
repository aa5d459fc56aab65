/* libunreg_late.so's host side: it says when its images were unregistered,
 * which the test expects after the runtime's shutdown lines. */
#include <stdio.h>

int unreg_late_host(void) { return 0; }

/* A function of the application to call from here, after the runtime's
 * shutdown (a use of the runtime that late). */
static void (*late_call)(void);
void unreg_late_call_at_exit(void (*fn)(void)) { late_call = fn; }

__attribute__((destructor)) static void say_unregistered(void)
{
  if (late_call)
    late_call();
  /* Runs after the generated unregister destructor of this library. */
  fprintf(stdout, "libunreg_late: destructors done\n");
  fflush(stdout);
}
