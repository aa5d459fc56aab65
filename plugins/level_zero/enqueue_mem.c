/*
 * enqueue_mem.c: the buffer and image commands of the Level Zero plugin:
 * reads, writes, copies (rectangular ones included), fills, maps and
 * unmaps.
 */
#include "lz_internal.h"

/* ---- Buffer commands -------------------------------------------------------- */

/* Checks that bytes [offset, offset + size) lie in the buffer. */
static pi_result buffer_range(const char *fn, pi_mem m, size_t offset,
                              size_t size) {
  if (!m)
    return fail(PI_ERROR_INVALID_MEM_OBJECT, "%s: the buffer is NULL", fn);
  if (m->kind == MEM_IMAGE)
    return fail(PI_ERROR_INVALID_MEM_OBJECT,
                "%s: the memory object is an image; use the image commands",
                fn);
  return buffer_bytes_check(fn, offset, size, m->size);
}

pi_result lz_piEnqueueMemBufferRead(pi_queue queue, pi_mem buffer,
                                    pi_bool blocking_read,
                                    size_t offset, size_t size,
                                    void *ptr,
                                    pi_uint32 num_events_in_wait_list,
                                    const pi_event *event_wait_list,
                                    pi_event *event) {
  pi_result r = buffer_range(FN, buffer, offset, size);
  if (r != PI_SUCCESS)
    return r;
  REQUIRE(ptr != NULL);
  struct copy_op op = {ptr, buffer->ptr + offset, size};
  return enqueue(FN, queue, PI_COMMAND_TYPE_MEM_BUFFER_READ,
                 num_events_in_wait_list, event_wait_list, event,
                 blocking_read, false, append_copy, &op, NULL);
}

pi_result lz_piEnqueueMemBufferWrite(
    pi_queue command_queue, pi_mem buffer, pi_bool blocking_write,
    size_t offset, size_t size, const void *ptr,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  pi_result r = buffer_range(FN, buffer, offset, size);
  if (r != PI_SUCCESS)
    return r;
  REQUIRE(ptr != NULL);
  struct copy_op op = {buffer->ptr + offset, ptr, size};
  return enqueue(FN, command_queue, PI_COMMAND_TYPE_MEM_BUFFER_WRITE,
                 num_events_in_wait_list, event_wait_list, event,
                 blocking_write, false, append_copy, &op, NULL);
}

pi_result lz_piEnqueueMemBufferCopy(
    pi_queue command_queue, pi_mem src_buffer, pi_mem dst_buffer,
    size_t src_offset, size_t dst_offset, size_t size,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  pi_result r = buffer_range(FN, src_buffer, src_offset, size);
  if (r == PI_SUCCESS)
    r = buffer_range(FN, dst_buffer, dst_offset, size);
  if (r != PI_SUCCESS)
    return r;
  struct copy_op op = {dst_buffer->ptr + dst_offset,
                       src_buffer->ptr + src_offset, size};
  return enqueue(FN, command_queue, PI_COMMAND_TYPE_MEM_BUFFER_COPY,
                 num_events_in_wait_list, event_wait_list, event, false, false,
                 append_copy, &op, NULL);
}

/* The last byte a rectangle touches, to check it against a buffer. */
static size_t rect_end(const size_t origin[3], const size_t region[3],
                       size_t row, size_t slice) {
  row = row ? row : region[0];
  slice = slice ? slice : row * region[1];
  return origin[0] + origin[1] * row + origin[2] * slice +
         (region[2] - 1) * slice + (region[1] - 1) * row + region[0];
}

/* A rectangle between a buffer and host memory. */
pi_result backend_buffer_rect(const char *fn, pi_queue q,
                              const struct buffer_rect *r, pi_uint32 nwait,
                              const pi_event *wait, pi_event *event) {
  const size_t *p = r->pitches; /* buffer row, slice; host row, slice */
  pi_mem buffer = r->buffer;
  if (!r->ptr)
    return fail(PI_ERROR_INVALID_VALUE, "%s: ptr must not be NULL", fn);
  const size_t b[3] = XYZ(r->buffer_offset, x_bytes, y_scalar, z_scalar);
  const size_t h[3] = XYZ(r->host_offset, x_bytes, y_scalar, z_scalar);
  const size_t r3[3] = XYZ(r->region, width_bytes, height_scalar, depth_scalar);
  pi_result rc = buffer_range(fn, buffer, 0, 0);
  if (rc == PI_SUCCESS && r3[0] && r3[1] && r3[2] &&
      rect_end(b, r3, p[0], p[1]) > buffer->size)
    rc = fail(PI_ERROR_INVALID_VALUE,
              "%s: the rectangle reaches byte %zu of the %zu-byte buffer", fn,
              rect_end(b, r3, p[0], p[1]), buffer->size);
  struct rect_op op;
  if (rc == PI_SUCCESS)
    rc = r->read ? rect_setup(fn, &op, r->ptr, h, p[2], p[3], buffer->ptr, b,
                              p[0], p[1], r3)
                 : rect_setup(fn, &op, buffer->ptr, b, p[0], p[1], r->ptr, h,
                              p[2], p[3], r3);
  if (rc != PI_SUCCESS)
    return rc;
  return enqueue(fn, q,
                 r->read ? PI_COMMAND_TYPE_MEM_BUFFER_READ_RECT
                         : PI_COMMAND_TYPE_MEM_BUFFER_WRITE_RECT,
                 nwait, wait, event, r->blocking, false, append_rect, &op,
                 NULL);
}

pi_result backend_buffer_copy_rect(const char *fn, pi_queue queue,
                                   pi_mem src_buffer, pi_mem dst_buffer,
                                   const struct copy_coords *c,
                                   const size_t pitches[4], pi_uint32 nwait,
                                   const pi_event *wait, pi_event *event) {
  size_t src_row_pitch = pitches[0], src_slice_pitch = pitches[1],
         dst_row_pitch = pitches[2], dst_slice_pitch = pitches[3];
  const size_t *s = c->src, *d = c->dst, *r3 = c->region;
  pi_result r = buffer_range(fn, src_buffer, 0, 0);
  if (r == PI_SUCCESS)
    r = buffer_range(fn, dst_buffer, 0, 0);
  if (r == PI_SUCCESS && r3[0] && r3[1] && r3[2] &&
      (rect_end(s, r3, src_row_pitch, src_slice_pitch) > src_buffer->size ||
       rect_end(d, r3, dst_row_pitch, dst_slice_pitch) > dst_buffer->size))
    r = fail(PI_ERROR_INVALID_VALUE,
             "%s: the rectangle does not fit the source or the destination "
             "buffer",
             fn);
  struct rect_op op;
  if (r == PI_SUCCESS)
    r = rect_setup(fn, &op, dst_buffer->ptr, d, dst_row_pitch, dst_slice_pitch,
                   src_buffer->ptr, s, src_row_pitch, src_slice_pitch, r3);
  if (r != PI_SUCCESS)
    return r;
  return enqueue(fn, queue, PI_COMMAND_TYPE_MEM_BUFFER_COPY_RECT, nwait,
                 wait, event, false, false, append_rect, &op, NULL);
}

pi_result backend_buffer_fill(const struct command *c, pi_mem buffer,
                              const void *pattern, size_t pattern_size,
                              size_t offset, size_t size) {
  pi_result r = buffer_range(c->fn, buffer, offset, size);
  if (r != PI_SUCCESS)
    return r;
  return enqueue_fill(c->fn, c->queue, PI_COMMAND_TYPE_MEM_BUFFER_FILL,
                      buffer->ptr + offset, pattern, pattern_size, size,
                      c->nwait, c->wait, c->event);
}

/* Maps go to the buffer's own memory when the host can reach it, to the
 * PI_MEM_FLAGS_HOST_PTR_USE memory when there is some, else to a host
 * allocation freed at unmap. The copy in is skipped for
 * PI_MAP_WRITE_INVALIDATE_REGION. */
pi_result lz_piEnqueueMemBufferMap(
    pi_queue command_queue, pi_mem buffer, pi_bool blocking_map,
    pi_map_flags map_flags, size_t offset, size_t size,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event, void **ret_map) {
  const pi_map_flags known =
      PI_MAP_READ | PI_MAP_WRITE | PI_MAP_WRITE_INVALIDATE_REGION;
  REQUIRE(ret_map != NULL);
  *ret_map = NULL;
  NEED(command_queue, PI_ERROR_INVALID_QUEUE);
  pi_result r = buffer_range(FN, buffer, offset, size);
  if (r != PI_SUCCESS)
    return r;
  if (map_flags & ~known)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown map flags 0x%llx", FN,
                (unsigned long long)(map_flags & ~known));
  struct mapping *mp = calloc(1, sizeof *mp);
  if (!mp)
    return out_of_memory(FN);
  mp->offset = offset;
  mp->size = size;
  mp->flags = map_flags;
  bool copy_in = !(map_flags & PI_MAP_WRITE_INVALIDATE_REGION);
  if (buffer->host_ptr) {
    mp->ptr = buffer->host_ptr + offset;
  } else if (buffer->host_access) {
    mp->ptr = buffer->ptr + offset;
    mp->direct = true;
    copy_in = false;
  } else {
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *staging = NULL;
    r = ZE_CALL(zeMemAllocHost, buffer->context->ze, &hd, size ? size : 1, 64,
                &staging);
    if (r != PI_SUCCESS) {
      free(mp);
      return r;
    }
    mp->ptr = staging;
    mp->staged = true;
  }
  if (copy_in) {
    struct copy_op op = {mp->ptr, buffer->ptr + offset, size};
    r = enqueue(FN, command_queue, PI_COMMAND_TYPE_MEM_BUFFER_MAP,
                num_events_in_wait_list, event_wait_list, event, blocking_map,
                false, append_copy, &op, NULL);
  } else {
    r = enqueue(FN, command_queue, PI_COMMAND_TYPE_MEM_BUFFER_MAP,
                num_events_in_wait_list, event_wait_list, event, blocking_map,
                false, append_barrier, NULL, NULL);
  }
  if (r != PI_SUCCESS) {
    if (mp->staged)
      zeMemFree(buffer->context->ze, mp->ptr);
    free(mp);
    return r;
  }
  pthread_mutex_lock(&buffer->lock);
  mp->next = buffer->maps;
  buffer->maps = mp;
  pthread_mutex_unlock(&buffer->lock);
  *ret_map = mp->ptr;
  return PI_SUCCESS;
}

/* Writes a written mapping back; a staging allocation is freed once the
 * copy completed. */
pi_result backend_unmap(const struct command *c, pi_mem memobj,
                        void *mapped_ptr) {
  NEED_IN(c->fn, c->queue, PI_ERROR_INVALID_QUEUE);
  NEED_IN(c->fn, memobj, PI_ERROR_INVALID_MEM_OBJECT);
  pthread_mutex_lock(&memobj->lock);
  struct mapping **pp = &memobj->maps;
  while (*pp && (*pp)->ptr != mapped_ptr)
    pp = &(*pp)->next;
  struct mapping *mp = *pp;
  if (mp)
    *pp = mp->next;
  pthread_mutex_unlock(&memobj->lock);
  if (!mp)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: %p is not a mapping of this memory object", c->fn,
                mapped_ptr);
  bool write_back = !mp->direct && (mp->flags & (PI_MAP_WRITE |
                                                 PI_MAP_WRITE_INVALIDATE_REGION));
  pi_result r;
  if (write_back) {
    struct copy_op op = {memobj->ptr + mp->offset, mp->ptr, mp->size};
    r = enqueue(c->fn, c->queue, PI_COMMAND_TYPE_MEM_BUFFER_UNMAP,
                c->nwait, c->wait, c->event, false, false,
                append_copy, &op, mp->staged ? mp->ptr : NULL);
  } else {
    r = enqueue(c->fn, c->queue, PI_COMMAND_TYPE_MEM_BUFFER_UNMAP,
                c->nwait, c->wait, c->event, false, false,
                append_barrier, NULL, mp->staged ? mp->ptr : NULL);
  }
  free(mp); /* the staging memory went to the command (freed on failure) */
  return r;
}

static pi_result append_image(const struct append *a, void *op) {
  struct image_op *i = op;
  if (i->image_to_image)
    return check_ze(a->fn, "zeCommandListAppendImageCopyRegion",
                    zeCommandListAppendImageCopyRegion(
                        a->list, i->image, i->src_image, &i->region,
                        &i->src_region, a->signal, a->nwait, a->wait));
  if (i->row || i->slice) {
    if (i->to_host)
      return check_ze(a->fn, "zeCommandListAppendImageCopyToMemoryExt",
                      zeCommandListAppendImageCopyToMemoryExt(
                          a->list, i->ptr, i->image, &i->region, i->row,
                          i->slice, a->signal, a->nwait, a->wait));
    return check_ze(a->fn, "zeCommandListAppendImageCopyFromMemoryExt",
                    zeCommandListAppendImageCopyFromMemoryExt(
                        a->list, i->image, i->ptr, &i->region, i->row,
                        i->slice, a->signal, a->nwait, a->wait));
  }
  if (i->to_host)
    return check_ze(a->fn, "zeCommandListAppendImageCopyToMemory",
                    zeCommandListAppendImageCopyToMemory(
                        a->list, i->ptr, i->image, &i->region, a->signal,
                        a->nwait, a->wait));
  return check_ze(a->fn, "zeCommandListAppendImageCopyFromMemory",
                  zeCommandListAppendImageCopyFromMemory(
                      a->list, i->image, i->ptr, &i->region, a->signal,
                      a->nwait, a->wait));
}

static pi_result image_region(const char *fn, pi_mem img, const size_t o[3],
                              const size_t r[3], ze_image_region_t *out) {
  if (!img || img->kind != MEM_IMAGE)
    return fail(PI_ERROR_INVALID_MEM_OBJECT, "%s: the memory object is no "
                "image", fn);
  const pi_image_desc *d = &img->desc;
  size_t dims[3] = {d->image_width, image_rows(d), image_slices(d)};
  for (int k = 0; k < 3; ++k)
    if (r[k] == 0 || o[k] > dims[k] || r[k] > dims[k] - o[k])
      return fail(PI_ERROR_INVALID_VALUE,
                  "%s: origin %zu,%zu,%zu region %zux%zux%zu is outside the "
                  "%zux%zux%zu image",
                  fn, o[0], o[1], o[2], r[0], r[1], r[2], dims[0], dims[1],
                  dims[2]);
  *out = (ze_image_region_t){(uint32_t)o[0], (uint32_t)o[1], (uint32_t)o[2],
                             (uint32_t)r[0], (uint32_t)r[1], (uint32_t)r[2]};
  return PI_SUCCESS;
}

pi_result backend_image_rw(const struct command *c, const struct image_rw *rw) {
  const char *fn = c->fn;
  pi_mem image = rw->image;
  if (!rw->origin || !rw->region || !rw->ptr)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: the origin, the region and ptr must not be NULL", fn);
  const size_t o[3] = XYZ(rw->origin, x, y, z);
  const size_t r3[3] = XYZ(rw->region, width, height, depth);
  size_t row_pitch = rw->row_pitch, slice_pitch = rw->slice_pitch;
  struct image_op op = {.ptr = rw->ptr, .to_host = rw->read};
  pi_result r = image_region(fn, image, o, r3, &op.region);
  if (r != PI_SUCCESS)
    return r;
  op.image = image->image;
  size_t packed = r3[0] * image->elem_size;
  if ((row_pitch && row_pitch != packed) ||
      (slice_pitch && slice_pitch != (row_pitch ? row_pitch : packed) * r3[1])) {
    if (!fits_u32(row_pitch) || !fits_u32(slice_pitch))
      return fail(PI_ERROR_INVALID_VALUE, "%s: pitches must fit 32 bits", fn);
    op.row = (uint32_t)(row_pitch ? row_pitch : packed);
    op.slice = (uint32_t)(slice_pitch ? slice_pitch : op.row * r3[1]);
  }
  return enqueue(fn, c->queue,
                 rw->read ? PI_COMMAND_TYPE_IMAGE_READ
                          : PI_COMMAND_TYPE_IMAGE_WRITE,
                 c->nwait, c->wait, c->event, rw->blocking, false,
                 append_image, &op, NULL);
}

pi_result backend_image_copy(const struct command *c, pi_mem src_image,
                             pi_mem dst_image, const struct copy_coords *cc) {
  const size_t *s = cc->src, *d = cc->dst, *r3 = cc->region;
  struct image_op op = {.image_to_image = true};
  pi_result r = image_region(c->fn, src_image, s, r3, &op.src_region);
  if (r == PI_SUCCESS)
    r = image_region(c->fn, dst_image, d, r3, &op.region);
  if (r != PI_SUCCESS)
    return r;
  if (src_image->elem_size != dst_image->elem_size)
    return fail(PI_ERROR_IMAGE_FORMAT_MISMATCH,
                "%s: the images' elements differ in size (%zu and %zu bytes)",
                c->fn, src_image->elem_size, dst_image->elem_size);
  op.image = dst_image->image;
  op.src_image = src_image->image;
  return enqueue(c->fn, c->queue, PI_COMMAND_TYPE_IMAGE_COPY,
                 c->nwait, c->wait, c->event, false, false,
                 append_image, &op, NULL);
}

pi_result backend_image_fill(const struct command *c, pi_mem image,
                             const void *fill_color, const size_t *origin,
                             const size_t *region) {
  (void)c->queue;
  (void)image;
  (void)fill_color;
  (void)origin;
  (void)region;
  (void)c->nwait;
  (void)c->wait;
  (void)c->event;
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: Level Zero has no image fill; write the color with "
              "piEnqueueMemImageWrite from a host buffer holding it",
              c->fn);
}
