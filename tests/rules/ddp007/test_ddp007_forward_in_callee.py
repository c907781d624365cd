"""DDP007 when rank-0 code hands the DDP-wrapped model to a function of another project module
that runs it forward (`if rank == 0: evaluate(model, loader)`, `evaluate` in engine.py calling
`model(x)`): the wrapper's forward, and its buffer broadcast, happen on rank 0 alone. Each case is
a small project on disk, linted as a whole and file by file (the same answer)."""

from __future__ import annotations

import pytest

from rule_snippets import write_files

# An engine module as projects write them: a training pass and an evaluation pass that runs
# whatever model it is given forward.
ENGINE = """
    import torch

    def train_one_epoch(model, loader, optimizer):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    def _scores(net, loader):
        return [net.forward(x).argmax(-1) for x, _ in loader]

    def evaluate(model, loader):
        model.eval()
        with torch.no_grad():
            return _scores(model, loader)

    def evaluate_plain(model, loader):
        model.eval()
        with torch.no_grad():
            return [model.module(x) for x, _ in loader]

    def evaluate_unwrapped(model, loader):
        model = getattr(model, "module", model)
        with torch.no_grad():
            return [model(x) for x, _ in loader]
    """

SCRIPT = """
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    from engine import evaluate, evaluate_plain, evaluate_unwrapped, train_one_epoch

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    net = nn.Sequential(nn.Conv1d(4, 4, 1), nn.BatchNorm1d(4)).cuda(rank)
    model = DDP(net, device_ids=[rank]{options})
    for epoch in range(10):
        train_one_epoch(model, train_loader, optimizer)
        if rank == 0:
            {evaluation}
    """


def _rows(tmp_path, evaluation: str, options: str = "") -> list[tuple[str, int]]:
    """The DDP007 findings of the project, the same when the whole folder and when the script
    alone is linted (its project is found from the file)."""
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    (tmp_path / "pyproject.toml").write_text("")
    write_files(tmp_path, {"engine.py": ENGINE, "train.py": SCRIPT.format(evaluation=evaluation, options=options)})
    rule = [RULES_BY_CODE["DDP007"]]

    def rows(paths):
        return sorted((d.filename.replace("\\", "/").rsplit("/", 1)[-1], d.location.row) for d in lint_paths(paths, rule))

    whole = rows([str(tmp_path)])
    assert rows([str(tmp_path / "train.py")]) == whole
    return whole


@pytest.mark.parametrize(
    "evaluation",
    [
        "scores = evaluate(model, val_loader)",
        "scores = evaluate(loader=val_loader, model=model)",
        "print(evaluate(model, val_loader))",
    ],
)
def test_rank_zero_hands_the_ddp_model_to_an_engine_forward(tmp_path, evaluation):
    assert _rows(tmp_path, evaluation) == [("train.py", 15)]


def test_rank_zero_hands_the_ddp_model_through_a_script_helper(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    script = SCRIPT.replace("for epoch in range(10):", "def validate(m):\n        return evaluate(m, val_loader)\n\n    for epoch in range(10):")
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    write_files(tmp_path, {"engine.py": ENGINE, "train.py": script.format(evaluation="validate(model)", options="")})
    found = lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP007"]])
    assert [(d.location.row, "forward" in d.message) for d in found] == [(18, True)]


@pytest.mark.parametrize(
    "evaluation",
    [
        "scores = evaluate(model.module, val_loader)",  # the plain module: no collective
        "scores = evaluate(net, val_loader)",  # never wrapped
        "scores = evaluate_plain(model, val_loader)",  # the engine unwraps it at the call
        "scores = evaluate_unwrapped(model, val_loader)",  # the engine unwraps it first
        "scores = evaluate(None, model)",  # the model goes to a parameter never run forward
    ],
)
def test_what_reaches_no_wrapped_forward_is_left_alone(tmp_path, evaluation):
    assert _rows(tmp_path, evaluation) == []


def test_ddp_model_without_buffer_broadcast_is_left_alone(tmp_path):
    rows = _rows(tmp_path, "scores = evaluate(model, val_loader)", options=", broadcast_buffers=False")
    assert rows == []


def test_evaluation_on_every_rank_is_left_alone(tmp_path):
    rows = _rows(tmp_path, "pass\n        scores = evaluate(model, val_loader)")
    assert rows == []
