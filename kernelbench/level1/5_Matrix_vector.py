"""Matrix-vector product y = A @ x, A (M, K), x (K, 1).

kgate level 1. Memory-bound: one read of A, 32768 x 65536 float32 = 8.6 GB.
"""
import torch
import torch.nn as nn

# kgate:small M=64 K=256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, x)


M = 32768
K = 65536


def get_inputs():
    A = torch.randn(M, K)
    x = torch.randn(K, 1)
    return [A, x]


def get_init_inputs():
    return []
