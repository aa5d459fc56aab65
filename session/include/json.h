/*
 * json.h: a small JSON reader for what the recorder writes: arrays,
 * numbers (64-bit integers, and doubles), strings, null, true, false (and
 * objects, read as key/value lists). Values live in an arena freed at once,
 * except null, true, false and small integers, which every parse shares:
 * values are read, never changed.
 */
#ifndef PT_JSON_H
#define PT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { PJ_NULL, PJ_BOOL, PJ_INT, PJ_REAL, PJ_STRING, PJ_ARRAY, PJ_OBJECT } pj_type;

typedef struct pt_json {
  pj_type type;
  uint32_t n;        /* elements (array, object), string length */
  union {
    int64_t i;       /* PJ_INT, PJ_BOOL */
    double d;        /* PJ_REAL */
    const char *s;   /* PJ_STRING: NUL-terminated, unescaped */
    struct pt_json **items; /* PJ_ARRAY; PJ_OBJECT: key, value, key, value */
  } u;
} pt_json;

typedef struct pt_json_block {
  struct pt_json_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char mem[];
} pt_json_block;

typedef struct pt_json_arena {
  pt_json_block *head;
} pt_json_arena;

/* Parses `len` bytes of text; NULL (with err set) when malformed. */
pt_json *pt_json_parse(pt_json_arena *a, const char *text, size_t len, char *err,
                       size_t errn);
/* Parses the one value that `text` begins with; *used: the bytes it took. */
pt_json *pt_json_parse_prefix(pt_json_arena *a, const char *text, size_t len, size_t *used,
                              char *err, size_t errn);
void pt_json_arena_free(pt_json_arena *a);
/* Frees every value of an arena but keeps its largest block for the next
 * values (a reader that parses chunk after chunk). */
void pt_json_arena_reset(pt_json_arena *a);
/* Gives every value of `from` to `to` (from is left empty). */
void pt_json_arena_move(pt_json_arena *to, pt_json_arena *from);
/* A copy of the n bytes at s, NUL-terminated, kept with the arena's values
 * (for texts a reader holds as long as them); NULL when memory ran out. */
char *pt_json_arena_copy(pt_json_arena *a, const char *s, size_t n);

/* Element i of an array, or NULL. */
static inline pt_json *pt_json_at(const pt_json *j, size_t i)
{
  return j && j->type == PJ_ARRAY && i < j->n ? j->u.items[i] : NULL;
}
/* An integer element (def when missing, not a number, or a real no
 * int64_t holds: NaN, infinities, beyond 2^63). */
static inline int64_t pt_json_int(const pt_json *j, int64_t def)
{
  if (j && (j->type == PJ_INT || j->type == PJ_BOOL))
    return j->u.i;
  if (j && j->type == PJ_REAL && j->u.d >= -9223372036854775808.0 &&
      j->u.d < 9223372036854775808.0)
    return (int64_t)j->u.d;
  return def;
}

#endif /* PT_JSON_H */
