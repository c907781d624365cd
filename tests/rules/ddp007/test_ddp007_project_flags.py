"""DDP007 through a helper of another project module whose collective depends on a literal flag
(`log_event(key, value, sync=True)` making its barrier only `if sync:`): a rank-0 call that
passes `sync=False` (by keyword or by position) reaches no collective, one that keeps the
default does. The same flags already count for the file's own helpers."""

from __future__ import annotations

from rule_snippets import write_files

LOGGER = """
    import torch
    import torch.distributed as dist

    def log_event(key, value=None, sync=True):
        if sync:
            dist.all_reduce(torch.zeros(1))
        if dist.get_rank() == 0:
            print(key, value)

    def log_always(key, value=None, sync=True):
        dist.barrier()
        if sync:
            dist.all_reduce(torch.zeros(1))
        print(key, value)
    """


def _rows(tmp_path, train: str) -> list[int]:
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    (tmp_path / "pyproject.toml").write_text("")
    write_files(tmp_path, {"mlog.py": LOGGER, "train.py": train})
    found = lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP007"]])
    return sorted(d.location.row for d in found if d.filename.replace("\\", "/").endswith("/train.py"))


def test_rank_zero_call_keeping_the_default_flag_is_flagged(tmp_path):
    rows = _rows(
        tmp_path,
        """
        import torch.distributed as dist
        from mlog import log_event

        dist.init_process_group("nccl")
        log_event("start")
        if dist.get_rank() == 0:
            log_event("eval_done", 1)
        """,
    )
    assert rows == [7]


def test_rank_zero_call_passing_the_flag_that_skips_the_collective_is_quiet(tmp_path):
    rows = _rows(
        tmp_path,
        """
        import torch.distributed as dist
        from mlog import log_event

        dist.init_process_group("nccl")
        log_event("start")
        if dist.get_rank() == 0:
            log_event("eval_done", 1, sync=False)
            log_event("eval_stop", 2, False)
        """,
    )
    assert rows == []


def test_in_a_rank_zero_helper_only_the_call_keeping_the_default_is_flagged(tmp_path):
    rows = _rows(
        tmp_path,
        """
        import torch.distributed as dist
        from mlog import log_event

        def evaluate(model, loader):
            score = sum(float(model(x).sum()) for x in loader)
            log_event("eval_size", len(loader))
            log_event("eval_score", score, sync=False)
            return score

        dist.init_process_group("nccl")
        log_event("start")
        if dist.get_rank() == 0:
            evaluate(model, val_loader)
        """,
    )
    assert rows == [6, 13]


def test_flag_that_leaves_another_collective_in_place_still_flagged(tmp_path):
    rows = _rows(
        tmp_path,
        """
        import torch.distributed as dist
        from mlog import log_always

        dist.init_process_group("nccl")
        if dist.get_rank() == 0:
            log_always("eval_done", 1, sync=False)
        """,
    )
    assert rows == [6]
