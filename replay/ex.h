/*
 * ex.h: `pitrace extract` (docs/replay.md): the calls one kernel launch
 * needs (extract.c), the contents of its buffers at that moment
 * (ex_state.c), and the new session database (ex_write.c).
 */
#ifndef PITRACE_EX_H
#define PITRACE_EX_H

#include "rp.h"

/* A call the repro holds: a recorded one, or one made up (writes of the
 * buffers' contents before the launch, a finish and reads after it). */
typedef struct ex_call {
  const pt_call *orig;   /* NULL for a made-up call */
  uint32_t api;
  char *args;            /* JSON of a made-up call, or of a changed one */
  unsigned data_pos;     /* a made-up call's payload: position, role, bytes */
  const char *data_role;
  unsigned char *data;
  size_t data_size;
  int64_t start_ns;
} ex_call;

/* A root buffer's contents as the recording shows them, byte by byte:
 * EX_DEVICE computed on the device by a call the repro does not make,
 * EX_WINDOW by one it makes as recorded (a launch of its window, or a
 * copy), so that the repro computes those bytes too. */
enum { EX_UNSET = 0, EX_KNOWN = 1, EX_DEVICE = 2, EX_UNRECORDED = 3, EX_WINDOW = 4 };

typedef struct ex_buffer {
  uint64_t id;
  size_t size;
  unsigned char *data, *state;
  /* An image: its pixel size and extent (width, rows, slices: a 1D image
   * array's images are its slices); its bytes are kept packed, row after
   * row, whatever pitches the transfers used. es 0: a buffer. */
  size_t es, w, h, d;
  uint32_t order, type; /* an image's channel order and type (pi_image_format) */
  bool array1d; /* a 1D image array: its transfers' origin[1] names the image */
  bool modified;      /* changed since its creation */
  int64_t why_seq;    /* the last call that made bytes unknown */
  const char *why_api;
} ex_buffer;

typedef struct ex_sub {
  uint64_t id, parent, origin, size;
} ex_sub;

typedef struct ex_map {
  uint64_t id, mem, offset, size, flags;
} ex_map;

typedef struct ex_karg {
  uint64_t kernel, mem;
  uint32_t index;
} ex_karg;

typedef struct ex {
  rp_session *s;
  size_t launch;     /* index of the launch in s->calls (the window's last) */
  /* The window (--inputs, --from): the launches before the launch that
   * computed what it reads, and the copies that moved it, made by the
   * repro as recorded (win[i], their wait lists dropped, each followed by
   * a finish); `from` is the index of the first launch they may be,
   * `launch` without them. */
  size_t from;
  unsigned char *win;
  bool in_window;    /* following a call of the window (ex_state.c) */
  bool shape_only;   /* following which buffers calls touch, not their bytes (ex_slice) */
  bool dry;          /* ex_assemble checks the window and makes no call (--inputs' tries) */
  /* A refusal for want of what a launch before `from` computed: that
   * launch's index + 1 (--inputs starts the window there and tries again). */
  size_t widen;
  uint64_t kernel, queue; /* of the window's launch being assembled; the last one's after */
  size_t *creator;   /* id -> index + 1 of the call that created it */
  size_t ncreator;
  bool *need;
  size_t *work, nwork;
  ex_buffer *bufs;
  size_t nbufs, cap_bufs;
  ex_sub *subs;
  size_t nsubs, cap_subs;
  ex_karg *kargs;
  size_t nkargs, cap_kargs;
  ex_map *maps;
  size_t nmaps, cap_maps;
  void *access;      /* kernels' arguments known to be only read (ex_access.c) */
  size_t naccess, cap_access;
  ex_call *out;      /* the repro, in order */
  size_t nout, cap_out;
  char err[2048];
} ex;

/* extract.c */
bool ex_fail(ex *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ex_state.c: which launches and copies from `from` on the launch's
 * buffers depend on (ex_slice: x->win); then every buffer followed up to
 * the launch, the repro's calls in order (ex_assemble: the needed ones,
 * and before each launch of the window the writes that give its buffers
 * their contents at that moment, refused where they cannot be known);
 * then the reads of what the launch left in them after it. */
bool ex_slice(ex *x);
bool ex_assemble(ex *x);
bool ex_emit_reads(ex *x);
/* Forgets every buffer followed. */
void ex_state_free(ex *x);

/* ex_access.c: whether kernel argument `index` is one the kernel can only
 * read, by its program's recorded OpenCL C source (false when not known). */
bool ex_read_only(ex *x, uint64_t kernel, uint32_t index);
void ex_access_free(ex *x);

/* The call that made handle id: its index + 1, 0 when no recorded call did. */
static inline size_t ex_maker(const ex *x, uint64_t id)
{
  return id && id < x->ncreator ? x->creator[id] : 0;
}

static inline bool ex_is_launch(uint32_t api) { return pi_api_flags(api) & PI_API_F_LAUNCH; }

/* extract.c: which call is the n-th kernel launch (from 1; calls.n when
 * there is none), and which launch call i is or follows (0: none yet). */
size_t ex_launch_index(const ex *x, int n);
int ex_launch_number(const ex *x, size_t i);

/* extract.c: a call of the window's arguments as recorded, without its
 * wait list (NULL: out of memory). */
char *ex_window_args(const ex *x, size_t i);

/* ex_write.c: the repro as a session database at path. */
bool ex_write(ex *x, const char *path, int kernel_number);
/* JSON text of a recorded value. */
void ex_json(pi_sbuf *b, const pt_json *j);

#endif /* PITRACE_EX_H */
