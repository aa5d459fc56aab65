/*
 * rect.c: the coordinates of rectangle and image copies
 * (piEnqueueMemBufferCopyRect, piEnqueueMemImageCopy) as arrays of three,
 * with the NULL checks every plugin makes of them, and the check that a
 * range of bytes lies in a buffer.
 */
#include "plugin_common.h"

/* REQUIRE names the PI function it is in. */
#define FN fn

pi_result buffer_copy_coords(const char *fn, pi_buff_rect_offset src_origin,
                             pi_buff_rect_offset dst_origin,
                             pi_buff_rect_region region,
                             struct copy_coords *c) {
  REQUIRE(src_origin && dst_origin && region);
  *c = (struct copy_coords){
      XYZ(src_origin, x_bytes, y_scalar, z_scalar),
      XYZ(dst_origin, x_bytes, y_scalar, z_scalar),
      XYZ(region, width_bytes, height_scalar, depth_scalar)};
  return PI_SUCCESS;
}

pi_result image_copy_coords(const char *fn, pi_image_offset src_origin,
                            pi_image_offset dst_origin, pi_image_region region,
                            struct copy_coords *c) {
  REQUIRE(src_origin && dst_origin && region);
  *c = (struct copy_coords){XYZ(src_origin, x, y, z), XYZ(dst_origin, x, y, z),
                            XYZ(region, width, height, depth)};
  return PI_SUCCESS;
}

pi_result buffer_bytes_check(const char *fn, size_t offset, size_t size,
                             size_t total) {
  if (offset > total || size > total - offset)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: bytes %zu..%zu are outside the %zu-byte buffer", fn,
                offset, offset + size, total);
  return PI_SUCCESS;
}
