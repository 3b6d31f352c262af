// Scene-change detection: (1) blocks accumulate sum |f1 - f2|, sum |f1| and both 32-bin
// histograms of a slice of one pair into zeroed scratch (atomics); (2) one warp per pair
// finalises sad_score, chi_sq and the decision.
/* kernrl
problem: L8_8_SceneChangeDetect
launches:
  - kernel: accumulate
    grid: [min(cdiv(height * width, 4096), 64), batch]
    block: [256]
    args: [frame1, frame2, sums, hist, height * width]
  - kernel: finalize
    grid: [batch]
    block: [32]
    args: [sums, hist, is_scene_change, sad_score, chi_sq, height * width, sad_threshold, hist_threshold]
scratch:
  sums: {dtype: float32, count: "2 * batch"}
  hist: {dtype: int32, count: "batch * 64"}
*/

// Bin of a pixel: trunc(clamp(v * 31, 0, 31)).
__device__ __forceinline__ int bin32(float v) {
  float s = fminf(fmaxf(v * 31.0f, 0.0f), 31.0f);
  return (int)s;
}

extern "C" __global__ void accumulate(const float* f1, const float* f2, float* sums, int* hist, int n) {
  __shared__ int h[64];
  __shared__ float red[2][8];
  int pair = blockIdx.y;
  if (threadIdx.x < 64) h[threadIdx.x] = 0;
  __syncthreads();
  const float* a = f1 + (size_t)pair * n;
  const float* b = f2 + (size_t)pair * n;
  float sd = 0.0f, sa = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float va = a[i], vb = b[i];
    sd += fabsf(va - vb);
    sa += fabsf(va);
    atomicAdd(&h[bin32(va)], 1);
    atomicAdd(&h[32 + bin32(vb)], 1);
  }
  for (int o = 16; o > 0; o >>= 1) {
    sd += __shfl_xor_sync(0xffffffffu, sd, o);
    sa += __shfl_xor_sync(0xffffffffu, sa, o);
  }
  if ((threadIdx.x & 31) == 0) {
    red[0][threadIdx.x >> 5] = sd;
    red[1][threadIdx.x >> 5] = sa;
  }
  __syncthreads();
  if (threadIdx.x < 2) {
    float t = 0.0f;
    for (int w = 0; w < (int)(blockDim.x >> 5); ++w) t += red[threadIdx.x][w];
    atomicAdd(&sums[2 * pair + threadIdx.x], t);
  }
  if (threadIdx.x < 64 && h[threadIdx.x] != 0) atomicAdd(&hist[pair * 64 + threadIdx.x], h[threadIdx.x]);
}

extern "C" __global__ void finalize(const float* sums, const int* hist, bool* is_scene_change,
                                    float* sad_score, float* chi_sq, int n, float sad_threshold,
                                    float hist_threshold) {
  int pair = blockIdx.x, k = threadIdx.x;
  float h1 = (float)hist[pair * 64 + k] / (float)n;
  float h2 = (float)hist[pair * 64 + 32 + k] / (float)n;
  float d = h1 - h2;
  float term = d * d / (h1 + h2 + 1e-10f);
  for (int o = 16; o > 0; o >>= 1) term += __shfl_xor_sync(0xffffffffu, term, o);
  if (k == 0) {
    float sad = sums[2 * pair] / (float)n;
    float mean_abs = fmaxf(sums[2 * pair + 1] / (float)n, 1e-6f);
    float s = sad / mean_abs;
    float chi = term * 0.5f;
    sad_score[pair] = s;
    chi_sq[pair] = chi;
    is_scene_change[pair] = (s > sad_threshold) || (chi > hist_threshold);
  }
}
