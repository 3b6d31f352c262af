import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self, channels):
        super(Block, self).__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x))) + x

class Model(nn.Module):
    def __init__(self, in_channels, channels, num_blocks, num_classes):
        """
        Nested modules (a KernelBench-format level-3 model written for kernrl's tests): a
        Sequential stem, a ModuleList of Sequentials of blocks, and a head, so that parameters
        are named features.0.weight, stages.1.0.conv.weight, head.fc.bias.
        """
        super(Model, self).__init__()
        self.features = nn.Sequential(nn.Conv2d(in_channels, channels, kernel_size=3, padding=1), nn.ReLU())
        self.stages = nn.ModuleList([nn.Sequential(*[Block(channels) for _ in range(num_blocks)]) for _ in range(2)])
        self.head = nn.Module()
        self.head.fc = nn.Linear(channels, num_classes)

    def forward(self, x):
        x = self.features(x)
        for stage in self.stages:
            x = stage(x)
        x = torch.mean(x, dim=(2, 3))
        return self.head.fc(x)

batch_size = 4
in_channels = 3
channels = 16
num_blocks = 2
num_classes = 10
height = width = 24

def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]

def get_init_inputs():
    return [in_channels, channels, num_blocks, num_classes]
