import torch.nn as nn


def unwrap(model):
    match model:
        case nn.DataParallel(module=inner):
            return inner
        case nn.parallel.DistributedDataParallel():
            return model.module
        case _:
            return model
