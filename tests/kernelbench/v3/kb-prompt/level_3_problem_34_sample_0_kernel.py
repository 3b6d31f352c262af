import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# Strategy
#   combined = [x_t, h_{t-1}]  =>  i2h(combined) = x_t @ W_ih^T + h_{t-1} @ W_hh^T + b
#   1) input projection for ALL timesteps at once: one big GEMM (cuBLAS)
#   2) the sequential recurrence h_t = tanh(xproj_t + h_{t-1} W_hh^T) runs in ONE
#      persistent CUDA kernel: every warp owns one hidden unit and keeps its row of
#      W_hh in registers for the whole sequence; blocks synchronise per timestep
#      with a lightweight global barrier (all blocks are co-resident).
#   3) output projection for all timesteps at once: one GEMM (cuBLAS)
rnn_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

#define RNN_THREADS 256

__device__ __forceinline__ void grid_barrier(unsigned int* counter, unsigned int target) {
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(counter, 1u);
        volatile unsigned int* vc = counter;
        while (*vc < target) { }
        __threadfence();
    }
    __syncthreads();
}

// KPL  = H / 32 : elements of a W_hh row held by each lane
// MAXB = max batch handled (runtime B <= MAXB)
template <int KPL, int MAXB>
__global__ void __launch_bounds__(RNN_THREADS)
rnn_recurrence_kernel(const float* __restrict__ xproj,   // (T, B, H)  x W_ih^T + b
                      const float* __restrict__ h0,      // (B, H)
                      const float* __restrict__ whh,     // (H, H) row-major
                      float* hall,                       // (T, B, H)  all hidden states
                      unsigned int* barrier,
                      int T, int B, int H) {
    extern __shared__ float4 sh4[];
    const float* sh = reinterpret_cast<const float*>(sh4);   // (B, H) previous hidden state

    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    const int j = blockIdx.x * nwarps + warp;   // hidden unit owned by this warp
    const bool active = j < H;

    float w[KPL];
#pragma unroll
    for (int i = 0; i < KPL; ++i)
        w[i] = active ? __ldg(whh + (size_t)j * H + lane + 32 * i) : 0.0f;

    const int BH = B * H;
    const int BH4 = BH >> 2;
    const unsigned int nblocks = gridDim.x;

    for (int t = 0; t < T; ++t) {
        const float* prev = (t == 0) ? h0 : (hall + (size_t)(t - 1) * BH);
        const float4* prev4 = reinterpret_cast<const float4*>(prev);
        for (int i = threadIdx.x; i < BH4; i += blockDim.x) sh4[i] = __ldcg(prev4 + i);

        float xp = 0.0f;
        if (active && lane < B) xp = __ldg(xproj + ((size_t)t * B + lane) * H + j);
        __syncthreads();

        if (active) {
            float acc[MAXB];
#pragma unroll
            for (int b = 0; b < MAXB; ++b) {
                float a = 0.0f;
                if (b < B) {
                    const float* hb = sh + b * H + lane;
#pragma unroll
                    for (int i = 0; i < KPL; ++i) a = fmaf(w[i], hb[32 * i], a);
                }
                acc[b] = a;
            }
#pragma unroll
            for (int off = 16; off > 0; off >>= 1) {
#pragma unroll
                for (int b = 0; b < MAXB; ++b)
                    acc[b] += __shfl_xor_sync(0xffffffffu, acc[b], off);
            }
            float mine = 0.0f;
#pragma unroll
            for (int b = 0; b < MAXB; ++b)
                if (lane == b) mine = acc[b];
            if (lane < B) hall[((size_t)t * B + lane) * H + j] = tanhf(mine + xp);
        }

        grid_barrier(barrier, (unsigned int)(t + 1) * nblocks);
    }
}

template <int KPL>
static void launch_rnn(const float* xproj, const float* h0, const float* whh, float* hall,
                       unsigned int* barrier, int T, int B, int H, cudaStream_t stream) {
    const int warps = RNN_THREADS / 32;
    const int blocks = (H + warps - 1) / warps;
    const size_t smem = (size_t)B * H * sizeof(float);
    rnn_recurrence_kernel<KPL, 8><<<blocks, RNN_THREADS, smem, stream>>>(
        xproj, h0, whh, hall, barrier, T, B, H);
}

torch::Tensor rnn_recurrence_cuda(torch::Tensor xproj, torch::Tensor h0, torch::Tensor whh) {
    TORCH_CHECK(xproj.is_cuda() && h0.is_cuda() && whh.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(xproj.scalar_type() == torch::kFloat32 && h0.scalar_type() == torch::kFloat32 &&
                whh.scalar_type() == torch::kFloat32, "float32 expected");
    TORCH_CHECK(xproj.dim() == 3, "xproj must be (T, B, H)");
    xproj = xproj.contiguous();
    h0 = h0.contiguous();
    whh = whh.contiguous();
    const int T = (int)xproj.size(0), B = (int)xproj.size(1), H = (int)xproj.size(2);
    TORCH_CHECK(h0.size(0) == B && h0.size(1) == H, "h0 shape mismatch");
    TORCH_CHECK(whh.size(0) == H && whh.size(1) == H, "W_hh shape mismatch");
    TORCH_CHECK(B >= 1 && B <= 8, "batch must be <= 8 for the persistent kernel");
    TORCH_CHECK(H % 32 == 0, "hidden size must be a multiple of 32");

    const int blocks = (H + RNN_THREADS / 32 - 1) / (RNN_THREADS / 32);
    const int sm_count = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    TORCH_CHECK(blocks <= sm_count, "too many blocks for a co-resident persistent launch");

    auto hall = torch::empty({T, B, H}, xproj.options());
    if (T == 0) return hall;
    auto barrier = torch::zeros({1}, xproj.options().dtype(torch::kInt32));
    unsigned int* bar = reinterpret_cast<unsigned int*>(barrier.data_ptr<int>());
    auto stream = at::cuda::getCurrentCUDAStream();

    const float* xp = xproj.data_ptr<float>();
    const float* hp = h0.data_ptr<float>();
    const float* wp = whh.data_ptr<float>();
    float* op = hall.data_ptr<float>();
    switch (H / 32) {
        case 1:  launch_rnn<1>(xp, hp, wp, op, bar, T, B, H, stream); break;
        case 2:  launch_rnn<2>(xp, hp, wp, op, bar, T, B, H, stream); break;
        case 4:  launch_rnn<4>(xp, hp, wp, op, bar, T, B, H, stream); break;
        case 8:  launch_rnn<8>(xp, hp, wp, op, bar, T, B, H, stream); break;
        case 16: launch_rnn<16>(xp, hp, wp, op, bar, T, B, H, stream); break;
        default: TORCH_CHECK(false, "unsupported hidden size for persistent RNN kernel");
    }
    TORCH_CHECK(cudaGetLastError() == cudaSuccess, "rnn_recurrence kernel launch failed");
    return hall;
}
"""

rnn_cpp_source = "torch::Tensor rnn_recurrence_cuda(torch::Tensor xproj, torch::Tensor h0, torch::Tensor whh);"

rnn_ext = load_inline(
    name="persistent_vanilla_rnn_ext",
    cpp_sources=rnn_cpp_source,
    cuda_sources=rnn_source,
    functions=["rnn_recurrence_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super(ModelNew, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size

        # Same parameters (and initialisation) as the reference model
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()
        self.ext = rnn_ext

    def _kernel_supported(self, batch_size: int, device) -> bool:
        H = self.hidden_size
        if H % 32 != 0 or (H // 32) not in (1, 2, 4, 8, 16):
            return False
        if batch_size < 1 or batch_size > 8:
            return False
        sm = torch.cuda.get_device_properties(device).multi_processor_count
        return (H + 7) // 8 <= sm

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        seq_len, batch_size, _ = x.size()
        I, H = self.input_size, self.hidden_size
        h0 = h0.to(device=x.device, dtype=x.dtype).contiguous()

        W = self.i2h.weight            # (H, I + H)
        W_ih = W[:, :I]
        W_hh = W[:, I:].contiguous()

        # (1) input projection for every timestep in one GEMM (bias folded in)
        xproj = F.linear(x.reshape(seq_len * batch_size, I), W_ih, self.i2h.bias)
        xproj = xproj.view(seq_len, batch_size, H)

        # (2) recurrence
        if x.is_cuda and self._kernel_supported(batch_size, x.device):
            hall = self.ext.rnn_recurrence_cuda(xproj, h0, W_hh)
        else:
            hs = []
            h = h0
            for t in range(seq_len):
                h = torch.tanh(torch.addmm(xproj[t], h, W_hh.t()))
                hs.append(h)
            hall = torch.stack(hs, dim=0)

        # (3) output projection for every timestep in one GEMM
        return F.linear(hall, self.h2o.weight, self.h2o.bias)
