"""torchrun DDP script whose training loader shuffles but has no DistributedSampler:
every rank walks the whole dataset, so an "epoch" is world_size epochs."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms


def main():
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    tf = transforms.Compose([transforms.RandomResizedCrop(96), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor()])
    train_set = datasets.STL10("/data/stl10", split="train", transform=tf)
    test_set = datasets.STL10("/data/stl10", split="test", transform=transforms.ToTensor())

    train_loader = DataLoader(train_set, batch_size=128, shuffle=True, num_workers=8, pin_memory=True)  # <- DDP001
    test_loader = DataLoader(test_set, batch_size=256, shuffle=False, num_workers=4)

    model = DDP(models.resnet18(num_classes=10).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    criterion = nn.CrossEntropyLoss()

    for epoch in range(100):
        model.train()
        for images, labels in train_loader:
            images, labels = images.cuda(local_rank), labels.cuda(local_rank)
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        if rank == 0:  # <- DDP010
            model.eval()
            correct = 0
            with torch.no_grad():
                for images, labels in test_loader:
                    correct += (model.module(images.cuda(local_rank)).argmax(1).cpu() == labels).sum().item()
            print(f"epoch {epoch}: acc {correct / len(test_set):.4f}")
            torch.save(model.module.state_dict(), "stl10_resnet18.pt")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
