"""DDP008 in two shapes the earlier gates missed.

- A module that builds an Accelerate `Accelerator` (a trainer class taking its processes from
  `accelerate launch`) has no torch.distributed code of its own, yet `accelerate launch` runs it
  in every process: a bare `torch.load` in its resume method restores the main process's GPU
  tensors onto that GPU in every process.
- A `map_location` variable that stays None unless CUDA is missing (`loc = None` then
  `if not torch.cuda.is_available(): loc = torch.device("cpu")`): the GPU run, which every rank
  takes, passes None, as if nothing were passed.
"""

from __future__ import annotations

ACCELERATE_TRAINER = """
from pathlib import Path

import torch
from torch import nn
from accelerate import Accelerator


class Trainer(nn.Module):
    def __init__(self, model, **accelerate_kwargs):
        super().__init__()
        self.accelerator = Accelerator(**accelerate_kwargs)
        self.model = model

    def save(self, path):
        if self.accelerator.is_main_process:
            torch.save({"model": self.model.state_dict()}, path)

    def load(self, path):
        path = Path(path)
        LOAD
        self.model.load_state_dict(state["model"])
"""


def _trainer(lint, load: str, text: str = ACCELERATE_TRAINER) -> list[tuple[int, str]]:
    return lint(text.replace("LOAD", load), select=["DDP008"])


def test_bare_load_in_a_class_driven_by_an_accelerator_is_flagged(lint):
    assert _trainer(lint, "state = torch.load(str(path))") == [(20, "DDP008")]


def test_load_mapped_to_the_cpu_in_an_accelerate_trainer_is_left_alone(lint):
    assert _trainer(lint, 'state = torch.load(str(path), map_location="cpu")') == []


def test_load_only_the_main_process_makes_is_left_alone(lint):
    load = """if not self.accelerator.is_main_process:
            return
        state = torch.load(str(path))"""
    assert _trainer(lint, load) == []


def test_accelerator_on_the_cpu_only_is_left_alone(lint):
    text = ACCELERATE_TRAINER.replace("Accelerator(**accelerate_kwargs)", "Accelerator(cpu=True)")
    assert _trainer(lint, "state = torch.load(str(path))", text) == []


def test_module_without_an_accelerator_stays_single_process(lint):
    text = ACCELERATE_TRAINER.replace("from accelerate import Accelerator\n", "").replace(
        "Accelerator(**accelerate_kwargs)", "None"
    )
    assert _trainer(lint, "state = torch.load(str(path))", text) == []


GPU_NONE = """
import torch
import torch.distributed as dist

dist.init_process_group("nccl")


def resume(model, path):
    LOCATION
    state = torch.load(path, map_location=map_location)
    model.load_state_dict(state)


resume(torch.nn.Linear(2, 2).cuda(), "last.pt")
"""


def _resume(lint, location: str) -> list[tuple[int, str]]:
    return lint(GPU_NONE.replace("LOCATION", location), select=["DDP008"])


def test_map_location_left_none_unless_cuda_is_missing_is_flagged(lint):
    location = """map_location = None
    if not torch.cuda.is_available():
        map_location = torch.device("cpu")"""
    assert _resume(lint, location) == [(11, "DDP008")]


def test_map_location_set_to_cpu_in_the_else_of_a_cuda_test_is_flagged(lint):
    location = """if torch.cuda.is_available():
        map_location = None
    else:
        map_location = "cpu\""""
    assert _resume(lint, location) == [(12, "DDP008")]


def test_map_location_always_the_cpu_is_left_alone(lint):
    location = 'map_location = torch.device("cpu")'
    assert _resume(lint, location) == []


def test_map_location_cpu_unless_a_flag_says_otherwise_is_left_alone(lint):
    # the None arm is taken on a user's choice, not on every GPU run
    location = """map_location = "cpu"
    if getattr(model, "keep_devices", False):
        map_location = None"""
    assert _resume(lint, location) == []


def test_map_location_of_the_ranks_device_unless_cuda_is_missing_is_left_alone(lint):
    location = """map_location = f"cuda:{dist.get_rank()}"
    if not torch.cuda.is_available():
        map_location = torch.device("cpu")"""
    assert _resume(lint, location) == []
