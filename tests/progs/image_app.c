/*
 * image_app: an OpenCL application (plain OpenCL 1.2, run through the
 * front end) whose kernels read and write images, for extract and replay
 * of image work. Checked on the host.
 *
 *   A  37x23 RGBA float, made from host data laid out with a padded row
 *      pitch (CL_MEM_COPY_HOST_PTR)
 *   B  37x30 R float, of which only rows 0..19 are ever written: rows 0..9
 *      by one write with a padded row pitch, rows 10..19 by another with a
 *      packed one (the kernel reads no other row)
 *   blend    C[x,y] = A[x,y] * (y < 20 ? B[x,y] : 1)   (an image written)
 *   C is read back with a padded row pitch
 *   row_sum  s[y] = sum over x of C[x,y].x             (a buffer)
 *   s is read back
 *   a 1D image array written from padded host memory and read back
 *
 *   image_app [churn|copy|onbuffer|imagemap]
 *
 * churn: first makes and releases 300 small images (a recorder that kept
 * a fixed table of images lost the data of every image after the 256th).
 * copy: blend reads A2 instead of A: an image filled with 2.0 (all four
 * channels), then rows 0..H-6 of A copied into it (clEnqueueFillImage,
 * clEnqueueCopyImage: what extract follows on the device's side).
 * onbuffer: only this: an image1d_buffer made on a buffer created without
 * data, a kernel writing the image, the buffer read back (the buffer is
 * written through the image: replay once took its read for one of a
 * buffer nothing wrote, and compared nothing). PoCL 3.1 crashes on it
 * unrecorded: run it on rusticl.
 * imagemap: only this: an image made without data, mapped for writing
 * (CL_MAP_WRITE: the front end reads what it holds first, as image maps
 * are staged through host memory), filled on the host, unmapped and read
 * back (replay took the staging read of the undefined image for a result,
 * and diverged).
 * Exit status: 0 verified, 1 a wrong result, 2 OpenCL failed.
 */
#define CL_APP_NAME "image_app"
#include "cl_app.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 37
#define H 23
#define HB 30
#define ROWS_B 20

static const char *source =
    "__constant sampler_t smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |\n"
    "                           CLK_FILTER_NEAREST;\n"
    "__kernel void blend(__read_only image2d_t a, __read_only image2d_t b,\n"
    "                  __write_only image2d_t c, int rows_b) {\n"
    "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "  float k = p.y < rows_b ? read_imagef(b, smp, p).x : 1.0f;\n"
    "  write_imagef(c, p, read_imagef(a, smp, p) * k);\n"
    "}\n"
    "__kernel void row_sum(__read_only image2d_t c, int width, __global float *s) {\n"
    "  int y = get_global_id(0);\n"
    "  float t = 0.0f;\n"
    "  for (int x = 0; x < width; x++)\n"
    "    t += read_imagef(c, smp, (int2)(x, y)).x;\n"
    "  s[y] = t;\n"
    "}\n";

static float a_at(int x, int y, int ch) { return (float)((x * 7 + y * 3 + ch) % 11) * 0.5f; }
#define FILL_ROWS 5 /* copy: A2's last rows, left as filled */
static int copy_mode;
/* What blend reads: A, or (copy) A2. */
static float read_at(int x, int y, int ch)
{
  return copy_mode && y >= H - FILL_ROWS ? 2.0f : a_at(x, y, ch);
}
static float b_at(int x, int y) { return (float)((x + 2 * y) % 5) + 1.0f; }

/* image_app onbuffer (above). */
static int on_buffer(cl_context ctx, cl_device_id device, cl_command_queue q)
{
  enum { N = 256 };
  static const char *src =
      "__kernel void fill(__write_only image1d_buffer_t im) {\n"
      "  int i = get_global_id(0);\n"
      "  write_imagef(im, i, (float4)(i, 2 * i, 3 * i, 4 * i));\n"
      "}\n";
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  TRY("clCreateProgramWithSource(onbuffer)", err);
  TRY("clBuildProgram(onbuffer)", clBuildProgram(p, 1, &device, NULL, NULL, NULL));
  cl_kernel k = clCreateKernel(p, "fill", &err);
  TRY("clCreateKernel(fill)", err);
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * 4 * sizeof(float), NULL, &err);
  TRY("clCreateBuffer(onbuffer)", err);
  cl_image_format f = {CL_RGBA, CL_FLOAT};
  cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER, .image_width = N, .buffer = buf};
  cl_mem im = clCreateImage(ctx, CL_MEM_WRITE_ONLY, &f, &d, NULL, &err);
  TRY("clCreateImage(image1d_buffer)", err);
  TRY("clSetKernelArg(fill)", clSetKernelArg(k, 0, sizeof im, &im));
  size_t n = N;
  TRY("clEnqueueNDRangeKernel(fill)", clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL,
                                                             NULL));
  static float r[N * 4];
  TRY("clEnqueueReadBuffer(onbuffer)", clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof r, r, 0,
                                                           NULL, NULL));
  for (int i = 0; i < N; i++)
    for (int c = 0; c < 4; c++)
      if (r[4 * i + c] != (float)((c + 1) * i)) {
        fprintf(stderr, "image_app: onbuffer: element %d.%d is %g, not %d\n", i, c,
                (double)r[4 * i + c], (c + 1) * i);
        return 1;
      }
  printf("image_app: result verified: %d texels written through an image1d_buffer\n", N);
  clReleaseMemObject(im);
  clReleaseMemObject(buf);
  clReleaseKernel(k);
  clReleaseProgram(p);
  return 0;
}

/* image_app imagemap (above). */
static int image_map(cl_context ctx, cl_command_queue q)
{
  enum { IW = 19, IH = 7 };
  cl_int err;
  cl_image_format f = {CL_RGBA, CL_FLOAT};
  cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = IW, .image_height = IH};
  cl_mem im = clCreateImage(ctx, CL_MEM_READ_WRITE, &f, &d, NULL, &err);
  TRY("clCreateImage(imagemap)", err);
  size_t o[3] = {0, 0, 0}, r[3] = {IW, IH, 1}, pitch = 0;
  float *p = clEnqueueMapImage(q, im, CL_TRUE, CL_MAP_WRITE, o, r, &pitch, NULL, 0, NULL, NULL,
                               &err);
  TRY("clEnqueueMapImage", err);
  for (int y = 0; y < IH; y++)
    for (int x = 0; x < IW * 4; x++)
      ((float *)((char *)p + y * pitch))[x] = (float)(y * 1000 + x);
  TRY("clEnqueueUnmapMemObject", clEnqueueUnmapMemObject(q, im, p, 0, NULL, NULL));
  /* All rows but the last read back: not the bytes the unmap wrote, which
   * a session keeps once (a test changes these alone). */
  static float back[IH * IW * 4];
  size_t rb[3] = {IW, IH - 1, 1};
  TRY("clEnqueueReadImage(imagemap)",
      clEnqueueReadImage(q, im, CL_TRUE, o, rb, 0, 0, back, 0, NULL, NULL));
  for (int y = 0; y < IH - 1; y++)
    for (int x = 0; x < IW * 4; x++)
      if (back[y * IW * 4 + x] != (float)(y * 1000 + x)) {
        fprintf(stderr, "image_app: imagemap: [%d,%d] is %g\n", x, y,
                (double)back[y * IW * 4 + x]);
        return 1;
      }
  printf("image_app: result verified: %d pixels written through a map\n", IW * IH);
  clReleaseMemObject(im);
  return 0;
}

int main(int argc, char **argv)
{
  cl_platform_id platform;
  cl_device_id device;
  cl_int err;
  TRY("clGetPlatformIDs", clGetPlatformIDs(1, &platform, NULL));
  /* The platform's name, its size asked first, as most applications do
   * (a replay on another device finds the buffer too small for its own). */
  size_t name_size = 0;
  TRY("clGetPlatformInfo(size)",
      clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, NULL, &name_size));
  char *name = calloc(1, name_size + 1);
  if (!name)
    return 2;
  TRY("clGetPlatformInfo", clGetPlatformInfo(platform, CL_PLATFORM_NAME, name_size, name, NULL));
  printf("image_app: on %s\n", name);
  free(name);
  TRY("clGetDeviceIDs", clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  TRY("clCreateContext", err);
  cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
  TRY("clCreateCommandQueue", err);

  copy_mode = argc > 1 && strcmp(argv[1], "copy") == 0;
  if (argc > 1 && strcmp(argv[1], "onbuffer") == 0)
    return on_buffer(ctx, device, q);
  if (argc > 1 && strcmp(argv[1], "imagemap") == 0)
    return image_map(ctx, q);
  if (argc > 1 && strcmp(argv[1], "churn") == 0) {
    cl_image_format f = {CL_R, CL_FLOAT};
    cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 4, .image_height = 4};
    for (int i = 0; i < 300; i++) {
      cl_mem m = clCreateImage(ctx, CL_MEM_READ_WRITE, &f, &d, NULL, &err);
      TRY("clCreateImage(churn)", err);
      TRY("clReleaseMemObject(churn)", clReleaseMemObject(m));
    }
  }

  /* What the device takes (as ffmpeg asks before it makes its images). */
  cl_uint nformats = 0;
  TRY("clGetSupportedImageFormats", clGetSupportedImageFormats(ctx, CL_MEM_READ_ONLY,
                                                               CL_MEM_OBJECT_IMAGE2D, 0, NULL,
                                                               &nformats));
  printf("image_app: %u image formats\n", nformats);

  /* A from host data with a padded row pitch. */
  const size_t pitch_a = W * 4 * sizeof(float) + 64;
  unsigned char *host_a = calloc(H, pitch_a);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int ch = 0; ch < 4; ch++)
        ((float *)(host_a + y * pitch_a))[x * 4 + ch] = a_at(x, y, ch);
  cl_image_format rgba = {CL_RGBA, CL_FLOAT}, r = {CL_R, CL_FLOAT};
  cl_image_desc da = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = W, .image_height = H,
                      .image_row_pitch = pitch_a};
  cl_mem a = clCreateImage(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &rgba, &da, host_a, &err);
  TRY("clCreateImage(A)", err);

  /* B: rows 0..9 with a padded pitch, rows 10..19 packed. */
  cl_image_desc db = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = W, .image_height = HB};
  cl_mem b = clCreateImage(ctx, CL_MEM_READ_ONLY, &r, &db, NULL, &err);
  TRY("clCreateImage(B)", err);
  const size_t pitch_b = W * sizeof(float) + 32;
  unsigned char *host_b = calloc(ROWS_B, pitch_b);
  float packed_b[10 * W];
  for (int y = 0; y < ROWS_B; y++)
    for (int x = 0; x < W; x++) {
      if (y < 10)
        ((float *)(host_b + y * pitch_b))[x] = b_at(x, y);
      else
        packed_b[(y - 10) * W + x] = b_at(x, y);
    }
  size_t o0[3] = {0, 0, 0}, o10[3] = {0, 10, 0}, r10[3] = {W, 10, 1};
  TRY("clEnqueueWriteImage(B rows 0..9)",
      clEnqueueWriteImage(q, b, CL_TRUE, o0, r10, pitch_b, 0, host_b, 0, NULL, NULL));
  TRY("clEnqueueWriteImage(B rows 10..19)",
      clEnqueueWriteImage(q, b, CL_TRUE, o10, r10, 0, 0, packed_b, 0, NULL, NULL));

  cl_image_desc dc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = W, .image_height = H};
  cl_mem c = clCreateImage(ctx, CL_MEM_READ_WRITE, &rgba, &dc, NULL, &err);
  TRY("clCreateImage(C)", err);
  cl_mem s = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, H * sizeof(float), NULL, &err);
  TRY("clCreateBuffer(s)", err);

  /* copy: A2, filled, then most of A copied into it. */
  cl_mem a2 = NULL;
  if (copy_mode) {
    a2 = clCreateImage(ctx, CL_MEM_READ_WRITE, &rgba, &dc, NULL, &err);
    TRY("clCreateImage(A2)", err);
    const float two[4] = {2.0f, 2.0f, 2.0f, 2.0f};
    size_t whole_a[3] = {W, H, 1}, most_a[3] = {W, H - FILL_ROWS, 1};
    TRY("clEnqueueFillImage(A2)", clEnqueueFillImage(q, a2, two, o0, whole_a, 0, NULL, NULL));
    TRY("clEnqueueCopyImage(A -> A2)",
        clEnqueueCopyImage(q, a, a2, o0, o0, most_a, 0, NULL, NULL));
  }

  cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
  TRY("clCreateProgramWithSource", err);
  TRY("clBuildProgram", clBuildProgram(prog, 1, &device, "", NULL, NULL));
  cl_kernel mix = clCreateKernel(prog, "blend", &err);
  TRY("clCreateKernel(blend)", err);
  cl_kernel row_sum = clCreateKernel(prog, "row_sum", &err);
  TRY("clCreateKernel(row_sum)", err);
  int rows_b = ROWS_B, width = W;
  TRY("clSetKernelArg", clSetKernelArg(mix, 0, sizeof a, copy_mode ? &a2 : &a));
  TRY("clSetKernelArg", clSetKernelArg(mix, 1, sizeof b, &b));
  TRY("clSetKernelArg", clSetKernelArg(mix, 2, sizeof c, &c));
  TRY("clSetKernelArg", clSetKernelArg(mix, 3, sizeof rows_b, &rows_b));
  TRY("clSetKernelArg", clSetKernelArg(row_sum, 0, sizeof c, &c));
  TRY("clSetKernelArg", clSetKernelArg(row_sum, 1, sizeof width, &width));
  TRY("clSetKernelArg", clSetKernelArg(row_sum, 2, sizeof s, &s));

  size_t g2[2] = {W, H}, g1 = H;
  TRY("clEnqueueNDRangeKernel(mix)",
      clEnqueueNDRangeKernel(q, mix, 2, NULL, g2, NULL, 0, NULL, NULL));
  const size_t pitch_c = W * 4 * sizeof(float) + 16;
  unsigned char *host_c = calloc(H, pitch_c);
  size_t rc[3] = {W, H, 1};
  TRY("clEnqueueReadImage(C)",
      clEnqueueReadImage(q, c, CL_TRUE, o0, rc, pitch_c, 0, host_c, 0, NULL, NULL));
  TRY("clEnqueueNDRangeKernel(row_sum)",
      clEnqueueNDRangeKernel(q, row_sum, 1, NULL, &g1, NULL, 0, NULL, NULL));
  float sums[H];
  TRY("clEnqueueReadBuffer(s)",
      clEnqueueReadBuffer(q, s, CL_TRUE, 0, sizeof sums, sums, 0, NULL, NULL));

  /* A 1D image array: 5 images of 16 pixels, written from host memory
   * whose images are 80 bytes apart (the row pitch: PoCL and Mesa step
   * from image to image by it, not by the slice pitch), read back packed. */
  cl_image_desc d1 = {.image_type = CL_MEM_OBJECT_IMAGE1D_ARRAY, .image_width = 16,
                      .image_array_size = 5};
  cl_mem arr = clCreateImage(ctx, CL_MEM_READ_WRITE, &r, &d1, NULL, &err);
  TRY("clCreateImage(1D array)", err);
  float padded1[5 * 20] = {0}, back1[5 * 16];
  for (int i = 0; i < 5; i++)
    for (int x = 0; x < 16; x++)
      padded1[i * 20 + x] = (float)(i * 100 + x);
  size_t r1[3] = {16, 5, 1};
  TRY("clEnqueueWriteImage(1D array)",
      clEnqueueWriteImage(q, arr, CL_TRUE, o0, r1, 20 * sizeof(float), 0, padded1, 0, NULL, NULL));
  TRY("clEnqueueReadImage(1D array)",
      clEnqueueReadImage(q, arr, CL_TRUE, o0, r1, 0, 0, back1, 0, NULL, NULL));
  clReleaseMemObject(arr);

  int bad = 0;
  for (int i = 0; i < 5 * 16; i++)
    if (back1[i] != (float)((i / 16) * 100 + i % 16) && bad++ < 3)
      fprintf(stderr, "image_app: 1D array pixel %d = %g\n", i, back1[i]);
  for (int y = 0; y < H; y++) {
    double want_sum = 0;
    for (int x = 0; x < W; x++) {
      float k = y < ROWS_B ? b_at(x, y) : 1.0f;
      for (int ch = 0; ch < 4; ch++) {
        float want = read_at(x, y, ch) * k, got = ((float *)(host_c + y * pitch_c))[x * 4 + ch];
        if (got != want && bad++ < 3)
          fprintf(stderr, "image_app: C[%d,%d].%d = %g, expected %g\n", x, y, ch, got, want);
      }
      want_sum += read_at(x, y, 0) * k;
    }
    if (fabs(sums[y] - want_sum) > 1e-3 * want_sum && bad++ < 3)
      fprintf(stderr, "image_app: s[%d] = %g, expected %g\n", y, sums[y], want_sum);
  }
  clReleaseKernel(mix);
  clReleaseKernel(row_sum);
  clReleaseProgram(prog);
  clReleaseMemObject(a);
  if (a2)
    clReleaseMemObject(a2);
  clReleaseMemObject(b);
  clReleaseMemObject(c);
  clReleaseMemObject(s);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  free(host_a);
  free(host_b);
  free(host_c);
  if (bad) {
    printf("image_app: MISMATCH: %d wrong values\n", bad);
    return 1;
  }
  printf("image_app: result verified: %d pixels and %d row sums\n", W * H * 4, H);
  return 0;
}
