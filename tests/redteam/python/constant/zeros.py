# Red team (issue 16): a constant output (zeros), right for every negative pre-activation.
# expect: correctness | - | elements over tolerance
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.zeros(a.shape[0], b.shape[1])
