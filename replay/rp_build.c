/*
 * rp_build.c: a recorded call's packed arguments (uint64_t argv[], as
 * pi_api_invoke takes them), rebuilt from its recorded JSON arguments and
 * payloads (session/writer.c's encoding): handles, USM allocations and
 * mapped pointers become the live ones, data comes from the payloads, and
 * what the call writes gets scratch memory of the recorded size.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpx.h"

/* ---- Call memory ------------------------------------------------------------------ */

void rp_cc_init(rp_cc *cc, const pt_call *c, const pi_api_desc *api)
{
  cc->c = c;
  cc->api = api;
  memset(cc->argv, 0, sizeof cc->argv);
  memset(cc->slot, 0, sizeof cc->slot);
  memset(cc->want, 0, sizeof cc->want);
  cc->heap = cc->heap_inline;
  cc->nheap = 0;
  cc->cap_heap = RP_CC_HEAP;
  cc->own_event = -1;
  cc->err[0] = 0;
}

void *rp_cc_own(rp_cc *cc, void *p)
{
  if (!p)
    return NULL;
  if (cc->nheap == cc->cap_heap) {
    size_t cap = cc->cap_heap * 2;
    void **v = cc->heap == cc->heap_inline ? malloc(cap * sizeof *v)
                                           : realloc(cc->heap, cap * sizeof *v);
    if (!v) {
      free(p);
      return NULL;
    }
    if (cc->heap == cc->heap_inline)
      memcpy(v, cc->heap_inline, sizeof cc->heap_inline);
    cc->heap = v;
    cc->cap_heap = cap;
  }
  cc->heap[cc->nheap++] = p;
  return p;
}

void *rp_cc_alloc(rp_cc *cc, size_t n)
{
  return rp_cc_own(cc, calloc(1, n ? n : 1));
}

/* n elements of `elem` bytes and `extra` more; NULL when that overflows:
 * counts come from the file, and a damaged one must fail, never wrap. */
static void *alloc_n(rp_cc *cc, size_t n, size_t elem, size_t extra)
{
  if (elem && n > (SIZE_MAX - extra) / elem)
    return NULL;
  return rp_cc_alloc(cc, n * elem + extra);
}

/* a * b + c, or SIZE_MAX when it overflows. */
static size_t sat_mad(size_t a, size_t b, size_t c)
{
  size_t r;
  if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r))
    return SIZE_MAX;
  return r;
}

void rp_cc_done(rp_engine *e, rp_cc *cc, bool keep)
{
  for (size_t i = 0; i < cc->nheap; i++) {
    if (keep)
      rp_keep(e, cc->heap[i]);
    else
      free(cc->heap[i]);
  }
  if (cc->heap != cc->heap_inline)
    free(cc->heap);
  cc->heap = cc->heap_inline;
  cc->nheap = 0;
}

static bool fail(rp_cc *cc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(rp_cc *cc, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cc->err, sizeof cc->err, fmt, ap);
  va_end(ap);
  return false;
}

/* Memory for parameter i could not be had: sizes and counts come from the
 * recording, so say which call and parameter asked. */
static bool no_memory(rp_cc *cc, unsigned i)
{
  return fail(cc, "seq %lld %s: parameter %s needs more memory than there is (a size or "
              "count in the recording may be damaged)", (long long)cc->c->seq, cc->api->name,
              cc->api->params[i].name);
}

/* The payload of parameter i (role, element idx), or false with the reason. */
static bool need_payload(rp_engine *e, rp_cc *cc, unsigned i, const char *role, unsigned idx,
                         unsigned char **out, size_t *size)
{
  rp_data_status st;
  *out = rp_cc_own(cc, rp_payload(e->s, cc->c, i, role, idx, size, &st));
  if (*out)
    return true;
  rp_payload_problem(e->s, cc->c, i, role, st, cc->err, sizeof cc->err);
  return false;
}

/* ---- Live values of recorded ids -------------------------------------------------------- */

/* Stand-ins for ids a --plugin replay never saw created (never dereferenced
 * by the minimal plugins benchmarks use). */
#define RP_STAND_IN(id) (0x5100000000ull + (id) * 64u)

bool rp_resolve(rp_engine *e, uint8_t kind, uint64_t id, uint64_t *live)
{
  *live = 0;
  if (!id)
    return true;
  *live = rp_ids_get(e, id);
  if (!*live && kind == PI_OBJ_PLATFORM)
    *live = e->live_platform;
  if (!*live && kind == PI_OBJ_DEVICE)
    *live = e->live_device;
  if (!*live && e->stand_ins)
    *live = RP_STAND_IN(id);
  return *live != 0;
}

static bool resolve_param(rp_engine *e, rp_cc *cc, unsigned i, uint8_t kind, uint64_t id,
                          uint64_t *live)
{
  if (rp_resolve(e, kind, id, live))
    return true;
  return fail(cc, "seq %lld %s: parameter %s names %s#%llu, which no replayed call created "
              "(was the recording filtered?): cannot replay", (long long)cc->c->seq,
              cc->api->name, cc->api->params[i].name, pi_object_kind_name(kind),
              (unsigned long long)id);
}

/* A recorded pointer: USM (+offset) or mapped resolved, NULL kept; a plain
 * address of the recorded process means nothing here (0). */
static bool pointer(rp_engine *e, rp_cc *cc, unsigned i, pt_ref r, uint64_t *out)
{
  *out = 0;
  if (r.kind != PT_REF_OBJECT || (r.obj != PI_OBJ_USM && r.obj != PI_OBJ_MAPPED))
    return true;
  uint64_t base;
  if (!resolve_param(e, cc, i, r.obj, (uint64_t)r.id, &base))
    return false;
  *out = base + (uint64_t)r.offset;
  return true;
}

/* ---- In-parameters --------------------------------------------------------------------- */

static bool in_scalar(rp_engine *e, rp_cc *cc, unsigned i, const pt_json *j)
{
  const pi_param_desc *p = &cc->api->params[i];
  if (p->vt == PI_VT_PTR)
    return pointer(e, cc, i, pt_ref_of(j), &cc->argv[i]);
  uint64_t v = (uint64_t)pt_json_int(j, 0);
  if (p->vt == PI_VT_NATIVE && v && !rp_native_get(e, v, &cc->argv[i])) {
    if (!e->stand_ins)
      return fail(cc, "seq %lld %s: native handle 0x%llx of parameter %s came from no "
                  "replayed call: cannot replay", (long long)cc->c->seq, cc->api->name,
                  (unsigned long long)v, p->name);
    cc->argv[i] = v;
    return true;
  }
  if (p->vt != PI_VT_NATIVE)
    cc->argv[i] = v;
  return true;
}

static void put_elem(unsigned char *dst, size_t w, uint64_t v)
{
  memcpy(dst, &v, w); /* little-endian: the low bytes */
}

/* Handles, numbers or property lists from a JSON array. */
static bool in_array(rp_engine *e, rp_cc *cc, unsigned i, const pt_json *j)
{
  const pi_param_desc *p = &cc->api->params[i];
  if (!j || j->type != PJ_ARRAY)
    return true; /* NULL */
  size_t w = p->kind == PI_PK_ARRAY ? pi_value_width(p->vt, p->en) : sizeof(void *);
  size_t n = j->n, count = p->kind == PI_PK_PROPS ? 0 : pi_param_extent(p, cc->argv) / w;
  unsigned char *a = alloc_n(cc, n > count ? n : count, w, sizeof(intptr_t));
  if (!a)
    return no_memory(cc, i);
  for (size_t k = 0; k < n; k++) {
    uint64_t v = (uint64_t)pt_json_int(j->u.items[k], 0);
    if (p->kind == PI_PK_HANDLES && !resolve_param(e, cc, i, p->obj, v, &v))
      return false;
    put_elem(a + k * w, w, v);
  }
  cc->argv[i] = (uint64_t)(uintptr_t)a;
  return true;
}

static bool in_bytes(rp_engine *e, rp_cc *cc, unsigned i, const pt_json *j)
{
  if (!j || j->type == PJ_NULL)
    return true;
  size_t size = pi_param_extent(&cc->api->params[i], cc->argv);
  /* A host pointer the call does not read (no COPY/USE flag) is not data. */
  if (cc->api->id == PI_API_piMemBufferCreate &&
      !(cc->argv[1] & (PI_MEM_FLAGS_HOST_PTR_COPY | PI_MEM_FLAGS_HOST_PTR_USE))) {
    void *scratch = rp_cc_alloc(cc, size);
    cc->argv[i] = (uint64_t)(uintptr_t)scratch;
    return scratch || no_memory(cc, i);
  }
  unsigned char *d;
  size_t got;
  if (!need_payload(e, cc, i, "in", 0, &d, &got))
    return false;
  if (got < size) {
    unsigned char *big = rp_cc_alloc(cc, size);
    if (!big)
      return no_memory(cc, i);
    memcpy(big, d, got);
    d = big;
  }
  cc->argv[i] = (uint64_t)(uintptr_t)d;
  return true;
}

/* Sources and binaries: one payload per element. */
static bool in_elements(rp_engine *e, rp_cc *cc, unsigned i, const pt_json *j)
{
  if (!j || j->type == PJ_NULL)
    return true;
  size_t n = (size_t)(cc->api->params[i].count.ref >= 0
                          ? cc->argv[cc->api->params[i].count.ref]
                          : cc->api->params[i].count.literal);
  unsigned char **v = alloc_n(cc, n ? n : 1, sizeof *v, 0);
  if (!v)
    return no_memory(cc, i);
  for (size_t k = 0; k < n; k++) {
    size_t size;
    unsigned char *d;
    if (!need_payload(e, cc, i, "in", (unsigned)k, &d, &size))
      return false;
    unsigned char *z = rp_cc_alloc(cc, size + 1); /* strings get their NUL */
    if (!z)
      return no_memory(cc, i);
    memcpy(z, d, size);
    v[k] = z;
  }
  cc->argv[i] = (uint64_t)(uintptr_t)v;
  return true;
}

/* Room for the elements the call reads: its count, at least what was
 * recorded (the recorder stops at a NULL element; the rest stay NULL). */
static size_t room(const rp_cc *cc, unsigned i, const pt_json *j)
{
  pi_param_ref r = cc->api->params[i].count;
  size_t n = (size_t)(r.ref >= 0 ? cc->argv[r.ref] : r.literal);
  return n >= SIZE_MAX - 1 ? SIZE_MAX : (n > j->n ? n : j->n) + 1;
}

/* piextDeviceSelectBinary's images: [[target, format, size], ...]. */
static bool in_binaries(rp_engine *e, rp_cc *cc, unsigned i, const pt_json *j)
{
  if (!j || j->type != PJ_ARRAY)
    return true;
  struct pi_device_binary_struct *b = alloc_n(cc, j->n, sizeof *b, 0);
  pi_device_binary *v = alloc_n(cc, room(cc, i, j), sizeof *v, 0);
  if (!b || !v)
    return no_memory(cc, i);
  for (uint32_t k = 0; k < j->n; k++) {
    const pt_json *t = pt_json_at(j->u.items[k], 0);
    unsigned char *d;
    size_t size;
    if (!need_payload(e, cc, i, "in", k, &d, &size))
      return false;
    b[k].Version = PI_DEVICE_BINARY_VERSION;
    b[k].Kind = PI_DEVICE_BINARY_OFFLOAD_KIND_SYCL;
    b[k].Format = (uint8_t)pt_json_int(pt_json_at(j->u.items[k], 1), 0);
    b[k].DeviceTargetSpec = t && t->type == PJ_STRING ? t->u.s : NULL;
    b[k].BinaryStart = d;
    b[k].BinaryEnd = d + size;
    v[k] = &b[k];
  }
  cc->argv[i] = (uint64_t)(uintptr_t)v;
  return true;
}

/* Binary metadata: the names were recorded, not the values (an entry
 * without a name was not recorded: it gets an empty one). */
static bool in_properties(rp_cc *cc, unsigned i, const pt_json *j)
{
  if (!j || j->type != PJ_ARRAY)
    return true;
  size_t n = room(cc, i, j);
  struct _pi_device_binary_property_struct *p = alloc_n(cc, n, sizeof *p, 0);
  pi_device_binary_property *v = alloc_n(cc, n, sizeof *v, 0);
  if (!p || !v)
    return no_memory(cc, i);
  for (size_t k = 0; k + 1 < n; k++) {
    const pt_json *name = k < j->n ? j->u.items[k] : NULL;
    p[k].Name = name && name->type == PJ_STRING ? (char *)name->u.s : (char *)"";
    v[k] = &p[k];
  }
  cc->argv[i] = (uint64_t)(uintptr_t)v;
  return true;
}

/* Image format and description, memory-object properties. */
static bool in_struct(rp_engine *e, rp_cc *cc, unsigned i, const pt_json *j)
{
  if (!j || j->type != PJ_ARRAY)
    return true;
  uint64_t f[10] = {0};
  for (uint32_t k = 0; k < j->n && k < 10; k++)
    f[k] = (uint64_t)pt_json_int(j->u.items[k], 0);
  void *out = NULL;
  switch (cc->api->params[i].kind) {
  case PI_PK_IMAGE_FORMAT: {
    pi_image_format *fm = out = rp_cc_alloc(cc, sizeof *fm);
    if (fm)
      *fm = (pi_image_format){(pi_image_channel_order)f[0], (pi_image_channel_type)f[1]};
    break;
  }
  case PI_PK_IMAGE_DESC: {
    uint64_t buf;
    if (!resolve_param(e, cc, i, PI_OBJ_MEM, f[9], &buf))
      return false;
    pi_image_desc *d = out = rp_cc_alloc(cc, sizeof *d);
    if (d)
      *d = (pi_image_desc){(pi_mem_type)f[0], f[1], f[2], f[3], f[4], f[5], f[6],
                           (pi_uint32)f[7], (pi_uint32)f[8], (pi_mem)(uintptr_t)buf};
    break;
  }
  default: {
    pi_mem_obj_property *m = out = rp_cc_alloc(cc, sizeof *m);
    if (m)
      *m = (pi_mem_obj_property){(pi_mem_obj_property_type)f[0], NULL, (pi_mem_access_flag)f[1]};
    break;
  }
  }
  cc->argv[i] = (uint64_t)(uintptr_t)out;
  return out != NULL || no_memory(cc, i);
}

/* Callbacks of the recorded process cannot be called: the two a PI call
 * insists on get one that does nothing, the rest NULL. */
static void event_callback(pi_event ev, pi_int32 status, void *user)
{
  (void)ev;
  (void)status;
  (void)user;
}

static void deleter(void *user) { (void)user; }

static void in_callback(rp_cc *cc, unsigned i, const pt_json *j)
{
  if (!pt_json_int(j, 0))
    return;
  if (cc->api->id == PI_API_piEventSetCallback)
    cc->argv[i] = (uint64_t)(uintptr_t)event_callback;
  else if (cc->api->id == PI_API_piextContextSetExtendedDeleter)
    cc->argv[i] = (uint64_t)(uintptr_t)deleter;
}

/* Host memory the call reads or writes: a mapped region (written with what
 * the application wrote through the map), recorded data, or scratch. */
static bool in_host(rp_engine *e, rp_cc *cc, unsigned i, const pt_json *j)
{
  pt_ref r = pt_ref_of(j);
  if (r.kind == PT_REF_NULL)
    return true;
  if (r.kind != PT_REF_NUMBER) {
    if (!pointer(e, cc, i, r, &cc->argv[i]))
      return false;
    size_t size;
    rp_data_status st;
    unsigned char *d = rp_cc_own(cc, rp_payload(e->s, cc->c, i, "in", 0, &size, &st));
    if (d && cc->argv[i])
      memcpy((void *)(uintptr_t)cc->argv[i], d, size);
    return true;
  }
  unsigned char *d;
  size_t size;
  rp_data_status st;
  if ((d = rp_cc_own(cc, rp_payload(e->s, cc->c, i, "in", 0, &size, &st)))) {
    /* An image's host data as the implementation reads it, whole padded
     * scanlines: sessions recorded before the recorder took the last
     * scanline's padding hold less (zeros stand in). */
    size_t need = cc->api->id == PI_API_piMemImageCreate
                      ? pi_image_host_extent((const pi_image_format *)(uintptr_t)cc->argv[2],
                                             (const pi_image_desc *)(uintptr_t)cc->argv[3])
                      : 0;
    if (need > size) {
      unsigned char *whole = rp_cc_own(cc, calloc(1, need));
      if (!whole)
        return no_memory(cc, i);
      memcpy(whole, d, size);
      d = whole;
    }
    cc->argv[i] = (uint64_t)(uintptr_t)d;
    return true;
  }
  if (st != RP_DATA_ABSENT || cc->api->params[i].kind != PI_PK_USMPTR)
    return need_payload(e, cc, i, "in", 0, &d, &size);
  /* A host destination of a USM copy: what it received is checked. */
  return rp_out_data(e, cc, i);
}

static bool in_usmref(rp_engine *e, rp_cc *cc, unsigned i, const pt_json *j)
{
  if (!j || j->type == PJ_NULL)
    return true;
  if (!pointer(e, cc, i, pt_ref_of(j), &cc->slot[i]))
    return false;
  cc->argv[i] = (uint64_t)(uintptr_t)&cc->slot[i];
  return true;
}

static bool build_in(rp_engine *e, rp_cc *cc, unsigned i, const pt_json *j)
{
  const pi_param_desc *p = &cc->api->params[i];
  switch (p->kind) {
  case PI_PK_SCALAR:
    return in_scalar(e, cc, i, j);
  case PI_PK_HANDLE:
    return resolve_param(e, cc, i, p->obj, (uint64_t)pt_json_int(j, 0), &cc->argv[i]);
  case PI_PK_HANDLES: case PI_PK_ARRAY: case PI_PK_PROPS:
    return in_array(e, cc, i, j);
  case PI_PK_STRING:
    cc->argv[i] = j && j->type == PJ_STRING ? (uint64_t)(uintptr_t)j->u.s : 0;
    return true;
  case PI_PK_STRINGS: case PI_PK_BLOBS:
    return in_elements(e, cc, i, j);
  case PI_PK_BYTES:
    return in_bytes(e, cc, i, j);
  case PI_PK_BINARIES:
    return in_binaries(e, cc, i, j);
  case PI_PK_PROPERTIES:
    return in_properties(cc, i, j);
  case PI_PK_IMAGE_FORMAT: case PI_PK_IMAGE_DESC: case PI_PK_MEM_OBJ_PROPERTY:
    return in_struct(e, cc, i, j);
  case PI_PK_FNPTR:
    in_callback(cc, i, j);
    return true;
  case PI_PK_HOSTPTR: case PI_PK_USMPTR:
    return in_host(e, cc, i, j);
  case PI_PK_USMREF:
    return in_usmref(e, cc, i, j);
  default:
    return fail(cc, "seq %lld %s: parameter %s is of a kind replay does not know",
                (long long)cc->c->seq, cc->api->name, p->name);
  }
}

/* ---- Out-parameters ----------------------------------------------------------------------- */

/* Scratch for data the call writes, sized by what the recording kept (or
 * the call's own size), and the recorded bytes to check it against. */
bool rp_out_data(rp_engine *e, rp_cc *cc, unsigned i)
{
  static const char *const roles[] = {"out", "readback"};
  size_t size = 0, full = 0;
  rp_data_status st = RP_DATA_ABSENT;
  for (int k = 0; k < 2 && !cc->want[i]; k++) {
    cc->want[i] = rp_cc_own(cc, rp_payload(e->s, cc->c, i, roles[k], 0, &size, &st));
    cc->want_size[i] = size;
    if (st == RP_DATA_MISSING_BLOB)
      return need_payload(e, cc, i, roles[k], 0, &cc->want[i], &size);
    if (st == RP_DATA_PARTIAL) { /* what was kept is compared, and the note says so */
      cc->want[i] = rp_cc_own(cc, rp_payload_kept(e->s, cc->c, i, roles[k], 0, &size, &full));
      cc->want_size[i] = size;
      rp_note_kept(e, cc->c, i, size, full);
      break;
    }
  }
  size_t extent = rp_out_extent(cc, i);
  if (cc->want[i] && size > extent)
    extent = size;
  if (full > extent) /* the call writes all it wrote when recorded, not what was kept */
    extent = full;
  if (!extent && cc->api->params[i].kind == PI_PK_HOSTPTR)
    return fail(cc, "seq %lld %s: the host memory parameter %s writes was not recorded: "
                "cannot replay", (long long)cc->c->seq, cc->api->name, cc->api->params[i].name);
  void *buf = rp_cc_alloc(cc, extent);
  cc->argv[i] = (uint64_t)(uintptr_t)buf;
  return buf || no_memory(cc, i);
}

size_t rp_out_extent(const rp_cc *cc, unsigned i)
{
  const uint64_t *a = cc->argv;
  switch (cc->api->id) {
  case PI_API_piEnqueueMemBufferReadRect: { /* host origin a[4], region a[5], pitches */
    const size_t *o = (const size_t *)(uintptr_t)a[4], *r = (const size_t *)(uintptr_t)a[5];
    if (!o || !r || !r[0] || !r[1] || !r[2])
      return 0;
    size_t row = a[8] ? (size_t)a[8] : r[0], slice = a[9] ? (size_t)a[9] : sat_mad(row, r[1], 0);
    size_t last_slice = sat_mad(1, o[2], r[2] - 1), last_row = sat_mad(1, o[1], r[1] - 1);
    return sat_mad(last_slice, slice, sat_mad(last_row, row, sat_mad(1, o[0], r[0])));
  }
  case PI_API_piextUSMEnqueueMemcpy:
    return (size_t)a[4];
  case PI_API_piextUSMEnqueueMemcpy2D:
    return a[7] ? sat_mad((size_t)a[3], (size_t)a[7] - 1, (size_t)a[6]) : 0;
  default:
    return cc->api->params[i].kind == PI_PK_BYTES ? pi_param_extent(&cc->api->params[i], a) : 0;
  }
}

/* PI_PROGRAM_INFO_BINARIES is an array of the caller's buffers, one per
 * device, sized as PI_PROGRAM_INFO_BINARY_SIZES says now. */
static bool binaries_out(rp_engine *e, rp_cc *cc, unsigned i)
{
  size_t n = (size_t)cc->argv[cc->api->params[i].count.ref] / sizeof(void *);
  size_t *sizes = alloc_n(cc, n ? n : 1, sizeof *sizes, 0);
  void **bufs = alloc_n(cc, n ? n : 1, sizeof *bufs, 0);
  uint64_t q[5] = {cc->argv[0], PI_PROGRAM_INFO_BINARY_SIZES, n * sizeof *sizes,
                   (uint64_t)(uintptr_t)sizes, 0};
  if (sizes && bufs)
    rp_own_call(e, "pitrace replay's own query: the sizes of the binaries recorded seq %lld "
                "asks for",
                (long long)cc->c->seq);
  if (!sizes || !bufs || pi_api_invoke(e->t, PI_API_piProgramGetInfo, q) != PI_SUCCESS)
    return fail(cc, "seq %lld %s: the sizes of the program's binaries cannot be had: cannot "
                "replay", (long long)cc->c->seq, cc->api->name);
  for (size_t k = 0; k < n; k++)
    if (!(bufs[k] = rp_cc_alloc(cc, sizes[k])))
      return no_memory(cc, i);
  cc->argv[i] = (uint64_t)(uintptr_t)bufs;
  return true;
}

/* Out-parameters a recorded success shows as null were NULL pointers; a
 * failed call recorded none, so storage is given. */
static bool out_absent(const rp_cc *cc, const pt_json *j)
{
  return cc->c->result == PI_SUCCESS && (!j || j->type == PJ_NULL);
}

static bool build_out(rp_engine *e, rp_cc *cc, unsigned i, const pt_json *j)
{
  const pi_param_desc *p = &cc->api->params[i];
  switch (p->kind) {
  case PI_PK_BYTES: case PI_PK_HOSTPTR:
    return rp_out_data(e, cc, i);
  case PI_PK_HANDLES: case PI_PK_ARRAY: case PI_PK_INFO: {
    if (out_absent(cc, j))
      return true;
    if (p->kind == PI_PK_INFO && cc->api->id == PI_API_piProgramGetInfo &&
        cc->argv[p->query] == PI_PROGRAM_INFO_BINARIES)
      return binaries_out(e, cc, i);
    size_t n = p->kind == PI_PK_INFO ? (size_t)cc->argv[p->count.ref] : pi_param_extent(p, cc->argv);
    void *buf = rp_cc_alloc(cc, n);
    cc->argv[i] = (uint64_t)(uintptr_t)buf;
    return buf || no_memory(cc, i);
  }
  default: /* one value: a scalar, a handle, a string */
    if (!out_absent(cc, j))
      cc->argv[i] = (uint64_t)(uintptr_t)&cc->slot[i];
    return true;
  }
}

/* A non-blocking call that writes data gets an event even where the
 * application passed none: its data is checked once that event completes. */
static void own_event(rp_cc *cc)
{
  int ev = cc->api->event;
  if (ev < 0 || cc->argv[ev] || rp_call_blocking(cc->api, cc->c))
    return;
  for (unsigned i = 0; i < cc->api->nparams; i++)
    if (cc->want[i]) {
      cc->argv[ev] = (uint64_t)(uintptr_t)&cc->slot[ev];
      cc->own_event = ev;
      return;
    }
}

/* The recorded platform whose binary piProgramCreateWithBinary call c
 * hands over: that of the device it names (an application may have used
 * devices of several platforms), else the application's device's; "" when
 * not known. */
static const char *binary_platform(const rp_engine *e, const pt_call *c)
{
  int64_t device = pt_json_int(pt_json_at(pt_json_at(c->args, 2), 0), 0);
  const char *name = rp_device_platform_name(e->s, device);
  return name[0] ? name : e->s->platform_name;
}

bool rp_build(rp_engine *e, rp_cc *cc)
{
  const pi_api_desc *api = cc->api; /* every argument is there: rp_session_open checked */
  /* A program binary is its platform's own: another implementation may
   * refuse it, or fail on it (rusticl given PoCL's aborts the process). */
  const char *made_by = api->id == PI_API_piProgramCreateWithBinary && !e->stand_ins
                          ? binary_platform(e, cc->c) : "";
  if (made_by[0] && e->live_platform_name[0] && strcmp(made_by, e->live_platform_name) != 0) {
    /* A session that used devices of several platforms replays them all
     * on one device: no device takes every binary. */
    char where[700];
    if (strcmp(made_by, e->s->platform_name) == 0 || !e->s->platform_name[0])
      snprintf(where, sizeof where, "replay on a device of \"%s\"", made_by);
    else
      snprintf(where, sizeof where, "the application used devices of \"%s\" and \"%s\", "
               "which replay runs on one device: record it on one platform", made_by,
               e->s->platform_name);
    return fail(cc, "seq %lld piProgramCreateWithBinary: the program is a binary that "
                "platform \"%s\" made, which \"%s\" cannot take; %s, or record the "
                "application with its binary cache off (pyopencl: PYOPENCL_NO_CACHE=1) so that "
                "its programs come from source", (long long)cc->c->seq, made_by,
                e->live_platform_name, where);
  }
  /* Scalars and handles first: the sizes and counts the rest refer to. */
  for (int pass = 0; pass < 2; pass++)
    for (unsigned i = 0; i < api->nparams; i++) {
      const pi_param_desc *p = &api->params[i];
      bool simple = p->dir == PI_DIR_IN && (p->kind == PI_PK_SCALAR || p->kind == PI_PK_HANDLE);
      if (simple != (pass == 0))
        continue;
      const pt_json *j = cc->c->args->u.items[i];
      if (!(p->dir == PI_DIR_IN ? build_in(e, cc, i, j) : build_out(e, cc, i, j)))
        return false;
    }
  own_event(cc);
  return true;
}
