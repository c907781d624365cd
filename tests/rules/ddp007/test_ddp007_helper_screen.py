"""Which project helpers RankGuards reads for a returned rank-0 test: only those whose compiled
code names a rank word (ProjectIndex.functions_naming), so that the many other functions an
`if` calls cost their modules no parse; the screen never hides a helper the lever would read."""

from __future__ import annotations

from pathlib import Path

from ddplint.analysis.project import ProjectIndex
from ddplint.analysis.rank_guards import RANK_GUARD_WORDS
from tests.project_support import project_findings

HELPERS = '''
import os
import torch.distributed as dist

_rank = 0


def setup():
    global _rank
    dist.init_process_group("nccl")
    _rank = dist.get_rank()


def leader():
    return _rank == 0


def from_environment():
    return os.environ.get("RANK", "0") == "0"


def nested():
    check = lambda: dist.get_rank() == 0
    return check()


def is_cuda_ready():
    """Whether a GPU can be used."""
    return True


class Logger:
    def is_leader(self):
        return dist.get_rank() == 0
'''


def _index(root: Path) -> tuple[ProjectIndex, str]:
    root.mkdir(exist_ok=True)
    (root / "pyproject.toml").write_text("")
    helpers = root / "comm.py"
    helpers.write_text(HELPERS)
    return ProjectIndex([str(helpers)], lambda data, name: True), str(helpers)


def test_only_functions_naming_a_rank_word_pass_the_screen(tmp_path):
    index, path = _index(tmp_path / "proj")
    naming = index.functions_naming(path, RANK_GUARD_WORDS)
    # a global, an environment key, a nested lambda's call: each names a rank word
    assert {"setup", "leader", "from_environment", "nested"} <= naming
    assert "is_cuda_ready" not in naming  # nothing about ranks: its module is never parsed for it
    assert "is_leader" not in naming  # a method is no module-level function


def test_a_changed_module_is_screened_again(tmp_path):
    index, path = _index(tmp_path / "proj")
    assert "is_cuda_ready" not in index.functions_naming(path, RANK_GUARD_WORDS)
    Path(path).write_text(HELPERS.replace("return True", "return dist.get_rank() >= 0 and True  # changed"))
    assert "is_cuda_ready" in index.functions_naming(path, RANK_GUARD_WORDS)


# The file names a rank itself (`local_rank`): DDP007 needs a rank word in the file it checks,
# a helper's alone does not let the screen through (a blind spot on the rule's page).
TRAIN = '''
import os
import torch
import torch.distributed as dist
import comm


def main():
    comm.setup()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    metric = torch.zeros(1)
    if comm.leader():
        dist.all_reduce(metric)
    if comm.is_cuda_ready():
        dist.all_reduce(metric)


if __name__ == "__main__":
    main()
'''


def test_the_lever_still_reads_a_helper_the_screen_lets_through(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    found = project_findings(root, {"comm.py": HELPERS, "train.py": TRAIN}, ["DDP007"])
    lines = TRAIN.splitlines()
    assert found == [("train.py", lines.index("        dist.all_reduce(metric)") + 1)]
