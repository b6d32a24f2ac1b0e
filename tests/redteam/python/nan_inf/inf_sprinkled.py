# Red team (issue 16): a correct output with a few +Inf elements (a tolerance computed
# relative to |got| lets Inf through).
# expect: correctness | - | Inf elements where the float64 truth is finite
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        y = torch.relu(a @ b)
        y.view(-1)[::97] = float("inf")
        return y
