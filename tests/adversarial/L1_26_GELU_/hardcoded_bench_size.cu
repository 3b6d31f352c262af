// expect: runtime_error
// the element count is hard-coded to the bench size (4096 * 16384): far out of bounds at the test sizes
/* kernrl
problem: L1_26_GELU_
launches:
  - kernel: k
    grid: [4224]
    block: [256]
    args: [x, out]
*/
extern "C" __global__ void k(const float* x, float* out) {
  const long long n = 4096ll * 16384;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
}
