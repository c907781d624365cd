"""DDP007 where the rank condition itself decides a helper's flag: `if on_all or rank == 0:
load(path, on_all)`, with load making its barrier only `if on_all:`. Only rank 0 gets in when
`on_all` is false, and then the helper makes no barrier; when it is true every rank gets in. So
nothing is reached by some ranks alone (the shape of a checkpoint loader that syncs only when
every rank reads the file)."""

from __future__ import annotations

import pytest

from rule_snippets import write_files

HELPER = """
    import torch
    import torch.distributed as dist

    def load_state(path, on_all_ranks=False):
        if on_all_ranks:
            dist.barrier()
        return torch.load(path, map_location="cpu")
    """

CALLER = """
    import torch.distributed as dist
    {imports}

    def restore(path, cfg):
        every_rank = cfg.tpu or cfg.sharded
        if every_rank or dist.get_rank() == 0:
            return load_state({arguments})
    """


def _rows(tmp_path, arguments: str, local: bool = False) -> list[tuple[str, int]]:
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    (tmp_path / "pyproject.toml").write_text("")
    if local:  # the helper in the caller's own file
        caller = CALLER.format(imports="import torch", arguments=arguments) + HELPER.replace("import torch\n", "", 1)
        write_files(tmp_path, {"restore.py": caller})
    else:
        write_files(tmp_path, {"ckpt.py": HELPER, "restore.py": CALLER.format(imports="from ckpt import load_state", arguments=arguments)})
    found = lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP007"]])
    return sorted((d.filename.replace("\\", "/").rsplit("/", 1)[-1], d.location.row) for d in found)


@pytest.mark.parametrize("local", [False, True], ids=["other-module", "same-file"])
@pytest.mark.parametrize("arguments", ["path, every_rank", "path, on_all_ranks=every_rank"])
def test_flag_that_is_the_conditions_other_part_is_left_alone(tmp_path, arguments, local):
    assert _rows(tmp_path, arguments, local) == []


@pytest.mark.parametrize("local", [False, True], ids=["other-module", "same-file"])
def test_flag_forced_on_under_the_same_condition_is_flagged(tmp_path, local):
    """`load_state(path, True)`: rank 0 alone reaches the barrier when every_rank is false."""
    assert _rows(tmp_path, "path, True", local) == [("restore.py", 7)]


def test_a_different_flag_value_is_still_flagged(tmp_path):
    """Only the condition's own part is known false there: another variable says nothing."""
    caller = CALLER.format(imports="from ckpt import load_state", arguments="path, cfg.sync")
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    (tmp_path / "pyproject.toml").write_text("")
    write_files(tmp_path, {"ckpt.py": HELPER, "restore.py": caller})
    found = lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP007"]])
    assert [d.location.row for d in found] == [7]
