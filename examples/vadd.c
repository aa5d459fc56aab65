/*
 * vadd: c = a + b on the selected device, checked on the host.
 *
 * Usage: vadd [N]   (N elements, default 1024)
 * The device is chosen by SYCL_DEVICE_FILTER / SYCL_BE like any pitrace
 * application; run with SYCL_PI_TRACE=2 to see every PI call.
 * Exit status: 0 matched, 1 mismatch, 2 the runtime failed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pirt.h"

static const char *source =
    "__kernel void vadd(__global const float *a, __global const float *b,\n"
    "                   __global float *c, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

#define TRY(call)                                                              \
  do {                                                                         \
    pi_result r_ = (call);                                                     \
    if (r_ != PI_SUCCESS) {                                                    \
      fprintf(stderr, "vadd: %s: %s\n", pirt_result_name(r_),                  \
              pirt_error_message());                                           \
      return 2;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char **argv)
{
  unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1024;
  if (n == 0) {
    fprintf(stderr, "usage: vadd [N]  (N > 0 elements)\n");
    return 2;
  }
  size_t bytes = (size_t)n * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  if (!a || !b || !c) {
    fprintf(stderr, "vadd: out of memory for %u elements\n", n);
    return 2;
  }
  for (unsigned i = 0; i < n; i++) {
    a[i] = (float)i;
    b[i] = 2.0f * (float)i + 0.5f;
    c[i] = -1.0f;
  }

  pirt_device *dev;
  pirt_device_info info;
  pirt_context *ctx;
  pirt_queue *q;
  pirt_buffer *ba, *bb, *bc;
  pirt_program *prog;
  pirt_kernel *k;
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_device_get_info(dev, &info));
  printf("vadd: %u elements on \"%s\" (%s, %s)\n", n, info.name,
         info.platform_name, info.backend);
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_queue_create(ctx, 0, &q));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_ONLY | PIRT_MEM_COPY_HOST, bytes, a, &ba));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_ONLY, bytes, NULL, &bb));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_WRITE_ONLY, bytes, NULL, &bc));
  TRY(pirt_write(q, bb, true, 0, bytes, b, 0, NULL, NULL));
  TRY(pirt_program_create_source(ctx, source, NULL, &prog));
  TRY(pirt_kernel_create(prog, "vadd", &k));
  TRY(pirt_kernel_set_buffer(k, 0, ba));
  TRY(pirt_kernel_set_buffer(k, 1, bb));
  TRY(pirt_kernel_set_buffer(k, 2, bc));
  TRY(pirt_kernel_set_arg(k, 3, sizeof n, &n));
  size_t global = n;
  pirt_event *done;
  TRY(pirt_launch(q, k, 1, &global, NULL, 0, NULL, &done));
  TRY(pirt_read(q, bc, true, 0, bytes, c, 1, &done, NULL));
  TRY(pirt_event_release(done));

  unsigned bad = 0, first = 0;
  for (unsigned i = 0; i < n; i++)
    if (c[i] != a[i] + b[i] && bad++ == 0)
      first = i;
  TRY(pirt_kernel_release(k));
  TRY(pirt_program_release(prog));
  TRY(pirt_buffer_release(ba));
  TRY(pirt_buffer_release(bb));
  TRY(pirt_buffer_release(bc));
  TRY(pirt_queue_release(q));
  TRY(pirt_context_release(ctx));
  if (bad) {
    printf("vadd: MISMATCH: %u of %u elements wrong, first at %u: %g + %g "
           "gave %g\n", bad, n, first, a[first], b[first], c[first]);
  } else {
    printf("vadd: result verified: %u of %u elements matched\n", n, n);
  }
  free(a);
  free(b);
  free(c);
  return bad ? 1 : 0;
}
