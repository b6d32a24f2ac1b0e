"""kgate CPU reference solution for level1/7_GELU: the erf formula,
0.5 * x * (1 + erf(x / sqrt(2)))."""
import math

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
