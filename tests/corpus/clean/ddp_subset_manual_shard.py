"""DDP training where each rank takes a strided slice of the dataset by hand
instead of using a DistributedSampler."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, models, transforms


def setup():
    dist.init_process_group(backend="nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return rank, world_size, local_rank


def main():
    rank, world_size, local_rank = setup()
    tf = transforms.Compose([transforms.Resize(160), transforms.RandomCrop(144),
                             transforms.RandomHorizontalFlip(), transforms.ToTensor()])
    full_train = datasets.ImageFolder("/data/flowers/train", transform=tf)

    # rank r gets samples r, r + world_size, r + 2 * world_size, ...
    train_part = Subset(full_train, range(rank, len(full_train), world_size))
    train_loader = DataLoader(train_part, batch_size=64, shuffle=True, num_workers=6, drop_last=True)

    model = models.resnet34(num_classes=len(full_train.classes)).cuda(local_rank)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, nesterov=True)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    for epoch in range(60):
        model.train()
        seen, loss_sum = 0, 0.0
        for images, labels in train_loader:
            images = images.cuda(local_rank, non_blocking=True)
            labels = labels.cuda(local_rank, non_blocking=True)
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += loss.item() * labels.size(0)
            seen += labels.size(0)
        stats = torch.tensor([loss_sum, seen], device=f"cuda:{local_rank}")
        dist.all_reduce(stats)
        if rank == 0:
            print(f"epoch {epoch}: mean loss {stats[0].item() / stats[1].item():.4f}")
            torch.save(model.module.state_dict(), f"resnet34_e{epoch}.pt")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
