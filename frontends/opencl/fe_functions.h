/*
 * fe_functions.h: the lists of OpenCL functions the front end implements,
 * as X-macros: the dispatch table (fe_icd.c), the prototypes (fe.h) and the
 * extension lookup are all made from them, so none can miss a function.
 */
#ifndef PITRACE_FE_FUNCTIONS_H
#define PITRACE_FE_FUNCTIONS_H

/* Every core OpenCL function of the ICD dispatch table (cl_icd.h), in its
 * order, and the extension functions the front end offers through
 * clGetExtensionFunctionAddress[ForPlatform]. */
#define FE_CORE_FUNCTIONS(X)                                                   \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs)                   \
  X(clGetDeviceInfo) X(clCreateContext) X(clCreateContextFromType)             \
  X(clRetainContext) X(clReleaseContext) X(clGetContextInfo)                   \
  X(clCreateCommandQueue) X(clRetainCommandQueue) X(clReleaseCommandQueue)     \
  X(clGetCommandQueueInfo) X(clSetCommandQueueProperty) X(clCreateBuffer)      \
  X(clCreateImage2D) X(clCreateImage3D) X(clRetainMemObject)                   \
  X(clReleaseMemObject) X(clGetSupportedImageFormats) X(clGetMemObjectInfo)    \
  X(clGetImageInfo) X(clCreateSampler) X(clRetainSampler) X(clReleaseSampler)  \
  X(clGetSamplerInfo) X(clCreateProgramWithSource)                             \
  X(clCreateProgramWithBinary) X(clRetainProgram) X(clReleaseProgram)          \
  X(clBuildProgram) X(clUnloadCompiler) X(clGetProgramInfo)                    \
  X(clGetProgramBuildInfo) X(clCreateKernel) X(clCreateKernelsInProgram)       \
  X(clRetainKernel) X(clReleaseKernel) X(clSetKernelArg) X(clGetKernelInfo)    \
  X(clGetKernelWorkGroupInfo) X(clWaitForEvents) X(clGetEventInfo)             \
  X(clRetainEvent) X(clReleaseEvent) X(clGetEventProfilingInfo) X(clFlush)     \
  X(clFinish) X(clEnqueueReadBuffer) X(clEnqueueWriteBuffer)                   \
  X(clEnqueueCopyBuffer) X(clEnqueueReadImage) X(clEnqueueWriteImage)          \
  X(clEnqueueCopyImage) X(clEnqueueCopyImageToBuffer)                          \
  X(clEnqueueCopyBufferToImage) X(clEnqueueMapBuffer) X(clEnqueueMapImage)     \
  X(clEnqueueUnmapMemObject) X(clEnqueueNDRangeKernel) X(clEnqueueTask)        \
  X(clEnqueueNativeKernel) X(clEnqueueMarker) X(clEnqueueWaitForEvents)        \
  X(clEnqueueBarrier) X(clGetExtensionFunctionAddress)                         \
  X(clCreateFromGLBuffer) X(clCreateFromGLTexture2D)                           \
  X(clCreateFromGLTexture3D) X(clCreateFromGLRenderbuffer)                     \
  X(clGetGLObjectInfo) X(clGetGLTextureInfo) X(clEnqueueAcquireGLObjects)      \
  X(clEnqueueReleaseGLObjects) X(clGetGLContextInfoKHR) X(clSetEventCallback)  \
  X(clCreateSubBuffer) X(clSetMemObjectDestructorCallback)                     \
  X(clCreateUserEvent) X(clSetUserEventStatus) X(clEnqueueReadBufferRect)      \
  X(clEnqueueWriteBufferRect) X(clEnqueueCopyBufferRect)                       \
  X(clCreateSubDevicesEXT) X(clRetainDeviceEXT) X(clReleaseDeviceEXT)          \
  X(clCreateEventFromGLsyncKHR) X(clCreateSubDevices) X(clRetainDevice)        \
  X(clReleaseDevice) X(clCreateImage) X(clCreateProgramWithBuiltInKernels)     \
  X(clCompileProgram) X(clLinkProgram) X(clUnloadPlatformCompiler)             \
  X(clGetKernelArgInfo) X(clEnqueueFillBuffer) X(clEnqueueFillImage)           \
  X(clEnqueueMigrateMemObjects) X(clEnqueueMarkerWithWaitList)                 \
  X(clEnqueueBarrierWithWaitList) X(clGetExtensionFunctionAddressForPlatform)  \
  X(clCreateFromGLTexture) X(clCreateFromEGLImageKHR)                          \
  X(clEnqueueAcquireEGLObjectsKHR) X(clEnqueueReleaseEGLObjectsKHR)            \
  X(clCreateEventFromEGLSyncKHR) X(clCreateCommandQueueWithProperties)         \
  X(clCreatePipe) X(clGetPipeInfo) X(clSVMAlloc) X(clSVMFree)                  \
  X(clEnqueueSVMFree) X(clEnqueueSVMMemcpy) X(clEnqueueSVMMemFill)             \
  X(clEnqueueSVMMap) X(clEnqueueSVMUnmap) X(clCreateSamplerWithProperties)     \
  X(clSetKernelArgSVMPointer) X(clSetKernelExecInfo)                           \
  X(clGetKernelSubGroupInfoKHR) X(clCloneKernel) X(clCreateProgramWithIL)      \
  X(clEnqueueSVMMigrateMem) X(clGetDeviceAndHostTimer) X(clGetHostTimer)       \
  X(clGetKernelSubGroupInfo) X(clSetDefaultDeviceCommandQueue)                 \
  X(clSetProgramReleaseCallback) X(clSetProgramSpecializationConstant)         \
  X(clCreateBufferWithProperties) X(clCreateImageWithProperties)               \
  X(clSetContextDestructorCallback)

/* Extension functions, found by name (clGetExtensionFunctionAddress*). */
#define FE_EXT_FUNCTIONS(X)                                                    \
  X(clIcdGetPlatformIDsKHR) X(clCreateProgramWithILKHR)                        \
  X(clHostMemAllocINTEL) X(clDeviceMemAllocINTEL) X(clSharedMemAllocINTEL)     \
  X(clMemFreeINTEL) X(clMemBlockingFreeINTEL) X(clGetMemAllocInfoINTEL)        \
  X(clSetKernelArgMemPointerINTEL) X(clEnqueueMemFillINTEL)                    \
  X(clEnqueueMemcpyINTEL) X(clEnqueueMemAdviseINTEL)                           \
  X(clEnqueueMigrateMemINTEL) X(clEnqueueMemsetINTEL)

#endif /* PITRACE_FE_FUNCTIONS_H */
