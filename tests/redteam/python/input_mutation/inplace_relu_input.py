# Red team (issue 16): relu applied in place on the input before the GEMM (a wrong
# algebra, and a mutation).
# expect: correctness | - | over tolerance || modified its inputs
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.relu(a.relu_() @ b)
