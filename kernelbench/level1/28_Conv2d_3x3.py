"""Standard 2-D convolution, 3x3 kernel, stride 1, padding 1, with bias, NCHW.

kgate level 1. Compute-bound: 2 * 32 * 128 * 64 * 9 * 256 * 256 = 0.31 TFLOP.
"""
import torch
import torch.nn as nn

# kgate:small batch_size=2 in_channels=3 out_channels=8 height=12 width=10


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size,
                              padding=kernel_size // 2, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 32
in_channels = 64
out_channels = 128
kernel_size = 3
height = 256
width = 256


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
