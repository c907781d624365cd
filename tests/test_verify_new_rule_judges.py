"""The runtime verdicts for DDP013-DDP016 on synthetic telemetry (no process started), and the
probe's new records (files written before the first batch, optimizer steps with parameter
fingerprints) in one plain process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from ddplint.diagnostics import Diagnostic, Location
from ddplint.verify.telemetry import rank_file, read_records
from ddplint.verify.verdicts import (
    CONFIRMED,
    INCONCLUSIVE,
    REFUTED,
    judge_ddp013,
    judge_ddp014,
    judge_ddp015,
    judge_ddp016,
    judge_run,
)
from tests.test_verify_units import SCRIPT, RankLog, context

DATA = "/data/MNIST/raw"


# -- DDP013: files written by several ranks ----------------------------------------------------------
def wrote(log: RankLog, *names: str, line: int = 15, dt: float = 0.01) -> RankLog:
    for name in names:
        log.add("write", dt=dt, path=f"{DATA}/{name}", site={"file": SCRIPT, "line": 40, "lines": [40, line]})
    return log


def test_ddp013_the_same_files_written_by_every_rank_from_the_datasets_line_is_confirmed():
    logs = [wrote(RankLog(r), "a.gz", "a") for r in (0, 1)]
    judgement = judge_ddp013(context(*logs), 15)
    assert judgement.status == CONFIRMED and judgement.row == 15
    assert judgement.evidence == (f"ranks 0, 1 each opened the same 2 file(s) for writing from line 15 before their "
                                  f"first batch (e.g. {DATA}/a): their writes overlapped in time")


def test_ddp013_writes_one_after_the_other_are_still_uncoordinated():
    late = RankLog(1, t0=2000.0)
    judgement = judge_ddp013(context(wrote(RankLog(0), "a.gz"), wrote(late, "a.gz")), 15)
    assert judgement.status == CONFIRMED
    assert "one after the other in this run, with nothing making them wait" in judgement.evidence


def test_ddp013_only_rank_zero_writing_is_refuted():
    judgement = judge_ddp013(context(wrote(RankLog(0), "a.gz", "a"), RankLog(1)), 15)
    assert judgement.status == REFUTED
    assert judgement.evidence == f"only rank 0 wrote files from line 15 (2 file(s), e.g. {DATA}/a.gz); rank 1 " \
                                 "found them in place"


def test_ddp013_nothing_written_is_not_measured_and_other_lines_do_not_count():
    # both ranks wrote the same file, but from line 99 (a log file), not the dataset's line
    logs = [wrote(RankLog(r), "log.txt", line=99) for r in (0, 1)]
    judgement = judge_ddp013(context(*logs), 15)
    assert judgement.status == INCONCLUSIVE
    assert "the dataset was already in place" in judgement.evidence and "not measured" in judgement.evidence


def test_ddp013_per_rank_folders_and_no_static_finding_stay_unjudged():
    logs = [wrote(RankLog(r), f"rank{r}.gz") for r in (0, 1)]
    assert judge_ddp013(context(*logs), 15).status == INCONCLUSIVE
    shared = [wrote(RankLog(r), "a.gz") for r in (0, 1)]
    assert judge_ddp013(context(*shared), None) is None
    assert [v.finding.code for v in judge_run([], context(*shared))] == []


# -- DDP014: evaluation over a shard, reduced or not ---------------------------------------------------
def trains_then_evaluates(rank: int, eval_len: int = 64, reduce_line=None) -> RankLog:
    log = RankLog(rank)
    log.add("loader", loader=1, site={"file": SCRIPT, "line": 10}, dataset_len=256, iterable=False,
            sampler="DistributedSampler", sampler_len=128, shuffle=True)
    log.add("loader", loader=2, site={"file": SCRIPT, "line": 11}, dataset_len=128, iterable=False,
            sampler="DistributedSampler", sampler_len=eval_len, shuffle=False)
    bw = 0
    log.add("epoch", loader=1, n=0, sampler_epoch=0)
    for step in range(1, 4):
        log.add("batch", dt=0.01, loader=1, step=step, wait=0.0, bw=bw, indices=[step])
        bw += 1
    log.add("epoch", dt=0.01, loader=2, n=0, sampler_epoch=0)
    for step in range(4, 7):
        log.add("batch", dt=0.01, loader=2, step=step, wait=0.0, bw=bw, indices=[step])
    if reduce_line is not None:
        log.add("coll_begin", dt=0.01, op="all_reduce", site={"file": SCRIPT, "line": reduce_line}, size=[2])
        log.add("coll_end", dt=0.001, op="all_reduce", dur=0.001)
    log.add("epoch", dt=0.01, loader=1, n=1, sampler_epoch=1)
    log.add("batch", dt=0.01, loader=1, step=7, wait=0.0, bw=bw, indices=[7])
    log.backward_calls = bw + 1
    return log.end()


def test_ddp014_sharded_evaluation_with_no_reduction_after_it_is_confirmed():
    judgement = judge_ddp014(context(*(trains_then_evaluates(r) for r in (0, 1))), 26)
    assert judgement.status == CONFIRMED
    assert judgement.evidence.startswith("each rank evaluated its shard only (len(sampler) = 64 of len(dataset) = "
                                         "128, ranks 0, 1), and no rank issued an all_reduce")


def test_ddp014_every_rank_evaluating_the_whole_set_is_refuted():
    judgement = judge_ddp014(context(*(trains_then_evaluates(r, eval_len=128) for r in (0, 1))), 26)
    assert judgement.status == REFUTED and "every rank evaluated the whole set" in judgement.evidence


def test_ddp014_a_reduction_after_the_evaluation_is_not_taken_for_the_metrics():
    judgement = judge_ddp014(context(*(trains_then_evaluates(r, reduce_line=24) for r in (0, 1))), 26)
    assert judgement.status == INCONCLUSIVE
    assert "the ranks issued all_reduce on line 24: whether that reduces the reported counts is not measured" \
        in judgement.evidence


def test_ddp014_no_evaluation_within_the_budget_and_no_static_finding():
    training_only = [RankLog(r).loader().epoch(0, [[1], [2], [3]]) for r in (0, 1)]
    judgement = judge_ddp014(context(*training_only), 26)
    assert judgement.status == INCONCLUSIVE and "raise --max-steps" in judgement.evidence
    assert judge_ddp014(context(*(trains_then_evaluates(r) for r in (0, 1))), None) is None


# -- DDP015: all-reduces per optimizer step -------------------------------------------------------------
def accumulates(rank: int, steps: int = 3, k: int = 4, synced_per_step=None, with_buckets: bool = True) -> RankLog:
    """k backward passes per optimizer step; `synced_per_step` of them all-reduce a bucket (the last
    ones of the window, as under no_sync), all of them by default."""
    log = RankLog(rank)
    log.add("ddp", device_ids=None, param_devices=["cpu"], timed_buckets=with_buckets)
    synced = k if synced_per_step is None else synced_per_step
    bw = 0
    for _ in range(steps):
        for micro in range(k):
            bw += 1
            if with_buckets and micro >= k - synced:
                log.add("bucket", dt=0.001, dur=0.001, index=0, numel=9, bw=bw)
        log.add("opt_step", dt=0.001, n=bw // k, bw=bw, params=None)
    log.backward_calls = bw
    return log.end()


def test_ddp015_every_micro_batch_all_reducing_is_confirmed():
    judgement = judge_ddp015(context(*(accumulates(r) for r in (0, 1))), 21)
    assert judgement.status == CONFIRMED
    assert judgement.evidence == ("on ranks 0, 1, 6 optimizer steps fed by several backward passes (rank 0's "
                                  "first: 4 backward passes, 4 of them all-reduced the gradients): every "
                                  "micro-batch's backward all-reduced, 4 all-reduces for one update")


def test_ddp015_one_all_reduce_per_step_is_refuted():
    judgement = judge_ddp015(context(*(accumulates(r, synced_per_step=1) for r in (0, 1))), 21)
    assert judgement.status == REFUTED
    assert "4 backward passes, 1 of them all-reduced" in judgement.evidence


def test_ddp015_no_accumulation_or_no_step_is_not_measured():
    single = judge_ddp015(context(*(accumulates(r, k=1) for r in (0, 1))), 21)
    assert single.status == INCONCLUSIVE and "followed a single backward pass" in single.evidence
    # the epoch cut ended every pass before the k-th micro-batch: buckets but no optimizer step
    cut = [RankLog(r).add("bucket", index=0, numel=9, bw=1) for r in (0, 1)]
    for log in cut:
        log.backward_calls = 3
        log.end()
    unstepped = judge_ddp015(context(*cut), 21)
    assert unstepped.status == INCONCLUSIVE and "raise --epoch-steps" in unstepped.evidence
    unhooked = judge_ddp015(context(*(accumulates(r, with_buckets=False) for r in (0, 1))), 21)
    assert unhooked.status == INCONCLUSIVE and "not measured" in unhooked.evidence


def test_ddp015_is_a_runtime_finding_only_over_several_accumulating_steps():
    verdicts = judge_run([], context(*(accumulates(r) for r in (0, 1))))
    assert [(v.finding.code, v.status, v.source) for v in verdicts] == [("DDP015", CONFIRMED, "runtime")]
    assert judge_run([], context(*(accumulates(r, steps=1) for r in (0, 1)))) == []
    assert judge_run([], context(*(accumulates(r, synced_per_step=1) for r in (0, 1)))) == []


# -- DDP016: replicas drifting apart ----------------------------------------------------------------------
def steps_with(rank: int, fingerprints: list, synced: bool = True) -> RankLog:
    log = RankLog(rank)
    log.add("ddp", device_ids=None, param_devices=["cpu"], timed_buckets=True)
    for n, params in enumerate(fingerprints, 1):
        if synced:
            log.add("bucket", dt=0.001, dur=0.001, index=0, numel=9, bw=n)
        log.add("opt_step", dt=0.001, n=n, bw=n, params=[params])
    log.backward_calls = len(fingerprints)
    return log.end()


def test_ddp016_parameters_that_differ_after_a_step_are_confirmed():
    rank0 = steps_with(0, [[0.5, 1.0], [0.25, 2.0]], synced=False)
    rank1 = steps_with(1, [[0.5, 1.5], [0.75, 2.5]], synced=False)
    judgement = judge_ddp016(context(rank0, rank1), 18)
    assert judgement.status == CONFIRMED
    assert judgement.evidence == ("after optimizer step 1, 1 of 2 parameters of the DDP model differ between rank 0 "
                                  "and rank 1 (sum of each parameter compared): the replicas drifted apart; "
                                  "optimizer steps whose backward passes all-reduced no gradient: rank 0: 2 of 2, "
                                  "rank 1: 2 of 2")
    runtime = judge_run([], context(rank0, rank1))
    assert [(v.finding.code, v.source) for v in runtime] == [("DDP016", "runtime")]


def test_ddp016_equal_parameters_with_all_reduced_gradients_are_refuted():
    logs = [steps_with(r, [[0.5, 1.0], [0.25, float("nan")]]) for r in (0, 1)]  # NaN on both ranks is no drift
    judgement = judge_ddp016(context(*logs), 18)
    assert judgement.status == REFUTED and "2 comparison(s)" in judgement.evidence
    assert judge_run([], context(*logs)) == []


def test_ddp016_equal_parameters_without_any_all_reduce_prove_nothing():
    # e.g. every rank trained on the same data: no drift although nothing was all-reduced
    logs = [steps_with(r, [[0.5, 1.0]], synced=False) for r in (0, 1)]
    judgement = judge_ddp016(context(*logs), 18)
    assert judgement.status == INCONCLUSIVE
    assert "all-reduced no gradient: rank 0: 1 of 1, rank 1: 1 of 1" in judgement.evidence
    assert judge_ddp016(context(RankLog(0), RankLog(1)), 18).status == INCONCLUSIVE


def test_static_findings_of_the_new_rules_each_get_their_judge():
    findings = [Diagnostic(code, "m", SCRIPT, Location(row, 1), Location(row, 2))
                for code, row in (("DDP013", 15), ("DDP014", 26), ("DDP015", 21), ("DDP016", 18))]
    verdicts = judge_run(findings, context(RankLog(0), RankLog(1)))
    assert [v.status for v in verdicts] == [INCONCLUSIVE] * 4
    assert all("no runtime check" not in v.evidence for v in verdicts)


# -- the probe's records, in one process ------------------------------------------------------------------
PROBE_SCRIPT = """
    import os, sys, tempfile
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    root = sys.argv[1]
    os.makedirs(os.path.join(root, "raw"), exist_ok=True)
    with open(os.path.join(root, "raw", "archive.gz"), "wb") as handle:  # before the first batch
        handle.write(b"x")
    os.close(tempfile.mkstemp(dir=root)[0])  # a private temporary file: not recorded
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in DataLoader(TensorDataset(torch.randn(16, 4), torch.randn(16, 1)), batch_size=4):
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        with open(os.path.join(root, "after.txt"), "w") as handle:  # after it: not recorded
            handle.write("y")
"""


def test_probe_records_files_written_before_the_first_batch_and_each_optimizer_step(tmp_path):
    import torch  # noqa: F401 - the probe instruments torch (part of the test extra)

    run, data = tmp_path / "run", tmp_path / "data"
    run.mkdir()
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(PROBE_SCRIPT))
    env = dict(os.environ, DDPLINT_VERIFY_DIR=str(run), DDPLINT_VERIFY_MAX_STEPS="3", DDPLINT_VERIFY_EPOCH_STEPS="0",
               RANK="0", WORLD_SIZE="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "ddplint.verify.probe", str(script), str(data)], env=env,
                          capture_output=True, text=True, timeout=120)
    records = read_records(rank_file(run, 0))
    assert proc.returncode == 0, (run / "rank-0.log").read_text()
    writes = [r for r in records if r["kind"] == "write"]
    assert [w["path"] for w in writes] == [str(data / "raw" / "archive.gz")]
    assert writes[0]["site"]["lines"] == [8]
    steps = [(r["n"], r["bw"]) for r in records if r["kind"] == "opt_step"]
    assert steps == [(1, 1), (2, 2), (3, 3)]  # no DDP model: no fingerprints
    assert all(r["params"] == [] for r in records if r["kind"] == "opt_step")
