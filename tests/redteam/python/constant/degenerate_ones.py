# Red team (issue 16): the problem is degenerate (softmax over a dimension of size 1 is
# all ones); the candidate writes ones without reading the input. Correct values, so only
# the roofline (it reads nothing of what the problem must read) can reject it.
# problem: degenerate.py
# expect: known-gap | performance | the output is correct and cheap; kgate only warns that the problem is degenerate; the roofline floor of the small variant is not reached
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.ones_like(x)
