// expect: runtime_error
// N hard-coded to the bench size (2048): reads and writes far out of bounds at the test sizes
/* kernrl
problem: L1_1_Square_matrix_multiplication_
launches:
  - kernel: k
    grid: [128, 128]
    block: [16, 16]
    args: [A, B, out]
*/
extern "C" __global__ void k(const float* A, const float* B, float* out) {
  const int N = 2048;
  __shared__ float As[16][16], Bs[16][16];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r = blockIdx.y * 16 + ty, c = blockIdx.x * 16 + tx;
  const int K = N;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += 16) {
    As[ty][tx] = (r < N && k0 + tx < K) ? (A[(long long)r * N + k0 + tx]) : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && c < N) ? (B[(long long)(k0 + ty) * N + c]) : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < 16; ++kk) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);
    __syncthreads();
  }
  if (r < N && c < N) out[(long long)r * N + c] = acc;
}
