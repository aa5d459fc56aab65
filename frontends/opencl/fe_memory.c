/*
 * fe_memory.c: OpenCL buffers and what every memory object shares: the
 * memory flag rules, the wrapper's life (application references,
 * destructor callbacks), clGetMemObjectInfo, and the device capabilities
 * the memory calls check before they go to PI (fe_mem.h).
 *
 * Each call is one PI call: clCreateBuffer[WithProperties] is
 * piMemBufferCreate, clCreateSubBuffer piMemBufferPartition,
 * clRetainMemObject / clReleaseMemObject piMemRetain / piMemRelease. The
 * front end keeps what PI cannot answer: the flags as the application gave
 * them (PI has no write-only or host access bits), the USE_HOST_PTR
 * pointer, a sub-buffer's parent and origin, the property list, the map
 * count with the mappings it counts (fe_mem.h), and the application's
 * reference count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fe_mem.h"

/* ---- Device capabilities ------------------------------------------------------ */

#define CAP_CACHE 64

static struct cap_entry {
  _Atomic(cl_device_id) dev;
  atomic_uint_fast64_t have; /* bit per fe_cap */
  atomic_uint_fast64_t v[FE_CAP_COUNT];
} cap_cache[CAP_CACHE];
static atomic_uint cap_used;
static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;

/* A numeric device query of `n` bytes (4 or 8) as a uint64_t. */
static bool dev_num(cl_device_id d, pi_device_info q, size_t n, uint64_t *v)
{
  union {
    uint32_t u32;
    uint64_t u64;
  } x = {0};
  if (pirt_piDeviceGetInfo(d->o.pl, d->pi, q, n, &x, NULL) != PI_SUCCESS)
    return false;
  *v = n == sizeof(uint32_t) ? x.u32 : x.u64;
  return true;
}

/* A string device query, malloc'd, or NULL. */
static char *dev_str(cl_device_id d, pi_device_info q)
{
  size_t n = 0;
  if (pirt_piDeviceGetInfo(d->o.pl, d->pi, q, 0, NULL, &n) != PI_SUCCESS)
    return NULL;
  char *s = malloc(n + 1);
  if (!s)
    return NULL;
  if (pirt_piDeviceGetInfo(d->o.pl, d->pi, q, n, s, NULL) != PI_SUCCESS) {
    free(s);
    return NULL;
  }
  s[n] = 0;
  return s;
}

/* Whether the space-separated list `list` holds `word`. */
static bool has_word(const char *list, const char *word)
{
  size_t n = strlen(word);
  for (const char *s = list; (s = strstr(s, word)) != NULL; s += n)
    if ((s == list || s[-1] == ' ') && (s[n] == ' ' || s[n] == 0))
      return true;
  return false;
}

static bool dev_ext(cl_device_id d, const char *ext, uint64_t *v)
{
  char *s = dev_str(d, PI_DEVICE_INFO_EXTENSIONS);
  if (!s)
    return false;
  *v = has_word(s, ext);
  free(s);
  return true;
}

/* Asks PI for one capability. */
static bool cap_query(cl_device_id d, fe_cap cap, uint64_t *v)
{
  static const struct {
    pi_device_info q;
    size_t n;
  } num[] = {
      [FE_CAP_MAX_ALLOC] = {PI_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, 8},
      [FE_CAP_BASE_ALIGN] = {PI_DEVICE_INFO_MEM_BASE_ADDR_ALIGN, 4},
      [FE_CAP_IMAGES] = {PI_DEVICE_INFO_IMAGE_SUPPORT, sizeof(pi_bool)},
      [FE_CAP_IMAGE2D_W] = {PI_DEVICE_INFO_IMAGE2D_MAX_WIDTH, sizeof(size_t)},
      [FE_CAP_IMAGE2D_H] = {PI_DEVICE_INFO_IMAGE2D_MAX_HEIGHT, sizeof(size_t)},
      [FE_CAP_IMAGE3D_W] = {PI_DEVICE_INFO_IMAGE3D_MAX_WIDTH, sizeof(size_t)},
      [FE_CAP_IMAGE3D_H] = {PI_DEVICE_INFO_IMAGE3D_MAX_HEIGHT, sizeof(size_t)},
      [FE_CAP_IMAGE3D_D] = {PI_DEVICE_INFO_IMAGE3D_MAX_DEPTH, sizeof(size_t)},
      [FE_CAP_IMAGE_BUFFER] = {PI_DEVICE_INFO_IMAGE_MAX_BUFFER_SIZE, sizeof(size_t)},
      [FE_CAP_IMAGE_ARRAY] = {PI_DEVICE_INFO_IMAGE_MAX_ARRAY_SIZE, sizeof(size_t)},
      [FE_CAP_MEM_CHANNEL] = {PI_EXT_INTEL_DEVICE_INFO_MEM_CHANNEL_SUPPORT, sizeof(pi_bool)},
      [FE_CAP_USM_HOST] = {PI_DEVICE_INFO_USM_HOST_SUPPORT, 8},
      [FE_CAP_USM_DEVICE] = {PI_DEVICE_INFO_USM_DEVICE_SUPPORT, 8},
      [FE_CAP_QUEUE_HOST] = {PI_DEVICE_INFO_QUEUE_ON_HOST_PROPERTIES, sizeof(pi_queue_properties)},
  };
  switch (cap) {
  case FE_CAP_VERSION: {
    char *s = dev_str(d, PI_DEVICE_INFO_VERSION); /* "OpenCL 3.0 ..." */
    unsigned major = 0, minor = 0;
    bool ok = s && sscanf(s, "OpenCL %u.%u", &major, &minor) == 2;
    free(s);
    if (ok)
      *v = major * 10 + minor;
    return ok;
  }
  case FE_CAP_EMBEDDED: {
    char *s = dev_str(d, PI_DEVICE_INFO_PROFILE);
    if (!s)
      return false;
    *v = strcmp(s, "EMBEDDED_PROFILE") == 0;
    free(s);
    return true;
  }
  case FE_CAP_3D_WRITES:
    return dev_ext(d, "cl_khr_3d_image_writes", v);
  case FE_CAP_DEPTH:
    return dev_ext(d, "cl_khr_depth_images", v);
  case FE_CAP_MIPMAP:
    return dev_ext(d, "cl_khr_mipmap_image", v);
  case FE_CAP_BUF_LOCATION:
    return dev_ext(d, "cl_intel_mem_alloc_buffer_location", v);
  case FE_CAP_USM_SHARED: {
    uint64_t a = 0, b = 0;
    if (!dev_num(d, PI_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT, 8, &a) ||
        !dev_num(d, PI_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT, 8, &b))
      return false;
    *v = a | b;
    return true;
  }
  default:
    if ((size_t)cap >= sizeof num / sizeof *num || num[cap].n == 0)
      return false;
    return dev_num(d, num[cap].q, num[cap].n, v);
  }
}

static struct cap_entry *cap_find(cl_device_id d)
{
  unsigned n = atomic_load_explicit(&cap_used, memory_order_acquire);
  for (unsigned i = 0; i < n; i++)
    if (atomic_load_explicit(&cap_cache[i].dev, memory_order_relaxed) == d)
      return &cap_cache[i];
  return NULL;
}

/* A device capability, cached for root devices (fe_mem.h). */
bool fe_devcap(cl_device_id d, fe_cap cap, uint64_t *v)
{
  const uint64_t bit = (uint64_t)1 << cap;
  struct cap_entry *e = d->parent ? NULL : cap_find(d);
  if (e && (atomic_load_explicit(&e->have, memory_order_acquire) & bit)) {
    *v = atomic_load_explicit(&e->v[cap], memory_order_relaxed);
    return true;
  }
  uint64_t x = 0;
  if (!cap_query(d, cap, &x))
    return false;
  *v = x;
  if (d->parent)
    return true; /* sub-devices come and go: not kept */
  pthread_mutex_lock(&cap_lock);
  e = cap_find(d);
  unsigned n = atomic_load_explicit(&cap_used, memory_order_relaxed);
  if (!e && n < CAP_CACHE) {
    e = &cap_cache[n];
    atomic_store_explicit(&e->dev, d, memory_order_relaxed);
    atomic_store_explicit(&cap_used, n + 1, memory_order_release);
  }
  if (e) {
    atomic_store_explicit(&e->v[cap], x, memory_order_relaxed);
    atomic_fetch_or_explicit(&e->have, bit, memory_order_release);
  }
  pthread_mutex_unlock(&cap_lock);
  return true;
}

/* A capability, 0 when PI cannot answer (fe_mem.h). */
uint64_t fe_devcap_or0(cl_device_id d, fe_cap cap)
{
  uint64_t v = 0;
  return fe_devcap(d, cap, &v) ? v : 0;
}

/* Whether a device of the context has the capability (fe_mem.h). */
bool fe_ctx_any(cl_context ctx, fe_cap cap)
{
  for (cl_uint i = 0; i < ctx->ndev; i++)
    if (fe_devcap_or0(ctx->devices[i], cap))
      return true;
  return false;
}

/* ---- Flags ----------------------------------------------------------------------- */

static int bits(cl_mem_flags f) { return __builtin_popcountll((unsigned long long)f); }

/* The memory flags table's rules (fe_mem.h). */
cl_int fe_mem_flags_valid(cl_mem_flags f, cl_mem_flags extra)
{
  const cl_mem_flags known =
      FE_ACCESS_FLAGS | FE_HOSTPTR_FLAGS | FE_HOST_ACCESS_FLAGS | extra;
  if ((f & ~known) || bits(f & FE_ACCESS_FLAGS) > 1 || bits(f & FE_HOST_ACCESS_FLAGS) > 1)
    return CL_INVALID_VALUE;
  if ((f & CL_MEM_USE_HOST_PTR) && (f & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)))
    return CL_INVALID_VALUE;
  return CL_SUCCESS;
}

/* Flags of an object made from another (fe_mem.h). */
cl_int fe_mem_flags_inherit(cl_mem parent, cl_mem_flags f, cl_mem_flags *out)
{
  const cl_mem_flags p = parent->flags;
  if ((f & FE_HOSTPTR_FLAGS) ||
      ((p & CL_MEM_WRITE_ONLY) && (f & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))) ||
      ((p & CL_MEM_READ_ONLY) && (f & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))) ||
      ((p & CL_MEM_HOST_WRITE_ONLY) && (f & CL_MEM_HOST_READ_ONLY)) ||
      ((p & CL_MEM_HOST_READ_ONLY) && (f & CL_MEM_HOST_WRITE_ONLY)) ||
      ((p & CL_MEM_HOST_NO_ACCESS) && (f & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY))))
    return CL_INVALID_VALUE;
  cl_mem_flags r = f | (p & FE_HOSTPTR_FLAGS);
  if (!(f & FE_ACCESS_FLAGS))
    r |= p & FE_ACCESS_FLAGS;
  if (!(f & FE_HOST_ACCESS_FLAGS))
    r |= p & FE_HOST_ACCESS_FLAGS;
  *out = r;
  return CL_SUCCESS;
}

/* OpenCL memory flags as PI's (fe_mem.h). */
pi_mem_flags fe_mem_pi_flags(cl_mem_flags f)
{
  pi_mem_flags r = (f & CL_MEM_READ_ONLY) ? PI_MEM_ACCESS_READ_ONLY : PI_MEM_FLAGS_ACCESS_RW;
  if (f & CL_MEM_USE_HOST_PTR)
    r |= PI_MEM_FLAGS_HOST_PTR_USE;
  if (f & CL_MEM_COPY_HOST_PTR)
    r |= PI_MEM_FLAGS_HOST_PTR_COPY;
  if (f & CL_MEM_ALLOC_HOST_PTR)
    r |= PI_MEM_FLAGS_HOST_PTR_ALLOC;
  return r;
}

/* ---- Maps ------------------------------------------------------------------------ */

/* Frees a mapping no one references, after the map's transfer. */
static void mapping_free(cl_mem m, fe_mapping *map)
{
  if (map->done) {
    pirt_piEventsWait(m->o.pl, 1, &map->done); /* its result is the map's, reported there */
    pirt_piEventRelease(m->o.pl, map->done);
  }
  free(map->staging);
  free(map);
}

/* A mapping joins its memory object (fe_mem.h). */
void fe_mapping_add(cl_mem m, fe_mapping *map)
{
  pthread_mutex_lock(&m->lock);
  map->next = m->mappings;
  m->mappings = map;
  atomic_fetch_add(&m->maps, 1);
  pthread_mutex_unlock(&m->lock);
}

/* The mapping at `ptr`, taken off its memory object (fe_mem.h). */
fe_mapping *fe_mapping_take(cl_mem m, const void *ptr)
{
  pthread_mutex_lock(&m->lock);
  fe_mapping **at = &m->mappings;
  while (*at && (*at)->ptr != ptr)
    at = &(*at)->next;
  fe_mapping *map = *at;
  if (map) {
    *at = map->next;
    map->next = NULL;
    atomic_fetch_sub(&m->maps, 1);
  }
  pthread_mutex_unlock(&m->lock);
  return map;
}

/* A mapping whose unmap did not happen goes back (fe_mem.h). */
void fe_mapping_put_back(cl_mem m, fe_mapping *map)
{
  pthread_mutex_lock(&m->lock);
  map->unmapped = false;
  pthread_mutex_unlock(&m->lock);
  fe_mapping_add(m, map);
}

/* One reference less on a mapping (fe_mem.h). */
void fe_mapping_unref(cl_mem m, fe_mapping *map)
{
  pthread_mutex_lock(&m->lock);
  bool last = --map->refs == 0;
  pthread_mutex_unlock(&m->lock);
  if (last)
    mapping_free(m, map);
}

/* ---- Wrappers -------------------------------------------------------------------- */

/* The wrapper goes (no application reference and no object pointing at it
 * is left): its destructor callbacks run, most recent first; mappings the
 * application never unmapped go with it. */
static void mem_free(void *o)
{
  cl_mem m = o;
  for (fe_callback *c = m->destructors, *next; c; c = next) {
    next = c->next;
    ((void(CL_CALLBACK *)(cl_mem, void *))(void (*)(void))c->fn)(m, c->user);
    free(c);
  }
  for (fe_mapping *map = m->mappings, *next; map; map = next) {
    next = map->next;
    mapping_free(m, map); /* a held map command would hold m: only the mapping's is left */
  }
  pthread_mutex_destroy(&m->lock);
  free(m->propv);
  /* Out of the map only now: a sub-buffer or image keeps the PI object (and
   * so its handle) after the application's last release. */
  fe_map_remove_if(FE_MEM, m->pi, m);
  if (m->parent) {
    atomic_fetch_sub(&m->parent->children, 1);
    fe_unref(m->parent, mem_free);
  }
  fe_context_unref(m->ctx);
}

/* Keeps a memory object for a held command (fe_mem.h). */
void fe_mem_hold(cl_mem m)
{
  fe_ref(m);
  pirt_piMemRetain(m->o.pl, m->pi);
}

/* Gives back what fe_mem_hold took (fe_mem.h). */
void fe_mem_drop(cl_mem m)
{
  pirt_piMemRelease(m->o.pl, m->pi);
  fe_unref(m, mem_free);
}

/* A new memory object wrapper (fe_mem.h). */
cl_mem fe_mem_wrap(cl_context ctx, pi_mem pi, cl_mem_object_type type, cl_mem_flags flags,
                   size_t size, void *host_ptr, cl_mem parent, cl_mem_properties *propv,
                   size_t npropv)
{
  cl_mem m = fe_new(sizeof *m, FE_MEM, ctx->o.pl);
  if (!m) {
    pirt_piMemRelease(ctx->o.pl, pi);
    free(propv);
    return NULL;
  }
  m->pi = pi;
  m->ctx = ctx;
  fe_ref(ctx);
  m->type = type;
  m->flags = flags;
  m->size = size;
  m->host_ptr = host_ptr;
  m->parent = parent;
  if (parent) {
    fe_ref(parent);
    atomic_fetch_add(&parent->children, 1);
  }
  m->propv = propv;
  m->npropv = npropv;
  atomic_init(&m->maps, 0);
  atomic_init(&m->apprefs, 1);
  atomic_init(&m->children, 0);
  pthread_mutex_init(&m->lock, NULL);
  fe_map_add(FE_MEM, pi, m);
  return m;
}

/* Checks and converts a memory property list (fe_mem.h). */
cl_int fe_mem_props(cl_context ctx, const cl_mem_properties *props, bool image,
                    pi_mem_properties pi[5], cl_mem_properties **propv, size_t *npropv)
{
  size_t n = 0;
  pi[0] = 0;
  for (size_t i = 0; props && props[i]; i += 2) {
    const cl_mem_properties key = props[i];
    for (size_t k = 0; k < i; k += 2)
      if (props[k] == key)
        return CL_INVALID_PROPERTY; /* the same name twice */
    /* Buffers take the two placement hints PI has names for, where a
     * device of the context has them; images take nothing (PI's image
     * creation has no property list). */
    fe_cap need = key == CL_MEM_CHANNEL_INTEL                ? FE_CAP_MEM_CHANNEL
                  : key == CL_MEM_ALLOC_BUFFER_LOCATION_INTEL ? FE_CAP_BUF_LOCATION
                                                              : FE_CAP_COUNT;
    if (image || need == FE_CAP_COUNT || !fe_ctx_any(ctx, need))
      return CL_INVALID_PROPERTY;
    pi[n++] = key == CL_MEM_CHANNEL_INTEL ? PI_MEM_PROPERTIES_CHANNEL
                                          : PI_MEM_PROPERTIES_ALLOC_BUFFER_LOCATION;
    pi[n++] = (pi_mem_properties)props[i + 1];
    pi[n] = 0;
  }
  return fe_copy_props(props, propv, npropv);
}

/* ---- Buffers ---------------------------------------------------------------------- */

/* CL_INVALID_BUFFER_SIZE unless `size` is non-zero and within
 * CL_DEVICE_MAX_MEM_ALLOC_SIZE of some device of the context. */
static cl_int buffer_size_ok(cl_context ctx, size_t size)
{
  if (size == 0)
    return CL_INVALID_BUFFER_SIZE;
  for (cl_uint i = 0; i < ctx->ndev; i++) {
    uint64_t max;
    if (!fe_devcap(ctx->devices[i], FE_CAP_MAX_ALLOC, &max) || size <= max)
      return CL_SUCCESS;
  }
  return ctx->ndev ? CL_INVALID_BUFFER_SIZE : CL_SUCCESS;
}

/* CL_INVALID_HOST_PTR for a host pointer without USE/COPY_HOST_PTR, or
 * USE/COPY_HOST_PTR without one. */
static cl_int host_ptr_ok(cl_mem_flags flags, const void *host_ptr)
{
  bool wants = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  return wants == (host_ptr != NULL) ? CL_SUCCESS : CL_INVALID_HOST_PTR;
}

/* piMemBufferCreate, after the spec's checks of flags, size, host pointer and properties. */
cl_mem CL_API_CALL fe_clCreateBufferWithProperties(cl_context ctx,
                                                   const cl_mem_properties *props,
                                                   cl_mem_flags flags, size_t size,
                                                   void *host_ptr, cl_int *errcode_ret)
{
  if (!FE_IS(ctx, FE_CONTEXT))
    FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
  pi_mem_properties pi_props[5];
  cl_mem_properties *propv = NULL;
  size_t npropv = 0;
  cl_int err = fe_mem_props(ctx, props, false, pi_props, &propv, &npropv);
  if (err == CL_SUCCESS)
    err = fe_mem_flags_valid(flags, 0);
  if (err == CL_SUCCESS)
    err = buffer_size_ok(ctx, size);
  if (err == CL_SUCCESS)
    err = host_ptr_ok(flags, host_ptr);
  pi_mem pm = NULL;
  if (err == CL_SUCCESS)
    err = fe_err(pirt_piMemBufferCreate(ctx->o.pl, ctx->pi, fe_mem_pi_flags(flags), size,
                                        host_ptr, &pm, pi_props[0] ? pi_props : NULL));
  if (err != CL_SUCCESS) {
    free(propv);
    FE_FAIL(errcode_ret, err);
  }
  cl_mem m = fe_mem_wrap(ctx, pm, CL_MEM_OBJECT_BUFFER, flags, size,
                         (flags & CL_MEM_USE_HOST_PTR) ? host_ptr : NULL, NULL, propv, npropv);
  if (!m)
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  if (errcode_ret)
    *errcode_ret = CL_SUCCESS;
  return m;
}

/* clCreateBufferWithProperties without properties. */
cl_mem CL_API_CALL fe_clCreateBuffer(cl_context ctx, cl_mem_flags flags, size_t size,
                                     void *host_ptr, cl_int *errcode_ret)
{
  return fe_clCreateBufferWithProperties(ctx, NULL, flags, size, host_ptr, errcode_ret);
}

/* piMemBufferPartition; the flags inherited, the origin checked against
 * CL_DEVICE_MEM_BASE_ADDR_ALIGN. */
cl_mem CL_API_CALL fe_clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags,
                                        cl_buffer_create_type type, const void *info,
                                        cl_int *errcode_ret)
{
  if (!fe_mem_live(buffer) || buffer->type != CL_MEM_OBJECT_BUFFER || buffer->parent)
    FE_FAIL(errcode_ret, CL_INVALID_MEM_OBJECT);
  cl_mem_flags all;
  cl_int err = fe_mem_flags_valid(flags, 0);
  if (err == CL_SUCCESS)
    err = fe_mem_flags_inherit(buffer, flags, &all);
  if (err == CL_SUCCESS && (type != CL_BUFFER_CREATE_TYPE_REGION || !info))
    err = CL_INVALID_VALUE;
  if (err != CL_SUCCESS)
    FE_FAIL(errcode_ret, err);
  const cl_buffer_region *region = info;
  struct pi_buffer_region_struct pr = {region->origin, region->size};
  if (pr.origin > buffer->size || pr.size > buffer->size - pr.origin)
    FE_FAIL(errcode_ret, CL_INVALID_VALUE);
  if (pr.size == 0)
    FE_FAIL(errcode_ret, CL_INVALID_BUFFER_SIZE);
  /* The origin must suit CL_DEVICE_MEM_BASE_ADDR_ALIGN (bits) of at least
   * one device of the context. */
  cl_context ctx = buffer->ctx;
  bool aligned = ctx->ndev == 0;
  for (cl_uint i = 0; i < ctx->ndev && !aligned; i++) {
    uint64_t align_bits;
    aligned = !fe_devcap(ctx->devices[i], FE_CAP_BASE_ALIGN, &align_bits) ||
              align_bits < 8 || pr.origin % (align_bits / 8) == 0;
  }
  if (!aligned)
    FE_FAIL(errcode_ret, CL_MISALIGNED_SUB_BUFFER_OFFSET);
  /* PI gets the access the application asked for (none: the parent's). */
  pi_mem_flags pf = (flags & CL_MEM_READ_ONLY)                           ? PI_MEM_ACCESS_READ_ONLY
                    : (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY)) ? PI_MEM_FLAGS_ACCESS_RW
                                                                          : 0;
  pi_mem pm = NULL;
  err = fe_err(pirt_piMemBufferPartition(buffer->o.pl, buffer->pi, pf,
                                         PI_BUFFER_CREATE_TYPE_REGION, &pr, &pm));
  if (err != CL_SUCCESS)
    FE_FAIL(errcode_ret, err);
  void *host = buffer->host_ptr ? (char *)buffer->host_ptr + pr.origin : NULL;
  cl_mem m = fe_mem_wrap(ctx, pm, CL_MEM_OBJECT_BUFFER, all, pr.size, host, buffer, NULL, 0);
  if (!m)
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  m->offset = pr.origin;
  if (errcode_ret)
    *errcode_ret = CL_SUCCESS;
  return m;
}

/* ---- References ------------------------------------------------------------------- */

/* piMemRetain, and an application and wrapper reference. */
cl_int CL_API_CALL fe_clRetainMemObject(cl_mem m)
{
  if (!fe_mem_live(m))
    return CL_INVALID_MEM_OBJECT;
  pi_result r = pirt_piMemRetain(m->o.pl, m->pi);
  if (r != PI_SUCCESS)
    return fe_err(r);
  atomic_fetch_add(&m->apprefs, 1);
  fe_ref(m);
  return CL_SUCCESS;
}

/* piMemRelease; the destructor callbacks run when the wrapper goes, and the
 * wrapper leaves the handle map then (mem_free). Releasing more than the
 * application holds is refused, so the references of sub-buffers, images
 * and held commands are never taken. */
cl_int CL_API_CALL fe_clReleaseMemObject(cl_mem m)
{
  if (!FE_IS(m, FE_MEM))
    return CL_INVALID_MEM_OBJECT;
  unsigned n = atomic_load(&m->apprefs);
  do {
    if (n == 0)
      return CL_INVALID_MEM_OBJECT; /* released more often than retained */
  } while (!atomic_compare_exchange_weak(&m->apprefs, &n, n - 1));
  pi_result r = pirt_piMemRelease(m->o.pl, m->pi);
  if (r != PI_SUCCESS) {
    atomic_fetch_add(&m->apprefs, 1);
    return fe_err(r);
  }
  fe_unref(m, mem_free);
  return CL_SUCCESS;
}

/* Kept by the front end (PI has no destructor callbacks). */
cl_int CL_API_CALL fe_clSetMemObjectDestructorCallback(
    cl_mem m, void(CL_CALLBACK *fn)(cl_mem, void *), void *user)
{
  if (!fe_mem_live(m))
    return CL_INVALID_MEM_OBJECT;
  if (!fn)
    return CL_INVALID_VALUE;
  fe_callback *c = malloc(sizeof *c);
  if (!c)
    return CL_OUT_OF_HOST_MEMORY;
  c->fn = (void(CL_CALLBACK *)(void *, void *))(void (*)(void))fn;
  c->obj = m;
  c->user = user;
  pthread_mutex_lock(&m->lock);
  c->next = m->destructors; /* newest first: called in reverse order */
  m->destructors = c;
  pthread_mutex_unlock(&m->lock);
  return CL_SUCCESS;
}

/* ---- Info ---------------------------------------------------------------------------- */

static pi_result mem_getter(const void *obj, uint32_t q, size_t n, void *v, size_t *r)
{
  const struct _cl_mem *m = obj;
  return pirt_piMemGetInfo(m->o.pl, m->pi, q, n, v, r);
}

/* From the wrapper; an image's size and other queries PI knows from PI. */
cl_int CL_API_CALL fe_clGetMemObjectInfo(cl_mem m, cl_mem_info param, size_t size,
                                         void *value, size_t *size_ret)
{
  if (!fe_mem_live(m))
    return CL_INVALID_MEM_OBJECT;
  switch (param) {
  case CL_MEM_TYPE:
    return FE_PUT_VAL(size, value, size_ret, m->type);
  case CL_MEM_FLAGS:
    return FE_PUT_VAL(size, value, size_ret, m->flags);
  case CL_MEM_SIZE:
    if (!fe_is_image(m))
      return FE_PUT_VAL(size, value, size_ret, m->size);
    break; /* an image's storage size: PI knows it */
  case CL_MEM_HOST_PTR:
    return FE_PUT_VAL(size, value, size_ret, m->host_ptr);
  case CL_MEM_MAP_COUNT: {
    cl_uint maps = atomic_load(&m->maps);
    return FE_PUT_VAL(size, value, size_ret, maps);
  }
  case CL_MEM_REFERENCE_COUNT: {
    cl_uint refs = atomic_load(&m->apprefs);
    return FE_PUT_VAL(size, value, size_ret, refs);
  }
  case CL_MEM_CONTEXT:
    return FE_PUT_VAL(size, value, size_ret, m->ctx);
  case CL_MEM_ASSOCIATED_MEMOBJECT:
    return FE_PUT_VAL(size, value, size_ret, m->parent);
  case CL_MEM_OFFSET:
    return FE_PUT_VAL(size, value, size_ret, m->offset);
  case CL_MEM_USES_SVM_POINTER: {
    cl_bool no = CL_FALSE; /* no SVM (fe_unsupported.c) */
    return FE_PUT_VAL(size, value, size_ret, no);
  }
  case CL_MEM_PROPERTIES:
    return fe_put(size, value, size_ret, m->propv, m->npropv * sizeof *m->propv);
  default:
    break;
  }
  return fe_pi_info("pi_mem_info", mem_getter, m, param, size, value, size_ret);
}
