"""Stream-train on sharded JSONL files with DDP. The IterableDataset splits the
file list over ranks (and over dataloader workers) itself, so no sampler is used."""
import glob
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from mymodels import TinyEncoder, tokenize


class ShardedJsonlStream(IterableDataset):
    def __init__(self, pattern, seq_len=512):
        super().__init__()
        self.files = sorted(glob.glob(pattern))
        self.seq_len = seq_len

    def __iter__(self):
        rank = dist.get_rank() if dist.is_initialized() else 0
        world = dist.get_world_size() if dist.is_initialized() else 1
        info = get_worker_info()
        wid, nworkers = (info.id, info.num_workers) if info is not None else (0, 1)
        shard_id, num_shards = rank * nworkers + wid, world * nworkers
        for path in self.files[shard_id::num_shards]:
            with open(path) as f:
                for line in f:
                    ids = tokenize(json.loads(line)["text"])[: self.seq_len]
                    yield torch.tensor(ids, dtype=torch.long)


def pad(batch):
    out = torch.zeros(len(batch), max(t.numel() for t in batch), dtype=torch.long)
    for i, t in enumerate(batch):
        out[i, : t.numel()] = t
    return out


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    stream = ShardedJsonlStream("/datasets/pile/train/*.jsonl")
    loader = DataLoader(stream, batch_size=32, num_workers=4, collate_fn=pad, pin_memory=True)

    model = DDP(TinyEncoder().cuda(), device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    max_steps, step = 50_000, 0
    while step < max_steps:
        for batch in loader:
            batch = batch.cuda(non_blocking=True)
            loss = model(batch, labels=batch).loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            if step % 500 == 0 and dist.get_rank() == 0:
                print(f"step {step} loss {loss.item():.3f}")
            if step >= max_steps:
                break

    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "encoder.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
