# Correct but unusual (issue 16): picks between two equivalent formulations by timing both
# on its first call (autotuning), then uses the faster one.
# expect: pass
import time
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.choice = None

    def forward(self, a, b):
        ways = (lambda: torch.relu(a @ b), lambda: torch.clamp_min(torch.mm(a, b), 0.0))
        if self.choice is None:
            best = None
            for i, f in enumerate(ways):
                t0 = time.perf_counter()
                f()
                dt = time.perf_counter() - t0
                if best is None or dt < best[0]:
                    best = (dt, i)
            self.choice = best[1]
        return ways[self.choice]()
