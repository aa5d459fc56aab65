/* Verbs being written (viewer helper): replaced by their implementations. */
#include <stdio.h>
#include "pitrace_cli.h"
#define PENDING(fn, name) int fn(int argc, char **argv) { (void)argc; (void)argv; \
  fprintf(stderr, "pitrace " name ": not built yet\n"); return 2; }
PENDING(pt_sessions_verb, "sessions")
PENDING(pt_show, "show")
PENDING(pt_stats, "stats")
PENDING(pt_diff, "diff")
PENDING(pt_export, "export")
PENDING(pt_report, "report")
