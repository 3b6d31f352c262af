// expect: runtime_error|timeout
// a 16-byte vector load from an address that is only 4-byte aligned. On an H200 the GPU reports
// this fault 0.6-0.8 s or more after the launch, sometimes after the run's deadline plus the fault
// grace (0.25 + 0.5 s): until the report the kernel is indistinguishable from one still running,
// so the run is cut as a `timeout` (docs/grading.md, "Deadlines"). Either status is right; a
// `correct` or `incorrect` is not.
/* kernrl
problem: L1_1_Square_matrix_multiplication_
launches:
  - kernel: k
    grid: ["cdiv(N, 16)", "cdiv(N, 16)"]
    block: [16, 16]
    args: [A, B, out, N]
*/
extern "C" __global__ void k(const float* A, const float* B, float* out, int N) {
  const int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;
  const float4 v = *reinterpret_cast<const float4*>(A + 1 + 4 * threadIdx.x);
  if (r < N && c < N) out[(long long)r * N + c] = v.x + v.y + v.z + v.w;
}
