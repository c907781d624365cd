"""The test suite's own set-up: pytest collects nothing from the case files, user scripts (some
are named like tests). (Markers are checked by `--strict-markers` in pyproject.toml.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from case_files import CASE_FILES, is_case_data

ROOT = Path(__file__).resolve().parent.parent


def _pytest(*args: str, plugin_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(plugin_dir)])}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )


def test_pytest_collects_nothing_from_the_case_files(tmp_path):
    """Not even a module without tests: collecting a file imports it, and a case file is a user's
    training script. A plugin prints every node pytest starts collecting."""
    named_like_tests = [p for p in CASE_FILES if p.name.startswith("test_") or p.name.endswith("_test.py")]
    assert named_like_tests, "the check means something only while such a file exists"
    (tmp_path / "report_collection.py").write_text(
        "def pytest_collectstart(collector):\n    print('COLLECTING', collector.nodeid)\n"
    )
    folders = ["tests/corpus", *{str(p.parents[1].relative_to(ROOT)) for p in named_like_tests}]  # corpus, rules/*/cases
    result = _pytest("--collect-only", "-s", "-p", "report_collection", *folders, plugin_dir=tmp_path)
    collected = [line.split(" ", 1)[1] for line in result.stdout.splitlines() if line.startswith("COLLECTING ")]
    assert "tests/corpus" in collected, result.stdout + result.stderr  # the plugin does report
    assert [node for node in collected if is_case_data(ROOT / node.split("::")[0])] == []
