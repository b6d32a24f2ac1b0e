"""HardTanh: clamp to [min_val, max_val], elementwise.

kgate level 1. Memory-bound: one read and one write of a 4096 x 393216 float32
tensor (6.4 GB each way) at full size.
"""
import torch
import torch.nn as nn

# kgate:small batch_size=16 dim=1000


class Model(nn.Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.hardtanh(x, min_val=self.min_val, max_val=self.max_val)


batch_size = 4096
dim = 393216
min_val = -1.5
max_val = 1.25


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [min_val, max_val]
