"""DDP004 fixed: every rank preprocesses its own shard of the data.

All ranks read the raw data themselves (cheap, deterministic), each one runs
the slow preprocessing on its own 1/world_size slice, in parallel, and one
all_reduce hands every rank the other slices. Nobody idles: with 2 ranks the
data is ready in about half the time rank 0 alone needs, and the preprocessing
scales with the number of ranks. (For data too big to hold on every rank, keep
the per-shard idea but write the shards to disk, or preprocess lazily in
Dataset.__getitem__.)
Observable: every rank prints a data-ready time of ~0.5 s and ~0 s of waiting.

Run:
    torchrun --nproc-per-node 2 examples/ddp004_rank_zero_preprocessing_fixed.py
    python examples/ddp004_rank_zero_preprocessing_fixed.py      # single process
"""

import argparse
import os
import sys
import time

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


NUM_SAMPLES, NUM_FEATURES = 512, 16
# Stands in for the expensive part of real preprocessing (tokenising, decoding,
# feature extraction): about 1 s for all 512 samples.
PREPROCESS_SECONDS_PER_SAMPLE = 0.002


def load_raw():
    """'Reads' the raw features and labels: cheap, identical on every rank."""
    gen = torch.Generator().manual_seed(1234)
    x = torch.randn(NUM_SAMPLES, NUM_FEATURES, generator=gen)
    true_w = torch.randn(NUM_FEATURES, 1, generator=gen)
    y = x @ true_w + 0.1 * torch.randn(NUM_SAMPLES, 1, generator=gen)
    return x, y


def preprocess(x):
    """Slow per-sample feature preprocessing: the cost grows with len(x)."""
    time.sleep(PREPROCESS_SECONDS_PER_SAMPLE * len(x))
    return (x - x.mean(dim=1, keepdim=True)) / x.std(dim=1, keepdim=True)


def main():
    args = parse_args()
    rank, world_size, local_rank, device = setup()
    torch.manual_seed(0)

    start = time.perf_counter()
    # FIX: no rank-0-only work. Every rank reads the raw data (cheap) and runs
    # the slow preprocessing on its own contiguous slice only, all ranks at the
    # same time, so the work is split world_size ways and nobody idles.
    x_raw, y = load_raw()
    lo = rank * NUM_SAMPLES // world_size
    hi = (rank + 1) * NUM_SAMPLES // world_size
    x = torch.zeros_like(x_raw)
    x[lo:hi] = preprocess(x_raw[lo:hi])
    wait_start = time.perf_counter()
    # Each row is non-zero on exactly one rank, so a sum over the ranks puts
    # the whole preprocessed tensor on every rank (the sampler below decides
    # per epoch which rows each rank trains on).
    x = x.to(device)  # NCCL only reduces GPU tensors
    dist.all_reduce(x, op=dist.ReduceOp.SUM)
    x = x.cpu()
    done = time.perf_counter()
    log(f"[rank {rank}/{world_size}] data ready after {done - start:.2f}s "
        f"({done - wait_start:.2f}s of it waiting for other ranks)")
    dataset = TensorDataset(x, y, torch.arange(len(x)))

    # Shards the dataset across the ranks and shuffles it (shuffle=True is the
    # sampler's default; it must not be passed to the DataLoader as well).
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)

    model = nn.Sequential(nn.Linear(NUM_FEATURES, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
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
