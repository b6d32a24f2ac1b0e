# Correct but unusual (issue 16): imports time and reads time.perf_counter() around its
# first call (a warm-up log of its own, the way an autotuner times its first run). It never
# rebinds a clock, so it must pass every gate.
# expect: pass | - | -
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.first_call_s = None

    def forward(self, a, b):
        if self.first_call_s is None:
            t0 = time.perf_counter()
            out = torch.relu(a @ b)
            self.first_call_s = time.perf_counter() - t0
            return out
        return torch.relu(a @ b)
