"""DDP trainer that iterates the loader inside train_one_epoch(model, loader, ...);
neither the caller nor the helper calls set_epoch. The finding belongs on the
caller's epoch loop."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from graphs import GIN, MolecularGraphs, collate_graphs


def train_one_epoch(model, loader, optimizer, criterion, device):
    model.train()
    total, count = 0.0, 0
    for graphs, targets in loader:
        graphs, targets = graphs.to(device), targets.to(device)
        loss = criterion(model(graphs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * targets.size(0)
        count += targets.size(0)
    return total / max(count, 1)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)

    dataset = MolecularGraphs("/data/ogbg-molhiv", split="train")
    sampler = DistributedSampler(dataset, seed=1234)
    loader = DataLoader(dataset, batch_size=256, sampler=sampler, collate_fn=collate_graphs, num_workers=4)

    model = DDP(GIN(hidden=300, layers=5).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.BCEWithLogitsLoss()

    for epoch in range(100):  # <- DDP002
        mean_loss = train_one_epoch(model, loader, optimizer, criterion, device)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: train loss {mean_loss:.4f}")

    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "gin_molhiv.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
