import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

huber_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define BLOCK 512

// smooth_l1 with beta = 1: 0.5*d^2 if |d| < 1 else |d| - 0.5
__global__ void smooth_l1_partial_kernel(const float* __restrict__ p, const float* __restrict__ t,
                                         float* __restrict__ partial, long long n) {
    __shared__ float sdata[BLOCK];
    float s = 0.0f;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float d = p[i] - t[i];
        float ad = fabsf(d);
        s += ad < 1.0f ? 0.5f * d * d : ad - 0.5f;
    }
    sdata[threadIdx.x] = s;
    __syncthreads();
    for (int o = blockDim.x / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) sdata[threadIdx.x] += sdata[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sdata[0];
}

__global__ void mean_partials_kernel(const float* __restrict__ partial, int num, float* __restrict__ out,
                                     double inv_n) {
    __shared__ double sdata[BLOCK];
    double s = 0.0;
    for (int i = threadIdx.x; i < num; i += blockDim.x) s += partial[i];
    sdata[threadIdx.x] = s;
    __syncthreads();
    for (int o = blockDim.x / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) sdata[threadIdx.x] += sdata[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = (float)(sdata[0] * inv_n);
}

torch::Tensor smooth_l1_loss_cuda(torch::Tensor predictions, torch::Tensor targets) {
    TORCH_CHECK(predictions.is_cuda() && targets.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(predictions.numel() == targets.numel(), "size mismatch");
    predictions = predictions.contiguous();
    targets = targets.contiguous();
    long long n = predictions.numel();
    long long nb = (n + BLOCK - 1) / BLOCK;
    int blocks = (int)(nb > 2048 ? 2048 : (nb < 1 ? 1 : nb));
    auto partial = torch::empty({blocks}, predictions.options());
    auto out = torch::empty(std::vector<int64_t>{}, predictions.options());
    smooth_l1_partial_kernel<<<blocks, BLOCK>>>(predictions.data_ptr<float>(), targets.data_ptr<float>(),
                                                partial.data_ptr<float>(), n);
    mean_partials_kernel<<<1, BLOCK>>>(partial.data_ptr<float>(), blocks, out.data_ptr<float>(),
                                       1.0 / (double)n);
    return out;
}
"""

huber_cpp = "torch::Tensor smooth_l1_loss_cuda(torch::Tensor predictions, torch::Tensor targets);"

huber_ext = load_inline(
    name="smooth_l1_loss_reduce",
    cpp_sources=huber_cpp,
    cuda_sources=huber_source,
    functions=["smooth_l1_loss_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Smooth L1 (Huber) loss computed by a fused custom CUDA reduction.
    """
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, predictions, targets):
        return huber_ext.smooth_l1_loss_cuda(predictions, targets)
