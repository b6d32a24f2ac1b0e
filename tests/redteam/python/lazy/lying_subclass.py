# Red team (issue 16): returns a tensor subclass whose __torch_function__ answers every
# comparison the way the truth would (sub gives zeros, isfinite gives true): the output's
# own storage is never written (on a CPU, what the uninitialised memory holds decides
# which correctness rule sees it first: poison, NaN, over tolerance, or repeats differing).
# expect: correctness | - | never written || over tolerance || has the wrong shape || elements where the float64 truth is finite || not bitwise identical
import torch
import torch.nn as nn

class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in ("__sub__", "sub"):
            return torch.zeros(args[0].shape, dtype=torch.float64)
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **kwargs)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.empty(a.shape[0], b.shape[1]).as_subclass(Liar)
