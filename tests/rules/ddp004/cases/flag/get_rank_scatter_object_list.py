"""Rank 0 loads and normalises the whole recommendation log, splits it and
scatters one piece to each rank with scatter_object_list; the other ranks sit
idle during the preprocessing."""
import os

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from recsys import DeepFM

BATCH = 4096


def main():
    dist.init_process_group(backend="nccl")
    world_size = dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    received = [None]
    if dist.get_rank() == 0:  # <- DDP004
        df = pd.read_parquet("/data/clicks/2024-*.parquet")
        df["hour"] = pd.to_datetime(df["ts"], unit="s").dt.hour
        dense = ((df[["price", "dwell"]] - df[["price", "dwell"]].mean()) / df[["price", "dwell"]].std()).to_numpy()
        sparse = df[["user_id", "item_id", "hour"]].to_numpy()
        labels = df["clicked"].to_numpy()
        perm = np.random.default_rng(0).permutation(len(df))
        pieces = [(dense[p], sparse[p], labels[p]) for p in np.array_split(perm, world_size)]
    else:
        pieces = None
    dist.scatter_object_list(received, pieces, src=0)
    dense, sparse, labels = (torch.as_tensor(a) for a in received[0])

    model = DDP(DeepFM(n_dense=2, field_dims=[1_000_000, 500_000, 24]).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    n_local = labels.numel()
    smallest = torch.tensor([n_local], device="cuda")
    dist.all_reduce(smallest, op=dist.ReduceOp.MIN)  # same number of steps on every rank
    n_steps = smallest.item() // BATCH

    for epoch in range(5):
        order = torch.randperm(n_local)
        for s in range(n_steps):
            idx = order[s * BATCH:(s + 1) * BATCH]
            logits = model(dense[idx].float().cuda(), sparse[idx].long().cuda())
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels[idx].float().cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
