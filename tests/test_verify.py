"""`ddplint verify` end to end: real torchrun launches on 2 CPU ranks (gloo).

Each launch takes a few seconds (mostly importing torch in every rank). Verdicts are decided from
counts and ratios, never from how fast this machine is; the only timing thresholds involved are
the examples' own ~1 s preprocessing sleep (DDP004) and a 2 ms/sample sleep (DDP100), both far
above scheduling noise. After every launch no process of it may be left.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import torch  # noqa: F401 - verify runs the scripts with PyTorch (part of the test extra)

pytestmark = pytest.mark.slow  # starts torchrun

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
SCRIPTS = Path(__file__).resolve().parent / "verify_scripts"
LAUNCH_TIMEOUT_S = 240  # a hard ceiling for one verify process on a very loaded machine

BUGGY = {
    "DDP001": "ddp001_missing_sampler_buggy.py",
    "DDP002": "ddp002_missing_set_epoch_buggy.py",
    "DDP003": "ddp003_data_parallel_buggy.py",
    "DDP004": "ddp004_rank_zero_preprocessing_buggy.py",
}
FIXED = {code: name.replace("_buggy", "_fixed") for code, name in BUGGY.items()}

LOCATION = {"type": ["object", "null"], "required": ["filename", "row", "column"],
            "properties": {"row": {"type": "integer", "minimum": 1}, "column": {"type": "integer", "minimum": 1}}}
REPORT_SCHEMA = {
    "type": "object",
    "required": ["findings", "ranks", "evidence", "problem", "world_size", "timed_out"],
    "properties": {
        "findings": {"type": "array", "items": {
            "type": "object",
            "required": ["code", "status", "message", "evidence", "location"],
            "properties": {
                "code": {"type": "string", "pattern": "^DDP[0-9]{3}$"},
                "status": {"enum": ["confirmed", "refuted", "inconclusive"]},
                "message": {"type": "string", "minLength": 1},
                "evidence": {"type": "string", "minLength": 1},
                "location": LOCATION,
            }}},
        "ranks": {"type": "array", "items": {
            "type": "object",
            "required": ["rank", "status", "steps", "time_to_first_batch_s", "collective_wait_before_first_batch_s",
                         "step_s", "data_wait_s", "compute_s", "collective_wait_s", "devices", "loaders"],
            "properties": {"rank": {"type": "integer", "minimum": 0}, "steps": {"type": "integer", "minimum": 0}},
        }},
        "evidence": {"type": "boolean"},
        "problem": {"type": ["string", "null"]},
    },
}


def _env() -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env["CUDA_VISIBLE_DEVICES"] = ""  # these checks are the CPU (gloo) path; see test_verify_gpu for GPUs
    return env


def verify_command(script: Path, *options: str) -> list:
    return [sys.executable, "-m", "ddplint", "verify", str(script), "--output-format", "json", *options]


def run_verify(script: Path, *options: str) -> tuple[int, dict, str]:
    proc = subprocess.run(verify_command(script, *options), cwd=REPO, env=_env(), capture_output=True, text=True,
                          timeout=LAUNCH_TIMEOUT_S)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        pytest.fail(f"no JSON report (exit {proc.returncode})\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    jsonschema.validate(report, REPORT_SCHEMA)
    assert_no_process_left(script)
    return proc.returncode, report, proc.stderr


def assert_no_process_left(script: Path) -> None:
    """No rank (nor torchrun) of this script may outlive verify, whatever happened in the run."""
    left = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(script) in cmdline and "ddplint" in cmdline:
            left.append(f"{entry.name}: {cmdline}")
    assert not left, "processes left behind:\n" + "\n".join(left)


def by_code(report: dict, code: str) -> dict:
    matches = [f for f in report["findings"] if f["code"] == code]
    assert len(matches) == 1, report["findings"]
    return matches[0]


def marker_row(script: Path, code: str) -> int:
    for number, line in enumerate(script.read_text().splitlines(), 1):
        if f"# <- {code}" in line:
            return number
    raise AssertionError(f"no {code} marker in {script}")


def confirmed(report: dict) -> list:
    return [f for f in report["findings"] if f["status"] == "confirmed"]


# -- the examples ------------------------------------------------------------------------------------
@pytest.mark.parametrize("code", sorted(BUGGY))
def test_buggy_example_finding_is_confirmed(code):
    script = EXAMPLES / BUGGY[code]
    rc, report, _ = run_verify(script, "--max-steps", "12", "--epoch-steps", "3")
    finding = by_code(report, code)
    assert finding["status"] == "confirmed", finding
    assert finding["location"]["row"] == marker_row(script, code)
    assert rc == 1
    assert [r["rank"] for r in report["ranks"]] == [0, 1]
    assert report["evidence"] is True and report["problem"] is None
    _check_buggy_measurements(code, finding, report["ranks"])


def _check_buggy_measurements(code: str, finding: dict, ranks: list) -> None:
    if code == "DDP001":
        assert "512" in finding["evidence"] and "100 %" in finding["evidence"]
        assert {(r["loaders"][0]["sampler"], r["loaders"][0]["sampler_len"]) for r in ranks} == {("RandomSampler", 512)}
    elif code == "DDP002":
        for rank in ranks:  # the example's 3 epochs, each cut to 3 batches, all at sampler epoch 0
            assert rank["loaders"][0]["sampler_epochs"] == [0, 0, 0]
            assert rank["steps"] == 9
    elif code == "DDP003":
        assert all(r["data_parallel"] and not r["distributed_data_parallel"] for r in ranks)
    elif code == "DDP004":
        waits = [r["collective_wait_before_first_batch_s"] for r in ranks]
        assert waits[1] >= 0.5 > waits[0] * 2, waits  # rank 1 waits ~1 s in broadcast for rank 0
        assert "broadcast" in ranks[1]["collective_wait_before_first_batch_by_op"]


@pytest.mark.parametrize("code", sorted(FIXED))
def test_fixed_example_has_nothing_confirmed(code):
    # 50 epochs of 2 batches each: the step budget (8), not the script, ends the run.
    script = EXAMPLES / FIXED[code]
    rc, report, _ = run_verify(script, "--max-steps", "8", "--epoch-steps", "2", "--", "--epochs", "50")
    assert confirmed(report) == []
    assert rc == 0
    for rank in report["ranks"]:
        assert rank["steps"] == 8 and rank["status"] == "stopped after 8 steps", rank
    _check_fixed_measurements(code, report["ranks"])


def _check_fixed_measurements(code: str, ranks: list) -> None:
    loaders = [r["loaders"][0] for r in ranks]
    if code == "DDP001":
        assert {(l["sampler"], l["sampler_len"], l["dataset_len"]) for l in loaders} == {("DistributedSampler", 256, 512)}
    elif code == "DDP002":
        assert all(l["sampler_epochs"][:4] == [0, 1, 2, 3] for l in loaders), loaders
    elif code == "DDP003":
        assert all(r["distributed_data_parallel"] and not r["data_parallel"] for r in ranks)
    elif code == "DDP004":
        assert all(r["collective_wait_before_first_batch_s"] < 0.5 for r in ranks), ranks


# -- runs that cannot produce evidence --------------------------------------------------------------
def run_side_by_side(*runs: tuple) -> list:
    """Start several verifies at once (each picks its own rendezvous port) and wait for all of them;
    returns (exit code, report) per run, in order."""
    procs = [subprocess.Popen(verify_command(script, *options), cwd=REPO, env=_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for script, *options in runs]
    results = []
    for (script, *_), proc in zip(runs, procs):
        out, err = proc.communicate(timeout=LAUNCH_TIMEOUT_S)
        try:
            report = json.loads(out)
        except ValueError:
            pytest.fail(f"{script.name}: no JSON report (exit {proc.returncode})\n{out}\n{err}")
        jsonschema.validate(report, REPORT_SCHEMA)
        assert_no_process_left(script)
        results.append((proc.returncode, report))
    return results


def test_crash_hang_and_no_dataloader_side_by_side_each_get_a_clear_report():
    # Three verifies at once: also shows that concurrent runs do not collide on a rendezvous port.
    (crash_rc, crash), (hang_rc, hang), (idle_rc, idle) = run_side_by_side(
        (SCRIPTS / "crash_before_first_batch.py", "--timeout", "90"),
        (SCRIPTS / "hang_in_collective.py", "--timeout", "20"),
        (SCRIPTS / "no_dataloader.py", "--timeout", "90"),
    )
    # A crash names the first rank that failed and shows the user's traceback, not the probe's.
    assert crash_rc == 2 and crash["evidence"] is False and not crash["timed_out"]
    assert crash["problem"].startswith("rank 1 crashed before its first batch: RuntimeError: corrupt shard on rank 1")
    assert 'raise RuntimeError("corrupt shard on rank 1")' in crash["problem_detail"]
    assert "probe.py" not in crash["problem_detail"]
    # A hang is stopped at the timeout; the barrier only rank 0 reaches is DDP007, confirmed with
    # where each rank stood (its Python stack, dumped at the timeout).
    assert hang_rc == 1 and hang["timed_out"] is True
    ddp007 = by_code(hang, "DDP007")
    assert ddp007["status"] == "confirmed" and ddp007["location"]["row"] == 8, ddp007
    assert "rank 0 blocked" in ddp007["evidence"] and "in barrier at line 8 [stack: line 8 in <module>]" \
        in ddp007["evidence"], ddp007["evidence"]
    assert "rank 1 not in any collective, at line 10 in <module>" in ddp007["evidence"], ddp007["evidence"]
    assert hang["ranks"][0]["status"] == "stopped at the timeout" and hang["ranks"][0]["blocked_in"] == "barrier"
    # A script that never builds a DataLoader ran fine but gave nothing to measure.
    assert idle_rc == 2 and "without building a DataLoader" in idle["problem"]
    assert [r["status"] for r in idle["ranks"]] == ["script finished", "script finished"]


def test_missing_script_is_one_line_and_exit_2():
    proc = subprocess.run(verify_command(SCRIPTS / "does_not_exist.py"), cwd=REPO, env=_env(),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"ddplint verify: {SCRIPTS / 'does_not_exist.py'}: no such file"]
    assert proc.stdout == ""


# -- runtime-only findings, trace, two nodes -------------------------------------------
def test_unpredicted_rank_imbalance_is_a_runtime_finding(tmp_path):
    trace = tmp_path / "trace.json"
    rc, report, _ = run_verify(SCRIPTS / "rank_imbalance.py", "--trace", str(trace))
    imbalance = by_code(report, "DDP100")
    assert imbalance["status"] == "confirmed" and imbalance["location"] is None
    assert imbalance["evidence"].startswith("rank 1 waits") and "rank 0 spends" in imbalance["evidence"]
    assert rc == 1
    ranks = report["ranks"]
    assert ranks[1]["data_wait_s"] > 5 * ranks[0]["data_wait_s"]
    assert ranks[0]["collective_wait_s"] > 5 * ranks[1]["collective_wait_s"]
    _check_trace(json.loads(trace.read_text()), ranks=[0, 1])


def _check_trace(trace: dict, ranks: list) -> None:
    events = trace["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert names == {r: f"rank {r}" for r in ranks}
    for rank in ranks:
        kinds = {e["cat"] for e in events if e["ph"] == "X" and e["pid"] == rank}
        assert kinds == {"data-wait", "compute", "collective-wait"}, (rank, kinds)
        assert all(e["dur"] >= 0 for e in events if e["ph"] == "X")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("transport", ["c10d-store", "shared-dir"])
def test_simulated_two_node_run_reports_all_four_ranks(tmp_path, transport):
    """Two launches with --nnodes 2 and one rendezvous on localhost, 2 ranks each. The other node's
    telemetry reaches node 0 through the rendezvous' c10d store (no shared directory: each node
    keeps its files in its own temporary directory) or through a directory both name."""
    script = EXAMPLES / BUGGY["DDP001"]
    common = ["--nnodes", "2", "--rdzv-endpoint", f"127.0.0.1:{_free_port()}",
              "--max-steps", "6", "--epoch-steps", "3", "--timeout", "120"]
    if transport == "shared-dir":
        common += ["--telemetry-dir", str(tmp_path)]
    node1 = subprocess.Popen(verify_command(script, *common, "--node-rank", "1"), cwd=REPO, env=_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    node0 = subprocess.Popen(verify_command(script, *common, "--node-rank", "0"), cwd=REPO, env=_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out0, err0 = node0.communicate(timeout=LAUNCH_TIMEOUT_S)
    out1, err1 = node1.communicate(timeout=LAUNCH_TIMEOUT_S)
    assert node0.returncode == 1, (out0, err0)
    assert node1.returncode == 0, (out1, err1)
    assert "node 0 prints the report" in out1
    assert ("through the c10d store" in out1) == (transport == "c10d-store")
    report = json.loads(out0)
    jsonschema.validate(report, REPORT_SCHEMA)
    assert report["world_size"] == 4
    assert [(r["rank"], r["node_rank"]) for r in report["ranks"]] == [(0, 0), (1, 0), (2, 1), (3, 1)]
    assert all(r["steps"] == 6 for r in report["ranks"])
    finding = by_code(report, "DDP001")
    assert finding["status"] == "confirmed" and "world size 4" in finding["evidence"]
    assert_no_process_left(script)
