"""DDP008 in a helper module reached through one module with no distributed code: the training
script builds, in every rank, a runner class of engine.py whose method resumes through the
helper of state.py, so the helper's loads run in every rank. The runner built only by a
single-process tool, the helper called by the runner under a rank-0 guard, or a helper that
maps its loads, leave it silent."""

from __future__ import annotations

from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import select_rules

STATE = """\
import torch


def restore_parts(folder, net, opt=None):
    net.load_state_dict(torch.load(folder + "/weights.bin"))
    if opt is not None:
        opt.load_state_dict(torch.load(folder + "/opt.bin"))
"""

ENGINE = """\
from state import restore_parts


class Runner:
    def __init__(self, net, opt):
        self.net, self.opt = net, opt

    def fit(self, batches, restart=None):
        if restart is not None:
            RESUME
        for batch in batches:
            self.net(batch).sum().backward()
            self.opt.step()
"""

DISTRIBUTED_SCRIPT = """\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from engine import Runner


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    net = DistributedDataParallel(torch.nn.Linear(4, 4).cuda())
    Runner(net, torch.optim.SGD(net.parameters(), lr=0.1)).fit([], restart="runs/last")


if __name__ == "__main__":
    main()
"""

SINGLE_PROCESS_TOOL = """\
import torch
from engine import Runner

net = torch.nn.Linear(4, 4).cuda()
Runner(net, torch.optim.SGD(net.parameters(), lr=0.1)).fit([], restart="runs/last")
"""

RESUME = "restore_parts(restart, self.net, self.opt)"


def _project(tmp_path: Path, script: str, resume: str = RESUME, state: str = STATE) -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "state.py").write_text(state)
    (tmp_path / "engine.py").write_text(ENGINE.replace("RESUME", resume))
    (tmp_path / "train.py").write_text(script)
    found = lint_paths([str(tmp_path)], select_rules(["DDP008"]), jobs=1)
    return sorted((Path(d.filename).name, d.location.row) for d in found)


def test_helper_run_by_a_class_every_rank_builds_is_flagged(tmp_path):
    assert _project(tmp_path, DISTRIBUTED_SCRIPT) == [("state.py", 5), ("state.py", 7)]


def test_helper_run_by_a_class_only_a_single_process_tool_builds_is_left_alone(tmp_path):
    assert _project(tmp_path, SINGLE_PROCESS_TOOL) == []


def test_helper_called_under_a_rank_zero_guard_is_left_alone(tmp_path):
    guarded = "if self.net.rank == 0:\n                restore_parts(restart, self.net, self.opt)"
    assert _project(tmp_path, DISTRIBUTED_SCRIPT, resume=guarded) == []


def test_helper_mapping_its_loads_is_left_alone(tmp_path):
    mapped = STATE.replace('.bin")', '.bin", map_location="cpu")')
    assert _project(tmp_path, DISTRIBUTED_SCRIPT, state=mapped) == []
