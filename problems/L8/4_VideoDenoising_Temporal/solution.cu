// Temporal denoising: one thread per output pixel; cumulative flows summed in the order of the
// specification, bilinear zeros-padded sampling, confidence-weighted mean.
/* kernrl
problem: L8_4_VideoDenoising_Temporal
launches:
  - kernel: denoise
    grid: [cdiv(width, 32), cdiv(height, 8)]
    block: [32, 8]
    args: [frames, flows, out, num_frames, height, width]
*/

// Bilinear sample of a [H, W] plane at pixel position (sx, sy); taps outside the frame count 0.
__device__ __forceinline__ float sample_zeros(const float* p, float sx, float sy, int H, int W) {
  float fx = floorf(sx), fy = floorf(sy);
  int x0 = (int)fx, y0 = (int)fy;
  float wx = sx - fx, wy = sy - fy;
  float s = 0.0f;
#pragma unroll
  for (int dy = 0; dy < 2; ++dy)
#pragma unroll
    for (int dx = 0; dx < 2; ++dx) {
      int xx = x0 + dx, yy = y0 + dy;
      if (xx < 0 || xx >= W || yy < 0 || yy >= H) continue;
      s += p[(size_t)yy * W + xx] * (dx ? wx : 1.0f - wx) * (dy ? wy : 1.0f - wy);
    }
  return s;
}

extern "C" __global__ void denoise(const float* frames, const float* flows, float* out, int T, int H, int W) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H) return;
  const size_t plane = (size_t)H * W, o = (size_t)y * W + x;
  const int m = T / 2;
  // Normalized base grid (linspace(-1, 1, n)) and the grid_sample unnormalization, as in the
  // specification.
  const float gx0 = -1.0f + 2.0f * x / (float)(W - 1), gy0 = -1.0f + 2.0f * y / (float)(H - 1);
  float acc = frames[(size_t)m * plane + o], weight = 1.0f;
  for (int t = 0; t < T; ++t) {
    if (t == m) continue;
    float cx = 0.0f, cy = 0.0f;
    if (t < m) {
      for (int i = t; i < m; ++i) {
        cx += flows[((size_t)i * plane + o) * 2];
        cy += flows[((size_t)i * plane + o) * 2 + 1];
      }
    } else {
      for (int i = m; i < t; ++i) {
        cx -= flows[((size_t)i * plane + o) * 2];
        cy -= flows[((size_t)i * plane + o) * 2 + 1];
      }
    }
    float gx = gx0 - cx / (W * 0.5f), gy = gy0 - cy / (H * 0.5f);
    float sx = (gx + 1.0f) * 0.5f * (W - 1), sy = (gy + 1.0f) * 0.5f * (H - 1);
    float c = expf(-sqrtf(cx * cx + cy * cy) / 10.0f);
    acc += sample_zeros(frames + (size_t)t * plane, sx, sy, H, W) * c;
    weight += c;
  }
  out[o] = acc / weight;
}
