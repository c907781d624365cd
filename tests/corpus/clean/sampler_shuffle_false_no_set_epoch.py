"""Curriculum fine-tuning: the examples are already sorted by difficulty on disk,
so the DistributedSampler must NOT shuffle, and set_epoch is not needed."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from curriculum import CurriculumDataset, Seq2Seq, collate_pairs


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    ds = CurriculumDataset("/data/mt/sorted_by_length.tsv")
    sampler = DistributedSampler(ds, shuffle=False)
    loader = DataLoader(ds, batch_size=128, sampler=sampler, collate_fn=collate_pairs, num_workers=4)

    model = DDP(Seq2Seq().cuda(), device_ids=[local_rank])
    opt = torch.optim.Adam(model.parameters(), lr=7e-4, betas=(0.9, 0.98))

    for epoch in range(10):
        model.train()
        for src, tgt in loader:
            src, tgt = src.cuda(non_blocking=True), tgt.cuda(non_blocking=True)
            loss = model(src, tgt)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} done, last loss {loss.item():.3f}")
            torch.save(model.module.state_dict(), f"seq2seq_{epoch}.pt")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
