"""Semi-supervised DDP training (FixMatch-like) with three separate bugs:
rank 0 alone splits the metadata and broadcasts it, the labeled sampler is never
reseeded, and the unlabeled loader has no sampler at all."""
import os

import pandas as pd
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from ssl_data import LabeledImages, UnlabeledPairs
from ssl_models import WideResNet


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    split = [None, None]
    if rank == 0:  # <- DDP004
        meta = pd.read_csv("/data/ssl/metadata.csv")
        meta = meta[meta["quality"] > 0.2]
        split = [meta[meta["label"].notna()][["path", "label"]].values.tolist(),
                 meta[meta["label"].isna()]["path"].tolist()]
    dist.broadcast_object_list(split, src=0)
    labeled_rows, unlabeled_paths = split

    labeled = LabeledImages(labeled_rows)
    unlabeled = UnlabeledPairs(unlabeled_paths)
    labeled_sampler = DistributedSampler(labeled, drop_last=True)
    labeled_loader = DataLoader(labeled, batch_size=64, sampler=labeled_sampler, num_workers=4, drop_last=True)
    unlabeled_loader = DataLoader(unlabeled, batch_size=448, shuffle=True, num_workers=8, drop_last=True)  # <- DDP001

    model = DDP(WideResNet(depth=28, widen=2, num_classes=10).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9, nesterov=True, weight_decay=5e-4)

    for epoch in range(1024):  # <- DDP002
        model.train()
        for (x, y), (weak, strong) in zip(labeled_loader, unlabeled_loader):
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            weak, strong = weak.cuda(non_blocking=True), strong.cuda(non_blocking=True)
            logits = model(torch.cat([x, weak, strong]))
            logits_x = logits[: x.size(0)]
            logits_w, logits_s = logits[x.size(0):].chunk(2)
            probs = torch.softmax(logits_w.detach(), dim=-1)
            conf, pseudo = probs.max(dim=-1)
            loss = F.cross_entropy(logits_x, y) + \
                (F.cross_entropy(logits_s, pseudo, reduction="none") * (conf > 0.95).float()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0 and epoch % 16 == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")
            torch.save(model.module.state_dict(), "fixmatch_wrn.pt")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
