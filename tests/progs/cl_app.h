/*
 * cl_app.h: what the test programs that are plain OpenCL applications
 * (image_app, callback_app, rect_app) share. Define CL_APP_NAME (the
 * program's name, for messages) before including it.
 *
 * TRY(what, call): returns 2 from the calling function, with "NAME: WHAT
 * failed: CODE" on stderr, unless the call gives CL_SUCCESS.
 * cl_app_open: the first platform's first device, a context on it and an
 * in-order queue; 2 after such a message, 0 when made.
 */
#ifndef CL_APP_H
#define CL_APP_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stdio.h>

#define TRY(what, call)                                                        \
  do {                                                                         \
    cl_int e_ = (call);                                                        \
    if (e_ != CL_SUCCESS) {                                                    \
      fprintf(stderr, CL_APP_NAME ": %s failed: %d\n", what, e_);              \
      return 2;                                                                \
    }                                                                          \
  } while (0)

static inline int cl_app_open(cl_device_id *device, cl_context *ctx, cl_command_queue *q)
{
  cl_platform_id platform;
  cl_int err;
  TRY("clGetPlatformIDs", clGetPlatformIDs(1, &platform, NULL));
  TRY("clGetDeviceIDs", clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, device, NULL));
  *ctx = clCreateContext(NULL, 1, device, NULL, NULL, &err);
  TRY("clCreateContext", err);
  *q = clCreateCommandQueue(*ctx, *device, 0, &err);
  TRY("clCreateCommandQueue", err);
  return 0;
}

#endif
