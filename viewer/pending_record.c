/* Verbs being written (record helper): replaced by their implementations. */
#include <stdio.h>
#include "pitrace_cli.h"
#define PENDING(fn, name) int fn(int argc, char **argv) { (void)argc; (void)argv; \
  fprintf(stderr, "pitrace " name ": not built yet\n"); return 2; }
PENDING(pt_record, "record")
