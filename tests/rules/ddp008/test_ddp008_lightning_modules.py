"""DDP008 in a LightningModule: Lightning's Trainer takes every GPU by default (one process per
GPU), and each process builds the module and runs its hooks, so a pretrained file loaded there
without map_location lands on GPU 0 in every process. A file whose Trainers are all pinned to one
device, Lightning's rank-0 hook, a rank-0 guard, a mapped load, or a plain torch module in a
file with no distributed code, leave it silent."""

from __future__ import annotations

MODULE = """
import lightning as L
import torch


class Segmenter(L.LightningModule):
    def __init__(self, backbone, weights=None):
        super().__init__()
        self.backbone = backbone
        if weights is not None:
            LOAD

    def training_step(self, batch, index):
        return self.backbone(batch).mean()
"""

LOAD = 'self.backbone.load_state_dict(torch.load(weights)["state_dict"])'


def _module(lint, load: str = LOAD, tail: str = "") -> list[tuple[int, str]]:
    return lint(MODULE.replace("LOAD", load) + tail, select=["DDP008"])


def test_load_in_a_lightning_module_is_flagged(lint):
    assert _module(lint) == [(10, "DDP008")]


def test_load_in_a_hook_is_flagged(lint):
    hook = """
    def on_fit_start(self):
        self.backbone.load_state_dict(torch.load("warm.ckpt"))
"""
    assert _module(lint, load="pass", tail=hook) == [(16, "DDP008")]


def test_file_building_a_trainer_on_several_gpus_is_flagged(lint):
    tail = '\ntrainer = L.Trainer(devices=4, strategy="ddp")\n'
    assert _module(lint, tail=tail) == [(10, "DDP008")]


def test_file_whose_trainer_takes_one_device_is_left_alone(lint):
    assert _module(lint, tail="\ntrainer = L.Trainer(devices=1, max_epochs=3)\n") == []


def test_file_whose_trainer_runs_on_the_cpu_is_left_alone(lint):
    assert _module(lint, tail='\ntrainer = L.Trainer(accelerator="cpu")\n') == []


def test_mapped_load_is_left_alone(lint):
    assert _module(lint, load='self.backbone.load_state_dict(torch.load(weights, map_location="cpu"))') == []


def test_rank_zero_hook_is_left_alone(lint):
    hook = """
    def prepare_data(self):
        self.cached = torch.load("vocab.pt")
"""
    assert _module(lint, load="pass", tail=hook) == []


def test_plain_module_in_a_file_without_distributed_code_is_left_alone(lint):
    source = """
    import torch


    class Segmenter(torch.nn.Module):
        def __init__(self, weights):
            super().__init__()
            self.load_state_dict(torch.load(weights))
    """
    assert lint(source, select=["DDP008"]) == []


def test_load_under_a_global_rank_zero_guard_is_left_alone(lint):
    hook = """
    def on_fit_start(self):
        if self.trainer.is_global_zero:
            self.backbone.load_state_dict(torch.load("warm.ckpt"))
"""
    assert _module(lint, load="pass", tail=hook) == []
