"""DDP007 for a metric object whose `compute()` gathers every rank's state first (torchmetrics,
ignite): computed under a rank-0 condition, only rank 0 joins that gather and the job hangs.
Computed on every rank with only the print under the condition, or built with
`sync_on_compute=False`, it is quiet."""

from __future__ import annotations


def test_torchmetrics_compute_under_rank_zero_is_flagged(lint):
    found = lint(
        """
        import torch.distributed as dist
        import torchmetrics

        dist.init_process_group("nccl")
        accuracy = torchmetrics.Accuracy(task="multiclass", num_classes=5).to("cuda")
        for images, labels in val_loader:
            accuracy.update(net(images), labels)
        if dist.get_rank() == 0:
            print("top-1", accuracy.compute())
        """,
        select=["DDP007"],
    )
    assert found == [(9, "DDP007")]


def test_metric_kept_on_self_and_computed_by_the_global_zero_process_is_flagged(lint):
    found = lint(
        """
        import lightning.pytorch as pl
        from torchmetrics.classification import BinaryF1Score

        class Detector(pl.LightningModule):
            def __init__(self):
                super().__init__()
                self.f1 = BinaryF1Score()

            def validation_step(self, batch, batch_idx):
                self.f1.update(self(batch[0]), batch[1])

            def on_validation_epoch_end(self):
                if self.trainer.is_global_zero:
                    print(self.f1.compute())
        """,
        select=["DDP007"],
    )
    assert found == [(14, "DDP007")]


def test_metric_computed_on_every_rank_then_printed_by_rank_zero_is_quiet(lint):
    found = lint(
        """
        import torch.distributed as dist
        import torchmetrics

        dist.init_process_group("nccl")
        accuracy = torchmetrics.Accuracy(task="multiclass", num_classes=5).to("cuda")
        for images, labels in val_loader:
            accuracy.update(net(images), labels)
        top1 = accuracy.compute()
        if dist.get_rank() == 0:
            print("top-1", top1)
        """,
        select=["DDP007"],
    )
    assert found == []


def test_metric_built_not_to_sync_is_quiet_under_rank_zero(lint):
    found = lint(
        """
        import torch.distributed as dist
        import torchmetrics

        dist.init_process_group("nccl")
        local_acc = torchmetrics.Accuracy(task="binary", sync_on_compute=False)
        if dist.get_rank() == 0:
            print("rank 0 shard", local_acc.compute())
        """,
        select=["DDP007"],
    )
    assert found == []


def test_compute_of_an_object_of_our_own_is_quiet_under_rank_zero(lint):
    found = lint(
        """
        import torch.distributed as dist
        import torchmetrics

        class RunningMean:
            def __init__(self):
                self.total, self.count = 0.0, 0

            def compute(self):
                return self.total / max(self.count, 1)

        dist.init_process_group("nccl")
        loss_meter = RunningMean()
        if dist.get_rank() == 0:
            print(loss_meter.compute())
        """,
        select=["DDP007"],
    )
    assert found == []
