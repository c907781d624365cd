"""DDP014 (a metric from one rank's shard reported as the whole set's): what it flags and what it
leaves alone, beyond the examples on its page."""

from __future__ import annotations

import textwrap

import pytest

from rule_snippets import finding_rows

# -- DDP014 unreduced-metric ----------------------------------------------------------------------
METRIC_HEAD = """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("nccl")
test_loader = DataLoader(test_set, sampler=DistributedSampler(test_set, shuffle=False))
"""


def test_ddp014_flags_a_logged_loss_summed_over_the_shard():
    source = METRIC_HEAD + textwrap.dedent("""
        def validate(net):
            net.eval()
            summed = 0.0
            for images, labels in test_loader:
                summed += criterion(net(images), labels).item()
            logger.info("mean loss %.4f", summed / len(test_loader))
        """)
    assert finding_rows(source, "DDP014") == [14]


@pytest.mark.parametrize(
    "reduce_line",
    [
        "dist.all_reduce(t)",
        "t = reduce_tensor(t)",
    ],
)
def test_ddp014_leaves_reduced_counts_alone(reduce_line):
    source = METRIC_HEAD + textwrap.dedent(f"""
        def validate(net):
            hits = 0
            for images, labels in test_loader:
                hits += (net(images).argmax(1) == labels).sum()
            t = torch.tensor(hits)
            {reduce_line}
            print(t.item())
        """)
    assert finding_rows(source, "DDP014") == []


def test_ddp014_leaves_a_syncing_metric_object_alone():
    source = METRIC_HEAD.replace("import torch\n", "import torch\nimport torchmetrics\n", 1) + textwrap.dedent("""
        def validate(net, metric):
            seen = 0
            for images, labels in test_loader:
                metric.update(net(images), labels)
                seen += len(labels)
            print(metric.compute(), seen)
        """)
    assert finding_rows(source, "DDP014") == []


def test_ddp014_passes_over_a_loader_iterated_in_a_comprehension():
    source = METRIC_HEAD + "batches = [b for b in test_loader]\nn = 0\nfor b in batches:\n    n += 1\nprint(n)\n"
    assert finding_rows(source, "DDP014") == []


def test_ddp014_leaves_counts_averaged_by_a_helper_that_reduces_alone():
    source = METRIC_HEAD + textwrap.dedent("""
        def average(value):
            t = torch.tensor(value)
            dist.all_reduce(t)
            return t / dist.get_world_size()

        def validate(net):
            loss = 0.0
            for images, labels in test_loader:
                loss += criterion(net(images), labels).item()
            loss = average(loss)
            print(loss)
        """)
    assert finding_rows(source, "DDP014") == []


def test_ddp014_leaves_a_report_labelled_with_the_rank_alone():
    source = METRIC_HEAD + textwrap.dedent("""
        def validate(net):
            hits = 0
            for images, labels in test_loader:
                hits += (net(images).argmax(1) == labels).sum().item()
            print(f"rank {dist.get_rank()}: {hits}")
        """)
    assert finding_rows(source, "DDP014") == []
    assert finding_rows(source.replace("rank {dist.get_rank()}: ", ""), "DDP014") == [13]
