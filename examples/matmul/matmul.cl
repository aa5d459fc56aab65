// matmul's four kernels in OpenCL C 1.2 (no fp64: rusticl has none); the
// PTX twin for CUDA devices is matmul.cu -> matmul.ptx (gen_ptx.sh).
#define TILE 16
#define WG 256
#define BINS 256

// C = A * B for n x n matrices (n a multiple of TILE), through TILE x TILE
// tiles of A and B in local memory.
__kernel void matmul_tiled(__global const float *a, __global const float *b,
                           __global float *c, uint n)
{
  __local float ta[TILE][TILE], tb[TILE][TILE];
  uint tx = get_local_id(0), ty = get_local_id(1);
  uint col = get_group_id(0) * TILE + tx, row = get_group_id(1) * TILE + ty;
  float acc = 0.0f;
  for (uint t = 0; t < n; t += TILE) {
    ta[ty][tx] = a[row * n + t + tx];
    tb[ty][tx] = b[(t + ty) * n + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < TILE; k++)
      acc += ta[ty][k] * tb[k][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  c[row * n + col] = acc;
}

// partial[g] = the sum of work-group g's WG elements (a tree in local memory).
__kernel void reduce_sum(__global const uint *in, __global uint *partial)
{
  __local uint s[WG];
  uint l = get_local_id(0);
  s[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint h = WG / 2; h > 0; h /= 2) {
    if (l < h)
      s[l] += s[l + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0)
    partial[get_group_id(0)] = s[0];
}

// out = the inclusive prefix sum of in[0..n), by one work-group of WG items:
// each sums its chunk of n / WG, the chunk sums are scanned in local memory
// (Hillis-Steele), then each item writes its chunk's running sums.
__kernel void scan_inclusive(__global const uint *in, __global uint *out, uint n)
{
  __local uint s[WG];
  uint l = get_local_id(0), chunk = n / WG, base = l * chunk;
  uint sum = 0;
  for (uint i = 0; i < chunk; i++)
    sum += in[base + i];
  s[l] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint d = 1; d < WG; d *= 2) {
    uint v = l >= d ? s[l - d] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    s[l] += v;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  uint run = s[l] - sum; /* the sum of the chunks before this one */
  for (uint i = 0; i < chunk; i++) {
    run += in[base + i];
    out[base + i] = run;
  }
}

// bins[v] = how many of in[] are v (in[] < BINS): each work-group counts
// into local bins with atomics, then adds them to the global bins.
__kernel void histogram(__global const uint *in, __global uint *bins)
{
  __local uint local_bins[BINS];
  uint l = get_local_id(0);
  local_bins[l] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_inc(&local_bins[in[get_global_id(0)] % BINS]);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (local_bins[l])
    atomic_add(&bins[l], local_bins[l]);
}
