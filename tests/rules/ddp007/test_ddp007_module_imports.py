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
