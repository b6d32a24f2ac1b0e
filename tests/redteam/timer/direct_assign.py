# Red team (issue 16): rebinds time.perf_counter_ns at import, by plain assignment, so the
# CPU timer reads half the real time.
# expect: static | monkeypatch | timer patch: assigns to time.perf_counter_ns
import time

import torch
import torch.nn as nn

_real = time.perf_counter_ns
time.perf_counter_ns = lambda: _real() // 2


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.relu(a @ b)
