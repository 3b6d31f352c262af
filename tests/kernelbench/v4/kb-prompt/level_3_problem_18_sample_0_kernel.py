import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# ---------------------------------------------------------------------------
# SqueezeNet: the convolutions stay on cuDNN; every memory-bound op around
# them is replaced by fused custom kernels:
#   * relu_inplace          : squeeze activation (float4, in place)
#   * relu_cat              : ReLU of both expand branches written straight into the
#                             concatenated output (no torch.cat, no separate ReLUs)
#   * relu_maxpool2d        : ReLU + MaxPool2d(ceil_mode) fused (relu(max) == max(relu))
#   * relu_global_avgpool   : classifier ReLU + AdaptiveAvgPool2d((1,1)) + flatten,
#                             one warp per (n, c)
# ---------------------------------------------------------------------------
cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

static inline int grid_for(long long n, int threads) {
    const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    long long b = (n + threads - 1) / threads;
    long long cap = (long long)sms * 32;
    return (int)(b < cap ? (b > 0 ? b : 1) : cap);
}

// ------------------------------------------------------------------ ReLU (in place)
__global__ void relu_inplace_vec4_kernel(float4* __restrict__ x, long long n4) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
        float4 v = x[i];
        v.x = fmaxf(v.x, 0.f); v.y = fmaxf(v.y, 0.f); v.z = fmaxf(v.z, 0.f); v.w = fmaxf(v.w, 0.f);
        x[i] = v;
    }
}
__global__ void relu_inplace_kernel(float* __restrict__ x, long long start, long long n) {
    for (long long i = start + (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        x[i] = fmaxf(x[i], 0.f);
}

torch::Tensor relu_inplace_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32, "bad input");
    const long long n = x.numel();
    if (n == 0) return x;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const long long n4 = n / 4;
    if (n4 > 0)
        relu_inplace_vec4_kernel<<<grid_for(n4, 256), 256, 0, stream>>>(reinterpret_cast<float4*>(x.data_ptr<float>()), n4);
    if (n4 * 4 < n)
        relu_inplace_kernel<<<1, 256, 0, stream>>>(x.data_ptr<float>(), n4 * 4, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return x;
}

// ------------------------------------------------------------------ ReLU + concat
template <bool VEC>
__global__ void relu_cat_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                                int C1, int C2, long long HW, long long total) {
    const int Ct = C1 + C2;
    if (VEC) {
        const long long total4 = total >> 2;
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total4; i += (long long)gridDim.x * blockDim.x) {
            const long long e = i << 2;
            const long long s = e % HW;
            const long long t = e / HW;
            const int c = (int)(t % Ct);
            const long long n = t / Ct;
            float4 v;
            if (c < C1) v = __ldg(reinterpret_cast<const float4*>(a + (n * C1 + c) * HW + s));
            else        v = __ldg(reinterpret_cast<const float4*>(b + (n * C2 + (c - C1)) * HW + s));
            v.x = fmaxf(v.x, 0.f); v.y = fmaxf(v.y, 0.f); v.z = fmaxf(v.z, 0.f); v.w = fmaxf(v.w, 0.f);
            reinterpret_cast<float4*>(out)[i] = v;
        }
    } else {
        for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
            const long long s = e % HW;
            const long long t = e / HW;
            const int c = (int)(t % Ct);
            const long long n = t / Ct;
            float v = (c < C1) ? __ldg(a + (n * C1 + c) * HW + s) : __ldg(b + (n * C2 + (c - C1)) * HW + s);
            out[e] = fmaxf(v, 0.f);
        }
    }
}

torch::Tensor relu_cat_cuda(torch::Tensor a, torch::Tensor b) {
    a = a.contiguous(); b = b.contiguous();
    const int N = a.size(0), C1 = a.size(1), C2 = b.size(1), H = a.size(2), W = a.size(3);
    TORCH_CHECK(b.size(0) == N && b.size(2) == H && b.size(3) == W, "shape mismatch");
    auto out = torch::empty({N, C1 + C2, H, W}, a.options());
    const long long HW = (long long)H * W;
    const long long total = out.numel();
    if (total == 0) return out;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (HW % 4 == 0) {
        relu_cat_kernel<true><<<grid_for(total / 4, 256), 256, 0, stream>>>(
            a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), C1, C2, HW, total);
    } else {
        relu_cat_kernel<false><<<grid_for(total, 256), 256, 0, stream>>>(
            a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), C1, C2, HW, total);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}

// ------------------------------------------------------------------ (ReLU +) MaxPool2d, ceil_mode aware
__global__ void maxpool2d_kernel(const float* __restrict__ x, float* __restrict__ out,
                                 int H, int W, int OH, int OW, int k, int s, int pad,
                                 long long total, bool relu) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        const int ow = (int)(i % OW);
        const long long t = i / OW;
        const int oh = (int)(t % OH);
        const long long nc = t / OH;
        const float* p = x + nc * (long long)H * W;
        int hs = oh * s - pad, ws = ow * s - pad;
        int he = min(hs + k, H), we = min(ws + k, W);
        hs = max(hs, 0); ws = max(ws, 0);
        float m = -INFINITY;
        for (int h = hs; h < he; ++h) {
            const float* row = p + (long long)h * W;
            for (int w = ws; w < we; ++w) m = fmaxf(m, __ldg(row + w));
        }
        out[i] = relu ? fmaxf(m, 0.f) : m;
    }
}

static inline int pool_out_size(int in, int k, int s, int pad, bool ceil_mode) {
    int num = in + 2 * pad - (k - 1) - 1 + (ceil_mode ? (s - 1) : 0);
    int out = num / s + 1;   // num >= 0 for valid configs
    if (ceil_mode && (long long)(out - 1) * s >= in + pad) --out;
    return out;
}

torch::Tensor maxpool2d_cuda(torch::Tensor x, int64_t k, int64_t s, int64_t pad, bool ceil_mode, bool relu) {
    x = x.contiguous();
    const int N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int OH = pool_out_size(H, k, s, pad, ceil_mode);
    const int OW = pool_out_size(W, k, s, pad, ceil_mode);
    auto out = torch::empty({N, C, OH, OW}, x.options());
    const long long total = out.numel();
    if (total == 0) return out;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    maxpool2d_kernel<<<grid_for(total, 256), 256, 0, stream>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), H, W, OH, OW, (int)k, (int)s, (int)pad, total, relu);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}

// ------------------------------------------------------------------ ReLU + global average pool
__global__ void relu_gap_kernel(const float* __restrict__ x, float* __restrict__ out, long long rows, int HW) {
    const int warps_per_block = blockDim.x >> 5;
    const int lane = threadIdx.x & 31;
    for (long long r = (long long)blockIdx.x * warps_per_block + (threadIdx.x >> 5); r < rows;
         r += (long long)gridDim.x * warps_per_block) {
        const float* p = x + r * HW;
        float s = 0.f;
        for (int i = lane; i < HW; i += 32) s += fmaxf(__ldg(p + i), 0.f);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
        if (lane == 0) out[r] = s / (float)HW;
    }
}

torch::Tensor relu_gap_cuda(torch::Tensor x) {
    x = x.contiguous();
    const int N = x.size(0), C = x.size(1);
    const int HW = x.size(2) * x.size(3);
    auto out = torch::empty({N, C}, x.options());
    const long long rows = (long long)N * C;
    if (rows == 0) return out;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    const int wpb = threads / 32;
    long long blocks = (rows + wpb - 1) / wpb;
    if (blocks > 65535LL * 16) blocks = 65535LL * 16;
    relu_gap_kernel<<<(int)blocks, threads, 0, stream>>>(x.data_ptr<float>(), out.data_ptr<float>(), rows, HW);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = r"""
torch::Tensor relu_inplace_cuda(torch::Tensor x);
torch::Tensor relu_cat_cuda(torch::Tensor a, torch::Tensor b);
torch::Tensor maxpool2d_cuda(torch::Tensor x, int64_t k, int64_t s, int64_t pad, bool ceil_mode, bool relu);
torch::Tensor relu_gap_cuda(torch::Tensor x);
"""

squeeze_ops = load_inline(
    name="squeezenet_fused_ops",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["relu_inplace_cuda", "relu_cat_cuda", "maxpool2d_cuda", "relu_gap_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


def _first(v):
    return int(v[0]) if isinstance(v, (tuple, list)) else int(v)


class FireModule(nn.Module):
    def __init__(self, in_channels, squeeze_channels, expand1x1_channels, expand3x3_channels):
        super(FireModule, self).__init__()
        self.squeeze = nn.Conv2d(in_channels, squeeze_channels, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_channels, expand1x1_channels, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_channels, expand3x3_channels, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = squeeze_ops.relu_inplace_cuda(self.squeeze(x).contiguous())
        e1 = self.expand1x1(x)
        e3 = self.expand3x3(x)
        # ReLU on both branches + channel concat in one pass
        return squeeze_ops.relu_cat_cuda(e1, e3)


class ModelNew(nn.Module):
    def __init__(self, num_classes=1000):
        super(ModelNew, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 96, kernel_size=7, stride=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            FireModule(96, 16, 64, 64),
            FireModule(128, 16, 64, 64),
            FireModule(128, 32, 128, 128),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            FireModule(256, 32, 128, 128),
            FireModule(256, 48, 192, 192),
            FireModule(384, 48, 192, 192),
            FireModule(384, 64, 256, 256),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            FireModule(512, 64, 256, 256),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(p=0.0),
            nn.Conv2d(512, num_classes, kernel_size=1),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1))
        )

    @staticmethod
    def _pool(x, pool, relu):
        return squeeze_ops.maxpool2d_cuda(
            x, _first(pool.kernel_size), _first(pool.stride if pool.stride is not None else pool.kernel_size),
            _first(pool.padding), bool(pool.ceil_mode), relu)

    def forward(self, x):
        mods = list(self.features)
        i = 0
        while i < len(mods):
            m = mods[i]
            if isinstance(m, nn.Conv2d):
                x = m(x)
                if (i + 2 < len(mods) and isinstance(mods[i + 1], nn.ReLU)
                        and isinstance(mods[i + 2], nn.MaxPool2d)):
                    # fused ReLU + MaxPool2d
                    x = self._pool(x, mods[i + 2], True)
                    i += 3
                    continue
            elif isinstance(m, nn.ReLU):
                x = squeeze_ops.relu_inplace_cuda(x.contiguous())
            elif isinstance(m, nn.MaxPool2d):
                x = self._pool(x, m, False)   # inputs are already non-negative
            else:
                x = m(x)
            i += 1

        # classifier: Dropout(p=0) is the identity, Conv1x1 on cuDNN, then fused ReLU + GAP + flatten
        drop = self.classifier[0]
        if self.training and drop.p > 0:
            x = drop(x)
        x = self.classifier[1](x)
        return squeeze_ops.relu_gap_cuda(x)
