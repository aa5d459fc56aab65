/* Seed 003's spec-constant examples: a scalar, a struct nested in a struct,
 * and a struct, with the defaults of the seed's default-values example
 * (Nested's constructor adds 1 to each member). */
//@pitrace spec_constant id_int i32 = 42
//@pitrace spec_constant id_A {i32, {f32, f32}} = 1, 3.0, 4.0
//@pitrace spec_constant id_Nested {f32, f32} = 5.0, 6.0

typedef struct { float a, b; } Nested;
typedef struct { int x; Nested n; } A;

/* Members are read in place: copying the whole struct out of the buffer
 * (A a = PITRACE_SPEC(id_A, A);) crashes rusticl's compiler (Mesa 22.3.6,
 * in a NIR pass), while PoCL builds it. */
__kernel void k_spec(__global float *out, __global const uchar *pitrace_spec_consts) {
  out[0] = (float)PITRACE_SPEC(id_int, int);
  out[1] = (float)PITRACE_SPEC(id_A, A).x;
  out[2] = PITRACE_SPEC(id_A, A).n.a;
  out[3] = PITRACE_SPEC(id_A, A).n.b;
  out[4] = PITRACE_SPEC(id_Nested, Nested).a;
  out[5] = PITRACE_SPEC(id_Nested, Nested).b;
}
