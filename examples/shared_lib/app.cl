/* The application's kernel: it calls poly2, defined in libmathdev.so's
 * device image, so the runtime must link the two images. */
float poly2(float x, float a, float b);

__kernel void apply_poly(__global const float *in, __global float *out,
                         float a, float b) {
  size_t i = get_global_id(0);
  out[i] = poly2(in[i], a, b);
}
