/*
 * writer_calls.c: a record made a call. An ENTRY record gives the call its
 * seq and prints its in-parameters; its EXIT prints the out-parameters and
 * hands the call to the chunk being filled (writer_chunks.c). A call's
 * arguments are a compact JSON array; handles, USM and mapped pointers in
 * it are ids (writer_ids.c), found at the call's place in the merged
 * order. Payloads are kept inline when small, else stored once by hash.
 * Also here: the other records (read-backs, runtime notes, threads,
 * device times and clocks), and the calls still in flight. Everything
 * here runs on the merge thread but the printing of later calls
 * (wr__print_later and what it calls with FMT_PRINT), which encoders do.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <unistd.h>

#include "writer_internal.h"

/* How a call's text is made. Its order-dependent part is what the maps
 * say (an id is handed out, a handle released, a pointer found in a USM
 * allocation) at the call's place in the merged order: only the merge
 * thread can ask them. The rest (printing numbers, strings, payloads as
 * hex, an info query's answer) is most of the work, and the encoder
 * threads do it: the merge thread *finds* the values (FMT_FIND: asks the
 * maps, keeps the answers, prints nothing it need not), and an encoder
 * *prints* the call from its ring records with them (FMT_PRINT: the same
 * functions, in the same order, the answers taken instead of asked).
 * FMT_NOW does both at once on the merge thread: salvage, calls whose
 * payloads are on the heap, a call still running at a commit. */
typedef enum { FMT_NOW, FMT_FIND, FMT_PRINT } fmt_mode;

typedef struct fmt {
  fmt_mode mode;
  ids *found;        /* FIND: appended to; PRINT: read from */
  size_t *at;        /* PRINT: the next to read */
} fmt;

/* The stable id of a handle (0 for NULL), seen first now if unknown
 * (wr__handle_store, writer_ids.c): inline, as most arguments of most
 * calls are handles the map knows. */
static inline uint64_t handle_id(uint64_t ptr, uint8_t kind, uint64_t seq)
{
  if (!ptr)
    return 0;
  map_slot *s = map_find(&wr.handles, ptr);
  return s ? s->a : wr__handle_store(ptr, kind, seq, false);
}

/* A record's items; `foreign`: another process's records (salvage), whose
 * heap pointers are not ours. */
static unsigned read_items_of(const unsigned char *p, unsigned n, item_view *out, unsigned max,
                              bool foreign)
{
  unsigned k = 0;
  for (unsigned i = 0; i < n; i++) {
    const rec_item *it = (const rec_item *)p;
    p += sizeof *it;
    const unsigned char *d = p;
    if (it->heap) {
      uint64_t token;
      memcpy(&token, p, sizeof token);
      p += sizeof token;
      d = !it->size  ? NULL
          : foreign ? wr__salvaged_payload(token, it->size)
                    : pt_payload_view(token);
      if (!d && it->size) {
        if (!foreign)
          pt_payload_drop(token);
        continue; /* its bytes cannot be had: as if not captured */
      }
    } else {
      p += rec_item_body(it);
    }
    if (k < max)
      out[k++] = (item_view){it, d};
  }
  return k;
}

/* On the merge thread (an encoder reads no variable the merge thread
 * writes often: `salvaging` shares its cache line with some). */
unsigned wr__read_items(const unsigned char *p, unsigned n, item_view *out, unsigned max)
{
  return read_items_of(p, n, out, max, wr.salvaging);
}

/* Frees the payloads a record's items hold on the heap (this process's
 * only: a salvaged record's point into a process that is gone). */
void wr__free_heap_items(item_view *v, unsigned n)
{
  for (unsigned i = 0; i < n && !wr.salvaging; i++)
    if (v[i].it->heap)
      pt_payload_free((void *)v[i].data);
}

static const item_view *find_item(const item_view *v, unsigned n, unsigned pos, uint8_t role)
{
  for (unsigned i = 0; i < n; i++)
    if (v[i].it->position == pos && v[i].it->role == role)
      return &v[i];
  return NULL;
}

/* Printing at once: one for every call (nothing in it changes). */
static const fmt fmt_now = {FMT_NOW, NULL, NULL}; /* const: the compiler folds its mode */

/* Printing: the next value found (0 past the last, which printing a call
 * whose values were all found never reaches). */
static inline uint64_t f_take(const fmt *f)
{
  return *f->at < f->found->n ? f->found->v[(*f->at)++] : 0;
}

/* What finding prints on its way (the few pieces it does not skip; the
 * merge thread's only), dropped after each call. */
static text find_scratch;

/* A value found now (NOW, FIND: kept) or earlier (PRINT). */
static inline uint64_t f_value(const fmt *f, uint64_t (*ask)(uint64_t, uint8_t, uint64_t),
                               uint64_t a, uint8_t b, uint64_t c)
{
  if (f->mode == FMT_PRINT)
    return f_take(f);
  uint64_t v = ask(a, b, c);
  if (f->mode == FMT_FIND)
    ids_push(f->found, v);
  return v;
}

/* Puts a call among those in flight (wr.inflight). */
void wr__inflight_push(pending_call *c)
{
  c->prev = NULL;
  c->next = wr.inflight;
  if (wr.inflight)
    wr.inflight->prev = c;
  wr.inflight = c;
}

static void inflight_unlink(pending_call *c)
{
  if (c->prev)
    c->prev->next = c->next;
  else
    wr.inflight = c->next;
  if (c->next)
    c->next->prev = c->prev;
}

/* A call to fill: one reused, with its buffers, or a new one; NULL when
 * out of memory. */
pending_call *wr__call_new(void)
{
  pending_call *c = wr.free_calls;
  if (c) { /* its fields are all set by whoever takes it; its buffers kept */
    wr.free_calls = c->next;
    c->inserted = c->released_early = false;
    c->in.len = c->inl.len = 0;
    c->entry = NULL;
    c->found.n = 0;
    return c;
  }
  return calloc(1, sizeof *c);
}

/* Keeps a call, with its buffers, for the next wr__call_new. */
void wr__call_free(pending_call *c)
{
  c->next = wr.free_calls;
  wr.free_calls = c;
}

/* A payload: inline in the call when small (printed with the call's
 * text), else a data row by hash (stored by the merge thread, which owns
 * the database). With data none, an info query's answer (the only payload
 * then) stays in its call whatever its size: no payload row for a call
 * whose data the user did not ask for. */
static void keep_data(const fmt *f, pending_call *c, unsigned position, const char *role,
                      unsigned index, const void *bytes, uint64_t size, uint64_t full)
{
  if (!bytes) { /* another process's heap (salvage): its size is all there is */
    if (f->mode != FMT_PRINT)
      wr__store_data(c->seq, position, role, index, NULL, size, full, -1);
    return;
  }
  if (size > PT_INLINE_DATA && !(shim_cfg.data_mode == DATA_NONE && strcmp(role, "value") == 0)) {
    if (f->mode != FMT_PRINT)
      wr__store_data(c->seq, position, role, index, bytes, size, full, -1);
    return;
  }
  if (f->mode == FMT_FIND)
    return;
  text *t = &c->inl;
  if (t->len)
    t_c(t, ',');
  t_c(t, '[');
  t_u64(t, position);
  t_put(t, ",\"", 2);
  t_put(t, role, strlen(role));
  t_put(t, "\",", 2);
  t_u64(t, index);
  t_c(t, ',');
  t_u64(t, full);
  t_put(t, ",\"", 2);
  t_reserve(t, 2 * size);
  const unsigned char *b = bytes;
  static const char pairs[] = /* each byte's two digits */
      "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F"
      "202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F"
      "404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F"
      "606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F"
      "808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9F"
      "A0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBF"
      "C0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDF"
      "E0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF";
  char *d = t->p + t->len; /* a local pointer: as in t_str */
  for (uint64_t i = 0; b && i < size; i++, d += 2)
    memcpy(d, pairs + 2 * b[i], 2);
  *d = 0;
  t->len = (size_t)(d - t->p);
  t_put(t, "\"]", 2);
}

static thread_state *thread_of(uint32_t index)
{
  for (size_t i = 0; i < wr.nthreads; i++)
    if (wr.threads[i].index == index)
      return &wr.threads[i];
  thread_state *t = realloc(wr.threads, (wr.nthreads + 1) * sizeof *t);
  if (!t)
    return NULL;
  wr.threads = t;
  wr.threads[wr.nthreads] = (thread_state){index, NULL, 0};
  return &wr.threads[wr.nthreads++];
}

/* A pointer as USM "usm#id+offset", a mapped pointer, or a plain number. */
static void t_pointer(const fmt *f, text *t, uint64_t p)
{
  uint64_t kind, id_off[2] = {0, 0};
  if (f->mode == FMT_PRINT) {
    kind = f_take(f);
    for (uint64_t i = 0; i < kind && i < 2; i++)
      id_off[i] = f_take(f);
  } else {
    kind = wr__pointer_kind(p, id_off);
    if (f->mode == FMT_FIND) {
      ids_push(f->found, kind);
      for (uint64_t i = 0; i < kind; i++)
        ids_push(f->found, id_off[i]);
      return;
    }
  }
  if (kind == PTR_MAPPED) {
    t_put(t, "\"mapped#", 8);
    t_u64(t, id_off[0]);
    t_c(t, '"');
  } else if (kind == PTR_USM) {
    t_put(t, "\"usm#", 5);
    t_u64(t, id_off[0]);
    if (id_off[1]) {
      t_c(t, '+');
      t_u64(t, id_off[1]);
    }
    t_c(t, '"');
  } else {
    t_u64(t, p);
  }
}

static uint64_t load(const unsigned char *p, size_t w)
{
  uint64_t v = 0;
  if (p && w)
    memcpy(&v, p, w > 8 ? 8 : w);
  if (w == 4)
    v &= 0xffffffffu;
  return v;
}

/* The item when it holds at least n bytes (a damaged or salvaged record
 * may hold fewer), else NULL. */
static const item_view *sized(const item_view *iv, size_t n)
{
  return iv && iv->data && iv->it->size >= n ? iv : NULL;
}

static size_t elem_width(const pi_param_desc *p)
{
  switch (p->vt) {
  case PI_VT_U32: case PI_VT_I32: case PI_VT_BOOL: return 4;
  case PI_VT_CBOOL: return 1;
  case PI_VT_U64: return 8;
  case PI_VT_ENUM: case PI_VT_FLAGS: return p->en ? p->en->width : 4;
  default: return sizeof(void *);
  }
}

/* An array of handles (ids from `id_of`: known or new) or of numbers. */
static void t_array(const fmt *f, text *t, const pi_param_desc *p, const item_view *iv,
                    uint64_t seq, uint64_t (*id_of)(uint64_t, uint8_t, uint64_t))
{
  if (!iv || !iv->data) { /* none, or another process's heap (salvage): lost */
    t_put(t, "[]", 2);
    return;
  }
  size_t w = p->kind == PI_PK_HANDLES ? sizeof(void *) : elem_width(p);
  t_c(t, '[');
  for (uint64_t i = 0; i + w <= iv->it->size; i += w) {
    if (i)
      t_c(t, ',');
    uint64_t e = load(iv->data + i, w);
    if (p->kind == PI_PK_HANDLES)
      t_u64(t, f_value(f, id_of, e, p->obj, seq));
    else if (p->vt == PI_VT_I32)
      t_i64(t, (int32_t)e);
    else
      t_u64(t, e);
  }
  t_c(t, ']');
}

static void t_opt_str(text *t, const item_view *is)
{
  if (is && is->data) /* not another process's heap (salvage): lost */
    t_str(t, (const char *)is->data, is->it->size);
  else
    t_put(t, "null", 4);
}

/* Whether a parameter's text (as an in-, or an out-parameter) asks the
 * writer's maps anything: the only parameters that finding a call's
 * values (FMT_FIND) looks at. */
static bool asks_maps(const pi_param_desc *p, bool out)
{
  switch (p->kind) {
  case PI_PK_SCALAR:
    return p->vt == PI_VT_PTR ||
           (out && (p->creates == PI_OBJ_USM || p->creates == PI_OBJ_MAPPED));
  case PI_PK_HANDLE: case PI_PK_HANDLES:
    return true;
  case PI_PK_IMAGE_DESC: case PI_PK_USMREF: case PI_PK_USMPTR: case PI_PK_HOSTPTR:
    return !out;
  case PI_PK_INFO:
    return out;
  default:
    return false;
  }
}

/* The JSON of an in-parameter (inlined: on the merge thread's path of
 * every call). */
static inline __attribute__((always_inline)) void
encode_in(const fmt *f, text *t, const pi_param_desc *p, unsigned pos, uint64_t v,
          const item_view *items, unsigned nitems, uint64_t seq)
{
  if (f->mode == FMT_FIND && !asks_maps(p, false))
    return;
  /* The scalars and handles, most parameters, need no item: none looked
   * for. */
  bool has_items = p->kind != PI_PK_SCALAR && p->kind != PI_PK_HANDLE;
  const item_view *iv = has_items ? find_item(items, nitems, pos, ITEM_VALUE) : NULL;
  const item_view *is = has_items ? find_item(items, nitems, pos, ITEM_STRING) : NULL;
  switch (p->kind) {
  case PI_PK_SCALAR:
    if (p->vt == PI_VT_I32)
      t_i64(t, (int32_t)v);
    else if (p->vt == PI_VT_PTR)
      t_pointer(f, t, v);
    else
      t_u64(t, p->vt == PI_VT_CBOOL ? (v & 0xff) : v);
    return;
  case PI_PK_HANDLE:
    t_u64(t, f_value(f, handle_id, v, p->obj, seq));
    return;
  case PI_PK_HANDLES:
  case PI_PK_ARRAY:
  case PI_PK_PROPS:
    if (!v) {
      t_put(t, "null", 4);
      return;
    }
    t_array(f, t, p, iv, seq, handle_id);
    return;
  case PI_PK_STRING:
    t_opt_str(t, is);
    return;
  case PI_PK_PROPERTIES:
    /* NULL (the usual metadata of a binary) is not an empty list: the
     * viewer shows it NULL, replay passes NULL. */
    if (!v) {
      t_put(t, "null", 4);
      return;
    }
    t_c(t, '[');
    for (unsigned i = 0, k = 0; i < nitems; i++)
      if (items[i].it->position == pos && items[i].it->role == ITEM_STRING) {
        if (k++)
          t_c(t, ',');
        if (items[i].data)
          t_str(t, (const char *)items[i].data, items[i].it->size);
        else /* another process's heap (salvage): lost */
          t_put(t, "null", 4);
      }
    t_c(t, ']');
    return;
  case PI_PK_BINARIES:
    t_c(t, '[');
    for (unsigned i = 0, k = 0; i < nitems; i++)
      if (items[i].it->position == pos && items[i].it->role == ITEM_META) {
        unsigned j = items[i].it->index;
        const item_view *tg = NULL, *in = NULL;
        for (unsigned x = 0; x < nitems; x++)
          if (items[x].it->position == pos && items[x].it->index == j) {
            if (items[x].it->role == ITEM_STRING)
              tg = &items[x];
            if (items[x].it->role == ITEM_IN)
              in = &items[x];
          }
        if (k++)
          t_c(t, ',');
        t_c(t, '[');
        if (tg && tg->data)
          t_str(t, (const char *)tg->data, tg->it->size);
        else
          t_put(t, "null", 4);
        t_c(t, ',');
        t_u64(t, items[i].data && items[i].it->size ? items[i].data[0] : 0);
        t_c(t, ',');
        t_u64(t, in ? in->it->full : 0);
        t_c(t, ']');
      }
    t_c(t, ']');
    return;
  case PI_PK_IMAGE_FORMAT:
    if ((iv = sized(iv, sizeof(pi_image_format)))) {
      pi_image_format f;
      memcpy(&f, iv->data, sizeof f);
      t_c(t, '[');
      t_u64(t, (uint64_t)f.image_channel_order);
      t_c(t, ',');
      t_u64(t, (uint64_t)f.image_channel_data_type);
      t_c(t, ']');
    } else {
      t_put(t, "null", 4);
    }
    return;
  case PI_PK_IMAGE_DESC:
    if ((iv = sized(iv, sizeof(pi_image_desc)))) {
      pi_image_desc d;
      memcpy(&d, iv->data, sizeof d);
      uint64_t w[10] = {(uint64_t)d.image_type, d.image_width, d.image_height, d.image_depth,
                        d.image_array_size, d.image_row_pitch, d.image_slice_pitch,
                        d.num_mip_levels, d.num_samples,
                        f_value(f, handle_id, (uint64_t)(uintptr_t)d.buffer, PI_OBJ_MEM, seq)};
      t_c(t, '[');
      for (int i = 0; i < 10; i++) {
        if (i)
          t_c(t, ',');
        t_u64(t, w[i]);
      }
      t_c(t, ']');
    } else {
      t_put(t, "null", 4);
    }
    return;
  case PI_PK_MEM_OBJ_PROPERTY:
    if ((iv = sized(iv, sizeof(pi_mem_obj_property)))) {
      pi_mem_obj_property m;
      memcpy(&m, iv->data, sizeof m);
      t_c(t, '[');
      t_u64(t, (uint64_t)m.type);
      t_c(t, ',');
      t_u64(t, m.mem_access);
      t_c(t, ']');
    } else {
      t_put(t, "null", 4);
    }
    return;
  case PI_PK_USMREF:
    if ((iv = sized(iv, sizeof(void *))))
      t_pointer(f, t, load(iv->data, sizeof(void *)));
    else
      t_put(t, "null", 4);
    return;
  case PI_PK_USMPTR:
  case PI_PK_HOSTPTR:
    t_pointer(f, t, v);
    return;
  case PI_PK_FNPTR:
    t_u64(t, v != 0);
    return;
  default: /* bytes, strings, blobs: their data rows hold them; 0 is NULL */
    if (v)
      t_put(t, "1", 1);
    else
      t_put(t, "null", 4);
    return;
  }
}

/* The JSON of an out-parameter after a successful call; creates ids. */
static void encode_out(const fmt *f, text *t, const pi_api_desc *api, unsigned pos,
                       const uint64_t *argv, const item_view *items, unsigned nitems,
                       uint64_t seq)
{
  const pi_param_desc *p = &api->params[pos];
  if (f->mode == FMT_FIND && !asks_maps(p, true))
    return;
  const item_view *iv = find_item(items, nitems, pos, ITEM_VALUE);
  const item_view *is = find_item(items, nitems, pos, ITEM_STRING);
  if (!argv[pos]) {
    t_put(t, "null", 4); /* a NULL out pointer: nothing returned */
    return;
  }
  switch (p->kind) {
  case PI_PK_SCALAR:
    if (!iv || !iv->data) {
      t_put(t, "null", 4);
      return;
    }
    {
      uint64_t v = load(iv->data, iv->it->size);
      if (p->creates == PI_OBJ_USM && f->mode != FMT_PRINT) {
        int sz = -1;
        for (unsigned i = 0; i < api->nparams; i++)
          if (strcmp(api->params[i].name, "size") == 0)
            sz = (int)i;
        uint64_t id = ++wr.next_handle_id;
        const usm_alloc *old = wr__usm_find(v);
        if (old)
          wr__release_in_flight(old->base, GONE_USM);
        wr__usm_add(v, sz >= 0 ? argv[sz] : 1, id);
        {
          sqlite3_bind_int64(wr.st_handle, 1, wr.session_id);
          sqlite3_bind_int64(wr.st_handle, 2, (int64_t)id);
          sqlite3_bind_text(wr.st_handle, 3, "usm", -1, SQLITE_STATIC);
          sqlite3_bind_int64(wr.st_handle, 4, (int64_t)seq);
          sqlite3_bind_int(wr.st_handle, 5, 1);
          sqlite3_bind_text(wr.st_handle, 6, wr.cur_api, -1, SQLITE_STATIC);
          wr__step(wr.st_handle, "storing a USM allocation");
        }
        t_pointer(f, t, v);
      } else if (p->creates == PI_OBJ_USM) {
        t_pointer(f, t, v);
      } else if (p->creates == PI_OBJ_MAPPED) {
        if (f->mode != FMT_PRINT) {
          if (map_find(&wr.mapped, v))
            wr__release_in_flight(v, GONE_MAPPED);
          map_slot *s = map_put(&wr.mapped, v);
          if (s)
            s->a = ++wr.next_handle_id;
        }
        t_pointer(f, t, v);
      } else if (p->vt == PI_VT_I32) {
        t_i64(t, (int32_t)v);
      } else if (p->vt == PI_VT_PTR) {
        t_pointer(f, t, v);
      } else {
        t_u64(t, v);
      }
    }
    return;
  case PI_PK_HANDLE:
    iv = sized(iv, sizeof(void *));
    t_u64(t, iv ? f_value(f, wr__handle_made, load(iv->data, sizeof(void *)), p->obj, seq) : 0);
    return;
  case PI_PK_HANDLES:
  case PI_PK_ARRAY:
    t_array(f, t, p, iv, seq, wr__handle_new);
    return;
  case PI_PK_STRING:
    t_opt_str(t, is);
    return;
  case PI_PK_INFO: {
    /* Readable text from the one decoder; the bytes go to a data row. */
    if (!iv || !iv->data) {
      t_put(t, "null", 4);
      return;
    }
    const pi_enum_entry *e = pi_enum_lookup(p->en, (int64_t)argv[p->query]);
    if (f->mode == FMT_FIND) { /* only handles ask the maps */
      for (size_t i = 0; e && e->vt == PI_VT_HANDLE && i < iv->it->size / sizeof(void *); i++)
        f_value(f, wr__handle_new, load(iv->data + i * 8, 8), e->obj, seq);
      return;
    }
    char store[512];
    pi_sbuf b;
    pi_sbuf_init(&b, store, sizeof store);
    if (e && (e->vt == PI_VT_HANDLE)) {
      size_t n = iv->it->size / sizeof(void *);
      if (e->is_array)
        pi_sbuf_puts(&b, "[");
      for (size_t i = 0; i < n; i++) {
        uint64_t id = f_value(f, wr__handle_new, load(iv->data + i * 8, 8), e->obj, seq);
        pi_sbuf_printf(&b, "%s%s#%llu", i ? ", " : "", pi_object_kind_name(e->obj),
                       (unsigned long long)id);
      }
      if (e->is_array)
        pi_sbuf_puts(&b, "]");
    } else if (e) {
      pi_format_value(&b, e->vt, e->obj, e->en, iv->data, iv->it->size, e->is_array);
    } else {
      pi_format_value(&b, PI_VT_BYTES, 0, NULL, iv->data, iv->it->size, false);
    }
    t_str(t, b.p, b.len);
    pi_sbuf_free(&b);
    return;
  }
  default:
    t_put(t, "null", 4);
    return;
  }
}

/* Where a note record's parts are: its five strings (kernel, device,
 * symbol, image, symbolic id), its numeric ids, its value, its text. */
typedef struct note_parts {
  const char *s[5];
  const uint32_t *ids;
  unsigned char *value;
  const char *text;
} note_parts;

static note_parts note_parts_of(const rec_note *n)
{
  note_parts p;
  char *w = (char *)(uintptr_t)(n + 1);
  for (int i = 0; i < 5; i++) {
    p.s[i] = w;
    w += strlen(w) + 1;
  }
  p.ids = (const uint32_t *)(const void *)w;
  p.value = (unsigned char *)w + n->num_ids * 4u;
  p.text = (const char *)p.value + n->value_len;
  return p;
}

static void write_note(const rec_note *n, uint64_t seq, unsigned idx)
{
  note_parts np = note_parts_of(n);
  const char *const *s = np.s;
  const uint32_t *ids = np.ids;
  const void *value = np.value;
  text idt = {0};
  t_c(&idt, '[');
  for (uint32_t i = 0; i < n->num_ids; i++) {
    uint32_t id;
    memcpy(&id, ids + i, 4);
    if (i)
      t_c(&idt, ',');
    t_u64(&idt, id);
  }
  t_c(&idt, ']');
  sqlite3_bind_int64(wr.st_note, 1, wr.session_id);
  sqlite3_bind_int64(wr.st_note, 2, (int64_t)seq);
  sqlite3_bind_int(wr.st_note, 3, (int)idx);
  sqlite3_bind_text(wr.st_note, 4, pi_note_kind_name(n->kind), -1, SQLITE_STATIC);
  for (int i = 0; i < 5; i++)
    if (*s[i])
      sqlite3_bind_text(wr.st_note, 5 + i, s[i], -1, SQLITE_TRANSIENT);
  if (n->kind == PIRT_NOTE_SPEC_CONST) {
    sqlite3_bind_text(wr.st_note, 10, idt.p, (int)idt.len, SQLITE_TRANSIENT);
    sqlite3_bind_blob(wr.st_note, 11, value, (int)n->value_len, SQLITE_TRANSIENT);
    sqlite3_bind_int(wr.st_note, 12, (int)n->native);
  } else if (n->kind == PIRT_NOTE_IMAGE_FORMATS || n->kind == PIRT_NOTE_CALLBACK) {
    sqlite3_bind_blob(wr.st_note, 11, value, (int)n->value_len, SQLITE_TRANSIENT);
  }
  sqlite3_bind_text(wr.st_note, 13, np.text, (int)n->text_len, SQLITE_TRANSIENT);
  sqlite3_bind_text(wr.st_note, 14, wr.cur_api, -1, SQLITE_STATIC);
  wr__step(wr.st_note, "storing a note");
  free(idt.p);
}

/* Functions whose calls' text costs more to print than to find (an info
 * query's answer, strings): printed by the encoders, where there are
 * processors for them (printing_later). The others (numbers, handles, a
 * kernel argument's few bytes) print as fast as their values are found:
 * measured, moving them only added the encoders' work. */
static bool print_later_api[PI_API_COUNT];

static bool api_facts_found;

/* Whether the encoders print calls (PITRACE_PRINT_LATER: 1, 0, or by
 * default with 4 or more processors: an encoder prints a call in about
 * twice the merge thread's time, as it reads the call's records again,
 * which pays only where it runs beside the merge thread and the
 * application instead of taking their processor). */
static bool printing_later;

/* Sets printing_later from PITRACE_PRINT_LATER and the processors. */
void wr__decide_printing(void)
{
  const char *v = getenv("PITRACE_PRINT_LATER");
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (v && strcmp(v, "1") == 0) {
    printing_later = true;
  } else if (v && strcmp(v, "0") == 0) {
    printing_later = false;
  } else {
    printing_later = cpus >= 4;
    if (v && *v)
      fprintf(stderr, "pitrace: PITRACE_PRINT_LATER=%s is not 0 or 1; %s (%ld processors)\n",
              v, printing_later ? "the encoder threads print info queries and strings"
                                : "every call is printed on the merge thread", cpus);
  }
}

__attribute__((noinline)) static void find_api_facts(void)
{
  for (unsigned id = 0; id < PI_API_COUNT; id++)
    for (unsigned i = 0; i < pi_api_table[id].nparams; i++) {
      const pi_param_desc *p = &pi_api_table[id].params[i];
      switch (p->kind) {
      case PI_PK_INFO: case PI_PK_STRING: case PI_PK_STRINGS: case PI_PK_BINARIES:
      case PI_PK_BLOBS: case PI_PK_PROPERTIES:
        print_later_api[id] = true;
        break;
      default:
        break;
      }
    }
  api_facts_found = true;
}

static inline bool prints_much(const pi_api_desc *api)
{
  if (__builtin_expect(!api_facts_found, 0))
    find_api_facts();
  return print_later_api[api->id];
}

/* Where an entry record's items begin: after its arguments and frames. */
const unsigned char *wr__entry_items(const rec_entry *e)
{
  return (const unsigned char *)((const uintptr_t *)(e->argv + pi_api_table[e->h.api].nparams) +
                                 e->nframes);
}

/* Whether a record's items hold a payload copied aside (a token), read
 * from the record itself: read_items_of leaves out one whose view could
 * not be had, and such a call taken for one without would go to an
 * encoder, which viewed the token again (a second drop of its region, or
 * a view never freed). */
static bool any_heap(const unsigned char *p, unsigned n)
{
  for (unsigned i = 0; i < n; i++) {
    const rec_item *it = (const rec_item *)p;
    if (it->heap)
      return true;
    p += sizeof *it + rec_item_body(it);
  }
  return false;
}

/* A call's in-parameters' text into c->in (each one's span in start and
 * end) and the payloads it read into c->inl, from its entry's items. */
static inline __attribute__((always_inline)) void
entry_text(const fmt *f, pending_call *c, const pi_api_desc *api, const item_view *items,
           unsigned n)
{
  text *t = f->mode == FMT_FIND ? &find_scratch : &c->in;
  for (unsigned i = 0; i < api->nparams; i++) {
    c->start[i] = (uint32_t)t->len;
    if (api->params[i].dir != PI_DIR_OUT)
      encode_in(f, t, &api->params[i], i, c->argv[i], items, n, c->seq);
    c->end[i] = (uint32_t)t->len;
  }
  if (f->mode == FMT_FIND) {
    find_scratch.len = 0;
    c->in.len = 0;
  }
  for (unsigned i = 0; i < n; i++)
    if (items[i].it->role == ITEM_IN)
      keep_data(f, c, items[i].it->position, "in", items[i].it->index, items[i].data,
                items[i].it->size, items[i].it->full);
}

/* A call to be printed later prints its in-parameters now, with the
 * values found at its entry: its entry record goes back to its ring (a
 * commit), or its exit carries payloads on the heap, which the merge
 * thread prints and frees. */
static void materialize(pending_call *c)
{
  const rec_entry *e = c->entry;
  if (!e)
    return;
  item_view items[MAX_ITEMS_VIEW];
  unsigned n = wr__read_items(wr__entry_items(e), e->nitems, items, MAX_ITEMS_VIEW);
  size_t at = 0;
  const fmt f = {FMT_PRINT, &c->found, &at};
  c->in.len = c->inl.len = 0;
  entry_text(&f, c, &pi_api_table[c->api], items, n);
  c->entry = NULL;
  c->found.n = 0;
}

/* A call began: its seq, its time, its stack and its in-parameters'
 * text (or the values it needs, found now, for an encoder to print it
 * later), the runtime's notes waiting for it; then it is in flight,
 * the innermost of its ring's. */
static void process_entry(const rec_entry *e, mring *m)
{
  const pi_api_desc *api = &pi_api_table[e->h.api];
  wr.cur_api = api->name;
  pending_call *c = wr__call_new();
  if (!c)
    return;
  c->ticket = e->h.ticket;
  c->seq = ++wr.seq_counter;
  c->t0 = stamp_to_ns(e->t0, wr__keep_knot);
  c->thread = e->thread;
  c->plugin = e->h.instance; /* shim_instances[i].index is i */
  if (c->t0 > wr.last_t)
    wr.last_t = c->t0;
  c->api = e->h.api;
  /* A few words: a loop, not memcpy's setup (a rep movs here, slow to
   * start on some processors). */
  for (unsigned i = 0; i < api->nparams; i++)
    c->argv[i] = e->argv[i];
  const uintptr_t *frames = (const uintptr_t *)(e->argv + api->nparams);
  c->stack = e->nframes ? wr__stack_id(frames, e->nframes) : -1; /* the call only with a stack */
  item_view items[MAX_ITEMS_VIEW];
  unsigned n = wr__read_items(wr__entry_items(e), e->nitems, items, MAX_ITEMS_VIEW);
  /* Printed later by an encoder, from this record, where that saves the
   * merge thread work; not when salvaging (one thread, another process's
   * rings) or for heap payloads. */
  bool later = printing_later && prints_much(api) && !wr.salvaging &&
               !any_heap(wr__entry_items(e), e->nitems);
  c->entry = later ? e : NULL;
  if (later) { /* two copies, each with its mode known to the compiler */
    const fmt f = {FMT_FIND, &c->found, NULL};
    entry_text(&f, c, api, items, n);
  } else {
    entry_text(&fmt_now, c, api, items, n);
  }
  wr__free_heap_items(items, n);
  /* Its callback's note may come before this call returns, and after the
   * application released the event (callback_note_by_id). */
  if (api->id == PI_API_piEventSetCallback) {
    const map_slot *h = map_find(&wr.handles, e->argv[0]);
    map_slot *s = h && h->b == PI_OBJ_EVENT ? map_put(&wr.callbacks, e->argv[0]) : NULL;
    if (s)
      s->a = h->a;
  }
  /* Data of a call that may come later (a non-blocking read). */
  if (api->blocking >= 0 && e->argv[api->blocking] == 0) {
    map_slot *s = map_put(&wr.memo, c->ticket);
    if (s)
      s->a = c->seq;
  }
  if (e->h.flags & REC_F_DEVTIME) {
    map_slot *s = map_put(&wr.devmemo, c->ticket);
    if (s) {
      const map_slot *q = map_find(&wr.handles, e->argv[0]);
      s->a = c->seq;
      s->b = q ? q->a : 0;
      s->c = api->id;
      wr.maps_dirty = true;
    }
  }
  thread_state *ts = wr.notes_waiting ? thread_of(e->thread) : NULL;
  if (ts && ts->nnotes) {
    for (size_t i = 0; i < ts->nnotes; i++) {
      write_note(ts->notes[i], c->seq, (unsigned)i);
      free(ts->notes[i]);
    }
    wr.notes_waiting -= ts->nnotes;
    ts->nnotes = 0;
  }
  wr__inflight_push(c);
  c->outer = m->open;
  m->open = c;
}

/* The args JSON of a call: in-values from the entry, out-values now
 * (finding: only the out-values' lookups). */
static inline __attribute__((always_inline)) void
build_args(const fmt *f, text *out, pending_call *c, const pi_api_desc *api, const uint64_t *argv,
           const item_view *items, unsigned n, bool ok)
{
  if (f->mode == FMT_FIND) {
    for (unsigned i = 0; ok && argv && i < api->nparams; i++)
      if (api->params[i].dir != PI_DIR_IN)
        encode_out(f, out, api, i, argv, items, n, c->seq);
    return;
  }
  t_c(out, '[');
  for (unsigned i = 0; i < api->nparams; i++) {
    if (i)
      t_c(out, ',');
    if (api->params[i].dir == PI_DIR_IN)
      t_put(out, c->in.p + c->start[i], c->end[i] - c->start[i]);
    else if (ok && argv)
      encode_out(f, out, api, i, argv, items, n, c->seq);
    else
      t_put(out, "null", 4);
  }
  t_c(out, ']');
}

/* The inline payloads' JSON array of a call onto t (nothing when none). */
void wr__put_data(text *t, const pending_call *c)
{
  if (c->inl.len) {
    t_c(t, '[');
    t_put(t, c->inl.p, c->inl.len);
    t_c(t, ']');
  }
}

/* A returned call's text onto out: its args (args_len bytes), then the
 * payloads kept inline; finding prints nothing. */
static inline __attribute__((always_inline)) void
exit_text(const fmt *f, text *out, pending_call *c, const pi_api_desc *api, const item_view *items,
          unsigned n, bool ok, size_t *args_len)
{
  size_t at = out->len;
  build_args(f, out, c, api, c->argv, items, n, ok);
  *args_len = out->len - at;
  for (unsigned i = 0; i < n; i++)
    if (items[i].it->position < api->nparams &&
        (items[i].it->role == ITEM_OUT || (items[i].it->role == ITEM_VALUE &&
                                           api->params[items[i].it->position].kind == PI_PK_INFO)))
      keep_data(f, c, items[i].it->position,
                items[i].it->role == ITEM_OUT ? "out" : "value", items[i].it->index,
                items[i].data, items[i].it->size, items[i].it->full);
  if (f->mode != FMT_FIND)
    wr__put_data(out, c);
}

/* Prints a job's later calls where they belong among the text of those
 * printed already: the text is made again in row order. Runs on an
 * encoder thread (or the merge thread when none runs): it reads the job,
 * the calls' records and the values found, nothing of `wr`. */
void wr__print_later(chunk_job *j, printer *pr)
{
  pt_chunk_enc *e = &j->enc;
  text *out = &pr->out;
  out->len = 0;
  size_t from = 0, k = 0;
  for (size_t i = 0; i < e->n; i++) {
    if (k == j->nlater || j->later[k].row != i) {
      size_t len = pt_chunk_enc_text_of(e, i);
      if (len)
        t_put(out, (const char *)e->text + from, len);
      from += len;
      continue;
    }
    const later_call *l = &j->later[k++];
    const rec_entry *en = l->entry;
    const pi_api_desc *api = &pi_api_table[en->h.api];
    pending_call *c = &pr->c;
    c->api = en->h.api;
    for (unsigned a = 0; a < api->nparams; a++)
      c->argv[a] = en->argv[a];
    c->in.len = c->inl.len = 0;
    ids found = {j->found.v ? j->found.v + l->found_at : NULL, l->nfound, l->nfound};
    size_t next = 0;
    const fmt f = {FMT_PRINT, &found, &next};
    item_view items[MAX_ITEMS_VIEW];
    /* Encoders run only for this process's records: never salvaging. */
    unsigned n = read_items_of(wr__entry_items(en), en->nitems, items, MAX_ITEMS_VIEW, false);
    entry_text(&f, c, api, items, n);
    n = read_items_of((const unsigned char *)(l->exit + 1), l->exit->nitems, items,
                      MAX_ITEMS_VIEW, false);
    size_t at = out->len, args_len;
    exit_text(&f, out, c, api, items, n, l->exit->result == PI_SUCCESS, &args_len);
    if (!pt_chunk_enc_set_text_of(e, i, args_len, out->len - at - args_len))
      abort(); /* a call's text over 4 GiB: as t_reserve */
  }
  /* The text made is the chunk's now; its old buffer, the next one's. */
  unsigned char *old = e->text;
  size_t old_cap = e->text_cap;
  e->text = (unsigned char *)out->p;
  e->text_len = out->len;
  e->text_cap = out->cap;
  out->p = (char *)old;
  out->cap = old_cap;
  out->len = 0;
  j->nlater = 0;
  j->found.n = 0;
  j->later_bytes = 0;
}

/* The call in flight that an exit from ring m returns from, taken out of
 * inflight and its ring's calls; NULL when there is none. */
static pending_call *returning(mring *m, uint64_t entry_ticket)
{
  pending_call *c = m->open;
  if (c && c->ticket == entry_ticket) {
    m->open = c->outer;
  } else { /* not the thread's innermost (a record lost), or from a checkpoint */
    for (c = wr.inflight; c && c->ticket != entry_ticket; c = c->next)
      ;
    if (!c)
      return NULL;
    for (size_t i = 0; i < wr.nmrings; i++)
      for (pending_call **pp = &wr.mrings[i].open; *pp; pp = &(*pp)->outer)
        if (*pp == c) {
          *pp = c->outer;
          break;
        }
  }
  inflight_unlink(c);
  return c;
}

/* A call that returned, whose text (args_len bytes of args, data_len of
 * payloads) process_exit printed at the end of the chunk job's. */
static void insert_call(pending_call *c, size_t args_len, size_t data_len, int32_t result,
                        uint64_t t1)
{
  if (c->inserted) {
    sqlite3_bind_int64(wr.st_inflight_done, 1, wr.session_id);
    sqlite3_bind_int64(wr.st_inflight_done, 2, (int64_t)c->seq);
    wr__step(wr.st_inflight_done, "storing a call");
  }
  pt_chunk_call cc = {.seq = (int64_t)c->seq, .thread = c->thread, .plugin = c->plugin,
                      .api = c->api, .result = result,
                      .start_ns = (int64_t)(c->t0 - wr.session_t0), .dur_ns = (int64_t)(t1 - c->t0),
                      .stack = c->stack, .args_len = args_len, .data_len = data_len};
  if (!pt_chunk_enc_add_written(&wr.cur_job->enc, &cc))
    abort(); /* as t_reserve: the writer cannot go on without memory */
  if (wr.cur_job->enc.n == PT_CHUNK_CALLS ||
      pt_chunk_enc_bytes(&wr.cur_job->enc) + wr.cur_job->later_bytes >= CHUNK_BYTES)
    wr__flush_chunk();
}

/* A call returned: its text finished (or its values found), the call
 * added to the chunk being filled, and the handles, USM allocations and
 * mapped pointers it retained or released. */
static void process_exit(const rec_exit *x, mring *m)
{
  pending_call *c = returning(m, x->entry_ticket);
  static item_view items[MAX_ITEMS_VIEW]; /* the merge thread's */
  unsigned n = wr__read_items((const unsigned char *)(x + 1), x->nitems, items, MAX_ITEMS_VIEW);
  if (!c) { /* its entry was filtered or lost: nothing to pair with */
    wr__free_heap_items(items, n);
    return;
  }
  const pi_api_desc *api = &pi_api_table[c->api];
  const uint64_t *argv = c->argv;
  wr.cur_api = api->name;
  if (c->entry && any_heap((const unsigned char *)(x + 1), x->nitems))
    materialize(c);
  if (!wr.cur_job)
    wr.cur_job = wr__take_job();
  pt_chunk_enc *e = &wr.cur_job->enc;
  bool ok = x->result == PI_SUCCESS;
  size_t args_len = 0, data_len = 0;
  if (c->entry) { /* the encoder prints it: the values it needs found now */
    chunk_job *j = wr.cur_job;
    const fmt f = {FMT_FIND, &c->found, NULL};
    exit_text(&f, &find_scratch, c, api, items, n, ok, &args_len);
    find_scratch.len = 0;
    if (j->nlater == j->cap_later)
      j->later = grow_array(j->later, &j->cap_later, sizeof *j->later, 256);
    j->later[j->nlater++] = (later_call){e->n, c->entry, x, j->found.n, c->found.n};
    for (size_t i = 0; i < c->found.n; i++)
      ids_push(&j->found, c->found.v[i]);
    j->later_bytes += 2u * (c->entry->h.size + x->h.size);
    args_len = 0;
  } else { /* printed now, straight to the end of its chunk's text (no copy) */
    text t = {(char *)e->text, e->text_len, e->text_cap};
    exit_text(&fmt_now, &t, c, api, items, n, ok, &args_len);
    data_len = t.len - e->text_len - args_len;
    e->text = (unsigned char *)t.p;
    e->text_cap = t.cap;
  }
  uint64_t t1 = stamp_to_ns(x->t1, wr__keep_knot);
  if (t1 > wr.last_t)
    wr.last_t = t1;
  insert_call(c, args_len, data_len, x->result, t1);
  wr__free_heap_items(items, n);
  if (x->result == PI_SUCCESS) {
    if (api->retains >= 0) {
      map_slot *h = map_find(&wr.handles, argv[api->retains]);
      if (h) {
        h->c++;
        wr.maps_dirty = true;
      }
    }
    if (api->releases >= 0 && c->api != PI_API_piextUSMFree && !c->released_early)
      wr__handle_release(argv[api->releases], c->seq);
    if (c->api == PI_API_piextUSMFree && !c->released_early)
      wr__usm_free(argv[1], c->seq);
    if (c->api == PI_API_piEnqueueMemUnmap && !c->released_early)
      map_del(&wr.mapped, argv[2]);
  }
  wr__call_free(c);
}

/* Data a non-blocking call wrote, captured once it was complete: a data
 * row of the call that wrote it, `current_seq` the call after which it
 * was read. */
static void process_readback(const rec_readback *r, uint64_t current_seq)
{
  map_slot *s = map_find(&wr.memo, r->call_ticket);
  const void *data = r + 1, *heap = NULL;
  if (r->heap) {
    uint64_t token;
    memcpy(&token, data, sizeof token);
    if (wr.salvaging) /* another process's: in its payload file, or lost */
      data = wr__salvaged_payload(token, r->size);
    else if (!(data = heap = r->size ? pt_payload_view(token) : NULL) && r->size)
      pt_payload_drop(token); /* its bytes cannot be had: as if not captured */
  }
  uint64_t full = wr.salvaging && wr.salvage_hdr->version < 4
                      ? 0 /* padding then, not its size */
                      : (uint64_t)r->full_hi << 32 | r->full_lo;
  if (s) {
    wr__store_data(s->a, r->position, "readback", 0, data, data ? r->size : 0,
                   full > r->size ? full : r->size, (int64_t)current_seq);
    map_del(&wr.memo, r->call_ticket);
  }
  pt_payload_free(heap);
}

/* A callback's note names its event by the address the implementation
 * passed ("callback of event 0x55d0... (status 0) begins"), which means
 * nothing once the process is gone and differs every run: it is named by
 * its id as every argument is ("callback of event#12 ..."): the event
 * piEventSetCallback was given at that address (the application may have
 * released it since: the implementation holds it until its callbacks
 * ran), else a live event there. A new copy of the note with that text,
 * or NULL: the note as it is (no address, or no event the session knows
 * there). */
static rec_note *callback_note_by_id(const rec_note *n)
{
  static const char mark[] = "event 0x";
  note_parts np = note_parts_of(n);
  const char *t = np.text, *at = memmem(t, n->text_len, mark, sizeof mark - 1);
  if (!at)
    return NULL;
  const char *hex = at + sizeof mark - 1, *end = t + n->text_len;
  char digits[17], *stop; /* the text is not NUL-terminated */
  size_t nd = (size_t)(end - hex) < 16 ? (size_t)(end - hex) : 16;
  memcpy(digits, hex, nd);
  digits[nd] = 0;
  uint64_t ptr = strtoull(digits, &stop, 16);
  const char *q = hex + (stop - digits);
  const map_slot *s = q > hex ? map_find(&wr.callbacks, ptr) : NULL;
  const map_slot *h = q > hex && !s ? map_find(&wr.handles, ptr) : NULL;
  uint64_t id = s ? s->a : h && h->b == PI_OBJ_EVENT ? h->a : 0;
  if (!id)
    return NULL;
  char name[32];
  int idn = snprintf(name, sizeof name, "event#%llu", (unsigned long long)id);
  size_t head = (size_t)(at - (const char *)n), tail = (size_t)(end - q);
  size_t used = head + (size_t)idn + tail, size = (used + 7) & ~(size_t)7; /* records are */
  rec_note *copy = calloc(1, size);                                      /* 8-aligned */
  if (!copy)
    return NULL;
  memcpy(copy, n, head);
  memcpy((char *)copy + head, name, (size_t)idn);
  memcpy((char *)copy + head + (size_t)idn, q, tail);
  copy->h.size = (uint32_t)size;
  copy->text_len = (uint32_t)(used - (size_t)(np.text - (const char *)n));
  return copy;
}

/* The note belongs to the next call of the thread whose ring held it. */
void wr__process_note(const rec_note *n, uint32_t thread)
{
  thread_state *ts = thread_of(thread);
  if (!ts)
    return;
  rec_note *copy = n->kind == PIRT_NOTE_CALLBACK ? callback_note_by_id(n) : NULL;
  if (!copy && (copy = malloc(n->h.size)))
    memcpy(copy, n, n->h.size);
  rec_note **v = realloc(ts->notes, (ts->nnotes + 1) * sizeof *v);
  if (!copy || !v) {
    free(copy);
    return;
  }
  if (copy->kind == PIRT_NOTE_CALLBACK && copy->value_len == 16) {
    /* A callback began: after the last call begun on any thread (this
     * record's place in the merged order), into its value's second word. */
    uint64_t after = wr.seq_counter;
    memcpy(note_parts_of(copy).value + 8, &after, sizeof after);
  }
  ts->notes = v;
  ts->notes[ts->nnotes++] = copy;
  wr.notes_waiting++;
}

/* Notes still waiting for their thread's next call when the session ends
 * (a callback's, on a thread that called no more): stored as coming
 * before the call after the last. */
void wr__write_waiting_notes(void)
{
  unsigned idx = 0;
  wr.cur_api = "";
  for (size_t i = 0; i < wr.nthreads; i++) {
    thread_state *ts = &wr.threads[i];
    for (size_t j = 0; j < ts->nnotes; j++) {
      write_note(ts->notes[j], wr.seq_counter + 1, idx++);
      free(ts->notes[j]);
    }
    wr.notes_waiting -= ts->nnotes;
    ts->nnotes = 0;
  }
}

/* A device command's device times (docs/schema.md: device_times). */
static void process_devtime(const rec_devtime *r)
{
  map_slot *s = map_find(&wr.devmemo, r->call_ticket);
  if (!s)
    return;
  if (!r->lost) {
    const map_slot *d = map_find(&wr.handles, r->device);
    sqlite3_bind_int64(wr.st_devtime, 1, wr.session_id);
    sqlite3_bind_int64(wr.st_devtime, 2, (int64_t)s->a);
    sqlite3_bind_int64(wr.st_devtime, 3, (int64_t)s->c);
    sqlite3_bind_int64(wr.st_devtime, 4, (int64_t)s->b);
    sqlite3_bind_int64(wr.st_devtime, 5, d ? (int64_t)d->a : 0);
    if (r->mapped) {
      sqlite3_bind_int64(wr.st_devtime, 6, (int64_t)(r->host_start - wr.session_t0));
      sqlite3_bind_int64(wr.st_devtime, 7, (int64_t)(r->host_end - wr.session_t0));
    } else {
      sqlite3_bind_null(wr.st_devtime, 6);
      sqlite3_bind_null(wr.st_devtime, 7);
    }
    sqlite3_bind_int64(wr.st_devtime, 8, (int64_t)r->start);
    sqlite3_bind_int64(wr.st_devtime, 9, (int64_t)r->end);
    wr__step(wr.st_devtime, "storing a device time");
  }
  map_del(&wr.devmemo, r->call_ticket);
  wr.maps_dirty = true;
}

/* A device's two clock samples: stored, and the device's times corrected
 * for the drift between them. */
static void process_devclock(const rec_devclock *r)
{
  const map_slot *d = map_find(&wr.handles, r->device);
  int64_t dev = d ? (int64_t)d->a : 0;
  sqlite3_bind_int64(wr.st_devclock, 1, wr.session_id);
  sqlite3_bind_int64(wr.st_devclock, 2, dev);
  sqlite3_bind_int64(wr.st_devclock, 3, (int64_t)r->dev0);
  sqlite3_bind_int64(wr.st_devclock, 4, (int64_t)(r->host0 - wr.session_t0));
  sqlite3_bind_int64(wr.st_devclock, 5, (int64_t)r->dev1);
  sqlite3_bind_int64(wr.st_devclock, 6, (int64_t)(r->host1 - wr.session_t0));
  wr__step(wr.st_devclock, "storing a device clock");
  /* Only over a span long enough to mean something (10 ms), and a rate
   * within 1% of the host's (else a clock that jumped: left as it is). */
  if (r->dev1 <= r->dev0 + 10000000u || r->host1 <= r->host0)
    return;
  double k = (double)(r->host1 - r->host0) / (double)(r->dev1 - r->dev0);
  if (k < 0.99 || k > 1.01)
    return;
  sqlite3_bind_int64(wr.st_drift, 1, (int64_t)(r->host0 - wr.session_t0));
  sqlite3_bind_int64(wr.st_drift, 2, (int64_t)r->dev0);
  sqlite3_bind_double(wr.st_drift, 3, k);
  sqlite3_bind_int64(wr.st_drift, 4, wr.session_id);
  sqlite3_bind_int64(wr.st_drift, 5, dev);
  wr__step(wr.st_drift, "correcting device times for drift");
}

/* A thread's first record: its OS thread id. */
static void process_thread(const rec_thread *t)
{
  sqlite3_bind_int64(wr.st_thread, 1, wr.session_id);
  sqlite3_bind_int(wr.st_thread, 2, (int)t->index);
  sqlite3_bind_int(wr.st_thread, 3, t->tid);
  wr__step(wr.st_thread, "storing a thread");
}

/* Hands a record to its handler, in the merged order. */
void wr__handle_record(mring *m, rec_hdr *h)
{
  shim_ring *r = m->r;
  switch (h->type) {
  case REC_ENTRY:
    process_entry((const rec_entry *)h, m);
    break;
  case REC_EXIT:
    process_exit((const rec_exit *)h, m);
    break;
  case REC_READBACK:
    process_readback((const rec_readback *)h, wr.seq_counter);
    break;
  case REC_NOTE:
    wr__process_note((const rec_note *)h, r->rd_thread ? r->rd_thread : r->thread_index);
    break;
  case REC_THREAD:
    r->rd_thread = ((const rec_thread *)h)->index;
    process_thread((const rec_thread *)h);
    break;
  case REC_DEVTIME:
    process_devtime((const rec_devtime *)h);
    break;
  case REC_DEVCLOCK:
    process_devclock((const rec_devclock *)h);
    break;
  case REC_STACK: {
    const rec_stack *st = (const rec_stack *)h;
    wr__stack_named(st->hash, (const char *)(st + 1), st->len);
    break;
  }
  default:
    break;
  }
}

/* Writes the in-flight calls as incomplete rows (result NULL). */
void wr__write_inflight(void)
{
  for (pending_call *c = wr.inflight; c; c = c->next) {
    if (c->inserted)
      continue;
    const pi_api_desc *api = &pi_api_table[c->api];
    text args = {0};
    build_args(&fmt_now, &args, c, api, NULL, NULL, 0, false);
    wr__insert_running(c, &args);
    free(args.p);
  }
}

/* Every call in flight printed to be printed later prints its
 * in-parameters now: its entry record is about to go back to its ring. */
void wr__materialize_inflight(void)
{
  for (pending_call *c = wr.inflight; c; c = c->next)
    materialize(c);
}
