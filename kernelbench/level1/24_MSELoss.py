"""Mean squared error between predictions and targets (scalar output).

kgate level 1. Memory-bound: one read of two 4096 x 262144 float32 tensors (8.6 GB).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# kgate:small batch_size=16 dim=500


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(predictions, targets)


batch_size = 4096
dim = 262144


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    targets = torch.randn(batch_size, dim)
    return [predictions, targets]


def get_init_inputs():
    return []
