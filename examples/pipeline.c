/*
 * pipeline: three kernels chained by events on an out-of-order queue,
 * checked on the host.
 *
 *   fill   x[i] = 1.0                       (piEnqueueMemBufferFill)
 *   write  y = input                        (non-blocking write)
 *   saxpy  y[i] = alpha * x[i] + y[i]       waits for fill and write
 *   square z[i] = y[i] * y[i]               waits for saxpy
 *   reduce partial[g] = sum of z over work-group g, in __local memory
 *   copy   partial -> result buffer, then map it to read
 *
 * Usage: pipeline [N]  (N a multiple of 64, default 4096)
 * Exit status: 0 matched, 1 mismatch, 2 the runtime failed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pirt.h"

#define WG 64

static const char *source =
    "__kernel void saxpy(float alpha, __global const float *x,\n"
    "                    __global float *y) {\n"
    "  size_t i = get_global_id(0);\n"
    "  y[i] = alpha * x[i] + y[i];\n"
    "}\n"
    "__kernel void square(__global const float *y, __global float *z) {\n"
    "  size_t i = get_global_id(0);\n"
    "  z[i] = y[i] * y[i];\n"
    "}\n"
    "__kernel void reduce(__global const float *z, __local float *scratch,\n"
    "                     __global float *partial) {\n"
    "  size_t l = get_local_id(0);\n"
    "  scratch[l] = z[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {\n"
    "    if (l < s) scratch[l] += scratch[l + s];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (l == 0) partial[get_group_id(0)] = scratch[0];\n"
    "}\n";

#define TRY(call)                                                              \
  do {                                                                         \
    pi_result r_ = (call);                                                     \
    if (r_ != PI_SUCCESS) {                                                    \
      fprintf(stderr, "pipeline: %s: %s\n", pirt_result_name(r_),              \
              pirt_error_message());                                           \
      return 2;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char **argv)
{
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
  if (n == 0 || n % WG) {
    fprintf(stderr, "usage: pipeline [N]  (N a positive multiple of %d)\n", WG);
    return 2;
  }
  size_t groups = n / WG, bytes = n * sizeof(float);
  float *input = malloc(bytes);
  if (!input)
    return 2;
  for (size_t i = 0; i < n; i++)
    input[i] = (float)(i % 17) * 0.25f;
  const float alpha = 3.0f, one = 1.0f;

  pirt_device *dev;
  pirt_device_info info;
  pirt_context *ctx;
  pirt_queue *q;
  pirt_buffer *x, *y, *z, *partial, *result;
  pirt_program *prog;
  pirt_kernel *ksaxpy, *ksquare, *kreduce;
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_device_get_info(dev, &info));
  printf("pipeline: %zu elements, %zu work-groups on \"%s\" (%s)\n", n, groups,
         info.name, info.backend);
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_queue_create(ctx, PIRT_QUEUE_OUT_OF_ORDER | PIRT_QUEUE_PROFILING, &q));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_ONLY, bytes, NULL, &x));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_WRITE, bytes, NULL, &y));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_WRITE, bytes, NULL, &z));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_WRITE, groups * sizeof(float), NULL, &partial));
  TRY(pirt_buffer_create(ctx, PIRT_MEM_READ_WRITE, groups * sizeof(float), NULL, &result));
  TRY(pirt_program_create_source(ctx, source, "-cl-std=CL1.2", &prog));
  TRY(pirt_kernel_create(prog, "saxpy", &ksaxpy));
  TRY(pirt_kernel_create(prog, "square", &ksquare));
  TRY(pirt_kernel_create(prog, "reduce", &kreduce));
  TRY(pirt_kernel_set_arg(ksaxpy, 0, sizeof alpha, &alpha));
  TRY(pirt_kernel_set_buffer(ksaxpy, 1, x));
  TRY(pirt_kernel_set_buffer(ksaxpy, 2, y));
  TRY(pirt_kernel_set_buffer(ksquare, 0, y));
  TRY(pirt_kernel_set_buffer(ksquare, 1, z));
  TRY(pirt_kernel_set_buffer(kreduce, 0, z));
  TRY(pirt_kernel_set_local(kreduce, 1, WG * sizeof(float)));
  TRY(pirt_kernel_set_buffer(kreduce, 2, partial));

  pirt_event *ev[6];
  size_t local = WG;
  TRY(pirt_fill(q, x, &one, sizeof one, 0, bytes, 0, NULL, &ev[0]));
  TRY(pirt_write(q, y, false, 0, bytes, input, 0, NULL, &ev[1]));
  TRY(pirt_launch(q, ksaxpy, 1, &n, &local, 2, ev, &ev[2]));
  TRY(pirt_launch(q, ksquare, 1, &n, &local, 1, &ev[2], &ev[3]));
  TRY(pirt_launch(q, kreduce, 1, &n, &local, 1, &ev[3], &ev[4]));
  TRY(pirt_copy(q, partial, result, 0, 0, groups * sizeof(float), 1, &ev[4], &ev[5]));
  TRY(pirt_event_wait(1, &ev[5]));
  uint64_t t0, t1;
  TRY(pirt_event_times(ev[2], &t0, &t1));
  printf("pipeline: saxpy ran %llu ns on the device\n", (unsigned long long)(t1 - t0));
  for (int i = 0; i < 6; i++)
    TRY(pirt_event_release(ev[i]));

  float *sums;
  TRY(pirt_map(q, result, PIRT_MAP_READ, 0, groups * sizeof(float), (void **)&sums));
  size_t bad = 0, first = 0;
  double expect_first = 0;
  for (size_t g = 0; g < groups; g++) {
    double expect = 0;
    for (size_t i = g * WG; i < (g + 1) * WG; i++) {
      double v = alpha * 1.0 + input[i];
      expect += v * v;
    }
    if (fabs(sums[g] - expect) > 1e-4 * fabs(expect) + 1e-3 && bad++ == 0) {
      first = g;
      expect_first = expect;
    }
  }
  float got_first = sums[first];
  TRY(pirt_unmap(q, result, sums, 0, NULL, NULL));
  TRY(pirt_queue_finish(q));

  TRY(pirt_kernel_release(ksaxpy));
  TRY(pirt_kernel_release(ksquare));
  TRY(pirt_kernel_release(kreduce));
  TRY(pirt_program_release(prog));
  pirt_buffer *bufs[] = {x, y, z, partial, result};
  for (int i = 0; i < 5; i++)
    TRY(pirt_buffer_release(bufs[i]));
  TRY(pirt_queue_release(q));
  TRY(pirt_context_release(ctx));
  free(input);
  if (bad) {
    printf("pipeline: MISMATCH: %zu of %zu group sums wrong, first group %zu: "
           "expected %g, got %g\n", bad, groups, first, expect_first, got_first);
    return 1;
  }
  printf("pipeline: result verified: %zu of %zu group sums matched\n", groups, groups);
  return 0;
}
