import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# ---------------------------------------------------------------------------
# The GEMM (128 x 16384 x 16384) is left to cuBLAS (torch.mm, full FP32), and
# the whole epilogue  (+bias, min(., c), -c)  is fused into one vectorized,
# in-place kernel. The constant is read from device memory, so there's no
# host sync (.item()) and it keeps working if the parameter changes.
# ---------------------------------------------------------------------------
cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void bias_min_sub_vec4_kernel(float4* __restrict__ y,
                                         const float4* __restrict__ bias,
                                         const float* __restrict__ cptr,
                                         long long total_vec, int cols_vec)
{
    const float c = __ldg(cptr);
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total_vec; i += stride) {
        const int col = (int)(i % cols_vec);
        float4 v = y[i];
        const float4 b = __ldg(bias + col);
        v.x = fminf(v.x + b.x, c) - c;
        v.y = fminf(v.y + b.y, c) - c;
        v.z = fminf(v.z + b.z, c) - c;
        v.w = fminf(v.w + b.w, c) - c;
        y[i] = v;
    }
}

__global__ void bias_min_sub_kernel(float* __restrict__ y,
                                    const float* __restrict__ bias,
                                    const float* __restrict__ cptr,
                                    long long total, int cols)
{
    const float c = __ldg(cptr);
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        const int col = (int)(i % cols);
        y[i] = fminf(y[i] + __ldg(bias + col), c) - c;
    }
}

torch::Tensor linear_min_sub_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, torch::Tensor constant) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda() && constant.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    auto x2 = x.reshape({-1, x.size(-1)});
    // cuBLAS GEMM: y = x @ W^T   (bias is applied in the fused epilogue)
    auto y = torch::mm(x2, weight.t());
    auto b = bias.contiguous();
    auto cst = constant.to(torch::kFloat32).contiguous();

    const long long rows = y.size(0);
    const int cols = (int)y.size(1);
    const long long total = rows * cols;
    auto out_sizes = x.sizes().vec();
    out_sizes.back() = cols;
    if (total == 0) return y.view(out_sizes);

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;

    if (cols % 4 == 0) {
        const long long tv = total / 4;
        int blocks = (int)std::min<long long>((tv + threads - 1) / threads, (long long)sms * 16);
        bias_min_sub_vec4_kernel<<<blocks, threads, 0, stream>>>(
            reinterpret_cast<float4*>(y.data_ptr<float>()),
            reinterpret_cast<const float4*>(b.data_ptr<float>()),
            cst.data_ptr<float>(), tv, cols / 4);
    } else {
        int blocks = (int)std::min<long long>((total + threads - 1) / threads, (long long)sms * 16);
        bias_min_sub_kernel<<<blocks, threads, 0, stream>>>(
            y.data_ptr<float>(), b.data_ptr<float>(), cst.data_ptr<float>(), total, cols);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y.view(out_sizes);
}
"""

cpp_source = "torch::Tensor linear_min_sub_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, torch::Tensor constant);"

linear_min_sub = load_inline(
    name="linear_min_sub_fused",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["linear_min_sub_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Linear (cuBLAS SGEMM) + fused (bias, min with constant, subtract constant) epilogue kernel.
    """
    def __init__(self, in_features, out_features, constant):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.constant = nn.Parameter(torch.tensor(constant))
        self.op = linear_min_sub

    def forward(self, x):
        return self.op.linear_min_sub_cuda(x, self.linear.weight, self.linear.bias, self.constant)
