"""DDP006 buggy: shuffle=True next to a DistributedSampler; DataLoader refuses it at start-up.

A GPU script as it is often first written: the single-GPU loader had shuffle=True, the
DistributedSampler was added for DDP and the flag stayed. DataLoader raises
"ValueError: sampler option is mutually exclusive with shuffle" on every rank before the first
batch. The fix: drop shuffle (the sampler shuffles; call sampler.set_epoch(epoch)).

On a machine without GPUs:
    ddplint verify --cpu examples/gpu/ddp006_shuffle_with_sampler_buggy.py
"""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler, shuffle=True)  # <- DDP006
    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            loss = nn.functional.mse_loss(model(inputs.cuda()), targets.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
