"""KL divergence KL(target || prediction) between two row distributions given as
logits, batchmean reduction (scalar output).

kgate level 1. Both log-softmaxes and the divergence fuse into one read of each
input. Memory-bound: two 4096 x 262144 float32 tensors (8.6 GB).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# kgate:small batch_size=16 dim=300


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred_logits: torch.Tensor, target_logits: torch.Tensor) -> torch.Tensor:
        log_p = F.log_softmax(pred_logits, dim=-1)
        log_q = F.log_softmax(target_logits, dim=-1)
        return F.kl_div(log_p, log_q, reduction="batchmean", log_target=True)


batch_size = 4096
dim = 262144


def get_inputs():
    pred_logits = torch.randn(batch_size, dim)
    target_logits = torch.randn(batch_size, dim)
    return [pred_logits, target_logits]


def get_init_inputs():
    return []
