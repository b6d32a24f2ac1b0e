"""x @ W^T, divided by a constant, summed over the output features (keepdim).

kgate level 2. GEMM 2 * 8192 * 4096 * 8192 = 0.55 TFLOP as written; the sum is linear,
so an algebraic rewrite (x @ W.sum(0)) is legal and much cheaper: a correct candidate
may take it.
"""
import torch
import torch.nn as nn

# kgate:small batch_size=32 in_features=64 out_features=48


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, divisor: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * in_features ** -0.5)
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.matmul(x, self.weight.T) / self.divisor
        return torch.sum(y, dim=1, keepdim=True)


batch_size = 8192
in_features = 4096
out_features = 8192
divisor = 4.0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, divisor]
