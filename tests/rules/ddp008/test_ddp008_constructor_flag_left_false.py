"""DDP008 on a load in a constructor arm that only a flag opens (`def __init__(self, ...,
re_train=False): if re_train: torch.load(path)`). Which values the flag gets is the callers'
business: when every construction of the class leaves it False, no rank ever runs the load;
when one passes True in the ranks, the load runs in every rank."""

from __future__ import annotations

from project_support import project_findings

SCRIPT = """
import os
import torch
import torch.distributed as dist
import torch.nn as nn


class EmbeddingNet(nn.Module):
    def __init__(self, width, re_train=False, weights=""):
        super(EmbeddingNet, self).__init__()
        self.body = nn.Linear(width, width)
        if re_train:
            self.body.load_state_dict(torch.load(weights))

    def forward(self, x):
        return self.body(x)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    net = {construction}
    train(net.cuda())


if __name__ == "__main__":
    main()
"""


def _rows(tmp_path, construction):
    # A project of two modules: the callers of the class are the ones its modules show.
    files = {"train.py": SCRIPT.format(construction=construction), "metrics.py": "def mean(xs):\n    return sum(xs) / len(xs)\n"}
    return project_findings(tmp_path, files, ["DDP008"])


def test_left_alone_when_every_construction_leaves_the_flag_false(tmp_path):
    assert _rows(tmp_path, "EmbeddingNet(128)") == []


def test_left_alone_when_the_construction_passes_false(tmp_path):
    assert _rows(tmp_path, "EmbeddingNet(128, re_train=False)") == []


def test_reported_when_a_rank_builds_it_with_the_flag_true(tmp_path):
    assert _rows(tmp_path, 'EmbeddingNet(128, re_train=True, weights="base.pt")') == [("train.py", 13)]
