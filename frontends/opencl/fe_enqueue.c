/*
 * fe_enqueue.c: the OpenCL enqueues of kernels, buffers, markers and
 * barriers, each one PI enqueue (through fe_enqueue, which holds a command
 * back while a user event it waits for is not complete).
 *
 * The front end checks what OpenCL specifies and PI does not (handles of the
 * right kind and context, buffers rather than images, ranges inside the
 * buffer, copy overlaps, the buffer's host access flags, work sizes) and
 * leaves the device-specific checks (work-group limits, kernel arguments,
 * sub-buffer alignment) to PI, which answers with OpenCL's codes.
 * Migrating buffers has no PI call: clEnqueueMigrateMemObjects is a marker
 * that waits for its wait list, which is a valid implementation, since a
 * migration only says where memory will be used next and PI moves memory
 * where it is used anyway. Native kernels are not offered (PI cannot run
 * host functions as commands).
 *
 * A command held back for a user event keeps every memory object it uses
 * (fe_mem_hold: a wrapper and a PI reference) until it is issued, as
 * OpenCL keeps a command's objects: the application may release them right
 * after the enqueue. A held launch runs a snapshot of the kernel, which
 * keeps its arguments' objects the same way (fe_kernel_snapshot). A held
 * non-blocking map is staged through the host (see Mapping).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fe_mem.h"

/* ---- Checks ----------------------------------------------------------------- */

/* CL_INVALID_MEM_OBJECT for anything but a live buffer (images and pipes
 * go elsewhere; one the application released is not valid to it, even
 * while a sub-buffer keeps it), CL_INVALID_CONTEXT for another context's. */
static inline cl_int check_buffer(cl_command_queue q, cl_mem m)
{
  if (!fe_mem_live(m) || m->type != CL_MEM_OBJECT_BUFFER)
    return CL_INVALID_MEM_OBJECT;
  return m->ctx == q->ctx ? CL_SUCCESS : CL_INVALID_CONTEXT;
}

static inline bool in_range(cl_mem m, size_t offset, size_t size)
{
  return offset <= m->size && size <= m->size - offset;
}

/* The buffer a sub-buffer belongs to, and where it starts in it. */
static cl_mem root_of(cl_mem m, size_t *origin)
{
  if (m->parent && FE_IS(m->parent, FE_MEM) && m->parent->type == CL_MEM_OBJECT_BUFFER) {
    *origin = m->offset;
    return m->parent;
  }
  *origin = 0;
  return m;
}

/* a * b + c, false on overflow. */
static bool mad(size_t a, size_t b, size_t c, size_t *out)
{
  return !__builtin_mul_overflow(a, b, out) && !__builtin_add_overflow(*out, c, out);
}

/* One side of a rectangle: default pitches filled in, then checked the
 * OpenCL way; with `bound` (a buffer's size), the bytes it reaches must lie
 * inside. */
static cl_int rect_side(const size_t origin[3], const size_t region[3], size_t *row,
                        size_t *slice, size_t bound, bool bounded)
{
  if (*row == 0)
    *row = region[0];
  else if (*row < region[0])
    return CL_INVALID_VALUE;
  size_t min_slice;
  if (__builtin_mul_overflow(region[1], *row, &min_slice))
    return CL_INVALID_VALUE;
  if (*slice == 0)
    *slice = min_slice;
  else if (*slice < min_slice || *slice % *row)
    return CL_INVALID_VALUE;
  if (!bounded)
    return CL_SUCCESS;
  /* The last byte: (z + d - 1) * slice + (y + h - 1) * row + x + w. */
  size_t z, y, x, end;
  if (__builtin_add_overflow(origin[2], region[2] - 1, &z) ||
      __builtin_add_overflow(origin[1], region[1] - 1, &y) ||
      __builtin_add_overflow(origin[0], region[0], &x) || !mad(z, *slice, 0, &z) ||
      !mad(y, *row, x, &end) || __builtin_add_overflow(end, z, &end) || end > bound)
    return CL_INVALID_VALUE;
  return CL_SUCCESS;
}

static bool region_ok(const size_t region[3])
{
  return region[0] && region[1] && region[2];
}

/* The OpenCL specification's check_copy_overlap (appendix D): whether two
 * rectangles with the same pitches in one buffer share a byte. */
static bool rect_overlap(const size_t src[3], const size_t dst[3], const size_t region[3],
                         size_t row, size_t slice)
{
  const size_t slice_size = (region[1] - 1) * row + region[0];
  const size_t block_size = (region[2] - 1) * slice + slice_size;
  const size_t src_start = src[2] * slice + src[1] * row + src[0];
  const size_t src_end = src_start + block_size;
  const size_t dst_start = dst[2] * slice + dst[1] * row + dst[0];
  const size_t dst_end = dst_start + block_size;
  if (dst_end <= src_start || src_end <= dst_start)
    return false;
  const size_t src_dx = src[0] % row, dst_dx = dst[0] % row;
  if ((dst_dx >= src_dx + region[0] && dst_dx + region[0] <= src_dx + row) ||
      (src_dx >= dst_dx + region[0] && src_dx + region[0] <= dst_dx + row))
    return false;
  const size_t src_dy = (src[1] * row + src[0]) % slice;
  const size_t dst_dy = (dst[1] * row + dst[0]) % slice;
  if ((dst_dy >= src_dy + slice_size && dst_dy + slice_size <= src_dy + slice) ||
      (src_dy >= dst_dy + slice_size && src_dy + slice_size <= dst_dy + slice))
    return false;
  return true;
}

/* ---- Held commands ----------------------------------------------------------- */

/* The start of every command that uses memory objects: `mem`, and `dst`
 * for one that uses two (else NULL). hold_one / hold_two take what a held
 * command keeps, drop_one / drop_two give it back. */
struct mem_args {
  fe_cmd c;
  cl_mem mem, dst;
};

static cl_int hold_one(fe_cmd *c)
{
  fe_mem_hold(((struct mem_args *)c)->mem);
  return CL_SUCCESS;
}

static void drop_one(fe_cmd *c) { fe_mem_drop(((struct mem_args *)c)->mem); }

static cl_int hold_two(fe_cmd *c)
{
  fe_mem_hold(((struct mem_args *)c)->mem);
  fe_mem_hold(((struct mem_args *)c)->dst);
  return CL_SUCCESS;
}

static void drop_two(fe_cmd *c)
{
  fe_mem_drop(((struct mem_args *)c)->mem);
  fe_mem_drop(((struct mem_args *)c)->dst);
}

/* ---- Kernels ---------------------------------------------------------------- */

struct launch_cmd {
  fe_cmd c;
  cl_kernel kernel;
  pi_kernel pk;
  pi_uint32 dim;
  bool has_offset, has_local;
  size_t offset[3], global[3], local[3];
};

static pi_result launch_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                              const pi_event *wait, pi_event *ev)
{
  (void)blocking;
  struct launch_cmd *a = (struct launch_cmd *)c;
  return pirt_piEnqueueKernelLaunch(q->o.pl, q->pi, a->pk, a->dim,
                                    a->has_offset ? a->offset : NULL, a->global,
                                    a->has_local ? a->local : NULL, n, wait, ev);
}

/* A launch held for a user event runs with the arguments set when it was
 * enqueued, and their memory objects and samplers stay alive until then: it
 * launches a snapshot of the kernel. */
static cl_int launch_hold(fe_cmd *c)
{
  struct launch_cmd *a = (struct launch_cmd *)c;
  /* PI would refuse the launch only once it is issued, long after the
   * enqueue returned: OpenCL refuses it here. */
  if (!fe_kernel_args_set(a->kernel))
    return CL_INVALID_KERNEL_ARGS;
  cl_int err = CL_SUCCESS;
  cl_kernel clone = fe_kernel_snapshot(a->kernel, &err);
  if (!FE_IS(clone, FE_KERNEL))
    return err != CL_SUCCESS ? err : CL_OUT_OF_HOST_MEMORY;
  a->kernel = clone;
  a->pk = clone->pi;
  return CL_SUCCESS;
}

static void launch_drop(fe_cmd *c) { fe_clReleaseKernel(((struct launch_cmd *)c)->kernel); }

/* A marker: what OpenCL 2.1 makes of a launch of no work-items, and the
 * commands that only order (markers, migrations). */
static pi_result marker_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                              const pi_event *wait, pi_event *ev)
{
  (void)c;
  (void)blocking;
  return pirt_piEnqueueEventsWait(q->o.pl, q->pi, n, wait, ev);
}

static pi_result barrier_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                               const pi_event *wait, pi_event *ev)
{
  (void)c;
  (void)blocking;
  return pirt_piEnqueueEventsWaitWithBarrier(q->o.pl, q->pi, n, wait, ev);
}

/* Whether the queue's device implements OpenCL 2.1 or later (asked only for
 * the launches whose meaning changed there). */
static bool device_2_1(cl_command_queue q)
{
  size_t n = 0;
  char *v = NULL;
  if (pirt_piDeviceGetInfo(q->o.pl, q->dev->pi, PI_DEVICE_INFO_VERSION, 0, NULL, &n) !=
          PI_SUCCESS ||
      !(v = calloc(1, n + 1)) ||
      pirt_piDeviceGetInfo(q->o.pl, q->dev->pi, PI_DEVICE_INFO_VERSION, n, v, NULL) !=
          PI_SUCCESS) {
    free(v);
    return false;
  }
  unsigned major = 0, minor = 0;
  const char *s = v;
  while (*s && (*s < '0' || *s > '9'))
    s++;
  for (; *s >= '0' && *s <= '9'; s++)
    major = major * 10 + (unsigned)(*s - '0');
  if (*s == '.')
    for (s++; *s >= '0' && *s <= '9'; s++)
      minor = minor * 10 + (unsigned)(*s - '0');
  free(v);
  return major > 2 || (major == 2 && minor >= 1);
}

static inline __attribute__((always_inline)) cl_int
launch(cl_command_queue q, cl_kernel kernel, cl_uint dim, const size_t *offset,
       const size_t *global, const size_t *local, cl_uint n, const cl_event *wait,
       cl_event *event, cl_command_type type)
{
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  FE_CHECK(kernel, FE_KERNEL, CL_INVALID_KERNEL);
  if (kernel->ctx != q->ctx)
    return CL_INVALID_CONTEXT;
  if (dim < 1 || dim > 3)
    return CL_INVALID_WORK_DIMENSION;
  struct launch_cmd a = {{launch_issue, launch_hold, launch_drop}, kernel, kernel->pi, dim,
                         offset != NULL, local != NULL, {0}, {0}, {0}};
  bool empty = !global;
  for (cl_uint i = 0; i < dim; i++) {
    if (local && local[i] == 0)
      return CL_INVALID_WORK_GROUP_SIZE;
    if (global) {
      empty |= global[i] == 0;
      a.global[i] = global[i];
    }
    if (offset) {
      if (global && global[i] > SIZE_MAX - offset[i])
        return CL_INVALID_GLOBAL_OFFSET;
      a.offset[i] = offset[i];
    }
    if (local)
      a.local[i] = local[i];
  }
  if (empty) {
    /* OpenCL 2.1 on: no work-items, nothing to run once the wait list is;
     * the launch is still checked (PI, which is not asked, would refuse a
     * kernel whose arguments are not all set). */
    if (!device_2_1(q))
      return CL_INVALID_GLOBAL_WORK_SIZE;
    if (!fe_kernel_args_set(kernel))
      return CL_INVALID_KERNEL_ARGS;
    fe_cmd m = {marker_issue, NULL, NULL};
    return fe_enqueue(q, type, n, wait, false, &m, sizeof m, event);
  }
  return fe_enqueue(q, type, n, wait, false, &a.c, sizeof a, event);
}

/* piEnqueueKernelLaunch. */
cl_int CL_API_CALL fe_clEnqueueNDRangeKernel(cl_command_queue command_queue, cl_kernel kernel,
                                             cl_uint work_dim, const size_t *global_work_offset,
                                             const size_t *global_work_size,
                                             const size_t *local_work_size,
                                             cl_uint num_events_in_wait_list,
                                             const cl_event *event_wait_list, cl_event *event)
{
  return launch(command_queue, kernel, work_dim, global_work_offset, global_work_size,
                local_work_size, num_events_in_wait_list, event_wait_list, event,
                CL_COMMAND_NDRANGE_KERNEL);
}

/* A launch of one work-item in one work-group. */
cl_int CL_API_CALL fe_clEnqueueTask(cl_command_queue command_queue, cl_kernel kernel,
                                    cl_uint num_events_in_wait_list,
                                    const cl_event *event_wait_list, cl_event *event)
{
  static const size_t one[1] = {1};
  return launch(command_queue, kernel, 1, NULL, one, one, num_events_in_wait_list,
                event_wait_list, event, CL_COMMAND_TASK);
}

/* Refused: PI has no native kernels. */
cl_int CL_API_CALL fe_clEnqueueNativeKernel(cl_command_queue command_queue,
                                            void(CL_CALLBACK *user_func)(void *), void *args,
                                            size_t cb_args, cl_uint num_mem_objects,
                                            const cl_mem *mem_list,
                                            const void **args_mem_loc,
                                            cl_uint num_events_in_wait_list,
                                            const cl_event *event_wait_list, cl_event *event)
{
  (void)user_func;
  (void)args;
  (void)cb_args;
  (void)num_mem_objects;
  (void)mem_list;
  (void)args_mem_loc;
  (void)num_events_in_wait_list;
  (void)event_wait_list;
  (void)event;
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  return CL_INVALID_OPERATION; /* the device cannot run native kernels through PI */
}

/* ---- Reading and writing ---------------------------------------------------- */

struct rw_cmd {
  struct mem_args m;
  size_t offset, size;
  void *ptr;
};

static pi_result read_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                            const pi_event *wait, pi_event *ev)
{
  struct rw_cmd *a = (struct rw_cmd *)c;
  return pirt_piEnqueueMemBufferRead(q->o.pl, q->pi, a->m.mem->pi, blocking, a->offset, a->size,
                                     a->ptr, n, wait, ev);
}

static pi_result write_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                             const pi_event *wait, pi_event *ev)
{
  struct rw_cmd *a = (struct rw_cmd *)c;
  return pirt_piEnqueueMemBufferWrite(q->o.pl, q->pi, a->m.mem->pi, blocking, a->offset, a->size,
                                      a->ptr, n, wait, ev);
}

static cl_int read_write(cl_command_queue q, cl_mem buffer, cl_bool blocking, size_t offset,
                         size_t size, void *ptr, cl_uint n, const cl_event *wait,
                         cl_event *event, bool write)
{
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  cl_int err = check_buffer(q, buffer);
  if (err != CL_SUCCESS)
    return err;
  if (!ptr || !in_range(buffer, offset, size))
    return CL_INVALID_VALUE;
  cl_mem_flags denied = CL_MEM_HOST_NO_ACCESS |
                        (write ? CL_MEM_HOST_READ_ONLY : CL_MEM_HOST_WRITE_ONLY);
  if (buffer->flags & denied)
    return CL_INVALID_OPERATION;
  struct rw_cmd a = {{{write ? write_issue : read_issue, hold_one, drop_one}, buffer, NULL},
                     offset,
                     size,
                     ptr};
  return fe_enqueue(q, write ? CL_COMMAND_WRITE_BUFFER : CL_COMMAND_READ_BUFFER, n, wait,
                    blocking != CL_FALSE, &a.m.c, sizeof a, event);
}

/* piEnqueueMemBufferRead. */
cl_int CL_API_CALL fe_clEnqueueReadBuffer(cl_command_queue command_queue, cl_mem buffer,
                                          cl_bool blocking_read, size_t offset, size_t size,
                                          void *ptr, cl_uint num_events_in_wait_list,
                                          const cl_event *event_wait_list, cl_event *event)
{
  return read_write(command_queue, buffer, blocking_read, offset, size, ptr,
                    num_events_in_wait_list, event_wait_list, event, false);
}

/* piEnqueueMemBufferWrite. */
cl_int CL_API_CALL fe_clEnqueueWriteBuffer(cl_command_queue command_queue, cl_mem buffer,
                                           cl_bool blocking_write, size_t offset, size_t size,
                                           const void *ptr, cl_uint num_events_in_wait_list,
                                           const cl_event *event_wait_list, cl_event *event)
{
  return read_write(command_queue, buffer, blocking_write, offset, size, (void *)ptr,
                    num_events_in_wait_list, event_wait_list, event, true);
}

struct rect_cmd {
  struct mem_args m;
  struct pi_buff_rect_offset_struct origin, host_origin;
  struct pi_buff_rect_region_struct region;
  size_t row, slice, host_row, host_slice;
  void *ptr;
};

static pi_result read_rect_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking,
                                 pi_uint32 n, const pi_event *wait, pi_event *ev)
{
  struct rect_cmd *a = (struct rect_cmd *)c;
  return pirt_piEnqueueMemBufferReadRect(q->o.pl, q->pi, a->m.mem->pi, blocking, &a->origin,
                                         &a->host_origin, &a->region, a->row, a->slice,
                                         a->host_row, a->host_slice, a->ptr, n, wait, ev);
}

static pi_result write_rect_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking,
                                  pi_uint32 n, const pi_event *wait, pi_event *ev)
{
  struct rect_cmd *a = (struct rect_cmd *)c;
  return pirt_piEnqueueMemBufferWriteRect(q->o.pl, q->pi, a->m.mem->pi, blocking, &a->origin,
                                          &a->host_origin, &a->region, a->row, a->slice,
                                          a->host_row, a->host_slice, a->ptr, n, wait, ev);
}

static pi_result copy_rect_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking,
                                 pi_uint32 n, const pi_event *wait, pi_event *ev)
{
  (void)blocking;
  struct rect_cmd *a = (struct rect_cmd *)c;
  return pirt_piEnqueueMemBufferCopyRect(q->o.pl, q->pi, a->m.mem->pi, a->m.dst->pi, &a->origin,
                                         &a->host_origin, &a->region, a->row, a->slice,
                                         a->host_row, a->host_slice, n, wait, ev);
}

static cl_int read_write_rect(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                              const size_t *origin, const size_t *host_origin,
                              const size_t *region, size_t row, size_t slice,
                              size_t host_row, size_t host_slice, void *ptr, cl_uint n,
                              const cl_event *wait, cl_event *event, bool write)
{
  FE_CHECK(q, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  cl_int err = check_buffer(q, buffer);
  if (err != CL_SUCCESS)
    return err;
  if (!origin || !host_origin || !region || !ptr || !region_ok(region))
    return CL_INVALID_VALUE;
  if ((err = rect_side(origin, region, &row, &slice, buffer->size, true)) != CL_SUCCESS ||
      (err = rect_side(host_origin, region, &host_row, &host_slice, 0, false)) != CL_SUCCESS)
    return err;
  cl_mem_flags denied = CL_MEM_HOST_NO_ACCESS |
                        (write ? CL_MEM_HOST_READ_ONLY : CL_MEM_HOST_WRITE_ONLY);
  if (buffer->flags & denied)
    return CL_INVALID_OPERATION;
  struct rect_cmd a = {{{write ? write_rect_issue : read_rect_issue, hold_one, drop_one},
                        buffer,
                        NULL},
                       {origin[0], origin[1], origin[2]},
                       {host_origin[0], host_origin[1], host_origin[2]},
                       {region[0], region[1], region[2]},
                       row,
                       slice,
                       host_row,
                       host_slice,
                       ptr};
  return fe_enqueue(q, write ? CL_COMMAND_WRITE_BUFFER_RECT : CL_COMMAND_READ_BUFFER_RECT, n,
                    wait, blocking != CL_FALSE, &a.m.c, sizeof a, event);
}

/* piEnqueueMemBufferReadRect. */
cl_int CL_API_CALL fe_clEnqueueReadBufferRect(
    cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read,
    const size_t *buffer_origin, const size_t *host_origin, const size_t *region,
    size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch,
    size_t host_slice_pitch, void *ptr, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event)
{
  return read_write_rect(command_queue, buffer, blocking_read, buffer_origin, host_origin,
                         region, buffer_row_pitch, buffer_slice_pitch, host_row_pitch,
                         host_slice_pitch, ptr, num_events_in_wait_list, event_wait_list,
                         event, false);
}

/* piEnqueueMemBufferWriteRect. */
cl_int CL_API_CALL fe_clEnqueueWriteBufferRect(
    cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write,
    const size_t *buffer_origin, const size_t *host_origin, const size_t *region,
    size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch,
    size_t host_slice_pitch, const void *ptr, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event)
{
  return read_write_rect(command_queue, buffer, blocking_write, buffer_origin, host_origin,
                         region, buffer_row_pitch, buffer_slice_pitch, host_row_pitch,
                         host_slice_pitch, (void *)ptr, num_events_in_wait_list,
                         event_wait_list, event, true);
}

/* ---- Copying and filling ---------------------------------------------------- */

struct copy_cmd {
  struct mem_args m; /* mem: the source */
  size_t src_offset, dst_offset, size;
};

static pi_result copy_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                            const pi_event *wait, pi_event *ev)
{
  (void)blocking;
  struct copy_cmd *a = (struct copy_cmd *)c;
  return pirt_piEnqueueMemBufferCopy(q->o.pl, q->pi, a->m.mem->pi, a->m.dst->pi, a->src_offset,
                                     a->dst_offset, a->size, n, wait, ev);
}

/* piEnqueueMemBufferCopy. */
cl_int CL_API_CALL fe_clEnqueueCopyBuffer(cl_command_queue command_queue, cl_mem src_buffer,
                                          cl_mem dst_buffer, size_t src_offset,
                                          size_t dst_offset, size_t size,
                                          cl_uint num_events_in_wait_list,
                                          const cl_event *event_wait_list, cl_event *event)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  cl_int err = check_buffer(command_queue, src_buffer);
  if (err == CL_SUCCESS)
    err = check_buffer(command_queue, dst_buffer);
  if (err != CL_SUCCESS)
    return err;
  if (!in_range(src_buffer, src_offset, size) || !in_range(dst_buffer, dst_offset, size))
    return CL_INVALID_VALUE;
  size_t src_origin, dst_origin;
  if (root_of(src_buffer, &src_origin) == root_of(dst_buffer, &dst_origin)) {
    size_t s = src_origin + src_offset, d = dst_origin + dst_offset;
    if (s < d + size && d < s + size)
      return CL_MEM_COPY_OVERLAP;
  }
  struct copy_cmd a = {{{copy_issue, hold_two, drop_two}, src_buffer, dst_buffer},
                       src_offset,
                       dst_offset,
                       size};
  return fe_enqueue(command_queue, CL_COMMAND_COPY_BUFFER, num_events_in_wait_list,
                    event_wait_list, false, &a.m.c, sizeof a, event);
}

/* piEnqueueMemBufferCopyRect. */
cl_int CL_API_CALL fe_clEnqueueCopyBufferRect(
    cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer,
    const size_t *src_origin, const size_t *dst_origin, const size_t *region,
    size_t src_row_pitch, size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  cl_int err = check_buffer(command_queue, src_buffer);
  if (err == CL_SUCCESS)
    err = check_buffer(command_queue, dst_buffer);
  if (err != CL_SUCCESS)
    return err;
  if (!src_origin || !dst_origin || !region || !region_ok(region))
    return CL_INVALID_VALUE;
  if ((err = rect_side(src_origin, region, &src_row_pitch, &src_slice_pitch, src_buffer->size,
                       true)) != CL_SUCCESS ||
      (err = rect_side(dst_origin, region, &dst_row_pitch, &dst_slice_pitch, dst_buffer->size,
                       true)) != CL_SUCCESS)
    return err;
  size_t so, dso;
  if (root_of(src_buffer, &so) == root_of(dst_buffer, &dso)) {
    if (src_buffer == dst_buffer &&
        (src_row_pitch != dst_row_pitch || src_slice_pitch != dst_slice_pitch))
      return CL_INVALID_VALUE;
    /* Sub-buffers of one buffer: the rectangles as seen from that buffer;
     * with different pitches, the byte ranges they span. */
    const size_t s[3] = {src_origin[0] + so, src_origin[1], src_origin[2]};
    const size_t d[3] = {dst_origin[0] + dso, dst_origin[1], dst_origin[2]};
    bool overlap;
    if (src_row_pitch == dst_row_pitch && src_slice_pitch == dst_slice_pitch) {
      overlap = rect_overlap(s, d, region, src_row_pitch, src_slice_pitch);
    } else {
      size_t s0 = so + src_origin[2] * src_slice_pitch + src_origin[1] * src_row_pitch +
                  src_origin[0];
      size_t s1 = so + (src_origin[2] + region[2] - 1) * src_slice_pitch +
                  (src_origin[1] + region[1] - 1) * src_row_pitch + src_origin[0] + region[0];
      size_t d0 = dso + dst_origin[2] * dst_slice_pitch + dst_origin[1] * dst_row_pitch +
                  dst_origin[0];
      size_t d1 = dso + (dst_origin[2] + region[2] - 1) * dst_slice_pitch +
                  (dst_origin[1] + region[1] - 1) * dst_row_pitch + dst_origin[0] + region[0];
      overlap = s0 < d1 && d0 < s1;
    }
    if (overlap)
      return CL_MEM_COPY_OVERLAP;
  }
  struct rect_cmd a = {{{copy_rect_issue, hold_two, drop_two}, src_buffer, dst_buffer},
                       {src_origin[0], src_origin[1], src_origin[2]},
                       {dst_origin[0], dst_origin[1], dst_origin[2]},
                       {region[0], region[1], region[2]},
                       src_row_pitch,
                       src_slice_pitch,
                       dst_row_pitch,
                       dst_slice_pitch,
                       NULL};
  return fe_enqueue(command_queue, CL_COMMAND_COPY_BUFFER_RECT, num_events_in_wait_list,
                    event_wait_list, false, &a.m.c, sizeof a, event);
}

struct fill_cmd {
  struct mem_args m;
  size_t pattern_size, offset, size;
  unsigned char pattern[128]; /* copied: the application may reuse its own */
};

static pi_result fill_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                            const pi_event *wait, pi_event *ev)
{
  (void)blocking;
  struct fill_cmd *a = (struct fill_cmd *)c;
  return pirt_piEnqueueMemBufferFill(q->o.pl, q->pi, a->m.mem->pi, a->pattern, a->pattern_size,
                                     a->offset, a->size, n, wait, ev);
}

/* piEnqueueMemBufferFill. */
cl_int CL_API_CALL fe_clEnqueueFillBuffer(cl_command_queue command_queue, cl_mem buffer,
                                          const void *pattern, size_t pattern_size,
                                          size_t offset, size_t size,
                                          cl_uint num_events_in_wait_list,
                                          const cl_event *event_wait_list, cl_event *event)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  cl_int err = check_buffer(command_queue, buffer);
  if (err != CL_SUCCESS)
    return err;
  if (!pattern || pattern_size == 0 || pattern_size > 128 ||
      (pattern_size & (pattern_size - 1)) || offset % pattern_size || size % pattern_size ||
      !in_range(buffer, offset, size))
    return CL_INVALID_VALUE;
  struct fill_cmd a = {{{fill_issue, hold_one, drop_one}, buffer, NULL},
                       pattern_size,
                       offset,
                       size,
                       {0}};
  memcpy(a.pattern, pattern, pattern_size);
  /* Held, the copy keeps only the bytes in use. */
  return fe_enqueue(command_queue, CL_COMMAND_FILL_BUFFER, num_events_in_wait_list,
                    event_wait_list, false, &a.m.c,
                    offsetof(struct fill_cmd, pattern) + pattern_size, event);
}

/* ---- Mapping ---------------------------------------------------------------- */

/* A map the front end can issue at once is piEnqueueMemBufferMap. A map
 * held back for a user event gets its pointer only when PI maps: a blocking
 * one waits for that (as OpenCL's does); a non-blocking one must return a
 * pointer now, so it is staged through the host as an image map is
 * (fe_image.c): the application gets host memory of the range (for a
 * CL_MEM_USE_HOST_PTR buffer, the application's own memory there, as the
 * specification has it), the held command reads the range into it when it
 * is issued (nothing for CL_MAP_WRITE_INVALIDATE_REGION, or once the
 * application unmapped without waiting), ordered by the map's event, and
 * the unmap writes it back (staged_unmap). */
struct map_cmd {
  struct mem_args m;
  pi_map_flags flags;
  size_t offset, size;
  void **out;
  bool blocking;
  fe_mapping *map; /* the mapping the enqueue adds to the buffer */
};

pi_result fe_staged_map(cl_mem obj, fe_mapping *m, cl_command_queue q, pi_bool blocking,
                        pi_uint32 n, const pi_event *wait, pi_event *ev)
{
  const pirt_plugin *pl = q->o.pl;
  pi_event e = NULL;
  pi_result r;
  /* Under the object's lock: an unmap the application issued before this
   * map (it did not wait for it) makes it read nothing, since the memory
   * goes with the unmap. */
  pthread_mutex_lock(&obj->lock);
  const bool read = !m->unmapped && !m->invalidate;
  if (read && fe_is_image(obj))
    r = pirt_piEnqueueMemImageRead(pl, q->pi, obj->pi, blocking, &m->origin, &m->region, m->row,
                                   m->slice, m->ptr, n, wait, &e);
  else if (read)
    r = pirt_piEnqueueMemBufferRead(pl, q->pi, obj->pi, blocking, m->offset, m->size, m->ptr, n,
                                    wait, &e);
  else
    r = pirt_piEnqueueEventsWait(pl, q->pi, n, wait, &e);
  const bool kept = r == PI_SUCCESS && !m->unmapped;
  if (kept) {
    m->issued = true;
    m->done = e;
  }
  pthread_mutex_unlock(&obj->lock);
  if (r != PI_SUCCESS)
    return r;
  if (blocking && !read)
    r = pirt_piEventsWait(pl, 1, &e); /* a blocking map of nothing to read */
  if (ev && r == PI_SUCCESS) {
    if (kept)
      pirt_piEventRetain(pl, e);
    *ev = e;
  } else if (!kept) {
    pirt_piEventRelease(pl, e);
  }
  return r;
}

static pi_result map_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                           const pi_event *wait, pi_event *ev)
{
  struct map_cmd *a = (struct map_cmd *)c;
  return a->map->staged ? fe_staged_map(a->m.mem, a->map, q, blocking, n, wait, ev)
                        : pirt_piEnqueueMemBufferMap(q->o.pl, q->pi, a->m.mem->pi, blocking,
                                                     a->flags, a->offset, a->size, n, wait, ev,
                                                     a->out);
}

/* A held map keeps its buffer; a non-blocking one is staged (see above)
 * and keeps its mapping too. */
static cl_int map_hold(fe_cmd *c)
{
  struct map_cmd *a = (struct map_cmd *)c;
  if (a->blocking)
    return hold_one(c);
  fe_mapping *m = a->map; /* not shared yet: no lock */
  cl_mem b = a->m.mem;
  if (b->host_ptr) {
    m->ptr = (char *)b->host_ptr + a->offset;
  } else {
    if (!(m->staging = malloc(a->size)))
      return CL_OUT_OF_HOST_MEMORY;
    m->ptr = m->staging;
  }
  m->staged = true;
  /* A map for writing reads the range too: the unmap writes all of it. No
   * flags read and write. */
  m->invalidate = (a->flags & PI_MAP_WRITE_INVALIDATE_REGION) != 0;
  m->write = m->invalidate || (a->flags & PI_MAP_WRITE) || !a->flags;
  m->offset = a->offset;
  m->size = a->size;
  m->refs++;
  *a->out = m->ptr;
  fe_mem_hold(b);
  return CL_SUCCESS;
}

static void map_drop(fe_cmd *c)
{
  struct map_cmd *a = (struct map_cmd *)c;
  if (a->map->staged)
    fe_mapping_unref(a->m.mem, a->map);
  drop_one(c);
}

/* The unmap of a staged mapping (an image's always, a buffer's held for a
 * user event): one mapped for writing is written back with
 * piEnqueueMemImageWrite or piEnqueueMemBufferWrite, blocking (its memory
 * can go when this returns), after the wait list and the map's read; else
 * the unmap is a marker of the wait list. */
static pi_result staged_unmap(cl_mem obj, fe_mapping *m, cl_command_queue q, pi_uint32 n,
                              const pi_event *wait, pi_event *ev)
{
  const pirt_plugin *pl = q->o.pl;
  pthread_mutex_lock(&obj->lock);
  m->unmapped = true;
  const bool issued = m->issued;
  pi_event done = m->done;
  pthread_mutex_unlock(&obj->lock);
  if (!m->write || !issued) {
    /* Nothing to write back (or the map never ran): the map's read ends
     * before its memory goes, and the unmap orders like a marker. */
    if (done)
      pirt_piEventsWait(pl, 1, &done);
    return pirt_piEnqueueEventsWait(pl, q->pi, n, wait, ev);
  }
  pi_event small[16], *list = small;
  if (n + 1 > 16 && !(list = malloc((n + 1) * sizeof *list)))
    return PI_ERROR_OUT_OF_HOST_MEMORY;
  if (n)
    memcpy(list, wait, n * sizeof *list);
  list[n] = done; /* after the map's read, wherever it was enqueued */
  pi_result r = fe_is_image(obj)
                    ? pirt_piEnqueueMemImageWrite(pl, q->pi, obj->pi, PI_TRUE, &m->origin,
                                                  &m->region, m->row, m->slice, m->ptr, n + 1,
                                                  list, ev)
                    : pirt_piEnqueueMemBufferWrite(pl, q->pi, obj->pi, PI_TRUE, m->offset,
                                                   m->size, m->ptr, n + 1, list, ev);
  if (list != small)
    free(list);
  return r;
}

/* piEnqueueMemBufferMap; the mapping is kept (fe_mem.h), so the unmap can
 * check its pointer and CL_MEM_MAP_COUNT counts it. */
void *CL_API_CALL fe_clEnqueueMapBuffer(cl_command_queue command_queue, cl_mem buffer,
                                        cl_bool blocking_map, cl_map_flags map_flags,
                                        size_t offset, size_t size,
                                        cl_uint num_events_in_wait_list,
                                        const cl_event *event_wait_list, cl_event *event,
                                        cl_int *errcode_ret)
{
  if (!FE_IS(command_queue, FE_QUEUE))
    FE_FAIL(errcode_ret, CL_INVALID_COMMAND_QUEUE);
  cl_int err = check_buffer(command_queue, buffer);
  if (err != CL_SUCCESS)
    FE_FAIL(errcode_ret, err);
  const cl_map_flags rw = CL_MAP_READ | CL_MAP_WRITE;
  if (size == 0 || !in_range(buffer, offset, size) ||
      (map_flags & ~(rw | CL_MAP_WRITE_INVALIDATE_REGION)) ||
      ((map_flags & CL_MAP_WRITE_INVALIDATE_REGION) && (map_flags & rw)))
    FE_FAIL(errcode_ret, CL_INVALID_VALUE);
  if (((map_flags & CL_MAP_READ) &&
       (buffer->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS))) ||
      ((map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) &&
       (buffer->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS))))
    FE_FAIL(errcode_ret, CL_INVALID_OPERATION);
  fe_mapping *map = calloc(1, sizeof *map);
  if (!map)
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  map->refs = 1;
  void *ptr = NULL;
  struct map_cmd a = {{{map_issue, map_hold, map_drop}, buffer, NULL},
                      map_flags,
                      offset,
                      size,
                      &ptr,
                      blocking_map != CL_FALSE,
                      map};
  err = fe_enqueue(command_queue, CL_COMMAND_MAP_BUFFER, num_events_in_wait_list,
                   event_wait_list, a.blocking, &a.m.c, sizeof a, event);
  if (err != CL_SUCCESS) {
    fe_mapping_unref(buffer, map);
    FE_FAIL(errcode_ret, err);
  }
  /* PI mapped: nothing of the front end reads or writes the memory. A
   * staged map's held command owns its other fields (map_issue). */
  if (!map->staged) {
    map->ptr = ptr;
    map->issued = true;
  }
  fe_mapping_add(buffer, map);
  if (errcode_ret)
    *errcode_ret = CL_SUCCESS;
  return ptr;
}

struct unmap_cmd {
  struct mem_args m;
  void *ptr;
  fe_mapping *map; /* the mapping (fe_mem.h), taken off memobj */
  bool *held;      /* the enqueuer's: set when the command is held back */
  bool issued;     /* it went to PI */
};

static pi_result unmap_issue(fe_cmd *c, cl_command_queue q, pi_bool blocking, pi_uint32 n,
                             const pi_event *wait, pi_event *ev)
{
  (void)blocking;
  struct unmap_cmd *a = (struct unmap_cmd *)c;
  cl_mem m = a->m.mem;
  pi_result r = fe_is_image(m) || a->map->staged
                    ? staged_unmap(m, a->map, q, n, wait, ev)
                    : pirt_piEnqueueMemUnmap(q->o.pl, q->pi, m->pi, a->ptr, n, wait, ev);
  a->issued = r == PI_SUCCESS;
  return r;
}

/* A held unmap: the enqueuer learns that its copy owns the mapping now. */
static cl_int unmap_hold(fe_cmd *c)
{
  struct unmap_cmd *a = (struct unmap_cmd *)c;
  *a->held = true;
  a->held = NULL;
  return hold_one(c);
}

/* The mapping goes once its unmap went to PI; one whose unmap never ran
 * (its user event failed) is mapped still. */
static void unmap_drop(fe_cmd *c)
{
  struct unmap_cmd *a = (struct unmap_cmd *)c;
  if (a->issued)
    fe_mapping_unref(a->m.mem, a->map);
  else
    fe_mapping_put_back(a->m.mem, a->map);
  drop_one(c);
}

/* piEnqueueMemUnmap of a buffer; an image's staged map written back
 * (staged_unmap). The pointer must be a mapping of memobj not unmapped
 * yet (CL_INVALID_VALUE, even for an unmap held back): CL_MEM_MAP_COUNT
 * counts the mappings left, so it never goes below zero. */
cl_int CL_API_CALL fe_clEnqueueUnmapMemObject(cl_command_queue command_queue, cl_mem memobj,
                                              void *mapped_ptr, cl_uint num_events_in_wait_list,
                                              const cl_event *event_wait_list, cl_event *event)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  if (!fe_mem_live(memobj) || memobj->type == CL_MEM_OBJECT_PIPE)
    return CL_INVALID_MEM_OBJECT;
  if (memobj->ctx != command_queue->ctx)
    return CL_INVALID_CONTEXT;
  if (!mapped_ptr)
    return CL_INVALID_VALUE;
  fe_mapping *map = fe_mapping_take(memobj, mapped_ptr);
  if (!map)
    return CL_INVALID_VALUE;
  bool held = false;
  struct unmap_cmd a = {{{unmap_issue, unmap_hold, unmap_drop}, memobj, NULL},
                        mapped_ptr,
                        map,
                        &held,
                        false};
  cl_int err = fe_enqueue(command_queue, CL_COMMAND_UNMAP_MEM_OBJECT, num_events_in_wait_list,
                          event_wait_list, false, &a.m.c, sizeof a, event);
  /* Held, the copy's drop decides; else it went to PI or failed here. */
  if (!held && err == CL_SUCCESS)
    fe_mapping_unref(memobj, map);
  else if (!held)
    fe_mapping_put_back(memobj, map);
  return err;
}

/* ---- Ordering --------------------------------------------------------------- */

/* A marker (piEnqueueEventsWait): see the file comment. */
cl_int CL_API_CALL fe_clEnqueueMigrateMemObjects(cl_command_queue command_queue,
                                                 cl_uint num_mem_objects,
                                                 const cl_mem *mem_objects,
                                                 cl_mem_migration_flags flags,
                                                 cl_uint num_events_in_wait_list,
                                                 const cl_event *event_wait_list,
                                                 cl_event *event)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  if (num_mem_objects == 0 || !mem_objects)
    return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < num_mem_objects; i++) {
    if (!fe_mem_live(mem_objects[i]))
      return CL_INVALID_MEM_OBJECT;
    if (mem_objects[i]->ctx != command_queue->ctx)
      return CL_INVALID_CONTEXT;
  }
  if (flags & ~(cl_mem_migration_flags)(CL_MIGRATE_MEM_OBJECT_HOST |
                                        CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED))
    return CL_INVALID_VALUE;
  /* A hint: memory is where PI puts it when a command uses it; the command
   * orders like a marker of its wait list (contents stay, which
   * CONTENT_UNDEFINED allows). */
  fe_cmd m = {marker_issue, NULL, NULL};
  return fe_enqueue(command_queue, CL_COMMAND_MIGRATE_MEM_OBJECTS, num_events_in_wait_list,
                    event_wait_list, false, &m, sizeof m, event);
}

/* piEnqueueEventsWait. */
cl_int CL_API_CALL fe_clEnqueueMarkerWithWaitList(cl_command_queue command_queue,
                                                  cl_uint num_events_in_wait_list,
                                                  const cl_event *event_wait_list,
                                                  cl_event *event)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  fe_cmd m = {marker_issue, NULL, NULL};
  return fe_enqueue(command_queue, CL_COMMAND_MARKER, num_events_in_wait_list,
                    event_wait_list, false, &m, sizeof m, event);
}

/* piEnqueueEventsWait for everything enqueued before. */
cl_int CL_API_CALL fe_clEnqueueMarker(cl_command_queue command_queue, cl_event *event)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  if (!event)
    return CL_INVALID_VALUE;
  fe_cmd m = {marker_issue, NULL, NULL};
  return fe_enqueue(command_queue, CL_COMMAND_MARKER, 0, NULL, false, &m, sizeof m, event);
}

/* piEnqueueEventsWaitWithBarrier. */
cl_int CL_API_CALL fe_clEnqueueBarrierWithWaitList(cl_command_queue command_queue,
                                                   cl_uint num_events_in_wait_list,
                                                   const cl_event *event_wait_list,
                                                   cl_event *event)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  fe_cmd b = {barrier_issue, NULL, NULL};
  return fe_enqueue(command_queue, CL_COMMAND_BARRIER, num_events_in_wait_list,
                    event_wait_list, false, &b, sizeof b, event);
}

/* piEnqueueEventsWaitWithBarrier for everything enqueued before. */
cl_int CL_API_CALL fe_clEnqueueBarrier(cl_command_queue command_queue)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  fe_cmd b = {barrier_issue, NULL, NULL};
  return fe_enqueue(command_queue, CL_COMMAND_BARRIER, 0, NULL, false, &b, sizeof b, NULL);
}

/* OpenCL 1.1's wait: a barrier for the events (its errors predate wait
 * lists: an invalid event is CL_INVALID_EVENT). */
cl_int CL_API_CALL fe_clEnqueueWaitForEvents(cl_command_queue command_queue,
                                             cl_uint num_events, const cl_event *event_list)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  if (num_events == 0 || !event_list)
    return CL_INVALID_VALUE;
  fe_cmd b = {barrier_issue, NULL, NULL};
  cl_int err = fe_enqueue(command_queue, CL_COMMAND_BARRIER, num_events, event_list, false, &b,
                          sizeof b, NULL);
  return err == CL_INVALID_EVENT_WAIT_LIST ? CL_INVALID_EVENT : err;
}
