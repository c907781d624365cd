"""DDP text classifier whose DataLoader options come from a dict literal; the
dict has no sampler key, so the train loader is not sharded."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

from textcls import NewsDataset, TextCNN, pad_collate


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    train_ds = NewsDataset("/data/ag_news/train.csv")
    dev_ds = NewsDataset("/data/ag_news/test.csv", vocab=train_ds.vocab)

    loader_kwargs = {
        "batch_size": 64,
        "shuffle": True,
        "num_workers": 4,
        "pin_memory": True,
        "collate_fn": pad_collate,
    }
    train_loader = DataLoader(train_ds, **loader_kwargs)  # <- DDP001
    dev_loader = DataLoader(dev_ds, batch_size=256, collate_fn=pad_collate)

    model = DDP(TextCNN(len(train_ds.vocab), n_classes=4).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    for epoch in range(12):
        model.train()
        for tokens, labels in train_loader:
            loss = torch.nn.functional.cross_entropy(model(tokens.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        model.eval()
        hits = torch.zeros(2, device="cuda")
        with torch.no_grad():
            for tokens, labels in dev_loader:
                hits[0] += (model(tokens.cuda()).argmax(1) == labels.cuda()).sum()
                hits[1] += labels.numel()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: dev acc {(hits[0] / hits[1]).item():.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
