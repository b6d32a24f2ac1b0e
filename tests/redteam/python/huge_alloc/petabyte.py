# Red team (issue 16): asks for a 32 TiB tensor in forward.
# expect: correctness | - | raised
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        scratch = torch.empty(1 << 43)
        return torch.relu(a @ b) + scratch[:1] * 0
