import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Several kernels; the global max is brought back to the host to pick the exp shift.
ce_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void global_max_kernel(const float* x, float* m, int n) {
    __shared__ float s[256];
    float v = -1e30f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v = fmaxf(v, x[i]);
    s[threadIdx.x] = v;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) { if (threadIdx.x < k) s[threadIdx.x] = fmaxf(s[threadIdx.x], s[threadIdx.x + k]); __syncthreads(); }
    if (threadIdx.x == 0) m[blockIdx.x] = s[0];
}

__global__ void ce_loss_kernel(const float* x, const int64_t* t, float* loss, float shift, int B, int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= B) return;
    float s = 0.f;
    for (int c = 0; c < C; ++c) s += expf(x[i * C + c] - shift);
    atomicAdd(loss, (logf(s) + shift - x[i * C + t[i]]) / B);
}

torch::Tensor cross_entropy(torch::Tensor x, torch::Tensor t) {
    int B = x.size(0), C = x.size(1);
    auto partial = torch::empty({1}, x.options());
    global_max_kernel<<<1, 256>>>(x.data_ptr<float>(), partial.data_ptr<float>(), B * C);
    float h_max;
    cudaMemcpy(&h_max, partial.data_ptr<float>(), sizeof(float), cudaMemcpyDeviceToHost);
    auto loss = torch::zeros({}, x.options());
    ce_loss_kernel<<<(B + 255) / 256, 256>>>(x.data_ptr<float>(), t.data_ptr<int64_t>(), loss.data_ptr<float>(), h_max, B, C);
    return loss;
}
"""

ce = load_inline(name="ce_hostmax", cpp_sources="torch::Tensor cross_entropy(torch::Tensor x, torch::Tensor t);",
                 cuda_sources=ce_source, functions=["cross_entropy"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return ce.cross_entropy(predictions, targets)
