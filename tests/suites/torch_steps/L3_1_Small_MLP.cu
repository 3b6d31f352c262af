// The test suite's small MLP (tests/suites/kernelbench/KernelBench/level3/1_Small_MLP.py) with
// its linear layers as torch steps and its ReLUs as kernels (docs/kernel-format.md, "PyTorch
// operators"). Graded by the CPU suite test (--compile-only) and by scripts/gpu-test.sh kernelbench.
/* kernrl
problem: L3_1_Small_MLP
launches:
  - torch: linear
    args: [x, network.0.weight, network.0.bias]
    out: h1
  - kernel: relu
    grid: [cdiv(batch_size * layer_sizes_0, 256)]
    block: [256]
    args: [h1, a1, batch_size * layer_sizes_0]
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
extern "C" __global__ void relu(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
