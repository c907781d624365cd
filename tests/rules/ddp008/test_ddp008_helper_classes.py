"""DDP008 in a helper module's class: a distributed module of the project builds the class on
every rank (a checkpointer each rank makes to resume with), so the loads its methods make run
in every rank; built only by rank 0, only by a single-process tool, or by nobody, they do not."""

from __future__ import annotations

import textwrap
from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import select_rules

HELPER = """\
import torch


class Checkpointer:
    def __init__(self, folder):
        self.folder = folder

    def _read(self, name):
        return torch.load(self.folder + "/" + name)

    def resume(self, model):
        model.load_state_dict(self._read("last.pt"))
"""

CALLER = """\
import os
import torch
import torch.distributed as dist
from checkpointing import Checkpointer


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = torch.nn.Linear(4, 4).cuda()
    BUILD


if __name__ == "__main__":
    main()
"""


def _project(tmp_path: Path, build: str, helper: str = HELPER) -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "checkpointing.py").write_text(helper)
    (tmp_path / "train.py").write_text(CALLER.replace("BUILD", textwrap.dedent(build).strip().replace("\n", "\n    ")))
    found = lint_paths([str(tmp_path)], select_rules(["DDP008"]), jobs=1)
    return sorted((Path(d.filename).name, d.location.row) for d in found)


def test_class_built_on_every_rank_is_flagged(tmp_path):
    assert _project(tmp_path, 'Checkpointer("runs").resume(model)') == [("checkpointing.py", 9)]


def test_class_built_on_rank_zero_only_is_left_alone(tmp_path):
    build = """
    if dist.get_rank() == 0:
        Checkpointer("runs").resume(model)
    """
    assert _project(tmp_path, build) == []


def test_class_nobody_builds_is_left_alone(tmp_path):
    assert _project(tmp_path, "model.train()") == []


def test_class_mapping_its_load_is_left_alone(tmp_path):
    helper = HELPER.replace('torch.load(self.folder + "/" + name)', 'torch.load(self.folder + "/" + name, map_location="cpu")')
    assert _project(tmp_path, 'Checkpointer("runs").resume(model)', helper) == []


def test_class_built_only_by_a_single_process_tool_is_left_alone(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "checkpointing.py").write_text(HELPER)
    (tmp_path / "export.py").write_text(
        "import torch\nfrom checkpointing import Checkpointer\n\n"
        "model = torch.nn.Linear(4, 4).cuda()\nCheckpointer('runs').resume(model)\n"
    )
    assert list(lint_paths([str(tmp_path)], select_rules(["DDP008"]), jobs=1)) == []
