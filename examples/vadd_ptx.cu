// The kernel of vadd_ptx.c: plugins/cuda/kernels/embed_ptx.py compiles it to
// PTX for sm_90 and embeds the text in vadd_ptx.c.
extern "C" __global__ void vadd(const float *a, const float *b, float *c,
                                unsigned n)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}
