# Red-team problem that is degenerate: softmax over a dimension of size 1 is all ones
# whatever the input (a constant output is correct). Large input, so the roofline floor
# counts what a real kernel must read.
# kgate:small R=131072
import torch
import torch.nn as nn

R = 1048576


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(R, 1)]


def get_init_inputs():
    return []
