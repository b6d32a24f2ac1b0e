"""Rectangular matrix product C = A @ B, A of shape (M, K), B of shape (K, N).

kgate level 1. Compute-bound: 2 * 4096 * 16384 * 8192 = 1.1 TFLOP; the long K makes
split-K and stream-K schedules worth trying.
"""
import torch
import torch.nn as nn

# kgate:small M=48 K=80 N=40


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 4096
K = 16384
N = 8192


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
