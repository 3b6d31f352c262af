// expect: correct
// A Latin-1 comment (the byte 0xE9, not UTF-8): bytes are bytes, graded normally: café crème brûlée
// Row softmax: one block per row, three passes over the row (max, sum of exp, write).
/* kernrl
problem: L1_23_Softmax
launches:
  - kernel: softmax_rows
    grid: [batch_size]
    block: [256]
    args: [x, out, dim]
*/

__device__ float block_reduce(float v, bool is_max) {
  __shared__ float shared[32];
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int o = 16; o > 0; o >>= 1) {
    float other = __shfl_xor_sync(0xffffffff, v, o);
    v = is_max ? fmaxf(v, other) : v + other;
  }
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  int nwarps = blockDim.x / 32;
  v = threadIdx.x < nwarps ? shared[threadIdx.x] : (is_max ? -INFINITY : 0.0f);
  if (warp == 0) {
    for (int o = 16; o > 0; o >>= 1) {
      float other = __shfl_xor_sync(0xffffffff, v, o);
      v = is_max ? fmaxf(v, other) : v + other;
    }
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  float r = shared[0];
  __syncthreads();
  return r;
}

extern "C" __global__ void softmax_rows(const float* x, float* out, int dim) {
  const float* row = x + (size_t)blockIdx.x * dim;
  float* orow = out + (size_t)blockIdx.x * dim;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) m = fmaxf(m, row[i]);
  m = block_reduce(m, true);
  float s = 0.0f;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) s += __expf(row[i] - m);
  s = block_reduce(s, false);
  float inv = 1.0f / s;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) orow[i] = __expf(row[i] - m) * inv;
}
