"""kgate CPU reference solution for level3/1_MLP: each layer as one addmm, the
activation as a select. Keeps `self.layers` so the problem's state_dict loads."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        sizes = [input_size, hidden_size, hidden_size, hidden_size // 2, output_size]
        self.layers = nn.ModuleList(
            nn.Linear(sizes[i], sizes[i + 1]) for i in range(len(sizes) - 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        last = len(self.layers) - 1
        for index, lin in enumerate(self.layers):
            x = torch.addmm(lin.bias, x, lin.weight.t())
            if index < last:
                x = torch.where(x > 0, x, torch.zeros((), dtype=x.dtype, device=x.device))
        return x
