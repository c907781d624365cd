"""DDP005 on shapes seen in the ecosystem check: GPU work in the launching process after its workers
finish, and in methods of an object only one rank builds. Each is checked on what the rule must
leave alone and on the nearest case it must still flag. Written in our own words."""

from __future__ import annotations

from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import RULES_BY_CODE
from rule_snippets import write_files


def _project_findings(root: Path, code: str) -> list[tuple[str, int]]:
    found = lint_paths([str(root)], [RULES_BY_CODE[code]])
    return sorted((Path(d.filename).name, d.location.row) for d in found if d.code == code)


# -- DDP005: the launcher process of a project helper that spawns its own workers ---------------

_LAUNCHER_MODULE = """
import torch
import torch.distributed as dist


def _worker(local_rank, cfg):
    dist.init_process_group("nccl", rank=local_rank, world_size=cfg.procs)
    torch.cuda.set_device(local_rank)
    run_engine(cfg)


def launch_workers(cfg):
    torch.multiprocessing.spawn(_worker, nprocs=cfg.procs, args=(cfg,))
"""


def test_gpu_work_in_the_launcher_process_after_the_workers_finish_is_left_alone(tmp_path):
    write_files(
        tmp_path,
        {
            "launcher.py": _LAUNCHER_MODULE,
            "knn_tool.py": """
            import torch
            from launcher import launch_workers

            def score(cfg):
                feats = torch.load(cfg.features)
                return feats.cuda().t() @ feats.cuda()

            def main(cfg):
                launch_workers(cfg)  # workers extract the features, then exit
                return score(cfg)    # the k-NN runs here, in the one launcher process
            """,
        },
    )
    assert _project_findings(tmp_path, "DDP005") == []


def test_launcher_that_runs_a_function_of_the_caller_in_every_worker_still_flags(tmp_path):
    # The helper spawns a worker of its own that calls back the function it was given: that
    # function runs on every rank, so its bare .cuda() without set_device is the bug.
    write_files(
        tmp_path,
        {
            "launcher.py": """
            import torch
            import torch.distributed as dist

            def _worker(local_rank, fn, procs):
                dist.init_process_group("nccl", rank=local_rank, world_size=procs)
                fn()

            def launch_workers(fn, procs):
                torch.multiprocessing.spawn(_worker, nprocs=procs, args=(fn, procs))
            """,
            "train.py": """
            import torch
            from launcher import launch_workers

            def train():
                model = build().cuda()
                model(batch.cuda())

            if __name__ == "__main__":
                launch_workers(train, 4)
            """,
        },
    )
    assert _project_findings(tmp_path, "DDP005") == [("train.py", 5)]


def test_project_helper_that_joins_the_group_in_process_still_flags(tmp_path):
    write_files(
        tmp_path,
        {
            "dist_utils.py": """
            import torch.distributed as dist

            def setup():
                dist.init_process_group("nccl")
            """,
            "train.py": """
            import torch
            from dist_utils import setup

            setup()
            model = build().cuda()
            """,
        },
    )
    assert _project_findings(tmp_path, "DDP005") == [("train.py", 5)]


# -- DDP005: methods of an object only one rank builds ------------------------------------------

_RPC_AGENT = """
import torch
import torch.distributed.rpc as rpc
import torch.multiprocessing as mp


class Learner:
    def __init__(self, world_size):
        self.net = Policy().cuda()

    @staticmethod
    def act(learner_rref, state):
        self = learner_rref.local_value()
        return self.net(state.cuda())


class Actor:
    def step(self, learner_rref, state):
        return rpc.rpc_sync(learner_rref.owner(), Learner.act, args=(learner_rref, state))


def run(rank, world_size):
    if rank == 0:
        rpc.init_rpc("learner", rank=rank, world_size=world_size)
        learner = Learner(world_size)
    else:
        rpc.init_rpc(f"actor{rank}", rank=rank, world_size=world_size)
    rpc.shutdown()


if __name__ == "__main__":
    mp.spawn(run, args=(4,), nprocs=4)
"""


def test_gpu_in_methods_of_an_object_only_rank_zero_builds_is_left_alone(lint):
    assert lint(_RPC_AGENT, ["DDP005"]) == []


def test_object_built_by_every_rank_still_flags(lint):
    every_rank = _RPC_AGENT.replace(
        "        learner = Learner(world_size)\n    else:\n",
        "        pass\n    else:\n",
    ).replace("    rpc.shutdown()", "    learner = Learner(world_size)\n    rpc.shutdown()")
    assert "learner = Learner(world_size)\n    rpc.shutdown()" in every_rank
    assert lint(every_rank, ["DDP005"]) == [(8, "DDP005")]


def test_object_of_a_class_other_classes_derive_from_is_not_assumed_single(lint):
    derived = _RPC_AGENT.replace(
        "class Actor:", "class FastLearner(Learner):\n    pass\n\n\nclass Actor:"
    ).replace("    rpc.shutdown()", "    FastLearner(world_size)\n    rpc.shutdown()")
    assert lint(derived, ["DDP005"]) == [(8, "DDP005")]
