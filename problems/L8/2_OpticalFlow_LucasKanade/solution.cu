// Lucas-Kanade: (1) gradients and the five products per pixel, (2) horizontal 15-tap sums,
// (3) vertical 15-tap sums and the 2x2 solve. The Sobel taps read zeros outside the frame; the
// window sums mirror indices (reflect padding, valid for height, width > 7).
/* kernrl
problem: L8_2_OpticalFlow_LucasKanade
launches:
  - kernel: lk_products
    grid: [cdiv(width, 32), cdiv(height, 8)]
    block: [32, 8]
    args: [frame1, frame2, prod, height, width]
  - kernel: lk_hsum
    grid: [cdiv(width, 32), cdiv(height, 8)]
    block: [32, 8]
    args: [prod, hsum, height, width]
  - kernel: lk_solve
    grid: [cdiv(width, 32), cdiv(height, 8)]
    block: [32, 8]
    args: [hsum, u, v, height, width, det_eps]
scratch:
  prod: {dtype: float32, count: "5 * height * width"}
  hsum: {dtype: float32, count: "5 * height * width"}
*/

#define RAD 7

__device__ __forceinline__ int refl(int i, int n) { return i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i); }

extern "C" __global__ void lk_products(const float* f1, const float* f2, float* prod, int H, int W) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H) return;
  float p[3][3];
#pragma unroll
  for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
    for (int dx = -1; dx <= 1; ++dx) {
      int yy = y + dy, xx = x + dx;
      bool in = yy >= 0 && yy < H && xx >= 0 && xx < W;
      size_t o = in ? (size_t)yy * W + xx : 0;
      p[dy + 1][dx + 1] = in ? (f1[o] + f2[o]) * 0.5f : 0.0f;
    }
  float ix = (p[0][2] + 2.0f * p[1][2] + p[2][2]) - (p[0][0] + 2.0f * p[1][0] + p[2][0]);
  float iy = (p[2][0] + 2.0f * p[2][1] + p[2][2]) - (p[0][0] + 2.0f * p[0][1] + p[0][2]);
  size_t o = (size_t)y * W + x, plane = (size_t)H * W;
  float it = f2[o] - f1[o];
  prod[o] = ix * ix;
  prod[plane + o] = iy * iy;
  prod[2 * plane + o] = ix * iy;
  prod[3 * plane + o] = ix * it;
  prod[4 * plane + o] = iy * it;
}

extern "C" __global__ void lk_hsum(const float* prod, float* hsum, int H, int W) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H) return;
  size_t plane = (size_t)H * W, row = (size_t)y * W;
  for (int k = 0; k < 5; ++k) {
    const float* p = prod + k * plane + row;
    float s = 0.0f;
    for (int d = -RAD; d <= RAD; ++d) s += p[refl(x + d, W)];
    hsum[k * plane + row + x] = s;
  }
}

extern "C" __global__ void lk_solve(const float* hsum, float* u, float* v, int H, int W, float det_eps) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H) return;
  size_t plane = (size_t)H * W;
  float S[5];
  for (int k = 0; k < 5; ++k) {
    float s = 0.0f;
    for (int d = -RAD; d <= RAD; ++d) s += hsum[k * plane + (size_t)refl(y + d, H) * W + x];
    S[k] = s;
  }
  float sxx = S[0], syy = S[1], sxy = S[2], sxt = S[3], syt = S[4];
  float det = sxx * syy - sxy * sxy;
  size_t o = (size_t)y * W + x;
  if (fabsf(det) > det_eps) {
    u[o] = (sxy * syt - syy * sxt) / det;
    v[o] = (sxy * sxt - sxx * syt) / det;
  } else {
    u[o] = 0.0f;
    v[o] = 0.0f;
  }
}
