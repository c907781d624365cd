"""DDP007 under a rank-0 test hidden in a helper whatever its name: a function of the file or of
a project module whose every value in a distributed run is a rank-0 test (`return _RANK == 0`,
`_RANK` set by a `global` statement in the set-up function; `return True` only when no process
group exists). A helper returning something every rank shares is no rank test."""

from __future__ import annotations

from rule_snippets import write_files


def test_file_helper_with_an_unusual_name_returning_a_rank_zero_test(lint):
    found = lint(
        """
        import torch.distributed as dist

        def writes_reports():
            if not dist.is_initialized():
                return True
            return dist.get_rank() == 0

        def end_of_epoch(stats):
            if writes_reports():
                dist.all_reduce(stats)
        """,
        select=["DDP007"],
    )
    assert found == [(10, "DDP007")]


def test_file_helper_returning_a_shared_value_is_no_rank_test(lint):
    found = lint(
        """
        import os
        import torch.distributed as dist

        def has_checkpoint():
            return os.path.exists("last.pt")

        def end_of_epoch(stats, rank):
            if has_checkpoint():
                dist.all_reduce(stats)
        """,
        select=["DDP007"],
    )
    assert found == []


HELPERS = """
    import torch.distributed as dist

    _RANK = 0
    _WORLD = 1

    def setup():
        global _RANK, _WORLD
        dist.init_process_group("nccl")
        _RANK, _WORLD = dist.get_rank(), dist.get_world_size()

    def is_writer():
        return _RANK == 0

    def is_multi_gpu():
        return _WORLD > 1

    def sync():
        dist.barrier()
    """


def _rows(tmp_path, train: str) -> list[int]:
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    (tmp_path / "pyproject.toml").write_text("")
    write_files(tmp_path, {"helpers.py": HELPERS, "train.py": train})
    found = lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP007"]])
    return sorted(d.location.row for d in found if d.filename.replace("\\", "/").endswith("/train.py"))


def test_project_helper_reading_a_rank_set_through_global(tmp_path):
    rows = _rows(
        tmp_path,
        """
        import torch
        import helpers

        helpers.setup()
        local_rank = torch.cuda.current_device()
        if helpers.is_writer():
            torch.save(model.state_dict(), "m.pt")
            helpers.sync()
        """,
    )
    assert rows == [8]


def test_project_helper_testing_the_world_size_is_no_rank_test(tmp_path):
    rows = _rows(
        tmp_path,
        """
        import torch
        import helpers

        helpers.setup()
        local_rank = torch.cuda.current_device()
        if helpers.is_multi_gpu():
            helpers.sync()
        """,
    )
    assert rows == []


def test_helper_returning_a_model_parallel_rank_test_is_no_rank_zero_test(lint):
    # one rank of every tensor-parallel group loads, then shares with its group: not rank 0 of
    # the job alone (DDP004 reads the same rank-0 tests)
    found = lint(
        """
        import torch
        import torch.distributed as dist
        from megatron import mpu

        def first_of_tensor_group():
            return mpu.get_tensor_model_parallel_rank() == 0

        def share(path, tokens):
            if first_of_tensor_group():
                tokens = torch.load(path)
            dist.broadcast(tokens, src=0)
        """,
        select=["DDP007", "DDP004"],
    )
    assert found == []
