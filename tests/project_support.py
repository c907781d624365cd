"""A project of several files written under a temporary folder and checked as a whole, for rule
cases whose facts sit in more than one module."""

from __future__ import annotations

import textwrap
from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import select_rules


def project_findings(root: Path, files: dict[str, str], codes: list[str]) -> list[tuple[str, int]]:
    """(file relative to `root`, row) of each finding of `codes` when the whole project is checked."""
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    found = lint_paths([str(root)], select_rules(codes), jobs=1)
    return sorted((Path(d.filename).resolve().relative_to(root.resolve()).as_posix(), d.location.row) for d in found)


# A distributed training script calling the project's `restore(model, path)` helper (helpers.py)
# in every rank, after each rank has set its own GPU: shared by DDP008's project cases.
RESTORING_TRAIN_SCRIPT = """\
import os
import torch
import torch.distributed as dist
from helpers import restore


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = torch.nn.Linear(4, 4).cuda()
    restore(model, "last.pt")


if __name__ == "__main__":
    main()
"""
