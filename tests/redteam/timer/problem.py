# The problem the timer red-team candidates are judged against (KernelBench format): a
# small GEMM and a ReLU, two ops (so a candidate may call either), compute-bound on a CPU
# (~100 us for a few hundred KB, well above the roofline floor) so that a correct
# candidate's own bookkeeping is noise next to the kernel.
# kgate:small M=64 K=256 N=256
import torch
import torch.nn as nn

M = 1024
K = 4096
N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.relu(a @ b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
