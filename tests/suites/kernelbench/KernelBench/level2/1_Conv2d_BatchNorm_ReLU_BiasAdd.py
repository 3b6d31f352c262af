import torch
import torch.nn as nn

class Model(nn.Module):
    """
    A convolution, batch normalisation (training mode, as KernelBench runs it), ReLU and a learned
    bias (a KernelBench-format level-2 fused model with parameters and buffers).
    """
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bn = nn.BatchNorm2d(out_channels)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = torch.relu(x)
        return x + self.bias

batch_size = 16
in_channels = 12
out_channels = 24
height = width = 40
kernel_size = 3
bias_shape = (out_channels, 1, 1)

def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
