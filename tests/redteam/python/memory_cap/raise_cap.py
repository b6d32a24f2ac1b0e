# Red team (issue 16): lifts the worker's device memory cap (KGATE_SANDBOX_GPU_MEMORY_MB) to
# the whole device before it computes, so it could take what other jobs on a shared runner
# need. Refused by the lint's memory-cap rule; a name built at run time is caught by the
# worker's check of the cap after the call (tests/python/test_worker_cuda.py).
# expect: static | memory-cap | names set_per_process_memory_fraction
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        if a.is_cuda:
            torch.cuda.set_per_process_memory_fraction(1.0)
        return torch.relu(a @ b)
