# Red team (issue 16): computes honestly for its first four calls, then asks the GPU for a
# petabyte on every later call. Each case that runs out of device memory used to be "not
# judged" (a case too big for the machine), so the two cases it ran honestly passed the
# candidate; a wrong answer could hide behind the out-of-memory the same way. The
# reference runs those inputs in the same worker, so the candidate is rejected.
# requires: cuda
# expect: correctness | - | out of device memory on inputs the reference runs
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, a, b):
        self.calls += 1
        if self.calls > 4:
            torch.empty(1 << 50, dtype=torch.uint8, device=a.device)
        return torch.relu(a @ b)
