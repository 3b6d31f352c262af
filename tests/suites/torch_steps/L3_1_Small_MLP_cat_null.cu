// The test suite's small MLP (tests/suites/kernelbench/KernelBench/level3/1_Small_MLP.py) with its
// first layer's weight cut in two by `narrow` and put back together by `cat` before the product,
// and its ReLUs a kernel whose optional bias pointer is `null` (docs/kernel-format.md). Graded by
// the CPU suite test (--compile-only) and by scripts/gpu-test.sh kernelbench (expect correct).
/* kernrl
problem: L3_1_Small_MLP
launches:
  - torch: narrow
    args: [network.0.weight, 0, 0, cdiv(layer_sizes_0, 2)]
    out: top
  - torch: narrow
    args: [network.0.weight, 0, cdiv(layer_sizes_0, 2), layer_sizes_0 - cdiv(layer_sizes_0, 2)]
    out: bottom
  - torch: cat
    args: [[top, bottom], 0]
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
  top: {dtype: float32, shape: [cdiv(layer_sizes_0, 2), input_size]}
  bottom: {dtype: float32, shape: [layer_sizes_0 - cdiv(layer_sizes_0, 2), input_size]}
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
