"""Which device saved a checkpoint outlives the rehearsal that saw it (DDP008 under --cpu): kept in
the project's cache folder, trusted as the results cache is, keyed by path and content hash."""

from __future__ import annotations

import json
import shutil

import pytest

from ddplint import cache
from ddplint.verify.emulation import SAVES_FILE
from tests.test_verify import SCRIPTS, by_code, run_verify


def provenance():
    from ddplint.verify import provenance  # new with the record kept between runs

    return provenance


def saved_in_run(run_dir, path, device):
    with open(run_dir / SAVES_FILE, "a") as handle:
        handle.write(json.dumps({"path": str(path), "device": device}) + "\n")


def seeded(run_dir) -> list:
    return [json.loads(line) for line in (run_dir / SAVES_FILE).read_text().splitlines()]


def test_a_saved_file_is_remembered_and_handed_to_the_next_run_while_unchanged(tmp_path):
    cache_dir, first, second, third = (tmp_path / name for name in ("cache", "run1", "run2", "run3"))
    for folder in (first, second, third):
        folder.mkdir()
    checkpoint = tmp_path / "snapshot.pt"
    checkpoint.write_bytes(b"weights of rank 0")
    saved_in_run(first, checkpoint, "cuda:0")
    assert provenance().remember(first, cache_dir) is None
    assert provenance().seed_run(second, cache_dir) == 1
    assert seeded(second) == [{"path": str(checkpoint), "device": "cuda:0", "earlier": True}]
    checkpoint.write_bytes(b"weights of rank 0, changed by hand")  # same path, another content
    assert provenance().seed_run(third, cache_dir) == 0
    assert not (third / SAVES_FILE).exists()


def test_a_cache_file_the_folder_does_not_vouch_for_is_ignored(tmp_path):
    ours, elsewhere = tmp_path / "ours", tmp_path / "elsewhere"
    assert cache.write_owned_json(elsewhere, provenance().SAVES_NAME, {"saves": {"/x": {"device": "cuda:1"}}}) is None
    assert cache.read_owned_json(elsewhere, provenance().SAVES_NAME)["saves"] == {"/x": {"device": "cuda:1"}}
    assert cache.write_owned_json(ours, "other.json", {}) is None  # our folder, with a key of its own
    version = next(p for p in elsewhere.iterdir() if p.is_dir())
    shutil.copy(version / provenance().SAVES_NAME, ours / version.name / provenance().SAVES_NAME)  # copied in
    assert cache.read_owned_json(ours, provenance().SAVES_NAME) is None
    assert provenance().known_saves(ours) == {}


def test_a_cache_file_behind_a_link_is_not_read(tmp_path):
    real = tmp_path / "real"
    assert cache.write_owned_json(real, provenance().SAVES_NAME, {"saves": {}}) is None
    version = next(p for p in real.iterdir() if p.is_dir())
    (version / "linked.json").symlink_to(version / provenance().SAVES_NAME)
    assert cache.read_owned_json(real, provenance().SAVES_NAME) is not None
    assert cache.read_owned_json(real, "linked.json") is None


@pytest.mark.slow
def test_two_rehearsals_of_a_resuming_script_never_refute_ddp008(tmp_path, monkeypatch):
    monkeypatch.setenv("DDPLINT_CACHE_DIR", str(tmp_path / "cache"))  # the project's cache folder
    script = tmp_path / "resume_from_snapshot.py"
    shutil.copy(SCRIPTS / "resume_from_snapshot.py", script)
    snapshot = tmp_path / "snapshot.pt"
    statuses = []
    for _ in range(2):
        _, report, _ = run_verify(script, "--cpu", "--max-steps", "6", "--", str(snapshot))
        statuses.append(by_code(report, "DDP008"))
    first, second = statuses
    assert first["status"] == "inconclusive" and "did not run" in first["evidence"]  # no snapshot yet
    assert snapshot.exists()
    # The second run loads what rank 0 (cuda:0) saved in the first: rank 1 gets it on cuda:0.
    assert second["status"] == "confirmed", second
    assert "onto cuda:0 on rank 1, whose own GPU is cuda:1" in second["evidence"]

    shutil.rmtree(tmp_path / "cache")  # the record is gone: the snapshot's origin is unknown
    _, report, _ = run_verify(script, "--cpu", "--max-steps", "6", "--", str(snapshot))
    third = by_code(report, "DDP008")
    assert third["status"] == "inconclusive" and "unknown" in third["evidence"], third
    assert {load["origin"] for rank in report["ranks"] for load in rank["loads"]} == {"unknown"}
