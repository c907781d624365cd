"""DDP007 where the facts sit in another module of the project (issue 20): a rank-0 evaluation
that reaches an engine module's collective through a helper of the script, and a rank-0 forward
through a DDP model whose class registers its buffers in model.py. Each case is a small project
on disk, linted as a whole."""

from __future__ import annotations

import textwrap

import pytest

from rule_snippets import write_files

ENGINE = """
    import torch.distributed as dist

    def _sum_over_ranks(total):
        dist.all_reduce(total)
        return total

    def evaluate(model, loader):
        total = sum(model(x).sum() for x in loader)
        return _sum_over_ranks(total)
    """

SCRIPT_HEAD = """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    """


def _rows(tmp_path, files: dict[str, str]) -> list[tuple[str, int]]:
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    (tmp_path / "pyproject.toml").write_text("")
    write_files(tmp_path, files)
    found = lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP007"]])
    return sorted((d.filename.replace("\\", "/").rsplit("/", 1)[-1], d.location.row) for d in found)


# -- rank-0 validation through a helper of the script into a package's engine -------------------

# The script's own helper hands the model to the engine's `evaluate`; each test adds how it is called.
VALIDATION_HELPER = """
    import torch.distributed as dist
    from {module} import evaluate

    def validation_epoch(model, loader):
        return evaluate(model, loader)

    dist.init_process_group("nccl")
    """


@pytest.fixture
def validation_rows(tmp_path):
    """The DDP007 rows of a project whose train.py is VALIDATION_HELPER then `tail`, with the
    engine `files` beside it (`module`: where train.py imports `evaluate` from)."""

    def rows(files: dict[str, str], module: str, tail: str) -> list[tuple[str, int]]:
        script = textwrap.dedent(VALIDATION_HELPER.format(module=module)) + textwrap.dedent(tail).lstrip("\n")
        return _rows(tmp_path, {**files, "train.py": script})

    return rows


PACKAGE_ENGINE = {"pkg/__init__.py": "", "pkg/engine.py": ENGINE}


def test_rank_zero_validation_through_a_script_helper_into_a_package_engine(validation_rows):
    rows = validation_rows(
        PACKAGE_ENGINE,
        "pkg.engine",
        """
        if dist.get_rank() == 0:
            print(validation_epoch(model, val_loader))
        """,
    )
    # reported at the rank-0 call, and where the helper only rank 0 runs calls into the engine
    assert rows == [("train.py", 5), ("train.py", 9)]


def test_validation_through_a_script_helper_on_every_rank_is_left_alone(validation_rows):
    rows = validation_rows(
        PACKAGE_ENGINE,
        "pkg.engine",
        """
        score = validation_epoch(model, val_loader)
        if dist.get_rank() == 0:
            print(score)
        """,
    )
    assert rows == []


def test_script_helper_into_an_engine_function_without_collective_is_left_alone(validation_rows):
    engine = """
        def evaluate(model, loader):
            return sum(model.module(x).sum() for x in loader)
        """
    rows = validation_rows(
        {"engine.py": engine},
        "engine",
        """
        if dist.get_rank() == 0:
            print(validation_epoch(model, val_loader))
        dist.barrier()
        """,
    )
    assert rows == []


# -- a rank-0 forward through a DDP model whose buffers model.py declares ------------------------

BUFFERED_MODEL = """
    import torch
    from torch import nn

    class Scaled(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.proj = nn.Linear(width, width)
            self.register_buffer("scale", torch.ones(width))

        def forward(self, x):
            return self.proj(x) * self.scale
    """

RANK_ZERO_FORWARD = SCRIPT_HEAD + """
    from model import {name}

    model = DDP({name}(8).cuda(rank), device_ids=[rank])
    if rank == 0:
        with torch.no_grad():
            preview = model(torch.ones(2, 8))
    """


def test_rank_zero_forward_of_a_model_whose_module_registers_buffers(tmp_path):
    rows = _rows(tmp_path, {"model.py": BUFFERED_MODEL, "train.py": RANK_ZERO_FORWARD.format(name="Scaled")})
    assert rows == [("train.py", 13)]


def test_rank_zero_forward_of_a_model_with_batch_norm_in_another_module(tmp_path):
    model = """
        from torch import nn

        def Tower(width):
            return nn.Sequential(nn.Conv1d(width, width, 1), nn.BatchNorm1d(width))
        """
    rows = _rows(tmp_path, {"model.py": model, "train.py": RANK_ZERO_FORWARD.format(name="Tower")})
    assert rows == [("train.py", 13)]


def test_model_module_without_buffers_is_left_alone(tmp_path):
    model = """
        from torch import nn

        class Plain(nn.Module):
            def __init__(self, width):
                super().__init__()
                self.proj = nn.Linear(width, width)

            def forward(self, x):
                return self.proj(x)
        """
    rows = _rows(tmp_path, {"model.py": model, "train.py": RANK_ZERO_FORWARD.format(name="Plain")})
    assert rows == []


def test_buffer_registered_only_under_a_setting_is_left_alone(tmp_path):
    # a causal mask registered only when fused attention is unavailable: the usual GPT has none
    model = """
        import torch
        from torch import nn

        class Attention(nn.Module):
            def __init__(self, width):
                super().__init__()
                self.proj = nn.Linear(width, width)
                self.fused = hasattr(nn.functional, "scaled_dot_product_attention")
                if not self.fused:
                    self.register_buffer("mask", torch.ones(width, width).tril())

            def forward(self, x):
                return self.proj(x)
        """
    rows = _rows(tmp_path, {"model.py": model, "train.py": RANK_ZERO_FORWARD.format(name="Attention")})
    assert rows == []


def test_unwrapped_module_forward_of_a_buffered_model_is_left_alone(tmp_path):
    script = SCRIPT_HEAD + """
    from model import Scaled

    model = DDP(Scaled(8).cuda(rank), device_ids=[rank])
    if rank == 0:
        with torch.no_grad():
            preview = model.module(torch.ones(2, 8))
    """
    rows = _rows(tmp_path, {"model.py": BUFFERED_MODEL, "train.py": script})
    assert rows == []


def test_buffered_model_wrapped_without_buffer_broadcast_is_left_alone(tmp_path):
    script = SCRIPT_HEAD + """
    from model import Scaled

    model = DDP(Scaled(8).cuda(rank), device_ids=[rank], broadcast_buffers=False)
    if rank == 0:
        with torch.no_grad():
            preview = model(torch.ones(2, 8))
    """
    rows = _rows(tmp_path, {"model.py": BUFFERED_MODEL, "train.py": script})
    assert rows == []
