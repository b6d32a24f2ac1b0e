"""LayerNorm over the last dimension with a learned (non-trivial) affine transform.

kgate level 1. Memory-bound: read and write 131072 x 8192 float32 (4.3 GB each way).
"""
import torch
import torch.nn as nn

# kgate:small batch_size=32 hidden=200


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)
        with torch.no_grad():
            # Not the identity affine, so a kernel that drops it fails.
            self.ln.weight.normal_(1.0, 0.2)
            self.ln.bias.normal_(0.0, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


batch_size = 131072
hidden = 8192


def get_inputs():
    x = torch.randn(batch_size, hidden)
    return [x]


def get_init_inputs():
    return [hidden]
