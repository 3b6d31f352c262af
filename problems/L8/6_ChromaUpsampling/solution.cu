// Chroma upsampling: one thread per output pixel copies Y and writes the two interpolated chroma
// values.
/* kernrl
problem: L8_6_ChromaUpsampling
launches:
  - kernel: chroma_upsample
    grid: [cdiv(2 * half_width, 64), 2 * half_height]
    block: [64]
    args: [y_full, u_half, v_half, y_out, u_full, v_full, 2 * half_height, 2 * half_width]
*/

extern "C" __global__ void chroma_upsample(const float* y, const float* u, const float* v, float* y_out,
                                           float* u_out, float* v_out, int H, int W) {
  int X = blockIdx.x * blockDim.x + threadIdx.x, Y = blockIdx.y;
  if (X >= W) return;
  int h = H / 2, w = W / 2;
  float sx = fmaxf((X + 0.5f) * 0.5f - 0.5f, 0.0f), sy = fmaxf((Y + 0.5f) * 0.5f - 0.5f, 0.0f);
  int x0 = (int)sx, y0 = (int)sy;
  int x1 = min(x0 + 1, w - 1), y1 = min(y0 + 1, h - 1);
  float lx1 = sx - x0, ly1 = sy - y0, lx0 = 1.0f - lx1, ly0 = 1.0f - ly1;
  float uu = ly0 * (lx0 * u[y0 * w + x0] + lx1 * u[y0 * w + x1]) + ly1 * (lx0 * u[y1 * w + x0] + lx1 * u[y1 * w + x1]);
  float vv = ly0 * (lx0 * v[y0 * w + x0] + lx1 * v[y0 * w + x1]) + ly1 * (lx0 * v[y1 * w + x0] + lx1 * v[y1 * w + x1]);
  size_t o = (size_t)Y * W + X;
  y_out[o] = y[o];
  u_out[o] = uu;
  v_out[o] = vv;
}
