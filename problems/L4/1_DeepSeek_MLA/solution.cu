// DeepSeek MLA layer in fp32: SGEMMs for the projections (nn.Linear layout), row RMSNorms, one
// kernel that assembles the per-head q / k / v (rotate-half RoPE on the 64 rope dims, the shared
// rope key broadcast to every head), causal flash attention (SIMT fp32, online softmax; q/k head
// dim 192, v head dim 128) and the output projection. The head dimensions are the model's
// (128 nope, 64 rope, 128 v) in every size set.
/* kernrl
problem: L4_1_DeepSeek_MLA
launches:
  - kernel: linear
    grid: ["cdiv(q_lora_rank, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [x, q_a_proj_weight, cq, batch_size * seq_len, q_lora_rank, hidden_size]
  - kernel: rmsnorm_rows
    grid: [batch_size * seq_len]
    block: [256]
    args: [cq, q_lora_rank, cq, q_lora_rank, q_a_layernorm_weight, q_lora_rank, rms_norm_eps]
  - kernel: linear
    grid: ["cdiv(num_heads * 192, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [cq, q_b_proj_weight, qfull, batch_size * seq_len, num_heads * 192, q_lora_rank]
  - kernel: linear
    grid: ["cdiv(kv_lora_rank + 64, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [x, kv_a_proj_with_mqa_weight, ckv, batch_size * seq_len, kv_lora_rank + 64, hidden_size]
  - kernel: rmsnorm_rows
    grid: [batch_size * seq_len]
    block: [256]
    args: [ckv, kv_lora_rank + 64, cn, kv_lora_rank, kv_a_layernorm_weight, kv_lora_rank, rms_norm_eps]
  - kernel: linear
    grid: ["cdiv(num_heads * 256, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [cn, kv_b_proj_weight, kvfull, batch_size * seq_len, num_heads * 256, kv_lora_rank]
  - kernel: assemble_heads
    grid: [batch_size * seq_len, num_heads]
    block: [128]
    args: [qfull, ckv, kvfull, qh, kh, vh, seq_len, num_heads, kv_lora_rank, rope_theta]
  - kernel: "attention<192, 128, true>"
    grid: ["cdiv(seq_len, 64)", "batch_size * num_heads"]
    block: [256]
    shared_bytes: "(2 * 192 * 68 + 64 * 128 + 64 * 68 + 704) * 4"
    args: [qh, kh, vh, attn, seq_len, num_heads, num_heads, softmax_scale]
  - kernel: linear
    grid: ["cdiv(hidden_size, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [attn, o_proj_weight, out, batch_size * seq_len, hidden_size, num_heads * 128]
scratch:
  cq: {dtype: float32, count: "batch_size * seq_len * q_lora_rank"}
  qfull: {dtype: float32, count: "batch_size * seq_len * num_heads * 192"}
  ckv: {dtype: float32, count: "batch_size * seq_len * (kv_lora_rank + 64)"}
  cn: {dtype: float32, count: "batch_size * seq_len * kv_lora_rank"}
  kvfull: {dtype: float32, count: "batch_size * seq_len * num_heads * 256"}
  qh: {dtype: float32, count: "batch_size * seq_len * num_heads * 192"}
  kh: {dtype: float32, count: "batch_size * seq_len * num_heads * 192"}
  vh: {dtype: float32, count: "batch_size * seq_len * num_heads * 128"}
  attn: {dtype: float32, count: "batch_size * seq_len * num_heads * 128"}
*/

#define NOPE 128
#define ROPE 64
#define VDIM 128
#define QK_DIM (NOPE + ROPE)

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

// out[M, N] = a[M, K] @ w[N, K]^T
extern "C" __global__ void __launch_bounds__(256)
    linear(const float* __restrict__ a, const float* __restrict__ w, float* __restrict__ out, int M, int N, int K) {
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
      if (n < N) out[(size_t)m * N + n] = acc[i][j];
    }
  }
}

// out[row, :n] = w * (in[row, :n] * rsqrt(mean(in[row, :n]^2) + eps)); one block of 256 per row.
// in and out may be the same buffer (every thread reads its elements before the barrier that
// precedes the writes).
extern "C" __global__ void __launch_bounds__(256)
    rmsnorm_rows(const float* in, int in_stride, float* out, int out_stride, const float* __restrict__ w, int n,
                 float eps) {
  __shared__ float red[8];
  const float* src = in + (size_t)blockIdx.x * in_stride;
  float ss = 0.0f;
  for (int c = threadIdx.x; c < n; c += 256) ss = fmaf(src[c], src[c], ss);
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = ss;
  __syncthreads();
  float tot = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) tot += red[i];
  const float r = rsqrtf(tot / (float)n + eps);
  float* dst = out + (size_t)blockIdx.x * out_stride;
  for (int c = threadIdx.x; c < n; c += 256) dst[c] = w[c] * (src[c] * r);
}

// Per (token m = b * S + t, head h): qh / kh rows [QK_DIM] = [nope | rope(pe)], vh row [VDIM], all
// head-major ([B * nh][S][.]). Thread d (128 per block) copies element d of q_nope, k_nope and v;
// threads d < 32 rotate the rope pairs (d, d + 32) of q_pe and of the shared k_pe.
extern "C" __global__ void __launch_bounds__(128)
    assemble_heads(const float* __restrict__ qfull, const float* __restrict__ ckv, const float* __restrict__ kvfull,
                   float* __restrict__ qh, float* __restrict__ kh, float* __restrict__ vh, int S, int nh, int kvr,
                   float theta) {
  const int m = blockIdx.x, h = blockIdx.y, d = threadIdx.x;
  const int b = m / S, t = m - b * S;
  const size_t row = ((size_t)b * nh + h) * S + t;
  const float* qsrc = qfull + ((size_t)m * nh + h) * QK_DIM;
  const float* kvsrc = kvfull + ((size_t)m * nh + h) * (NOPE + VDIM);
  qh[row * QK_DIM + d] = qsrc[d];
  kh[row * QK_DIM + d] = kvsrc[d];
  vh[row * VDIM + d] = kvsrc[NOPE + d];
  if (d < ROPE / 2) {
    const float inv_freq = 1.0f / powf(theta, (float)(2 * d) / (float)ROPE);
    const float ang = (float)t * inv_freq;
    const float c = cosf(ang), s = sinf(ang);
    const float q1 = qsrc[NOPE + d], q2 = qsrc[NOPE + d + ROPE / 2];
    qh[row * QK_DIM + NOPE + d] = q1 * c - q2 * s;
    qh[row * QK_DIM + NOPE + d + ROPE / 2] = q2 * c + q1 * s;
    const float* kpe = ckv + (size_t)m * (kvr + ROPE) + kvr;
    const float k1 = kpe[d], k2 = kpe[d + ROPE / 2];
    kh[row * QK_DIM + NOPE + d] = k1 * c - k2 * s;
    kh[row * QK_DIM + NOPE + d + ROPE / 2] = k2 * c + k1 * s;
  }
}

// ---- tiled attention with an online softmax ----------------------------------------------------
// q: [B * nh][S][QKD], k: [B * nkv][S][QKD], v: [B * nkv][S][VD] (head-major); query head h uses
// key/value head h / (nh / nkv). One block of 256 threads per (64-query tile, b * nh + h)
// walks the key tiles of 64: scores S = Q K^T * scale (masked), online softmax (running row max
// m and row sum l, O rescaled by exp(m_old - m_new)), O += P V; at the end O / l is stored into
// y[b][s][h * VD + d] (token-major, heads side by side: the layout the output projection reads).
// Thread (ty, tx) = (tid / 16, tid % 16) owns query rows ty*4 .. ty*4+3; for the scores it owns
// key columns tx*4 .. tx*4+3, for O the head-dim columns tx + 16c. Q and K are kept transposed in
// shared memory (float4 reads along the rows/keys), P is stored transposed ([key][query]).
#define ATT_LD 68  // padded leading dimension of the transposed tiles (multiple of 4)

template <int QKD, int VD, bool CAUSAL>
__global__ void __launch_bounds__(256)
    attention(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
              float* __restrict__ y, int S, int nh, int nkv, float scale) {
  static_assert(VD % 16 == 0, "value head dim must be a multiple of 16");
  constexpr int NC = VD / 16;
  extern __shared__ __align__(16) float smem[];
  float* Qt = smem;               // [QKD][ATT_LD]
  float* Kt = Qt + QKD * ATT_LD;  // [QKD][ATT_LD]
  float* Vs = Kt + QKD * ATT_LD;  // [64][VD]
  float* Pt = Vs + 64 * VD;       // [64 keys][ATT_LD]
  float* m_s = Pt + 64 * ATT_LD;  // [64] running row max
  float* l_s = m_s + 64;          // [64] running row sum
  float* a_s = l_s + 64;          // [64] rescale factor of the current tile
  float* red_m = a_s + 64;        // [4][64]
  float* red_s = red_m + 256;     // [4][64]
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const int bh = blockIdx.y, b = bh / nh, h = bh % nh, kvh = b * nkv + h / (nh / nkv);
  // Causal: the last query tiles have the most key tiles; start them first.
  const int q0 = (CAUSAL ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x) * 64;
  const float* Qh = q + (size_t)bh * S * QKD;
  const float* Kh = k + (size_t)kvh * S * QKD;
  const float* Vh = v + (size_t)kvh * S * VD;

  for (int i = tid; i < 64 * QKD; i += 256) {
    const int r = i / QKD, d = i - r * QKD;
    Qt[d * ATT_LD + r] = q0 + r < S ? Qh[(size_t)(q0 + r) * QKD + d] : 0.0f;
  }
  if (tid < 64) {
    m_s[tid] = -INFINITY;
    l_s[tid] = 0.0f;
  }
  float o[4][NC];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int c = 0; c < NC; ++c) o[i][c] = 0.0f;

  const int kend = CAUSAL ? min(S, q0 + 64) : S;
  for (int k0 = 0; k0 < kend; k0 += 64) {
    __syncthreads();  // the previous tile's readers of Kt, Vs and Pt are done
    for (int i = tid; i < 64 * QKD; i += 256) {
      const int r = i / QKD, d = i - r * QKD;
      Kt[d * ATT_LD + r] = k0 + r < S ? Kh[(size_t)(k0 + r) * QKD + d] : 0.0f;
    }
    for (int i = tid; i < 64 * VD; i += 256) {
      const int r = i / VD, d = i - r * VD;
      Vs[i] = k0 + r < S ? Vh[(size_t)(k0 + r) * VD + d] : 0.0f;
    }
    __syncthreads();
    // ---- scores for rows ty*4+i, keys tx*4+j
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
#pragma unroll 8
    for (int d = 0; d < QKD; ++d) {
      const float4 a4 = *reinterpret_cast<const float4*>(&Qt[d * ATT_LD + ty * 4]);
      const float4 b4 = *reinterpret_cast<const float4*>(&Kt[d * ATT_LD + tx * 4]);
      const float a[4] = {a4.x, a4.y, a4.z, a4.w};
      const float bb[4] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], bb[j], acc[i][j]);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int kj = k0 + tx * 4 + j;
      float s[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int qi = q0 + ty * 4 + i;
        const bool masked = kj >= S || (CAUSAL && kj > qi);
        s[i] = masked ? -INFINITY : acc[i][j] * scale;
      }
      *reinterpret_cast<float4*>(&Pt[(tx * 4 + j) * ATT_LD + ty * 4]) = make_float4(s[0], s[1], s[2], s[3]);
    }
    __syncthreads();
    // ---- online softmax: row r = tid % 64, this thread's 16 keys = part * 16 .. part * 16 + 15
    {
      const int r = tid & 63, part = tid >> 6;
      float pm = -INFINITY;
#pragma unroll
      for (int e = 0; e < 16; ++e) pm = fmaxf(pm, Pt[(part * 16 + e) * ATT_LD + r]);
      red_m[part * 64 + r] = pm;
      __syncthreads();
      const float mt = fmaxf(fmaxf(red_m[r], red_m[64 + r]), fmaxf(red_m[128 + r], red_m[192 + r]));
      const float m_old = m_s[r];
      const float m_new = fmaxf(m_old, mt);
      const float base = m_new == -INFINITY ? 0.0f : m_new;  // a fully masked row keeps p = 0
      float ps = 0.0f;
#pragma unroll
      for (int e = 0; e < 16; ++e) {
        float* pp = &Pt[(part * 16 + e) * ATT_LD + r];
        const float p = __expf(*pp - base);
        *pp = p;
        ps += p;
      }
      red_s[part * 64 + r] = ps;
      __syncthreads();
      if (part == 0) {
        const float alpha = m_old == -INFINITY ? 0.0f : __expf(m_old - base);
        l_s[r] = l_s[r] * alpha + ((red_s[r] + red_s[64 + r]) + (red_s[128 + r] + red_s[192 + r]));
        m_s[r] = m_new;
        a_s[r] = alpha;
      }
      __syncthreads();
    }
    // ---- O = O * alpha + P V
    {
      float al[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) al[i] = a_s[ty * 4 + i];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int c = 0; c < NC; ++c) o[i][c] *= al[i];
#pragma unroll 4
      for (int j = 0; j < 64; ++j) {
        const float4 p4 = *reinterpret_cast<const float4*>(&Pt[j * ATT_LD + ty * 4]);
        const float p[4] = {p4.x, p4.y, p4.z, p4.w};
#pragma unroll
        for (int c = 0; c < NC; ++c) {
          const float vv = Vs[j * VD + tx + 16 * c];
#pragma unroll
          for (int i = 0; i < 4; ++i) o[i][c] = fmaf(p[i], vv, o[i][c]);
        }
      }
    }
  }
  __syncthreads();
  const int E = nh * VD;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int r = ty * 4 + i, qi = q0 + r;
    if (qi < S) {
      const float inv = 1.0f / l_s[r];
#pragma unroll
      for (int c = 0; c < NC; ++c) y[((size_t)b * S + qi) * E + h * VD + tx + 16 * c] = o[i][c] * inv;
    }
  }
}
// shared bytes: (2 * QKD * 68 + 64 * VD + 64 * 68 + 704) * 4
