/*
 * viewer_pack.c: a recorded call's packed arguments, rebuilt so that `show`
 * prints it through the one decoder (pi_format_call_enter/exit), exactly as
 * the live SYCL_PI_TRACE=2 trace does.
 *
 * The decoder reads what argv points at, so every pointer points at real
 * memory holding the recorded values: arrays of handles and numbers,
 * strings, structs, payload bytes (buffers, sources, read-backs), info
 * results (the `value` payloads). Handles and addresses the decoder only
 * prints are packed as tagged values: 0xf1d0 in the top 16 bits (no user
 * space address has them), the object kind in bits 44..47 and the handle id
 * below, or kind 15 and the index of a text (usm#3+16, a recorded raw
 * address). vw_pack_render then rewrites the decoder's text: tagged values
 * become "kind#id" or their text, and a pointer into memory packed here
 * becomes "ptr" (the recorded process's address is not kept); a payload
 * that was not recorded replaces the preview that follows it.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "viewer_common.h"

#define TAG 0xf1d0000000000000ull
#define TAG_MASK 0xffff000000000000ull
#define KIND_SHIFT 44
#define ID_MASK ((1ull << KIND_SHIFT) - 1)
#define KIND_TEXT 15u
#define MIN_ELEMS 33 /* the decoder shows at most 16 elements, 16 property pairs */
#define MIN_INFO 272 /* bytes the decoder may read of an info result */

typedef struct range {
  uintptr_t lo, hi;
  char *group; /* replaces the "( ... )" or "[ ... ]" after the pointer */
} range;

struct vw_pack {
  uint64_t argv[PI_MAX_PARAMS];
  void **blocks;
  size_t nblocks, capblocks;
  range *ranges;
  size_t nranges, capranges;
  char **texts;
  size_t ntexts, captexts;
};

vw_pack *vw_pack_new(void) { return calloc(1, sizeof(vw_pack)); }

static void reset(vw_pack *p)
{
  for (size_t i = 0; i < p->nblocks; i++)
    free(p->blocks[i]);
  for (size_t i = 0; i < p->nranges; i++)
    free(p->ranges[i].group);
  for (size_t i = 0; i < p->ntexts; i++)
    free(p->texts[i]);
  p->nblocks = p->nranges = p->ntexts = 0;
}

void vw_pack_free(vw_pack *p)
{
  if (!p)
    return;
  reset(p);
  free(p->blocks);
  free(p->ranges);
  free(p->texts);
  free(p);
}

/* Zeroed memory for this call; `group` (copied) replaces the decoder's
 * preview of it. Never NULL: the process ends when memory runs out. */
static void *scratch(vw_pack *p, size_t n, const char *group)
{
  void *m = calloc(1, n ? n : 1);
  void **blocks = m ? pt_grow(p->blocks, &p->capblocks, p->nblocks, sizeof *blocks) : NULL;
  p->blocks = blocks ? blocks : p->blocks;
  range *ranges = blocks ? pt_grow(p->ranges, &p->capranges, p->nranges, sizeof *ranges) : NULL;
  p->ranges = ranges ? ranges : p->ranges;
  if (!ranges) {
    fputs("pitrace: out of memory\n", stderr);
    exit(2);
  }
  p->blocks[p->nblocks++] = m;
  p->ranges[p->nranges++] = (range){(uintptr_t)m, (uintptr_t)m + (n ? n : 1),
                                     group ? strdup(group) : NULL};
  return m;
}

static char *scratch_str(vw_pack *p, const char *s)
{
  size_t n = strlen(s);
  char *d = scratch(p, n + 1, NULL);
  memcpy(d, s, n);
  return d;
}

static uint64_t tag_handle(uint8_t kind, int64_t id)
{
  return id ? TAG | (uint64_t)kind << KIND_SHIFT | ((uint64_t)id & ID_MASK) : 0;
}

static uint64_t tag_text(vw_pack *p, const char *text)
{
  char **texts = pt_grow(p->texts, &p->captexts, p->ntexts, sizeof *texts);
  if (!texts)
    return 0;
  p->texts = texts;
  p->texts[p->ntexts] = strdup(text);
  return TAG | (uint64_t)KIND_TEXT << KIND_SHIFT | p->ntexts++;
}

/* A recorded pointer: "usm#3", "mapped#2", an address, or NULL. */
static uint64_t pointer_value(vw_pack *p, const pt_json *j)
{
  if (j && j->type == PJ_STRING)
    return tag_text(p, j->u.s);
  int64_t v = pt_json_int(j, 0);
  if (!v)
    return 0;
  char hex[32];
  snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)v);
  return tag_text(p, hex);
}

static size_t elem_width(uint8_t vt, const pi_enum_desc *en)
{
  switch (vt) {
  case PI_VT_U32: case PI_VT_I32: case PI_VT_BOOL: return 4;
  case PI_VT_CBOOL: return 1;
  case PI_VT_ENUM: case PI_VT_FLAGS: return en ? en->width : 4;
  default: return 8;
  }
}

/* An array of numbers or (obj != 0) of handles, `w` bytes each. */
static uint64_t numbers(vw_pack *p, const pt_json *j, size_t w, uint8_t obj)
{
  if (!j || j->type != PJ_ARRAY)
    return 0;
  size_t n = j->n > MIN_ELEMS ? j->n : MIN_ELEMS;
  unsigned char *buf = scratch(p, n * w, NULL);
  for (uint32_t k = 0; k < j->n; k++) {
    int64_t v = pt_json_int(j->u.items[k], 0);
    uint64_t u = obj ? tag_handle(obj, v) : (uint64_t)v;
    memcpy(buf + k * w, &u, w); /* little-endian: the low bytes */
  }
  return (uint64_t)(uintptr_t)buf;
}

/* One out-value, in 8 bytes the decoder reads through the out pointer. */
static uint64_t boxed(vw_pack *p, uint64_t v)
{
  uint64_t *box = scratch(p, sizeof *box, NULL);
  *box = v;
  return (uint64_t)(uintptr_t)box;
}

static int64_t count_of(const pt_call *c, const pi_param_desc *d)
{
  return d->count.ref >= 0 ? vw_arg_int(c, (unsigned)d->count.ref) : d->count.literal;
}

/* A payload: its bytes in memory of at least `min` bytes; when it was not
 * recorded, `missing` replaces the decoder's preview. */
static uint64_t payload(vw_pack *p, vw_session *s, const pt_call *c, unsigned i,
                        const char *role, unsigned idx, size_t min, const char *missing)
{
  size_t got = 0, full = 0;
  unsigned char *d = pt_data(vw_db(s), s->id, c, i, role, idx, &got, &full);
  if (!d && strcmp(role, "out") == 0)
    d = pt_data(vw_db(s), s->id, c, i, "readback", idx, &got, &full);
  bool short_of = !d || (got < min && got < full);
  unsigned char *buf = scratch(p, got > min ? got + 1 : min + 1, short_of ? missing : NULL);
  if (d)
    memcpy(buf, d, got);
  free(d);
  return (uint64_t)(uintptr_t)buf;
}

static uint64_t bytes_param(vw_pack *p, vw_session *s, const pt_call *c, unsigned i,
                            const pi_param_desc *d)
{
  int64_t size = count_of(c, d);
  char missing[64];
  snprintf(missing, sizeof missing, "%lld bytes: not recorded", (long long)size);
  return payload(p, s, c, i, d->dir == PI_DIR_IN ? "in" : "out", 0,
                 size < 32 ? (size_t)size : 32, missing);
}

/* Strings (program sources) from their payloads, one per element. */
static uint64_t strings_param(vw_pack *p, vw_session *s, const pt_call *c, unsigned i,
                              const pi_param_desc *d)
{
  int64_t n = count_of(c, d);
  size_t cap = n > MIN_ELEMS ? (size_t)n : MIN_ELEMS;
  const char **v = scratch(p, cap * sizeof *v, NULL);
  for (size_t k = 0; k < cap; k++)
    v[k] = "";
  for (int64_t k = 0; k < n && k < 16; k++) {
    size_t got, full;
    unsigned char *t = pt_data(vw_db(s), s->id, c, i, "in", (unsigned)k, &got, &full);
    char *str = scratch(p, got + 1, NULL);
    if (t)
      memcpy(str, t, got);
    v[k] = t ? str : "(not recorded)";
    free(t);
  }
  return (uint64_t)(uintptr_t)v;
}

static uint64_t binaries_param(vw_pack *p, const pt_call *c, const pi_param_desc *d,
                               const pt_json *j)
{
  int64_t n = count_of(c, d);
  size_t cap = n > MIN_ELEMS ? (size_t)n : MIN_ELEMS;
  pi_device_binary *v = scratch(p, cap * sizeof *v, NULL);
  for (uint32_t k = 0; j && j->type == PJ_ARRAY && k < j->n && k < cap; k++) {
    const pt_json *e = j->u.items[k], *t = pt_json_at(e, 0);
    struct pi_device_binary_struct *b = scratch(p, sizeof *b, NULL);
    b->DeviceTargetSpec = t && t->type == PJ_STRING ? scratch_str(p, t->u.s) : NULL;
    b->Format = (uint8_t)pt_json_int(pt_json_at(e, 1), 0);
    b->BinaryStart = (const unsigned char *)b; /* only the size is printed */
    b->BinaryEnd = (const unsigned char *)((uintptr_t)b + (size_t)pt_json_int(pt_json_at(e, 2), 0));
    v[k] = b;
  }
  return (uint64_t)(uintptr_t)v;
}

static uint64_t properties_param(vw_pack *p, const pt_call *c, const pi_param_desc *d,
                                 const pt_json *j)
{
  int64_t n = count_of(c, d);
  size_t cap = n > MIN_ELEMS ? (size_t)n : MIN_ELEMS;
  pi_device_binary_property *v = scratch(p, cap * sizeof *v, NULL);
  for (uint32_t k = 0; j && j->type == PJ_ARRAY && k < j->n && k < cap; k++) {
    const pt_json *e = j->u.items[k];
    v[k] = scratch(p, sizeof **v, NULL);
    v[k]->Name = scratch_str(p, e->type == PJ_STRING ? e->u.s : "?");
  }
  return (uint64_t)(uintptr_t)v;
}

/* Program binaries passed as blobs: only their sizes (another parameter)
 * are printed, from a non-NULL array. */
static uint64_t blobs_param(vw_pack *p, const pt_call *c, const pi_param_desc *d)
{
  int64_t n = count_of(c, d);
  return (uint64_t)(uintptr_t)scratch(p, (n > MIN_ELEMS ? (size_t)n : MIN_ELEMS) * 8, NULL);
}

static uint64_t struct_param(vw_pack *p, const pi_param_desc *d, const pt_json *j)
{
  if (!j || j->type != PJ_ARRAY)
    return 0;
  int64_t f[10] = {0};
  for (uint32_t k = 0; k < j->n && k < 10; k++)
    f[k] = pt_json_int(j->u.items[k], 0);
  if (d->kind == PI_PK_IMAGE_FORMAT) {
    pi_image_format *x = scratch(p, sizeof *x, NULL);
    x->image_channel_order = (pi_image_channel_order)f[0];
    x->image_channel_data_type = (pi_image_channel_type)f[1];
    return (uint64_t)(uintptr_t)x;
  }
  if (d->kind == PI_PK_IMAGE_DESC) {
    pi_image_desc *x = scratch(p, sizeof *x, NULL);
    *x = (pi_image_desc){(pi_mem_type)f[0], (size_t)f[1], (size_t)f[2], (size_t)f[3],
                         (size_t)f[4], (size_t)f[5], (size_t)f[6], (pi_uint32)f[7],
                         (pi_uint32)f[8], (pi_mem)(uintptr_t)tag_handle(PI_OBJ_MEM, f[9])};
    return (uint64_t)(uintptr_t)x;
  }
  pi_mem_obj_property *x = scratch(p, sizeof *x, NULL);
  x->type = (pi_mem_obj_property_type)f[0];
  x->mem_access = (pi_mem_access_flag)f[1];
  return (uint64_t)(uintptr_t)x;
}

static uint64_t pack_in(vw_pack *p, vw_session *s, const pt_call *c, const pi_param_desc *d,
                        unsigned i)
{
  const pt_json *j = pt_json_at(c->args, i);
  switch (d->kind) {
  case PI_PK_SCALAR:
    return d->vt == PI_VT_PTR ? pointer_value(p, j) : (uint64_t)pt_json_int(j, 0);
  case PI_PK_HANDLE:
    return tag_handle(d->obj, pt_json_int(j, 0));
  case PI_PK_HANDLES:
    return numbers(p, j, 8, d->obj);
  case PI_PK_ARRAY:
    return numbers(p, j, elem_width(d->vt, d->en), 0);
  case PI_PK_PROPS:
    /* A list always has its 0 at the end, which the recorder keeps: none
     * at all is a list the recorder could not read (salvage of another
     * process's heap, a fault at a bad address), not an empty one. */
    if (j && j->type == PJ_ARRAY && j->n == 0)
      return (uint64_t)(uintptr_t)scratch(p, MIN_ELEMS * 8, "not recorded");
    return numbers(p, j, 8, 0);
  case PI_PK_STRING:
    return j && j->type == PJ_STRING ? (uint64_t)(uintptr_t)scratch_str(p, j->u.s) : 0;
  case PI_PK_STRINGS:
    return j && j->type != PJ_NULL ? strings_param(p, s, c, i, d) : 0;
  case PI_PK_BYTES:
    return j && j->type != PJ_NULL ? bytes_param(p, s, c, i, d) : 0;
  case PI_PK_BINARIES:
    return j && j->type != PJ_NULL ? binaries_param(p, c, d, j) : 0;
  case PI_PK_PROPERTIES:
    return j && j->type != PJ_NULL ? properties_param(p, c, d, j) : 0;
  case PI_PK_BLOBS:
    return j && j->type != PJ_NULL ? blobs_param(p, c, d) : 0;
  case PI_PK_IMAGE_FORMAT: case PI_PK_IMAGE_DESC: case PI_PK_MEM_OBJ_PROPERTY:
    return struct_param(p, d, j);
  case PI_PK_FNPTR:
    return pt_json_int(j, 0) ? tag_text(p, "fn") : 0;
  case PI_PK_USMREF:
    return j && j->type != PJ_NULL ? boxed(p, pointer_value(p, j)) : 0;
  default: /* host and USM pointers */
    return pointer_value(p, j);
  }
}

/* Handles named in an info result's text ("[device#2, device#3]"). */
static uint64_t handles_in_text(vw_pack *p, const char *text)
{
  size_t cap = MIN_ELEMS, n = 0;
  uint64_t *v = scratch(p, cap * 8, NULL);
  for (const char *s = text; *s && n < cap;) {
    pt_ref r;
    if (pt_ref_parse(s, &r)) {
      v[n++] = tag_handle(r.obj, r.id);
      s += r.len;
    } else {
      s++;
    }
  }
  return (uint64_t)(uintptr_t)v;
}

static uint64_t info_param(vw_pack *p, vw_session *s, const pt_call *c, const pi_param_desc *d,
                           unsigned i)
{
  const pt_json *j = pt_json_at(c->args, i);
  if (!j || j->type != PJ_STRING)
    return 0;
  const pi_enum_entry *e = pi_enum_lookup(d->en, vw_arg_int(c, (unsigned)d->query));
  if (e && e->vt == PI_VT_HANDLE)
    return handles_in_text(p, j->u.s);
  /* The raw result; without it the recorder's decoded text stands in. */
  return payload(p, s, c, i, "value", 0, MIN_INFO, j->u.s);
}

static uint64_t pack_out(vw_pack *p, vw_session *s, const pt_call *c, const pi_param_desc *d,
                         unsigned i)
{
  const pt_json *j = pt_json_at(c->args, i);
  switch (d->kind) {
  case PI_PK_SCALAR:
    if (!j || j->type == PJ_NULL)
      return 0;
    return boxed(p, d->vt == PI_VT_PTR ? pointer_value(p, j) : (uint64_t)pt_json_int(j, 0));
  case PI_PK_HANDLE:
    return j && j->type != PJ_NULL ? boxed(p, tag_handle(d->obj, pt_json_int(j, 0))) : 0;
  case PI_PK_HANDLES:
    return numbers(p, j, 8, d->obj);
  case PI_PK_ARRAY:
    return numbers(p, j, elem_width(d->vt, d->en), 0);
  case PI_PK_STRING:
    return j && j->type == PJ_STRING ? boxed(p, (uint64_t)(uintptr_t)scratch_str(p, j->u.s)) : 0;
  case PI_PK_BYTES:
    return bytes_param(p, s, c, i, d);
  case PI_PK_INFO:
    return info_param(p, s, c, d, i);
  default: /* host memory a read wrote: its bytes are shown as [data] */
    return (uint64_t)(uintptr_t)scratch(p, 1, NULL);
  }
}

const uint64_t *vw_pack_call(vw_pack *p, vw_session *s, const pt_call *c)
{
  reset(p);
  memset(p->argv, 0, sizeof p->argv);
  const pi_api_desc *api = pi_api_get(c->api);
  bool ok = c->returned && c->result == PI_SUCCESS;
  for (unsigned i = 0; api && i < api->nparams && i < PI_MAX_PARAMS; i++) {
    const pi_param_desc *d = &api->params[i];
    if (d->dir == PI_DIR_IN)
      p->argv[i] = pack_in(p, s, c, d, i);
    else if (ok)
      p->argv[i] = pack_out(p, s, c, d, i);
    else /* what it pointed at was not recorded */
      p->argv[i] = tag_text(p, "(not recorded)");
  }
  return p->argv;
}

/* ---- Rewriting the decoder's text ------------------------------------------------ */

static const range *find_range(const vw_pack *p, uint64_t v)
{
  for (size_t i = 0; i < p->nranges; i++)
    if (v >= p->ranges[i].lo && v < p->ranges[i].hi)
      return &p->ranges[i];
  return NULL;
}

/* The end of the bracketed group at s ("(...)" or "[...]"), skipping
 * quoted strings; NULL when it does not close. */
static const char *group_end(const char *s, const char *end)
{
  int depth = 0;
  for (bool quoted = false; s < end; s++) {
    if (quoted) {
      if (*s == '\\')
        s++;
      else if (*s == '"')
        quoted = false;
    } else if (*s == '"') {
      quoted = true;
    } else if (*s == '(' || *s == '[') {
      depth++;
    } else if ((*s == ')' || *s == ']') && --depth == 0) {
      return s + 1;
    }
  }
  return NULL;
}

/* A pointer into packed memory; returns where the text goes on. */
static const char *render_pointer(const range *r, const char *q, const char *end, pi_sbuf *out)
{
  pi_sbuf_put(out, "ptr", 3);
  if (!r->group || q + 1 >= end || q[0] != ' ' || (q[1] != '(' && q[1] != '['))
    return q;
  const char *g = group_end(q + 1, end);
  if (!g)
    return q;
  pi_sbuf_printf(out, q[1] == '(' ? " (%s)" : " [ %s ]", r->group);
  return g;
}

static const char *render_value(const vw_pack *p, uint64_t v, const char *x, const char *q,
                                const char *end, pi_sbuf *out)
{
  if ((v & TAG_MASK) == TAG) {
    unsigned kind = (unsigned)(v >> KIND_SHIFT) & 15u;
    uint64_t id = v & ID_MASK;
    if (kind == KIND_TEXT)
      pi_sbuf_puts(out, id < p->ntexts && p->texts[id] ? p->texts[id] : "?");
    else
      pi_sbuf_printf(out, "%s#%llu", pi_object_kind_name((uint8_t)kind), (unsigned long long)id);
    return q;
  }
  const range *r = find_range(p, v);
  if (r)
    return render_pointer(r, q, end, out);
  pi_sbuf_put(out, x, (size_t)(q - x));
  return q;
}

void vw_pack_render(const vw_pack *p, const char *text, size_t len, pi_sbuf *out)
{
  const char *s = text, *end = text + len;
  while (s < end) {
    const char *x = memmem(s, (size_t)(end - s), "0x", 2);
    if (!x) {
      pi_sbuf_put(out, s, (size_t)(end - s));
      break;
    }
    pi_sbuf_put(out, s, (size_t)(x - s));
    const char *q = x + 2;
    uint64_t v = 0;
    while (q < end && isxdigit((unsigned char)*q) && q - x < 18) {
      v = v * 16 + (uint64_t)(isdigit((unsigned char)*q) ? *q - '0' : (*q | 32) - 'a' + 10);
      q++;
    }
    if (q == x + 2 || (x > text && isalnum((unsigned char)x[-1])) ||
        (q < end && isxdigit((unsigned char)*q))) {
      pi_sbuf_put(out, x, (size_t)(q - x)); /* not a pointer the decoder printed */
      s = q;
      continue;
    }
    s = render_value(p, v, x, q, end, out);
  }
}

/* ---- Payloads the decoder does not preview -------------------------------------- */

static void data_line(vw_session *s, const pt_call *c, const pi_param_desc *d, unsigned i,
                      const char *role, pi_sbuf *out)
{
  size_t got, full;
  unsigned char *bytes = pt_data(vw_db(s), s->id, c, i, role, 0, &got, &full);
  if (!bytes)
    return;
  pi_sbuf_printf(out, "\t[data] %s %s : %zu bytes (%s", d->ctype, d->name, full, role);
  if (got < full)
    pi_sbuf_printf(out, ", %zu recorded", got);
  pi_sbuf_puts(out, ") ");
  pi_format_value(out, PI_VT_BYTES, 0, NULL, bytes, got, false);
  pi_sbuf_puts(out, "\n");
  free(bytes);
}

/* Whether the call is a command that did not wait (its data came later). */
static bool nonblocking(const pi_api_desc *api, const pt_call *c)
{
  return api->blocking >= 0 && vw_arg_int(c, (unsigned)api->blocking) == 0;
}

/* When the data of a non-blocking read was captured. */
static void readback_line(vw_session *s, const pt_call *c, const pi_param_desc *d, unsigned i,
                          pi_sbuf *out)
{
  int64_t at = pt_captured_seq(vw_db(s), s->id, c->seq, i);
  if (at >= 0)
    pi_sbuf_printf(out, "\t[data] %s %s : read back when call %lld completed the read\n",
                   d->ctype, d->name, (long long)at);
}

void vw_pack_data_lines(vw_session *s, const pt_call *c, pi_sbuf *out)
{
  const pi_api_desc *api = pi_api_get(c->api);
  static const char *const roles[] = {"in", "out", "readback"};
  bool later = api && c->returned && c->result == PI_SUCCESS && nonblocking(api, c);
  for (unsigned i = 0; api && i < api->nparams; i++) {
    const pi_param_desc *d = &api->params[i];
    if (later && ((d->dir != PI_DIR_IN && (d->kind == PI_PK_BYTES || d->kind == PI_PK_HOSTPTR)) ||
                  d->kind == PI_PK_USMPTR))
      readback_line(s, c, d, i, out);
    if (d->kind != PI_PK_HOSTPTR && d->kind != PI_PK_USMPTR)
      continue;
    for (int r = 0; r < 3; r++)
      data_line(s, c, d, i, roles[r], out);
  }
}
