import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# LayerNorm over the trailing normalized_shape. Rows are very long (C*H*W elements), so the
# statistics are computed with many blocks per row (partial sum / sum-of-squares), combined
# in double precision, then a fully parallel elementwise kernel applies the affine transform.
layernorm_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define THREADS 256

__device__ __forceinline__ float warp_sum(float v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}

// grid = (chunks, rows). Block (c, r) reduces elements [c*chunk, min((c+1)*chunk, N)) of row r.
__global__ void ln_partial_stats_kernel(const float* __restrict__ x, double* __restrict__ psum,
                                        double* __restrict__ psumsq, long long N, long long chunk) {
    const int row = blockIdx.y;
    const int c = blockIdx.x;
    const float* xr = x + (long long)row * N;
    long long start = (long long)c * chunk;
    long long end = start + chunk;
    if (end > N) end = N;

    float s = 0.0f, ss = 0.0f;
    for (long long i = start + threadIdx.x; i < end; i += THREADS) {
        float v = xr[i];
        s += v;
        ss += v * v;
    }
    __shared__ float sh_s[THREADS / 32];
    __shared__ float sh_ss[THREADS / 32];
    s = warp_sum(s);
    ss = warp_sum(ss);
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) { sh_s[wid] = s; sh_ss[wid] = ss; }
    __syncthreads();
    if (wid == 0) {
        s = lane < THREADS / 32 ? sh_s[lane] : 0.0f;
        ss = lane < THREADS / 32 ? sh_ss[lane] : 0.0f;
        s = warp_sum(s);
        ss = warp_sum(ss);
        if (lane == 0) {
            psum[(long long)row * gridDim.x + c] = (double)s;
            psumsq[(long long)row * gridDim.x + c] = (double)ss;
        }
    }
}

// One block per row: combine partials -> mean, rstd.
__global__ void ln_finalize_kernel(const double* __restrict__ psum, const double* __restrict__ psumsq,
                                   int chunks, long long N, float eps,
                                   float* __restrict__ mean_out, float* __restrict__ rstd_out) {
    __shared__ double a[THREADS];
    __shared__ double b[THREADS];
    const int row = blockIdx.x;
    double s = 0.0, ss = 0.0;
    for (int i = threadIdx.x; i < chunks; i += THREADS) {
        s += psum[(long long)row * chunks + i];
        ss += psumsq[(long long)row * chunks + i];
    }
    a[threadIdx.x] = s;
    b[threadIdx.x] = ss;
    __syncthreads();
    for (int o = THREADS / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) {
            a[threadIdx.x] += a[threadIdx.x + o];
            b[threadIdx.x] += b[threadIdx.x + o];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        double mean = a[0] / (double)N;
        double var = b[0] / (double)N - mean * mean;
        if (var < 0.0) var = 0.0;
        mean_out[row] = (float)mean;
        rstd_out[row] = (float)(1.0 / sqrt(var + (double)eps));
    }
}

__global__ void ln_apply_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                const float* __restrict__ beta, const float* __restrict__ mean,
                                const float* __restrict__ rstd, float* __restrict__ y,
                                long long N, long long total) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        long long row = i / N;
        long long j = i - row * N;
        y[i] = (x[i] - mean[row]) * rstd[row] * gamma[j] + beta[j];
    }
}

torch::Tensor layernorm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    weight = weight.contiguous();
    bias = bias.contiguous();
    const long long N = weight.numel();
    const long long total = x.numel();
    TORCH_CHECK(N > 0 && total % N == 0, "normalized_shape mismatch");
    const long long rows = total / N;
    auto y = torch::empty_like(x);
    if (rows == 0) return y;

    const long long chunk = 16384;
    const int chunks = (int)((N + chunk - 1) / chunk);
    auto dopts = x.options().dtype(torch::kFloat64);
    auto psum = torch::empty({rows, chunks}, dopts);
    auto psumsq = torch::empty({rows, chunks}, dopts);
    auto mean = torch::empty({rows}, x.options());
    auto rstd = torch::empty({rows}, x.options());

    dim3 grid1(chunks, (unsigned int)rows);
    ln_partial_stats_kernel<<<grid1, THREADS>>>(x.data_ptr<float>(), psum.data_ptr<double>(),
                                                psumsq.data_ptr<double>(), N, chunk);
    ln_finalize_kernel<<<(unsigned int)rows, THREADS>>>(psum.data_ptr<double>(), psumsq.data_ptr<double>(),
                                                        chunks, N, (float)eps,
                                                        mean.data_ptr<float>(), rstd.data_ptr<float>());
    long long blocks = (total + THREADS - 1) / THREADS;
    if (blocks > 1048576) blocks = 1048576;
    ln_apply_kernel<<<(int)blocks, THREADS>>>(x.data_ptr<float>(), weight.data_ptr<float>(),
                                              bias.data_ptr<float>(), mean.data_ptr<float>(),
                                              rstd.data_ptr<float>(), y.data_ptr<float>(), N, total);
    return y;
}
"""

layernorm_cpp = "torch::Tensor layernorm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);"

layernorm_ext = load_inline(
    name="layernorm_split_stats",
    cpp_sources=layernorm_cpp,
    cuda_sources=layernorm_source,
    functions=["layernorm_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Layer Normalization with custom CUDA kernels (keeps nn.LayerNorm for its parameters).
    """
    def __init__(self, normalized_shape: tuple):
        super(ModelNew, self).__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layernorm_ext.layernorm_cuda(x, self.ln.weight, self.ln.bias, float(self.ln.eps))
