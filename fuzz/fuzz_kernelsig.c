/*
 * fuzz_kernelsig: reading a kernel's signature in OpenCL C source
 * (ex_kernel_signature, replay/ex_access.c), which pitrace extract runs on
 * the program sources a session recorded: which arguments a kernel only
 * reads. The input is a kernel's name, a newline, then the source.
 *
 * Checks: the answer is -1 or a count; every flag written is 0 or 1, and
 * none past `max`; the source blanked keeps its length and its newlines
 * (so that a second reading sees the same lines), and reading it blanked
 * again gives the same answer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ex_sig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const uint8_t *nl = memchr(data, '\n', size);
  if (!nl || nl - data > 255)
    return 0;
  char name[256];
  memcpy(name, data, (size_t)(nl - data));
  name[nl - data] = 0;
  size_t n = size - (size_t)(nl - data) - 1;
  char *src = malloc(n + 1);
  if (!src)
    return 0;
  memcpy(src, nl + 1, n);
  src[n] = 0;
  enum { MAX = 8 };
  unsigned char ro[MAX + 1], again[MAX + 1];
  memset(ro, 7, sizeof ro);
  memset(again, 7, sizeof again);
  int count = ex_kernel_signature(src, n, name, ro, MAX);
  if (count < -1 || ro[MAX] != 7)
    abort();
  for (int i = 0; i < count && i < MAX; i++)
    if (ro[i] > 1)
      abort();
  for (size_t i = 0; i < n; i++)
    if (((const char *)nl + 1)[i] == '\n' && src[i] != '\n')
      abort();
  if (ex_kernel_signature(src, n, name, again, MAX) != count ||
      memcmp(ro, again, count > 0 ? (size_t)(count < MAX ? count : MAX) : 0) != 0)
    abort();
  free(src);
  return 0;
}
