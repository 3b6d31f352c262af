// DeepSeek-V3 MoE in fp32:
//   router:   one block per token; logits (64 experts x 4 partial sums, fixed-order reduction),
//             then one thread does the group-limited top-k selection (choices outside the kept
//             groups count as 0) and the weight normalization
//   grouping: (token, slot) pairs sorted by expert with a counting sort (atomics; the order inside an
//             expert's group does not change any result)
//   experts:  grouped SGEMMs  gu = x[token] @ [gate; up]^T -> h = silu(gate) * up -> y = h @ down^T;
//             128-row tiles never straddle two experts
//   shared:   the same three steps for the shared expert on all tokens
//   combine:  out = sum_j w_j y_j + shared, j in slot order (deterministic)
// Assumes n_routed_experts <= 64 (one router thread quartet per expert), as in every size set.
/* kernrl
problem: L4_2_DeepSeek_MoE
launches:
  - kernel: router
    grid: [batch_size * seq_len]
    block: [256]
    args: [x, gate_weight, e_score_correction_bias, topk_idx, topk_w, hidden_size, n_routed_experts, n_group, topk_group, num_experts_per_tok, routed_scaling_factor]
  - kernel: count_experts
    grid: ["cdiv(batch_size * seq_len * num_experts_per_tok, 256)"]
    block: [256]
    args: [topk_idx, counts, batch_size * seq_len * num_experts_per_tok]
  - kernel: scan_experts
    grid: [1]
    block: [1]
    args: [counts, offsets, tile_start, n_routed_experts]
  - kernel: scatter_rows
    grid: ["cdiv(batch_size * seq_len * num_experts_per_tok, 256)"]
    block: [256]
    args: [topk_idx, offsets, cursor, row_token, pair_row, batch_size * seq_len * num_experts_per_tok, num_experts_per_tok]
  - kernel: gate_up_gemm
    grid: ["cdiv(2 * moe_intermediate_size, 128)", "cdiv(batch_size * seq_len * num_experts_per_tok, 128) + n_routed_experts"]
    block: [256]
    args: [x, experts_gate_proj, experts_up_proj, offsets, tile_start, row_token, gu, n_routed_experts, hidden_size, moe_intermediate_size]
  - kernel: swiglu
    grid: [4096]
    block: [256]
    args: [gu, h, batch_size * seq_len * num_experts_per_tok, moe_intermediate_size]
  - kernel: down_gemm
    grid: ["cdiv(hidden_size, 128)", "cdiv(batch_size * seq_len * num_experts_per_tok, 128) + n_routed_experts"]
    block: [256]
    args: [h, experts_down_proj, offsets, tile_start, y, n_routed_experts, hidden_size, moe_intermediate_size]
  - kernel: shared_gate_up_gemm
    grid: ["cdiv(2 * shared_intermediate_size, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [x, shared_gate_proj, shared_up_proj, sgu, batch_size * seq_len, hidden_size, shared_intermediate_size]
  - kernel: swiglu
    grid: [4096]
    block: [256]
    args: [sgu, sh, batch_size * seq_len, shared_intermediate_size]
  - kernel: gemm_nt
    grid: ["cdiv(hidden_size, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [sh, shared_down_proj, sy, batch_size * seq_len, hidden_size, shared_intermediate_size]
  - kernel: combine
    grid: [4096]
    block: [256]
    args: [y, topk_w, pair_row, sy, out, batch_size * seq_len, hidden_size, num_experts_per_tok]
scratch:
  topk_idx: {dtype: int32, count: "batch_size * seq_len * num_experts_per_tok"}
  topk_w: {dtype: float32, count: "batch_size * seq_len * num_experts_per_tok"}
  counts: {dtype: int32, count: "n_routed_experts"}
  cursor: {dtype: int32, count: "n_routed_experts"}
  offsets: {dtype: int32, count: "n_routed_experts + 1"}
  tile_start: {dtype: int32, count: "n_routed_experts + 1"}
  row_token: {dtype: int32, count: "batch_size * seq_len * num_experts_per_tok"}
  pair_row: {dtype: int32, count: "batch_size * seq_len * num_experts_per_tok"}
  gu: {dtype: float32, count: "batch_size * seq_len * num_experts_per_tok * 2 * moe_intermediate_size"}
  h: {dtype: float32, count: "batch_size * seq_len * num_experts_per_tok * moe_intermediate_size"}
  y: {dtype: float32, count: "batch_size * seq_len * num_experts_per_tok * hidden_size"}
  sgu: {dtype: float32, count: "batch_size * seq_len * 2 * shared_intermediate_size"}
  sh: {dtype: float32, count: "batch_size * seq_len * shared_intermediate_size"}
  sy: {dtype: float32, count: "batch_size * seq_len * hidden_size"}
*/
#define MAX_EXPERTS 64

// ---- fp32 tile GEMM: C[m, n] = sum_k A(m, k) * B(n, k) -----------------------------------------
// 128x128 block tile, BK = 8, 256 threads, each thread owns an 8x8 sub-tile: rows ty*4+{0..3} and
// 64+ty*4+{0..3}, columns tx*4+{0..3} and 64+tx*4+{0..3} (tx = tid % 16, ty = tid / 16). The next
// K slab is prefetched into registers while the current one is used (two shared buffers, one
// barrier per slab). la(m, k) / lb(n, k) return floats and are only called in range (zeros are
// used outside); st(m, n, acc) is only called for in-range outputs (m < M, n < N).
#define GEMM_BM 128
#define GEMM_BK 8
#define GEMM_LD (GEMM_BM + 4)

template <class LA, class LB, class ST>
__device__ __forceinline__ void sgemm_tile(int M, int N, int K, int m0, int n0, LA la, LB lb, ST st) {
  __shared__ __align__(16) float As[2][GEMM_BK][GEMM_LD];
  __shared__ __align__(16) float Bs[2][GEMM_BK][GEMM_LD];
  const int tid = threadIdx.x;
  const int lk = tid & 7;   // k offset inside the slab this thread loads
  const int lr = tid >> 3;  // row offset (0..31) inside each 32-row quarter this thread loads
  const int tx = tid & 15, ty = tid >> 4;
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
  float ra[4], rb[4];
  const int nk = (K + GEMM_BK - 1) / GEMM_BK;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int k = lk, m = m0 + lr + 32 * i, n = n0 + lr + 32 * i;
    ra[i] = (m < M && k < K) ? la(m, k) : 0.0f;
    rb[i] = (n < N && k < K) ? lb(n, k) : 0.0f;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    As[0][lk][lr + 32 * i] = ra[i];
    Bs[0][lk][lr + 32 * i] = rb[i];
  }
  __syncthreads();
  for (int kt = 0; kt < nk; ++kt) {
    const int cur = kt & 1;
    if (kt + 1 < nk) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int k = (kt + 1) * GEMM_BK + lk, m = m0 + lr + 32 * i, n = n0 + lr + 32 * i;
        ra[i] = (m < M && k < K) ? la(m, k) : 0.0f;
        rb[i] = (n < N && k < K) ? lb(n, k) : 0.0f;
      }
    }
#pragma unroll
    for (int kk = 0; kk < GEMM_BK; ++kk) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[cur][kk][ty * 4]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[cur][kk][64 + ty * 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[cur][kk][tx * 4]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[cur][kk][64 + tx * 4]);
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
        Bs[cur ^ 1][lk][lr + 32 * i] = rb[i];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int m = m0 + (i < 4 ? 0 : 60) + ty * 4 + i;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int n = n0 + (j < 4 ? 0 : 60) + tx * 4 + j;
      if (n < N) st(m, n, acc[i][j]);
    }
  }
}
// ---- end fp32 tile GEMM ----

extern "C" __global__ void __launch_bounds__(256)
    router(const float* __restrict__ x, const float* __restrict__ gw, const float* __restrict__ bias,
           int* __restrict__ topk_idx, float* __restrict__ topk_w, int H, int E, int G, int TG, int K, float scale) {
  __shared__ float part[256];
  __shared__ float score[MAX_EXPERTS], choice[MAX_EXPERTS], gscore[MAX_EXPERTS];
  __shared__ int kept[MAX_EXPERTS], taken[MAX_EXPERTS];
  const long long t = blockIdx.x;
  const int tid = threadIdx.x, e = tid / 4, p = tid % 4;
  float acc = 0.0f;
  if (e < E) {
    const float* xr = x + (size_t)t * H;
    const float* wr = gw + (size_t)e * H;
    for (int k = p; k < H; k += 4) acc = fmaf(xr[k], wr[k], acc);
  }
  part[tid] = acc;
  __syncthreads();
  if (tid < E) {
    const float logit = ((part[4 * tid] + part[4 * tid + 1]) + part[4 * tid + 2]) + part[4 * tid + 3];
    score[tid] = 1.0f / (1.0f + expf(-logit));
    choice[tid] = score[tid] + bias[tid];
    taken[tid] = 0;
  }
  __syncthreads();
  if (tid != 0) return;
  const int per = E / G;
  for (int g = 0; g < G; g++) {  // sum of the two largest choices of the group
    float m1 = -INFINITY, m2 = -INFINITY;
    for (int i = g * per; i < (g + 1) * per; i++) {
      const float v = choice[i];
      if (v > m1) {
        m2 = m1;
        m1 = v;
      } else if (v > m2) {
        m2 = v;
      }
    }
    gscore[g] = m1 + m2;
    kept[g] = 0;
  }
  for (int r = 0; r < TG; r++) {  // keep the TG best groups
    int best = -1;
    for (int g = 0; g < G; g++)
      if (!kept[g] && (best < 0 || gscore[g] > gscore[best])) best = g;
    kept[best] = 1;
  }
  float sum = 0.0f;
  int sel[MAX_EXPERTS];
  for (int r = 0; r < K; r++) {  // K largest choices, 0 for experts outside the kept groups
    int best = -1;
    float bv = 0.0f;
    for (int i = 0; i < E; i++) {
      if (taken[i]) continue;
      const float v = kept[i / per] ? choice[i] : 0.0f;
      if (best < 0 || v > bv) best = i, bv = v;
    }
    taken[best] = 1;
    sel[r] = best;
    sum += score[best];
  }
  const float inv = scale / (sum + 1e-20f);
  for (int r = 0; r < K; r++) {
    topk_idx[t * K + r] = sel[r];
    topk_w[t * K + r] = score[sel[r]] * inv;
  }
}

extern "C" __global__ void count_experts(const int* __restrict__ idx, int* counts, int pairs) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < pairs) atomicAdd(&counts[idx[i]], 1);
}

extern "C" __global__ void scan_experts(const int* __restrict__ counts, int* offsets, int* tile_start, int experts) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int rows = 0, tiles = 0;
  for (int e = 0; e < experts; e++) {
    offsets[e] = rows;
    tile_start[e] = tiles;
    rows += counts[e];
    tiles += (counts[e] + GEMM_BM - 1) / GEMM_BM;
  }
  offsets[experts] = rows;
  tile_start[experts] = tiles;
}

extern "C" __global__ void scatter_rows(const int* __restrict__ idx, const int* __restrict__ offsets, int* cursor,
                                        int* row_token, int* pair_row, int pairs, int top_k) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= pairs) return;
  const int e = idx[i];
  const int row = offsets[e] + atomicAdd(&cursor[e], 1);
  row_token[row] = i / top_k;
  pair_row[i] = row;
}

// Which expert owns row tile `tile`; -1 past the last tile.
__device__ __forceinline__ int tile_expert(const int* tile_start, int experts, int tile) {
  for (int e = 0; e < experts; e++)
    if (tile >= tile_start[e] && tile < tile_start[e + 1]) return e;
  return -1;
}

extern "C" __global__ void __launch_bounds__(256)
    gate_up_gemm(const float* __restrict__ x, const float* __restrict__ w1, const float* __restrict__ w3,
                 const int* __restrict__ offsets, const int* __restrict__ tile_start, const int* __restrict__ row_token,
                 float* __restrict__ gu, int experts, int hidden, int inter) {
  const int e = tile_expert(tile_start, experts, blockIdx.y);
  if (e < 0) return;
  const int r0 = offsets[e] + (blockIdx.y - tile_start[e]) * GEMM_BM;
  const int rows = offsets[e + 1] - r0;
  const float* g = w1 + (size_t)e * inter * hidden;
  const float* u = w3 + (size_t)e * inter * hidden;
  const int n2 = 2 * inter;
  sgemm_tile(
      rows, n2, hidden, 0, blockIdx.x * GEMM_BM, [&](int m, int k) { return x[(size_t)row_token[r0 + m] * hidden + k]; },
      [&](int n, int k) { return n < inter ? g[(size_t)n * hidden + k] : u[(size_t)(n - inter) * hidden + k]; },
      [&](int m, int n, float v) { gu[(size_t)(r0 + m) * n2 + n] = v; });
}

extern "C" __global__ void swiglu(const float* __restrict__ gu, float* __restrict__ h, int rows, int inter) {
  const long long total = (long long)rows * inter;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
    const long long r = i / inter, c = i % inter;
    const float g = gu[r * 2 * inter + c];
    const float u = gu[r * 2 * inter + inter + c];
    h[i] = g / (1.0f + expf(-g)) * u;
  }
}

extern "C" __global__ void __launch_bounds__(256)
    down_gemm(const float* __restrict__ h, const float* __restrict__ w2, const int* __restrict__ offsets,
              const int* __restrict__ tile_start, float* __restrict__ y, int experts, int hidden, int inter) {
  const int e = tile_expert(tile_start, experts, blockIdx.y);
  if (e < 0) return;
  const int r0 = offsets[e] + (blockIdx.y - tile_start[e]) * GEMM_BM;
  const int rows = offsets[e + 1] - r0;
  const float* d = w2 + (size_t)e * hidden * inter;
  sgemm_tile(
      rows, hidden, inter, 0, blockIdx.x * GEMM_BM, [&](int m, int k) { return h[(size_t)(r0 + m) * inter + k]; },
      [&](int n, int k) { return d[(size_t)n * inter + k]; },
      [&](int m, int n, float v) { y[(size_t)(r0 + m) * hidden + n] = v; });
}

extern "C" __global__ void __launch_bounds__(256)
    shared_gate_up_gemm(const float* __restrict__ x, const float* __restrict__ wg, const float* __restrict__ wu,
                        float* __restrict__ sgu, int M, int K, int inter) {
  const int N = 2 * inter;
  sgemm_tile(
      M, N, K, blockIdx.y * GEMM_BM, blockIdx.x * GEMM_BM, [&](int m, int k) { return x[(size_t)m * K + k]; },
      [&](int n, int k) { return n < inter ? wg[(size_t)n * K + k] : wu[(size_t)(n - inter) * K + k]; },
      [&](int m, int n, float v) { sgu[(size_t)m * N + n] = v; });
}

// c[M, N] = a[M, K] @ w[N, K]^T
extern "C" __global__ void __launch_bounds__(256)
    gemm_nt(const float* __restrict__ a, const float* __restrict__ w, float* __restrict__ c, int M, int N, int K) {
  sgemm_tile(
      M, N, K, blockIdx.y * GEMM_BM, blockIdx.x * GEMM_BM, [&](int m, int k) { return a[(size_t)m * K + k]; },
      [&](int n, int k) { return w[(size_t)n * K + k]; }, [&](int m, int n, float v) { c[(size_t)m * N + n] = v; });
}

extern "C" __global__ void combine(const float* __restrict__ y, const float* __restrict__ wts, const int* __restrict__ pair_row,
                                   const float* __restrict__ sy, float* __restrict__ out, int tokens, int hidden, int top_k) {
  const long long total = (long long)tokens * hidden;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
    const long long t = i / hidden, c = i % hidden;
    float acc = 0.0f;
    for (int j = 0; j < top_k; j++) acc += wts[t * top_k + j] * y[(size_t)pair_row[t * top_k + j] * hidden + c];
    out[i] = acc + sy[i];
  }
}
