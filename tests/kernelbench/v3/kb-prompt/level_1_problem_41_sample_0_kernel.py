import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

maxpool1d_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cfloat>

#define TILE_OUT 1024
#define THREADS 256

// ---------------------------------------------------------------------------
// Shared-memory tiled max-pool 1D.
// Each block handles TILE_OUT consecutive outputs of one (batch, channel) row.
// The input span needed by those outputs is staged once in shared memory
// (out-of-range / padded positions are filled with -inf), then every thread
// computes TILE_OUT/THREADS outputs from shared memory.
// ---------------------------------------------------------------------------
__global__ void __launch_bounds__(THREADS)
maxpool1d_tiled_kernel(const float* __restrict__ x,
                       float* __restrict__ y,
                       int64_t* __restrict__ ind,   // may be nullptr
                       int L_in, int L_out,
                       int kernel_size, int stride, int padding, int dilation,
                       int tiles_per_row, int span)
{
    extern __shared__ float smem[];

    const int64_t row  = blockIdx.x / tiles_per_row;
    const int tile     = blockIdx.x - (int)(row * tiles_per_row);
    const int out_start = tile * TILE_OUT;
    const int in_start  = out_start * stride - padding;

    const float* xrow = x + row * (int64_t)L_in;

    for (int i = threadIdx.x; i < span; i += THREADS) {
        const int idx = in_start + i;
        smem[i] = (idx >= 0 && idx < L_in) ? __ldg(xrow + idx) : -INFINITY;
    }
    __syncthreads();

    float* yrow = y + row * (int64_t)L_out;
    int64_t* irow = ind ? ind + row * (int64_t)L_out : nullptr;

    for (int j = threadIdx.x; j < TILE_OUT; j += THREADS) {
        const int o = out_start + j;
        if (o >= L_out) break;
        const int base = j * stride;
        const int gbase = in_start + base;
        float m = -INFINITY;
        int mi = gbase < 0 ? 0 : gbase;
        for (int k = 0; k < kernel_size; ++k) {
            const int gi = gbase + k * dilation;
            if (gi < 0 || gi >= L_in) continue;
            const float v = smem[base + k * dilation];
            if (v > m || isnan(v)) {
                m = v;
                mi = gi;
            }
        }
        yrow[o] = m;
        if (irow) irow[o] = (int64_t)mi;
    }
}

// Fallback (no shared memory) when the staged span would be too large.
__global__ void maxpool1d_direct_kernel(const float* __restrict__ x,
                                        float* __restrict__ y,
                                        int64_t* __restrict__ ind,
                                        int64_t rows, int L_in, int L_out,
                                        int kernel_size, int stride, int padding, int dilation)
{
    const int64_t total = rows * (int64_t)L_out;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = t / L_out;
        const int o = (int)(t - row * L_out);
        const float* xrow = x + row * (int64_t)L_in;
        const int gbase = o * stride - padding;
        float m = -INFINITY;
        int mi = gbase < 0 ? 0 : gbase;
        for (int k = 0; k < kernel_size; ++k) {
            const int gi = gbase + k * dilation;
            if (gi < 0 || gi >= L_in) continue;
            const float v = __ldg(xrow + gi);
            if (v > m || isnan(v)) {
                m = v;
                mi = gi;
            }
        }
        y[t] = m;
        if (ind) ind[t] = (int64_t)mi;
    }
}

std::vector<torch::Tensor> maxpool1d_cuda(torch::Tensor x, int64_t kernel_size, int64_t stride,
                                          int64_t padding, int64_t dilation, bool return_indices) {
    TORCH_CHECK(x.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "input must be float32");
    TORCH_CHECK(x.dim() == 2 || x.dim() == 3, "input must be 2D or 3D");
    TORCH_CHECK(kernel_size > 0 && stride > 0 && dilation > 0, "invalid pooling params");
    TORCH_CHECK(padding >= 0 && padding <= kernel_size / 2, "pad should be at most half of kernel size");

    auto xc = x.contiguous();
    const int64_t L_in = xc.size(-1);
    const int64_t rows = xc.numel() / std::max<int64_t>(L_in, 1);
    const int64_t L_out = (L_in + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1;
    TORCH_CHECK(L_out > 0, "output size is too small");

    std::vector<int64_t> out_sizes(xc.sizes().begin(), xc.sizes().end());
    out_sizes.back() = L_out;
    auto y = torch::empty(out_sizes, xc.options());
    torch::Tensor ind;
    int64_t* ind_ptr = nullptr;
    if (return_indices) {
        ind = torch::empty(out_sizes, xc.options().dtype(torch::kLong));
        ind_ptr = ind.data_ptr<int64_t>();
    }
    if (rows == 0) {
        if (return_indices) return {y, ind};
        return {y};
    }

    auto stream = at::cuda::getCurrentCUDAStream();
    const int64_t span = (int64_t)(TILE_OUT - 1) * stride + (int64_t)(kernel_size - 1) * dilation + 1;
    const size_t smem_bytes = (size_t)span * sizeof(float);
    const int64_t tiles_per_row = (L_out + TILE_OUT - 1) / TILE_OUT;

    if (smem_bytes <= 48 * 1024 && rows * tiles_per_row < (int64_t)INT32_MAX) {
        const unsigned blocks = (unsigned)(rows * tiles_per_row);
        maxpool1d_tiled_kernel<<<blocks, THREADS, smem_bytes, stream>>>(
            xc.data_ptr<float>(), y.data_ptr<float>(), ind_ptr,
            (int)L_in, (int)L_out, (int)kernel_size, (int)stride, (int)padding, (int)dilation,
            (int)tiles_per_row, (int)span);
    } else {
        const int64_t total = rows * L_out;
        int sm_count = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
        const int64_t blocks = std::min<int64_t>((total + 255) / 256, (int64_t)sm_count * 32);
        maxpool1d_direct_kernel<<<(unsigned)blocks, 256, 0, stream>>>(
            xc.data_ptr<float>(), y.data_ptr<float>(), ind_ptr, rows,
            (int)L_in, (int)L_out, (int)kernel_size, (int)stride, (int)padding, (int)dilation);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();

    if (return_indices) return {y, ind};
    return {y};
}
"""

maxpool1d_cpp_source = (
    "std::vector<torch::Tensor> maxpool1d_cuda(torch::Tensor x, int64_t kernel_size, int64_t stride, "
    "int64_t padding, int64_t dilation, bool return_indices);"
)

maxpool1d_ext = load_inline(
    name="maxpool1d_tiled_ext",
    cpp_sources=maxpool1d_cpp_source,
    cuda_sources=maxpool1d_source,
    functions=["maxpool1d_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Max Pooling 1D implemented with a shared-memory tiled CUDA kernel.
    """
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0, dilation: int = 1,
                 return_indices: bool = False):
        super(ModelNew, self).__init__()
        self.kernel_size = int(kernel_size)
        self.stride = int(stride) if stride is not None else int(kernel_size)
        self.padding = int(padding)
        self.dilation = int(dilation)
        self.return_indices = bool(return_indices)
        self.ext = maxpool1d_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        res = self.ext.maxpool1d_cuda(x, self.kernel_size, self.stride, self.padding,
                                      self.dilation, self.return_indices)
        if self.return_indices:
            return res[0], res[1]
        return res[0]
