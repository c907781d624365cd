"""DDP007 past the other ranks' exit from the process (`if rank != 0: sys.exit(0)`, `os._exit`,
the built-in `exit()`), as past their `return`: rank 0 goes on alone to the collective. The
collective made before that exit is quiet."""

from __future__ import annotations


def test_barrier_after_the_other_ranks_call_sys_exit(lint):
    found = lint(
        """
        import sys
        import torch
        import torch.distributed as dist

        def wrap_up(model, rank):
            if rank != 0:
                sys.exit(0)
            torch.save(model.state_dict(), "final.pt")
            dist.barrier()
        """,
        select=["DDP007"],
    )
    assert found == [(9, "DDP007")]


def test_all_reduce_after_the_other_ranks_call_builtin_exit(lint):
    found = lint(
        """
        import torch.distributed as dist

        def summarise(total):
            if not dist.get_rank() == 0:
                exit()
            dist.all_reduce(total)
        """,
        select=["DDP007"],
    )
    assert found == [(6, "DDP007")]


def test_barrier_before_the_other_ranks_exit_is_quiet(lint):
    found = lint(
        """
        import os
        import torch
        import torch.distributed as dist

        def wrap_up(model, rank):
            dist.barrier()
            if rank != 0:
                os._exit(0)
            torch.save(model.state_dict(), "final.pt")
        """,
        select=["DDP007"],
    )
    assert found == []


def test_exit_of_a_name_the_file_defines_is_not_a_process_exit(lint):
    found = lint(
        """
        import torch.distributed as dist

        def exit(code):
            print("leaving with", code)

        def summarise(total, rank):
            if rank != 0:
                exit(1)
            dist.all_reduce(total)
        """,
        select=["DDP007"],
    )
    assert found == []
