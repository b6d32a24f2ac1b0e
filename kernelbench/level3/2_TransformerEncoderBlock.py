"""Pre-LayerNorm transformer encoder block: x + MHA(LN(x)), then x + MLP(LN(x)).

kgate level 3. Attention is written out with matmuls and softmax (no fused SDPA), the
MLP is Linear-GELU-Linear. Batch 16, sequence 1024, d_model 1024, 16 heads, d_ff 4096:
about 0.48 TFLOP, plus a softmax over 16 * 16 * 1024 * 1024 scores.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# kgate:small batch_size=2 seq_len=16 d_model=32 n_heads=4 d_ff=64


class Model(nn.Module):
    def __init__(self, d_model: int, n_heads: int, d_ff: int):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        h = self.n_heads
        qkv = self.qkv(x).reshape(b, s, 3, h, d // h).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (d // h) ** -0.5
        weights = torch.softmax(scores, dim=-1)
        out = torch.matmul(weights, v).transpose(1, 2).reshape(b, s, d)
        return self.proj(out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


batch_size = 16
seq_len = 1024
d_model = 1024
n_heads = 16
d_ff = 4096


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, n_heads, d_ff]
