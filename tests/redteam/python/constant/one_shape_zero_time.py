# Red team (issue 16): special-cases the timed shape with a constant (near-zero time) and
# computes every other shape; KernelBench checks at the timed shape itself.
# expect: correctness | - | elements over tolerance
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        if tuple(a.shape) == (64, 256) and tuple(b.shape) == (256, 256):
            return torch.zeros(64, 256)
        return torch.relu(a @ b)
