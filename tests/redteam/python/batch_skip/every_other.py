# Red team (issue 16): computes on odd calls and returns the previous output on even ones.
# KernelBench checks run 2 repeats per case, so every case sees compute-then-repeat; the
# timed median falls between the two kinds of call.
# 2 repeats per case align with the skip pattern, so the checks pass; the timing audit
# compares every round's outputs with the baseline's.
# expect: performance | - | outputs of timed calls differ from the baseline's
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = 0
        self.last = None

    def forward(self, a, b):
        self.n += 1
        if self.n % 2 == 1:
            self.last = torch.relu(a @ b)
        return self.last.clone()
