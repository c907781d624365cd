"""Evaluation sharded over the ranks every epoch; one final rank-0 test after training, when
nobody waits any more; rank-0 logging in between."""

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    totals = torch.zeros(2, device=device)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        totals[0] += (model(x).argmax(1) == y).sum()
        totals[1] += y.numel()
    dist.all_reduce(totals)
    model.train()
    return (totals[0] / totals[1]).item()


def main(model, optimizer, train_set, val_set, test_loader, device, epochs):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=64, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=256, sampler=DistributedSampler(val_set, shuffle=False))
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        for x, y in train_loader:
            loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        accuracy = evaluate(model, val_loader, device)
        if rank == 0:
            print(f"epoch {epoch}: val accuracy {accuracy:.3f}")
            torch.save(model.module.state_dict(), "last.pt")
    if rank == 0:
        with torch.no_grad():
            correct = sum((model.module(x.to(device)).argmax(1).cpu() == y).sum().item() for x, y in test_loader)
        print("test correct", correct)
    dist.destroy_process_group()
