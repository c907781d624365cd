"""Classification training in the layout of torchvision's reference scripts.

Distributed setup lives in a local ``utils`` module (init_distributed_mode reads
RANK / WORLD_SIZE / LOCAL_RANK and calls init_process_group); datasets and
samplers are built in load_data().
"""
import datetime
import os
import time

import torch
import torch.utils.data
import torchvision
from torch import nn
from torchvision.transforms import autoaugment, transforms

import utils


def train_one_epoch(model, criterion, optimizer, data_loader, device, epoch, args, scaler=None):
    model.train()
    header = f"Epoch: [{epoch}]"
    for i, (image, target) in enumerate(data_loader):
        start = time.time()
        image, target = image.to(device), target.to(device)
        with torch.autocast("cuda", enabled=scaler is not None):
            loss = criterion(model(image), target)
        optimizer.zero_grad()
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        if i % args.print_freq == 0:
            print(header, i, f"loss={loss.item():.4f}", f"{time.time() - start:.3f}s/it")


def evaluate(model, criterion, data_loader, device):
    model.eval()
    total, correct = 0, 0
    with torch.inference_mode():
        for image, target in data_loader:
            image, target = image.to(device), target.to(device)
            correct += (model(image).argmax(1) == target).sum().item()
            total += target.numel()
    return utils.reduce_across_processes(correct) / utils.reduce_across_processes(total)


def load_data(traindir, valdir, args):
    print("Loading training data")
    train_tf = transforms.Compose([
        transforms.RandomResizedCrop(args.train_crop_size),
        transforms.RandomHorizontalFlip(),
        autoaugment.TrivialAugmentWide(),
        transforms.PILToTensor(),
        transforms.ConvertImageDtype(torch.float),
    ])
    dataset = torchvision.datasets.ImageFolder(traindir, train_tf)

    print("Loading validation data")
    val_tf = transforms.Compose([transforms.Resize(args.val_resize_size),
                                 transforms.CenterCrop(args.val_crop_size),
                                 transforms.PILToTensor(),
                                 transforms.ConvertImageDtype(torch.float)])
    dataset_test = torchvision.datasets.ImageFolder(valdir, val_tf)

    if args.distributed:
        train_sampler = torch.utils.data.distributed.DistributedSampler(dataset)
        test_sampler = torch.utils.data.distributed.DistributedSampler(dataset_test, shuffle=False)
    else:
        train_sampler = torch.utils.data.RandomSampler(dataset)
        test_sampler = torch.utils.data.SequentialSampler(dataset_test)
    return dataset, dataset_test, train_sampler, test_sampler


def main(args):
    if args.output_dir:
        utils.mkdir(args.output_dir)
    utils.init_distributed_mode(args)
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True

    dataset, dataset_test, train_sampler, test_sampler = load_data(
        os.path.join(args.data_path, "train"), os.path.join(args.data_path, "val"), args)

    data_loader = torch.utils.data.DataLoader(
        dataset, batch_size=args.batch_size, sampler=train_sampler,
        num_workers=args.workers, pin_memory=True)
    data_loader_test = torch.utils.data.DataLoader(
        dataset_test, batch_size=args.batch_size, sampler=test_sampler,
        num_workers=args.workers, pin_memory=True)

    model = torchvision.models.get_model(args.model, num_classes=len(dataset.classes))
    model.to(device)
    if args.distributed and args.sync_bn:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)

    criterion = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=args.wd)
    scaler = torch.cuda.amp.GradScaler() if args.amp else None
    lr_scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    model_without_ddp = model
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        model_without_ddp = model.module

    print("Start training")
    start_time = time.time()
    for epoch in range(args.start_epoch, args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        train_one_epoch(model, criterion, optimizer, data_loader, device, epoch, args, scaler)
        lr_scheduler.step()
        acc = evaluate(model, criterion, data_loader_test, device=device)
        print(f"epoch {epoch} acc@1 {acc:.4f}")
        if args.output_dir:
            checkpoint = {"model": model_without_ddp.state_dict(), "optimizer": optimizer.state_dict(),
                          "lr_scheduler": lr_scheduler.state_dict(), "epoch": epoch, "args": args}
            utils.save_on_master(checkpoint, os.path.join(args.output_dir, f"model_{epoch}.pth"))
            utils.save_on_master(checkpoint, os.path.join(args.output_dir, "checkpoint.pth"))

    total_time = str(datetime.timedelta(seconds=int(time.time() - start_time)))
    print(f"Training time {total_time}")


if __name__ == "__main__":
    main(utils.get_args_parser().parse_args())
