# Red team (issue 16): inputs truncated to TF32's 10-bit mantissa by masking bits, then an
# float32 GEMM (what TF32 tensor cores do, done by hand).
# expect: correctness | - | elements over tolerance
import torch
import torch.nn as nn

def tf32(x):
    return (x.view(torch.int32) & -8192).view(torch.float32)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.relu(tf32(a.contiguous()) @ tf32(b.contiguous()))
