"""The Chrome trace: DDP's gradient all-reduce per bucket (timed by a communication hook that only
verify's runs register) and epoch markers, next to the data-wait / compute / collective spans."""

from __future__ import annotations

import json

import pytest

from tests.test_verify import EXAMPLES, SCRIPTS, confirmed, run_verify

pytestmark = pytest.mark.slow


def trace_of(path) -> list:
    return json.loads(path.read_text())["traceEvents"]


def test_trace_has_ddp_bucket_allreduce_spans_and_epoch_markers(tmp_path):
    trace = tmp_path / "trace.json"
    rc, report, _ = run_verify(EXAMPLES / "ddp002_missing_set_epoch_fixed.py", "--max-steps", "6",
                               "--epoch-steps", "2", "--trace", str(trace))
    assert rc == 0, report
    events = trace_of(trace)
    for rank in (0, 1):
        buckets = [e for e in events if e["pid"] == rank and e.get("cat") == "ddp-allreduce"]
        # one all-reduce per backward (the model fits one bucket), on a track of its own
        assert len(buckets) >= 5, buckets
        assert all(e["ph"] == "X" and e["tid"] == 1 and e["dur"] > 0 and e["args"]["elements"] > 0 for e in buckets)
        epochs = [e for e in events if e["pid"] == rank and e.get("cat") == "epoch"]
        assert [e["args"]["pass"] for e in epochs] == [0, 1, 2]  # 6 steps in passes of 2
        assert [e["args"]["sampler_epoch"] for e in epochs] == [0, 1, 2]  # the fixed example calls set_epoch


def test_a_script_that_registers_its_own_comm_hook_keeps_it(tmp_path):
    trace = tmp_path / "trace.json"
    rc, report, _ = run_verify(SCRIPTS / "own_comm_hook.py", "--max-steps", "5", "--trace", str(trace),
                               "--telemetry-dir", str(tmp_path))
    assert rc == 0 and report["problem"] is None and confirmed(report) == [], report
    assert [r["status"] for r in report["ranks"]] == ["stopped after 5 steps"] * 2
    log = (tmp_path / "ddplint-verify" / "rank-0.log").read_text()
    assert "compressed buckets: 4" in log  # the script's hook ran for every backward
    assert len([e for e in trace_of(trace) if e["pid"] == 0 and e.get("cat") == "ddp-allreduce"]) >= 4
