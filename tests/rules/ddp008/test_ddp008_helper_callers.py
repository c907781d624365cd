"""DDP008 in a helper module with no distributed code of its own: its loads run in every rank
when a distributed module of the project calls it there; and a load on the GPU arm of
`if torch.cuda.is_available():` whose other arm maps to the CPU."""

from __future__ import annotations

from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import select_rules
from project_support import RESTORING_TRAIN_SCRIPT, project_findings

HELPER = """\
import torch


def restore(model, path):
    state = torch.load(path)
    model.load_state_dict(state)
"""


def _project(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int]]:
    return project_findings(tmp_path, files, ["DDP008"])


def test_helper_called_on_every_rank_is_flagged(tmp_path):
    assert _project(tmp_path, {"helpers.py": HELPER, "train.py": RESTORING_TRAIN_SCRIPT}) == [("helpers.py", 5)]


def test_helper_reached_through_a_package_reexport_is_flagged(tmp_path):
    caller = RESTORING_TRAIN_SCRIPT.replace("from helpers import restore", "from pkg import restore")
    files = {"pkg/__init__.py": "from .helpers import restore\n", "pkg/helpers.py": HELPER, "train.py": caller}
    assert _project(tmp_path, files) == [("pkg/helpers.py", 5)]


def test_helper_reached_by_another_function_of_its_module_is_flagged(tmp_path):
    helper = HELPER + "\n\ndef resume(model, folder):\n    restore(model, folder + '/last.pt')\n"
    caller = RESTORING_TRAIN_SCRIPT.replace("restore", "resume")
    assert _project(tmp_path, {"helpers.py": helper, "train.py": caller}) == [("helpers.py", 5)]


def test_helper_called_only_by_a_single_process_script_is_left_alone(tmp_path):
    caller = """\
    import torch
    from helpers import restore

    model = torch.nn.Linear(4, 4).cuda()
    restore(model, "last.pt")
    """
    assert _project(tmp_path, {"helpers.py": HELPER, "evaluate.py": caller}) == []


def test_helper_called_by_rank_zero_only_is_left_alone(tmp_path):
    caller = RESTORING_TRAIN_SCRIPT.replace(
        '    restore(model, "last.pt")', '    if dist.get_rank() == 0:\n        restore(model, "last.pt")'
    )
    assert _project(tmp_path, {"helpers.py": HELPER, "train.py": caller}) == []


def test_helper_nobody_calls_is_left_alone(tmp_path):
    caller = RESTORING_TRAIN_SCRIPT.replace("from helpers import restore", "from helpers import restore as _unused").replace(
        '    restore(model, "last.pt")', "    pass"
    )
    assert _project(tmp_path, {"helpers.py": HELPER, "train.py": caller}) == []


def test_helper_mapping_its_load_is_left_alone(tmp_path):
    helper = HELPER.replace("torch.load(path)", 'torch.load(path, map_location="cpu")')
    assert _project(tmp_path, {"helpers.py": helper, "train.py": RESTORING_TRAIN_SCRIPT}) == []


GPU_ARM = """
import torch
import torch.distributed as dist

dist.init_process_group("nccl")

def restore(path, gpu):
    if TEST:
        state = torch.load(pathFIRST)
    else:
        state = torch.load(pathSECOND)
    return state

restore("last.pt", None)
"""


def _gpu_arm(lint, test: str, first: str, second: str) -> list[tuple[int, str]]:
    source = GPU_ARM.replace("TEST", test).replace("FIRST", first).replace("SECOND", second)
    return lint(source, select=["DDP008"])


def test_load_on_the_cuda_arm_beside_a_cpu_fallback_is_flagged(lint):
    assert _gpu_arm(lint, "torch.cuda.is_available()", "", ', map_location="cpu"') == [(8, "DDP008")]


def test_load_on_the_cuda_arm_of_a_negated_test_is_flagged(lint):
    assert _gpu_arm(lint, "not torch.cuda.is_available()", ', map_location="cpu"', "") == [(10, "DDP008")]


def test_load_beside_a_per_rank_mapping_is_left_alone(lint):
    assert _gpu_arm(lint, "gpu is None", "", ', map_location=f"cuda:{gpu}"') == []


def test_cached_helper_is_judged_again_when_its_caller_changes(tmp_path):
    """The helper's result depends on the module that calls it: a cached answer from when the
    caller ran in one process must not outlive the caller becoming distributed."""
    from ddplint.cache import ResultCache

    single = """\
    import torch
    from helpers import restore

    model = torch.nn.Linear(4, 4).cuda()
    restore(model, "last.pt")
    """
    project = tmp_path / "project"
    project.mkdir()
    rules = select_rules(["DDP008"])

    def run() -> list[str]:
        cache = ResultCache(tmp_path / "cache", "DDP008")
        found = [Path(d.filename).name for d in lint_paths([str(project)], rules, jobs=1, cache=cache)]
        assert cache.save() is None
        return found

    assert _project(project, {"helpers.py": HELPER, "train.py": single}) == []
    assert run() == []
    (project / "train.py").write_text(RESTORING_TRAIN_SCRIPT + "\n# now distributed\n")
    assert run() == ["helpers.py"]


def test_a_caller_that_does_not_parse_costs_the_helper_nothing(tmp_path):
    broken = "from helpers import restore\nrestore(model, 'a.pt'\ndef (:\n"
    found = _project(tmp_path, {"helpers.py": HELPER, "train.py": RESTORING_TRAIN_SCRIPT, "broken.py": broken})
    assert ("helpers.py", 5) in found
    assert all(name in ("helpers.py", "broken.py") for name, _ in found)
