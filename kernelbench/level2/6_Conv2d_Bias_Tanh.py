"""Conv2d 3x3 without its own bias (valid padding), a separate per-channel bias, tanh.

kgate level 2. Conv: 2 * 32 * 128 * 64 * 9 * 254 * 254 = 0.30 TFLOP.
"""
import torch
import torch.nn as nn

# kgate:small batch_size=2 in_channels=3 out_channels=8 height=10 width=12


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, bias=False)
        self.bias = nn.Parameter(0.2 * torch.randn(out_channels, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.conv(x) + self.bias)


batch_size = 32
in_channels = 64
out_channels = 128
kernel_size = 3
height = 256
width = 256


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
