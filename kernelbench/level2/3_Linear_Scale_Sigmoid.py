"""Linear, multiply by a constant, sigmoid.

kgate level 2. GEMM 2 * 8192 * 4096 * 8192 = 0.55 TFLOP plus a two-op epilogue.
"""
import torch
import torch.nn as nn

# kgate:small batch_size=32 in_features=64 out_features=48


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.linear(x) * self.scale)


batch_size = 8192
in_features = 4096
out_features = 8192
scale = 2.5


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale]
