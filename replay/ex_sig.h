/*
 * ex_sig.h: reading a kernel's signature in OpenCL C source (ex_access.c),
 * apart from the rest of extract so that fuzz/fuzz_kernelsig.c can call it
 * on its own.
 */
#ifndef PITRACE_EX_SIG_H
#define PITRACE_EX_SIG_H

#include <stddef.h>

/* Which arguments of kernel `name` the source src (n bytes, blanked in
 * place: comments, string literals and directives become spaces) declares
 * the kernel only reads: ro[i] is 1 for those, 0 for the others, for the
 * first `max`. Returns the number of arguments, or -1 when the kernel's
 * signature is not found or not readable as written (a parameter that is
 * a macro: its expansion is not known here). */
int ex_kernel_signature(char *src, size_t n, const char *name, unsigned char *ro, size_t max);

#endif /* PITRACE_EX_SIG_H */
