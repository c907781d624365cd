import sys
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
match sys.argv[1]:
    case "mnist":
        ds = datasets.MNIST("data", train=True, transform=transforms.ToTensor())
    case "cifar":
        ds = datasets.CIFAR10("data", train=True, transform=transforms.ToTensor())
    case _:
        raise ValueError(sys.argv[1])
train_loader = DataLoader(ds, batch_size=128, shuffle=True)  # <- DDP001
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Flatten().cuda())
for epoch in range(5):
    for x, y in train_loader:
        model(x.cuda()).sum().backward()
