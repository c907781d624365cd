"""DDP fine-tuning of a segmentation model. The checkpoint helper unwraps
whatever wrapper the model is in; it only *checks* for nn.DataParallel and
never builds one."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, DistributedSampler

from segdata import VOCSegmentation, train_transforms, val_transforms
from segmodels import DeepLabV3


def unwrap(model: nn.Module) -> nn.Module:
    """Return the bare module from an nn.DataParallel or DDP wrapper."""
    if isinstance(model, (nn.DataParallel, nn.parallel.DistributedDataParallel)):
        return model.module
    return model


def save_checkpoint(model, optimizer, epoch, path):
    # older checkpoints were written from nn.DataParallel(model) and carry a
    # "module." prefix; we always store the unwrapped state dict now
    torch.save({"model": unwrap(model).state_dict(), "optim": optimizer.state_dict(), "epoch": epoch}, path)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    is_master = dist.get_rank() == 0

    train_ds = VOCSegmentation("/data/voc", split="train", transforms=train_transforms())
    val_ds = VOCSegmentation("/data/voc", split="val", transforms=val_transforms())
    train_sampler = DistributedSampler(train_ds, drop_last=True)
    val_sampler = DistributedSampler(val_ds, shuffle=False)
    train_loader = DataLoader(train_ds, batch_size=8, sampler=train_sampler, num_workers=8, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=4, sampler=val_sampler, num_workers=4)

    model = DeepLabV3(num_classes=21).cuda()
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)

    for epoch in range(50):
        train_sampler.set_epoch(epoch)
        model.train()
        for img, mask in train_loader:
            img, mask = img.cuda(non_blocking=True), mask.cuda(non_blocking=True)
            loss = F.cross_entropy(model(img), mask, ignore_index=255)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        model.eval()
        inter = torch.zeros(21, device="cuda")
        union = torch.zeros(21, device="cuda")
        with torch.no_grad():
            for img, mask in val_loader:
                pred = model(img.cuda()).argmax(1)
                mask = mask.cuda()
                for c in range(21):
                    p, t = pred == c, mask == c
                    inter[c] += (p & t).sum()
                    union[c] += (p | t).sum()
        dist.all_reduce(inter)
        dist.all_reduce(union)
        if is_master:
            print(f"epoch {epoch} mIoU {(inter / union.clamp(min=1)).mean().item():.4f}")
            save_checkpoint(model, optimizer, epoch, os.path.join("ckpt", f"deeplab_{epoch}.pt"))

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
