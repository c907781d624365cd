import functools
import torch
from torch import nn


@functools.lru_cache(maxsize=None)
def build(n_gpus):
    model = nn.Linear(16, 1).cuda()
    if n_gpus > 1:
        model = nn.DataParallel(model, device_ids=list(range(n_gpus)))  # <- DDP003
    return model


model = build(torch.cuda.device_count())
