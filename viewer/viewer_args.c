/*
 * viewer_args.c: a recorded call's arguments as short text (show --compact,
 * export, the report's call list, and the diff, which prints handles by
 * role), kernel names, bytes moved, and a small integer map.
 *
 * The text comes from the recorded JSON, which the recorder wrote with the
 * one decoder's conventions: handle ids, enum numbers (named here with
 * pi_format_enum), info results already decoded. The full SYCL_PI_TRACE=2
 * blocks of `show` go through the decoder itself (viewer_pack.c).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "viewer_common.h"

/* ---- Integer map -------------------------------------------------------------------- */

#define EMPTY INT64_MIN

static void map_grow(vw_map *m)
{
  size_t cap = m->cap ? 2 * m->cap : 256;
  int64_t *k = malloc(cap * sizeof *k), *v = malloc(cap * sizeof *v);
  if (!k || !v) {
    free(k);
    free(v);
    return;
  }
  for (size_t i = 0; i < cap; i++)
    k[i] = EMPTY;
  vw_map old = *m;
  m->keys = k;
  m->vals = v;
  m->cap = cap;
  m->n = 0;
  for (size_t i = 0; i < old.cap; i++)
    if (old.keys[i] != EMPTY)
      vw_map_put(m, old.keys[i], old.vals[i]);
  free(old.keys);
  free(old.vals);
}

static size_t slot(const vw_map *m, int64_t key)
{
  uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15u;
  size_t i = (size_t)(h >> 20) & (m->cap - 1);
  while (m->keys[i] != EMPTY && m->keys[i] != key)
    i = (i + 1) & (m->cap - 1);
  return i;
}

void vw_map_put(vw_map *m, int64_t key, int64_t val)
{
  if (key == EMPTY)
    return;
  if (2 * (m->n + 1) > m->cap)
    map_grow(m);
  if (!m->cap)
    return;
  size_t i = slot(m, key);
  if (m->keys[i] == EMPTY)
    m->n++;
  m->keys[i] = key;
  m->vals[i] = val;
}

bool vw_map_get(const vw_map *m, int64_t key, int64_t *val)
{
  if (!m->cap || key == EMPTY)
    return false;
  size_t i = slot(m, key);
  if (m->keys[i] == EMPTY)
    return false;
  *val = m->vals[i];
  return true;
}

void vw_map_free(vw_map *m)
{
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

/* ---- Values ------------------------------------------------------------------------- */

int64_t vw_arg_int(const pt_call *c, unsigned i)
{
  return pt_json_int(pt_json_at(c->args, i), 0);
}

static unsigned max_elems(const vw_textopt *o) { return o && o->max_elems ? o->max_elems : 8; }
static unsigned max_chars(const vw_textopt *o) { return o && o->max_chars ? o->max_chars : 60; }

static void put_handle(pi_sbuf *b, const vw_textopt *o, uint8_t kind, int64_t id, int64_t off)
{
  if (id == 0) {
    pi_sbuf_put(b, "NULL", 4);
  } else if (o && o->handle) {
    o->handle(b, kind, id, off, o->ctx);
  } else {
    pi_sbuf_puts(b, pi_object_kind_name(kind));
    pi_sbuf_put(b, "#", 1);
    vw_put_i64(b, id);
    if (off) {
      pi_sbuf_put(b, "+", 1);
      vw_put_i64(b, off);
    }
  }
}

/* A pointer: "usm#3+16", "mapped#2", a raw address (hex, or "addr" when
 * masked), NULL. */
static void put_address(pi_sbuf *b, const vw_textopt *o, const pt_json *j)
{
  pt_ref r;
  if (j && j->type == PJ_STRING && pt_ref_parse(j->u.s, &r))
    put_handle(b, o, r.obj, r.id, r.offset);
  else if (j && j->type == PJ_STRING)
    vw_put_quoted(b, j->u.s, max_chars(o));
  else if (!j || pt_json_int(j, 0) == 0)
    pi_sbuf_put(b, "NULL", 4);
  else if (o && o->mask_addresses)
    pi_sbuf_put(b, "addr", 4);
  else
    pi_sbuf_printf(b, "0x%llx", (unsigned long long)pt_json_int(j, 0));
}

/* One number of element type vt. */
static void put_number(pi_sbuf *b, const vw_textopt *o, uint8_t vt, const pi_enum_desc *en,
                       const pt_json *j)
{
  int64_t v = pt_json_int(j, 0);
  switch (vt) {
  case PI_VT_I32:
    vw_put_i64(b, v);
    return;
  case PI_VT_BOOL:
  case PI_VT_CBOOL:
    pi_sbuf_puts(b, v == 0 ? "false" : v == 1 ? "true" : "true(?)");
    return;
  case PI_VT_NATIVE:
    if (o && o->mask_addresses)
      pi_sbuf_put(b, "native", 6);
    else
      pi_sbuf_printf(b, "0x%llx", (unsigned long long)v);
    return;
  case PI_VT_PTR:
    put_address(b, o, j);
    return;
  case PI_VT_ENUM:
  case PI_VT_FLAGS:
    pi_format_enum(b, en, v);
    return;
  default:
    vw_put_u64(b, (uint64_t)v);
    return;
  }
}

/* A 0-terminated property list: [KEY=VALUE, ..., 0], each value as its
 * key's type (pi_format_prop_value). */
static void put_props(pi_sbuf *b, const vw_textopt *o, const pi_param_desc *p,
                      const pt_json *j)
{
  if (j->n == 0) { /* not even its 0: not read (viewer_pack.c) */
    pi_sbuf_puts(b, "(not recorded)");
    return;
  }
  pi_sbuf_put(b, "[", 1);
  for (uint32_t k = 0, shown = 0; k < j->n; k += 2, shown++) {
    if (shown)
      pi_sbuf_put(b, ", ", 2);
    int64_t key = pt_json_int(j->u.items[k], 0);
    if (shown == max_elems(o) || key == 0) {
      pi_sbuf_puts(b, key ? "..." : "0");
      break;
    }
    pi_format_enum(b, p->en, key);
    pi_sbuf_put(b, "=", 1);
    pi_format_prop_value(b, p->en, key, pt_json_int(pt_json_at(j, k + 1), 0));
  }
  pi_sbuf_put(b, "]", 1);
}

/* An array of handles or numbers. */
static void put_array(pi_sbuf *b, const vw_textopt *o, const pi_param_desc *p, const pt_json *j)
{
  if (!j || j->type != PJ_ARRAY) {
    pi_sbuf_put(b, "NULL", 4);
    return;
  }
  if (p->kind == PI_PK_PROPS) {
    put_props(b, o, p, j);
    return;
  }
  unsigned shown = j->n < max_elems(o) ? j->n : max_elems(o);
  pi_sbuf_put(b, "[", 1);
  for (unsigned k = 0; k < shown; k++) {
    if (k)
      pi_sbuf_put(b, ", ", 2);
    if (p->kind == PI_PK_HANDLES)
      put_handle(b, o, p->obj, pt_json_int(j->u.items[k], 0), 0);
    else
      put_number(b, o, p->vt, p->en, j->u.items[k]);
  }
  if (shown < j->n)
    pi_sbuf_printf(b, ", ...(%u)", j->n);
  pi_sbuf_put(b, "]", 1);
}

/* The size a bytes parameter names. */
static int64_t extent(const pt_call *c, const pi_param_desc *p)
{
  return p->count.ref >= 0 ? vw_arg_int(c, (unsigned)p->count.ref) : p->count.literal;
}

/* A small inline payload of parameter i (role "in"), as hex; false if none. */
static bool put_inline_hex(pi_sbuf *b, const pt_call *c, unsigned i)
{
  for (uint32_t k = 0; c->data && c->data->type == PJ_ARRAY && k < c->data->n; k++) {
    const pt_json *d = c->data->u.items[k], *h = pt_json_at(d, 4), *r = pt_json_at(d, 1);
    if (pt_json_int(pt_json_at(d, 0), -1) != i || !h || h->type != PJ_STRING || !r ||
        r->type != PJ_STRING || strcmp(r->u.s, "in") != 0 || h->n == 0 || h->n > 16)
      continue;
    pi_sbuf_put(b, " <", 2);
    for (uint32_t x = 0; x < h->n; x++) {
      char ch = h->u.s[x] >= 'A' && h->u.s[x] <= 'F' ? (char)(h->u.s[x] | 32) : h->u.s[x];
      pi_sbuf_put(b, &ch, 1);
    }
    pi_sbuf_put(b, ">", 1);
    return true;
  }
  return false;
}

static void put_bytes(pi_sbuf *b, const vw_textopt *o, const pi_param_desc *p, unsigned i,
                      const pt_call *c, const pt_json *j)
{
  if (p->dir == PI_DIR_IN && (!j || j->type == PJ_NULL)) {
    pi_sbuf_put(b, "NULL", 4);
    return;
  }
  vw_put_i64(b, extent(c, p));
  pi_sbuf_put(b, " bytes", 6);
  if (!o || !o->no_payloads)
    put_inline_hex(b, c, i);
}

/* An info query's result: the recorder's decoded text; handles in it
 * through the handle printer, pointers masked when asked. */
static void put_info(pi_sbuf *b, const vw_textopt *o, const pi_param_desc *p, const pt_call *c,
                     const pt_json *j)
{
  if (!j || j->type != PJ_STRING) {
    pi_sbuf_put(b, "NULL", 4);
    return;
  }
  const pi_enum_entry *e = pi_enum_lookup(p->en, vw_arg_int(c, (unsigned)p->query));
  if (e && (e->vt == PI_VT_PTR || e->vt == PI_VT_NATIVE) && o && o->mask_addresses) {
    pi_sbuf_put(b, "addr", 4);
    return;
  }
  const char *s = j->u.s;
  size_t len = j->n, max = max_chars(o) * 2, shown = len < max ? len : max;
  for (size_t k = 0; k < shown;) {
    pt_ref r;
    if (e && e->vt == PI_VT_HANDLE && pt_ref_parse(s + k, &r)) {
      put_handle(b, o, r.obj, r.id, r.offset);
      k += r.len;
    } else {
      pi_sbuf_put(b, s + k++, 1);
    }
  }
  if (shown < len)
    pi_sbuf_put(b, "...", 3);
}

static void put_struct(pi_sbuf *b, const pi_param_desc *p, const pt_json *j)
{
  if (!j || j->type != PJ_ARRAY) {
    pi_sbuf_put(b, "NULL", 4);
    return;
  }
  int64_t v0 = pt_json_int(pt_json_at(j, 0), 0), v1 = pt_json_int(pt_json_at(j, 1), 0);
  pi_sbuf_put(b, "{", 1);
  if (p->kind == PI_PK_IMAGE_FORMAT) {
    pi_format_enum(b, pi_enum_find("pi_image_channel_order"), v0);
    pi_sbuf_put(b, ", ", 2);
    pi_format_enum(b, pi_enum_find("pi_image_channel_type"), v1);
  } else if (p->kind == PI_PK_IMAGE_DESC) {
    pi_format_enum(b, pi_enum_find("pi_mem_type"), v0);
    pi_sbuf_printf(b, ", %lldx%lldx%lld", (long long)v1,
                   (long long)pt_json_int(pt_json_at(j, 2), 0),
                   (long long)pt_json_int(pt_json_at(j, 3), 0));
  } else {
    pi_sbuf_printf(b, "type %lld, access 0x%llx", (long long)v0, (unsigned long long)v1);
  }
  pi_sbuf_put(b, "}", 1);
}

/* Program binaries: [[target, format, size], ...]; metadata: names. */
static void put_list(pi_sbuf *b, const vw_textopt *o, const pi_param_desc *p, const pt_json *j)
{
  if (!j || j->type != PJ_ARRAY) {
    pi_sbuf_put(b, "NULL", 4);
    return;
  }
  pi_sbuf_put(b, "[", 1);
  for (uint32_t k = 0; k < j->n && k < max_elems(o); k++) {
    const pt_json *e = j->u.items[k];
    if (k)
      pi_sbuf_put(b, ", ", 2);
    if (p->kind == PI_PK_BINARIES) {
      const pt_json *t = pt_json_at(e, 0);
      pi_sbuf_printf(b, "%s %lld bytes", t && t->type == PJ_STRING ? t->u.s : "?",
                     (long long)pt_json_int(pt_json_at(e, 2), 0));
    } else if (e->type == PJ_STRING) {
      vw_put_quoted(b, e->u.s, max_chars(o));
    }
  }
  pi_sbuf_put(b, "]", 1);
}

static void put_in_value(pi_sbuf *b, const vw_textopt *o, const pi_api_desc *api, unsigned i,
                         const pt_call *c, const pt_json *j)
{
  const pi_param_desc *p = &api->params[i];
  switch (p->kind) {
  case PI_PK_SCALAR:
    if (!j || j->type == PJ_NULL)
      pi_sbuf_put(b, "NULL", 4);
    else
      put_number(b, o, p->vt, p->en, j);
    return;
  case PI_PK_HANDLE:
    put_handle(b, o, p->obj, pt_json_int(j, 0), 0);
    return;
  case PI_PK_HANDLES: case PI_PK_ARRAY: case PI_PK_PROPS:
    put_array(b, o, p, j);
    return;
  case PI_PK_STRING:
    if (j && j->type == PJ_STRING)
      vw_put_quoted(b, j->u.s, max_chars(o));
    else
      pi_sbuf_put(b, "NULL", 4);
    return;
  case PI_PK_STRINGS: case PI_PK_BLOBS: {
    int64_t n = extent(c, p);
    const char *what = p->kind == PI_PK_STRINGS ? (n == 1 ? "string" : "strings")
                                                : (n == 1 ? "binary" : "binaries");
    pi_sbuf_printf(b, "%lld %s", (long long)n, what);
    return;
  }
  case PI_PK_BYTES:
    put_bytes(b, o, p, i, c, j);
    return;
  case PI_PK_INFO:
    put_info(b, o, p, c, j);
    return;
  case PI_PK_BINARIES: case PI_PK_PROPERTIES:
    put_list(b, o, p, j);
    return;
  case PI_PK_IMAGE_FORMAT: case PI_PK_IMAGE_DESC: case PI_PK_MEM_OBJ_PROPERTY:
    put_struct(b, p, j);
    return;
  case PI_PK_FNPTR:
    pi_sbuf_puts(b, pt_json_int(j, 0) ? "fn" : "NULL");
    return;
  default: /* host and USM pointers */
    put_address(b, o, j);
    return;
  }
}

void vw_arg_text(pi_sbuf *b, const vw_textopt *o, const pi_api_desc *api, unsigned i,
                 const pt_call *c)
{
  const pi_param_desc *p = &api->params[i];
  const pt_json *j = pt_json_at(c->args, i);
  if (p->dir != PI_DIR_IN && (!c->returned || c->result != PI_SUCCESS)) {
    pi_sbuf_put(b, "_", 1);
    return;
  }
  if (p->dir != PI_DIR_IN && p->kind == PI_PK_HANDLE && pt_json_int(j, 0) == 0) {
    pi_sbuf_put(b, "NULL", 4);
    return;
  }
  put_in_value(b, o, api, i, c, j);
}

void vw_args_text(pi_sbuf *b, const vw_textopt *o, const pi_api_desc *api, const pt_call *c)
{
  for (unsigned i = 0; i < api->nparams; i++) {
    if (i)
      pi_sbuf_put(b, ", ", 2);
    if (api->params[i].dir != PI_DIR_IN)
      pi_sbuf_put(b, "->", 2);
    vw_arg_text(b, o, api, i, c);
  }
}

/* ---- Kernels --------------------------------------------------------------------- */

bool vw_is_launch(uint32_t api) { return pi_api_flags(api) & PI_API_F_LAUNCH; }

void vw_kernels_note(vw_kernels *k, const pt_call *c)
{
  const pt_json *name = pt_json_at(c->args, 1);
  if (c->api != PI_API_piKernelCreate || !c->returned || c->result != PI_SUCCESS || !name ||
      name->type != PJ_STRING)
    return;
  char **v = pt_grow(k->names, &k->cap, k->n, sizeof *v);
  char *copy = v ? strdup(name->u.s) : NULL;
  if (v)
    k->names = v;
  if (!copy)
    return;
  vw_map_put(&k->ids, vw_arg_int(c, 2), (int64_t)k->n);
  k->names[k->n++] = copy;
}

void vw_kernels_free(vw_kernels *k)
{
  vw_map_free(&k->ids);
  for (size_t i = 0; i < k->n; i++)
    free(k->names[i]);
  free(k->names);
  memset(k, 0, sizeof *k);
}

const char *vw_kernel_of(const vw_kernels *k, const pt_call *c)
{
  int64_t idx;
  if (!vw_is_launch(c->api) || !vw_map_get(&k->ids, vw_arg_int(c, 1), &idx))
    return NULL;
  return k->names[idx];
}

/* ---- Bytes moved ------------------------------------------------------------------ */

static int64_t channel_bytes(int64_t type)
{
  switch (type) {
  case PI_IMAGE_CHANNEL_TYPE_SNORM_INT8: case PI_IMAGE_CHANNEL_TYPE_UNORM_INT8:
  case PI_IMAGE_CHANNEL_TYPE_SIGNED_INT8: case PI_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8:
    return 1;
  case PI_IMAGE_CHANNEL_TYPE_SIGNED_INT32: case PI_IMAGE_CHANNEL_TYPE_UNSIGNED_INT32:
  case PI_IMAGE_CHANNEL_TYPE_FLOAT: case PI_IMAGE_CHANNEL_TYPE_UNORM_INT_101010:
    return 4;
  default:
    return 2;
  }
}

static int64_t channels(int64_t order)
{
  switch (order) {
  case PI_IMAGE_CHANNEL_ORDER_RGBA: case PI_IMAGE_CHANNEL_ORDER_BGRA:
  case PI_IMAGE_CHANNEL_ORDER_ARGB: case PI_IMAGE_CHANNEL_ORDER_ABGR:
  case PI_IMAGE_CHANNEL_ORDER_sRGBA:
    return 4;
  case PI_IMAGE_CHANNEL_ORDER_RGB: case PI_IMAGE_CHANNEL_ORDER_RGBx:
    return 3;
  case PI_IMAGE_CHANNEL_ORDER_RG: case PI_IMAGE_CHANNEL_ORDER_RA:
    return 2;
  default:
    return 1;
  }
}

void vw_note_image(const pt_call *c, vw_map *pixels)
{
  if (c->api != PI_API_piMemImageCreate || !c->returned || c->result != PI_SUCCESS)
    return;
  const pt_json *f = pt_json_at(c->args, 2);
  int64_t px = channels(pt_json_int(pt_json_at(f, 0), 0)) *
               channel_bytes(pt_json_int(pt_json_at(f, 1), 0));
  vw_map_put(pixels, vw_arg_int(c, 5), px);
}

/* Product of a recorded [x, y, z] region (times the pixel size of image
 * `mem` when it is one). */
static int64_t region(const pt_call *c, unsigned i, const vw_map *pixels, int64_t mem)
{
  const pt_json *r = pt_json_at(c->args, i);
  int64_t px = 1;
  if (mem && !vw_map_get(pixels, mem, &px))
    px = 1;
  return pt_json_int(pt_json_at(r, 0), 0) * pt_json_int(pt_json_at(r, 1), 1) *
         pt_json_int(pt_json_at(r, 2), 1) * px;
}

static bool is_usm(const pt_call *c, unsigned i)
{
  const pt_json *j = pt_json_at(c->args, i);
  return j && j->type == PJ_STRING && strncmp(j->u.s, "usm#", 4) == 0;
}

/* A USM copy: from host (src not USM) or to host (dst not USM, src USM). */
static void usm_copy(const pt_call *c, unsigned dst, unsigned src, int64_t n, int64_t *h2d,
                     int64_t *d2h)
{
  if (!is_usm(c, src))
    *h2d = is_usm(c, dst) ? n : 0;
  else if (!is_usm(c, dst))
    *d2h = n;
}

static void map_bytes(const pt_call *c, int64_t *h2d, int64_t *d2h)
{
  int64_t flags = vw_arg_int(c, 3), size = vw_arg_int(c, 5);
  if (flags & PI_MAP_READ)
    *d2h = size;
  if (flags & (PI_MAP_WRITE | PI_MAP_WRITE_INVALIDATE_REGION))
    *h2d = size;
}

int64_t vw_transfer_bytes(const pt_call *c, const vw_map *pixels)
{
  int64_t up, down;
  switch (c->api) {
  case PI_API_piEnqueueMemBufferCopy: return vw_arg_int(c, 5);
  case PI_API_piEnqueueMemBufferCopyRect: return region(c, 5, pixels, 0);
  case PI_API_piEnqueueMemImageCopy: return region(c, 5, pixels, vw_arg_int(c, 1));
  case PI_API_piEnqueueMemUnmap: return 0;
  default:
    vw_call_bytes(c, pixels, &up, &down);
    return up + down;
  }
}

void vw_call_bytes(const pt_call *c, const vw_map *pixels, int64_t *h2d, int64_t *d2h)
{
  *h2d = *d2h = 0;
  if (!c->returned || c->result != PI_SUCCESS)
    return;
  const pt_json *a = c->args;
  switch (c->api) {
  case PI_API_piEnqueueMemBufferWrite: *h2d = vw_arg_int(c, 4); break;
  case PI_API_piEnqueueMemBufferRead: *d2h = vw_arg_int(c, 4); break;
  case PI_API_piEnqueueMemBufferWriteRect: *h2d = region(c, 5, pixels, 0); break;
  case PI_API_piEnqueueMemBufferReadRect: *d2h = region(c, 5, pixels, 0); break;
  case PI_API_piEnqueueMemImageWrite: *h2d = region(c, 4, pixels, vw_arg_int(c, 1)); break;
  case PI_API_piEnqueueMemImageRead: *d2h = region(c, 4, pixels, vw_arg_int(c, 1)); break;
  case PI_API_piEnqueueMemBufferFill: *h2d = vw_arg_int(c, 5); break;
  case PI_API_piEnqueueMemImageFill: *h2d = region(c, 4, pixels, vw_arg_int(c, 1)); break;
  case PI_API_piextUSMEnqueueFill: *h2d = vw_arg_int(c, 4); break;
  case PI_API_piextUSMEnqueueFill2D: case PI_API_piextUSMEnqueueMemset2D:
    *h2d = vw_arg_int(c, 4 + (c->api == PI_API_piextUSMEnqueueFill2D)) *
           vw_arg_int(c, 5 + (c->api == PI_API_piextUSMEnqueueFill2D));
    break;
  case PI_API_piextUSMEnqueueMemcpy: usm_copy(c, 2, 3, vw_arg_int(c, 4), h2d, d2h); break;
  case PI_API_piextUSMEnqueueMemcpy2D:
    usm_copy(c, 2, 4, vw_arg_int(c, 6) * vw_arg_int(c, 7), h2d, d2h);
    break;
  case PI_API_piMemBufferCreate:
    if (pt_json_at(a, 3) && pt_json_at(a, 3)->type != PJ_NULL &&
        (vw_arg_int(c, 1) & (PI_MEM_FLAGS_HOST_PTR_COPY | PI_MEM_FLAGS_HOST_PTR_USE)))
      *h2d = vw_arg_int(c, 2);
    break;
  case PI_API_piMemImageCreate: /* its pixels (vw_note_image has its pixel size) */
    if (pt_json_at(a, 4) && pt_json_at(a, 4)->type != PJ_NULL &&
        (vw_arg_int(c, 1) & (PI_MEM_FLAGS_HOST_PTR_COPY | PI_MEM_FLAGS_HOST_PTR_USE))) {
      const pt_json *d = pt_json_at(a, 3);
      int64_t px = 1;
      vw_map_get(pixels, vw_arg_int(c, 5), &px);
      *h2d = px;
      for (unsigned k = 1; k <= 4; k++) { /* width, height, depth, array size */
        int64_t n = pt_json_int(pt_json_at(d, k), 0);
        *h2d *= n > 0 ? n : 1;
      }
    }
    break;
  case PI_API_piEnqueueMemBufferMap: map_bytes(c, h2d, d2h); break;
  case PI_API_piextEnqueueDeviceGlobalVariableWrite: *h2d = vw_arg_int(c, 4); break;
  case PI_API_piextEnqueueDeviceGlobalVariableRead: *d2h = vw_arg_int(c, 4); break;
  case PI_API_piextEnqueueWriteHostPipe: *h2d = vw_arg_int(c, 5); break;
  case PI_API_piextEnqueueReadHostPipe: *d2h = vw_arg_int(c, 5); break;
  default: break;
  }
}
