"""DDP008 on a file whose name a function of the module makes (`folder / schedule_file(ctx)`):
what the project writes under names from that function decides. A learning-rate scheduler's
state holds Python numbers, no tensor, so a load of a file only ever written from one is left
alone; a file also written from a model's state, or from an object of unknown kind, is flagged."""

from __future__ import annotations

from pathlib import Path

from project_support import project_findings

STATES = """\
import torch
import torch.distributed as dist


def schedule_file(tag):
    return f"schedule_{tag}_rank{dist.get_rank() % 1}.pt"


def save_schedule(schedule, folder, tag):
    torch.save(schedule.state_dict(), folder / schedule_file(tag))


def load_schedule(schedule, folder, tag):
    schedule.load_state_dict(torch.load(folder / schedule_file(tag)))
"""

TRAIN = """\
import os
from pathlib import Path

import torch
import torch.distributed as dist
from torch.optim.lr_scheduler import StepLR

from states import load_schedule, save_schedule


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    net = torch.nn.Linear(4, 4).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    schedule = StepLR(opt, step_size=10)
    load_schedule(schedule, Path("out"), "last")
    for step in range(100):
        schedule.step()
    save_schedule(schedule, Path("out"), "last")


if __name__ == "__main__":
    main()
"""


def _project(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int]]:
    return project_findings(tmp_path, files, ["DDP008"])


def test_file_written_only_from_a_scheduler_built_by_the_caller_is_left_alone(tmp_path):
    assert _project(tmp_path, {"states.py": STATES, "train.py": TRAIN}) == []


def test_file_written_from_a_scheduler_the_saver_declares_is_left_alone(tmp_path):
    states = STATES.replace("def save_schedule(schedule, folder, tag):", "def save_schedule(schedule: LambdaLR, folder, tag):")
    states = "from torch.optim.lr_scheduler import LambdaLR\n" + states
    train = TRAIN.replace('    save_schedule(schedule, Path("out"), "last")\n', "")
    assert _project(tmp_path, {"states.py": states, "train.py": train}) == []


def test_file_written_from_a_cast_scheduler_is_left_alone(tmp_path):
    train = TRAIN.replace("from pathlib import Path", "from pathlib import Path\nfrom typing import cast").replace(
        'save_schedule(schedule, Path("out"), "last")', 'save_schedule(cast(StepLR, schedule), Path("out"), "last")'
    )
    assert _project(tmp_path, {"states.py": STATES, "train.py": train}) == []


# The loader hands the state back instead of restoring it: what the file holds is then known
# only from what the project writes under its name.
RETURNING = STATES.replace(
    "def load_schedule(schedule, folder, tag):\n    schedule.load_state_dict(torch.load(folder / schedule_file(tag)))",
    "def load_schedule(schedule, folder, tag):\n    return torch.load(folder / schedule_file(tag))",
)


def test_file_also_written_from_a_model_state_is_flagged(tmp_path):
    states = RETURNING + "\n\ndef save_model(net, folder):\n    torch.save(net.state_dict(), folder / schedule_file('net'))\n"
    assert _project(tmp_path, {"states.py": states, "train.py": TRAIN}) == [("states.py", 14)]


def test_a_load_restored_into_the_scheduler_is_left_alone_whatever_else_is_written(tmp_path):
    # `schedule.load_state_dict(torch.load(...))` with a StepLR: the file must hold its state.
    states = STATES + "\n\ndef save_model(net, folder):\n    torch.save(net.state_dict(), folder / schedule_file('net'))\n"
    assert _project(tmp_path, {"states.py": states, "train.py": TRAIN}) == []


def test_file_written_from_an_object_of_unknown_kind_is_flagged(tmp_path):
    """The saver's callers hand it something built elsewhere (a model, an optimizer?)."""
    train = TRAIN.replace("    schedule = StepLR(opt, step_size=10)\n", "    schedule = build_schedule(opt)\n")
    train = train.replace("def main():", "def build_schedule(opt):\n    return opt\n\n\ndef main():")
    assert _project(tmp_path, {"states.py": STATES, "train.py": train}) == [("states.py", 14)]


def test_saver_nobody_calls_is_flagged(tmp_path):
    train = TRAIN.replace('    save_schedule(schedule, Path("out"), "last")\n', "")
    assert _project(tmp_path, {"states.py": RETURNING, "train.py": train}) == [("states.py", 14)]
