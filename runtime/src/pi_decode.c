/*
 * pi_decode.c: turns packed PI arguments into text, driven by the API
 * description. The SYCL_PI_TRACE printer, the recorder's readable values and
 * the viewer all print through here.
 *
 * Output is bounded: strings, arrays and byte previews are cut with a note
 * of their full size, so one call's block stays short enough to be written
 * with a single write(2).
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pi_api.h"

#define MAX_STRING 200 /* characters of a string shown */
#define MAX_ELEMS 16   /* array elements shown */
#define MAX_BYTES 32   /* bytes of a buffer previewed */

/* ---- Text buffer --------------------------------------------------------- */

void pi_sbuf_init(pi_sbuf *b, char *storage, size_t cap)
{
  b->p = storage;
  b->cap = cap;
  b->len = 0;
  b->heap = false;
  if (cap)
    b->p[0] = 0;
}

void pi_sbuf_free(pi_sbuf *b)
{
  if (b->heap)
    free(b->p);
  b->p = NULL;
  b->cap = b->len = 0;
  b->heap = false;
}

void pi_sbuf_reset(pi_sbuf *b)
{
  b->len = 0;
  if (b->cap)
    b->p[0] = 0;
}

/* Makes room for n more bytes plus a NUL; false when memory ran out (the
 * text is then cut, never the caller). */
static bool sbuf_reserve(pi_sbuf *b, size_t n)
{
  if (b->len + n + 1 <= b->cap)
    return true;
  size_t cap = b->cap ? b->cap * 2 : 256;
  while (cap < b->len + n + 1)
    cap *= 2;
  char *p = b->heap ? realloc(b->p, cap) : malloc(cap);
  if (!p)
    return false;
  if (!b->heap && b->len)
    memcpy(p, b->p, b->len);
  b->p = p;
  b->cap = cap;
  b->heap = true;
  return true;
}

void pi_sbuf_put_grow(pi_sbuf *b, const char *s, size_t n)
{
  if (!sbuf_reserve(b, n))
    return;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}

size_t pi_plain_prefix(const char *s, size_t n)
{
  /* Eight at a time: (x - 0x01..) & ~x & 0x80.. is not zero exactly when
   * a byte of x is zero (below 0x20 with 0x20..), so x is w itself and w
   * xor each character looked for. */
  const uint64_t ones = 0x0101010101010101u, highs = ones * 0x80;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w, q, bs, del;
    memcpy(&w, s + i, 8);
    q = w ^ (ones * '"');
    bs = w ^ (ones * '\\');
    del = w ^ (ones * 0x7f);
    if ((((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((bs - ones) & ~bs) |
         ((del - ones) & ~del)) & highs)
      break;
  }
  while (i < n && (unsigned char)s[i] >= 0x20 && s[i] != 0x7f && s[i] != '"' && s[i] != '\\')
    i++;
  return i;
}

void pi_sbuf_vprintf(pi_sbuf *b, const char *fmt, va_list ap)
{
  va_list ap2;
  va_copy(ap2, ap);
  size_t room = b->cap > b->len ? b->cap - b->len : 0;
  int n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap);
  if (n >= 0 && (size_t)n >= room && sbuf_reserve(b, (size_t)n)) {
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap2);
  }
  if (n > 0 && b->len + (size_t)n < b->cap)
    b->len += (size_t)n;
  va_end(ap2);
}

void pi_sbuf_printf(pi_sbuf *b, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  pi_sbuf_vprintf(b, fmt, ap);
  va_end(ap);
}

/* ---- Tables --------------------------------------------------------------- */

const pi_api_desc *pi_api_get(uint32_t id)
{
  if (id >= PI_API_COUNT || !pi_api_table[id].name)
    return NULL;
  return &pi_api_table[id];
}

const pi_api_desc *pi_api_find(const char *name)
{
  for (uint32_t i = 0; i < PI_API_COUNT; i++)
    if (pi_api_table[i].name && strcmp(pi_api_table[i].name, name) == 0)
      return &pi_api_table[i];
  return NULL;
}

size_t pi_api_glob(const char *glob, bool *match)
{
  size_t n = 0;
  for (uint32_t i = 0; i < PI_API_COUNT; i++) {
    bool m = pi_api_table[i].name && fnmatch(glob, pi_api_table[i].name, 0) == 0;
    if (match)
      match[i] = m;
    n += m;
  }
  return n;
}

/* The entries found last, by enumeration and value: an enumeration is
 * scanned (over a hundred device queries), and the trace and the recorder
 * look up the same few queries again and again. One table for every
 * thread: a slot holds an entry of a constant description, which says
 * itself which value of which enumeration it is, so a slot another
 * thread just replaced is checked, not trusted. Not thread-local: the
 * shim's thread-local block must stay small (it is initial-exec, taken
 * from the few bytes of static TLS a library loaded late may have). */
static _Atomic(const pi_enum_entry *) enum_seen[64];

const pi_enum_entry *pi_enum_lookup(const pi_enum_desc *en, int64_t value)
{
  if (!en)
    return NULL;
  uint64_t h = ((uint64_t)(uintptr_t)en ^ (uint64_t)value) * 0x9e3779b97f4a7c15u;
  size_t k = (size_t)(h >> 58);
  const pi_enum_entry *e = atomic_load_explicit(&enum_seen[k], memory_order_relaxed);
  if (e && e->value == value && e >= en->entries && e < en->entries + en->count)
    return e;
  for (unsigned i = 0; i < en->count; i++)
    if (en->entries[i].value == value) {
      atomic_store_explicit(&enum_seen[k], &en->entries[i], memory_order_relaxed);
      return &en->entries[i];
    }
  return NULL;
}

const pi_enum_desc *pi_enum_find(const char *name)
{
  for (size_t i = 0; i < pi_enum_table_count; i++)
    if (strcmp(pi_enum_table[i]->name, name) == 0)
      return pi_enum_table[i];
  return NULL;
}

const char *pi_result_name(pi_result r)
{
  const pi_enum_entry *e = pi_enum_lookup(pi_enum_result, (int64_t)r);
  if (e)
    return e->name;
  static __thread char buf[32];
  snprintf(buf, sizeof buf, "PI_RESULT_%d", (int)r);
  return buf;
}

/* ---- Values --------------------------------------------------------------- */

const char *pi_note_kind_name(unsigned kind)
{
  static const char *const names[] = {"",      "link",          "symbol", "odr",
                                       "cache", "spec_constant", "replay", "image_formats",
                                       "callback"};
  return kind < sizeof names / sizeof *names ? names[kind] : "?";
}

/* OpenCL's image channel orders and types that PI does not name (cl.h). */
enum {
  CL_DEPTH_ = 0x10BD, CL_DEPTH_STENCIL_ = 0x10BE, CL_sRGB_ = 0x10BF, CL_sRGBx_ = 0x10C0,
  CL_sBGRA_ = 0x10C2, CL_UNORM_INT24_ = 0x10DF, CL_UNORM_INT_101010_2_ = 0x10E0
};

/* Channels of an image channel order; 0 for an unknown order. The "x"
 * orders count their ignored channel (the specification calls CL_Rx a
 * two-channel format). */
static size_t image_channels(uint32_t o)
{
  switch (o) {
  case PI_IMAGE_CHANNEL_ORDER_R: case PI_IMAGE_CHANNEL_ORDER_A: case CL_DEPTH_:
  case PI_IMAGE_CHANNEL_ORDER_LUMINANCE: case PI_IMAGE_CHANNEL_ORDER_INTENSITY:
    return 1;
  case PI_IMAGE_CHANNEL_ORDER_RG: case PI_IMAGE_CHANNEL_ORDER_RA: case PI_IMAGE_CHANNEL_ORDER_Rx:
  case CL_DEPTH_STENCIL_:
    return 2;
  case PI_IMAGE_CHANNEL_ORDER_RGB: case PI_IMAGE_CHANNEL_ORDER_RGx: case CL_sRGB_:
    return 3;
  case PI_IMAGE_CHANNEL_ORDER_RGBA: case PI_IMAGE_CHANNEL_ORDER_ARGB:
  case PI_IMAGE_CHANNEL_ORDER_BGRA: case PI_IMAGE_CHANNEL_ORDER_ABGR:
  case PI_IMAGE_CHANNEL_ORDER_RGBx: case PI_IMAGE_CHANNEL_ORDER_sRGBA: case CL_sBGRA_:
  case CL_sRGBx_:
    return 4;
  default:
    return 0;
  }
}

size_t pi_image_element_size(uint32_t o, uint32_t t)
{
  size_t n = image_channels(o);
  if (n == 0)
    return 0;
  const bool rgb = o == PI_IMAGE_CHANNEL_ORDER_RGB || o == PI_IMAGE_CHANNEL_ORDER_RGBx;
  switch (t) {
  case PI_IMAGE_CHANNEL_TYPE_SNORM_INT8: case PI_IMAGE_CHANNEL_TYPE_UNORM_INT8:
  case PI_IMAGE_CHANNEL_TYPE_SIGNED_INT8: case PI_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8:
    return o == CL_DEPTH_STENCIL_ ? 0 : n;
  case PI_IMAGE_CHANNEL_TYPE_SNORM_INT16: case PI_IMAGE_CHANNEL_TYPE_UNORM_INT16:
  case PI_IMAGE_CHANNEL_TYPE_SIGNED_INT16: case PI_IMAGE_CHANNEL_TYPE_UNSIGNED_INT16:
  case PI_IMAGE_CHANNEL_TYPE_HALF_FLOAT:
    return o == CL_DEPTH_STENCIL_ ? 0 : 2 * n;
  case PI_IMAGE_CHANNEL_TYPE_SIGNED_INT32: case PI_IMAGE_CHANNEL_TYPE_UNSIGNED_INT32:
    return o == CL_DEPTH_STENCIL_ ? 0 : 4 * n;
  case PI_IMAGE_CHANNEL_TYPE_FLOAT:
    return o == CL_DEPTH_STENCIL_ ? 8 : 4 * n; /* depth float, stencil, padding */
  /* Packed formats: the whole pixel in one short or int. */
  case PI_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565: case PI_IMAGE_CHANNEL_TYPE_UNORM_SHORT_555:
    return rgb ? 2 : 0;
  case PI_IMAGE_CHANNEL_TYPE_UNORM_INT_101010:
    return rgb ? 4 : 0;
  case CL_UNORM_INT_101010_2_:
    return o == PI_IMAGE_CHANNEL_ORDER_RGBA ? 4 : 0;
  case CL_UNORM_INT24_:
    return o == CL_DEPTH_STENCIL_ ? 4 : 0; /* 24-bit depth, 8-bit stencil */
  default:
    return 0;
  }
}

size_t pi_image_host_extent(const pi_image_format *f, const pi_image_desc *d)
{
  size_t es = f ? pi_image_element_size(f->image_channel_order, f->image_channel_data_type) : 0;
  if (!es || !d)
    return 0;
  size_t row, rp, sp, n, out;
  if (__builtin_mul_overflow(d->image_width, es, &row))
    return 0;
  rp = d->image_row_pitch ? d->image_row_pitch : row;
  switch (d->image_type) {
  case PI_MEM_TYPE_IMAGE1D:
  case PI_MEM_TYPE_IMAGE1D_BUFFER:
    return row;
  case PI_MEM_TYPE_IMAGE2D:
    return __builtin_mul_overflow(rp, d->image_height, &out) ? 0 : out;
  case PI_MEM_TYPE_IMAGE1D_ARRAY: /* each image one scanline: the slice pitch defaults to the row pitch */
    sp = d->image_slice_pitch ? d->image_slice_pitch : rp;
    n = d->image_array_size;
    break;
  case PI_MEM_TYPE_IMAGE2D_ARRAY:
  case PI_MEM_TYPE_IMAGE3D:
    if (d->image_slice_pitch)
      sp = d->image_slice_pitch;
    else if (__builtin_mul_overflow(rp, d->image_height, &sp))
      return 0;
    n = d->image_type == PI_MEM_TYPE_IMAGE3D ? d->image_depth : d->image_array_size;
    break;
  default:
    return 0;
  }
  return __builtin_mul_overflow(sp, n, &out) ? 0 : out;
}

const char *pi_object_kind_name(uint8_t kind)
{
  static const char *const names[PI_OBJ_KIND_COUNT] = {
      "none", "platform", "device", "context", "queue", "mem", "program",
      "kernel", "event", "sampler", "usm", "mapped"};
  return kind < PI_OBJ_KIND_COUNT ? names[kind] : "?";
}

/* Numbers without printf: the live trace formats several per call, and
 * vsnprintf's set-up costs more than the digits. */
static inline __attribute__((always_inline)) void put_unsigned(pi_sbuf *b, unsigned long long v,
                                                            unsigned base, const char *prefix)
{
  char d[2 + 20], *e = d + sizeof d, *w = e;
  do {
    *--w = "0123456789abcdef"[v % base];
    v /= base;
  } while (v);
  for (size_t n = strlen(prefix); n; n--)
    *--w = prefix[n - 1];
  pi_sbuf_put(b, w, (size_t)(e - w));
}

void pi_format_enum(pi_sbuf *b, const pi_enum_desc *en, int64_t v)
{
  const pi_enum_entry *e = pi_enum_lookup(en, v);
  if (e) {
    pi_sbuf_puts(b, e->name);
    return;
  }
  if (en && en->is_flags && v == 0) { /* no flag set: a value like any other */
    pi_sbuf_puts(b, "0");
    return;
  }
  if (!en || !en->is_flags) {
    pi_sbuf_printf(b, "0x%llx", (unsigned long long)v);
    if (en)
      pi_sbuf_printf(b, " (not a %s)", en->name);
    return;
  }
  uint64_t left = (uint64_t)v;
  bool first = true;
  for (unsigned i = 0; i < en->count; i++) {
    uint64_t bit = (uint64_t)en->entries[i].value;
    if (bit && (bit & (bit - 1)) == 0 && (left & bit)) {
      pi_sbuf_puts(b, first ? "" : "|");
      pi_sbuf_puts(b, en->entries[i].name);
      left &= ~bit;
      first = false;
    }
  }
  if (left)
    put_unsigned(b, left, 16, first ? "0x" : "|0x");
}

static void format_string(pi_sbuf *b, const char *s, size_t max_len)
{
  if (!s) {
    pi_sbuf_puts(b, "NULL");
    return;
  }
  size_t n = strnlen(s, max_len);
  size_t shown = n < MAX_STRING ? n : MAX_STRING;
  pi_sbuf_puts(b, "\"");
  for (size_t i = 0; i < shown; i++) {
    /* A run of characters shown as they are, in one piece (the recorder
     * prints every string an info query answers). */
    size_t run = pi_plain_prefix(s + i, shown - i);
    if (run) {
      pi_sbuf_put(b, s + i, run);
      i += run - 1;
      continue;
    }
    unsigned char c = (unsigned char)s[i];
    if (c == '\n')
      pi_sbuf_puts(b, "\\n");
    else if (c == '\t')
      pi_sbuf_puts(b, "\\t");
    else if (c == '"' || c == '\\')
      pi_sbuf_printf(b, "\\%c", c);
    else /* below 0x20, or 0x7f */
      pi_sbuf_printf(b, "\\x%02x", c);
  }
  pi_sbuf_puts(b, "\"");
  if (shown < n)
    pi_sbuf_printf(b, "...(%zu chars)", n);
}

/* As printf's %p: 0x and the hex digits; NULL by name. */
static void format_ptr(pi_sbuf *b, const void *p)
{
  if (p)
    put_unsigned(b, (uintptr_t)p, 16, "0x");
  else
    pi_sbuf_puts(b, "NULL");
}

static void format_bytes(pi_sbuf *b, const void *p, size_t size)
{
  format_ptr(b, p);
  if (!p)
    return;
  pi_sbuf_printf(b, " (%zu bytes:", size);
  const unsigned char *c = p;
  for (size_t i = 0; i < size && i < MAX_BYTES; i++)
    pi_sbuf_printf(b, " %02x", c[i]);
  pi_sbuf_puts(b, size > MAX_BYTES ? " ...)" : ")");
}

size_t pi_value_width(uint8_t vt, const pi_enum_desc *en)
{
  switch (vt) {
  case PI_VT_U32: case PI_VT_I32: case PI_VT_BOOL: return 4;
  case PI_VT_CBOOL: return 1;
  case PI_VT_U64: return 8;
  case PI_VT_ENUM: case PI_VT_FLAGS: return en ? en->width : 4;
  case PI_VT_SIZE: case PI_VT_NATIVE: case PI_VT_PTR: case PI_VT_HANDLE:
  case PI_VT_PROPS: case PI_VT_STRING: return sizeof(void *);
  default: return 1;
  }
}

static int64_t load_scalar(const void *p, size_t w, bool is_signed)
{
  switch (w) {
  case 1: return *(const uint8_t *)p;
  case 4: {
    uint32_t u;
    memcpy(&u, p, 4);
    return is_signed ? (int64_t)(int32_t)u : (int64_t)u;
  }
  default: {
    uint64_t u;
    memcpy(&u, p, 8);
    return (int64_t)u;
  }
  }
}

/* One element of type vt, already loaded. */
static void format_elem(pi_sbuf *b, uint8_t vt, uint8_t obj,
                        const pi_enum_desc *en, int64_t v)
{
  switch (vt) {
  case PI_VT_U32: case PI_VT_U64: case PI_VT_SIZE:
    put_unsigned(b, (unsigned long long)v, 10, "");
    break;
  case PI_VT_I32:
    put_unsigned(b, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, 10,
                 v < 0 ? "-" : "");
    break;
  case PI_VT_BOOL: case PI_VT_CBOOL:
    pi_sbuf_puts(b, v == 0 ? "false" : v == 1 ? "true" : "true(?)");
    break;
  case PI_VT_NATIVE:
    pi_sbuf_printf(b, "0x%llx", (unsigned long long)v);
    break;
  case PI_VT_ENUM: case PI_VT_FLAGS:
    pi_format_enum(b, en, v);
    break;
  case PI_VT_HANDLE:
    format_ptr(b, (const void *)(uintptr_t)v);
    (void)obj;
    break;
  default:
    format_ptr(b, (const void *)(uintptr_t)v);
    break;
  }
}

/* A 0-terminated key/value property list. */
void pi_format_prop_value(pi_sbuf *b, const pi_enum_desc *keys, int64_t key, int64_t v)
{
  const pi_enum_entry *e = pi_enum_lookup(keys, key);
  if (e && e->vt && e->vt != PI_VT_HANDLE && e->vt != PI_VT_PROPS && !e->is_array)
    pi_format_value(b, e->vt, e->obj, e->en, &v, sizeof v, false);
  else
    pi_sbuf_printf(b, "0x%llx", (unsigned long long)v);
}

static void format_props(pi_sbuf *b, const pi_enum_desc *keys, const void *p,
                         size_t elem)
{
  format_ptr(b, p);
  if (!p)
    return;
  pi_sbuf_puts(b, " [");
  const unsigned char *c = p;
  for (unsigned i = 0; i < 2 * MAX_ELEMS; i += 2) {
    int64_t k = load_scalar(c + i * elem, elem, false);
    if (k == 0) {
      pi_sbuf_puts(b, i ? ", 0 ]" : " 0 ]");
      return;
    }
    int64_t v = load_scalar(c + (i + 1) * elem, elem, false);
    pi_sbuf_puts(b, i ? ", " : " ");
    pi_format_enum(b, keys, k);
    pi_sbuf_puts(b, " = ");
    pi_format_prop_value(b, keys, k, v);
  }
  pi_sbuf_puts(b, " ... ]");
}

void pi_format_value(pi_sbuf *b, uint8_t vt, uint8_t obj,
                     const pi_enum_desc *en, const void *p, size_t size,
                     bool is_array)
{
  if (!p) {
    pi_sbuf_puts(b, "NULL");
    return;
  }
  if (vt == PI_VT_STRING) {
    format_string(b, p, size);
    return;
  }
  if (vt == PI_VT_BYTES) {
    pi_sbuf_puts(b, "<");
    const unsigned char *c = p;
    for (size_t i = 0; i < size && i < MAX_BYTES; i++)
      pi_sbuf_printf(b, "%02x", c[i]);
    pi_sbuf_puts(b, size > MAX_BYTES ? "...>" : ">");
    return;
  }
  if (vt == PI_VT_PROPS) {
    format_props(b, en, p, sizeof(intptr_t));
    return;
  }
  size_t w = pi_value_width(vt, en);
  bool sgn = vt == PI_VT_I32 || (en && en->is_signed);
  if (!is_array) {
    if (size < w) {
      pi_sbuf_printf(b, "<%zu bytes, need %zu>", size, w);
      return;
    }
    format_elem(b, vt, obj, en, load_scalar(p, w, sgn));
    return;
  }
  size_t n = size / w;
  pi_sbuf_puts(b, "[");
  for (size_t i = 0; i < n && i < MAX_ELEMS; i++) {
    pi_sbuf_puts(b, i ? ", " : " ");
    format_elem(b, vt, obj, en, load_scalar((const char *)p + i * w, w, sgn));
  }
  pi_sbuf_puts(b, n > MAX_ELEMS ? ", ... ]" : " ]");
  if (n > MAX_ELEMS)
    pi_sbuf_printf(b, "(%zu elements)", n);
}

/* ---- Parameters ----------------------------------------------------------- */

static uint64_t ref_value(pi_param_ref r, const uint64_t *argv)
{
  return r.ref >= 0 ? argv[r.ref] : r.literal;
}

/* The value of a count or size parameter: for an out counter (pi_uint32 *)
 * the number it points at, else the number itself. */
static uint64_t count_of(const pi_api_desc *api, pi_param_ref r,
                         const uint64_t *argv)
{
  if (r.ref >= 0 && api->params[r.ref].dir != PI_DIR_IN) {
    const void *p = (const void *)(uintptr_t)argv[r.ref];
    return p ? (uint64_t)load_scalar(p, pi_value_width(api->params[r.ref].vt, NULL),
                                     false)
             : 0;
  }
  return ref_value(r, argv);
}

size_t pi_param_extent(const pi_param_desc *p, const uint64_t *argv)
{
  /* Counts may come from a damaged recording: a size that overflows is
   * SIZE_MAX (no allocation succeeds), never a small wrapped one. */
  uint64_t n = ref_value(p->count, argv);
  size_t w;
  switch (p->kind) {
  case PI_PK_BYTES: w = 1; break;
  case PI_PK_ARRAY: w = pi_value_width(p->vt, p->en); break;
  case PI_PK_HANDLES: w = sizeof(void *); break;
  default: return 0;
  }
  return w && n > SIZE_MAX / w ? SIZE_MAX : (size_t)n * w;
}

static void format_binaries(pi_sbuf *b, const pi_device_binary *bins,
                            uint64_t n)
{
  format_ptr(b, bins);
  if (!bins)
    return;
  pi_sbuf_puts(b, " [");
  for (uint64_t i = 0; i < n && i < MAX_ELEMS; i++) {
    const struct pi_device_binary_struct *d = bins[i];
    pi_sbuf_puts(b, i ? ", " : " ");
    if (!d) {
      pi_sbuf_puts(b, "NULL");
      continue;
    }
    const pi_enum_desc *fmt = pi_enum_find("pi_device_binary_type");
    pi_sbuf_printf(b, "%s ", d->DeviceTargetSpec ? d->DeviceTargetSpec : "?");
    pi_format_enum(b, fmt, d->Format);
    pi_sbuf_printf(b, " %zu bytes", (size_t)(d->BinaryEnd - d->BinaryStart));
  }
  pi_sbuf_puts(b, " ]");
}

static void format_info(pi_sbuf *b, const pi_api_desc *api,
                        const pi_param_desc *p, const uint64_t *argv,
                        bool after)
{
  const void *ptr = (const void *)(uintptr_t)argv[p - api->params];
  format_ptr(b, ptr);
  if (!after || !ptr)
    return;
  int64_t query = (int64_t)argv[p->query];
  size_t size = (size_t)ref_value(p->count, argv);
  if (p->size_ret >= 0 && argv[p->size_ret]) {
    size_t ret;
    memcpy(&ret, (const void *)(uintptr_t)argv[p->size_ret], sizeof ret);
    if (ret < size)
      size = ret;
  }
  const pi_enum_entry *e = pi_enum_lookup(p->en, query);
  pi_sbuf_puts(b, " [ ");
  if (e)
    pi_format_value(b, e->vt, e->obj, e->en, ptr, size, e->is_array);
  else
    pi_format_value(b, PI_VT_BYTES, 0, NULL, ptr, size, false);
  pi_sbuf_puts(b, " ]");
}

void pi_format_param(pi_sbuf *b, const pi_api_desc *api, unsigned i,
                     const uint64_t *argv, bool after)
{
  const pi_param_desc *p = &api->params[i];
  uint64_t raw = argv[i];
  const void *ptr = (const void *)(uintptr_t)raw;
  bool in = p->dir == PI_DIR_IN;
  bool show = in || after; /* an out value exists only after the call */

  switch (p->kind) {
  case PI_PK_SCALAR:
    if (in) {
      int64_t v = (int64_t)raw;
      if (p->vt == PI_VT_I32)
        v = (int32_t)raw;
      format_elem(b, p->vt, p->obj, p->en, v);
      return;
    }
    format_ptr(b, ptr);
    if (after && ptr) {
      pi_sbuf_puts(b, " [ ");
      if (p->vt == PI_VT_PTR || p->vt == PI_VT_NATIVE)
        format_elem(b, p->vt, 0, NULL, load_scalar(ptr, sizeof(void *), false));
      else
        pi_format_value(b, p->vt, p->obj, p->en, ptr, pi_value_width(p->vt, p->en),
                        false);
      pi_sbuf_puts(b, " ]");
    }
    return;
  case PI_PK_HANDLE:
    if (in) {
      format_ptr(b, ptr);
      return;
    }
    format_ptr(b, ptr);
    if (after && ptr) {
      pi_sbuf_puts(b, " [ ");
      format_ptr(b, *(void *const *)ptr);
      pi_sbuf_puts(b, " ]");
    }
    return;
  case PI_PK_HANDLES:
  case PI_PK_ARRAY: {
    format_ptr(b, ptr);
    if (!ptr || !show)
      return;
    uint64_t n = count_of(api, p->count, argv);
    if (!in && p->count.ref >= 0 && api->params[p->count.ref].dir == PI_DIR_IN) {
      /* An out array's capacity; with a separate out counter, show what
       * was written. */
      for (unsigned j = 0; j < api->nparams; j++)
        if (j != i && api->params[j].dir == PI_DIR_OUT &&
            api->params[j].kind == PI_PK_SCALAR &&
            api->params[j].vt == PI_VT_U32 && argv[j]) {
          uint64_t written = count_of(api, (pi_param_ref){(int8_t)j, 0}, argv);
          if (written < n)
            n = written;
        }
    }
    pi_sbuf_puts(b, " ");
    uint8_t vt = p->kind == PI_PK_HANDLES ? PI_VT_HANDLE : p->vt;
    pi_format_value(b, vt, p->obj, p->en, ptr, (size_t)n * pi_value_width(vt, p->en),
                    true);
    return;
  }
  case PI_PK_STRING:
    if (in) {
      format_string(b, ptr, SIZE_MAX);
      return;
    }
    format_ptr(b, ptr);
    if (after && ptr) {
      pi_sbuf_puts(b, " [ ");
      format_string(b, *(const char *const *)ptr, SIZE_MAX);
      pi_sbuf_puts(b, " ]");
    }
    return;
  case PI_PK_STRINGS: {
    format_ptr(b, ptr);
    if (!ptr)
      return;
    const char *const *s = ptr;
    const size_t *lens = p->lengths >= 0
                             ? (const size_t *)(uintptr_t)argv[p->lengths]
                             : NULL;
    uint64_t n = ref_value(p->count, argv);
    pi_sbuf_puts(b, " [");
    for (uint64_t j = 0; j < n && j < MAX_ELEMS; j++) {
      pi_sbuf_puts(b, j ? ", " : " ");
      format_string(b, s[j], lens && lens[j] ? lens[j] : SIZE_MAX);
    }
    pi_sbuf_puts(b, " ]");
    return;
  }
  case PI_PK_BYTES:
    if (!show) {
      format_ptr(b, ptr);
      return;
    }
    format_bytes(b, ptr, (size_t)ref_value(p->count, argv));
    return;
  case PI_PK_INFO:
    format_info(b, api, p, argv, after);
    return;
  case PI_PK_PROPS:
    format_props(b, p->en, ptr, sizeof(intptr_t) == 8 && p->en && p->en->width == 8
                                    ? 8
                                    : sizeof(intptr_t));
    return;
  case PI_PK_BINARIES:
    format_binaries(b, ptr, ref_value(p->count, argv));
    return;
  case PI_PK_BLOBS: {
    format_ptr(b, ptr);
    const size_t *lens = p->lengths >= 0
                             ? (const size_t *)(uintptr_t)argv[p->lengths]
                             : NULL;
    if (ptr && lens) {
      uint64_t n = ref_value(p->count, argv);
      pi_sbuf_puts(b, " [");
      for (uint64_t j = 0; j < n && j < MAX_ELEMS; j++)
        pi_sbuf_printf(b, "%s%zu bytes", j ? ", " : " ", lens[j]);
      pi_sbuf_puts(b, " ]");
    }
    return;
  }
  case PI_PK_PROPERTIES: {
    format_ptr(b, ptr);
    const pi_device_binary_property *props = ptr;
    uint64_t n = ref_value(p->count, argv);
    if (ptr && n) {
      pi_sbuf_puts(b, " [");
      for (uint64_t j = 0; j < n && j < MAX_ELEMS; j++)
        pi_sbuf_printf(b, "%s%s", j ? ", " : " ",
                       props[j] && props[j]->Name ? props[j]->Name : "?");
      pi_sbuf_puts(b, " ]");
    }
    return;
  }
  case PI_PK_IMAGE_FORMAT: {
    format_ptr(b, ptr);
    const pi_image_format *f = ptr;
    if (f) {
      pi_sbuf_puts(b, " { ");
      pi_format_enum(b, pi_enum_find("pi_image_channel_order"),
                     f->image_channel_order);
      pi_sbuf_puts(b, ", ");
      pi_format_enum(b, pi_enum_find("pi_image_channel_type"),
                     f->image_channel_data_type);
      pi_sbuf_puts(b, " }");
    }
    return;
  }
  case PI_PK_IMAGE_DESC: {
    format_ptr(b, ptr);
    const pi_image_desc *d = ptr;
    if (d) {
      pi_sbuf_puts(b, " { ");
      pi_format_enum(b, pi_enum_find("pi_mem_type"), d->image_type);
      pi_sbuf_printf(b, ", %zux%zux%zu, array %zu, pitch %zu/%zu, buffer %p }",
                     d->image_width, d->image_height, d->image_depth,
                     d->image_array_size, d->image_row_pitch,
                     d->image_slice_pitch, (void *)d->buffer);
    }
    return;
  }
  case PI_PK_MEM_OBJ_PROPERTY: {
    format_ptr(b, ptr);
    const pi_mem_obj_property *m = ptr;
    if (m)
      pi_sbuf_printf(b, " { type %d, access 0x%x }", (int)m->type,
                     (unsigned)m->mem_access);
    return;
  }
  case PI_PK_USMREF:
    format_ptr(b, ptr);
    if (ptr) {
      pi_sbuf_puts(b, " [ ");
      format_ptr(b, *(void *const *)ptr);
      pi_sbuf_puts(b, " ]");
    }
    return;
  case PI_PK_FNPTR:
  case PI_PK_HOSTPTR:
  case PI_PK_USMPTR:
  default:
    format_ptr(b, ptr);
    return;
  }
}

/* ---- Call blocks ---------------------------------------------------------- */

/* "<prefix><ctype> <name> : " of a parameter's line. */
static void put_param_head(pi_sbuf *b, const char *prefix, const pi_param_desc *p)
{
  pi_sbuf_puts(b, prefix);
  pi_sbuf_puts(b, p->ctype);
  pi_sbuf_puts(b, " ");
  pi_sbuf_puts(b, p->name);
  pi_sbuf_puts(b, " : ");
}

void pi_format_call_enter(pi_sbuf *b, const pi_api_desc *api,
                          const uint64_t *argv, const char *tag)
{
  pi_sbuf_puts(b, "---> ");
  pi_sbuf_puts(b, api->name);
  pi_sbuf_puts(b, "(");
  pi_sbuf_puts(b, tag ? tag : "");
  pi_sbuf_puts(b, "\n");
  for (unsigned i = 0; i < api->nparams; i++) {
    put_param_head(b, "\t", &api->params[i]);
    pi_format_param(b, api, i, argv, false);
    pi_sbuf_puts(b, "\n");
  }
}

/* Whether a call with a blocking flag was made with it false. */
static bool non_blocking(const pi_api_desc *api, const uint64_t *argv)
{
  return api->blocking >= 0 && !argv[api->blocking];
}

static void format_exit(pi_sbuf *b, const pi_api_desc *api, const uint64_t *argv, pi_result r,
                        const char *tag, bool live);

void pi_format_call_exit(pi_sbuf *b, const pi_api_desc *api,
                         const uint64_t *argv, pi_result r, const char *tag)
{
  format_exit(b, api, argv, r, tag, false);
}

void pi_format_call_exit_live(pi_sbuf *b, const pi_api_desc *api, const uint64_t *argv,
                              pi_result r, const char *tag)
{
  format_exit(b, api, argv, r, tag, true);
}

static void format_exit(pi_sbuf *b, const pi_api_desc *api, const uint64_t *argv, pi_result r,
                        const char *tag, bool live)
{
  bool pending = live && non_blocking(api, argv);
  pi_sbuf_puts(b, ") ---> ");
  if (tag) {
    pi_sbuf_puts(b, api->name);
    pi_sbuf_puts(b, tag);
    pi_sbuf_puts(b, " ");
  }
  pi_sbuf_puts(b, "\tpi_result : ");
  pi_sbuf_puts(b, pi_result_name(r));
  pi_sbuf_puts(b, "\n");
  if (r != PI_SUCCESS)
    return;
  for (unsigned i = 0; i < api->nparams; i++) {
    if (api->params[i].dir == PI_DIR_IN)
      continue;
    put_param_head(b, "\t[out]", &api->params[i]);
    if (pending && api->params[i].kind == PI_PK_BYTES) {
      format_ptr(b, (const void *)(uintptr_t)argv[i]);
      pi_sbuf_puts(b, " (written when the command completes)");
    } else {
      pi_format_param(b, api, i, argv, true);
    }
    pi_sbuf_puts(b, "\n");
  }
}
