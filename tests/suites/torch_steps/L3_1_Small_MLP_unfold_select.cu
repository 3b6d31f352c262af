// The test suite's small MLP (tests/suites/kernelbench/KernelBench/level3/1_Small_MLP.py) with its
// inputs taken apart and put together again by the view steps `unfold` and `select` (ATen's
// Tensor.unfold and Tensor.select, Python's `x.unfold(d, size, step)` and `x[:, i]`; their views
// copied into the out buffers; docs/kernel-format.md, "PyTorch operators"):
// - x as one window of its whole row (unfold(1, input_size, input_size): [batch_size, 1,
//   input_size]), then that window selected (select(1, 0)): x again;
// - the first ReLU's output as windows of one element (unfold(0, 1, 1): [batch_size,
//   layer_sizes_0, 1]), the last dimension selected with negative numbers (select(-1, -1));
// - the second layer's product as overlapping windows of two (unfold(1, 2, 1): [batch_size,
//   layer_sizes_1 - 1, 2]) whose second elements (select(2, 1)) are its columns 1 on, put back
//   after its column 0 (a narrow) by cat.
// Every value is copied unchanged, so the result is the MLP's. Graded by the CPU suite test
// (--compile-only) and by scripts/gpu-test.sh kernelbench (expect correct).
/* kernrl
problem: L3_1_Small_MLP
launches:
  - torch: unfold
    args: [x, 1, input_size, input_size]
    out: u0
  - torch: select
    args: [u0, 1, 0]
    out: x0
  - torch: linear
    args: [x0, network.0.weight, network.0.bias]
    out: h1
  - kernel: relu
    grid: [cdiv(batch_size * layer_sizes_0, 256)]
    block: [256]
    args: [h1, r1, batch_size * layer_sizes_0]
  - torch: unfold
    args: [r1, 0, 1, 1]
    out: u1
  - torch: select
    args: [u1, -1, -1]
    out: a1
  - torch: linear
    args: [a1, network.2.weight, network.2.bias]
    out: h2
  - torch: narrow
    args: [h2, 1, 0, 1]
    out: c0
  - torch: unfold
    args: [h2, 1, 2, 1]
    out: w2
  - torch: select
    args: [w2, 2, 1]
    out: tail
  - torch: cat
    args: [[c0, tail], 1]
    out: g2
  - kernel: relu
    grid: [cdiv(batch_size * layer_sizes_1, 256)]
    block: [256]
    args: [g2, a2, batch_size * layer_sizes_1]
  - torch: linear
    args: [a2, network.4.weight, network.4.bias]
    out: out
scratch:
  u0: {dtype: float32, shape: [batch_size, 1, input_size]}
  x0: {dtype: float32, shape: [batch_size, input_size]}
  h1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  r1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  u1: {dtype: float32, shape: [batch_size, layer_sizes_0, 1]}
  a1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  h2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
  c0: {dtype: float32, shape: [batch_size, 1]}
  w2: {dtype: float32, shape: [batch_size, layer_sizes_1 - 1, 2]}
  tail: {dtype: float32, shape: [batch_size, layer_sizes_1 - 1]}
  g2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
  a2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
*/
extern "C" __global__ void relu(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
