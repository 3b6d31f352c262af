import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cumprod_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#define FULL_MASK 0xffffffffu

template <bool VEC>
__device__ __forceinline__ float4 load4(const float* __restrict__ p, int64_t idx, int64_t L) {
    if (VEC) {
        // L % 4 == 0 and idx % 4 == 0  ->  either all four elements are valid or none.
        if (idx < L) return __ldg(reinterpret_cast<const float4*>(p + idx));
        return make_float4(1.f, 1.f, 1.f, 1.f);
    } else {
        float4 r;
        r.x = (idx + 0 < L) ? __ldg(p + idx + 0) : 1.f;
        r.y = (idx + 1 < L) ? __ldg(p + idx + 1) : 1.f;
        r.z = (idx + 2 < L) ? __ldg(p + idx + 2) : 1.f;
        r.w = (idx + 3 < L) ? __ldg(p + idx + 3) : 1.f;
        return r;
    }
}

template <bool VEC>
__device__ __forceinline__ void store4(float* __restrict__ p, int64_t idx, int64_t L, float4 v) {
    if (VEC) {
        if (idx < L) *reinterpret_cast<float4*>(p + idx) = v;
    } else {
        if (idx + 0 < L) p[idx + 0] = v.x;
        if (idx + 1 < L) p[idx + 1] = v.y;
        if (idx + 2 < L) p[idx + 2] = v.z;
        if (idx + 3 < L) p[idx + 3] = v.w;
    }
}

// One block scans one row (grid-stride over rows).  The row is processed in
// tiles of THREADS * 4 elements: each thread owns 4 consecutive elements
// (one float4), computes their local inclusive product, then a multiplicative
// warp-shuffle scan + a scan over the per-warp totals gives the exclusive
// prefix of every thread.  A running "carry" links the tiles together.  The
// next tile is prefetched into registers while the current one is scanned.
template <int THREADS, bool VEC>
__global__ void __launch_bounds__(THREADS)
cumprod_lastdim_kernel(const float* __restrict__ x, float* __restrict__ y,
                       int64_t rows, int64_t L) {
    constexpr int NW = THREADS / 32;
    constexpr int TILE = THREADS * 4;
    __shared__ float s_warp[NW];

    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int wid = tid >> 5;

    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const float* xr = x + row * L;
        float* yr = y + row * L;
        float carry = 1.f;

        float4 cur = load4<VEC>(xr, (int64_t)tid * 4, L);
        for (int64_t base = 0; base < L; base += TILE) {
            const int64_t idx = base + (int64_t)tid * 4;
            float4 nxt = make_float4(1.f, 1.f, 1.f, 1.f);
            if (base + TILE < L) nxt = load4<VEC>(xr, idx + TILE, L);

            // thread-local inclusive products
            const float p0 = cur.x;
            const float p1 = p0 * cur.y;
            const float p2 = p1 * cur.z;
            const float p3 = p2 * cur.w;

            // warp inclusive scan of thread totals
            float incl = p3;
            #pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                const float t = __shfl_up_sync(FULL_MASK, incl, off);
                if (lane >= off) incl *= t;
            }
            float excl = __shfl_up_sync(FULL_MASK, incl, 1);
            if (lane == 0) excl = 1.f;

            if (lane == 31) s_warp[wid] = incl;
            __syncthreads();
            if (wid == 0) {
                float v = (lane < NW) ? s_warp[lane] : 1.f;
                #pragma unroll
                for (int off = 1; off < 32; off <<= 1) {
                    const float t = __shfl_up_sync(FULL_MASK, v, off);
                    if (lane >= off) v *= t;
                }
                if (lane < NW) s_warp[lane] = v;   // inclusive scan of warp totals
            }
            __syncthreads();

            const float warp_prefix = (wid > 0) ? s_warp[wid - 1] : 1.f;
            const float tile_total = s_warp[NW - 1];
            const float pre = carry * (warp_prefix * excl);

            float4 out;
            out.x = pre * p0;
            out.y = pre * p1;
            out.z = pre * p2;
            out.w = pre * p3;
            store4<VEC>(yr, idx, L, out);

            carry *= tile_total;
            cur = nxt;
            __syncthreads();   // s_warp is rewritten in the next tile
        }
    }
}

torch::Tensor cumprod_lastdim_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    const int64_t L = xc.dim() == 0 ? 1 : xc.size(-1);
    const int64_t rows = xc.numel() / L;

    constexpr int THREADS = 512;
    const int64_t max_blocks = 1LL << 30;
    const unsigned blocks = (unsigned)(rows < max_blocks ? rows : max_blocks);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();

    const bool vec = (L % 4 == 0) &&
                     ((reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) & 15) == 0) &&
                     ((reinterpret_cast<uintptr_t>(y.data_ptr<float>()) & 15) == 0);
    if (vec) {
        cumprod_lastdim_kernel<THREADS, true><<<blocks, THREADS, 0, stream>>>(
            xc.data_ptr<float>(), y.data_ptr<float>(), rows, L);
    } else {
        cumprod_lastdim_kernel<THREADS, false><<<blocks, THREADS, 0, stream>>>(
            xc.data_ptr<float>(), y.data_ptr<float>(), rows, L);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cumprod_cpp_source = "torch::Tensor cumprod_lastdim_cuda(torch::Tensor x);"

cumprod_ext = load_inline(
    name="cumprod_rowscan",
    cpp_sources=cumprod_cpp_source,
    cuda_sources=cumprod_source,
    functions=["cumprod_lastdim_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Cumulative product along `dim` using a block-wide multiplicative scan
    (warp shuffles + per-warp totals in shared memory, carried across tiles).
    """
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x):
        if x.dim() == 0:
            return x.clone()
        dim = self.dim % x.dim()
        if dim == x.dim() - 1:
            return cumprod_ext.cumprod_lastdim_cuda(x)
        xt = x.movedim(dim, -1).contiguous()
        out = cumprod_ext.cumprod_lastdim_cuda(xt)
        return out.movedim(-1, dim)
