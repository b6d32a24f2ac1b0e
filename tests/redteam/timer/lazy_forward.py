# Red team (issue 16): patches perf_counter_ns lazily, on the first call of forward (no
# patch at import or in the constructor); the worker finds it when it times the slot.
# expect: performance | no_candidate | timer patch: time.perf_counter_ns was rebound by the candidate (module attribute replaced)
import torch
import torch.nn as nn

PATCH = "import time as t\nr = t.perf_counter_ns\nt.perf_counter_ns = lambda: r() // 8"


class ModelNew(nn.Module):
    patched = False

    def forward(self, a, b):
        if not ModelNew.patched:
            ModelNew.patched = True
            exec(PATCH)
        return torch.relu(a @ b)
