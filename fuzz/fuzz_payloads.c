/*
 * fuzz_payloads: the walk over a payload file that a salvage makes
 * (session/payload.c: pt_payload_salvage_scan), the file beside a ring
 * file that a recording process left with large payloads still waiting
 * for its writer (it may have died half-way through writing a region).
 * The input is such a file.
 *
 * Checks: the walk counts the same payloads whether or not it is given
 * room for them, fills as many as it has room for, and each payload's
 * bytes lie inside the file and are the file's there (every byte of each
 * is read: AddressSanitizer reports a read outside the input's copy).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recorder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* A copy of exactly its size: a read past the file's end is a read past
   * this allocation. */
  unsigned char *file = malloc(size ? size : 1);
  if (!file)
    return 0;
  memcpy(file, data, size);
  int n = pt_payload_salvage_scan(file, size, NULL, 0);
  if (n < 0)
    abort();
  pt_salvaged_payload *out = calloc((size_t)n + 1, sizeof *out);
  if (!out) {
    free(file);
    return 0;
  }
  if (pt_payload_salvage_scan(file, size, out, n + 1) != n)
    abort();
  for (int i = 0; i < n; i++) {
    const unsigned char *p = out[i].data;
    if (p < file || p > file + size || out[i].size > (uint64_t)(file + size - p))
      abort();
    /* Its bytes are the file's where it lies (each read: a read outside
     * the copy is AddressSanitizer's report). */
    if (memcmp(p, data + (p - file), (size_t)out[i].size) != 0)
      abort();
  }
  /* Room for fewer: as many filled, the same count. */
  if (n > 1 && pt_payload_salvage_scan(file, size, out, n - 1) != n)
    abort();
  free(out);
  free(file);
  return 0;
}
