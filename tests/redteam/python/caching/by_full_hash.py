# Red team (issue 16): caches by a fingerprint of the inputs' full contents (a weighted sum
# of every element: all of them are read, so the roofline floor holds), and runs the GEMM
# once per distinct input set. The timing cycles over 2 input sets, so every timed call
# after the first two is a cache hit at a fraction of the GEMM's cost.
# The timing's rounds on freshly drawn contents (written into the same buffers) miss the
# cache and take the GEMM's time.
# expect: performance | - | faster on inputs it has seen before || does less work than the problem requires
# On the H200 the small GEMM takes microseconds and the fingerprint (two reductions read
# back to the host) costs more: the cache is no cheaper than honest work there, its
# outputs are right, and it passes unless the fresh rounds happen to show it.
# cuda-expect: pass
# cuda-expect: performance | - | faster on inputs it has seen before
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}
        self.wa = self.wb = None

    def forward(self, a, b):
        if self.wa is None or self.wa.shape != a.shape or self.wb.shape != b.shape:
            g = torch.Generator(device=a.device).manual_seed(7)
            self.wa = torch.rand(a.shape, generator=g, device=a.device, dtype=a.dtype)
            self.wb = torch.rand(b.shape, generator=g, device=b.device, dtype=b.dtype)
        key = (float((a * self.wa).sum()), float((b * self.wb).sum()))
        if key not in self.cache:
            self.cache[key] = torch.relu(a @ b)
        return self.cache[key].clone()
