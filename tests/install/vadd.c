/*
 * vadd (consumer): c = a + b through an installed pitrace, built out of tree
 * with CMake (find_package) and with pkg-config; checked on the host.
 * Exit status: 0 matched, 1 mismatch, 2 the runtime failed.
 */
#include <stdio.h>

#include "pirt.h"

#define N 4096

static const char *source =
    "__kernel void vadd(__global const int *a, __global const int *b,\n"
    "                   __global int *c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = a[i] + b[i];\n"
    "}\n";

#define TRY(call)                                                                  \
  do {                                                                             \
    pi_result r_ = (call);                                                         \
    if (r_ != PI_SUCCESS) {                                                        \
      fprintf(stderr, "consumer vadd: %s: %s\n", pirt_result_name(r_),             \
              pirt_error_message());                                               \
      return 2;                                                                    \
    }                                                                              \
  } while (0)

int main(void)
{
  static int a[N], b[N], c[N];
  for (int i = 0; i < N; i++) {
    a[i] = i;
    b[i] = 3 * i + 1;
    c[i] = -1;
  }
  pirt_device *dev;
  pirt_context *ctx;
  pirt_queue *q;
  pirt_buffer *ba, *bb, *bc;
  pirt_program *prog;
  pirt_kernel *k;
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_queue_create(ctx, 0, &q));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_ONLY | PIRT_MEM_COPY_HOST, sizeof a, a, &ba));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_ONLY | PIRT_MEM_COPY_HOST, sizeof b, b, &bb));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_WRITE_ONLY, sizeof c, NULL, &bc));
  TRY(pirt_program_create_source(ctx, source, NULL, &prog));
  TRY(pirt_kernel_create(prog, "vadd", &k));
  TRY(pirt_kernel_set_buffer(k, 0, ba));
  TRY(pirt_kernel_set_buffer(k, 1, bb));
  TRY(pirt_kernel_set_buffer(k, 2, bc));
  size_t global = N;
  TRY(pirt_launch(q, k, 1, &global, NULL, 0, NULL, NULL));
  TRY(pirt_read(q, bc, true, 0, sizeof c, c, 0, NULL, NULL));
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += c[i] != a[i] + b[i];
  TRY(pirt_kernel_release(k));
  TRY(pirt_program_release(prog));
  TRY(pirt_buffer_release(ba));
  TRY(pirt_buffer_release(bb));
  TRY(pirt_buffer_release(bc));
  TRY(pirt_queue_release(q));
  TRY(pirt_context_release(ctx));
  if (bad) {
    printf("consumer vadd: MISMATCH: %d of %d elements wrong\n", bad, N);
    return 1;
  }
  printf("consumer vadd: result verified: %d of %d elements matched\n", N, N);
  return 0;
}
