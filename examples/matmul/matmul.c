/*
 * matmul: four kernels of the kinds people time on a device, each checked
 * on the host (the program of issue 16):
 *
 *   matmul_tiled    C = A * B, 256 x 256 floats, 16 x 16 tiles in local memory
 *   reduce_sum      the sum of each work-group's 256 elements (local memory)
 *   scan_inclusive  the inclusive prefix sum of 65536 elements
 *   histogram       256 bins with local and global atomics
 *
 * The kernels come from matmul.cl (OpenCL devices) and matmul.ptx (CUDA
 * devices), embedded by pitrace_add_device_code; the plugin picks the one
 * its device runs. All values are integers (floats exact up to 2^24), so
 * results must match exactly. Each round launches every kernel once.
 *
 * Usage: matmul [ROUNDS]  (default 3)
 * Exit status: 0 matched, 1 mismatch, 2 the runtime failed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pirt.h"

#define N 256       /* matrix side */
#define TILE 16     /* matmul.cl's and matmul.cu's */
#define WG 256      /* the other kernels' work-group size */
#define COUNT 65536 /* elements of the reduction, the scan and the histogram */
#define BINS 256

#define TRY(call)                                                              \
  do {                                                                         \
    pi_result r_ = (call);                                                     \
    if (r_ != PI_SUCCESS) {                                                    \
      fprintf(stderr, "matmul: %s: %s\n", pirt_result_name(r_),                \
              pirt_error_message());                                           \
      return 2;                                                                \
    }                                                                          \
  } while (0)

/* Counts one kernel's mismatches (4-byte floats or unsigned) and says the first. */
static unsigned check(const char *kernel, size_t n, const void *got, const void *want,
                      bool is_float, unsigned round)
{
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; i++)
    if (memcmp((const char *)got + i * 4, (const char *)want + i * 4, 4) && bad++ == 0)
      first = i;
  if (!bad)
    return 0;
  double g = is_float ? ((const float *)got)[first] : ((const unsigned *)got)[first];
  double w = is_float ? ((const float *)want)[first] : ((const unsigned *)want)[first];
  printf("matmul: MISMATCH in %s (round %u): %zu of %zu wrong, first at %zu: got %g, "
         "expected %g\n", kernel, round, bad, n, first, g, w);
  return 1;
}

int main(int argc, char **argv)
{
  unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 3;
  if (argc > 2 || rounds == 0) {
    fprintf(stderr, "usage: matmul [ROUNDS]  (a positive number, default 3)\n");
    return 2;
  }
  static float a[N * N], b[N * N], c[N * N], want_c[N * N];
  static unsigned data[COUNT], got[COUNT], want_scan[COUNT];
  unsigned want_partial[COUNT / WG], want_bins[BINS] = {0};
  for (size_t i = 0; i < N * N; i++) {
    a[i] = (float)((int)(i % 7) - 3);
    b[i] = (float)((int)(i % 5) - 2);
  }
  for (size_t r = 0; r < N; r++)
    for (size_t col = 0; col < N; col++) {
      float acc = 0;
      for (size_t k = 0; k < N; k++)
        acc += a[r * N + k] * b[k * N + col];
      want_c[r * N + col] = acc;
    }
  unsigned run = 0;
  for (size_t i = 0; i < COUNT; i++) {
    data[i] = (unsigned)((i * 2654435761u) >> 13) % BINS;
    run += data[i];
    want_scan[i] = run;
    want_bins[data[i]]++;
    if (i % WG == 0)
      want_partial[i / WG] = 0;
    want_partial[i / WG] += data[i];
  }

  pirt_device *dev;
  pirt_device_info info;
  pirt_context *ctx;
  pirt_queue *q;
  pirt_bundle *bundle;
  pirt_kernel *kmat, *kred, *kscan, *khist;
  pirt_buffer *ba, *bb, *bc, *bdata, *bpartial, *bscan, *bbins;
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_device_get_info(dev, &info));
  printf("matmul: %ux%u matrices, %u elements, %u round(s) on \"%s\" (%s)\n", N, N, COUNT,
         rounds, info.name, info.backend);
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_queue_create(ctx, 0, &q));
  TRY(pirt_bundle_create(ctx, &bundle));
  TRY(pirt_bundle_get_kernel(bundle, "matmul_tiled", &kmat));
  TRY(pirt_bundle_get_kernel(bundle, "reduce_sum", &kred));
  TRY(pirt_bundle_get_kernel(bundle, "scan_inclusive", &kscan));
  TRY(pirt_bundle_get_kernel(bundle, "histogram", &khist));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_ONLY | PIRT_MEM_COPY_HOST, sizeof a, a, &ba));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_ONLY | PIRT_MEM_COPY_HOST, sizeof b, b, &bb));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_WRITE_ONLY, sizeof c, NULL, &bc));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_ONLY | PIRT_MEM_COPY_HOST, sizeof data, data,
                         &bdata));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_WRITE_ONLY, sizeof want_partial, NULL, &bpartial));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_WRITE_ONLY, sizeof got, NULL, &bscan));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_WRITE, sizeof want_bins, NULL, &bbins));
  const unsigned n = N, count = COUNT;
  TRY(pirt_kernel_set_buffer(kmat, 0, ba));
  TRY(pirt_kernel_set_buffer(kmat, 1, bb));
  TRY(pirt_kernel_set_buffer(kmat, 2, bc));
  TRY(pirt_kernel_set_arg(kmat, 3, sizeof n, &n));
  TRY(pirt_kernel_set_buffer(kred, 0, bdata));
  TRY(pirt_kernel_set_buffer(kred, 1, bpartial));
  TRY(pirt_kernel_set_buffer(kscan, 0, bdata));
  TRY(pirt_kernel_set_buffer(kscan, 1, bscan));
  TRY(pirt_kernel_set_arg(kscan, 2, sizeof count, &count));
  TRY(pirt_kernel_set_buffer(khist, 0, bdata));
  TRY(pirt_kernel_set_buffer(khist, 1, bbins));

  unsigned bad = 0;
  const size_t mat_global[2] = {N, N}, mat_local[2] = {TILE, TILE};
  const size_t global = COUNT, local = WG, one = WG;
  const unsigned zero = 0;
  for (unsigned round = 1; round <= rounds; round++) {
    TRY(pirt_launch(q, kmat, 2, mat_global, mat_local, 0, NULL, NULL));
    TRY(pirt_read(q, bc, true, 0, sizeof c, c, 0, NULL, NULL));
    bad |= check("matmul_tiled", N * N, c, want_c, true, round);

    unsigned partial[COUNT / WG];
    TRY(pirt_launch(q, kred, 1, &global, &local, 0, NULL, NULL));
    TRY(pirt_read(q, bpartial, true, 0, sizeof partial, partial, 0, NULL, NULL));
    bad |= check("reduce_sum", COUNT / WG, partial, want_partial, false, round);

    TRY(pirt_launch(q, kscan, 1, &one, &local, 0, NULL, NULL));
    TRY(pirt_read(q, bscan, true, 0, sizeof got, got, 0, NULL, NULL));
    bad |= check("scan_inclusive", COUNT, got, want_scan, false, round);

    unsigned bins[BINS];
    TRY(pirt_fill(q, bbins, &zero, sizeof zero, 0, sizeof bins, 0, NULL, NULL));
    TRY(pirt_launch(q, khist, 1, &global, &local, 0, NULL, NULL));
    TRY(pirt_read(q, bbins, true, 0, sizeof bins, bins, 0, NULL, NULL));
    bad |= check("histogram", BINS, bins, want_bins, false, round);
  }
  TRY(pirt_queue_finish(q));

  pirt_kernel *kernels[] = {kmat, kred, kscan, khist};
  for (int i = 0; i < 4; i++)
    TRY(pirt_kernel_release(kernels[i]));
  TRY(pirt_bundle_release(bundle));
  pirt_buffer *bufs[] = {ba, bb, bc, bdata, bpartial, bscan, bbins};
  for (int i = 0; i < 7; i++)
    TRY(pirt_buffer_release(bufs[i]));
  TRY(pirt_queue_release(q));
  TRY(pirt_context_release(ctx));
  if (bad)
    return 1;
  printf("matmul: result verified: matmul_tiled, reduce_sum, scan_inclusive and histogram "
         "matched the host in %u round(s)\n", rounds);
  return 0;
}
