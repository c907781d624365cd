"""The results cache and the process pool change how fast results come, never what they are."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from case_files import CASE_FILES
from ddplint import api, engine, runner
from ddplint.analysis.syntax import forget_parsed
from ddplint.api import lint_paths
from ddplint.cache import FileStamp, ResultCache, default_cache_dir
from ddplint.cli import main
from ddplint.rules import select_rules

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    return tmp_path / "examples"


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """Names of the files libcst parses (in this process: use jobs=1). The trees kept for a second
    parse of the same content are dropped first (`syntax.forget_parsed`): the cache, not a kept
    tree, must be what spares a parse."""
    forget_parsed()
    seen: list[str] = []
    real = engine.cst.parse_module

    def counting(data, *args, **kwargs):
        seen.append(data[:0])  # only the count matters
        return real(data, *args, **kwargs)

    monkeypatch.setattr(engine.cst, "parse_module", counting)
    return seen


def run(paths, cache, jobs=1):
    rules = select_rules()
    return [(d.filename, d.location.row, d.code, d.message) for d in lint_paths(paths, rules, [], jobs=jobs, cache=cache)]


def fresh_cache(directory: Path) -> ResultCache:
    return ResultCache(directory, ",".join(r.code for r in select_rules()))


def test_second_run_over_unchanged_files_parses_nothing(project, tmp_path, parses):
    first_cache = fresh_cache(tmp_path / "cache")
    first = run([str(project)], first_cache)
    assert first and len(parses) > 0
    assert first_cache.save() is None
    parses.clear()
    second = run([str(project)], fresh_cache(tmp_path / "cache"))
    assert second == first
    assert parses == []


def test_touched_file_is_recognised_by_content(project, tmp_path, parses):
    cache = fresh_cache(tmp_path / "cache")
    first = run([str(project)], cache)
    cache.save()
    for path in project.glob("*.py"):
        os.utime(path, ns=(1, 1))  # new mtime, same bytes
    parses.clear()
    assert run([str(project)], fresh_cache(tmp_path / "cache")) == first
    assert parses == []


def test_edited_file_is_checked_again(project, tmp_path, parses):
    cache = fresh_cache(tmp_path / "cache")
    run([str(project)], cache)
    cache.save()
    buggy = project / "ddp003_data_parallel_buggy.py"
    fixed = project / "ddp003_data_parallel_fixed.py"
    buggy.write_bytes(fixed.read_bytes())
    parses.clear()
    forget_parsed()  # the tree of fixed.py's content, kept from the first run, is not the check
    results = run([str(project)], fresh_cache(tmp_path / "cache"))
    assert len(parses) == 1
    assert not [r for r in results if r[0] == str(buggy)]


def test_cache_depends_on_the_selected_rules(project, tmp_path):
    everything = ResultCache(tmp_path / "cache", "DDP001,DDP002,DDP003,DDP004")
    only_ddp003 = ResultCache(tmp_path / "cache", "DDP003")
    assert everything.path != only_ddp003.path


def test_damaged_cache_is_ignored(project, tmp_path):
    cache = fresh_cache(tmp_path / "cache")
    expected = run([str(project)], cache)
    cache.save()
    cache.path.write_text('{"not": "what we wrote"')
    assert run([str(project)], fresh_cache(tmp_path / "cache")) == expected
    cache.path.write_text(json.dumps({str(p): {"size": 1} for p in project.glob("*.py")}))
    assert run([str(project)], fresh_cache(tmp_path / "cache")) == expected


def test_cli_writes_a_marked_cache_and_no_cache_writes_nothing(project, tmp_path, monkeypatch, capsys):
    cache_dir = tmp_path / "cli-cache"
    assert main([str(project), "--cache-dir", str(cache_dir), "-q"]) == 1
    assert (cache_dir / ".gitignore").read_text().strip().endswith("*")
    assert (cache_dir / "CACHEDIR.TAG").exists()
    first = capsys.readouterr().out
    assert main([str(project), "--cache-dir", str(cache_dir), "-q"]) == 1
    assert capsys.readouterr().out == first
    other = tmp_path / "unused"
    assert main([str(project), "--cache-dir", str(other), "--no-cache", "-q"]) == 1
    assert not other.exists()


def test_unwritable_cache_dir_warns_and_still_reports(project, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main([str(project), "--cache-dir", str(blocker / "cache"), "-q"]) == 1
    captured = capsys.readouterr()
    assert "DDP001" in captured.out
    assert "warning: cannot write cache" in captured.err


def test_default_cache_dir_is_the_project_root(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    nested = tmp_path / "src" / "pkg"
    nested.mkdir(parents=True)
    assert default_cache_dir(nested) == tmp_path.resolve() / ".ddplint_cache"


@pytest.mark.parametrize("jobs", [2])
def test_pool_gives_the_same_results_in_the_same_order(jobs):
    # A sample of the corpus (every third file) and the examples: enough files for the pool to
    # reorder them, a third of the time of linting the whole corpus twice.
    sample = [str(path) for path in CASE_FILES[::3]] + [str(EXAMPLES)]
    serial = run(sample, None, jobs=1)
    assert len(serial) > 20
    assert run(sample, None, jobs=jobs) == serial


def test_large_files_go_to_one_worker_and_give_the_same_results(monkeypatch):
    """Large files share one task of the pool (one worker, one file at a time, so two libcst
    trees of large files never peak together); the results are what one process finds."""
    sample = [str(path) for path in CASE_FILES[1::4]] + [str(EXAMPLES)]
    serial = run(sample, None, jobs=1)
    monkeypatch.setattr(runner, "LARGE_FILE_BYTES", 3000)  # 15 of these 93 files count as large
    assert run(sample, None, jobs=2) == serial


def test_a_large_file_that_needs_a_large_modules_summary_is_checked(tmp_path, monkeypatch):
    """The worker holding the large-tree lock for a file takes it again for the summary of a
    large module that file imports (the lock is reentrant), and the result is the serial one."""
    (tmp_path / "data.py").write_text(
        "from torch.utils.data import DataLoader\n\n\ndef build_loader(ds):\n"
        "    return DataLoader(ds, batch_size=8, shuffle=True)\n" + "# padding\n" * 400
    )
    (tmp_path / "train.py").write_text(
        "import torch.distributed as dist\nfrom data import build_loader\n\n"
        "dist.init_process_group('nccl')\nloader = build_loader(train_set)\nfor epoch in range(3):\n"
        "    for batch in loader:\n        step(batch)\n" + "# padding\n" * 400
    )
    serial = run([str(tmp_path)], None, jobs=1)
    assert [code for _, _, code, _ in serial] == ["DDP001"]
    monkeypatch.setattr(runner, "LARGE_FILE_BYTES", 1000)
    assert run([str(tmp_path)], None, jobs=2) == serial


def test_pool_tasks_put_every_large_file_in_one_task_largest_first():
    sizes = [10, 250_000, 5, 900_000, 40_000, 200_000, 7]
    jobs = [runner._Job(i, f"f{i}.py", ("DDP001",), "DDP001", FileStamp(size, 0), None, False) for i, size in enumerate(sizes)]
    tasks = runner._tasks(jobs, 2)
    assert [job.stamp.size for job in tasks[0]] == [900_000, 250_000, 200_000]
    rest = [job.stamp.size for task in tasks[1:] for job in task]
    assert rest == [40_000, 10, 7, 5]


def test_a_few_small_files_are_checked_without_a_pool(tmp_path, monkeypatch):
    """A pool costs more than it saves for one or two small files (unless --jobs asks for it)."""
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("import torch.nn as nn\nm = nn.DataParallel(m)\n")

    def no_pool(*args):
        raise AssertionError("a pool was started")

    monkeypatch.setattr(runner, "_pool", no_pool)
    assert [code for _, _, code, _ in run([str(tmp_path)], None, jobs=None)] == ["DDP003", "DDP003"]
    with pytest.raises(AssertionError, match="a pool was started"):
        run([str(tmp_path)], None, jobs=2)


def test_pool_reports_unreadable_and_vanished_files_in_order(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("import torch.nn as nn\nm = nn.DataParallel(m)\n")
    (tmp_path / "b.py").symlink_to(tmp_path / "b.py")  # a symlink loop
    (tmp_path / "c.py").write_text("import torch.nn as nn\nm = nn.DataParallel(m)\n")
    real_discover = api.discover

    def discover_then_delete(*args):
        for path, problem in real_discover(*args):
            yield path, problem
        (tmp_path / "c.py").unlink()  # deleted after discovery, before it is read

    monkeypatch.setattr(api, "discover", discover_then_delete)
    results = [(Path(f).name, code, message.split(":")[0]) for f, _, code, message in run([str(tmp_path)], None, jobs=2)]
    assert results == [
        ("a.py", "DDP003", results[0][2]),
        ("b.py", "DDP000", "cannot read"),
        ("c.py", "DDP000", "cannot read"),
    ]


def test_cached_result_follows_the_project_modules_it_imports(tmp_path, parses):
    """train.py gets its loader from data.py: editing only data.py must change train.py's result."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "data.py").write_text(
        "from torch.utils.data import DataLoader\n\n"
        "def build_loader(dataset):\n    return DataLoader(dataset, batch_size=8, shuffle=True)\n"
    )
    (project / "train.py").write_text(
        "import torch.distributed as dist\nfrom data import build_loader\n\n"
        "dist.init_process_group('gloo')\nloader = build_loader(train_set)\n"
        "for epoch in range(3):\n    for x in loader:\n        model(x).backward()\n        optimizer.step()\n"
    )

    def train_findings():
        cache = fresh_cache(tmp_path / "cache")
        found = [(Path(f).name, code) for f, _, code, _ in run([str(project)], cache)]
        cache.save()
        return found

    assert ("train.py", "DDP001") in train_findings()
    parses.clear()
    assert ("train.py", "DDP001") in train_findings()
    assert parses == []  # nothing changed: nothing parsed
    (project / "data.py").write_text(
        "from torch.utils.data import DataLoader, DistributedSampler\n\n"
        "def build_loader(dataset):\n    return DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))\n"
    )
    assert ("train.py", "DDP001") not in train_findings()


def test_a_run_leaves_the_callers_collector_as_it_was(tmp_path):
    """Collections are rarer during a run and the heap alive at its start is frozen; both are
    undone when the run ends, also when the caller stops reading early."""
    import gc

    from ddplint.runner import COLLECTION_THRESHOLDS

    for index in range(3):
        (tmp_path / f"m{index}.py").write_text("import torch.nn as nn\nmodel = nn.DataParallel(model)\n")
    before = (gc.get_threshold(), gc.get_freeze_count())
    assert gc.get_threshold() != COLLECTION_THRESHOLDS
    run = lint_paths([str(tmp_path)], jobs=1)
    next(run)
    assert gc.get_threshold() == COLLECTION_THRESHOLDS and gc.get_freeze_count() > 0
    run.close()
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
    assert len(list(lint_paths([str(tmp_path)], jobs=1))) == 3
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
