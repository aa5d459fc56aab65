/*
 * bench_copyhash: the floor of recording data (SYCL_PI_RECORD_DATA=all):
 * what copying the bytes a program moves into fresh memory and hashing
 * them costs on this machine, against which what recording with data adds
 * to a real program is read (the target: no more than that).
 *
 *   bench_copyhash [--rounds R] [--sizes LIST]
 *
 * A recorder keeps a snapshot of each payload a call moves (the caller may
 * change its memory once the call returns), so each payload is copied once
 * into memory of its own, and hashed (payloads are stored once by content:
 * pt_blob_key, XXH3-128, the recorder's own function). Each round takes the
 * payloads of LIST in turn (default: vadd 4194304's, three of 16 MiB):
 * fresh memory (malloc, as the shim does; glibc's adaptive mmap threshold
 * is pinned at its default so that every round gets fresh pages, as a
 * process recording its first payloads does), a copy from the program's
 * (already touched) buffer, the hash. The same again through the
 * recorder's own copies (pt_payload_copy, then pt_payload_view as its
 * writer reads them): into process memory, fresh (its pool of freed
 * copies emptied before the round) and reused (a program that moves the
 * same sizes again), and into a payload file (payload.c: where a recording
 * process's copies go, so that they outlive it), fresh (a new file) and
 * reused (its regions given back by a commit). Reported:
 * min / median / max over the rounds of each whole, and of its parts
 * measured the same way on their own (the copy into memory already
 * touched; the hash alone).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"
#include "recorder.h"
#include "schema.h"

#define MAX_SIZES 16

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static volatile unsigned sink; /* the hashes are used: not optimised away */

/* Each payload copied from src[k] into memory of its own and hashed, the
 * copy left in copy[k] for the caller to free: with malloc (recorder
 * false), or as the recorder copies it and its writer reads it
 * (pt_payload_copy, pt_payload_view). The milliseconds taken, or -1 (said
 * why) when no copy could be made. */
static double copy_hash(bool recorder, const void **copy, unsigned char *const *src,
                        const size_t *sizes, size_t nsizes)
{
  unsigned char key[PT_BLOB_KEY];
  double t0 = now_ms();
  for (size_t k = 0; k < nsizes; k++) {
    if (recorder) {
      uint64_t token = pt_payload_copy(src[k], sizes[k]);
      copy[k] = token ? pt_payload_view(token) : NULL;
    } else {
      unsigned char *m = malloc(sizes[k]);
      if (m)
        memcpy(m, src[k], sizes[k]);
      copy[k] = m;
    }
    if (!copy[k]) {
      fprintf(stderr, "bench_copyhash: no copy of %zu bytes could be made\n", sizes[k]);
      return -1;
    }
    pt_blob_key(copy[k], sizes[k], key);
    sink += key[0];
  }
  return now_ms() - t0;
}

int main(int argc, char **argv)
{
  long rounds = 20;
  size_t sizes[MAX_SIZES] = {16u << 20, 16u << 20, 16u << 20};
  size_t nsizes = 3;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--rounds") == 0) {
      rounds = bench_positive("bench_copyhash", argv[i], argv[i + 1]);
      i++;
    } else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
      nsizes = 0;
      for (char *s = argv[++i], *end; *s; s = *end ? end + 1 : end) {
        long long v = strtoll(s, &end, 10);
        if (v <= 0 || (*end && *end != ',') || nsizes == MAX_SIZES) {
          fprintf(stderr, "bench_copyhash: --sizes wants up to %d positive byte counts, "
                          "comma-separated, not '%s'\n", MAX_SIZES, argv[i]);
          return 2;
        }
        sizes[nsizes++] = (size_t)v;
      }
    } else {
      fprintf(stderr, "bench_copyhash: unknown argument '%s' (usage: bench_copyhash "
                      "[--rounds R] [--sizes BYTES,...])\n", argv[i]);
      return 2;
    }
  }
  if (rounds > 100000) {
    fprintf(stderr, "bench_copyhash: --rounds %ld: at most 100000\n", rounds);
    return 2;
  }
  /* Fresh pages in every round, as in a process's first payloads. */
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  size_t total = 0;
  unsigned char *src[MAX_SIZES], *warm[MAX_SIZES];
  const void *copy[MAX_SIZES];
  char file[64];
  snprintf(file, sizeof file, "/tmp/bench_copyhash-payloads.%d", (int)getpid());
  for (size_t k = 0; k < nsizes; k++) {
    src[k] = malloc(sizes[k]);
    warm[k] = malloc(sizes[k]);
    if (!src[k] || !warm[k]) {
      fprintf(stderr, "bench_copyhash: out of memory for %zu bytes\n", sizes[k]);
      return 2;
    }
    for (size_t j = 0; j < sizes[k]; j++)
      src[k][j] = (unsigned char)(j * 131u + k);
    memset(warm[k], 0, sizes[k]);
    total += sizes[k];
  }
  double *whole = calloc((size_t)rounds, sizeof *whole);
  double *fresh = calloc((size_t)rounds, sizeof *fresh);
  double *reused = calloc((size_t)rounds, sizeof *reused);
  double *ffresh = calloc((size_t)rounds, sizeof *ffresh);
  double *freused = calloc((size_t)rounds, sizeof *freused);
  double *cp = calloc((size_t)rounds, sizeof *cp);
  double *hash = calloc((size_t)rounds, sizeof *hash);
  if (!whole || !fresh || !reused || !ffresh || !freused || !cp || !hash)
    return 2;
  unsigned char key[PT_BLOB_KEY];
  for (long r = 0; r < rounds; r++) {
    double t = copy_hash(false, copy, src, sizes, nsizes);
    if (t < 0)
      return 2;
    whole[r] = t;
    for (size_t k = 0; k < nsizes; k++)
      free((void *)copy[k]);
    /* The recorder's copies, in process memory and then in a payload
     * file: fresh, then reused (as the writer leaves them, each freed
     * once stored, and given back by the commit). */
    for (int where = 0; where < 2; where++) {
      pt_payload_use_file(where ? file : NULL);
      pt_payload_trim();
      for (int pass = 0; pass < 2; pass++) {
        if ((t = copy_hash(true, copy, src, sizes, nsizes)) < 0) {
          pt_payload_file_remove();
          return 2;
        }
        (where ? pass ? freused : ffresh : pass ? reused : fresh)[r] = t;
        for (size_t k = 0; k < nsizes; k++)
          pt_payload_free(copy[k]);
        pt_payload_committed();
      }
      pt_payload_trim();
      pt_payload_file_remove();
    }
    double t0 = now_ms();
    for (size_t k = 0; k < nsizes; k++)
      memcpy(warm[k], src[k], sizes[k]);
    cp[r] = now_ms() - t0;
    t0 = now_ms();
    for (size_t k = 0; k < nsizes; k++) {
      pt_blob_key(warm[k], sizes[k], key);
      sink += key[0];
    }
    hash[r] = now_ms() - t0;
  }
  bench_print_machine("bench_copyhash");
  printf("%zu payloads, %zu bytes in all, %ld rounds (ms: min / median / max)\n", nsizes, total,
         rounds);
  double mn, md, mx;
  bench_mmm(whole, (size_t)rounds, &mn, &md, &mx);
  printf("  copied into fresh memory and hashed:         %.2f / %.2f / %.2f\n", mn, md, mx);
  bench_mmm(fresh, (size_t)rounds, &mn, &md, &mx);
  printf("  the same, the recorder's memory (fresh):     %.2f / %.2f / %.2f\n", mn, md, mx);
  bench_mmm(reused, (size_t)rounds, &mn, &md, &mx);
  printf("  the same, the recorder's memory reused:      %.2f / %.2f / %.2f\n", mn, md, mx);
  bench_mmm(ffresh, (size_t)rounds, &mn, &md, &mx);
  printf("  the same, a payload file in /tmp (fresh):  %.2f / %.2f / %.2f\n", mn, md, mx);
  bench_mmm(freused, (size_t)rounds, &mn, &md, &mx);
  printf("  the same, a payload file reused:             %.2f / %.2f / %.2f\n", mn, md, mx);
  bench_mmm(cp, (size_t)rounds, &mn, &md, &mx);
  printf("  copied into memory already touched:          %.2f / %.2f / %.2f\n", mn, md, mx);
  bench_mmm(hash, (size_t)rounds, &mn, &md, &mx);
  printf("  hashed (XXH3-128, pt_blob_key):              %.2f / %.2f / %.2f\n", mn, md, mx);
  for (size_t k = 0; k < nsizes; k++) {
    free(src[k]);
    free(warm[k]);
  }
  free(whole);
  free(ffresh);
  free(freused);
  free(fresh);
  free(reused);
  free(cp);
  free(hash);
  return 0;
}
