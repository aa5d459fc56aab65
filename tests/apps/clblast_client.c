/*
 * clblast_client.c: a small client of CLBlast (Debian's libclblast), run
 * through pitrace by the real-application tests. It calls SGEMM and SAXPY
 * on the first OpenCL device of the first platform and verifies both on the
 * host. CLBlast is real code written by others: it queries the device,
 * builds its own kernels from source with its own options, and picks
 * launch shapes itself, so it exercises the front end the way libraries do.
 *
 *   clblast_client [M N K]      (default 64 48 32)
 * Exit 0 when both results match the host's, 1 when one does not, 2 on an
 * OpenCL or CLBlast error (named).
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <clblast_c.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    cl_int err_ = (call);                                                      \
    if (err_ != CL_SUCCESS) {                                                  \
      fprintf(stderr, "clblast_client: %s failed: %d\n", #call, err_);         \
      return 2;                                                                \
    }                                                                          \
  } while (0)

static float value(unsigned i) { return (float)((i * 7919u) % 97u) / 97.0f - 0.5f; }

int main(int argc, char **argv)
{
  size_t m = 64, n = 48, k = 32;
  if (argc == 4) {
    m = strtoul(argv[1], NULL, 10);
    n = strtoul(argv[2], NULL, 10);
    k = strtoul(argv[3], NULL, 10);
  } else if (argc != 1) {
    fprintf(stderr, "usage: clblast_client [M N K]\n");
    return 2;
  }
  cl_platform_id platform;
  cl_device_id device;
  cl_int err;
  CHECK(clGetPlatformIDs(1, &platform, NULL));
  CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
  char name[256] = "";
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, NULL);
  printf("device: %s\n", name);
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
  CHECK(err);

  float *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b);
  float *c = malloc(m * n * sizeof *c), *want = malloc(m * n * sizeof *want);
  if (!a || !b || !c || !want)
    return 2;
  for (size_t i = 0; i < m * k; i++)
    a[i] = value((unsigned)i);
  for (size_t i = 0; i < k * n; i++)
    b[i] = value((unsigned)(i + 13));
  for (size_t i = 0; i < m * n; i++)
    c[i] = value((unsigned)(i + 29));
  const float alpha = 1.5f, beta = 0.25f;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      double s = 0;
      for (size_t p = 0; p < k; p++)
        s += (double)a[i * k + p] * b[p * n + j];
      want[i * n + j] = (float)(alpha * s + beta * c[i * n + j]);
    }

  cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, m * k * sizeof *a, a, &err);
  CHECK(err);
  cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, k * n * sizeof *b, b, &err);
  CHECK(err);
  cl_mem dc = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, m * n * sizeof *c, c, &err);
  CHECK(err);

  cl_event ev = NULL;
  CLBlastStatusCode st = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo,
                                      CLBlastTransposeNo, m, n, k, alpha, da, 0, k, db, 0,
                                      n, beta, dc, 0, n, &q, &ev);
  if (st != CLBlastSuccess) {
    fprintf(stderr, "clblast_client: CLBlastSgemm failed: %d\n", (int)st);
    return 2;
  }
  CHECK(clWaitForEvents(1, &ev));
  CHECK(clReleaseEvent(ev));
  CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, m * n * sizeof *c, c, 0, NULL, NULL));
  int bad = 0;
  for (size_t i = 0; i < m * n; i++)
    if (fabsf(c[i] - want[i]) > 1e-3f * (1.0f + fabsf(want[i])))
      bad++;
  printf("sgemm %zux%zux%zu: %s\n", m, n, k, bad ? "WRONG" : "ok");

  /* SAXPY over the rows of A: y = 2 * x + y with x = A, y = A reversed. */
  size_t len = m * k;
  float *y = malloc(len * sizeof *y), *wy = malloc(len * sizeof *wy);
  if (!y || !wy)
    return 2;
  for (size_t i = 0; i < len; i++) {
    y[i] = a[len - 1 - i];
    wy[i] = 2.0f * a[i] + y[i];
  }
  cl_mem dy = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, len * sizeof *y, y, &err);
  CHECK(err);
  st = CLBlastSaxpy(len, 2.0f, da, 0, 1, dy, 0, 1, &q, NULL);
  if (st != CLBlastSuccess) {
    fprintf(stderr, "clblast_client: CLBlastSaxpy failed: %d\n", (int)st);
    return 2;
  }
  CHECK(clEnqueueReadBuffer(q, dy, CL_TRUE, 0, len * sizeof *y, y, 0, NULL, NULL));
  int bady = 0;
  for (size_t i = 0; i < len; i++)
    if (fabsf(y[i] - wy[i]) > 1e-5f)
      bady++;
  printf("saxpy %zu: %s\n", len, bady ? "WRONG" : "ok");

  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
  clReleaseMemObject(dy);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  free(a), free(b), free(c), free(want), free(y), free(wy);
  if (bad || bady)
    return 1;
  printf("all verified\n");
  return 0;
}
