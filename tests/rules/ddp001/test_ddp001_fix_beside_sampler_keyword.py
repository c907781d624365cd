"""DDP001's fix passes `sampler=DistributedSampler(...)` in place of `shuffle=`. A loader that
already names `sampler=` (a leftover `sampler=None`) would then name it twice, which parses but
does not compile: the finding stays, without a fix. Found by benchmarks/same_answer.py."""

from __future__ import annotations

from ddplint.engine import lint_source
from ddplint.rules import select_rules

HEAD = 'import torch.distributed as dist\nfrom torch.utils.data import DataLoader\ndist.init_process_group("nccl")\n'
LOOP = "for epoch in range(10):\n    for batch in loader:\n        pass\n"


def _ddp001(loader_line: str):
    found = lint_source(HEAD + loader_line + LOOP, "snippet.py", select_rules(["DDP001"]))
    assert [d.code for d in found] == ["DDP001"]
    return found[0]


def test_leftover_sampler_none_keeps_the_finding_without_a_fix():
    assert _ddp001("loader = DataLoader(train_set, batch_size=32, shuffle=True, sampler=None)\n").fix is None


def test_shuffle_alone_still_gets_the_sampler_fix():
    finding = _ddp001("loader = DataLoader(train_set, batch_size=32, shuffle=True)\n")
    assert finding.fix is not None
    assert any("sampler=DistributedSampler(train_set, shuffle=True)" in edit.content for edit in finding.fix.edits)
