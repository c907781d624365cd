"""Super-resolution training wrapped with the fully qualified
torch.nn.parallel.DataParallel; the isinstance check when saving is not a finding."""
import argparse
import math

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from sr import DIV2KPatches, EDSR, DIV2KValidation

GPU_IDS = [0, 1, 2, 3]


def psnr(sr_img, hr_img):
    mse = F.mse_loss(sr_img.clamp(0, 1), hr_img).item()
    return 10 * math.log10(1.0 / max(mse, 1e-10))


def train(args):
    train_set = DIV2KPatches(f"{args.root}/train_HR", scale=4, patch=48)
    val_set = DIV2KValidation(f"{args.root}/valid_HR", scale=4)
    loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=12, drop_last=True)

    net = EDSR(scale=4, n_resblocks=32, n_feats=256).cuda(GPU_IDS[0])
    net = torch.nn.parallel.DataParallel(net, device_ids=GPU_IDS, output_device=GPU_IDS[0])  # <- DDP003
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-4, betas=(0.9, 0.999))
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[200], gamma=0.5)

    for epoch in range(args.epochs):
        net.train()
        for lr_img, hr_img in loader:
            lr_img, hr_img = lr_img.cuda(GPU_IDS[0]), hr_img.cuda(GPU_IDS[0])
            loss = F.l1_loss(net(lr_img), hr_img)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()

        net.eval()
        with torch.no_grad():
            scores = [psnr(net(lr.unsqueeze(0).cuda(GPU_IDS[0])), hr.unsqueeze(0).cuda(GPU_IDS[0]))
                      for lr, hr in val_set]
        print(f"epoch {epoch}: L1 {loss.item():.5f}, val PSNR {sum(scores) / len(scores):.2f} dB")

        bare = net.module if isinstance(net, torch.nn.parallel.DataParallel) else net
        torch.save(bare.state_dict(), "edsr_x4.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="/data/div2k")
    parser.add_argument("--epochs", type=int, default=300)
    train(parser.parse_args())
