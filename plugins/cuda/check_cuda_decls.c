/*
 * check_cuda_decls.c: cuda_driver.h against a CUDA toolkit's cuda.h.
 *
 * The plugin is built from its own declarations of the driver API
 * (cuda_driver.h); this program is compiled with the real cuda.h and
 * cuda_driver.h's lists, and every entry of those lists is checked at
 * compile time (so any difference is a compile error that names it):
 *
 *   - each enumerator and constant has the value cuda.h gives it, and each
 *     enumeration type is the same enum, of the same size;
 *   - each type is the same type;
 *   - each structure has the same size and alignment, and each member the
 *     same type and offset (a missing member shifts the offsets after it);
 *   - each function name is mapped by cuda.h to the symbol cuda_driver.h
 *     looks up (cuMemAlloc -> cuMemAlloc_v2: if cuda.h maps it elsewhere,
 *     "symbol_in_cuda_driver_h_<what cuda.h maps it to>" is undeclared),
 *     and cuda.h declares that symbol with the same signature.
 *
 * Compiled again with CHECK_LEGACY_ENTRY_POINTS, it checks the older entry
 * points (CUDRV_LEGACY_FUNCTIONS), which cuda.h declares only with
 * __CUDA_API_VERSION_INTERNAL. check_cuda_decls.sh builds both and runs
 * the result, which prints what was checked.
 */
#ifdef CHECK_LEGACY_ENTRY_POINTS
#define __CUDA_API_VERSION_INTERNAL 1
#endif
#include <cuda.h>

#define CUDRV_LISTS_ONLY
#include "cuda_driver.h"

#include <stddef.h>
#include <stdio.h>

#define SAME_TYPE(a, b) __builtin_types_compatible_p(a, b)
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(x) #x
#define STR(x) STR_(x)
#define COUNT(...) +1

#ifndef CHECK_LEGACY_ENTRY_POINTS

/* ---- Enumerations and constants ------------------------------------------ */

#define CHECK_VALUE(name, value)                                               \
  _Static_assert((name) == (value), #name " is not " #value " in cuda.h");
CUDRV_CONSTANTS(CHECK_VALUE)

/* cuda_driver.h's enumeration, under a tag of its own, to compare sizes. */
#define MY_ENUMERATOR(name, value) mine_##name = value,
/* clang-format off */
#define CHECK_ENUM(type, tag, values)                                          \
  values(CHECK_VALUE)                                                          \
  _Static_assert(SAME_TYPE(type, enum tag),                                    \
                 #type " is not enum " #tag " in cuda.h");                     \
  enum mine_##tag { values(MY_ENUMERATOR) };                                   \
  _Static_assert(sizeof(type) == sizeof(enum mine_##tag),                      \
                 #type " has another size in cuda.h");
/* clang-format on */
CUDRV_ENUMS(CHECK_ENUM)

/* ---- Types -------------------------------------------------------------- */

#define CHECK_TYPE(name, type)                                                 \
  _Static_assert(SAME_TYPE(name, type), #name " is not " #type " in cuda.h");
CUDRV_TYPES(CHECK_TYPE)

/* ---- Structures -----------------------------------------------------------
 * cuda_driver.h's layout is a structure of its own (mine_<tag>) built from
 * the list; s is the pair (cuda.h's type, tag). */

#define MY_MEMBER(s, type, name) type name;
#define MY_ARRAY_MEMBER(s, type, name, count) type name[count];
#define REAL_TYPE(type, tag) type
#define MY_TYPE(type, tag) struct mine_##tag
#define CHECK_MEMBER_(s, mtype, name)                                          \
  _Static_assert(offsetof(REAL_TYPE s, name) == offsetof(MY_TYPE s, name),     \
                 STR(REAL_TYPE s) "." #name " is elsewhere in cuda.h");        \
  _Static_assert(SAME_TYPE(__typeof__(((REAL_TYPE s *)0)->name), mtype),       \
                 STR(REAL_TYPE s) "." #name " is not " #mtype " in cuda.h");
#define CHECK_MEMBER(s, mtype, name) CHECK_MEMBER_(s, mtype, name)
#define CHECK_ARRAY_MEMBER(s, mtype, name, count)                              \
  CHECK_MEMBER_(s, mtype[count], name)
#define CHECK_STRUCT(type, tag, members)                                       \
  _Static_assert(SAME_TYPE(type, struct tag),                                  \
                 #type " is not struct " #tag " in cuda.h");                   \
  struct mine_##tag {                                                          \
    members(MY_MEMBER, MY_ARRAY_MEMBER, )                                      \
  };                                                                           \
  _Static_assert(sizeof(type) == sizeof(struct mine_##tag),                    \
                 #type " has another size in cuda.h");                         \
  _Static_assert(_Alignof(type) == _Alignof(struct mine_##tag),                \
                 #type " has another alignment in cuda.h");                    \
  members(CHECK_MEMBER, CHECK_ARRAY_MEMBER, (type, tag))
CUDRV_STRUCTS(CHECK_STRUCT)

/* ---- Functions ------------------------------------------------------------
 * name is macro-expanded (to what cuda.h maps it to) wherever it is not
 * stringified; symbol never is when pasted. */

#define DECLARE_SYMBOL(name, symbol, params)                                   \
  enum { symbol_in_cuda_driver_h_##symbol };
CUDRV_FUNCTIONS(DECLARE_SYMBOL)

#define CHECK_FUNCTION(name, symbol, params)                                   \
  _Static_assert(CAT(symbol_in_cuda_driver_h_, name) == 0,                     \
                 "cuda.h maps " #name " to another symbol than " #symbol);     \
  _Static_assert(SAME_TYPE(__typeof__(name), CUresult params),                 \
                 "cuda.h declares " #symbol " with another signature");
CUDRV_FUNCTIONS(CHECK_FUNCTION)

int check_legacy_entry_points(void);

int main(void) {
  int values = 0 CUDRV_CONSTANTS(COUNT), enums = 0 CUDRV_ENUMS(COUNT);
  int members = 0, structs = 0 CUDRV_STRUCTS(COUNT);
#define ADD_VALUES(type, tag, list) values += 0 list(COUNT);
  CUDRV_ENUMS(ADD_VALUES)
#define ADD_MEMBERS(type, tag, list) members += 0 list(COUNT, COUNT, );
  CUDRV_STRUCTS(ADD_MEMBERS)
  printf("cuda_driver.h matches cuda.h of CUDA %d.%d (it was written "
         "against %d.%d):\n",
         CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10,
         CUDRV_CHECKED_VERSION / 1000, CUDRV_CHECKED_VERSION % 1000 / 10);
  printf("  %d enumerations and %d values, %d types, %d structures and %d "
         "members, %d functions (symbol and signature), %d older entry "
         "points (signature)\n",
         enums, values, 0 CUDRV_TYPES(COUNT), structs, members,
         0 CUDRV_FUNCTIONS(COUNT), check_legacy_entry_points());
  return 0;
}

#else /* CHECK_LEGACY_ENTRY_POINTS */

/* cuda.h's internal part declares them under the unversioned name. */
#define CHECK_LEGACY(name, symbol, params)                                     \
  _Static_assert(SAME_TYPE(__typeof__(symbol), CUresult params),               \
                 "cuda.h declares " #symbol " (" #name                         \
                 ") with another signature");
CUDRV_LEGACY_FUNCTIONS(CHECK_LEGACY)

int check_legacy_entry_points(void);
int check_legacy_entry_points(void) { return 0 CUDRV_LEGACY_FUNCTIONS(COUNT); }

#endif
