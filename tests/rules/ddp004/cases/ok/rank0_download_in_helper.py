import torch
import torch.distributed as dist
from torchvision import datasets


def prepare(root):
    if dist.get_rank() == 0:
        datasets.MNIST(root, download=True)
    dist.barrier()
    return datasets.MNIST(root, download=False)


dist.init_process_group("nccl")
torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())  # each rank's own GPU
train_ds = prepare("data")
