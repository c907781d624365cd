"""DDP011 buggy: the DistributedSampler is seeded with seed + rank.

DistributedSampler partitions the dataset by permuting all indices with its
seed and handing rank r every world_size-th index from r. With a different seed
per rank, each rank slices a different permutation: the slices overlap, so
some samples are trained on twice per epoch and others not at all.
Observable: `overlap` (samples drawn by both ranks, gathered at the end of the
epoch) is far above 0 and `unseen` counts samples no rank trained on.

Run:
    torchrun --nproc-per-node 2 examples/ddp011_per_rank_sampler_seed_buggy.py
"""

import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=17)
    return parser.parse_args()


def log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def main():
    args = parse_args()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    on_gpu = torch.cuda.is_available()
    if on_gpu:
        torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl" if on_gpu else "gloo", init_method="env://")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    device = torch.device(f"cuda:{local_rank}" if on_gpu else "cpu")

    dataset = TensorDataset(torch.randn(512, 16), torch.randn(512, 1), torch.arange(512))
    # BUG: a different seed on every rank, so every rank permutes differently.
    sampler = DistributedSampler(dataset, shuffle=True, seed=args.seed + rank)  # <- DDP011
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)
    model = DDP(nn.Linear(16, 1).to(device), device_ids=[local_rank] if on_gpu else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        seen = torch.zeros(len(dataset), device=device)
        for x, y, idx in loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            seen[idx.to(device)] += 1
        dist.all_reduce(seen)  # how many ranks drew each sample this epoch
        overlap = int((seen > 1).sum())
        unseen = int((seen == 0).sum())
        log(f"[rank {rank}/{world_size}] epoch {epoch}: overlap={overlap} unseen={unseen} of {len(dataset)}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
    # torch 2.13 + gloo: free DDP's reference cycles while the interpreter is whole. Left to
    # interpreter shutdown, a gloo thread can drop the last reference without the GIL and
    # abort the rank ("terminate called without an active exception") after its work is done.
    import gc
    gc.collect()
