// expect: runtime_error
// dim1 and dim2 hard-coded to the bench size (1024, 1024): reads and writes out of bounds at the test sizes
/* kernrl
problem: L1_47_Sum_reduction_over_a_dimension
launches:
  - kernel: k
    grid: [32, batch_size]
    block: [32, 8]
    args: [x, out]
*/
extern "C" __global__ void k(const float* x, float* out) {
  const int dim1 = 1024, dim2 = 1024;
  __shared__ float part[8][33];
  const int col = blockIdx.x * 32 + threadIdx.x;
  const long long b = blockIdx.y;
  float s = 0.0f;
  for (int r = threadIdx.y; r < dim1; r += 8) s += x[(b * dim1 + r) * dim2 + col];
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0) {
    float t = 0.0f;
    for (int i = 0; i < 8; ++i) t += part[i][threadIdx.x];
    out[b * dim2 + col] = t;
  }
}
