import torch
import torch.nn as nn

class Model(nn.Module):
    """
    A linear layer scaled by a parameter that has the name of a module constant (as KernelBench's
    level-2 problem 48; written for kernrl's tests).
    """
    def __init__(self, in_features, out_features, scaling_factor, bias_shape):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scaling_factor = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.sigmoid(self.linear(x) * self.scaling_factor)

batch_size = 64
in_features = 96
out_features = 80
scaling_factor = 2
bias_shape = (out_features,)

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, scaling_factor, bias_shape]
