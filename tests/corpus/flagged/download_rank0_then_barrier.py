"""MNIST with DDP. Only rank 0 downloads; after the barrier every rank builds
its own dataset object from the files on disk."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.conv2 = nn.Conv2d(32, 64, 3)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="./mnist")
    parser.add_argument("--epochs", type=int, default=14)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    if rank == 0:
        datasets.MNIST(args.root, train=True, download=True)
        datasets.MNIST(args.root, train=False, download=True)
    dist.barrier()

    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    train_set = datasets.MNIST(args.root, train=True, transform=tf)
    test_set = datasets.MNIST(args.root, train=False, transform=tf)
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=64, sampler=train_sampler, num_workers=2)
    test_loader = DataLoader(test_set, batch_size=1000, shuffle=False)

    model = DDP(Net().cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)

    for epoch in range(1, args.epochs + 1):
        train_sampler.set_epoch(epoch)
        model.train()
        for data, target in train_loader:
            data, target = data.cuda(local_rank), target.cuda(local_rank)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(data), target)
            loss.backward()
            optimizer.step()
        scheduler.step()
        if rank == 0:  # <- DDP010
            model.eval()
            correct = 0
            with torch.no_grad():
                for data, target in test_loader:
                    correct += model.module(data.cuda(local_rank)).argmax(1).eq(target.cuda(local_rank)).sum().item()
            print(f"epoch {epoch}: {correct}/{len(test_set)}")

    if rank == 0:
        torch.save(model.module.state_dict(), "mnist_cnn.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
