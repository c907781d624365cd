"""Keeping the checked code out of ddplint's own interpreters.

ddplint reads the code it checks and never runs it. Python itself can break that promise: an
interpreter started as `python -m ddplint` or `python -c ...` puts the current folder first on
`sys.path`, and editors and users start ddplint in the project it checks, so a project file named
like a standard module (`pickle.py`, `signal.py`, `json.py`) would be imported in place of the
real one the first time ddplint imports that module. Two measures:

- `leave_workspace_out()`, called first thing by ddplint's entry points, takes the current folder
  (and `''`, which means it) off the running interpreter's `sys.path`.
- `isolated_command()` is how ddplint starts a Python helper process (the language server's
  analysis process): `-I` (no current folder, no `PYTHON*` variables, no user site folder), an
  explicit `sys.path`, the parent's without the current folder, and a start in a folder outside
  the workspace. An explicit path rather than `-I` alone: `-I` also drops `PYTHONPATH`, so a
  helper could import another ddplint than its parent (a checkout run with `PYTHONPATH`).

Only `os` and `sys` are imported here: this module is loaded before the current folder is off
the path, and both are loaded by every interpreter before it runs any code of ours.
"""

from __future__ import annotations

import os
import sys

# The folder ddplint's package lies in: kept importable even when it is the current folder (a
# checkout run from its own root), but then last, after the standard library and installed packages.
_OWN_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _current_folder() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # deleted meanwhile: nothing on sys.path can resolve to it any more
        return None


def _same_folder(entry: str, folder: str | None) -> bool:
    if folder is None:
        return False
    try:
        return os.path.samefile(entry, folder)
    except OSError:  # does not exist (yet): compare the names
        return os.path.normcase(os.path.abspath(entry)) == os.path.normcase(folder)


def import_path(path: list[str], cwd: str | None) -> list[str]:
    """`path` without the entries that resolve to the current folder: `''`, relative ones, and the
    folder itself. Whether the cwd is named by a PYTHONPATH entry or by Python's `-m` / `-c`
    entry, the checked project's files must not shadow a module ddplint imports."""
    kept: list[str] = []
    dropped_own_root = False
    for entry in path:
        if not isinstance(entry, str):
            continue
        if not entry or not os.path.isabs(entry) or _same_folder(entry, cwd):
            resolved = os.path.join(cwd, entry) if cwd is not None else entry
            dropped_own_root = dropped_own_root or _same_folder(_OWN_ROOT, resolved or None)
            continue
        kept.append(entry)
    if dropped_own_root and not any(_same_folder(entry, _OWN_ROOT) for entry in kept):
        kept.append(_OWN_ROOT)
    return kept


def leave_workspace_out() -> None:
    """Take the current folder off this interpreter's `sys.path` (ddplint's entry points: modules
    ddplint imports later, lazily, are then found where they are installed)."""
    sys.path[:] = import_path(sys.path, _current_folder())


# A folder that exists everywhere and is no project: where helper processes start.
NEUTRAL_FOLDER = os.path.abspath(os.sep)

# A helper interpreter's first lines: its import path from the command line, then `main` of the
# module that serves (both before any module that could be looked up in a project is imported).
_BOOTSTRAP = "import json, sys; sys.path[:] = json.loads(sys.argv.pop(1)); import {module}; {module}.{function}()"


def isolated_command(module: str, function: str, *args: str) -> list[str]:
    """The command that runs `module.function()` in an isolated interpreter (see above), with
    `args` as `sys.argv[1:]`. `module` and `function` are names of ddplint's, never input."""
    import json  # loaded only in the parent, where the current folder is already off sys.path

    if not all(part.isidentifier() for part in (*module.split("."), function)):
        raise ValueError(f"not a module and function name: {module}.{function}")
    path = json.dumps(import_path(sys.path, _current_folder()))
    code = _BOOTSTRAP.format(module=module, function=function)
    return [sys.executable, "-I", "-c", code, path, *args]


def die_with_parent(parent_pid: int, poll_s: float = 0.5) -> None:
    """In a helper process: end as soon as the process that started it ends, however it ends
    (SIGKILL included). On Linux the kernel sends SIGKILL (PR_SET_PDEATHSIG); everywhere a daemon
    thread also checks every `poll_s` that the parent is still the same process."""
    import threading

    _kill_me_with_my_parent()
    if os.getppid() != parent_pid:  # gone already, before the signal was armed
        os._exit(1)

    def watch() -> None:
        import time

        while os.getppid() == parent_pid:
            time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, name="ddplint-parent-watch", daemon=True).start()


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _kill_me_with_my_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl here (another libc): the watch thread remains
        pass
