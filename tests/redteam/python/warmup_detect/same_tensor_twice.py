# Red team (issue 16): tells the timing from the checks by object identity (the checks
# pass fresh clones, the timing passes the same input tensors again) and then skips work.
# expect: performance | - | does less work than the problem requires
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = {}

    def forward(self, a, b):
        k = id(a)
        if k in self.seen and self.seen[k][0] is a:
            return self.seen[k][1]
        out = torch.relu(a @ b)
        self.seen[k] = (a, out)
        return out
