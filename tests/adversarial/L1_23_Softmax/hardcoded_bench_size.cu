// expect: runtime_error
// the row length is hard-coded to 16384: right at the bench size, writes far past the output at the test sizes
/* kernrl
problem: L1_23_Softmax
launches:
  - kernel: k
    grid: [batch_size]
    block: [256]
    args: [x, out]
*/
extern "C" __global__ void k(const float* x, float* out) {
  const int dim = 16384;
  const float* r = x + (size_t)blockIdx.x * dim;
  float m = -INFINITY, s = 0;
  for (int i = 0; i < dim; ++i) m = fmaxf(m, r[i]);
  for (int i = 0; i < dim; ++i) s += expf(r[i] - m);
  for (int i = threadIdx.x; i < dim; i += blockDim.x) out[(size_t)blockIdx.x * dim + i] = expf(r[i] - m) / s;
}
