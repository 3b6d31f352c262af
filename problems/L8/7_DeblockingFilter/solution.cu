// Deblocking: (1) one thread per pixel copies the frame and applies the vertical-edge filter to
// its own sample (reading only the input); (2) one thread per (horizontal edge, column) filters
// the two samples at that edge in place (edges are block_size >= 4 rows apart, so no two threads
// touch the same samples, and samples read as p1 / q1 are never written by another edge).
/* kernrl
problem: L8_7_DeblockingFilter
launches:
  - kernel: vertical_edges
    grid: [cdiv(width, 128), height, batch]
    block: [128]
    args: [frame, out, height, width, block_size, alpha, beta]
  - kernel: horizontal_edges
    grid: [cdiv(width, 128), max((height - 2) / 8, 1), batch]
    block: [128]
    args: [out, height, width, block_size, alpha, beta]
*/

__device__ __forceinline__ bool filter_on(float p1, float p0, float q0, float q1, float alpha, float beta) {
  return fabsf(p0 - q0) < alpha && fabsf(p1 - p0) < beta && fabsf(q1 - q0) < beta;
}

// The two filtered samples, evaluated left to right as the problem states.
__device__ __forceinline__ float new_p0(float p1, float p0, float q0) { return (2.0f * p1 + p0 + q0 + 2.0f) / 4.0f; }
__device__ __forceinline__ float new_q0(float q1, float q0, float p0) { return (2.0f * q1 + q0 + p0 + 2.0f) / 4.0f; }

extern "C" __global__ void vertical_edges(const float* frame, float* out, int H, int W, int bs, float alpha,
                                          float beta) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, b = blockIdx.z;
  if (x >= W) return;
  const float* row = frame + ((size_t)b * H + y) * W;
  float v = row[x];
  if (x % bs == 0 && x >= bs && x < W - 1) {  // q0 of the edge at x
    float p1 = row[x - 2], p0 = row[x - 1], q1 = row[x + 1];
    if (filter_on(p1, p0, v, q1, alpha, beta)) v = new_q0(q1, v, p0);
  } else if ((x + 1) % bs == 0 && x + 1 >= bs && x + 1 < W - 1) {  // p0 of the edge at x + 1
    float p1 = row[x - 1], q0 = row[x + 1], q1 = row[x + 2];
    if (filter_on(p1, v, q0, q1, alpha, beta)) v = new_p0(p1, v, q0);
  }
  out[((size_t)b * H + y) * W + x] = v;
}

extern "C" __global__ void horizontal_edges(float* out, int H, int W, int bs, float alpha, float beta) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, b = blockIdx.z;
  if (x >= W) return;
  float* f = out + (size_t)b * H * W;
  // Edges at rows bs, 2 bs, ... < H - 1; gridDim.y may exceed their count at small heights.
  for (int e = (blockIdx.y + 1) * bs; e < H - 1; e += gridDim.y * bs) {
    float p1 = f[(size_t)(e - 2) * W + x], p0 = f[(size_t)(e - 1) * W + x];
    float q0 = f[(size_t)e * W + x], q1 = f[(size_t)(e + 1) * W + x];
    if (filter_on(p1, p0, q0, q1, alpha, beta)) {
      f[(size_t)(e - 1) * W + x] = new_p0(p1, p0, q0);
      f[(size_t)e * W + x] = new_q0(q1, q0, p0);
    }
  }
}
