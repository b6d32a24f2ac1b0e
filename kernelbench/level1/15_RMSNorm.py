"""RMSNorm written out: x * rsqrt(mean(x^2, last dim) + eps) * weight.

kgate level 1. Eager runs several passes (square, mean, rsqrt, two products); the
minimum is one read and one write of 262144 x 4096 float32 (4.3 GB each way).
"""
import torch
import torch.nn as nn

# kgate:small batch_size=32 hidden=200


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.2 * torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * inv_rms * self.weight


batch_size = 262144
hidden = 4096
eps = 1e-6


def get_inputs():
    x = torch.randn(batch_size, hidden)
    return [x]


def get_init_inputs():
    return [hidden, eps]
