/*
 * fe_unsupported.c: the OpenCL functions for features PI cannot express,
 * each answering what the specification prescribes for an implementation
 * without the feature (after the handle checks it lists first), never a
 * fake success: shared virtual memory, pipes, OpenGL and EGL sharing, and
 * cl_ext_device_fission's entry points.
 */
#include "fe_mem.h"

/* ---- Shared virtual memory -------------------------------------------------------
 * PI has no SVM calls, and every device reports CL_DEVICE_SVM_CAPABILITIES
 * 0 (fe_platform.c). The specification then has clSVMAlloc fail (NULL),
 * clSVMFree do nothing (no pointer can have come from clSVMAlloc), and the
 * SVM commands and clSetKernelArgSVMPointer answer CL_INVALID_OPERATION
 * ("the device associated with command_queue does not support SVM", "no
 * devices in the context associated with kernel support SVM"). */

/* Fails: no device supports SVM. */
void *CL_API_CALL fe_clSVMAlloc(cl_context ctx, cl_svm_mem_flags flags, size_t size,
                                cl_uint alignment)
{
  (void)ctx;
  (void)flags;
  (void)size;
  (void)alignment;
  return NULL;
}

/* Nothing to free. */
void CL_API_CALL fe_clSVMFree(cl_context ctx, void *ptr)
{
  (void)ctx;
  (void)ptr;
}

/* CL_INVALID_OPERATION for a valid queue. */
cl_int CL_API_CALL fe_clEnqueueSVMFree(cl_command_queue q, cl_uint num_ptrs, void *ptrs[],
                                       void(CL_CALLBACK *fn)(cl_command_queue, cl_uint,
                                                             void *[], void *),
                                       void *user, cl_uint n, const cl_event *wait,
                                       cl_event *event)
{
  (void)num_ptrs, (void)ptrs, (void)fn, (void)user, (void)n, (void)wait, (void)event;
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  return CL_INVALID_OPERATION;
}

/* CL_INVALID_OPERATION for a valid queue. */
cl_int CL_API_CALL fe_clEnqueueSVMMemcpy(cl_command_queue q, cl_bool blocking, void *dst,
                                         const void *src, size_t size, cl_uint n,
                                         const cl_event *wait, cl_event *event)
{
  (void)blocking, (void)dst, (void)src, (void)size, (void)n, (void)wait, (void)event;
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  return CL_INVALID_OPERATION;
}

/* CL_INVALID_OPERATION for a valid queue. */
cl_int CL_API_CALL fe_clEnqueueSVMMemFill(cl_command_queue q, void *ptr, const void *pattern,
                                          size_t pattern_size, size_t size, cl_uint n,
                                          const cl_event *wait, cl_event *event)
{
  (void)ptr, (void)pattern, (void)pattern_size, (void)size, (void)n, (void)wait, (void)event;
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  return CL_INVALID_OPERATION;
}

/* CL_INVALID_OPERATION for a valid queue. */
cl_int CL_API_CALL fe_clEnqueueSVMMap(cl_command_queue q, cl_bool blocking, cl_map_flags flags,
                                      void *ptr, size_t size, cl_uint n, const cl_event *wait,
                                      cl_event *event)
{
  (void)blocking, (void)flags, (void)ptr, (void)size, (void)n, (void)wait, (void)event;
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  return CL_INVALID_OPERATION;
}

/* CL_INVALID_OPERATION for a valid queue. */
cl_int CL_API_CALL fe_clEnqueueSVMUnmap(cl_command_queue q, void *ptr, cl_uint n,
                                        const cl_event *wait, cl_event *event)
{
  (void)ptr, (void)n, (void)wait, (void)event;
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  return CL_INVALID_OPERATION;
}

/* CL_INVALID_OPERATION for a valid queue. */
cl_int CL_API_CALL fe_clEnqueueSVMMigrateMem(cl_command_queue q, cl_uint num_ptrs,
                                             const void **ptrs, const size_t *sizes,
                                             cl_mem_migration_flags flags, cl_uint n,
                                             const cl_event *wait, cl_event *event)
{
  (void)num_ptrs, (void)ptrs, (void)sizes, (void)flags, (void)n, (void)wait, (void)event;
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  return CL_INVALID_OPERATION;
}

/* CL_INVALID_OPERATION for a valid kernel. */
cl_int CL_API_CALL fe_clSetKernelArgSVMPointer(cl_kernel kernel, cl_uint index,
                                               const void *value)
{
  (void)index, (void)value;
  FE_CHECK(kernel, FE_KERNEL, CL_INVALID_KERNEL);
  return CL_INVALID_OPERATION;
}

/* ---- Pipes ---------------------------------------------------------------------------
 * PI has no pipe objects, and devices report CL_DEVICE_PIPE_SUPPORT false:
 * clCreatePipe answers CL_INVALID_OPERATION ("no devices in context support
 * pipes"), and since no pipe can exist, clGetPipeInfo CL_INVALID_MEM_OBJECT
 * for whatever it is given. */

/* CL_INVALID_OPERATION for a valid context. */
cl_mem CL_API_CALL fe_clCreatePipe(cl_context ctx, cl_mem_flags flags, cl_uint packet_size,
                                   cl_uint max_packets, const cl_pipe_properties *props,
                                   cl_int *errcode_ret)
{
  (void)flags, (void)packet_size, (void)max_packets, (void)props;
  if (!FE_IS(ctx, FE_CONTEXT))
    FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
  FE_FAIL(errcode_ret, CL_INVALID_OPERATION);
}

/* No pipe exists. */
cl_int CL_API_CALL fe_clGetPipeInfo(cl_mem pipe, cl_pipe_info param, size_t size, void *value,
                                    size_t *size_ret)
{
  (void)pipe, (void)param, (void)size, (void)value, (void)size_ret;
  return CL_INVALID_MEM_OBJECT;
}

/* ---- OpenGL sharing -------------------------------------------------------------------
 * PI cannot share objects with OpenGL, cl_khr_gl_sharing and
 * cl_khr_gl_event are not offered, and no context is created from an
 * OpenGL context. So: creating from GL objects and GL sync objects is
 * CL_INVALID_CONTEXT ("context ... was not created from an OpenGL
 * context"); a memory object has no GL object (CL_INVALID_GL_OBJECT);
 * acquiring and releasing GL objects is CL_INVALID_CONTEXT for the queue's
 * context (an empty list does nothing, as the spec says); and no GL context
 * can be shared with (CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR). */

/* No context comes from OpenGL. */
cl_mem CL_API_CALL fe_clCreateFromGLBuffer(cl_context ctx, cl_mem_flags flags, cl_GLuint bufobj,
                                           cl_int *errcode_ret)
{
  (void)ctx, (void)flags, (void)bufobj;
  FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
}

/* No context comes from OpenGL. */
cl_mem CL_API_CALL fe_clCreateFromGLTexture(cl_context ctx, cl_mem_flags flags, cl_GLenum target,
                                            cl_GLint miplevel, cl_GLuint texture,
                                            cl_int *errcode_ret)
{
  (void)ctx, (void)flags, (void)target, (void)miplevel, (void)texture;
  FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
}

/* No context comes from OpenGL. */
cl_mem CL_API_CALL fe_clCreateFromGLTexture2D(cl_context ctx, cl_mem_flags flags,
                                              cl_GLenum target, cl_GLint miplevel,
                                              cl_GLuint texture, cl_int *errcode_ret)
{
  return fe_clCreateFromGLTexture(ctx, flags, target, miplevel, texture, errcode_ret);
}

/* No context comes from OpenGL. */
cl_mem CL_API_CALL fe_clCreateFromGLTexture3D(cl_context ctx, cl_mem_flags flags,
                                              cl_GLenum target, cl_GLint miplevel,
                                              cl_GLuint texture, cl_int *errcode_ret)
{
  return fe_clCreateFromGLTexture(ctx, flags, target, miplevel, texture, errcode_ret);
}

/* No context comes from OpenGL. */
cl_mem CL_API_CALL fe_clCreateFromGLRenderbuffer(cl_context ctx, cl_mem_flags flags,
                                                 cl_GLuint renderbuffer, cl_int *errcode_ret)
{
  (void)ctx, (void)flags, (void)renderbuffer;
  FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
}

/* No memory object has a GL object. */
cl_int CL_API_CALL fe_clGetGLObjectInfo(cl_mem mem, cl_gl_object_type *type, cl_GLuint *name)
{
  (void)type, (void)name;
  return fe_mem_live(mem) ? CL_INVALID_GL_OBJECT : CL_INVALID_MEM_OBJECT;
}

/* No memory object has a GL texture. */
cl_int CL_API_CALL fe_clGetGLTextureInfo(cl_mem mem, cl_gl_texture_info param, size_t size,
                                         void *value, size_t *size_ret)
{
  (void)param, (void)size, (void)value, (void)size_ret;
  return fe_mem_live(mem) ? CL_INVALID_GL_OBJECT : CL_INVALID_MEM_OBJECT;
}

/* The checks acquiring and releasing shared objects make before their
 * own: CL_SUCCESS (*done) for an empty list, which does nothing. */
static cl_int shared_objects(cl_command_queue q, cl_uint num, const cl_mem *mems, bool *done)
{
  *done = false;
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  if (num == 0 && !mems) {
    *done = true;
    return CL_SUCCESS;
  }
  if (!num != !mems)
    return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < num; i++)
    if (!fe_mem_live(mems[i]) || mems[i]->ctx != q->ctx)
      return CL_INVALID_MEM_OBJECT;
  return CL_SUCCESS;
}

static cl_int gl_objects(cl_command_queue q, cl_uint num, const cl_mem *mems)
{
  bool done;
  cl_int err = shared_objects(q, num, mems, &done);
  return err != CL_SUCCESS || done ? err : CL_INVALID_CONTEXT;
}

/* The queue's context does not come from OpenGL. */
cl_int CL_API_CALL fe_clEnqueueAcquireGLObjects(cl_command_queue q, cl_uint num,
                                                const cl_mem *mems, cl_uint n,
                                                const cl_event *wait, cl_event *event)
{
  (void)n, (void)wait, (void)event;
  return gl_objects(q, num, mems);
}

/* The queue's context does not come from OpenGL. */
cl_int CL_API_CALL fe_clEnqueueReleaseGLObjects(cl_command_queue q, cl_uint num,
                                                const cl_mem *mems, cl_uint n,
                                                const cl_event *wait, cl_event *event)
{
  (void)n, (void)wait, (void)event;
  return gl_objects(q, num, mems);
}

/* No GL context can be shared with. */
cl_int CL_API_CALL fe_clGetGLContextInfoKHR(const cl_context_properties *props,
                                            cl_gl_context_info param, size_t size,
                                            void *value, size_t *size_ret)
{
  (void)size, (void)value, (void)size_ret;
  if (param != CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR && param != CL_DEVICES_FOR_GL_CONTEXT_KHR)
    return CL_INVALID_VALUE;
  int bindings = 0;
  bool cgl = false, gl_context = false;
  for (size_t i = 0; props && props[i]; i += 2) {
    switch (props[i]) {
    case CL_CONTEXT_PLATFORM:
    case CL_CONTEXT_INTEROP_USER_SYNC:
      break;
    case CL_GL_CONTEXT_KHR:
      gl_context = props[i + 1] != 0;
      break;
    case CL_CGL_SHAREGROUP_KHR:
      cgl = props[i + 1] != 0;
      bindings += cgl;
      break;
    case CL_EGL_DISPLAY_KHR:
    case CL_GLX_DISPLAY_KHR:
    case CL_WGL_HDC_KHR:
      bindings += props[i + 1] != 0;
      break;
    default:
      return CL_INVALID_VALUE;
    }
  }
  if (bindings > 1 || (cgl && gl_context))
    return CL_INVALID_OPERATION;
  return CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR;
}

/* No context comes from OpenGL. */
cl_event CL_API_CALL fe_clCreateEventFromGLsyncKHR(cl_context ctx, cl_GLsync sync,
                                                   cl_int *errcode_ret)
{
  (void)ctx, (void)sync;
  FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
}

/* ---- EGL sharing -----------------------------------------------------------------------
 * Likewise for EGL (cl_khr_egl_image and cl_khr_egl_event are not
 * offered): an EGLImage cannot be made an OpenCL image for an
 * implementation reason (CL_IMAGE_FORMAT_NOT_SUPPORTED, after the argument
 * checks the extension lists), no memory object comes from an EGL resource
 * (CL_INVALID_EGL_OBJECT_KHR), and no context from an EGL display
 * (CL_INVALID_CONTEXT for EGL sync objects). */

/* No EGLImage can be imported. */
cl_mem CL_API_CALL fe_clCreateFromEGLImageKHR(cl_context ctx, CLeglDisplayKHR display,
                                              CLeglImageKHR image, cl_mem_flags flags,
                                              const cl_egl_image_properties_khr *props,
                                              cl_int *errcode_ret)
{
  (void)display, (void)image;
  if (!FE_IS(ctx, FE_CONTEXT))
    FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
  if ((flags != CL_MEM_READ_ONLY && flags != CL_MEM_WRITE_ONLY && flags != CL_MEM_READ_WRITE) ||
      (props && props[0]))
    FE_FAIL(errcode_ret, CL_INVALID_VALUE); /* the extension defines no properties */
  if (!fe_ctx_any(ctx, FE_CAP_IMAGES))
    FE_FAIL(errcode_ret, CL_INVALID_OPERATION);
  FE_FAIL(errcode_ret, CL_IMAGE_FORMAT_NOT_SUPPORTED);
}

static cl_int egl_objects(cl_command_queue q, cl_uint num, const cl_mem *mems)
{
  bool done;
  cl_int err = shared_objects(q, num, mems, &done);
  return err != CL_SUCCESS || done ? err : CL_INVALID_EGL_OBJECT_KHR;
}

/* No memory object comes from EGL. */
cl_int CL_API_CALL fe_clEnqueueAcquireEGLObjectsKHR(cl_command_queue q, cl_uint num,
                                                    const cl_mem *mems, cl_uint n,
                                                    const cl_event *wait, cl_event *event)
{
  (void)n, (void)wait, (void)event;
  return egl_objects(q, num, mems);
}

/* No memory object comes from EGL. */
cl_int CL_API_CALL fe_clEnqueueReleaseEGLObjectsKHR(cl_command_queue q, cl_uint num,
                                                    const cl_mem *mems, cl_uint n,
                                                    const cl_event *wait, cl_event *event)
{
  (void)n, (void)wait, (void)event;
  return egl_objects(q, num, mems);
}

/* No context comes from EGL. */
cl_event CL_API_CALL fe_clCreateEventFromEGLSyncKHR(cl_context ctx, CLeglSyncKHR sync,
                                                    CLeglDisplayKHR display,
                                                    cl_int *errcode_ret)
{
  (void)ctx, (void)sync, (void)display;
  FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
}

/* ---- cl_ext_device_fission ---------------------------------------------------------------
 * The extension is not offered (fe_platform.c hides it): its partition
 * names, affinity domains and queries (CL_DEVICE_PARTITION_TYPES_EXT ...)
 * are not core OpenCL's, so it cannot be served exactly over
 * clCreateSubDevices. Its functions check the device and answer
 * CL_INVALID_OPERATION; core clCreateSubDevices is the way. */

/* The extension is not offered. */
cl_int CL_API_CALL fe_clCreateSubDevicesEXT(cl_device_id in,
                                            const cl_device_partition_property_ext *props,
                                            cl_uint num, cl_device_id *out, cl_uint *num_ret)
{
  (void)props, (void)num, (void)out, (void)num_ret;
  FE_CHECK(in, FE_DEVICE, CL_INVALID_DEVICE);
  return CL_INVALID_OPERATION;
}

/* The extension is not offered. */
cl_int CL_API_CALL fe_clRetainDeviceEXT(cl_device_id device)
{
  FE_CHECK(device, FE_DEVICE, CL_INVALID_DEVICE);
  return CL_INVALID_OPERATION;
}

/* The extension is not offered. */
cl_int CL_API_CALL fe_clReleaseDeviceEXT(cl_device_id device)
{
  FE_CHECK(device, FE_DEVICE, CL_INVALID_DEVICE);
  return CL_INVALID_OPERATION;
}
