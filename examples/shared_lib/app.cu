// The application's kernel for CUDA devices (the PTX twin of app.cl): it
// calls poly2 from libmathdev.so's image (.extern .func in the PTX).
extern "C" __device__ float poly2(float x, float a, float b);

extern "C" __global__ void apply_poly(const float *in, float *out, float a, float b)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = poly2(in[i], a, b);
}
