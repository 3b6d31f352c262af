// The test suite's small MLP (tests/suites/kernelbench/KernelBench/level3/1_Small_MLP.py) with
// its linear layers as torch steps and its first ReLU given its buffers and counts in a struct
// passed by value (`struct(...)`, docs/kernel-format.md, "Arguments"): the struct mixes every
// field type, so that a field read at another offset than kernrl wrote it (padding after `tag`,
// the 8-byte alignment of `n`, `bias`) makes the kernel write NaN and the answer incorrect.
// Graded by the CPU suite test (--compile-only) and by scripts/gpu-test.sh kernelbench
// (expect correct).
/* kernrl
problem: L3_1_Small_MLP
launches:
  - torch: linear
    args: [x, network.0.weight, network.0.bias]
    out: h1
  - kernel: relu_halves
    grid: [max(cdiv(cdiv(batch_size, 2) * layer_sizes_0, 256), 1), 2]
    block: [256]
    args: [struct(ptr h1, ptr h1 + cdiv(batch_size, 2) * layer_sizes_0, ptr a1, ptr a1 + cdiv(batch_size, 2) * layer_sizes_0, i8 7, i64 cdiv(batch_size, 2) * layer_sizes_0, i64 (batch_size - cdiv(batch_size, 2)) * layer_sizes_0, i16 -3, f32 0.0, f64 1.0 / layer_sizes_0, i32 batch_size), batch_size]
  - torch: linear
    args: [a1, network.2.weight, network.2.bias]
    out: h2
  - kernel: relu
    grid: [cdiv(batch_size * layer_sizes_1, 256)]
    block: [256]
    args: [h2, a2, batch_size * layer_sizes_1]
  - torch: linear
    args: [a2, network.4.weight, network.4.bias]
    out: out
scratch:
  h1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  a1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  h2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
  a2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
*/
struct Halves {
  const float* src[2];  // offsets 0, 8
  float* dst[2];        // 16, 24
  char tag;             // 32 (then 7 bytes of padding)
  long long n[2];       // 40, 48
  short shift;          // 56
  float slope;          // 60
  double unit;          // 64
  int rows;             // 72; the struct is 80 bytes, aligned to 8
};

// max(x, slope * x) over each half; every other field is checked against what the launch block
// gives (tag 7, shift -3, unit a positive reciprocal, rows the batch size).
__global__ void relu_halves(Halves h, int batch_size) {
  const int half = blockIdx.y;
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= h.n[half]) return;
  const bool fields_ok = h.tag == 7 && h.shift == -3 && h.unit > 0.0 && h.unit <= 1.0 &&
                         h.rows == batch_size && h.n[0] + h.n[1] > 0;
  const float v = h.src[half][i];
  h.dst[half][i] = fields_ok ? fmaxf(v, h.slope * v) : __int_as_float(0x7fc00000);
}

extern "C" __global__ void relu(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
