"""Max (values) over the middle dimension of a (batch_size, dim1, dim2) tensor.

kgate level 1. Memory-bound: one read of 128 x 4096 x 2560 float32 (5.4 GB).
"""
import torch
import torch.nn as nn

# kgate:small batch_size=4 dim1=64 dim2=40


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.max(x, dim=self.dim).values


batch_size = 128
dim1 = 4096
dim2 = 2560
reduce_dim = 1


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
