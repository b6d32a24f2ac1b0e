# Correct but unusual (issue 16): caches a transposed copy of its weights on the first call
# (a layout change, not an output cache) and recomputes every output.
# problem: linear.py
# expect: pass
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(256, 256)
        self.register_buffer("scale", torch.full((256,), 0.5))
        self.wt = None

    def forward(self, x):
        if self.wt is None:
            self.wt = self.lin.weight.t().contiguous()
        return torch.relu(torch.addmm(self.lin.bias, x, self.wt)) * self.scale
