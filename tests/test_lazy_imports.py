"""A run that analyses nothing never imports libcst (or the rules' checks and the analysis behind
them): a warm cache, pre-commit on unchanged files, `--version`, a bad `--select`. Each command
runs in a fresh interpreter, which then says which of those modules it imported."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

# Runs the CLI in this interpreter, then prints (on the last line of stdout) the heavy modules
# it imported.
PROBE = """
import sys
from ddplint.cli import main
code = main(sys.argv[1:])
heavy = sorted(m for m in sys.modules if m == "libcst" or m == "ddplint.engine" or m.startswith("ddplint.rules.ddp")
               or m == "ddplint.analysis.facts")
print()
print(code, *heavy)
"""


def run_cli(*args: str, cwd: Path) -> tuple[str, int, list[str]]:
    """(output before the probe's line, exit code, heavy modules imported)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    output, _, probe = done.stdout.rstrip("\n").rpartition("\n")
    code, *heavy = probe.split()
    return output, int(code), heavy


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    # Per-file configuration and a project module imported by a script (the project index).
    (tmp_path / "examples" / "pyproject.toml").write_text(
        '[tool.ddplint]\nextend-select = ["DDP012"]\n[tool.ddplint.per-file-ignores]\n"*_fixed.py" = ["DDP005"]\n'
    )
    return tmp_path / "examples"


def test_warm_run_imports_no_libcst(project):
    cache = ["--cache-dir", str(project.parent / "cache")]
    cold, cold_code, cold_heavy = run_cli(".", "--output-format", "json", *cache, cwd=project)
    assert "libcst" in cold_heavy and "ddplint.engine" in cold_heavy  # the probe sees an import
    warm, warm_code, warm_heavy = run_cli(".", "--output-format", "json", *cache, cwd=project)
    assert json.loads(warm) == json.loads(cold) != []
    assert warm_code == cold_code == 1
    assert warm_heavy == []
    statistics, _, heavy = run_cli(".", "--statistics", *cache, cwd=project)
    assert "DDP001" in statistics and heavy == []


def test_pre_commit_on_unchanged_files_imports_no_libcst(project):
    names = sorted(path.name for path in project.glob("*_buggy.py"))[:5]
    command = ("check", "--force-exclude", "--exit-zero", "--cache-dir", str(project.parent / "cache"), *names)
    first, _, first_heavy = run_cli(*command, cwd=project)
    assert "libcst" in first_heavy
    again, _, heavy = run_cli(*command, cwd=project)
    assert again == first and "DDP0" in again
    assert heavy == []
    # One file changed: only then is the analysis imported.
    (project / names[0]).write_text((project / names[0]).read_text() + "\n# edited\n")
    _, _, edited_heavy = run_cli(*command, cwd=project)
    assert "libcst" in edited_heavy


def test_version_and_selection_errors_import_no_libcst(tmp_path):
    assert run_cli("--version", cwd=tmp_path)[1:] == (0, [])
    assert run_cli("--select", "DDP999", ".", cwd=tmp_path)[1:] == (2, [])
    (tmp_path / "pyproject.toml").write_text('[tool.ddplint]\nignore = ["NOPE1"]\n')
    (tmp_path / "train.py").write_text("import torch\n")
    assert run_cli(".", cwd=tmp_path)[1:] == (2, [])
