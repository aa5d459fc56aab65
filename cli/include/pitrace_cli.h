/*
 * pitrace_cli.h: what every verb of the pitrace command shares (cli.c).
 * Each verb takes its own arguments (argv[0] is the verb) and returns the
 * process's exit status. Conventions for every verb: --help prints its
 * usage and exits 0; a bad argument or an unreadable, foreign or damaged
 * file prints one line "pitrace VERB: ..." on stderr and exits 2; colours
 * only on a terminal and never with NO_COLOR set.
 */
#ifndef PITRACE_CLI_H
#define PITRACE_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* ---- Arguments: one parser for every verb -----------------------------------------
 * A long option takes its value as --name=VALUE or --name VALUE, a short
 * one (-o) as -o VALUE or -oVALUE; a flag takes none. -h and --help print
 * the verb's usage; "--" ends the options. */

/* PT_OPT_STRS: a string that may be given more than once (the verb reads
 * every value from argv; pt_parse keeps the last). Any other option with a
 * value given twice, by any of its names, is an error: one of the values
 * would be dropped without a word. */
typedef enum { PT_OPT_FLAG, PT_OPT_INT, PT_OPT_REAL, PT_OPT_STR, PT_OPT_STRS } pt_opt_kind;

typedef struct pt_opt {
  const char *name; /* "--session", or "-o" */
  pt_opt_kind kind;
  void *dst;        /* bool *, int64_t * (a number >= 0), double * (>= 0) or const char ** */
} pt_opt;

#define PT_ARGS_MAX 4
/* As maxpos: options come first; the first other argument, or what follows
 * "--", is a command to run (pitrace record, pitrace run). */
#define PT_ARGS_COMMAND (-1)

typedef struct pt_args {
  const char *pos[PT_ARGS_MAX]; /* positional arguments */
  int npos;
  char **cmd; /* with PT_ARGS_COMMAND: the command and its arguments, or NULL when none */
} pt_args;

/* Parses a verb's arguments (argv[0] is the verb) against `opts`, ended by
 * one whose name is NULL (opts itself may be NULL), with minpos to maxpos
 * positional arguments (or PT_ARGS_COMMAND). Returns 0 when they are good,
 * 1 after printing the usage for --help, 2 after printing a one-line error
 * ("pitrace VERB: ..."). */
int pt_parse(int argc, char **argv, const char *usage, const pt_opt *opts, int minpos,
             int maxpos, pt_args *out);

/* Prints "pitrace VERB: MESSAGE" on stderr (one line). */
void pt_verb_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A file of a directory a verb reads that is not a session it can read
 * (not a pitrace database, unreadable, damaged): says "pitrace VERB: ERR;
 * skipped, the directory's other session files are read" and counts it.
 * The verb goes on; `pitrace` then exits 2 (as grep does when a file it
 * was given could not be read), after the verb's output. */
void pt_skip_file(const char *verb, const char *err);
/* How many files pt_skip_file skipped. */
unsigned pt_files_skipped(void);

/* A salvage that failed (writer_salvage's error): said once a process,
 * "pitrace[ VERB]: ERR" (every open of the session tries it again: a
 * record run printed one failure four times, once inside its summary). */
void pt_say_salvage_error(const char *verb, const char *err);

/* Whether to colour output written to `fd` (a terminal, NO_COLOR unset). */
bool pt_use_color(int fd);

/* s on one line: its control characters (a command's newlines: python3 -c
 * "...") as spaces, in place; returns s. */
char *pt_one_line(char *s);

/* Whether the output path a verb was given (-o PATH) is empty; then after a
 * one-line error that says so and names `what` to give instead ("the file to
 * write the report to"). An empty path reached the end of the verb's work
 * and failed there with "writing  failed: No such file or directory". */
bool pt_output_path_empty(const char *verb, const char *path, const char *what);

/* ---- A verb's output file (-o FILE) ---------------------------------------------------
 * A regular file, or a new one, is written beside FILE (FILE.tmp-XXXXXX)
 * and renamed over it once whole: a write that fails (a full disk, a file
 * size limit) leaves what FILE held, or no file, never part of the output.
 * A device or pipe (/dev/null, a FIFO) is written as it is, and so is one of
 * the program's descriptors (/dev/stdout, /dev/fd/N, /proc/self/fd/N, even
 * when it leads to a file); NULL or "-" is the standard output. */

typedef struct pt_outfile {
  FILE *f;
  const char *path;
  char *tmp; /* the file being written, renamed at the end; NULL: none */
  char *target; /* what tmp is renamed to: path, or the file a link at path names */
  int fd;    /* f's */
  int err;   /* the first write's errno that failed, to say why */
  bool existed; /* path was a file before */
} pt_outfile;

/* Opens the output; false after a one-line error ("cannot write FILE: ...").
 * `inputs` (or NULL): the verb's files and directories of sessions, which
 * the output must not replace (the same file under any name, or a
 * database in a directory read). *o must stay where it is until
 * pt_outfile_close. */
bool pt_outfile_open(const char *verb, const char *path, const pt_args *inputs, pt_outfile *o);
/* The descriptor of the program's that a path names (/dev/stdout,
 * /dev/stderr, /dev/fd/N, /proc/self/fd/N), or -1. */
int pt_own_fd(const char *path);
/* Ends it: with `ok` (the verb made its whole output) the output is
 * flushed, checked and put in place; without, it is dropped. Returns
 * whether the output is whole where it was asked for; false after a
 * one-line error naming the file and why, when the fault was the write. */
bool pt_outfile_close(const char *verb, pt_outfile *o, bool ok);

/* ---- A file written beside its name ---------------------------------------------------
 * pt_tmp_make is mkostemp(tmp, O_CLOEXEC) for an output written beside its
 * name (FILE.tmp-XXXXXX, renamed over FILE once whole): until
 * pt_tmp_unguard, a SIGINT, SIGTERM, SIGHUP or SIGQUIT removes the file and
 * its SQLite journal (TMP-journal) before ending the program as the signal
 * does (^C on an export left its whole partial output beside FILE). One file
 * at a time; a signal ignored stays so; pt_tmp_unguard puts the signals'
 * actions back. Where FILE's name fits and TMP's would not (NAME_MAX), TMP
 * starts with as much of FILE's name as fits. Returns the descriptor, or -1
 * (errno). */
int pt_tmp_make(char *tmp);
void pt_tmp_unguard(void);

/* ---- The standard output ----------------------------------------------------------
 * stdio keeps only that a write failed, not why: a write that failed inside
 * a verb (show's trace, export's lines, sql's rows: more than the buffer)
 * left nothing for the last flush to tell, and the error said no cause.
 * pt_stdout_keep_errors makes `stdout` a stream over descriptor 1 that keeps
 * the errno of its first failed write, as an output file's does;
 * pt_stdout_error returns it (0 if none). */
void pt_stdout_keep_errors(void);
int pt_stdout_error(void);

#endif
