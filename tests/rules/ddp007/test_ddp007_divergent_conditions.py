"""DDP007: a collective under a condition whose value differs between the ranks.

Elapsed wall-clock time (each process has its own clock and pace) and a variable that only rank 0
assigns are not the same on every rank, so a collective under them is reached by some ranks only.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import RULES_BY_CODE

RULE = ["DDP007"]


def test_collective_under_an_elapsed_time_test_is_flagged(lint):
    source = """
        import time
        import torch.distributed as dist

        def train(model, batches, minutes, rank):
            last = time.time()
            for batch in batches:
                model.step(batch)
                if time.time() - last > minutes * 60:
                    dist.barrier()
                    last = time.time()
                    print(f"rank {rank} synced")
    """
    assert lint(source, RULE) == [(9, "DDP007")]


def test_collective_under_a_name_holding_a_clock_time_is_flagged(lint):
    source = """
        import time
        import torch.distributed as dist

        def train(model, batches, start, budget, rank):
            for batch in batches:
                model.step(batch)
                spent = time.time() - start
                if spent > budget:
                    dist.barrier()
                    break
            print(f"rank {rank} done")
    """
    assert lint(source, RULE) == [(9, "DDP007")]


def test_collective_under_a_step_count_test_is_left_alone(lint):
    source = """
        import time
        import torch.distributed as dist

        def train(model, batches, every):
            started = time.time()
            for step, batch in enumerate(batches):
                model.step(batch)
                if step % every == 0:
                    dist.barrier()
            print(time.time() - started)
    """
    assert lint(source, RULE) == []


def test_clock_decision_broadcast_first_is_left_alone(lint):
    source = """
        import time
        import torch
        import torch.distributed as dist

        def train(model, batches, start, budget):
            for batch in batches:
                model.step(batch)
                over = torch.tensor(float(time.time() - start > budget))
                dist.broadcast(over, 0)
                if over.item():
                    dist.barrier()
                    break
    """
    assert lint(source, RULE) == []


def test_collective_under_a_value_only_rank_zero_assigns_is_flagged(lint):
    source = """
        import torch
        import torch.distributed as dist

        def check(model, rank, limit, device):
            reason = None
            if rank == 0:
                if model.loss > limit:
                    reason = "loss diverged"
            if reason is not None:
                steps = torch.tensor(5, device=device)
                dist.broadcast(steps, 0)
    """
    assert lint(source, RULE) == [(11, "DDP007")]


def test_collective_under_a_value_every_rank_assigns_is_left_alone(lint):
    source = """
        import torch
        import torch.distributed as dist

        def check(model, rank, limit, device):
            reason = None
            if model.loss > limit:
                reason = "loss diverged"
            if rank == 0:
                print(reason)
            if reason is not None:
                steps = torch.tensor(5, device=device)
                dist.broadcast(steps, 0)
    """
    assert lint(source, RULE) == []


def test_clock_test_around_a_helper_of_another_module_is_flagged(tmp_path: Path):
    """The collective sits in the project's own helper (every rank meets in its barrier), called
    when a per-process time interval has passed. (The file names DistributedDataParallel: a file
    that names no collective at all is not screened in.)"""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    package = tmp_path / "demo"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "sync.py").write_text(textwrap.dedent("""
        import torch.distributed as dist

        def on_main_then_wait(fn, rank):
            if rank == 0:
                fn()
            dist.barrier()
    """))
    (package / "loop.py").write_text(textwrap.dedent("""
        import time
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel
        from demo.sync import on_main_then_wait

        def train(net, batches, rank, minutes):
            dist.init_process_group("nccl")
            model = DistributedDataParallel(net, device_ids=[rank])
            last = time.time()
            for batch in batches:
                model.step(batch)
                if time.time() - last >= minutes * 60:
                    on_main_then_wait(model.save, rank)
                    last = time.time()
    """))
    (tmp_path / "main.py").write_text("from demo.loop import train\n")
    found = [(Path(d.filename).name, d.location.row) for d in lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP007"]])]
    assert found == [("loop.py", 14)]


def test_presence_of_a_recorded_clock_time_is_left_alone(lint):
    # `is not None` asks whether a time was recorded, the same on every rank; only its size differs
    source = """
        import time
        import torch
        import torch.distributed as dist

        STARTED = {"program": time.time(), "first_step": None}

        def report(rank):
            if STARTED["first_step"] is not None:
                first = torch.tensor([STARTED["first_step"]])
                dist.all_reduce(first, op=dist.ReduceOp.MIN)
                print(rank, first.item())
    """
    assert lint(source, RULE) == []


def test_name_a_comprehension_binds_in_the_test_is_left_alone(lint):
    source = """
        import torch.distributed as dist

        def run(data, rank, epochs):
            for epoch in range(epochs):
                if rank == 0:
                    for k, v in data.items():
                        print(k, v)
                if any(v in data for v in ("val", "test")):
                    dist.barrier()
    """
    assert lint(source, RULE) == []
