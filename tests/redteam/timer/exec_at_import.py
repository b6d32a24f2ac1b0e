# Red team (issue 16): the patch is a string run by exec at import, so the lint cannot see
# it; the worker's identity check after the import finds perf_counter_ns rebound.
# expect: static | timer-patch | timer patch: time.perf_counter_ns was rebound by the candidate (module attribute replaced)
import torch
import torch.nn as nn

exec("import time as t\nr = t.perf_counter_ns\nt.perf_counter_ns = lambda: r() // 2")


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.relu(a @ b)
