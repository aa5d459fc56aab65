/*
 * cli.c: what every verb of the pitrace command shares (pitrace_cli.h):
 * whether to colour output.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#include "pitrace_cli.h"

bool pt_use_color(int fd)
{
  const char *nc = getenv("NO_COLOR");
  return isatty(fd) && !(nc && *nc);
}
