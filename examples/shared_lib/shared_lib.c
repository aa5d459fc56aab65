/*
 * shared_lib: the application's kernel calls a device function that a
 * separate shared library (libmathdev.so) exports from its own device
 * image. The runtime finds the import, compiles both images and links
 * them (SYCL_PI_TRACE=1 shows the decision, =2 the piProgramCompile and
 * piProgramLink calls); the result is checked against the library's host
 * function.
 * Exit status: 0 matched, 1 mismatch, 2 the runtime failed.
 */
#include <math.h>
#include <stdio.h>

#include "mathdev.h"
#include "pirt.h"

#define N 4096

#define TRY(call)                                                              \
  do {                                                                         \
    pi_result r_ = (call);                                                     \
    if (r_ != PI_SUCCESS) {                                                    \
      fprintf(stderr, "shared_lib: %s: %s\n", pirt_result_name(r_),            \
              pirt_error_message());                                           \
      return 2;                                                                \
    }                                                                          \
  } while (0)

int main(void)
{
  static float in[N], out[N];
  for (int i = 0; i < N; i++)
    in[i] = (float)(i % 100) * 0.01f - 0.5f;
  const float a = 3.0f, b = -1.25f;

  pirt_device *dev;
  pirt_device_info info;
  pirt_context *ctx;
  pirt_queue *q;
  pirt_bundle *bundle;
  pirt_kernel *k;
  pirt_buffer *bin, *bout;
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_device_get_info(dev, &info));
  printf("shared_lib: %d elements on \"%s\" (%s)\n", N, info.name, info.backend);
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_queue_create(ctx, 0, &q));
  TRY(pirt_bundle_create(ctx, &bundle));
  TRY(pirt_bundle_get_kernel(bundle, "apply_poly", &k));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_ONLY | PIRT_MEM_COPY_HOST, sizeof in, in, &bin));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_WRITE_ONLY, sizeof out, NULL, &bout));
  TRY(pirt_kernel_set_buffer(k, 0, bin));
  TRY(pirt_kernel_set_buffer(k, 1, bout));
  TRY(pirt_kernel_set_arg(k, 2, sizeof a, &a));
  TRY(pirt_kernel_set_arg(k, 3, sizeof b, &b));
  size_t global = N;
  TRY(pirt_launch(q, k, 1, &global, NULL, 0, NULL, NULL));
  TRY(pirt_read(q, bout, true, 0, sizeof out, out, 0, NULL, NULL));

  int bad = 0, first = 0;
  for (int i = 0; i < N; i++) {
    float want = mathdev_poly2_host(in[i], a, b);
    if (fabsf(out[i] - want) > 1e-5f * fabsf(want) + 1e-6f && bad++ == 0)
      first = i;
  }
  TRY(pirt_kernel_release(k));
  TRY(pirt_bundle_release(bundle));
  TRY(pirt_buffer_release(bin));
  TRY(pirt_buffer_release(bout));
  TRY(pirt_queue_release(q));
  TRY(pirt_context_release(ctx));
  if (bad) {
    printf("shared_lib: MISMATCH: %d of %d elements wrong, first at %d: got %g, "
           "expected %g\n", bad, N, first, out[first],
           mathdev_poly2_host(in[first], a, b));
    return 1;
  }
  printf("shared_lib: result verified: %d of %d elements matched libmathdev's "
         "host function\n", N, N);
  return 0;
}
