"""kgate reference solution for level1/7_GELU (Triton): exact (erf) GELU, one flat
elementwise kernel with 64-bit offsets (the full-size input has 1.6e9 elements)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

# kgate:tune BLOCK_SIZE=[256,512,1024,2048,4096] NUM_WARPS=[4,8]
BLOCK_SIZE = 1024
NUM_WARPS = 4


@triton.jit
def _gelu_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr, ACC: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(ACC)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        if n == 0:
            return y
        acc = tl.float64 if x.dtype == torch.float64 else tl.float32
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
        _gelu_kernel[grid](xc, y, n, BLOCK_SIZE=BLOCK_SIZE, ACC=acc, num_warps=NUM_WARPS)
        return y
