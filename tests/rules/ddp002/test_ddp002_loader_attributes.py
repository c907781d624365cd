"""DDP002: a value read off the loader's dataset (`loader.dataset.ignore_index`) is not the loader.
A loop over things built from it inside the training pass is no pass over the loader, so it is
no epoch loop around one."""

SINGLE_PASS = """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def build_losses(ignore_index, heads):
    return [make_loss(ignore_index) for _ in range(heads)]


def train(train_set, model, optimizer):
    dist.init_process_group("nccl")
    loader = DataLoader(train_set, batch_size=8, sampler=DistributedSampler(train_set))
    losses = build_losses(loader.dataset.ignore_index, 3)
{epochs}    for step, (images, labels) in enumerate(loader):
    {indent}    outputs = model(images)
    {indent}    total = sum(loss(out, labels) for loss, out in zip(losses, outputs))
    {indent}    total.backward()
    {indent}    optimizer.step()
"""


def test_one_pass_with_losses_built_from_the_loaders_dataset_is_left_alone(lint):
    assert lint(SINGLE_PASS.format(epochs="", indent=""), select=["DDP002"]) == []


def test_the_same_pass_inside_an_epoch_loop_is_flagged(lint):
    source = SINGLE_PASS.format(epochs="    for epoch in range(5):\n", indent="    ")
    source = source.replace("    for step, (images", "        for step, (images")
    assert lint(source, select=["DDP002"]) == [(13, "DDP002")]
