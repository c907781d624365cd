"""The same port done right: the sampler shuffles, the single-GPU fallback shuffles in the loader,
the checkpoint is mapped to this rank's GPU, and the tokenised cache is read as it was saved."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def build_loader(dataset, batch_size, distributed):
    sampler = DistributedSampler(dataset) if distributed else None
    return DataLoader(dataset, batch_size=batch_size, shuffle=sampler is None, sampler=sampler)


def main(resume=""):
    distributed = "LOCAL_RANK" in os.environ
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if distributed:
        dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    model = nn.Linear(32, 4).cuda(local_rank)
    if resume:
        state = torch.load(resume, map_location=f"cuda:{local_rank}")
        model.load_state_dict(state["model"])
    if distributed:
        model = DDP(model, device_ids=[local_rank])
    dataset = torch.load("cache/tokenized_train.pt")
    loader = build_loader(dataset, 64, distributed)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        if distributed:
            loader.sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main(os.environ.get("RESUME", ""))
