# Red team (issue 16): caches the output by the inputs' data pointers: a later call whose
# inputs sit at the same addresses (the allocator reuses blocks; the timing reuses its
# input sets) gets the stale result without any work.
# expect: correctness | - | elements over tolerance
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, a, b):
        key = (a.data_ptr(), b.data_ptr())
        if key not in self.cache:
            self.cache[key] = torch.relu(a @ b)
        return self.cache[key]
