// The test suite's small MLP (tests/suites/kernelbench/KernelBench/level3/1_Small_MLP.py) with
// tensors scaled by numbers through the torch steps `mul` and `div` (ATen's mul.Scalar and
// div.Scalar, Python's `w * (1.0 / n)` and `x / n`; docs/kernel-format.md, "PyTorch operators"):
// - the first layer's weight and bias are multiplied by the real expression 1.0 / layer_sizes_0
//   (evaluated at each size set), so its product is the layer's output over layer_sizes_0; the
//   ReLU kernel keeps that scale (ReLU commutes with a positive factor) and a `div` by the same
//   real expression undoes it (within a few float roundings);
// - the second layer's ReLU output is multiplied by the integer 2 and divided by 2.0 (both exact
//   in float) before the last layer.
// Graded by the CPU suite test (--compile-only) and by scripts/gpu-test.sh kernelbench (expect
// correct).
/* kernrl
problem: L3_1_Small_MLP
launches:
  - torch: mul
    args: [network.0.weight, 1.0 / layer_sizes_0]
    out: w0
  - torch: mul
    args: [network.0.bias, 1.0 / layer_sizes_0]
    out: b0
  - torch: linear
    args: [x, w0, b0]
    out: h1
  - kernel: relu
    grid: [cdiv(batch_size * layer_sizes_0, 256)]
    block: [256]
    args: [h1, s1, batch_size * layer_sizes_0]
  - torch: div
    args: [s1, 1.0 / layer_sizes_0]
    out: a1
  - torch: linear
    args: [a1, network.2.weight, network.2.bias]
    out: h2
  - kernel: relu
    grid: [cdiv(batch_size * layer_sizes_1, 256)]
    block: [256]
    args: [h2, s2, batch_size * layer_sizes_1]
  - torch: mul
    args: [s2, 2]
    out: d2
  - torch: div
    args: [d2, 2.0]
    out: a2
  - torch: linear
    args: [a2, network.4.weight, network.4.bias]
    out: out
scratch:
  w0: {dtype: float32, shape: [layer_sizes_0, input_size]}
  b0: {dtype: float32, shape: [layer_sizes_0]}
  h1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  s1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  a1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  h2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
  s2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
  d2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
  a2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
*/
extern "C" __global__ void relu(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
