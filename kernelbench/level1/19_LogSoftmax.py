"""Log-softmax over the last dimension, with long rows.

kgate level 1. Rows of 262144 float32 (1 MB) do not fit in registers: an online
(single-read) max/sum-exp pass, or a split across programs, is where the time goes.
Memory-bound: 4096 x 262144 float32 (4.3 GB each way).
"""
import torch
import torch.nn as nn

# kgate:small batch_size=16 dim=1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=-1)


batch_size = 4096
dim = 262144


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
