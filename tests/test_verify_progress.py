"""Progress that fits a CI log, and step counts that never pass the budget (an evaluation pass on
rank 0 draws batches that are not steps of the budget)."""

from __future__ import annotations

import re

import pytest

from tests.test_verify import EXAMPLES, run_verify

pytestmark = pytest.mark.slow


def test_rank_zero_evaluation_batches_are_not_counted_as_steps_and_ci_gets_progress_lines(monkeypatch):
    monkeypatch.setenv("DDPLINT_VERIFY_PROGRESS_S", "1")  # a line a second instead of every 10 s
    _, report, stderr = run_verify(EXAMPLES / "ddp010_rank_zero_only_evaluation_buggy.py", "--max-steps", "8")
    for rank in report["ranks"]:
        assert rank["steps"] <= 8, rank
        assert not re.search(r"after (9|[1-9][0-9]+) steps", rank["status"]), rank
    rank0 = report["ranks"][0]
    assert rank0["batches"] > rank0["steps"]  # its evaluation batches, drawn but not budget steps
    lines = [line for line in stderr.splitlines() if line.startswith("ddplint verify: ")]
    assert lines, stderr  # no terminal here: periodic lines instead of a rewritten one
    assert "\r" not in stderr
    # Steps per rank on every line; the data wait once a rank has measured one (a fast run on a busy
    # machine may end before the first such line: "-" until then).
    assert any(re.search(r"steps: rank 0 \d+/8  rank 1 \d+/8; data wait: (-|rank 0 [\d.]+ s)", line) for line in lines), lines
    counts = [int(n) for line in lines for n in re.findall(r"rank \d+ (\d+)/8", line)]
    assert counts and max(counts) <= 8
