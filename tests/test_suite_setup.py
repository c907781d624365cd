"""The test suite's own set-up: pytest collects nothing from the corpus of user scripts (some
are named like tests). (Markers are checked by `--strict-markers` in pyproject.toml.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"


def _pytest(*args: str, plugin_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(plugin_dir)])}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )


def test_pytest_collects_nothing_from_the_corpus(tmp_path):
    """Not even a module without tests: collecting a file imports it, and a corpus file is a user's
    training script. A plugin prints every node pytest starts collecting."""
    named_like_tests = [p for p in CORPUS.rglob("*.py") if p.name.startswith("test_") or p.name.endswith("_test.py")]
    assert named_like_tests, "the check means something only while such a file exists"
    (tmp_path / "report_collection.py").write_text(
        "def pytest_collectstart(collector):\n    print('COLLECTING', collector.nodeid)\n"
    )
    result = _pytest("--collect-only", "-s", "-p", "report_collection", "tests/corpus", plugin_dir=tmp_path)
    collected = [line.split(" ", 1)[1] for line in result.stdout.splitlines() if line.startswith("COLLECTING ")]
    assert "tests/corpus" in collected, result.stdout + result.stderr  # the plugin does report
    assert [node for node in collected if node.startswith("tests/corpus/")] == []
