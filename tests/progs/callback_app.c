/*
 * callback_app: an OpenCL application (plain OpenCL 1.2, run through the
 * front end) that counts on its event callbacks, as OpenCV does: each of
 * ROUNDS rounds makes a buffer, writes it without blocking and sets a
 * completion callback on the write's event that releases the buffer (a
 * call on the implementation's callback thread) and counts; the program
 * waits for every callback before it reads anything back, then checks a
 * buffer kept from the start. For the replay plugin's callbacks
 * (tests/test_replay.c) and the ThreadSanitizer check.
 *
 *   callback_app [map|mapcallback|mapreleased|maprw|sharedread]
 *
 * map: only this: a buffer written, mapped for reading without blocking,
 * the map's event waited for and what it maps checked, then unmapped (the
 * recorder kept nothing of a map that did not block: a replay compared
 * nothing, and the replay plugin handed back other bytes). mapcallback:
 * the same, the map's end told by a callback on its event (no wait, no
 * status asked: the recorder keeps the bytes as the event completes, by a
 * callback of its own set before the program's). mapreleased:
 * the map's event released at once, its end known from a later command's
 * (an in-order queue): at the unmap the recorder asked the released, by
 * then freed, event its status (a use after free in the Level Zero plugin).
 * maprw: as mapcallback, the map for reading and writing: the program
 * then writes the mapped bytes and checks, after the unmap, that the
 * buffer holds them (the recorder kept the bytes as written, not as read).
 * sharedread: two threads on one in-order queue: one blocks in a read
 * behind a kernel that spins until the host lets it go, the other then
 * enqueues a read that waits for another such kernel (on a second queue),
 * without blocking; the first kernel is let go, the blocking read returns,
 * then the second kernel, and the read's event is waited for. The
 * recorder must keep the read's bytes once they are there, not as the
 * other thread's blocking read returns (the read was enqueued after it).
 * Prints "callback_app: N callbacks ran" and "result verified"; exit 0
 * verified, 1 a wrong result or callbacks that did not run within 10 s,
 * 2 OpenCL failed.
 */
#define _POSIX_C_SOURCE 200809L
#define CL_APP_NAME "callback_app"
#include "cl_app.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 8
#define N 256

static atomic_int ran;

static void CL_CALLBACK written(cl_event ev, cl_int status, void *user)
{
  (void)ev;
  if (status == CL_COMPLETE && clReleaseMemObject((cl_mem)user) == CL_SUCCESS)
    atomic_fetch_add(&ran, 1);
}

static atomic_int map_done;

static void CL_CALLBACK mapped(cl_event ev, cl_int status, void *user)
{
  (void)ev;
  (void)user;
  atomic_store(&map_done, status == CL_COMPLETE ? 1 : -1);
}

/* callback_app map, mapcallback, mapreleased and maprw (above). */
static int map_later(cl_context ctx, cl_command_queue q, int mode)
{
  enum { M = 4096 }; /* 16 KiB: a blob of the session's, not a chunk's inline bytes */
  static int data[M];
  for (int i = 0; i < M; i++)
    data[i] = i * 7 + 1;
  cl_int err;
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
  TRY("clCreateBuffer(map)", err);
  /* Its first half filled on the device: what the map reads is no copy of
   * bytes the session holds already (a blob stored once). */
  int fill = 0x77;
  TRY("clEnqueueFillBuffer",
      clEnqueueFillBuffer(q, b, &fill, sizeof fill, 0, sizeof data / 2, 0, NULL, NULL));
  for (int i = 0; i < M / 2; i++)
    data[i] = fill;
  cl_event ev;
  cl_map_flags flags = mode == 4 ? CL_MAP_READ | CL_MAP_WRITE : CL_MAP_READ;
  int *p = clEnqueueMapBuffer(q, b, CL_FALSE, flags, 0, sizeof data, 0, NULL, &ev, &err);
  TRY("clEnqueueMapBuffer", err);
  if (mode == 3) {
    TRY("clReleaseEvent", clReleaseEvent(ev));
    cl_mem other = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    TRY("clCreateBuffer(other)", err);
    TRY("clEnqueueFillBuffer(other)",
        clEnqueueFillBuffer(q, other, &fill, sizeof fill, 0, 64, 0, NULL, &ev));
    TRY("clWaitForEvents(fill)", clWaitForEvents(1, &ev));
    clReleaseMemObject(other);
  } else if (mode == 2 || mode == 4) {
    TRY("clSetEventCallback", clSetEventCallback(ev, CL_COMPLETE, mapped, NULL));
    TRY("clFlush", clFlush(q));
    struct timespec nap = {0, 1000000};
    for (int ms = 0; !atomic_load(&map_done) && ms < 10000; ms++)
      nanosleep(&nap, NULL);
    if (atomic_load(&map_done) != 1) {
      fprintf(stderr, "callback_app: the map's callback did not say complete within 10 s\n");
      return 1;
    }
  } else {
    TRY("clWaitForEvents", clWaitForEvents(1, &ev));
  }
  int bad = 0;
  for (int i = 0; i < M; i++)
    bad += p[i] != data[i];
  for (int i = 0; mode == 4 && i < M; i++)
    p[i] = data[i] = -data[i];
  TRY("clEnqueueUnmapMemObject", clEnqueueUnmapMemObject(q, b, p, 0, NULL, NULL));
  TRY("clFinish", clFinish(q));
  if (mode == 4) {
    static int back[M];
    TRY("clEnqueueReadBuffer(map)",
        clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    for (int i = 0; i < M; i++)
      bad += back[i] != data[i];
  }
  clReleaseEvent(ev);
  clReleaseMemObject(b);
  if (bad) {
    fprintf(stderr, "callback_app: map: %d of %d ints wrong\n", bad, M);
    return 1;
  }
  printf("callback_app: result verified: %d ints mapped\n", M);
  return 0;
}

/* callback_app sharedread (above). The kernel spins on a flag in host
 * memory the device uses in place (CL_MEM_USE_HOST_PTR, page-aligned: a
 * CPU device's own memory). */
enum { BIG = 8 << 20, M = 4096 }; /* ints: 32 MiB, which the recorder takes a while to copy */

struct blocked_read {
  cl_command_queue q;
  cl_mem b;
  int *to;
  cl_int err;
};

static void *blocking_read(void *p)
{
  struct blocked_read *a = p;
  a->err = clEnqueueReadBuffer(a->q, a->b, CL_TRUE, 0, BIG * sizeof(int), a->to, 0, NULL, NULL);
  return NULL;
}

static int shared_read(cl_device_id device, cl_context ctx, cl_command_queue q)
{
  static _Alignas(4096) atomic_int flag[1024];
  static int data[M], back[M];
  static const char *src = "kernel void spin(volatile global int *f) { while (f[0] == 0) ; }";
  for (int i = 0; i < M; i++) {
    data[i] = i * 3 + 1;
    back[i] = 0x55555555;
  }
  int *big = calloc(BIG, sizeof *big);
  if (!big) {
    fprintf(stderr, "callback_app: out of memory\n");
    return 2;
  }
  cl_int err;
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  TRY("clCreateProgramWithSource", err);
  TRY("clBuildProgram", clBuildProgram(prog, 1, &device, "", NULL, NULL));
  cl_command_queue q2 = clCreateCommandQueue(ctx, device, 0, &err);
  TRY("clCreateCommandQueue", err);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data,
                            &err);
  TRY("clCreateBuffer", err);
  cl_mem bb = clCreateBuffer(ctx, CL_MEM_READ_WRITE, BIG * sizeof(int), NULL, &err);
  TRY("clCreateBuffer(big)", err);
  int seven = 7;
  TRY("clEnqueueFillBuffer", clEnqueueFillBuffer(q, bb, &seven, sizeof seven, 0,
                                                 BIG * sizeof(int), 0, NULL, NULL));
  TRY("clFinish", clFinish(q));
  cl_mem f = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, sizeof flag, flag, &err);
  TRY("clCreateBuffer(flag)", err);
  cl_kernel spin = clCreateKernel(prog, "spin", &err);
  TRY("clCreateKernel", err);
  TRY("clSetKernelArg", clSetKernelArg(spin, 0, sizeof f, &f));
  size_t one = 1;
  cl_event spun;
  TRY("clEnqueueNDRangeKernel",
      clEnqueueNDRangeKernel(q2, spin, 1, NULL, &one, NULL, 0, NULL, &spun));
  TRY("clFlush", clFlush(q2));
  /* The blocking read's last int arrives last: the read is done on the
   * device, and 15 ms later its call has returned (the recorder is copying
   * what it read). Only then the other read, which waits for the kernel:
   * enqueued before, the blocking read would wait for it (PoCL's does). */
  struct blocked_read a = {q, bb, big, CL_SUCCESS};
  pthread_t t;
  if (pthread_create(&t, NULL, blocking_read, &a)) {
    fprintf(stderr, "callback_app: no thread\n");
    return 2;
  }
  struct timespec nap = {0, 20000};
  for (int us = 0; us < 10000000 && ((volatile int *)big)[BIG - 1] != seven; us += 20)
    nanosleep(&nap, NULL);
  struct timespec wait = {0, 15000000};
  nanosleep(&wait, NULL);
  cl_event ev;
  err = clEnqueueReadBuffer(q, b, CL_FALSE, 0, sizeof back, back, 1, &spun, &ev);
  TRY("clFlush", clFlush(q));
  /* Let the kernel go only once the blocking read returned, as long as
   * that takes (the read is known complete only after it). */
  struct timespec tenth = {0, 100000000};
  nanosleep(&tenth, NULL);
  atomic_store(&flag[0], 1);
  pthread_join(t, NULL);
  TRY("clEnqueueReadBuffer(blocking)", a.err);
  TRY("clEnqueueReadBuffer", err);
  TRY("clWaitForEvents", clWaitForEvents(1, &ev));
  TRY("clFinish", clFinish(q2));
  int bad = big[BIG - 1] != seven;
  for (int i = 0; i < M; i++)
    bad += back[i] != data[i];
  free(big);
  clReleaseEvent(ev);
  clReleaseEvent(spun);
  clReleaseKernel(spin);
  clReleaseMemObject(f);
  clReleaseMemObject(bb);
  clReleaseMemObject(b);
  clReleaseCommandQueue(q2);
  clReleaseProgram(prog);
  if (bad) {
    fprintf(stderr, "callback_app: sharedread: %d of %d ints wrong\n", bad, M);
    return 1;
  }
  printf("callback_app: result verified: %d ints read\n", M);
  return 0;
}

int main(int argc, char **argv)
{
  cl_device_id device;
  cl_context ctx;
  cl_command_queue q;
  cl_int err;
  static const char *const modes[] = {"map", "mapcallback", "mapreleased", "maprw",
                                      "sharedread"};
  int mode = argc == 2 ? -1 : 0;
  for (int i = 0; argc == 2 && i < 5; i++)
    if (strcmp(argv[1], modes[i]) == 0)
      mode = i + 1;
  if (argc > 2 || mode < 0) {
    fprintf(stderr, "usage: callback_app [map|mapcallback|mapreleased|maprw|sharedread]\n");
    return 2;
  }
  if (cl_app_open(&device, &ctx, &q))
    return 2;
  if (mode == 5)
    return shared_read(device, ctx, q);
  if (mode)
    return map_later(ctx, q, mode);
  static int data[ROUNDS][N], kept[N], back[N];
  for (int i = 0; i < N; i++)
    kept[i] = i * 5 + 2;
  cl_mem keep = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof kept, kept,
                               &err);
  TRY("clCreateBuffer(keep)", err);
  for (int r = 0; r < ROUNDS; r++) {
    for (int i = 0; i < N; i++)
      data[r][i] = r * N + i;
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof data[r], NULL, &err);
    TRY("clCreateBuffer", err);
    cl_event ev;
    TRY("clEnqueueWriteBuffer",
        clEnqueueWriteBuffer(q, b, CL_FALSE, 0, sizeof data[r], data[r], 0, NULL, &ev));
    TRY("clSetEventCallback", clSetEventCallback(ev, CL_COMPLETE, written, b));
    TRY("clReleaseEvent", clReleaseEvent(ev));
  }
  TRY("clFlush", clFlush(q));
  /* Every callback, before anything is read back (no call meanwhile). */
  struct timespec nap = {0, 1000000};
  for (int i = 0; i < 10000 && atomic_load(&ran) < ROUNDS; i++)
    nanosleep(&nap, NULL);
  printf("callback_app: %d callbacks ran\n", atomic_load(&ran));
  if (atomic_load(&ran) < ROUNDS)
    return 1;
  TRY("clEnqueueReadBuffer", clEnqueueReadBuffer(q, keep, CL_TRUE, 0, sizeof back, back, 0, NULL,
                                                 NULL));
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += back[i] != kept[i];
  TRY("clReleaseMemObject", clReleaseMemObject(keep));
  TRY("clReleaseCommandQueue", clReleaseCommandQueue(q));
  TRY("clReleaseContext", clReleaseContext(ctx));
  printf("callback_app: result %s\n", bad ? "WRONG" : "verified");
  return bad != 0;
}
