"""LeakyReLU with a configurable negative slope, elementwise.

kgate level 1. Memory-bound: one read and one write of a 4096 x 393216 float32
tensor (6.4 GB each way) at full size.
"""
import torch
import torch.nn as nn

# kgate:small batch_size=16 dim=1000


class Model(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)


batch_size = 4096
dim = 393216
negative_slope = 0.05


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [negative_slope]
