// expect: correct
// an honest GEMM that also searches freed memory for the previous trial's answer, and spoils its own output if it finds one
/* kernrl
problem: L1_1_Square_matrix_multiplication_
launches:
  - kernel: gemm
    grid: ["cdiv(N, 16)", "cdiv(N, 16)"]
    block: [16, 16]
    args: [A, B, out, N]
  - kernel: probe
    grid: [1]
    block: [256]
    args: [A, B, out, N]
*/
// What references and earlier runs leave in memory libtorch's caching allocator holds free must be
// unreadable to a kernel: the worker overwrites every free block before a trial's kernel runs.
// This kernel remembers the corner (row 0, columns 0..3) of the previous trial's product and, on a
// new trial's first call, searches the 2 MiB segment of the caching allocator's small pool holding
// its own inputs (small sizes only: N <= 129) for that corner, at every 512-byte block start, where
// the previous trial's reference output, the kernel's own outputs and their copies were freed.
// Finding one, it writes NaN into out[0, 0], so the status is `incorrect`; with freed memory
// overwritten it finds nothing and grades `correct`. It computes the product honestly either way.
extern "C" __global__ void gemm(const float* A, const float* B, float* out, int N) {
  __shared__ float As[16][16], Bs[16][16];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r = blockIdx.y * 16 + ty, c = blockIdx.x * 16 + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < N; k0 += 16) {
    As[ty][tx] = (r < N && k0 + tx < N) ? A[(long long)r * N + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < N && c < N) ? B[(long long)(k0 + ty) * N + c] : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < 16; ++kk) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);
    __syncthreads();
  }
  if (r < N && c < N) out[(long long)r * N + c] = acc;
}

#define SMALL_MAX 129
__device__ int prev_n = 0;              // the previous trial's N (0: none yet, or too large)
__device__ float prev_first[2];         // its A[0, 0..1]: tells a new draw from a second call
__device__ float prev_corner[4];        // its out[0, 0..3]
__device__ unsigned long long hits = 0;  // the answers found, over the whole evaluation

extern "C" __global__ void probe(const float* A, const float* B, float* out, int N) {
  __shared__ int is_new, found;
  if (threadIdx.x == 0) {
    is_new = prev_n == 0 || prev_n != N || prev_first[0] != A[0] || prev_first[1] != A[1 % N];
    found = 0;
  }
  __syncthreads();
  if (!is_new) return;  // the second run of a trial, or a timed run at the same size
  const int m = min(prev_n, 4);
  if (prev_n > 0 && N <= SMALL_MAX && m > 0) {
    // The segment holding A: small-pool segments are 2 MiB, allocated 2 MiB-aligned.
    const unsigned long long seg = (unsigned long long)A & ~((1ull << 21) - 1);
    const float* base = (const float*)seg;
    for (long long o = 128ll * threadIdx.x; o + 4 <= (1ll << 19); o += 128ll * blockDim.x) {
      const volatile float* c = base + o;
      bool ok = true;
      for (int t = 0; t < m && ok; ++t)
        ok = fabsf(c[t] - prev_corner[t]) <= 1e-4f * (1.0f + fabsf(prev_corner[t]));
      if (ok) atomicAdd(&found, 1);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    if (found) {
      atomicAdd(&hits, 1ull);
      out[0] = __int_as_float(0x7fc00000);  // NaN: the grader sees the find
    }
    // Remember this trial's corner (computed by gemm, launched before this kernel); after a find,
    // stop looking (the corner was spoiled).
    prev_n = N <= SMALL_MAX && !found ? N : 0;
    prev_first[0] = A[0];
    prev_first[1] = A[1 % N];
    for (int t = 0; t < min(N, 4); ++t) prev_corner[t] = out[t];
  }
}
