# Red team (issue 16): honest for its first four calls; then, on every later call, it
# takes all the device memory it can get into a module-level list that it keeps, and asks
# for a petabyte. The worker releases its own holdings and retries, the candidate runs out
# of memory again, and the reference, run on the same inputs to tell a case too big for
# the machine from a candidate that hides it, would now run out of memory too beside the
# hoard: the case would be "not judged". The worker measures what the candidate kept
# across its failed calls, so it is rejected for that.
# requires: cuda
# expect: correctness | - | while the candidate keeps
import torch
import torch.nn as nn

HOARD = []


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, a, b):
        self.calls += 1
        if self.calls > 4:
            chunk = 1 << 30
            while chunk >= 1 << 20:
                try:
                    HOARD.append(torch.empty(chunk, dtype=torch.uint8, device=a.device))
                except torch.cuda.OutOfMemoryError:
                    chunk //= 2
            torch.empty(1 << 50, dtype=torch.uint8, device=a.device)
        return torch.relu(a @ b)
