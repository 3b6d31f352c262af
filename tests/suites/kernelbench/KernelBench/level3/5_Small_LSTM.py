import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, output_size, dropout=0.0):
        """
        A bidirectional multi-layer LSTM whose last time step goes through a linear layer, its
        initial state given (a KernelBench-format level-3 model written for kernrl's tests, as
        KernelBench's 38_LSTMBidirectional).
        """
        super(Model, self).__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, dropout=dropout, bidirectional=True)
        self.fc = nn.Linear(hidden_size * 2, output_size)

    def forward(self, x, h0, c0):
        out, hn = self.lstm(x, (h0, c0))
        return self.fc(out[:, -1, :])

batch_size = 5
sequence_length = 12
input_size = 16
hidden_size = 24
num_layers = 3
output_size = 8
dropout = 0.0

def get_inputs():
    return [torch.rand(batch_size, sequence_length, input_size), torch.rand((num_layers * 2, batch_size, hidden_size)), torch.rand((num_layers * 2, batch_size, hidden_size))]

def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size, dropout]
