import torch
import torch.nn as nn


class MyDataParallel(nn.DataParallel):
    """DataParallel that forwards attribute access to the wrapped module."""

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.module, name)


model = MyDataParallel(nn.Linear(32, 2)).cuda()  # <- DDP003
print(model.in_features)
