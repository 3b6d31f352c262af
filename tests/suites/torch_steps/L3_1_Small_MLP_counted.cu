// The test suite's small MLP (tests/suites/kernelbench/KernelBench/level3/1_Small_MLP.py) with its
// first layer computed one of two ways, chosen by the sizes as a host wrapper's
// `if (batch % 8 == 0) fast<<<...>>>(); else { torch::linear(...); relu<<<...>>>(); }` would:
// torch steps take `repeat` as launches do (docs/kernel-format.md, "PyTorch operators").
// - where batch_size is not a multiple of 8 (c = 1: test sets 1 and 2), a torch step `linear`
//   into t1, then a ReLU kernel; t1 has batch_size * c rows, so it is empty where c = 0, and the
//   step would be a launch_error there if it ran (its result would not fit t1);
// - where it is (c = 0: the bench set and test set 3), one kernel computes the layer and its ReLU.
// The first layer's weight is copied by a narrow step repeated twice, its start written with the
// repeat variable (0 * part: the same copy each pass). The other layers are as in
// L3_1_Small_MLP.cu. Graded by the CPU suite test (--compile-only) and by scripts/gpu-test.sh
// kernelbench (expect correct).
/* kernrl
problem: L3_1_Small_MLP
launches:
  - torch: narrow
    args: [network.0.weight, 0, 0 * part, layer_sizes_0]
    out: w0
    repeat: {count: 2, var: part}
  - torch: linear
    args: [x, w0, network.0.bias]
    out: t1
    repeat: {count: min(batch_size % 8, 1)}
  - kernel: relu
    grid: [cdiv(batch_size * layer_sizes_0, 256)]
    block: [256]
    args: [t1, a1, batch_size * layer_sizes_0]
    repeat: {count: min(batch_size % 8, 1)}
  - kernel: linear_relu
    grid: [batch_size]
    block: [128]
    args: [x, w0, network.0.bias, a1, input_size, layer_sizes_0]
    repeat: {count: 1 - min(batch_size % 8, 1)}
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
  w0: {dtype: float32, shape: [layer_sizes_0, input_size]}
  t1: {dtype: float32, shape: [batch_size * min(batch_size % 8, 1), layer_sizes_0]}
  a1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  h2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
  a2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
*/
extern "C" __global__ void relu(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

// y[b, o] = relu(bias[o] + sum_i x[b, i] * w[o, i]): one block per row of x.
extern "C" __global__ void linear_relu(const float* x, const float* w, const float* bias, float* y,
                                       int in, int out) {
  const float* xr = x + (long long)blockIdx.x * in;
  for (int o = threadIdx.x; o < out; o += blockDim.x) {
    const float* wr = w + (long long)o * in;
    float s = bias[o];
    for (int i = 0; i < in; ++i) s += xr[i] * wr[i];
    y[(long long)blockIdx.x * out + o] = fmaxf(s, 0.0f);
  }
}
