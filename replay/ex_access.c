/*
 * ex_access.c: which arguments of a kernel it can only read, from the
 * recorded OpenCL C source of its program, so that extract knows a launch
 * left a buffer or image bound there as it was (ex_state.c: a launch makes
 * what it may write "computed on the device"). PI has no query for it
 * (OpenCL's clGetKernelArgInfo needs -cl-kernel-arg-info, which
 * applications do not pass), and the source says it in the kernel's
 * signature:
 *
 *   __global const float *x, constant float *c     pointers to what is const
 *   read_only image2d_t in, image2d_t in           images read (read_only is
 *                                                  OpenCL C's default)
 *
 * Anything else, a signature this does not find (a kernel named through a
 * macro, a program from IL or a binary: PTX, SPIR-V, darktable's cached
 * binaries), or a source not recorded, is taken as written, as before.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ex.h"
#include "ex_sig.h"

/* What is known of a kernel's arguments (EX_RO: only read). */
enum { EX_MAY_WRITE = 0, EX_RO = 1 };

typedef struct ex_kernel_access {
  uint64_t kernel;
  uint32_t nargs;
  unsigned char *ro; /* per argument index: EX_RO or EX_MAY_WRITE */
} ex_kernel_access;

/* ---- Tokens --------------------------------------------------------------------------- */

/* The source with comments, string literals and preprocessor lines made
 * spaces (the same length, its newlines kept), so that tokens can be read
 * plainly. */
static void blank(char *s, size_t n)
{
  bool line_start = true;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\n') {
      line_start = true;
      continue;
    }
    size_t end = i; /* [i, end) is blanked */
    if (line_start && s[i] == '#') { /* a directive, with its continued lines */
      while (end < n && !(s[end] == '\n' && s[end - 1] != '\\'))
        end++;
    } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
      while (end < n && s[end] != '\n')
        end++;
    } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
      end = i + 2;
      while (end + 1 < n && !(s[end] == '*' && s[end + 1] == '/'))
        end++;
      end = end + 2 <= n ? end + 2 : n;
    } else if (s[i] == '"' || s[i] == '\'') {
      end = i + 1;
      while (end < n && s[end] != s[i] && s[end] != '\n')
        end += s[end] == '\\' ? 2 : 1;
      end = end >= n ? n : s[end] == s[i] ? end + 1 : end;
    }
    /* Where the next token stands, as a second reading of the blanked
     * text sees it (so that blanking twice changes nothing): what is
     * blanked is spaces (for a comment, C's rule too: a directive may
     * follow it), and a newline kept inside it begins a line. */
    if (!isspace((unsigned char)s[i]) && end == i)
      line_start = false;
    for (size_t k = i; k < end; k++)
      if (s[k] != '\n')
        s[k] = ' ';
      else
        line_start = true;
    if (end > i)
      i = end - 1;
  }
}

typedef struct tok {
  const char *p;
  size_t n; /* 0: the end */
} tok;

static bool is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The token at *at (an identifier, a number, or one character). */
static tok next_tok(const char *s, size_t n, size_t *at)
{
  size_t i = *at;
  while (i < n && isspace((unsigned char)s[i]))
    i++;
  tok t = {s + i, 0};
  if (i < n)
    t.n = is_ident(s[i]) ? 0 : 1;
  while (i + t.n < n && is_ident(s[i]) && is_ident(s[i + t.n]))
    t.n++;
  *at = i + t.n;
  return t;
}

static bool tok_is(tok t, const char *w) { return t.n == strlen(w) && memcmp(t.p, w, t.n) == 0; }

/* ---- Signatures ----------------------------------------------------------------------- */

/* Whether one parameter's tokens [from, to) declare what the kernel can
 * only read: a pointer to const or to the constant address space, or an
 * image (OpenCL C's image types) without write_only or read_write. */
static bool param_read_only(const char *s, size_t from, size_t to)
{
  bool star = false, const_before_star = false, constant = false, image = false, writes = false;
  for (size_t at = from; at < to;) {
    tok t = next_tok(s, to, &at);
    if (!t.n)
      break;
    if (tok_is(t, "*"))
      star = true;
    else if ((tok_is(t, "const") || tok_is(t, "__const")) && !star)
      const_before_star = true;
    else if (tok_is(t, "constant") || tok_is(t, "__constant"))
      constant = true;
    else if (tok_is(t, "write_only") || tok_is(t, "__write_only") || tok_is(t, "read_write") ||
             tok_is(t, "__read_write"))
      writes = true;
    else if (t.n > 8 && memcmp(t.p, "image", 5) == 0 && t.p[5] >= '1' && t.p[5] <= '3' &&
             t.p[6] == 'd' && t.p[t.n - 2] == '_' && t.p[t.n - 1] == 't')
      image = true; /* image1d_t .. image3d_t, image2d_array_t, image2d_depth_t, ... */
  }
  if (image && !star)
    return !writes;
  return star && (const_before_star || constant);
}

/* Skips a balanced (...) whose '(' is the next token; false at the end. */
static bool skip_parens(const char *s, size_t n, size_t *at)
{
  int depth = 0;
  do {
    tok t = next_tok(s, n, at);
    if (!t.n)
      return false;
    depth += tok_is(t, "(") - tok_is(t, ")");
  } while (depth > 0);
  return true;
}

/* Whether the parameter text s[from, to) is one declaration as written,
 * not a macro the preprocessor would expand (`#define OUTS __global float
 * *a, __global float *b`: one "parameter" that is two, so each after it
 * was taken for the one before, a buffer written for a const one): a
 * declaration has a type and a name, so at least two tokens, and no
 * parentheses (OpenCL C kernels take no function pointers). */
static bool param_as_written(const char *s, size_t from, size_t to)
{
  unsigned tokens = 0;
  for (size_t at = from; at < to;) {
    tok t = next_tok(s, to, &at);
    if (!t.n)
      break;
    if (tok_is(t, "("))
      return false;
    tokens++;
  }
  return tokens >= 2;
}

/* The next signature of kernel `name` in the blanked source s from *at
 * on: ro[i] for each of at most max arguments; their number, -1 when
 * there is none (*at: where the search goes on), or -2 when its
 * parameters are not as written (macros: param_as_written). */
static int parse_kernel(const char *s, size_t n, const char *name, unsigned char *ro, size_t max,
                        size_t *at_io)
{
  size_t at = *at_io;
  for (;;) {
    *at_io = at;
    tok t = next_tok(s, n, &at);
    if (!t.n)
      return -1;
    if (!tok_is(t, "__kernel") && !tok_is(t, "kernel"))
      continue;
    /* [attributes] void [attributes] NAME ( */
    tok last = {NULL, 0};
    size_t open = 0;
    for (;;) {
      size_t before = at;
      tok u = next_tok(s, n, &at);
      if (!u.n || tok_is(u, ";") || tok_is(u, "{"))
        break;
      if (tok_is(u, "__attribute__")) {
        if (!skip_parens(s, n, &at))
          return -1;
        continue;
      }
      if (tok_is(u, "(")) {
        open = before;
        break;
      }
      last = u;
    }
    if (!open || !last.n || !tok_is(last, name))
      continue;
    /* The parameters, split at the commas outside parentheses. */
    size_t p = open;
    next_tok(s, n, &p); /* the '(' */
    size_t start = p;
    int depth = 0, count = 0;
    for (;;) {
      size_t here = p;
      tok u = next_tok(s, n, &p);
      if (!u.n)
        return -1;
      if (tok_is(u, "(")) {
        depth++;
      } else if (tok_is(u, ")") && depth > 0) {
        depth--;
      } else if ((tok_is(u, ",") && depth == 0) || tok_is(u, ")")) {
        size_t q = start;
        tok first = next_tok(s, here, &q), second = next_tok(s, here, &q);
        bool none = !first.n || (tok_is(first, "void") && !second.n); /* f() or f(void) */
        if (!(none && tok_is(u, ")") && count == 0)) {
          if (!param_as_written(s, start, here))
            return -2;
          if ((size_t)count < max)
            ro[count] = param_read_only(s, start, here) ? EX_RO : EX_MAY_WRITE;
          count++;
        }
        if (tok_is(u, ")")) {
          *at_io = p;
          return count;
        }
        start = p;
      }
    }
  }
}

int ex_kernel_signature(char *src, size_t n, const char *name, unsigned char *ro, size_t max)
{
  blank(src, n);
  size_t at = 0;
  int count = parse_kernel(src, n, name, ro, max, &at);
  if (count < -1)
    return -1; /* not readable as written: every argument may be written */
  /* Its other signatures (a prototype; definitions in the branches of an
   * #if, whose conditions are not evaluated here): an argument is only
   * read where every one says so, and they must agree on the number. */
  unsigned char other[256];
  for (int more; count >= 0 && (more = parse_kernel(src, n, name, other, sizeof other, &at)) != -1;) {
    if (more != count)
      return -1;
    for (int i = 0; i < count && (size_t)i < max && (size_t)i < sizeof other; i++)
      ro[i] = ro[i] && other[i];
  }
  return count;
}

/* ---- The recording --------------------------------------------------------------------- */

/* The call that made handle id, or NULL. */
static const pt_call *maker(const ex *x, uint64_t id)
{
  size_t m = ex_maker(x, id);
  return m ? &x->s->calls.v[m - 1] : NULL;
}

/* The OpenCL C source of program p (of a program linked from compiled
 * ones, theirs, one after another), appended to *src; false when a part
 * of it is not a recorded source. */
static bool program_source(ex *x, uint64_t p, char **src, size_t *len, int depth)
{
  const pt_call *c = maker(x, p);
  if (!c || depth > 4)
    return false;
  if (c->api == PI_API_piProgramLink) { /* its inputs: [context, ndev, devs, opts, n, programs, ...] */
    const pt_json *progs = pt_json_at(c->args, 5);
    for (uint32_t k = 0; progs && progs->type == PJ_ARRAY && k < progs->n; k++)
      if (!program_source(x, (uint64_t)pt_json_int(progs->u.items[k], 0), src, len, depth + 1))
        return false;
    return progs && progs->type == PJ_ARRAY && progs->n > 0;
  }
  if (c->api != PI_API_piclProgramCreateWithSource)
    return false;
  int64_t count = rp_arg_int(c, 1, 0);
  for (int64_t k = 0; k < count && k < 4096; k++) {
    size_t size;
    rp_data_status st;
    unsigned char *d = rp_payload(x->s, c, 2, "in", (unsigned)k, &size, &st);
    char *grown = d ? realloc(*src, *len + size + 2) : NULL;
    if (!grown) {
      free(d);
      return false;
    }
    memcpy(grown + *len, d, size);
    *len += size;
    grown[(*len)++] = '\n';
    grown[*len] = 0;
    *src = grown;
    free(d);
  }
  return count > 0;
}

/* What ex_read_only knows of kernel k, found the first time it is asked. */
static const ex_kernel_access *access_of(ex *x, uint64_t k)
{
  ex_kernel_access *v = x->access;
  for (size_t i = 0; i < x->naccess; i++)
    if (v[i].kernel == k)
      return &v[i];
  ex_kernel_access a = {.kernel = k};
  const pt_call *kc = maker(x, k);
  const pt_json *name = kc && kc->api == PI_API_piKernelCreate ? pt_json_at(kc->args, 1) : NULL;
  char *src = NULL;
  size_t len = 0;
  if (name && name->type == PJ_STRING &&
      program_source(x, (uint64_t)rp_arg_int(kc, 0, 0), &src, &len, 0)) {
    unsigned char ro[256];
    int n = ex_kernel_signature(src, len, name->u.s, ro, sizeof ro);
    if (n > 0 && n <= (int)sizeof ro && (a.ro = malloc((size_t)n))) {
      memcpy(a.ro, ro, (size_t)n);
      a.nargs = (uint32_t)n;
    }
  }
  free(src);
  if (!rp_push(&x->access, &x->naccess, &x->cap_access, sizeof a, &a)) {
    free(a.ro);
    return NULL;
  }
  return &((ex_kernel_access *)x->access)[x->naccess - 1];
}

bool ex_read_only(ex *x, uint64_t kernel, uint32_t index)
{
  const ex_kernel_access *a = access_of(x, kernel);
  return a && index < a->nargs && a->ro[index] == EX_RO;
}

void ex_access_free(ex *x)
{
  ex_kernel_access *v = x->access;
  for (size_t i = 0; i < x->naccess; i++)
    free(v[i].ro);
  free(x->access);
  x->access = NULL;
  x->naccess = x->cap_access = 0;
}
