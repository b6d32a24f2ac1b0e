# Red team (issue 16): computes the right output, then zeroes its input b in place
# (a harness that reuses its inputs would judge the next call on zeros).
# expect: correctness | - | the candidate modified its inputs
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.relu(a @ b)
        b.zero_()
        return out
