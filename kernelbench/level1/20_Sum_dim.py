"""Sum over the middle dimension of a (batch_size, dim1, dim2) tensor, keeping it.

kgate level 1. A strided (non-contiguous) reduction. Memory-bound: one read of
160 x 4096 x 2048 float32 (5.4 GB).
"""
import torch
import torch.nn as nn

# kgate:small batch_size=4 dim1=64 dim2=48


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


batch_size = 160
dim1 = 4096
dim2 = 2048
reduce_dim = 1


def get_inputs():
    x = torch.rand(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
