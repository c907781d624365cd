"""DDP001 and where code runs (issue 20, item 3): a finding about ranks needs its code to run in a
rank. Each shape comes twice: left alone where the code runs in one process only, flagged where the
same lines run in every spawned or launched rank (an entry point that only runs without the
launcher). Expected findings are marked `# <- DDP001` on their line."""

from __future__ import annotations

from rule_snippets import marked_findings

# -- a single-process entry point beside the distributed one ------------------------------------
ENTRY_POINTS = """
import sys
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def plain():
    loader = DataLoader(make_set(), batch_size=16, shuffle=True){plain_mark}
    for epoch in range(5):
        for batch in loader:
            learn(batch)


def multi():
    dist.init_process_group("nccl")
    data = make_set()
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for batch in loader:
            learn(batch)
{multi_extra}

if __name__ == "__main__":
{dispatch}
"""


def test_entry_point_that_only_runs_without_the_launcher(lint):
    dispatch = """\
    if "--multi" in sys.argv:
        multi()
    else:
        plain()"""
    source = ENTRY_POINTS.format(plain_mark="", multi_extra="", dispatch=dispatch)
    assert lint(source, ["DDP001"]) == []


def test_entry_point_the_distributed_path_also_runs_is_flagged(lint):
    source = ENTRY_POINTS.format(plain_mark="  # <- DDP001", multi_extra="    plain()\n", dispatch="    multi()")
    assert lint(source, ["DDP001"]) == marked_findings(source)
