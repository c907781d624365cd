"""DDP007: a function only one rank ever calls enters a helper every rank shares, and the
helper's collective then runs on that rank alone.

Reported at the guarded call (as before) and, new, at the call into the shared helper inside the
one-rank function: that is where the fix goes when the helper must stay shared.
"""

from __future__ import annotations

RULE = ["DDP007"]

SHARED_HELPER = """
    import torch.distributed as dist

    dist.init_process_group("nccl")
    rank = dist.get_rank()

    def fetch(name, wait=True):
        if rank == 0:
            download(name)
        if wait:
            dist.barrier()
        return local_copy(name)

    def list_files(name):
        return sorted(fetch(name{args}).glob("*.bin"))

    def write_index(name):
        with open("index.json", "w") as out:
            out.write(str(list_files(name)))

    root = fetch("model")
    if rank == 0:
        write_index("model")
    dist.barrier()
"""


def test_call_into_a_shared_helper_from_one_rank_code_is_flagged(lint):
    # line 14: list_files, only ever reached from rank 0's write_index, enters fetch's barrier;
    # line 22: the guarded call itself
    assert lint(SHARED_HELPER.format(args=""), RULE) == [(14, "DDP007"), (22, "DDP007")]


def test_shared_helper_called_with_the_flag_that_skips_its_barrier_is_left_alone(lint):
    assert lint(SHARED_HELPER.format(args=", wait=False"), RULE) == []


def test_shared_helper_that_one_rank_function_never_calls_is_left_alone(lint):
    source = """
        import torch.distributed as dist

        dist.init_process_group("nccl")
        rank = dist.get_rank()

        def fetch(name):
            dist.barrier()
            return name

        def describe(name):
            return name.upper()

        root = fetch("model")
        if rank == 0:
            print(describe("model"))
    """
    assert lint(source, RULE) == []
