"""ResNet basic block: conv-BN-ReLU, conv-BN, add the input, ReLU.

kgate level 3. BatchNorm in inference form with random running statistics. Two 3x3
convolutions of 128 channels on 32 x 128 x 128: 2 * 2 * 32 * 128 * 128 * 9 * 128 * 128
= 0.31 TFLOP.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# kgate:small batch_size=2 channels=8 height=8 width=10


def _random_bn(channels: int) -> nn.BatchNorm2d:
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():
        bn.weight.normal_(1.0, 0.2)
        bn.bias.normal_(0.0, 0.2)
        bn.running_mean.normal_(0.0, 0.2)
        bn.running_var.uniform_(0.5, 2.0)
    return bn


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = _random_bn(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = _random_bn(channels)

    @staticmethod
    def _bn(x: torch.Tensor, bn: nn.BatchNorm2d) -> torch.Tensor:
        return F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias,
                            training=False, momentum=0.0, eps=bn.eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self._bn(self.conv1(x), self.bn1))
        y = self._bn(self.conv2(y), self.bn2)
        return torch.relu(y + x)


batch_size = 32
channels = 128
height = 128
width = 128


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
