"""DDP005: the function that starts the NCCL group goes on to work on the current device.

Two shapes. A method (or any function) that starts the group and then, in the same run, asks for
the current device or moves something onto it: no caller can make the rank's GPU current between
the two, so in a file that never makes one current that work lands on GPU 0 in every rank. And
the arm of `if not dist.is_initialized():` that starts the group: its test reads like "no
distributed run", yet every rank runs it, so the work in it is rank work.
"""

from __future__ import annotations

from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import select_rules
from rule_snippets import finding_rows, write_files

DDP005 = select_rules(["DDP005"])

ENGINE = """
    import torch
    import torch.distributed as dist

    def spread_weights(net, weights):
        here = torch.cuda.current_device()
        net.to(here)
        dist.broadcast(weights, src=0)

    class Runner:
        def __init__(self, options):
            self.options = options

        def start(self):
            if not dist.is_initialized():
                dist.init_process_group(backend="nccl")
            net = make_net(self.options)
            spread_weights(net, self.options.weights)
            self.net = net
    """


def test_method_that_starts_nccl_then_uses_the_current_device_is_flagged():
    assert finding_rows(ENGINE, "DDP005") == [15]


def test_the_same_method_with_the_device_made_current_after_the_start_is_left_alone():
    fixed = ENGINE.replace(
        'dist.init_process_group(backend="nccl")\n',
        'dist.init_process_group(backend="nccl")\n'
        "            torch.cuda.set_device(self.options.local_rank)\n",
    )
    assert "set_device" in fixed
    assert finding_rows(fixed, "DDP005") == []


def test_current_device_work_in_another_method_than_the_start_is_left_alone():
    # The caller may make the device current between `start()` and `load()`.
    source = """
        import torch
        import torch.distributed as dist

        class Runner:
            def start(self):
                dist.init_process_group(backend="nccl")

            def load(self, net):
                return net.to(torch.cuda.current_device())
        """
    assert finding_rows(source, "DDP005") == []


def test_current_device_work_before_the_start_is_left_alone_here():
    # Before the start the caller may still have made the device current.
    source = """
        import torch
        import torch.distributed as dist

        class Runner:
            def start(self):
                here = torch.cuda.current_device()
                dist.init_process_group(backend="nccl")
                return here
        """
    assert finding_rows(source, "DDP005") == []


def test_gloo_group_then_current_device_work_is_left_alone():
    assert finding_rows(ENGINE.replace('"nccl"', '"gloo"'), "DDP005") == []


def test_work_before_a_late_set_in_the_arm_that_starts_the_group_is_flagged():
    source = """
        import torch
        import torch.distributed as dist

        class Launcher:
            def connect(self, backend, local_rank):
                if not dist.is_initialized():
                    dist.init_process_group(backend=backend)
                    dist.all_reduce(torch.ones(1).cuda())
                torch.cuda.set_device(local_rank)
        """
    assert finding_rows(source, "DDP005") == [7]


def test_the_arm_that_starts_the_group_with_the_device_set_first_is_left_alone():
    source = """
        import torch
        import torch.distributed as dist

        class Launcher:
            def connect(self, backend, local_rank):
                torch.cuda.set_device(local_rank)
                if not dist.is_initialized():
                    dist.init_process_group(backend=backend)
                    dist.all_reduce(torch.ones(1).cuda())
        """
    assert finding_rows(source, "DDP005") == []


def test_gpu0_in_an_arm_without_a_group_is_still_the_single_process_run():
    source = """
        import os
        import torch.distributed as dist

        local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("nccl")

        def place(net):
            if not dist.is_initialized():
                return net.to("cuda:0")
            return net.to(f"cuda:{local_rank}")
        """
    assert finding_rows(source, "DDP005") == []


HELPER = """
    import torch
    import torch.distributed as dist

    def connect():
        dist.init_process_group(backend="nccl")
        dist.barrier()
    """


def _project(tmp_path: Path, main: str) -> list[tuple[str, int]]:
    write_files(tmp_path, {"comm.py": HELPER, "main.py": main})
    return [(Path(d.filename).name, d.location.row) for d in lint_paths([str(tmp_path)], rules=DDP005)]


def test_helper_that_starts_nccl_then_barriers_is_flagged_when_no_caller_sets_the_device(tmp_path: Path):
    main = """
        import comm

        def run():
            comm.connect()
            train()

        if __name__ == "__main__":
            run()
        """
    assert _project(tmp_path, main) == [("comm.py", 5)]


def test_helper_whose_caller_sets_the_device_first_is_left_alone(tmp_path: Path):
    main = """
        import os
        import torch
        import comm

        def run():
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
            comm.connect()
            train()

        if __name__ == "__main__":
            run()
        """
    assert _project(tmp_path, main) == []


WARMING_HELPER = """
    import torch
    import torch.distributed as dist

    def join(options):
        if dist.is_initialized():
            return dist.get_rank()
        else:
            dist.init_process_group(backend=options.backend, rank=options.rank)
            dist.all_reduce(torch.zeros(1).cuda())
        return dist.get_rank()
    """


def _warming_project(tmp_path: Path, main: str) -> list[tuple[str, int]]:
    write_files(tmp_path, {"group.py": WARMING_HELPER, "main.py": main})
    return [(Path(d.filename).name, d.location.row) for d in lint_paths([str(tmp_path)], rules=DDP005)]


def test_warm_up_in_the_arm_that_starts_the_group_is_flagged_when_no_caller_sets_the_device(tmp_path: Path):
    main = """
        import group

        def run(options):
            group.join(options)
            train(options)

        if __name__ == "__main__":
            run(read_options())
        """
    assert _warming_project(tmp_path, main) == [("group.py", 9)]


def test_warm_up_is_left_alone_when_the_caller_sets_the_device_before_joining(tmp_path: Path):
    main = """
        import torch
        import group

        def run(options):
            torch.cuda.set_device(options.device_id)
            group.join(options)
            train(options)

        if __name__ == "__main__":
            run(read_options())
        """
    assert _warming_project(tmp_path, main) == []
