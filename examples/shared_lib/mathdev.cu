// libmathdev.so's device function for CUDA devices: the PTX twin of
// mathdev.cl (examples/gen_ptx.sh compiles it with relocatable device code,
// so poly2 is exported: .visible .func).
__device__ static float square(float x) { return x * x; }

extern "C" __device__ float poly2(float x, float a, float b) { return a * square(x) + b; }
