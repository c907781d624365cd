"""`ddplint verify` on a GPU: the nccl path, the CUDA device recording (DDP005) and NVML sampling.

Skipped without a CUDA device. NOT YET RUN: no GPU was available when these were written (see
docs/verify.md, "GPU status"). Run them on any machine with one GPU:
    python -m pytest tests/test_verify_gpu.py -v
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


def run_verify(script: Path, *options: str) -> tuple[int, dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "ddplint", "verify", str(script), "--output-format", "json", *options],
        cwd=REPO, env=dict(os.environ, CUDA_VISIBLE_DEVICES="0"), capture_output=True, text=True, timeout=300)
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
