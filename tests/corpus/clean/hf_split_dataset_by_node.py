"""Contrastive image-text training with DDP; the dataset is split per node with
datasets.distributed.split_dataset_by_node before the loader is built."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from datasets import load_dataset
from datasets.distributed import split_dataset_by_node
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

from clip_small import SmallCLIP, image_text_collate

RANK = int(os.environ["RANK"])
WORLD_SIZE = int(os.environ["WORLD_SIZE"])
LOCAL_RANK = int(os.environ["LOCAL_RANK"])


def main():
    dist.init_process_group("nccl", rank=RANK, world_size=WORLD_SIZE)
    torch.cuda.set_device(LOCAL_RANK)

    pairs = load_dataset("parquet", data_files={"train": "/data/cc3m/*.parquet"})["train"]
    local_pairs = split_dataset_by_node(pairs, rank=RANK, world_size=WORLD_SIZE)
    loader = DataLoader(local_pairs, batch_size=256, shuffle=True, collate_fn=image_text_collate,
                        num_workers=12, drop_last=True)

    model = DDP(SmallCLIP().cuda(), device_ids=[LOCAL_RANK])
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.2)

    for epoch in range(32):
        for images, tokens in loader:
            img_emb, txt_emb, scale = model(images.cuda(non_blocking=True), tokens.cuda(non_blocking=True))
            logits = scale * img_emb @ txt_emb.t()
            labels = torch.arange(logits.size(0), device=logits.device)
            loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        if RANK == 0:
            print(f"epoch {epoch} loss {loss.item():.4f}")
            torch.save(model.module.state_dict(), "clip_small.pt")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
