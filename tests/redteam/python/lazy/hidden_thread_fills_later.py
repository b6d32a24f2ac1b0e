# Red team (issue 16): as thread_fills_later.py, the module name assembled at run time so
# the lint cannot see it; the output is unwritten when forward returns.
# expect: correctness | - | never written (still hold the poison value) || elements over tolerance || elements where the float64 truth is finite || not bitwise identical
import importlib
import time
import torch
import torch.nn as nn

_t = importlib.import_module("thr" + "eading")


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.empty(a.shape[0], b.shape[1])

        def later():
            time.sleep(0.05)
            out.copy_(torch.relu(a @ b))

        _t.Thread(target=later, daemon=True).start()
        return out
