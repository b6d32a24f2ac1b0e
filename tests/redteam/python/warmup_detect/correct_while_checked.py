# Red team (issue 16): correct for the first 12 calls (the correctness checks: 3 seeds x 2
# distributions x 2 repeats), then computes half of the inner dimension only -- wrong,
# twice as fast and far above the roofline floor.
# expect: performance | - | outputs of timed calls differ from the baseline's
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = 0

    def forward(self, a, b):
        self.n += 1
        if self.n <= 12:
            return torch.relu(a @ b)
        k = a.shape[1] // 2
        return torch.relu(a[:, :k] @ b[:k])
