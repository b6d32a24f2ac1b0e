# Red team (issue 16): returns torch.empty and computes nothing, hoping the allocator hands
# back the block where the reference's (freed) output was.
# expect: correctness | - | never written (still hold the poison value) || elements over tolerance || elements where the float64 truth is finite || not bitwise identical
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.empty(a.shape[0], b.shape[1])
