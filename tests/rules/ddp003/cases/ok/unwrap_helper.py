import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


def unwrap(model):
    if isinstance(model, (nn.DataParallel, DistributedDataParallel)):
        return model.module
    return model


def is_parallel(model):
    return type(model) in (nn.parallel.DataParallel, nn.parallel.DistributedDataParallel)
