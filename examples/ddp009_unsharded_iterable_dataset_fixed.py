"""DDP009 fixed: the IterableDataset keeps only this rank's (and worker's) items.

__iter__ asks for the rank and the world size and keeps every world_size-th
record starting at the rank; with DataLoader workers it splits once more by
get_worker_info(). Each rank trains on its own 1/world_size of the stream.
Observable: rank r prints samples=256 of 512 and a first_idx of its own.

Run:
    torchrun --nproc-per-node 2 examples/ddp009_unsharded_iterable_dataset_fixed.py
"""

import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    return parser.parse_args()


def log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


class SyntheticStream(IterableDataset):
    """Streams (x, y, index) records, as a reader of a large file or bucket would."""

    def __init__(self, num_samples=512, num_features=16):
        gen = torch.Generator().manual_seed(1234)
        self.x = torch.randn(num_samples, num_features, generator=gen)
        self.y = self.x.sum(dim=1, keepdim=True)

    def __iter__(self):
        # FIX: this rank's share of the stream, then this worker's share of that.
        rank = dist.get_rank() if dist.is_initialized() else 0
        world = dist.get_world_size() if dist.is_initialized() else 1
        worker = get_worker_info()
        workers, worker_id = (worker.num_workers, worker.id) if worker is not None else (1, 0)
        for index in range(rank * workers + worker_id, len(self.x), world * workers):
            yield self.x[index], self.y[index], index


def main():
    args = parse_args()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    on_gpu = torch.cuda.is_available()
    if on_gpu:
        torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl" if on_gpu else "gloo", init_method="env://")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    device = torch.device(f"cuda:{local_rank}" if on_gpu else "cpu")

    stream = SyntheticStream()
    train_loader = DataLoader(stream, batch_size=args.batch_size)
    model = DDP(nn.Linear(16, 1).to(device), device_ids=[local_rank] if on_gpu else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(args.epochs):
        seen, first_idx = 0, []
        for x, y, idx in train_loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if not first_idx:
                first_idx = idx[:4].tolist()
            seen += len(idx)
        log(f"[rank {rank}/{world_size}] epoch {epoch}: samples={seen} of {len(stream.x)} first_idx={first_idx}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
    # torch 2.13 + gloo: free DDP's reference cycles while the interpreter is whole. Left to
    # interpreter shutdown, a gloo thread can drop the last reference without the GIL and
    # abort the rank ("terminate called without an active exception") after its work is done.
    import gc
    gc.collect()
