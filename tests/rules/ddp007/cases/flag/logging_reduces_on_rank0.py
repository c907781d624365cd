"""Logging that averages the loss across ranks, but only the main process logs, and the
checkpoint step waits for everyone from inside the main-process branch."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def reduce_mean(value):
    value = value.detach().clone()
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    return value / dist.get_world_size()


def train(model, dataset, optimizer, epochs, local_rank):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    model = DDP(model, device_ids=[local_rank])
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if is_main_process() and step % 50 == 0:
                print(f"epoch {epoch} step {step} loss {reduce_mean(loss).item():.4f}")  # <- DDP007
        if is_main_process():
            torch.save(model.module.state_dict(), f"epoch{epoch}.pt")
            dist.barrier()  # <- DDP007
