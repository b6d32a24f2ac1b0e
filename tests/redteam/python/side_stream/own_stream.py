# Red team (issue 16): launches the GEMM on a stream of its own and returns without joining
# it, so the timed stream sees nothing pending.
# requires: cuda
# expect: static | stream | Stream
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            return torch.relu(a @ b)
