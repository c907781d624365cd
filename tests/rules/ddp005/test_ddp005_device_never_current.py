"""DDP005: the rank's GPU is computed, or an NCCL group started, but no device is ever made current.

Without `torch.cuda.set_device`, the current CUDA device is GPU 0 in every process: work that does
not name a device (the CUDA context, NCCL's barrier, `torch.cuda.synchronize()`) lands there in
every rank even when tensors are placed on `cuda:<local_rank>`.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ddplint.api import lint_paths
from ddplint.rules import select_rules

DDP005 = select_rules(["DDP005"])


def ddp005_lines(lint, source: str) -> list[int]:
    return [line for line, code in lint(source, ["DDP005"]) if code == "DDP005"]


# -- a device object for the rank, never made current ------------------------------------------


def test_rank_device_object_without_set_device_is_flagged(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist

        def setup():
            dist.init_process_group("nccl")
            local_rank = int(os.environ["LOCAL_RANK"])
            return torch.device("cuda", local_rank)
        """
    assert ddp005_lines(lint, source) == [8]


def test_rank_device_made_current_is_left_alone(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist

        def setup():
            dist.init_process_group("nccl")
            local_rank = int(os.environ["LOCAL_RANK"])
            device = torch.device("cuda", local_rank)
            torch.cuda.set_device(device)
            return device
        """
    assert ddp005_lines(lint, source) == []


def test_rank_device_as_formatted_string_is_flagged_once(lint):
    source = """
        import os
        import torch.distributed as dist

        class Runner:
            def __init__(self):
                dist.init_process_group(backend=None)
                rank = int(os.environ["LOCAL_RANK"])
                self.device = f"cuda:{rank}"
                self.other = "cuda:%d" % rank
        """
    assert ddp005_lines(lint, source) == [8]


def test_rank_device_with_accelerator_api_is_left_alone(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        rank = int(os.environ["LOCAL_RANK"])
        torch.accelerator.set_device_index(rank)
        device = f"cuda:{rank}"
        """
    assert ddp005_lines(lint, source) == []


def test_rank_device_of_rank_zero_alone_is_not_where_it_is_reported(lint):
    source = """
        import torch
        import torch.distributed as dist

        def main(rank, world_size):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
            if rank == 0:
                probe = torch.device("cuda", rank)
            dist.barrier()

        if __name__ == "__main__":
            main(0, 1)
        """
    # one process builds that device: the report goes to the NCCL start instead
    assert ddp005_lines(lint, source) == [5]


def test_rank_device_in_a_gloo_only_script_is_left_alone(lint):
    source = """
        import os
        import torch.distributed as dist

        dist.init_process_group("gloo")
        note = "cpu"
        """
    assert ddp005_lines(lint, source) == []


# -- an NCCL group started, no device chosen, nothing placed --------------------------------------


def test_nccl_group_without_any_device_choice_is_flagged(lint):
    source = """
        import torch
        import torch.distributed as dist

        def init_distributed(config):
            if config["slurm"]:
                dist.init_process_group(backend=config["backend"], rank=config["rank"], world_size=config["world"])
            else:
                dist.init_process_group(backend="nccl")
            torch.cuda.synchronize()

        if __name__ == "__main__":
            init_distributed({"slurm": False})
        """
    # the config-chosen backend counts as NCCL: the same file names NCCL for its other start
    assert ddp005_lines(lint, source) == [6]


def test_nccl_group_started_by_a_helper_module_is_left_alone(lint):
    source = """
        import torch.distributed as dist

        def init_distributed():
            dist.init_process_group(backend="nccl")
        """
    # the program that imports this helper may choose each rank's device after calling it
    assert ddp005_lines(lint, source) == []


def test_nccl_group_whose_cuda_calls_all_name_their_device_is_left_alone(lint):
    source = """
        import torch
        import torch.distributed as dist

        def worker(rank, world_size):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
            dist.barrier(device_ids=[rank])
            torch.cuda.synchronize(rank)

        if __name__ == "__main__":
            torch.multiprocessing.spawn(worker, args=(2,), nprocs=2)
        """
    assert ddp005_lines(lint, source) == []


def test_nccl_group_of_spawned_workers_with_a_bare_barrier_is_flagged(lint):
    source = """
        import torch
        import torch.distributed as dist

        def worker(rank, world_size):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
            dist.barrier()

        if __name__ == "__main__":
            torch.multiprocessing.spawn(worker, args=(2,), nprocs=2)
        """
    assert ddp005_lines(lint, source) == [5]


def test_nccl_group_with_device_id_is_left_alone(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist

        local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
        dist.barrier()
        """
    assert ddp005_lines(lint, source) == []


def test_group_from_config_in_a_file_without_cuda_is_left_alone(lint):
    source = """
        import torch.distributed as dist

        def init_distributed(config):
            dist.init_process_group(backend=config["backend"])
            dist.barrier()

        if __name__ == "__main__":
            init_distributed({"backend": "gloo"})
        """
    assert ddp005_lines(lint, source) == []


def test_gloo_group_is_left_alone(lint):
    source = """
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
        torch.cuda.is_available()
        dist.barrier()
        """
    assert ddp005_lines(lint, source) == []


# -- across modules: the group is started by a project helper -------------------------------------


def _project(tmp_path: Path, engine: str) -> list[tuple[str, int]]:
    (tmp_path / "dist_setup.py").write_text(
        textwrap.dedent(
            """
            import torch.distributed as dist

            def start():
                dist.init_process_group(backend="gloo")
            """
        )
    )
    (tmp_path / "engine.py").write_text(textwrap.dedent(engine))
    return [(Path(d.filename).name, d.location.row) for d in lint_paths([str(tmp_path)], rules=DDP005)]


def test_rank_device_after_a_project_helper_starts_the_group_is_flagged(tmp_path: Path):
    engine = """
        import os
        from dist_setup import start

        def run():
            start()
            local_rank = int(os.environ["LOCAL_RANK"])
            device = f"cuda:{local_rank}"
            return device
        """
    assert _project(tmp_path, engine) == [("engine.py", 8)]


def test_rank_device_after_a_project_helper_made_current_is_left_alone(tmp_path: Path):
    engine = """
        import os
        import torch
        from dist_setup import start

        def run():
            start()
            local_rank = int(os.environ["LOCAL_RANK"])
            device = f"cuda:{local_rank}"
            torch.cuda.set_device(local_rank)
            return device
        """
    assert _project(tmp_path, engine) == []


def test_rank_device_beside_a_gloo_group_is_left_alone(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
        rank = dist.get_rank()
        device = torch.device("cuda:" + str(rank % torch.cuda.device_count()))
        """
    assert ddp005_lines(lint, source) == []


@pytest.mark.parametrize(
    "spelling",
    ['"cuda:" + str(rank)', '"cuda:%d" % rank', '"cuda:{}".format(rank)', "torch.device(f'cuda:{rank}')"],
)
def test_each_spelling_of_a_computed_cuda_device_is_flagged(lint, spelling):
    source = f"""
        import os
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        rank = int(os.environ["LOCAL_RANK"])
        device = {spelling}
        torch.cuda.synchronize()
        """
    assert ddp005_lines(lint, source) == [7]


def test_program_whose_cuda_work_all_names_the_rank_device_is_left_alone(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("nccl")
        rank = int(os.environ["LOCAL_RANK"])
        device = torch.device(f"cuda:{rank}")
        model = DDP(torch.nn.Linear(2, 2).to(device), device_ids=[rank])
        torch.cuda.synchronize(device)
        dist.barrier(device_ids=[rank])
        """
    # the whole program is in view and none of it uses the current device
    assert ddp005_lines(lint, source) == []


@pytest.mark.parametrize("spelling", ['"cuda:%d" % 0', '"cuda:{}:{}".format(a, b)', '"cudas" + str(rank)'])
def test_strings_that_are_no_computed_cuda_index_are_not_taken_for_one(lint, spelling):
    source = f"""
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        label = {spelling}
        dist.barrier()
        """
    # the report stays on the NCCL start: the string is not the rank's device
    assert ddp005_lines(lint, source) == [4]


def test_nccl_string_lets_a_zero_through_a_variable_past_the_screen(lint):
    # no "cuda" / "device" word anywhere: the NCCL backend string is what makes DDP005 look
    source = """
        import torch.distributed as dist

        def main(model):
            dist.init_process_group("nccl")
            gpu = 0
            model.to(gpu)
        """
    assert ddp005_lines(lint, source) == [6]
