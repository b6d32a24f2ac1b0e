"""Linear, an extra learned bias, LeakyReLU, clamp to [clamp_min, clamp_max].

kgate level 2. GEMM 2 * 8192 * 4096 * 8192 = 0.55 TFLOP plus a three-op epilogue.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# kgate:small batch_size=32 in_features=64 out_features=48


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, negative_slope: float,
                 clamp_min: float, clamp_max: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.extra_bias = nn.Parameter(0.1 * torch.randn(out_features))
        self.negative_slope = negative_slope
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x) + self.extra_bias
        y = F.leaky_relu(y, negative_slope=self.negative_slope)
        return torch.clamp(y, min=self.clamp_min, max=self.clamp_max)


batch_size = 8192
in_features = 4096
out_features = 8192
negative_slope = 0.1
clamp_min = -0.05
clamp_max = 0.5


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, negative_slope, clamp_min, clamp_max]
