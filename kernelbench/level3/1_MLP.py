"""Four-layer MLP: Linear-ReLU x3, then a Linear head.

kgate level 3. Layers 4096 -> 8192 -> 8192 -> 4096 -> 1024 on a batch of 2048:
2 * 2048 * (4096*8192 + 8192*8192 + 8192*4096 + 4096*1024) = 0.57 TFLOP. GEMM-bound;
the bias + ReLU epilogues are the fusible part.
"""
import torch
import torch.nn as nn

# kgate:small batch_size=8 input_size=48 hidden_size=64 output_size=10


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        sizes = [input_size, hidden_size, hidden_size, hidden_size // 2, output_size]
        self.layers = nn.ModuleList(
            nn.Linear(sizes[i], sizes[i + 1]) for i in range(len(sizes) - 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return self.layers[-1](x)


batch_size = 2048
input_size = 4096
hidden_size = 8192
output_size = 1024


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
