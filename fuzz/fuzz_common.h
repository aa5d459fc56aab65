/*
 * fuzz_common.h: a private scratch directory for the fuzzers that need
 * files (tmpfs where there is one), and writing a file whole.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fresh directory, removed (with what is left in it) at exit. */
static char fuzz_dir[256];

static void fuzz_remove_dir(void)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir);
  if (fuzz_dir[0] && system(cmd) != 0)
    fprintf(stderr, "fuzz: could not remove %s\n", fuzz_dir);
}

static inline const char *fuzz_scratch(void)
{
  if (!fuzz_dir[0]) {
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(fuzz_dir, sizeof fuzz_dir, "%s/pitrace-fuzz-XXXXXX", base);
    if (!mkdtemp(fuzz_dir)) {
      perror("fuzz: mkdtemp");
      abort();
    }
    atexit(fuzz_remove_dir);
  }
  return fuzz_dir;
}

/* Writes size bytes to path (replacing it); aborts when it cannot. */
static inline void fuzz_write_file(const char *path, const void *data, size_t size)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const char *p = data;
  while (fd >= 0 && size > 0) {
    ssize_t n = write(fd, p, size);
    if (n <= 0)
      break;
    p += n;
    size -= (size_t)n;
  }
  if (fd < 0 || size > 0 || close(fd) != 0) {
    perror(path);
    abort();
  }
}

/* Removes a database with SQLite's side files. */
static inline void fuzz_remove_db(const char *db)
{
  static const char *const side[] = {"", "-wal", "-shm", "-journal"};
  for (size_t i = 0; i < sizeof side / sizeof *side; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s%s", db, side[i]);
    unlink(path);
  }
}

#endif
