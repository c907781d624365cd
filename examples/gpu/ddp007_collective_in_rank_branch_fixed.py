"""DDP007 fixed: every rank joins the all_reduce that averages the loss; rank 0 prints it.

The same GPU script as ddp007_collective_in_rank_branch_buggy.py, with the all_reduce moved out
of the rank condition: the ranks' sequences of collectives are identical.

On a machine without GPUs:
    ddplint verify --cpu examples/gpu/ddp007_collective_in_rank_branch_fixed.py
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
            if step % 4 == 0:
                # FIX: every rank makes the call; only the printing is rank 0's.
                total = loss.detach().clone()
                dist.all_reduce(total)
                if rank == 0:
                    print(f"step {step}: mean loss {total.item() / dist.get_world_size():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    main(parser.parse_args())
