"""DDP001: a sampler chosen by a test on the run's mode, written the wrong way round. The
DistributedSampler then exists only on the single-process path and every rank of the distributed
run gets None (or a RandomSampler): each rank iterates the whole dataset. The twin with the arms
the right way round stays silent. Expected findings are marked `# <- DDP001` on their line."""

from __future__ import annotations

import pytest

from rule_snippets import marked_findings

CONDITIONAL_EXPRESSION = """
import argparse
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler

parser = argparse.ArgumentParser()
parser.add_argument("--distributed", action="store_true")
opts = parser.parse_args()
if opts.distributed:
    dist.init_process_group("nccl")
pick = {choice}
batches = DataLoader(examples, batch_size=8, sampler=pick, shuffle=pick is None){mark}
for epoch in range(4):
    if opts.distributed:
        pick.set_epoch(epoch)
    for inputs, labels in batches:
        criterion(net(inputs), labels).backward()
        opt.step()
"""


@pytest.mark.parametrize(
    "choice",
    [
        "None if opts.distributed else DistributedSampler(examples)",
        "DistributedSampler(examples) if not opts.distributed else None",
    ],
)
def test_sampler_only_on_the_single_process_arm_is_flagged(lint, choice):
    source = CONDITIONAL_EXPRESSION.format(choice=choice, mark="  # <- DDP001")
    found = lint(source, ["DDP001"])
    assert found == marked_findings(source)


def test_random_sampler_on_the_rank_arm_is_flagged(lint):
    source = CONDITIONAL_EXPRESSION.format(
        choice="RandomSampler(examples) if opts.distributed else DistributedSampler(examples)", mark="  # <- DDP001"
    )
    assert lint(source, ["DDP001"]) == marked_findings(source)


@pytest.mark.parametrize(
    "choice",
    [
        "DistributedSampler(examples) if opts.distributed else None",
        "None if not opts.distributed else DistributedSampler(examples)",
        "DistributedSampler(examples) if opts.distributed else RandomSampler(examples)",
    ],
)
def test_sampler_on_the_rank_arm_is_left_alone(lint, choice):
    assert lint(CONDITIONAL_EXPRESSION.format(choice=choice, mark=""), ["DDP001"]) == []


IF_STATEMENT = """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def loader_for(items):
    if {test}:
        order = DistributedSampler(items)
    else:
        order = None
    return DataLoader(items, batch_size=16, sampler=order, shuffle=order is None){mark}


def main():
    dist.init_process_group("gloo")
    rows = loader_for(load_rows())
    for epoch in range(3):
        if isinstance(rows.sampler, DistributedSampler):
            rows.sampler.set_epoch(epoch)
        for x in rows:
            step(model(x))
            opt.step()


main()
"""


def test_sampler_in_the_single_process_arm_of_an_if_is_flagged(lint):
    source = IF_STATEMENT.format(test="not dist.is_initialized()", mark="  # <- DDP001")
    assert lint(source, ["DDP001"]) == marked_findings(source)


def test_sampler_in_the_rank_arm_of_an_if_is_left_alone(lint):
    assert lint(IF_STATEMENT.format(test="dist.is_initialized()", mark=""), ["DDP001"]) == []


def test_message_names_the_sampler_and_the_swapped_test():
    from ddplint.engine import lint_source
    from ddplint.rules import RULES_BY_CODE

    source = CONDITIONAL_EXPRESSION.format(choice="None if opts.distributed else DistributedSampler(examples)", mark="")
    (finding,) = lint_source(source.lstrip("\n"), "train.py", [RULES_BY_CODE["DDP001"]])
    assert "single-process path" in finding.message
    assert "DistributedSampler(examples)" in finding.explanation
    assert finding.fix is None
