import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# 2D average pooling.
# One thread block per (n*c, output row). The block first computes vertical
# (column) sums over the kernel_size input rows with fully coalesced (float4)
# loads into shared memory, then each thread produces output pixels by summing
# kernel_size consecutive column sums. Every input element is read exactly once.

avg_pool2d_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

template <bool VEC>
__global__ void avg_pool2d_rowsum_kernel(const float* __restrict__ x,
                                         float* __restrict__ out,
                                         int H, int W, int OH, int OW,
                                         int ksize, int stride, int pad,
                                         float inv_area) {
    extern __shared__ __align__(16) float colsum[];  // W floats

    const int oh = blockIdx.x % OH;
    const long long nc = blockIdx.x / OH;

    const float* plane = x + nc * (long long)H * W;

    int h_start = oh * stride - pad;
    int h_end = h_start + ksize;
    if (h_start < 0) h_start = 0;
    if (h_end > H) h_end = H;

    // Phase 1: vertical sums for every column
    if (VEC) {
        const int W4 = W >> 2;
        for (int c4 = threadIdx.x; c4 < W4; c4 += blockDim.x) {
            float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
            const float* p = plane + (long long)h_start * W + (c4 << 2);
            for (int h = h_start; h < h_end; ++h) {
                const float4 v = __ldg(reinterpret_cast<const float4*>(p));
                s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
                p += W;
            }
            reinterpret_cast<float4*>(colsum)[c4] = s;
        }
    } else {
        for (int c = threadIdx.x; c < W; c += blockDim.x) {
            float s = 0.f;
            const float* p = plane + (long long)h_start * W + c;
            for (int h = h_start; h < h_end; ++h) {
                s += __ldg(p);
                p += W;
            }
            colsum[c] = s;
        }
    }
    __syncthreads();

    // Phase 2: horizontal sums over the window
    float* orow = out + (nc * OH + oh) * (long long)OW;
    for (int ow = threadIdx.x; ow < OW; ow += blockDim.x) {
        int w_start = ow * stride - pad;
        int w_end = w_start + ksize;
        if (w_start < 0) w_start = 0;
        if (w_end > W) w_end = W;
        float s = 0.f;
        for (int w = w_start; w < w_end; ++w) s += colsum[w];
        orow[ow] = s * inv_area;  // count_include_pad=True -> divide by k*k
    }
}

torch::Tensor avg_pool2d_cuda(torch::Tensor x, int64_t kernel_size, int64_t stride, int64_t padding) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() == 4, "x must be 4D (N, C, H, W)");

    auto xc = x.contiguous();
    const int64_t N = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);
    const int64_t OH = (H + 2 * padding - kernel_size) / stride + 1;
    const int64_t OW = (W + 2 * padding - kernel_size) / stride + 1;

    auto out = torch::empty({N, C, OH, OW}, xc.options());
    if (out.numel() == 0) return out;

    const size_t smem = (size_t)W * sizeof(float);
    if (smem > 48 * 1024) {
        return torch::avg_pool2d(xc, {kernel_size, kernel_size}, {stride, stride}, {padding, padding});
    }

    const int threads = 256;
    const long long blocks = N * C * OH;
    const float inv_area = 1.0f / (float)(kernel_size * kernel_size);

    const bool vec = (W % 4 == 0) && ((reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) & 15) == 0);
    if (vec) {
        avg_pool2d_rowsum_kernel<true><<<(unsigned)blocks, threads, smem>>>(
            xc.data_ptr<float>(), out.data_ptr<float>(), (int)H, (int)W, (int)OH, (int)OW,
            (int)kernel_size, (int)stride, (int)padding, inv_area);
    } else {
        avg_pool2d_rowsum_kernel<false><<<(unsigned)blocks, threads, smem>>>(
            xc.data_ptr<float>(), out.data_ptr<float>(), (int)H, (int)W, (int)OH, (int)OW,
            (int)kernel_size, (int)stride, (int)padding, inv_area);
    }
    return out;
}
"""

avg_pool2d_cpp_source = (
    "torch::Tensor avg_pool2d_cuda(torch::Tensor x, int64_t kernel_size, int64_t stride, int64_t padding);"
)

avg_pool2d_ext = load_inline(
    name="avg_pool2d_rowsum",
    cpp_sources=avg_pool2d_cpp_source,
    cuda_sources=avg_pool2d_source,
    functions=["avg_pool2d_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    2D Average Pooling with a custom CUDA kernel.
    """
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0):
        super(ModelNew, self).__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return avg_pool2d_ext.avg_pool2d_cuda(x, self.kernel_size, self.stride, self.padding)
