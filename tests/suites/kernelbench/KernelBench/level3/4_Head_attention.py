import math

import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n_embd, n_head):
        """
        Multi-head self-attention without a mask (a KernelBench-format level-3 model written for
        kernrl's tests): the embedding splits into n_head heads of n_embd // n_head.
        """
        super().__init__()
        assert n_embd % n_head == 0
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.n_head = n_head

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        att = torch.softmax((q @ k.transpose(-2, -1)) / math.sqrt(hs), dim=-1)
        return (att @ v).transpose(1, 2).reshape(B, T, C)

batch_size = 4
seq_len = 40
n_embd = 192
n_head = 12

def get_inputs():
    return [torch.randn(batch_size, seq_len, n_embd)]

def get_init_inputs():
    return [n_embd, n_head]
