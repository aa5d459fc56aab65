// Seed 003's convolution for CUDA devices (the PTX twin of conv.cl). CUDA
// has no native specialization constants: the coefficients come in the
// emulated buffer, the kernel's last parameter, at offset 0.
struct coeff_t {
  float c[3][3];
};

extern "C" __global__ void convolution(const float *in, float *out, unsigned width,
                                       unsigned height, const unsigned char *spec_consts)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= (int)width || y >= (int)height)
    return;
  const coeff_t *coeff = (const coeff_t *)spec_consts;
  float acc = 0.0f;
  for (int i = -1; i <= 1; i++) {
    if (y + i < 0 || y + i >= (int)height)
      continue;
    for (int j = -1; j <= 1; j++) {
      if (x + j < 0 || x + j >= (int)width)
        continue;
      acc += coeff->c[i + 1][j + 1] * in[(y + i) * (int)width + x + j];
    }
  }
  out[y * (int)width + x] = acc;
}
