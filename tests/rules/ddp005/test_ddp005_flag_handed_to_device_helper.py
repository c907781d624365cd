"""DDP005: a `--local_rank` option (default 0) handed to a project helper that picks the GPU with it.

The entry script never places anything with the option itself: it passes the value to a set-up
function of another module (`init_dist(args.local_rank)`, or one chosen by launcher name with
`getattr(dist_utils, "init_dist_%s" % args.launcher)`), and that function calls
`torch.cuda.set_device(local_rank % torch.cuda.device_count())`. torchrun never passes the option,
so every rank hands the helper 0 and all of them work on GPU 0.
"""

from __future__ import annotations

from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import select_rules
from rule_snippets import write_files

DDP005 = select_rules(["DDP005"])

DIST_UTILS = """
    import os
    import torch
    import torch.distributed as dist

    def init_dist(local_rank, backend="nccl"):
        if dist.is_initialized():
            return
        torch.cuda.set_device(local_rank % torch.cuda.device_count())
        dist.init_process_group(backend=backend)

    def init_dist_cluster(port, local_rank, backend="nccl"):
        task = int(os.environ["CLUSTER_TASK_ID"])
        torch.cuda.set_device(task % torch.cuda.device_count())
        dist.init_process_group(backend=backend)
        return dist.get_world_size(), dist.get_rank()

    def init_dist_torchrun(port, local_rank, backend="nccl"):
        torch.cuda.set_device(local_rank % torch.cuda.device_count())
        dist.init_process_group(backend=backend)
        return dist.get_world_size(), dist.get_rank()

    def init_dist_env(local_rank, backend="nccl"):
        local_rank = int(os.environ.get("LOCAL_RANK", local_rank))
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend=backend)

    def init_group(local_rank, backend="nccl"):
        print("starting rank", local_rank)
        dist.init_process_group(backend=backend)
    """

DIRECT = """
    import argparse
    from dist_utils import init_dist

    class Settings:
        pass

    def parse():
        parser = argparse.ArgumentParser()
        parser.add_argument("--config")
        parser.add_argument("--local_rank", type=int, default=0)
        return parser.parse_args()

    def main():
        args = parse()
        cfg = Settings()
        cfg.local_rank = args.local_rank
        init_dist(cfg.local_rank)

    if __name__ == "__main__":
        main()
    """

BY_LAUNCHER_NAME = """
    import argparse
    import dist_utils
    import torch

    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--launcher", choices=["none", "torchrun", "cluster"], default="none")
        parser.add_argument("--port", type=int, default=29500)
        parser.add_argument("--local_rank", type=int, default=0)
        args = parser.parse_args()
        if args.launcher == "none":
            distributed = False
        else:
            distributed = True
            world, rank = getattr(dist_utils, "init_dist_%s" % args.launcher)(args.port, args.local_rank, backend="nccl")
        model = torch.nn.Linear(2, 2).cuda()

    if __name__ == "__main__":
        main()
    """


def _ddp005(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int]]:
    write_files(tmp_path, files)
    return [(Path(d.filename).name, d.location.row) for d in lint_paths([str(tmp_path)], rules=DDP005)]


def test_flag_handed_to_a_helper_that_sets_the_device_with_it_is_flagged(tmp_path: Path):
    found = _ddp005(tmp_path, {"dist_utils.py": DIST_UTILS, "train.py": DIRECT})
    assert found == [("train.py", 10)]


def test_flag_handed_to_a_helper_picked_by_launcher_name_is_flagged(tmp_path: Path):
    found = _ddp005(tmp_path, {"dist_utils.py": DIST_UTILS, "test.py": BY_LAUNCHER_NAME})
    assert found == [("test.py", 9)]  # the helpers do make a device current: `.cuda()` is not reported


def test_flag_whose_default_reads_local_rank_is_left_alone(tmp_path: Path):
    program = DIRECT.replace(
        "import argparse",
        "import argparse\n    import os",
    ).replace("default=0)", 'default=int(os.environ.get("LOCAL_RANK", 0)))')
    assert _ddp005(tmp_path, {"dist_utils.py": DIST_UTILS, "train.py": program}) == []


def test_helper_that_reads_local_rank_itself_is_left_alone(tmp_path: Path):
    program = DIRECT.replace("init_dist", "init_dist_env")
    assert _ddp005(tmp_path, {"dist_utils.py": DIST_UTILS, "train.py": program}) == []


def test_helper_that_never_picks_the_device_with_the_flag_is_left_alone(tmp_path: Path):
    # init_group only prints the value; the device is chosen elsewhere (or not at all, which is
    # another finding's business, not the option's).
    program = DIRECT.replace("init_dist", "init_group")
    assert _ddp005(tmp_path, {"dist_utils.py": DIST_UTILS, "train.py": program}) == []


def test_launcher_helpers_that_never_use_the_flag_for_a_device_are_left_alone(tmp_path: Path):
    # Every helper the name may pick makes the rank's device current from the environment, so
    # neither the option nor the `.cuda()` after the call is a problem.
    helpers = DIST_UTILS.replace(
        "torch.cuda.set_device(local_rank % torch.cuda.device_count())\n        dist.init_process_group(backend=backend)\n        return",
        'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))\n        dist.init_process_group(backend=backend)\n        return',
    )
    assert "init_dist_torchrun(port, local_rank" in helpers and 'set_device(int(os.environ["LOCAL_RANK"]))' in helpers
    assert _ddp005(tmp_path, {"dist_utils.py": helpers, "test.py": BY_LAUNCHER_NAME}) == []


def test_flag_handed_by_keyword_through_the_module_is_flagged(tmp_path: Path):
    program = """
        import argparse
        import dist_utils

        parser = argparse.ArgumentParser()
        parser.add_argument("--local-rank", type=int, default=0)
        opts = parser.parse_args()
        rank = opts.local_rank
        dist_utils.init_dist(backend="nccl", local_rank=rank)
        """
    assert _ddp005(tmp_path, {"dist_utils.py": DIST_UTILS, "launch.py": program}) == [("launch.py", 5)]
