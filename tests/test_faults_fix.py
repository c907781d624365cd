"""`--fix` under faults: a full disk, a kill or an error mid-write, a file edited by someone else
while ddplint works on it, a file it may not write, files in other encodings than UTF-8, and
notebook comments that look like ddplint's own markers. Whatever happens, the file holds either
exactly its old bytes or exactly the fixed ones, the report says which, and nothing is left behind."""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import ddplint.cli
from ddplint.cli import main
from ddplint.engine import lint_source
from ddplint.rules import select_rules

ROOT = Path(__file__).resolve().parent.parent

# Two safe fixes: DDP006 drops `shuffle=True` (a sampler is given), DDP002 adds `set_epoch`.
SCRIPT = """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

dist.init_process_group("gloo")
sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, batch_size=32, shuffle=True, sampler=sampler)
for epoch in range(10):
    for batch in loader:
        step(batch)
"""


@pytest.fixture
def script(tmp_path: Path, monkeypatch) -> Path:
    path = tmp_path / "train.py"
    path.write_bytes(SCRIPT.encode())
    monkeypatch.chdir(tmp_path)
    return path


def run_fix(capsys, *args: str) -> tuple[int, str]:
    code = main(["--fix", "--no-cache", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "internal error" not in out + err
    return code, out + err


def assert_untouched(path: Path, original: bytes) -> None:
    """The file has its old bytes and its folder holds no temporary file."""
    assert path.read_bytes() == original
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def assert_reported_unfixed(output: str, problem: str) -> None:
    """One DDP000 line naming the file and the problem; both findings still reported; none counted
    as fixed."""
    assert f"train.py:1:1: DDP000 {problem}" in output
    assert "DDP006" in output and "DDP002" in output
    assert "fixed" not in output.replace(problem, "")


class _FailingWriter:
    """A file opened for writing that takes half of what it is given, then fails like a full disk
    (or calls `on_write` instead: a kill)."""

    def __init__(self, handle, on_write):
        self._handle, self._on_write = handle, on_write

    def write(self, data):
        self._handle.write(data[: len(data) // 2])
        self._handle.flush()
        self._on_write()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._handle.close()

    def __getattr__(self, name):
        return getattr(self._handle, name)


def fail_writes_under(folder: Path, monkeypatch, on_write) -> None:
    """Every file opened for writing inside `folder` fails on its first write, half written."""
    real_open = builtins.open

    def fake_open(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        if any(flag in mode for flag in "wax+") and str(file).startswith(str(folder)):
            return _FailingWriter(handle, on_write)
        return handle

    monkeypatch.setattr(builtins, "open", fake_open)


def _full_disk():
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


# -- a failing write ----------------------------------------------------------------------------
def test_full_disk_leaves_the_file_whole_and_says_so(script: Path, monkeypatch, capsys):
    fail_writes_under(script.parent, monkeypatch, _full_disk)
    code, output = run_fix(capsys, "train.py")
    assert code == 1
    assert_untouched(script, SCRIPT.encode())
    assert_reported_unfixed(output, "cannot write fixes: No space left on device; the file is left as it was")


@pytest.mark.parametrize(
    ("step", "where"),
    [
        (tempfile, "mkstemp"),  # a folder that takes no new file
        (os, "fsync"),
        (os, "chmod"),
        (os, "replace"),
    ],
)
def test_a_failure_at_any_step_of_the_write_leaves_the_file_whole(script: Path, monkeypatch, capsys, step, where):
    def fails(*args, **kwargs):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(step, where, fails)
    code, output = run_fix(capsys, "train.py")
    assert code == 1
    assert_untouched(script, SCRIPT.encode())
    detail = "cannot create a temporary file beside it: " if where == "mkstemp" else ""
    assert_reported_unfixed(output, f"cannot write fixes: {detail}Input/output error; the file is left as it was")


def test_an_interrupt_during_the_write_leaves_the_file_whole(script: Path, monkeypatch, capsys):
    def interrupted():
        raise KeyboardInterrupt

    fail_writes_under(script.parent, monkeypatch, interrupted)
    assert main(["--fix", "--no-cache", "train.py"]) == 2  # stopped: exit 2, as for any interrupt
    assert_untouched(script, SCRIPT.encode())


KILLED_MID_WRITE = """
import builtins, os, signal, sys
real_open = builtins.open
class Dying:
    def __init__(self, handle): self.handle = handle
    def write(self, data):
        self.handle.write(data[: len(data) // 2]); self.handle.flush(); os.fsync(self.handle.fileno())
        os.kill(os.getpid(), signal.SIGKILL)
    def __enter__(self): return self
    def __exit__(self, *exc): self.handle.close()
    def __getattr__(self, name): return getattr(self.handle, name)
def fake_open(file, mode="r", *args, **kwargs):
    handle = real_open(file, mode, *args, **kwargs)
    return Dying(handle) if "w" in mode and str(file).startswith(os.getcwd()) else handle
builtins.open = fake_open
from ddplint.cli import main
sys.exit(main(["--fix", "--no-cache", "train.py"]))
"""


@pytest.mark.slow
def test_a_kill_during_the_write_leaves_the_file_whole(script: Path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE], cwd=script.parent, env=env,
                          capture_output=True, timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert script.read_bytes() == SCRIPT.encode()
    # What a kill cannot clean up is a hidden file named for what it is.
    for left in (p.name for p in script.parent.iterdir() if p != script):
        assert left.startswith(".train.py.") and left.endswith(".ddplint-fix.tmp")


# -- a file it may not write ----------------------------------------------------------------------
def test_a_file_it_cannot_write_is_reported_not_counted_as_fixed(script: Path, monkeypatch, capsys):
    def denied():
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    fail_writes_under(script.parent, monkeypatch, denied)
    code, output = run_fix(capsys, "train.py")
    assert code == 1
    assert_untouched(script, SCRIPT.encode())
    assert_reported_unfixed(output, "cannot write fixes: Permission denied; the file is left as it was")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write a read-only file")
def test_a_read_only_file_is_not_replaced(script: Path, capsys):
    script.chmod(0o444)
    code, output = run_fix(capsys, "train.py")
    assert code == 1
    assert_untouched(script, SCRIPT.encode())
    assert_reported_unfixed(output, "cannot write fixes: Permission denied; the file is left as it was")


# -- someone else edits the file meanwhile ---------------------------------------------------------
def test_an_edit_made_while_fixing_is_kept_and_the_fix_refused(script: Path, monkeypatch, capsys):
    edited = SCRIPT.encode() + b"print('saved in the editor meanwhile')\n"
    real_fix_document = ddplint.cli.fix_document

    def fix_then_someone_saves(*args, **kwargs):
        result = real_fix_document(*args, **kwargs)
        script.write_bytes(edited)
        return result

    monkeypatch.setattr(ddplint.cli, "fix_document", fix_then_someone_saves)
    code, output = run_fix(capsys, "train.py")
    assert code == 1
    assert_untouched(script, edited)
    assert_reported_unfixed(
        output, "not fixed: the file changed while ddplint was fixing it; left as it is (run --fix again)"
    )


# -- what a successful write keeps --------------------------------------------------------------------
def test_a_fixed_file_keeps_its_mode_and_a_link_stays_a_link(tmp_path: Path, monkeypatch, capsys):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "train.py"
    target.write_bytes(SCRIPT.encode())
    target.chmod(0o751)
    (tmp_path / "train.py").symlink_to(target)
    monkeypatch.chdir(tmp_path)
    code, output = run_fix(capsys, "train.py")
    assert code == 0 and "(2 fixed, 0 remaining)" in output
    assert (tmp_path / "train.py").is_symlink()
    assert "set_epoch(epoch)" in target.read_text() and "shuffle" not in target.read_text()
    assert target.stat().st_mode & 0o7777 == 0o751
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["train.py"]


# -- encodings -------------------------------------------------------------------------------------------
# Non-ASCII text before the fix on its line: the columns must count the file's own characters.
LOADER_LINE = 'loader = DataLoader(train_set, "été à Zürich{extra}", shuffle=True, sampler=sampler)'
ENCODED_CASES = [
    pytest.param("# -*- coding: latin-1 -*-\n", "latin-1", "", "\n", id="latin-1"),
    pytest.param("# -*- coding: cp1252 -*-\n", "cp1252", " €", "\r\n", id="cp1252-crlf"),
    pytest.param("", "utf-8-sig", " €", "\n", id="utf-8-bom"),
    pytest.param("", "utf-8-sig", " 🚀", "\r\n", id="utf-8-bom-crlf"),
    pytest.param("#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\n", "latin-1", "", "\r\n", id="latin-1-vim"),
]


def encoded_script(header: str, extra: str, newline: str, fixed: bool) -> str:
    text = header + SCRIPT.replace(
        'loader = DataLoader(train_set, batch_size=32, shuffle=True, sampler=sampler)', LOADER_LINE.format(extra=extra)
    )
    if fixed:
        text = text.replace("shuffle=True, ", "").replace(
            "for epoch in range(10):\n", "for epoch in range(10):\n    sampler.set_epoch(epoch)\n"
        )
    return text.replace("\n", newline)


@pytest.mark.parametrize(("header", "encoding", "extra", "newline"), ENCODED_CASES)
def test_fix_is_exact_in_every_encoding(tmp_path: Path, monkeypatch, capsys, header, encoding, extra, newline):
    before = encoded_script(header, extra, newline, fixed=False).encode(encoding)
    after = encoded_script(header, extra, newline, fixed=True).encode(encoding)
    path = tmp_path / "train.py"
    path.write_bytes(before)
    monkeypatch.chdir(tmp_path)

    # json: the DDP006 edit starts where `shuffle` starts, counted in characters of the line
    main(["--no-cache", "--output-format", "json", "train.py"])
    (edit,) = next(d for d in json.loads(capsys.readouterr().out) if d["code"] == "DDP006")["fix"]["edits"]
    line = LOADER_LINE.format(extra=extra)
    assert edit["location"]["column"] == line.index("shuffle") + 1
    assert edit["end_location"]["column"] == line.index("sampler=") + 1

    main(["--no-cache", "--diff", "train.py"])
    diff = capsys.readouterr().out
    assert "+" + line.replace("shuffle=True, ", "") in diff

    code, output = run_fix(capsys, "train.py")
    assert code == 0 and "(2 fixed, 0 remaining)" in output
    assert path.read_bytes() == after


@pytest.mark.parametrize(("header", "encoding", "extra", "newline"), ENCODED_CASES)
def test_fix_through_stdin_answers_in_the_input_encoding(monkeypatch, header, encoding, extra, newline):
    before = encoded_script(header, extra, newline, fixed=False).encode(encoding)
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(before)))
    monkeypatch.setattr(sys, "stdout", stdout)
    assert main(["--fix", "--no-cache", "-", "--stdin-filename", "train.py"]) == 0
    stdout.flush()
    assert stdout.buffer.getvalue() == encoded_script(header, extra, newline, fixed=True).encode(encoding)


def test_fix_through_stdin_passes_undecodable_input_through(monkeypatch, capsys):
    """`ddplint --fix - < a.py > b.py` must never replace the code by a report."""
    before = b"# -*- coding: utf-8 -*-\nloader = DataLoader(ds, '\xe9t\xe9', shuffle=True, sampler=s)\n"
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(before)))
    monkeypatch.setattr(sys, "stdout", stdout)
    assert main(["--fix", "--no-cache", "-", "--stdin-filename", "train.py"]) == 1
    stdout.flush()
    assert stdout.buffer.getvalue() == before
    assert "train.py:2:28: DDP000 cannot decode file" in capsys.readouterr().err


def test_editor_text_its_cookie_cannot_hold_keeps_exact_columns():
    """A buffer the editor holds (the language server) may contain what its declared encoding
    cannot store: columns still count its characters."""
    line = LOADER_LINE.format(extra=" 🚀")
    source = "# -*- coding: latin-1 -*-\n" + SCRIPT.replace(
        'loader = DataLoader(train_set, batch_size=32, shuffle=True, sampler=sampler)', line
    )
    (finding,) = lint_source(source, "train.py", select_rules(["DDP006"]))
    (edit,) = finding.fix.edits
    assert (edit.location.column, edit.end_location.column) == (line.index("shuffle") + 1, line.index("sampler=") + 1)


# -- notebooks: comments that look like ddplint's markers ---------------------------------------------------
def _notebook(*cells: list[str]) -> str:
    document = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
            for source in cells
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


NOTEBOOK_SETUP = [
    "import torch.distributed as dist\n",
    "from torch.utils.data import DataLoader, DistributedSampler\n",
    "%matplotlib inline\n",
]
NOTEBOOK_TRAIN = [
    'dist.init_process_group("gloo")\n',
    "sampler = DistributedSampler(train_set)\n",
    "loader = DataLoader(train_set, shuffle=True, sampler=sampler)",
]


@pytest.mark.parametrize(
    "comment", ["#ddplint-ipython: rm -rf data/", "#ddplint-ipython-2: rm -rf data/", "#%% ddplint cell boundary"]
)
def test_notebook_comments_that_look_like_markers_come_back_as_they_were(tmp_path: Path, monkeypatch, capsys, comment):
    path = tmp_path / "explore.ipynb"
    train = [NOTEBOOK_TRAIN[0], comment + "\n", *NOTEBOOK_TRAIN[1:]]
    path.write_text(_notebook(NOTEBOOK_SETUP, train), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, output = run_fix(capsys, "explore.ipynb")
    assert code == 0 and "(1 fixed, 0 remaining)" in output
    expected = _notebook(NOTEBOOK_SETUP, [*train[:-1], "loader = DataLoader(train_set, sampler=sampler)"])
    assert path.read_text(encoding="utf-8") == expected
