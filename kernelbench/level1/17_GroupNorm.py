"""GroupNorm on NCHW input with a learned (non-trivial) per-channel affine.

kgate level 1. Each group is 16 channels x 256 x 512 = 2M elements, so the statistics
need a cross-program (split) reduction. Memory-bound: 64 x 128 x 256 x 512 float32
(4.3 GB each way).
"""
import torch
import torch.nn as nn

# kgate:small batch_size=2 channels=16 height=6 width=10


class Model(nn.Module):
    def __init__(self, num_groups: int, channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, channels)
        with torch.no_grad():
            self.gn.weight.normal_(1.0, 0.2)
            self.gn.bias.normal_(0.0, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


batch_size = 64
channels = 128
num_groups = 8
height = 256
width = 512


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [num_groups, channels]
