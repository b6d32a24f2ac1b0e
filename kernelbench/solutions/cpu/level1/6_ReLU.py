"""kgate CPU reference solution for level1/6_ReLU: a select instead of the ReLU op."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.where(x > 0, x, torch.zeros((), dtype=x.dtype, device=x.device))
