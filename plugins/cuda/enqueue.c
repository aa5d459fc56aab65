/*
 * enqueue.c: the commands of the CUDA plugin: kernel launches (cooperative
 * ones included), event waits and barriers, and buffer reads, writes,
 * copies (rectangular ones included), fills, maps and unmaps.
 */
#include "cu_internal.h"

/* ---- Enqueue --------------------------------------------------------------
 */

/* The largest divisor of n that is at most max. */
static size_t divisor_at_most(size_t n, size_t max) {
  if (max >= n)
    return n;
  for (size_t d = max; d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

/* An ND-range as a grid of blocks: block = local size (chosen when NULL:
 * the largest divisors of the global size that fit the kernel), grid =
 * global / local. Local-memory arguments become dynamic shared memory. */
pi_result backend_launch(const char *fn, bool cooperative, pi_queue q,
                         pi_kernel k, pi_uint32 dims, const size_t *offset,
                         const size_t *global, const size_t *local,
                         pi_uint32 nwait, const pi_event *wait,
                         pi_event *out) {
  if (!q || !k || !global)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the queue, the kernel and the global size must not be "
                "NULL",
                fn);
  if (dims < 1 || dims > 3)
    return fail(PI_ERROR_INVALID_WORK_DIMENSION,
                "%s: %u dimensions; use 1, 2 or 3", fn, (unsigned)dims);
  if (k->prog->ctx != q->ctx)
    return fail(PI_ERROR_INVALID_CONTEXT,
                "%s: the kernel and the queue are of different contexts", fn);
  for (pi_uint32 i = 0; offset && i < dims; ++i)
    if (offset[i])
      return fail(PI_ERROR_INVALID_GLOBAL_OFFSET,
                  "%s: global offset %zu in dimension %u: PTX kernels cannot "
                  "see a global offset; add it to the indices in the kernel",
                  fn, offset[i], (unsigned)i);
  pi_device d = q->dev;
  size_t g[3] = {1, 1, 1}, l[3] = {1, 1, 1}, grid[3];
  int block_max[3], grid_max[3], kernel_max = 0;
  static const CUdevice_attribute block_attr[3] = {
      CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
      CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z};
  static const CUdevice_attribute grid_attr[3] = {
      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
  bool empty = false;
  for (int i = 0; i < 3; ++i) {
    TRY(device_attr(fn, d, block_attr[i], &block_max[i]));
    TRY(device_attr(fn, d, grid_attr[i], &grid_max[i]));
    if ((pi_uint32)i < dims) {
      g[i] = global[i];
      empty |= g[i] == 0;
    }
  }
  TRY(use_context(fn, q->ctx->cu));
  TRY(func_attr(fn, k, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &kernel_max));
  if (local) {
    size_t threads = 1;
    for (pi_uint32 i = 0; i < dims; ++i) {
      l[i] = local[i];
      if (l[i] == 0 || (g[i] && g[i] % l[i]))
        return fail(PI_ERROR_INVALID_WORK_GROUP_SIZE,
                    "%s: kernel '%s': the global size %zu in dimension %u is "
                    "not a multiple of the local size %zu",
                    fn, k->name, g[i], (unsigned)i, l[i]);
      if (l[i] > (size_t)block_max[i])
        return fail(PI_ERROR_INVALID_WORK_ITEM_SIZE,
                    "%s: kernel '%s': local size %zu in dimension %u exceeds "
                    "the device's %d",
                    fn, k->name, l[i], (unsigned)i, block_max[i]);
      threads *= l[i];
    }
    if (threads > (size_t)kernel_max)
      return fail(PI_ERROR_INVALID_WORK_GROUP_SIZE,
                  "%s: kernel '%s': a work-group of %zu work-items exceeds "
                  "the kernel's limit of %d",
                  fn, k->name, threads, kernel_max);
  } else {
    size_t budget = (size_t)kernel_max;
    for (int i = 0; i < 3; ++i) {
      size_t cap =
          budget < (size_t)block_max[i] ? budget : (size_t)block_max[i];
      l[i] = g[i] ? divisor_at_most(g[i], cap ? cap : 1) : 1;
      budget /= l[i];
    }
  }
  for (int i = 0; i < 3; ++i) {
    grid[i] = g[i] / l[i];
    if (grid[i] > (size_t)grid_max[i])
      return fail(PI_ERROR_INVALID_GLOBAL_WORK_SIZE,
                  "%s: kernel '%s': %zu work-groups in dimension %d exceed "
                  "the device's %d",
                  fn, k->name, grid[i], i, grid_max[i]);
  }
  /* The parameter list, local-memory offsets included. */
  pthread_mutex_lock(&k->lock);
  size_t n = k->num_params != SIZE_MAX ? k->num_params : k->num_args;
  void **params = calloc(n ? n : 1, sizeof *params);
  uint64_t *offsets = calloc(n ? n : 1, sizeof *offsets);
  pi_result r = params && offsets ? PI_SUCCESS : out_of_memory(fn);
  size_t shared = 0;
  for (size_t i = 0; r == PI_SUCCESS && i < n; ++i) {
    struct karg *a = i < k->num_args ? &k->args[i] : NULL;
    if (!a || !a->set) {
      r = fail(PI_ERROR_INVALID_KERNEL_ARGS,
               "%s: argument %zu of kernel '%s' is not set", fn, i, k->name);
      break;
    }
    if (!a->local) {
      params[i] = a->value;
      continue;
    }
    /* Aligned to the largest power of two up to 128 that fits the size. */
    size_t align = 1;
    while (align < 128 && align * 2 <= a->size)
      align *= 2;
    shared = (shared + align - 1) / align * align;
    size_t width = k->num_params != SIZE_MAX ? k->param_sizes[i] : 8;
    if (width == 4) {
      uint32_t off32 = (uint32_t)shared;
      memcpy(&offsets[i], &off32, sizeof off32);
    } else {
      offsets[i] = shared;
    }
    params[i] = &offsets[i];
    shared += a->size;
  }
  pi_event ev = NULL;
  if (r == PI_SUCCESS)
    r = cmd_start(fn, q, nwait, wait, out, PI_COMMAND_TYPE_NDRANGE_KERNEL, &ev);
  if (r == PI_SUCCESS && shared > 48 * 1024)
    r = CUF(fn, cuFuncSetAttribute, k->fn,
            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared);
  if (r == PI_SUCCESS && !empty && cooperative)
    r = CUF(fn, cuLaunchCooperativeKernel, k->fn, (unsigned)grid[0],
            (unsigned)grid[1], (unsigned)grid[2], (unsigned)l[0],
            (unsigned)l[1], (unsigned)l[2], (unsigned)shared, q->stream,
            params);
  else if (r == PI_SUCCESS && !empty)
    r = CUF(fn, cuLaunchKernel, k->fn, (unsigned)grid[0], (unsigned)grid[1],
            (unsigned)grid[2], (unsigned)l[0], (unsigned)l[1], (unsigned)l[2],
            (unsigned)shared, q->stream, params, NULL);
  pthread_mutex_unlock(&k->lock);
  free(params);
  free(offsets);
  if (ev || r == PI_SUCCESS)
    r = cmd_finish(fn, q, r, ev, out, false);
  return r;
}

/* A marker: in order, it completes after every earlier command of the
 * queue and after the wait list. */
pi_result cu_piEnqueueEventsWait(pi_queue command_queue,
                                 pi_uint32 num_events_in_wait_list,
                                 const pi_event *event_wait_list,
                                 pi_event *event) {
  pi_event ev = NULL;
  pi_result r = cmd_start(FN, command_queue, num_events_in_wait_list,
                          event_wait_list, event, PI_COMMAND_TYPE_MARKER, &ev);
  return r != PI_SUCCESS ? r
                         : cmd_finish(FN, command_queue, r, ev, event, false);
}

/* A barrier: the stream is in order, so later commands wait for it. */
pi_result cu_piEnqueueEventsWaitWithBarrier(
    pi_queue command_queue, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  pi_event ev = NULL;
  pi_result r = cmd_start(FN, command_queue, num_events_in_wait_list,
                          event_wait_list, event, PI_COMMAND_TYPE_BARRIER, &ev);
  return r != PI_SUCCESS ? r
                         : cmd_finish(FN, command_queue, r, ev, event, false);
}

static pi_result check_range(const char *fn, pi_mem m, size_t offset,
                             size_t size) {
  if (!m)
    return fail(PI_ERROR_INVALID_MEM_OBJECT, "%s: the buffer is NULL", fn);
  return buffer_bytes_check(fn, offset, size, m->size);
}

pi_result cu_piEnqueueMemBufferRead(pi_queue queue, pi_mem buffer,
                                    pi_bool blocking_read, size_t offset,
                                    size_t size, void *ptr,
                                    pi_uint32 num_events_in_wait_list,
                                    const pi_event *event_wait_list,
                                    pi_event *event) {
  pi_event ev = NULL;
  TRY(check_range(FN, buffer, offset, size));
  REQUIRE(ptr != NULL || size == 0);
  pi_result r = cmd_start(FN, queue, num_events_in_wait_list, event_wait_list,
                          event, PI_COMMAND_TYPE_MEM_BUFFER_READ, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (size)
    r = CU(cuMemcpyDtoHAsync, ptr, buffer->ptr + offset, size, queue->stream);
  return cmd_finish(FN, queue, r, ev, event, blocking_read);
}

pi_result
cu_piEnqueueMemBufferWrite(pi_queue command_queue, pi_mem buffer,
                           pi_bool blocking_write, size_t offset, size_t size,
                           const void *ptr, pi_uint32 num_events_in_wait_list,
                           const pi_event *event_wait_list, pi_event *event) {
  pi_event ev = NULL;
  TRY(check_range(FN, buffer, offset, size));
  REQUIRE(ptr != NULL || size == 0);
  pi_result r =
      cmd_start(FN, command_queue, num_events_in_wait_list, event_wait_list,
                event, PI_COMMAND_TYPE_MEM_BUFFER_WRITE, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (size)
    r = CU(cuMemcpyHtoDAsync, buffer->ptr + offset, ptr, size,
           command_queue->stream);
  return cmd_finish(FN, command_queue, r, ev, event, blocking_write);
}

/* Normalises a side's pitches and checks a buffer side's bounds. */
static pi_result rect_side_check(const char *fn, struct rect_side *s,
                                 const struct pi_buff_rect_region_struct *r) {
  if (!s->row_pitch)
    s->row_pitch = r->width_bytes;
  if (!s->slice_pitch)
    s->slice_pitch = s->row_pitch * r->height_scalar;
  if (s->row_pitch < r->width_bytes ||
      s->slice_pitch < s->row_pitch * r->height_scalar ||
      s->slice_pitch % s->row_pitch)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a row pitch (%zu) must hold the region's width (%zu) "
                "and a slice pitch (%zu) must be a multiple of the row pitch "
                "holding its height (%zu rows)",
                fn, s->row_pitch, r->width_bytes, s->slice_pitch,
                r->height_scalar);
  if (s->mem) {
    size_t end = (s->z + r->depth_scalar - 1) * s->slice_pitch +
                 (s->y + r->height_scalar - 1) * s->row_pitch + s->x +
                 r->width_bytes;
    if (end > s->mem->size)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: the rectangle reaches byte %zu of a %zu-byte buffer", fn,
                  end, s->mem->size);
  }
  return PI_SUCCESS;
}

/* A rectangular copy between two sides: cuMemcpy3DAsync. */
static pi_result rect_copy(const char *fn, pi_queue q, pi_bool blocking,
                           struct rect_side *src, struct rect_side *dst,
                           pi_buff_rect_region region, pi_command_type type,
                           pi_uint32 nwait, const pi_event *wait,
                           pi_event *out) {
  if (!region)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the offsets and the region must not be NULL", fn);
  if (!src->mem && !src->host)
    return fail(PI_ERROR_INVALID_VALUE, "%s: the host pointer is NULL", fn);
  TRY(rect_side_check(fn, src, region));
  TRY(rect_side_check(fn, dst, region));
  CUDA_MEMCPY3D c;
  memset(&c, 0, sizeof c);
  c.srcXInBytes = src->x;
  c.srcY = src->y;
  c.srcZ = src->z;
  c.srcPitch = src->row_pitch;
  c.srcHeight = src->slice_pitch / src->row_pitch;
  if (src->mem) {
    c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.srcDevice = src->mem->ptr;
  } else {
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src->host;
  }
  c.dstXInBytes = dst->x;
  c.dstY = dst->y;
  c.dstZ = dst->z;
  c.dstPitch = dst->row_pitch;
  c.dstHeight = dst->slice_pitch / dst->row_pitch;
  if (dst->mem) {
    c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.dstDevice = dst->mem->ptr;
  } else {
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = (void *)(uintptr_t)dst->host;
  }
  c.WidthInBytes = region->width_bytes;
  c.Height = region->height_scalar;
  c.Depth = region->depth_scalar;
  pi_event ev = NULL;
  pi_result r = cmd_start(fn, q, nwait, wait, out, type, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (c.WidthInBytes && c.Height && c.Depth)
    r = CUF(fn, cuMemcpy3DAsync, &c, q->stream);
  return cmd_finish(fn, q, r, ev, out, blocking);
}

pi_result backend_buffer_rect(const char *fn, pi_queue queue,
                              const struct buffer_rect *r, pi_uint32 nwait,
                              const pi_event *wait, pi_event *event) {
  pi_mem buffer = r->buffer;
  pi_buff_rect_offset b = r->buffer_offset, h = r->host_offset;
  REQUIRE_IN(fn, buffer != NULL);
  struct rect_side mem = {buffer,       NULL,          b->x_bytes,
                          b->y_scalar,  b->z_scalar,   r->pitches[0],
                          r->pitches[1]};
  struct rect_side host = {NULL,        r->ptr,        h->x_bytes,
                           h->y_scalar, h->z_scalar,   r->pitches[2],
                           r->pitches[3]};
  if (!r->read)
    return rect_copy(fn, queue, r->blocking, &host, &mem, r->region,
                     PI_COMMAND_TYPE_MEM_BUFFER_WRITE_RECT, nwait, wait,
                     event);
  REQUIRE_IN(fn, r->ptr != NULL);
  return rect_copy(fn, queue, r->blocking, &mem, &host, r->region,
                   PI_COMMAND_TYPE_MEM_BUFFER_READ_RECT, nwait, wait, event);
}

pi_result cu_piEnqueueMemBufferCopy(pi_queue command_queue,
                                    pi_mem src_buffer, pi_mem dst_buffer,
                                    size_t src_offset, size_t dst_offset,
                                    size_t size,
                                    pi_uint32 num_events_in_wait_list,
                                    const pi_event *event_wait_list,
                                    pi_event *event) {
  TRY(check_range(FN, src_buffer, src_offset, size));
  TRY(check_range(FN, dst_buffer, dst_offset, size));
  CUdeviceptr s = src_buffer->ptr + src_offset,
              d = dst_buffer->ptr + dst_offset;
  if (size && s < d + size && d < s + size)
    return fail(PI_ERROR_MEM_COPY_OVERLAP,
                "%s: the source and destination regions overlap", FN);
  pi_event ev = NULL;
  pi_result r =
      cmd_start(FN, command_queue, num_events_in_wait_list, event_wait_list,
                event, PI_COMMAND_TYPE_MEM_BUFFER_COPY, &ev);
  if (r != PI_SUCCESS)
    return r;
  if (size)
    r = CU(cuMemcpyAsync, d, s, size, command_queue->stream);
  return cmd_finish(FN, command_queue, r, ev, event, false);
}

pi_result backend_buffer_copy_rect(const char *fn, pi_queue queue,
                                   pi_mem src_buffer, pi_mem dst_buffer,
                                   const struct copy_coords *c,
                                   const size_t pitches[4], pi_uint32 nwait,
                                   const pi_event *wait, pi_event *event) {
  REQUIRE_IN(fn, src_buffer != NULL && dst_buffer != NULL);
  struct rect_side src = {src_buffer, NULL,       c->src[0],  c->src[1],
                          c->src[2],  pitches[0], pitches[1]};
  struct rect_side dst = {dst_buffer, NULL,       c->dst[0],  c->dst[1],
                          c->dst[2],  pitches[2], pitches[3]};
  struct pi_buff_rect_region_struct region = {c->region[0], c->region[1],
                                              c->region[2]};
  return rect_copy(fn, queue, PI_FALSE, &src, &dst, &region,
                   PI_COMMAND_TYPE_MEM_BUFFER_COPY_RECT, nwait, wait, event);
}

/* Fills `size` bytes at dst with a pattern, on the stream: patterns of 1, 2
 * and 4 bytes with one cuMemsetD8/16/32Async; longer ones as one 2D memset
 * per word of the pattern, whose rows are the pattern's repetitions (pitch
 * = the pattern size, width = one word). */
pi_result fill(const char *fn, CUstream s, CUdeviceptr dst,
               const void *pattern, size_t psize, size_t size) {
  if (!pattern || psize == 0 || size % psize)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the size (%zu) must be a multiple of the pattern size "
                "(%zu), and the pattern must not be NULL",
                fn, size, psize);
  size_t count = size / psize;
  if (!count)
    return PI_SUCCESS;
  const unsigned char *p = pattern;
  size_t w = psize % 4 == 0 && dst % 4 == 0   ? 4
             : psize % 2 == 0 && dst % 2 == 0 ? 2
                                              : 1;
  for (size_t j = 0; j < psize; j += w) {
    uint32_t v32 = 0;
    uint16_t v16 = 0;
    if (w == 4)
      memcpy(&v32, p + j, 4);
    else if (w == 2)
      memcpy(&v16, p + j, 2);
    pi_result r;
    if (psize == w)
      r = w == 4   ? CUF(fn, cuMemsetD32Async, dst, v32, count, s)
          : w == 2 ? CUF(fn, cuMemsetD16Async, dst, v16, count, s)
                   : CUF(fn, cuMemsetD8Async, dst, p[0], count, s);
    else
      r = w == 4 ? CUF(fn, cuMemsetD2D32Async, dst + j, psize, v32, 1, count, s)
          : w == 2
              ? CUF(fn, cuMemsetD2D16Async, dst + j, psize, v16, 1, count, s)
              : CUF(fn, cuMemsetD2D8Async, dst + j, psize, p[j], 1, count, s);
    TRY(r);
  }
  return PI_SUCCESS;
}

pi_result backend_buffer_fill(const struct command *c, pi_mem buffer,
                              const void *pattern, size_t pattern_size,
                              size_t offset, size_t size) {
  TRY(check_range(c->fn, buffer, offset, size));
  REQUIRE_IN(c->fn,
             pattern != NULL && pattern_size > 0 && size % pattern_size == 0);
  pi_event ev = NULL;
  pi_result r =
      cmd_start(c->fn, c->queue, c->nwait, c->wait,
                c->event, PI_COMMAND_TYPE_MEM_BUFFER_FILL, &ev);
  if (r != PI_SUCCESS)
    return r;
  r = fill(c->fn, c->queue->stream, buffer->ptr + offset, pattern,
           pattern_size, size);
  return cmd_finish(c->fn, c->queue, r, ev, c->event, false);
}

/* CUDA buffers only: every image command fails alike. */
UNUSED_PARAMETERS_BEGIN

pi_result backend_image_rw(const struct command *c, const struct image_rw *rw) {
  return no_images(c->fn);
}

pi_result backend_image_copy(const struct command *c, pi_mem src_image,
                             pi_mem dst_image, const struct copy_coords *cc) {
  return no_images(c->fn);
}

pi_result backend_image_fill(const struct command *c, pi_mem image,
                             const void *fill_color, const size_t *origin,
                             const size_t *region) {
  return no_images(c->fn);
}

UNUSED_PARAMETERS_END

/* Buffers in host memory (PI_MEM_FLAGS_HOST_PTR_USE or _ALLOC) map to that
 * memory itself. Device memory maps to a host staging copy of the region
 * (not copied in for PI_MAP_WRITE_INVALIDATE_REGION); unmapping copies it
 * back when the map was for writing. */
pi_result cu_piEnqueueMemBufferMap(pi_queue command_queue, pi_mem buffer,
                                   pi_bool blocking_map,
                                   pi_map_flags map_flags, size_t offset,
                                   size_t size,
                                   pi_uint32 num_events_in_wait_list,
                                   const pi_event *event_wait_list,
                                   pi_event *event, void **ret_map) {
  const pi_map_flags known =
      PI_MAP_READ | PI_MAP_WRITE | PI_MAP_WRITE_INVALIDATE_REGION;
  REQUIRE(ret_map != NULL);
  *ret_map = NULL;
  TRY(check_range(FN, buffer, offset, size));
  if (map_flags & ~known)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown map flags 0x%llx", FN,
                (unsigned long long)(map_flags & ~known));
  struct mapping *mp = NULL;
  if (!buffer->host) {
    mp = calloc(1, sizeof *mp);
    if (!mp || !(mp->ptr = malloc(size ? size : 1))) {
      free(mp);
      return out_of_memory(FN);
    }
    mp->offset = offset;
    mp->size = size;
    mp->flags = map_flags;
  }
  pi_event ev = NULL;
  pi_result r =
      cmd_start(FN, command_queue, num_events_in_wait_list, event_wait_list,
                event, PI_COMMAND_TYPE_MEM_BUFFER_MAP, &ev);
  /* A copy to pageable memory returns once it is done. */
  if (r == PI_SUCCESS && mp && size &&
      !(map_flags & PI_MAP_WRITE_INVALIDATE_REGION))
    r = CU(cuMemcpyDtoHAsync, mp->ptr, buffer->ptr + offset, size,
           command_queue->stream);
  if (ev || r == PI_SUCCESS)
    r = cmd_finish(FN, command_queue, r, ev, event, blocking_map);
  if (r != PI_SUCCESS) {
    if (mp)
      free(mp->ptr);
    free(mp);
    return r;
  }
  if (mp) {
    pthread_mutex_lock(&buffer->lock);
    mp->next = buffer->maps;
    buffer->maps = mp;
    pthread_mutex_unlock(&buffer->lock);
    *ret_map = mp->ptr;
  } else {
    *ret_map = buffer->host + offset;
  }
  return PI_SUCCESS;
}

pi_result backend_unmap(const struct command *c, pi_mem memobj,
                        void *mapped_ptr) {
  REQUIRE_IN(c->fn, memobj != NULL && mapped_ptr != NULL);
  struct mapping *mp = NULL;
  if (memobj->host) {
    char *p = mapped_ptr;
    if (p < memobj->host || p > memobj->host + memobj->size)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: the pointer is not a mapping of this buffer", c->fn);
  } else {
    pthread_mutex_lock(&memobj->lock);
    for (struct mapping **link = &memobj->maps; *link; link = &(*link)->next)
      if ((*link)->ptr == mapped_ptr) {
        mp = *link;
        *link = mp->next;
        break;
      }
    pthread_mutex_unlock(&memobj->lock);
    if (!mp)
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: the pointer is not a mapping of this buffer", c->fn);
  }
  pi_event ev = NULL;
  pi_result r =
      cmd_start(c->fn, c->queue, c->nwait, c->wait,
                c->event, PI_COMMAND_TYPE_MEM_BUFFER_UNMAP, &ev);
  /* A copy from pageable memory returns once the source is taken. */
  if (r == PI_SUCCESS && mp && mp->size &&
      (mp->flags & (PI_MAP_WRITE | PI_MAP_WRITE_INVALIDATE_REGION)))
    r = CUF(c->fn, cuMemcpyHtoDAsync, memobj->ptr + mp->offset, mp->ptr,
            mp->size, c->queue->stream);
  if (ev || r == PI_SUCCESS)
    r = cmd_finish(c->fn, c->queue, r, ev, c->event, false);
  if (r != PI_SUCCESS && mp) {
    /* Still mapped: put it back. */
    pthread_mutex_lock(&memobj->lock);
    mp->next = memobj->maps;
    memobj->maps = mp;
    pthread_mutex_unlock(&memobj->lock);
    return r;
  }
  if (mp) {
    free(mp->ptr);
    free(mp);
  }
  return r;
}
