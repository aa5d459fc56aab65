/*
 * fe.h: the OpenCL front end's private header: its object kinds, the
 * helpers every file of the front end shares, and the prototype of every
 * OpenCL function it implements (fe_clXxx, typed from the Khronos headers so
 * a prototype can never drift from the API).
 *
 * Shape: each OpenCL object the application holds is a wrapper that starts
 * with the ICD dispatch pointer (CL/cl_icd.h: the loader calls through it),
 * then a common header (fe_obj: kind, wrapper references, the plugin that
 * serves it), then the PI handle and what OpenCL needs that PI does not keep.
 * Every OpenCL call becomes PI calls through the runtime (pirt_piXxx from
 * pirt_pi.h), so SYCL_PI_TRACE, the recording shim and the device filter
 * apply to it.
 *
 * Reference counts: each clRetainX/clReleaseX is one piXRetain/piXRelease
 * (so a recording holds exactly the application's calls), and the wrapper
 * keeps its own count: the application's references plus one for each
 * wrapper that points at it (a kernel at its program, a queue at its
 * context). The wrapper is freed when that count reaches zero, so a handle
 * the application released but another object still uses stays valid.
 */
#ifndef PITRACE_FE_H
#define PITRACE_FE_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#define CL_USE_DEPRECATED_OPENCL_2_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_egl.h>
#include <CL/cl_gl.h>
#include <CL/cl_icd.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pirt.h"
#include "pirt_pi.h"

/* Object kinds, stored in every wrapper and checked on every call: a handle
 * of the wrong kind (or a released one) gets the CL_INVALID_* error of its
 * parameter instead of a crash. */
typedef enum {
  FE_PLATFORM = 0x7069504c, /* distinct, unlikely values */
  FE_DEVICE,
  FE_CONTEXT,
  FE_QUEUE,
  FE_MEM,
  FE_PROGRAM,
  FE_KERNEL,
  FE_EVENT,
  FE_SAMPLER,
  FE_DEAD = 0x64656164
} fe_kind;

typedef struct fe_obj {
  const struct _cl_icd_dispatch *dispatch; /* first, for the ICD loader */
  uint32_t kind;                           /* fe_kind */
  atomic_uint refs;                        /* wrapper references */
  const pirt_plugin *pl;                   /* the plugin that serves it */
} fe_obj;

extern const struct _cl_icd_dispatch fe_dispatch;

/* A destructor callback (clSetMemObjectDestructorCallback,
 * clSetContextDestructorCallback, clSetProgramReleaseCallback), called in
 * reverse order of registration when the wrapper goes. */
typedef struct fe_callback {
  void(CL_CALLBACK *fn)(void *obj, void *user);
  void *obj;
  void *user;
  struct fe_callback *next;
} fe_callback;

struct _cl_platform_id {
  fe_obj o;
  pi_platform pi;
  const char *backend;     /* "opencl", "level_zero", "cuda" */
  cl_uint ndev;
  cl_device_id *devices;   /* root devices, in discovery order */
};

struct _cl_device_id {
  fe_obj o;
  pi_device pi;
  cl_platform_id platform;
  cl_device_id parent;     /* NULL for a root device */
  cl_device_type type;
  bool compiler;           /* can build OpenCL C (CL_DEVICE_COMPILER_AVAILABLE) */
  cl_device_partition_property *partition; /* how a sub-device was made */
  size_t npartition;
};

struct _cl_context {
  fe_obj o;
  pi_context pi;
  cl_platform_id platform;
  cl_uint ndev;
  cl_device_id *devices;
  cl_context_properties *props; /* as given, 0-terminated, or NULL */
  size_t nprops;                /* entries incl. the 0, or 0 */
  void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *);
  void *notify_user;
  pthread_mutex_t lock;
  fe_callback *destructors;
  /* Commands held back until user events complete (fe_event.c), in the
   * order they were enqueued, under hold_lock. */
  pthread_mutex_t hold_lock;
  struct fe_held *held, *held_tail;
  unsigned hold_pass;
};

struct _cl_command_queue {
  fe_obj o;
  pi_queue pi;
  cl_context ctx;
  cl_device_id dev;
  cl_command_queue_properties props;
  cl_queue_properties *propv; /* CL_QUEUE_PROPERTIES_ARRAY, or NULL */
  size_t npropv;
  atomic_uint held;           /* its commands held back (fe_event.c) */
  atomic_uint held_barriers;  /* barriers among them: what follows waits (out-of-order) */
  unsigned hold_pass;         /* under ctx->hold_lock */
  unsigned barrier_pass;      /* same lock */
  unsigned held_releases;     /* piQueueReleases waiting for them; same lock */
  bool held_flush;            /* flushed while they were held; same lock */
};

struct _cl_mem {
  fe_obj o;
  pi_mem pi;
  cl_context ctx;
  cl_mem_object_type type;
  cl_mem_flags flags;
  size_t size;
  void *host_ptr;             /* CL_MEM_USE_HOST_PTR's pointer, or NULL */
  cl_mem parent;              /* sub-buffer: its buffer; image: its buffer */
  size_t offset;              /* sub-buffer: origin */
  cl_image_format format;     /* images */
  cl_image_desc desc;         /* images */
  cl_mem_properties *propv;   /* clCreate*WithProperties, or NULL */
  size_t npropv;
  atomic_uint maps;           /* outstanding maps (CL_MEM_MAP_COUNT) */
  pthread_mutex_t lock;
  fe_callback *destructors;
  atomic_uint apprefs;        /* the application's references (CL_MEM_REFERENCE_COUNT) */
  atomic_uint children;       /* sub-buffers and images made from it, while they live */
  struct fe_mapping *mappings; /* maps not unmapped yet (fe_mem.h); under lock */
};

struct _cl_program {
  fe_obj o;
  pi_program pi;
  cl_context ctx;
  cl_uint ndev;
  cl_device_id *devices;      /* the devices it is for */
  char *source;               /* clCreateProgramWithSource's text, or NULL */
  void *il;                   /* clCreateProgramWithIL's bytes, or NULL */
  size_t il_size;
  atomic_uint kernels;        /* kernels attached (CL_INVALID_OPERATION rules) */
  pthread_mutex_t lock;
  fe_callback *destructors;   /* clSetProgramReleaseCallback */
  uint8_t origin;             /* how it was made (fe_program.c) */
  atomic_bool building;       /* a build, compile or link of it is running */
  cl_build_status status;     /* pi == NULL (no plugin compiles it): last build; lock */
  char *options;              /* pi == NULL: last build's options; lock */
  atomic_uint apprefs;        /* the application's references (kernels hold the rest) */
};

struct _cl_kernel {
  fe_obj o;
  pi_kernel pi;
  cl_program prog;
  cl_context ctx;
  char *name;
  cl_uint nargs;
  struct fe_arg *args;        /* per argument: class and last value (fe_kernel.c) */
  cl_bool usm_indirect[3];    /* CL_KERNEL_EXEC_INFO_INDIRECT_{HOST,DEVICE,SHARED}_ACCESS_INTEL */
  void **usm_ptrs;            /* CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL, for clCloneKernel */
  size_t nusm_ptrs;
  bool holds_args;            /* fe_kernel_snapshot: it references its arguments' objects */
  cl_mem *held_mems;          /* then per argument the memory object it holds, or NULL */
};

struct _cl_event {
  fe_obj o;
  pi_event pi;
  cl_context ctx;
  cl_command_queue queue;     /* NULL for a user event */
  cl_command_type type;
  pthread_mutex_t lock;
  struct fe_event_cb *callbacks; /* held and user events: not yet given to PI */
  /* FE_BY_PI: PI answers the status (pi is set). Otherwise the status the
   * front end keeps: a user event's (PI's user events are complete from
   * creation), CL_QUEUED for a command held back (pi is NULL until it is
   * issued), or the negative error that ended a held command. */
  atomic_int status;
  /* Under lock: clRetainEvent (+1) and clReleaseEvent (-1) not yet given to
   * PI, while pi is NULL or held commands still have to pass pi to PI
   * (held_uses of them), so a release cannot free it before they issue. */
  int held_refs;
  unsigned held_uses;
};
#define FE_BY_PI 0x7fffffff

struct _cl_sampler {
  fe_obj o;
  pi_sampler pi;
  cl_context ctx;
  cl_sampler_properties *propv; /* clCreateSamplerWithProperties, or NULL */
  size_t npropv;
  atomic_uint apprefs;          /* the application's references */
};

/* ---- Handles ---------------------------------------------------------------- */

/* True when `h` is a live wrapper of kind `k`. */
#define FE_IS(h, k) ((h) != NULL && ((const fe_obj *)(h))->kind == (uint32_t)(k))

/* Returns `err` from the calling function when `h` is not a live `k`. */
#define FE_CHECK(h, k, err)                                                    \
  do {                                                                         \
    if (!FE_IS(h, k))                                                          \
      return (err);                                                            \
  } while (0)

/* For functions that return an object and report through errcode_ret. */
#define FE_FAIL(errp, code)                                                    \
  do {                                                                         \
    if (errp)                                                                  \
      *(errp) = (code);                                                        \
    return NULL;                                                               \
  } while (0)

/* A new wrapper of `size` bytes and kind `k`, served by `pl`, with one
 * reference; NULL when out of memory. */
void *fe_new(size_t size, fe_kind k, const pirt_plugin *pl);
/* One more wrapper reference (another object points at `o`). */
void fe_ref(void *o);
/* Drops a wrapper reference; at zero, `on_free` (may be NULL) runs and the
 * wrapper is freed. True when it was freed. */
bool fe_unref(void *o, void (*on_free)(void *o));

/* The wrapper for a PI handle the front end created or discovered, or NULL.
 * Info queries that answer handles (a device's platform, a context's
 * devices, a kernel's program) are translated through this map. */
void *fe_lookup(fe_kind k, const void *pi);
void fe_map_add(fe_kind k, const void *pi, void *wrapper);
void fe_map_remove(fe_kind k, const void *pi);
/* fe_map_remove where `pi` still maps to `wrapper`: a wrapper that outlives
 * its last PI reference leaves the map without taking out a newer wrapper
 * that PI's reuse of the handle has put there. */
void fe_map_remove_if(fe_kind k, const void *pi, const void *wrapper);

/* ---- Results and info queries ---------------------------------------------- */

/* PI took its result codes from OpenCL: a PI result is the CL error code. */
static inline cl_int fe_err(pi_result r) { return (cl_int)r; }

/* Copies an answer of `n` bytes out the OpenCL way: CL_INVALID_VALUE when
 * `value` is given and `size` is too small; size_ret gets `n`. */
cl_int fe_put(size_t size, void *value, size_t *size_ret, const void *src, size_t n);
#define FE_PUT_VAL(size, value, size_ret, v)                                   \
  fe_put(size, value, size_ret, &(v), sizeof(v))
cl_int fe_put_str(size_t size, void *value, size_t *size_ret, const char *s);

/* Runs a PI info query named by its enumeration (pi.api's table, e.g.
 * "pi_device_info") the OpenCL way. Queries PI knows pass through; answers
 * that are handles are turned into the front end's wrappers (the value
 * types come from the API description). `call` is the PI getter bound to
 * one object. CL_INVALID_VALUE for a query PI does not describe. */
typedef pi_result (*fe_info_fn)(const void *obj, uint32_t param, size_t size,
                                void *value, size_t *size_ret);
cl_int fe_pi_info(const char *table, fe_info_fn call, const void *obj,
                  uint32_t param, size_t size, void *value, size_t *size_ret);
/* Whether pi.api's table `table` describes query `param`. */
bool fe_pi_knows(const char *table, uint32_t param);

/* Copies a 0-terminated property list of 64-bit key, value pairs (every
 * cl_*_properties type is 64 bits on the targets we build for) into a new
 * array stored at *(T **)out; *n gets the entries including the terminator
 * (0 for a NULL list). */
_Static_assert(sizeof(cl_context_properties) == 8 && sizeof(cl_queue_properties) == 8 &&
               sizeof(cl_mem_properties) == 8 && sizeof(cl_sampler_properties) == 8,
               "property lists are 64-bit");
cl_int fe_copy_props(const void *in, void *out, size_t *n);

/* ---- Platforms and devices (fe_platform.c) ----------------------------------- */

/* Builds the platforms from the runtime's devices, once. */
void fe_platforms_init(void);
extern cl_uint fe_nplatforms;
extern cl_platform_id *fe_platforms;

/* Devices that do not belong together (another platform's) in one call:
 * CL_INVALID_DEVICE. */
cl_int fe_check_devices(cl_uint n, const cl_device_id *devs, cl_platform_id *platform);
/* Fills pi[] from wrappers. */
void fe_pi_devices(cl_uint n, const cl_device_id *devs, pi_device *pi);

/* ---- Programs (fe_program.c) ------------------------------------------------- */

/* Whether `d` is a live device and one of the program's (the devices a
 * kernel of it can be asked about or launched on). */
bool fe_program_has_device(cl_program p, cl_device_id d);
/* The on_free of a program wrapper, for fe_unref by those that reference
 * one (its kernels). */
void fe_program_free(void *o);
/* Whether the program has an executable built for one of its devices (PI's
 * build status and binary type say so). */
bool fe_program_executable(cl_program p);

/* ---- Kernels (fe_kernel.c) ---------------------------------------------------- */

/* A copy of `k` as it stands (clCloneKernel: its arguments and execution
 * settings) that also holds each memory object its arguments name (as
 * fe_mem_hold does: the wrapper, so destructor callbacks wait, and a PI
 * reference) and a PI reference on each sampler, for a launch held back:
 * OpenCL keeps a command's objects alive after the application releases
 * them. Released with fe_clReleaseKernel, which drops those references too.
 * NULL with *err set on failure. */
cl_kernel fe_kernel_snapshot(cl_kernel k, cl_int *err);
/* Whether the application set every argument of `k` (clSetKernelArg, or
 * clSetKernelArgMemPointerINTEL): what a launch the front end does not hand
 * to PI at once (held back, or of no work-items) checks, as PI would. */
bool fe_kernel_args_set(cl_kernel k);

/* ---- Events (fe_event.c) ---------------------------------------------------- */

/* PI events of an OpenCL wait list, checked the OpenCL way:
 * CL_INVALID_EVENT_WAIT_LIST for a NULL list with a count, a count of 0
 * with a list, or an event that is not one; CL_INVALID_CONTEXT for an event
 * of another context. `buf` has room for `small` entries; larger lists are
 * allocated (free with fe_wait_list_free).
 * PI's user events are complete from creation, so PI cannot make a command
 * wait for one: a user event not yet complete (or a command fe_enqueue
 * holds back) is waited for here on the host, and one that ended in an
 * error gives CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST. Enqueues should
 * use fe_enqueue, which holds the command back instead of blocking. */
cl_int fe_wait_list(cl_context ctx, cl_uint n, const cl_event *list,
                    pi_event *buf, size_t small, pi_event **out);
void fe_wait_list_free(pi_event *list, pi_event *buf);
/* Wraps the PI event of an enqueue for the application (`out` may be NULL:
 * then the PI event is released). */
cl_int fe_event_out(cl_command_queue q, cl_command_type type, pi_event ev,
                    cl_event *out);

/* A command for fe_enqueue: the caller's struct starts with an fe_cmd and
 * holds the arguments. `issue` makes the PI call with the PI wait list,
 * `blocking` (always PI_FALSE for a command issued after it was held) and
 * the PI event to fill (NULL when none is wanted). When the command has to
 * wait for a user event, fe_enqueue keeps a copy of `size` bytes of the
 * struct and calls `hold` (may be NULL) on the copy, so that it stands on
 * its own (a kernel cloned with its arguments, a fill pattern copied); an
 * error from hold is the enqueue's. `drop` (may be NULL) frees what hold
 * took, after the copy was issued. */
typedef struct fe_cmd fe_cmd;
struct fe_cmd {
  pi_result (*issue)(fe_cmd *c, cl_command_queue q, pi_bool blocking,
                     pi_uint32 n, const pi_event *wait, pi_event *ev);
  cl_int (*hold)(fe_cmd *c);
  void (*drop)(fe_cmd *c);
};

/* Enqueues `c` on `q` with the wait list checked as fe_wait_list does: the
 * command is issued at once when it can be; when it waits for a user event
 * not yet complete (or follows commands of its queue held back: any of an
 * in-order queue, an out-of-order queue's barriers; a marker or barrier
 * without a wait list follows any) it is held, and issued by the
 * clSetUserEventStatus that frees it, in queue order. One
 * waiting for an event that failed ends with
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST. A held `blocking` command
 * is waited for before fe_enqueue returns. `event` as clEnqueue* take it. */
cl_int fe_enqueue(cl_command_queue q, cl_command_type type, cl_uint n,
                  const cl_event *wait, bool blocking, fe_cmd *c, size_t size,
                  cl_event *event);
/* Waits until no command of `q` is held back (clFinish). */
void fe_hold_drain(cl_command_queue q);
/* True when commands of `q` are held back: its piQueueRelease then waits
 * until they are issued (clReleaseCommandQueue). */
bool fe_hold_release(cl_command_queue q);
/* Notes a clFlush of `q` for its commands held back: they are flushed when
 * they are issued. */
void fe_hold_flush(cl_command_queue q);

/* ---- Contexts and queues (fe_context.c, fe_queue.c) --------------------------- */

/* Calls the context's notify callback with `what` (clCreateContext's
 * pfn_notify), for errors a context's user should hear about. */
void fe_context_notify(cl_context ctx, const char *what);
/* Whether `dev` is one of the context's devices. */
bool fe_context_has_device(cl_context ctx, cl_device_id dev);
/* Drop the wrapper reference an object took on a context or queue with
 * fe_ref, when the object goes; at zero the wrapper is destroyed (a
 * context's destructor callbacks run). */
void fe_context_unref(cl_context ctx);
void fe_queue_unref(cl_command_queue q);

/* ---- The functions the front end implements ---------------------------------- */

#include "fe_functions.h"

#define FE_DECLARE(name) extern __typeof__(name) fe_##name;
FE_CORE_FUNCTIONS(FE_DECLARE)
FE_EXT_FUNCTIONS(FE_DECLARE)
#undef FE_DECLARE

#endif /* PITRACE_FE_H */
