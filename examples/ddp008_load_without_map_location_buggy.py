"""DDP008 buggy: every rank resumes from a checkpoint with torch.load(path).

Rank 0 saves the checkpoint from its GPU; torch.load without map_location puts
each tensor back on the device it was saved from, so every rank materialises
the whole checkpoint on cuda:0 (N copies on GPU 0, a CUDA context per process
there) before load_state_dict copies it to the rank's own GPU. On CPU the
tensors were saved from the CPU and nothing goes wrong, but the line is the same.
Observable on GPUs: every rank prints loaded_on=cuda:0.

Run:
    torchrun --nproc-per-node 2 examples/ddp008_load_without_map_location_buggy.py
"""

import argparse
import os
import sys
import tempfile

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


def setup():
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    on_gpu = torch.cuda.is_available()
    if on_gpu:
        torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl" if on_gpu else "gloo", init_method="env://")
    device = torch.device(f"cuda:{local_rank}" if on_gpu else "cpu")
    return dist.get_rank(), dist.get_world_size(), local_rank, device


def main():
    args = parse_args()
    rank, world_size, local_rank, device = setup()
    torch.manual_seed(0)
    model = nn.Linear(16, 1).to(device)
    checkpoint = os.path.join(tempfile.gettempdir(), f"ddplint_ddp008_{os.environ.get('MASTER_PORT', '0')}.pt")
    if rank == 0:
        torch.save({"model": model.state_dict()}, checkpoint)
    dist.barrier()
    # BUG: no map_location: tensors saved from rank 0's GPU come back on cuda:0 in every rank.
    state = torch.load(checkpoint)  # <- DDP008
    loaded_on = state["model"]["weight"].device
    model.load_state_dict(state["model"])
    # Every rank has read the checkpoint: removed now, not at the end, which a run stopped early
    # (ddplint verify's step budget, a crash) never reaches.
    dist.barrier()
    if rank == 0:
        os.remove(checkpoint)
    model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None)

    dataset = TensorDataset(torch.randn(512, 16), torch.randn(512, 1))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)
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
        log(f"[rank {rank}/{world_size}] epoch {epoch}: steps={steps} loaded_on={loaded_on}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
    # torch 2.13 + gloo: free DDP's reference cycles while the interpreter is whole. Left to
    # interpreter shutdown, a gloo thread can drop the last reference without the GIL and
    # abort the rank ("terminate called without an active exception") after its work is done.
    import gc
    gc.collect()
