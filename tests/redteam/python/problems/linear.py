# Red-team problem with weights and a buffer (KernelBench format): relu(x @ W^T + b) * scale.
import torch
import torch.nn as nn

B = 64
IN = 256
OUT = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(IN, OUT)
        self.register_buffer("scale", torch.full((OUT,), 0.5))

    def forward(self, x):
        return torch.relu(self.lin(x)) * self.scale


def get_inputs():
    return [torch.randn(B, IN)]


def get_init_inputs():
    return []
