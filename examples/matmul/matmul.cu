// matmul's four kernels for CUDA devices (the PTX twin of matmul.cl), in
// the CUDA dialect clang compiles without the CUDA headers (gen_ptx.sh):
// NVVM builtins for the thread indices, barriers and atomics.
#define TILE 16
#define WG 256
#define BINS 256
#define KERNEL extern "C" __attribute__((global))
#define SHARED __attribute__((shared))
#define TID_X __nvvm_read_ptx_sreg_tid_x()
#define TID_Y __nvvm_read_ptx_sreg_tid_y()
#define CTA_X __nvvm_read_ptx_sreg_ctaid_x()
#define CTA_Y __nvvm_read_ptx_sreg_ctaid_y()
#define NTID_X __nvvm_read_ptx_sreg_ntid_x()
#define BARRIER() __nvvm_bar_sync(0)

KERNEL void matmul_tiled(const float *a, const float *b, float *c, unsigned n)
{
  SHARED static float ta[TILE][TILE], tb[TILE][TILE];
  unsigned tx = TID_X, ty = TID_Y;
  unsigned col = CTA_X * TILE + tx, row = CTA_Y * TILE + ty;
  float acc = 0.0f;
  for (unsigned t = 0; t < n; t += TILE) {
    ta[ty][tx] = a[row * n + t + tx];
    tb[ty][tx] = b[(t + ty) * n + col];
    BARRIER();
    for (unsigned k = 0; k < TILE; k++)
      acc += ta[ty][k] * tb[k][tx];
    BARRIER();
  }
  c[row * n + col] = acc;
}

KERNEL void reduce_sum(const unsigned *in, unsigned *partial)
{
  SHARED static unsigned s[WG];
  unsigned l = TID_X;
  s[l] = in[CTA_X * NTID_X + l];
  BARRIER();
  for (unsigned h = WG / 2; h > 0; h /= 2) {
    if (l < h)
      s[l] += s[l + h];
    BARRIER();
  }
  if (l == 0)
    partial[CTA_X] = s[0];
}

KERNEL void scan_inclusive(const unsigned *in, unsigned *out, unsigned n)
{
  SHARED static unsigned s[WG];
  unsigned l = TID_X, chunk = n / WG, base = l * chunk;
  unsigned sum = 0;
  for (unsigned i = 0; i < chunk; i++)
    sum += in[base + i];
  s[l] = sum;
  BARRIER();
  for (unsigned d = 1; d < WG; d *= 2) {
    unsigned v = l >= d ? s[l - d] : 0;
    BARRIER();
    s[l] += v;
    BARRIER();
  }
  unsigned run = s[l] - sum;
  for (unsigned i = 0; i < chunk; i++) {
    run += in[base + i];
    out[base + i] = run;
  }
}

KERNEL void histogram(const unsigned *in, unsigned *bins)
{
  SHARED static unsigned local_bins[BINS];
  unsigned l = TID_X;
  local_bins[l] = 0;
  BARRIER();
  __nvvm_atom_add_gen_i((int *)&local_bins[in[CTA_X * NTID_X + l] % BINS], 1);
  BARRIER();
  if (local_bins[l])
    __nvvm_atom_add_gen_i((int *)&bins[l], (int)local_bins[l]);
}
