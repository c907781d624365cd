"""The pool's workers share the summaries of project modules: each module is summarised once per
run, whichever worker needs it first, the findings are those of one process, and the run's
directory for them is gone when the run ends, however it ends."""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from pathlib import Path

import pytest

from ddplint import runner
from ddplint.analysis import summaries as summaries_module
from ddplint.analysis.project import ModuleSummary, SharedSummaries
from ddplint.api import lint_paths
from ddplint.rules import select_rules
from loader_project import TRAINING_SCRIPT, write_project

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the test's counters reach the workers by fork")

@pytest.fixture
def two_scripts(tmp_path: Path) -> Path:
    """Two training scripts that get their loader from the same project module."""
    return write_project(tmp_path / "proj", {"train_a.py": TRAINING_SCRIPT, "train_b.py": TRAINING_SCRIPT.replace("range(3)", "range(5)")})


@pytest.fixture
def directories(monkeypatch) -> list[str]:
    """The directories the runs create for their shared summaries."""
    made: list[str] = []
    real = tempfile.mkdtemp

    def recording(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(tempfile, "mkdtemp", recording)
    return made


def run(root: Path, jobs: int) -> list[tuple[str, int, str]]:
    return [(Path(d.filename).name, d.location.row, d.code) for d in lint_paths([str(root)], select_rules(), [], jobs=jobs)]


def one_file_per_worker(monkeypatch, log: Path) -> None:
    """Each of the two workers checks one of the two scripts (the first to take a file waits for
    the other to take the second), and every summary computed is logged with its process."""
    both_started = multiprocessing.get_context("fork").Barrier(2, timeout=120)  # a guard against a hang
    real_check, real_summary = runner._check_job, summaries_module.summary_of

    def check_side_by_side(job):
        if Path(job.path).name.startswith("train"):
            both_started.wait()
        with open(log, "a") as handle:
            handle.write(f"check {os.getpid()} {Path(job.path).name}\n")
        return real_check(job)

    def logged_summary(data, path):
        with open(log, "a") as handle:
            handle.write(f"summary {os.getpid()} {Path(path).name}\n")
        return real_summary(data, path)

    monkeypatch.setattr(runner, "_check_job", check_side_by_side)
    monkeypatch.setattr(summaries_module, "summary_of", logged_summary)


def test_a_module_used_by_files_in_two_workers_is_summarised_once(two_scripts, tmp_path, monkeypatch, directories):
    serial = run(two_scripts, jobs=1)
    assert [(name, code) for name, _, code in serial] == [("train_a.py", "DDP001"), ("train_b.py", "DDP001")]
    assert directories == []  # one process: nothing to share
    log = tmp_path / "log"
    one_file_per_worker(monkeypatch, log)
    assert run(two_scripts, jobs=2) == serial
    lines = [line.split() for line in log.read_text().splitlines()]
    checkers = {pid for kind, pid, name in lines if kind == "check" and name.startswith("train")}
    assert len(checkers) == 2  # the scripts were checked in different workers
    assert [name for kind, _, name in lines if kind == "summary"] == ["data.py"]  # and data.py summarised once
    assert len(directories) == 1 and not os.path.exists(directories[0])


def test_without_sharing_each_worker_summarises_the_module(two_scripts, tmp_path, monkeypatch, directories):
    """What the test above guards against: with no shared directory (none could be created),
    both workers parse data.py; the findings are the same either way."""
    serial = run(two_scripts, jobs=1)
    log = tmp_path / "log"
    one_file_per_worker(monkeypatch, log)

    def no_directory(*args, **kwargs):
        raise PermissionError("read-only temporary directory")

    monkeypatch.setattr(tempfile, "mkdtemp", no_directory)
    assert run(two_scripts, jobs=2) == serial
    summaries = [line.split() for line in log.read_text().splitlines() if line.startswith("summary")]
    assert [name for _, _, name in summaries] == ["data.py", "data.py"]
    assert len({pid for _, pid, _ in summaries}) == 2


def test_the_directory_is_removed_when_a_worker_fails(two_scripts, monkeypatch, directories):
    real_check = runner._check_job

    def check_then_fail(job):
        real_check(job)  # leaves data.py's summary in the directory
        raise RuntimeError("worker failed")

    monkeypatch.setattr(runner, "_check_job", check_then_fail)
    with pytest.raises(RuntimeError, match="worker failed"):
        run(two_scripts, jobs=2)
    assert len(directories) == 1 and not os.path.exists(directories[0])


def test_the_directory_is_removed_when_the_caller_stops_early(two_scripts, directories):
    findings = lint_paths([str(two_scripts)], select_rules(), [], jobs=2)
    first = next(findings)
    assert first.code == "DDP001" and os.path.isdir(directories[0])
    findings.close()  # what an interrupted consumer (KeyboardInterrupt, a closed pipe) does
    assert not os.path.exists(directories[0])


def test_shared_values_are_read_back_whole_and_a_vanished_directory_is_no_error(tmp_path):
    directory = tmp_path / "shared"
    directory.mkdir()
    shared = SharedSummaries(str(directory))
    summary = ModuleSummary(process_group_starters={"setup"})
    assert shared.load("summary", "/p/data.py") is None
    assert shared.saved("summary", "/p/data.py", summary) is summary
    assert shared.load("summary", "/p/data.py") == (summary,)
    assert shared.saved("summary", "/p/none.py", None) is None
    assert shared.load("summary", "/p/none.py") == (None,)  # "no summary" is an answer too
    assert len(os.listdir(directory)) == 2  # no partial files left behind
    for entry in directory.iterdir():
        entry.unlink()
    directory.rmdir()  # the run ended while a worker was still finishing
    assert shared.saved("summary", "/p/data.py", summary) is summary
    assert shared.load("summary", "/p/data.py") is None
    with shared.claim("/p/data.py"):
        pass



def test_a_run_ending_on_an_error_does_not_wait_forever_for_the_pool(two_scripts, monkeypatch, directories):
    """Pool.terminate can wait forever for a lock a stopped worker held (CPython issue 96995).
    Simulated: terminate is stuck until the test lets it go. The run raises the worker's error
    and removes its directory while terminate is still stuck."""
    import threading
    from multiprocessing.pool import Pool

    real_check, real_terminate = runner._check_job, Pool.terminate
    released = threading.Event()
    stuck: list[threading.Thread] = []

    def check_then_fail(job):
        real_check(job)
        raise RuntimeError("worker failed")

    def stuck_until_released(pool):
        stuck.append(threading.current_thread())
        released.wait(120)  # only a guard: without the bounded wait the run waits here
        real_terminate(pool)

    monkeypatch.setattr(runner, "_check_job", check_then_fail)
    monkeypatch.setattr(runner, "TERMINATE_WAIT_SECONDS", 0.2)
    monkeypatch.setattr(Pool, "terminate", stuck_until_released)
    try:
        with pytest.raises(RuntimeError, match="worker failed"):
            run(two_scripts, jobs=2)
        assert not released.is_set() and len(stuck) == 1  # the run ended, terminate still stuck
        assert len(directories) == 1 and not os.path.exists(directories[0])
    finally:
        released.set()
        for thread in stuck:
            thread.join(60)
