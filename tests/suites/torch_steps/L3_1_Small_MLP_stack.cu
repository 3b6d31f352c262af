// The test suite's small MLP (tests/suites/kernelbench/KernelBench/level3/1_Small_MLP.py) with its
// first layer's weight put together as the importer converts `torch.stack([w, w], dim=1)`: each
// piece a copy of w in the shape [rows, 1, cols] (`reshape`), joined by `cat` along dimension 1,
// then read back as [rows, 2 * cols] and narrowed to its first cols columns, which are w again.
// Graded by the CPU suite test (--compile-only) and by scripts/gpu-test.sh kernelbench (expect
// correct).
/* kernrl
problem: L3_1_Small_MLP
launches:
  - torch: reshape
    args: [network.0.weight, [layer_sizes_0, 1, input_size]]
    out: piece0
  - torch: reshape
    args: [network.0.weight, [layer_sizes_0, 1, input_size]]
    out: piece1
  - torch: cat
    args: [[piece0, piece1], 1]
    out: stacked
  - torch: reshape
    args: [stacked, [layer_sizes_0, 2 * input_size]]
    out: rows
  - torch: narrow
    args: [rows, 1, 0, input_size]
    out: w0
  - torch: linear
    args: [x, w0, network.0.bias]
    out: h1
  - kernel: relu
    grid: [cdiv(batch_size * layer_sizes_0, 256)]
    block: [256]
    args: [h1, null, a1, batch_size * layer_sizes_0, layer_sizes_0]
  - torch: linear
    args: [a1, network.2.weight, network.2.bias]
    out: h2
  - kernel: relu
    grid: [cdiv(batch_size * layer_sizes_1, 256)]
    block: [256]
    args: [h2, ~, a2, batch_size * layer_sizes_1, layer_sizes_1]
  - torch: linear
    args: [a2, network.4.weight, network.4.bias]
    out: out
scratch:
  piece0: {dtype: float32, shape: [layer_sizes_0, 1, input_size]}
  piece1: {dtype: float32, shape: [layer_sizes_0, 1, input_size]}
  stacked: {dtype: float32, shape: [layer_sizes_0, 2, input_size]}
  rows: {dtype: float32, shape: [layer_sizes_0, 2 * input_size]}
  w0: {dtype: float32, shape: [layer_sizes_0, input_size]}
  h1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  a1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  h2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
  a2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
*/
extern "C" __global__ void relu(const float* x, const float* bias, float* y, int n, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i] + (bias != nullptr ? bias[i % cols] : 0.0f), 0.0f);
}
