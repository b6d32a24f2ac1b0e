"""ReLU: max(x, 0), elementwise.

kgate level 1. Memory-bound: one read and one write of a 4096 x 393216 float32
tensor (6.4 GB each way) at full size.
"""
import torch
import torch.nn as nn

# kgate:small batch_size=16 dim=1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 4096
dim = 393216


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
