"""DDP008 stays silent on a file the project writes from CPU tensors: in the same file (a
factory-made tensor, a CPU copy inside a dict) or in the training script that calls the
evaluation helper after moving its model to the CPU and saving it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import select_rules

CACHE_SCRIPT = """
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
path = f"{out}/bank_{kind}.pth"
try:
    bank = torch.load(path)["bank"]
except FileNotFoundError:
    bank = None
    for batch in loader:
        if bank is None:
            bank = BANK
        bank[batch.index] = model(batch).float()
    torch.save({"bank": bank}, path)
"""


def _cache_script(lint, bank: str) -> list[tuple[int, str]]:
    return lint(CACHE_SCRIPT.replace("BANK", bank), select=["DDP008"])


def test_bank_made_by_a_cpu_factory_is_left_alone(lint):
    assert _cache_script(lint, "torch.zeros(len(dataset), 2)") == []


def test_bank_moved_to_the_cpu_is_left_alone(lint):
    assert _cache_script(lint, 'torch.empty(len(dataset), 2, device="cuda").to("cpu").detach()') == []


def test_bank_made_on_the_gpu_is_flagged(lint):
    assert _cache_script(lint, 'torch.zeros(len(dataset), 2, device="cuda")') == [(7, "DDP008")]


EVALUATE = """\
import torch
import torch.distributed as dist


def evaluate(folder):
    model = Net()
    model.load_state_dict(torch.load(folder + "/final.pth"))
    model.cuda()
    print(dist.get_rank(), score(model))
"""

TRAIN = """\
import torch
import torch.distributed as dist
from evaluate import evaluate


def train(folder):
    dist.init_process_group("nccl")
    net = Net().cuda()
    fit(net)
    target = folder + "/final.pth"
    MOVE
    state = net.module.state_dict() if hasattr(net, "module") else net.state_dict()
    if dist.get_rank() == 0:
        torch.save(state, target)


if __name__ == "__main__":
    train("out")
    evaluate("out")
"""


def _project(tmp_path: Path, move: str) -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "evaluate.py").write_text(EVALUATE)
    (tmp_path / "train.py").write_text(textwrap.dedent(TRAIN.replace("MOVE", move)))
    found = lint_paths([str(tmp_path)], select_rules(["DDP008"]), jobs=1)
    return sorted((Path(d.filename).name, d.location.row) for d in found)


def test_file_the_calling_script_saves_from_cpu_is_left_alone(tmp_path):
    assert _project(tmp_path, "net.cpu()") == []


def test_file_the_calling_script_saves_from_the_gpu_is_flagged(tmp_path):
    assert _project(tmp_path, "net.train()") == [("evaluate.py", 7)]


def test_cpu_file_of_another_f_string_name_does_not_excuse_the_load(lint):
    source = """
    import torch
    import torch.distributed as dist

    dist.init_process_group("nccl")
    torch.save(features.cpu(), f"{out}/features_{epoch}.pth")
    state = torch.load(f"{out}/checkpoint_{epoch}.pth")
    """
    assert lint(source, select=["DDP008"]) == [(6, "DDP008")]
