"""Video action recognition; torch.nn imported as tnn and the model wrapped with
tnn.DataParallel."""
import argparse
import time

import torch
import torch.nn as tnn
from torch.utils.data import DataLoader

from video import Kinetics400Clips, R2Plus1D


def accuracy(model, loader):
    model.eval()
    hits = total = 0
    with torch.no_grad():
        for video, label in loader:
            hits += (model(video.cuda(non_blocking=True)).argmax(1).cpu() == label).sum().item()
            total += label.numel()
    return hits / max(total, 1)


def run(args):
    clips = Kinetics400Clips(f"{args.root}/train", frames=16, stride=4)
    val_clips = Kinetics400Clips(f"{args.root}/val", frames=16, stride=4, train=False)
    loader = DataLoader(clips, batch_size=48, shuffle=True, num_workers=24, pin_memory=True)
    val_loader = DataLoader(val_clips, batch_size=64, num_workers=8)

    model = R2Plus1D(num_classes=400)
    model = tnn.DataParallel(model, device_ids=list(range(torch.cuda.device_count()))).cuda()  # <- DDP003
    loss_fn = tnn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    for epoch in range(args.epochs):
        model.train()
        start = time.time()
        for video, label in loader:
            out = model(video.cuda(non_blocking=True))
            loss = loss_fn(out, label.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        print(f"epoch {epoch}: loss {loss.item():.4f} ({time.time() - start:.0f}s)")
        if epoch % 5 == 4:
            print(f"  val top-1 {accuracy(model, val_loader):.4f}")
    torch.save(model.module.state_dict(), "r2plus1d_k400.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="/data/kinetics400")
    parser.add_argument("--epochs", type=int, default=45)
    parser.add_argument("--lr", type=float, default=0.04)
    run(parser.parse_args())
