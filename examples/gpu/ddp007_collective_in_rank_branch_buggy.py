"""DDP007 buggy: only rank 0 joins the all_reduce that averages the loss for its log line.

The script is written for GPUs (set_device, nccl, device_ids). Every 4 steps rank 0 sums the
loss over all ranks to print it, but the all_reduce sits inside `if rank == 0:`, so the other
ranks never make the matching call. With NCCL, rank 0 waits for them until the watchdog kills
the job; with gloo the stray call may instead be paired with another rank's next collective,
and the run goes on with wrong numbers. Either way the ranks' sequences of collectives differ.

On a machine without GPUs:
    ddplint verify --cpu examples/gpu/ddp007_collective_in_rank_branch_buggy.py
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(args):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", local_rank)

    features = torch.randn(1024, 32)
    dataset = TensorDataset(features, features[:, :1] * 2.0)
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    model = DDP(nn.Linear(32, 1).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    step = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            loss = nn.functional.mse_loss(model(inputs), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % 4 == 0 and rank == 0:
                # BUG: the other ranks never join this all_reduce.
                total = loss.detach().clone()
                dist.all_reduce(total)  # <- DDP007
                print(f"step {step}: mean loss {total.item() / dist.get_world_size():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    main(parser.parse_args())
