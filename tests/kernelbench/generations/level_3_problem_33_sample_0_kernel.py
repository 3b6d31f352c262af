import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batch_size = 256
input_size = 16384
hidden_size = 16384
output_size = 8192
sequence_length = 256

# i2h(cat(x, h)) == x @ W[:, :I]^T + h @ W[:, I:]^T + b, so the concatenation is skipped:
# two cuBLAS GEMMs accumulate into one buffer and a custom kernel applies bias + tanh in
# place. h2o is a cuBLAS GEMM followed by a custom in-place bias kernel.
rnn_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void bias_tanh_inplace_kernel(float* __restrict__ y, const float* __restrict__ bias,
                                         long long total, int N) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        y[i] = tanhf(y[i] + bias[i % N]);
    }
}

__global__ void bias_add_inplace_kernel(float* __restrict__ y, const float* __restrict__ bias,
                                        long long total, int N) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        y[i] += bias[i % N];
    }
}

static int grid_for(long long total, int threads) {
    long long blocks = (total + threads - 1) / threads;
    if (blocks > 65535LL * 8) blocks = 65535LL * 8;
    if (blocks < 1) blocks = 1;
    return (int)blocks;
}

torch::Tensor bias_tanh_(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous(), "y must be a contiguous CUDA tensor");
    bias = bias.contiguous();
    const long long total = y.numel();
    if (total == 0) return y;
    bias_tanh_inplace_kernel<<<grid_for(total, 256), 256>>>(y.data_ptr<float>(), bias.data_ptr<float>(),
                                                            total, (int)y.size(-1));
    return y;
}

torch::Tensor bias_add_(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous(), "y must be a contiguous CUDA tensor");
    bias = bias.contiguous();
    const long long total = y.numel();
    if (total == 0) return y;
    bias_add_inplace_kernel<<<grid_for(total, 256), 256>>>(y.data_ptr<float>(), bias.data_ptr<float>(),
                                                           total, (int)y.size(-1));
    return y;
}
"""

rnn_cpp = """
torch::Tensor bias_tanh_(torch::Tensor y, torch::Tensor bias);
torch::Tensor bias_add_(torch::Tensor y, torch::Tensor bias);
"""

rnn_ext = load_inline(
    name="vanilla_rnn_cell_fused",
    cpp_sources=rnn_cpp,
    cuda_sources=rnn_source,
    functions=["bias_tanh_", "bias_add_"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        """
        Initialize the Vanilla RNN model.

        :param input_size: The number of input features (int).
        :param hidden_size: The size of the hidden state (int).
        :param output_size: The number of output features (int).
        """
        super(ModelNew, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.hidden = torch.randn((batch_size, hidden_size))

        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)  # Input to hidden
        self.h2o = nn.Linear(hidden_size, output_size)  # Hidden to output
        self.tanh = nn.Tanh()

    def forward(self, x: torch.Tensor, initial_hidden=None) -> torch.Tensor:
        if initial_hidden is not None:
            self.hidden.copy_(initial_hidden)
        self.hidden = self.hidden.to(x.device)
        I = self.input_size
        w = self.i2h.weight
        pre = torch.mm(x, w[:, :I].t())
        pre.addmm_(self.hidden, w[:, I:].t())
        self.hidden = rnn_ext.bias_tanh_(pre, self.i2h.bias)
        out = torch.mm(self.hidden, self.h2o.weight.t())
        return rnn_ext.bias_add_(out, self.h2o.bias)
