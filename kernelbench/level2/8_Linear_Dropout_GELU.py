"""Linear, dropout in inference form (the identity), exact GELU.

kgate level 2. Dropout is called with training=False whatever the module's mode, so
the output is deterministic; a candidate may drop it. GEMM 0.55 TFLOP.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# kgate:small batch_size=32 in_features=64 out_features=48


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, dropout_p: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.dropout_p = dropout_p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.dropout(self.linear(x), p=self.dropout_p, training=False)
        return F.gelu(y)


batch_size = 8192
in_features = 4096
out_features = 8192
dropout_p = 0.1


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, dropout_p]
