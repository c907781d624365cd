"""DDP008 on a load in an arm of `if engine_file is not None:` (or `if engine_file:`) on a
parameter: whether a rank ever takes that arm is decided by the values the project's callers pass
(analysis/caller_values.py). The load is left alone when every caller leaves the parameter at its
None default or passes a value it only makes on the single-process path, and flagged as soon as
one caller hands it a value a rank can have."""

from __future__ import annotations

from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import select_rules
from project_support import RESTORING_TRAIN_SCRIPT, project_findings

SCORER = """\
import torch
import torch.distributed as dist


class Scorer:
    def __init__(self, batches):
        self.batches = batches

    def score(self, net, engine_file=None, half=False):
        if engine_file is not None:
            net.load_state_dict(torch.load(engine_file))
        total = sum(float(net(x).sum()) for x in self.batches)
        dist.all_reduce(torch.tensor([total]))
        return total
"""

# The launcher always runs this with torchrun; the engine file is only made after the script has
# asserted that it runs as one process.
SINGLE_PROCESS_ONLY_CALLER = """\
import argparse
import os
import torch
import torch.distributed as dist
from scoring import Scorer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", action="store_true")
    args = parser.parse_args()
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        dist.init_process_group("nccl")
    net = torch.nn.Linear(4, 4).cuda()
    scorer = make_scorer()
    if args.engine:
        assert not distributed, "the engine runs in one process"
        engine_file = os.path.join("out", "engine.pth")
    else:
        engine_file = None
    scorer.score(net, engine_file)


def make_scorer():
    return Scorer([torch.ones(2, 4)])


if __name__ == "__main__":
    main()
"""

TRAINING_CALLER = """\
import os
import torch
import torch.distributed as dist
from scoring import Scorer


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    net = torch.nn.Linear(4, 4).cuda()
    scorer = Scorer([torch.ones(2, 4)])
    for epoch in range(3):
        scorer.score(net, half=True)


if __name__ == "__main__":
    main()
"""


def _project(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int]]:
    return project_findings(tmp_path, files, ["DDP008"])


def test_arm_no_caller_enters_in_a_rank_is_left_alone(tmp_path):
    files = {"scoring.py": SCORER, "evaluate.py": SINGLE_PROCESS_ONLY_CALLER, "train.py": TRAINING_CALLER}
    assert _project(tmp_path, files) == []


def test_arm_a_rank_enters_with_a_file_from_the_command_line_is_flagged(tmp_path):
    caller = SINGLE_PROCESS_ONLY_CALLER.replace('        assert not distributed, "the engine runs in one process"\n', "")
    assert _project(tmp_path, {"scoring.py": SCORER, "evaluate.py": caller}) == [("scoring.py", 11)]


def test_caller_passing_a_file_by_keyword_is_flagged(tmp_path):
    caller = TRAINING_CALLER.replace("scorer.score(net, half=True)", 'scorer.score(net, engine_file="best.pth")')
    assert _project(tmp_path, {"scoring.py": SCORER, "train.py": caller}) == [("scoring.py", 11)]


def test_truthiness_test_with_only_default_callers_is_left_alone(tmp_path):
    scorer = SCORER.replace("if engine_file is not None:", "if engine_file:")
    assert _project(tmp_path, {"scoring.py": scorer, "train.py": TRAINING_CALLER}) == []


def test_method_handed_on_as_a_callback_is_flagged(tmp_path):
    """`hooks.append(scorer.score)`: callers the project cannot see may pass a file."""
    caller = TRAINING_CALLER.replace(
        "    for epoch in range(3):", "    hooks = [scorer.score]\n    for epoch in range(3):"
    )
    assert _project(tmp_path, {"scoring.py": SCORER, "train.py": caller}) == [("scoring.py", 11)]


def test_method_nobody_in_the_project_calls_is_flagged(tmp_path):
    """A library's public method: its callers are outside the project."""
    caller = TRAINING_CALLER.replace("        scorer.score(net, half=True)\n", "        pass\n")
    assert _project(tmp_path, {"scoring.py": SCORER, "train.py": caller}) == [("scoring.py", 11)]


def test_caller_forwarding_its_own_parameter_is_flagged(tmp_path):
    """`run(net, scorer, engine_file)` hands on what its own callers (none in the project) give."""
    runner = "def run(net, scorer, engine_file):\n    return scorer.score(net, engine_file)\n"
    files = {"scoring.py": SCORER, "train.py": TRAINING_CALLER, "runner.py": runner}
    assert _project(tmp_path, files) == [("scoring.py", 11)]


def test_caller_passing_what_its_in_file_caller_gives_from_the_command_line_is_flagged(tmp_path):
    caller = TRAINING_CALLER.replace("def main():", "def main(engine_file):").replace(
        "scorer.score(net, half=True)", "scorer.score(net, engine_file)"
    ).replace("    main()", "    main(os.environ.get('ENGINE'))")
    assert _project(tmp_path, {"scoring.py": SCORER, "train.py": caller}) == [("scoring.py", 11)]


def test_caller_passing_what_its_in_file_caller_leaves_at_none_is_left_alone(tmp_path):
    caller = TRAINING_CALLER.replace("def main():", "def main(engine_file=None):").replace(
        "scorer.score(net, half=True)", "scorer.score(net, engine_file)"
    )
    assert _project(tmp_path, {"scoring.py": SCORER, "train.py": caller}) == []


def test_parameter_rebound_in_the_function_is_flagged(tmp_path):
    scorer = SCORER.replace(
        "        if engine_file is not None:", '        engine_file = engine_file or "cached.pth"\n        if engine_file is not None:'
    )
    assert _project(tmp_path, {"scoring.py": scorer, "train.py": TRAINING_CALLER}) == [("scoring.py", 12)]


def test_cached_result_follows_a_caller_that_starts_passing_a_file(tmp_path):
    """The helper's answer depends on its callers: a cached run must see a caller change."""
    from ddplint.cache import ResultCache

    files = {"scoring.py": SCORER, "train.py": TRAINING_CALLER}
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")

    def cached_run() -> list[tuple[str, int]]:  # a fresh run each time, as from the command line
        cache = ResultCache(tmp_path / ".cache", "k")
        found = lint_paths([str(tmp_path / "src")], select_rules(["DDP008"]), jobs=1, cache=cache)
        result = sorted((Path(d.filename).name, d.location.row) for d in found)
        cache.save()
        return result

    (tmp_path / "src").mkdir()
    for name, text in files.items():
        (tmp_path / "src" / name).write_text(text)
    assert cached_run() == []
    changed = TRAINING_CALLER.replace("scorer.score(net, half=True)", 'scorer.score(net, engine_file="best.pth")')
    (tmp_path / "src" / "train.py").write_text(changed)
    assert cached_run() == [("scoring.py", 11)]


ELSE_ARM_SCORER = SCORER.replace(
    """        if engine_file is not None:
            net.load_state_dict(torch.load(engine_file))
""",
    """        if engine_file is None:
            net.eval()
        else:
            net.load_state_dict(torch.load(engine_file))
""",
)


def test_else_arm_of_a_none_test_no_caller_enters_is_left_alone(tmp_path):
    assert _project(tmp_path, {"scoring.py": ELSE_ARM_SCORER, "train.py": TRAINING_CALLER}) == []


def test_body_arm_of_a_none_test_runs_with_the_default_and_is_flagged(tmp_path):
    """`if engine_file is None: torch.load("default.pth")`: the arm every default caller takes."""
    scorer = ELSE_ARM_SCORER.replace("            net.eval()\n", '            net.load_state_dict(torch.load("default.pth"))\n')
    assert _project(tmp_path, {"scoring.py": scorer, "train.py": TRAINING_CALLER}) == [("scoring.py", 11)]


def test_method_called_through_its_class_with_a_file_is_flagged(tmp_path):
    """`Scorer.score(scorer, net, "best.pth")`: the object is the first argument, the file the third."""
    caller = TRAINING_CALLER.replace("scorer.score(net, half=True)", 'Scorer.score(scorer, net, "best.pth")')
    assert _project(tmp_path, {"scoring.py": SCORER, "train.py": caller}) == [("scoring.py", 11)]


def test_static_method_called_through_an_object_with_a_file_is_flagged(tmp_path):
    scorer = SCORER.replace("    def score(self, net, engine_file=None, half=False):", "    @staticmethod\n    def score(net, engine_file=None, half=False):")
    scorer = scorer.replace("self.batches", "[]")
    caller = TRAINING_CALLER.replace("scorer.score(net, half=True)", 'scorer.score(net, "best.pth")')
    assert _project(tmp_path, {"scoring.py": scorer, "train.py": caller}) == [("scoring.py", 12)]


def test_checking_the_helper_alone_gives_the_project_answer(tmp_path):
    """`ddplint scoring.py` reads its callers from the project as `ddplint .` does."""
    files = {"scoring.py": SCORER, "evaluate.py": SINGLE_PROCESS_ONLY_CALLER, "train.py": TRAINING_CALLER}
    assert _project(tmp_path, files) == []
    alone = lint_paths([str(tmp_path / "scoring.py")], select_rules(["DDP008"]), jobs=1)
    assert [(d.location.row, d.code) for d in alone] == []
    caller = TRAINING_CALLER.replace("scorer.score(net, half=True)", 'scorer.score(net, engine_file="best.pth")')
    (tmp_path / "train.py").write_text(caller)
    alone = lint_paths([str(tmp_path / "scoring.py")], select_rules(["DDP008"]), jobs=1)
    assert [(d.location.row, d.code) for d in alone] == [(11, "DDP008")]


FORWARDING_HELPER = """\
import torch


def restore(model, path, map_location=None):
    state = torch.load(path, map_location=map_location)
    model.load_state_dict(state)
"""


def test_map_location_handed_on_that_every_caller_leaves_at_none_is_flagged(tmp_path):
    assert _project(tmp_path, {"helpers.py": FORWARDING_HELPER, "train.py": RESTORING_TRAIN_SCRIPT}) == [("helpers.py", 5)]


def test_map_location_handed_on_that_a_caller_sets_is_left_alone(tmp_path):
    caller = RESTORING_TRAIN_SCRIPT.replace('restore(model, "last.pt")', 'restore(model, "last.pt", map_location="cpu")')
    assert _project(tmp_path, {"helpers.py": FORWARDING_HELPER, "train.py": caller}) == []


def test_map_location_handed_on_by_a_helper_nobody_calls_is_left_alone(tmp_path):
    """A library's public helper: its users pick the map_location."""
    assert _project(tmp_path, {"helpers.py": FORWARDING_HELPER}) == []
