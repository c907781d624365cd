"""DDP003 fixed: the model is wrapped in DistributedDataParallel.

DDP keeps one process per GPU (what torchrun starts), broadcasts rank 0's
weights at construction and all-reduces (averages) the gradients during
backward(), so every rank applies the same update and the replicas stay in
sync while each one trains on its own shard.
Observable: param_sum is identical on all ranks after every epoch.

Run:
    torchrun --nproc-per-node 2 examples/ddp003_data_parallel_fixed.py
    python examples/ddp003_data_parallel_fixed.py      # single process
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
    parser.add_argument("--max-steps", type=int, default=None,
                        help="stop each epoch after this many steps (default: full epoch)")
    parser.add_argument("--batch-size", type=int, default=32)
    return parser.parse_args()


def log(msg):
    # One write per line, so that the lines of different ranks do not interleave.
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def setup():
    """Join the process group; returns (rank, world_size, local_rank, device)."""
    # torchrun sets these; the defaults make a plain `python` run a world of size 1.
    for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"),
                       ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29500")):
        os.environ.setdefault(key, value)
    local_rank = int(os.environ["LOCAL_RANK"])
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device = torch.device(f"cuda:{local_rank}")
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")
    return dist.get_rank(), dist.get_world_size(), local_rank, device


def make_dataset(num_samples=512, num_features=16):
    """Synthetic regression data, identical on every rank (fixed seed)."""
    gen = torch.Generator().manual_seed(1234)
    x = torch.randn(num_samples, num_features, generator=gen)
    true_w = torch.randn(num_features, 1, generator=gen)
    y = x @ true_w + 0.1 * torch.randn(num_samples, 1, generator=gen)
    # The sample index rides along so that we can print who saw what.
    return TensorDataset(x, y, torch.arange(num_samples))


def main():
    args = parse_args()
    rank, world_size, local_rank, device = setup()
    torch.manual_seed(0)

    dataset = make_dataset()
    # Shards the dataset across the ranks and shuffles it (shuffle=True is the
    # sampler's default; it must not be passed to the DataLoader as well).
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)

    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
    # FIX: DistributedDataParallel, one process per device. It all-reduces the
    # gradients across the ranks in backward(), overlapped with the backward
    # pass. device_ids is this rank's GPU; on CPU it must be left out.
    model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.MSELoss()

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)  # a new shuffle every epoch
        steps = seen = 0
        first_idx = []
        total_loss = 0.0
        for x, y, idx in loader:
            if args.max_steps is not None and steps >= args.max_steps:
                break
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            if steps == 0:
                first_idx = idx[:4].tolist()
            steps += 1
            seen += len(idx)
            total_loss += loss.item()
        param_sum = sum(p.detach().sum().item() for p in model.parameters())
        log(f"[rank {rank}/{world_size}] epoch {epoch}: steps={steps} samples={seen} "
            f"of {len(dataset)} first_idx={first_idx} "
            f"loss={total_loss / max(steps, 1):.4f} param_sum={param_sum:.6f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
    # torch 2.13 + gloo: free DDP's reference cycles while the interpreter is whole. Left to
    # interpreter shutdown, a gloo thread can drop the last reference without the GIL and
    # abort the rank ("terminate called without an active exception") after its work is done.
    import gc
    gc.collect()
