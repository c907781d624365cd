"""DDP001 with a DistributedSampler subclass another module of the project defines under torch's
name (and its package re-exports): building it makes the script distributed, and a loader that
is not given it still reads the whole dataset on every rank. (The screens before any parse look
for distributed words, so a subclass is seen where the script names it like torch's class.)"""

import textwrap
from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import RULES_BY_CODE

SAMPLERS = """
from torch.utils.data import distributed


class DistributedSampler(distributed.DistributedSampler):
    def __init__(self, dataset, group, groups, rank=0, num_replicas=1, **kwargs):
        super().__init__(dataset, num_replicas=num_replicas * groups, rank=rank + num_replicas * group, **kwargs)
"""

TRAIN = """
import os

from torch.utils.data import DataLoader

from faulttolerant import DistributedSampler


def main(train_set, model):
    group = int(os.environ.get("GROUP", 0))
    sampler = DistributedSampler(train_set, group=group, groups=4)
    loader = DataLoader(train_set, batch_size=32, {passing})
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for batch in loader:
            model(batch).sum().backward()
"""


def _findings(tmp_path: Path, passing: str, code: str = "DDP001") -> list[tuple[str, int]]:
    files = {
        "faulttolerant/__init__.py": "from faulttolerant.samplers import DistributedSampler\n",
        "faulttolerant/samplers.py": SAMPLERS,
        "train.py": TRAIN.format(passing=passing),
    }
    for name, source in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"))
    found = lint_paths([str(tmp_path)], [RULES_BY_CODE[code]])
    return sorted((Path(d.filename).name, d.location.row) for d in found if d.code == code)


def test_project_sampler_built_but_not_passed_is_flagged(tmp_path):
    assert _findings(tmp_path, "shuffle=True") == [("train.py", 11)]


def test_project_sampler_passed_to_the_loader_is_left_alone(tmp_path):
    assert _findings(tmp_path, "sampler=sampler") == []


def test_project_sampler_needs_set_epoch_like_torchs(tmp_path):
    """DDP002 sees the same sampler: with set_epoch in the loop it stays quiet..."""
    assert _findings(tmp_path, "sampler=sampler", code="DDP002") == []


def test_project_sampler_without_set_epoch_is_flagged(tmp_path):
    """...and without it, flags the epoch loop."""
    files_dir = tmp_path
    _findings(files_dir, "sampler=sampler")
    train = files_dir / "train.py"
    train.write_text(train.read_text().replace("        sampler.set_epoch(epoch)\n", ""))
    found = lint_paths([str(files_dir)], [RULES_BY_CODE["DDP002"]])
    assert sorted((Path(d.filename).name, d.location.row) for d in found if d.code == "DDP002") == [("train.py", 12)]
