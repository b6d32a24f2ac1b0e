# Red team (issue 16): halves torch.cuda.Event.elapsed_time from the constructor, hidden
# from the lint in an exec string; on a CPU worker the identity check still sees the
# class attribute replaced.
# expect: static | timer-patch | timer patch: torch.cuda.Event.elapsed_time was rebound by the candidate (class attribute replaced)
import torch
import torch.nn as nn

PATCH = "E = torch.cuda.Event\nr = E.elapsed_time\nE.elapsed_time = lambda s, e: r(s, e) / 2"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        exec(PATCH, {"torch": torch})

    def forward(self, a, b):
        return torch.relu(a @ b)
