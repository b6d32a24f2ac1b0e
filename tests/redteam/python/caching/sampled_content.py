# Red team (issue 16): caches by 16 sampled elements of each input (cheap: far less than
# the roofline's bytes) and by shape. The checks draw new contents for every case, so it
# computes honestly there; the timing's 2 input sets are hits after their first calls.
# The timing's rounds on freshly drawn contents miss (or, keyed on unchanged samples,
# return stale outputs).
# expect: performance | - | faster on inputs it has seen before || outputs of timed calls differ from the baseline's || does less work than the problem requires
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, a, b):
        key = (tuple(a.flatten()[:: max(1, a.numel() // 16)][:16].tolist()),
               tuple(b.flatten()[:: max(1, b.numel() // 16)][:16].tolist()))
        if key not in self.cache:
            self.cache[key] = torch.relu(a @ b)
        return self.cache[key].clone()
