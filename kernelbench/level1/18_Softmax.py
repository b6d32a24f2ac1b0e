"""Softmax over the last dimension of a (batch_size, dim) tensor.

kgate level 1. Moderate rows (4096 float32 = 16 KB) that fit in one program's
registers, so a single pass over the data is possible. Memory-bound:
262144 x 4096 float32 (4.3 GB each way).
"""
import torch
import torch.nn as nn

# kgate:small batch_size=32 dim=1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


batch_size = 262144
dim = 4096


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
