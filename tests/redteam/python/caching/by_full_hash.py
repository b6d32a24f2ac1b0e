# Red team (issue 16): caches by a hash of the inputs' full bytes: every element is read
# (so the roofline floor holds), but the GEMM runs once per input set. The timing cycles
# over 2 input sets, so every timed call after the first two is a cache hit.
# expect: known-gap | performance | the timing reuses 2 input sets; a full-content cache costs a hash, not the GEMM
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, a, b):
        key = hash(a.cpu().numpy().tobytes()) ^ hash(b.cpu().numpy().tobytes())
        if key not in self.cache:
            self.cache[key] = torch.relu(a @ b)
        return self.cache[key].clone()
