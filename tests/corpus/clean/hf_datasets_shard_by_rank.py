"""Causal-LM fine-tuning with DDP; each rank keeps 1/world of the HF dataset
via Dataset.shard, so the loader shuffles its own shard without a sampler."""
import os

import torch
import torch.distributed as dist
from datasets import load_from_disk
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, default_data_collator


def main():
    dist.init_process_group("nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    tokenized = load_from_disk("/data/tokenized/wikitext103_1024")
    train_split = tokenized["train"].shard(num_shards=world_size, index=rank)
    train_split = train_split.with_format("torch")
    train_loader = DataLoader(train_split, batch_size=8, shuffle=True, collate_fn=default_data_collator,
                              num_workers=4, drop_last=True)

    model = AutoModelForCausalLM.from_pretrained("gpt2-medium").cuda()
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)

    for epoch in range(3):
        model.train()
        for batch in train_loader:
            batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
            loss = model(**batch, labels=batch["input_ids"]).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        if rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.3f}")
            model.module.save_pretrained(f"ckpt/epoch{epoch}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
