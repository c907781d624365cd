"""DDP training with a DistributedSampler but no set_epoch: every epoch replays
the same permutation on every rank."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms
from torchvision.models import mobilenet_v3_small


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    tf = transforms.Compose([transforms.RandomResizedCrop(128), transforms.ToTensor()])
    train_set = datasets.Food101("/data/food101", split="train", transform=tf)
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=96, sampler=train_sampler, num_workers=8,
                              pin_memory=True, drop_last=True)

    model = DDP(mobilenet_v3_small(num_classes=101).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.RMSprop(model.parameters(), lr=0.016, momentum=0.9, weight_decay=1e-5)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.97)

    for epoch in range(120):  # <- DDP002
        model.train()
        for images, labels in train_loader:
            images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")
            torch.save(model.module.state_dict(), "food101_mnv3.pt")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
