"""DDP001: the run's mode read straight from the launcher's environment (`int(os.environ.get(
"WORLD_SIZE", "1"))`), as the test that picks the sampler. Written the wrong way round, the
DistributedSampler exists only when one process runs and every rank of a multi-process run
iterates the whole dataset; the right way round stays silent. Findings are marked `# <- DDP001`."""

from __future__ import annotations

import pytest

from rule_snippets import marked_findings

SCRIPT = """
import os
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

dist.init_process_group("nccl")
sampler = {choice}
batches = DataLoader(examples, batch_size=8, sampler=sampler, shuffle=sampler is None){mark}
for epoch in range(4):
    if sampler is not None:
        sampler.set_epoch(epoch)
    for inputs, labels in batches:
        criterion(net(inputs), labels).backward()
        opt.step()
"""


@pytest.mark.parametrize(
    "choice",
    [
        'DistributedSampler(examples) if int(os.environ.get("WORLD_SIZE", "1")) == 1 else None',
        'None if int(os.environ["WORLD_SIZE"]) > 1 else DistributedSampler(examples)',
        'DistributedSampler(examples) if int(os.getenv("WORLD_SIZE", "1")) < 2 else None',
    ],
)
def test_sampler_only_when_one_process_runs_is_flagged(lint, choice):
    source = SCRIPT.format(choice=choice, mark="  # <- DDP001")
    assert lint(source, ["DDP001"]) == marked_findings(source)


@pytest.mark.parametrize(
    "choice",
    [
        'DistributedSampler(examples) if int(os.environ.get("WORLD_SIZE", "1")) > 1 else None',
        'None if int(os.environ["WORLD_SIZE"]) == 1 else DistributedSampler(examples)',
    ],
)
def test_sampler_when_several_processes_run_is_left_alone(lint, choice):
    assert lint(SCRIPT.format(choice=choice, mark=""), ["DDP001"]) == []
