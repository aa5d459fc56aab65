/*
 * rect_app: an OpenCL application (plain OpenCL 1.2, run through the
 * front end) that moves a buffer's data only by rectangles, as OpenCV does
 * with a region of interest: a W x H grid of floats, zero-filled, gets a
 * box of it from a larger host array (clEnqueueWriteBufferRect, host and
 * buffer origins and pitches of their own), a second grid gets that box
 * moved by an offset (clEnqueueCopyBufferRect), a kernel doubles the
 * second grid plus one into a third, and the program reads the third's
 * box back by a rectangle into a padded host array
 * (clEnqueueReadBufferRect) and checks it. For extract's following of
 * rectangles (tests/test_replay.c): the launch's input is known only
 * through the rectangle write and copy. With `retain`, the program holds
 * a second reference to the third grid around the launch (retained before
 * it, released after it, before the reads), as pyopencl does to a buffer
 * a launch waiting on a user event uses: the grid lives on. With
 * `subretain`, the same through a sub-buffer of the third grid: made and
 * retained before the launch, released twice after it. With `halves`,
 * two launches more on two halves of a buffer filled with 3 (sub-buffers
 * lo and hi): the first writes lo from hi, the second reads hi again into
 * another buffer, and the program reads that back: what the first launch
 * computed is not the second's input.
 *
 *   rect_app [retain|subretain|halves]
 *
 * Prints "rect_app: result verified: N values"; exit 0 verified, 1 a wrong
 * result, 2 OpenCL failed.
 */
#define CL_APP_NAME "rect_app"
#include "cl_app.h"
#include <stdio.h>
#include <string.h>

#define W 24 /* floats a row of a grid */
#define H 10 /* rows */
#define BW 7 /* the box: floats a row */
#define BH 4 /* rows */
#define HW 13 /* floats a row of the host arrays */

static const char *source =
    "__kernel void twice_plus_one(__global const float *in, __global float *out)\n"
    "{\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] * 2.0f + 1.0f;\n"
    "}\n";

int main(int argc, char **argv)
{
  int retain = argc > 1 && strcmp(argv[1], "retain") == 0;
  int subretain = argc > 1 && strcmp(argv[1], "subretain") == 0;
  int halves = argc > 1 && strcmp(argv[1], "halves") == 0;
  cl_device_id device;
  cl_context ctx;
  cl_command_queue q;
  cl_int err;
  if (cl_app_open(&device, &ctx, &q))
    return 2;
  cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
  TRY("clCreateProgramWithSource", err);
  TRY("clBuildProgram", clBuildProgram(prog, 1, &device, "", NULL, NULL));
  cl_kernel k = clCreateKernel(prog, "twice_plus_one", &err);
  TRY("clCreateKernel", err);

  const size_t bytes = W * H * sizeof(float);
  cl_mem grid[3];
  for (int g = 0; g < 3; g++) {
    grid[g] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    TRY("clCreateBuffer", err);
    float zero = 0.0f;
    TRY("clEnqueueFillBuffer",
        clEnqueueFillBuffer(q, grid[g], &zero, sizeof zero, 0, bytes, 0, NULL, NULL));
  }
  /* The box, at host row 2 column 3 of a host array 13 floats wide, goes
   * to row 1 column 5 of grid 0. */
  static float host[8][HW];
  for (int y = 0; y < 8; y++)
    for (int x = 0; x < HW; x++)
      host[y][x] = (float)(y * 100 + x);
  size_t hrow = HW * sizeof(float), brow = W * sizeof(float);
  size_t host_origin[3] = {3 * sizeof(float), 2, 0}, buf_origin[3] = {5 * sizeof(float), 1, 0};
  size_t region[3] = {BW * sizeof(float), BH, 1};
  TRY("clEnqueueWriteBufferRect",
      clEnqueueWriteBufferRect(q, grid[0], CL_FALSE, buf_origin, host_origin, region, brow, 0,
                               hrow, 0, host, 0, NULL, NULL));
  /* Grid 0's box to row 4 column 11 of grid 1. */
  size_t to[3] = {11 * sizeof(float), 4, 0};
  TRY("clEnqueueCopyBufferRect",
      clEnqueueCopyBufferRect(q, grid[0], grid[1], buf_origin, to, region, brow, 0, brow, 0, 0,
                              NULL, NULL));
  TRY("clSetKernelArg", clSetKernelArg(k, 0, sizeof grid[1], &grid[1]));
  TRY("clSetKernelArg", clSetKernelArg(k, 1, sizeof grid[2], &grid[2]));
  size_t global = W * H;
  if (retain)
    TRY("clRetainMemObject", clRetainMemObject(grid[2]));
  cl_mem sub = NULL;
  if (subretain) {
    cl_buffer_region whole = {0, bytes};
    sub = clCreateSubBuffer(grid[2], CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &whole,
                            &err);
    TRY("clCreateSubBuffer", err);
    TRY("clRetainMemObject", clRetainMemObject(sub));
  }
  TRY("clEnqueueNDRangeKernel",
      clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
  if (retain)
    TRY("clReleaseMemObject", clReleaseMemObject(grid[2]));
  for (int i = 0; subretain && i < 2; i++)
    TRY("clReleaseMemObject", clReleaseMemObject(sub));
  /* Grid 2's box into row 1 column 1 of a padded host array. */
  static float back[8][HW];
  size_t back_origin[3] = {1 * sizeof(float), 1, 0};
  TRY("clEnqueueReadBufferRect",
      clEnqueueReadBufferRect(q, grid[2], CL_TRUE, to, back_origin, region, brow, 0, hrow, 0,
                              back, 0, NULL, NULL));
  int bad = 0;
  for (int y = 0; y < BH; y++)
    for (int x = 0; x < BW; x++) {
      float want = host[2 + y][3 + x] * 2.0f + 1.0f;
      if (back[1 + y][1 + x] != want && bad++ < 4)
        fprintf(stderr, "rect_app: row %d column %d: %g, wanted %g\n", y, x,
                (double)back[1 + y][1 + x], (double)want);
    }
  /* Outside the box, grid 2 is the kernel's result of zeros: 1. */
  float row0[W];
  TRY("clEnqueueReadBuffer",
      clEnqueueReadBuffer(q, grid[2], CL_TRUE, 0, sizeof row0, row0, 0, NULL, NULL));
  for (int x = 0; x < W; x++)
    if (row0[x] != 1.0f && bad++ < 8)
      fprintf(stderr, "rect_app: row 0 column %d: %g, wanted 1\n", x, (double)row0[x]);
  if (halves) { /* 256 floats a half: sub-buffer origins stay aligned */
    const size_t half = 256 * sizeof(float);
    float three = 3.0f, got[256];
    cl_mem d = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 2 * half, NULL, &err), e;
    TRY("clCreateBuffer", err);
    e = clCreateBuffer(ctx, CL_MEM_READ_WRITE, half, NULL, &err);
    TRY("clCreateBuffer", err);
    TRY("clEnqueueFillBuffer",
        clEnqueueFillBuffer(q, d, &three, sizeof three, 0, 2 * half, 0, NULL, NULL));
    cl_buffer_region rl = {0, half}, rh = {half, half};
    cl_mem lo = clCreateSubBuffer(d, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &rl, &err);
    TRY("clCreateSubBuffer", err);
    cl_mem hi = clCreateSubBuffer(d, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &rh, &err);
    TRY("clCreateSubBuffer", err);
    cl_mem out[2] = {lo, e};
    global = 256;
    for (int l = 0; l < 2; l++) {
      TRY("clSetKernelArg", clSetKernelArg(k, 0, sizeof hi, &hi));
      TRY("clSetKernelArg", clSetKernelArg(k, 1, sizeof out[l], &out[l]));
      TRY("clEnqueueNDRangeKernel",
          clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    }
    TRY("clEnqueueReadBuffer", clEnqueueReadBuffer(q, e, CL_TRUE, 0, half, got, 0, NULL, NULL));
    for (int x = 0; x < 256; x++)
      if (got[x] != 7.0f && bad++ < 8)
        fprintf(stderr, "rect_app: halves %d: %g, wanted 7\n", x, (double)got[x]);
    clReleaseMemObject(lo);
    clReleaseMemObject(hi);
    clReleaseMemObject(d);
    clReleaseMemObject(e);
  }
  for (int g = 0; g < 3; g++)
    clReleaseMemObject(grid[g]);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  if (bad) {
    fprintf(stderr, "rect_app: %d values wrong\n", bad);
    return 1;
  }
  printf("rect_app: result verified: %d values\n", BW * BH + W);
  return 0;
}
