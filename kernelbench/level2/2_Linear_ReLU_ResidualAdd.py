"""Residual MLP step: x + relu(linear(x)), square weight.

kgate level 2. GEMM 2 * 4096 * 8192 * 8192 = 0.55 TFLOP; the epilogue reads the
residual (the GEMM's own input) again.
"""
import torch
import torch.nn as nn

# kgate:small batch_size=32 hidden=64


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.linear = nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.relu(self.linear(x))


batch_size = 4096
hidden = 8192


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden]
