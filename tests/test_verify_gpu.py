"""`ddplint verify` on a GPU: the nccl path, the CUDA device recording (DDP005) and NVML sampling.

Skipped without a CUDA device. NOT YET RUN: no GPU was available when these were written (see
docs/verify.md, "GPU status"). Run them on any machine with a GPU, in under 8 minutes:
    tests/gpu_check.sh
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (this machine has none)"),
    pytest.mark.slow,  # starts torchrun
]

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = Path(__file__).resolve().parent / "verify_scripts"


# Each verify run's own limit: a GPU run takes 10-20 s, and the whole check must fit 8 minutes.
VERIFY_TIMEOUT_S = "60"


def run_verify(script: Path, *options: str, one_gpu: bool = True) -> tuple[int, dict]:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="0") if one_gpu else dict(os.environ)
    if "--timeout" not in options:
        options = (*options, "--timeout", VERIFY_TIMEOUT_S)
    proc = subprocess.run(
        [sys.executable, "-m", "ddplint", "verify", str(script), "--output-format", "json", *options],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    return proc.returncode, json.loads(proc.stdout)


def test_nccl_path_on_one_gpu():
    rc, report = run_verify(REPO / "examples" / "ddp001_missing_sampler_fixed.py", "--nproc", "1",
                            "--max-steps", "8", "--", "--epochs", "50")
    assert rc == 0, report
    (rank,) = report["ranks"]
    assert rank["backend"] == "nccl" and rank["steps"] == 8
    assert rank["devices"] == ["cuda:0"], rank


def test_two_ranks_on_one_gpu_confirm_ddp005_and_nvml_sees_the_device():
    rc, report = run_verify(SCRIPTS / "gpu_all_ranks_on_device_zero.py", "--nproc", "2", "--max-steps", "200",
                            "--epoch-steps", "0")
    ddp005 = [f for f in report["findings"] if f["code"] == "DDP005"]
    assert ddp005 and ddp005[0]["status"] == "confirmed", report["findings"]
    assert "computed on cuda:0" in ddp005[0]["evidence"]
    assert rc == 1
    assert all("cuda:0" in r["devices"] for r in report["ranks"])
    if importlib.util.find_spec("pynvml") is not None:
        gpus = report["gpus"]
        assert gpus and gpus[0]["index"] == 0 and gpus[0]["samples"] >= 1 and gpus[0]["mem_max_mib"] > 0


# -- the GPU side of verify --cpu's examples (NOT YET RUN: no GPU was lent when they were written) ----------
GPU_EXAMPLES = REPO / "examples" / "gpu"
two_gpus = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 CUDA GPUs (one rank per GPU)")


@pytest.mark.slow
def test_gpu_written_example_runs_with_nccl_one_rank_per_gpu():
    count = torch.cuda.device_count()
    proc = subprocess.run(
        [sys.executable, "-m", "ddplint", "verify", str(GPU_EXAMPLES / "train_torchrun_fixed.py"), "--output-format",
         "json", "--nproc", str(count), "--max-steps", "8", "--timeout", VERIFY_TIMEOUT_S, "--", "--epochs", "50"],
        cwd=REPO, capture_output=True, text=True, timeout=300)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, report
    assert [r["devices"] for r in report["ranks"]] == [[f"cuda:{r}"] for r in range(count)]
    assert all(r["backend"] == "nccl" and r["steps"] == 8 for r in report["ranks"])


@pytest.mark.slow
@two_gpus
def test_ddp008_checkpoint_restored_onto_gpu_0_on_real_devices():
    rc, report = run_verify(REPO / "examples" / "ddp008_load_without_map_location_buggy.py", "--max-steps", "6",
                            one_gpu=False)
    ddp008 = [f for f in report["findings"] if f["code"] == "DDP008"]
    assert ddp008 and ddp008[0]["status"] == "confirmed", report["findings"]
    assert "onto cuda:0 on rank 1, whose own GPU is cuda:1" in ddp008[0]["evidence"]


@pytest.mark.slow
@two_gpus
def test_ddp007_rank_zero_only_all_reduce_on_nccl_is_confirmed():
    rc, report = run_verify(GPU_EXAMPLES / "ddp007_collective_in_rank_branch_buggy.py", "--max-steps", "12",
                            "--epoch-steps", "6", "--timeout", "60", one_gpu=False)
    ddp007 = [f for f in report["findings"] if f["code"] == "DDP007"]
    assert ddp007 and ddp007[0]["status"] == "confirmed", report["findings"]
    assert rc == 1


@pytest.mark.slow
def test_spawn_script_trains_with_nccl_one_spawned_rank_per_gpu(tmp_path):
    """The mp.spawn shape on real GPUs: the script sizes its world with device_count(), each
    worker is followed as a rank, and DDP's bucket all-reduce (nccl) is timed in the trace."""
    count = torch.cuda.device_count()
    trace = tmp_path / "trace.json"
    rc, report = run_verify(SCRIPTS / "spawn_fixed.py", "--max-steps", "8", "--trace", str(trace), one_gpu=False)
    assert rc == 0 and report["problem"] is None, report
    assert [r["rank"] for r in report["ranks"]] == list(range(count))
    assert all(r["backend"] == "nccl" and r["steps"] == 8 for r in report["ranks"]), report["ranks"]
    assert [r["devices"] for r in report["ranks"]] == [[f"cuda:{r}"] for r in range(count)]
    events = json.loads(trace.read_text())["traceEvents"]
    assert any(e.get("cat") == "ddp-allreduce" for e in events)
