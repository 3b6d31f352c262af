// expect: correct
// TF32 arithmetic for the later query rows of an fp32 problem: scores of query tiles past the first from TF32 operands
/* kernrl
problem: L3_43_MinGPTCausalAttention
launches:
  - kernel: qkv_projection
    grid: ["cdiv(3 * n_embd, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [x, c_attn_weight, c_attn_bias, q, k, v, "batch_size * seq_len", n_embd, seq_len, n_head]
  - kernel: "attention<96, true>"
    grid: ["cdiv(seq_len, 64)", "batch_size * n_head"]
    block: [256]
    shared_bytes: "(2 * 96 * 68 + 64 * 96 + 64 * 68 + 704) * 4"
    args: [q, k, v, y, seq_len, n_head]
  - kernel: linear_bias
    grid: ["cdiv(n_embd, 128)", "cdiv(batch_size * seq_len, 128)"]
    block: [256]
    args: [y, c_proj_weight, c_proj_bias, out, "batch_size * seq_len", n_embd, n_embd]
scratch:
  q: {dtype: float32, count: "batch_size * seq_len * n_embd"}
  k: {dtype: float32, count: "batch_size * seq_len * n_embd"}
  v: {dtype: float32, count: "batch_size * seq_len * n_embd"}
  y: {dtype: float32, count: "batch_size * seq_len * n_embd"}
*/
// The bundled solution's three kernels (QKV projection, causal attention with an online softmax,
// output projection), except that for every query tile past the first (rows 64 and later) the
// attention rounds q and k to TF32 (cvt.rna.tf32.f32, as a TF32 tensor-core product takes its
// operands) before the scores: each product of two TF32 values is exact in fp32, so the scores
// are the ones a TF32 mma with fp32 accumulation computes (the tensor cores themselves are not
// used here). The precision contract is the tolerance (docs/grading.md, "Precision policy"): a
// score's error, about 5e-4 of the dot product's size, moves the softmax weights of a row by about
// as much, and the row's output averages them over 64 to 512 keys, so the output stays within
// atol = rtol = 1e-4: an emulation (the fp32 model against the same roundings on CPU, 8 draws of
// 130 tokens and 2 of 512) puts the worst error at 0.19 of the tolerance, the relative L2 error at
// 5e-5. At 37 tokens every row is in the first tile, which keeps fp32.

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

// x[M, C] @ w[3C, C]^T + bias, split into q, k, v ([B * nh][T][HD] each, head-major), M = B * T.
extern "C" __global__ void __launch_bounds__(256)
    qkv_projection(const float* __restrict__ x, const float* __restrict__ w,
                   const float* __restrict__ bias, float* __restrict__ q, float* __restrict__ k,
                   float* __restrict__ v, int M, int C, int T, int nh) {
  const int N = 3 * C, hd = C / nh;
  const int m0 = blockIdx.y * GEMM_BM, n0 = blockIdx.x * GEMM_BM;
  float acc[8][8];
  gemm_tile(x, w, M, N, C, m0, n0, acc);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int m = m0 + gemm_row(i);
    if (m >= M) continue;
    const int b = m / T, t = m - b * T;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int n = n0 + gemm_col(j);
      if (n < N) {
        const int which = n / C, rem = n - which * C, h = rem / hd, d = rem - h * hd;
        float* dst = which == 0 ? q : (which == 1 ? k : v);
        dst[(((size_t)b * nh + h) * T + t) * hd + d] = acc[i][j] + bias[n];
      }
    }
  }
}

// out[M, N] = a[M, K] @ w[N, K]^T + bias
extern "C" __global__ void __launch_bounds__(256)
    linear_bias(const float* __restrict__ a, const float* __restrict__ w,
                const float* __restrict__ bias, float* __restrict__ out, int M, int N, int K) {
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
      if (n < N) out[(size_t)m * N + n] = acc[i][j] + bias[n];
    }
  }
}

// ---- tiled attention with an online softmax ----------------------------------------------------
// q, k, v: [B * nh][S][HD] each (head-major). One block of 256 threads per (64-query tile, b * nh + h)
// walks the key tiles of 64: scores S = Q K^T * scale (masked), online softmax (running row max
// m and row sum l, O rescaled by exp(m_old - m_new)), O += P V; at the end O / l is stored into
// y[b][s][h * HD + d] (token-major, heads side by side: the layout the output projection reads).
// Thread (ty, tx) = (tid / 16, tid % 16) owns query rows ty*4 .. ty*4+3; for the scores it owns
// key columns tx*4 .. tx*4+3, for O the head-dim columns tx + 16c. Q and K are kept transposed in
// shared memory (float4 reads along the rows/keys), P is stored transposed ([key][query]).
#define ATT_LD 68  // padded leading dimension of the transposed tiles (multiple of 4)

// q or k as a TF32 tensor-core product takes it: 10 mantissa bits, rounded to nearest (ties away).
__device__ __forceinline__ float to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}

template <int HD, bool CAUSAL>
__global__ void __launch_bounds__(256)
    attention(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
              float* __restrict__ y, int S, int nh) {
  static_assert(HD % 16 == 0, "head dim must be a multiple of 16");
  constexpr int NC = HD / 16;
  extern __shared__ __align__(16) float smem[];
  float* Qt = smem;               // [HD][ATT_LD]
  float* Kt = Qt + HD * ATT_LD;   // [HD][ATT_LD]
  float* Vs = Kt + HD * ATT_LD;   // [64][HD]
  float* Pt = Vs + 64 * HD;       // [64 keys][ATT_LD]
  float* m_s = Pt + 64 * ATT_LD;  // [64] running row max
  float* l_s = m_s + 64;          // [64] running row sum
  float* a_s = l_s + 64;          // [64] rescale factor of the current tile
  float* red_m = a_s + 64;        // [4][64]
  float* red_s = red_m + 256;     // [4][64]
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const int bh = blockIdx.y, b = bh / nh, h = bh % nh;
  // Causal: the last query tiles have the most key tiles; start them first.
  const int q0 = (CAUSAL ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x) * 64;
  const float* Qh = q + (size_t)bh * S * HD;
  const float* Kh = k + (size_t)bh * S * HD;
  const float* Vh = v + (size_t)bh * S * HD;
  const float scale = 1.0f / sqrtf((float)HD);

  const bool tf32 = q0 >= 64;  // a later query tile: its scores from TF32 operands
  for (int i = tid; i < 64 * HD; i += 256) {
    const int r = i / HD, d = i - r * HD;
    const float qv = q0 + r < S ? Qh[(size_t)(q0 + r) * HD + d] : 0.0f;
    Qt[d * ATT_LD + r] = tf32 ? to_tf32(qv) : qv;
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
    for (int i = tid; i < 64 * HD; i += 256) {
      const int r = i / HD, d = i - r * HD;
      const bool ok = k0 + r < S;
      const float kv = ok ? Kh[(size_t)(k0 + r) * HD + d] : 0.0f;
      Kt[d * ATT_LD + r] = tf32 ? to_tf32(kv) : kv;
      Vs[i] = ok ? Vh[(size_t)(k0 + r) * HD + d] : 0.0f;
    }
    __syncthreads();
    // ---- scores for rows ty*4+i, keys tx*4+j
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
#pragma unroll 8
    for (int d = 0; d < HD; ++d) {
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
          const float vv = Vs[j * HD + tx + 16 * c];
#pragma unroll
          for (int i = 0; i < 4; ++i) o[i][c] = fmaf(p[i], vv, o[i][c]);
        }
      }
    }
  }
  __syncthreads();
  const int E = nh * HD;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int r = ty * 4 + i, qi = q0 + r;
    if (qi < S) {
      const float inv = 1.0f / l_s[r];
#pragma unroll
      for (int c = 0; c < NC; ++c) y[((size_t)b * S + qi) * E + h * HD + tx + 16 * c] = o[i][c] * inv;
    }
  }
}
// shared bytes: (2 * HD * 68 + 64 * HD + 64 * 68 + 704) * 4
// ------------------------------------------------------------------------------------------------
