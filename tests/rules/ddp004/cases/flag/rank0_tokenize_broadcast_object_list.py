"""DDP language-model fine-tuning where rank 0 reads and tokenizes the whole
corpus alone while the other GPUs idle, then ships the result with
broadcast_object_list (pickled through rank 0's memory)."""
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler
from transformers import AutoModelForCausalLM, AutoTokenizer


class TokenBlocks(Dataset):
    def __init__(self, ids, block=1024):
        n = len(ids) // block
        self.blocks = torch.tensor(ids[: n * block], dtype=torch.long).view(n, block)

    def __len__(self):
        return self.blocks.size(0)

    def __getitem__(self, i):
        return self.blocks[i]


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    tokenizer = AutoTokenizer.from_pretrained("gpt2")

    if rank == 0:  # <- DDP004
        with open("/data/stories/train.jsonl") as f:
            texts = [json.loads(line)["text"] for line in f]
        ids = []
        for text in texts:
            ids.extend(tokenizer(text)["input_ids"] + [tokenizer.eos_token_id])
        payload = [ids]
    else:
        payload = [None]
    dist.broadcast_object_list(payload, src=0)
    token_ids = payload[0]

    dataset = TokenBlocks(token_ids)
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, num_workers=2)

    model = DDP(AutoModelForCausalLM.from_pretrained("gpt2").cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for block in loader:
            block = block.cuda(non_blocking=True)
            loss = model(block, labels=block).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        if rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.3f}")
            model.module.save_pretrained(f"gpt2-stories-e{epoch}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
