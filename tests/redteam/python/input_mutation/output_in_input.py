# Red team (issue 16): writes the result into its input a's storage (M x K = M x N here)
# and returns it: no allocation, and a harness that compares a later call reads its own
# inputs overwritten.
# expect: correctness | - | the candidate modified its inputs
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        a.copy_(torch.relu(a @ b))
        return a
