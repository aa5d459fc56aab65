/*
 * pirt_internal.h: the runtime's private state and the functions its
 * modules share: plugins (plugins.c), tracing (trace.c), devices
 * (devices.c), lifetime (global.c) and the application API (api.c).
 */
#ifndef PIRT_INTERNAL_H
#define PIRT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "pi/pi.h"
#include "pi_api.h"
#include "pirt.h"

#define PIRT_LIKELY(x) __builtin_expect(!!(x), 1)
#define PIRT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- Plugins -------------------------------------------------------------- */

typedef enum {
  PIRT_BACKEND_UNKNOWN = 0,
  PIRT_BACKEND_OPENCL,
  PIRT_BACKEND_LEVEL_ZERO,
  PIRT_BACKEND_CUDA,
  PIRT_BACKEND_COUNT
} pirt_backend;

/* A bound plugin. `table` is what calls go through. */
struct pirt_plugin {
  char *name;      /* as the config names it: "libpi_opencl.so" */
  char *path;      /* the file dlopen loaded */
  void *dl;
  pirt_backend backend;
  pi_plugin info;  /* what piPluginInit filled */
  struct pi_function_table table;
  void *note_hook; /* the plugin's pitrace_note_hook, if it exports one */
  void *recall_hook; /* its pitrace_recall_note (the replay plugin's), if any */
  bool recorded;   /* its table is the shim's (recording, or device times only) */
};

/* Names: "opencl" and its SYCL_BE spelling "PI_OPENCL". */
const char *pirt_backend_name(pirt_backend b);
pirt_backend pirt_backend_from_name(const char *s); /* UNKNOWN if none */
pirt_backend pirt_backend_from_sycl_be(const char *s);

/* Discovers, loads and binds the plugins (once, under the global lock). */
void pirt_plugins_load(void);
/* piTearDown on every bound plugin, then unload them. */
/* Tears every plugin down, closes and frees them. */
void pirt_plugins_unload(void);
/* Where other threads may still be inside a plugin (global.c): only the
 * recording's session ended (the shim's pitrace_shim_finish), no plugin
 * torn down. */
void pirt_plugins_finish_recording(void);
size_t pirt_plugin_count(void);
struct pirt_plugin *pirt_plugin_at(size_t i);
/* Why no plugin bound, for error messages ("" when some did). */
const char *pirt_plugins_problem(void);

/* The result for a table entry the plugin left NULL. */
pi_result pirt_unsupported(const struct pirt_plugin *pl, pi_api_id id);

/* Every plugin call's gate (global.c): a thread's first call counts it
 * as a user of the runtime, and once the runtime shuts down other threads'
 * calls fail with PI_ERROR_UNINITIALIZED instead of entering plugins that
 * are being torn down. One test of a
 * thread-local and a global flag a call. */
extern __thread bool pirt_user_counted;
extern atomic_bool pirt_plugins_closed;
static inline bool pirt_gate_closed(void)
{
  return !pirt_user_counted || atomic_load_explicit(&pirt_plugins_closed, memory_order_relaxed);
}
pi_result pirt_call_gate(pi_api_id id);
/* The same gate for an application API function `fn` given an `object`
 * ("queue", "buffer"): once the runtime has shut down, its devices and
 * plugins are freed, and the object's may not be read (api.c). */
pi_result pirt_api_gate(const char *fn, const char *object);

/* ---- Tracing -------------------------------------------------------------- */

enum {
  PIRT_TRACE_BASIC = 1,
  PIRT_TRACE_CALLS = 2,
  PIRT_TRACE_DEBUG = 4
};

/* Set once from SYCL_PI_TRACE; read on every call. */
extern int pirt_trace_level;
extern bool pirt_trace_calls;

void pirt_trace_init(void);
/* The trace's end: its blocks written; with `release`, its buffers freed
 * and its file closed (not while other threads may still trace). */
void pirt_trace_fini(bool release);
/* The calling thread ends: its buffered blocks written, its buffer free. */
void pirt_trace_thread_ends(void);
/* One device time from the shim (SYCL_PI_RECORD_PROFILE=1), as the line
 * "---> device time: TEXT". */
void pirt_trace_device_time(const char *text);
/* Writes the trace's buffered blocks from a fatal signal's handler. */
void pirt_trace_flush_at_crash(void);
/* A level-1 (or debug) line; the prefix "SYCL_PI_TRACE[basic]: " is added. */
void pirt_trace(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void pirt_trace_enter(const struct pirt_plugin *pl, pi_api_id id,
                      const uint64_t *argv);
void pirt_trace_exit(const struct pirt_plugin *pl, pi_api_id id,
                     const uint64_t *argv, pi_result r);

/* The traced call wrappers: pirt_call_piXxx(plugin, args...). */
#include "pi_calls_gen.h"

/* ---- Devices -------------------------------------------------------------- */

struct pirt_device {
  struct pirt_plugin *plugin;
  pi_platform platform;
  pi_device device;
  pirt_backend backend;
  pi_device_type type;
  unsigned index;       /* among devices of this backend, of any type */
  char *name;
  char *platform_name;
  char *vendor;
  char *version;
};

/* Does SYCL_DEVICE_FILTER-syntax `filter` (NULL or empty: everything) allow
 * device d (its backend, type and index)? 1 yes, 0 no, -1 malformed (the
 * reason in err). */
int pirt_filter_allows(const char *filter, const struct pirt_device *d, char *err,
                       size_t errn);
/* Whether a device of backend b may pass `filter` (a term naming that
 * backend or none; a malformed filter too: selection says what is wrong):
 * the plugins of other backends are not bound. */
bool pirt_filter_wants_backend(const char *filter, pirt_backend b);

/* Enumerates the devices of every bound plugin (once). */
void pirt_devices_discover(void);
void pirt_devices_free(void);

/* ---- Application objects ---------------------------------------------------- */

/* A context lives while the application holds it or any object made in it
 * holds it (queues, buffers, programs, kernels, bundles), as in SYCL and
 * OpenCL: releasing it before them is allowed. */
struct pirt_context {
  struct pirt_plugin *plugin;
  struct pirt_device *device;
  pi_context ctx;
  atomic_size_t refs; /* the application's and one per object made in it */
};

/* Takes a reference for an object made in c; returns c. */
static inline pirt_context *pirt_context_ref(pirt_context *c)
{
  atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
  return c;
}
/* Drops a reference; the last releases the PI context and its cached
 * programs. Returns r when it failed, else the context release's result. */
pi_result pirt_context_unref(pirt_context *c, pi_result r);

struct pirt_queue {
  pirt_context *context;
  pi_queue q;
};

struct pirt_buffer {
  pirt_context *context;
  pi_mem mem;
  size_t size;
};

struct pirt_program {
  pirt_context *context;
  pi_program prog;
};

struct pm_kernel; /* program.c: a bundle kernel's images, spec constants, args */

struct pirt_kernel {
  pirt_context *context;
  pi_kernel k;
  char *name;
  pirt_program *program; /* the program it came from, or NULL (bundle) */
  struct pm_kernel *pm;  /* bundle kernels only */
};

struct pirt_event {
  struct pirt_plugin *plugin;
  pi_event ev;
};

/* ---- Program manager (program.c) ------------------------------------------- */

/* Remembers a bundle kernel's argument, so that a rebuild for other native
 * spec-constant values can set it again. kind: 0 bytes, 1 mem, 2 pointer,
 * 3 local. */
void pm_record_arg(pirt_kernel *k, unsigned index, int kind, size_t size,
                   const void *value);
void pm_kernel_free(pirt_kernel *k);
/* Applies a bundle kernel's spec-constant values (the bundle's, then these)
 * before a launch: a rebuild for native values, the buffer for emulated. */
pi_result pm_prepare_launch(pirt_kernel *k, unsigned nvalues,
                            const pirt_spec_value *values);
/* Releases the cached programs of a context the application releases. */
void pm_context_released(pi_context ctx);
/* Releases the cached programs (before the plugins go) and the registry. */
void pm_shutdown(void);
/* The program manager's locks across fork (global.c's atfork handlers). */
void pm_fork_prepare(void);
void pm_fork_parent(void);
void pm_fork_child(void);

/* ---- Lifetime --------------------------------------------------------------
 * The runtime's state is created on first use and destroyed by a
 * destructor at priority 110, after the application's own destructors. */

typedef struct pirt_global {
  pthread_mutex_t lock;
  bool plugins_loaded;
  bool devices_discovered;
  struct pirt_plugin **plugins;
  size_t nplugins;
  char problem[512];
  struct pirt_device *devices;
  size_t ndevices;
  void *shim_dl; /* the recording shim, when SYCL_PI_RECORD or the config asks */
} pirt_global;

/* The global state, created on first use; NULL once the shutdown began
 * (on another thread) or ended. Counts the calling thread as a user of
 * the runtime (global.c). */
pirt_global *pirt_global_get(void);
/* Its lock, taken through these (a fork waits for it: global.c). */
void pirt_global_lock(pirt_global *g);
void pirt_global_unlock(pirt_global *g);
/* Loads the plugins and their devices on first use, under the lock, then
 * registers the runtime's fork handlers (global.c says why after). */
void pirt_global_load(pirt_global *g);

/* ---- Errors for the application API --------------------------------------- */

/* Records the thread's last error message and returns `r`. */
pi_result pirt_fail(pi_result r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Like pirt_fail, for a table entry the plugin leaves NULL: the message is
 * kept by the pirt_fail_call that follows. */
pi_result pirt_fail_unsupported(pi_result r, const char *msg);
/* For a failed PI call: the call, the result and the plugin's own text. */
pi_result pirt_fail_call(const struct pirt_plugin *pl, const char *what,
                         pi_result r);

/* strdup that survives NULL. */
char *pirt_strdup(const char *s);

#endif /* PIRT_INTERNAL_H */
