"""One LSTM cell step written out: gates from two Linears, then the cell update.
Returns the new hidden and cell states concatenated along the features.

kgate level 3. Batch 4096, input 2048, hidden 2048: 2 * 4096 * 4096 * 8192 = 0.27 TFLOP
of GEMM; the gate nonlinearities and the update are one fusible epilogue.
"""
import torch
import torch.nn as nn

# kgate:small batch_size=8 input_size=24 hidden_size=16


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.ih = nn.Linear(input_size, 4 * hidden_size)
        self.hh = nn.Linear(hidden_size, 4 * hidden_size)

    def forward(self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        gates = self.ih(x) + self.hh(h)
        i, f, g, o = gates.chunk(4, dim=1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        return torch.cat([h_new, c_new], dim=1)


batch_size = 4096
input_size = 2048
hidden_size = 2048


def get_inputs():
    x = torch.randn(batch_size, input_size)
    h = torch.randn(batch_size, hidden_size)
    c = torch.randn(batch_size, hidden_size)
    return [x, h, c]


def get_init_inputs():
    return [input_size, hidden_size]
