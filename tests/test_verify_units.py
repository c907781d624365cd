"""`ddplint verify` piece by piece, without launching ranks: telemetry files, per-rank summaries,
the verdict rules on synthetic telemetry, the report formats, the command line's bad input, and
the probe in one plain process (world size 1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Optional

import pytest

from ddplint.diagnostics import Diagnostic, Location
from ddplint.verify import command
from ddplint.verify.ranks import summarise
from ddplint.verify.report import Report, chrome_trace, format_json, format_text
from ddplint.verify.telemetry import TelemetryTail, TelemetryWriter, load_run, rank_file, read_records
from ddplint.verify.verdicts import (
    CONFIRMED,
    INCONCLUSIVE,
    REFUTED,
    RunContext,
    judge_ddp001,
    judge_ddp002,
    judge_ddp003,
    judge_ddp004,
    judge_ddp005,
    judge_imbalance,
    judge_run,
)

SCRIPT = "train.py"


# -- synthetic telemetry ----------------------------------------------------------------------------
class RankLog:
    """Builds the records one rank would write, on a fake clock."""

    def __init__(self, rank: int, world: int = 2, t0: float = 1000.0, host: str = "node-a"):
        self.rank, self.t = rank, t0
        self.records = [{"kind": "start", "t": t0, "rank": rank, "world_size": world, "node_rank": 0,
                         "host": host, "pid": 100 + rank, "pgid": 100 + rank}]
        self.add("init", backend="gloo", world_size=world, rank=rank)
        self.step = 0
        self.backward_calls = 0

    def add(self, kind: str, dt: float = 0.0, **fields) -> "RankLog":
        self.t += dt
        self.records.append({"kind": kind, "t": self.t, **fields})
        return self

    def loader(self, sampler="DistributedSampler", sampler_len=256, dataset_len=512, shuffle=True, line=10):
        return self.add("loader", loader=1, site={"file": SCRIPT, "line": line}, dataset="TensorDataset",
                        dataset_len=dataset_len, iterable=False, sampler=sampler, sampler_len=sampler_len,
                        shuffle=shuffle, num_replicas=2, batch_size=32, num_workers=0)

    def epoch(self, sampler_epoch, batches, wait=0.001, compute=0.01, collective=0.0, train=True):
        self.add("epoch", loader=1, n=sum(1 for r in self.records if r["kind"] == "epoch"),
                 sampler_epoch=sampler_epoch)
        for indices in batches:
            self.step += 1
            self.add("batch", dt=0.0, loader=1, step=self.step, wait=wait, indices=list(indices),
                     bw=self.backward_calls)
            self.backward_calls += 1 if train else 0
            self.t += wait + compute
            if collective:
                self.collective("all_reduce", collective)
        return self

    def collective(self, op: str, duration, dt: float = 0.0):
        self.add("coll_begin", dt=dt, op=op)
        if duration is not None:
            self.add("coll_end", dt=duration, op=op, dur=duration)
        return self

    def end(self, reason="max-steps", **fields):
        return self.add("end", reason=reason, exit_code=fields.pop("exit_code", 0), steps=self.step,
                        bw=self.backward_calls, **fields)

    def summary(self):
        return summarise(self.rank, self.records)


def context(*logs: RankLog, stopped_at: float = 5000.0) -> RunContext:
    return RunContext(ranks=[log.summary() for log in logs], script=SCRIPT, stopped_at=stopped_at)


def batches(start: int, count: int, size: int = 4, stride: int = 1):
    return [range(start + i * size * stride, start + (i + 1) * size * stride, stride) for i in range(count)]


# -- telemetry files ----------------------------------------------------------------------------------
def test_writer_appends_whole_lines_and_reader_skips_a_torn_last_line(tmp_path):
    path = rank_file(tmp_path, 3)
    writer = TelemetryWriter(path)
    writer.write("start", rank=3)
    writer.write("batch", step=1, indices=[1, 2])
    with open(path, "ab") as handle:
        handle.write(b'{"kind": "batch", "step": 2, "ind')  # a rank killed mid-write
    records = read_records(path)
    assert [r["kind"] for r in records] == ["start", "batch"]
    assert records[1]["indices"] == [1, 2] and isinstance(records[0]["t"], float)


def test_hand_formatted_batch_record_reads_back_like_any_other(tmp_path):
    path = rank_file(tmp_path, 0)
    TelemetryWriter(path).write_batch(1796090303.0804064, 2, 17, 4.4e-05, 9, 8, [5, 0, 511])
    assert read_records(path) == [{"kind": "batch", "t": 1796090303.0804064, "loader": 2, "step": 17,
                                   "wait": 4.4e-05, "bw": 9, "train": 8, "indices": [5, 0, 511]}]


def test_tail_reads_only_new_complete_records(tmp_path):
    writer = TelemetryWriter(rank_file(tmp_path, 0))
    tail = TelemetryTail(tmp_path)
    writer.write("batch", step=1)
    tail.poll()
    assert tail.steps == {0: 1} and not tail.ended
    writer.write("batch", step=2)
    writer.write("end", reason="max-steps")
    tail.poll()
    assert tail.steps == {0: 2} and tail.ended == {0}


def test_load_run_ignores_files_of_an_earlier_run(tmp_path):
    for rank, started in ((0, 50.0), (1, 150.0)):
        TelemetryWriter(rank_file(tmp_path, rank)).write("start", t=started, rank=rank)
    assert list(load_run(tmp_path, since=100.0)) == [1]


# -- summaries ------------------------------------------------------------------------------------
def test_steps_split_into_data_wait_collective_wait_and_compute():
    log = RankLog(0).loader().epoch(0, batches(0, 6), wait=0.002, compute=0.010, collective=0.005)
    medians = log.summary().step_medians()
    assert medians["steps_timed"] == 4  # 5 pairs, the rank's first step left out as warm-up
    assert medians["data_wait_s"] == pytest.approx(0.002)
    assert medians["collective_wait_s"] == pytest.approx(0.005)
    assert medians["step_s"] == pytest.approx(0.017)
    assert medians["compute_s"] == pytest.approx(0.010)


def test_unfinished_collective_counts_up_to_the_stop():
    log = RankLog(1).collective("barrier", None, dt=1.0)
    summary = log.summary()
    waited, per_op = summary.wait_before_first_batch(until=log.t + 7.0)
    assert waited == pytest.approx(7.0) and list(per_op) == ["barrier"]
    assert summary.open_collective().op == "barrier"
    assert summary.status(timed_out=True) == "stopped at the timeout"


# -- DDP001 -------------------------------------------------------------------------------------------
def test_ddp001_confirmed_when_every_rank_reads_the_whole_dataset():
    logs = [RankLog(r).loader("RandomSampler", 512, 512).epoch(None, batches(0, 3)) for r in (0, 1)]
    judgement = judge_ddp001(context(*logs), row=10)
    assert judgement.status == CONFIRMED
    assert "len(sampler) = 512 = len(dataset)" in judgement.evidence
    assert "12 indices, 12 (100 %)" in judgement.evidence


def test_ddp001_refuted_for_a_sharded_sampler_with_disjoint_indices():
    logs = [RankLog(r).loader().epoch(0, batches(r, 3, stride=2)) for r in (0, 1)]
    judgement = judge_ddp001(context(*logs), row=10)
    assert judgement.status == REFUTED
    assert "len(sampler) = 256 of len(dataset) = 512" in judgement.evidence and "0 (0 %)" in judgement.evidence


def test_ddp001_inconclusive_on_a_single_rank_and_without_iteration():
    one = RankLog(0, world=1).loader("RandomSampler", 512, 512).epoch(None, batches(0, 3))
    assert judge_ddp001(context(one), row=10).status == INCONCLUSIVE
    never_iterated = [RankLog(r).loader("RandomSampler", 512, 512) for r in (0, 1)]
    assert judge_ddp001(context(*never_iterated), row=10).status == INCONCLUSIVE


def test_ddp001_needs_a_process_group_not_just_several_copies():
    copies = [RankLog(r).loader("RandomSampler", 512, 512).epoch(None, batches(0, 3)).end() for r in (0, 1)]
    for log in copies:  # torchrun started a single-process script twice: it never joined a group
        log.records = [rec for rec in log.records if rec["kind"] != "init"]
    judgement = judge_ddp001(context(*copies))
    assert judgement.status == INCONCLUSIVE and "no process group" in judgement.evidence


def test_ddp001_runtime_only_for_training_loaders_not_evaluation_passes():
    evaluating = [RankLog(r).loader("SequentialSampler", 512, 512, shuffle=False)
                  .epoch(None, batches(0, 3), train=False).end() for r in (0, 1)]
    assert judge_ddp001(context(*evaluating)).status == INCONCLUSIVE  # no finding to judge: not reported
    assert judge_ddp001(context(*evaluating), row=10).status == CONFIRMED  # the static rule said it trains
    training = [RankLog(r).loader("SequentialSampler", 512, 512, shuffle=False)
                .epoch(None, batches(0, 3)).end() for r in (0, 1)]
    assert judge_ddp001(context(*training)).status == CONFIRMED


# -- DDP002 -------------------------------------------------------------------------------------------
def test_ddp002_confirmed_when_the_epoch_and_order_never_change():
    logs = [RankLog(r).loader() for r in (0, 1)]
    for log in logs:
        for _ in range(3):
            log.epoch(0, batches(7 * log.rank, 2))
    judgement = judge_ddp002(context(*logs))
    assert judgement.status == CONFIRMED
    assert "epoch was 0 at all 3 epoch starts on ranks 0, 1" in judgement.evidence


def test_ddp002_refuted_when_set_epoch_moves_the_order():
    log = RankLog(0).loader()
    for epoch in range(3):
        log.epoch(epoch, batches(10 * epoch, 2))
    judgement = judge_ddp002(context(log))
    assert judgement.status == REFUTED and "[0, 1, 2]" in judgement.evidence
    assert "2 of 2 epoch changes drew a new order" in judgement.evidence


def test_ddp002_inconclusive_when_the_budget_ends_inside_the_first_epoch():
    log = RankLog(0).loader().epoch(0, batches(0, 5))
    judgement = judge_ddp002(context(log))
    assert judgement.status == INCONCLUSIVE and "--max-steps" in judgement.evidence


# -- DDP003 -------------------------------------------------------------------------------------------
def test_ddp003_confirmed_by_construction_and_refuted_by_training_without_it():
    built = [RankLog(r).add("dp", device_ids=[], param_devices=["cpu"]).loader().epoch(0, batches(0, 2))
             for r in (0, 1)]
    assert judge_ddp003(context(*built)).status == CONFIRMED
    ddp = [RankLog(r).add("ddp", device_ids=None, param_devices=["cpu"]).loader().epoch(0, batches(0, 2))
           for r in (0, 1)]
    judgement = judge_ddp003(context(*ddp))
    assert judgement.status == REFUTED and "DistributedDataParallel" in judgement.evidence


# -- DDP004 -------------------------------------------------------------------------------------------
def _startup(rank0_work: float, other_wait: float) -> RunContext:
    rank0 = RankLog(0).add("loader", dt=rank0_work, loader=1).collective("broadcast", 0.001)
    rank1 = RankLog(1).collective("broadcast", other_wait)
    for log in (rank0, rank1):
        log.epoch(0, batches(0, 2))
    return context(rank0, rank1)


def test_ddp004_confirmed_when_other_ranks_wait_for_rank_zero():
    judgement = judge_ddp004(_startup(rank0_work=1.5, other_wait=1.4))
    assert judgement.status == CONFIRMED
    assert "blocked in broadcast (rank 1: 1.40 s, " in judgement.evidence


def test_many_ranks_are_summarised_as_ranges():
    from ddplint.verify.verdicts import _ranks_text, _waits_text

    assert _ranks_text([3]) == "rank 3"
    assert _ranks_text([1, 0]) == "ranks 0, 1"
    assert _ranks_text([0, 1, 2, 3, 5, 7, 8]) == "ranks 0-3, 5, 7, 8"
    waits = {r: (1.0 + r / 100, 2.0) for r in range(1, 8)}
    assert _waits_text(waits) == "ranks 1-7: 1.01-1.07 s, 50-54 % of their time to the first batch"


def test_ddp004_refuted_when_nobody_waits_long():
    assert judge_ddp004(_startup(rank0_work=0.5, other_wait=0.05)).status == REFUTED


def test_ddp004_inconclusive_when_rank_zero_also_waits():
    rank0 = RankLog(0).collective("barrier", 2.0)
    rank1 = RankLog(1).collective("barrier", 2.0)
    assert judge_ddp004(context(rank0, rank1)).status == INCONCLUSIVE


# -- DDP005 and DDP100 --------------------------------------------------------------------------------
def test_ddp005_all_ranks_on_one_gpu_is_confirmed_and_cpu_runs_say_nothing():
    same = [RankLog(r).add("device", device="0").add("ddp", param_devices=["cuda:0"]) for r in (0, 1)]
    judgement = judge_ddp005(context(*same))
    assert judgement.status == CONFIRMED and "all 2 ranks on host node-a computed on cuda:0" in judgement.evidence
    own = [RankLog(r).add("ddp", param_devices=[f"cuda:{r}"]) for r in (0, 1)]
    assert judge_ddp005(context(*own)).status == REFUTED
    assert judge_ddp005(context(*[RankLog(r).add("ddp", param_devices=["cpu"]) for r in (0, 1)])) is None


def test_imbalance_needs_a_real_gap_not_noise():
    balanced = [RankLog(r).loader().epoch(0, batches(0, 8), wait=0.001 * (1 + r), compute=0.02) for r in (0, 1)]
    assert judge_imbalance(context(*balanced)) is None
    slow = RankLog(1).loader().epoch(0, batches(0, 8), wait=0.040, compute=0.002)
    waiting = RankLog(0).loader().epoch(0, batches(0, 8), wait=0.001, compute=0.002, collective=0.039)
    judgement = judge_imbalance(context(waiting, slow))
    assert judgement.status == CONFIRMED
    assert judgement.evidence.startswith("rank 1 waits 40.0 ms per step for data")


def test_judge_run_keeps_static_findings_and_adds_only_confirmed_runtime_ones():
    logs = [RankLog(r).loader("RandomSampler", 512, 512).epoch(None, batches(0, 3)) for r in (0, 1)]
    static = Diagnostic("DDP003", "nn.DataParallel", SCRIPT, Location(20, 5), Location(20, 30))
    verdicts = judge_run([static], context(*logs))
    # Every rank trained without building a DataParallel: the static DDP003 finding is refuted; the
    # unsharded loader no static finding predicted becomes a runtime-only DDP001.
    assert [(v.finding.code, v.status, v.source) for v in verdicts] == [
        ("DDP003", REFUTED, "static"), ("DDP001", CONFIRMED, "runtime")]
    runtime = verdicts[1]
    assert runtime.located and runtime.finding.location.row == 10  # the DataLoader(...) line


# -- report ---------------------------------------------------------------------------------------------
def _report(**overrides) -> Report:
    logs = [RankLog(r).loader("RandomSampler", 512, 512).epoch(None, batches(0, 4), collective=0.003).end()
            for r in (0, 1)]
    ctx = context(*logs)
    static = Diagnostic("DDP001", "no DistributedSampler", SCRIPT, Location(10, 14), Location(10, 40))
    fields = {"script": SCRIPT, "world_size": 2, "verdicts": judge_run([static], ctx), "ranks": list(ctx.ranks),
                  "timed_out": False, "elapsed_s": 3.2, "stopped_at": ctx.stopped_at}
    fields.update(overrides)
    return Report(**fields)


def test_text_report_is_one_line_per_finding_then_a_rank_table():
    text = format_text(_report())
    lines = text.splitlines()
    assert lines[0].startswith("train.py:10:14: DDP001 confirmed: RandomSampler on ranks 0, 1")
    header = next(i for i, line in enumerate(lines) if line.startswith("rank "))
    assert lines[header + 1].split()[:4] == ["0", "0", "stopped", "after"]
    assert lines[-1].startswith("1 confirmed, 0 refuted, 0 inconclusive (2 of 2 ranks reported")


def test_json_report_and_trace_shapes():
    report = _report()
    data = json.loads(format_json(report))
    assert data["findings"][0] == {
        "code": "DDP001", "status": "confirmed", "message": "no DistributedSampler",
        "evidence": data["findings"][0]["evidence"], "source": "static",
        "location": {"filename": SCRIPT, "row": 10, "column": 14},
    }
    assert [r["steps"] for r in data["ranks"]] == [4, 4]
    assert data["ranks"][0]["collective_wait_s"] == pytest.approx(0.003)
    trace = chrome_trace(report)
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {e["pid"] for e in spans} == {0, 1}
    assert sum(1 for e in spans if e["pid"] == 0 and e["cat"] == "data-wait") == 4
    assert sum(1 for e in spans if e["pid"] == 0 and e["cat"] == "compute") == 3


def test_no_evidence_report_shows_the_problem_and_the_error_tail():
    text = format_text(_report(verdicts=[], problem="rank 1 crashed before its first batch: OSError: gone",
                               problem_detail="Traceback (most recent call last):\nOSError: gone"))
    assert "train.py: no evidence: rank 1 crashed before its first batch: OSError: gone" in text
    assert "    | OSError: gone" in text


# -- command line: bad input is one line, exit 2 ---------------------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["missing.py"], "ddplint verify: missing.py: no such file"),
    (["."], "ddplint verify: .: not a file"),
    (["{script}", "--nnodes", "2", "--telemetry-dir", "/tmp"], "ddplint verify: --nnodes > 1 needs --rdzv-endpoint"),
    (["{script}", "--node-rank", "1"], "ddplint verify: --node-rank 1 is out of range for --nnodes 1"),
    (["{bad}"], "ddplint verify: {bad}:2:12: syntax error"),
])
def test_bad_input_is_one_clear_line(tmp_path, capsys, argv, message):
    script = tmp_path / "ok.py"
    script.write_text("print('hi')\n")
    bad = tmp_path / "bad.py"
    bad.write_text("import torch.distributed as dist\ndef broken(:\n    dist.init_process_group()\n")
    argv = [a.format(script=script, bad=bad) for a in argv]
    assert command.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(message.format(bad=bad)), err


@pytest.mark.parametrize("argv", [["x.py", "--nproc", "0"], ["x.py", "--timeout", "-1"], ["x.py", "--max-steps", "a"]])
def test_bad_option_values_exit_2(capsys, argv):
    assert command.main(argv) == 2
    assert "error: argument" in capsys.readouterr().err


def test_script_arguments_after_double_dash_go_to_the_script():
    args = command.parse_args(["train.py", "--nproc", "4", "--", "--nproc", "7", "--lr", "0.1"])
    assert args.nproc == 4 and args.script_args == ["--nproc", "7", "--lr", "0.1"]
    assert args.epoch_steps == 5  # max-steps 20 // 4


# -- the probe in one plain process ---------------------------------------------------------------------
PROBE_SCRIPT = """
import sys
import torch
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(torch.arange(40)), batch_size=4, shuffle=True)
for epoch in range(100):
    for (batch,) in loader:
        pass
    print("epoch", epoch, "done", flush=True)
if "--fail" in sys.argv:
    raise ValueError("bad label in row 7")
"""


def _run_probe(tmp_path: Path, *script_args: str, max_steps: int = 7, epoch_steps: int = 3):
    import torch  # noqa: F401 - the probe instruments torch (part of the test extra)
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(PROBE_SCRIPT))
    env = dict(os.environ, DDPLINT_VERIFY_DIR=str(tmp_path), DDPLINT_VERIFY_MAX_STEPS=str(max_steps),
               DDPLINT_VERIFY_EPOCH_STEPS=str(epoch_steps), RANK="0", WORLD_SIZE="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "ddplint.verify.probe", str(script), *script_args], env=env,
                          capture_output=True, text=True, timeout=120)
    return proc, read_records(rank_file(tmp_path, 0)), (tmp_path / "rank-0.log").read_text()


def test_probe_cuts_epochs_and_stops_the_rank_at_the_step_budget(tmp_path):
    proc, records, log = _run_probe(tmp_path)
    assert proc.returncode == 0, log
    kinds = [r["kind"] for r in records]
    assert kinds[0] == "start" and kinds[-1] == "end"
    assert records[-1]["reason"] == "max-steps" and records[-1]["steps"] == 7
    assert kinds.count("batch") == 7 and kinds.count("epoch") == 3  # 3 + 3 + 1 batches
    assert "epoch 1 done" in log and "epoch 2 done" not in log  # the script's output went to its log
    drawn = [i for r in records if r["kind"] == "batch" for i in r["indices"]]
    assert len(drawn) == 28 and all(0 <= i < 40 for i in drawn)


def test_probe_records_the_scripts_exception_and_its_exit_code(tmp_path):
    proc, records, log = _run_probe(tmp_path, "--fail", max_steps=10_000, epoch_steps=1)
    assert proc.returncode == 1
    end = records[-1]
    assert end["kind"] == "end" and end["reason"] == "exception"
    assert end["error"] == "ValueError: bad label in row 7"
    assert 'raise ValueError("bad label in row 7")' in end["traceback"] and "probe.py" not in end["traceback"]
    assert "ValueError: bad label in row 7" in log


# -- run outcome ------------------------------------------------------------------------------------------
def _launch(timed_out=False):
    from ddplint.verify.launcher import LaunchResult

    return LaunchResult(returncode=1, timed_out=timed_out, started_at=999.0, stopped_at=2000.0,
                        launcher_output="torchrun: worker failed")


def test_a_rank_that_dies_after_recording_batches_still_counts_as_evidence():
    # torch 2.13 + gloo can abort a rank at exit ("terminate called without an active exception"):
    # no last record, but its batches were on disk before.
    aborted = RankLog(1).loader().epoch(0, batches(0, 4))
    finished = RankLog(0).loader().epoch(0, batches(0, 4)).end()
    ranks = [finished.summary(), aborted.summary()]
    assert ranks[1].status(timed_out=False) == "died without a last record (killed or aborted)"
    assert command._no_evidence(ranks, _launch(), [], timeout=60) == (None, "")


def test_no_evidence_reasons():
    crashed = RankLog(1).end("exception", exit_code=1, error="OSError: disk gone").summary()
    crashed.log_tail = "Traceback ...\nOSError: disk gone"
    follower = RankLog(0).add("end", dt=0.5, reason="exception", exit_code=1, error="RuntimeError: peer closed")
    problem, detail = command._no_evidence([follower.summary(), crashed], _launch(), [], timeout=60)
    assert problem == "rank 1 crashed before its first batch: OSError: disk gone (then rank 0 failed too)"
    assert detail.endswith("OSError: disk gone")
    hung = RankLog(0).collective("all_reduce", None, dt=0.2)
    problem, _ = command._no_evidence([hung.summary()], _launch(timed_out=True), [], timeout=30)
    assert problem.startswith("stopped at the timeout (30 s) before any batch: rank 0 blocked in all_reduce for")
    problem, detail = command._no_evidence([], _launch(), [], timeout=30)
    assert problem.startswith("no rank started (torchrun failed") and detail == "torchrun: worker failed"
    problem, _ = command._no_evidence([], _launch(timed_out=True), [], timeout=30)
    assert problem.startswith("no rank started within the timeout (30 s): torchrun was still waiting")


def _tail(steps: dict, data_wait: Optional[dict] = None):
    import types

    return types.SimpleNamespace(steps=steps, data_wait=data_wait or {})


def test_progress_line_rewrites_one_line(monkeypatch):
    import io

    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    progress = command.ProgressLine(max_steps=20)
    progress(_tail({0: 3, 1: 2}))
    progress(_tail({0: 3, 1: 2}))  # unchanged: nothing written
    progress(_tail({1: 5, 0: 4}))
    progress.done()
    assert stream.getvalue().count("\r\033[K") == 3
    assert "rank 0 3/20  rank 1 2/20" in stream.getvalue() and "rank 0 4/20  rank 1 5/20" in stream.getvalue()


def test_progress_never_counts_past_the_budget(monkeypatch):
    import io

    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    command.ProgressLine(max_steps=20)(_tail({0: 21, 1: 20}))
    assert "rank 0 20/20  rank 1 20/20" in stream.getvalue() and "21/20" not in stream.getvalue()


def test_progress_without_a_terminal_is_a_line_per_interval_with_the_data_wait(monkeypatch):
    import io

    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    clock = [100.0]
    monkeypatch.setattr(command.time, "monotonic", lambda: clock[0])
    progress = command.ProgressLog(max_steps=20)
    progress(_tail({}))  # before the first interval: nothing
    assert stream.getvalue() == ""
    clock[0] += command.PROGRESS_INTERVAL_S
    progress(_tail({}))
    clock[0] += 1.0
    progress(_tail({0: 4, 1: 3}, {0: 0.25, 1: 2.0}))  # within the interval: nothing more
    clock[0] += command.PROGRESS_INTERVAL_S
    progress(_tail({0: 7, 1: 6}, {0: 0.5, 1: 3.25}))
    lines = stream.getvalue().splitlines()
    assert lines == [
        "ddplint verify: 10 s: no rank has reported yet (starting: importing torch, rendezvous)",
        "ddplint verify: 21 s: steps: rank 0 7/20  rank 1 6/20; data wait: rank 0 0.5 s, rank 1 3.2 s",
    ]
