"""`ddplint verify` on 2 CPU ranks (gloo) for DDP013-DDP016: the buggy scripts' findings are
confirmed with measured evidence, the fixed ones show nothing, and what the run cannot measure
says so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.test_verify import SCRIPTS, by_code, confirmed, marker_row, run_verify

pytestmark = pytest.mark.slow  # starts torchrun


def test_ddp013_ranks_downloading_into_one_folder_is_confirmed_then_not_measured_once_the_data_is_there(tmp_path):
    script = tmp_path / "ddp013_download_buggy.py"
    shutil.copy(SCRIPTS / script.name, script)
    shutil.copytree(SCRIPTS / "fake_torchvision" / "torchvision", tmp_path / "torchvision")
    data = tmp_path / "data"
    code, report, _ = run_verify(script, "--max-steps", "6", "--", str(data))
    finding = by_code(report, "DDP013")
    assert (finding["status"], finding["location"]["row"]) == ("confirmed", marker_row(script, "DDP013")), finding
    assert finding["evidence"].startswith("ranks 0, 1 each opened the same 3 file(s) for writing from line 15")
    assert str(data / "MNIST" / "raw") in finding["evidence"] and code == 1
    _, again, _ = run_verify(script, "--max-steps", "6", "--", str(data))
    second = by_code(again, "DDP013")
    assert second["status"] == "inconclusive" and "the dataset was already in place" in second["evidence"]


def test_ddp014_a_shards_metric_printed_unreduced_is_confirmed():
    script = SCRIPTS / "ddp014_unreduced_metric_buggy.py"
    code, report, _ = run_verify(script, "--max-steps", "8")
    finding = by_code(report, "DDP014")
    assert finding["status"] == "confirmed" and finding["location"]["row"] == marker_row(script, "DDP014"), finding
    assert "len(sampler) = 64 of len(dataset) = 128" in finding["evidence"] and code == 1


@pytest.mark.parametrize("variant", ["buggy", "fixed"])
def test_ddp015_all_reduces_per_optimizer_step(variant):
    script = SCRIPTS / f"ddp015_accumulation_{variant}.py"
    # passes over the loader longer than the accumulation (4), so that optimizer steps happen
    code, report, _ = run_verify(script, "--max-steps", "16", "--epoch-steps", "8")
    if variant == "fixed":
        assert (code, confirmed(report)) == (0, []), report["findings"]
        return
    finding = by_code(report, "DDP015")
    assert finding["status"] == "confirmed" and finding["location"]["row"] == marker_row(script, "DDP015"), finding
    assert "4 backward passes, 4 of them all-reduced the gradients" in finding["evidence"]


def test_ddp015_epochs_cut_before_the_first_step_are_not_measured():
    code, report, _ = run_verify(SCRIPTS / "ddp015_accumulation_buggy.py", "--max-steps", "9", "--epoch-steps", "3")
    finding = by_code(report, "DDP015")
    assert finding["status"] == "inconclusive" and "raise --epoch-steps" in finding["evidence"], finding
    assert code == 0


@pytest.mark.parametrize("variant", ["buggy", "fixed"])
def test_ddp016_replicas_drift_apart_after_a_forward_through_module(variant):
    script: Path = SCRIPTS / f"ddp016_module_forward_{variant}.py"
    code, report, _ = run_verify(script, "--max-steps", "6")
    if variant == "fixed":
        assert (code, confirmed(report)) == (0, []), report["findings"]
        return
    finding = by_code(report, "DDP016")
    assert finding["status"] == "confirmed" and finding["location"]["row"] == marker_row(script, "DDP016"), finding
    assert "parameters of the DDP model differ between rank 0 and rank 1" in finding["evidence"]
    assert "all-reduced no gradient: rank 0: 6 of 6, rank 1: 6 of 6" in finding["evidence"]
