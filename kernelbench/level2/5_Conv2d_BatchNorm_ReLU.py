"""Conv2d 3x3 (padding 1), BatchNorm in inference form, ReLU.

kgate level 2. BatchNorm always uses its (random, non-identity) running statistics,
so it can be folded into the convolution's weights and bias. Conv:
2 * 32 * 128 * 64 * 9 * 256 * 256 = 0.31 TFLOP.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# kgate:small batch_size=2 in_channels=3 out_channels=8 height=10 width=12


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.weight.normal_(1.0, 0.2)
            self.bn.bias.normal_(0.0, 0.2)
            self.bn.running_mean.normal_(0.0, 0.2)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        y = F.batch_norm(y, self.bn.running_mean, self.bn.running_var,
                         self.bn.weight, self.bn.bias, training=False,
                         momentum=0.0, eps=self.bn.eps)
        return torch.relu(y)


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
