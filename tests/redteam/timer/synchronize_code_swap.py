# Red team (issue 16): keeps torch.cuda.synchronize the same object but swaps its code for a
# no-op's (an identity check of the attribute alone would miss it), hidden in exec.
# expect: static | timer-patch | timer patch: torch.cuda.synchronize.__code__ was rebound by the candidate (function code replaced)
import torch
import torch.nn as nn

exec("torch.cuda.synchronize.__code__ = (lambda device=None: None).__code__",
     {"torch": torch})


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.relu(a @ b)
