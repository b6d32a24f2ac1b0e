"""Square matrix product C = A @ B with A, B of shape (N, N).

kgate level 1. Compute-bound at full size: 2 * 8192^3 = 1.1 TFLOP.
"""
import torch
import torch.nn as nn

# kgate:small N=64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 8192


def get_inputs():
    A = torch.randn(N, N)
    B = torch.randn(N, N)
    return [A, B]


def get_init_inputs():
    return []
