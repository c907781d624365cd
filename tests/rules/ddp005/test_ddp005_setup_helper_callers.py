"""DDP005: a set-up helper module starts the NCCL group, and the modules that call it make no
device current either.

A helper that only starts the group is left alone by itself (the program that imports it may set
the device after calling it). When the project shows who calls it on every rank and none of those
modules sets the device (directly or through another project helper), nobody does: the current
device stays GPU 0 in every rank, and the finding goes to the group start, where the
`set_device` belongs.
"""

from __future__ import annotations

from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import select_rules
from rule_snippets import write_files

DDP005 = select_rules(["DDP005"])

HELPER = """
    import os
    import torch.distributed as dist

    def setup(config):
        config["local_rank"] = int(os.environ.get("LOCAL_RANK", 0))
        dist.init_process_group(backend="nccl", init_method="env://")

    def synchronize():
        dist.barrier()
    """


def _findings(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int]]:
    write_files(tmp_path, files)
    return [(Path(d.filename).name, d.location.row) for d in lint_paths([str(tmp_path)], rules=DDP005)]


def test_helper_whose_callers_never_set_the_device_is_flagged_at_the_group_start(tmp_path: Path):
    main = """
        import distutils_helper as du

        def run(config):
            du.setup(config)
            trainer = build_trainer(config)
            trainer.train()
            du.synchronize()

        if __name__ == "__main__":
            run({})
        """
    found = _findings(tmp_path, {"distutils_helper.py": HELPER, "main.py": main})
    assert found == [("distutils_helper.py", 6)]


def test_helper_whose_caller_sets_the_device_is_left_alone(tmp_path: Path):
    main = """
        import torch
        import distutils_helper as du

        def run(config):
            du.setup(config)
            torch.cuda.set_device(config["local_rank"])
            du.synchronize()

        if __name__ == "__main__":
            run({})
        """
    assert _findings(tmp_path, {"distutils_helper.py": HELPER, "main.py": main}) == []


def test_helper_whose_caller_sets_the_device_through_another_helper_is_left_alone(tmp_path: Path):
    devices = """
        import os
        import torch

        def pin_gpu():
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        """
    main = """
        import distutils_helper as du
        from devices import pin_gpu

        def run(config):
            du.setup(config)
            pin_gpu()

        if __name__ == "__main__":
            run({})
        """
    files = {"distutils_helper.py": HELPER, "devices.py": devices, "main.py": main}
    assert _findings(tmp_path, files) == []


def test_helper_that_no_module_calls_is_left_alone(tmp_path: Path):
    # a library's set-up function: its users, not in view, may set the device
    assert _findings(tmp_path, {"distutils_helper.py": HELPER}) == []


def test_helper_called_only_on_rank_zero_is_left_alone(tmp_path: Path):
    main = """
        import torch.distributed as dist
        import distutils_helper as du

        def run(config):
            if dist.get_rank() == 0:
                du.setup(config)

        if __name__ == "__main__":
            run({})
        """
    # not a call every rank makes: no caller is seen on the ranks, so nothing is concluded
    assert _findings(tmp_path, {"distutils_helper.py": HELPER, "main.py": main}) == []


def test_helper_starting_only_a_gloo_group_is_left_alone(tmp_path: Path):
    helper = """
        import torch.distributed as dist

        def setup():
            dist.init_process_group(backend="gloo")
        """
    main = """
        import helper

        if __name__ == "__main__":
            helper.setup()
        """
    assert _findings(tmp_path, {"helper.py": helper, "main.py": main}) == []


def test_helper_imported_as_a_submodule_of_its_package_is_judged_by_its_callers(tmp_path: Path):
    main = """
        from common import distutils_helper

        class Runner:
            def __call__(self, config):
                distutils_helper.setup(config)
                distutils_helper.synchronize()

        if __name__ == "__main__":
            Runner()({})
        """
    files = {"common/__init__.py": "", "common/distutils_helper.py": HELPER, "main.py": main}
    assert _findings(tmp_path, files) == [("distutils_helper.py", 6)]
