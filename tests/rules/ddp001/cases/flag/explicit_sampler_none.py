"""mp.spawn DDP trainer that passes sampler=None explicitly (a leftover from a
refactor) with shuffle=True: the loader is still unsharded."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader

from pointnet import ModelNet40, PointNetCls


def worker(rank, world_size, epochs):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29512")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)

    train_ds = ModelNet40("/data/modelnet40", split="train", npoints=1024, augment=True)
    train_loader = DataLoader(  # <- DDP001
        train_ds,
        batch_size=32,
        shuffle=True,
        sampler=None,
        num_workers=4,
        drop_last=True,
    )

    model = DistributedDataParallel(PointNetCls(k=40).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999))
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)
    criterion = nn.NLLLoss()

    for epoch in range(epochs):
        model.train()
        for points, target in train_loader:
            points, target = points.cuda(rank).transpose(2, 1), target.cuda(rank)
            pred, trans_feat = model(points)
            loss = criterion(pred, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        if rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")
            torch.save(model.module.state_dict(), "pointnet_cls.pt")

    dist.destroy_process_group()


if __name__ == "__main__":
    n_gpus = torch.cuda.device_count()
    mp.spawn(worker, args=(n_gpus, 200), nprocs=n_gpus, join=True)
