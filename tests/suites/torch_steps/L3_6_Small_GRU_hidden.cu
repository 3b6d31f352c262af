// The test suite's small GRU (tests/suites/kernelbench/KernelBench/level3/6_Small_GRU_hidden.py):
// a `gru` torch step started from zeros (a scratch buffer: kernrl zeroes scratch buffers and
// nothing writes this one) whose h_n (`result: 1`) a kernel copies into the output
// (docs/kernel-format.md, "PyTorch operators"). Graded by the CPU suite test (--compile-only) and
// by scripts/gpu-test.sh kernelbench.
/* kernrl
problem: L3_6_Small_GRU_hidden
launches:
  - torch: gru
    # input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first
    args: [x, h0, [gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0,
                   gru.weight_ih_l1, gru.weight_hh_l1, gru.bias_ih_l1, gru.bias_hh_l1],
           true, num_layers, 0.0, true, false, false]
    out: h_n
    result: 1
  - kernel: copy
    grid: [cdiv(num_layers * batch_size * hidden_size, 256)]
    block: [256]
    args: [h_n, out, num_layers * batch_size * hidden_size]
scratch:
  h0: {dtype: float32, shape: [num_layers, batch_size, hidden_size]}
  h_n: {dtype: float32, shape: [num_layers, batch_size, hidden_size]}
*/
extern "C" __global__ void copy(const float* a, float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i];
}
