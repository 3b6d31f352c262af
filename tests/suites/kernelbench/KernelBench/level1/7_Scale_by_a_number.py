import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Multiplies a matrix by a number that get_inputs passes to forward (a KernelBench-format level-1
    operator written for kernrl's tests, as KernelBench's matrix-scalar multiplication).
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        return A * s

M = 64
N = 96

def get_inputs():
    A = torch.randn(M, N)
    s = 2.5
    return [A, s]

def get_init_inputs():
    return []
