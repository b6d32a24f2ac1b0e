"""BatchNorm2d in inference form: per-channel (x - running_mean) / sqrt(running_var + eps)
* weight + bias, on NCHW input.

kgate level 1. Always uses the running statistics (training=False), whatever the
module's mode, so the output is deterministic. The statistics and affine are random,
not the identity. Memory-bound: 64 x 64 x 512 x 512 float32 (4.3 GB each way).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# kgate:small batch_size=2 channels=4 height=8 width=10


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.weight.normal_(1.0, 0.2)
            self.bn.bias.normal_(0.0, 0.2)
            self.bn.running_mean.normal_(0.0, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.batch_norm(x, self.bn.running_mean, self.bn.running_var,
                            self.bn.weight, self.bn.bias, training=False,
                            momentum=0.0, eps=self.bn.eps)


batch_size = 64
channels = 64
height = 512
width = 512


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [channels]
