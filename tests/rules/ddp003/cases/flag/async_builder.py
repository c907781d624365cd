import torch
from torch.nn import DataParallel


async def load_model(path):
    net = torch.load(path, weights_only=False)
    return DataParallel(net.cuda(), output_device=0)  # <- DDP003
