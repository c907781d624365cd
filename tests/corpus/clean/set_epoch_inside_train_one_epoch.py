"""Tabular transformer trained with DDP; the per-epoch helper reseeds the sampler
itself via loader.sampler.set_epoch(epoch)."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from tabular import FTTransformer, ParquetRows

EPOCHS = 25


def train_one_epoch(loader, epoch, model, optimizer, device):
    loader.sampler.set_epoch(epoch)
    model.train()
    running = 0.0
    for num_feats, cat_feats, target in loader:
        num_feats, cat_feats, target = num_feats.to(device), cat_feats.to(device), target.to(device)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(num_feats, cat_feats), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item()
    return running / max(len(loader), 1)


def main():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)

    rows = ParquetRows("/data/criteo/train.parquet")
    sampler = DistributedSampler(rows)
    loader = DataLoader(rows, batch_size=2048, sampler=sampler, num_workers=8, pin_memory=True)

    model = DDP(FTTransformer(rows.num_numeric, rows.cardinalities).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)

    for epoch in range(EPOCHS):
        mean_loss = train_one_epoch(loader, epoch, model, optimizer, device)
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {mean_loss:.4f}")
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "ft_transformer.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
