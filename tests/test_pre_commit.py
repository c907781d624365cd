"""The pre-commit hook, driven by the real `pre-commit` against a throwaway git repository that
uses this repository (at its committed HEAD) as the hook source."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def hook_source() -> str:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    head = _git("rev-parse", "HEAD", cwd=REPO)
    if head.returncode != 0:
        pytest.skip("this checkout is not a git repository, so it cannot serve as a hook source")
    pytest.importorskip("pre_commit", reason="pre-commit is part of the test extra")
    return head.stdout.strip()


@pytest.fixture
def project(tmp_path: Path, hook_source: str) -> Path:
    work = tmp_path / "project"
    work.mkdir()
    for command in (("init", "-q"), ("config", "user.email", "t@example.com"), ("config", "user.name", "t")):
        _git(*command, cwd=work)
    (work / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {REPO}\n    rev: {hook_source}\n    hooks:\n      - id: ddplint\n"
    )
    return work


def _commit(work: Path, home: Path, script: Path) -> subprocess.CompletedProcess:
    shutil.copy(script, work / "train.py")
    env = {"PRE_COMMIT_HOME": str(home), "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"}
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=work, env=env, check=True, capture_output=True)
    _git("add", "-A", cwd=work)
    return subprocess.run(["git", "commit", "-qm", "train"], cwd=work, env=env, capture_output=True, text=True)


def test_buggy_script_fails_the_commit_with_the_finding(project: Path, tmp_path: Path):
    result = _commit(project, tmp_path / "pre-commit-home", EXAMPLES / "ddp003_data_parallel_buggy.py")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "train.py:86:13: DDP003" in output
    assert _git("rev-parse", "HEAD", cwd=project).returncode != 0  # nothing was committed


def test_fixed_script_commits(project: Path, tmp_path: Path):
    result = _commit(project, tmp_path / "pre-commit-home", EXAMPLES / "ddp003_data_parallel_fixed.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert _git("rev-parse", "HEAD", cwd=project).returncode == 0
