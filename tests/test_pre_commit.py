"""The pre-commit hook, driven by the real `pre-commit` against a throwaway git repository that
uses this repository (at its committed HEAD) as the hook source."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

pytestmark = pytest.mark.slow  # builds pre-commit environments

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def hook_source() -> str:
    # pre-commit installs hooks from a git repository: these tests need git and a git checkout of
    # ddplint (CI clones one). Without them they fail and say why, rather than pass unexercised.
    if shutil.which("git") is None:
        pytest.fail("git is not installed: the pre-commit tests need it")
    head = _git("rev-parse", "HEAD", cwd=REPO)
    if head.returncode != 0:
        pytest.fail("this checkout is not a git repository, so it cannot serve as a hook source")
    import pre_commit  # noqa: F401 - part of the test extra: a missing one is an error, not a skip

    return head.stdout.strip()


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """One pre-commit cache for the module: the hook environment is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


def _project(tmp_path: Path, hook_source: str, hook_id: str) -> Path:
    work = tmp_path / "project"
    work.mkdir()
    for command in (("init", "-q"), ("config", "user.email", "t@example.com"), ("config", "user.name", "t")):
        _git(*command, cwd=work)
    (work / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {REPO}\n    rev: {hook_source}\n    hooks:\n      - id: {hook_id}\n"
    )
    return work


@pytest.fixture
def project(tmp_path: Path, hook_source: str) -> Path:
    return _project(tmp_path, hook_source, "ddplint")


@pytest.fixture
def fix_project(tmp_path: Path, hook_source: str) -> Path:
    return _project(tmp_path, hook_source, "ddplint-fix")


def _env(home: Path) -> dict:
    return {"PRE_COMMIT_HOME": str(home), "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"}


def _commit(work: Path, home: Path, script: Optional[Path] = None, name: str = "train.py") -> subprocess.CompletedProcess:
    if script is not None:
        shutil.copy(script, work / name)
    env = _env(home)
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=work, env=env, check=True, capture_output=True)
    _git("add", "-A", cwd=work)
    return subprocess.run(["git", "commit", "-qm", "train"], cwd=work, env=env, capture_output=True, text=True)


def test_buggy_script_fails_the_commit_with_the_finding(project: Path, home: Path):
    result = _commit(project, home, EXAMPLES / "ddp003_data_parallel_buggy.py")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "train.py:86:13: DDP003" in output
    assert _git("rev-parse", "HEAD", cwd=project).returncode != 0  # nothing was committed


def test_fixed_script_commits(project: Path, home: Path):
    result = _commit(project, home, EXAMPLES / "ddp003_data_parallel_fixed.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert _git("rev-parse", "HEAD", cwd=project).returncode == 0


def test_fix_hook_fixes_the_script_then_the_commit_passes(fix_project: Path, home: Path):
    """ddplint-fix: the commit fails because the hook changed the file (pre-commit's rule for
    fixers), the file now holds the fix, and committing it again passes."""
    result = _commit(fix_project, home, EXAMPLES / "ddp002_missing_set_epoch_buggy.py")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "files were modified by this hook" in output
    assert "sampler.set_epoch(epoch)" in (fix_project / "train.py").read_text()
    assert _git("rev-parse", "HEAD", cwd=fix_project).returncode != 0
    again = _commit(fix_project, home)
    assert again.returncode == 0, again.stdout + again.stderr


def test_fix_hook_still_fails_on_what_it_cannot_fix(fix_project: Path, home: Path):
    result = _commit(fix_project, home, EXAMPLES / "ddp003_data_parallel_buggy.py")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "train.py:86:13: DDP003" in output
    assert "files were modified by this hook" not in output


def test_hook_checks_notebooks(project: Path, home: Path):
    notebook = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
             "source": ["import torch.nn as nn\n", "model = nn.DataParallel(model)\n"]}
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (project / "explore.ipynb").write_text(json.dumps(notebook, indent=1) + "\n")
    result = _commit(project, home)
    assert result.returncode != 0
    assert "explore.ipynb:cell 1:2:9: DDP003" in result.stdout + result.stderr
