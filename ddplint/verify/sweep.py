"""Nothing of a verify run outlives it.

Three mechanisms, each covering what the others cannot:

- Every process of a run carries a mark: the launcher puts `DDPLINT_VERIFY_RUN=<random id>` in
  torchrun's environment, and torchrun, the ranks and whatever they start inherit it. A process
  that left its session (`setsid()`) or whose parent exited (re-parented to init) is still found
  by that mark in `/proc/<pid>/environ`. Only a process that replaced its whole environment
  escapes, and only from this sweep.
- torchrun and every rank die with their parent (Linux `PR_SET_PDEATHSIG`), set by the isolated
  start below before anything else runs in them: a verify killed with SIGKILL takes torchrun
  with it, and torchrun takes the ranks.
- A reaper (`python -I sweep.py MARK`) waits on a pipe from verify; when verify is gone, however it
  went, the pipe ends and the reaper kills every marked process. It ignores the stop signals, so
  `timeout`, which signals verify's whole process group, does not stop it before its work.

This file imports only the standard library: the reaper runs it as a script with `-I`.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import uuid
from pathlib import Path

ENV_RUN_MARK = "DDPLINT_VERIFY_RUN"
# The pid an isolated start expects as its parent; a different parent means it has gone already.
ENV_PARENT = "DDPLINT_VERIFY_PARENT"
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
PR_SET_PDEATHSIG = 1  # linux/prctl.h
# How long a sweep keeps looking for marked processes (a process forking while it is killed).
SETTLE_S = 2.0

# The start of every interpreter verify launches for itself (torchrun, and each rank's probe before
# the user's script): `python -c ISOLATED_START MODULE ARGS...`. The current directory that `-c`
# puts first on sys.path goes before anything is imported, so a workspace file named like a
# standard module is never imported by ddplint's own code (a `sitecustomize.py` there is not
# imported either: `-c` adds the directory after site initialisation). Works on every Python
# that ddplint supports (`-P` needs 3.11).
ISOLATED_START = ("import sys; sys.path[:1] == [''] and sys.path.pop(0); "
                  "from ddplint.verify.sweep import run_isolated; run_isolated()")


def new_run_mark() -> str:
    return uuid.uuid4().hex


def isolated_command(module: str, *args: str) -> list[str]:
    return [sys.executable, "-c", ISOLATED_START, module, *args]


def run_isolated() -> None:
    """Body of ISOLATED_START: die with the parent, then run MODULE as `python -m` would."""
    import runpy

    expected = os.environ.get(ENV_PARENT)
    if die_with_parent() and expected and os.getppid() != int(expected):
        os._exit(1)  # the parent died before the death signal was armed: nobody is left to stop us
    os.environ[ENV_PARENT] = str(os.getpid())  # for the processes this one starts
    module = sys.argv[1]
    del sys.argv[1]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def die_with_parent() -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux only). SIGKILL, not SIGTERM:
    torchrun's own SIGTERM handling waits for its workers, and the workers die with it anyway."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def marked_pids(mark: str) -> set[int]:
    """Live processes whose environment carries this run's mark (Linux /proc; empty elsewhere).
    A zombie has no environment left and is not counted."""
    entry = f"{ENV_RUN_MARK}={mark}".encode()
    found = set()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            environment = (proc / "environ").read_bytes()
        except OSError:  # gone meanwhile, or another user's
            continue
        if entry in environment.split(b"\0"):
            found.add(int(proc.name))
    found.discard(os.getpid())
    return found


def kill_marked(mark: str, settle_s: float = SETTLE_S) -> list[int]:
    """SIGKILL every marked process, again until none is left (or settle_s passed). Returns the pids
    that were sent SIGKILL."""
    killed: list[int] = []
    deadline = time.monotonic() + settle_s
    while True:
        pids = marked_pids(mark)
        for pid in sorted(pids):
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except (ProcessLookupError, PermissionError):
                pass
        if not pids or time.monotonic() > deadline:
            return killed
        time.sleep(0.05)


def reap(mark: str) -> None:
    """The reaper: wait until verify closes (or loses) the other end of stdin, then kill the run."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except OSError:
        pass
    kill_marked(mark)


if __name__ == "__main__":
    reap(sys.argv[1])
