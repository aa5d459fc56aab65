/* Seed 003's 3x3 convolution: the coefficients are a composite
 * specialization constant (float[3][3]); this runtime emulates it with a
 * buffer passed as the kernel's pitrace_spec_consts argument, and
 * PITRACE_SPEC reads it. The defaults are a box blur. */
//@pitrace spec_constant coeff_id f32[3][3] = 0.1111111,0.1111111,0.1111111, 0.1111111,0.1111111,0.1111111, 0.1111111,0.1111111,0.1111111

typedef struct { float c[3][3]; } coeff_t;

__kernel void convolution(__global const float *in, __global float *out,
                          uint width, uint height,
                          __global const uchar *pitrace_spec_consts) {
  int x = (int)get_global_id(0), y = (int)get_global_id(1);
  coeff_t coeff = PITRACE_SPEC(coeff_id, coeff_t);
  float acc = 0.0f;
  for (int i = -1; i <= 1; i++) {
    if (y + i < 0 || y + i >= (int)height)
      continue;
    for (int j = -1; j <= 1; j++) {
      if (x + j < 0 || x + j >= (int)width)
        continue;
      acc += coeff.c[i + 1][j + 1] * in[(y + i) * (int)width + x + j];
    }
  }
  out[y * (int)width + x] = acc;
}
