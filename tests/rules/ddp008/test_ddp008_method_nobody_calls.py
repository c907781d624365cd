"""DDP008 on a load in a method of a plain helper class that the training script builds in every
rank (a run logger with save / load methods): the load runs only if something calls the method.
A method nothing in the project calls never runs; once the script calls it, every rank loads."""

from __future__ import annotations

from project_support import project_findings

LOG = """\
import torch


class RunLog:
    def __init__(self, folder):
        self.folder = folder

    def save_model(self, model):
        torch.save(model.state_dict(), self.folder + "/model.pth")

    def load_model(self, model, path):
        model.load_state_dict(torch.load(path))
"""

TRAIN = """\
import os
import torch
import torch.distributed as dist
from log import RunLog

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
log = RunLog("runs")
model = torch.nn.Linear(8, 8).cuda()
{resume}
for step in range(100):
    train_step(model)
if dist.get_rank() == 0:
    log.save_model(model)
"""


def _rows(tmp_path, resume):
    return project_findings(tmp_path, {"log.py": LOG, "train.py": TRAIN.format(resume=resume)}, ["DDP008"])


def test_a_load_method_nothing_calls_is_left_alone(tmp_path):
    assert _rows(tmp_path, "pass") == []


def test_the_same_method_called_in_every_rank_is_reported(tmp_path):
    assert _rows(tmp_path, 'log.load_model(model, "runs/model.pth")') == [("log.py", 12)]
