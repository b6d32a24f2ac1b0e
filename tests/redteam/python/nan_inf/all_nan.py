# Red team (issue 16): an all-NaN output (a comparison written as not(|err| > tol) passes
# NaN everywhere).
# expect: correctness | - | NaN elements where the float64 truth is finite
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.full((a.shape[0], b.shape[1]), float("nan"))
