"""Batched matrix product C[b] = A[b] @ B[b], A (batch, m, k), B (batch, k, n).

kgate level 1. Compute-bound: 2 * 128 * 1024 * 2048 * 1024 = 0.55 TFLOP.
"""
import torch
import torch.nn as nn

# kgate:small batch_size=4 m=16 k=32 n=24


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


batch_size = 128
m = 1024
k = 2048
n = 1024


def get_inputs():
    A = torch.randn(batch_size, m, k)
    B = torch.randn(batch_size, k, n)
    return [A, B]


def get_init_inputs():
    return []
