"""DDP010: a LightningModule's evaluation step decorated `@rank_zero_only`. The Trainer runs the
evaluation loop on every rank over its shard; the step does nothing on the other ranks."""

from __future__ import annotations

MODULE = """
import torch
from {package} import LightningModule
from {package}.utilities import rank_zero_only

class Classifier(LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)

    @rank_zero_only
    def {hook}(self, batch, batch_idx):
        x, y = batch
        self.log("val_acc", (self.net(x).argmax(1) == y).float().mean())

    @rank_zero_only
    def on_validation_end(self):
        self.write_summary(self.trainer.current_epoch)
"""


def test_rank_zero_only_validation_step_is_flagged(lint):
    source = MODULE.replace("{package}", "lightning.pytorch").replace("{hook}", "validation_step")
    assert lint(source, select=["DDP010"]) == [(10, "DDP010")]


def test_rank_zero_only_test_step_of_the_older_package_is_flagged(lint):
    source = MODULE.replace("{package}", "pytorch_lightning").replace("{hook}", "test_step")
    assert lint(source, select=["DDP010"]) == [(10, "DDP010")]


def test_rank_zero_only_on_other_hooks_is_left_alone(lint):
    # writing a summary once per validation is rank 0's job; no step is skipped
    source = MODULE.replace("{package}", "lightning.pytorch").replace("{hook}", "log_batch")
    assert lint(source, select=["DDP010"]) == []


def test_a_class_that_is_no_lightning_module_is_left_alone(lint):
    # the Trainer never calls this class's `validation_step`: the caller decides where it runs
    source = (
        MODULE.replace("{package}", "lightning.pytorch")
        .replace("{hook}", "validation_step")
        .replace("class Classifier(LightningModule):", "class Classifier:")
    )
    assert lint(source, select=["DDP010"]) == []
