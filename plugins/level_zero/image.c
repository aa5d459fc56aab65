/*
 * image.c: the PI image functions of the Level Zero plugin: PI image formats
 * and descriptions to Level Zero's, creation, queries and native handles.
 */
#include "lz_internal.h"

/* ---- Images ---------------------------------------------------------------- */

/* The Level Zero format and the element size of a PI image format. */
static pi_result image_format(const char *fn, const pi_image_format *f,
                              ze_image_format_t *ze, size_t *elem) {
  size_t chan_size = 0;
  unsigned channels = 0;
  ze_image_format_type_t type = ZE_IMAGE_FORMAT_TYPE_UINT;
  switch (f->image_channel_data_type) {
  case PI_IMAGE_CHANNEL_TYPE_SNORM_INT8:
    chan_size = 1, type = ZE_IMAGE_FORMAT_TYPE_SNORM;
    break;
  case PI_IMAGE_CHANNEL_TYPE_UNORM_INT8:
    chan_size = 1, type = ZE_IMAGE_FORMAT_TYPE_UNORM;
    break;
  case PI_IMAGE_CHANNEL_TYPE_SIGNED_INT8:
    chan_size = 1, type = ZE_IMAGE_FORMAT_TYPE_SINT;
    break;
  case PI_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8:
    chan_size = 1, type = ZE_IMAGE_FORMAT_TYPE_UINT;
    break;
  case PI_IMAGE_CHANNEL_TYPE_SNORM_INT16:
    chan_size = 2, type = ZE_IMAGE_FORMAT_TYPE_SNORM;
    break;
  case PI_IMAGE_CHANNEL_TYPE_UNORM_INT16:
    chan_size = 2, type = ZE_IMAGE_FORMAT_TYPE_UNORM;
    break;
  case PI_IMAGE_CHANNEL_TYPE_SIGNED_INT16:
    chan_size = 2, type = ZE_IMAGE_FORMAT_TYPE_SINT;
    break;
  case PI_IMAGE_CHANNEL_TYPE_UNSIGNED_INT16:
    chan_size = 2, type = ZE_IMAGE_FORMAT_TYPE_UINT;
    break;
  case PI_IMAGE_CHANNEL_TYPE_HALF_FLOAT:
    chan_size = 2, type = ZE_IMAGE_FORMAT_TYPE_FLOAT;
    break;
  case PI_IMAGE_CHANNEL_TYPE_SIGNED_INT32:
    chan_size = 4, type = ZE_IMAGE_FORMAT_TYPE_SINT;
    break;
  case PI_IMAGE_CHANNEL_TYPE_UNSIGNED_INT32:
    chan_size = 4, type = ZE_IMAGE_FORMAT_TYPE_UINT;
    break;
  case PI_IMAGE_CHANNEL_TYPE_FLOAT:
    chan_size = 4, type = ZE_IMAGE_FORMAT_TYPE_FLOAT;
    break;
  default:
    break;
  }
  ze_image_format_swizzle_t sw[4] = {
      ZE_IMAGE_FORMAT_SWIZZLE_R, ZE_IMAGE_FORMAT_SWIZZLE_G,
      ZE_IMAGE_FORMAT_SWIZZLE_B, ZE_IMAGE_FORMAT_SWIZZLE_A};
  switch (f->image_channel_order) {
  case PI_IMAGE_CHANNEL_ORDER_R:
  case PI_IMAGE_CHANNEL_ORDER_Rx:
    channels = 1;
    sw[1] = sw[2] = ZE_IMAGE_FORMAT_SWIZZLE_0;
    sw[3] = ZE_IMAGE_FORMAT_SWIZZLE_1;
    break;
  case PI_IMAGE_CHANNEL_ORDER_A:
    channels = 1;
    sw[0] = sw[1] = sw[2] = ZE_IMAGE_FORMAT_SWIZZLE_0;
    sw[3] = ZE_IMAGE_FORMAT_SWIZZLE_A;
    break;
  case PI_IMAGE_CHANNEL_ORDER_RG:
  case PI_IMAGE_CHANNEL_ORDER_RGx:
    channels = 2;
    sw[2] = ZE_IMAGE_FORMAT_SWIZZLE_0;
    sw[3] = ZE_IMAGE_FORMAT_SWIZZLE_1;
    break;
  case PI_IMAGE_CHANNEL_ORDER_RA:
    channels = 2;
    sw[1] = sw[2] = ZE_IMAGE_FORMAT_SWIZZLE_0;
    sw[3] = ZE_IMAGE_FORMAT_SWIZZLE_G;
    break;
  case PI_IMAGE_CHANNEL_ORDER_RGBA:
    channels = 4;
    break;
  case PI_IMAGE_CHANNEL_ORDER_BGRA:
    channels = 4;
    sw[0] = ZE_IMAGE_FORMAT_SWIZZLE_B;
    sw[2] = ZE_IMAGE_FORMAT_SWIZZLE_R;
    break;
  case PI_IMAGE_CHANNEL_ORDER_ARGB:
    channels = 4;
    sw[0] = ZE_IMAGE_FORMAT_SWIZZLE_A;
    sw[1] = ZE_IMAGE_FORMAT_SWIZZLE_R;
    sw[2] = ZE_IMAGE_FORMAT_SWIZZLE_G;
    sw[3] = ZE_IMAGE_FORMAT_SWIZZLE_B;
    break;
  case PI_IMAGE_CHANNEL_ORDER_ABGR:
    channels = 4;
    sw[0] = ZE_IMAGE_FORMAT_SWIZZLE_A;
    sw[1] = ZE_IMAGE_FORMAT_SWIZZLE_B;
    sw[2] = ZE_IMAGE_FORMAT_SWIZZLE_G;
    sw[3] = ZE_IMAGE_FORMAT_SWIZZLE_R;
    break;
  default:
    break;
  }
  static const ze_image_format_layout_t layouts[3][4] = {
      {ZE_IMAGE_FORMAT_LAYOUT_8, ZE_IMAGE_FORMAT_LAYOUT_8_8,
       ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8, ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8},
      {ZE_IMAGE_FORMAT_LAYOUT_16, ZE_IMAGE_FORMAT_LAYOUT_16_16,
       ZE_IMAGE_FORMAT_LAYOUT_16_16_16_16, ZE_IMAGE_FORMAT_LAYOUT_16_16_16_16},
      {ZE_IMAGE_FORMAT_LAYOUT_32, ZE_IMAGE_FORMAT_LAYOUT_32_32,
       ZE_IMAGE_FORMAT_LAYOUT_32_32_32_32, ZE_IMAGE_FORMAT_LAYOUT_32_32_32_32}};
  if (!chan_size || !channels)
    return fail(PI_ERROR_IMAGE_FORMAT_NOT_SUPPORTED,
                "%s: image format (order 0x%x, type 0x%x) has no Level Zero "
                "equivalent in this plugin; use R, RG, RA, A, RGBA, BGRA, ARGB "
                "or ABGR with 8, 16 or 32-bit channels",
                fn, (unsigned)f->image_channel_order,
                (unsigned)f->image_channel_data_type);
  ze->layout = layouts[chan_size == 1 ? 0 : chan_size == 2 ? 1 : 2][channels - 1];
  ze->type = type;
  ze->x = sw[0];
  ze->y = sw[1];
  ze->z = sw[2];
  ze->w = sw[3];
  *elem = chan_size * channels;
  return PI_SUCCESS;
}

static pi_result image_desc(const char *fn, const pi_image_desc *d,
                            ze_image_desc_t *ze) {
  ze_image_type_t type;
  switch (d->image_type) {
  case PI_MEM_TYPE_IMAGE1D:
    type = ZE_IMAGE_TYPE_1D;
    break;
  case PI_MEM_TYPE_IMAGE1D_ARRAY:
    type = ZE_IMAGE_TYPE_1DARRAY;
    break;
  case PI_MEM_TYPE_IMAGE2D:
    type = ZE_IMAGE_TYPE_2D;
    break;
  case PI_MEM_TYPE_IMAGE2D_ARRAY:
    type = ZE_IMAGE_TYPE_2DARRAY;
    break;
  case PI_MEM_TYPE_IMAGE3D:
    type = ZE_IMAGE_TYPE_3D;
    break;
  default:
    return fail(PI_ERROR_INVALID_IMAGE_DESCRIPTOR,
                "%s: image type 0x%x is not offered (1D buffer images have no "
                "Level Zero image)",
                fn, (unsigned)d->image_type);
  }
  if (d->num_mip_levels > 1 || d->num_samples > 1)
    return fail(PI_ERROR_INVALID_IMAGE_DESCRIPTOR,
                "%s: mipmapped and multisampled images are not offered", fn);
  if (!d->image_width || d->image_height > UINT32_MAX ||
      d->image_depth > UINT32_MAX || d->image_array_size > UINT32_MAX)
    return fail(PI_ERROR_INVALID_IMAGE_SIZE,
                "%s: image size %zux%zux%zu (array %zu) is empty or too large",
                fn, d->image_width, d->image_height, d->image_depth,
                d->image_array_size);
  ze->type = type;
  ze->width = d->image_width;
  ze->height = (uint32_t)(d->image_height ? d->image_height : 1);
  ze->depth = (uint32_t)(d->image_depth ? d->image_depth : 1);
  ze->arraylevels = (uint32_t)d->image_array_size;
  ze->miplevels = 0;
  return PI_SUCCESS;
}

size_t image_rows(const pi_image_desc *d) {
  return d->image_type == PI_MEM_TYPE_IMAGE1D_ARRAY ? d->image_array_size
         : d->image_height                          ? d->image_height
                                                    : 1;
}

size_t image_slices(const pi_image_desc *d) {
  return d->image_type == PI_MEM_TYPE_IMAGE2D_ARRAY ? d->image_array_size
         : d->image_type == PI_MEM_TYPE_IMAGE3D     ? d->image_depth
                                                    : 1;
}

static pi_result image_new(const char *fn, pi_context context,
                           pi_mem_flags flags, const pi_image_format *format,
                           const pi_image_desc *desc, size_t elem,
                           ze_image_handle_t ze, bool owns, pi_mem *out) {
  pi_mem m = mem_new(context, MEM_IMAGE, flags,
                     desc->image_width * elem * image_rows(desc) *
                         image_slices(desc));
  if (!m)
    return out_of_memory(fn);
  m->image = ze;
  m->owns_alloc = owns;
  m->format = *format;
  m->desc = *desc;
  m->elem_size = elem;
  *out = m;
  return PI_SUCCESS;
}

pi_result lz_piMemImageCreate(pi_context context, pi_mem_flags flags,
                              const pi_image_format *image_format_in,
                              const pi_image_desc *image_desc_in,
                              void *host_ptr, pi_mem *ret_mem) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(ret_mem != NULL);
  *ret_mem = NULL;
  if (!image_format_in)
    return fail(PI_ERROR_INVALID_IMAGE_FORMAT_DESCRIPTOR,
                "%s: image_format is NULL", FN);
  if (!image_desc_in)
    return fail(PI_ERROR_INVALID_IMAGE_DESCRIPTOR, "%s: image_desc is NULL",
                FN);
  pi_result r = mem_flags_check(FN, flags, host_ptr);
  if (r != PI_SUCCESS)
    return r;
  if (flags & PI_MEM_FLAGS_HOST_PTR_USE)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: Level Zero images cannot live in host memory "
                "(PI_MEM_FLAGS_HOST_PTR_USE); use PI_MEM_FLAGS_HOST_PTR_COPY",
                FN);
  ze_image_desc_t zd = {.stype = ZE_STRUCTURE_TYPE_IMAGE_DESC,
                        .flags = (flags & PI_MEM_ACCESS_READ_ONLY)
                                     ? 0
                                     : ZE_IMAGE_FLAG_KERNEL_WRITE};
  size_t elem = 0; /* set by image_format on success */
  if ((r = image_format(FN, image_format_in, &zd.format, &elem)) !=
          PI_SUCCESS ||
      (r = image_desc(FN, image_desc_in, &zd)) != PI_SUCCESS)
    return r;
  pi_device dev = context->devices[0];
  ze_image_handle_t img;
  if ((r = ZE_CALL(zeImageCreate, context->ze, dev->ze, &zd, &img)) !=
      PI_SUCCESS)
    return r;
  pi_mem m = NULL; /* set by image_new on success */
  if ((r = image_new(FN, context, flags, image_format_in, image_desc_in, elem,
                     img, true, &m)) != PI_SUCCESS) {
    zeImageDestroy(img);
    return r;
  }
  if (host_ptr) {
    ze_image_region_t region = {0, 0, 0, (uint32_t)zd.width,
                                (uint32_t)image_rows(image_desc_in),
                                (uint32_t)image_slices(image_desc_in)};
    if (image_desc_in->image_row_pitch &&
        image_desc_in->image_row_pitch != image_desc_in->image_width * elem)
      r = fail(PI_ERROR_INVALID_IMAGE_DESCRIPTOR,
               "%s: host data with row pitch %zu (not width * element size) "
               "cannot be copied into a Level Zero image at creation; copy it "
               "with piEnqueueMemImageWrite",
               FN, image_desc_in->image_row_pitch);
    else
      r = sync_copy(FN, context, dev, NULL, host_ptr, 0, img, &region);
    if (r != PI_SUCCESS) {
      mem_release(FN, m);
      return r;
    }
  }
  *ret_mem = m;
  return PI_SUCCESS;
}

pi_result backend_image_info(pi_mem image, const struct info_out *o) {
  if (image->kind != MEM_IMAGE)
    return fail(PI_ERROR_INVALID_MEM_OBJECT, "%s: the memory object is a "
                "buffer, not an image", o->fn);
  const pi_image_desc *d = &image->desc;
  size_t row = d->image_width * image->elem_size;
  switch (o->query) {
  case PI_IMAGE_INFO_FORMAT:
    return put_info(o, &image->format, sizeof image->format);
  case PI_IMAGE_INFO_ELEMENT_SIZE:
    return put_size(o, image->elem_size);
  case PI_IMAGE_INFO_ROW_PITCH:
    return put_size(o, row);
  case PI_IMAGE_INFO_SLICE_PITCH:
    return put_size(o, image_slices(d) > 1 || d->image_type ==
                                                   PI_MEM_TYPE_IMAGE3D
                            ? row * image_rows(d)
                            : 0);
  case PI_IMAGE_INFO_WIDTH:
    return put_size(o, d->image_width);
  case PI_IMAGE_INFO_HEIGHT:
    return put_size(o, d->image_height);
  case PI_IMAGE_INFO_DEPTH:
    return put_size(o, d->image_depth);
  default:
    return unknown_query(o);
  }
}

pi_result lz_piextMemImageCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, bool ownNativeHandle,
    const pi_image_format *ImageFormat, const pi_image_desc *ImageDesc,
    pi_mem *img) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(nativeHandle != 0 && img != NULL);
  if (!ImageFormat || !ImageDesc)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a Level Zero image does not tell its format and shape: "
                "pass ImageFormat and ImageDesc",
                FN);
  ze_image_format_t zf;
  ze_image_desc_t zd;
  size_t elem = 0; /* set by image_format on success */
  pi_result r = image_format(FN, ImageFormat, &zf, &elem);
  if (r == PI_SUCCESS)
    r = image_desc(FN, ImageDesc, &zd);
  if (r != PI_SUCCESS)
    return r;
  return image_new(FN, context, PI_MEM_FLAGS_ACCESS_RW, ImageFormat, ImageDesc,
                   elem, (ze_image_handle_t)nativeHandle, ownNativeHandle,
                   img);
}
