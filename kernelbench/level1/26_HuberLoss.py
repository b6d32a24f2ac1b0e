"""Huber loss (quadratic below delta, linear above), mean reduction (scalar output).

kgate level 1. With unit-normal inputs both branches are taken often. Memory-bound:
one read of two 4096 x 262144 float32 tensors (8.6 GB).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# kgate:small batch_size=16 dim=500


class Model(nn.Module):
    def __init__(self, delta: float = 1.0):
        super().__init__()
        self.delta = delta

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.huber_loss(predictions, targets, delta=self.delta)


batch_size = 4096
dim = 262144
delta = 0.75


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    targets = torch.randn(batch_size, dim)
    return [predictions, targets]


def get_init_inputs():
    return [delta]
