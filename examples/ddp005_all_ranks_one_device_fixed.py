"""DDP005 fixed: each rank uses the GPU of its local rank.

torchrun sets LOCAL_RANK per process; `torch.cuda.set_device(local_rank)`
makes it the current device, placements use `cuda:{local_rank}`, and DDP gets
`device_ids=[local_rank]`. On GPUs this takes the NCCL path; on CPU, gloo.
Observable on GPUs: rank r prints device=cuda:r.

Run:
    torchrun --nproc-per-node 2 examples/ddp005_all_ranks_one_device_fixed.py
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
    return parser.parse_args()


def log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def main():
    args = parse_args()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    on_gpu = torch.cuda.is_available()
    if on_gpu:
        # FIX: this process's GPU, chosen before anything touches CUDA.
        torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl" if on_gpu else "gloo", init_method="env://")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    device = torch.device(f"cuda:{local_rank}" if on_gpu else "cpu")

    dataset = TensorDataset(torch.randn(512, 16), torch.randn(512, 1))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)
    model = DDP(nn.Linear(16, 1).to(device), device_ids=[local_rank] if on_gpu else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        steps = 0
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            steps += 1
        log(f"[rank {rank}/{world_size}] epoch {epoch}: steps={steps} device={device}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
    # torch 2.13 + gloo: free DDP's reference cycles while the interpreter is whole. Left to
    # interpreter shutdown, a gloo thread can drop the last reference without the GIL and
    # abort the rank ("terminate called without an active exception") after its work is done.
    import gc
    gc.collect()
