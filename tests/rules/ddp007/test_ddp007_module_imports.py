"""DDP007 through a helper module imported as a module (`import pkg.comm as comm`, `from pkg import
comm`, `import pkg.comm`) and called as `comm.average(t)`: the collective is in pkg/comm.py, the
rank-0 branch in a script of the same package that names no collective itself. Python imports
the submodule when the package's `__init__.py` neither defines nor imports the name; so does the
project index."""

from __future__ import annotations

import pytest

from rule_snippets import write_files

COMM = """
    import torch.distributed as dist

    def average(total):
        dist.all_reduce(total)
        return total / dist.get_world_size()
    """

SCRIPT = """
    import torch.distributed as dist
    {imports}

    def report(loss):
        if dist.get_rank() == 0:
            print({call}(loss))
    """

FORMS = [
    ("import pkg.comm as comm", "comm.average"),
    ("from pkg import comm", "comm.average"),
    ("import pkg.comm", "pkg.comm.average"),
]


def _rows(tmp_path, script: str, package_init: str = "") -> list[tuple[str, int]]:
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    (tmp_path / "pyproject.toml").write_text("")
    write_files(tmp_path, {"pkg/__init__.py": package_init, "pkg/comm.py": COMM, "pkg/report.py": script})
    found = lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP007"]])
    return sorted((d.filename.replace("\\", "/").rsplit("/", 1)[-1], d.location.row) for d in found)


@pytest.mark.parametrize("imports, call", FORMS)
def test_rank_zero_call_of_a_collective_helper_module_is_flagged(tmp_path, imports, call):
    assert _rows(tmp_path, SCRIPT.format(imports=imports, call=call)) == [("report.py", 6)]


@pytest.mark.parametrize("imports, call", FORMS)
def test_every_rank_calling_the_helper_module_is_left_alone(tmp_path, imports, call):
    every_rank = SCRIPT.replace("if dist.get_rank() == 0:", "if dist.is_initialized():")
    assert _rows(tmp_path, every_rank.format(imports=imports, call=call)) == []


def test_a_name_the_package_defines_itself_is_not_the_submodule(tmp_path):
    """`from pkg import comm` gets `comm` of pkg/__init__.py when it defines one (here an object
    with a local `average`), not pkg/comm.py: nothing collective is called."""
    package_init = """
        class _Local:
            @staticmethod
            def average(total):
                return total

        comm = _Local()
        """
    script = SCRIPT.format(imports="from pkg import comm", call="comm.average")
    assert _rows(tmp_path, script, package_init) == []


# -- a module whose only distributed code is its project's helpers ---------------------------------

COMM_HELPERS = """
    import torch.distributed as dist

    def get_rank():
        return dist.get_rank() if dist.is_initialized() else 0

    def is_main_process():
        return get_rank() == 0

    def reduce_dict(metrics):
        for value in metrics.values():
            dist.all_reduce(value)
        return metrics
    """

HOOKS = """
    from utils import comm

    def after_step(metrics):
        {condition}
            metrics = comm.reduce_dict(metrics)
        print(metrics)
    """


def _hooks_rows(tmp_path, condition: str, comm: str = COMM_HELPERS) -> list[tuple[str, int]]:
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    (tmp_path / "pyproject.toml").write_text("")
    write_files(tmp_path, {"utils/__init__.py": "", "utils/comm.py": comm, "engine/hooks.py": HOOKS.format(condition=condition)})
    found = lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP007"]])
    return sorted((d.filename.replace("\\", "/").rsplit("/", 1)[-1], d.location.row) for d in found)


@pytest.mark.parametrize("condition", ["if comm.is_main_process():", "if comm.get_rank() == 0:"])
def test_module_without_torch_distributed_calling_a_collective_helper_on_rank_zero_is_flagged(tmp_path, condition):
    """hooks.py never imports torch.distributed: calling comm.reduce_dict (an all_reduce) puts
    it in the distributed job all the same, and only rank 0 calls it."""
    assert _hooks_rows(tmp_path, condition) == [("hooks.py", 5)]


def test_module_calling_the_collective_helper_on_every_rank_is_left_alone(tmp_path):
    assert _hooks_rows(tmp_path, "if metrics:") == []


def test_module_calling_a_project_helper_that_makes_no_collective_is_left_alone(tmp_path):
    """The same names, but the project's reduce_dict sums locally: nothing ties hooks.py to a
    distributed job, and nothing hangs."""
    local = COMM_HELPERS.replace("dist.all_reduce(value)", "value.sum()")
    assert _hooks_rows(tmp_path, "if comm.is_main_process():", local) == []
