"""DDP005: the current CUDA device handed over by a project function (`device = get_device()`).

A helper module's `get_device()` that returns `torch.device("cuda")` (or `"cuda"` when CUDA is
there) gives every rank the current device, GPU 0 until something makes the rank's own GPU
current. A program that starts NCCL, never sets the device and places its model on what such a
helper returns puts every rank on GPU 0: the placement is reported like a `.to("cuda")` of its own.
"""

from __future__ import annotations

from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import select_rules
from rule_snippets import line_of, write_files

DDP005 = select_rules(["DDP005"])

HELPERS = """
    import torch

    def get_device():
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def device_name():
        name = "cuda"
        return name
    """

PROGRAM = """
    import torch
    import torch.distributed as dist
    from helpers import get_device

    def main():
        dist.init_process_group("nccl")
        device = get_device()
        net = torch.nn.Linear(2, 2).to(device)
        return torch.nn.parallel.DistributedDataParallel(net)

    if __name__ == "__main__":
        main()
    """


def _findings(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    write_files(tmp_path, files)
    return [(Path(d.filename).name, d.location.row, d.message) for d in lint_paths([str(tmp_path)], rules=DDP005)]


def test_placement_on_a_project_function_returning_the_cuda_device_is_flagged(tmp_path: Path):
    found = _findings(tmp_path, {"helpers.py": HELPERS, "main.py": PROGRAM})
    assert [(name, row) for name, row, _ in found] == [("main.py", line_of(PROGRAM, ".to(device)"))]
    assert found[0][2].startswith("get_device() puts every rank on GPU 0")


def test_returned_string_through_a_local_name_is_flagged(tmp_path: Path):
    program = PROGRAM.replace("import get_device", "import device_name").replace("get_device()", "device_name()")
    found = _findings(tmp_path, {"helpers.py": HELPERS, "main.py": program})
    assert [(name, row) for name, row, _ in found] == [("main.py", line_of(program, ".to(device)"))]


def test_helper_that_sets_the_device_before_returning_it_is_left_alone(tmp_path: Path):
    helpers = """
        import os
        import torch

        def get_device():
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
            return torch.device("cuda")
        """
    assert _findings(tmp_path, {"helpers.py": helpers, "main.py": PROGRAM}) == []


def test_helper_returning_the_rank_device_is_not_taken_for_the_current_device(tmp_path: Path):
    helpers = """
        import os
        import torch

        def get_device():
            return torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        """
    found = _findings(tmp_path, {"helpers.py": helpers, "main.py": PROGRAM})
    assert all("get_device() puts" not in message for _, _, message in found)


def test_program_that_sets_the_device_first_is_left_alone(tmp_path: Path):
    program = PROGRAM.replace(
        'dist.init_process_group("nccl")',
        'dist.init_process_group("nccl")\n        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))',
    ).replace("import torch\n", "import os\n    import torch\n", 1)
    assert _findings(tmp_path, {"helpers.py": HELPERS, "main.py": program}) == []


def test_device_set_after_the_placement_is_flagged_as_late(tmp_path: Path):
    program = PROGRAM.replace(
        "net = torch.nn.Linear(2, 2).to(device)",
        'net = torch.nn.Linear(2, 2).to(device)\n        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))',
    ).replace("import torch\n", "import os\n    import torch\n", 1)
    found = _findings(tmp_path, {"helpers.py": HELPERS, "main.py": program})
    assert len(found) == 1 and "made current only later" in found[0][2]


def test_helper_returning_the_cpu_is_left_alone(tmp_path: Path):
    helpers = """
        import torch

        def get_device():
            return torch.device("cpu")
        """
    assert _findings(tmp_path, {"helpers.py": helpers, "main.py": PROGRAM}) == []
