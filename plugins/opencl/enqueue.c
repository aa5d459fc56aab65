/*
 * enqueue.c: the commands of the OpenCL plugin: kernel launches
 * (cooperative ones included), event waits and barriers, and the buffer and
 * image reads, writes, copies, fills, maps and unmaps.
 */
#include "ocl_internal.h"

/* ---- Enqueue --------------------------------------------------------------
 */

/* A cooperative launch is an ordinary one: OpenCL has no cooperative
 * launch, and piextKernelSuggestMaxCooperativeGroupCount suggests one
 * work-group. */
pi_result backend_launch(const char *fn, bool cooperative, pi_queue queue,
                         pi_kernel kernel, pi_uint32 work_dim,
                         const size_t *offset, const size_t *global,
                         const size_t *local, pi_uint32 nwait,
                         const pi_event *wait, pi_event *event) {
  (void)cooperative;
  /* The call goes through the queue's implementation, and PoCL 3.1
   * dereferences a NULL kernel instead of returning CL_INVALID_KERNEL. */
  NEED_IN(fn, kernel, PI_ERROR_INVALID_KERNEL);
  return check_cl(fn, "clEnqueueNDRangeKernel",
                  ICD_CALL(clEnqueueNDRangeKernel, (cl_command_queue)queue,
                           (cl_kernel)kernel, work_dim, offset, global, local,
                           WAIT_ARGS(nwait, wait, event)));
}

pi_result ocl_piEnqueueEventsWait(pi_queue command_queue,
                                  pi_uint32 num_events_in_wait_list,
                                  const pi_event *event_wait_list,
                                  pi_event *event) {
  return CL_CALL(clEnqueueMarkerWithWaitList, (cl_command_queue)command_queue,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

pi_result ocl_piEnqueueEventsWaitWithBarrier(
    pi_queue command_queue, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return CL_CALL(clEnqueueBarrierWithWaitList, (cl_command_queue)command_queue,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

pi_result
ocl_piEnqueueMemBufferRead(pi_queue queue, pi_mem buffer, pi_bool blocking_read,
                           size_t offset, size_t size, void *ptr,
                           pi_uint32 num_events_in_wait_list,
                           const pi_event *event_wait_list, pi_event *event) {
  return CL_CALL(clEnqueueReadBuffer, (cl_command_queue)queue, (cl_mem)buffer,
                 blocking_read, offset, size, ptr,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

pi_result
ocl_piEnqueueMemBufferWrite(pi_queue command_queue, pi_mem buffer,
                            pi_bool blocking_write, size_t offset, size_t size,
                            const void *ptr, pi_uint32 num_events_in_wait_list,
                            const pi_event *event_wait_list, pi_event *event) {
  return CL_CALL(clEnqueueWriteBuffer, (cl_command_queue)command_queue,
                 (cl_mem)buffer, blocking_write, offset, size, ptr,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

/* clEnqueueReadBufferRect, or clEnqueueWriteBufferRect. */
pi_result backend_buffer_rect(const char *fn, pi_queue queue,
                              const struct buffer_rect *r, pi_uint32 nwait,
                              const pi_event *wait, pi_event *event) {
  const size_t b[3] = XYZ(r->buffer_offset, x_bytes, y_scalar, z_scalar);
  const size_t h[3] = XYZ(r->host_offset, x_bytes, y_scalar, z_scalar);
  const size_t n[3] = XYZ(r->region, width_bytes, height_scalar, depth_scalar);
  const size_t *p = r->pitches;
  cl_command_queue q = (cl_command_queue)queue;
  if (!r->read)
    return check_cl(fn, "clEnqueueWriteBufferRect",
                    ICD_CALL(clEnqueueWriteBufferRect, q, (cl_mem)r->buffer,
                             r->blocking, b, h, n, p[0], p[1], p[2], p[3],
                             r->ptr, WAIT_ARGS(nwait, wait, event)));
  return check_cl(fn, "clEnqueueReadBufferRect",
                  ICD_CALL(clEnqueueReadBufferRect, q, (cl_mem)r->buffer,
                           r->blocking, b, h, n, p[0], p[1], p[2], p[3],
                           r->ptr, WAIT_ARGS(nwait, wait, event)));
}

pi_result
ocl_piEnqueueMemBufferCopy(pi_queue command_queue, pi_mem src_buffer,
                           pi_mem dst_buffer, size_t src_offset,
                           size_t dst_offset, size_t size,
                           pi_uint32 num_events_in_wait_list,
                           const pi_event *event_wait_list, pi_event *event) {
  return CL_CALL(clEnqueueCopyBuffer, (cl_command_queue)command_queue,
                 (cl_mem)src_buffer, (cl_mem)dst_buffer, src_offset, dst_offset,
                 size,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
}

pi_result backend_buffer_copy_rect(const char *fn, pi_queue queue,
                                   pi_mem src, pi_mem dst,
                                   const struct copy_coords *c,
                                   const size_t pitches[4], pi_uint32 nwait,
                                   const pi_event *wait, pi_event *event) {
  return check_cl(fn, "clEnqueueCopyBufferRect",
                  ICD_CALL(clEnqueueCopyBufferRect, (cl_command_queue)queue,
                           (cl_mem)src, (cl_mem)dst, c->src, c->dst,
                           c->region, pitches[0], pitches[1], pitches[2],
                           pitches[3], WAIT_ARGS(nwait, wait, event)));
}

pi_result backend_buffer_fill(const struct command *c, pi_mem buffer,
                              const void *pattern, size_t pattern_size,
                              size_t offset, size_t size) {
  return CL_CALL_IN(c->fn, clEnqueueFillBuffer, (cl_command_queue)c->queue,
                 (cl_mem)buffer, pattern, pattern_size, offset, size,
                 WAIT_ARGS(c->nwait, c->wait, c->event));
}

/* clEnqueueReadImage, or clEnqueueWriteImage. */
pi_result backend_image_rw(const struct command *c, const struct image_rw *rw) {
  if (!rw->origin || !rw->region)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the origin and the region must not be NULL", c->fn);
  const size_t o[3] = XYZ(rw->origin, x, y, z);
  const size_t r[3] = XYZ(rw->region, width, height, depth);
  cl_command_queue q = (cl_command_queue)c->queue;
  if (!rw->read)
    return check_cl(c->fn, "clEnqueueWriteImage",
                    ICD_CALL(clEnqueueWriteImage, q, (cl_mem)rw->image,
                             rw->blocking, o, r, rw->row_pitch,
                             rw->slice_pitch, rw->ptr,
                             WAIT_ARGS(c->nwait, c->wait, c->event)));
  return check_cl(c->fn, "clEnqueueReadImage",
                  ICD_CALL(clEnqueueReadImage, q, (cl_mem)rw->image,
                           rw->blocking, o, r, rw->row_pitch, rw->slice_pitch,
                           rw->ptr, WAIT_ARGS(c->nwait, c->wait, c->event)));
}

pi_result backend_image_copy(const struct command *c, pi_mem src_image,
                             pi_mem dst_image, const struct copy_coords *cc) {
  return CL_CALL_IN(c->fn, clEnqueueCopyImage, (cl_command_queue)c->queue,
                    (cl_mem)src_image, (cl_mem)dst_image, cc->src, cc->dst,
                    cc->region, WAIT_ARGS(c->nwait, c->wait, c->event));
}

pi_result backend_image_fill(const struct command *c, pi_mem image,
                             const void *fill_color, const size_t *origin,
                             const size_t *region) {
  return CL_CALL_IN(c->fn, clEnqueueFillImage, (cl_command_queue)c->queue,
                 (cl_mem)image, fill_color, origin, region,
                 WAIT_ARGS(c->nwait, c->wait, c->event));
}

pi_result ocl_piEnqueueMemBufferMap(pi_queue command_queue,
                                    pi_mem buffer, pi_bool blocking_map,
                                    pi_map_flags map_flags,
                                    size_t offset, size_t size,
                                    pi_uint32 num_events_in_wait_list,
                                    const pi_event *event_wait_list,
                                    pi_event *event, void **ret_map) {
  static const struct flag_pair map[] = {
      {PI_MAP_READ, CL_MAP_READ},
      {PI_MAP_WRITE, CL_MAP_WRITE},
      {PI_MAP_WRITE_INVALIDATE_REGION, CL_MAP_WRITE_INVALIDATE_REGION}};
  const pi_map_flags known =
      PI_MAP_READ | PI_MAP_WRITE | PI_MAP_WRITE_INVALIDATE_REGION;
  cl_int err;
  REQUIRE(ret_map != NULL);
  *ret_map = NULL;
  if (map_flags & ~known)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown map flags 0x%llx", FN,
                (unsigned long long)(map_flags & ~known));
  cl_map_flags cl_flags = flags_map(map_flags, map, sizeof map / sizeof *map);
  *ret_map =
      ICD_CREATE(clEnqueueMapBuffer, &err, (cl_command_queue)command_queue,
                 (cl_mem)buffer, blocking_map, cl_flags, offset, size,
                 WAIT_ARGS(num_events_in_wait_list, event_wait_list, event));
  return CL_CHECK(clEnqueueMapBuffer, err);
}

pi_result backend_unmap(const struct command *c, pi_mem memobj,
                        void *mapped_ptr) {
  return CL_CALL_IN(c->fn, clEnqueueUnmapMemObject, (cl_command_queue)c->queue,
                 (cl_mem)memobj, mapped_ptr,
                 WAIT_ARGS(c->nwait, c->wait, c->event));
}
