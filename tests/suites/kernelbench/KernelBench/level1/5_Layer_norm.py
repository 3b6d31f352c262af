import torch
import torch.nn as nn

class Model(nn.Module):
    """
    LayerNorm over the last two dimensions (a KernelBench-format level-1 operator with a layer's
    parameters, written for kernrl's tests).
    """
    def __init__(self, normalized_shape: tuple):
        super(Model, self).__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)

batch_size = 16
features = 32
dim = 48

def get_inputs():
    x = torch.rand(batch_size, features, dim)
    return [x]

def get_init_inputs():
    return [(features, dim)]
