/*
 * pirt.h: the pitrace runtime's C API for applications.
 *
 * The runtime finds and binds PI plugins on first use (see README: plugins,
 * SYCL_PI_CONFIG, SYCL_PI_TRACE, SYCL_BE, SYCL_DEVICE_FILTER), and these
 * functions drive a device through them: pick a device, create a context
 * and a queue, buffers and USM, programs from OpenCL C source or binaries,
 * kernels and their arguments, ND-range launches, reads, writes, copies,
 * fills, maps, events and waits.
 *
 * Errors: every function returns a pi_result, PI_SUCCESS (0) or a negative
 * PI_ERROR_* code; pirt_error_message() then says what failed, on which
 * object, and what to do. The runtime never aborts the application.
 * Objects are released explicitly; releasing NULL is a no-op.
 *
 * Threads: every function may be called from any thread; objects may be
 * shared between threads as the underlying PI objects may (queues are
 * thread-safe, a kernel's arguments are per kernel object).
 */
#ifndef PIRT_H
#define PIRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pi/pi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pirt_device pirt_device;   /* owned by the runtime */
typedef struct pirt_plugin pirt_plugin;   /* owned by the runtime */
typedef struct pirt_context pirt_context;
typedef struct pirt_queue pirt_queue;
typedef struct pirt_buffer pirt_buffer;
typedef struct pirt_program pirt_program;
typedef struct pirt_kernel pirt_kernel;
typedef struct pirt_event pirt_event;

/* ---- Errors ---------------------------------------------------------------- */

/* The calling thread's message for its last failed call ("" if none). */
const char *pirt_error_message(void);
/* Writes out the SYCL_PI_TRACE lines still buffered for a trace file
 * (SYCL_PI_TRACE_FILE; they are written every 100 ms anyway, and at exit,
 * _exit and a crash): for a program that reads its own trace. */
void pirt_trace_flush(void);
/* "PI_ERROR_INVALID_VALUE" for a result code. */
const char *pirt_result_name(pi_result r);

/* ---- Devices --------------------------------------------------------------- */

typedef enum {
  PIRT_DEVICE_CPU = 1,
  PIRT_DEVICE_GPU = 2,
  PIRT_DEVICE_ACCELERATOR = 3,
  PIRT_DEVICE_OTHER = 4
} pirt_device_type;

typedef struct pirt_device_info {
  const char *name;
  const char *vendor;
  const char *version;       /* the device's version string */
  const char *platform_name;
  const char *backend;       /* "opencl", "level_zero", "cuda" */
  const char *plugin;        /* the plugin library serving it */
  pirt_device_type type;
  unsigned index;            /* among devices of this backend, any type */
} pirt_device_info;

/* The devices that SYCL_DEVICE_FILTER (and SYCL_BE) leave, over all plugins. */
pi_result pirt_device_count(size_t *count);
pi_result pirt_device_get(size_t index, pirt_device **device);
/* The device a filter ("backend:type:num", comma-separated alternatives;
 * NULL means SYCL_DEVICE_FILTER) selects: the first match, preferring a GPU,
 * then an accelerator, then a CPU, and SYCL_BE's backend among equals. */
pi_result pirt_device_select(const char *filter, pirt_device **device);
pi_result pirt_device_get_info(const pirt_device *device,
                               pirt_device_info *info);
/* A raw PI query on the device (piDeviceGetInfo). */
pi_result pirt_device_query(const pirt_device *device, pi_device_info param,
                            size_t size, void *value, size_t *size_ret);

/* ---- Contexts and queues --------------------------------------------------- */

pi_result pirt_context_create(pirt_device *device, pirt_context **context);
/* Drops the application's reference. The queues, buffers, programs,
 * kernels and bundles made in the context keep it: the PI context goes
 * with the last of them, and they may be used and released after this. */
pi_result pirt_context_release(pirt_context *context);
pirt_device *pirt_context_device(const pirt_context *context);

enum {
  PIRT_QUEUE_PROFILING = 1u << 0,   /* events carry start/end times */
  PIRT_QUEUE_OUT_OF_ORDER = 1u << 1 /* commands may run out of order */
};
pi_result pirt_queue_create(pirt_context *context, unsigned flags,
                            pirt_queue **queue);
pi_result pirt_queue_finish(pirt_queue *queue);
pi_result pirt_queue_flush(pirt_queue *queue);
pi_result pirt_queue_release(pirt_queue *queue);

/* ---- Memory ------------------------------------------------------------------ */

enum {
  PIRT_MEM_READ_WRITE = 0,
  PIRT_MEM_READ_ONLY = 1u << 0,  /* kernels only read it */
  PIRT_MEM_WRITE_ONLY = 1u << 1, /* kernels only write it (a hint) */
  PIRT_MEM_COPY_HOST = 1u << 2   /* initialise from host_data */
};
pi_result pirt_buffer_create(pirt_context *context, unsigned flags,
                             size_t size, const void *host_data,
                             pirt_buffer **buffer);
pi_result pirt_buffer_release(pirt_buffer *buffer);
size_t pirt_buffer_size(const pirt_buffer *buffer);

typedef enum {
  PIRT_USM_HOST = 1,
  PIRT_USM_DEVICE = 2,
  PIRT_USM_SHARED = 3
} pirt_usm_kind;
/* USM needs device support; without it PI_ERROR_INVALID_OPERATION. */
pi_result pirt_usm_alloc(pirt_context *context, pirt_usm_kind kind,
                         size_t size, size_t alignment, void **ptr);
pi_result pirt_usm_free(pirt_context *context, void *ptr);

/* ---- Programs and kernels ---------------------------------------------------- */

/* Builds OpenCL C source for the context's device. On a build failure the
 * message holds the build log. */
pi_result pirt_program_create_source(pirt_context *context, const char *source,
                                     const char *options,
                                     pirt_program **program);
/* Builds a device binary (SPIR-V when `is_il`, else a native binary). */
pi_result pirt_program_create_binary(pirt_context *context, const void *binary,
                                     size_t size, bool is_il,
                                     const char *options,
                                     pirt_program **program);
/* The built program's device binary for its device (to cache it and build
 * it again with pirt_program_create_binary); malloc'd, the caller frees it. */
pi_result pirt_program_get_binary(pirt_program *program, void **binary,
                                  size_t *size);
/* The build log; malloc'd, the caller frees it. */
pi_result pirt_program_build_log(pirt_program *program, char **log);
pi_result pirt_program_release(pirt_program *program);

pi_result pirt_kernel_create(pirt_program *program, const char *name,
                             pirt_kernel **kernel);
pi_result pirt_kernel_release(pirt_kernel *kernel);
/* A by-value argument (scalars, structs). */
pi_result pirt_kernel_set_arg(pirt_kernel *kernel, unsigned index,
                              size_t size, const void *value);
pi_result pirt_kernel_set_buffer(pirt_kernel *kernel, unsigned index,
                                 pirt_buffer *buffer);
pi_result pirt_kernel_set_usm(pirt_kernel *kernel, unsigned index,
                              const void *ptr);
/* A __local argument of `size` bytes. */
pi_result pirt_kernel_set_local(pirt_kernel *kernel, unsigned index,
                                size_t size);

/* ---- Commands ------------------------------------------------------------------
 * Every command takes a wait list (num_deps events in deps, may be 0/NULL)
 * and, when `event` is not NULL, returns an event for the command that the
 * caller releases. */

/* An ND-range launch of `dims` (1..3) dimensions; `local` may be NULL. */
pi_result pirt_launch(pirt_queue *queue, pirt_kernel *kernel, unsigned dims,
                      const size_t *global, const size_t *local,
                      unsigned num_deps, pirt_event *const *deps,
                      pirt_event **event);
pi_result pirt_read(pirt_queue *queue, pirt_buffer *buffer, bool blocking,
                    size_t offset, size_t size, void *dst, unsigned num_deps,
                    pirt_event *const *deps, pirt_event **event);
pi_result pirt_write(pirt_queue *queue, pirt_buffer *buffer, bool blocking,
                     size_t offset, size_t size, const void *src,
                     unsigned num_deps, pirt_event *const *deps,
                     pirt_event **event);
pi_result pirt_copy(pirt_queue *queue, pirt_buffer *src, pirt_buffer *dst,
                    size_t src_offset, size_t dst_offset, size_t size,
                    unsigned num_deps, pirt_event *const *deps,
                    pirt_event **event);
/* Fills `size` bytes at `offset` with a pattern of 1, 2, 4, ... 128 bytes. */
pi_result pirt_fill(pirt_queue *queue, pirt_buffer *buffer,
                    const void *pattern, size_t pattern_size, size_t offset,
                    size_t size, unsigned num_deps, pirt_event *const *deps,
                    pirt_event **event);

enum { PIRT_MAP_READ = 1u << 0, PIRT_MAP_WRITE = 1u << 1 };
/* Maps a region (blocking); unmap before the device uses the buffer again. */
pi_result pirt_map(pirt_queue *queue, pirt_buffer *buffer, unsigned flags,
                   size_t offset, size_t size, void **ptr);
pi_result pirt_unmap(pirt_queue *queue, pirt_buffer *buffer, void *ptr,
                     unsigned num_deps, pirt_event *const *deps,
                     pirt_event **event);

pi_result pirt_usm_memcpy(pirt_queue *queue, bool blocking, void *dst,
                          const void *src, size_t size, unsigned num_deps,
                          pirt_event *const *deps, pirt_event **event);
pi_result pirt_usm_fill(pirt_queue *queue, void *ptr, const void *pattern,
                        size_t pattern_size, size_t size, unsigned num_deps,
                        pirt_event *const *deps, pirt_event **event);

/* ---- Events -------------------------------------------------------------------- */

pi_result pirt_event_wait(unsigned count, pirt_event *const *events);
pi_result pirt_event_release(pirt_event *event);
/* Start and end of the command in device nanoseconds (profiling queues). */
pi_result pirt_event_times(pirt_event *event, uint64_t *start, uint64_t *end);

/* ---- Device images (seeds 000 and 003) -------------------------------------------
 * Executables and shared libraries register the device images they carry
 * from a constructor and unregister them from a destructor; the
 * pitrace_add_device_code() CMake helper generates both calls. Registration
 * may happen before main and unregistration after the runtime has shut
 * down. Images of modules loaded first (the link map's order: the
 * executable, its libraries, then libraries opened later with dlopen) win
 * when two export the same symbol, as symbols do on Linux. */
void pirt_register_images(pi_device_binaries images);
void pirt_unregister_images(pi_device_binaries images);

/* A kernel bundle: the registered images' kernels for one context, with
 * specialization-constant values set by symbolic ID. */
typedef struct pirt_bundle pirt_bundle;
pi_result pirt_bundle_create(pirt_context *context, pirt_bundle **bundle);
/* The bundle's kernels keep it (its values apply to their launches): it
 * may be released before them. */
pi_result pirt_bundle_release(pirt_bundle *bundle);
/* Sets a specialization constant of every kernel of the bundle: `size`
 * bytes, laid out as the constant's type (a composite as its C struct). */
pi_result pirt_bundle_set_spec_constant(pirt_bundle *bundle,
                                        const char *symbolic_id,
                                        const void *value, size_t size);
/* The kernel `name` from the registered images, built (or linked with the
 * images exporting what it imports) for the context's device; builds are
 * cached by device, image set, native spec-constant values and options. */
pi_result pirt_bundle_get_kernel(pirt_bundle *bundle, const char *name,
                                 pirt_kernel **kernel);

/* One specialization-constant value for a single launch. */
typedef struct pirt_spec_value {
  const char *symbolic_id;
  const void *value;
  size_t size;
} pirt_spec_value;
/* pirt_launch with spec-constant values for this launch only, on top of
 * the kernel's bundle values. */
pi_result pirt_launch_spec(pirt_queue *queue, pirt_kernel *kernel,
                           unsigned dims, const size_t *global,
                           const size_t *local, unsigned num_values,
                           const pirt_spec_value *values, unsigned num_deps,
                           pirt_event *const *deps, pirt_event **event);

/* ---- What the runtime decides ------------------------------------------------------
 * Every link decision (images chosen for a kernel on a device, the image
 * resolving each imported symbol, ODR choices, options, cache hits and
 * misses) and every spec-constant value applied is printed at
 * SYCL_PI_TRACE=1 and handed to note hooks: those added here, and the
 * function `pitrace_note_hook` of any bound plugin that exports one (the
 * recording shim does), called on the thread that makes the PI calls the
 * note explains, just before them. See docs/notes.md. */
typedef enum {
  PIRT_NOTE_LINK = 1,       /* the image set of a kernel, and why */
  PIRT_NOTE_SYMBOL = 2,     /* which image resolved an imported symbol */
  PIRT_NOTE_ODR = 3,        /* several images export a symbol */
  PIRT_NOTE_CACHE = 4,      /* a program cache hit or miss */
  PIRT_NOTE_SPEC_CONST = 5, /* a spec-constant value applied */
  PIRT_NOTE_REPLAY = 6,     /* not the runtime's: pitrace replay says the next call is
                               its own (a clean-up, a data check), not the
                               application's; `text` says why */
  PIRT_NOTE_IMAGE_FORMATS = 7, /* not the runtime's: the image formats the OpenCL front end
                                 had from the implementation (no PI call asks them):
                                 `value` holds them (cl_image_format each) */
  PIRT_NOTE_CALLBACK = 8 /* not the runtime's: an event's callback begins, on the thread
                            the implementation runs it on; `value`: two 8-byte words,
                            the user_data piEventSetCallback was given, and 0, where a
                            recording keeps the seq of the last call begun before it
                            on any thread (docs/notes.md) */
} pirt_note_kind;

typedef struct pirt_note {
  pirt_note_kind kind;
  const char *kernel;      /* the kernel concerned, or NULL */
  const char *device;      /* the device's name */
  const char *text;        /* the SYCL_PI_TRACE=1 line */
  /* PIRT_NOTE_SYMBOL/ODR: */
  const char *symbol;
  const char *image;       /* "module#index" of the image chosen */
  /* PIRT_NOTE_SPEC_CONST: */
  const char *symbolic_id;
  const uint32_t *numeric_ids;
  uint32_t num_ids;
  const void *value;
  size_t size;
  bool native;             /* piextProgramSetSpecializationConstant, else
                              the emulated kernel-argument buffer */
} pirt_note;

typedef void (*pirt_note_fn)(const pirt_note *note, void *user);
pi_result pirt_add_note_hook(pirt_note_fn fn, void *user);
pi_result pirt_remove_note_hook(pirt_note_fn fn, void *user);
/* Hands `note` to the hooks and prints it at SYCL_PI_TRACE=1, as the
 * runtime does its own: for tools that re-issue a recorded session's calls
 * (pitrace replay), so that a recording of them carries the decisions that
 * explained those calls. Call it on the thread that makes them, just
 * before. */
void pirt_note_emit(const pirt_note *note);
/* Whether a note emitted now would go anywhere (SYCL_PI_TRACE=1, a hook,
 * or a bound plugin that takes notes): a caller whose note costs work to
 * make (text formatted per event) can leave it out when none would. */
bool pirt_note_wanted(void);
/* Under a plugin that answers from a recording (the replay plugin,
 * SYCL_PI_REPLAY): the value of the note of `kind` that the recording has
 * where the calling thread is (just before the recorded call it is to make
 * next), up to `size` bytes into `value`. Returns the value's size; 0 when
 * no bound plugin knows such a note. For what the application learnt
 * outside PI when it was recorded (PIRT_NOTE_IMAGE_FORMATS). */
size_t pirt_recall_note(pirt_note_kind kind, void *value, size_t size);

/* ---- For tools: the PI layer under a device --------------------------------------
 * The plugin table that serves a device (the recording shim's when
 * recording) and the device's PI handles, for tools that issue PI calls
 * themselves (pitrace replay). Calls made this way are not traced. */
pi_result pirt_device_pi(const pirt_device *device,
                         const struct pi_function_table **table,
                         pi_platform *platform, pi_device *pi_dev);

/* The plugin that serves a device and the device's PI handles, for front
 * ends that issue PI calls through the runtime with pirt_piXxx(plugin, ...)
 * (pirt_pi.h): those calls are traced and recorded like the runtime's own.
 * `backend` (optional) receives "opencl", "level_zero" or "cuda". */
pi_result pirt_device_plugin(const pirt_device *device, const pirt_plugin **plugin,
                             pi_platform *platform, pi_device *pi_dev,
                             const char **backend);

/* ---- Lifetime ------------------------------------------------------------------ */

/* Binds the plugins now rather than on first use; PI_ERROR_DEVICE_NOT_FOUND
 * with a message when none binds. Optional. */
pi_result pirt_init(void);

#ifdef __cplusplus
}
#endif
#endif /* PIRT_H */
