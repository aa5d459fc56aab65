/*
 * pitrace_cli.h: the verbs of the pitrace command. Each takes the verb's own
 * arguments (argv[0] is the verb) and returns the process's exit status.
 * Conventions for every verb: --help prints its usage and exits 0; a bad
 * argument or an unreadable, foreign or damaged file prints one line
 * "pitrace VERB: ..." on stderr and exits 2; colours only on a terminal and
 * never with NO_COLOR set.
 */
#ifndef PITRACE_CLI_H
#define PITRACE_CLI_H

#include <stdbool.h>

int pt_record(int argc, char **argv);   /* viewer/record.c */
int pt_run(int argc, char **argv);      /* viewer/route_opencl.c */
int pt_replay(int argc, char **argv);   /* replay/replay.c */
int pt_extract(int argc, char **argv);  /* replay/extract.c */
int pt_sessions_verb(int argc, char **argv); /* viewer/ */
int pt_show(int argc, char **argv);
int pt_stats(int argc, char **argv);
int pt_diff(int argc, char **argv);
int pt_export(int argc, char **argv);
int pt_report(int argc, char **argv);

#include <stddef.h>

/* The OpenCL front end's vendor file beside this program's tree (malloc'd),
 * or NULL with a reason in err. */
char *pt_opencl_icd(char *err, size_t errn);
/* Points the ICD loader of processes started from here at `icd` only,
 * keeping the user's OCL_ICD_VENDORS in PITRACE_OCL_ICD_VENDORS. */
void pt_route_opencl(const char *icd);

/* Whether to colour output written to `fd` (a terminal, NO_COLOR unset). */
bool pt_use_color(int fd);

#endif
