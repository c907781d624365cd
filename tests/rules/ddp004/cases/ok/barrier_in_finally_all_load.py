import os

import torch
import torch.distributed as dist
from torchvision import datasets

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # the bare barrier below runs on this GPU
rank = dist.get_rank()
try:
    if rank == 0:
        datasets.CIFAR10("data", train=True, download=True)
finally:
    dist.barrier()
train_ds = datasets.CIFAR10("data", train=True, download=False)
