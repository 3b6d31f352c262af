// Kimi Delta Attention in fp32:
//   linear_into x6: proj = [q | k | v | g | a | b] = x @ [Wq; Wk; Wv; Wg; Wa; Wb]^T     (SGEMM)
//   prep:       causal conv (+ bias) + SiLU of q, k, v (q * head_dim^-0.5), the per-channel decay
//               max(sigmoid(a + a_bias), 1e-6) and beta = sigmoid(b + b_bias), head-major
//   recurrence: sequential over time; one thread per value column keeps its 128-entry state
//               column S[:, j] in registers, row i decaying by the gate of key channel i
//   out_norm:   per-head LayerNorm (weight, bias) * sigmoid(g);  linear_into: out = o @ Wo^T
// head_dim = 128 and conv_size = 4 in every size set.
/* kernrl
problem: L4_8_KimiDeltaAttention
launches:
  - kernel: linear_into
    grid: ["cdiv(num_heads * head_dim, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [x, q_proj_weight, proj, batch_size * seq_len, num_heads * head_dim, hidden_size, 5 * num_heads * head_dim + num_heads, 0]
  - kernel: linear_into
    grid: ["cdiv(num_heads * head_dim, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [x, k_proj_weight, proj, batch_size * seq_len, num_heads * head_dim, hidden_size, 5 * num_heads * head_dim + num_heads, num_heads * head_dim]
  - kernel: linear_into
    grid: ["cdiv(num_heads * head_dim, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [x, v_proj_weight, proj, batch_size * seq_len, num_heads * head_dim, hidden_size, 5 * num_heads * head_dim + num_heads, 2 * num_heads * head_dim]
  - kernel: linear_into
    grid: ["cdiv(num_heads * head_dim, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [x, g_proj_weight, proj, batch_size * seq_len, num_heads * head_dim, hidden_size, 5 * num_heads * head_dim + num_heads, 3 * num_heads * head_dim]
  - kernel: linear_into
    grid: ["cdiv(num_heads * head_dim, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [x, a_proj_weight, proj, batch_size * seq_len, num_heads * head_dim, hidden_size, 5 * num_heads * head_dim + num_heads, 4 * num_heads * head_dim]
  - kernel: linear_into
    grid: ["cdiv(num_heads, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [x, b_proj_weight, proj, batch_size * seq_len, num_heads, hidden_size, 5 * num_heads * head_dim + num_heads, 5 * num_heads * head_dim]
  - kernel: prep
    grid: [batch_size * seq_len, num_heads]
    block: [128]
    args: [proj, q_conv_weight, k_conv_weight, v_conv_weight, q_conv_bias, k_conv_bias, v_conv_bias, a_proj_bias, b_proj_bias, q32, k32, v32, decay, beta, seq_len, num_heads]
  - kernel: recurrence
    grid: [batch_size * num_heads, 2]
    block: [64]
    args: [q32, k32, v32, decay, beta, o32, seq_len]
  - kernel: out_norm
    grid: [batch_size * seq_len, num_heads]
    block: [128]
    args: [o32, proj, o_norm_weight, o_norm_bias, attn, seq_len, num_heads, 5 * num_heads * head_dim + num_heads, norm_eps]
  - kernel: linear_into
    grid: ["cdiv(hidden_size, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [attn, o_proj_weight, out, batch_size * seq_len, hidden_size, num_heads * head_dim, hidden_size, 0]
scratch:
  proj: {dtype: float32, count: "batch_size * seq_len * (5 * num_heads * head_dim + num_heads)"}
  q32: {dtype: float32, count: "batch_size * seq_len * num_heads * head_dim"}
  k32: {dtype: float32, count: "batch_size * seq_len * num_heads * head_dim"}
  v32: {dtype: float32, count: "batch_size * seq_len * num_heads * head_dim"}
  o32: {dtype: float32, count: "batch_size * seq_len * num_heads * head_dim"}
  decay: {dtype: float32, count: "batch_size * seq_len * num_heads * head_dim"}
  beta: {dtype: float32, count: "batch_size * seq_len * num_heads"}
  attn: {dtype: float32, count: "batch_size * seq_len * num_heads * head_dim"}
*/

#define HD 128
#define CONV 4

// ---- tiled SGEMM core: acc = A[m0:m0+128, :] @ W[n0:n0+128, :]^T --------------------------------
// A is [M, K] and W is [N, K], both row-major (K contiguous), i.e. the x @ weight^T of nn.Linear.
// 128x128 block tile, BK = 8, 256 threads, each thread owns an 8x8 sub-tile: rows ty*4+{0..3} and
// 64+ty*4+{0..3}, columns tx*4+{0..3} and 64+tx*4+{0..3}. The next K slab is prefetched into
// registers while the current one is used (two shared buffers, one barrier per slab). Out-of-range
// rows, columns and k are loaded as zeros, so any M, N, K work.
#define GEMM_BM 128
#define GEMM_BK 8
#define GEMM_LD (GEMM_BM + 4)

__device__ __forceinline__ int gemm_row(int i) { return (i < 4 ? 0 : 60) + (threadIdx.x >> 4) * 4 + i; }
__device__ __forceinline__ int gemm_col(int j) { return (j < 4 ? 0 : 60) + (threadIdx.x & 15) * 4 + j; }

__device__ __forceinline__ void gemm_tile(const float* __restrict__ A, const float* __restrict__ W, int M,
                                          int N, int K, int m0, int n0, float acc[8][8]) {
  __shared__ __align__(16) float As[2][GEMM_BK][GEMM_LD];
  __shared__ __align__(16) float Ws[2][GEMM_BK][GEMM_LD];
  const int tid = threadIdx.x;
  const int lk = tid & 7;   // k offset inside the slab this thread loads
  const int lr = tid >> 3;  // row offset (0..31) inside each 32-row quarter this thread loads
  const int tx = tid & 15, ty = tid >> 4;
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
  float ra[4], rw[4];
  const int nk = (K + GEMM_BK - 1) / GEMM_BK;
  // slab 0
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int k = lk, m = m0 + lr + 32 * i, n = n0 + lr + 32 * i;
    ra[i] = (m < M && k < K) ? A[(size_t)m * K + k] : 0.0f;
    rw[i] = (n < N && k < K) ? W[(size_t)n * K + k] : 0.0f;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    As[0][lk][lr + 32 * i] = ra[i];
    Ws[0][lk][lr + 32 * i] = rw[i];
  }
  __syncthreads();
  for (int kt = 0; kt < nk; ++kt) {
    const int cur = kt & 1;
    if (kt + 1 < nk) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int k = (kt + 1) * GEMM_BK + lk, m = m0 + lr + 32 * i, n = n0 + lr + 32 * i;
        ra[i] = (m < M && k < K) ? A[(size_t)m * K + k] : 0.0f;
        rw[i] = (n < N && k < K) ? W[(size_t)n * K + k] : 0.0f;
      }
    }
#pragma unroll
    for (int kk = 0; kk < GEMM_BK; ++kk) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[cur][kk][ty * 4]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[cur][kk][64 + ty * 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Ws[cur][kk][tx * 4]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Ws[cur][kk][64 + tx * 4]);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (kt + 1 < nk) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        As[cur ^ 1][lk][lr + 32 * i] = ra[i];
        Ws[cur ^ 1][lk][lr + 32 * i] = rw[i];
      }
    }
    __syncthreads();
  }
}
// ------------------------------------------------------------------------------------------------

// out[m, col0 + n] (row stride ldo) = a[M, K] @ w[N, K]^T
extern "C" __global__ void __launch_bounds__(256)
    linear_into(const float* __restrict__ a, const float* __restrict__ w, float* __restrict__ out, int M, int N, int K,
                int ldo, int col0) {
  const int m0 = blockIdx.y * GEMM_BM, n0 = blockIdx.x * GEMM_BM;
  float acc[8][8];
  gemm_tile(a, w, M, N, K, m0, n0, acc);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int m = m0 + gemm_row(i);
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int n = n0 + gemm_col(j);
      if (n < N) out[(size_t)m * ldo + col0 + n] = acc[i][j];
    }
  }
}

__device__ float block_sum128(float v, float* red) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = 64; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  const float r = red[0];
  __syncthreads();
  return r;
}

__device__ __forceinline__ float sigmoidf_(float x) { return 1.0f / (1.0f + expf(-x)); }

// Causal depthwise conv (kernel CONV, with bias) + SiLU of column `col` of proj (row stride N) at
// token row `row` (= b * S + s).
__device__ __forceinline__ float conv_silu(const float* __restrict__ proj, int N, const float* __restrict__ w, float bias,
                                           long long row, int s, int col) {
  float y = bias;
#pragma unroll
  for (int j = 0; j < CONV; j++) {
    const int ss = s - (CONV - 1) + j;
    if (ss >= 0) y = fmaf(w[j], proj[(size_t)(row - (CONV - 1) + j) * N + col], y);
  }
  return y / (1.0f + expf(-y));
}

// Per (token, head), 128 threads: LayerNorm of o over the head (weight, bias), times sigmoid(g).
extern "C" __global__ void __launch_bounds__(128)
    out_norm(const float* __restrict__ o32, const float* __restrict__ proj, const float* __restrict__ wn,
             const float* __restrict__ bn, float* __restrict__ attn, int S, int nh, int N, float eps) {
  __shared__ float red[128];
  const long long t = blockIdx.x;
  const int h = blockIdx.y, i = threadIdx.x, b = t / S, s = t % S, D = nh * HD;
  const float o = o32[(((size_t)b * nh + h) * S + s) * HD + i];
  const float mean = block_sum128(o, red) / HD;
  const float dv = o - mean;
  const float var = block_sum128(dv * dv, red) / HD;
  const float g = proj[(size_t)t * N + 3 * D + h * HD + i];
  const float y = (dv * rsqrtf(var + eps) * wn[i] + bn[i]) * sigmoidf_(g);
  attn[(size_t)t * D + h * HD + i] = y;
}

// grid (B*S, nh), 128 threads: thread i = channel i of head h. proj row: [q | k | v | g | a | b]
// with widths D, D, D, D, D, nh.
extern "C" __global__ void __launch_bounds__(128)
    prep(const float* __restrict__ proj, const float* __restrict__ wq, const float* __restrict__ wk,
         const float* __restrict__ wv, const float* __restrict__ bq, const float* __restrict__ bk,
         const float* __restrict__ bv, const float* __restrict__ a_bias, const float* __restrict__ b_bias,
         float* __restrict__ q32, float* __restrict__ k32, float* __restrict__ v32, float* __restrict__ decay,
         float* __restrict__ beta, int S, int nh) {
  const long long t = blockIdx.x;
  const int h = blockIdx.y, i = threadIdx.x, b = t / S, s = t % S;
  const int D = nh * HD, N = 5 * D + nh, c = h * HD + i;
  const float q = conv_silu(proj, N, wq + (size_t)c * CONV, bq[c], t, s, c);
  const float k = conv_silu(proj, N, wk + (size_t)c * CONV, bk[c], t, s, D + c);
  const float v = conv_silu(proj, N, wv + (size_t)c * CONV, bv[c], t, s, 2 * D + c);
  const size_t dst = (((size_t)b * nh + h) * S + s) * HD + i;
  q32[dst] = q * rsqrtf((float)HD);
  k32[dst] = k;
  v32[dst] = v;
  decay[dst] = fmaxf(sigmoidf_(proj[(size_t)t * N + 4 * D + c] + a_bias[c]), 1e-6f);
  if (i == 0) beta[((size_t)b * nh + h) * S + s] = sigmoidf_(proj[(size_t)t * N + 5 * D + h] + b_bias[h]);
}

// grid (B*nh, 2), 64 threads; thread owns state column j = blockIdx.y * 64 + threadIdx.x.
extern "C" __global__ void __launch_bounds__(64)
    recurrence(const float* __restrict__ q32, const float* __restrict__ k32, const float* __restrict__ v32,
               const float* __restrict__ decay, const float* __restrict__ beta, float* __restrict__ o32, int S) {
  __shared__ float ks[HD], qs[HD], as[HD];
  const size_t bh = blockIdx.x;
  const int tid = threadIdx.x, j = blockIdx.y * 64 + tid;
  float st[HD];
#pragma unroll
  for (int i = 0; i < HD; i++) st[i] = 0.0f;
  for (int t = 0; t < S; t++) {
    const size_t row = (bh * S + t) * HD;
    ks[tid] = k32[row + tid];
    ks[tid + 64] = k32[row + tid + 64];
    qs[tid] = q32[row + tid];
    qs[tid + 64] = q32[row + tid + 64];
    as[tid] = decay[row + tid];
    as[tid + 64] = decay[row + tid + 64];
    const float bt = beta[bh * S + t], v = v32[row + j];
    __syncthreads();
    float kv = 0.0f;
#pragma unroll
    for (int i = 0; i < HD; i++) {
      st[i] *= as[i];
      kv = fmaf(st[i], ks[i], kv);
    }
    const float delta = bt * (v - kv);
    float o = 0.0f;
#pragma unroll
    for (int i = 0; i < HD; i++) {
      st[i] = fmaf(ks[i], delta, st[i]);
      o = fmaf(st[i], qs[i], o);
    }
    o32[row + j] = o;
    __syncthreads();  // ks / qs / as are overwritten next step
  }
}
