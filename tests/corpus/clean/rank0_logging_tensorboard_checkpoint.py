"""ViT pretraining with DDP. Rank 0 does all the side work - logging, TensorBoard,
checkpoints - and the ranks resync at a barrier after each checkpoint."""
import logging
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torch.utils.tensorboard import SummaryWriter
from torchvision import datasets, transforms
from torchvision.models import vit_b_16

logger = logging.getLogger("vit")


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    run_dir = os.environ.get("RUN_DIR", "runs/vit_b16")

    writer = None
    if rank == 0:
        os.makedirs(run_dir, exist_ok=True)
        logging.basicConfig(level=logging.INFO)
        writer = SummaryWriter(log_dir=run_dir)
        logger.info("training on %d GPUs", world_size)

    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor()])
    train_set = datasets.ImageFolder("/data/imagenet/train", transform=tf)
    sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(train_set, batch_size=128, sampler=sampler, num_workers=10, pin_memory=True,
                        persistent_workers=True)

    model = DDP(vit_b_16(num_classes=1000).cuda(), device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    global_step = 0

    for epoch in range(300):
        sampler.set_epoch(epoch)
        t0 = time.time()
        for images, targets in loader:
            images, targets = images.cuda(non_blocking=True), targets.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = F.cross_entropy(model(images), targets, label_smoothing=0.1)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            global_step += 1
            if rank == 0 and global_step % 50 == 0:
                writer.add_scalar("train/loss", loss.item(), global_step)
                writer.add_scalar("train/lr", opt.param_groups[0]["lr"], global_step)

        if rank == 0:
            logger.info("epoch %d took %.1fs", epoch, time.time() - t0)
            print(f"epoch {epoch} last loss {loss.item():.4f}")
            torch.save({"model": model.module.state_dict(), "opt": opt.state_dict(), "epoch": epoch,
                        "step": global_step}, os.path.join(run_dir, "last.pt"))
        dist.barrier()

    if rank == 0:
        writer.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
