import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers):
        """
        A multi-layer GRU over a sequence (sequence first), started from zeros, whose final hidden
        state is the output (a KernelBench-format level-3 model written for kernrl's tests, as
        KernelBench's 40_GRUHidden).
        """
        super(Model, self).__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias=True, batch_first=False)

    def forward(self, x):
        _, h_n = self.gru(x)
        return h_n

sequence_length = 10
batch_size = 6
input_size = 12
hidden_size = 20
num_layers = 2

def get_inputs():
    return [torch.randn(sequence_length, batch_size, input_size)]

def get_init_inputs():
    return [input_size, hidden_size, num_layers]
