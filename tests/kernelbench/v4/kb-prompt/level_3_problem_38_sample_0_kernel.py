import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# ---------------------------------------------------------------------------
# The 6-layer bidirectional LSTM recurrence is left to cuDNN (its fused,
# persistent RNN kernels are very hard to beat for a strictly sequential
# workload).  The tail of the network -- slicing the last time step out of the
# (B, T, 2H) output and applying the Linear layer -- is fused into a single
# custom kernel: one warp per (batch, output) pair reads the last time step
# directly with float4 loads (no slice copy) and reduces with warp shuffles.
# ---------------------------------------------------------------------------
cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void last_step_linear_kernel(const float* __restrict__ seq,   // [B, T, K] (batch_first)
                                        const float* __restrict__ W,     // [O, K]
                                        const float* __restrict__ bias,  // [O]
                                        float* __restrict__ out,         // [B, O]
                                        int B, int T, int K, int O, long long batch_stride, long long time_stride)
{
    const int wpb = blockDim.x >> 5;
    const int lane = threadIdx.x & 31;
    const int gw = blockIdx.x * wpb + (threadIdx.x >> 5);
    if (gw >= B * O) return;
    const int b = gw / O;
    const int o = gw - b * O;

    const float* h = seq + (long long)b * batch_stride + (long long)(T - 1) * time_stride;
    const float* w = W + (long long)o * K;

    float acc = 0.f;
    if ((K & 3) == 0 && ((reinterpret_cast<uintptr_t>(h) | reinterpret_cast<uintptr_t>(w)) & 15) == 0) {
        const float4* h4 = reinterpret_cast<const float4*>(h);
        const float4* w4 = reinterpret_cast<const float4*>(w);
        for (int i = lane; i < (K >> 2); i += 32) {
            const float4 a = __ldg(h4 + i);
            const float4 c = __ldg(w4 + i);
            acc = fmaf(a.x, c.x, acc);
            acc = fmaf(a.y, c.y, acc);
            acc = fmaf(a.z, c.z, acc);
            acc = fmaf(a.w, c.w, acc);
        }
    } else {
        for (int i = lane; i < K; i += 32) acc = fmaf(__ldg(h + i), __ldg(w + i), acc);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffff, acc, off);
    if (lane == 0) out[gw] = acc + bias[o];
}

torch::Tensor last_step_linear_cuda(torch::Tensor seq, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(seq.is_cuda() && seq.scalar_type() == torch::kFloat32 && seq.dim() == 3, "seq must be (B, T, K) float32 CUDA");
    if (seq.stride(2) != 1) seq = seq.contiguous();
    auto W = weight.contiguous();
    auto bvec = bias.contiguous();
    const int B = seq.size(0), T = seq.size(1), K = seq.size(2);
    const int O = W.size(0);
    TORCH_CHECK(W.size(1) == K, "weight shape mismatch");
    auto out = torch::empty({B, O}, seq.options());
    if (B == 0 || O == 0) return out;
    const int threads = 256;
    const int wpb = threads / 32;
    const int blocks = (B * O + wpb - 1) / wpb;
    last_step_linear_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        seq.data_ptr<float>(), W.data_ptr<float>(), bvec.data_ptr<float>(), out.data_ptr<float>(),
        B, T, K, O, seq.stride(0), seq.stride(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor last_step_linear_cuda(torch::Tensor seq, torch::Tensor weight, torch::Tensor bias);"

lstm_tail = load_inline(
    name="lstm_last_step_linear",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["last_step_linear_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, output_size, dropout=0.0):
        """
        Bidirectional multi-layer LSTM (cuDNN) + fused last-time-step Linear head (custom CUDA).
        """
        super(ModelNew, self).__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, dropout=dropout, bidirectional=True)
        self.fc = nn.Linear(hidden_size * 2, output_size)
        self.tail = lstm_tail

    def forward(self, x, h0, c0):
        out, _ = self.lstm(x, (h0, c0))           # (B, T, 2H)
        return self.tail.last_step_linear_cuda(out, self.fc.weight, self.fc.bias)
