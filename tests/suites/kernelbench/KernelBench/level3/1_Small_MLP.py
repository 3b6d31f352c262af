import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        """
        A multi-layer perceptron built from a list of layer sizes (a KernelBench-format level-3
        model written for kernrl's tests).
        """
        super(Model, self).__init__()
        layers = []
        current = input_size
        for size in layer_sizes:
            layers.append(nn.Linear(current, size))
            layers.append(nn.ReLU())
            current = size
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)

batch_size = 32
input_size = 200
layer_sizes = [160, 96]
output_size = 40

def get_inputs():
    return [torch.randn(batch_size, input_size)]

def get_init_inputs():
    return [input_size, layer_sizes, output_size]
