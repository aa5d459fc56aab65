/*
 * pirt_config.h: the plugins config file's line parser (plugins.c), apart
 * so that it can be tested and fuzzed without loading anything
 * (fuzz/fuzz_config.c). Needs PATH_MAX: include it after _GNU_SOURCE (or
 * _POSIX_C_SOURCE) is defined.
 */
#ifndef PIRT_CONFIG_H
#define PIRT_CONFIG_H

#include <limits.h>
#include <stdbool.h>

/* One line of a plugins config file (SYCL_PI_CONFIG), parsed. */
#define PIRT_CONFIG_LINE_MAX (PATH_MAX + 1024) /* longer lines are read in pieces */
typedef struct pirt_config_line {
  char lib[PATH_MAX];                  /* the first word */
  char backend[64];                    /* the second word unless it has a '=' */
  char target[PATH_MAX];               /* target=PLUGIN: the shim's */
  char options[PIRT_CONFIG_LINE_MAX];  /* the other key=value words, by spaces */
} pirt_config_line;

/* Parses one line (modified: the comment cut, words split): false when it
 * names no plugin (blank or a comment). A word that is neither a backend
 * nor key=value gets a level-1 trace line and is ignored; the backend's
 * name is not checked here. */
bool pirt_config_parse_line(char *line, const char *file, unsigned lineno,
                            pirt_config_line *out);

#endif /* PIRT_CONFIG_H */
