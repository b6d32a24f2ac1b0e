# Red team (issue 16): writes only the positive results into an uninitialised output and
# relies on the memory being zero where relu gives 0.
# expect: correctness | - | never written (still hold the poison value) || elements over tolerance || elements where the float64 truth is finite || not bitwise identical
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        y = a @ b
        out = torch.empty_like(y)
        pos = y > 0
        out[pos] = y[pos]
        return out
