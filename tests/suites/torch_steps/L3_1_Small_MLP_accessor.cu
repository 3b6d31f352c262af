// The test suite's small MLP (tests/suites/kernelbench/KernelBench/level3/1_Small_MLP.py) with its
// linear layers as torch steps without their biases, and each bias (and ReLU but the last) added by
// a kernel that takes PyTorch's packed tensor accessors (docs/kernel-format.md, "Tensor
// accessors"): 2-D 32-bit accessors of scratch buffers and of the output, 1-D 64-bit accessors of
// the parameters. Graded by the CPU suite test (--compile-only) and by scripts/gpu-test.sh
// kernelbench (expect correct).
/* kernrl
problem: L3_1_Small_MLP
launches:
  - torch: linear
    args: [x, network.0.weight, null]
    out: h1
  - kernel: bias_act<true>
    grid: [cdiv(layer_sizes_0, 32), batch_size]
    block: [32]
    args: [accessor32(h1, 2), accessor64(network.0.bias, 1), accessor32(a1, 2)]
  - torch: linear
    args: [a1, network.2.weight, null]
    out: h2
  - kernel: bias_act<true>
    grid: [cdiv(layer_sizes_1, 32), batch_size]
    block: [32]
    args: [accessor32(h2, 2), accessor64(network.2.bias, 1), accessor32(a2, 2)]
  - torch: linear
    args: [a2, network.4.weight, null]
    out: h3
  - kernel: bias_act<false>
    grid: [cdiv(output_size, 32), batch_size]
    block: [32]
    args: [accessor32(h3, 2), accessor64(network.4.bias, 1), accessor32(out, 2)]
scratch:
  h1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  a1: {dtype: float32, shape: [batch_size, layer_sizes_0]}
  h2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
  a2: {dtype: float32, shape: [batch_size, layer_sizes_1]}
  h3: {dtype: float32, shape: [batch_size, output_size]}
*/
#include <kernrl/tensor_accessor.h>

// y[b][j] = h[b][j] + bias[j], through ReLU when `relu`; the sizes come from the accessors.
template <bool relu>
__global__ void bias_act(const torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits> h,
                         const at::PackedTensorAccessor64<float, 1> bias,
                         torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits> y) {
  const int b = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  // The sizes and strides kernrl packed are checked too: a wrong one leaves y unwritten (incorrect).
  if (b >= h.size(0) || j >= h.size(1)) return;
  if (bias.size(0) != h.size(1) || h.stride(0) != h.size(1) || h.stride(1) != 1 ||
      y.size(0) != h.size(0) || y.stride(0) != y.size(1) || bias.stride(0) != 1)
    return;
  const float v = h[b][j] + bias[j];
  y[b][j] = relu ? fmaxf(v, 0.0f) : v;
}
