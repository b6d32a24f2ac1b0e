"""Conv2d 3x3 (padding 1), 2x2 average pool, sigmoid, sum over all but the batch.

kgate level 2. Conv: 2 * 32 * 128 * 64 * 9 * 256 * 256 = 0.31 TFLOP; the output is one
number per image.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# kgate:small batch_size=4 in_channels=3 out_channels=8 height=10 width=12


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, pool: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = pool

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.sigmoid(F.avg_pool2d(self.conv(x), kernel_size=self.pool))
        return torch.sum(y, dim=(1, 2, 3))


batch_size = 32
in_channels = 64
out_channels = 128
kernel_size = 3
pool = 2
height = 256
width = 256


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool]
