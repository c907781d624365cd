"""DDP005: the current-device work of a program can sit in a project module it calls.

A program that starts NCCL and never makes the rank's GPU current is reported only when some of
its CUDA work uses the current device. That work is often not in the program's own file: a
trainer class in trainer.py builds a DataLoader that pins memory, a helper in utils.py calls
`torch.cuda.synchronize()`. The summary of such a module records the top-level functions and
classes whose code does work on the current device (and never sets a device itself), and the
program's calls of them count as its own work: reported at the group start when nothing sets
the device, and as "made current too late" when the program sets it only after such a call.
"""

from __future__ import annotations

from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import select_rules
from rule_snippets import line_of, write_files

DDP005 = select_rules(["DDP005"])

TRAINER = """
    import os
    import torch
    from torch.utils.data import DataLoader
    from torch.utils.data.distributed import DistributedSampler
    from torch.nn.parallel import DistributedDataParallel as DDP

    class Trainer:
        def __init__(self, model, dataset):
            self.local_rank = int(os.environ["LOCAL_RANK"])
            self.loader = self._loader(dataset)
            self.model = DDP(model.to(self.local_rank), device_ids=[self.local_rank])

        def _loader(self, dataset):
            return DataLoader(dataset, batch_size=8, pin_memory=True, sampler=DistributedSampler(dataset))

        def fit(self, epochs):
            for epoch in range(epochs):
                self.loader.sampler.set_epoch(epoch)
                for x, y in self.loader:
                    self.model(x.to(self.local_rank)).sum().backward()
    """

MAIN = """
    from torch.distributed import init_process_group, destroy_process_group
    from trainer import Trainer

    def setup():
        init_process_group(backend="nccl")

    def main():
        setup()
        trainer = Trainer(build_model(), build_dataset())
        trainer.fit(10)
        destroy_process_group()

    if __name__ == "__main__":
        main()
    """


def _findings(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    write_files(tmp_path, files)
    return [(Path(d.filename).name, d.location.row, d.message) for d in lint_paths([str(tmp_path)], rules=DDP005)]


def test_program_whose_trainer_class_pins_memory_is_flagged_at_the_group_start(tmp_path: Path):
    found = _findings(tmp_path, {"trainer.py": TRAINER, "main.py": MAIN})
    assert [(name, row) for name, row, _ in found] == [("main.py", line_of(MAIN, "init_process_group(backend"))]
    assert "Trainer()" in found[0][2] and "trainer.py" in found[0][2]


def test_trainer_class_that_sets_the_device_itself_is_left_alone(tmp_path: Path):
    trainer = TRAINER.replace(
        'self.local_rank = int(os.environ["LOCAL_RANK"])',
        'self.local_rank = int(os.environ["LOCAL_RANK"])\n            torch.cuda.set_device(self.local_rank)',
    )
    assert _findings(tmp_path, {"trainer.py": trainer, "main.py": MAIN}) == []


def test_program_that_sets_the_device_before_building_the_trainer_is_left_alone(tmp_path: Path):
    main = MAIN.replace(
        'init_process_group(backend="nccl")',
        'init_process_group(backend="nccl")\n        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))',
    ).replace("from trainer import Trainer", "import os\n    import torch\n    from trainer import Trainer")
    assert _findings(tmp_path, {"trainer.py": TRAINER, "main.py": main}) == []


def test_trainer_whose_loader_does_not_pin_memory_is_left_alone(tmp_path: Path):
    trainer = TRAINER.replace("pin_memory=True, ", "")
    assert _findings(tmp_path, {"trainer.py": trainer, "main.py": MAIN}) == []


def test_program_that_sets_the_device_only_after_building_the_trainer_is_flagged(tmp_path: Path):
    main = MAIN.replace(
        "trainer = Trainer(build_model(), build_dataset())",
        'trainer = Trainer(build_model(), build_dataset())\n        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))',
    ).replace("from trainer import Trainer", "import os\n    import torch\n    from trainer import Trainer")
    found = _findings(tmp_path, {"trainer.py": TRAINER, "main.py": main})
    assert [(name, row) for name, row, _ in found] == [("main.py", line_of(main, "init_process_group(backend"))]
    assert "made current only later" in found[0][2]


def test_helper_function_that_synchronizes_the_current_device_counts_as_the_programs_work(tmp_path: Path):
    utils = """
        import torch

        def wait_for_gpu():
            torch.cuda.synchronize()
        """
    main = """
        import os
        import torch
        import torch.distributed as dist
        from utils import wait_for_gpu

        dist.init_process_group("nccl")
        rank = int(os.environ["LOCAL_RANK"])
        model = Net().to(rank)
        wait_for_gpu()
        """
    found = _findings(tmp_path, {"utils.py": utils, "main.py": main})
    assert [(name, row) for name, row, _ in found] == [("main.py", line_of(main, "init_process_group"))]


def test_helper_function_that_names_its_device_is_left_alone(tmp_path: Path):
    utils = """
        import torch

        def wait_for_gpu(device):
            torch.cuda.synchronize(device)
        """
    main = """
        import os
        import torch
        import torch.distributed as dist
        from utils import wait_for_gpu

        dist.init_process_group("nccl")
        rank = int(os.environ["LOCAL_RANK"])
        model = Net().to(rank)
        wait_for_gpu(rank)
        """
    assert _findings(tmp_path, {"utils.py": utils, "main.py": main}) == []


def test_trainer_built_on_rank_zero_only_is_left_alone(tmp_path: Path):
    main = MAIN.replace(
        "trainer = Trainer(build_model(), build_dataset())\n        trainer.fit(10)",
        "if int(os.environ['RANK']) == 0:\n            Trainer(build_model(), build_dataset()).fit(10)",
    ).replace("from trainer import Trainer", "import os\n    from trainer import Trainer")
    assert _findings(tmp_path, {"trainer.py": TRAINER, "main.py": main}) == []


def test_trainer_class_moving_the_model_with_a_bare_cuda_call_counts(tmp_path: Path):
    trainer = TRAINER.replace("pin_memory=True, ", "").replace(
        "DDP(model.to(self.local_rank), device_ids=[self.local_rank])", "DDP(model.cuda())"
    )
    found = _findings(tmp_path, {"trainer.py": trainer, "main.py": MAIN})
    assert [(name, row) for name, row, _ in found] == [("main.py", line_of(MAIN, "init_process_group(backend"))]


def test_trainer_class_moving_the_model_to_a_device_its_caller_hands_in_is_left_alone(tmp_path: Path):
    trainer = (
        TRAINER.replace("pin_memory=True, ", "")
        .replace("def __init__(self, model, dataset):", 'def __init__(self, model, dataset, device="cuda"):')
        .replace("DDP(model.to(self.local_rank), device_ids=[self.local_rank])", "DDP(model.to(device))")
    )
    assert _findings(tmp_path, {"trainer.py": trainer, "main.py": MAIN}) == []



def test_set_device_written_without_importing_torch_still_counts_as_setting_it(tmp_path: Path):
    # The author's intent is plain: `torch` can stand for nothing else (the line raises a
    # NameError until `import torch` is added), so the device is taken as set, not as never set.
    main = """
        import os
        from torch.distributed import init_process_group

        init_process_group(backend="nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        model = Net().cuda()
        """
    assert _findings(tmp_path, {"main.py": main}) == []


def test_torch_bound_to_something_else_is_not_taken_for_torch(tmp_path: Path):
    main = """
        import os
        import numpy as torch
        from torch.distributed import init_process_group

        init_process_group(backend="nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        model = Net().cuda()
        """
    found = _findings(tmp_path, {"main.py": main})
    assert [(name, row) for name, row, _ in found] == [("main.py", line_of(main, "Net().cuda()"))]
