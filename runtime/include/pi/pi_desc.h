/*
 * pi_desc.h: the types of the machine-readable PI API description as C data.
 *
 * tools/gen_pi_api.py turns runtime/api/pi.api into tables of these structs
 * (runtime/src/pi_gen.c). Everything that has to know what a PI call's
 * arguments mean reads them: the SYCL_PI_TRACE printer, the recorder, the
 * replay dispatcher and the viewer. Nothing else lists the functions.
 */
#ifndef PI_DESC_H
#define PI_DESC_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Direction of a parameter. */
typedef enum { PI_DIR_IN = 0, PI_DIR_OUT = 1, PI_DIR_INOUT = 2 } pi_param_dir;

/* The element type of a scalar, an array element or an info-query value. */
typedef enum {
  PI_VT_NONE = 0,
  PI_VT_U32,
  PI_VT_I32,
  PI_VT_U64,
  PI_VT_SIZE,
  PI_VT_BOOL,   /* pi_bool (4 bytes) as a parameter or info value */
  PI_VT_CBOOL,  /* C/C++ bool (1 byte) as a parameter */
  PI_VT_NATIVE, /* pi_native_handle */
  PI_VT_PTR,
  PI_VT_STRING,
  PI_VT_ENUM,
  PI_VT_FLAGS,
  PI_VT_HANDLE,
  PI_VT_PROPS,
  PI_VT_BYTES
} pi_value_type;

/* Object kinds: handle kinds, plus the pointers that replay must remap. */
typedef enum {
  PI_OBJ_NONE = 0,
  PI_OBJ_PLATFORM,
  PI_OBJ_DEVICE,
  PI_OBJ_CONTEXT,
  PI_OBJ_QUEUE,
  PI_OBJ_MEM,
  PI_OBJ_PROGRAM,
  PI_OBJ_KERNEL,
  PI_OBJ_EVENT,
  PI_OBJ_SAMPLER,
  PI_OBJ_USM,    /* a USM allocation */
  PI_OBJ_MAPPED, /* a host pointer returned by a map */
  PI_OBJ_KIND_COUNT
} pi_object_kind;

/* What a parameter is; see docs/api-description.md. */
typedef enum {
  PI_PK_SCALAR = 0,  /* vt; with out: a pointer to one */
  PI_PK_HANDLE,      /* in: one handle; out: pointer to one new handle */
  PI_PK_HANDLES,     /* array of handles, count */
  PI_PK_STRING,      /* in: const char *; out: char ** */
  PI_PK_STRINGS,     /* array of strings, count, optional lengths */
  PI_PK_BYTES,       /* bytes, size */
  PI_PK_ARRAY,       /* array of vt, count */
  PI_PK_INFO,        /* info-query value: query, size, size_ret, table */
  PI_PK_PROPS,       /* 0-terminated key/value list, keys in en */
  PI_PK_BINARIES,    /* pi_device_binary *, count */
  PI_PK_BLOBS,       /* const unsigned char **, count, sizes (in lengths) */
  PI_PK_PROPERTIES,  /* pi_device_binary_property array, count */
  PI_PK_IMAGE_FORMAT,
  PI_PK_IMAGE_DESC,
  PI_PK_MEM_OBJ_PROPERTY,
  PI_PK_FNPTR,
  PI_PK_HOSTPTR,     /* host memory of an extent the call computes */
  PI_PK_USMPTR,      /* a pointer that may lie inside a USM allocation */
  PI_PK_USMREF       /* points at such a pointer (piextKernelSetArgPointer) */
} pi_param_kind;

struct pi_enum_desc;

/* One enumerator. For info enumerations, vt/is_array/obj/en say what the
 * query returns. */
typedef struct pi_enum_entry {
  const char *name;
  int64_t value;
  uint8_t vt;
  uint8_t is_array;
  uint8_t obj;
  const struct pi_enum_desc *en;
} pi_enum_entry;

typedef struct pi_enum_desc {
  const char *name;
  uint8_t is_flags;
  uint8_t is_info;
  uint8_t width; /* bytes: 4 or 8 */
  uint8_t is_signed;
  uint16_t count;
  const pi_enum_entry *entries;
} pi_enum_desc;

/* A reference to another parameter (index >= 0) or a literal (ref < 0). */
typedef struct pi_param_ref {
  int8_t ref;
  uint32_t literal;
} pi_param_ref;

typedef struct pi_param_desc {
  const char *name;
  const char *ctype;
  uint8_t dir;     /* pi_param_dir */
  uint8_t kind;    /* pi_param_kind */
  uint8_t vt;      /* pi_value_type of a scalar or array element */
  uint8_t obj;     /* pi_object_kind of handles */
  uint8_t creates; /* pi_object_kind this out-parameter creates, or 0 */
  uint8_t is_ptr;  /* passed as a pointer (else an integer) */
  pi_param_ref count;    /* count of an array, or size of bytes */
  int8_t query;          /* info: the query parameter */
  int8_t size_ret;       /* info: the size_ret parameter */
  int8_t lengths;        /* strings/blobs: the lengths parameter */
  const pi_enum_desc *en;
} pi_param_desc;

typedef struct pi_api_desc {
  uint32_t id;
  const char *name;
  const char *group;
  uint8_t nparams;
  int8_t retains;  /* parameter whose object the call retains, or -1 */
  int8_t releases; /* parameter whose object the call releases, or -1 */
  const pi_param_desc *params;
  uint8_t flags; /* PI_API_F_*: what the call is, from pi.api's api flags */
  /* Parameters found by their names in pi.api, or -1: */
  int8_t blocking; /* the command's blocking flag (blocking_read, blocking, ...) */
  int8_t queue;    /* `queue`, else `command_queue` (in, or out where the call makes one) */
  int8_t event;    /* `event`: a command's event out, the event an event call is about */
} pi_api_desc;

/* pi_api_desc.flags, from the bare words of pi.api's api lines: */
#define PI_API_F_LAUNCH 0x1u   /* `launch`: enqueues a kernel launch */
#define PI_API_F_SETS_ARG 0x2u /* `sets_arg`: sets an argument of its kernel (parameter 0)
                                  at the index of parameter 1 */
#define PI_API_F_TIMING 0x4u   /* `timing`: its outputs are times, different on every run,
                                  never compared */
#define PI_API_F_DEVICE_COMMAND 0x8u /* `device_command`: enqueues work the device runs and
                                        times (a kernel or a transfer) on its queue (parameter
                                        0), returning its event in the parameter `event` */
#define PI_API_F_STARTS_IMPL 0x10u /* `starts_impl`: may start an implementation, which may
                                      install signal handlers over the trace's and the
                                      recorder's (LLVM's in PoCL and rusticl) */
#define PI_API_F_SETS_CALLBACK 0x20u /* `sets_callback`: registers a callback (parameters
                                        pfn_notify, user_data) on its event, parameter 0 */

/* The largest number of parameters any PI function has. */
#define PI_MAX_PARAMS 16

#ifdef __cplusplus
}
#endif
#endif /* PI_DESC_H */
