import os
from contextlib import contextmanager
import torch.distributed as dist
from torchvision import datasets, transforms

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))


@contextmanager
def torch_distributed_zero_first(local_rank: int):
    if local_rank not in [-1, 0]:
        dist.barrier(device_ids=[local_rank])
    yield
    if local_rank == 0:
        dist.barrier(device_ids=[0])


dist.init_process_group("nccl")
with torch_distributed_zero_first(LOCAL_RANK):
    train_set = datasets.CIFAR10("data", train=True, download=True, transform=transforms.ToTensor())
