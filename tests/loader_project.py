"""A small project whose training scripts get their DataLoader from a module of the project
(`data.build_loader`), written for the tests of what follows such imports: the results cache
(test_cache_format.py) and the summaries workers share (test_shared_summaries.py)."""

from __future__ import annotations

from pathlib import Path

LOADER_MODULE = (
    "from torch.utils.data import DataLoader\n\n"
    "def build_loader(dataset):\n    return DataLoader(dataset, batch_size=8, shuffle=True)\n"
)
# Distributed, and its loader (from data.py) has no DistributedSampler: one DDP001 each.
TRAINING_SCRIPT = (
    "import torch.distributed as dist\nfrom data import build_loader\n\n"
    "dist.init_process_group('gloo')\nloader = build_loader(train_set)\n"
    "for epoch in range(3):\n    for x in loader:\n        model(x).backward()\n        optimizer.step()\n"
)


def write_project(root: Path, scripts: dict[str, str]) -> Path:
    """`root` holding data.py and the scripts (file name -> text)."""
    root.mkdir()
    (root / "data.py").write_text(LOADER_MODULE)
    for name, text in scripts.items():
        (root / name).write_text(text)
    return root
