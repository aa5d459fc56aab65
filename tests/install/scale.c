/*
 * scale (consumer): a kernel from device code embedded at build time by the
 * installed pitrace_add_device_code(), run through an installed pitrace and
 * checked on the host.
 * Exit status: 0 matched, 1 mismatch, 2 the runtime failed.
 */
#include <stdio.h>

#include "pirt.h"

#define N 2048

#define TRY(call)                                                                  \
  do {                                                                             \
    pi_result r_ = (call);                                                         \
    if (r_ != PI_SUCCESS) {                                                        \
      fprintf(stderr, "consumer scale: %s: %s\n", pirt_result_name(r_),            \
              pirt_error_message());                                               \
      return 2;                                                                    \
    }                                                                              \
  } while (0)

int main(void)
{
  static float in[N], out[N];
  for (int i = 0; i < N; i++)
    in[i] = (float)i * 0.5f;
  const float k = 3.0f;
  pirt_device *dev;
  pirt_context *ctx;
  pirt_queue *q;
  pirt_bundle *bundle;
  pirt_kernel *kern;
  pirt_buffer *bin, *bout;
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_queue_create(ctx, 0, &q));
  TRY(pirt_bundle_create(ctx, &bundle));
  TRY(pirt_bundle_get_kernel(bundle, "scale", &kern));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_ONLY | PIRT_MEM_COPY_HOST, sizeof in, in, &bin));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_WRITE_ONLY, sizeof out, NULL, &bout));
  TRY(pirt_kernel_set_buffer(kern, 0, bin));
  TRY(pirt_kernel_set_buffer(kern, 1, bout));
  TRY(pirt_kernel_set_arg(kern, 2, sizeof k, &k));
  size_t global = N;
  TRY(pirt_launch(q, kern, 1, &global, NULL, 0, NULL, NULL));
  TRY(pirt_read(q, bout, true, 0, sizeof out, out, 0, NULL, NULL));
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += out[i] != k * in[i] + 1.0f;
  TRY(pirt_kernel_release(kern));
  TRY(pirt_bundle_release(bundle));
  TRY(pirt_buffer_release(bin));
  TRY(pirt_buffer_release(bout));
  TRY(pirt_queue_release(q));
  TRY(pirt_context_release(ctx));
  if (bad) {
    printf("consumer scale: MISMATCH: %d of %d elements wrong\n", bad, N);
    return 1;
  }
  printf("consumer scale: result verified: %d of %d elements matched\n", N, N);
  return 0;
}
