"""kgate CPU reference solution for level1/24_MSELoss: the mean of squared differences,
accumulated per row first."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        d = predictions - targets
        return (d * d).sum(dim=-1).sum() / d.numel()
