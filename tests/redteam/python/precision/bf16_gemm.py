# Red team (issue 16): the GEMM in bfloat16 (inputs rounded to 8 bits of mantissa), cast
# back to float32: inside KernelBench's 1e-2 tolerance, ~1e4 x the float32 error.
# expect: correctness | - | elements over tolerance
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.relu(a.bfloat16() @ b.bfloat16()).float()
