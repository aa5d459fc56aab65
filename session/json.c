/*
 * json.c: the JSON reader of json.h. Recursive descent over the text, every
 * value allocated from an arena of large blocks. Integers beyond int64 (the
 * recorder writes unsigned 64-bit values) wrap to the same bits.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "json.h"

/* Blocks start at BLOCK and double up to MAX_BLOCK: a loaded session's
 * hundreds of megabytes take few allocations, a small document little. */
#define BLOCK (256u << 10)
#define MAX_BLOCK (4u << 20)

/* Faults in the whole pages of [p, p + n) at once, where the kernel can
 * (Linux 5.14): a block is filled from start to end anyway, and a fault a
 * page cost more than the parsing. */
static void populate(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
  uintptr_t page = 4096, from = ((uintptr_t)p + page - 1) & ~(page - 1);
  uintptr_t to = ((uintptr_t)p + n) & ~(page - 1);
  if (to > from)
    madvise((void *)from, to - from, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)n;
#endif
}

/* A new block for an allocation of `size` (rounded) bytes; NULL when
 * memory ran out. */
static __attribute__((noinline)) void *arena_grow(pt_json_arena *a, size_t size)
{
  pt_json_block *b = a->head;
  size_t cap = !b ? BLOCK : b->cap >= MAX_BLOCK ? MAX_BLOCK : 2 * b->cap;
  if (cap < size)
    cap = size;
  b = malloc(sizeof *b + cap);
  if (!b)
    return NULL;
  if (cap > BLOCK) /* an arena past its first block: a big document, or many */
    populate(b, sizeof *b + cap);
  b->cap = cap;
  b->used = size;
  b->next = a->head;
  a->head = b;
  return b->mem;
}

static inline void *arena_alloc(pt_json_arena *a, size_t size)
{
  size = (size + 7) & ~(size_t)7; /* a pt_json's alignment */
  pt_json_block *b = a->head;
  if (!b || b->used + size > b->cap)
    return arena_grow(a, size);
  void *p = b->mem + b->used;
  b->used += size;
  return p;
}

char *pt_json_arena_copy(pt_json_arena *a, const char *s, size_t n)
{
  char *p = arena_alloc(a, n + 1);
  if (p) {
    memcpy(p, s, n);
    p[n] = 0;
  }
  return p;
}

void pt_json_arena_free(pt_json_arena *a)
{
  for (pt_json_block *b = a->head, *n; b; b = n) {
    n = b->next;
    free(b);
  }
  a->head = NULL;
}

void pt_json_arena_reset(pt_json_arena *a)
{
  if (!a->head)
    return;
  pt_json_block *keep = a->head; /* the last block, the largest */
  a->head = keep->next;
  pt_json_arena_free(a);
  keep->next = NULL;
  keep->used = 0;
  a->head = keep;
}

void pt_json_arena_move(pt_json_arena *to, pt_json_arena *from)
{
  pt_json_block *last = from->head;
  if (!last)
    return;
  while (last->next)
    last = last->next;
  last->next = to->head;
  to->head = from->head;
  from->head = NULL;
}

typedef struct parser {
  const char *p, *end, *start;
  pt_json_arena *a;
  char *err;
  size_t errn;
  int depth;
} parser;

static void skip(parser *ps)
{
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\t' || *ps->p == '\r'))
    ps->p++;
}

static pt_json *fail(parser *ps, const char *what)
{
  if (ps->err && !ps->err[0])
    snprintf(ps->err, ps->errn, "malformed JSON: %s at offset %ld", what,
             (long)(ps->p - ps->start));
  return NULL;
}

static pt_json *value(parser *ps);

/* The values most often recorded (null, false, true, small integers) are
 * not allocated: every parse hands out these, which nobody changes. A
 * loaded session is mostly such arguments. */
#define SHARED_INTS 4096
static pt_json shared_null = {.type = PJ_NULL}, shared_bool[2] = {{.type = PJ_BOOL},
                                                                  {.type = PJ_BOOL, .u.i = 1}};
static pt_json shared_int[SHARED_INTS + 1]; /* -1 to SHARED_INTS - 1 */

__attribute__((constructor)) static void init_shared(void)
{
  for (int64_t i = 0; i <= SHARED_INTS; i++)
    shared_int[i] = (pt_json){.type = PJ_INT, .u.i = i - 1};
}

static pt_json *new_value(parser *ps, pj_type t)
{
  pt_json *j = arena_alloc(ps->a, sizeof *j);
  if (j)
    *j = (pt_json){.type = t};
  return j;
}

static int hexval(char c)
{
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static pt_json *string(parser *ps)
{
  const char *start = ++ps->p, *q = start; /* past the quote */
  /* The closing quote: the first one no backslash escapes (memchr finds
   * candidates; escapes are rare). */
  const char *stop = memchr(q, '"', (size_t)(ps->end - q));
  bool plain = stop && !memchr(q, '\\', (size_t)(stop - q));
  if (!plain)
    for (stop = q; stop < ps->end && *stop != '"'; stop++)
      stop += *stop == '\\';
  if (stop >= ps->end) {
    ps->p = stop;
    return fail(ps, "unterminated string");
  }
  ps->p = stop + 1;
  pt_json *j = new_value(ps, PJ_STRING);
  char *s = j ? arena_alloc(ps->a, (size_t)(stop - start) + 1) : NULL;
  if (!s)
    return NULL;
  if (plain) {
    memcpy(s, start, (size_t)(stop - start));
    s[stop - start] = 0;
    j->n = (uint32_t)(stop - start);
  } else {
    size_t w = 0;
    for (const char *q = start; q < stop; q++) {
      if (*q != '\\') {
        s[w++] = *q;
        continue;
      }
      q++;
      switch (*q) {
      case 'n': s[w++] = '\n'; break;
      case 't': s[w++] = '\t'; break;
      case 'r': s[w++] = '\r'; break;
      case 'b': s[w++] = '\b'; break;
      case 'f': s[w++] = '\f'; break;
      case 'u': {
        int v = 0;
        for (int k = 1; k <= 4 && q + k < stop; k++)
          v = v * 16 + (hexval(q[k]) < 0 ? 0 : hexval(q[k]));
        q += 4;
        if (v < 0x80) {
          s[w++] = (char)v;
        } else if (v < 0x800) {
          s[w++] = (char)(0xc0 | (v >> 6));
          s[w++] = (char)(0x80 | (v & 0x3f));
        } else {
          s[w++] = (char)(0xe0 | (v >> 12));
          s[w++] = (char)(0x80 | ((v >> 6) & 0x3f));
          s[w++] = (char)(0x80 | (v & 0x3f));
        }
        break;
      }
      default: s[w++] = *q; break;
      }
    }
    s[w] = 0;
    j->n = (uint32_t)w;
  }
  j->u.s = s;
  return j;
}

static pt_json *number(parser *ps)
{
  const char *start = ps->p;
  bool real = false, neg = *ps->p == '-';
  if (neg)
    ps->p++;
  while (ps->p < ps->end && ((*ps->p >= '0' && *ps->p <= '9') || *ps->p == '.' || *ps->p == 'e' ||
                             *ps->p == 'E' || *ps->p == '+' || *ps->p == '-')) {
    if (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E')
      real = true;
    ps->p++;
  }
  size_t len = (size_t)(ps->p - start);
  if (!len || len >= 64)
    return fail(ps, "bad number");
  if (real) {
    char buf[64];
    memcpy(buf, start, len);
    buf[len] = 0;
    pt_json *j = new_value(ps, PJ_REAL);
    if (j)
      j->u.d = strtod(buf, NULL);
    return j;
  }
  uint64_t v = 0; /* by hand: this is the hot loop of loading a session */
  for (const char *c = start + neg; c < ps->p; c++)
    v = v * 10 + (uint64_t)(*c - '0');
  int64_t i = (int64_t)(neg ? 0 - v : v); /* in uint64_t: -INT64_MIN is no int64_t */
  if (i >= -1 && i < SHARED_INTS)
    return &shared_int[i + 1];
  pt_json *j = new_value(ps, PJ_INT);
  if (j)
    j->u.i = i;
  return j;
}

/* Adds v to a container's items, which start in `stack` and move to the
 * heap when it is full. False when memory ran out (items unchanged). */
static inline bool push_item(pt_json ***items, pt_json **stack, size_t *n, size_t *cap,
                             pt_json *v)
{
  if (__builtin_expect(*n == *cap, 0)) {
    pt_json **ni = malloc(2 * *cap * sizeof *ni);
    if (!ni)
      return false;
    memcpy(ni, *items, *n * sizeof *ni);
    if (*items != stack)
      free(*items);
    *items = ni;
    *cap *= 2;
  }
  (*items)[(*n)++] = v;
  return true;
}

static pt_json *container(parser *ps, char close)
{
  if (++ps->depth > 64)
    return fail(ps, "nested too deeply");
  ps->p++;
  pt_json *j = new_value(ps, close == ']' ? PJ_ARRAY : PJ_OBJECT);
  if (!j)
    return NULL;
  pt_json *stack[64];
  pt_json **items = stack;
  size_t n = 0, cap = 64;
  skip(ps);
  if (ps->p < ps->end && *ps->p == close) {
    ps->p++;
    ps->depth--;
    return j;
  }
  for (;;) {
    skip(ps);
    pt_json *v;
    if (close == '}') {
      if (ps->p >= ps->end || *ps->p != '"') {
        j = fail(ps, "expected a key");
        goto out;
      }
      if (!(v = string(ps)) || !push_item(&items, stack, &n, &cap, v)) {
        j = NULL;
        goto out;
      }
      skip(ps);
      if (ps->p >= ps->end || *ps->p != ':') {
        j = fail(ps, "expected ':'");
        goto out;
      }
      ps->p++;
      skip(ps);
    }
    if (!(v = value(ps)) || !push_item(&items, stack, &n, &cap, v)) {
      j = NULL;
      goto out;
    }
    skip(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == close) {
      ps->p++;
      break;
    }
    j = fail(ps, close == ']' ? "expected ',' or ']'" : "expected ',' or '}'");
    goto out;
  }
  j->u.items = arena_alloc(ps->a, n * sizeof *items);
  if (!j->u.items) {
    j = NULL;
    goto out;
  }
  memcpy(j->u.items, items, n * sizeof *items);
  j->n = (uint32_t)(close == ']' ? n : n / 2);
  ps->depth--;
out:
  if (items != stack)
    free(items);
  return j;
}

static pt_json *value(parser *ps)
{
  skip(ps);
  if (ps->p >= ps->end)
    return fail(ps, "unexpected end");
  switch (*ps->p) {
  case '[': return container(ps, ']');
  case '{': return container(ps, '}');
  case '"': return string(ps);
  case 'n':
    if (ps->end - ps->p >= 4 && memcmp(ps->p, "null", 4) == 0) {
      ps->p += 4;
      return &shared_null;
    }
    return fail(ps, "bad literal");
  case 't':
  case 'f': {
    bool t = *ps->p == 't';
    size_t len = t ? 4 : 5;
    if ((size_t)(ps->end - ps->p) >= len && memcmp(ps->p, t ? "true" : "false", len) == 0) {
      ps->p += len;
      return &shared_bool[t];
    }
    return fail(ps, "bad literal");
  }
  default:
    return number(ps);
  }
}

pt_json *pt_json_parse_prefix(pt_json_arena *a, const char *text, size_t len, size_t *used,
                              char *err, size_t errn)
{
  parser ps = {text, text + len, text, a, err, errn, 0};
  if (err && errn)
    err[0] = 0;
  pt_json *j = value(&ps);
  *used = (size_t)(ps.p - text);
  return j;
}

pt_json *pt_json_parse(pt_json_arena *a, const char *text, size_t len, char *err, size_t errn)
{
  size_t used;
  pt_json *j = pt_json_parse_prefix(a, text, len, &used, err, errn);
  if (j) {
    while (used < len && (text[used] == ' ' || text[used] == '\n' || text[used] == '\t' ||
                          text[used] == '\r'))
      used++;
    if (used != len) {
      if (err && errn)
        snprintf(err, errn, "malformed JSON: trailing text at offset %ld", (long)used);
      return NULL;
    }
  }
  return j;
}
