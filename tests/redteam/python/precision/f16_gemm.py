# Red team (issue 16): the GEMM in float16, cast back to float32.
# expect: correctness | - | elements over tolerance
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.relu(a.half() @ b.half()).float()
