/*
 * fe_mem.h: what the memory files of the OpenCL front end share among
 * themselves (fe_memory.c, fe_image.c, fe_sampler.c, fe_usm.c,
 * fe_unsupported.c): device capabilities the memory calls check, memory
 * flag rules, and the life of a memory object wrapper (which fe_enqueue.c
 * uses too: its held commands keep their memory objects).
 */
#ifndef PITRACE_FE_MEM_H
#define PITRACE_FE_MEM_H

#include "fe.h"

/* ---- Device capabilities (fe_memory.c) ---------------------------------------
 * What the memory calls ask of a device before they go to PI (limits for
 * the spec's CL_INVALID_BUFFER_SIZE / CL_INVALID_IMAGE_SIZE, image and USM
 * support). Each is one PI query, asked the first time it is needed and
 * kept for root devices (they live as long as the library); sub-devices
 * are asked each time. */
typedef enum {
  FE_CAP_MAX_ALLOC,     /* PI_DEVICE_INFO_MAX_MEM_ALLOC_SIZE (bytes) */
  FE_CAP_BASE_ALIGN,    /* PI_DEVICE_INFO_MEM_BASE_ADDR_ALIGN (bits) */
  FE_CAP_IMAGES,        /* PI_DEVICE_INFO_IMAGE_SUPPORT */
  FE_CAP_IMAGE2D_W,     /* PI_DEVICE_INFO_IMAGE2D_MAX_WIDTH ... */
  FE_CAP_IMAGE2D_H,
  FE_CAP_IMAGE3D_W,
  FE_CAP_IMAGE3D_H,
  FE_CAP_IMAGE3D_D,
  FE_CAP_IMAGE_BUFFER,  /* PI_DEVICE_INFO_IMAGE_MAX_BUFFER_SIZE (pixels) */
  FE_CAP_IMAGE_ARRAY,   /* PI_DEVICE_INFO_IMAGE_MAX_ARRAY_SIZE */
  FE_CAP_VERSION,       /* OpenCL version of PI_DEVICE_INFO_VERSION, major*10+minor */
  FE_CAP_EMBEDDED,      /* PI_DEVICE_INFO_PROFILE is EMBEDDED_PROFILE */
  FE_CAP_3D_WRITES,     /* cl_khr_3d_image_writes in PI_DEVICE_INFO_EXTENSIONS */
  FE_CAP_DEPTH,         /* cl_khr_depth_images */
  FE_CAP_MIPMAP,        /* cl_khr_mipmap_image */
  FE_CAP_BUF_LOCATION,  /* cl_intel_mem_alloc_buffer_location */
  FE_CAP_MEM_CHANNEL,   /* PI_EXT_INTEL_DEVICE_INFO_MEM_CHANNEL_SUPPORT */
  FE_CAP_USM_HOST,      /* PI_DEVICE_INFO_USM_HOST_SUPPORT (capability bits) */
  FE_CAP_USM_DEVICE,    /* PI_DEVICE_INFO_USM_DEVICE_SUPPORT */
  FE_CAP_USM_SHARED,    /* PI_DEVICE_INFO_USM_{SINGLE,CROSS}_SHARED_SUPPORT, or'd */
  FE_CAP_QUEUE_HOST,    /* PI_DEVICE_INFO_QUEUE_ON_HOST_PROPERTIES (fe_queue.c) */
  FE_CAP_COUNT
} fe_cap;

/* The value of `cap` for `d`; false (and *v untouched) when PI could not
 * answer. */
bool fe_devcap(cl_device_id d, fe_cap cap, uint64_t *v);
/* The value of a yes/no or bit capability; 0 when PI could not answer. */
uint64_t fe_devcap_or0(cl_device_id d, fe_cap cap);
/* Whether any device of `ctx` has a non-zero `cap`. */
bool fe_ctx_any(cl_context ctx, fe_cap cap);

/* ---- Memory objects (fe_memory.c) --------------------------------------------- */

#define FE_ACCESS_FLAGS (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY)
#define FE_HOSTPTR_FLAGS (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)
#define FE_HOST_ACCESS_FLAGS                                                   \
  (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)

/* CL_INVALID_VALUE unless `flags` are a valid combination of the memory
 * flags table (plus `extra`, bits a caller allows besides). */
cl_int fe_mem_flags_valid(cl_mem_flags flags, cl_mem_flags extra);
/* The rules for an object made from another (a sub-buffer, an image from a
 * buffer or image): CL_INVALID_VALUE for flags that contradict the
 * parent's; *out gets the flags with the parent's inherited. */
cl_int fe_mem_flags_inherit(cl_mem parent, cl_mem_flags flags, cl_mem_flags *out);
/* The PI flags for OpenCL memory flags. PI has no write-only and no host
 * access bits: a write-only object is read-write to PI (a kernel that only
 * writes cannot tell), and the host access flags are kept by the front end,
 * which checks them on the host transfers. */
pi_mem_flags fe_mem_pi_flags(cl_mem_flags flags);

/* A live memory object: a wrapper of kind FE_MEM the application still
 * holds, or that a sub-buffer or image made from it keeps (the application
 * gets it back from CL_MEM_ASSOCIATED_MEMOBJECT or CL_IMAGE_BUFFER after it
 * released its own references, and it works, as on OpenCL implementations:
 * the child's PI object keeps the parent's). One only a held command keeps
 * is not valid to the application. */
static inline bool fe_mem_live(cl_mem m)
{
  return FE_IS(m, FE_MEM) &&
         (atomic_load_explicit(&m->apprefs, memory_order_relaxed) > 0 ||
          atomic_load_explicit(&m->children, memory_order_relaxed) > 0);
}
static inline bool fe_is_image(cl_mem m)
{
  return m->type != CL_MEM_OBJECT_BUFFER && m->type != CL_MEM_OBJECT_PIPE;
}

/* A new wrapper for the PI memory object `pi` of `ctx`, with one
 * application reference; it references ctx (and parent, if any). NULL when
 * out of memory (then pi is released). */
cl_mem fe_mem_wrap(cl_context ctx, pi_mem pi, cl_mem_object_type type, cl_mem_flags flags,
                   size_t size, void *host_ptr, cl_mem parent, cl_mem_properties *propv,
                   size_t npropv);

/* A command held back (fe_enqueue's hold) keeps the objects it uses: one
 * more wrapper and PI reference, so that a release by the application
 * while it waits frees nothing; fe_mem_drop gives them back. */
void fe_mem_hold(cl_mem m);
void fe_mem_drop(cl_mem m);

/* Property lists of clCreateBufferWithProperties / clCreateImageWithProperties:
 * CL_INVALID_PROPERTY for a name the front end does not take, a repeated
 * name or a bad value; the PI list goes to `pi` (room for 5 entries), and
 * the copy for CL_MEM_PROPERTIES to *propv / *npropv. */
cl_int fe_mem_props(cl_context ctx, const cl_mem_properties *props, bool image,
                    pi_mem_properties pi[5], cl_mem_properties **propv, size_t *npropv);

/* ---- Maps (fe_memory.c, fe_image.c, fe_enqueue.c) ----------------------------
 * PI maps buffers only (piEnqueueMemBufferMap). An image map is staged
 * through the host (fe_image.c): the region is read into host memory the
 * front end allocates (for a CL_MEM_USE_HOST_PTR image, into the
 * application's memory where the region lies), and the unmap writes it back
 * when it was mapped for writing. So is a non-blocking buffer map held back
 * for a user event (fe_enqueue.c), which must return its pointer before PI
 * maps. Every mapping, a buffer's too (of which
 * only the pointer matters), is kept on its memory object (mappings, under
 * its lock) until an unmap takes it, and counted in CL_MEM_MAP_COUNT while
 * it is there: an unmap of a pointer that is no mapping is refused, and the
 * count never goes below zero. */
typedef struct fe_mapping {
  struct fe_mapping *next;
  void *ptr;                /* what the application got */
  /* Staged mappings: an image's, or a buffer's whose map was held back
   * without blocking (fe_enqueue.c): */
  bool staged;              /* a buffer's staged mapping */
  void *staging;            /* host memory the front end allocated, or NULL */
  bool write;               /* mapped for writing: the unmap writes back */
  bool invalidate;          /* CL_MAP_WRITE_INVALIDATE_REGION: nothing is read */
  struct pi_image_offset_struct origin; /* an image's region */
  struct pi_image_region_struct region;
  size_t row, slice;        /* the pitches of ptr's memory */
  size_t offset, size;      /* a buffer's range */
  /* Under the memory object's lock: */
  pi_event done;            /* the map command's PI event once it went to PI */
  bool issued;              /* the map went to PI (it may be held back) */
  bool unmapped;            /* its unmap went to PI: a map issued later reads nothing */
  unsigned refs;            /* the mapping's, and a held map command's */
} fe_mapping;

/* Adds `map` to the mappings of `m` (one more CL_MEM_MAP_COUNT). */
void fe_mapping_add(cl_mem m, fe_mapping *map);
/* Takes the mapping of `m` at `ptr` off its list for an unmap (one less
 * CL_MEM_MAP_COUNT); NULL when `ptr` is no mapping of `m`. */
fe_mapping *fe_mapping_take(cl_mem m, const void *ptr);
/* Puts back a mapping taken for an unmap that failed or never ran. */
void fe_mapping_put_back(cl_mem m, fe_mapping *map);
/* Drops a reference to a mapping; the last frees it, once the map's PI
 * event completed (no transfer writes into its memory any more). */
void fe_mapping_unref(cl_mem m, fe_mapping *map);

/* ---- Images (fe_image.c) ------------------------------------------------------ */

/* The map of a staged mapping m of obj (an image's always, a buffer's
 * held back without blocking: fe_enqueue.c) on q: the range or region read
 * into m->ptr, or a marker of the wait list where nothing is to be read
 * (CL_MAP_WRITE_INVALIDATE_REGION, or unmapped already); its event kept as
 * m->done for the unmap, which writes a write-map back. */
pi_result fe_staged_map(cl_mem obj, fe_mapping *m, cl_command_queue q, pi_bool blocking,
                        pi_uint32 n, const pi_event *wait, pi_event *ev);

/* Bytes per pixel of a valid image format, 0 for an invalid one. */
size_t fe_image_element_size(const cl_image_format *f);

#endif /* PITRACE_FE_MEM_H */
