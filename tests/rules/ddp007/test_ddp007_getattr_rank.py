"""DDP007 with the rank read through `getattr` (`getattr(self, "global_rank", 0) == 0`,
`getattr(trainer, "is_global_zero", False)`): the same rank guard as the attribute itself, so a
collective under it is made by rank 0 alone. A `getattr` of an attribute that is no process rank
(`"lora_rank"`, `"num_layers"`) guards nothing."""

from __future__ import annotations

import pytest

HEAD = """
import torch.distributed as dist
from lightning import LightningModule

dist.init_process_group("nccl")
"""

FLAGGED = {
    "getattr-rank-in-a-lightning-module": """
class Base(LightningModule):
    pass

class Probe(Base):
    def on_validation_epoch_end(self):
        if getattr(self, "global_rank", 0) == 0:
            self.log("probe/score", 1.0, sync_dist=True)  # <- DDP007
""",
    "getattr-rank-zero-flag": """
def finish(trainer, t):
    if getattr(trainer, "is_global_zero", False):
        dist.all_reduce(t)  # <- DDP007
""",
    "getattr-rank-assigned-first": """
def finish(args, t):
    rank = getattr(args, "rank", 0)
    if rank == 0:
        dist.barrier()  # <- DDP007
""",
}

QUIET = {
    "getattr-of-a-linear-algebra-rank": """
def finish(adapter, t):
    if getattr(adapter, "lora_rank", 0) == 0:
        dist.all_reduce(t)
""",
    "getattr-of-a-setting": """
def finish(cfg, t):
    if getattr(cfg, "num_layers", 0) == 0:
        dist.all_reduce(t)
""",
    "getattr-rank-with-the-collective-outside": """
class Probe(LightningModule):
    def on_validation_epoch_end(self):
        if getattr(self, "global_rank", 0) == 0:
            print("done")
        self.log("probe/score", 1.0, sync_dist=True)
""",
}


def _marked(source: str) -> list[int]:
    return [number for number, line in enumerate(source.splitlines(), 1) if "# <- DDP007" in line]


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_collective_under_a_getattr_rank_guard_is_flagged(lint, name):
    source = HEAD + FLAGGED[name]
    assert [row for row, code in lint(source) if code == "DDP007"] == _marked(source.lstrip("\n"))


@pytest.mark.parametrize("name", sorted(QUIET))
def test_getattr_of_no_process_rank_or_collective_outside_is_quiet(lint, name):
    assert [row for row, code in lint(HEAD + QUIET[name]) if code == "DDP007"] == []
