# Red team (issue 16): computes the first half of the rows only; the rest is whatever the
# allocator left.
# expect: correctness | - | never written (still hold the poison value) || elements over tolerance || elements where the float64 truth is finite || not bitwise identical
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        m = a.shape[0] // 2
        out = torch.empty(a.shape[0], b.shape[1])
        out[:m] = torch.relu(a[:m] @ b)
        return out
