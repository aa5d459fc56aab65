/*
 * cli_verbs.h: the verbs the command itself holds (record.c,
 * route_opencl.c, sql.c) and the OpenCL routing they share; the other verbs come
 * from the viewer (pitrace_viewer.h) and replay (pitrace_replay.h)
 * libraries.
 */
#ifndef PITRACE_CLI_VERBS_H
#define PITRACE_CLI_VERBS_H

#include <stddef.h>

int pt_record(int argc, char **argv); /* record.c */
int pt_run(int argc, char **argv);    /* route_opencl.c */
int pt_sql(int argc, char **argv);    /* sql.c */

/* The OpenCL front end's vendor file beside this program's tree (malloc'd),
 * or NULL with a reason in err. */
char *pt_opencl_icd(char *err, size_t errn);
/* Points the ICD loader of processes started from here at `icd` only,
 * keeping the user's OCL_ICD_VENDORS in PITRACE_OCL_ICD_VENDORS. */
void pt_route_opencl(const char *icd);
/* Says on stderr why `pitrace VERB` could not run CMD (errno e from
 * execvp): for a program that is there, its missing #! interpreter or
 * loader rather than "No such file or directory" alone. */
void pt_say_not_run(const char *verb, const char *cmd, int e);

#endif
