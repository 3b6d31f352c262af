import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cumsum_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

// ---------------------------------------------------------------------------
// Row-wise inclusive prefix sum. One block per row; the row is processed in
// chunks of BLOCK*4 elements. Each thread loads 4 consecutive values (float4
// when possible), does a local serial scan, then a warp-shuffle scan of the
// thread totals, then a scan over warp totals in shared memory. A running
// carry propagates the prefix from chunk to chunk.
// ---------------------------------------------------------------------------
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
row_cumsum_kernel(const float* __restrict__ x, float* __restrict__ y,
                  int64_t rows, int64_t L, bool vec_ok)
{
    constexpr int NWARPS = BLOCK / 32;
    constexpr int CHUNK = BLOCK * 4;
    __shared__ float warp_sums[NWARPS];

    const int tid  = threadIdx.x;
    const int lane = tid & 31;
    const int wid  = tid >> 5;

    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const float* xr = x + row * L;
        float* yr = y + row * L;
        float carry = 0.0f;

        for (int64_t base = 0; base < L; base += CHUNK) {
            const int64_t idx = base + (int64_t)tid * 4;
            float v0 = 0.f, v1 = 0.f, v2 = 0.f, v3 = 0.f;
            const bool full = vec_ok && (idx + 3 < L);
            if (full) {
                float4 t = __ldg(reinterpret_cast<const float4*>(xr + idx));
                v0 = t.x; v1 = t.y; v2 = t.z; v3 = t.w;
            } else {
                if (idx     < L) v0 = __ldg(xr + idx);
                if (idx + 1 < L) v1 = __ldg(xr + idx + 1);
                if (idx + 2 < L) v2 = __ldg(xr + idx + 2);
                if (idx + 3 < L) v3 = __ldg(xr + idx + 3);
            }
            // local inclusive scan
            v1 += v0; v2 += v1; v3 += v2;

            // warp inclusive scan of thread totals
            float t = v3;
#pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                float n = __shfl_up_sync(0xffffffff, t, off);
                if (lane >= off) t += n;
            }
            if (lane == 31) warp_sums[wid] = t;
            __syncthreads();

            if (wid == 0) {
                float w = (lane < NWARPS) ? warp_sums[lane] : 0.0f;
#pragma unroll
                for (int off = 1; off < 32; off <<= 1) {
                    float n = __shfl_up_sync(0xffffffff, w, off);
                    if (lane >= off) w += n;
                }
                if (lane < NWARPS) warp_sums[lane] = w;
            }
            __syncthreads();

            const float thread_excl = t - v3;
            const float warp_excl = (wid > 0) ? warp_sums[wid - 1] : 0.0f;
            const float prefix = carry + warp_excl + thread_excl;
            const float chunk_total = warp_sums[NWARPS - 1];

            v0 += prefix; v1 += prefix; v2 += prefix; v3 += prefix;
            if (full) {
                *reinterpret_cast<float4*>(yr + idx) = make_float4(v0, v1, v2, v3);
            } else {
                if (idx     < L) yr[idx]     = v0;
                if (idx + 1 < L) yr[idx + 1] = v1;
                if (idx + 2 < L) yr[idx + 2] = v2;
                if (idx + 3 < L) yr[idx + 3] = v3;
            }
            carry += chunk_total;
            __syncthreads();   // warp_sums is reused by the next chunk
        }
    }
}

torch::Tensor cumsum_cuda(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "input must be float32");
    const int64_t nd = x.dim();
    if (nd == 0) return x.clone();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "dim out of range");

    // Bring the scan dimension to the innermost position.
    const bool last = (dim == nd - 1);
    auto xt = last ? x.contiguous() : x.transpose(dim, nd - 1).contiguous();
    auto yt = torch::empty_like(xt);

    const int64_t L = xt.size(-1);
    const int64_t numel = xt.numel();
    if (numel == 0) return last ? yt : yt.transpose(dim, nd - 1).contiguous();
    const int64_t rows = numel / L;

    const bool vec_ok = (L % 4 == 0) &&
                        (reinterpret_cast<uintptr_t>(xt.data_ptr<float>()) % 16 == 0) &&
                        (reinterpret_cast<uintptr_t>(yt.data_ptr<float>()) % 16 == 0);

    auto stream = at::cuda::getCurrentCUDAStream();
    const int64_t blocks = std::min<int64_t>(rows, (int64_t)INT32_MAX);
    if (L >= 4096) {
        row_cumsum_kernel<512><<<(unsigned)blocks, 512, 0, stream>>>(
            xt.data_ptr<float>(), yt.data_ptr<float>(), rows, L, vec_ok);
    } else {
        row_cumsum_kernel<128><<<(unsigned)blocks, 128, 0, stream>>>(
            xt.data_ptr<float>(), yt.data_ptr<float>(), rows, L, vec_ok);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();

    if (last) return yt;
    return yt.transpose(dim, nd - 1).contiguous();
}
"""

cumsum_cpp_source = "torch::Tensor cumsum_cuda(torch::Tensor x, int64_t dim);"

cumsum_ext = load_inline(
    name="row_cumsum_scan_ext",
    cpp_sources=cumsum_cpp_source,
    cuda_sources=cumsum_source,
    functions=["cumsum_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Cumulative sum along a dimension using a block-level warp-shuffle scan.
    """
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.dim = dim
        self.ext = cumsum_ext

    def forward(self, x):
        return self.ext.cumsum_cuda(x, self.dim)
