"""Step-budgeted DDP training in a while loop; the sampler is never reseeded."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from diffusion import UNet, LatentPairs, ddpm_loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--total_steps", type=int, default=400_000)
    parser.add_argument("--batch_size", type=int, default=64)
    args = parser.parse_args()

    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    data = LatentPairs("/data/latents/laion_aesthetic")
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler, num_workers=8, pin_memory=True)

    model = DDP(UNet(channels=4, base=320).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-2)

    step = 0
    while step < args.total_steps:  # <- DDP002
        for latents, text_emb in loader:
            loss = ddpm_loss(model, latents.cuda(non_blocking=True), text_emb.cuda(non_blocking=True))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
            if step % 1000 == 0 and dist.get_rank() == 0:
                print(f"step {step}: loss {loss.item():.4f}")
                torch.save(model.module.state_dict(), f"unet_{step}.pt")
            if step >= args.total_steps:
                break

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
