"""Audio keyword-spotting trainer (DDP). set_epoch is reached through the loader:
train_loader.sampler.set_epoch(epoch)."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from kws import KWSNet, SpeechCommandsFeatures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="/data/speech_commands")
    parser.add_argument("--epochs", type=int, default=40)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device(f"cuda:{local_rank}")
    torch.cuda.set_device(device)

    train_ds = SpeechCommandsFeatures(args.root, subset="training", augment=True)
    valid_ds = SpeechCommandsFeatures(args.root, subset="validation")
    train_loader = DataLoader(train_ds, batch_size=256, num_workers=8, pin_memory=True,
                              sampler=DistributedSampler(train_ds, seed=17))
    valid_loader = DataLoader(valid_ds, batch_size=512, num_workers=4)

    model = DDP(KWSNet(n_classes=35).to(device), device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
    crit = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        train_loader.sampler.set_epoch(epoch)
        model.train()
        for feats, labels in train_loader:
            feats, labels = feats.to(device), labels.to(device)
            opt.zero_grad(set_to_none=True)
            loss = crit(model(feats), labels)
            loss.backward()
            opt.step()

        if rank == 0:  # <- DDP010
            model.eval()
            right = 0
            with torch.no_grad():
                for feats, labels in valid_loader:
                    right += (model.module(feats.to(device)).argmax(1).cpu() == labels).sum().item()
            print(f"epoch {epoch}: valid acc {right / len(valid_ds):.4f}")
            torch.save(model.module.state_dict(), "kws.pt")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
