# Red team (issue 16): a slow candidate whose patched clock subtracts the time spent in its
# own forward, so only its own samples shrink and a slower kernel would read as faster than
# the baseline. The worker times with its own clock (the samples stay honest) and rejects it.
# expect: performance | no_candidate | timer patch: time.perf_counter_ns was rebound by the candidate (module attribute replaced)
import torch
import torch.nn as nn

STATE = {"stolen": 0, "real": None}
PATCH = """
import time as t
STATE["real"] = r = t.perf_counter_ns
t.perf_counter_ns = lambda: r() - STATE["stolen"]
"""


class ModelNew(nn.Module):
    def forward(self, a, b):
        if STATE["real"] is None:
            exec(PATCH, {"STATE": STATE})
        t0 = STATE["real"]()
        for _ in range(3):  # deliberately three times the work
            y = torch.relu(a @ b)
        STATE["stolen"] += STATE["real"]() - t0
        return y
