"""A GPU training script as `torchrun` users write it: one process per GPU, no bug.

Written for GPUs only (no CPU fallback): the process picks its GPU from LOCAL_RANK with
set_device, joins an NCCL process group, moves the model to its GPU and wraps it in
DistributedDataParallel(device_ids=[gpu]). Each rank reads its own shard (DistributedSampler,
set_epoch every epoch), rank 0 writes a snapshot, and a restart resumes from it onto each rank's
own GPU (map_location).

On a machine without GPUs, rehearse it with:
    ddplint verify --cpu examples/gpu/train_torchrun_fixed.py
On GPUs:
    torchrun --nproc-per-node 2 examples/gpu/train_torchrun_fixed.py --epochs 3
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class RegressionSet(Dataset):
    """Noisy linear targets, generated once from a fixed seed (the same on every rank)."""

    def __init__(self, size: int):
        generator = torch.Generator().manual_seed(7)
        self.inputs = torch.randn(size, 20, generator=generator)
        self.targets = self.inputs.sum(dim=1, keepdim=True) + 0.1 * torch.randn(size, 1, generator=generator)

    def __len__(self):
        return len(self.inputs)

    def __getitem__(self, index):
        return self.inputs[index], self.targets[index]


def join_process_group() -> int:
    gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(gpu)
    dist.init_process_group(backend="nccl")
    return gpu


def run(args) -> None:
    gpu = join_process_group()
    rank = dist.get_rank()
    snapshot = args.snapshot
    net = nn.Sequential(nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 1))
    net = nn.SyncBatchNorm.convert_sync_batchnorm(net).to(gpu)  # batch statistics over all GPUs
    first_epoch = 0
    if snapshot and os.path.exists(snapshot):
        state = torch.load(snapshot, map_location=f"cuda:{gpu}")
        net.load_state_dict(state["weights"])
        first_epoch = state["epoch"] + 1
    model = DDP(net, device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    train_set = RegressionSet(2048)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, shuffle=False,
                        pin_memory=True, num_workers=2)
    first_inputs, _ = next(iter(loader))  # a peek at one batch, for the log line
    if rank == 0:
        print(f"{len(loader)} steps of {len(first_inputs)} samples per epoch on each rank", flush=True)
    for epoch in range(first_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            inputs, targets = inputs.to(gpu, non_blocking=True), targets.to(gpu, non_blocking=True)
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(inputs), targets)
            loss.backward()
            optimizer.step()
        if rank == 0 and snapshot:
            torch.save({"weights": model.module.state_dict(), "epoch": epoch}, snapshot)
        if rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f} on cuda:{gpu}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--snapshot", help="resume from this file if it exists; rank 0 saves to it every epoch")
    run(parser.parse_args())
