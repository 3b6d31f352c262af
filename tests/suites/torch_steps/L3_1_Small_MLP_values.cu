// The test suite's small MLP (tests/suites/kernelbench/KernelBench/level3/1_Small_MLP.py) with
// its linear layers as torch steps and its ReLUs as kernels, every count and configuration
// written through named values (`values:`, docs/kernel-format.md, "Values"): a torch step's
// arguments (narrow's start and length), a scratch buffer's shape, grid and block, a repeat count,
// integer and real kernel arguments and a struct's fields. `unit` is a real value, 1.0 at every
// size set, that each ReLU multiplies by: a value read wrong (an integer's bits for a float, a
// field at another offset) makes the answer incorrect; `rows - batch_size` is 0, checked by the
// kernels. Graded by the CPU suite test (--compile-only) and by scripts/gpu-test.sh kernelbench
// (expect correct).
/* kernrl
problem: L3_1_Small_MLP
values:
  rows: batch_size
  n0: rows * layer_sizes_0
  n1: rows * layer_sizes_1
  threads: min(256, 4 * 64)
  blocks0: cdiv(n0, threads)
  blocks1: max(cdiv(n1, threads), 1)
  start: 0 * rows
  passes: 2 - 1
  unit: 1.0 * rows / batch_size
  zero: rows - batch_size
launches:
  - torch: narrow
    args: [network.0.weight, 0, start, layer_sizes_0]
    out: w0
  - torch: linear
    args: [x, w0, network.0.bias]
    out: h1
  - kernel: relu_scaled
    grid: [blocks0]
    block: [threads]
    args: [h1, a1, n0, unit, zero]
    repeat: {count: passes}
  - torch: linear
    args: [a1, network.2.weight, network.2.bias]
    out: h2
  - kernel: relu_struct
    grid: [blocks1]
    block: [threads]
    args: [struct(ptr h2, ptr a2, i64 n1, f32 unit, i32 zero)]
  - torch: linear
    args: [a2, network.4.weight, network.4.bias]
    out: out
scratch:
  w0: {dtype: float32, shape: [layer_sizes_0, input_size]}
  h1: {dtype: float32, shape: [rows, layer_sizes_0]}
  a1: {dtype: float32, shape: [rows, layer_sizes_0]}
  h2: {dtype: float32, shape: [rows, layer_sizes_1]}
  a2: {dtype: float32, shape: [rows, layer_sizes_1]}
*/
// y = max(x, 0) * unit (unit = 1.0); a `zero` that is not 0 poisons the result.
extern "C" __global__ void relu_scaled(const float* x, float* y, int n, float unit, int zero) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = zero == 0 ? fmaxf(x[i], 0.0f) * unit : __int_as_float(0x7fc00000);
}

struct Relu {
  const float* x;  // 0
  float* y;        // 8
  long long n;     // 16
  float unit;      // 24
  int zero;        // 28; 32 bytes
};

extern "C" __global__ void relu_struct(Relu r) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < r.n) r.y[i] = r.zero == 0 ? fmaxf(r.x[i], 0.0f) * r.unit : __int_as_float(0x7fc00000);
}
