"""A 1,500-line distributed training script of the usual research shape, generated (our own text):
a long argument parser, model and data builders, a checkpoint helper, `train_one_epoch`,
`validate`, and a long `main()` that sets up the process group, the loaders, the optimizer and
the epoch loop. It carries a few real findings (an epoch loop without `set_epoch`, a
`torch.load` without `map_location`, evaluation on rank 0 only), so every analysis also pays for
locating them.

    python benchmarks/train_script.py [--lines 1500] > /tmp/train.py
"""

from __future__ import annotations

import argparse
import random

HEADER = '''"""Train an image classifier with DistributedDataParallel (generated benchmark script)."""

import argparse
import logging
import math
import os
import time
from collections import OrderedDict
from contextlib import suppress

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

_logger = logging.getLogger("train")

'''

OPTION_KINDS = (
    ('"--{name}", type=float, default={value}, metavar="{upper}", help="{words} (default: {value})"', "float"),
    ('"--{name}", type=int, default={ivalue}, metavar="N", help="{words} (default: {ivalue})"', "int"),
    ('"--{name}", action="store_true", default=False, help="{words}"', "flag"),
    ('"--{name}", default="{word}", type=str, help="{words} (default: \\"{word}\\")"', "str"),
)
WORDS = (
    "learning", "rate", "warmup", "epochs", "decay", "momentum", "noise", "smoothing", "mixup", "cutmix",
    "crop", "scale", "ratio", "interpolation", "drop", "path", "block", "patch", "clip", "grad", "norm",
    "ema", "checkpoint", "resume", "output", "log", "interval", "seed", "workers", "channels", "amp",
)


def _option(rng: random.Random, group: str, index: int) -> list[str]:
    template, _ = rng.choice(OPTION_KINDS)
    words = rng.sample(WORDS, 3)
    name = "-".join(words[:2]) + f"-{index}"
    line = template.format(
        name=name, value=round(rng.uniform(0.0, 2.0), 4), ivalue=rng.randint(1, 512), upper=words[0].upper(),
        words=" ".join(words), word=words[2],
    )
    if len(line) < 80:
        return [f"{group}.add_argument({line})"]
    head, _, rest = line.partition(", ")
    return [f"{group}.add_argument({head},", f"                   {rest})"]


def parser_section(rng: random.Random, options: int) -> str:
    out = ["", "", "def build_parser():", '    parser = argparse.ArgumentParser(description="Training")']
    groups = ("data", "model", "optim", "sched", "aug", "misc")
    count = 0
    for group in groups:
        out.append("")
        out.append(f"    # {group.capitalize()} parameters")
        out.append(f'    {group} = parser.add_argument_group("{group} parameters")')
        for _ in range(options // len(groups)):
            out.extend("    " + line for line in _option(rng, group, count))
            count += 1
    out.append("    return parser")
    return "\n".join(out) + "\n"


def model_section(rng: random.Random, blocks: int) -> str:
    out = []
    for i in range(blocks):
        width = rng.choice((64, 96, 128, 192, 256))
        out.append(f'''

class Stage{i}(nn.Module):
    """Stage {i}: a residual block of width {width}."""

    def __init__(self, width={width}, expansion={rng.choice((2, 4))}, drop={round(rng.uniform(0, 0.3), 2)}):
        super().__init__()
        self.norm = nn.BatchNorm2d(width)
        self.conv1 = nn.Conv2d(width, width * expansion, kernel_size=3, padding=1, bias=False)
        self.conv2 = nn.Conv2d(width * expansion, width, kernel_size=1, bias=False)
        self.drop = nn.Dropout(drop)

    def forward(self, x):
        shortcut = x
        x = self.conv1(self.norm(x))
        x = F.gelu(x)
        x = self.drop(self.conv2(x))
        return x + shortcut
''')
    return "".join(out)


HELPERS = '''

class AverageMeter:
    """Computes and stores the average and current value."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0.0
        self.avg = 0.0
        self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / max(self.count, 1)


def accuracy(output, target, topk=(1,)):
    maxk = min(max(topk), output.size()[1])
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.reshape(1, -1).expand_as(pred))
    return [correct[: min(k, maxk)].reshape(-1).float().sum(0) * 100.0 / batch_size for k in topk]


def reduce_tensor(tensor, world_size):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= world_size
    return rt


def load_checkpoint(model, path):
    checkpoint = torch.load(path)
    state_dict = OrderedDict()
    for key, value in checkpoint["state_dict"].items():
        state_dict[key[7:] if key.startswith("module.") else key] = value
    model.load_state_dict(state_dict)
    return checkpoint.get("epoch", 0)


def save_checkpoint(model, optimizer, epoch, output_dir):
    state = {"epoch": epoch, "state_dict": model.state_dict(), "optimizer": optimizer.state_dict()}
    torch.save(state, os.path.join(output_dir, f"checkpoint-{epoch}.pth.tar"))


def build_dataset(num_samples, num_features, num_classes, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(num_samples, num_features, generator=gen)
    y = torch.randint(0, num_classes, (num_samples,), generator=gen)
    return TensorDataset(x, y)
'''


def train_one_epoch(rng: random.Random, extra_metrics: int) -> str:
    metrics = "\n".join(
        f"        metric_{i} = loss.detach() * {round(rng.uniform(0.1, 2.0), 3)}\n"
        f"        meter_{i}.update(metric_{i}.item(), input.size(0))"
        for i in range(extra_metrics)
    )
    meters = "\n".join(f"    meter_{i} = AverageMeter()" for i in range(extra_metrics))
    return f'''

def train_one_epoch(epoch, model, loader, optimizer, loss_fn, args, device, lr_scheduler=None):
    batch_time_m = AverageMeter()
    data_time_m = AverageMeter()
    losses_m = AverageMeter()
{meters}
    model.train()
    end = time.time()
    last_idx = len(loader) - 1
    num_updates = epoch * len(loader)
    for batch_idx, (input, target) in enumerate(loader):
        last_batch = batch_idx == last_idx
        data_time_m.update(time.time() - end)
        input, target = input.to(device), target.to(device)
        output = model(input)
        loss = loss_fn(output, target)
        optimizer.zero_grad()
        loss.backward()
        if args.clip_grad is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
        optimizer.step()
{metrics}
        num_updates += 1
        batch_time_m.update(time.time() - end)
        if last_batch or batch_idx % args.log_interval == 0:
            lrl = [param_group["lr"] for param_group in optimizer.param_groups]
            lr = sum(lrl) / len(lrl)
            reduced_loss = reduce_tensor(loss.data, args.world_size)
            losses_m.update(reduced_loss.item(), input.size(0))
            if args.rank == 0:
                _logger.info(
                    "Train: {{}} [{{:>4d}}/{{}}] Loss: {{:#.4g}} ({{:#.3g}}) LR: {{:.3e}}".format(
                        epoch, batch_idx, len(loader), losses_m.val, losses_m.avg, lr
                    )
                )
        if lr_scheduler is not None:
            lr_scheduler.step(num_updates)
        end = time.time()
    return OrderedDict([("loss", losses_m.avg)])
'''


VALIDATE = '''

def validate(model, loader, loss_fn, args, device):
    losses_m = AverageMeter()
    top1_m = AverageMeter()
    top5_m = AverageMeter()
    model.eval()
    with torch.no_grad():
        for batch_idx, (input, target) in enumerate(loader):
            input, target = input.to(device), target.to(device)
            output = model(input)
            loss = loss_fn(output, target)
            acc1, acc5 = accuracy(output, target, topk=(1, 5))
            losses_m.update(loss.item(), input.size(0))
            top1_m.update(acc1.item(), output.size(0))
            top5_m.update(acc5.item(), output.size(0))
    return OrderedDict([("loss", losses_m.avg), ("top1", top1_m.avg), ("top5", top5_m.avg)])
'''


def main_section(rng: random.Random, setup_lines: int) -> str:
    setup = "\n".join(
        f"    setting_{i} = getattr(args, \"setting_{i}\", {rng.randint(0, 99)})\n"
        f"    if setting_{i} > {rng.randint(50, 99)}:\n"
        f"        _logger.info(\"setting_{i} is %d\", setting_{i})"
        for i in range(setup_lines)
    )
    return f'''

def main():
    parser = build_parser()
    args = parser.parse_args()
    args.rank = int(os.environ.get("RANK", 0))
    args.world_size = int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")
{setup}
    model = nn.Sequential(Stage0(), Stage1())
    model.to(device)
    model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss().to(device)
    start_epoch = 0
    if args.resume:
        start_epoch = load_checkpoint(model.module, args.resume)
    dataset_train = build_dataset(4096, 64, 10, seed=0)
    dataset_eval = build_dataset(512, 64, 10, seed=1)
    sampler = DistributedSampler(dataset_train, shuffle=True)
    loader_train = DataLoader(dataset_train, batch_size=64, sampler=sampler, num_workers=4, pin_memory=True)
    loader_eval = DataLoader(dataset_eval, batch_size=128, shuffle=False, num_workers=4)
    best_metric = None
    for epoch in range(start_epoch, args.epochs):
        train_metrics = train_one_epoch(epoch, model, loader_train, optimizer, loss_fn, args, device)
        if args.rank == 0:
            eval_metrics = validate(model, loader_eval, loss_fn, args, device)
            if best_metric is None or eval_metrics["top1"] > best_metric:
                best_metric = eval_metrics["top1"]
                save_checkpoint(model, optimizer, epoch, args.output)
            _logger.info("epoch %d: train %s eval %s", epoch, train_metrics, eval_metrics)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


def training_script(lines: int = 1500, seed: int = 0) -> str:
    """About `lines` lines (within a model block's 20): the parser and the model grow with it."""
    rng = random.Random(seed)
    parts = lambda stages: (  # noqa: E731
        HEADER + parser_section(random.Random(seed), 120) + model_section(random.Random(seed + 1), stages) + HELPERS
        + train_one_epoch(random.Random(seed + 2), 12) + VALIDATE + main_section(random.Random(seed + 3), 60)
    )
    stages = 2
    while parts(stages + 1).count("\n") <= lines:
        stages += 1
    del rng
    return parts(stages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(training_script(args.lines, args.seed), end="")


if __name__ == "__main__":
    main()
