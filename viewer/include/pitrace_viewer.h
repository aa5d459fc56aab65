/*
 * pitrace_viewer.h: the viewing verbs of the pitrace command (viewer/,
 * docs/viewer.md), with the conventions of every verb (pitrace_cli.h):
 * argv[0] is the verb, the return value the exit status.
 */
#ifndef PITRACE_VIEWER_H
#define PITRACE_VIEWER_H

int pt_sessions_verb(int argc, char **argv); /* viewer_sessions.c */
int pt_show(int argc, char **argv);          /* viewer_show.c */
int pt_stats(int argc, char **argv);         /* viewer_stats.c */
int pt_diff(int argc, char **argv);          /* viewer_diff.c */
int pt_export(int argc, char **argv);        /* viewer_export.c */
int pt_report(int argc, char **argv);        /* viewer_report.c */

#endif /* PITRACE_VIEWER_H */
