# Red team (issue 16): a buffer updated in forward (running statistics style): the
# second call on the same inputs differs from the first.
# problem: linear.py
# expect: correctness | - | not bitwise identical
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(256, 256)
        self.register_buffer("scale", torch.full((256,), 0.5))

    def forward(self, x):
        self.scale.add_(1e-3)
        return torch.relu(self.lin(x)) * (self.scale - 1e-3 * 0.5)
