/*
 * bench_load: replay's load of a session and nothing else: opens it as
 * `pitrace replay` does (rp_session_open: every call read and parsed, the
 * plugins, the application's device found) and closes it, calling no
 * plugin. bench_viewer runs it beside the viewer verbs and times it the
 * same way (wall, CPU, largest resident size of the whole process).
 *
 * Usage: bench_load DB [--session N]   (prints the calls loaded and the
 * time the load took in the process)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rp.h"

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
  int64_t session = -1;
  if (argc == 4 && strcmp(argv[2], "--session") == 0)
    session = atoll(argv[3]);
  else if (argc != 2) {
    fprintf(stderr, "usage: bench_load DB [--session N]\n");
    return 2;
  }
  rp_session s;
  char err[1024];
  double t0 = now_s();
  if (!rp_session_open(&s, argv[1], session, err, sizeof err)) {
    fprintf(stderr, "bench_load: %s\n", err);
    return 2;
  }
  double t = now_s() - t0;
  printf("%zu calls loaded in %.3f s\n", s.calls.n, t);
  rp_session_close(&s);
  return 0;
}
