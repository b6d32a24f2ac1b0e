"""Mean over the last (contiguous) dimension of a 2-D tensor.

kgate level 1. Memory-bound: one read of 32768 x 40960 float32 (5.4 GB).
"""
import torch
import torch.nn as nn

# kgate:small rows=32 cols=200


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=-1)


rows = 32768
cols = 40960


def get_inputs():
    x = torch.rand(rows, cols)
    return [x]


def get_init_inputs():
    return []
