// The library half of the compile + link test.
extern "C" __device__ float twice_plus(float x, float y)
{
  return 2.0f * x + y;
}
