import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

mse_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define THREADS 256

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}

// Grid-stride squared-difference accumulation; one double atomicAdd per block.
__global__ void mse_kernel(const float* __restrict__ p, const float* __restrict__ t,
                           double* __restrict__ acc, long long n) {
    float s = 0.0f;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float d = p[i] - t[i];
        s += d * d;
    }
    __shared__ float ws[THREADS / 32];
    s = warp_sum(s);
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) ws[wid] = s;
    __syncthreads();
    if (wid == 0) {
        s = lane < THREADS / 32 ? ws[lane] : 0.0f;
        s = warp_sum(s);
        if (lane == 0) atomicAdd(acc, (double)s);
    }
}

__global__ void mse_finalize_kernel(const double* __restrict__ acc, float* __restrict__ out, double inv_n) {
    out[0] = (float)(acc[0] * inv_n);
}

torch::Tensor mse_loss_cuda(torch::Tensor predictions, torch::Tensor targets) {
    TORCH_CHECK(predictions.is_cuda() && targets.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(predictions.numel() == targets.numel(), "size mismatch");
    predictions = predictions.contiguous();
    targets = targets.contiguous();
    long long n = predictions.numel();
    auto acc = torch::zeros({1}, predictions.options().dtype(torch::kFloat64));
    auto out = torch::empty(std::vector<int64_t>{}, predictions.options());

    int device;
    cudaGetDevice(&device);
    int sms;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    long long blocks = (n + THREADS - 1) / THREADS;
    long long max_blocks = (long long)sms * 8;
    if (blocks > max_blocks) blocks = max_blocks;
    if (blocks < 1) blocks = 1;

    mse_kernel<<<(int)blocks, THREADS>>>(predictions.data_ptr<float>(), targets.data_ptr<float>(),
                                         acc.data_ptr<double>(), n);
    mse_finalize_kernel<<<1, 1>>>(acc.data_ptr<double>(), out.data_ptr<float>(), 1.0 / (double)n);
    return out;
}
"""

mse_cpp = "torch::Tensor mse_loss_cuda(torch::Tensor predictions, torch::Tensor targets);"

mse_ext = load_inline(
    name="mse_loss_reduce",
    cpp_sources=mse_cpp,
    cuda_sources=mse_source,
    functions=["mse_loss_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Mean Squared Error loss computed by a fused custom CUDA reduction.
    """
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, predictions, targets):
        return mse_ext.mse_loss_cuda(predictions, targets)
