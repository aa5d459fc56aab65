/*
 * spec_const: seed 003's 3x3 convolution, its coefficients a composite
 * specialization constant set at run time (an edge-detect filter over the
 * image's default box blur), checked against the same convolution on the
 * host. SYCL_PI_TRACE=1 shows the constant's value and whether it was
 * native or emulated.
 * Exit status: 0 matched, 1 mismatch, 2 the runtime failed.
 */
#include <math.h>
#include <stdio.h>

#include "pirt.h"

#define W 64
#define H 48

typedef float coeff_t[3][3];

#define TRY(call)                                                              \
  do {                                                                         \
    pi_result r_ = (call);                                                     \
    if (r_ != PI_SUCCESS) {                                                    \
      fprintf(stderr, "spec_const: %s: %s\n", pirt_result_name(r_),            \
              pirt_error_message());                                           \
      return 2;                                                                \
    }                                                                          \
  } while (0)

static void convolve_host(const float *in, float *out, const coeff_t c)
{
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      float acc = 0.0f;
      for (int i = -1; i <= 1; i++) {
        if (y + i < 0 || y + i >= H)
          continue;
        for (int j = -1; j <= 1; j++) {
          if (x + j < 0 || x + j >= W)
            continue;
          acc += c[i + 1][j + 1] * in[(y + i) * W + x + j];
        }
      }
      out[y * W + x] = acc;
    }
}

int main(void)
{
  static float in[W * H], out[W * H], want[W * H];
  for (int i = 0; i < W * H; i++)
    in[i] = (float)((i * 37) % 101) / 101.0f;
  const coeff_t edge = {{-1, -1, -1}, {-1, 8, -1}, {-1, -1, -1}};

  pirt_device *dev;
  pirt_device_info info;
  pirt_context *ctx;
  pirt_queue *q;
  pirt_bundle *bundle;
  pirt_kernel *k;
  pirt_buffer *bin, *bout;
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_device_get_info(dev, &info));
  printf("spec_const: %dx%d image on \"%s\" (%s)\n", W, H, info.name, info.backend);
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_queue_create(ctx, 0, &q));
  TRY(pirt_bundle_create(ctx, &bundle));
  TRY(pirt_bundle_set_spec_constant(bundle, "coeff_id", edge, sizeof edge));
  TRY(pirt_bundle_get_kernel(bundle, "convolution", &k));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_ONLY | PIRT_MEM_COPY_HOST, sizeof in, in, &bin));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_WRITE_ONLY, sizeof out, NULL, &bout));
  unsigned w = W, h = H;
  TRY(pirt_kernel_set_buffer(k, 0, bin));
  TRY(pirt_kernel_set_buffer(k, 1, bout));
  TRY(pirt_kernel_set_arg(k, 2, sizeof w, &w));
  TRY(pirt_kernel_set_arg(k, 3, sizeof h, &h));
  size_t global[2] = {W, H};
  TRY(pirt_launch(q, k, 2, global, NULL, 0, NULL, NULL));
  TRY(pirt_read(q, bout, true, 0, sizeof out, out, 0, NULL, NULL));
  convolve_host(in, want, edge);

  int bad = 0, first = 0;
  for (int i = 0; i < W * H; i++)
    if (fabsf(out[i] - want[i]) > 1e-4f && bad++ == 0)
      first = i;
  TRY(pirt_kernel_release(k));
  TRY(pirt_bundle_release(bundle));
  TRY(pirt_buffer_release(bin));
  TRY(pirt_buffer_release(bout));
  TRY(pirt_queue_release(q));
  TRY(pirt_context_release(ctx));
  if (bad) {
    printf("spec_const: MISMATCH: %d of %d pixels wrong, first at %d: got %g, "
           "expected %g\n", bad, W * H, first, out[first], want[first]);
    return 1;
  }
  printf("spec_const: result verified: %d of %d pixels matched the host "
         "convolution\n", W * H, W * H);
  return 0;
}
