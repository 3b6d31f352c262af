// The test suite's small MLP (tests/suites/kernelbench/KernelBench/level3/1_Small_MLP.py) with
// its linear layers as torch steps and its kernels given pointers into buffers (`NAME + EXPR`,
// docs/kernel-format.md, "Arguments"): the first ReLU in two launches over the halves of its
// rows, the second one launch per row (a repeat), and the last layer's result copied into the
// output in two halves, the second through a pointer into the output. Graded by the CPU suite
// test (--compile-only) and by scripts/gpu-test.sh kernelbench (expect correct).
/* kernrl
problem: L3_1_Small_MLP
launches:
  - torch: linear
    args: [x, network.0.weight, network.0.bias]
    out: h1
  - kernel: relu
    grid: [max(cdiv(cdiv(batch_size, 2) * layer_sizes_0, 256), 1)]
    block: [256]
    args: [h1, a1, cdiv(batch_size, 2) * layer_sizes_0]
  - kernel: relu
    grid: [max(cdiv((batch_size - cdiv(batch_size, 2)) * layer_sizes_0, 256), 1)]
    block: [256]
    args: [h1 + cdiv(batch_size, 2) * layer_sizes_0, a1 + cdiv(batch_size, 2) * layer_sizes_0,
           (batch_size - cdiv(batch_size, 2)) * layer_sizes_0]
  - torch: linear
    args: [a1, network.2.weight, network.2.bias]
    out: h2
  - kernel: relu
    grid: [cdiv(layer_sizes_1, 256)]
    block: [256]
    args: [h2 + row * layer_sizes_1, a2 + row * layer_sizes_1, layer_sizes_1]
    repeat: {count: batch_size, var: row}
  - torch: linear
    args: [a2, network.4.weight, network.4.bias]
    out: h3
  - kernel: copy
    grid: [max(cdiv(batch_size * output_size / 2, 256), 1)]
    block: [256]
    args: [h3, out, batch_size * output_size / 2]
  - kernel: copy
    grid: [cdiv(batch_size * output_size - batch_size * output_size / 2, 256)]
    block: [256]
    args: [h3 + batch_size * output_size / 2, out + batch_size * output_size / 2,
           batch_size * output_size - batch_size * output_size / 2]
scratch:
  h1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  a1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  h2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
  a2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
  h3: {dtype: float32, shape: [batch_size, output_size]}
*/
extern "C" __global__ void relu(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

extern "C" __global__ void copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
