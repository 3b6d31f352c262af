// Homography warp: every thread inverts the 3x3 homography
// (adjugate / determinant, in double for accuracy, rounded to float as the inverse), maps its
// output pixel and samples every channel with zeros padding.
/* kernrl
problem: L8_5_VideoStabilization
launches:
  - kernel: stabilize
    grid: [cdiv(width, 32), cdiv(height, 8)]
    block: [32, 8]
    args: [frame, homography, out, channels, height, width]
*/

extern "C" __global__ void stabilize(const float* frame, const float* hm, float* out, int C, int H, int W) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H) return;
  double a = hm[0], b = hm[1], c = hm[2], d = hm[3], e = hm[4], f = hm[5], g = hm[6], h = hm[7], i = hm[8];
  double A = e * i - f * h, B = -(d * i - f * g), Cc = d * h - e * g;
  double det = a * A + b * B + c * Cc;
  float inv[9] = {(float)(A / det),  (float)(-(b * i - c * h) / det), (float)((b * f - c * e) / det),
                  (float)(B / det),  (float)((a * i - c * g) / det),  (float)(-(a * f - c * d) / det),
                  (float)(Cc / det), (float)(-(a * h - b * g) / det), (float)((a * e - b * d) / det)};
  float px = (float)x, py = (float)y;
  float sx = inv[0] * px + inv[1] * py + inv[2];
  float sy = inv[3] * px + inv[4] * py + inv[5];
  float sw = inv[6] * px + inv[7] * py + inv[8];
  sx = sx / (sw + 1e-10f);
  sy = sy / (sw + 1e-10f);
  float fx = floorf(sx), fy = floorf(sy);
  int x0 = (int)fx, y0 = (int)fy;
  float wx = sx - fx, wy = sy - fy;
  int x1 = x0 + 1, y1 = y0 + 1;
  bool vx0 = x0 >= 0 && x0 < W, vx1 = x1 >= 0 && x1 < W, vy0 = y0 >= 0 && y0 < H, vy1 = y1 >= 0 && y1 < H;
  float w00 = (vy0 && vx0) ? (1.0f - wx) * (1.0f - wy) : 0.0f;
  float w01 = (vy0 && vx1) ? wx * (1.0f - wy) : 0.0f;
  float w10 = (vy1 && vx0) ? (1.0f - wx) * wy : 0.0f;
  float w11 = (vy1 && vx1) ? wx * wy : 0.0f;
  int cx0 = min(max(x0, 0), W - 1), cx1 = min(max(x1, 0), W - 1);
  int cy0 = min(max(y0, 0), H - 1), cy1 = min(max(y1, 0), H - 1);
  size_t plane = (size_t)H * W, o = (size_t)y * W + x;
  for (int p = 0; p < C; ++p) {
    const float* src = frame + p * plane;
    out[p * plane + o] = src[cy0 * W + cx0] * w00 + src[cy0 * W + cx1] * w01 + src[cy1 * W + cx0] * w10 +
                         src[cy1 * W + cx1] * w11;
  }
}
