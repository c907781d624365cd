"""A file of ALONE_FILE_BYTES or more is analysed alone (issue 23, option (c)): the pool's other
workers have finished their work before one worker takes it, so its libcst tree never shares the
run's memory with another file's; the results stay what one process finds."""

from __future__ import annotations

import os
from pathlib import Path

import ddplint.runner as runner
from ddplint.api import lint_paths
from ddplint.cache import FileStamp
from ddplint.rules import select_rules

SMALL = "import torch.nn as nn\nm = nn.DataParallel(m)\n"


def _job(index: int, size: int) -> runner._Job:
    return runner._Job(index, f"f{index}.py", ("DDP001",), "DDP001", FileStamp(size, 0), None, False)


def test_files_over_the_bound_are_split_off_largest_first():
    jobs = [_job(i, size) for i, size in enumerate([10, 450_000, 250_000, 399_999, 2_000_000, 400_000])]
    together, alone = runner._split_alone(jobs)
    assert [job.stamp.size for job in alone] == [2_000_000, 450_000, 400_000]
    assert [job.stamp.size for job in together] == [10, 250_000, 399_999]  # the large task still takes 250 kB


def _run(paths: list[str], jobs: int) -> list[tuple[str, int, str]]:
    return [(Path(d.filename).name, d.location.row, d.code) for d in lint_paths(paths, select_rules(), [], jobs=jobs)]


def test_the_alone_file_starts_after_every_other_file_and_nothing_runs_beside_it(tmp_path, monkeypatch):
    """Each worker notes when it starts and ends a file (in a shared log); while the big file is
    checked, no other file starts, though its worker gives the others a second to."""
    for i in range(12):
        (tmp_path / f"small{i:02}.py").write_text(SMALL)
    (tmp_path / "big.py").write_text(SMALL + "# padding\n" * 600)  # ~6 kB: alone under the bound below
    serial = _run([str(tmp_path)], jobs=1)
    log = tmp_path.parent / f"{tmp_path.name}-events.log"
    checked = runner._check_job

    def noting(job):  # runs in the forked workers
        name = Path(job.path).name
        _note(log, f"start {name}")
        if name == "big.py":
            _wait_for_another_start(log)
        try:
            return checked(job)
        finally:
            _note(log, f"end {name}")

    monkeypatch.setattr(runner, "ALONE_FILE_BYTES", 5_000)
    monkeypatch.setattr(runner, "_check_job", noting)
    assert _run([str(tmp_path)], jobs=2) == serial
    events = log.read_text().splitlines()
    assert len(events) == 26
    assert events[-2:] == ["start big.py", "end big.py"], events


def _note(log: Path, line: str) -> None:
    handle = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(handle, (line + "\n").encode())
    finally:
        os.close(handle)


def _wait_for_another_start(log: Path) -> None:
    import time

    seen = log.read_text().count("start ")
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and log.read_text().count("start ") == seen:
        time.sleep(0.02)
