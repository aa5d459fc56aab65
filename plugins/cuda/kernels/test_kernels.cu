// Kernels of tests/test_cuda.c; embed_ptx.py compiles them to PTX for sm_90
// and embeds the text in the test.
//
// Local-memory arguments follow DPC++'s CUDA convention: the plugin reserves
// the bytes in the launch's dynamic shared memory and passes their offset
// (a size_t) as the argument.
#include <stddef.h>

extern "C" __global__ void vadd(const float *a, const float *b, float *c,
                                unsigned n)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

extern "C" __global__ void scale(float *x, float s)
{
  x[blockIdx.x * blockDim.x + threadIdx.x] *= s;
}

extern "C" __global__ void sum2d(const int *in, int *out, unsigned w)
{
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  out[y * w + x] = in[y * w + x] + (int)(x * 1000 + y);
}

// Per work-group: the sum of `in` over the group (through local int[]) and
// the sum of the squares (through a second local long long[]).
extern "C" __global__ void group_sums(const int *in, size_t a_offset,
                                      size_t b_offset, int *sums,
                                      long long *squares)
{
  extern __shared__ unsigned char local_mem[];
  int *a = (int *)(local_mem + a_offset);
  long long *b = (long long *)(local_mem + b_offset);
  unsigned l = threadIdx.x;
  int v = in[blockIdx.x * blockDim.x + l];
  a[l] = v;
  b[l] = (long long)v * v;
  __syncthreads();
  if (l == 0) {
    int s = 0;
    long long q = 0;
    for (unsigned i = 0; i < blockDim.x; i++) {
      s += a[i];
      q += b[i];
    }
    sums[blockIdx.x] = s;
    squares[blockIdx.x] = q;
  }
}

extern "C" __global__ void add_n(int *p, int n, unsigned count)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count)
    p[i] += n;
}

// Spins for about `ns` nanoseconds, so that profiling has something to time.
extern "C" __global__ void spin(unsigned long long ns, int *done)
{
  unsigned long long start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  unsigned long long now = start;
  while (now - start < ns)
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  done[0] = 1;
}

// A device global, for piextEnqueueDeviceGlobalVariableRead/Write.
extern "C" __device__ int counter;
__device__ int counter;

extern "C" __global__ void bump(int n)
{
  atomicAdd(&counter, n);
}
