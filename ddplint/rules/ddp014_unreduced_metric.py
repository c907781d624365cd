"""DDP014 unreduced-metric."""

from __future__ import annotations

from typing import Iterator

from ddplint.analysis.metrics import sharded_evaluation_loaders, unreduced_reports
from ddplint.analysis.model import ModuleModel
from ddplint.rules.base import Finding, Rule


def check(model: ModuleModel) -> Iterator[Finding]:
    if not model.distributed:
        return
    reported: set[int] = set()
    for loader in sharded_evaluation_loaders(model):
        for found in unreduced_reports(model, loader):
            if id(found.report.node) in reported:
                continue
            reported.add(id(found.report.node))
            counts = ", ".join(f"`{name}`" for name in found.counts)
            yield RULE.finding(
                found.report.node,
                f"metric from {counts} of this rank's shard only: never reduced across ranks",
                why=f"{counts} are summed over this rank's shard of an evaluation loader with a "
                f"DistributedSampler, and nothing reduces them across ranks: the number is one "
                f"shard's, not the whole set's; all_reduce the counts (or gather the predictions) "
                f"before computing the metric",
            )


RULE = Rule(
    code="DDP014",
    name="unreduced-metric",
    summary="An evaluation metric computed from one rank's shard is reported as the whole set's.",
    what="""
        In a distributed script, flags the report (`print`, `logger.info`, `wandb.log`,
        `writer.add_scalar`, ...) of counts summed in a loop over an evaluation loader that is
        given a DistributedSampler (`correct += ...`, `total += ...`, or a value computed from them
        after the loop, `accuracy = correct / total`), when the function that holds the loop
        makes no collective (`all_reduce`, `all_gather`, `reduce`, an Accelerator `gather`, also
        inside a function of the file it calls) and calls no known reducing helper.
    """,
    why="""
        With a DistributedSampler each rank evaluates 1/N of the set. Counts summed over that
        shard give that shard's accuracy or loss: what is printed or logged (usually by rank 0) is
        the metric of a random 1/N of the data, noisier than the real one, and model selection
        or early stopping made on it picks by noise.
    """,
    fix="""
        Reduce the counts before computing the metric: put them in a tensor and
        `dist.all_reduce(t, op=dist.ReduceOp.SUM)` on every rank, or gather the predictions
        (`all_gather_object`, `accelerator.gather_for_metrics`), or use a metric object that syncs
        (torchmetrics). No automatic fix.
    """,
    silent="""
        - The function that holds the loop makes a collective or calls a reducing helper
          (`reduce_dict`, `all_reduce_mean`, `reduce_tensor`, `synchronize_between_processes`).
        - A report that carries the rank beside the number (`print(f"rank {rank}: {acc}")`):
          it says whose shard it is.
        - Files that import a metric library that syncs across processes (torchmetrics,
          torcheval, ignite.metrics, evaluate).
        - Evaluation loaders without a DistributedSampler (each rank evaluates the whole set),
          and scripts that are not distributed.

        `ddplint verify` confirms a finding when every rank evaluated only its shard and no rank
        made a reduction (`all_reduce`, `all_gather`, `reduce`, `gather`) between the evaluation
        and the next training batch, and refutes it when every rank evaluated the whole set; the
        reported number itself is not visible to it, so a reduction after the evaluation leaves
        the verdict open.
    """,
    blind_spots="""
        - Counts returned to the caller and reported there are not followed; only a report in the
          function that counts is seen.
        - Counts kept in attributes or containers (`self.correct += ...`, `stats["n"] += ...`) are
          not followed.
        - Any collective in the function counts as reducing the counts, whatever it reduces.
    """,
    triggers=(b"*DistributedSampler*",),
    distributed_only=True,
    check=check,
    invalid=(
        """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("gloo")
        val_loader = DataLoader(val_set, batch_size=64, sampler=DistributedSampler(val_set, shuffle=False))

        def evaluate(model):
            model.eval()
            correct, total = 0, 0
            with torch.no_grad():
                for x, y in val_loader:
                    correct += (model(x).argmax(1) == y).sum().item()
                    total += y.numel()
            accuracy = correct / total
            print(f"val accuracy {accuracy:.3f}")  # <- DDP014
        """,
    ),
    valid=(
        """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("gloo")
        val_loader = DataLoader(val_set, batch_size=64, sampler=DistributedSampler(val_set, shuffle=False))

        def evaluate(model):
            model.eval()
            correct, total = 0, 0
            with torch.no_grad():
                for x, y in val_loader:
                    correct += (model(x).argmax(1) == y).sum().item()
                    total += y.numel()
            counts = torch.tensor([correct, total])
            dist.all_reduce(counts)
            print(f"val accuracy {counts[0] / counts[1]:.3f}")
        """,
        """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader

        dist.init_process_group("gloo")
        val_loader = DataLoader(val_set, batch_size=64)

        def evaluate(model):
            correct, total = 0, 0
            with torch.no_grad():
                for x, y in val_loader:
                    correct += (model(x).argmax(1) == y).sum().item()
                    total += y.numel()
            print(f"val accuracy {correct / total:.3f}")
        """,
    ),
)
