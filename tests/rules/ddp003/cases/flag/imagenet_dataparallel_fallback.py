"""ImageNet trainer in the classic pytorch/examples layout: DataParallel only as the
non-distributed fallback next to the DDP path: `python main.py` on a multi-GPU node runs it, so
DDP003 reports it with its fallback message (issue 20's decision)."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.utils.data
import torch.utils.data.distributed
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms

parser = argparse.ArgumentParser()
parser.add_argument("data")
parser.add_argument("--arch", default="resnet18")
parser.add_argument("--epochs", type=int, default=90)
parser.add_argument("--batch-size", type=int, default=256)
parser.add_argument("--workers", type=int, default=8)
parser.add_argument("--world-size", type=int, default=1)
parser.add_argument("--rank", type=int, default=0)
parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
parser.add_argument("--multiprocessing-distributed", action="store_true")


def main():
    args = parser.parse_args()
    ngpus = torch.cuda.device_count()
    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    if args.multiprocessing_distributed:
        args.world_size = ngpus * args.world_size
        mp.spawn(main_worker, nprocs=ngpus, args=(ngpus, args))
    else:
        main_worker(None, ngpus, args)


def main_worker(gpu, ngpus, args):
    if args.distributed:
        if args.multiprocessing_distributed:
            args.rank = args.rank * ngpus + gpu
        dist.init_process_group("nccl", init_method=args.dist_url, world_size=args.world_size, rank=args.rank)

    model = models.__dict__[args.arch]()
    if args.distributed:
        torch.cuda.set_device(gpu)
        model.cuda(gpu)
        args.batch_size = args.batch_size // ngpus
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
    elif args.arch.startswith("alexnet") or args.arch.startswith("vgg"):
        model.features = torch.nn.DataParallel(model.features)  # <- DDP003
        model.cuda()
    else:
        model = torch.nn.DataParallel(model).cuda()  # <- DDP003

    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4)
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = datasets.ImageFolder(os.path.join(args.data, "train"), transforms.Compose([
        transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(), normalize]))
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset) if args.distributed else None
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size,
                                               shuffle=(train_sampler is None), sampler=train_sampler,
                                               num_workers=args.workers, pin_memory=True)

    for epoch in range(args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        model.train()
        for images, target in train_loader:
            images, target = images.cuda(gpu, non_blocking=True), target.cuda(gpu, non_blocking=True)
            loss = criterion(model(images), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if not args.multiprocessing_distributed or args.rank % ngpus == 0:
            torch.save({"epoch": epoch + 1, "state_dict": model.state_dict()}, "checkpoint.pth.tar")


if __name__ == "__main__":
    main()
