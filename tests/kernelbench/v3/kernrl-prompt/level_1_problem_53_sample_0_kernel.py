import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <vector>

#define RX 32   // threads along the contiguous (inner) dimension
#define RY 8    // threads splitting the reduced dimension

// x viewed as [outer, R, inner]; out[o, i] = min_r x[o, r, i]
// Block (32, 8): threadIdx.x walks the contiguous axis (coalesced loads),
// threadIdx.y splits the reduction; partial minima combined in shared memory.
__global__ void __launch_bounds__(RX * RY)
min_reduce_mid_kernel(const float* __restrict__ x, float* __restrict__ out, int R, int inner)
{
    __shared__ float sm[RY][RX + 1];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int i = blockIdx.x * RX + tx;
    const long long o = blockIdx.y;
    const float INF = __int_as_float(0x7f800000);

    float m0 = INF, m1 = INF, m2 = INF, m3 = INF;
    if (i < inner) {
        const float* p = x + o * (long long)R * inner + i;
        const long long step = (long long)inner;
        int r = ty;
        // 4 independent loads in flight per iteration
        for (; r + 3 * RY < R; r += 4 * RY) {
            const float v0 = __ldg(p + (long long)r * step);
            const float v1 = __ldg(p + (long long)(r + RY) * step);
            const float v2 = __ldg(p + (long long)(r + 2 * RY) * step);
            const float v3 = __ldg(p + (long long)(r + 3 * RY) * step);
            m0 = fminf(m0, v0);
            m1 = fminf(m1, v1);
            m2 = fminf(m2, v2);
            m3 = fminf(m3, v3);
        }
        for (; r < R; r += RY) m0 = fminf(m0, __ldg(p + (long long)r * step));
    }
    sm[ty][tx] = fminf(fminf(m0, m1), fminf(m2, m3));
    __syncthreads();

    if (ty == 0 && i < inner) {
        float m = sm[0][tx];
#pragma unroll
        for (int k = 1; k < RY; ++k) m = fminf(m, sm[k][tx]);
        out[o * inner + i] = m;
    }
}

torch::Tensor min_reduce(torch::Tensor x, int64_t dim)
{
    TORCH_CHECK(x.is_cuda() && x.is_contiguous(), "expected contiguous CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "expected float32");
    const int nd = (int)x.dim();
    int d = (int)dim;
    if (d < 0) d += nd;
    TORCH_CHECK(d >= 0 && d < nd, "dim out of range");

    long long outer = 1, inner = 1;
    std::vector<int64_t> out_sizes;
    for (int k = 0; k < nd; ++k) {
        if (k < d) outer *= x.size(k);
        if (k > d) inner *= x.size(k);
        if (k != d) out_sizes.push_back(x.size(k));
    }
    const int R = (int)x.size(d);

    auto out = torch::empty(out_sizes, x.options());
    dim3 block(RX, RY);
    dim3 grid((unsigned)((inner + RX - 1) / RX), (unsigned)outer);
    min_reduce_mid_kernel<<<grid, block>>>(x.data_ptr<float>(), out.data_ptr<float>(), R, (int)inner);
    return out;
}
"""

cpp_source = "torch::Tensor min_reduce(torch::Tensor x, int64_t dim);"

ext = load_inline(
    name="min_reduce_dim_ext",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["min_reduce"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.min_reduce(x, self.dim)
