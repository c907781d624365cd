import torch.distributed as dist
from torchvision import datasets


def prepare(root):
    if dist.get_rank() == 0:
        datasets.MNIST(root, download=True)
    dist.barrier()
    return datasets.MNIST(root, download=False)


dist.init_process_group("nccl")
train_ds = prepare("data")
