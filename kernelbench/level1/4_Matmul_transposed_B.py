"""Matrix product with a transposed right operand: C = A @ B^T, A (M, K), B (N, K).

kgate level 1. The layout of nn.Linear weights. Compute-bound:
2 * 8192 * 8192 * 4096 = 0.55 TFLOP.
"""
import torch
import torch.nn as nn

# kgate:small M=40 N=56 K=72


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B.T)


M = 8192
N = 8192
K = 4096


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(N, K)
    return [A, B]


def get_init_inputs():
    return []
