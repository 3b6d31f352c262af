import os
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load

_dir = os.path.dirname(os.path.abspath(__file__))
tall_skinny = load(
    name="tall_skinny_file",
    sources=[os.path.join(_dir, "tall_skinny.cpp"), os.path.join(_dir, "tall_skinny_kernel.cu")],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return tall_skinny.forward(A, B)
