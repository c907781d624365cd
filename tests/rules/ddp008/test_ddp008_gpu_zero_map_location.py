"""DDP008 for a map_location that is given but still puts every rank on GPU 0: one naming
cuda:0 (as a string, a `torch.device`, or through a variable), and the current device (`"cuda"`)
asked for before the rank's own GPU is made current. The current device after `set_device`,
a per-rank device, one visible GPU per process, a rank-0-only load and a single-process script
leave it silent."""

from __future__ import annotations

import pytest

HEAD = """
import os
import torch
import torch.distributed as dist

def run():
    dist.init_process_group("nccl")
"""

TAIL = """
if __name__ == "__main__":
    run()
"""


def _script(body: str) -> str:
    lines = "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    return HEAD + lines + TAIL


@pytest.mark.parametrize(
    "location",
    ['"cuda:0"', 'torch.device("cuda:0")', 'torch.device("cuda", 0)'],
)
def test_map_location_naming_gpu_zero_is_flagged(lint, location):
    source = _script(
        f'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n'
        f'weights = torch.load("runs/last.pt", map_location={location})\n'
    )
    assert lint(source, ["DDP008"]) == [(8, "DDP008")]


def test_gpu_zero_through_a_variable_is_flagged(lint):
    source = _script(
        'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n'
        'target = "cuda:0"\n'
        'weights = torch.load("runs/last.pt", map_location=target)\n'
    )
    assert lint(source, ["DDP008"]) == [(9, "DDP008")]


def test_current_device_before_set_device_is_flagged(lint):
    source = _script(
        'weights = torch.load("runs/last.pt", map_location="cuda")\n'
        'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n'
    )
    assert lint(source, ["DDP008"]) == [(7, "DDP008")]


def test_current_device_after_set_device_is_left_alone(lint):
    source = _script(
        'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n'
        'weights = torch.load("runs/last.pt", map_location="cuda")\n'
    )
    assert lint(source, ["DDP008"]) == []


def test_current_device_in_a_script_that_never_sets_one_is_left_alone(lint):
    # nothing shows the order: the device may be chosen by the launcher or a caller
    source = _script('weights = torch.load("runs/last.pt", map_location="cuda")\n')
    assert lint(source, ["DDP008"]) == []


def test_rank_device_is_left_alone(lint):
    source = _script(
        'local_rank = int(os.environ["LOCAL_RANK"])\n'
        "torch.cuda.set_device(local_rank)\n"
        'weights = torch.load("runs/last.pt", map_location=f"cuda:{local_rank}")\n'
        'other = torch.load("runs/ema.pt", map_location={"cuda:0": f"cuda:{local_rank}"})\n'
    )
    assert lint(source, ["DDP008"]) == []


def test_one_visible_gpu_per_process_is_left_alone(lint):
    source = _script(
        'os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["LOCAL_RANK"]\n'
        'weights = torch.load("runs/last.pt", map_location="cuda:0")\n'
    )
    assert lint(source, ["DDP008"]) == []


def test_rank_zero_only_load_onto_gpu_zero_is_left_alone(lint):
    source = _script(
        'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n'
        "if dist.get_rank() == 0:\n"
        '    weights = torch.load("runs/last.pt", map_location="cuda:0")\n'
    )
    assert lint(source, ["DDP008"]) == []


def test_single_process_script_is_left_alone(lint):
    source = """
    import torch

    weights = torch.load("runs/last.pt", map_location="cuda:0")
    """
    assert lint(source, ["DDP008"]) == []
