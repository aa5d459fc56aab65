/*
 * plugin_common.h: what every pitrace plugin needs, whatever its backend
 * (libpi_plugin_common.a, linked into libpi_opencl.so, libpi_level_zero.so
 * and libpi_cuda.so; its symbols stay hidden in each plugin).
 *
 *  - errors: fail() keeps a result code and a message for
 *    piPluginGetLastError in thread-local storage; REQUIRE, NEED and TRY
 *    check arguments and results in PI functions;
 *  - info queries: an info_out names where a *GetInfo call puts its
 *    answer, and put_*() write a value with the size checks OpenCL makes;
 *  - queue property lists ({PI_QUEUE_FLAGS, flags, PI_QUEUE_COMPUTE_INDEX,
 *    index, 0});
 *  - reference counts of plugin-made handles;
 *  - the backend-neutral parts of piextDeviceSelectBinary and piPluginInit.
 *
 * A plugin defines FN, the name of the PI function it is in, before it
 * uses REQUIRE or NEED (its implementations are <prefix>_<PI name>, so FN is
 * __func__ past the prefix).
 */
#ifndef PITRACE_PLUGIN_COMMON_H
#define PITRACE_PLUGIN_COMMON_H

#include "pi/pi.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Declared hidden: each plugin links its own copy and exports none of it. */
#pragma GCC visibility push(hidden)

/* ---- Errors ------------------------------------------------------------- */

/* The last message and code of this thread, for piPluginGetLastError;
 * PI_SUCCESS with a message is a warning. */
extern _Thread_local char last_message[4096];
extern _Thread_local pi_result last_code;

/* Keeps a printf-style message in last_message. */
__attribute__((format(printf, 1, 2))) void fail_message(const char *fmt, ...);
/* Keeps `code` as last_code and returns it. */
pi_result fail_code(pi_result code);

/* fail(code, fmt, ...) keeps the message and `code`, and is `code`. It is a
 * macro, not a variadic function, so that the compiler sees at every call
 * which code comes back: a variadic function is never inlined, so a helper's
 * `return fail(PI_ERROR_..., ...)` before it wrote its outputs looked as if it
 * could return PI_SUCCESS, and its callers' use of those outputs after a
 * PI_SUCCESS check as a use of uninitialized values (-Wmaybe-uninitialized
 * at -O3). */
#define fail(code, ...) (fail_message(__VA_ARGS__), fail_code(code))

/* PI_ERROR_OUT_OF_HOST_MEMORY, "<fn>: out of host memory". */
pi_result out_of_memory(const char *fn);

/* piPluginGetLastError: the last message of this thread, and its code. */
pi_result plugin_last_error(char **message);

/* Fails with PI_ERROR_INVALID_VALUE when an argument check does not hold. */
#define REQUIRE(cond)                                                          \
  do {                                                                         \
    if (!(cond))                                                               \
      return fail(PI_ERROR_INVALID_VALUE, "%s: invalid argument: %s", FN,      \
                  #cond);                                                      \
  } while (0)
/* Fails with `code` when a handle argument is NULL. */
#define NEED(handle, code)                                                     \
  do {                                                                         \
    if (!(handle))                                                             \
      return fail(code, "%s: %s is NULL", FN, #handle);                        \
  } while (0)
/* Returns a PI result other than PI_SUCCESS. */
#define TRY(expr)                                                              \
  do {                                                                         \
    pi_result try_r_ = (expr);                                                 \
    if (try_r_ != PI_SUCCESS)                                                  \
      return try_r_;                                                           \
  } while (0)

/* ---- Info queries --------------------------------------------------------
 * An info_out names where a *GetInfo call puts its answer; put_*() write a
 * value with the size checks OpenCL makes. */

struct info_out {
  const char *fn;
  unsigned query;
  size_t size;
  void *value;
  size_t *size_ret;
};

pi_result put_info(const struct info_out *o, const void *src, size_t n);
pi_result put_bool(const struct info_out *o, int b);
pi_result put_u32(const struct info_out *o, uint32_t v);
pi_result put_i32(const struct info_out *o, int32_t v);
pi_result put_u64(const struct info_out *o, uint64_t v);
pi_result put_size(const struct info_out *o, size_t v);
pi_result put_ptr(const struct info_out *o, const void *p);
pi_result put_str(const struct info_out *o, const char *s);
/* Fails: the query is unknown to the `backend` plugin ("CUDA", ...). */
pi_result put_unknown(const struct info_out *o, const char *backend);

/* *native = obj, for the *GetNativeHandle functions of plugins whose native
 * handle is the backend's own object. */
pi_result native_of(const char *fn, const void *obj, pi_native_handle *native);

/* ---- Queue property lists ------------------------------------------------ */

/* Reads {PI_QUEUE_FLAGS, flags, PI_QUEUE_COMPUTE_INDEX, index, 0}: flags
 * and index are 0 where the list does not give them; a property other than
 * these two fails. */
pi_result queue_properties_read(const char *fn, const pi_queue_properties *p,
                                pi_queue_properties *flags,
                                pi_queue_properties *index);

/* The same for backends with one queue index: an index other than 0 fails,
 * naming the `backend` ("OpenCL", "CUDA"). */
pi_result queue_properties_flags(const char *fn, const pi_queue_properties *p,
                                 const char *backend,
                                 pi_queue_properties *flags);

/* ---- Reference counts ---------------------------------------------------- */

/* Counts a new reference to a handle. */
static inline void ref_retain(atomic_uint *refs) { atomic_fetch_add(refs, 1); }

/* Drops a reference; true when it was the last one (the handle is to be
 * freed). */
static inline bool ref_release(atomic_uint *refs) {
  return atomic_fetch_sub(refs, 1) == 1;
}

/* ---- Device images (piextDeviceSelectBinary) ----------------------------- */

/* Whether the image's DeviceTargetSpec is `target`. */
int target_is(const struct pi_device_binary_struct *b, const char *target);

/* "spir64 (format 4), nvptx64 (format 3)": what a piextDeviceSelectBinary
 * call was offered, for its message when no image fits; "none" for no
 * images. */
const char *binaries_offered(pi_device_binary *binaries, pi_uint32 n,
                             char *buf, size_t size);

/* ---- Plugin ------------------------------------------------------------- */

/* piPluginInit's part before the function table: checks the runtime's PI
 * major version and writes the plugin's version, _PI_H_VERSION_STRING
 * "." revision. `backend` names the plugin in the messages ("OpenCL"). */
pi_result plugin_init_version(pi_plugin *plugin, const char *backend,
                              const char *revision);

#pragma GCC visibility pop

#endif
