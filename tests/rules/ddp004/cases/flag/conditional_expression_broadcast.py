"""Protein property regression (DDP) where the expensive parsing/featurisation is
written as a one-line conditional expression on rank 0, then broadcast."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from proteins import ProteinMLP, featurize, parse_fasta_with_labels


def load_and_preprocess(path):
    records = parse_fasta_with_labels(path)
    feats = torch.stack([featurize(r.sequence) for r in records])
    targets = torch.tensor([r.stability for r in records], dtype=torch.float32)
    return feats, targets


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_path", default="/data/proteins/stability_train.fasta")
    parser.add_argument("--epochs", type=int, default=40)
    args = parser.parse_args()

    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    data = load_and_preprocess(args.data_path) if rank == 0 else None  # <- DDP004
    holder = [data]
    dist.broadcast_object_list(holder, src=0)
    feats, targets = holder[0]

    dataset = TensorDataset(feats, targets)
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=256, sampler=sampler)

    model = DDP(ProteinMLP(in_dim=feats.shape[1]).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda()).squeeze(-1), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch}: mse {loss.item():.4f}")
    if rank == 0:
        torch.save(model.module.state_dict(), "stability_mlp.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
