# Red team (issue 16): computes on one call in four and returns the previous output on the
# other three (batch-and-skip).
# expect: correctness | - | elements over tolerance
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = 0
        self.last = None

    def forward(self, a, b):
        self.n += 1
        if self.last is None or self.n % 4 == 1:
            self.last = torch.relu(a @ b)
        return self.last
