import torch.distributed as dist
from torchvision import datasets


def is_main_process():
    return dist.get_rank() == 0


dist.init_process_group("nccl")
holder = [None]
if is_main_process():  # <- DDP004
    ds = datasets.ImageFolder("/data/train")
    holder[0] = [(p, c) for p, c in ds.samples]
dist.broadcast_object_list(holder)
samples = holder[0]
