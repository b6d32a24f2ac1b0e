"""Cross-entropy of logits (batch_size, num_classes) against int64 class targets,
mean over the batch (scalar output).

kgate level 1. A vocabulary-sized row (32000). Memory-bound: one read of
65536 x 32000 float32 logits (8.4 GB).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# kgate:small batch_size=32 num_classes=100


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets)


batch_size = 65536
num_classes = 32000


def get_inputs():
    logits = torch.randn(batch_size, num_classes)
    targets = torch.randint(0, num_classes, (batch_size,))
    return [logits, targets]


def get_init_inputs():
    return []
