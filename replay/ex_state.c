/*
 * ex_state.c: what a recording says a buffer holds at one moment.
 *
 * Every buffer is followed from its creation, byte by byte: creation
 * contents, writes, fills, copies, data written through a map, and reads
 * (a read shows what the buffer held) make bytes known; a kernel launch
 * makes every buffer bound to an argument it may write unknown (which
 * bytes a kernel writes is not recorded; which arguments it only reads,
 * ex_access.c finds in its source), as do writes whose data was not
 * recorded. Rectangle writes, reads and copies are followed row by row
 * (their origins, regions and pitches as OpenCL gives them). Bytes never written
 * are left as they are (uninitialised in the original run too). A read
 * after the launch cannot stand in for the moment before it: the launch
 * may have written the buffer.
 *
 * Images the same way, pixel by pixel: their creation's host data, image
 * writes and reads (any origin, region and pitches) make pixels known;
 * copies between images carry what is known of the source box; a fill is
 * known where the pixel is the fill color's words as given (32-bit
 * channels, R, RG or RGBA), unknown for other formats; launches make
 * them unknown. Their bytes are
 * kept packed (row after row, slice after slice), and the repro writes the
 * pixels the launch needs with image writes.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex.h"

static const pt_call *call_at(const ex *x, size_t i) { return &x->s->calls.v[i]; }

static ex_buffer *root_of(ex *x, uint64_t id)
{
  for (size_t k = 0; k < x->nbufs; k++)
    if (x->bufs[k].id == id)
      return &x->bufs[k];
  return NULL;
}

/* The root buffer and offset of bytes [off, off + n) of mem (a buffer or
 * a sub-buffer); NULL when not followed or out of its bounds. */
static ex_buffer *region(ex *x, uint64_t mem, uint64_t off, uint64_t n, uint64_t *root_off)
{
  for (size_t k = 0; k < x->nsubs; k++)
    if (x->subs[k].id == mem) {
      off += x->subs[k].origin;
      mem = x->subs[k].parent;
    }
  ex_buffer *b = root_of(x, mem);
  *root_off = off;
  return b && off <= b->size && n <= b->size - off ? b : NULL;
}

static void mark(ex_buffer *b, uint64_t off, uint64_t n, uint8_t st, const pt_call *c)
{
  memset(b->state + off, st, n);
  b->modified = true;
  if (st == EX_DEVICE || st == EX_UNRECORDED) {
    b->why_seq = c->seq;
    b->why_api = rp_api(c)->name;
  }
}

static void known(ex_buffer *b, uint64_t off, const unsigned char *d, uint64_t n, const pt_call *c)
{
  memcpy(b->data + off, d, n);
  mark(b, off, n, EX_KNOWN, c);
}

/* What a call's device work makes of the bytes it writes: computed by
 * the repro too when the call is one of its window's. */
static uint8_t computed(const ex *x) { return x->in_window ? EX_WINDOW : EX_DEVICE; }

/* After a copy the repro does not make: what the source held computed by
 * the window is, in the destination, computed by a call it does not make. */
static void not_copied(const ex *x, ex_buffer *b, size_t at, size_t n, const pt_call *c)
{
  if (x->in_window)
    return;
  for (size_t k = 0; k < n; k++)
    if (b->state[at + k] == EX_WINDOW)
      mark(b, at + k, 1, EX_DEVICE, c);
}

/* A copy: bytes [from, from + n) of src, and what is known of them, to
 * [to, to + n) of dst. */
static void carry(ex_buffer *dst, size_t to, const ex_buffer *src, size_t from, size_t n)
{
  memmove(dst->data + to, src->data + from, n);
  memmove(dst->state + to, src->state + from, n);
  dst->modified = true;
  if (src->why_seq) {
    dst->why_seq = src->why_seq;
    dst->why_api = src->why_api;
  }
}

/* A payload of call c as following needs it; while ex_slice finds which
 * buffers calls touch (x->shape_only), none is read: the bytes are not
 * looked at. */
static unsigned char *payload(ex *x, const pt_call *c, unsigned position, const char *role,
                              size_t *size, rp_data_status *st)
{
  if (x->shape_only) {
    *size = 0;
    *st = RP_DATA_ABSENT;
    return NULL;
  }
  return rp_payload(x->s, c, position, role, 0, size, st);
}

/* Bytes [off, off+n) of mem get payload (position, role) of call c, or
 * become unrecorded when it has none. */
static void from_payload(ex *x, const pt_call *c, uint64_t mem, uint64_t off, uint64_t n,
                         unsigned position, const char *role, bool required)
{
  uint64_t at;
  ex_buffer *b = region(x, mem, off, n, &at);
  if (!b)
    return;
  size_t size;
  rp_data_status st;
  unsigned char *d = payload(x, c, position, role, &size, &st);
  if (st == RP_DATA_MISSING_BLOB) /* a damaged file, not a choice made when recording */
    rp_payload_problem(x->s, c, position, role, st, x->err, sizeof x->err);
  if (d && size >= n)
    known(b, at, d, n, c);
  else if (required)
    mark(b, at, n, EX_UNRECORDED, c);
  free(d);
}

static bool create(ex *x, const pt_call *c)
{
  ex_buffer b = {.id = (uint64_t)rp_arg_int(c, 4, 0), .size = (size_t)rp_arg_int(c, 2, 0)};
  b.data = calloc(1, b.size ? b.size : 1);
  b.state = calloc(1, b.size ? b.size : 1);
  if (!b.data || !b.state || !rp_push(&x->bufs, &x->nbufs, &x->cap_bufs, sizeof b, &b)) {
    free(b.data);
    free(b.state);
    return ex_fail(x, "out of memory following buffer mem#%llu", (unsigned long long)b.id);
  }
  if (rp_arg_int(c, 1, 0) & (PI_MEM_FLAGS_HOST_PTR_COPY | PI_MEM_FLAGS_HOST_PTR_USE)) {
    from_payload(x, c, b.id, 0, b.size, 3, "in", true);
    x->bufs[x->nbufs - 1].modified = false;
  }
  return true;
}

/* An image's extent as (width, rows, slices) from its descriptor
 * [type, width, height, depth, array size, ...]: a 1D image array's images
 * are slices of one row (its transfers' origin[1] names the image). */
static void image_extent(const pt_json *desc, size_t *w, size_t *h, size_t *d, bool *array1d)
{
  int64_t type = pt_json_int(pt_json_at(desc, 0), 0);
  size_t width = (size_t)pt_json_int(pt_json_at(desc, 1), 0);
  size_t height = (size_t)pt_json_int(pt_json_at(desc, 2), 0);
  size_t depth = (size_t)pt_json_int(pt_json_at(desc, 3), 0);
  size_t layers = (size_t)pt_json_int(pt_json_at(desc, 4), 0);
  *array1d = type == PI_MEM_TYPE_IMAGE1D_ARRAY;
  *w = width;
  *h = type == PI_MEM_TYPE_IMAGE2D || type == PI_MEM_TYPE_IMAGE3D ||
       type == PI_MEM_TYPE_IMAGE2D_ARRAY ? height : 1;
  *d = type == PI_MEM_TYPE_IMAGE3D ? depth
       : type == PI_MEM_TYPE_IMAGE2D_ARRAY || *array1d ? layers : 1;
  if (!*h)
    *h = 1;
  if (!*d)
    *d = 1;
}

/* A box of image b as a call gives it (origin o, region r), in the
 * image's own terms: a 1D image array's o[1] and r[1] count images, its
 * slices here. False when the box is empty or not inside the image. */
static bool image_box_of(const ex_buffer *b, size_t o[3], size_t r[3])
{
  if (b->array1d) {
    o[2] = o[1], r[2] = r[1];
    o[1] = 0, r[1] = 1;
  }
  return r[0] && r[1] && r[2] && o[0] <= b->w && r[0] <= b->w - o[0] && o[1] <= b->h &&
         r[1] <= b->h - o[1] && o[2] <= b->d && r[2] <= b->d - o[2];
}

/* Where row j of box (o, r) of image b begins, in its packed bytes (the
 * box's rows counted row after row, slice after slice). */
static size_t box_row_at(const ex_buffer *b, const size_t o[3], const size_t r[3], size_t j)
{
  return (((o[2] + j / r[1]) * b->h + o[1] + j % r[1]) * b->w + o[0]) * b->es;
}

/* A rectangle (origin o, region r: bytes, rows, slices) of memory laid
 * out with row pitch *rp and slice pitch *sp (0: packed; set to the
 * pitches used), as OpenCL's rectangle transfers give them. False when it
 * is empty, a pitch is smaller than OpenCL allows, or its last byte lies
 * past `size` bytes: a damaged session's numbers read and write nothing
 * outside what is there. */
static bool rect_layout(const size_t o[3], const size_t r[3], size_t *rp, size_t *sp, size_t size)
{
  if (!r[0] || !r[1] || !r[2])
    return false;
  if (!*rp)
    *rp = r[0];
  size_t rows, a, b, end;
  if (*rp < r[0] || __builtin_mul_overflow(*rp, r[1], &rows))
    return false;
  if (!*sp)
    *sp = rows;
  /* The last row of the last slice ends at
   * (o2 + r2 - 1) * sp + (o1 + r1 - 1) * rp + o0 + r0. */
  return *sp >= rows && !__builtin_add_overflow(o[2], r[2] - 1, &a) &&
         !__builtin_mul_overflow(a, *sp, &a) && !__builtin_add_overflow(o[1], r[1] - 1, &b) &&
         !__builtin_mul_overflow(b, *rp, &b) && !__builtin_add_overflow(a, b, &end) &&
         !__builtin_add_overflow(end, o[0], &end) && !__builtin_add_overflow(end, r[0], &end) &&
         end <= size;
}

/* Where row j of a rectangle rect_layout accepted begins (its rows
 * counted row after row, slice after slice). */
static size_t rect_row_at(const size_t o[3], const size_t r[3], size_t rp, size_t sp, size_t j)
{
  return (o[2] + j / r[1]) * sp + (o[1] + j % r[1]) * rp + o[0];
}

/* A transfer's box of image b and its host layout, checked: origin o and
 * region r as the transfer gives them (for a 1D image array o[1] and r[1]
 * count images, the row pitch apart, as PoCL and Mesa read them; they
 * become slices here), row pitch *rp and slice pitch *sp (0: packed; set
 * to the pitches used). False when the box is empty or outside the image,
 * a pitch is too small, or host_size bytes are fewer than the layout
 * needs: a damaged session's numbers read nothing outside the recorded
 * bytes. */
static bool box_layout(const ex_buffer *b, size_t o[3], size_t r[3], size_t *rp, size_t *sp,
                       size_t host_size)
{
  if (b->array1d) {
    *sp = *rp;
    *rp = 0;
  }
  if (!image_box_of(b, o, r))
    return false;
  /* The host bytes: a rectangle of the box's rows from the first byte. */
  const size_t at[3] = {0, 0, 0}, bytes[3] = {r[0] * b->es, r[1], r[2]}; /* within the image */
  return rect_layout(at, bytes, rp, sp, host_size);
}

/* Pixels [o, o + r) of image b from host bytes laid out with row pitch rp
 * and slice pitch sp (0: packed), now known (box_layout says which);
 * false when box_layout refuses them. */
static bool image_box(ex_buffer *b, size_t o[3], size_t r[3], size_t rp, size_t sp,
                      const unsigned char *host, size_t host_size, const pt_call *c)
{
  if (!box_layout(b, o, r, &rp, &sp, host_size))
    return false;
  for (size_t j = 0; j < r[1] * r[2]; j++)
    known(b, box_row_at(b, o, r, j), host + j / r[1] * sp + j % r[1] * rp, r[0] * b->es, c);
  return true;
}

static bool create_image(ex *x, const pt_call *c)
{
  const pt_json *fmt = pt_json_at(c->args, 2), *desc = pt_json_at(c->args, 3);
  ex_buffer b = {.id = (uint64_t)rp_arg_int(c, 5, 0),
                 .order = (uint32_t)pt_json_int(pt_json_at(fmt, 0), 0),
                 .type = (uint32_t)pt_json_int(pt_json_at(fmt, 1), 0)};
  b.es = pi_image_element_size(b.order, b.type);
  image_extent(desc, &b.w, &b.h, &b.d, &b.array1d);
  if (!b.es || !b.w || b.w > SIZE_MAX / b.es / b.h / b.d)
    return true; /* a format this table does not know: not followed (a launch using it is refused) */
  b.size = b.w * b.h * b.d * b.es;
  b.data = calloc(1, b.size);
  b.state = calloc(1, b.size);
  if (!b.data || !b.state || !rp_push(&x->bufs, &x->nbufs, &x->cap_bufs, sizeof b, &b)) {
    free(b.data);
    free(b.state);
    return ex_fail(x, "out of memory following image mem#%llu", (unsigned long long)b.id);
  }
  if (rp_arg_int(c, 1, 0) & (PI_MEM_FLAGS_HOST_PTR_COPY | PI_MEM_FLAGS_HOST_PTR_USE)) {
    ex_buffer *im = &x->bufs[x->nbufs - 1];
    size_t size;
    rp_data_status st;
    unsigned char *d = payload(x, c, 4, "in", &size, &st);
    size_t o[3] = {0, 0, 0},
           r[3] = {im->w, im->array1d ? im->d : im->h, im->array1d ? 1 : im->d};
    if (st == RP_DATA_MISSING_BLOB)
      rp_payload_problem(x->s, c, 4, "in", st, x->err, sizeof x->err);
    size_t rp = (size_t)pt_json_int(pt_json_at(desc, 5), 0);
    size_t sp = (size_t)pt_json_int(pt_json_at(desc, 6), 0);
    if (im->array1d) /* its images the slice pitch apart, by default the row pitch */
      rp = sp ? sp : rp;
    if (!d || !image_box(im, o, r, rp, sp, d, size, c))
      mark(im, 0, im->size, EX_UNRECORDED, c);
    im->modified = false; /* the repro's own creation gives these contents */
    free(d);
  }
  return true;
}

/* The image mem names; NULL when not followed (or a buffer). */
static ex_buffer *image_of(ex *x, uint64_t mem)
{
  ex_buffer *b = root_of(x, mem);
  return b && b->es ? b : NULL;
}

static void triple(const pt_json *j, size_t v[3])
{
  for (size_t k = 0; k < 3; k++)
    v[k] = (size_t)pt_json_int(pt_json_at(j, k), 0);
}

/* piEnqueueMemImageWrite / Read (args: queue, image, blocking, origin,
 * region, row pitch, slice pitch, ptr): the pixels they moved become
 * known; a write without its data makes them unrecorded. */
static void image_transfer(ex *x, const pt_call *c, bool write)
{
  ex_buffer *b = image_of(x, (uint64_t)rp_arg_int(c, 1, 0));
  if (!b)
    return;
  size_t o[3], r[3], size = 0;
  triple(pt_json_at(c->args, 3), o);
  triple(pt_json_at(c->args, 4), r);
  rp_data_status st;
  const char *role = write ? "in" : rp_arg_int(c, 2, 1) ? "out" : "readback";
  unsigned char *d = payload(x, c, 7, role, &size, &st);
  if (st == RP_DATA_MISSING_BLOB)
    rp_payload_problem(x->s, c, 7, role, st, x->err, sizeof x->err);
  size_t rp = (size_t)rp_arg_int(c, 5, 0), sp = (size_t)rp_arg_int(c, 6, 0);
  if (!d) {
    if (write) /* the pixels it wrote, unrecorded (the whole image: simpler, as safe) */
      mark(b, 0, b->size, EX_UNRECORDED, c);
  } else if (!image_box(b, o, r, rp, sp, d, size, c) && write && !x->err[0]) {
    ex_fail(x, "seq %lld %s: its origin, region and pitches do not fit image mem#%llu and the "
            "%zu bytes recorded (the recording may be damaged): cannot extract",
            (long long)c->seq, rp_api(c)->name, (unsigned long long)b->id, size);
  }
  free(d);
}

/* A whole buffer changed in a way not followed: a sub-buffer's region of
 * its parent only (a kernel writes no byte outside the buffer it is given). */
static void whole(ex *x, const pt_call *c, uint64_t mem)
{
  uint64_t at, size = 0;
  for (size_t k = 0; k < x->nsubs; k++)
    if (x->subs[k].id == mem)
      size = x->subs[k].size;
  ex_buffer *b = region(x, mem, 0, size, &at);
  if (b)
    mark(b, at, size ? size : b->size, computed(x), c);
}

/* piEnqueueMemImageCopy (args: queue, src, dst, src origin, dst origin,
 * region): the destination box gets the source box's pixels and what is
 * known of them, row j of one to row j of the other (the images may be of
 * different types; they share a format, OpenCL's rule). From an image not
 * followed, or a box that does not fit, the destination is made on the
 * device. */
static void image_copy(ex *x, const pt_call *c)
{
  uint64_t dmem = (uint64_t)rp_arg_int(c, 2, 0);
  ex_buffer *src = image_of(x, (uint64_t)rp_arg_int(c, 1, 0)), *dst = image_of(x, dmem);
  if (!dst) {
    whole(x, c, dmem); /* a buffer (not an image copy), or not followed */
    return;
  }
  size_t so[3], dof[3], rs[3], rd[3];
  triple(pt_json_at(c->args, 3), so);
  triple(pt_json_at(c->args, 4), dof);
  triple(pt_json_at(c->args, 5), rs);
  memcpy(rd, rs, sizeof rd);
  if (!src || src->es != dst->es || !image_box_of(src, so, rs) || !image_box_of(dst, dof, rd) ||
      rs[0] != rd[0] || rs[1] * rs[2] != rd[1] * rd[2]) {
    mark(dst, 0, dst->size, computed(x), c);
    return;
  }
  for (size_t j = 0; j < rs[1] * rs[2]; j++) {
    size_t at = box_row_at(dst, dof, rd, j);
    carry(dst, at, src, box_row_at(src, so, rs, j), rs[0] * src->es);
    not_copied(x, dst, at, rs[0] * src->es, c);
  }
}

/* How many of a fill color's four words an image's pixel is, where that
 * is all a fill does: 32-bit channels (float, signed or unsigned integer)
 * in order R, RG or RGBA. 0: a format whose fill converts the color
 * (normalizing, rounding, packing, reordering), not followed. */
static size_t fill_words(const ex_buffer *b)
{
  if (b->type != PI_IMAGE_CHANNEL_TYPE_FLOAT && b->type != PI_IMAGE_CHANNEL_TYPE_SIGNED_INT32 &&
      b->type != PI_IMAGE_CHANNEL_TYPE_UNSIGNED_INT32)
    return 0;
  switch (b->order) {
  case PI_IMAGE_CHANNEL_ORDER_R: return 1;
  case PI_IMAGE_CHANNEL_ORDER_RG: return 2;
  case PI_IMAGE_CHANNEL_ORDER_RGBA: return 4;
  default: return 0;
  }
}

/* piEnqueueMemImageFill (args: queue, image, fill color, origin, region):
 * the box's pixels become the color where fill_words knows the format;
 * otherwise (or without the color's bytes) the box is made on the device,
 * or unrecorded. */
static void image_fill(ex *x, const pt_call *c)
{
  ex_buffer *b = image_of(x, (uint64_t)rp_arg_int(c, 1, 0));
  if (!b)
    return;
  size_t o[3], r[3], size = 0, words = fill_words(b);
  triple(pt_json_at(c->args, 3), o);
  triple(pt_json_at(c->args, 4), r);
  if (!words || !image_box_of(b, o, r)) {
    mark(b, 0, b->size, EX_DEVICE, c);
    return;
  }
  rp_data_status st;
  unsigned char *color = payload(x, c, 2, "in", &size, &st);
  if (!color || size < words * 4) {
    mark(b, 0, b->size, EX_UNRECORDED, c);
    free(color);
    return;
  }
  for (size_t j = 0; j < r[1] * r[2]; j++) {
    size_t at = box_row_at(b, o, r, j);
    for (size_t k = 0; k < r[0]; k++)
      known(b, at + k * b->es, color, b->es, c);
  }
  free(color);
}

/* A rectangle transfer's buffer and its box (positions 1, 3, 5, 6, 7 of
 * piEnqueueMemBufferReadRect and WriteRect: buffer, buffer origin,
 * region, buffer pitches), checked against the buffer; its root and the
 * buffer's offset in it into *base. NULL when the buffer is not followed
 * or the box does not fit it. */
static ex_buffer *rect_buffer(ex *x, const pt_call *c, size_t o[3], size_t r[3], size_t *rp,
                              size_t *sp, uint64_t *base)
{
  ex_buffer *b = region(x, (uint64_t)rp_arg_int(c, 1, 0), 0, 0, base);
  triple(pt_json_at(c->args, 3), o);
  triple(pt_json_at(c->args, 5), r);
  *rp = (size_t)rp_arg_int(c, 6, 0);
  *sp = (size_t)rp_arg_int(c, 7, 0);
  return b && !b->es && rect_layout(o, r, rp, sp, b->size - *base) ? b : NULL;
}

/* The host bytes of a rectangle transfer (position 10, in `role`) and
 * their layout (positions 4, 8, 9: host origin and pitches), checked
 * against the bytes recorded; NULL when none were recorded or they do not
 * hold the rectangle. */
static unsigned char *rect_host(ex *x, const pt_call *c, const char *role, const size_t r[3],
                                size_t ho[3], size_t *hrp, size_t *hsp)
{
  size_t size = 0;
  rp_data_status st;
  unsigned char *d = payload(x, c, 10, role, &size, &st);
  if (st == RP_DATA_MISSING_BLOB)
    rp_payload_problem(x->s, c, 10, role, st, x->err, sizeof x->err);
  triple(pt_json_at(c->args, 4), ho);
  *hrp = (size_t)rp_arg_int(c, 8, 0);
  *hsp = (size_t)rp_arg_int(c, 9, 0);
  if (d && !rect_layout(ho, r, hrp, hsp, size)) {
    free(d);
    d = NULL;
  }
  return d;
}

/* piEnqueueMemBufferWriteRect / ReadRect: the rows they moved become
 * known; a write without its data makes them unrecorded, one whose box
 * does not fit its buffer makes the buffer made on the device. */
static void rect_transfer(ex *x, const pt_call *c, bool write)
{
  size_t o[3], r[3], ho[3], rp, sp, hrp, hsp;
  uint64_t base;
  ex_buffer *b = rect_buffer(x, c, o, r, &rp, &sp, &base);
  if (!b) {
    if (write)
      whole(x, c, (uint64_t)rp_arg_int(c, 1, 0));
    return;
  }
  const char *role = write ? "in" : rp_arg_int(c, 2, 1) ? "out" : "readback";
  unsigned char *d = rect_host(x, c, role, r, ho, &hrp, &hsp);
  for (size_t j = 0; j < r[1] * r[2] && (d || write); j++) {
    size_t at = base + rect_row_at(o, r, rp, sp, j);
    if (d)
      known(b, at, d + rect_row_at(ho, r, hrp, hsp, j), r[0], c);
    else
      mark(b, at, r[0], EX_UNRECORDED, c);
  }
  free(d);
}

/* piEnqueueMemBufferCopyRect (args: queue, src, dst, src origin, dst
 * origin, region, src pitches, dst pitches): each row of the destination
 * box gets the source row and what is known of it; from a buffer not
 * followed, or a box that does not fit, the destination is made on the
 * device. */
static void copy_rect(ex *x, const pt_call *c)
{
  uint64_t sb, db, dmem = (uint64_t)rp_arg_int(c, 2, 0);
  ex_buffer *src = region(x, (uint64_t)rp_arg_int(c, 1, 0), 0, 0, &sb);
  ex_buffer *dst = region(x, dmem, 0, 0, &db);
  size_t so[3], dof[3], r[3], srp = (size_t)rp_arg_int(c, 6, 0), ssp = (size_t)rp_arg_int(c, 7, 0),
         drp = (size_t)rp_arg_int(c, 8, 0), dsp = (size_t)rp_arg_int(c, 9, 0);
  triple(pt_json_at(c->args, 3), so);
  triple(pt_json_at(c->args, 4), dof);
  triple(pt_json_at(c->args, 5), r);
  if (!dst || dst->es || !rect_layout(dof, r, &drp, &dsp, dst->size - db)) {
    whole(x, c, dmem);
    return;
  }
  bool from = src && !src->es && rect_layout(so, r, &srp, &ssp, src->size - sb);
  for (size_t j = 0; j < r[1] * r[2]; j++) {
    size_t at = db + rect_row_at(dof, r, drp, dsp, j);
    if (!from) {
      mark(dst, at, r[0], computed(x), c);
      continue;
    }
    carry(dst, at, src, sb + rect_row_at(so, r, srp, ssp, j), r[0]);
    not_copied(x, dst, at, r[0], c);
  }
}

static bool partition(ex *x, const pt_call *c)
{
  const pt_json *info = pt_json_at(c->args, 3);
  ex_sub s = {(uint64_t)rp_arg_int(c, 4, 0), (uint64_t)rp_arg_int(c, 0, 0),
              (uint64_t)pt_json_int(pt_json_at(info, 0), 0),
              (uint64_t)pt_json_int(pt_json_at(info, 1), 0)};
  return rp_push(&x->subs, &x->nsubs, &x->cap_subs, sizeof s, &s) ||
         ex_fail(x, "out of memory");
}

static void fill(ex *x, const pt_call *c)
{
  uint64_t at, n = (uint64_t)rp_arg_int(c, 5, 0), psize = (uint64_t)rp_arg_int(c, 3, 0);
  ex_buffer *b = region(x, (uint64_t)rp_arg_int(c, 1, 0), (uint64_t)rp_arg_int(c, 4, 0), n, &at);
  size_t size;
  rp_data_status st;
  unsigned char *pat = b ? payload(x, c, 2, "in", &size, &st) : NULL;
  if (b && pat && psize && size >= psize) {
    for (uint64_t k = 0; k < n; k++)
      b->data[at + k] = pat[k % psize];
    mark(b, at, n, EX_KNOWN, c);
  } else if (b) {
    mark(b, at, n, EX_UNRECORDED, c);
  }
  free(pat);
}

static void copy(ex *x, const pt_call *c)
{
  uint64_t n = (uint64_t)rp_arg_int(c, 5, 0), so, dof;
  ex_buffer *src = region(x, (uint64_t)rp_arg_int(c, 1, 0), (uint64_t)rp_arg_int(c, 3, 0), n, &so);
  ex_buffer *dst = region(x, (uint64_t)rp_arg_int(c, 2, 0), (uint64_t)rp_arg_int(c, 4, 0), n, &dof);
  if (!dst)
    return;
  if (!src) {
    mark(dst, dof, n, computed(x), c);
    return;
  }
  carry(dst, dof, src, so, n);
  not_copied(x, dst, dof, n, c);
}


static void bind_arg(ex *x, const pt_call *c, uint64_t mem)
{
  ex_karg a = {(uint64_t)rp_arg_int(c, 0, 0), mem, (uint32_t)rp_arg_int(c, 1, 0)};
  for (size_t k = 0; k < x->nkargs; k++)
    if (x->kargs[k].kernel == a.kernel && x->kargs[k].index == a.index) {
      x->kargs[k].mem = mem;
      return;
    }
  rp_push(&x->kargs, &x->nkargs, &x->cap_kargs, sizeof a, &a);
}

/* The mem objects bound to kernel k's arguments now; `written`: only
 * those it may write (ex_access.c: not those its source declares it only
 * reads). */
static size_t kernel_mems(ex *x, uint64_t kernel, bool written, uint64_t *mems, size_t max)
{
  size_t n = 0;
  for (size_t k = 0; k < x->nkargs && n < max; k++)
    if (x->kargs[k].kernel == kernel && x->kargs[k].mem &&
        !(written && ex_read_only(x, kernel, x->kargs[k].index)))
      mems[n++] = x->kargs[k].mem;
  return n;
}

static void launch(ex *x, const pt_call *c)
{
  uint64_t mems[256];
  size_t n = kernel_mems(x, (uint64_t)rp_arg_int(c, 1, 0), true, mems, 256);
  for (size_t k = 0; k < n; k++)
    whole(x, c, mems[k]);
}

static void map(ex *x, const pt_call *c)
{
  ex_map m = {pt_ref_of(pt_json_at(c->args, 9)).id, (uint64_t)rp_arg_int(c, 1, 0),
              (uint64_t)rp_arg_int(c, 4, 0), (uint64_t)rp_arg_int(c, 5, 0),
              (uint64_t)rp_arg_int(c, 3, 0)};
  rp_push(&x->maps, &x->nmaps, &x->cap_maps, sizeof m, &m);
  if (m.flags & PI_MAP_READ)
    from_payload(x, c, m.mem, m.offset, m.size, 9, "out", false);
}

static void unmap(ex *x, const pt_call *c)
{
  uint64_t id = pt_ref_of(pt_json_at(c->args, 2)).id;
  for (size_t k = 0; k < x->nmaps; k++)
    if (x->maps[k].id == id && (x->maps[k].flags & (PI_MAP_WRITE | PI_MAP_WRITE_INVALIDATE_REGION)))
      from_payload(x, c, x->maps[k].mem, x->maps[k].offset, x->maps[k].size, 2, "in", true);
}

/* A read shows what the buffer held (when its data was recorded). */
static void read_back(ex *x, const pt_call *c)
{
  bool blocking = rp_arg_int(c, 2, 1) != 0;
  from_payload(x, c, (uint64_t)rp_arg_int(c, 1, 0), (uint64_t)rp_arg_int(c, 3, 0),
               (uint64_t)rp_arg_int(c, 4, 0), 5, blocking ? "out" : "readback", false);
}

static bool follow(ex *x, const pt_call *c)
{
  unsigned flags = pi_api_flags(c->api);
  if (flags & PI_API_F_LAUNCH) {
    launch(x, c);
    return true;
  }
  if (flags & PI_API_F_SETS_ARG) { /* a memory object argument binds that object */
    bind_arg(x, c, c->api == PI_API_piextKernelSetArgMemObj
                       ? (uint64_t)pt_json_int(pt_json_at(pt_json_at(c->args, 3), 0), 0)
                       : 0);
    return true;
  }
  switch (c->api) {
  case PI_API_piMemBufferCreate: return create(x, c);
  case PI_API_piMemBufferPartition: return partition(x, c);
  case PI_API_piEnqueueMemBufferWrite:
    from_payload(x, c, (uint64_t)rp_arg_int(c, 1, 0), (uint64_t)rp_arg_int(c, 3, 0),
                 (uint64_t)rp_arg_int(c, 4, 0), 5, "in", true);
    return true;
  case PI_API_piEnqueueMemBufferFill: fill(x, c); return true;
  case PI_API_piEnqueueMemBufferCopy: copy(x, c); return true;
  case PI_API_piEnqueueMemBufferWriteRect: rect_transfer(x, c, true); return true;
  case PI_API_piEnqueueMemBufferCopyRect: copy_rect(x, c); return true;
  case PI_API_piEnqueueMemBufferRead: read_back(x, c); return true;
  case PI_API_piEnqueueMemBufferReadRect: rect_transfer(x, c, false); return true;
  case PI_API_piEnqueueMemBufferMap: map(x, c); return true;
  case PI_API_piEnqueueMemUnmap: unmap(x, c); return true;
  case PI_API_piMemImageCreate: return create_image(x, c);
  case PI_API_piEnqueueMemImageWrite: image_transfer(x, c, true); return true;
  case PI_API_piEnqueueMemImageRead: image_transfer(x, c, false); return true;
  case PI_API_piEnqueueMemImageCopy: image_copy(x, c); return true;
  case PI_API_piEnqueueMemImageFill: image_fill(x, c); return true;
  default:
    return true;
  }
}

/* The index of the call of a seq (calls are in seq order); calls.n when
 * there is none. */
static size_t index_of_seq(const ex *x, int64_t seq)
{
  size_t lo = 0, hi = x->s->calls.n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (call_at(x, mid)->seq < seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < x->s->calls.n && call_at(x, lo)->seq == seq ? lo : x->s->calls.n;
}

/* Fails unless every byte the window's launch l reads through argument
 * `index` (mem) is known, unset, or computed by the window; for want of
 * what a launch before the window computed, x->widen names that launch. */
static bool check_known(ex *x, const pt_call *l, uint64_t mem, unsigned index)
{
  uint64_t at, size = 0;
  for (size_t k = 0; k < x->nsubs; k++)
    if (x->subs[k].id == mem)
      size = x->subs[k].size;
  ex_buffer *b = region(x, mem, 0, size, &at);
  if (!b)
    return ex_fail(x, "kernel argument %u is mem#%llu, which extract did not follow (made from "
                   "a native handle, or an image of a format it does not know): cannot extract",
                   index,
                   (unsigned long long)mem);
  if (!size)
    size = b->size;
  for (uint64_t k = 0; k < size; k++) {
    uint8_t st = b->state[at + k];
    if (st == EX_DEVICE) {
      size_t w = index_of_seq(x, b->why_seq);
      bool launch = w < x->from && ex_is_launch(call_at(x, w)->api);
      char hint[160] = "extract an earlier launch, or record the application reading it back";
      if (launch) {
        snprintf(hint, sizeof hint, "extract it with the launches that computed it (--inputs, or "
                 "--from %d), or record the application reading it back", ex_launch_number(x, w));
        x->widen = w + 1;
      }
      return ex_fail(x, "kernel argument %u (mem#%llu) holds data computed on the device by seq "
                     "%lld %s, and the recording has no read of it between then and the launch "
                     "(seq %lld): its contents at the launch cannot be derived; %s",
                     index, (unsigned long long)mem, (long long)b->why_seq, b->why_api,
                     (long long)l->seq, hint);
    }
    if (st == EX_UNRECORDED)
      return ex_fail(x, "kernel argument %u (mem#%llu) was written by seq %lld %s, whose data "
                     "was not recorded whole (SYCL_PI_RECORD_DATA, SYCL_PI_RECORD_DATA_CAP, or its "
                     "data stopped on a full disk): its contents at the launch cannot be "
                     "derived", index, (unsigned long long)mem, (long long)b->why_seq,
                     b->why_api);
  }
  return true;
}

/* The program kernel k was made from (0 if not seen). */
static uint64_t program_of(const ex *x, uint64_t k)
{
  for (size_t i = 0; i < x->launch; i++) {
    const pt_call *c = call_at(x, i);
    if (c->api == PI_API_piKernelCreate && (uint64_t)rp_arg_int(c, 2, 0) == k)
      return (uint64_t)rp_arg_int(c, 0, 0);
  }
  return 0;
}

/* The distinct root buffers bound to kernel `kernel` now (`written`: as
 * kernel_mems). */
static size_t kernel_roots(ex *x, uint64_t kernel, bool written, ex_buffer **roots, size_t max)
{
  uint64_t mems[256], at;
  size_t n = kernel_mems(x, kernel, written, mems, 256), k = 0;
  for (size_t m = 0; m < n && k < max; m++) {
    ex_buffer *b = region(x, mems[m], 0, 0, &at);
    bool seen = false;
    for (size_t j = 0; j < k; j++)
      seen |= roots[j] == b;
    if (b && !seen)
      roots[k++] = b;
  }
  return k;
}

static bool is_copy(uint32_t api)
{
  return api == PI_API_piEnqueueMemBufferCopy || api == PI_API_piEnqueueMemBufferCopyRect ||
         api == PI_API_piEnqueueMemImageCopy;
}

/* The root buffers (ids) one call of the window's range touches, those
 * it may write first (nw of them): a launch's bound ones, a copy's
 * destination then its source. */
typedef struct touch {
  size_t call, at, n, nw;
} touch;

/* Adds id to v unless it is among v[from..]. */
static bool add_id(uint64_t **v, size_t *n, size_t *cap, uint64_t id, size_t from)
{
  for (size_t k = from; k < *n; k++)
    if ((*v)[k] == id)
      return true;
  return rp_push(v, n, cap, sizeof id, &id);
}

static bool after_launch(ex *x, bool emitting);

bool ex_slice(ex *x)
{
  memset(x->win, 0, x->s->calls.n);
  x->shape_only = true;
  touch *t = NULL;
  uint64_t *ids = NULL, *need = NULL;
  size_t nt = 0, ct = 0, nids = 0, cids = 0, nneed = 0, cneed = 0;
  bool ok = true;
  /* Forward: the buffers each launch and copy from `from` on touches. */
  for (size_t i = 0; ok && i < x->launch; i++) {
    const pt_call *c = call_at(x, i);
    if (!rp_call_ok(c))
      continue;
    bool launch = ex_is_launch(c->api);
    if (i >= x->from && (launch || is_copy(c->api))) {
      touch e = {i, nids, 0, 0};
      uint64_t at;
      if (launch) { /* the written ones, then the others */
        uint64_t kernel = (uint64_t)rp_arg_int(c, 1, 0);
        ex_buffer *roots[2][256];
        size_t nw = kernel_roots(x, kernel, true, roots[0], 256),
               na = kernel_roots(x, kernel, false, roots[1], 256);
        for (size_t k = 0; ok && k < nw; k++)
          ok = rp_push(&ids, &nids, &cids, sizeof roots[0][k]->id, &roots[0][k]->id);
        e.nw = nids - e.at;
        for (size_t k = 0; ok && k < na; k++)
          ok = add_id(&ids, &nids, &cids, roots[1][k]->id, e.at);
      } else {
        ex_buffer *d = region(x, (uint64_t)rp_arg_int(c, 2, 0), 0, 0, &at);
        ex_buffer *s = region(x, (uint64_t)rp_arg_int(c, 1, 0), 0, 0, &at);
        if (d && s)
          ok = rp_push(&ids, &nids, &cids, sizeof d->id, &d->id) &&
               rp_push(&ids, &nids, &cids, sizeof s->id, &s->id);
        e.nw = 1;
      }
      e.n = nids - e.at;
      ok = ok && (!e.n || rp_push(&t, &nt, &ct, sizeof e, &e));
    }
    ok = ok && follow(x, c) && !x->err[0];
  }
  /* Backward from the launch: a launch that may write a buffer a later
   * call of the window needs is in it, and so are all its buffers; a copy
   * into one is, and so is its source. */
  x->kernel = (uint64_t)rp_arg_int(call_at(x, x->launch), 1, 0);
  ex_buffer *roots[256];
  size_t n = ok ? kernel_roots(x, x->kernel, false, roots, 256) : 0;
  for (size_t k = 0; ok && k < n; k++)
    ok = add_id(&need, &nneed, &cneed, roots[k]->id, 0);
  for (size_t e = nt; ok && e-- > 0;) {
    bool in = false;
    for (size_t k = 0; k < t[e].nw && !in; k++)
      for (size_t j = 0; j < nneed && !in; j++)
        in = need[j] == ids[t[e].at + k];
    if (!in)
      continue;
    x->win[t[e].call] = 1;
    for (size_t k = 0; ok && k < t[e].n; k++)
      ok = add_id(&need, &nneed, &cneed, ids[t[e].at + k], 0);
  }
  free(t);
  free(ids);
  free(need);
  ok = ok && after_launch(x, false);
  x->shape_only = false;
  ex_state_free(x);
  return ok || (x->err[0] ? false : ex_fail(x, "out of memory"));
}

static bool emit(ex *x, uint32_t api, char *args, unsigned pos, const char *role,
                 const unsigned char *d, size_t n, int64_t start)
{
  ex_call c = {.api = api, .args = args, .data_pos = pos, .data_role = role,
               .data_size = n, .start_ns = start};
  if (d && !(c.data = malloc(n ? n : 1))) {
    free(args);
    return ex_fail(x, "out of memory");
  }
  if (d)
    memcpy(c.data, d, n);
  if (!args || !rp_push(&x->out, &x->nout, &x->cap_out, sizeof c, &c)) {
    free(args);
    free(c.data);
    return ex_fail(x, "out of memory");
  }
  return true;
}

/* A blocking write or read of bytes [off, off+n) of buffer b on the
 * launch's queue. */
static bool emit_transfer(ex *x, uint32_t api, const ex_buffer *b, uint64_t off, uint64_t n,
                          const unsigned char *d, int64_t start)
{
  char *args = NULL;
  if (asprintf(&args, "[%llu,%llu,1,%llu,%llu,%s,0,null,null]", (unsigned long long)x->queue,
               (unsigned long long)b->id, (unsigned long long)off, (unsigned long long)n,
               api == PI_API_piEnqueueMemBufferWrite ? "1" : "null") < 0)
    args = NULL;
  return emit(x, api, args, 5, api == PI_API_piEnqueueMemBufferWrite ? "in" : "out", d, n, start);
}

/* A blocking image write or read on the launch's queue of box [o, o + r)
 * (a 1D image array's as its transfers name it), its host bytes packed. */
static bool emit_image_transfer(ex *x, uint32_t api, const ex_buffer *b, const size_t o[3],
                                const size_t r[3], size_t rp, size_t sp, const unsigned char *d,
                                size_t n, int64_t start)
{
  char *args = NULL;
  if (asprintf(&args, "[%llu,%llu,1,[%zu,%zu,%zu],[%zu,%zu,%zu],%zu,%zu,%s,0,null,null]",
               (unsigned long long)x->queue, (unsigned long long)b->id, o[0], o[1], o[2], r[0],
               r[1], r[2], rp, sp, api == PI_API_piEnqueueMemImageWrite ? "1" : "null") < 0)
    args = NULL;
  return emit(x, api, args, 7, api == PI_API_piEnqueueMemImageWrite ? "in" : "out", d, n, start);
}

/* Whether every byte of b in [at, at + n) is known. */
static bool all_known(const ex_buffer *b, size_t at, size_t n)
{
  for (size_t k = 0; k < n; k++)
    if (b->state[at + k] != EX_KNOWN)
      return false;
  return true;
}

/* The known pixels of image b as image writes: the whole image at once
 * when every pixel is known, else per slice each band of whole rows
 * known at once, and the runs of known pixels of the other rows. */
static bool emit_image_writes(ex *x, ex_buffer *b, int64_t start)
{
  const bool array1d = b->array1d;
  if (all_known(b, 0, b->size)) {
    size_t o[3] = {0, 0, 0}, r[3] = {b->w, array1d ? b->d : b->h, array1d ? 1 : b->d};
    return emit_image_transfer(x, PI_API_piEnqueueMemImageWrite, b, o, r, 0, 0, b->data,
                               b->size, start);
  }
  size_t row = b->w * b->es;
  for (size_t z = 0; z < b->d; z++)
    for (size_t y = 0; y < b->h; y++) {
      const size_t at = (z * b->h + y) * row;
      size_t band = 0;
      while (!array1d && y + band < b->h && all_known(b, at + band * row, row))
        band++;
      if (band) {
        size_t o[3] = {0, y, z}, r[3] = {b->w, band, 1};
        if (!emit_image_transfer(x, PI_API_piEnqueueMemImageWrite, b, o, r, 0, 0, b->data + at,
                                 band * row, start))
          return false;
        y += band - 1;
        continue;
      }
      for (size_t p = 0; p < b->w;) {
        size_t e = p;
        while (e < b->w && b->state[at + e * b->es] == EX_KNOWN)
          e++;
        if (e > p) {
          size_t o[3] = {p, array1d ? z : y, array1d ? 0 : z}, r[3] = {e - p, 1, 1};
          if (!emit_image_transfer(x, PI_API_piEnqueueMemImageWrite, b, o, r, 0, 0,
                                   b->data + at + p * b->es, (e - p) * b->es, start))
            return false;
        }
        p = e > p ? e : p + 1;
      }
    }
  return true;
}

/* Before launch l of the window: the known bytes of its buffers changed
 * since the repro last wrote them (or made them), as blocking writes. */
static bool emit_writes(ex *x, const pt_call *l)
{
  ex_buffer *roots[256];
  size_t n = kernel_roots(x, x->kernel, false, roots, 256);
  for (size_t r = 0; r < n; r++) {
    ex_buffer *b = roots[r];
    if (!b->modified)
      continue;
    b->modified = false;
    if (b->es) {
      if (!emit_image_writes(x, b, l->start_ns))
        return false;
      continue;
    }
    for (size_t k = 0; k < b->size;) {
      size_t end = k;
      while (end < b->size && b->state[end] == EX_KNOWN)
        end++;
      if (end > k && !emit_transfer(x, PI_API_piEnqueueMemBufferWrite, b, k, end - k,
                                    b->data + k, l->start_ns))
        return false;
      k = end > k ? end : k + 1;
    }
  }
  return true;
}

static bool emit_finish(ex *x, uint64_t queue, int64_t at)
{
  char *fin = NULL;
  if (asprintf(&fin, "[%llu]", (unsigned long long)queue) < 0)
    fin = NULL;
  return emit(x, PI_API_piQueueFinish, fin, 0, NULL, NULL, 0, at);
}

/* Recorded call i into the repro, with `args` (NULL: as recorded). */
static bool push_call(ex *x, size_t i, char *args)
{
  ex_call e = {.orig = call_at(x, i), .api = call_at(x, i)->api, .args = args};
  if (rp_push(&x->out, &x->nout, &x->cap_out, sizeof e, &e))
    return true;
  free(args);
  return ex_fail(x, "out of memory");
}

/* A call of the window into the repro: as recorded, without its wait list. */
static bool push_window_call(ex *x, size_t i)
{
  char *args = ex_window_args(x, i);
  return args ? push_call(x, i, args) : ex_fail(x, "out of memory");
}

/* Whether program p is that of a kernel a launch of the window runs. */
static bool window_program(const ex *x, uint64_t p)
{
  for (size_t i = x->from; p && i <= x->launch; i++)
    if ((x->win[i] || i == x->launch) && ex_is_launch(call_at(x, i)->api) &&
        program_of(x, (uint64_t)rp_arg_int(call_at(x, i), 1, 0)) == p)
      return true;
  return false;
}

static bool read_of(ex *x, const pt_call *c, ex_buffer *b);

/* Whether every byte of b in [at, at + n) was computed by the window. */
static bool all_window(const ex_buffer *b, size_t at, size_t n)
{
  for (size_t k = 0; k < n; k++)
    if (b->state[at + k] != EX_WINDOW)
      return false;
  return true;
}

/* The buffer or image call c only reads (a read, a map for reading
 * alone), when every byte it reads was computed by the window: the repro
 * reads it there too and replay checks it against the recording, rather
 * than writing the recorded bytes back. NULL otherwise. */
static ex_buffer *window_result_read(ex *x, const pt_call *c)
{
  uint64_t at, mem = (uint64_t)rp_arg_int(c, 1, 0);
  if (c->api == PI_API_piEnqueueMemBufferRead || (c->api == PI_API_piEnqueueMemBufferMap &&
                                                  rp_arg_int(c, 3, 0) == PI_MAP_READ)) {
    bool map = c->api == PI_API_piEnqueueMemBufferMap;
    uint64_t off = (uint64_t)rp_arg_int(c, map ? 4 : 3, 0), n = (uint64_t)rp_arg_int(c, map ? 5 : 4, 0);
    ex_buffer *b = region(x, mem, off, n, &at);
    return b && n && all_window(b, at, n) ? b : NULL;
  }
  ex_buffer *b = c->api == PI_API_piEnqueueMemImageRead ? image_of(x, mem) : NULL;
  size_t o[3], r[3];
  if (!b)
    return NULL;
  triple(pt_json_at(c->args, 3), o);
  triple(pt_json_at(c->args, 4), r);
  if (!image_box_of(b, o, r))
    return NULL;
  for (size_t j = 0; j < r[1] * r[2]; j++)
    if (!all_window(b, box_row_at(b, o, r, j), r[0] * b->es))
      return NULL;
  return b;
}

bool ex_assemble(ex *x)
{
  for (size_t i = 0; i <= x->launch; i++) {
    const pt_call *c = call_at(x, i);
    const pt_json *name = pt_json_at(c->args, 2);
    if (c->api == PI_API_piextEnqueueDeviceGlobalVariableWrite && rp_call_ok(c) &&
        window_program(x, (uint64_t)rp_arg_int(c, 1, 0)))
      return ex_fail(x, "seq %lld writes device global '%s' of the launched kernel's program: "
                     "extract does not follow device globals, so the repro's kernel could see "
                     "other values; cannot extract", (long long)c->seq,
                     name && name->type == PJ_STRING ? name->u.s : "?");
    bool win = x->win[i] || i == x->launch;
    if (win && ex_is_launch(c->api)) {
      x->kernel = (uint64_t)rp_arg_int(c, 1, 0);
      x->queue = (uint64_t)rp_arg_int(c, 0, 0);
      for (size_t k = 0; k < x->nkargs; k++)
        if (x->kargs[k].kernel == x->kernel && x->kargs[k].mem &&
            !check_known(x, c, x->kargs[k].mem, x->kargs[k].index))
          return false;
      if (!x->dry && !emit_writes(x, c))
        return false;
    }
    if (!x->dry && (win ? !push_window_call(x, i) : x->need[i] && !push_call(x, i, NULL)))
      return false;
    if (i == x->launch)
      break;
    if (win && !x->dry && !emit_finish(x, (uint64_t)rp_arg_int(c, 0, 0), c->start_ns + c->dur_ns))
      return false;
    ex_buffer *result = i > x->from && rp_call_ok(c) ? window_result_read(x, c) : NULL;
    if (result) { /* checked by replay; still the window's to compute */
      if (!x->dry && !read_of(x, c, result))
        return false;
      continue;
    }
    x->in_window = win;
    bool ok = !rp_call_ok(c) || (follow(x, c) && !x->err[0]);
    x->in_window = false;
    if (!ok)
      return false;
  }
  return true;
}

/* Whether mem is root buffer b or a sub-buffer of it. */
static bool of_buffer(const ex *x, uint64_t mem, const ex_buffer *b)
{
  if (mem == b->id)
    return true;
  for (size_t k = 0; k < x->nsubs; k++)
    if (x->subs[k].id == mem)
      return x->subs[k].parent == b->id;
  return false;
}

/* Whether the release c (of b or a sub-buffer of it) lets b go: the
 * application's last reference to it, counting its creation, the
 * retains of it and of its sub-buffers, and its sub-buffers (each holds
 * its parent) up to c: all in one count, which reaches 0 only once b and
 * every sub-buffer of it are gone. An application (or
 * pyopencl, for a launch that waits on a user event) that retains a
 * buffer around a launch and releases it after still reads it: a release
 * taken for the end dropped those reads from the repro, which then
 * checked nothing. */
static bool lets_go(const ex *x, const pt_call *c, const ex_buffer *b)
{
  int64_t refs = 1;
  for (size_t i = 0; i < x->s->calls.n; i++) {
    const pt_call *o = call_at(x, i);
    if (rp_call_ok(o)) {
      uint64_t mem = (uint64_t)rp_arg_int(o, 0, 0);
      if (o->api == PI_API_piMemRetain && of_buffer(x, mem, b))
        refs++; /* a sub-buffer's retain too: its release is counted */
      else if (o->api == PI_API_piMemBufferPartition && mem == b->id)
        refs++;
      else if (o->api == PI_API_piMemRelease && of_buffer(x, mem, b))
        refs--;
    }
    if (o == c)
      break;
  }
  return refs <= 0;
}

/* Whether call c changes root buffer b (after the launch). */
static bool changes(ex *x, const pt_call *c, const ex_buffer *b)
{
  static const struct {
    uint32_t api;
    unsigned pos;
  } writers[] = {{PI_API_piEnqueueMemBufferWrite, 1}, {PI_API_piEnqueueMemBufferFill, 1},
                 {PI_API_piEnqueueMemBufferCopy, 2}, {PI_API_piEnqueueMemBufferWriteRect, 1},
                 {PI_API_piEnqueueMemBufferCopyRect, 2}, {PI_API_piEnqueueMemUnmap, 1},
                 {PI_API_piEnqueueMemImageWrite, 1}, {PI_API_piEnqueueMemImageCopy, 2},
                 {PI_API_piEnqueueMemImageFill, 1}};
  uint64_t at;
  if (c->api == PI_API_piMemRelease)
    return of_buffer(x, (uint64_t)rp_arg_int(c, 0, 0), b) && lets_go(x, c, b);
  for (size_t k = 0; k < sizeof writers / sizeof *writers; k++)
    if (c->api == writers[k].api &&
        region(x, (uint64_t)rp_arg_int(c, writers[k].pos, 0), 0, 0, &at) == b)
      return true;
  if (!ex_is_launch(c->api))
    return false;
  uint64_t mems[256];
  size_t n = kernel_mems(x, (uint64_t)rp_arg_int(c, 1, 0), true, mems, 256);
  for (size_t m = 0; m < n; m++)
    if (region(x, mems[m], 0, 0, &at) == b)
      return true;
  return false;
}

/* A recorded image read of b after the launch: the same read, blocking,
 * its data packed (box_layout checks what the recording says); where a
 * data cap kept only its first bytes, a read of each whole row in them. */
static bool image_read_of(ex *x, const pt_call *c, ex_buffer *b)
{
  if (c->api != PI_API_piEnqueueMemImageRead || image_of(x, (uint64_t)rp_arg_int(c, 1, 0)) != b)
    return true;
  size_t o[3], r[3], size = 0;
  triple(pt_json_at(c->args, 3), o);
  triple(pt_json_at(c->args, 4), r);
  size_t bo[3] = {o[0], o[1], o[2]}, br[3] = {r[0], r[1], r[2]};
  size_t rp = (size_t)rp_arg_int(c, 5, 0), sp = (size_t)rp_arg_int(c, 6, 0);
  rp_data_status st;
  const char *role = rp_arg_int(c, 2, 1) ? "out" : "readback";
  unsigned char *d = rp_payload(x->s, c, 7, role, 0, &size, &st);
  bool ok = true;
  if (!d && !x->shape_only) {
    /* A data cap kept its first bytes: a read of each whole row in them. */
    size_t kept, full;
    d = rp_payload_kept(x->s, c, 7, role, 0, &kept, &full);
    if (d && box_layout(b, bo, br, &rp, &sp, full)) {
      size_t row = br[0] * b->es;
      for (size_t z = 0; ok && z < br[2]; z++)
        for (size_t y = 0; ok && y < br[1]; y++) {
          if (z * sp + y * rp + row > kept)
            continue;
          /* The row as the recorded read names it: a 1D image array's
           * images are its rows there, its slices here (box_layout). */
          size_t ro[3] = {o[0], o[1] + y, o[2] + z}, rr[3] = {r[0], 1, 1};
          if (b->array1d)
            ro[1] = o[1] + z, ro[2] = o[2];
          ok = emit_image_transfer(x, PI_API_piEnqueueMemImageRead, b, ro, rr, 0, 0,
                                   d + z * sp + y * rp, row, c->start_ns);
        }
    }
    free(d);
    return ok;
  }
  if (d && box_layout(b, bo, br, &rp, &sp, size)) {
    size_t row = br[0] * b->es, n = row * br[1] * br[2]; /* within the image */
    unsigned char *packed = malloc(n);
    if (!packed) {
      free(d);
      return ex_fail(x, "out of memory");
    }
    for (size_t z = 0; z < br[2]; z++)
      for (size_t y = 0; y < br[1]; y++)
        memcpy(packed + (z * br[1] + y) * row, d + z * sp + y * rp, row);
    ok = emit_image_transfer(x, PI_API_piEnqueueMemImageRead, b, o, r, 0, 0, packed, n,
                             c->start_ns);
    free(packed);
  }
  free(d);
  return ok;
}

/* A recorded read of b after the launch: the same read, blocking. */
/* A recorded rectangle read of b after the launch: a blocking read of
 * each row it read, holding the recorded row (at most 4096 rows; a larger
 * one is not checked). */
static bool rect_read_of(ex *x, const pt_call *c, ex_buffer *b)
{
  size_t o[3], r[3], ho[3], rp, sp, hrp, hsp;
  uint64_t base;
  if (rect_buffer(x, c, o, r, &rp, &sp, &base) != b || r[1] * r[2] > 4096)
    return true;
  unsigned char *d = rect_host(x, c, "out", r, ho, &hrp, &hsp);
  if (!d)
    d = rect_host(x, c, "readback", r, ho, &hrp, &hsp);
  size_t kept = SIZE_MAX;
  for (int k = 0; !d && k < 2 && !x->shape_only; k++) {
    /* A data cap kept its first bytes: the reads of the rows in them. */
    size_t full;
    const char *role = k ? "readback" : "out";
    d = rp_payload_kept(x->s, c, 10, role, 0, &kept, &full);
    if (d && !rect_layout(ho, r, &hrp, &hsp, full)) {
      free(d);
      d = NULL;
    }
  }
  bool ok = true;
  for (size_t j = 0; ok && d && j < r[1] * r[2]; j++)
    if (rect_row_at(ho, r, hrp, hsp, j) + r[0] <= kept)
      ok = emit_transfer(x, PI_API_piEnqueueMemBufferRead, b,
                         base + rect_row_at(o, r, rp, sp, j), r[0],
                         d + rect_row_at(ho, r, hrp, hsp, j), c->start_ns);
  free(d);
  return ok;
}

static bool read_of(ex *x, const pt_call *c, ex_buffer *b)
{
  if (b->es)
    return image_read_of(x, c, b);
  if (c->api == PI_API_piEnqueueMemBufferReadRect)
    return rect_read_of(x, c, b);
  bool map = c->api == PI_API_piEnqueueMemBufferMap;
  if ((c->api != PI_API_piEnqueueMemBufferRead && !map) ||
      (map && !(rp_arg_int(c, 3, 0) & PI_MAP_READ)))
    return true;
  uint64_t off = (uint64_t)rp_arg_int(c, map ? 4 : 3, 0), n = (uint64_t)rp_arg_int(c, map ? 5 : 4, 0);
  uint64_t at;
  if (region(x, (uint64_t)rp_arg_int(c, 1, 0), off, n, &at) != b)
    return true;
  unsigned pos = map ? 9 : 5;
  size_t size;
  rp_data_status st;
  const char *role = "out";
  unsigned char *d = rp_payload(x->s, c, pos, role, 0, &size, &st);
  if (!d && st != RP_DATA_PARTIAL)
    d = rp_payload(x->s, c, pos, role = "readback", 0, &size, &st);
  size_t full;
  if (st == RP_DATA_PARTIAL) /* a data cap kept its first bytes: the read of those */
    d = rp_payload_kept(x->s, c, pos, role, 0, &size, &full);
  bool ok = !d || emit_transfer(x, PI_API_piEnqueueMemBufferRead, b, at, size < n ? size : n, d,
                                c->start_ns);
  free(d);
  return ok;
}

/* Whether mem was made before the launch. */
static bool made_before(const ex *x, uint64_t mem)
{
  size_t m = ex_maker(x, mem);
  return m && m - 1 < x->launch;
}

/* After the launch, while nothing else changes them: the session's reads
 * of the buffers it used, and the copies that moved what it left into
 * other buffers, read in turn. Choosing (ex_slice) marks those copies in
 * x->win; emitting (ex_emit_reads) makes the reads blocking, holding the
 * recorded data, and the copies as recorded, each followed by a finish. */
static bool after_launch(ex *x, bool emitting)
{
  ex_buffer *roots[256];
  bool open[256];
  size_t n = kernel_roots(x, x->kernel, false, roots, 256);
  for (size_t r = 0; r < n; r++)
    open[r] = true;
  for (size_t i = x->launch + 1; i < x->s->calls.n; i++) {
    const pt_call *c = call_at(x, i);
    if (!rp_call_ok(c))
      continue;
    ex_buffer *dst = NULL;
    if (is_copy(c->api)) {
      uint64_t at, smem = (uint64_t)rp_arg_int(c, 1, 0), dmem = (uint64_t)rp_arg_int(c, 2, 0);
      ex_buffer *src = region(x, smem, 0, 0, &at), *d = region(x, dmem, 0, 0, &at);
      bool from_open = false;
      for (size_t r = 0; r < n; r++)
        from_open |= open[r] && roots[r] == src;
      if (!emitting)
        x->win[i] = from_open && d && n < 256 && made_before(x, smem) && made_before(x, dmem);
      dst = x->win[i] ? d : NULL;
    }
    for (size_t r = 0; r < n; r++) {
      if (!open[r])
        continue;
      if (emitting && !read_of(x, c, roots[r]))
        return false;
      open[r] = !changes(x, c, roots[r]);
    }
    if (dst) {
      if (emitting && !(push_window_call(x, i) &&
                        emit_finish(x, (uint64_t)rp_arg_int(c, 0, 0), c->start_ns + c->dur_ns)))
        return false;
      size_t r = 0;
      while (r < n && roots[r] != dst)
        r++;
      if (r == n && n < 256)
        roots[n++] = dst;
      if (r < n)
        open[r] = true;
    }
    if (pi_api_flags(c->api) & PI_API_F_SETS_ARG)
      follow(x, c); /* which buffers later launches use */
  }
  return true;
}

bool ex_emit_reads(ex *x)
{
  const pt_call *l = call_at(x, x->launch);
  return emit_finish(x, x->queue, l->start_ns + l->dur_ns) && after_launch(x, true);
}

void ex_state_free(ex *x)
{
  for (size_t k = 0; k < x->nbufs; k++) {
    free(x->bufs[k].data);
    free(x->bufs[k].state);
  }
  free(x->bufs);
  free(x->subs);
  free(x->kargs);
  free(x->maps);
  x->bufs = NULL;
  x->subs = NULL;
  x->kargs = NULL;
  x->maps = NULL;
  x->nbufs = x->cap_bufs = x->nsubs = x->cap_subs = x->nkargs = x->cap_kargs = 0;
  x->nmaps = x->cap_maps = 0;
}
