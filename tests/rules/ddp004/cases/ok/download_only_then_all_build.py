import os
import torch
import torch.distributed as dist
from torchvision import datasets, transforms

dist.init_process_group("nccl")
torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())  # each rank's own GPU
rank = dist.get_rank()
root = os.path.expanduser("~/data")
if rank == 0:
    datasets.CIFAR100(root, train=True, download=True)
    datasets.CIFAR100(root, train=False, download=True)
dist.barrier()
tf = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.ToTensor()])
train_set = datasets.CIFAR100(root, train=True, download=False, transform=tf)
test_set = datasets.CIFAR100(root, train=False, download=False, transform=transforms.ToTensor())
