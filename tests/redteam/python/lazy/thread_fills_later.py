# Red team (issue 16): returns an output that a background thread fills after forward has
# returned (the threading module reached by a name built at run time).
# expect: static | thread | imports threading
import importlib
import torch
import torch.nn as nn

threading = importlib.import_module("threading")


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.empty(a.shape[0], b.shape[1])
        threading.Thread(target=lambda: out.copy_(torch.relu(a @ b))).start()
        return out
