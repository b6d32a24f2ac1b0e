"""kgate reference solution for level3/1_MLP (Triton epilogues).

Each layer's GEMM stays with cuBLAS (torch.matmul, no bias); the bias add and, for the
hidden layers, the ReLU run as one in-place Triton pass over the GEMM output. The
model is GEMM-bound, so expect at most a few percent over eager.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

# kgate:tune BLOCK_SIZE=[512,1024,2048,4096] NUM_WARPS=[4,8]
BLOCK_SIZE = 2048
NUM_WARPS = 8


@triton.jit
def _bias_act_kernel(y_ptr, b_ptr, n_elements, n_cols,
                     APPLY_RELU: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    y = y + tl.load(b_ptr + offs % n_cols, mask=mask, other=0.0).to(y.dtype)
    if APPLY_RELU:
        y = tl.maximum(y, 0.0)
    tl.store(y_ptr + offs, y, mask=mask)


def _linear(x: torch.Tensor, layer: nn.Linear, relu: bool) -> torch.Tensor:
    y = torch.matmul(x, layer.weight.t()).contiguous()
    n = y.numel()
    if n:
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
        _bias_act_kernel[grid](y, layer.bias.contiguous(), n, y.shape[-1],
                               APPLY_RELU=relu, BLOCK_SIZE=BLOCK_SIZE, num_warps=NUM_WARPS)
    return y


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        sizes = [input_size, hidden_size, hidden_size, hidden_size // 2, output_size]
        self.layers = nn.ModuleList(
            nn.Linear(sizes[i], sizes[i + 1]) for i in range(len(sizes) - 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        last = len(self.layers) - 1
        for index, layer in enumerate(self.layers):
            x = _linear(x, layer, relu=index < last)
        return x
