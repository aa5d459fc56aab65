/* libunreg_late.so's host side: it says when its images were unregistered,
 * which the test expects after the runtime's shutdown lines. */
#include <stdio.h>

int unreg_late_host(void) { return 0; }

__attribute__((destructor)) static void say_unregistered(void)
{
  /* Runs after the generated unregister destructor of this library. */
  fprintf(stdout, "libunreg_late: destructors done\n");
  fflush(stdout);
}
