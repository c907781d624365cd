"""DDP008 in a model module whose class loads weights in a classmethod (`Net.from_pretrained(path)`):
calling a method on the project class from code every rank runs counts as running the class, as
building it does. Called only by a single-process tool, under a rank-0 guard, or with the load
mapped, it stays silent."""

from __future__ import annotations

from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import select_rules

NETWORK = """\
import torch
import torch.nn as nn


class Tower(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.proj = nn.Linear(width, width)

    @classmethod
    def restored(cls, weights_file):
        tower = cls()
        tower.load_state_dict(torch.load(weights_file))
        return tower
"""

DISTRIBUTED_SCRIPT = """\
import os
import torch
import torch.distributed as dist
from network import Tower


def launch(weights_file):
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    CALL


if __name__ == "__main__":
    launch("weights/tower.bin")
"""

SINGLE_PROCESS_TOOL = """\
import torch
from network import Tower

if __name__ == "__main__":
    tower = Tower.restored("weights/tower.bin")
    torch.onnx.export(tower, torch.zeros(1, 8), "tower.onnx")
"""

CALL = "tower = Tower.restored(weights_file).cuda()"


def _project(tmp_path: Path, script: str, network: str = NETWORK, call: str = CALL) -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "network.py").write_text(network)
    (tmp_path / "main.py").write_text(script.replace("CALL", call))
    found = lint_paths([str(tmp_path)], select_rules(["DDP008"]), jobs=1)
    return sorted((Path(d.filename).name, d.location.row) for d in found)


def test_classmethod_called_on_the_class_in_every_rank_is_flagged(tmp_path):
    assert _project(tmp_path, DISTRIBUTED_SCRIPT) == [("network.py", 13)]


def test_classmethod_called_through_the_module_in_every_rank_is_flagged(tmp_path):
    script = DISTRIBUTED_SCRIPT.replace("from network import Tower", "import network")
    assert _project(tmp_path, script, call="tower = network.Tower.restored(weights_file)") == [("network.py", 13)]


def test_classmethod_called_only_by_a_single_process_tool_is_left_alone(tmp_path):
    assert _project(tmp_path, SINGLE_PROCESS_TOOL) == []


def test_classmethod_called_under_a_rank_zero_guard_is_left_alone(tmp_path):
    guarded = "if dist.get_rank() == 0:\n        tower = Tower.restored(weights_file)"
    assert _project(tmp_path, DISTRIBUTED_SCRIPT, call=guarded) == []


def test_classmethod_mapping_its_load_is_left_alone(tmp_path):
    mapped = NETWORK.replace("torch.load(weights_file)", 'torch.load(weights_file, map_location="cpu")')
    assert _project(tmp_path, DISTRIBUTED_SCRIPT, network=mapped) == []


def test_plain_method_borrowed_through_the_class_is_left_alone(tmp_path):
    # `Tower.describe(other)`: an instance method called through the class with an explicit
    # object (a subclass borrowing it) neither builds the class nor runs its loading classmethod
    network = NETWORK + "\n    def describe(self):\n        return repr(self.proj)\n"
    call = "print(Tower.describe(torch.nn.Linear(8, 8)))"
    assert _project(tmp_path, DISTRIBUTED_SCRIPT, network=network, call=call) == []
