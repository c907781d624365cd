"""DDP005 buggy: every rank puts its model and batches on cuda:0.

The device line was copied from a single-GPU script, so on a machine with N
GPUs all N torchrun processes allocate on GPU 0: its memory is shared N ways,
its compute is time-sliced, and GPUs 1..N-1 stay idle. (With NCCL the job
would not even start: "Duplicate GPU detected". This script uses gloo so that
the mistake runs, and shows.) On CPU the device falls back to "cpu".
Observable on GPUs: every rank prints device=cuda:0.

Run:
    torchrun --nproc-per-node 2 examples/ddp005_all_ranks_one_device_buggy.py
"""

import argparse
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
    dist.init_process_group(backend="gloo", init_method="env://")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    # BUG: "cuda:0" is the same GPU in every process.
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")  # <- DDP005

    dataset = TensorDataset(torch.randn(512, 16), torch.randn(512, 1))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)
    model = DDP(nn.Linear(16, 1).to(device))
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
