"""DDP008 in a helper module reached from the training script through two modules with no
distributed code in a row (train.py -> pipeline.py -> session.py -> store.py): the helper's load
runs in every rank. Reached the same way from a single-process tool, or mapped, it stays silent."""

from __future__ import annotations

from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import select_rules

STORE = """\
import torch


def read_state(where):
    return torch.load(where)
"""

SESSION = """\
from store import read_state


class Session:
    def __init__(self, net):
        self.net = net

    def restart(self, where):
        self.net.load_state_dict(read_state(where))
"""

PIPELINE = """\
from session import Session


def make_session(net, restart_from=None):
    session = Session(net)
    if restart_from:
        session.restart(restart_from)
    return session
"""

DISTRIBUTED_SCRIPT = """\
import os
import torch
import torch.distributed as dist
from pipeline import make_session


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    make_session(torch.nn.Linear(2, 2).cuda(), restart_from="runs/last.pt")


if __name__ == "__main__":
    main()
"""

SINGLE_PROCESS_TOOL = """\
import torch
from pipeline import make_session

if __name__ == "__main__":
    make_session(torch.nn.Linear(2, 2), restart_from="runs/last.pt")
"""


def _project(tmp_path: Path, script: str, store: str = STORE) -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "store.py").write_text(store)
    (tmp_path / "session.py").write_text(SESSION)
    (tmp_path / "pipeline.py").write_text(PIPELINE)
    (tmp_path / "train.py").write_text(script)
    found = lint_paths([str(tmp_path)], select_rules(["DDP008"]), jobs=1)
    return sorted((Path(d.filename).name, d.location.row) for d in found)


def test_helper_two_plain_modules_below_the_rank_code_is_flagged(tmp_path):
    assert _project(tmp_path, DISTRIBUTED_SCRIPT) == [("store.py", 5)]


def test_helper_two_plain_modules_below_a_single_process_tool_is_left_alone(tmp_path):
    assert _project(tmp_path, SINGLE_PROCESS_TOOL) == []


def test_mapped_helper_two_plain_modules_below_the_rank_code_is_left_alone(tmp_path):
    mapped = STORE.replace("torch.load(where)", 'torch.load(where, map_location="cpu")')
    assert _project(tmp_path, DISTRIBUTED_SCRIPT, store=mapped) == []
