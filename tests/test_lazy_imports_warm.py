"""What a warm run (every file's result in the cache) leaves unimported, besides libcst
(tests/test_lazy_imports.py): the fix loop, the notebook format, the pool's temporary folders and,
in a tree without ignore files, pathspec. Each costs start-up time on every run that needs none."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import sys
from ddplint.cli import main
code = main(sys.argv[1:])
print()
print(code, *sorted(m for m in ("pathspec", "ddplint.fix", "ddplint.notebook", "tempfile", "difflib") if m in sys.modules))
"""


def imported_by_run(*args: str, cwd: Path) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.rstrip("\n").rpartition("\n")[2].split()


@pytest.mark.slow  # three ddplint processes, the first analysing the examples
def test_warm_run_imports_neither_fixes_nor_notebooks_nor_ignore_patterns(tmp_path):
    project = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", project, ignore=shutil.ignore_patterns("*.ipynb", ".gitignore", ".ignore"))
    (project / "pyproject.toml").write_text("[tool.ddplint]\n")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    code, *_ = imported_by_run(".", "-q", *cache, cwd=project)
    assert code == "1"  # the examples have findings: the cache holds them
    assert imported_by_run(".", "-q", *cache, cwd=project) == ["1"]
    # An ignore file in the tree: its patterns are read, with pathspec.
    (project / ".ignore").write_text("nothing_matches_this/\n")
    assert imported_by_run(".", "-q", *cache, cwd=project) == ["1", "pathspec"]
