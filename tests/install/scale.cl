/* The consumer's embedded device code (pitrace_add_device_code). */
__kernel void scale(__global const float *in, __global float *out, float k) {
  size_t i = get_global_id(0);
  out[i] = k * in[i] + 1.0f;
}
