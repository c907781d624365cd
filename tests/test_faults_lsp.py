"""Faults around the language server and ddplint's own interpreters (issue 19): a workspace whose
files are named like standard modules runs nothing, a signal or a kill leaves no process behind,
a configuration the reader chokes on is reported and the files are still analysed, and a change
to a document never opened is ignored quietly."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import AsyncIterator

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp_client import EXAMPLES, REPO, WAIT, eventually, initialize, logged, make_client, open_document, published, server_config

pytestmark = pytest.mark.slow  # every test starts ddplint processes
needs_module_names = pytest.mark.skipif(
    not hasattr(sys, "stdlib_module_names"), reason="needs sys.stdlib_module_names (Python 3.10+)"
)

BUGGY = (EXAMPLES / "ddp002_missing_set_epoch_buggy.py").read_text()
MARKER_PREFIX = "marker-"
# Python's own -m machinery runs before any ddplint code (frozen in 3.11+, read from sys.path
# before): nothing ddplint can do about it, so it is not planted.
PYTHON_OWN = frozenset({"runpy"})


def plant_workspace(folder: Path) -> Path:
    """A project whose files are named like every standard module (and the two site hooks), each
    leaving a marker if imported, next to a training script with a DDP002 bug."""
    for name in sorted(set(sys.stdlib_module_names) - PYTHON_OWN | {"sitecustomize", "usercustomize"}):
        (folder / f"{name}.py").write_text(f"open({MARKER_PREFIX + name!r}, 'w').write('ran')\n")
    script = folder / "train.py"
    script.write_text(BUGGY)
    return script


def markers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.startswith(MARKER_PREFIX))


@contextlib.asynccontextmanager
async def language_server(cwd: Path, *command: str) -> AsyncIterator[LanguageClient]:
    """`ddplint lsp` started in `cwd` (where editors start it: the project), with pytest-lsp's client."""
    client = make_client()
    command = command or (sys.executable, "-m", "ddplint", "lsp")
    await client.start_io(*command, env=server_config().server_env, cwd=str(cwd))
    try:
        yield client
    finally:
        if client._server is not None and client._server.returncode is None:
            client._server.kill()
        # The client reads the server's stdout until every holder of it is gone: a process the
        # server left behind would keep it waiting forever.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(client.stop(), 10)


async def guarded(step):
    """A step of the session that a server gone wrong would leave waiting forever."""
    return await asyncio.wait_for(step, WAIT)


async def diagnostics_for(client: LanguageClient, script: Path) -> list[str]:
    open_document(client, script.as_uri(), script.read_text())
    return [d.code for d in (await published(client, script.as_uri(), version=1)).diagnostics]


# -- nothing from the workspace runs -----------------------------------------------------------
def ddplint_script() -> Path:
    script = Path(sys.executable).with_name("ddplint")
    if not script.exists():
        pytest.skip(f"no `ddplint` script next to {sys.executable}: ddplint is not installed in this environment")
    return script


@needs_module_names
@pytest.mark.parametrize("how", ["python -m ddplint lsp", "ddplint lsp"])
@pytest.mark.asyncio
async def test_the_language_server_imports_nothing_from_the_workspace(tmp_path: Path, how: str):
    script = plant_workspace(tmp_path)
    command = (str(ddplint_script()), "lsp") if how == "ddplint lsp" else (sys.executable, "-m", "ddplint", "lsp")
    async with language_server(tmp_path, *command) as client:
        await guarded(initialize(client, root=tmp_path))
        assert await diagnostics_for(client, script) == ["DDP002"]
        await guarded(client.shutdown_session())
    assert markers(tmp_path) == []


@needs_module_names
@pytest.mark.parametrize(
    "how", ["python -m ddplint", "python -m ddplint -j 2", "ddplint script", "ddplint script -j 2"]
)
def test_the_cli_imports_nothing_from_the_workspace(tmp_path: Path, how: str):
    plant_workspace(tmp_path)
    program = [str(ddplint_script())] if how.startswith("ddplint script") else [sys.executable, "-m", "ddplint"]
    jobs = ["-j", "2"] if how.endswith("-j 2") else []
    run = subprocess.run(
        [*program, ".", "--no-cache", *jobs], cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env=dict(os.environ, PYTHONPATH=str(REPO)),  # this checkout's ddplint, as the tests import it
    )
    assert run.returncode == 1, run.stderr
    assert "train.py" in run.stdout and "DDP002" in run.stdout
    assert "Traceback" not in run.stderr
    assert markers(tmp_path) == []


# -- nothing left behind -----------------------------------------------------------------------
def _parents() -> dict[int, int]:
    """pid -> parent pid of every process alive (Linux /proc)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path("/proc", entry, "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z":  # a zombie has ended already
                parents[int(entry)] = int(fields[1])
    return parents


def descendants(pid: int) -> set[int]:
    parents = _parents()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    return pids & set(_parents())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGKILL], ids=lambda s: s.name)
@pytest.mark.asyncio
async def test_a_signal_to_the_server_leaves_no_process_behind(tmp_path: Path, signum: signal.Signals):
    script = tmp_path / "train.py"
    script.write_text(BUGGY)
    async with language_server(tmp_path) as client:
        await guarded(initialize(client, root=tmp_path))
        assert await diagnostics_for(client, script) == ["DDP002"]
        server = client._server
        children = descendants(server.pid)
        assert children, "the server has its analysis process"
        os.kill(server.pid, signum)
        # Not server.wait(): asyncio also waits for the server's pipes to close, which a process
        # left behind holding them would never let happen.
        await eventually(lambda: server.returncode is not None)
        deadline = time.monotonic() + 5
        while alive(children) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        left = alive(children)
        for pid in left:  # do not leave them to the next test either
            os.kill(pid, signal.SIGKILL)
        assert left == set()
        # Ended by that signal, after its clean-up (not by an exit code of its own).
        assert server.returncode == -signum


# -- a configuration the reader chokes on --------------------------------------------------------
BAD_CONFIGS = {
    "tool is a string": 'tool = "ddplint"\n',
    "tool is a number": "tool = 5  # ddplint\n",
    "array 100,000 deep": "# ddplint\nx = " + "[" * 100_000 + "]" * 100_000 + "\n",
}


@pytest.mark.parametrize("config", BAD_CONFIGS.values(), ids=list(BAD_CONFIGS))
@pytest.mark.asyncio
async def test_a_configuration_that_cannot_be_read_is_reported_and_files_are_still_analysed(tmp_path: Path, config: str):
    (tmp_path / "pyproject.toml").write_text(config)
    script = tmp_path / "train.py"
    script.write_text(BUGGY)
    async with language_server(tmp_path) as client:
        await guarded(initialize(client, root=tmp_path))
        assert await diagnostics_for(client, script) == ["DDP002"]  # with the default rules
        shown = [m for m in client.messages if m.type == types.MessageType.Error]
        assert len(shown) == 1 and "pyproject.toml" in shown[0].message and "using the default rules" in shown[0].message
        assert "Error in server" not in shown[0].message
        # Said once, not on every analysis: a second file in the same folder adds nothing.
        other = tmp_path / "other.py"
        other.write_text(BUGGY)
        assert await diagnostics_for(client, other) == ["DDP002"]
        assert len([m for m in client.messages if m.type == types.MessageType.Error]) == 1
        await guarded(client.shutdown_session())


# -- a change to a document never opened ---------------------------------------------------------
@pytest.mark.asyncio
async def test_a_change_to_a_document_never_opened_is_ignored_quietly(tmp_path: Path):
    script = tmp_path / "train.py"
    script.write_text(BUGGY)
    async with language_server(tmp_path) as client:
        await guarded(initialize(client, root=tmp_path))
        stranger = (tmp_path / "never_opened.py").as_uri()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=stranger, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text="import torch\n")],
            )
        )
        await logged(client, f"ignoring a change to {stranger}: it was never opened")
        notebook = (tmp_path / "never_opened.ipynb").as_uri()
        client.notebook_document_did_change(
            types.DidChangeNotebookDocumentParams(
                notebook_document=types.VersionedNotebookDocumentIdentifier(version=2, uri=notebook),
                change=types.NotebookDocumentChangeEvent(),
            )
        )
        await logged(client, f"ignoring a change to {notebook}: it was never opened")
        assert await diagnostics_for(client, script) == ["DDP002"]  # still serving
        assert client.messages == []  # no "Error in server" pop-up
        assert stranger not in client.diagnostics
        await guarded(client.shutdown_session())


# -- the import path handed to helper interpreters -------------------------------------------------
def test_the_import_path_leaves_out_the_current_folder_in_every_spelling(tmp_path: Path):
    from ddplint.isolation import import_path

    other = str(tmp_path / "lib")
    spellings = ["", ".", "sub/..", str(tmp_path), str(tmp_path) + "/", other]
    assert import_path(spellings, str(tmp_path)) == [other]


def test_the_import_path_keeps_ddplint_itself_last_when_it_is_the_current_folder():
    import ddplint
    from ddplint.isolation import import_path

    own_root, stdlib = str(Path(ddplint.__file__).resolve().parents[1]), os.path.dirname(os.__file__)
    assert import_path(["", own_root, stdlib], own_root) == [stdlib, own_root]
