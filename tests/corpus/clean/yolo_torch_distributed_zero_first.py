"""Detector training in the YOLOv5 manner: dataset caching happens inside
torch_distributed_zero_first(LOCAL_RANK) so rank 0 builds the label cache first."""
import os
from contextlib import contextmanager

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, distributed

from yolo.data import LoadImagesAndLabels
from yolo.loss import ComputeLoss
from yolo.model import Model

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))
RANK = int(os.getenv("RANK", -1))
WORLD_SIZE = int(os.getenv("WORLD_SIZE", 1))


@contextmanager
def torch_distributed_zero_first(local_rank: int):
    # everyone but the local master waits until the master has done the work
    if local_rank not in [-1, 0]:
        dist.barrier(device_ids=[local_rank])
    yield
    if local_rank == 0:
        dist.barrier(device_ids=[0])


def create_dataloader(path, imgsz, batch_size, rank=-1, workers=8, shuffle=False, augment=False):
    with torch_distributed_zero_first(rank):
        dataset = LoadImagesAndLabels(path, imgsz, batch_size, augment=augment, cache_images=False)
    batch_size = min(batch_size, len(dataset))
    sampler = None if rank == -1 else distributed.DistributedSampler(dataset, shuffle=shuffle)
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=shuffle and sampler is None,
                        num_workers=workers, sampler=sampler, pin_memory=True,
                        collate_fn=LoadImagesAndLabels.collate_fn)
    return loader, dataset


def train(epochs=300, batch_size=64, imgsz=640):
    if LOCAL_RANK != -1:
        torch.cuda.set_device(LOCAL_RANK)
        dist.init_process_group(backend="nccl")
    device = torch.device("cuda", max(LOCAL_RANK, 0))

    train_loader, dataset = create_dataloader("coco/train2017.txt", imgsz, batch_size // WORLD_SIZE,
                                              rank=LOCAL_RANK, shuffle=True, augment=True)
    model = Model("yolov5s.yaml", nc=80).to(device)
    compute_loss = ComputeLoss(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937, nesterov=True)
    if RANK != -1:
        model = DDP(model, device_ids=[LOCAL_RANK], output_device=LOCAL_RANK)

    for epoch in range(epochs):
        model.train()
        if RANK != -1:
            train_loader.sampler.set_epoch(epoch)
        for imgs, targets, paths, _ in train_loader:
            imgs = imgs.to(device, non_blocking=True).float() / 255
            loss, loss_items = compute_loss(model(imgs), targets.to(device))
            if RANK != -1:
                loss *= WORLD_SIZE
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if RANK in {-1, 0}:
            ckpt = {"epoch": epoch, "model": (model.module if RANK != -1 else model).state_dict()}
            torch.save(ckpt, "last.pt")

    if RANK != -1:
        dist.destroy_process_group()


if __name__ == "__main__":
    train()
