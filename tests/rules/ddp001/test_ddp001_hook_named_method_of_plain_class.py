"""DDP001 and methods named like a framework's loader hooks (`train_dataloader`). A framework
calls the hook of its own subclasses (a LightningDataModule, a Hugging Face Trainer) and shards
what it returns; a plain class of the script (`class Batches:`, no base but `object`) has no
framework behind it, and whoever calls its `train_dataloader()` iterates the loader as built."""

from __future__ import annotations

import pytest

from rule_snippets import marked_findings

SCRIPT = """
import torch.distributed as dist
from torch.utils.data import DataLoader
{imports}


class Batches{bases}:
    def __init__(self, rows):
        self.rows = rows

    def train_dataloader(self):
        return DataLoader(self.rows, batch_size=16, shuffle=True){mark}


dist.init_process_group("nccl")
feed = Batches(read_rows()).train_dataloader()
for epoch in range(4):
    for x in feed:
        loss_of(x).backward()
        opt.step()
"""


@pytest.mark.parametrize("bases", ["", "(object)"])
def test_hook_named_method_of_a_plain_class_is_flagged(lint, bases):
    source = SCRIPT.format(imports="", bases=bases, mark="  # <- DDP001")
    assert lint(source, ["DDP001"]) == marked_findings(source)


@pytest.mark.parametrize(
    ("imports", "bases"),
    [
        ("import lightning as L", "(L.LightningDataModule)"),
        ("from .base import ProjectData  # the project's base, maybe a LightningDataModule", "(ProjectData)"),
    ],
)
def test_hook_of_a_class_with_a_base_a_framework_may_own_is_left_alone(lint, imports, bases):
    assert lint(SCRIPT.format(imports=imports, bases=bases, mark=""), ["DDP001"]) == []


def test_plain_base_of_the_same_file_does_not_make_a_framework_class(lint):
    source = SCRIPT.format(imports="\n\nclass Base:\n    pass\n", bases="(Base)", mark="  # <- DDP001")
    assert lint(source, ["DDP001"]) == marked_findings(source)
