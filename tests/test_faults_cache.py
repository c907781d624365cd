"""The results cache and the pool under attack and under damage: a cache made anywhere but here
(copied, unpacked, committed) hides no finding; no link in the cache folder is followed; any damage
to a cache file is discarded and rewritten; a run killed while it saves or while its pool works
leaves nothing behind (issue 19, items 9, 10 and 12)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ddplint import __version__
from ddplint.cache import CACHE_DIR_NAME
from ddplint.cli import main
from ddplint.runner import STOPPING_SIGNALS

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
BUGGY = ("ddp001_missing_sampler_buggy.py", "ddp003_data_parallel_buggy.py", "ddp008_load_without_map_location_buggy.py")
LINUX = sys.platform.startswith("linux")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Three scripts with findings; the cache goes to `.ddplint_cache` inside."""
    root = tmp_path / "proj"
    root.mkdir()
    for name in BUGGY:
        shutil.copy(EXAMPLES / name, root / name)
    return root


def check(root: Path, capsys, *extra: str) -> tuple[int, list[str], str]:
    """Exit code, the findings' lines, stderr of one in-process run with the cache in `root`."""
    code = main([str(root), "--cache-dir", str(root / CACHE_DIR_NAME), "-j", "1", *extra])
    captured = capsys.readouterr()
    return code, sorted(line for line in captured.out.splitlines() if ": DDP" in line), captured.err


def cache_files(root: Path) -> list[Path]:
    return sorted((root / CACHE_DIR_NAME).rglob("*.json"))


def rewrite_caches(root: Path, change) -> None:
    """Each cache file as `change(content)` makes it, whatever else it holds kept as it was."""
    for path in cache_files(root):
        content = json.loads(path.read_text())
        change(content)
        path.write_text(json.dumps(content))


def without_findings(content: dict) -> None:
    """What a planted cache says: every file checked and clean (an entry's last field is its
    findings, in every layout so far)."""
    for entry in content["entries"].values():
        entry[-1] = []


# -- a cache made elsewhere --------------------------------------------------------------------
@pytest.mark.parametrize("copy", [shutil.copy, shutil.copy2], ids=["fresh-mtimes", "mtimes-kept"])
def test_a_cache_copied_in_from_elsewhere_hides_no_finding(project, tmp_path, capsys, copy):
    """The cache travels with the project (an archive, a copied checkout) to the same path, after
    someone emptied its findings: its entries name these very files, with their content hashes
    (and, with mtimes kept as `cp -a` and tar keep them, their sizes and mtimes)."""
    code, expected, _ = check(project, capsys)
    assert code == 1 and len(expected) >= len(BUGGY)
    rewrite_caches(project, without_findings)
    elsewhere = tmp_path / "elsewhere"
    project.rename(elsewhere)
    shutil.copytree(elsewhere, project, copy_function=copy)
    assert check(project, capsys)[:2] == (1, expected)
    assert check(project, capsys)[:2] == (1, expected)  # and the cache rewritten is this machine's own


def test_a_cache_file_planted_next_to_the_real_one_is_not_trusted(project, capsys):
    """A cache file for the same settings written by someone else into a folder that is this
    machine's: without this folder's token it counts for nothing."""
    code, expected, _ = check(project, capsys)
    (path,) = cache_files(project)
    planted = json.loads(path.read_text())
    without_findings(planted)
    planted.pop("owner", None)
    path.write_text(json.dumps(planted))
    for name in BUGGY:
        os.utime(project / name, ns=(1, 1))  # another stamp: only the content hash could vouch
    assert check(project, capsys)[:2] == (1, expected)


def git(cwd: Path, *args: str) -> str:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]
    return subprocess.run(["git", *identity, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to commit and clone a repository")
@pytest.mark.parametrize("index_version", [2, 4])
def test_a_committed_cache_folder_is_ignored_with_a_note_and_left_as_committed(project, tmp_path, capsys, index_version):
    """Index version 4 keeps each path without the start it shares with the one before
    (`.coveragerc` and `.ddplint_cache/...` share the dot)."""
    code, expected, _ = check(project, capsys)
    rewrite_caches(project, without_findings)
    (project / ".coveragerc").write_text("[run]\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "add", "-f", CACHE_DIR_NAME)  # past the cache's own .gitignore
    git(project, "commit", "-q", "-m", "cache included")
    upstream = tmp_path / "upstream"
    project.rename(upstream)
    git(tmp_path, "clone", "-q", str(upstream), str(project))  # the same path: the entries name these files
    git(project, "update-index", "--index-version", str(index_version))
    for _ in range(2):
        code, found, err = check(project, capsys)
        assert (code, found) == (1, expected)
        assert err.count("git tracks files in it") == 1
    assert git(project, "status", "--porcelain", "--ignored", "--untracked-files=all") == ""


# -- links in the cache folder -----------------------------------------------------------------
@pytest.mark.parametrize("name", [".gitignore", "CACHEDIR.TAG", "key"])
def test_a_dangling_link_in_the_cache_folder_creates_nothing_where_it_points(project, tmp_path, capsys, name):
    target = tmp_path / "outside" / "created-through-the-link"
    target.parent.mkdir()
    (project / CACHE_DIR_NAME).mkdir()
    (project / CACHE_DIR_NAME / name).symlink_to(target)
    code, found, _ = check(project, capsys)
    assert code == 1 and found
    assert not target.exists()
    assert list(target.parent.iterdir()) == []


@pytest.mark.parametrize("linked", ["cache folder", "version folder"])
def test_a_linked_cache_or_version_folder_is_not_written_through(project, tmp_path, capsys, linked):
    outside = tmp_path / "outside"
    outside.mkdir()
    link = project / CACHE_DIR_NAME
    if linked == "version folder":
        link.mkdir()
        link = link / __version__
    link.symlink_to(outside, target_is_directory=True)
    expected = check(project, capsys, "--no-cache")[:2]
    for _ in range(2):
        code, found, err = check(project, capsys)
        assert (code, found) == expected
        assert list(outside.iterdir()) == []
        assert err.count("symbolic link") == 1 and "not using the cache" in err


# -- damage ------------------------------------------------------------------------------------
def _each_entry(change):
    def apply(content: dict) -> None:
        for path in list(content["entries"]):
            content["entries"][path] = change(content["entries"][path])
    return apply


def _each_finding(key: str, value):
    def change(entry: list) -> list:
        for finding in entry[-1]:
            finding[key] = value
        return entry
    return _each_entry(change)


def _field_of_entries(index: int, value):
    """One field of every entry (counted round its length, whatever the layout) of a wrong type."""
    def change(entry: list) -> list:
        entry[index % len(entry)] = value
        return entry
    return _each_entry(change)


def _replace_whole(data: bytes):
    def damage(path: Path) -> None:
        path.write_bytes(data)
    return damage


def _as_content(change):
    def damage(path: Path) -> None:
        content = json.loads(path.read_text())
        change(content)
        path.write_text(json.dumps(content))
    return damage


def _folder_in_its_place(path: Path) -> None:
    path.unlink()
    (path / "inside").mkdir(parents=True)
    (path / "inside" / "file").write_text("x")


def _file_in_place_of_the_version_folder(path: Path) -> None:
    shutil.rmtree(path.parent)
    path.parent.write_text("not a folder")


DAMAGE = {
    "truncated": lambda path: path.write_bytes(path.read_bytes()[: path.stat().st_size // 2]),
    "empty": _replace_whole(b""),
    "binary garbage": _replace_whole(bytes(range(256)) * 64),
    "nested 100000 deep": _replace_whole(b"[" * 100_000 + b"]" * 100_000),
    "nested objects 100000 deep": _replace_whole(b'{"a":' * 100_000 + b"1" + b"}" * 100_000),
    "a number": _replace_whole(b"1" * 5000),
    "top level a list": _replace_whole(b"[1, 2, 3]"),
    "format a string": _as_content(lambda c: c.update(format="2")),
    "entries a list": _as_content(lambda c: c.update(entries=[])),
    **{
        f"entries' field {index} a {type(value).__name__}": _as_content(_field_of_entries(index, value))
        for index, value in enumerate([None, {"x": 1}, "x", 1.5, [[]], True])
    },
    "entries objects": _as_content(_each_entry(lambda entry: {"0": entry})),
    "findings an object": _as_content(_each_entry(lambda entry: [*entry[:-1], {"code": "DDP001"}])),
    "each finding a list": _as_content(_each_entry(lambda entry: [*entry[:-1], [list(f.values()) for f in entry[-1]]])),
    "codes numbers": _as_content(_each_finding("code", 5)),
    "messages lists": _as_content(_each_finding("message", ["x"])),
    "locations objects": _as_content(_each_finding("location", {"row": 1, "column": 2})),
    "locations strings": _as_content(_each_finding("location", ["a", "b"])),
    "locations floats": _as_content(_each_finding("location", [1.5, 2])),
    "ends three long": _as_content(_each_finding("end", [1, 2, 3])),
    "severities unknown": _as_content(_each_finding("severity", "fatal")),
    "cells strings": _as_content(_each_finding("cell", "1")),
    "cells booleans": _as_content(_each_finding("cell", True)),
    "fixes malformed": _as_content(_each_finding("fix", {"message": 1, "applicability": "safe", "edits": [[1, 2]]})),
    "a folder in its place": _folder_in_its_place,
    "a file in place of the version folder": _file_in_place_of_the_version_folder,
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_cache_file_is_discarded_and_rewritten(project, capsys, damage):
    expected = check(project, capsys, "--no-cache")[:2]
    assert check(project, capsys)[:2] == expected
    (path,) = cache_files(project)
    DAMAGE[damage](path)
    code, found, err = check(project, capsys)
    assert (code, found) == expected
    assert "internal error" not in err and "Traceback" not in err and "warning" not in err
    assert path.is_file()
    rewritten = json.loads(path.read_text())  # what a damaged file is replaced with: a good one
    assert sorted(rewritten["entries"]) == sorted(str(project / name) for name in BUGGY)
    assert check(project, capsys)[:2] == expected


# -- leftovers ---------------------------------------------------------------------------------
def run_cli(root: Path, *args: str, prelude: str = "", env: dict | None = None, **popen) -> subprocess.CompletedProcess:
    """ddplint in its own interpreter over `root`, with `prelude` run first (a simulated fault)."""
    code = f"{prelude}\nimport sys\nfrom ddplint.cli import main\nsys.exit(main(sys.argv[1:]))"
    command = [sys.executable, "-c", code, str(root), "--cache-dir", str(root / CACHE_DIR_NAME), *args]
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=300, **popen)


def temporaries(root: Path) -> list[Path]:
    return [path for path in (root / CACHE_DIR_NAME).rglob("*") if path.name.endswith(".tmp")]


@pytest.mark.slow
def test_a_run_killed_while_it_saves_leaves_no_temporary_file_after_the_next(project):
    killed_at_rename = "import os, signal\nos.replace = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)"
    killed = run_cli(project, "-j", "1", prelude=killed_at_rename)
    assert killed.returncode == -signal.SIGKILL
    assert temporaries(project)  # what the kill left
    after = run_cli(project, "-j", "1")
    assert after.returncode == 1, after.stderr
    assert temporaries(project) == []
    assert cache_files(project)


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="limits the file size with setrlimit")
def test_a_save_that_fails_leaves_no_temporary_file(project):
    """A full disk, as far as this process can tell: no file may grow past 512 bytes (EFBIG), and the cache file would."""
    import resource

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))

    failed = run_cli(project, "-j", "1", preexec_fn=small_files)
    assert failed.returncode == 1
    assert "warning: cannot write cache" in failed.stderr and "Traceback" not in failed.stderr
    assert temporaries(project) == []


# Copies of the examples a pool run gets in the tests that stop it mid-run; a stopped run never
# analyses the rest, so a larger tree costs nothing and keeps the run at work when the signal comes.
POOL_RUN_COPIES = 30


def many_files(root: Path, copies: int) -> Path:
    root.mkdir()
    for number in range(copies):
        for path in EXAMPLES.glob("*.py"):
            shutil.copy(path, root / f"{path.stem}_{number}.py")
    return root


def children(pid: int) -> list[int]:
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def ended(pid: int) -> bool:
    """Gone, or a zombie waiting for a reaper (this container's init may never reap it)."""
    try:
        return "\nState:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True


def wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def summaries(temporary: Path) -> list[Path]:
    return sorted(temporary.glob("ddplint-summaries-*"))


def _stopping_signals_at_default() -> None:
    for name in STOPPING_SIGNALS:
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)


def start_pool_run(source: Path, temporary: Path) -> tuple[subprocess.Popen, list[int]]:
    """`ddplint -j 2` over `source`, returned once its two workers and its shared directory are there."""
    command = [sys.executable, "-m", "ddplint", str(source), "--no-cache", "-j", "2", "-q"]
    env = {**os.environ, "TMPDIR": str(temporary), "PYTHONDONTWRITEBYTECODE": "1"}
    # The stopping signals at their default in the run, whatever this test process inherited: under
    # `nohup` (or a CI runner that ignores SIGHUP) the run inherits "ignore", and ddplint rightly
    # leaves an ignored signal ignored, so the run would go on to its own end.
    run = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_stopping_signals_at_default
    )
    started = wait_until(lambda: len(children(run.pid)) >= 2 and summaries(temporary) != [], 120)
    assert started and run.poll() is None, "the run ended before its pool could be caught at work"
    return run, children(run.pid)


@pytest.mark.slow
@pytest.mark.skipif(not LINUX, reason="watches worker processes through /proc")
@pytest.mark.parametrize("stop", [signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM)], ids=["SIGTERM", "SIGHUP"])
def test_a_pool_run_stopped_by_a_signal_leaves_no_directory_and_no_worker(tmp_path, stop):
    source, temporary = many_files(tmp_path / "src", POOL_RUN_COPIES), tmp_path / "tmp"
    temporary.mkdir()
    run, workers = start_pool_run(source, temporary)
    run.send_signal(stop)
    assert run.wait(60) == -stop  # ended by the signal, as without ddplint's clean-up
    assert summaries(temporary) == []
    assert wait_until(lambda: all(ended(worker) for worker in workers), 10)
    run.stderr.close()


@pytest.mark.slow
@pytest.mark.skipif(not LINUX, reason="watches worker processes through /proc")
def test_a_pool_run_killed_outright_leaves_nothing_after_the_next(tmp_path):
    source, temporary = many_files(tmp_path / "src", POOL_RUN_COPIES), tmp_path / "tmp"
    temporary.mkdir()
    run, workers = start_pool_run(source, temporary)
    run.kill()
    assert run.wait(60) == -signal.SIGKILL
    run.stderr.close()
    assert wait_until(lambda: all(ended(worker) for worker in workers), 10)  # they die with it
    left = summaries(temporary)
    assert left  # SIGKILL gives no chance to clean up: the next run does
    env = {**os.environ, "TMPDIR": str(temporary)}
    after = subprocess.run(
        [sys.executable, "-m", "ddplint", str(source / "ddp001_missing_sampler_buggy_0.py"),
         str(source / "ddp002_missing_set_epoch_buggy_0.py"), "--no-cache", "-j", "2", "-q"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert after.returncode == 1, after.stderr
    assert summaries(temporary) == []
