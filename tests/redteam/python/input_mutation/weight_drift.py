# Red team (issue 16): mutates its own weights on every call (a cached transform applied
# again and again): each call sees different parameters.
# problem: linear.py
# expect: correctness | - | not bitwise identical || over tolerance
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(256, 256)
        self.register_buffer("scale", torch.full((256,), 0.5))

    def forward(self, x):
        y = torch.relu(self.lin(x)) * self.scale
        self.lin.weight.mul_(1.0001)
        return y
