/*
 * diff_leak: vadd's work, leaving its objects to the process's end (the
 * context, queue, buffers, program, kernel and launch event are never
 * released), as many applications do. A recorded replay of its session
 * releases them at its end; `pitrace diff` of the two must still say
 * "same" (tests/test_viewer.c).
 * Exit status: 0 verified, 1 wrong result, 2 the runtime failed.
 */
#include <stdio.h>

#include "pirt.h"

#define N 256
#define TRY(call)                                                                          \
  do {                                                                                     \
    pi_result r_ = (call);                                                                 \
    if (r_ != PI_SUCCESS) {                                                                \
      fprintf(stderr, "diff_leak: %s: %s\n", pirt_result_name(r_), pirt_error_message()); \
      return 2;                                                                            \
    }                                                                                      \
  } while (0)

static const char *source = "__kernel void twice(__global const int *a, __global int *b) {\n"
                            "  size_t i = get_global_id(0);\n"
                            "  b[i] = 2 * a[i];\n"
                            "}\n";

int main(void)
{
  int a[N], b[N];
  for (int i = 0; i < N; i++)
    a[i] = i - 7, b[i] = 0;
  pirt_device *dev;
  pirt_context *ctx;
  pirt_queue *q;
  pirt_buffer *ba, *bb;
  pirt_program *prog;
  pirt_kernel *k;
  pirt_event *done;
  size_t global = N;
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_queue_create(ctx, 0, &q));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_ONLY | PIRT_MEM_COPY_HOST, sizeof a, a, &ba));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_WRITE_ONLY, sizeof b, NULL, &bb));
  TRY(pirt_program_create_source(ctx, source, NULL, &prog));
  TRY(pirt_kernel_create(prog, "twice", &k));
  TRY(pirt_kernel_set_buffer(k, 0, ba));
  TRY(pirt_kernel_set_buffer(k, 1, bb));
  TRY(pirt_launch(q, k, 1, &global, NULL, 0, NULL, &done));
  TRY(pirt_read(q, bb, true, 0, sizeof b, b, 1, &done, NULL));
  for (int i = 0; i < N; i++)
    if (b[i] != 2 * a[i]) {
      printf("diff_leak: MISMATCH at %d: %d\n", i, b[i]);
      return 1;
    }
  printf("diff_leak: verified; nothing released\n");
  return 0;
}
