"""`ddplint verify --cpu` end to end, and the runtime verdicts of DDP005-DDP012: real torchrun
launches on 2 CPU ranks.

The GPU-written scripts (set_device, nccl, `.to(gpu)`, `device_ids=[gpu]`, no CPU fallback) run
unchanged: each rank sees 2 logical GPUs. Every verdict is decided from counts, indices, devices
and sequences, never from how fast this machine is.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.test_verify import (
    EXAMPLES,
    REPO,
    SCRIPTS,
    _env,
    by_code,
    confirmed,
    marker_row,
    run_verify,
    verify_command,
)

pytestmark = pytest.mark.slow
GPU_EXAMPLES = EXAMPLES / "gpu"


def rehearse(script, *options):
    return run_verify(script, "--cpu", *options)


# -- the tutorial shape ---------------------------------------------------------------------------------
def test_gpu_written_torchrun_script_runs_on_cpu_ranks_with_one_logical_gpu_each(tmp_path):
    snapshot = tmp_path / "snapshot.pt"
    rc, report, _ = rehearse(GPU_EXAMPLES / "train_torchrun_fixed.py", "--max-steps", "8", "--epoch-steps", "2",
                             "--", "--epochs", "50", "--snapshot", str(snapshot))
    assert rc == 0, report
    assert report["emulated_gpus"] == 2 and report["problem"] is None
    assert confirmed(report) == []
    assert [r["devices"] for r in report["ranks"]] == [["cuda:0"], ["cuda:1"]]
    for rank in report["ranks"]:
        assert rank["backend"] == "gloo" and rank["distributed_data_parallel"]  # asked for nccl
        assert rank["steps"] == 8 and rank["status"] == "stopped after 8 steps", rank
    assert snapshot.exists()  # rank 0 saved it at its epoch ends, as the script does


def test_the_same_script_without_cpu_dies_at_start_up():
    # What the rehearsal is for: without --cpu, on a machine without GPUs, every rank dies at
    # set_device (no CUDA) before its first batch.
    rc, report, _ = run_verify(GPU_EXAMPLES / "train_torchrun_fixed.py", "--max-steps", "4")
    assert rc == 2 and report["evidence"] is False
    assert "crashed before its first batch" in report["problem"]
    assert report["emulated_gpus"] is None


# -- DDP005 and DDP008: logical devices as evidence ----------------------------------------------------
def test_ddp005_all_ranks_asking_for_cuda_0_is_confirmed_and_own_gpus_are_not():
    script = EXAMPLES / "ddp005_all_ranks_one_device_buggy.py"
    rc, report, _ = rehearse(script, "--max-steps", "6")
    finding = by_code(report, "DDP005")
    assert finding["status"] == "confirmed" and finding["location"]["row"] == marker_row(script, "DDP005")
    assert "all 2 ranks on host" in finding["evidence"] and "asked for cuda:0" in finding["evidence"]
    assert rc == 1
    assert [r["devices"] for r in report["ranks"]] == [["cuda:0"], ["cuda:0"]]

    rc, fixed, _ = rehearse(EXAMPLES / "ddp005_all_ranks_one_device_fixed.py", "--max-steps", "6")
    assert rc == 0 and confirmed(fixed) == []
    assert [r["devices"] for r in fixed["ranks"]] == [["cuda:0"], ["cuda:1"]]


def test_ddp008_checkpoint_restored_onto_another_ranks_gpu_is_confirmed_and_map_location_is_not():
    script = EXAMPLES / "ddp008_load_without_map_location_buggy.py"
    rc, report, _ = rehearse(script, "--max-steps", "6")
    finding = by_code(report, "DDP008")
    row = marker_row(script, "DDP008")
    assert finding["status"] == "confirmed" and finding["location"]["row"] == row
    assert "restored the tensors onto cuda:0 on rank 1, whose own GPU is cuda:1" in finding["evidence"]
    assert rc == 1
    assert [load["devices"] for r in report["ranks"] for load in r["loads"]] == [["cuda:0"], ["cuda:0"]]

    rc, fixed, _ = rehearse(EXAMPLES / "ddp008_load_without_map_location_fixed.py", "--max-steps", "6")
    assert rc == 0 and confirmed(fixed) == []
    loads = [(load["devices"], load["own"]) for r in fixed["ranks"] for load in r["loads"]]
    assert loads == [(["cuda:0"], "cuda:0"), (["cuda:1"], "cuda:1")], loads


def test_ddp003_data_parallel_runs_on_cpu_ranks_and_is_confirmed_with_its_logical_gpus():
    script = EXAMPLES / "ddp003_data_parallel_buggy.py"
    rc, report, _ = rehearse(script, "--max-steps", "6")
    finding = by_code(report, "DDP003")
    assert finding["status"] == "confirmed" and finding["location"]["row"] == marker_row(script, "DDP003")
    assert "device_ids ['cuda:0'], parameters on cuda:0 (logical)" in finding["evidence"], finding["evidence"]
    assert rc == 1
    assert [r["status"] for r in report["ranks"]] == ["stopped after 6 steps"] * 2  # DataParallel ran


# -- DDP006, DDP007 on GPU-written scripts ------------------------------------------------------------
def test_ddp006_start_up_error_is_confirmed_at_the_loader_line():
    script = GPU_EXAMPLES / "ddp006_shuffle_with_sampler_buggy.py"
    rc, report, _ = rehearse(script, "--max-steps", "4")
    finding = by_code(report, "DDP006")
    assert finding["status"] == "confirmed" and finding["location"]["row"] == marker_row(script, "DDP006")
    # Every rank raises; torchrun may stop the others once the first has failed, so the evidence
    # names one rank or more.
    assert re.search(r"mutually exclusive with shuffle on ranks? [01]", finding["evidence"]), finding["evidence"]
    assert rc == 1


def test_ddp007_rank_zero_only_all_reduce_diverges_and_the_fixed_sequences_match():
    script = GPU_EXAMPLES / "ddp007_collective_in_rank_branch_buggy.py"
    rc, report, _ = rehearse(script, "--max-steps", "12", "--epoch-steps", "6", "--timeout", "60")
    finding = by_code(report, "DDP007")
    row = marker_row(script, "DDP007")
    assert finding["status"] == "confirmed" and finding["location"]["row"] == row
    assert "sequences of collectives diverge at collective #1" in finding["evidence"]
    assert f"rank 0 all_reduce at line {row}" in finding["evidence"], finding["evidence"]
    assert rc == 1

    rc, fixed, _ = rehearse(GPU_EXAMPLES / "ddp007_collective_in_rank_branch_fixed.py", "--max-steps", "12",
                            "--epoch-steps", "6", "--timeout", "60")
    assert rc == 0 and confirmed(fixed) == []
    counts = [r["collectives"] for r in fixed["ranks"]]
    assert counts == [3, 3], counts  # steps 4, 8, 12 on both ranks


# -- what cannot be rehearsed ----------------------------------------------------------------------------
def test_gpu_only_call_stops_the_rehearsal_with_one_line_naming_it():
    script = SCRIPTS / "gpu_flash_attention.py"
    rc, report, _ = rehearse(script, "--max-steps", "4")
    assert rc == 2 and report["evidence"] is False
    assert report["problem"].startswith("rank ")
    assert f"cannot rehearse on CPU: flash_attn.flash_attn_func() at {script}:19 runs flash attention" \
        in report["problem"], report["problem"]
    assert report["problem_detail"] is None  # no traceback from anyone's internals


def test_missing_dataset_is_one_line_naming_the_path_and_exit_2():
    script = SCRIPTS / "gpu_missing_dataset.py"
    proc = subprocess.run([*verify_command(script, "--cpu"), "--output-format", "text"], cwd=REPO, env=_env(),
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 2
    missing = SCRIPTS / "no-such-data" / "train.pt"
    problem = [line for line in proc.stdout.splitlines() if "no evidence" in line]
    assert len(problem) == 1, proc.stdout
    assert f"the script's data is missing: {missing} does not exist (read at {script}:12)" in problem[0]
    assert "Traceback" not in proc.stdout and "    |" not in proc.stdout


# -- verdicts on the CPU examples (no --cpu needed) -------------------------------------------------------
@pytest.mark.parametrize("code, buggy, evidence", [
    ("DDP009", "ddp009_unsharded_iterable_dataset_buggy.py", "(100 %) of them identical in content"),
    ("DDP010", "ddp010_rank_zero_only_evaluation_buggy.py", "evaluation pass(es) alone while rank 1 waited"),
    ("DDP011", "ddp011_per_rank_sampler_seed_buggy.py", "seed 17 on rank 0, seed 18 on rank 1"),
])
def test_cpu_example_verdicts_confirmed_on_buggy_and_silent_on_fixed(code, buggy, evidence):
    script = EXAMPLES / buggy
    rc, report, _ = run_verify(script, "--max-steps", "12", "--epoch-steps", "3")
    finding = by_code(report, code)
    assert finding["status"] == "confirmed", finding
    assert finding["location"]["row"] == marker_row(script, code)
    assert evidence in finding["evidence"], finding["evidence"]
    assert rc == 1
    assert [f["code"] for f in confirmed(report)] == [code]  # nothing else made up on the way

    rc, fixed, _ = run_verify(EXAMPLES / buggy.replace("_buggy", "_fixed"), "--max-steps", "12", "--epoch-steps", "3")
    assert confirmed(fixed) == [] and rc == 0, fixed["findings"]


def test_ddp012_opt_in_data_bound_steps_are_confirmed():
    rc, report, _ = rehearse(SCRIPTS / "gpu_slow_loader.py", "--extend-select", "DDP012", "--max-steps", "10",
                             "--epoch-steps", "0")
    finding = by_code(report, "DDP012")
    assert finding["status"] == "confirmed", finding
    assert "share of each step spent waiting for the next batch" in finding["evidence"]
    assert rc == 1
    assert all(r["data_wait_s"] > 0.5 * r["step_s"] for r in report["ranks"])
