"""Linear, GroupNorm over groups of output features, Swish (x * sigmoid(x)).

kgate level 2. GEMM 2 * 8192 * 4096 * 8192 = 0.55 TFLOP; groups of 256 features.
"""
import torch
import torch.nn as nn

# kgate:small batch_size=32 in_features=64 out_features=48 num_groups=4


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, num_groups: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(num_groups, out_features)
        with torch.no_grad():
            self.gn.weight.normal_(1.0, 0.2)
            self.gn.bias.normal_(0.0, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.gn(self.linear(x))
        return y * torch.sigmoid(y)


batch_size = 8192
in_features = 4096
out_features = 8192
num_groups = 32


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups]
