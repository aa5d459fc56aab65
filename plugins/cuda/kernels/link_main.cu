// The kernel half of the compile + link test: calls twice_plus(), which only
// link_lib.cu defines (compiled with -rdc=true so the call stays external).
extern "C" __device__ float twice_plus(float x, float y);

extern "C" __global__ void apply(float *x, float y)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  x[i] = twice_plus(x[i], y);
}
