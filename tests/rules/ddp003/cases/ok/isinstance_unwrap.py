import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def unwrap(model: nn.Module) -> nn.Module:
    if isinstance(model, (nn.DataParallel, DDP)):
        return model.module
    return model


def save_checkpoint(model, path):
    torch.save(unwrap(model).state_dict(), path)


def is_wrapped(model) -> bool:
    return issubclass(type(model), nn.parallel.DataParallel) or type(model) is DDP
