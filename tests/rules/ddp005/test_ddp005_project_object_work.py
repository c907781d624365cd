"""DDP005: current-device work that a program reaches through an object of a project class.

A program that starts NCCL and never makes its rank's GPU current often leaves the GPU work to a
trainer class in another module: its constructor keeps `torch.device("cuda")` on the instance and
moves the model there, or a `fit()` method calls `.cuda()`. Both run on GPU 0 in every rank. The
trainer module's summary records the constructor's work (following the device value through the
instance) and each public method's work (`Trainer.fit`), and the program's `Trainer(...)` and
`trainer.fit()` count as its own current-device work.
"""

from __future__ import annotations

from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import select_rules
from rule_snippets import line_of, write_files

DDP005 = select_rules(["DDP005"])

DEVICE_IN_CONSTRUCTOR = """
    import torch

    class Runner:
        def __init__(self, net, batches):
            self.device = torch.device("cuda")
            self.net = net.to(self.device)
            self.batches = batches

        def run(self):
            for batch in self.batches:
                self.net(batch.to(self.device)).mean().backward()
    """

CUDA_IN_METHOD = """
    import torch

    class Runner:
        def __init__(self, net):
            self.net = net

        def run(self, batches):
            self.net.cuda()
            for batch in batches:
                self.net(batch.cuda()).mean().backward()

        def _log(self, text):
            print(text)
    """

PROGRAM = """
    import torch
    import torch.distributed as dist
    from runner import Runner

    def main():
        dist.init_process_group(backend="nccl")
        runner = Runner(torch.nn.Linear(3, 3), [torch.ones(2, 3)])
        runner.run()

    if __name__ == "__main__":
        main()
    """

METHOD_PROGRAM = """
    import torch
    import torch.distributed as dist
    from runner import Runner

    def main():
        dist.init_process_group(backend="nccl")
        runner = Runner(torch.nn.Linear(3, 3))
        runner.run([torch.ones(2, 3)])

    if __name__ == "__main__":
        main()
    """


def _findings(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    write_files(tmp_path, files)
    return [(Path(d.filename).name, d.location.row, d.message) for d in lint_paths([str(tmp_path)], rules=DDP005)]


def test_constructor_moving_to_a_cuda_device_value_is_flagged_at_the_group_start(tmp_path: Path):
    found = _findings(tmp_path, {"runner.py": DEVICE_IN_CONSTRUCTOR, "main.py": PROGRAM})
    assert [(name, row) for name, row, _ in found] == [("main.py", line_of(PROGRAM, "init_process_group"))]
    assert "Runner() works on the current device (runner.py:" in found[0][2]


def test_constructor_moving_to_a_cuda_device_value_is_left_alone_when_the_program_sets_the_device(tmp_path: Path):
    program = PROGRAM.replace(
        'dist.init_process_group(backend="nccl")',
        'dist.init_process_group(backend="nccl")\n        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))',
    ).replace("import torch\n", "import os\n    import torch\n", 1)
    assert _findings(tmp_path, {"runner.py": DEVICE_IN_CONSTRUCTOR, "main.py": program}) == []


def test_constructor_moving_to_a_rank_device_handed_in_is_left_alone(tmp_path: Path):
    runner = DEVICE_IN_CONSTRUCTOR.replace("def __init__(self, net, batches):", "def __init__(self, net, batches, device):")
    runner = runner.replace('self.device = torch.device("cuda")', "self.device = device")
    program = PROGRAM.replace("[torch.ones(2, 3)])", "[torch.ones(2, 3)], torch.device('cuda', rank))")
    program = program.replace('dist.init_process_group(backend="nccl")', 'dist.init_process_group(backend="nccl")\n        rank = dist.get_rank()')
    found = _findings(tmp_path, {"runner.py": runner, "main.py": program})
    # The rank's device is never made current (its own finding), but the runner is not blamed.
    assert all("Runner" not in message for _, _, message in found)


def test_method_of_a_project_object_working_on_the_current_device_is_flagged(tmp_path: Path):
    found = _findings(tmp_path, {"runner.py": CUDA_IN_METHOD, "main.py": METHOD_PROGRAM})
    assert [(name, row) for name, row, _ in found] == [("main.py", line_of(METHOD_PROGRAM, "init_process_group"))]
    assert "runner.run() works on the current device (runner.py:" in found[0][2]


def test_method_called_on_an_object_built_in_place_is_flagged(tmp_path: Path):
    program = METHOD_PROGRAM.replace(
        "runner = Runner(torch.nn.Linear(3, 3))\n        runner.run([torch.ones(2, 3)])",
        "Runner(torch.nn.Linear(3, 3)).run([torch.ones(2, 3)])",
    )
    found = _findings(tmp_path, {"runner.py": CUDA_IN_METHOD, "main.py": program})
    assert [(name, row) for name, row, _ in found] == [("main.py", line_of(program, "init_process_group"))]


def test_method_called_after_the_device_is_set_is_left_alone(tmp_path: Path):
    program = METHOD_PROGRAM.replace(
        "runner.run([torch.ones(2, 3)])",
        'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n        runner.run([torch.ones(2, 3)])',
    ).replace("import torch\n", "import os\n    import torch\n", 1)
    assert _findings(tmp_path, {"runner.py": CUDA_IN_METHOD, "main.py": program}) == []


def test_method_called_before_the_device_is_set_is_flagged_as_late(tmp_path: Path):
    program = METHOD_PROGRAM.replace(
        "runner.run([torch.ones(2, 3)])",
        'runner.run([torch.ones(2, 3)])\n        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))',
    ).replace("import torch\n", "import os\n    import torch\n", 1)
    found = _findings(tmp_path, {"runner.py": CUDA_IN_METHOD, "main.py": program})
    assert len(found) == 1 and "made current only later" in found[0][2]


def test_method_naming_the_rank_device_is_left_alone(tmp_path: Path):
    runner = CUDA_IN_METHOD.replace("def __init__(self, net):", "def __init__(self, net, rank):")
    runner = runner.replace("self.net = net", "self.net = net\n            self.rank = rank")
    runner = runner.replace("self.net.cuda()", "self.net.cuda(self.rank)").replace("batch.cuda()", "batch.cuda(self.rank)")
    program = METHOD_PROGRAM.replace("Runner(torch.nn.Linear(3, 3))", "Runner(torch.nn.Linear(3, 3), dist.get_rank())")
    assert _findings(tmp_path, {"runner.py": runner, "main.py": program}) == []


def test_private_method_is_not_offered(tmp_path: Path):
    runner = CUDA_IN_METHOD.replace("def run(self, batches):", "def _run(self, batches):")
    program = METHOD_PROGRAM.replace("runner.run(", "runner._run(")
    assert _findings(tmp_path, {"runner.py": runner, "main.py": program}) == []
