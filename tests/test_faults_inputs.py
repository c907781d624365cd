"""Bad input never hangs ddplint and never costs another file its findings (issue 19, items 8, 9, 11).

Each case runs the CLI in-process next to a file with a known finding (`good.py`, DDP003) and
checks the documented outcome: one line naming the bad input (or, for configuration, the
documented exit 2), the good file's finding, no "internal error". A case that would hang is
stopped by an alarm, so it fails instead of blocking the suite. Permission cases are simulated
by refusing the system call for one path (the tests run as root, which the kernel lets read
anything).
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from ddplint.cli import main

GOOD = "import torch.nn as nn\nmodel = nn.DataParallel(model)\n"  # DDP003 at 2:9
GOOD_FINDING = "good.py:2:9: DDP003"

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="the guard against hangs needs SIGALRM (POSIX)")


class Hung(Exception):
    pass


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise Hung in the code under test if it runs longer (a blocking open of a pipe is
    interrupted by the signal)."""

    def stop(signum, frame):
        raise Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run(*args: str, seconds: float = 20) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        with deadline(seconds):
            code = main(["--no-cache", *args])
    finally:
        sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def assert_no_crash(out: str, err: str) -> None:
    assert "internal error" not in out + err and "Traceback" not in out + err


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "good.py").write_text(GOOD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


# -- item 8: only regular files are read, and never without a bound ----------------------------------
@needs_fifo
@pytest.mark.parametrize("name", ["x.py", "x.ipynb"])
@pytest.mark.parametrize("mode", [[], ["--fix"], ["--diff"]], ids=["check", "fix", "diff"])
def test_a_pipe_found_in_a_folder_is_passed_over(project, name, mode):
    os.mkfifo(project / name)
    code, out, err = run(*mode, ".")
    assert_no_crash(out, err)
    assert name not in out + err
    if not mode or mode == ["--fix"]:
        assert GOOD_FINDING in out and code == 1


@needs_fifo
@pytest.mark.parametrize("mode", [[], ["--fix"], ["--diff"]], ids=["check", "fix", "diff"])
def test_a_pipe_named_on_the_command_line_is_one_line(project, mode):
    os.mkfifo(project / "x.py")
    code, out, err = run(*mode, "x.py", "good.py")
    assert_no_crash(out, err)
    assert "x.py:1:1: DDP000 cannot read: not a regular file (a named pipe)" in (err if mode == ["--diff"] else out)
    assert code == 1  # with --diff too: a file could not be read
    if mode != ["--diff"]:
        assert GOOD_FINDING in out


def test_a_link_to_a_device_named_on_the_command_line_is_one_line(project):
    (project / "null.py").symlink_to(os.devnull)
    code, out, err = run("null.py", "good.py")
    assert "null.py:1:1: DDP000 cannot read: not a regular file (a character device)" in out
    assert GOOD_FINDING in out and code == 1


def test_a_link_to_dev_zero_costs_no_memory(project):
    """Found in a folder it is passed over, named it is one line. In a process allowed 1 GB: read
    without a bound, /dev/zero fills it in a few seconds."""
    (project / "zero.py").symlink_to("/dev/zero")
    (project / "named").mkdir()
    (project / "named" / "zero.py").symlink_to("/dev/zero")

    import resource

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))

    command = [sys.executable, "-m", "ddplint", "--no-cache", ".", "named/zero.py"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, preexec_fn=limit_memory, cwd=project)
    assert done.returncode == 1, done.stderr
    assert done.stdout.count("zero.py") == 1
    assert "named/zero.py:1:1: DDP000 cannot read: not a regular file (a character device)" in done.stdout
    assert GOOD_FINDING in done.stdout


@needs_fifo
def test_config_naming_a_pipe_is_an_error_not_a_hang(project):
    os.mkfifo(project / "ddplint.toml")
    code, out, err = run("--config", "ddplint.toml", "good.py")
    assert code == 2
    assert "ddplint: error: ddplint.toml: cannot read: not a regular file (a named pipe)" in err


@needs_fifo
def test_a_file_swapped_for_a_pipe_after_the_look_is_refused_not_waited_on(tmp_path, monkeypatch):
    """The kind of file is judged again on the open descriptor, and the open does not block."""
    from ddplint import source

    regular = tmp_path / "regular.py"
    regular.write_text(GOOD)
    pipe = tmp_path / "pipe.py"
    os.mkfifo(pipe)
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda path, *a, **k: real_stat(regular if path == pipe else path, *a, **k))
    with deadline(5), pytest.raises(OSError, match="named pipe"):
        source.read_file(pipe)


def test_reading_is_bounded(tmp_path):
    from ddplint import source

    path = tmp_path / "big.py"
    path.write_bytes(b"x" * 1001)
    assert source.read_file(path, limit=1001) == b"x" * 1001
    with pytest.raises(OSError, match="over the"):
        source.read_file(path, limit=1000)


# -- item 9: one bad input, one line; every other file keeps its findings --------------------------
def test_a_notebook_nested_100000_deep_is_one_line(project):
    (project / "deep.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    code, out, err = run(".")
    assert_no_crash(out, err)
    assert "deep.ipynb:1:1: DDP000 not a notebook: JSON nested deeper than" in out
    assert GOOD_FINDING in out and code == 1


def test_a_notebook_with_a_number_too_long_to_convert_is_one_line(project):
    (project / "long.ipynb").write_text('{"cells": [], "n": ' + "1" * 5000 + "}")
    code, out, err = run(".")
    assert_no_crash(out, err)
    assert "long.ipynb:1:1: DDP000 not a notebook: invalid JSON" in out
    assert GOOD_FINDING in out and code == 1


def make_deep_tree(root: Path, depth: int) -> Path:
    """`root/d/d/.../d` (`depth` folders), made relative to each parent: os.makedirs recurses."""
    os.mkdir(root)
    here = os.open(root, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=here)
            below = os.open("d", os.O_RDONLY, dir_fd=here)
            os.close(here)
            here = below
        descriptor = os.open("buggy.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=here)
        os.write(descriptor, GOOD.encode())
        os.close(descriptor)
    finally:
        os.close(here)
    return Path(root, *["d"] * depth, "buggy.py")


def remove_deep_tree(deepest_file: Path) -> None:
    """Bottom-up, one level at a time: shutil.rmtree (and so pytest's clean-up of its temporary
    folders) recurses once per level and gives up on such a tree, leaving it behind."""
    deepest_file.unlink()
    folder = deepest_file.parent
    while folder.name == "d":
        folder.rmdir()
        folder = folder.parent


def test_a_folder_tree_1100_deep_is_walked(project):
    deepest = make_deep_tree(project / "tree", 1100)
    try:
        code, out, err = run(".")
    finally:
        remove_deep_tree(deepest)
    assert_no_crash(out, err)
    assert f"{deepest.relative_to(project)}:2:9: DDP003" in out
    assert GOOD_FINDING in out and code == 1


@pytest.mark.parametrize(
    "text,key",
    [
        ('tool = "ddplint"\n', "'tool': expected a table, got str 'ddplint'"),
        ("tool = 5  # ddplint\n", "'tool': expected a table, got int 5"),
        ("[tool.ddplint]\nselect = " + "[" * 100_000 + "]" * 100_000 + "\n", "invalid TOML: nested too deeply"),
    ],
    ids=["tool-string", "tool-int", "deep-array"],
)
def test_a_pyproject_of_the_wrong_shape_is_the_documented_config_error(project, text, key):
    (project / "pyproject.toml").write_text(text)
    code, out, err = run(".")
    assert_no_crash(out, err)
    assert code == 2
    assert err.startswith(f"ddplint: error: {project / 'pyproject.toml'}: {key}")


def test_500_adjacent_string_literals_are_analysed(project):
    literals = " ".join(['"a"'] * 500)
    (project / "strings.py").write_text(f"import torch.nn as nn\nx = ({literals})\nmodel = nn.DataParallel(model)\n")
    code, out, err = run("strings.py")
    assert_no_crash(out, err)
    assert out.splitlines()[0].startswith("strings.py:3:9: DDP003")
    assert "DDP000" not in out


def test_a_null_byte_in_a_comment_costs_the_file_no_findings(project):
    (project / "nul.py").write_bytes(b"import torch.nn as nn\n# see\x00here\nmodel = nn.DataParallel(model)\n")
    code, out, err = run("nul.py")
    assert_no_crash(out, err)
    lines = out.splitlines()
    assert lines[0].startswith("nul.py:2:6: DDP000 syntax error: null byte in a comment")
    assert lines[1].startswith("nul.py:3:9: DDP003")
    assert code == 1


# -- item 11: what cannot be read is said, never skipped in silence --------------------------------
def refuse(monkeypatch, function_name: str, refused: Path, module=os) -> None:
    """`module.function_name` raises PermissionError for `refused` and anything under it."""
    real = getattr(module, function_name)

    def refusing(path, *args, **kwargs):
        if isinstance(path, (str, os.PathLike)) and os.path.abspath(os.fspath(path)).startswith(str(refused)):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(module, function_name, refusing)


def test_an_unreadable_folder_is_reported_not_passed(project, monkeypatch):
    (project / "secret").mkdir()
    (project / "secret" / "train.py").write_text(GOOD)
    refuse(monkeypatch, "scandir", project / "secret")
    code, out, err = run(".")
    assert_no_crash(out, err)
    assert "secret:1:1: DDP000 cannot read directory: Permission denied" in out
    assert GOOD_FINDING in out and code == 1
    assert "All checks passed" not in err


def test_a_file_in_a_folder_that_may_not_be_searched_is_one_line(project, monkeypatch):
    (project / "secret").mkdir()
    (project / "secret" / "train.py").write_text(GOOD)
    refuse(monkeypatch, "stat", project / "secret" / "train.py")  # what the kernel says inside such a folder
    code, out, err = run("secret/train.py", "good.py")
    assert_no_crash(out, err)
    assert "secret/train.py:1:1: DDP000 cannot read: Permission denied" in out
    assert GOOD_FINDING in out and code == 1


def test_an_unreadable_pyproject_is_an_error_naming_it(project, monkeypatch):
    (project / "pyproject.toml").write_text('[tool.ddplint]\nignore = ["DDP003"]\n')
    refuse(monkeypatch, "open", project / "pyproject.toml")
    refuse(monkeypatch, "open", project / "pyproject.toml", module=io)  # pathlib opens through io
    code, out, err = run(".")
    assert_no_crash(out, err)
    assert code == 2
    assert err.startswith(f"ddplint: error: {project / 'pyproject.toml'}: cannot read: Permission denied")
