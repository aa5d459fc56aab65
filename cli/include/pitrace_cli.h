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

/* Whether to colour output written to `fd` (a terminal, NO_COLOR unset). */
bool pt_use_color(int fd);

#endif
