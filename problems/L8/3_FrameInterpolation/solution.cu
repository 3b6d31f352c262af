// Frame interpolation: one thread per output pixel computes both sample positions once (through
// the normalized coordinates of the specification) and blends all channels.
/* kernrl
problem: L8_3_FrameInterpolation
launches:
  - kernel: interpolate
    grid: [cdiv(width, 32), cdiv(height, 8)]
    block: [32, 8]
    args: [frame0, frame1, flow_01, out, channels, height, width, t]
*/

struct Tap {
  int o00, o01, o10, o11;
  float w00, w01, w10, w11;
};

// Bilinear taps at pixel position (sx, sy) with border clamping.
__device__ __forceinline__ Tap taps(float sx, float sy, int H, int W) {
  sx = fminf(fmaxf(sx, 0.0f), (float)(W - 1));
  sy = fminf(fmaxf(sy, 0.0f), (float)(H - 1));
  int x0 = (int)floorf(sx), y0 = (int)floorf(sy);
  float wx = sx - x0, wy = sy - y0;
  int x1 = min(x0 + 1, W - 1), y1 = min(y0 + 1, H - 1);
  Tap t;
  t.o00 = y0 * W + x0, t.o01 = y0 * W + x1, t.o10 = y1 * W + x0, t.o11 = y1 * W + x1;
  t.w00 = (1.0f - wx) * (1.0f - wy), t.w01 = wx * (1.0f - wy), t.w10 = (1.0f - wx) * wy, t.w11 = wx * wy;
  return t;
}

__device__ __forceinline__ float apply(const Tap& t, const float* p) {
  return p[t.o00] * t.w00 + p[t.o01] * t.w01 + p[t.o10] * t.w10 + p[t.o11] * t.w11;
}

extern "C" __global__ void interpolate(const float* frame0, const float* frame1, const float* flow, float* out, int C,
                                       int H, int W, float t) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H) return;
  const size_t o = (size_t)y * W + x, plane = (size_t)H * W;
  const float nx = flow[o * 2] / (W * 0.5f), ny = flow[o * 2 + 1] / (H * 0.5f);
  const float gx = -1.0f + 2.0f * x / (float)(W - 1), gy = -1.0f + 2.0f * y / (float)(H - 1);
  // Normalized -> pixel: (g + 1) / 2 * (n - 1).
  Tap a = taps((gx - t * nx + 1.0f) * 0.5f * (W - 1), (gy - t * ny + 1.0f) * 0.5f * (H - 1), H, W);
  Tap b = taps((gx + (1.0f - t) * nx + 1.0f) * 0.5f * (W - 1), (gy + (1.0f - t) * ny + 1.0f) * 0.5f * (H - 1), H, W);
  for (int c = 0; c < C; ++c) {
    const float* p0 = frame0 + (size_t)c * plane;
    const float* p1 = frame1 + (size_t)c * plane;
    out[(size_t)c * plane + o] = (1.0f - t) * apply(a, p0) + t * apply(b, p1);
  }
}
