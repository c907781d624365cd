from typing import Union

import torch
from torch import nn
from torch.nn import DataParallel
from torch.nn.parallel import DistributedDataParallel

Wrapped = Union[nn.Module, DataParallel, DistributedDataParallel]


def param_count(model: Wrapped) -> int:
    return sum(p.numel() for p in model.parameters())


def to_cpu_state(model: "nn.DataParallel | DistributedDataParallel") -> dict:
    inner: nn.Module = getattr(model, "module", model)
    return {k: v.cpu() for k, v in inner.state_dict().items()}


def strip_prefix(state: dict) -> dict:
    # checkpoints saved from DataParallel(...) carry a "module." prefix
    return {k.removeprefix("module."): v for k, v in state.items()}
