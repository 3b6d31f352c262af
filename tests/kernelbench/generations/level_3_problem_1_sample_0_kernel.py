import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# Each Linear runs as a cuBLAS GEMM without bias; the bias add (and ReLU for hidden layers)
# is applied in place by one custom kernel, so every activation is written only once.
mlp_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

template <bool RELU>
__global__ void bias_act_inplace_kernel(float* __restrict__ y, const float* __restrict__ bias,
                                        long long total, int N) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        float v = y[i] + bias[i % N];
        y[i] = RELU ? fmaxf(v, 0.0f) : v;
    }
}

torch::Tensor bias_act_(torch::Tensor y, torch::Tensor bias, bool relu) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous(), "y must be a contiguous CUDA tensor");
    bias = bias.contiguous();
    const long long total = y.numel();
    const int N = y.size(-1);
    if (total == 0) return y;
    const int threads = 256;
    long long blocks = (total + threads - 1) / threads;
    if (blocks > 65535LL * 4) blocks = 65535LL * 4;
    if (relu)
        bias_act_inplace_kernel<true><<<(int)blocks, threads>>>(y.data_ptr<float>(), bias.data_ptr<float>(), total, N);
    else
        bias_act_inplace_kernel<false><<<(int)blocks, threads>>>(y.data_ptr<float>(), bias.data_ptr<float>(), total, N);
    return y;
}
"""

mlp_cpp = "torch::Tensor bias_act_(torch::Tensor y, torch::Tensor bias, bool relu);"

mlp_ext = load_inline(
    name="mlp_bias_relu_epilogue",
    cpp_sources=mlp_cpp,
    cuda_sources=mlp_source,
    functions=["bias_act_"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        """
        :param input_size: The number of input features
        :param layer_sizes: A list of ints containing the sizes of each hidden layer
        :param output_size: The number of output features
        """
        super(ModelNew, self).__init__()
        layers = []
        current_input_size = input_size
        for layer_size in layer_sizes:
            layers.append(nn.Linear(current_input_size, layer_size))
            layers.append(nn.ReLU())
            current_input_size = layer_size
        layers.append(nn.Linear(current_input_size, output_size))
        # same module structure (and state_dict keys) as the reference
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        mods = list(self.network)
        i = 0
        while i < len(mods):
            lin = mods[i]
            relu = (i + 1 < len(mods)) and isinstance(mods[i + 1], nn.ReLU)
            y = torch.mm(x, lin.weight.t())
            if lin.bias is not None:
                x = mlp_ext.bias_act_(y, lin.bias, relu)
            else:
                x = torch.relu_(y) if relu else y
            i += 2 if relu else 1
        return x
