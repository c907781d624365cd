"""DDP007 inside a function that a decorator runs on one rank only (Lightning's `@rank_zero_only`,
mmcv's `@master_only`, `@accelerator.on_main_process`, or a decorator of the file whose wrapper
calls the function under a rank-0 test): every rank calls it, only rank 0 reaches its collective.
A decorator that calls the function on every rank, or a decorated function with no collective,
is quiet."""

from __future__ import annotations


def test_own_decorator_gating_on_rank_zero(lint):
    found = lint(
        """
        import functools
        import torch.distributed as dist

        def leader_only(fn):
            @functools.wraps(fn)
            def inner(*args, **kwargs):
                if dist.get_rank() == 0:
                    return fn(*args, **kwargs)
                return None
            return inner

        @leader_only
        def write_summary(stats):
            dist.all_reduce(stats)
            print(stats)

        dist.init_process_group("nccl")
        write_summary(epoch_stats)
        """,
        select=["DDP007"],
    )
    assert found == [(14, "DDP007")]


def test_lightning_rank_zero_only_around_a_barrier(lint):
    found = lint(
        """
        import torch.distributed as dist
        from pytorch_lightning.utilities import rank_zero_only

        @rank_zero_only
        def export(model, path):
            model.save(path)
            dist.barrier()
        """,
        select=["DDP007"],
    )
    assert found == [(7, "DDP007")]


def test_accelerator_main_process_decorator_around_a_gather(lint):
    found = lint(
        """
        from accelerate import Accelerator

        accelerator = Accelerator()

        @accelerator.on_main_process
        def report(predictions):
            print(accelerator.gather(predictions).shape)
        """,
        select=["DDP007"],
    )
    assert found == [(7, "DDP007")]


def test_decorator_calling_the_function_on_every_rank_is_quiet(lint):
    found = lint(
        """
        import functools
        import time
        import torch.distributed as dist

        def timed(fn):
            @functools.wraps(fn)
            def inner(*args, **kwargs):
                start = time.time()
                out = fn(*args, **kwargs)
                if dist.get_rank() == 0:
                    print(fn.__name__, time.time() - start)
                return out
            return inner

        @timed
        def write_summary(stats):
            dist.all_reduce(stats)
            return stats

        dist.init_process_group("nccl")
        write_summary(epoch_stats)
        """,
        select=["DDP007"],
    )
    assert found == []


def test_rank_zero_only_function_without_collective_is_quiet(lint):
    found = lint(
        """
        import torch
        import torch.distributed as dist
        from pytorch_lightning.utilities import rank_zero_only

        @rank_zero_only
        def export(model, path):
            torch.save(model.state_dict(), path)

        dist.init_process_group("nccl")
        export(model, "last.pt")
        dist.barrier()
        """,
        select=["DDP007"],
    )
    assert found == []
