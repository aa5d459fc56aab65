/*
 * fuzz_filter: SYCL_DEVICE_FILTER parsing and matching (runtime/src/
 * devices.c: pirt_filter_allows), the input being the filter text, asked
 * about devices of every backend and type and a few indices.
 *
 * Checks: the answer is 1, 0 or -1; whether a filter is malformed does not
 * depend on the device asked about; a malformed filter says why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pirt_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *filter = malloc(size + 1);
  if (!filter)
    return 0;
  memcpy(filter, data, size);
  filter[size] = 0;
  static const pi_device_type types[] = {PI_DEVICE_TYPE_CPU, PI_DEVICE_TYPE_GPU,
                                         PI_DEVICE_TYPE_ACC, 0};
  static const unsigned indices[] = {0, 1, 7};
  int malformed = -1;
  for (int b = 0; b < PIRT_BACKEND_COUNT; b++)
    for (size_t t = 0; t < sizeof types / sizeof *types; t++)
      for (size_t k = 0; k < sizeof indices / sizeof *indices; k++) {
        struct pirt_device d = {.backend = (pirt_backend)b, .type = types[t],
                                .index = indices[k]};
        char err[256] = "";
        int r = pirt_filter_allows(filter, &d, err, sizeof err);
        if (r < -1 || r > 1)
          abort();
        if (malformed < 0)
          malformed = r < 0;
        else if (malformed != (r < 0))
          abort();
        if (r < 0 && (!err[0] || !memchr(err, 0, sizeof err)))
          abort();
      }
  free(filter);
  return 0;
}
