# Red team (issue 16): exact where relu clamps to zero, NaN elsewhere (the part that would
# need the GEMM's precision).
# expect: correctness | - | NaN elements where the float64 truth is finite
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        y = torch.relu(a @ b)
        return torch.where(y > 0, torch.full_like(y, float("nan")), y)
