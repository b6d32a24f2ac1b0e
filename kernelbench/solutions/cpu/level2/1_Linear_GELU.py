"""kgate CPU reference solution for level2/1_Linear_GELU: addmm for the affine part and
the erf formula for GELU. Keeps `self.linear` so the problem's state_dict loads."""
import math

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.addmm(self.linear.bias, x, self.linear.weight.t())
        return 0.5 * y * (1.0 + torch.erf(y * (1.0 / math.sqrt(2.0))))
