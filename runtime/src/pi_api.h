/*
 * pi_api.h: the PI API description as data, and the one decoder of PI
 * arguments.
 *
 * The tables come from the generated pi_gen.c. The decoder (pi_decode.c)
 * turns a call's packed arguments into readable text; the SYCL_PI_TRACE
 * printer, the recorder and the viewer all use it, so a value prints the
 * same everywhere. Arguments travel packed as uint64_t argv[], one slot per
 * parameter: integers widened, pointers and handles as addresses.
 */
#ifndef PI_API_H
#define PI_API_H

#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include "pi/pi.h"
#include "pi/pi_desc.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const pi_api_desc pi_api_table[PI_API_COUNT];
extern const pi_enum_desc *const pi_enum_table[];
extern const size_t pi_enum_table_count;
extern const pi_enum_desc *const pi_enum_result;

/* Calls function `id` of table `t` with packed arguments. */
pi_result pi_api_invoke(const struct pi_function_table *t, pi_api_id id,
                        const uint64_t *argv);

/* The description of a function by id (NULL when out of range) or name. */
const pi_api_desc *pi_api_get(uint32_t id);
const pi_api_desc *pi_api_find(const char *name);
/* How many functions' names the glob pattern (fnmatch) matches; with
 * `match` (PI_API_COUNT of them), which, by id. The one test of a pattern
 * of function names: the recorder's filter, show --api, diff --only. */
size_t pi_api_glob(const char *glob, bool *match);

/* The PI_API_F_* flags of function `id` (0 when out of range). */
static inline unsigned pi_api_flags(uint32_t id)
{
  return id < PI_API_COUNT ? pi_api_table[id].flags : 0;
}

/* An enumerator by value, or NULL. */
const pi_enum_entry *pi_enum_lookup(const pi_enum_desc *en, int64_t value);
/* An enumeration by its type name ("pi_device_info"), or NULL. */
const pi_enum_desc *pi_enum_find(const char *name);
/* Bytes of one value of type vt (enum: the enumeration's width). */
size_t pi_value_width(uint8_t vt, const pi_enum_desc *en);

/* Bytes of one pixel of an image of channel order `order` and channel type
 * `type` (pi_image_format, whose values are OpenCL's: the depth, stencil
 * and sRGB orders and the UNORM_INT24 / UNORM_INT_101010_2 types OpenCL
 * added count too); 0 for a combination the OpenCL specification does not
 * define. The front end, the recorder (how many bytes an image transfer
 * moves) and extract (an image's contents) share it. */
size_t pi_image_element_size(uint32_t order, uint32_t type);
/* Bytes of host memory an image's creation reads from host_ptr, as the
 * OpenCL specification lays them out (clCreateImage: scanlines padded to
 * the row pitch, slices or array images to the slice pitch, each whole);
 * 0 for an unknown format or type, or a size past SIZE_MAX. */
size_t pi_image_host_extent(const pi_image_format *f, const pi_image_desc *d);

/* "platform", "device", ... for a pi_object_kind. */
const char *pi_object_kind_name(uint8_t kind);
/* The name a session stores for a runtime note's kind (pirt_note_kind:
 * 1 "link" ... 5 "spec_constant"), or "?". */
const char *pi_note_kind_name(unsigned kind);

/* "PI_ERROR_INVALID_VALUE"; "PI_RESULT_<n>" for a code PI does not define. */
const char *pi_result_name(pi_result r);

/* A growable text buffer that starts in caller-provided storage. */
typedef struct pi_sbuf {
  char *p;
  size_t len, cap;
  bool heap;
} pi_sbuf;

void pi_sbuf_init(pi_sbuf *b, char *storage, size_t cap);
void pi_sbuf_free(pi_sbuf *b);
void pi_sbuf_reset(pi_sbuf *b);
/* pi_sbuf_put where the bytes do not fit: grows the buffer first. */
void pi_sbuf_put_grow(pi_sbuf *b, const char *s, size_t n);
/* Appends n bytes (kept NUL-terminated). Inline: the trace and the
 * recorder's text put many short pieces a call, most of them literals
 * whose length the compiler knows (pi_sbuf_puts). */
static inline void pi_sbuf_put(pi_sbuf *b, const char *s, size_t n)
{
  if (b->len + n < b->cap) {
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
    return;
  }
  pi_sbuf_put_grow(b, s, n);
}
/* The length of the run that s (n bytes) starts with of characters a
 * quoted string shows as they are, here and in JSON: none below 0x20, no
 * 0x7f, '"' or '\\'. */
size_t pi_plain_prefix(const char *s, size_t n);
static inline void pi_sbuf_puts(pi_sbuf *b, const char *s) { pi_sbuf_put(b, s, strlen(s)); }
void pi_sbuf_printf(pi_sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void pi_sbuf_vprintf(pi_sbuf *b, const char *fmt, va_list ap);

/* Appends parameter `i`'s value: as passed in (after == false) or, for out
 * and in-out parameters, what the call wrote (after == true; only valid
 * when the call succeeded). */
void pi_format_param(pi_sbuf *b, const pi_api_desc *api, unsigned i,
                     const uint64_t *argv, bool after);

/* Appends a value of element type vt (an info-query result, an array
 * element): `size` bytes at `p`, as one value or an array. */
void pi_format_value(pi_sbuf *b, uint8_t vt, uint8_t obj,
                     const pi_enum_desc *en, const void *p, size_t size,
                     bool is_array);

/* Appends an enumerator name, or flags as A|B|0x.. */
void pi_format_enum(pi_sbuf *b, const pi_enum_desc *en, int64_t v);
/* The value v of property `key` of a list whose keys are `keys`: as the
 * type pi.api gives the key (PI_QUEUE_FLAGS: the queue's flags), else hex. */
void pi_format_prop_value(pi_sbuf *b, const pi_enum_desc *keys, int64_t key, int64_t v);

/* The DPC++-shaped SYCL_PI_TRACE=2 blocks: "---> piXxx(" with one line per
 * argument, and ") ---> \tpi_result : NAME" with the [out] lines. `tag`,
 * when not NULL, is appended to the first line (a thread tag). */
void pi_format_call_enter(pi_sbuf *b, const pi_api_desc *api,
                          const uint64_t *argv, const char *tag);
void pi_format_call_exit(pi_sbuf *b, const pi_api_desc *api,
                         const uint64_t *argv, pi_result r, const char *tag);
/* As pi_format_call_exit, for a call that has just returned (the live
 * trace): the bytes a non-blocking call writes (blocking* = false) are
 * not there yet, and are not read (the device may be writing them). */
void pi_format_call_exit_live(pi_sbuf *b, const pi_api_desc *api, const uint64_t *argv,
                              pi_result r, const char *tag);

/* Number of bytes of a packed parameter's data the call reads or writes
 * (bytes, arrays), as resolved from its count/size reference. */
size_t pi_param_extent(const pi_param_desc *p, const uint64_t *argv);

#ifdef __cplusplus
}
#endif
#endif /* PI_API_H */
