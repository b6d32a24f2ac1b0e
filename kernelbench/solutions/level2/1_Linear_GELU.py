"""kgate reference solution for level2/1_Linear_GELU (Triton epilogue).

The GEMM stays with cuBLAS (torch.matmul, no bias); bias + exact GELU run as one
Triton pass over the GEMM output, in place. Eager instead runs addmm and then a GELU
kernel that reads and writes the output again; the win is the bias read-modify-write
folded away, a few percent of the GEMM.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

# kgate:tune BLOCK_SIZE=[512,1024,2048,4096] NUM_WARPS=[4,8]
BLOCK_SIZE = 2048
NUM_WARPS = 8


@triton.jit
def _bias_gelu_kernel(y_ptr, b_ptr, n_elements, n_cols,
                      BLOCK_SIZE: tl.constexpr, ACC: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    col = offs % n_cols
    h = tl.load(y_ptr + offs, mask=mask, other=0.0).to(ACC)
    h += tl.load(b_ptr + col, mask=mask, other=0.0).to(ACC)
    out = 0.5 * h * (1.0 + tl.math.erf(h * 0.7071067811865476))
    tl.store(y_ptr + offs, out.to(y_ptr.dtype.element_ty), mask=mask)


def bias_gelu_(y: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """y <- gelu(y + bias) in place; y contiguous, bias of shape (y.shape[-1],)."""
    n = y.numel()
    if n == 0:
        return y
    acc = tl.float64 if y.dtype == torch.float64 else tl.float32
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    _bias_gelu_kernel[grid](y, bias.contiguous(), n, y.shape[-1],
                            BLOCK_SIZE=BLOCK_SIZE, ACC=acc, num_warps=NUM_WARPS)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.matmul(x, self.linear.weight.t()).contiguous()
        return bias_gelu_(y, self.linear.bias)
