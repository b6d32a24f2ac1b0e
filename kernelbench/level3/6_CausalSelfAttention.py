"""Multi-head causal self-attention, attention only: QKV projection, masked softmax
attention written with matmuls, output projection.

kgate level 3. Batch 16, sequence 2048, d_model 1024, 16 heads: about 0.55 TFLOP,
half of the score matrix masked; the 16 * 16 * 2048 * 2048 scores (4.3 GB in float32)
are what a flash-style kernel avoids writing.
"""
import torch
import torch.nn as nn

# kgate:small batch_size=2 seq_len=12 d_model=32 n_heads=4


class Model(nn.Module):
    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        h = self.n_heads
        qkv = self.qkv(x).reshape(b, s, 3, h, d // h).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (d // h) ** -0.5
        future = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.proj(out.transpose(1, 2).reshape(b, s, d))


batch_size = 16
seq_len = 2048
d_model = 1024
n_heads = 16


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, n_heads]
