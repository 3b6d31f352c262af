// The test suite's small LSTM (tests/suites/kernelbench/KernelBench/level3/5_Small_LSTM.py): its
// 3-layer bidirectional LSTM as an `lstm` torch step (its output, result 0) and the last time
// step's linear layer as a kernel (docs/kernel-format.md, "PyTorch operators"). Graded by the CPU
// suite test (--compile-only) and by scripts/gpu-test.sh kernelbench.
/* kernrl
problem: L3_5_Small_LSTM
launches:
  - torch: lstm
    # input, hx, params (per layer and direction: weight_ih, weight_hh, bias_ih, bias_hh),
    # has_biases, num_layers, dropout, train, bidirectional, batch_first
    args: [x, [h0, c0],
           [lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0,
            lstm.weight_ih_l0_reverse, lstm.weight_hh_l0_reverse, lstm.bias_ih_l0_reverse,
            lstm.bias_hh_l0_reverse, lstm.weight_ih_l1, lstm.weight_hh_l1, lstm.bias_ih_l1,
            lstm.bias_hh_l1, lstm.weight_ih_l1_reverse, lstm.weight_hh_l1_reverse,
            lstm.bias_ih_l1_reverse, lstm.bias_hh_l1_reverse, lstm.weight_ih_l2,
            lstm.weight_hh_l2, lstm.bias_ih_l2, lstm.bias_hh_l2, lstm.weight_ih_l2_reverse,
            lstm.weight_hh_l2_reverse, lstm.bias_ih_l2_reverse, lstm.bias_hh_l2_reverse],
           true, 3, 0.0, true, true, true]
    out: seq
  - kernel: last_step_linear
    grid: [cdiv(batch_size * output_size, 128)]
    block: [128]
    args: [seq, fc.weight, fc.bias, out, batch_size, sequence_length, 2 * hidden_size, output_size]
scratch:
  seq: {dtype: float32, shape: [batch_size, sequence_length, 2 * hidden_size]}
*/
// out[b][o] = fc.bias[o] + sum_k seq[b][T - 1][k] * fc.weight[o][k]
extern "C" __global__ void last_step_linear(const float* seq, const float* w, const float* bias,
                                            float* out, int B, int T, int K, int O) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= B * O) return;
  int b = i / O, o = i % O;
  const float* h = seq + ((long long)b * T + (T - 1)) * K;
  float acc = bias[o];
  for (int k = 0; k < K; ++k) acc += h[k] * w[(long long)o * K + k];
  out[i] = acc;
}
