import torch
import torch.nn as nn

class Model(nn.Module):
    """
    A running sum of scaled values along the last dimension (a KernelBench-format level-1 operator
    written for kernrl's tests): its float32 result is far enough from the exact one, where the
    running sum crosses zero, that KernelBench's tolerance would fail an exact kernel.
    """
    def __init__(self, dim):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x * 100.0, dim=self.dim)

batch_size = 64
length = 4096

def get_inputs():
    return [torch.randn(batch_size, length)]

def get_init_inputs():
    return [1]
